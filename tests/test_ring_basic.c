/*
 * The ring, single-threaded: what goes in comes out, in order, with the
 * kernel's bytes; and when it does not, every read path says how much.
 * The first five specifications run twice: on the TSC clock, where most
 * writes take the hand-written fast path, and on CLOCK_MONOTONIC, where
 * every write takes the general one.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cpu.h"
#include "lib/tap.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

struct ev {
	uint32_t id;
	uint32_t n;
	char text[24];
};

static struct tb_ring *ring_new(size_t kb, size_t subbuf, int overwrite, enum tb_clock clock)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = NULL;

	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.subbuf_size = subbuf;
	o.overwrite = overwrite;
	o.clock = clock;
	if (tb_ring_new(&ring, &o) < 0)
		abort();
	return ring;
}

/* The clock of the specifications that run on both write paths. */
static enum tb_clock spec_clock;

static void write_n(struct tb_ring *ring, uint32_t first, uint32_t n)
{
	for (uint32_t i = first; i < first + n; i++) {
		struct ev e = {0xabcd, i, {0}};
		snprintf(e.text, sizeof(e.text), "event %u", i);
		tb_write(ring, &e, sizeof(e));
	}
}

static void test_roundtrip(void)
{
	struct tb_ring *ring = ring_new(64, 4096, 1, spec_clock);
	struct tb_read_event ev;
	uint32_t expect = 0, bad = 0;
	uint64_t last_ts = 0, ts_back = 0;
	struct tb_cpu_stats st;
	int rc;

	write_n(ring, 0, 1000);
	while ((rc = tb_consume(ring, 0, &ev)) == 1) {
		const struct ev *e = ev.data;
		if (ev.kind != TB_READ_RECORD || ev.len < sizeof(*e) || e->n != expect || ev.seqno != expect)
			bad++;
		ts_back += ev.ts < last_ts;
		last_ts = ev.ts;
		expect++;
	}
	is_int(rc, 0, "consume ends cleanly");
	is_int(expect, 1000, "1000 events written, 1000 consumed, no loss (64 KiB holds them)");
	is_int(bad, 0, "each in order, payload intact, seqno = position");
	is_int(ts_back, 0, "timestamps never decrease");
	tb_stats_read(ring, 0, &st);
	ok(st.entries == 0 && st.read == 1000 && st.overrun == 0 && st.written == 1000,
	   "stats: entries 0, read 1000, overrun 0, written 1000");
	tb_ring_free(ring);
}

/*
 * tb_write_at: a record stamped with the caller's reading of the clock,
 * never with time going back.  Rounds of three writes: a fresh stamp, a
 * stale one (before the record just written) and one far ahead; each
 * record's time must lie between its stamp (or the record before it) and
 * a clock read after the write.  On the fast path (TSC ring with rseq) a
 * fresh stamp is the record's own: each of 300 writes would have to be
 * interrupted within a few instructions for none to keep it.
 */
static void test_write_at(void)
{
	struct tb_ring *ring = ring_new(64, 4096, 1, spec_clock);
	uint64_t given[900], after[900], prev = 0;
	uint32_t outside = 0, back = 0, kept = 0, n = 0, bad = 0;
	struct tb_read_event ev;
	int rc;

	write_n(ring, 0, 1); /* the page's first record carries its own stamp */
	for (uint32_t i = 0; i < 900; i++) {
		struct ev e = {0xabcd, i + 1, {0}};
		uint64_t now = tb_ring_clock_now(ring);

		given[i] = i % 3 == 0 ? now : i % 3 == 1 ? now / 2 : now + (1ull << 40);
		rc = tb_write_at(ring, &e, sizeof(e), given[i]);
		after[i] = tb_ring_clock_now(ring);
		bad += rc != 0;
	}
	while ((rc = tb_consume(ring, 0, &ev)) == 1) {
		const struct ev *e = ev.data;

		if (ev.len < sizeof(*e) || e->n != n++) {
			bad++;
			continue;
		}
		back += ev.ts < prev;
		if (e->n) {
			uint64_t lo = given[e->n - 1] > prev ? given[e->n - 1] : prev;

			outside += (e->n - 1) % 3 != 2 ? ev.ts < lo || ev.ts > after[e->n - 1] : ev.ts > after[e->n - 1];
			kept += (e->n - 1) % 3 == 0 && ev.ts == given[e->n - 1];
		}
		prev = ev.ts;
	}
	ok(bad == 0 && n == 901, "tb_write_at: 900 records written and read back intact (%u bad)", bad);
	is_int(back, 0, "their times never go back, whatever the stamps");
	is_int(outside, 0, "each between its stamp (or the record before) and a clock read after it; none ahead");
	if (spec_clock == TB_CLOCK_TSC && tb_ring_uses_rseq(ring))
		ok(kept > 0, "fresh stamps are the records' own on the fast path (%u of 300)", kept);
	tb_ring_free(ring);
}

