// SPDX-License-Identifier: MIT
/* fields.c - a record's fields by name, bounds checked (fields.h). */
#include <string.h>

#include "fields.h"
#include "decode/schema_internal.h"

bool field_at_find(const struct tb_format *f, const char *name, struct field_at *out)
{
	const struct tb_schema_field *fd = f ? tb_format_field(f, name) : NULL;

	memset(out, 0, sizeof(*out));
	if (!fd || fd->kind != TB_SCHEMA_FIELD_STATIC)
		return false;
	out->offset = fd->offset;
	out->size = fd->size;
	out->is_signed = fd->is_signed;
	return out->found = true;
}

int field_str(const struct field_at *fa, const uint8_t *data, uint32_t len, char *buf, size_t size)
{
	size_t n = 0;

	if (!fa->found || fa->offset > len || len - fa->offset < fa->size || size == 0)
		return -1;
	while (n < fa->size && n + 1 < size && data[fa->offset + n])
		n++;
	memcpy(buf, data + fa->offset, n);
	buf[n] = '\0';
	return (int)n;
}

const struct tb_format *schema_find_by_name(const struct tb_schema *s, const char *system, const char *name)
{
	const struct tb_format *f;
	const char *sys;

	/* the loaded events alone: an ID-by-ID walk was 65,535 look-ups a name, a third of fuzz_analyze's run */
	for (uint32_t id = 1; (f = schema_next_event(s, &id, &sys)); id++)
		if (!strcmp(f->name, name) && (!system || (sys && !strcmp(sys, system))))
			return f;
	return NULL;
}
