// SPDX-License-Identifier: MIT
/*
 * test_hist - tb_hist over synthetic records whose every count is known:
 * the kernel's treatment of each field kind (sign extension of 1-, 2- and
 * 4-byte signed fields, signed sort, dynamic and relative strings cut one
 * byte short of their slot, a full char array), .log2 at its edges, .usecs
 * rounding, size= drops decided by first time stamp across CPUs, a table of
 * 100 000 keys, damaged records and misuse.  Expected values are worked out
 * here from the kernel's definitions, never taken from tb_hist itself.
 * And the threaded count of real captures (one table per thread, merged)
 * against the one-thread count that t_cli_hist.sh checks; under TSan too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common_fields.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/hist.h"
#include "tracebuf/page.h"
#include "tracebuf/schema.h"

#define EVENT_ID 900

static const char format_text[] =
	"name: tbh\n"
	"ID: 900\n"
	"format:\n"
	FORMAT_COMMON_FIELDS
	"\n"
	"\tfield:s8 a8;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield:s16 a16;\toffset:10;\tsize:2;\tsigned:1;\n"
	"\tfield:s32 a32;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:u64 u;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rname;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:char tag[8];\toffset:32;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"a8=%d\", REC->a8\n";

struct values {
	int8_t a8;
	int16_t a16;
	int32_t a32;
	uint64_t u;
	const char *name, *rname, *tag;
};

/* A record of the event: fixed part, then name's and rname's bytes (NUL included). */
static uint32_t make_record(uint8_t *rec, size_t cap, const struct values *v)
{
	uint16_t type = EVENT_ID;
	int32_t pid = 42;
	size_t nl = strlen(v->name ? v->name : "") + 1, rl = strlen(v->rname ? v->rname : "") + 1;
	uint32_t loc, end = 40;

	if (end + nl + rl > cap)
		return 0;
	memset(rec, 0, cap);
	memcpy(rec, &type, 2);
	memcpy(rec + 4, &pid, 4);
	memcpy(rec + 8, &v->a8, 1);
	memcpy(rec + 10, &v->a16, 2);
	memcpy(rec + 12, &v->a32, 4);
	memcpy(rec + 16, &v->u, 8);
	loc = end | (uint32_t)nl << 16; /* __data_loc: from the record start */
	memcpy(rec + 24, &loc, 4);
	memcpy(rec + end, v->name ? v->name : "", nl);
	end += (uint32_t)nl;
	loc = (end - 32) | (uint32_t)rl << 16; /* __rel_loc: from the end of its own u32 (28 + 4) */
	memcpy(rec + 28, &loc, 4);
	memcpy(rec + end, v->rname ? v->rname : "", rl);
	end += (uint32_t)rl;
	if (v->tag)
		memcpy(rec + 32, v->tag, strnlen(v->tag, 8));
	return (end + 3) & ~3u;
}

static struct tb_format fmt;
static struct tb_schema *schema;

static struct tb_hist *hist(const char *spec)
{
	struct tb_hist_error err = {0};
	struct tb_hist *h = NULL;
	int rc = tb_hist_new(spec, &fmt, "test", schema, &h, &err);

	if (rc < 0)
		diag("'%s' refused at %zu: %s", spec, err.pos, err.reason);
	return h;
}

static int add(struct tb_hist *h, const struct values *v, uint64_t ts, int cpu)
{
	uint8_t rec[1024];
	uint32_t len = make_record(rec, sizeof(rec), v);

	return tb_hist_add_record(h, rec, len, ts, cpu);
}

/* The printed hist (malloc'd). */
static char *print(struct tb_hist *h)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	tb_hist_print(h, f);
	fclose(f);
	return text;
}

/* The entry lines in order, joined by '\n' (those that start with '{'). */
static char *entries(struct tb_hist *h)
{
	char *text = print(h), *out = calloc(1, text ? strlen(text) + 1 : 1), *save = NULL;

	if (!text || !out) {
		free(text);
		return out;
	}
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (line[0] == '{')
			strcat(strcat(out, line), "\n");
	free(text);
	return out;
}

