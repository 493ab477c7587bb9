/*
 * The ring's time keeping and its less travelled read paths:
 *   - each clock; TSC values convert to CLOCK_MONOTONIC nanoseconds;
 *   - gaps over 2^27 ticks get a time extend, and times survive it;
 *   - pages handed out by tb_read_page are read by libtraceevent's kbuffer
 *     exactly as by our decoder, records and loss counts alike;
 *   - the iterator, walking while a writer laps the ring, reports every gap
 *     with its exact size and never shows a torn record;
 *   - a region in caller-supplied memory works like a heap one.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <traceevent/kbuffer.h>

#include "lib/tap.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static struct tb_ring *make(size_t kb, enum tb_clock clock, void *mem, size_t mem_size)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = NULL;

	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.clock = clock;
	o.mem = mem;
	o.mem_size = mem_size;
	return tb_ring_create(&ring, &o) == 0 ? ring : NULL;
}

static void test_clocks(void)
{
	static const enum tb_clock clocks[] = {TB_CLOCK_TSC, TB_CLOCK_MONO, TB_CLOCK_BOOT, TB_CLOCK_COUNTER};

	for (size_t i = 0; i < 4; i++) {
		struct tb_ring *ring = make(64, clocks[i], NULL, 0);
		struct tb_event ev;
		uint64_t before = mono_ns(), after, prev = 0, prev_raw = 0;
		int ordered = 1, n = 0, strictly = 1;

		for (int k = 0; k < 100; k++)
			tb_write(ring, &k, sizeof(k));
		after = mono_ns();
		while (tb_consume(ring, 0, &ev) == 1) {
			ordered &= ev.ns >= prev;
			strictly &= ev.ts > prev_raw;
			prev = ev.ns;
			prev_raw = ev.ts;
			if (clocks[i] == TB_CLOCK_TSC && (ev.ns + 2000000 < before || ev.ns > after + 2000000))
				ordered = 0;
			n++;
		}
		ok(n == 100 && ordered, "clock %s: 100 events, times in order%s", tb_clock_name(clocks[i]),
		   clocks[i] == TB_CLOCK_TSC ? ", TSC converted to CLOCK_MONOTONIC ns (within 2 ms)" : "");
		if (clocks[i] == TB_CLOCK_COUNTER)
			ok(strictly && prev_raw >= 100, "counter clock: every event a distinct, rising count");
		tb_ring_destroy(ring);
	}
}

/* Two events 200 ms apart on one page: the second needs a time extend. */
static void test_time_extend(void)
{
	struct tb_ring *ring = make(64, TB_CLOCK_MONO, NULL, 0);
	struct timespec pause = {0, 200 * 1000 * 1000};
	uint8_t page[4096];
	struct tb_page_cursor c;
	struct tb_record r;
	uint64_t t0, t1, times[2];
	int extends = 0, data = 0;

	t0 = mono_ns();
	tb_write(ring, "first", 5);
	nanosleep(&pause, NULL);
	tb_write(ring, "second", 6);
	t1 = mono_ns();
	ok(tb_read_page(ring, 0, page, sizeof(page)) > 0, "page read");
	tb_page_cursor_init(&c, page, sizeof(page));
	while (tb_page_next(&c, &r) == 1) {
		if (r.kind == TB_REC_TIME_EXTEND)
			extends++;
		else if (r.kind == TB_REC_DATA && data < 2)
			times[data++] = r.ts;
	}
	ok(data == 2 && extends == 1, "a 200 ms gap is carried by one time extend record");
	ok(data == 2 && times[0] >= t0 && times[1] <= t1 && times[1] - times[0] >= 200000000ull,
	   "both times exact across the extend (gap %.3f ms)", (double)(times[1] - times[0]) / 1e6);
	tb_ring_destroy(ring);
}

/* Every page tb_read_page hands out, read by kbuffer and by us. */
static void test_pages_with_kbuffer(void)
{
	struct tb_ring *ring = make(16, TB_CLOCK_MONO, NULL, 0);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint8_t page[4096], copy[4096];
	uint64_t pages = 0, agree = 0, lost_seen = 0, records = 0;
	struct tb_cpu_stats st;

	for (uint32_t i = 0; i < 3000; i++) {
		uint32_t buf[40] = {i};
		tb_write(ring, buf, 4 + (i % 37) * 4); /* 4..148 bytes: compact and long records */
	}
	tb_ring_stats(ring, 0, &st);
	while (tb_read_page(ring, 0, page, sizeof(page)) > 0) {
		struct tb_page_cursor c;
		struct tb_record r;
		unsigned long long kts;
		void *kdata;
		int same = 1;

		pages++;
		memcpy(copy, page, sizeof(page)); /* kbuffer may keep pointers into its page */
		tb_page_cursor_init(&c, page, sizeof(page));
		kbuffer_load_subbuffer(kb, copy);
		if (c.hdr.lost)
			lost_seen += c.hdr.lost_count;
		if (c.hdr.lost != (kbuffer_missed_events(kb) != 0) ||
		    (c.hdr.lost_stored && (uint64_t)kbuffer_missed_events(kb) != c.hdr.lost_count))
			same = 0;
		kdata = kbuffer_read_event(kb, &kts);
		while (tb_page_next_data(&c, &r) == 1) {
			const uint32_t *first = r.data;
			if (!kdata || kts != r.ts || (uint32_t)kbuffer_event_size(kb) != r.len ||
			    memcmp(kdata, r.data, r.len) != 0 || first[0] != records + st.overrun)
				same = 0;
			records++;
			kdata = kbuffer_next_event(kb, &kts);
		}
		if (kdata)
			same = 0; /* kbuffer saw more than we did */
		agree += same;
	}
	ok(pages > 2, "%llu pages read", (unsigned long long)pages);
	is_int(agree, pages, "kbuffer and our decoder agree on every page (records, times, loss)");
	is_int(lost_seen, st.overrun, "the stored lost count equals the overrun");
	is_int(records, st.entries, "every held event read, numbered without a gap after the loss");
	kbuffer_free(kb);
	tb_ring_destroy(ring);
}

