/* SPDX-License-Identifier: MIT */
/*
 * filter_compact.h - a compiled filter (tracebuf/filter.h) as a compact
 * program: a few integer tests, all run in a straight line, and its
 * verdict looked up per answers.  The registry stores it in the form its
 * emitters run inline (struct tb_event_filter, tracebuf/tracepoint.h;
 * src/source/event_filter.c copies it there).  Internal.
 */
#ifndef TRACEBUF_FILTER_COMPACT_H
#define TRACEBUF_FILTER_COMPACT_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebuf/filter.h"

#define FILTER_COMPACT_MAX 6 /* tests a compact program holds: 2^6 verdicts */

/* One test: true when (field & lo) != 0 (band), else when field - lo <= span (64-bit, wrapping). */
struct filter_compact_test {
	uint32_t offset; /* of an integer field in the record */
	uint8_t width;   /* its bytes: 1, 2, 4 or 8 */
	bool is_signed;  /* extended to 64 bits as signed */
	bool band;
	uint64_t lo, span;
};

struct filter_compact {
	uint32_t ntests;  /* 0: the program has no compact form */
	uint32_t min_len; /* a shorter record cannot hold every field tested */
	uint64_t truth;   /* bit b: the verdict when test k answered bit k of b */
	struct filter_compact_test tests[FILTER_COMPACT_MAX];
};

/* program's compact form into *out (ntests 0 when it has none: strings, CPU, COMM, more tests). */
void filter_compact(const struct tb_filter *program, struct filter_compact *out);

#endif