static void signed_fields(void)
{
	struct tb_hist *h = hist("keys=a8:sort=a8");
	char want[512], *got;

	ok(h != NULL, "keys=a8 on a signed char");
	if (!h)
		return;
	add(h, &(struct values){.a8 = -1}, 1, 0);
	add(h, &(struct values){.a8 = 5}, 2, 0);
	add(h, &(struct values){.a8 = -128}, 3, 0);
	add(h, &(struct values){.a8 = -1}, 4, 0);
	/* Sign-extended to u64 and printed as such; sorted as signed bytes. */
	snprintf(want, sizeof(want),
		 "{ a8: %10" PRIu64 " } hitcount: %10d\n{ a8: %10" PRIu64 " } hitcount: %10d\n"
		 "{ a8: %10d } hitcount: %10d\n",
		 UINT64_MAX - 127, 1, UINT64_MAX, 2, 5, 1);
	got = entries(h);
	is_str(got, want, "s8: -128, -1, 5 in signed order, printed as the kernel's u64");
	free(got);
	tb_hist_free(h);

	h = hist("keys=a16,a32:vals=a32:sort=a16.descending");
	ok(h != NULL, "keys=a16,a32");
	if (!h)
		return;
	add(h, &(struct values){.a16 = -2, .a32 = -70000}, 1, 0);
	add(h, &(struct values){.a16 = 300, .a32 = 7}, 2, 0);
	add(h, &(struct values){.a16 = -2, .a32 = -70000}, 3, 0);
	snprintf(want, sizeof(want),
		 "{ a16: %10d, a32: %10d } hitcount: %10d  a32: %10" PRIu64 "\n"
		 "{ a16: %10" PRIu64 ", a32: %10" PRIu64 " } hitcount: %10d  a32: %10" PRIu64 "\n",
		 300, 7, 1, (uint64_t)7, (uint64_t)-2, (uint64_t)-70000, 2, (uint64_t)-140000);
	got = entries(h);
	is_str(got, want, "s16/s32 keys sign-extended, a signed sum wraps as u64, sorted descending as signed");
	free(got);
	tb_hist_free(h);
}

/* Smallest l with 2^l >= v, counted by doubling; the kernel's 0 for 0, 1 and above 2^63. */
static unsigned want_log2(uint64_t v)
{
	unsigned l = 0;

	if (v > (1ull << 63))
		return 0;
	while (l < 63 && (1ull << l) < v)
		l++;
	return l;
}

static void log2_edges(void)
{
	static const uint64_t v[] = {0, 1, 2, 3, 4, 5, 1000, 1ull << 63, (1ull << 63) + 1, UINT64_MAX};
	struct tb_hist *h = hist("keys=u.log2:sort=u");
	char *got, line[80];

	ok(h != NULL, "keys=u.log2");
	if (!h)
		return;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		add(h, &(struct values){.u = v[i]}, i, 0);
	got = entries(h);
	for (unsigned l = 0; l <= 63; l++) {
		unsigned n = 0;
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			n += want_log2(v[i]) == l;
		if (!n)
			continue;
		snprintf(line, sizeof(line), "{ u: ~ 2^%-2u } hitcount: %10u\n", l, n);
		ok(got && strstr(got, line), "log2 bucket 2^%u holds %u of the values", l, n);
	}
	free(got);
	tb_hist_free(h);
}

