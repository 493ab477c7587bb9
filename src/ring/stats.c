// SPDX-License-Identifier: MIT
/*
 * stats.c - counters in the kernel's meanings, and the numbers the kernel
 * leaves to the reader: events written, the share lost, and how much time
 * the buffer still covers.
 */
#include "tracebuf/stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ring_internal.h"

static uint64_t load(_Atomic uint64_t *v)
{
	/* relaxed: a statistics snapshot; exact when writers are quiet */
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* Unconsumed bytes and the stamp of the oldest page still held. */
static void scan_held(struct tb_region *r, struct tb_cpu_ctl *c, const struct tail_view *v,
		      struct tb_cpu_stats *st)
{
	struct tb_reader_state *rd = &c->rd;
	_Atomic uint64_t *slots = cpu_slots(r, c);
	uint64_t seq = rd->next_seq, oldest = oldest_seq(r, v->seq);
	int found = 0;

	if (rd->held) {
		uint32_t limit = page_end(r, c, v, rd->held_seq, rd->held_phys);
		if (rd->read_off < limit) {
			st->bytes += limit - rd->read_off;
			st->oldest_ts = page_ts(cpu_page(r, c, rd->held_phys));
			found = 1;
		}
	}
	if (seq < oldest)
		seq = oldest;
	for (; seq <= v->seq; seq++) {
		/* acquire: pairs with the claim CAS, so meta belongs to this lap */
		uint64_t s = atomic_load_explicit(&slots[seq % r->nr_pages], memory_order_acquire);
		if (s_seq(s) != seq || s_free(s))
			continue;
		st->bytes += page_end(r, c, v, seq, s_phys(s));
		if (!found && (seq < v->seq || t_off(v->t))) {
			st->oldest_ts = page_ts(cpu_page(r, c, s_phys(s)));
			found = 1;
		}
	}
	st->has_events = found;
}

/*
 * Events overwritten with their page, as of the tail v: the count the
 * section that entered the tail page stored (I3), and a claim of the page
 * after the tail that no section entered yet (its writer is about to, or
 * died in between).
 */
static uint64_t overwritten(struct tb_region *r, struct tb_cpu_ctl *c, const struct tail_view *v)
{
	struct tb_page_meta *meta = cpu_meta(r, c);
	uint64_t next = v->seq + 1, n = meta_overrun(&meta[v->phys]), s;

	/* acquire: pairs with the claim CAS, so meta is the lapped page's */
	s = atomic_load_explicit(&cpu_slots(r, c)[next % r->nr_pages], memory_order_acquire);
	if (s_seq(s) == next && s_lapped(s) && s_phys(s) <= r->nr_pages)
		n += meta_entries(&meta[s_phys(s)]);
	return n;
}

/*
 * Events written and overwritten, both of one tail (seqlock: the tail word
 * again after the counts; live writers may keep it moving, so after a
 * bounded number of tries the last reading stands: exact once they are quiet).
 */
static void written_overwritten(struct tb_region *r, struct tb_cpu_ctl *c, struct tb_cpu_stats *st,
				struct tail_view *v)
{
	for (int tries = 0; tries < 64; tries++) {
		st->written = tail_events(r, c, v);
		st->overrun = overwritten(r, c, v);
		/* acquire: like every tail load, pairs with the section's final store */
		if (atomic_load_explicit(&c->tail, memory_order_acquire) == v->t)
			return;
	}
}

int tb_stats_read(struct tb_ring *ring, unsigned cpu, struct tb_cpu_stats *st)
{
	struct tb_region *r;
	struct tb_cpu_ctl *c;
	struct tail_view v;
	uint64_t t;

	if (!ring || !st || cpu >= ring->r->ncpus)
		return -EINVAL;
	r = ring->r;
	c = region_cpu(r, cpu);
	memset(st, 0, sizeof(*st));
	reader_lock(c);
	written_overwritten(r, c, st, &v);
	t = v.t;
	st->commit_overrun = load(&c->cnt.commit_overrun);
	st->dropped = load(&c->cnt.dropped);
	st->read = load(&c->cnt.read);
	st->too_big = load(&c->cnt.too_big);
	st->nested = load(&c->cnt.nested);
	st->busy = load(&c->cnt.busy);
	st->blob_full = load(&c->cnt.blob_full);
	st->blob_written = load(&c->cnt.blob_written);
	st->blob_read = load(&c->cnt.blob_read);
	st->blob_lost = load(&c->cnt.blob_lost);
	st->filtered = load(&c->cnt.filtered);
	/* relaxed: after the tail word's acquire in tail_resolve; the phase names the entry */
	st->newest_ts = atomic_load_explicit(&c->last_ts[t_phase(t)], memory_order_relaxed);
	scan_held(r, c, &v, st);
	reader_unlock(c);
	st->entries = st->written >= st->overrun + st->read ? st->written - st->overrun - st->read : 0;
	st->now_ts = tb_ring_clock_now(ring);
	tb_stats_derive(st);
	return 0;
}

void tb_stats_derive(struct tb_cpu_stats *st)
{
	if (!st)
		return;
	st->written = st->entries + st->overrun + st->read;
	st->refused = st->dropped + st->commit_overrun + st->too_big + st->nested + st->busy + st->blob_full;
	st->lost = st->overrun + st->refused;
	st->attempted = st->written + st->refused;
}

static void print_ts(FILE *out, const char *label, uint64_t ns, int ns_clock)
{
	if (ns_clock) {
		uint64_t us = (ns + 500) / 1000;
		fprintf(out, "%s: %5llu.%06llu\n", label, (unsigned long long)(us / 1000000),
			(unsigned long long)(us % 1000000));
	} else
		fprintf(out, "%s: %llu\n", label, (unsigned long long)ns);
}

void tb_stats_print(FILE *out, const struct tb_ring *ring, const struct tb_cpu_stats *st, int ns_clock)
{
	uint64_t oldest, now, newest;

	if (!out || !st)
		return;
	oldest = st->oldest_ts, now = st->now_ts, newest = st->newest_ts;

	if (ring) {
		oldest = tb_ring_to_ns(ring, oldest);
		now = tb_ring_to_ns(ring, now);
		newest = tb_ring_to_ns(ring, newest);
	}
	fprintf(out, "entries: %llu\n", (unsigned long long)st->entries);
	fprintf(out, "overrun: %llu\n", (unsigned long long)st->overrun);
	fprintf(out, "commit overrun: %llu\n", (unsigned long long)st->commit_overrun);
	fprintf(out, "bytes: %llu\n", (unsigned long long)st->bytes);
	print_ts(out, "oldest event ts", st->has_events || !ring ? oldest : 0, ns_clock);
	print_ts(out, "now ts", now, ns_clock);
	fprintf(out, "dropped events: %llu\n", (unsigned long long)st->dropped);
	fprintf(out, "read events: %llu\n", (unsigned long long)st->read);
	fprintf(out, "# derived by tracebuf\n");
	fprintf(out, "written: %llu (entries + overrun + read)\n", (unsigned long long)st->written);
	fprintf(out, "lost: %llu (%.2f%% of %llu attempted)\n", (unsigned long long)st->lost,
		st->attempted ? 100.0 * (double)st->lost / (double)st->attempted : 0.0,
		(unsigned long long)st->attempted);
	if (ring)
		fprintf(out, "refused: too big %llu, nested %llu, busy %llu\n",
			(unsigned long long)st->too_big, (unsigned long long)st->nested,
			(unsigned long long)st->busy);
	if (ring)
		fprintf(out, "filtered: %llu (left out by filters at the source; not lost)\n",
			(unsigned long long)st->filtered);
	if (ring && tb_ring_blob_size(ring))
		fprintf(out, "blobs: written %llu, read %llu, overwritten %llu, refused (area full) %llu\n",
			(unsigned long long)st->blob_written, (unsigned long long)st->blob_read,
			(unsigned long long)st->blob_lost, (unsigned long long)st->blob_full);
	if (ring && st->has_events && newest >= oldest)
		fprintf(out, "window: %.6f s held (oldest sub-buffer start to newest event)\n",
			(double)(newest - oldest) / (ns_clock ? 1e9 : 1.0));
	else if (!ring && oldest && now >= oldest)
		fprintf(out, "window: %.6f s at most (oldest sub-buffer start to now)\n",
			(double)(now - oldest) / (ns_clock ? 1e9 : 1.0));
	else
		fprintf(out, "window: empty\n");
}

/* The text after "KEY:" on the line that starts with it, or NULL. */
static const char *line_value(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ':')
			return p + n + 1;
	return NULL;
}