/* The kernel's lost-demo: 8 KiB-ish buffer, 5000 events: overrun, and each reader says so. */
static void test_overwrite_reports(void)
{
	struct tb_ring *ring = ring_new(8, 4096, 1, spec_clock);
	struct tb_cpu_stats st;
	struct tb_read_event ev;
	struct tb_iter *it;
	uint64_t iter_lost = 0, iter_recs = 0, first_seq = 0, cons_lost = 0, cons_recs = 0;
	uint64_t iter_lost_seq = 0, cons_lost_seq = 0;
	int lost_first = -1;

	write_n(ring, 0, 5000);
	tb_stats_read(ring, 0, &st);
	is_int(st.entries + st.overrun, 5000, "entries + overrun = 5000 written");
	ok(st.overrun > 4000, "most events overwritten (overrun %llu)", (unsigned long long)st.overrun);

	tb_iter_new(ring, &it);
	while (tb_iter_next(it, &ev) == 1) {
		if (ev.kind == TB_READ_LOST) {
			iter_lost += ev.lost;
			iter_lost_seq = ev.seqno;
			if (lost_first < 0)
				lost_first = iter_recs == 0;
		} else {
			if (!iter_recs)
				first_seq = ev.seqno;
			iter_recs++;
		}
	}
	tb_iter_free(it);
	is_int(iter_lost, st.overrun, "iterator reports the overrun as lost, with its count");
	ok(lost_first == 1, "... before its first record");
	is_int(iter_recs, st.entries, "iterator shows every held entry");
	is_int(first_seq, st.overrun, "first held event is number overrun");
	is_int(iter_lost_seq, st.overrun, "iterator: the LOST event's seqno is the number after "
	       "the gap (the first held event's)");

	tb_stats_read(ring, 0, &st);
	is_int(st.read, 0, "the iterator consumed nothing");
	while (tb_consume(ring, 0, &ev) == 1) {
		if (ev.kind == TB_READ_LOST) {
			cons_lost += ev.lost;
			cons_lost_seq = ev.seqno;
			ok(cons_recs == 0, "consuming read: LOST before the first record");
		} else {
			const struct ev *e = ev.data;
			if (e->n != ev.seqno)
				cons_recs += 1000000; /* poison: payload must say its own number */
			cons_recs++;
		}
	}
	is_int(cons_lost, st.overrun, "consuming read: CPU:0 [LOST %llu EVENTS]",
	       (unsigned long long)st.overrun);
	is_int(cons_recs, st.entries, "consuming read: then every held event");
	is_int(cons_lost_seq, st.overrun, "consuming read: the LOST event's seqno is the number "
	       "after the gap, as the iterator's");
	tb_ring_free(ring);
}

static void test_producer_consumer(void)
{
	struct tb_ring *ring = ring_new(8, 4096, 0, spec_clock);
	struct tb_cpu_stats st;
	struct tb_read_event ev;
	uint32_t n = 0, refused = 0;

	for (uint32_t i = 0; i < 5000; i++) {
		struct ev e = {1, i, "x"};
		refused += tb_write(ring, &e, sizeof(e)) == -ENOSPC;
	}
	tb_stats_read(ring, 0, &st);
	is_int(st.dropped, refused, "producer/consumer: each refused write counted in dropped");
	is_int(st.overrun, 0, "producer/consumer: nothing overwritten");
	is_int(st.entries + st.dropped, 5000, "entries + dropped = attempts");
	while (tb_consume(ring, 0, &ev) == 1) {
		const struct ev *e = ev.data;
		if (ev.kind == TB_READ_RECORD && e->n == n)
			n++;
	}
	is_int(n, st.entries, "the oldest events survive, in order");
	tb_ring_free(ring);
}

/* Pages handed out decode with the page codec and carry the kernel's loss flags. */
static void test_read_page(void)
{
	struct tb_ring *ring = ring_new(8, 4096, 1, spec_clock);
	uint8_t page[4096];
	struct tb_cpu_stats st;
	uint64_t records = 0, pages = 0, next = 0, flagged = 0, bad = 0;
	long n;

	write_n(ring, 0, 3000);
	tb_stats_read(ring, 0, &st);
	while ((n = tb_read_page(ring, 0, page, sizeof(page))) > 0) {
		struct tb_page_cursor c;
		struct tb_record r;

		pages++;
		if (tb_page_cursor_init(&c, page, sizeof(page)) < 0) {
			bad++;
			continue;
		}
		if (c.hdr.lost) {
			flagged++;
			ok(c.hdr.lost_stored && c.hdr.lost_count == st.overrun,
			   "first page: lost flag, stored count %llu = overrun",
			   (unsigned long long)c.hdr.lost_count);
			next += c.hdr.lost_count;
		}
		while (tb_page_next_data(&c, &r) == 1) {
			const struct ev *e = r.data;
			bad += e->n != next;
			next++;
			records++;
		}
	}
	is_int(n, 0, "page reads end cleanly");
	is_int(bad, 0, "every page decodes; events continue the numbering exactly");
	is_int(flagged, 1, "exactly one page carries the lost flag");
	is_int(records, st.entries, "page reads deliver every held event");
	ok(pages >= 2, "%llu pages", (unsigned long long)pages);
	tb_ring_free(ring);
}

