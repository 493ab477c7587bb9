/*
 * Damaged input for `tracebuf report`: tests/data/bad/ (made by
 * tests/data/bad/gen_bad.c from the real capture cap-e e1) and malformed
 * text files.  Each problem must be reported once with the file, the byte
 * offset and the reason, and everything that is not damaged must still
 * come out exactly as the kernel printed it (e1.cpu0.trace.txt).
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "decode/schema_internal.h"
#include "lib/capdir.h"
#include "lib/lines.h"
#include "lib/problems.h"
#include "lib/tap.h"
#include "lib/tree.h"
#include "tracebuf/capture.h"
#include "decode/schema_kernel.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"

#define BAD "tests/data/bad/"
#define E1 "tests/data/kernel/cap-e-partial-and-padding/"
#define RECORD 36     /* bytes per e1 marker record (gen_bad.c) */
#define FIRST_DATA 16 /* file offset of the first record of page 0 */
#define PAGE0_EVENTS 112
#define HEADER_LINES 12

/* File offset of the payload of record i of page 0. */
static long payload_at(int i)
{
	return FIRST_DATA + (long)i * RECORD + 4;
}

/* ------------------------------------------------------------ helpers */

/* The one reported problem must be in file at offset, its reason containing why. */
static void expect_problem(const char *name, const char *file, unsigned long long offset,
			   const char *why)
{
	const struct problem *p = problems.n ? &problems.p[0] : NULL;

	is_int(problems.n, 1, "%s: exactly one problem reported", name);
	ok(p && ends_with(p->file, file), "%s: it names %s", name, file);
	is_int(p ? (long long)p->offset : -1, offset, "%s: at byte %llu", name, offset);
	ok(p && strstr(p->reason, why), "%s: reason says '%s'", name, why);
}

/* The kernel's lines for the 149 events in e1.cpu0.raw (one was consumed first). */
static struct lines kernel;

static void load_kernel_lines(void)
{
	split_lines(tap_slurp(E1 "e1.cpu0.trace.txt", NULL), &kernel);
	keep_event_lines(&kernel);
	memmove(kernel.v, kernel.v + 1, (kernel.n - 1) * sizeof(kernel.v[0]));
	kernel.n--;
}

/* Report dir; rc of tb_report_write (or of the open), event lines in *out. */
static int report(const char *dir, struct lines *out)
{
	struct tb_capture_opts o = {.diag = problems_collect, .diag_ctx = &problems};
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	problems.n = 0;
	rc = tb_capture_open(dir, &o, &c);
	if (rc == 0) {
		rc = tb_report_write(c, f, NULL, NULL);
		tb_capture_close(c);
	}
	fclose(f);
	split_lines(text, out);
	keep_event_lines(out);
	return rc;
}

/* Our lines equal the kernel's lines [from, to) followed by [from2, to2). */
static void expect_kernel_lines(const char *name, const struct lines *ours, size_t from,
				size_t to, size_t from2, size_t to2)
{
	size_t n = (to - from) + (to2 - from2), same = 0;

	is_int(ours->n, n, "%s: %zu event lines survive", name, n);
	for (size_t i = 0; i < ours->n && i < n; i++) {
		size_t k = i < to - from ? from + i : from2 + (i - (to - from));
		same += !strcmp(ours->v[i], kernel.v[k]);
	}
	is_int(same, n, "%s: each equals the kernel's line for that event", name);
}

/* ------------------------------------------------------------ raw data */

static void check_raw_partial(void)
{
	struct lines l;

	is_int(report(BAD "raw-partial", &l), 1, "raw-partial: report says input was damaged");
	expect_problem("raw-partial", "raw-partial/cpu0.raw", 8192, "not a multiple");
	expect_kernel_lines("raw-partial", &l, 0, kernel.n, 0, 0);
	free_lines(&l);
}

static void check_commit_beyond(void)
{
	struct lines l;

	is_int(report(BAD "commit-beyond", &l), 1, "commit-beyond: damaged");
	expect_problem("commit-beyond", "commit-beyond/cpu0.raw", 8, "commit length beyond");
	expect_kernel_lines("commit-beyond", &l, PAGE0_EVENTS, kernel.n, 0, 0);
	free_lines(&l);
}

static void check_record_crossing(void)
{
	struct lines l;

	is_int(report(BAD "record-crossing", &l), 1, "record-crossing: damaged");
	expect_problem("record-crossing", "record-crossing/cpu0.raw", payload_at(111) - 4,
		       "crosses the end");
	expect_kernel_lines("record-crossing", &l, 0, 111, PAGE0_EVENTS, kernel.n);
	free_lines(&l);
}

static void check_zero_length(void)
{
	struct lines l;

	alarm(30); /* a decoder that loops on a 0-length record fails here */
	is_int(report(BAD "zero-length", &l), 1, "zero-length: damaged, and no hang");
	alarm(0);
	expect_problem("zero-length", "zero-length/cpu0.raw", payload_at(50) - 4, "bad length");
	expect_kernel_lines("zero-length", &l, 0, 50, PAGE0_EVENTS, kernel.n);
	free_lines(&l);
}

/* Our line i is the kernel's context columns followed by "[UNKNOWN EVENT id=N]". */
static bool unknown_line_ok(const char *ours, const char *theirs, unsigned id)
{
	const char *label = strstr(theirs, ": tracing_mark_write: ");
	char want[512];

	if (!label)
		return false;
	snprintf(want, sizeof(want), "%.*s: [UNKNOWN EVENT id=%u]", (int)(label - theirs), theirs, id);
	return !strcmp(ours, want);
}