static void strings(void)
{
	char longname[301], want[600], *got;
	struct tb_hist *h;

	memset(longname, 'x', 300);
	longname[300] = '\0';
	h = hist("keys=name,rname");
	ok(!h, "two dynamic strings (2 x 256 bytes) exceed the kernel's 384-byte key: refused");
	tb_hist_free(h);
	h = hist("keys=rname,tag:sort=tag");
	ok(h != NULL, "keys=rname,tag (relative, char[8])");
	if (h) {
		add(h, &(struct values){.rname = "rel", .tag = "abcdefgh"}, 1, 0);
		add(h, &(struct values){.rname = "", .tag = "ab"}, 2, 0);
		/* A full char[8] keeps 7 bytes (slot 8, NUL kept); sorted by strcmp. */
		snprintf(want, sizeof(want), "{ rname: %-50s, tag: %-50s } hitcount: %10d\n{ rname: %-50s, tag: %-50s } hitcount: %10d\n",
			 "", "ab", 1, "rel", "abcdefg", 1);
		got = entries(h);
		is_str(got, want, "a __rel_loc string and a full char array, cut as the kernel's add_to_key()");
		free(got);
		tb_hist_free(h);
	}
	h = hist("keys=name");
	ok(h != NULL, "keys=name (__data_loc)");
	if (!h)
		return;
	add(h, &(struct values){.name = longname}, 1, 0);
	add(h, &(struct values){.name = longname}, 2, 1);
	/* A dynamic string keeps 255 bytes: its slot is 256, the NUL kept. */
	snprintf(want, sizeof(want), "{ name: %.255s } hitcount: %10d\n", longname, 2);
	got = entries(h);
	is_str(got, want, "a 300-byte dynamic string keeps its first 255");
	free(got);

	{
		uint8_t rec[256];
		uint32_t len = make_record(rec, sizeof(rec), &(struct values){.name = "n"});
		uint32_t bad = 200 | 5u << 16;
		memcpy(rec + 24, &bad, 4);
		is_int(tb_hist_add_record(h, rec, len, 3, 0), -EINVAL, "a __data_loc pointing outside the record: -EINVAL");
		is_int(tb_hist_add_record(h, rec, 20, 3, 0), -EINVAL, "a record shorter than its fields: -EINVAL");
	}
	tb_hist_free(h);
}

static void usecs(void)
{
	struct tb_hist *h = hist("keys=common_timestamp.usecs:sort=common_timestamp");
	char *got, *text;

	ok(h != NULL, "keys=common_timestamp.usecs");
	if (!h)
		return;
	add(h, &(struct values){0}, 1499, 0);
	add(h, &(struct values){0}, 1500, 1);
	add(h, &(struct values){0}, 2499, 0);
	got = entries(h);
	/* ns2usecs(): (ns + 500) / 1000, so 1499 -> 1, 1500 and 2499 -> 2. */
	is_str(got, "{ common_timestamp:          1 } hitcount:          1\n"
		    "{ common_timestamp:          2 } hitcount:          2\n",
	       "microseconds rounded as the kernel's ns2usecs()");
	free(got);
	text = print(h);
	ok(text && strstr(text, ":size=2048:clock=global [active]"), "the trigger info names the clock");
	free(text);
	tb_hist_free(h);

	h = hist("keys=common_timestamp.usecs");
	if (!h)
		return;
	tb_hist_set_ns_clock(h, 0);
	add(h, &(struct values){0}, 1499, 0);
	got = entries(h);
	is_str(got, "{ common_timestamp:       1499 } hitcount:          1\n", "a clock not in ns is left as it counts");
	free(got);
	tb_hist_free(h);
}

static void drops(void)
{
	struct tb_hist *h = hist("keys=u:size=128");
	char *text;

	ok(h != NULL, "size=128");
	if (!h)
		return;
	/* CPU 0 first: keys 0..149 at 1000..1149; then CPU 1: keys 150..199 at 0..49, earlier. */
	for (uint64_t k = 0; k < 150; k++)
		add(h, &(struct values){.u = k}, 1000 + k, 0);
	for (uint64_t k = 150; k < 200; k++)
		add(h, &(struct values){.u = k}, k - 150, 1);
	add(h, &(struct values){.u = 3}, 5000, 0); /* a kept key hit again */
	add(h, &(struct values){.u = 100}, 5001, 0); /* a dropped key hit again */
	text = print(h);
	/* In time order the table fills with 150..199 (50) and 0..77 (78): 128 kept. */
	ok(text && strstr(text, "\nTotals:\n    Hits: 129\n    Entries: 128\n    Dropped: 73\n"),
	   "the 128 keys seen first by time are kept; the 73 events of the rest are Dropped");
	ok(text && strstr(text, "{ u:        199 }") && strstr(text, "{ u:         77 }") &&
		   !strstr(text, "{ u:         78 }") && strstr(text, "{ u:          3 } hitcount:          2"),
	   "keys 150..199 and 0..77 kept, 78 not; a kept key counts every hit");
	free(text);
	tb_hist_free(h);
}