/*
 * Recording off: every CPU refuses every write with -EAGAIN and counts
 * nothing (the kernel's tracing_on), however far the tail page is from
 * full; on again, every CPU takes writes.  Each CPU has written before,
 * so on the TSC clock the fast path is the one being stopped.
 */
/*
 * cap-e e3 in user space: 40-byte records fill a 4 KiB sub-buffer's 4080
 * data bytes exactly, so the first page after an overrun has no room for
 * the count (bit 31 alone, like the kernel's e3 page).  tb_read_page_info
 * still says how many were lost, which number comes first, and how many
 * events the page holds.  The counter clock keeps every delta small, so no
 * time extend changes the layout.
 */
static void test_read_page_no_room(void)
{
	struct tb_ring *ring = ring_new(8, 4096, 1, TB_CLOCK_COUNTER);
	uint8_t page[4096], payload[36] = {0};
	struct tb_cpu_stats st;
	struct tb_read_info info = {0};
	struct tb_page_cursor c;
	struct tb_record r;
	uint32_t events = 0;

	for (uint32_t i = 0; i < 1000; i++) {
		memcpy(payload, &i, sizeof(i));
		tb_write(ring, payload, sizeof(payload));
	}
	tb_stats_read(ring, 0, &st);
	ok(tb_read_page_info(ring, 0, page, sizeof(page), &info) == (long)sizeof(page) &&
		   tb_page_cursor_init(&c, page, sizeof(page)) == 0,
	   "no room: the first page reads and decodes");
	ok(c.hdr.lost && !c.hdr.lost_stored && c.hdr.data_len == 4080,
	   "no room: 4080 bytes of records, lost flag without the count (commit 0x%llx)",
	   (unsigned long long)c.hdr.commit_raw);
	while (tb_page_next_data(&c, &r) == 1) {
		uint32_t n;
		memcpy(&n, r.data, sizeof(n));
		events += n == info.first_seqno + events;
	}
	ok(st.overrun > 0 && info.lost == st.overrun, "no room: info.lost = %llu = the overrun",
	   (unsigned long long)info.lost);
	is_int(info.first_seqno, st.overrun, "no room: info.first_seqno is the number after the gap");
	ok(info.events == 102 && events == 102, "no room: info.events = 102, numbered from first_seqno");
	info.lost = 12345;
	ok(tb_read_page_info(ring, 0, page, sizeof(page), &info) > 0 && info.lost == 0 &&
		   info.first_seqno == st.overrun + 102,
	   "next page: nothing lost before it, numbering continues (%llu)",
	   (unsigned long long)info.first_seqno);
	tb_ring_free(ring);
}

static void test_recording_switch(void)
{
	struct tb_ring *ring = ring_new(64, 4096, 1, spec_clock);
	unsigned ncpu = tb_ring_ncpus(ring), refused = 0, taken = 0, cpus = 0;
	uint64_t written_before = 0, written_after = 0, attempted = 0;
	struct tb_cpu_stats st;
	uint64_t x = 42;

	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		if (!pin_cpu((int)cpu))
			continue;
		cpus++;
		write_n(ring, 0, 3);
		tb_ring_set_recording(ring, 0);
		for (int i = 0; i < 100; i++)
			refused += tb_write(ring, &x, sizeof(x)) == -EAGAIN;
		tb_ring_set_recording(ring, 1);
		for (int i = 0; i < 100; i++)
			taken += tb_write(ring, &x, sizeof(x)) == 0;
		tb_stats_read(ring, cpu, &st);
		written_before += 3;
		written_after += st.written;
		attempted += st.attempted;
	}
	pin_cpu(0);
	is_int(refused, 100 * cpus, "recording off: %u CPUs refuse all 100 writes with -EAGAIN", cpus);
	is_int(taken, 100 * cpus, "recording on again: all taken");
	is_int(written_after, written_before + 100 * cpus, "every write while on is written");
	is_int(attempted, written_after, "writes while off are counted nowhere");
	tb_ring_free(ring);
}

