// SPDX-License-Identifier: MIT
/*
 * fuzz_printfmt.c - libFuzzer target for the print-fmt compiler
 * (src/print/pf_compile.c, pf_run.c, kvsprintf.c) and bprint.c.
 *
 * The input is a format file: it is parsed with tb_format_parse, its print
 * fmt compiled (with a small environment that knows a symbol, constants
 * named K..., HZ and a type size, but not jiffies), and the program run on records built from the format
 * (all zero, all 0xff, pseudo-random with valid dynamic fields) and on the
 * input's own bytes as a record.  The print fmt's first string is also
 * run through tb_bprint_format over the input bytes.  Checked: no crash,
 * hang or leak; a refusal names an offset inside the print fmt; a run
 * returns 0 or -EINVAL; and the fused program (pf_specialise.c) returns
 * and prints exactly what the generic one it was made from does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print/bprint.h"
#include "print/pf_internal.h"
#include "print/printfmt.h"
#include "tracebuf/schema.h"
#include "../tests/lib/records.h"

#include "fuzz_check.h"

static const char *symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size, const char **module)
{
	(void)ctx;
	if (addr >> 32 != 0xffffffffu)
		return NULL;
	*start = addr & ~0xfffull;
	*size = 0x1000;
	*module = (addr & 0x100) ? "mod" : NULL;
	return "sym";
}

static bool constant(void *ctx, const char *name, int64_t *v)
{
	(void)ctx;
	if (!strcmp(name, "HZ")) /* one that does not divide 1000: jiffies_to_msecs' general case */
		return *v = 300, true;
	*v = (int64_t)strlen(name);
	return name[0] == 'K';
}

static bool type_size(void *ctx, const char *type, uint64_t *size)
{
	(void)ctx;
	*size = 64;
	return !strcmp(type, "struct page");
}

static const struct tb_print_env env = {.symbol = symbol, .constant = constant, .type_size = type_size};

/* A record through the fused and the generic program: 0 or -EINVAL, the same from both, the same text. */
static void run_both(const struct tb_printfmt *fused, const struct tb_printfmt *generic, const uint8_t *rec,
		     uint32_t len, struct tb_strbuf *sb)
{
	struct tb_strbuf other = {0};
	int rc, rc_generic;

	sb_reset(sb);
	rc = tb_printfmt_run(fused, rec, len, sb);
	CHECK(rc == 0 || rc == -EINVAL);
	rc_generic = tb_printfmt_run(generic, rec, len, &other);
	CHECK(rc_generic == rc);
	CHECK(rc != 0 || (sb->len == other.len && (!sb->len || !memcmp(sb->buf, other.buf, sb->len))));
	sb_free(&other);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rec[70000];
	struct tb_format f;
	struct tb_problem err = {0};
	struct tb_printfmt *p, *generic;
	struct tb_strbuf sb = {0};
	int rc;

	if (tb_format_parse((const char *)data, size, &f, &err) < 0)
		return 0;
	rc = tb_printfmt_compile(&f, &env, &p, &err);
	if (rc < 0) {
		CHECK(rc == -EINVAL || rc == -ENOTSUP || rc == -ENOMEM);
		CHECK(err.offset <= f.print_fmt_len && err.reason[0]);
		CHECK(pf_compile(&f, &env, false, &generic, &err) == rc || rc == -ENOMEM);
	} else {
		CHECK(pf_compile(&f, &env, false, &generic, &err) == 0);
		for (int v = 0; v < 6; v++) {
			uint32_t n = make_record(&f, v < 2 ? v : REC_RANDOM, (uint64_t)v + size, rec, sizeof(rec));
			if (!n)
				continue;
			run_both(p, generic, rec, v < 4 ? n : n * (uint32_t)(size % 7) / 7, &sb);
		}
		if (size >= f.min_size && size <= sizeof(rec)) {
			memcpy(rec, data, size);
			run_both(p, generic, rec, (uint32_t)size, &sb);
		}
		tb_printfmt_free(p);
		tb_printfmt_free(generic);
	}
	/* the format string as a trace_printk format over the input bytes */
	if (f.print_fmt_len > 2 && f.print_fmt[0] == '"') {
		char *fmt = strndup(f.print_fmt + 1, f.print_fmt_len - 1), *q = strchr(fmt, '"');
		if (q)
			*q = '\0';
		sb_reset(&sb);
		rc = tb_bprint_format(fmt, data, (uint32_t)size, &env, &sb);
		CHECK(rc == 0 || rc == -EINVAL);
		free(fmt);
	}
	sb_free(&sb);
	tb_format_free(&f);
	return 0;
}