/* Decimal digits at *p into *v (no sign, no blanks), at most max of them (0: any); the count read. */
static int digits(const char **p, int max, uint64_t *v, bool *overflow)
{
	int n = 0;

	*v = 0;
	while (**p >= '0' && **p <= '9' && (max == 0 || n < max)) {
		unsigned d = (unsigned)(**p - '0');
		if (*v > (UINT64_MAX - d) / 10)
			*overflow = true;
		*v = *v * 10 + d;
		(*p)++;
		n++;
	}
	return n;
}

/*
 * A count, or a time: "sec.usec" (exactly 6 digits) on a clock in ns, to
 * ns; a plain count on the other clocks.  Only blanks may follow it on its
 * line.
 */
static bool parse_value(const char *v, bool is_time, uint64_t *out)
{
	bool overflow = false;
	uint64_t whole, usec;

	if (digits(&v, 0, &whole, &overflow) == 0)
		return false;
	if (is_time && *v == '.') {
		v++;
		if (digits(&v, 6, &usec, &overflow) != 6 || whole > (UINT64_MAX - usec * 1000ull) / 1000000000ull)
			return false; /* usec as the kernel prints them, and a time that fits in ns */
		whole = whole * 1000000000ull + usec * 1000ull;
	}
	while (*v == ' ' || *v == '\t')
		v++;
	*out = whole;
	return !overflow && (*v == '\n' || *v == '\0');
}