static void check_unknown_id(void)
{
	struct lines l;
	size_t same = 0;

	is_int(report(BAD "unknown-id", &l), 1, "unknown-id: damaged");
	expect_problem("unknown-id", "unknown-id/cpu0.raw", payload_at(10), "event id 999 has no format");
	is_int(l.n, kernel.n, "unknown-id: every record still has a line");
	for (size_t i = 0; i < l.n && i < kernel.n; i++)
		same += i == 10 ? 0 : !strcmp(l.v[i], kernel.v[i]);
	is_int(same, kernel.n - 1, "unknown-id: the other lines equal the kernel's");
	ok(l.n > 10 && unknown_line_ok(l.v[10], kernel.v[10], 999),
	   "unknown-id: record 10 prints its context and [UNKNOWN EVENT id=999]");
	free_lines(&l);
}

static void check_record_short(void)
{
	struct lines l;
	size_t len;
	char *text = tap_slurp(BAD "record-short/formats/sched/sched_switch.format", &len);
	struct tb_format f = {0};
	char why[64];

	tb_format_parse(text, len, &f, NULL);
	snprintf(why, sizeof(why), "shorter than the %u bytes event sched_switch needs", f.min_size);
	is_int(report(BAD "record-short", &l), 1, "record-short: damaged");
	expect_problem("record-short", "record-short/cpu0.raw", payload_at(20) + RECORD - 4, why);
	expect_kernel_lines("record-short", &l, 0, 20, 21, kernel.n);
	tb_format_free(&f);
	free(text);
	free_lines(&l);
}

static void check_dataloc_outside(void)
{
	struct lines l;

	is_int(report(BAD "dataloc-outside", &l), 1, "dataloc-outside: damaged");
	expect_problem("dataloc-outside", "dataloc-outside/cpu0.raw", payload_at(30) + 12,
		       "field name points to bytes 28..44 of a 32-byte record");
	expect_kernel_lines("dataloc-outside", &l, 0, 30, 31, kernel.n);
	free_lines(&l);
}

/* ------------------------------------------------------- text files */

static void check_bad_format_dir(void)
{
	size_t len, unknown = 0;
	char *text = tap_slurp(BAD "bad-format/formats/ftrace/print.format", &len);
	long at = text && strstr(text, "offset:x;") ? strstr(text, "offset:x;") - text + 7 : -1;
	struct lines l;

	is_int(report(BAD "bad-format", &l), 1, "bad-format: damaged");
	is_int(problems.n, 2, "bad-format: the format, then the first record without one");
	ok(ends_with(problems.p[0].file, "bad-format/formats/ftrace/print.format") &&
		   (long)problems.p[0].offset == at && strstr(problems.p[0].reason, "offset"),
	   "bad-format: names print.format, byte %ld, the offset field", at);
	ok(problems.n > 1 && ends_with(problems.p[1].file, "cpu0.raw") &&
		   problems.p[1].offset == (unsigned long long)payload_at(0) &&
		   strstr(problems.p[1].reason, "event id 5 has no format"),
	   "bad-format: the first record of id 5 is reported once");
	for (size_t i = 0; i < l.n && i < kernel.n; i++)
		unknown += unknown_line_ok(l.v[i], kernel.v[i], 5);
	is_int(unknown, kernel.n, "bad-format: every record prints [UNKNOWN EVENT id=5] in context");
	free_lines(&l);
	free(text);
}

/*
 * A print fmt that crashes libtraceevent's parser (REC->ve^): our compiler
 * refuses it, naming the byte, and libtraceevent never sees it.  The event
 * is ftrace's print, which the kernel prints with its own code, not with
 * the print fmt: every record still prints exactly as the kernel's line.
 */
static void check_tep_crash_dir(void)
{
	size_t len;
	char *text = tap_slurp(BAD "tep-crash/formats/ftrace/print.format", &len);
	const char *bad = text ? strstr(text, "REC->ve^") : NULL;
	long at = bad ? bad - text + 5 : -1; /* the "ve" that names no field */
	struct lines l;

	is_int(report(BAD "tep-crash", &l), 1, "tep-crash: damaged, and we are still alive");
	ok(problems.n == 1 && ends_with(problems.p[0].file, "tep-crash/formats/ftrace/print.format") &&
		   (long)problems.p[0].offset == at && strstr(problems.p[0].reason, "ve"),
	   "tep-crash: names print.format, the byte of the unknown field 've' (%ld), and says so", at);
	expect_kernel_lines("tep-crash", &l, 0, kernel.n, 0, 0);
	free_lines(&l);
	free(text);
}

static void check_header_page_dir(void)
{
	size_t len;
	char *text = tap_slurp(BAD "header-page-32bit/header_page", &len);
	char *line = text ? strstr(text, "\tfield: local_t commit;") : NULL;
	struct lines l;

	is_int(report(BAD "header-page-32bit", &l), -EINVAL,
	       "header-page-32bit: the capture cannot be opened");
	expect_problem("header-page-32bit", "header-page-32bit/header_page",
		       line ? (unsigned long long)(line - text) : 0, "only 64-bit kernels");
	is_int(l.n, 0, "header-page-32bit: nothing printed");
	free_lines(&l);
	free(text);
}