static void many_keys(void)
{
	struct tb_hist *h = hist("keys=u:vals=a32:size=131072:sort=hitcount.descending");
	char *text;

	ok(h != NULL, "size=131072");
	if (!h)
		return;
	for (uint64_t k = 0; k < 100000; k++)
		add(h, &(struct values){.u = k * 2654435761u, .a32 = 1}, k, (int)(k & 1));
	for (int i = 0; i < 1000; i++)
		add(h, &(struct values){.u = (uint64_t)7 * 2654435761u, .a32 = 3}, 200000 + i, 0);
	text = print(h);
	ok(text && strstr(text, "\nTotals:\n    Hits: 101000\n    Entries: 100000\n    Dropped: 0\n"),
	   "100 000 distinct keys, every hit counted");
	{
		char first[128];
		snprintf(first, sizeof(first), "#\n\n{ u: %10" PRIu64 " } hitcount:       1001  a32:       3001\n",
			 (uint64_t)7 * 2654435761u);
		ok(text && strstr(text, first), "the key hit 1001 times sorts first, its values summed");
	}
	free(text);
	tb_hist_free(h);
}

static void misuse(void)
{
	struct tb_hist_error err;
	struct tb_hist *h = NULL;

	is_int(tb_hist_new(NULL, &fmt, "t", schema, &h, &err), -EINVAL, "a NULL spec: -EINVAL");
	is_int(tb_hist_new("keys=u", NULL, "t", schema, &h, &err), -EINVAL, "a NULL format: -EINVAL");
	is_int(tb_hist_add_record(NULL, "", 0, 0, 0), -EINVAL, "a NULL hist: -EINVAL");
	is_int(tb_hist_print(NULL, stdout), -EINVAL, "printing a NULL hist: -EINVAL");
	is_int(tb_hist_new("keys=u:sort=v", &fmt, "t", schema, &h, &err), -EINVAL, "sort on neither a key nor a value");
	is_int((long long)err.pos, 12, "... refused at its offset");
	tb_hist_free(NULL);
}

/* The event named name in s (its system in *sys), NULL if none. */
static const struct tb_format *event_named(struct tb_schema *s, const char *name, const char **sys)
{
	for (uint32_t id = 1; id <= 65535; id++) {
		const struct tb_format *f = tb_schema_event(s, id, sys);
		if (f && !strcmp(f->name, name))
			return f;
	}
	return NULL;
}

static void quiet_diag(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	(void)d;
}

/* The printed hist of spec over dir's event counted by TB_HIST_THREADS=threads (malloc'd; NULL on failure). */
static char *hist_of(const char *dir, const char *event, const char *spec, const char *threads,
		     struct tb_hist_totals *t)
{
	struct tb_capture_opts opts = {.diag = quiet_diag};
	struct tb_hist_error err;
	struct tb_capture *c;
	struct tb_hist *h = NULL;
	const struct tb_format *f;
	const char *sys = "";
	char *text = NULL;

	setenv("TB_HIST_THREADS", threads, 1);
	if (tb_capture_open(dir, &opts, &c) < 0)
		return NULL;
	if ((f = event_named(tb_capture_schema(c), event, &sys)) &&
	    tb_hist_new(spec, f, sys, tb_capture_schema(c), &h, &err) == 0 && tb_hist_add_capture(h, c, t) == 0)
		text = print(h);
	tb_hist_free(h);
	tb_capture_close(c);
	unsetenv("TB_HIST_THREADS");
	return text;
}

/* Several threads, each CPU's pages into a table of its own, merged: the very hist one thread makes. */
static void threads_agree(void)
{
	static const char *const cases[][3] = {
		{"tests/data/kernel/cap-d-abs-timestamp", "sys_enter", "keys=common_pid,id:vals=common_cpu:sort=common_pid,id"},
		{"tests/data/kernel/cap-a-small-noloss", "sched_switch", "keys=next_pid:vals=prev_pid:sort=next_pid:size=128"},
		{"tests/data/kernel/cap-b-overrun", "sched_stat_runtime", "keys=pid:vals=runtime:sort=pid"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_hist_totals one = {0}, four = {0};
		char *a = hist_of(cases[i][0], cases[i][1], cases[i][2], "1", &one);
		char *b = hist_of(cases[i][0], cases[i][1], cases[i][2], "4", &four);
		ok(a && b && one.matched > 0 && !strcmp(a, b), "%s %s: 4 threads print what 1 does (%llu records)",
		   cases[i][0] + 18, cases[i][1], (unsigned long long)one.matched);
		ok(one.records == four.records && one.matched == four.matched && one.lost_pages == four.lost_pages &&
			   one.bad_pages == four.bad_pages,
		   "... and count the same records, losses and damage");
		free(a);
		free(b);
	}
}

/* Over the capture's data records (any event): how many, how many at or before cut, the first and last stamp. */
struct record_span {
	uint64_t all, upto, lo, hi;
};

static struct record_span span_of(struct tb_capture *c, uint64_t cut)
{
	struct record_span s = {0, 0, UINT64_MAX, 0};

	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++) {
		struct tb_capture_page p;
		while (tb_capture_has_cpu(c, cpu) && tb_capture_next_page(c, cpu, &p) == 1) {
			struct tb_page_cursor cur;
			struct tb_record r;
			if (tb_page_cursor_init(&cur, p.data, p.size) < 0)
				continue;
			while (tb_page_next_data(&cur, &r) == 1) {
				s.all++;
				s.upto += r.ts <= cut;
				s.lo = r.ts < s.lo ? r.ts : s.lo;
				s.hi = r.ts > s.hi ? r.ts : s.hi;
			}
		}
	}
	tb_capture_rewind(c);
	return s;
}

