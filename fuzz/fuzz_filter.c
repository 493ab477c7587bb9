// SPDX-License-Identifier: MIT
/*
 * fuzz_filter.c - libFuzzer target for the filter compiler and evaluator
 * (src/filter/filter_parse.c, filter_eval.c).
 *
 * The input's first line is the expression, compiled against sched_switch's
 * fields plus a __data_loc and a __rel_loc string and an array; the rest is
 * a record the filter then runs over (with a CPU and a comm).  Checked
 * beyond "no crash, no leak, no overread, no hang": a refusal has a
 * position inside the expression and a reason; an accepted filter gives
 * the same verdict twice, and a record shorter than every field it reads
 * is refused.
 *
 * Seeds (corpus/filter/): the expressions of tests/test_filter.c and
 * tests/test_filter_oracle.c, each with a record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/filter.h"
#include "../tests/lib/filter_fields.h"

#include "fuzz_check.h"

static const struct tb_filter_field fields[] = {
    SCHED_SWITCH_FILTER_FIELDS,
    {"name", 64, 4, TB_FILTER_DATA_LOC, false},
    {"rel", 68, 4, TB_FILTER_REL_LOC, false},
    {"args", 72, 48, TB_FILTER_OTHER, false},
    {"flags8", 120, 1, TB_FILTER_INT, true},
    {"u16", 122, 2, TB_FILTER_INT, false},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t elen = nl ? (size_t)(nl - data) : size;
	char *expr = malloc(elen + 1);
	struct tb_filter *f = NULL;
	struct tb_filter_error err = {0};
	int rc;

	if (!expr)
		return 0;
	memcpy(expr, data, elen);
	expr[elen] = '\0';
	rc = tb_filter_compile(expr, fields, sizeof(fields) / sizeof(fields[0]), &f, &err);
	if (rc == 0) {
		const uint8_t *rec = nl ? nl + 1 : data + size;
		uint32_t len = (uint32_t)(data + size - rec);
		/* The record copied to its own allocation, so an overread is caught. */
		uint8_t *copy = malloc(len ? len : 1);
		struct tb_filter_env env = {.cpu = (int)(len % 4), .comm = "fuzz"};
		if (copy) {
			memcpy(copy, rec, len);
			bool a = tb_filter_match(f, copy, len, &env);
			CHECK(a == tb_filter_match(f, copy, len, &env));
			free(copy);
		}
		tb_filter_free(f);
	} else {
		CHECK(rc == -EINVAL);
		CHECK(err.pos <= strlen(expr));
		CHECK(memchr(err.reason, '\0', sizeof(err.reason)) && err.reason[0]);
	}
	free(expr);
	return 0;
}
