/* SPDX-License-Identifier: MIT */
/*
 * records.h - synthetic records for a format: every fixed field set from a
 * pattern (all zero, all 0xff, pseudo-random), and every dynamic field
 * (__data_loc, __rel_loc) pointing at valid data after the fixed part: a
 * NUL-terminated string for char arrays, bytes for the others.
 *
 *   uint32_t n = make_record(f, variant, buf, sizeof(buf));
 */
#ifndef TB_TEST_RECORDS_H
#define TB_TEST_RECORDS_H

#include <stdint.h>
#include <string.h>

#include "tracebuf/schema.h"

enum { REC_ZERO, REC_ONES, REC_RANDOM };

static inline uint32_t rec_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*state >> 33);
}

/* A record of f in buf (at most cap bytes); returns its length, 0 if it does not fit. */
static inline uint32_t make_record(const struct tb_format *f, int variant, uint64_t seed, uint8_t *buf,
				   size_t cap)
{
	uint64_t state = seed * 2654435761u + 17;
	uint32_t end = f->min_size;

	if (end > cap)
		return 0;
	for (uint32_t i = 0; i < end; i++)
		buf[i] = variant == REC_ZERO ? 0 : variant == REC_ONES ? 0xff : (uint8_t)rec_rand(&state);
	/* Random values are more telling when small ones and sign bits both occur. */
	if (variant == REC_RANDOM)
		for (size_t i = 0; i < f->nfields; i++) {
			const struct tb_schema_field *fl = &f->fields[i];
			if (fl->kind == TB_SCHEMA_FIELD_STATIC && !fl->is_array && (rec_rand(&state) & 1))
				memset(buf + fl->offset + 1, 0, fl->size > 1 ? fl->size - 1 : 0);
		}
	memcpy(buf, &f->id, 2);
	for (size_t i = 0; i < f->nfields; i++) {
		const struct tb_schema_field *fl = &f->fields[i];
		uint32_t len, loc, rel_base;
		if (fl->kind == TB_SCHEMA_FIELD_STATIC) {
			if (fl->is_string && variant != REC_ZERO) {
				/* text with its NUL somewhere inside */
				for (uint32_t k = 0; k < fl->size; k++)
					buf[fl->offset + k] = (uint8_t)('a' + (k + (uint32_t)seed) % 26);
				if (fl->size)
					buf[fl->offset + fl->size - 1 - (fl->size > 3 ? (uint32_t)seed % 3 : 0)] = 0;
			}
			continue;
		}
		len = variant == REC_ZERO ? 1 : fl->is_string ? 2 + (uint32_t)(seed % 9) : 8 * (1 + (uint32_t)(seed % 4));
		if (end + len > cap)
			return 0;
		for (uint32_t k = 0; k < len; k++)
			buf[end + k] = fl->is_string ? (uint8_t)('A' + (k * 7 + (uint32_t)seed) % 26) : (uint8_t)rec_rand(&state);
		if (fl->is_string)
			buf[end + len - 1] = 0;
		rel_base = fl->kind == TB_SCHEMA_FIELD_REL_LOC ? fl->offset + 4 : 0;
		loc = len << 16 | ((end - rel_base) & 0xffff);
		if (fl->size == 2) {
			uint16_t l16 = (uint16_t)end;
			memcpy(buf + fl->offset, &l16, 2);
		} else {
			memcpy(buf + fl->offset, &loc, 4);
		}
		end += len;
	}
	return end;
}

#endif
