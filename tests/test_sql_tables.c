// SPDX-License-Identifier: MIT
/*
 * test_sql_tables - the engine-neutral table description (src/export/
 * sql_tables.h) on its own: every field kind's column type and value,
 * read from a record built byte by byte (integers of each size and sign at
 * their extremes, char arrays, __data_loc and __rel_loc strings, a dynamic
 * array, a fixed array, a record too short for its last fields), the name
 * rules on the real sched_waking format of a kernel capture (fields named
 * like common columns; the same event name in two systems; an event named
 * like a fixed table, in another case), and the state letters.
 * t_sql.sh checks the same against real captures through SQLite.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/sql_tables.h"
#include "lib/tap.h"

#define WAKING "tests/data/kernel/cap-f-many-systems/formats/sched/sched_waking.format"

static const char kinds_format[] =
    "name: kinds\nID: 900\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:s8 a;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield:u8 b;\toffset:9;\tsize:1;\tsigned:0;\n"
    "\tfield:s16 c;\toffset:10;\tsize:2;\tsigned:1;\n"
    "\tfield:u16 d;\toffset:12;\tsize:2;\tsigned:0;\n"
    "\tfield:s32 e;\toffset:16;\tsize:4;\tsigned:1;\n"
    "\tfield:u32 f;\toffset:20;\tsize:4;\tsigned:0;\n"
    "\tfield:s64 g;\toffset:24;\tsize:8;\tsigned:1;\n"
    "\tfield:u64 h;\toffset:32;\tsize:8;\tsigned:0;\n"
    "\tfield:char name[8];\toffset:40;\tsize:8;\tsigned:0;\n"
    "\tfield:__data_loc char[] msg;\toffset:48;\tsize:4;\tsigned:0;\n"
    "\tfield:__rel_loc char[] rel;\toffset:52;\tsize:4;\tsigned:0;\n"
    "\tfield:__data_loc u8[] bytes;\toffset:56;\tsize:4;\tsigned:0;\n"
    "\tfield:u16 pair[2];\toffset:60;\tsize:4;\tsigned:0;\n\n"
    "print fmt: \"a=%d\", REC->a\n";

static void put(uint8_t *rec, size_t off, const void *v, size_t n)
{
	memcpy(rec + off, v, n);
}

/* The kinds record: extremes of each integer, strings, a dynamic array after the fixed part. */
static uint32_t kinds_record(uint8_t *rec)
{
	int8_t a = -128;
	uint8_t b = 255;
	int16_t c = -32768;
	uint16_t d = 65535, type = 900, pair[2] = {7, 65535};
	int32_t e = -2147483647 - 1, pid = 4242;
	uint32_t f = 4294967295u;
	int64_t g = -9223372036854775807 - 1;
	uint64_t h = 0xfffffffffffffff0ull;
	uint32_t msg = (6u << 16) | 64, rel = (3u << 16) | (70 - 56), bytes = (3u << 16) | 73;

	memset(rec, 0, 80);
	put(rec, 0, &type, 2);
	put(rec, 4, &pid, 4);
	put(rec, 8, &a, 1);
	put(rec, 9, &b, 1);
	put(rec, 10, &c, 2);
	put(rec, 12, &d, 2);
	put(rec, 16, &e, 4);
	put(rec, 20, &f, 4);
	put(rec, 24, &g, 8);
	put(rec, 32, &h, 8);
	put(rec, 40, "abc", 3); /* NUL-padded to 8 */
	put(rec, 48, &msg, 4);
	put(rec, 52, &rel, 4); /* counted from the field's end, byte 56 */
	put(rec, 56, &bytes, 4);
	put(rec, 60, pair, 4);
	put(rec, 64, "hello", 6);
	put(rec, 70, "xy", 3);
	put(rec, 73, "\x01\x02\x03", 3);
	return 76;
}

static int no_rows(void *ctx, struct sql_table *t, const struct sql_value *v)
{
	(void)ctx, (void)t, (void)v;
	return 0;
}

static const struct sql_column *column(const struct sql_table *t, const char *name, size_t *at)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name)) {
			*at = i;
			return &t->cols[i];
		}
	return NULL;
}