static void test_refusals(void)
{
	struct tb_ring *ring = ring_new(64, 4096, 1, TB_CLOCK_COUNTER);
	static uint8_t big[8192];
	struct tb_cpu_stats st;
	void *nest[TB_MAX_NEST + 1];
	int i;

	is_int(tb_write(ring, big, tb_ring_max_payload(ring)), 0, "the largest payload (4072) fits");
	is_int(tb_write(ring, big, tb_ring_max_payload(ring) + 1), -E2BIG, "one more byte is refused");
	for (i = 0; i < TB_MAX_NEST; i++)
		nest[i] = tb_reserve(ring, 16);
	nest[TB_MAX_NEST] = tb_reserve(ring, 16);
	ok(nest[TB_MAX_NEST - 1] && !nest[TB_MAX_NEST], "%d nested reservations, the next refused",
	   TB_MAX_NEST);
	for (i = TB_MAX_NEST - 1; i >= 0; i--) {
		memset(nest[i], i, 16);
		tb_commit(ring, nest[i]);
	}
	tb_stats_read(ring, sched_getcpu(), &st);
	is_int(st.too_big, 1, "too big counted once");
	is_int(st.nested, 1, "nesting past the limit counted once");
	is_int(st.written, 1 + TB_MAX_NEST, "the rest written");
	tb_ring_free(ring);
}

static void test_sizing(void)
{
	char *tsv = tap_slurp("tests/data/kernel/sizing.tsv", NULL), *line, *save = NULL;
	int rows = 0, good = 0;

	ok(tsv != NULL, "kernel sizing table present");
	for (line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned sub, kb, back, cpu0, total, data;
		struct tb_sizing s;
		if (sscanf(line, "%u %u %u %u %u %u", &sub, &kb, &back, &cpu0, &total, &data) != 6)
			continue;
		rows++;
		if (tb_sizing_compute(kb, sub, &s) == 0 && s.readback_kb == back && s.data_bytes == data &&
		    2 * s.readback_kb == total)
			good++;
		else
			diag("sizing mismatch: subbuf %u kb %u -> %llu, kernel %u", sub, kb,
			     (unsigned long long)s.readback_kb, back);
	}
	ok(rows > 20 && good == rows, "sizing.tsv: %d of %d rows match the kernel", good, rows);
	free(tsv);

	tsv = tap_slurp("tests/data/kernel/subbuf_sizes.tsv", NULL);
	rows = good = 0;
	for (line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned w, back, data;
		char status[16];
		struct tb_sizing s;
		if (sscanf(line, "%u %15s %u %u", &w, status, &back, &data) != 4)
			continue;
		rows++;
		int rc = tb_sizing_compute(100, w, &s);
		if (!strcmp(status, "ok") ? rc == 0 && s.subbuf_bytes == back * 1024 && s.data_bytes == data
					  : rc == -EINVAL)
			good++;
	}
	ok(rows > 15 && good == rows, "subbuf_sizes.tsv: %d of %d rows match the kernel", good, rows);
	free(tsv);
}

static void test_reset(void)
{
	struct tb_ring *ring = ring_new(8, 4096, 1, TB_CLOCK_TSC);
	struct tb_cpu_stats st;
	struct tb_read_event ev;

	write_n(ring, 0, 2000);
	tb_ring_reset(ring);
	tb_stats_read(ring, 0, &st);
	ok(st.written == 0 && st.overrun == 0 && st.entries == 0, "reset empties data and counters");
	write_n(ring, 0, 10);
	is_int(tb_consume(ring, 0, &ev), 1, "writes work after reset");
	is_int(tb_ring_resize(ring, 100), 0, "resize to 100 KiB");
	write_n(ring, 0, 2000);
	tb_stats_read(ring, 0, &st);
	ok(st.overrun == 0 && st.entries == 2000, "2000 events fit after the resize");

	uint64_t x = 1;
	tb_ring_set_recording(ring, 0);
	tb_ring_reset(ring);
	is_int(tb_write(ring, &x, sizeof(x)), -EAGAIN, "recording off stays off through a reset");
	tb_ring_resize(ring, 64);
	is_int(tb_write(ring, &x, sizeof(x)), -EAGAIN, "and through a resize");
	tb_ring_set_recording(ring, 1);
	write_n(ring, 0, 10);
	tb_stats_read(ring, 0, &st);
	is_int(st.entries, 10, "on again: writes land");
	tb_ring_free(ring);
}

int main(void)
{
	static const enum tb_clock clocks[] = {TB_CLOCK_TSC, TB_CLOCK_MONO};

	pin_cpu(0);
	for (int i = 0; i < 2; i++) {
		spec_clock = clocks[i];
		diag("write path: %s", i == 0 ? "TSC clock (the fast path)" : "CLOCK_MONOTONIC (the general path)");
		test_roundtrip();
		test_write_at();
		test_overwrite_reports();
		test_producer_consumer();
		test_read_page();
		test_recording_switch();
	}
	test_read_page_no_room();
	test_refusals();
	test_sizing();
	test_reset();
	return done_testing();
}
