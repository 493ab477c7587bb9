/* SPDX-License-Identifier: MIT */
/*
 * fields.h - reading a record's fields by name for the analyses: the place
 * and size of a field are looked up once per event, then each record's
 * value is read with its bounds checked against the record's length (a
 * short or damaged record reads as absent, never past its end).
 *
 * Ownership: nothing is allocated; a struct field_at copies what it needs.
 */
#ifndef TRACEBUF_ANALYZE_FIELDS_H
#define TRACEBUF_ANALYZE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebuf/schema.h"

struct field_at {
	uint32_t offset, size;
	bool found, is_signed;
};

/* Where field name of f is; false (and out->found false) when f has none. */
bool field_at_find(const struct tb_format *f, const char *name, struct field_at *out);

/*
 * The integer at fa (1, 2, 4 or 8 bytes, sign-extended if signed); false if
 * the record is too short.  Inline: the analyses read a few per record.
 */
static inline bool field_int(const struct field_at *fa, const uint8_t *data, uint32_t len, int64_t *out)
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

/* A fixed char array at fa as a NUL-terminated string in buf (size >= fa->size + 1); length, or -1. */
int field_str(const struct field_at *fa, const uint8_t *data, uint32_t len, char *buf, size_t size);

/* The event called system:name in s (system NULL: any), or NULL. */
const struct tb_format *schema_find_by_name(const struct tb_schema *s, const char *system, const char *name);

#endif
