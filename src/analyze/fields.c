// SPDX-License-Identifier: MIT
/* fields.c - a record's fields by name, bounds checked (fields.h). */
#include <string.h>

#include "fields.h"

bool field_at_find(const struct tb_format *f, const char *name, struct field_at *out)
{
	const struct tb_field *fd = f ? tb_format_field(f, name) : NULL;

	memset(out, 0, sizeof(*out));
	if (!fd || fd->kind != TB_FIELD_STATIC)
		return false;
	out->offset = fd->offset;
	out->size = fd->size;
	out->is_signed = fd->is_signed;
	return out->found = true;
}

bool field_int(const struct field_at *fa, const uint8_t *data, uint32_t len, int64_t *out)
{
	const uint8_t *p = data + fa->offset;
	uint64_t v = 0;

	if (!fa->found || fa->offset > len || len - fa->offset < fa->size)
		return false;
	/* Little endian, as the page format is (page.h); a load of the field's size on such hosts. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	switch (fa->size) {
	case 8:
		memcpy(&v, p, 8);
		*out = (int64_t)v;
		return true;
	case 4: {
		uint32_t w;
		memcpy(&w, p, 4);
		*out = fa->is_signed ? (int64_t)(int32_t)w : (int64_t)w;
		return true;
	}
	case 2: {
		uint16_t h;
		memcpy(&h, p, 2);
		*out = fa->is_signed ? (int64_t)(int16_t)h : (int64_t)h;
		return true;
	}
	case 1:
		*out = fa->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
		return true;
	default:
		return false;
	}
#else
	if (fa->size > 8 || fa->size == 0)
		return false;
	for (uint32_t i = 0; i < fa->size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if (fa->is_signed && fa->size < 8 && (v >> (8 * fa->size - 1)) & 1)
		v |= ~0ull << (8 * fa->size);
	*out = (int64_t)v;
	return true;
#endif
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
	for (uint32_t id = 1; id < 65536; id++) {
		const char *sys;
		const struct tb_format *f = tb_schema_event(s, id, &sys);
		if (f && !strcmp(f->name, name) && (!system || (sys && !strcmp(sys, system))))
			return f;
	}
	return NULL;
}
