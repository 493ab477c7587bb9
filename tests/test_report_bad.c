/*
 * Damaged input for `tracebuf report`: tests/data/bad/ (made by
 * tests/data/bad/gen_bad.c from the real capture cap-e e1) and malformed
 * text files.  Each problem must be reported once with the file, the byte
 * offset and the reason, and everything that is not damaged must still
 * come out exactly as the kernel printed it (e1.cpu0.trace.txt).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "lib/capdir.h"
#include "lib/lines.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
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

struct problem {
	char file[256];
	unsigned long long offset;
	char reason[TB_DIAG_REASON_MAX];
};

static struct problems {
	size_t n;
	struct problem p[32];
} problems;

static void collect(void *ctx, const struct tb_diag *d)
{
	struct problems *ps = ctx;

	if (ps->n < 32) {
		struct problem *p = &ps->p[ps->n++];
		snprintf(p->file, sizeof(p->file), "%s", d->file);
		p->offset = d->offset;
		snprintf(p->reason, sizeof(p->reason), "%s", d->reason);
	}
	diag("reported: %s: byte %llu: %s", d->file, (unsigned long long)d->offset, d->reason);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

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
	struct tb_capture_opts o = {.diag = collect, .diag_ctx = &problems};
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
	tb_format_release(&f);
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
		struct tb_diag err = {0};
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
		struct tb_diag err = {0};
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
	struct tb_diag err = {0};
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

	tb_schema_set_diag(s, collect, &problems);
	problems.n = 0;
	is_int(tb_schema_load_cmdlines(s, "saved_cmdlines", text, sizeof(text) - 1), -EINVAL,
	       "saved_cmdlines with a bad line: reported");
	expect_problem("saved_cmdlines", "saved_cmdlines", 10, "PID COMM");
	ok(!strcmp(tep_data_comm_from_pid(tb_schema_tep(s), 2177), "bash") &&
		   !strcmp(tep_data_comm_from_pid(tb_schema_tep(s), 2180), "seq"),
	   "saved_cmdlines: the good lines around it are used");
	tb_schema_free(s);
}

/* ------------------------------------------------ records, directly */

static void check_records(void)
{
	struct tb_schema *s = tb_schema_new();
	size_t len;
	char *fmt = tap_slurp("tests/data/kernel/formats/irq/irq_handler_entry.format", &len);
	struct tb_format f;
	struct tb_diag err = {0};
	uint8_t rec[24] = {0};
	uint32_t loc = (4u << 16) | 16u; /* 4 bytes at 16 */
	struct tb_event_ref ev = {.cpu = 0, .ts = 1000, .data = rec, .len = 4};
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
	tb_format_release(&f);
	free(fmt);
	tb_schema_free(s);
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
	struct tb_diag d = {.file = ""};
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
	check_records();
	check_stats_texts();
	check_stats_parser_edges();
	check_cli();
	free_lines(&kernel);
	return done_testing();
}
