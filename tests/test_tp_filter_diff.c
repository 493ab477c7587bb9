// SPDX-License-Identifier: MIT
/*
 * test_tp_filter_diff - the filter at the source (the emitters' compact
 * form, run inline, and the out-of-line program) keeps exactly the records
 * the reference evaluator keeps: the reading side's filter (`report -F`,
 * tb_filter_compile_format over the event's format text, the evaluator the
 * kernel oracle test checks), over many random expressions x many random
 * records.
 *
 * Each event with a filter has an unfiltered twin of the same layout; every
 * record is fired into both.  The twin's records, as read back from the
 * ring, are what the reference evaluates (its common_type set to the
 * filtered event's); the filtered event's records read back must be exactly
 * those, in order, and the ring's filtered counter must grow by exactly the
 * number it rejected, nothing lost.  Expressions: 1 to 8 predicates over
 * signed and unsigned fields of every width, bool, common_pid, CPU, COMM, a
 * char array and a dynamic string, with every operator, values at the
 * types' edges, && || ! and parentheses; both the fixed-size emitter and the
 * one with dynamic data.  An expression one side refuses the other must
 * refuse too.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "lib/ring_sums.h"
#include "lib/tap.h"
#include "lib/xorshift.h"
#include "tracebuf/events.h"
#include "tracebuf/filter.h"
#include "tracebuf/reader.h"
#include "tracebuf/schema.h"
#include "tracebuf/tracepoint.h"

struct args {
	uint32_t seq;
	int8_t s8;
	uint8_t u8;
	int16_t s16;
	uint16_t u16;
	int32_t s32;
	uint32_t u32;
	int64_t s64;
	uint64_t u64;
	bool flag;
	const char *name, *path;
};

#define FIXED_FIELDS                                                                                 \
	TB_FIELDS(tb_field(uint32_t, seq, a->seq), tb_field(int8_t, s8, a->s8), tb_field(uint8_t, u8, a->u8), \
		  tb_field(int16_t, s16, a->s16), tb_field(uint16_t, u16, a->u16),                    \
		  tb_field(int32_t, s32, a->s32), tb_field(uint32_t, u32, a->u32),                    \
		  tb_field(int64_t, s64, a->s64), tb_field(uint64_t, u64, a->u64),                    \
		  tb_field(bool, flag, a->flag), tb_chars(name, 12, a->name))
#define DYN_FIELDS                                                                                   \
	TB_FIELDS(tb_field(uint32_t, seq, a->seq), tb_field(int16_t, s16, a->s16), tb_string(path, a->path), \
		  tb_field(uint8_t, u8, a->u8), tb_field(int64_t, s64, a->s64), tb_field(uint32_t, u32, a->u32))
#define FIXED_PRINTK TB_PRINTK("seq=%u s8=%d", REC->seq, REC->s8)
#define DYN_PRINTK TB_PRINTK("seq=%u path=%s", REC->seq, __get_str(path))

TB_EVENT(tpfd, fixed, TB_PROTO(const struct args *a), FIXED_FIELDS, FIXED_PRINTK)
TB_EVENT(tpfd, fixed_twin, TB_PROTO(const struct args *a), FIXED_FIELDS, FIXED_PRINTK)
TB_EVENT(tpfd, dyn, TB_PROTO(const struct args *a), DYN_FIELDS, DYN_PRINTK)
TB_EVENT(tpfd, dyn_twin, TB_PROTO(const struct args *a), DYN_FIELDS, DYN_PRINTK)

#define EXPRESSIONS 600
#define RECORDS 200
#define COMM_NAME "tpfd-main"

/* ------------------------------------------------------------ random */