static void check_int(const struct sql_table *t, const struct sql_value *v, const char *name, int64_t want)
{
	size_t i = 0;
	const struct sql_column *col = column(t, name, &i);

	ok(col && col->type == SQL_INT && v[i].type == SQL_INT && !v[i].null && v[i].i == want,
	   "%s: INTEGER %lld (got %lld)", name, (long long)want, col ? (long long)v[i].i : 0LL);
}

static void check_bytes(const struct sql_table *t, const struct sql_value *v, const char *name, enum sql_type type,
			const void *want, uint32_t len)
{
	size_t i = 0;
	const struct sql_column *col = column(t, name, &i);

	ok(col && col->type == type && !v[i].null && v[i].len == len && !memcmp(v[i].p, want, len), "%s: %s of %u bytes",
	   name, type == SQL_TEXT ? "TEXT" : "BLOB", len);
}

static void test_kinds(void)
{
	struct sql_catalog cat;
	struct tb_format f = {0};
	struct tb_problem err = {0};
	uint8_t rec[80];
	bool made;

	ok(tb_format_parse(kinds_format, strlen(kinds_format), &f, &err) == 0, "the kinds format parses (%s)", err.reason);
	ok(sql_catalog_init(&cat, false, no_rows, NULL) == 0, "a catalog");
	cat.host = "h1";
	cat.host_len = 2;
	cat.trace_id = 3;
	struct sql_table *t = sql_event_table(&cat, &f, "app", &made);
	ok(t && made && !strcmp(t->name, "kinds"), "the table is named after its event");
	ok(t && t->ncols == 7 + 2 + 13, "common columns, common_flags and _preempt_count, 13 fields (%zu)", t ? t->ncols : 0);
	if (!t)
		return;
	static const char *const common[] = {"ts", "cpu", "pid", "tid", "comm", "host", "trace_id"};
	bool first = true;
	for (size_t i = 0; i < 7; i++)
		first &= !strcmp(t->cols[i].name, common[i]);
	ok(first, "the common columns come first, in their order");

	uint32_t len = kinds_record(rec);
	struct merged_record r = {.cpu = 1, .ts = 123456789, .data = rec, .len = len, .id = 900};
	struct sql_value v[t->ncols];
	sql_event_row(&cat, t, &r, "proc", 4, v);
	check_int(t, v, "ts", 123456789);
	check_int(t, v, "cpu", 1);
	check_int(t, v, "pid", 4242);
	check_int(t, v, "tid", 4242);
	check_bytes(t, v, "comm", SQL_TEXT, "proc", 4);
	check_bytes(t, v, "host", SQL_TEXT, "h1", 2);
	check_int(t, v, "trace_id", 3);
	check_int(t, v, "a", -128);
	check_int(t, v, "b", 255);
	check_int(t, v, "c", -32768);
	check_int(t, v, "d", 65535);
	check_int(t, v, "e", -2147483647 - 1);
	check_int(t, v, "f", 4294967295);
	check_int(t, v, "g", -9223372036854775807 - 1);
	check_int(t, v, "h", (int64_t)0xfffffffffffffff0ull); /* the bit pattern, as docs/sql.md says */
	check_bytes(t, v, "name", SQL_TEXT, "abc", 3);
	check_bytes(t, v, "msg", SQL_TEXT, "hello", 5);
	check_bytes(t, v, "rel", SQL_TEXT, "xy", 2);
	check_bytes(t, v, "bytes", SQL_BLOB, "\x01\x02\x03", 3);
	check_bytes(t, v, "pair", SQL_BLOB, rec + 60, 4);

	/* a record cut at byte 50: fields past it NULL, msg's word cut, a and name still there */
	r.len = 50;
	sql_event_row(&cat, t, &r, "proc", 4, v);
	size_t im = 0, ib = 0, ia = 0;
	column(t, "msg", &im), column(t, "bytes", &ib), column(t, "a", &ia);
	ok(v[im].null && v[ib].null && !v[ia].null && v[ia].i == -128, "a short record: the fields it lacks are NULL");
	/* a __data_loc pointing past the record's end is NULL, never read */
	r.len = len;
	uint32_t outside = (40u << 16) | 64;
	put(rec, 48, &outside, 4);
	sql_event_row(&cat, t, &r, "proc", 4, v);
	ok(v[im].null, "a __data_loc past the record's end is NULL");
	sql_catalog_free(&cat);
	tb_format_free(&f);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *text = fp ? malloc(65536) : NULL;

	*len = text ? fread(text, 1, 65535, fp) : 0;
	if (fp)
		fclose(fp);
	return text;
}

