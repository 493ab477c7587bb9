/*
 * The hand-written raw_syscalls printers (src/print/raw_syscalls.c) print
 * what the compiled print fmt prints (the compiler is itself held against
 * the kernel's text by test_identical and test_live_identical), for the
 * two format files as a 6.18 x86_64 kernel's tracefs has them and for
 * values at every edge of %ld and %lx and random ones; and they are
 * refused for any format that is not exactly the one they were written for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tap.h"
#include "print/printfmt.h"
#include "print/raw_syscalls.h"
#include "tracebuf/schema.h"

/* The common fields and the id both events start with, as this kernel's format files have them. */
#define HEAD_AND_ID \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
	"\n" \
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"

static const char ENTER[] =
	"name: sys_enter\n"
	"ID: 443\n"
	"format:\n"
	HEAD_AND_ID
	"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
	"\n"
	"print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], REC->args[1], "
	"REC->args[2], REC->args[3], REC->args[4], REC->args[5]\n";

static const char EXIT[] =
	"name: sys_exit\n"
	"ID: 442\n"
	"format:\n"
	HEAD_AND_ID
	"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\n"
	"print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n";

static int parse(const char *text, struct tb_format *f)
{
	struct tb_problem d = {0};
	int rc = tb_format_parse(text, strlen(text), f, &d);

	if (rc < 0)
		diag("format: %s", d.reason);
	return rc;
}

/* Format text with the first occurrence of from replaced by to. */
static char *edited(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);

	if (!at || !out) {
		free(out);
		return NULL;
	}
	snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

/* "NAME: " (when named) + the compiled program's text + "\n", as printers.c prints a compiled print fmt. */
static void by_program(const struct tb_format *f, const struct tb_printfmt *p, const uint8_t *rec,
		       uint32_t len, bool named, struct tb_strbuf *out)
{
	if (named) {
		sb_puts(out, f->name);
		sb_put(out, ": ", 2);
	}
	if (tb_printfmt_run(p, rec, len, out) < 0)
		sb_puts(out, "<run failed>");
	sb_putc(out, '\n');
}

/* Values where the digits of %ld and %lx change: 0, powers of the bases and their neighbours, the extremes. */
static uint64_t edge_value(unsigned i)
{
	static const uint64_t fixed[] = {
		0, 1, 9, 10, 15, 16, 99, 100, 255, 256, 999999999, 1000000000, 4294967295ull,
		4294967296ull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
		0xfffffffffffffff0ull, 0x7fff2c97a657ull, 0xffffff9cull, 99999999ull, 100000000ull,
		9999999999999999999ull, 10000000000000000000ull,
	};
	return fixed[i % (sizeof(fixed) / sizeof(fixed[0]))];
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * The hand printer against the program on n records of f: edge values,
 * then random ones of every length; with the name in front or without.
 */
static void compare(const struct tb_format *f, raw_syscalls_fn *hand, unsigned nvalues, bool named)
{
	struct tb_printfmt *p = NULL;
	struct tb_problem d = {0};
	struct tb_strbuf want = {0}, got = {0};
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned differ = 0, n = 0, line_differs = 0;
	raw_syscalls_line_fn *line = raw_syscalls_line(hand);
	char room[RAW_SYSCALLS_LINE_MAX];

	if (tb_printfmt_compile(f, NULL, &p, &d) < 0) {
		ok(0, "%s compiles (%s)", f->name, d.reason);
		return;
	}
	for (unsigned i = 0; i < 24 * 24 + 20000; i++, n++) {
		uint8_t rec[64] = {0};
		for (unsigned k = 0; k < nvalues; k++) {
			uint64_t v = i < 24 * 24 ? edge_value(k % 2 ? i / 24 + k : i % 24 + k)
						 : xorshift(&seed) >> (xorshift(&seed) % 64);
			memcpy(rec + 8 + 8 * k, &v, 8);
		}
		sb_reset(&want);
		sb_reset(&got);
		by_program(f, p, rec, 8 + 8 * nvalues, named, &want);
		hand(rec, named, &got);
		if (want.len != got.len || memcmp(want.buf, got.buf, want.len) != 0) {
			if (differ++ < 5)
				diag("differ: program '%.*s' hand '%.*s'", (int)want.len, want.buf,
				     (int)got.len, got.buf);
		}
		/* the line writer (frame_line's) writes the unnamed line, in the room it is promised */
		if (!named && line) {
			size_t len = (size_t)(line(room, rec) - room);
			if (len != want.len || memcmp(room, want.buf, len) != 0)
				line_differs++;
		}
	}
	if (!named)
		ok(line && line_differs == 0, "%s: its line writer writes the same lines (%u differ)", f->name,
		   line_differs);
	ok(differ == 0, "%s: the hand-written printer prints what the compiled print fmt prints, %s "
	   "(%u records, %u differ)", f->name, named ? "named" : "without the name", n, differ);
	sb_free(&want);
	sb_free(&got);
	tb_printfmt_free(p);
}

/* A format edited so that it is not the one the printer was written for: refused. */
static void refused(const char *text, const char *from, const char *to, const char *what)
{
	struct tb_format f = {0};
	char *t = edited(text, from, to);

	if (!t || parse(t, &f) < 0) {
		ok(0, "edited format parses (%s)", what);
	} else {
		ok(raw_syscalls_printer("raw_syscalls", &f) == NULL, "refused: %s", what);
		tb_format_free(&f);
	}
	free(t);
}

int main(void)
{
	struct tb_format enter = {0}, exit_ = {0};

	if (parse(ENTER, &enter) < 0 || parse(EXIT, &exit_) < 0)
		return ok(0, "the formats parse"), done_testing();
	ok(raw_syscalls_printer("raw_syscalls", &enter) != NULL, "sys_enter of this kernel gets the hand printer");
	ok(raw_syscalls_printer("raw_syscalls", &exit_) != NULL, "sys_exit of this kernel gets the hand printer");
	ok(raw_syscalls_printer("syscalls", &enter) == NULL, "not for another system of the same name");
	ok(raw_syscalls_line(NULL) == NULL, "no line writer for a printer not written by hand");
	if (raw_syscalls_printer("raw_syscalls", &enter))
		for (int named = 0; named < 2; named++)
			compare(&enter, raw_syscalls_printer("raw_syscalls", &enter), 7, named);
	if (raw_syscalls_printer("raw_syscalls", &exit_))
		for (int named = 0; named < 2; named++)
			compare(&exit_, raw_syscalls_printer("raw_syscalls", &exit_), 2, named);

	refused(ENTER, "%lx)", "%lX)", "a directive changed");
	refused(ENTER, "REC->args[5]", "REC->args[4]", "an argument changed");
	refused(ENTER, "offset:16;\tsize:48", "offset:16;\tsize:24", "args of 4-byte longs");
	refused(EXIT, "field:long ret;\toffset:16;\tsize:8;\tsigned:1", "field:long ret;\toffset:16;\tsize:8;\tsigned:0",
		"an unsigned ret");
	refused(EXIT, "= %ld\"", "= %lu\"", "ret printed unsigned");
	tb_format_free(&enter);
	tb_format_free(&exit_);
	return done_testing();
}
