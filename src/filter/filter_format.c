// SPDX-License-Identifier: MIT
/*
 * filter_format.c - a filter compiled against an event's format file: the
 * kernel's field descriptions turned into tracebuf/filter.h's, with the
 * kernel's rules for which fields are strings (filter_assign_type: an
 * array or dynamic field whose type mentions char).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/filter.h"
#include "tracebuf/schema.h"

static enum tb_filter_field_kind filter_kind(const struct tb_schema_field *f)
{
	if (f->kind == TB_SCHEMA_FIELD_DATA_LOC)
		return f->is_string ? TB_FILTER_DATA_LOC : TB_FILTER_OTHER;
	if (f->kind == TB_SCHEMA_FIELD_REL_LOC)
		return f->is_string ? TB_FILTER_REL_LOC : TB_FILTER_OTHER;
	if (f->is_string)
		return TB_FILTER_CHARS;
	/* Arrays of numbers and char pointers (kernel addresses) have nothing to compare. */
	if (f->is_array || strchr(f->type, '*'))
		return TB_FILTER_OTHER;
	return TB_FILTER_INT;
}

int tb_filter_compile_format(const char *expr, const struct tb_format *fmt, unsigned flags,
			     struct tb_filter **out, struct tb_filter_error *err)
{
	struct tb_filter_field *fields;
	int rc;

	if (!fmt || !expr || !out)
		return -EINVAL;
	fields = calloc(fmt->nfields ? fmt->nfields : 1, sizeof(*fields));
	if (!fields)
		return -ENOMEM;
	for (size_t i = 0; i < fmt->nfields; i++) {
		const struct tb_schema_field *f = &fmt->fields[i];
		fields[i] = (struct tb_filter_field){f->name, f->offset, f->size, filter_kind(f), f->is_signed};
	}
	rc = tb_filter_compile_flags(expr, fields, fmt->nfields, flags, out, err);
	free(fields);
	return rc;
}
