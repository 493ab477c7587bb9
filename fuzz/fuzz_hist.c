// SPDX-License-Identifier: MIT
/*
 * fuzz_hist.c - libFuzzer target for tracebuf hist (src/analyze/): the spec
 * parser, the record feeder and the printer.
 *
 * The input's first line is the hist spec, compiled against an event with
 * signed and unsigned numbers of every size, a __data_loc and a __rel_loc
 * string, a char array and a number array; the rest is a record, added
 * three times (two CPUs, time stamps going back), then the hist is printed.
 * Checked beyond "no crash, no leak, no overread, no hang": a refusal has a
 * position inside the spec and a reason; a record is either counted or
 * refused with -EINVAL, and printing succeeds.
 *
 * Seeds (corpus/hist/): the specs of tests/t_cli_hist.sh and
 * tests/test_hist.c, each with a record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/hist.h"
#include "tracebuf/schema.h"

#include "fuzz_check.h"
#include "fuzz_sink.h"

static const char format_text[] =
	"name: fz\nID: 900\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:s8 a8;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield:u16 u16;\toffset:10;\tsize:2;\tsigned:0;\n"
	"\tfield:s32 a32;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned long u;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rname;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:char comm[16];\toffset:32;\tsize:16;\tsigned:0;\n"
	"\tfield:unsigned long args[2];\toffset:48;\tsize:16;\tsigned:0;\n"
	"\n"
	"print fmt: \"a8=%d\", REC->a8\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tb_format fmt;
	static struct tb_schema *schema;
	static int ready;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t slen = nl ? (size_t)(nl - data) : size;
	char *spec = malloc(slen + 1);
	struct tb_hist_error err = {0};
	struct tb_hist *h = NULL;
	int rc;

	if (!ready) {
		struct tb_problem d;
		CHECK(tb_format_parse(format_text, sizeof(format_text) - 1, &fmt, &d) == 0);
		schema = tb_schema_new();
		ready = 1;
	}
	if (!spec)
		return 0;
	memcpy(spec, data, slen);
	spec[slen] = '\0';
	rc = tb_hist_new(spec, &fmt, "fz", schema, &h, &err);
	if (rc == 0) {
		const uint8_t *rec = nl ? nl + 1 : data + size;
		uint32_t len = (uint32_t)(data + size - rec);
		/* The record copied to its own allocation, so an overread is caught. */
		uint8_t *copy = malloc(len ? len : 1);
		FILE *out = fuzz_sink();
		if (copy) {
			memcpy(copy, rec, len);
			for (int i = 0; i < 3; i++) {
				int r = tb_hist_add_record(h, copy, len, 1000 - 100 * (uint64_t)i, i & 1);
				CHECK(r == 0 || r == -EINVAL);
			}
			CHECK(tb_hist_print(h, out) == 0);
		}
		free(copy);
		tb_hist_free(h);
	} else {
		CHECK(rc == -EINVAL);
		CHECK(err.pos <= strlen(spec));
		CHECK(memchr(err.reason, '\0', sizeof(err.reason)) && err.reason[0]);
	}
	free(spec);
	return 0;
}