static unsigned pick(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* A value for a field of `bits` bits: often small, often at an edge, sometimes anything. */
static int64_t value_of(unsigned bits, bool is_signed)
{
	uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;

	switch (pick(6)) {
	case 0:
		return (int64_t)pick(5) - 2;
	case 1:
		return is_signed ? -(int64_t)(max >> 1) - 1 : 0; /* the least */
	case 2:
		return is_signed ? (int64_t)(max >> 1) : (int64_t)max; /* the greatest */
	case 3:
		return (int64_t)(rnd() & max);
	default:
		return (int64_t)pick(41) - 20;
	}
}

static const char *const names[] = {"alice", "bob", "carol", "al", "bobby", "", "x*y", "ali[c]e"};
static const char *const paths[] = {"/api/v1", "/index", "/api", "/static/x.css", "", "/a/b/c/d/e/f/g/h"};

static void random_args(struct args *a, uint32_t seq)
{
	a->seq = seq;
	a->s8 = (int8_t)value_of(8, true);
	a->u8 = (uint8_t)value_of(8, false);
	a->s16 = (int16_t)value_of(16, true);
	a->u16 = (uint16_t)value_of(16, false);
	a->s32 = (int32_t)value_of(32, true);
	a->u32 = (uint32_t)value_of(32, false);
	a->s64 = value_of(64, true);
	a->u64 = (uint64_t)value_of(64, false);
	a->flag = pick(2);
	a->name = names[pick(sizeof(names) / sizeof(names[0]))];
	a->path = paths[pick(sizeof(paths) / sizeof(paths[0]))];
}

/* ------------------------------------------------------- expressions */

struct int_field {
	const char *name;
	unsigned bits;
	bool is_signed;
};

static const struct int_field fixed_ints[] = {
    {"seq", 32, false}, {"s8", 8, true},   {"u8", 8, false},   {"s16", 16, true},
    {"u16", 16, false}, {"s32", 32, true}, {"u32", 32, false}, {"s64", 64, true},
    {"u64", 64, false}, {"flag", 8, false}, {"common_pid", 32, true},
};
static const struct int_field dyn_ints[] = {
    {"seq", 32, false}, {"s16", 16, true}, {"u8", 8, false}, {"s64", 64, true}, {"u32", 32, false},
};

struct gen {
	char buf[1024];
	size_t len;
	bool dyn;
	int preds;
	bool only_ints; /* no string, CPU or COMM predicate */
};

static void put(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct gen *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(g->buf + g->len, sizeof(g->buf) - g->len, fmt, ap);
	va_end(ap);
	if (n > 0 && g->len + (size_t)n < sizeof(g->buf))
		g->len += (size_t)n;
}

static void int_pred(struct gen *g)
{
	static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">=", "&"};
	const struct int_field *fs = g->dyn ? dyn_ints : fixed_ints;
	size_t nf = g->dyn ? sizeof(dyn_ints) / sizeof(dyn_ints[0]) : sizeof(fixed_ints) / sizeof(fixed_ints[0]);
	const struct int_field *f = &fs[pick((unsigned)nf)];
	int64_t v = value_of(f->bits, f->is_signed);

	if (f->is_signed || v >= 0)
		put(g, pick(4) ? "%s %s %lld" : "%s %s 0x%llx", f->name, ops[pick(7)], (long long)v);
	else
		put(g, "%s %s %llu", f->name, ops[pick(7)], (unsigned long long)v);
}

static void string_pred(struct gen *g)
{
	static const char *const globs[] = {"al*", "*ob", "*aro*", "a?ice", "[ab]*", "!*o*", "bob", ""};
	static const char *const pglobs[] = {"/api/*", "*.css", "*a*", "/index", "/[a-s]*", "!/api*"};
	bool eq = pick(2);

	switch (pick(4)) {
	case 0:
		put(g, "CPU %s %u", pick(2) ? "==" : "<", pick(3));
		return;
	case 1:
		put(g, "COMM %s \"%s\"", eq ? "==" : "~", eq ? COMM_NAME : "tpfd*");
		return;
	default:
		if (g->dyn)
			put(g, "path %s \"%s\"", eq ? (pick(2) ? "==" : "!=") : "~",
			    eq ? paths[pick(sizeof(paths) / sizeof(paths[0]))] : pglobs[pick(6)]);
		else
			put(g, "name %s \"%s\"", eq ? (pick(2) ? "==" : "!=") : "~",
			    eq ? names[pick(sizeof(names) / sizeof(names[0]))] : globs[pick(8)]);
	}
}

