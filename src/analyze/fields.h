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

#include "tracebuf/schema.h"

struct field_at {
	uint32_t offset, size;
	bool found, is_signed;
};

/* Where field name of f is; false (and out->found false) when f has none. */
bool field_at_find(const struct tb_format *f, const char *name, struct field_at *out);

/* The integer at fa (1, 2, 4 or 8 bytes, sign-extended if signed); false if the record is too short. */
bool field_int(const struct field_at *fa, const uint8_t *data, uint32_t len, int64_t *out);

/* A fixed char array at fa as a NUL-terminated string in buf (size >= fa->size + 1); length, or -1. */
int field_str(const struct field_at *fa, const uint8_t *data, uint32_t len, char *buf, size_t size);

/* The event called system:name in s (system NULL: any), or NULL. */
const struct tb_format *schema_find_by_name(const struct tb_schema *s, const char *system, const char *name);

#endif