/* Apply one edit to the real print.format: replace the first `from` by `to`. */
static char *edited(const char *text, const char *from, const char *to, size_t *len)
{
	const char *at = strstr(text, from);
	char *out;

	if (!at)
		return NULL;
	*len = strlen(text) - strlen(from) + strlen(to);
	out = malloc(*len + 1);
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

/*
 * Malformed format files, each the real print.format with one edit.  The
 * offset expected is where `mark` is in the edited text (the start of the
 * text for -1, its end for -2), plus `delta`.
 */
static void check_format_texts(void)
{
	static const struct {
		const char *what, *from, *to, *mark;
		long delta;
		const char *why;
	} cases[] = {
		{"no ID line", "ID: 5\n", "", "format:", 0, "expected a line starting with 'ID:'"},
		{"ID too large", "ID: 5", "ID: 70000", "ID:", 0, "does not fit"},
		{"ID not a number", "ID: 5", "ID: five", "five", 0, "expected a decimal number"},
		{"offset not a number", "offset:8;", "offset:x;", "x;", 0, "expected a decimal number"},
		{"size far too big", "size:8;\tsigned:0;\n\tfield:char", "size:4294967295;\tsigned:0;\n\tfield:char",
		 "\tfield:unsigned long ip", 0, "exceeds any sub-buffer"},
		{"number overflows", "size:8;\tsigned:0;\n\tfield:char", "size:99999999999;\tsigned:0;\n\tfield:char",
		 "99999999999", 0, "number too large"},
		{"field twice", "\tfield:char buf[]",
		 "\tfield:unsigned long  ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:char buf[]",
		 "\tfield:unsigned long  ip", 0, "appears twice"},
		{"declaration without ';'", "char buf[];\toffset:16;\tsize:0;\tsigned:0;", "char buf[]",
		 "char buf[]", 0, "has no ';'"},
		{"no field name", "unsigned long ip;", "unsigned long *;", "unsigned long *;", 15,
		 "no field name"},
		{"no type", "unsigned long ip;", "ip;", "ip;", 0, "no type"},
		{"signed is 2", "signed:1;\n\n", "signed:2;\n\n", "signed:2", 7, "must be 0 or 1"},
		{"dynamic field of 8 bytes", "char buf[];\toffset:16;\tsize:0;", "__data_loc char[] buf;\toffset:16;\tsize:8;",
		 "\tfield:__data_loc", 0, "must be 4 bytes"},
		{"common_pid moved", "int common_pid;\toffset:4;", "int common_pid;\toffset:24;", "print fmt", 0,
		 "common_pid is 4 bytes at 24"},
		{"no print fmt", "print fmt:", "printk fmt:", "printk", 0, "expected a 'field:' line"},
		{"print fmt unquoted", "print fmt: \"", "print fmt: ", "%ps", 0, "quoted string"},
		{"text after ID", "ID: 5\n", "ID: 5 6\n", " 6", 0, "unexpected text after the number"},
		{"empty name", "name: print", "name: ", "\nID", 0, "empty event name"},
	};
	size_t base_len;
	char *base = tap_slurp(E1 "formats/ftrace/print.format", &base_len);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		char *text = edited(base, cases[i].from, cases[i].to, &len);
		const char *m = text ? strstr(text, cases[i].mark) : NULL;
		struct tb_format f;
		struct tb_problem err = {0};
		int rc = text ? tb_format_parse(text, len, &f, &err) : 0;
		long want = m ? (long)(m - text) + cases[i].delta : -100;
		if (!ok(rc == -EINVAL && (long)err.offset == want && strstr(err.reason, cases[i].why),
			"format with %s: refused at byte %ld, '%s'", cases[i].what, want, cases[i].why))
			diag("got rc %d, byte %llu: %s", rc, (unsigned long long)err.offset, err.reason);
		free(text);
	}
	{
		/* A NUL byte inside the text. */
		char *text = strdup(base);
		struct tb_format f;
		struct tb_problem err = {0};
		size_t at = (size_t)(strstr(text, "common_flags") - text);
		text[at] = '\0';
		ok(tb_format_parse(text, base_len, &f, &err) == -EINVAL && err.offset == at &&
			   strstr(err.reason, "NUL byte"),
		   "format with a NUL byte: refused at its offset %zu", at);
		ok(tb_format_parse(text, 0, &f, &err) == -EINVAL && err.offset == 0,
		   "an empty format file is refused at byte 0");
		free(text);
	}
	free(base);
}

static void check_header_texts(void)
{
	size_t len, n;
	char *hp = tap_slurp(E1 "header_page", &len), *t;
	struct tb_header_page out;
	struct tb_problem err = {0};
	char *he = tap_slurp("tests/data/kernel/header_event", &n);

	t = edited(hp, "size:4080;", "size:4000;", &len);
	ok(tb_header_page_parse(t, len, &out, &err) == -EINVAL &&
		   err.offset == (size_t)(strstr(t, "\tfield: char data") - t) &&
		   strstr(err.reason, "not a sub-buffer size"),
	   "header_page with a 4016-byte sub-buffer: refused at the data line");
	free(t);
	t = edited(hp, "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n", "", &len);
	ok(tb_header_page_parse(t, len, &out, &err) == -EINVAL && err.offset == len &&
		   strstr(err.reason, "lacks the data field"),
	   "header_page without data: refused at its end");
	free(t);
	t = edited(he, "type_len    :    5 bits", "type_len    :    6 bits", &n);
	ok(tb_header_event_parse(t, n, &err) == -EINVAL &&
		   err.offset == (size_t)(strstr(t, "\ttype_len") - t) && strstr(err.reason, "decodes 5"),
	   "header_event with a 6-bit type_len: refused at that line");
	free(t);
	t = edited(he, "\ttime_stamp : type == 31\n", "", &n);
	ok(tb_header_event_parse(t, n, &err) == -EINVAL && strstr(err.reason, "lacks the time_stamp"),
	   "header_event without time_stamp: refused");
	free(t);
	free(he);
	free(hp);
}

static void check_cmdlines(void)
{
	struct tb_schema *s = tb_schema_new();
	const char text[] = "2177 bash\nnot-a-pid x\n2180 seq\n";

	tb_schema_set_problem_fn(s, problems_collect, &problems);
	problems.n = 0;
	is_int(tb_schema_load_cmdlines(s, "saved_cmdlines", text, sizeof(text) - 1), -EINVAL,
	       "saved_cmdlines with a bad line: reported");
	expect_problem("saved_cmdlines", "saved_cmdlines", 10, "PID COMM");
	ok(!strcmp(tep_data_comm_from_pid(schema_tep(s), 2177), "bash") &&
		   !strcmp(tep_data_comm_from_pid(schema_tep(s), 2180), "seq"),
	   "saved_cmdlines: the good lines around it are used");
	tb_schema_free(s);
}