static void expr(struct gen *g, int depth);

static void factor(struct gen *g, int depth)
{
	unsigned k = pick(10);

	if (depth < 3 && k == 0) {
		put(g, "(");
		expr(g, depth + 1);
		put(g, ")");
	} else if (depth < 3 && k == 1) {
		put(g, "!(");
		expr(g, depth + 1);
		put(g, ")");
	} else if (!g->only_ints && k == 2) {
		string_pred(g);
		g->preds++;
	} else {
		int_pred(g);
		g->preds++;
	}
}

static void expr(struct gen *g, int depth)
{
	factor(g, depth);
	while (g->preds < 8 && pick(3) != 0) {
		put(g, pick(2) ? " && " : " || ");
		factor(g, depth);
	}
}

/* ------------------------------------------------------------- check */

struct pair {
	const char *event;  /* the filtered one */
	struct tb_event_desc *desc, *twin;
	struct tb_format fmt; /* the filtered event's, parsed from its format text */
};

static int find_format(void *ctx, const struct tb_events_info *ev)
{
	struct pair *p = ctx;
	struct tb_problem d;

	if (strcmp(ev->system, "tpfd") || strcmp(ev->name, p->desc->name))
		return 0;
	return tb_format_parse(ev->format, ev->format_len, &p->fmt, &d) == 0 ? 1 : -1;
}

struct tally {
	unsigned exprs, compiled, compact_kind, refused_both, disagree_compile;
	unsigned long records, kept, bad_decisions, bad_counts;
};

static void fire(struct pair *p, const struct args *a)
{
	if (p->desc == &tb_event_tpfd_fixed) {
		tb_trace(tpfd, fixed, a);
		tb_trace(tpfd, fixed_twin, a);
	} else {
		tb_trace(tpfd, dyn, a);
		tb_trace(tpfd, dyn_twin, a);
	}
}

static uint32_t seq_of(const struct tb_read_event *ev)
{
	uint32_t seq;

	memcpy(&seq, (const uint8_t *)ev->data + 8, 4); /* the first field of both layouts */
	return seq;
}

/* One expression over RECORDS records: decisions and counts against the reference. */
static void check_one(struct tb_ring *ring, struct pair *p, const struct gen *g, struct tally *t, uint32_t *seq)
{
	static uint8_t copy[512];
	struct tb_filter_error e1 = {0}, e2 = {0};
	struct tb_filter *ref = NULL;
	struct tb_filter_env env = {-1, COMM_NAME};
	int rc_src = tb_events_set_filter(p->event, g->buf, &e1);
	int rc_ref = tb_filter_compile_format(g->buf, &p->fmt, 0, &ref, &e2);
	uint32_t want[RECORDS], got[RECORDS];
	size_t nwant = 0, ngot = 0;
	struct ring_sums before = ring_sums(ring), after;
	struct tb_read_event ev;
	bool match;

	t->exprs++;
	if ((rc_src == 0) != (rc_ref == 0)) {
		if (t->disagree_compile++ < 5)
			diag("compiles on one side only (%d, %d): %s", rc_src, rc_ref, g->buf);
		tb_filter_free(ref);
		return;
	}
	if (rc_src != 0) {
		t->refused_both++;
		return;
	}
	t->compiled++;
	t->compact_kind += g->only_ints && g->preds <= TB_EVENT_FILTER_FAST_MAX;
	for (int i = 0; i < RECORDS; i++) {
		struct args a;
		random_args(&a, (*seq)++);
		fire(p, &a);
	}
	while (tb_consume_merged(ring, &ev) == 1) {
		uint16_t type;
		if (ev.kind != TB_READ_RECORD || ev.len < 12 || ev.len > sizeof(copy))
			continue;
		memcpy(&type, ev.data, 2);
		if (type == p->desc->id && ngot < RECORDS) {
			got[ngot++] = seq_of(&ev);
		} else if (type == p->twin->id) {
			memcpy(copy, ev.data, ev.len);
			memcpy(copy, &p->desc->id, 2); /* as the filtered event's record */
			env.cpu = (int)ev.cpu;
			if (tb_filter_match(ref, copy, ev.len, &env) && nwant < RECORDS)
				want[nwant++] = seq_of(&ev);
		}
	}
	after = ring_sums(ring);
	match = ngot == nwant && !memcmp(got, want, ngot * sizeof(got[0]));
	t->records += RECORDS;
	t->kept += ngot;
	if (!match && t->bad_decisions++ < 5)
		diag("%s: kept %zu, the reference %zu: %s", p->event, ngot, nwant, g->buf);
	if ((after.filtered - before.filtered != RECORDS - nwant || after.lost || after.refused) && t->bad_counts++ < 5)
		diag("%s: filtered +%llu, the reference rejected %zu, lost %llu, refused %llu: %s", p->event,
		     (unsigned long long)(after.filtered - before.filtered), RECORDS - nwant,
		     (unsigned long long)after.lost, (unsigned long long)after.refused, g->buf);
	tb_filter_free(ref);
}

