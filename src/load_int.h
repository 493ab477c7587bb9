/* SPDX-License-Identifier: MIT */
/*
 * load_int.h - an integer field of a record, as the kernel reads one for
 * its filters and hist triggers: 1, 2, 4 or 8 bytes (little endian, any
 * alignment), sign-extended to 64 bits when the field is signed.
 */
#ifndef TB_LOAD_INT_H
#define TB_LOAD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t load_int(const uint8_t *p, unsigned size, bool is_signed)
{
	switch (size) {
	case 1: {
		uint8_t v = p[0];
		return is_signed ? (uint64_t)(int64_t)(int8_t)v : v;
	}
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default: {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	}
}

#endif