/*
 * printk_formats: our parser takes each line apart before libtraceevent
 * sees it (its own reads out of bounds on "0x1:").  Bad lines are reported
 * at their offset and skipped; good ones, the short ones too, are what a
 * bputs record's string resolves to.
 */
/* One problem of file, whose reason starts with what, lies inside the line of text starting with line. */
static size_t problem_in_line(const char *text, const char *line, const char *file, const char *what)
{
	size_t start = (size_t)(strstr(text, line) - text), end = start + strcspn(text + start, "\n");
	size_t n = 0;

	for (size_t j = 0; j < problems.n; j++)
		n += problems.p[j].offset >= start && problems.p[j].offset <= end &&
		     !strcmp(problems.p[j].file, file) && !strncmp(problems.p[j].reason, what, strlen(what));
	return n;
}

static void check_printk_formats(void)
{
	static const char text[] = "0xffffffff81000100 : \"hello\\n\"\n" /* the kernel's \n is cut */
				   "0x1:\n"
				   "0xffffffff81000200 : \"a\"\n"
				   "0xffffffff81000300 : \"\"\n"
				   "nonsense\n"
				   "0x2 : \"no closing quote\n"
				   "0x : \"no digits\"\n"
				   "0x11111111111111111 : \"17 digits\"\n";
	static const char *const bad[] = {"0x1:", "nonsense", "0x2 :", "0x :", "0x11111111111111111"};
	static const struct {
		unsigned long long addr;
		const char *tail;
	} good[] = {{0xffffffff81000100ull, ": hello"}, {0xffffffff81000200ull, ": a"},
		    {0xffffffff81000300ull, ": "}, {0xffffffff81000400ull, ": 0xffffffff81000400"}};
	struct tb_schema *s = tb_schema_new();
	size_t len, all = 0, found = 0;
	char *fmt = tap_slurp("tests/data/kernel/formats/ftrace/bputs.format", &len);

	tb_schema_set_problem_fn(s, problems_collect, &problems);
	problems.n = 0;
	is_int(fmt ? tb_schema_load_format(s, "bputs.format", "ftrace", fmt, len) : -1, 0, "bputs format loaded");
	is_int(tb_schema_load_printk_formats(s, "printk_formats", text, sizeof(text) - 1), -EINVAL,
	       "printk_formats with bad lines: reported");
	is_int(problems.n, sizeof(bad) / sizeof(bad[0]), "printk_formats: each bad line once");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		found += problem_in_line(text, bad[i], "printk_formats", "printk_formats line");
	is_int(found, sizeof(bad) / sizeof(bad[0]), "printk_formats: each inside its own line");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint8_t rec[24] = {15, 0, 0, 0, 1};
		struct tb_render_record ev = {0, 1000, rec, sizeof(rec)};
		struct tb_problem err;
		char *out = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&out, &n);
		memcpy(rec + 16, &good[i].addr, 8);
		tb_render_event(s, &ev, NULL, f, &err);
		fclose(f);
		if (n && out[n - 1] == '\n')
			out[--n] = '\0';
		all += n >= strlen(good[i].tail) && !strcmp(out + n - strlen(good[i].tail), good[i].tail);
		if (!(n >= strlen(good[i].tail) && !strcmp(out + n - strlen(good[i].tail), good[i].tail)))
			diag("got '%s'", out);
		free(out);
	}
	is_int(all, 4, "printk_formats: the good lines resolve (\"hello\", \"a\", \"\"), an unknown address prints as 0x hex");
	free(fmt);
	tb_schema_free(s);
}

/* kallsyms: the same, with the kernel's "ADDR TYPE NAME[\t[MODULE]]" lines. */
static void check_kallsyms(void)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "zzzz T not_hex\n"
				   "ffffffff81000010 t in_module\t[mymod]\n"
				   "ffffffff81000020 T\n"
				   "ffffffff81000030 T two words\n"
				   "ffffffff81000040 t open_bracket\t[mod\n"
				   "12345678901234567 T seventeen_digits\n"
				   "ffffffff81000050 T last_one\n"
				   "ffffffff81000060 T _etext"; /* the image's end: beyond it nothing resolves */
	static const char *const bad[] = {"zzzz", "ffffffff81000020 T", "ffffffff81000030 T two",
					  "ffffffff81000040 t open", "12345678901234567"};
	struct tb_schema *s = tb_schema_new();
	const char *f1, *f2, *f3, *mod = NULL;
	size_t found = 0;

	tb_schema_set_problem_fn(s, problems_collect, &problems);
	problems.n = 0;
	is_int(tb_schema_load_kallsyms(s, "kallsyms", text, sizeof(text) - 1), -EINVAL,
	       "kallsyms with bad lines: reported");
	is_int(problems.n, 5, "kallsyms: each bad line once");
	for (size_t i = 0; i < 5; i++)
		found += problem_in_line(text, bad[i], "kallsyms", "kallsyms line");
	is_int(found, 5, "kallsyms: each inside its own line");
	f1 = tb_schema_symbol(s, 0xffffffff81000004ull, NULL, NULL, NULL);
	f2 = tb_schema_symbol(s, 0xffffffff81000010ull, NULL, NULL, &mod);
	f3 = tb_schema_symbol(s, 0xffffffff81000050ull, NULL, NULL, NULL);
	ok(f1 && !strcmp(f1, "_stext") && f2 && !strcmp(f2, "in_module") && mod && !strcmp(mod, "mymod") &&
		   f3 && !strcmp(f3, "last_one") && tb_schema_has_symbols(s),
	   "kallsyms: the good lines resolve (_stext, in_module, last_one)");
	tb_schema_free(s);
}