int main(void)
{
	struct tb_ring *ring;
	struct tb_ring_opts o = {.size_kb = 1024};
	struct pair pairs[2] = {{.event = "tpfd:fixed", .desc = &tb_event_tpfd_fixed, .twin = &tb_event_tpfd_fixed_twin},
				{.event = "tpfd:dyn", .desc = &tb_event_tpfd_dyn, .twin = &tb_event_tpfd_dyn_twin}};
	struct tally t = {0};
	uint32_t seq = 0;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		skip_all("cannot pin to CPU 0 (a record's CPU must be its twin's)");
	prctl(PR_SET_NAME, COMM_NAME, 0, 0, 0);
	if (tb_ring_new(&ring, &o) < 0)
		skip_all("no ring");
	tb_events_attach(ring);
	ok(tb_events_enable("tpfd:*", NULL, 0) == 4, "the test's four events are enabled");
	for (int k = 0; k < 2; k++)
		ok(tb_events_foreach(find_format, &pairs[k]) == 1, "%s: its format text parses", pairs[k].event);
	for (int i = 0; i < EXPRESSIONS; i++) {
		struct gen g = {.dyn = i % 2 != 0, .only_ints = i % 3 != 0};
		expr(&g, 0);
		check_one(ring, &pairs[i % 2], &g, &t, &seq);
	}
	diag("%u expressions (%u refused by both, %u of the compact kind), %lu records, %lu kept", t.exprs,
	     t.refused_both, t.compact_kind, t.records, t.kept);
	is_int(t.disagree_compile, 0, "every expression compiles at the source exactly when the reference compiles it");
	ok(t.compiled >= EXPRESSIONS * 8 / 10 && t.compact_kind >= EXPRESSIONS / 3,
	   "most expressions compile (%u), a good share of them integer-only (%u)", t.compiled, t.compact_kind);
	ok(t.kept > t.records / 10 && t.kept < t.records * 9 / 10, "the filters keep some and drop some (%lu of %lu)",
	   t.kept, t.records);
	is_int(t.bad_decisions, 0, "the source keeps exactly the records the reference keeps, in order");
	is_int(t.bad_counts, 0, "its filtered counter grows by exactly what it rejects, nothing lost");
	tb_events_set_filter("tpfd:fixed", NULL, NULL);
	tb_events_set_filter("tpfd:dyn", NULL, NULL);
	tb_events_attach(NULL);
	tb_ring_free(ring);
	for (int k = 0; k < 2; k++)
		tb_format_free(&pairs[k].fmt);
	return done_testing();
}