/*
 * tb_hist_count_until with skip_seen, as `hist --session --live` uses it:
 * a pass counts the records up to the cut, each CPU's; the next pass,
 * over the same pages from their start with no cut, counts the rest, and
 * none twice: together, one pass's worth.
 */
static void count_until(void)
{
	const char *dir = "tests/data/kernel/cap-a-small-noloss";
	struct tb_capture_opts opts = {.diag = quiet_diag};
	struct tb_hist_totals first = {0}, second = {0}, whole = {0};
	struct tb_hist_error err;
	struct tb_capture *c;
	struct tb_hist *h = NULL, *once = NULL;
	const struct tb_format *f;
	const char *sys = "";
	uint64_t upto, all, cut;

	if (tb_capture_open(dir, &opts, &c) < 0 || !(f = event_named(tb_capture_schema(c), "sched_switch", &sys)) ||
	    tb_hist_new("keys=common_cpu", f, sys, tb_capture_schema(c), &h, &err) < 0 ||
	    tb_hist_new("keys=common_cpu", f, sys, tb_capture_schema(c), &once, &err) < 0) {
		ok(0, "%s opens, with a hist of sched_switch", dir);
		return;
	}
	/* the cut: the first time stamp with half of the records at or before it (bisection) */
	struct record_span sp = span_of(c, 0);
	uint64_t lo = sp.lo, hi = sp.hi;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (span_of(c, mid).upto * 2 >= sp.all)
			hi = mid;
		else
			lo = mid + 1;
	}
	cut = lo;
	sp = span_of(c, cut);
	upto = sp.upto;
	all = sp.all;
	tb_hist_skip_seen(h, 1);
	tb_hist_count_until(h, cut);
	tb_hist_add_capture(h, c, &first);
	tb_capture_rewind(c);
	tb_hist_count_until(h, 0);
	tb_hist_add_capture(h, c, &second);
	tb_capture_rewind(c);
	tb_hist_add_capture(once, c, &whole);
	ok(upto > 0 && upto < all && first.records == upto && second.records == all - upto,
	   "count_until: a pass counts the %" PRIu64 " records up to the cut, the next the other %" PRIu64
	   " (%" PRIu64 " and %" PRIu64 ")", upto, all - upto, first.records, second.records);
	char *two = entries(h), *one = entries(once);
	ok(two && one && *one && !strcmp(two, one) && first.matched + second.matched == whole.matched,
	   "count_until: the two passes make the hist one pass makes (%" PRIu64 " + %" PRIu64 " sched_switch)",
	   first.matched, second.matched);
	free(two);
	free(one);
	tb_hist_free(h);
	tb_hist_free(once);
	tb_capture_close(c);
}

int main(void)
{
	struct tb_problem derr;

	if (tb_format_parse(format_text, sizeof(format_text) - 1, &fmt, &derr) < 0) {
		diag("format: %s at %llu", derr.reason, (unsigned long long)derr.offset);
		return 1;
	}
	schema = tb_schema_new();
	signed_fields();
	log2_edges();
	strings();
	usecs();
	drops();
	many_keys();
	misuse();
	threads_agree();
	count_until();
	tb_schema_free(schema);
	tb_format_free(&fmt);
	return done_testing();
}