/* The real print.format with its print fmt's argument wrapped in depth brackets. */
static char *nested_format(size_t depth, size_t *len, size_t *too_deep_at)
{
	size_t base_len;
	char *base = tap_slurp(E1 "formats/ftrace/print.format", &base_len);
	char *arg = base ? strstr(base, ", REC->buf") : NULL, *out;
	size_t head;

	if (!arg)
		return NULL;
	head = (size_t)(arg - base) + 2;
	out = malloc(base_len + 2 * depth + 1);
	if (!out)
		return NULL;
	memcpy(out, base, head);
	memset(out + head, '(', depth);
	/* ", REC->buf" -> ", (((REC->buf)))" */
	memcpy(out + head + depth, arg + 2, 8);
	memset(out + head + depth + 8, ')', depth);
	strcpy(out + head + 2 * depth + 8, arg + 10);
	*len = strlen(out);
	*too_deep_at = head + 256;
	free(base);
	return out;
}

/*
 * A print fmt nested 200,000 deep overflows libtraceevent's stack: refused
 * first, at the 257th bracket, in linear time (an alarm catches a quadratic
 * pass or a crash in the trial child that would take that long); 256 deep
 * is left to libtraceevent.
 */
static void check_deep_nesting(void)
{
	size_t len, at;
	char *text = nested_format(200000, &len, &at);
	struct tb_schema *s = tb_schema_new();
	int rc;

	tb_schema_set_problem_fn(s, problems_collect, &problems);
	problems.n = 0;
	alarm(60);
	rc = text ? tb_schema_load_format(s, "print.format", "ftrace", text, len) : 0;
	alarm(0);
	is_int(rc, -EINVAL, "print fmt nested 200,000 deep: refused, quickly");
	expect_problem("print fmt nested 200,000 deep", "print.format", at, "nests brackets deeper than 256");
	free(text);
	text = nested_format(256, &len, &at);
	problems.n = 0;
	rc = text ? tb_schema_load_format(s, "print.format", "ftrace", text, len) : -1;
	ok(problems.n == 0 || !strstr(problems.p[0].reason, "nests brackets"),
	   "print fmt nested 256 deep: not refused for its depth (libtraceevent says %d)", rc);
	free(text);
	tb_schema_free(s);
}

/* ------------------------------------------------ records, directly */

static void check_records(void)
{
	struct tb_schema *s = tb_schema_new();
	size_t len;
	char *fmt = tap_slurp("tests/data/kernel/formats/irq/irq_handler_entry.format", &len);
	struct tb_format f;
	struct tb_problem err = {0};
	uint8_t rec[24] = {0};
	uint32_t loc = (4u << 16) | 16u; /* 4 bytes at 16 */
	struct tb_render_record ev = {.cpu = 0, .ts = 1000, .data = rec, .len = 4};
	char *out = NULL;
	size_t outlen = 0;
	FILE *sink = open_memstream(&out, &outlen);

	tb_format_parse(fmt, len, &f, NULL);
	is_int(tb_render_event(s, &ev, NULL, sink, &err), -EINVAL,
	       "a 4-byte record cannot hold the common header");
	ok(strstr(err.reason, "8-byte common event header") != NULL, "... and says so");
	memcpy(rec + 12, &loc, 4);
	memcpy(rec + 16, "abcd", 4); /* no NUL inside its 4 bytes */
	is_int(tb_schema_check_record(&f, rec, sizeof(rec), &err), -EINVAL,
	       "a __data_loc string without its NUL is refused");
	ok(err.offset == 16 && strstr(err.reason, "not NUL-terminated"), "... at its first byte");
	rec[19] = '\0';
	is_int(tb_schema_check_record(&f, rec, sizeof(rec), &err), 0, "with the NUL it is fine");
	fclose(sink);
	is_int(outlen, 0, "nothing was printed for the bad record");
	free(out);
	tb_format_free(&f);
	free(fmt);
	tb_schema_free(s);
}

/* ------------------------------------------------ hostile captures */

/*
 * A scratch capture: e1's header_page, formats and trace_clock (symlinks), then whatever
 * a test puts beside them.  Removed whole afterwards.
 */
static char scratch[64];

static const char *scratch_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return path;
}

static bool scratch_make(void)
{
	char real[PATH_MAX];

	strcpy(scratch, "/tmp/tb-bad-cap-XXXXXX");
	if (!mkdtemp(scratch) || !realpath(E1, real))
		return false;
	for (const char *const *n = (const char *const[]){"header_page", "formats", "trace_clock", NULL}; *n; n++) {
		char from[PATH_MAX + 64];
		snprintf(from, sizeof(from), "%s/%s", real, *n);
		if (symlink(from, scratch_path(*n)) < 0)
			return false;
	}
	return true;
}

static void scratch_remove(void)
{
	tree_remove(scratch);
}

static void scratch_write(const char *name, const void *data, size_t len)
{
	FILE *f = fopen(scratch_path(name), "w");

	if (!f || fwrite(data, 1, len, f) != len)
		diag("cannot write %s", scratch_path(name));
	if (f)
		fclose(f);
}

/* scratch/name -> target (a file of the real capture when target is relative). */
static void scratch_link(const char *name, const char *target)
{
	char real[PATH_MAX], from[PATH_MAX + 64];

	if (target[0] != '/' && realpath(E1, real)) {
		snprintf(from, sizeof(from), "%s/%s", real, target);
		target = from;
	}
	if (symlink(target, scratch_path(name)) < 0)
		diag("symlink %s: %s", scratch_path(name), strerror(errno));
}

/* e1's raw pages in the order given (-1: a page of zeros). */
static uint8_t *e1_pages(const int *order, size_t n, size_t *len)
{
	size_t rawlen;
	uint8_t *raw = (uint8_t *)tap_slurp(E1 "e1.cpu0.raw", &rawlen);
	uint8_t *out = calloc(n, 4096);

	for (size_t i = 0; raw && out && i < n; i++)
		if (order[i] >= 0)
			memcpy(out + i * 4096, raw + (size_t)order[i] * 4096, 4096);
	free(raw);
	*len = n * 4096;
	return out;
}