/* The format text with its name line and ID replaced. */
static char *renamed(const char *text, const char *name, unsigned id)
{
	const char *fmt = strstr(text, "format:");
	char *out = malloc(strlen(text) + 64);

	if (out && fmt)
		sprintf(out, "name: %s\nID: %u\n%s", name, id, fmt);
	return out;
}

static void test_names(void)
{
	struct sql_catalog cat;
	struct tb_format waking = {0}, app_waking = {0}, events = {0}, thread = {0};
	struct tb_problem err = {0};
	size_t len;
	char *text = slurp(WAKING, &len);
	bool made;

	if (!text) {
		skip(7, "no " WAKING);
		return;
	}
	text[len] = '\0';
	char *t2 = renamed(text, "sched_waking", 901), *t3 = renamed(text, "events", 902), *t4 = renamed(text, "Thread", 903);
	ok(tb_format_parse(text, len, &waking, &err) == 0 && tb_format_parse(t2, strlen(t2), &app_waking, &err) == 0 &&
	       tb_format_parse(t3, strlen(t3), &events, &err) == 0 && tb_format_parse(t4, strlen(t4), &thread, &err) == 0,
	   "the real sched_waking format and three renamed copies parse");
	ok(sql_catalog_init(&cat, true, no_rows, NULL) == 0, "a catalog (with the text column)");
	struct sql_table *a = sql_event_table(&cat, &waking, "sched", &made);
	size_t at;
	ok(a && !strcmp(a->name, "sched_waking") && column(a, "field_pid", &at) && column(a, "field_comm", &at) &&
	       column(a, "prio", &at) && column(a, "pid", &at) && a->cols[2].src == SRC_PID,
	   "sched_waking: its pid and comm fields are field_pid and field_comm, pid is the writer's");
	struct sql_table *b = sql_event_table(&cat, &app_waking, "app", &made);
	ok(b && !strcmp(b->name, "app_sched_waking"), "the same event name in another system: SYSTEM_EVENT (%s)",
	   b ? b->name : "-");
	struct sql_table *c = sql_event_table(&cat, &events, "app", &made);
	ok(c && !strcmp(c->name, "app_events"), "an event named like a fixed table: SYSTEM_EVENT (%s)", c ? c->name : "-");
	struct sql_table *d = sql_event_table(&cat, &thread, "app", &made);
	ok(d && !strcmp(d->name, "app_Thread"), "case aside, Thread is thread: app_Thread (%s)", d ? d->name : "-");
	ok(sql_event_table(&cat, &waking, "sched", &made) == a && !made, "an event's table is made once");
	ok(!strcmp(cat.fixed[SQL_EVENTS].cols[cat.fixed[SQL_EVENTS].ncols - 1].name, "text"), "with the text: events.text");
	sql_catalog_free(&cat);
	tb_format_free(&waking), tb_format_free(&app_waking), tb_format_free(&events), tb_format_free(&thread);
	free(text), free(t2), free(t3), free(t4);
}

static void test_letters(void)
{
	static const struct {
		int64_t state;
		const char *want;
	} cases[] = {{0, "R"}, {1, "S"}, {2, "D"}, {0x80, "I"}, {0x20, "Z"}, {3, "S|D"}, {0x100, "R+"}, {0x102, "D+"}};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_str(sql_state_letters(cases[i].state, buf), cases[i].want, "prev_state %#llx",
		       (unsigned long long)cases[i].state);
}

int main(void)
{
	test_kinds();
	test_names();
	test_letters();
	return done_testing();
}