/* The lines the kernel always prints, in its order. */
static const struct kernel_line {
	const char *key;
	size_t field; /* in struct tb_cpu_stats */
	bool is_time;
} kernel_lines[] = {
	{"entries", offsetof(struct tb_cpu_stats, entries), false},
	{"overrun", offsetof(struct tb_cpu_stats, overrun), false},
	{"commit overrun", offsetof(struct tb_cpu_stats, commit_overrun), false},
	{"bytes", offsetof(struct tb_cpu_stats, bytes), false},
	{"oldest event ts", offsetof(struct tb_cpu_stats, oldest_ts), true},
	{"now ts", offsetof(struct tb_cpu_stats, now_ts), true},
	{"dropped events", offsetof(struct tb_cpu_stats, dropped), false},
	{"read events", offsetof(struct tb_cpu_stats, read), false},
};

int tb_stats_parse_kernel(const char *text, struct tb_cpu_stats *st, struct tb_problem *err)
{
	if (!text || !st)
		return diag_fail(err, 0, "no text or no place for the stats");
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < sizeof(kernel_lines) / sizeof(kernel_lines[0]); i++) {
		const struct kernel_line *k = &kernel_lines[i];
		const char *v = line_value(text, k->key);

		if (!v)
			return diag_fail(err, 0, "not a kernel stats file: no '%s:' line", k->key);
		while (*v == ' ')
			v++;
		if (!parse_value(v, k->is_time, (uint64_t *)((char *)st + k->field)))
			return diag_fail(err, (uint64_t)(v - text), "not a kernel stats file: '%s:' is not followed by %s",
					 k->key, k->is_time ? "a time" : "a count");
	}
	st->has_events = st->oldest_ts != 0;
	tb_stats_derive(st);
	return 0;
}