/* The problem whose file ends with file, or NULL. */
static const struct problem *problem_in(const char *file)
{
	for (size_t i = 0; i < problems.n; i++)
		if (ends_with(problems.p[i].file, file))
			return &problems.p[i];
	return NULL;
}

/*
 * A FIFO, a device or a directory where a file is expected: refused with
 * the file's name and what it is, never read (a FIFO would block, a device
 * never ends).  Each case runs under an alarm.
 */
static void check_not_regular(void)
{
	static const struct {
		const char *name, *as, *kind;
		bool raw; /* add e1's raw pages as cpu0.raw */
		int rc;   /* of the report (or the open) */
		size_t events;
	} cases[] = {
		{"cpu0.raw", "fifo", "a FIFO", false, 1, 0},
		{"cpu0.raw", "/dev/zero", "a character device", false, 1, 0},
		{"cpu0.raw", "dir", "a directory", false, 1, 0},
		{"cpu0.stats", "/dev/urandom", "a character device", true, 1, 149},
		{"cpu0.stats", "fifo", "a FIFO", true, 1, 149},
		{"saved_cmdlines", "fifo", "a FIFO", true, 1, 149},
		{"printk_formats", "/dev/zero", "a character device", true, 1, 149},
		{"kallsyms", "/dev/urandom", "a character device", true, 1, 149},
		{"meta.txt", "fifo", "a FIFO", true, 1, 149},
		/* the only clock refused: the open fails too (no clock: no times) */
		{"trace_clock", "dir", "a directory", true, -EINVAL, 0},
		{"header_event", "fifo", "a FIFO", true, 1, 149},
		{"header_page", "fifo", "a FIFO", true, -EINVAL, 0},
		{"header_page", "dir", "a directory", true, -EINVAL, 0},
		{"header_page", "/dev/zero", "a character device", true, -EINVAL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[128];
		struct lines l = {0};
		const struct problem *p;
		int rc;

		snprintf(what, sizeof(what), "%s as %s", cases[i].name, cases[i].as);
		if (!scratch_make()) {
			ok(0, "%s: set up", what);
			continue;
		}
		if (cases[i].raw)
			scratch_link("cpu0.raw", "e1.cpu0.raw");
		if (!strcmp(cases[i].name, "header_page") || !strcmp(cases[i].name, "trace_clock"))
			unlink(scratch_path(cases[i].name));
		if (!strcmp(cases[i].as, "fifo"))
			mkfifo(scratch_path(cases[i].name), 0600);
		else if (!strcmp(cases[i].as, "dir"))
			mkdir(scratch_path(cases[i].name), 0700);
		else
			scratch_link(cases[i].name, cases[i].as);
		alarm(30); /* a reader that blocks on the FIFO or reads the device forever fails here */
		rc = report(scratch, &l);
		alarm(0);
		p = problem_in(cases[i].name);
		is_int(rc, cases[i].rc, "%s: %s, no hang", what, cases[i].rc < 0 ? "the open fails" : "damaged");
		ok(problems.n == (strcmp(cases[i].name, "trace_clock") ? 1u : 2u) && p && p->offset == 0 &&
			   strstr(p->reason, cases[i].kind) &&
			   strstr(p->reason, "only regular files"),
		   "%s: one problem, naming %s, byte 0, '%s'", what, cases[i].name, cases[i].kind);
		if (cases[i].events)
			expect_kernel_lines(what, &l, 0, kernel.n, 0, 0);
		else
			is_int(l.n, 0, "%s: nothing printed", what);
		free_lines(&l);
		scratch_remove();
	}
}

/* A format file that is a FIFO: the event is unknown, said once, never a hang. */
static void check_format_fifo(void)
{
	char real[PATH_MAX], from[PATH_MAX + 64];
	struct lines l = {0};
	const struct problem *p;

	if (!scratch_make() || !realpath(E1, real)) {
		ok(0, "format FIFO: set up");
		return;
	}
	unlink(scratch_path("formats"));
	mkdir(scratch_path("formats"), 0700);
	mkdir(scratch_path("formats/ftrace"), 0700);
	mkfifo(scratch_path("formats/ftrace/print.format"), 0600);
	snprintf(from, sizeof(from), "%s/e1.cpu0.raw", real);
	scratch_link("cpu0.raw", from);
	alarm(30);
	is_int(report(scratch, &l), 1, "format file as a FIFO: damaged, no hang");
	alarm(0);
	p = problem_in("formats/ftrace/print.format");
	ok(p && strstr(p->reason, "a FIFO"), "format file as a FIFO: named, 'a FIFO'");
	is_int(l.n, kernel.n, "format file as a FIFO: every record still has a line");
	free_lines(&l);
	scratch_remove();
}

/*
 * header_page's sub-buffer size against the raw file: cap-c's 8 KiB pages
 * under a 4 KiB header_page, and e1's 4 KiB pages under cap-c's 8 KiB one.
 * Either way the file is refused with both sizes named, at the first byte
 * that shows it, and nothing of it is printed (read at the wrong size, half
 * the events would silently vanish).
 */
static void check_subbuf_mismatch(void)
{
	struct lines l = {0};
	const struct problem *p;

	if (scratch_make()) {
		scratch_link("cpu0.raw", "../cap-c-subbuf8k/cpu0.raw");
		is_int(report(scratch, &l), 1, "8 KiB pages, 4 KiB header_page: damaged");
		p = problem_in("cpu0.raw");
		ok(problems.n == 1 && p && p->offset == 8 && strstr(p->reason, "says 4096-byte") &&
			   strstr(p->reason, "holds 8192-byte"),
		   "8 KiB pages, 4 KiB header_page: both sizes named, at byte 8 (the first commit "
		   "beyond 4080 bytes)");
		is_int(l.n, 0, "8 KiB pages, 4 KiB header_page: no event printed");
		free_lines(&l);
		scratch_remove();
	}
	if (scratch_make()) {
		unlink(scratch_path("header_page"));
		scratch_link("header_page", "../cap-c-subbuf8k/header_page");
		scratch_link("cpu0.raw", "e1.cpu0.raw");
		is_int(report(scratch, &l), 1, "4 KiB pages, 8 KiB header_page: damaged");
		p = problem_in("cpu0.raw");
		ok(problems.n == 1 && p && p->offset == 4096 && strstr(p->reason, "says 8192-byte") &&
			   strstr(p->reason, "holds 4096-byte"),
		   "4 KiB pages, 8 KiB header_page: both sizes named, at byte 4096 (a header "
		   "inside the first 8 KiB)");
		is_int(l.n, 0, "4 KiB pages, 8 KiB header_page: no event printed (112 would have, "
		       "the other 37 vanished)");
		free_lines(&l);
		scratch_remove();
	}
}

/* An all-zero sub-buffer between e1's two: reported at its offset, skipped. */
static void check_zero_page(void)
{
	static const int order[] = {0, -1, 1};
	size_t len;
	uint8_t *raw = e1_pages(order, 3, &len);
	struct lines l = {0};

	if (!raw || !scratch_make()) {
		ok(0, "zero page: set up");
		free(raw);
		return;
	}
	scratch_write("cpu0.raw", raw, len);
	is_int(report(scratch, &l), 1, "all-zero sub-buffer: damaged");
	expect_problem("all-zero sub-buffer", "cpu0.raw", 4096, "all zeros");
	expect_kernel_lines("all-zero sub-buffer", &l, 0, kernel.n, 0, 0);
	free_lines(&l);
	scratch_remove();
	free(raw);
}

/*
 * e1's sub-buffers swapped: time goes back at the second one.  Reported at
 * its offset, and the events keep the file's order: page 1's 37, then page
 * 0's 112.
 */
static void check_time_back(void)
{
	static const int order[] = {1, 0};
	size_t len;
	uint8_t *raw = e1_pages(order, 2, &len);
	struct lines l = {0};

	if (!raw || !scratch_make()) {
		ok(0, "time back: set up");
		free(raw);
		return;
	}
	scratch_write("cpu0.raw", raw, len);
	is_int(report(scratch, &l), 1, "time going back: damaged");
	expect_problem("time going back", "cpu0.raw", 4096, "time goes back");
	expect_kernel_lines("time going back", &l, PAGE0_EVENTS, kernel.n, 0, PAGE0_EVENTS);
	free_lines(&l);
	scratch_remove();
	free(raw);
}

/* cpu999999.raw: not a CPU this reader takes: said, and the rest printed. */
static void check_cpu_too_high(void)
{
	struct lines l = {0};

	if (!scratch_make()) {
		ok(0, "cpu999999: set up");
		return;
	}
	scratch_link("cpu0.raw", "e1.cpu0.raw");
	scratch_link("cpu999999.raw", "e1.cpu0.raw");
	scratch_link("cpu99999999999999999999.raw", "e1.cpu0.raw");
	is_int(report(scratch, &l), 1, "cpu999999.raw: damaged");
	ok(problems.n == 2 && problem_in("cpu999999.raw") &&
		   strstr(problem_in("cpu999999.raw")->reason, "CPU number above 4095") &&
		   problem_in("cpu99999999999999999999.raw"),
	   "cpu999999.raw and a 20-digit CPU: each said to be above 4095, ignored");
	expect_kernel_lines("cpu999999.raw", &l, 0, kernel.n, 0, 0);
	free_lines(&l);
	scratch_remove();
}

/*
 * Thousands of raw files: a report holds one sub-buffer per CPU, so 600 CPUs
 * of 512 KiB sub-buffers (300 MiB) are refused at the open with a message.
 */
static void check_page_memory(void)
{
	size_t len;
	char *hp = tap_slurp(E1 "header_page", &len), *big = hp ? edited(hp, "size:4080;", "size:524272;", &len) : NULL;
	char name[32];
	struct lines l = {0};
	const struct problem *p;

	if (!big || !scratch_make()) {
		ok(0, "page memory: set up");
		free(hp);
		free(big);
		return;
	}
	unlink(scratch_path("header_page"));
	scratch_write("header_page", big, len);
	for (int cpu = 0; cpu < 600; cpu++) {
		snprintf(name, sizeof(name), "cpu%d.raw", cpu);
		scratch_write(name, "", 0);
	}
	is_int(report(scratch, &l), -E2BIG, "600 CPUs of 512 KiB sub-buffers: the open is refused");
	p = problems.n == 1 ? &problems.p[0] : NULL;
	ok(p && ends_with(p->file, scratch) && strstr(p->reason, "600 CPUs") && strstr(p->reason, "300 MiB"),
	   "... with one message naming the directory, the CPUs and the memory");
	free_lines(&l);
	scratch_remove();
	free(hp);
	free(big);
}

/*
 * More raw files than the process may keep open: with RLIMIT_NOFILE at 40,
 * 100 CPUs (each e1's pages) still print every event, in a child process.
 */
static void check_many_files(void)
{
	char name[32];
	pid_t pid;
	int status = -1;

	if (!scratch_make()) {
		ok(0, "many files: set up");
		return;
	}
	for (int cpu = 0; cpu < 100; cpu++) {
		snprintf(name, sizeof(name), "cpu%d.raw", cpu);
		scratch_link(name, "e1.cpu0.raw");
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit lim = {40, 40};
		struct lines l = {0};
		int rc;
		setrlimit(RLIMIT_NOFILE, &lim);
		rc = report(scratch, &l);
		_exit(rc == 0 && problems.n == 0 && l.n == 100 * kernel.n ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "100 CPUs with 40 file descriptors: every event printed, nothing reported");
	scratch_remove();
}

/* --------------------------------------------------------------- CLI */

/*
 * A stats file that is not the kernel's (a line missing, a count that is
 * not a number) is reported with its name and the offset of the value at
 * fault (0 for a missing line), and the records still print.
 * The capture is e1's raw data and formats with an edited cpu0.stats.
 */
static void check_stats_text(const char *name, const char *from, const char *to, const char *mark,
			     const char *why)
{
	static const char *const links[][2] = {{"e1.cpu0.raw", "cpu0.raw"}, {"formats", "formats"},
					       {"header_page", "header_page"}, {"trace_clock", "trace_clock"}};
	const size_t n = sizeof(links) / sizeof(links[0]);
	char dir[] = "/tmp/tb-bad-stats-XXXXXX", path[PATH_MAX];
	size_t len;
	char *good = tap_slurp(E1 "e1.cpu0.stats", &len), *bad = good ? edited(good, from, to, &len) : NULL;
	struct lines l = {0};
	FILE *f;

	if (!bad || capdir_make(dir, E1, links, n) < 0) {
		ok(0, "%s: set up", name);
		free(bad);
		free(good);
		return;
	}
	snprintf(path, sizeof(path), "%s/cpu0.stats", dir);
	if ((f = fopen(path, "w"))) {
		fwrite(bad, 1, len, f);
		fclose(f);
	}
	is_int(report(dir, &l), 1, "%s: reported as damaged", name);
	/* at the value that is not a number, or at 0 for a missing line */
	expect_problem(name, "/cpu0.stats", mark ? (unsigned long long)(strstr(bad, mark) - bad) : 0, why);
	expect_kernel_lines(name, &l, 0, kernel.n, 0, 0);
	free_lines(&l);
	unlink(path);
	capdir_remove(dir, links, n);
	free(bad);
	free(good);
}

/* One edit of the real stats file, parsed directly: accepted with *want_now as now ts, or refused. */
static void stats_edge(const char *name, const char *from, const char *to, int accept, uint64_t want_now)
{
	size_t len;
	char *good = tap_slurp(E1 "e1.cpu0.stats", &len), *text = good ? edited(good, from, to, &len) : NULL;
	struct tb_cpu_stats st;
	struct tb_problem d = {.file = ""};
	int rc = text ? tb_stats_parse_kernel(text, &st, &d) : -1;

	if (accept)
		ok(rc == 0 && st.now_ts == want_now, "stats %s: accepted, now ts %llu ns", name,
		   (unsigned long long)(rc == 0 ? st.now_ts : 0));
	else
		ok(rc == -EINVAL && text && d.offset == (uint64_t)(strstr(text, to) - text) + strcspn(to, "0123456789"),
		   "stats %s: refused at the value (%s)", name, d.reason);
	free(text);
	free(good);
}

static void check_stats_parser_edges(void)
{
	const char *now = "now ts:  1741.112319";

	stats_edge("a plain count for a time (not a clock in ns)", now, "now ts: 1234", 1, 1234);
	stats_edge("blanks after a value", now, "now ts:  1741.112319 \t", 1, 1741112319000ull);
	stats_edge("the largest time in ns", now, "now ts: 18446744073.709551", 1, 18446744073709551000ull);
	stats_edge("a time one microsecond too large", now, "now ts: 18446744073.709552", 0, 0);
	stats_edge("a sign in the microseconds", now, "now ts: 1741.-12319", 0, 0);
	stats_edge("a count past 64 bits", "entries: 150", "entries: 18446744073709551616", 0, 0);
	stats_edge("words after a count", "overrun: 0", "overrun: 0 or so", 0, 0);
}

static void check_stats_texts(void)
{
	check_stats_text("stats without bytes", "bytes:", "bites:", NULL, "no 'bytes:' line");
	check_stats_text("stats with a word for a count", "overrun: 0", "overrun: none", "none",
			 "'overrun:' is not followed by a count");
	check_stats_text("stats with a time cut short", "now ts:  1741.112319", "now ts:  1741.11", "1741.11",
			 "'now ts:' is not followed by a time");
}

static void check_cli(void)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char cmd[512], buf[4096];
	size_t n, events = 0;
	int status;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report " BAD "commit-beyond 2>&1", b);
	p = popen(cmd, "r");
	bool said = false;
	while (p && fgets(buf, sizeof(buf), p)) {
		n = strlen(buf);
		said |= strstr(buf, "commit-beyond/cpu0.raw: byte 8: commit length beyond") != NULL;
		events += n && buf[0] != '#' && strncmp(buf, "tracebuf:", 9);
	}
	status = p ? pclose(p) : -1;
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 1, "CLI: exit status 1 on damaged input");
	ok(said, "CLI: stderr names the file, the byte offset and the reason");
	is_int(events, kernel.n - PAGE0_EVENTS, "CLI: the undamaged events are printed");
}

int main(void)
{
	load_kernel_lines();
	if (kernel.n != 149)
		diag("e1.cpu0.trace.txt: expected 150 event lines");
	check_raw_partial();
	check_commit_beyond();
	check_record_crossing();
	check_zero_length();
	check_unknown_id();
	check_record_short();
	check_dataloc_outside();
	check_bad_format_dir();
	check_tep_crash_dir();
	check_header_page_dir();
	check_format_texts();
	check_header_texts();
	check_cmdlines();
	check_printk_formats();
	check_kallsyms();
	check_deep_nesting();
	check_records();
	check_stats_texts();
	check_stats_parser_edges();
	check_not_regular();
	check_format_fifo();
	check_subbuf_mismatch();
	check_zero_page();
	check_time_back();
	check_cpu_too_high();
	check_page_memory();
	check_many_files();
	check_cli();
	free_lines(&kernel);
	return done_testing();
}