/* The iterator beside a writer that laps the ring again and again. */
static struct tb_ring *lap_ring;
static atomic_int lap_stop;
static atomic_uint lap_written;

static void *lapper(void *arg)
{
	uint32_t n = 0;
	(void)arg;
	pin(0);
	while (!atomic_load(&lap_stop)) {
		uint32_t rec[6] = {n, n * 7u, n ^ 0x5a5a5a5au, n + 1, n + 2, n + 3};
		tb_write(lap_ring, rec, sizeof(rec));
		atomic_store_explicit(&lap_written, ++n, memory_order_relaxed);
	}
	return NULL;
}

static void test_iterator_during_writes(void)
{
	pthread_t t;
	uint64_t records = 0, gaps = 0, gap_events = 0, torn = 0, wrong_gap = 0, walks = 0;

	lap_ring = make(16, TB_CLOCK_TSC, NULL, 0);
	atomic_store(&lap_stop, 0);
	atomic_store(&lap_written, 0);
	pin(1); /* the writer owns CPU 0 */
	pthread_create(&t, NULL, lapper, NULL);
	while (atomic_load(&lap_written) < 20000)
		sched_yield();
	for (int w = 0; w < 200; w++) {
		struct tb_iter *it;
		struct tb_event ev;
		uint64_t expect = UINT64_MAX;

		if (tb_iter_open(lap_ring, &it) < 0)
			break;
		walks++;
		while (tb_iter_next(it, &ev) == 1) {
			if (ev.cpu != 0)
				continue;
			if (ev.kind == TB_EVENT_LOST) {
				gaps++;
				gap_events += ev.lost;
				if (expect != UINT64_MAX && ev.seqno != expect)
					wrong_gap++;
				expect = ev.seqno + ev.lost;
				continue;
			}
			const uint32_t *rec = ev.data;
			/* the payload numbers itself: writer's n == the event's number on CPU 0 */
			if (rec[0] != ev.seqno || rec[1] != rec[0] * 7u || rec[2] != (rec[0] ^ 0x5a5a5a5au))
				torn++;
			if (expect != UINT64_MAX && ev.seqno != expect)
				wrong_gap++;
			expect = ev.seqno + 1;
			records++;
		}
		tb_iter_close(it);
	}
	atomic_store(&lap_stop, 1);
	pthread_join(t, NULL);
	diag("%llu walks: %llu records, %llu LOST markers covering %llu events", (unsigned long long)walks,
	     (unsigned long long)records, (unsigned long long)gaps, (unsigned long long)gap_events);
	ok(records > 0 && gaps > 0, "iterator walks saw records and gaps while the writer lapped the ring");
	is_int(torn, 0, "no torn or stale record");
	is_int(wrong_gap, 0, "every LOST count is exactly the gap in the numbering");
	tb_ring_destroy(lap_ring);
	pin(0);
}

static void test_caller_memory(void)
{
	struct tb_ring_opts o;
	size_t size;
	void *mem;
	struct tb_ring *ring;
	struct tb_event ev;
	int n = 0, ok_payload = 1;

	tb_ring_opts_default(&o);
	o.size_kb = 32;
	size = tb_ring_region_size(&o);
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ok(mem != MAP_FAILED && size > 0, "region of %zu bytes mapped by the caller", size);
	is_int(make(32, TB_CLOCK_TSC, mem, size - 1) == NULL, 1, "too little memory is refused");
	ring = make(32, TB_CLOCK_TSC, mem, size);
	ok(ring != NULL, "ring created in caller memory");
	for (int i = 0; i < 500; i++)
		tb_write(ring, &i, sizeof(i));
	while (tb_consume(ring, 0, &ev) == 1) {
		ok_payload &= ev.kind == TB_EVENT_RECORD && *(const int *)ev.data == n;
		n++;
	}
	ok(n == 500 && ok_payload, "500 events through caller memory");
	tb_ring_destroy(ring);
	munmap(mem, size);
}

int main(void)
{
	pin(0);
	test_clocks();
	test_time_extend();
	test_pages_with_kbuffer();
	test_iterator_during_writes();
	test_caller_memory();
	return done_testing();
}
