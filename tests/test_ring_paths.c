/*
 * The ring's time keeping and its less travelled read paths:
 *   - each clock; TSC values convert to CLOCK_MONOTONIC nanoseconds;
 *   - gaps over 2^27 ticks get a time extend, and times survive it;
 *   - pages handed out by tb_read_page are read by libtraceevent's kbuffer
 *     exactly as by our decoder, records and loss counts alike;
 *   - the iterator, walking while a writer laps the ring, reports every gap
 *     with its exact size and never shows a torn record;
 *   - a region in caller-supplied memory works like a heap one;
 *   - a writer stopped between its snapshot and its section while 16384
 *     pages go by (the tail word's generation wraps) neither corrupts the
 *     ring nor leaves the CPU's writers stuck;
 *   - an iterator walking beside a writer that loses nothing reports no loss;
 *   - every payload length around the compact limit, written on pages that
 *     still hold an earlier lap's bytes, reads back exact, fill zeroed;
 *   - a thread that unregistered its rseq area gets a refusal, not a hang;
 *   - recording switched on and off by two threads at once ends, every
 *     time, with every CPU's fast path agreeing with the last switch;
 *   - two threads draining with tb_consume_merged at once get every event
 *     exactly once between them.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <traceevent/kbuffer.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "lib/cpu.h"
#include "lib/tap.h"
#include "ring/ring_internal.h"
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


static struct tb_ring *make_sized(size_t kb, size_t subbuf, enum tb_clock clock, void *mem, size_t mem_size)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = NULL;

	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.subbuf_size = subbuf;
	o.clock = clock;
	o.mem = mem;
	o.mem_size = mem_size;
	return tb_ring_new(&ring, &o) == 0 ? ring : NULL;
}

static struct tb_ring *make(size_t kb, enum tb_clock clock, void *mem, size_t mem_size)
{
	return make_sized(kb, 4096, clock, mem, mem_size);
}

static void test_clocks(void)
{
	static const enum tb_clock clocks[] = {TB_CLOCK_TSC, TB_CLOCK_MONO, TB_CLOCK_BOOT, TB_CLOCK_COUNTER};

	for (size_t i = 0; i < 4; i++) {
		struct tb_ring *ring = make(64, clocks[i], NULL, 0);
		struct tb_read_event ev;
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
		tb_ring_free(ring);
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
	tb_ring_free(ring);
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
	tb_stats_read(ring, 0, &st);
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
	tb_ring_free(ring);
}

/* The iterator beside a writer that laps the ring again and again. */
static struct tb_ring *lap_ring;
static atomic_int lap_stop;
static atomic_uint lap_written;

static void *lapper(void *arg)
{
	uint32_t n = 0;
	(void)arg;
	pin_cpu(0);
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
	pin_cpu(1); /* the writer owns CPU 0 */
	pthread_create(&t, NULL, lapper, NULL);
	while (atomic_load(&lap_written) < 20000)
		sched_yield();
	for (int w = 0; w < 200; w++) {
		struct tb_iter *it;
		struct tb_read_event ev;
		uint64_t expect = UINT64_MAX;

		if (tb_iter_new(lap_ring, &it) < 0)
			break;
		walks++;
		while (tb_iter_next(it, &ev) == 1) {
			if (ev.cpu != 0)
				continue;
			if (ev.kind == TB_READ_LOST) {
				/* numbered like the consuming reads': .seqno is the number after the gap */
				gaps++;
				gap_events += ev.lost;
				if (ev.lost == 0 || (expect != UINT64_MAX && ev.seqno - ev.lost != expect))
					wrong_gap++;
				expect = ev.seqno;
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
		tb_iter_free(it);
	}
	atomic_store(&lap_stop, 1);
	pthread_join(t, NULL);
	diag("%llu walks: %llu records, %llu LOST markers covering %llu events", (unsigned long long)walks,
	     (unsigned long long)records, (unsigned long long)gaps, (unsigned long long)gap_events);
	ok(records > 0 && gaps > 0, "iterator walks saw records and gaps while the writer lapped the ring");
	is_int(torn, 0, "no torn or stale record");
	is_int(wrong_gap, 0, "every LOST count is exactly the gap in the numbering");
	tb_ring_free(lap_ring);
	pin_cpu(0);
}

static void test_caller_memory(void)
{
	struct tb_ring_opts o;
	size_t size;
	void *mem;
	struct tb_ring *ring;
	struct tb_read_event ev;
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
		ok_payload &= ev.kind == TB_READ_RECORD && *(const int *)ev.data == n;
		n++;
	}
	ok(n == 500 && ok_payload, "500 events through caller memory");
	tb_ring_free(ring);
	munmap(mem, size);
}

/*
 * The kernel's cap-e e1 experiment on a tracebuf ring: 150 events of 36-byte
 * records (113 fill a page, 12 bytes of filler), one consumed, then raw page
 * reads.  The kernel's first page has commit 4044 with a 12-byte padding
 * record at 4032 (tests/data/kernel/cap-e-partial-and-padding/e1.cpu0.raw).
 */
static void test_copy_path_like_e1(void)
{
	struct tb_ring *ring = make(64, TB_CLOCK_MONO, NULL, 0);
	uint8_t page[4096], *kernel;
	struct tb_page_header h, kh;
	struct tb_page_cursor c;
	struct tb_record r, last = {0};
	struct tb_read_event ev;
	int events = 0;

	for (int i = 0; i < 150; i++) {
		char text[32] = {0};
		snprintf(text, sizeof(text), "p%013d", i);
		tb_write(ring, text, sizeof(text));
	}
	ok(tb_consume(ring, 0, &ev) == 1, "one event consumed");
	ok(tb_read_page(ring, 0, page, sizeof(page)) > 0, "first raw page read");
	tb_page_read_header(page, sizeof(page), &h, NULL);
	tb_page_cursor_init(&c, page, sizeof(page));
	while (tb_page_next(&c, &r) == 1) {
		events += r.kind == TB_REC_DATA;
		last = r;
	}
	kernel = (uint8_t *)tap_slurp("tests/data/kernel/cap-e-partial-and-padding/e1.cpu0.raw", NULL);
	ok(kernel && tb_page_read_header(kernel, 4096, &kh, NULL) == 0, "the kernel's e1 page read");
	is_int(h.data_len, kh.data_len, "commit equals the kernel's (%u): the filler travels with the copy",
	       kh.data_len);
	ok(events == 112 && last.kind == TB_REC_PADDING && last.offset == 16 + 4032 && last.size == 12,
	   "112 events then a 12-byte padding record at 4032, as in the kernel's page");
	is_int(tb_page_read_header(page, 4096, &h, NULL) == 0 && h.timestamp == ev.ts, 1,
	       "the copy is stamped with the reader's time (the consumed event's)");
	free(kernel);
	tb_ring_free(ring);
}

/* ---- a signal handler that makes 16384 page switches in the middle of a write */
static struct tb_ring *aba_ring;
static pthread_t aba_main;
static atomic_ulong aba_progress, aba_signals;
static atomic_int aba_stop, aba_stuck;

static void aba_handler(int sig)
{
	static uint32_t rec[1018]; /* 4072 bytes: one record fills a 4 KiB page */
	(void)sig;
	for (uint32_t i = 0; i < 16384; i++) {
		rec[0] = 0xabab0000u | (i & 0xffff);
		tb_write(aba_ring, rec, sizeof(rec));
	}
	atomic_fetch_add(&aba_signals, 1);
	atomic_fetch_add(&aba_progress, 1);
}

/*
 * Send the next signal only when the last handler has finished (slow builds,
 * such as ThreadSanitizer's, must not pile them up), for at most 3 seconds.
 */
static void *aba_kicker(void *arg)
{
	struct timespec gap = {0, 20 * 1000 * 1000};
	uint64_t start = mono_ns();
	unsigned long last = 0, sent = 0;
	int still = 0;
	(void)arg;
	while (!atomic_load(&aba_stop) && mono_ns() - start < 3000000000ull) {
		nanosleep(&gap, NULL);
		if (atomic_load(&aba_signals) == sent) {
			pthread_kill(aba_main, SIGUSR1);
			sent++;
		}
		unsigned long p = atomic_load(&aba_progress);
		still = p == last ? still + 1 : 0;
		last = p;
		if (still > 250) { /* five seconds without a write or a handler finishing: stuck */
			atomic_store(&aba_stuck, 1);
			ok(0, "writers never stuck: no write has finished for five seconds");
			done_testing();
			_exit(1); /* the stuck writer would never return */
		}
	}
	atomic_store(&aba_stop, 1);
	return NULL;
}

static void test_generation_wrap(void)
{
	struct sigaction sa, old;
	pthread_t k;
	uint32_t rec[1018] = {0};
	struct tb_read_event ev;
	uint64_t last_ts = 0, back = 0, bad = 0, n = 0;
	struct tb_cpu_stats st;

	aba_ring = make(4, TB_CLOCK_TSC, NULL, 0); /* 2 pages: 16384 switches wrap onto the same page */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = aba_handler;
	sigaction(SIGUSR1, &sa, &old);
	aba_main = pthread_self();
	pthread_create(&k, NULL, aba_kicker, NULL);
	while (!atomic_load(&aba_stop)) {
		rec[0] = (uint32_t)atomic_load(&aba_progress);
		tb_write(aba_ring, rec, sizeof(rec));
		atomic_fetch_add(&aba_progress, 1);
	}
	atomic_store(&aba_stop, 1);
	pthread_join(k, NULL);
	while (atomic_load(&aba_signals) < 1) /* at least one handler ran */
		sched_yield();
	sigaction(SIGUSR1, &old, NULL);
	ok(!atomic_load(&aba_stuck), "writers never stuck: %lu writes, %lu handlers of 16384 page switches each",
	   (unsigned long)atomic_load(&aba_progress), (unsigned long)atomic_load(&aba_signals));
	tb_stats_read(aba_ring, 0, &st);
	while (tb_consume(aba_ring, 0, &ev) == 1) {
		if (ev.kind != TB_READ_RECORD)
			continue;
		back += ev.ts < last_ts;
		last_ts = ev.ts;
		bad += ev.len != sizeof(rec);
		n++;
	}
	ok(n > 0 && back == 0 && bad == 0, "what is left reads back intact and in time order (%llu records)",
	   (unsigned long long)n);
	is_int(st.written, st.entries + st.overrun + st.read, "written = entries + overrun + read");
	tb_ring_free(aba_ring);
}

/* ---- the iterator beside a writer that loses nothing */
static atomic_int calm_stop;
static atomic_ulong calm_written;

/* A writer that a consumer can keep up with: 32 events, then a short sleep. */
static void *calm_writer(void *arg)
{
	struct timespec nap = {0, 20000};
	uint64_t x = 0;
	pin_cpu(0);
	while (!atomic_load(&calm_stop)) {
		tb_write(arg, &x, sizeof(x));
		atomic_store(&calm_written, ++x);
		if (x % 32 == 0)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

static void test_iterator_no_false_loss(void)
{
	struct tb_ring *ring = make(65536, TB_CLOCK_TSC, NULL, 0);
	uint64_t walks = 0, lost = 0, consumed_lost = 0, seen = 0;
	pthread_t w;

	atomic_store(&calm_stop, 0);
	pin_cpu(1);
	pthread_create(&w, NULL, calm_writer, ring);
	while (atomic_load(&calm_written) < 1000)
		sched_yield();
	for (int k = 0; k < 400; k++) {
		struct tb_read_event ev;
		struct tb_iter *it;

		for (int n = 0; k % 2 == 0 && n < 1000000 && tb_consume(ring, 0, &ev) == 1; n++)
			consumed_lost += ev.kind == TB_READ_LOST ? ev.lost : 0;
		if (tb_iter_new(ring, &it) < 0)
			break;
		while (tb_iter_next(it, &ev) == 1) {
			lost += ev.kind == TB_READ_LOST ? ev.lost : 0;
			seen += ev.kind == TB_READ_RECORD;
		}
		tb_iter_free(it);
		walks++;
	}
	atomic_store(&calm_stop, 1);
	pthread_join(w, NULL);
	pin_cpu(0);
	is_int(consumed_lost, 0, "a 64 MiB ring loses nothing to its consumer");
	is_int(lost, 0, "%llu iterator walks beside the writer and the consumer: none reports a loss (%llu records seen)",
	       (unsigned long long)walks, (unsigned long long)seen);
	tb_ring_free(ring);
}


/*
 * Every payload length 0..120 (compact records up to 112 bytes, then long
 * ones), written where an earlier lap left 0xff bytes, on every sub-buffer
 * size (4 KiB .. 512 KiB: the fast path finds the page by a shift and a
 * mask that depend on it), over at least two pages past the first lap:
 * each record reads back with its own length class, its bytes, and zeros
 * (never the old lap's bytes) in the fill up to the next 4-byte boundary.
 */
#define EXACT_MAXLEN 120

static uint8_t exact_byte(uint32_t i, uint32_t j) { return (uint8_t)((i * 31 + j) | 1); }

struct exact_result {
	uint32_t written, n, good, bad_fill, bad_class;
	int fast; /* the ring took the hand-written path */
};

/* stamped: tb_write_at with a fresh clock reading (its own expansion of the fast path), else tb_write. */
static void exact_lengths_on(size_t subbuf, int stamped, struct exact_result *res)
{
	/* records of 0..120 bytes average 66 bytes: enough rounds to fill two pages and more */
	uint32_t rounds = 3 + (uint32_t)(2 * subbuf / (64 * (EXACT_MAXLEN + 1)));
	/* room for twice that, and at least 6 sub-buffers, so nothing is lost */
	size_t bytes = 6 * subbuf + 2 * (size_t)rounds * (EXACT_MAXLEN + 1) * 72;
	struct tb_ring *ring = make_sized(bytes / 1024, subbuf, TB_CLOCK_TSC, NULL, 0);
	uint8_t junk[112], buf[EXACT_MAXLEN], *page = malloc(subbuf);
	struct tb_read_event ev;

	memset(res, 0, sizeof(*res));
	if (!ring || !page) {
		free(page);
		tb_ring_free(ring);
		return;
	}
	res->fast = ring->fast_ncpus > 0;
	memset(junk, 0xff, sizeof(junk));
	for (size_t i = 0; i < 3 * bytes / 116; i++) /* three laps of 116-byte records */
		tb_write(ring, junk, sizeof(junk));
	while (tb_consume(ring, 0, &ev) == 1)
		;
	for (uint32_t i = 0; i < rounds * (EXACT_MAXLEN + 1); i++) {
		uint32_t len = i % (EXACT_MAXLEN + 1);
		for (uint32_t j = 0; j < len; j++)
			buf[j] = exact_byte(i, j);
		res->written += (stamped ? tb_write_at(ring, buf, len, tb_ring_clock_now(ring))
					 : tb_write(ring, buf, len)) == 0;
	}
	while (tb_read_page(ring, 0, page, subbuf) > 0) {
		struct tb_page_cursor c;
		struct tb_record r;

		tb_page_cursor_init(&c, page, subbuf);
		while (tb_page_next_data(&c, &r) == 1) {
			uint32_t len = res->n % (EXACT_MAXLEN + 1), ok_bytes = 1, zero = 1;
			const uint8_t *d = r.data;
			uint32_t want = len <= 4 * TB_TYPE_DATA_MAX ? tb_record_size(len, 0) - 4 : (len + 3) & ~3u;

			for (uint32_t j = 0; j < len && j < r.len; j++)
				ok_bytes &= d[j] == exact_byte(res->n, j);
			for (uint32_t j = len; j < r.len; j++)
				zero &= d[j] == 0;
			res->bad_class += r.len != want;
			res->bad_fill += !zero;
			res->good += ok_bytes && zero && r.len == want;
			res->n++;
		}
	}
	free(page);
	tb_ring_free(ring);
}

static void test_every_length_exact(void)
{
	for (int stamped = 0; stamped < 2; stamped++) {
		for (size_t subbuf = 4096; subbuf <= 512 * 1024; subbuf *= 2) {
			struct exact_result res;

			exact_lengths_on(subbuf, stamped, &res);
			if (res.bad_class || res.bad_fill || res.good != res.n)
				diag("%zu KiB: %u records, %u wrong size, %u with stale fill, %u exact", subbuf >> 10,
				     res.n, res.bad_class, res.bad_fill, res.good);
			ok(res.written > 2 * subbuf / 64 && res.n == res.written && res.good == res.n,
			   "%s, %zu KiB sub-buffers: all %u records of lengths 0..%d read back exact, fill zeroed%s",
			   stamped ? "tb_write_at" : "tb_write", subbuf >> 10, res.n, EXACT_MAXLEN,
			   res.fast ? " (fast path)" : "");
		}
	}
}

/*
 * On a CPU with BMI2 and a glibc that registered rseq, a ring on the TSC
 * clock takes the hand-written path: the tests above that say so are
 * testing it, not the C path in its place.
 */
static void test_fast_path_is_on(void)
{
	struct tb_ring *ring = make(64, TB_CLOCK_TSC, NULL, 0);
	unsigned a, b, c, d;
	int bmi2 = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_BMI2);

	if (!bmi2 || !tb_ring_uses_rseq(ring))
		skip(1, bmi2 ? "no rseq registration: the try-lock fallback" : "no BMI2: the C path");
	else
		is_int(ring->fast_ncpus, tb_ring_ncpus(ring), "the TSC ring takes the fast path on every CPU");
	tb_ring_free(ring);
}

static struct tb_ring *unreg_ring;

static void unreg_watchdog(int sig)
{
	static const char msg[] = "not ok - tb_write still spinning 5 s after rseq was unregistered\n";
	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static void *unreg_writer(void *arg)
{
	struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	long rc = syscall(SYS_rseq, rs, __rseq_size > 32 ? __rseq_size : 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
	int *out = arg;

	if (rc != 0) {
		out[0] = 1; /* could not unregister: nothing to test */
		return NULL;
	}
	out[1] = tb_write(unreg_ring, "abcdefgh", 8);
	out[2] = tb_write(unreg_ring, "a longer payload, over 112 bytes: a longer payload, over 112 bytes: "
				      "a longer payload, over 112 bytes", 120);
	return NULL;
}

static void test_unregistered_thread(void)
{
	struct tb_cpu_stats st;
	uint64_t busy = 0;
	int res[3] = {0, 1, 1};
	pthread_t t;

	unreg_ring = make(64, TB_CLOCK_TSC, NULL, 0);
	if (!tb_ring_uses_rseq(unreg_ring)) {
		skip(2, "the ring does not use rseq here");
		tb_ring_free(unreg_ring);
		return;
	}
	signal(SIGALRM, unreg_watchdog);
	alarm(5);
	pthread_create(&t, NULL, unreg_writer, res);
	pthread_join(t, NULL);
	alarm(0);
	if (res[0]) {
		skip(2, "rseq could not be unregistered");
	} else {
		for (unsigned cpu = 0; cpu < tb_ring_ncpus(unreg_ring); cpu++)
			if (tb_stats_read(unreg_ring, cpu, &st) == 0)
				busy += st.busy;
		ok(res[1] == -EBUSY && res[2] == -EBUSY, "without its rseq area a thread's writes are refused (%d, %d)",
		   res[1], res[2]);
		is_int(busy, 2, "... and counted in busy");
	}
	tb_ring_free(unreg_ring);
}

/*
 * Two threads on two CPUs switch recording to opposite values at the same
 * moment, 20000 times.  After each round the flag is whatever won, and each
 * CPU's fast_words (what the fast path tests) must say the same.  The ring
 * has 256 CPU buffers so a pass over them is long enough to interleave.
 */
#define SWITCH_ROUNDS 20000
static struct tb_ring *sw_ring;
static atomic_uint sw_go, sw_done;

static void *switcher(void *arg)
{
	(void)arg;
	pin_cpu(1);
	for (unsigned round = 1; round <= SWITCH_ROUNDS; round++) {
		while (atomic_load(&sw_go) != round)
			;
		tb_ring_set_recording(sw_ring, round & 1);
		atomic_store(&sw_done, round);
	}
	return NULL;
}

static unsigned recording_disagreements(struct tb_ring *ring)
{
	struct tb_region *r = ring->r;
	uint32_t want = atomic_load(&r->record_disabled) ? 0 : tb_page_data_size(r->subbuf_size) / 4;
	unsigned bad = 0;

	for (unsigned cpu = 0; cpu < r->ncpus; cpu++)
		bad += atomic_load(&region_cpu(r, cpu)->fast_words) != want;
	return bad;
}

static void test_recording_switch_race(void)
{
	struct tb_ring_opts o;
	pthread_t t;
	unsigned bad_rounds = 0, off_rounds = 0;

	tb_ring_opts_default(&o);
	o.size_kb = 8;
	o.ncpus = 256;
	if (!ok(tb_ring_new(&sw_ring, &o) == 0, "a ring of 256 CPU buffers")) {
		skip(1, "no ring");
		return;
	}
	pthread_create(&t, NULL, switcher, NULL);
	for (unsigned round = 1; round <= SWITCH_ROUNDS; round++) {
		atomic_store(&sw_go, round);
		tb_ring_set_recording(sw_ring, !(round & 1));
		while (atomic_load(&sw_done) != round)
			;
		bad_rounds += recording_disagreements(sw_ring) != 0;
		off_rounds += atomic_load(&sw_ring->r->record_disabled) != 0;
	}
	pthread_join(t, NULL);
	diag("recording ended off in %u of %d rounds", off_rounds, SWITCH_ROUNDS);
	is_int(bad_rounds, 0, "after every concurrent switch, all 256 CPUs agree with the flag");
	tb_ring_free(sw_ring);
}

/*
 * Two threads drain one ring with tb_consume_merged at once, free to run on
 * any CPU, while two writers (one per CPU) fill it.  Each event number of
 * each CPU must reach exactly one of them, as a record or inside a LOST
 * count, and no LOST event may carry a count of 0.  Once with room for
 * everything (every record arrives), once on a small ring in overwrite
 * mode (most are lost, and the counts must cover them exactly).  A
 * consumer that peeked an item and then finds another consumer moved that
 * CPU's reader must choose again, never hand out the stale item.
 */
#define TWO_EVENTS 60000 /* per writer */
static struct tb_ring *two_ring;
static atomic_uint two_writers_done;
static atomic_uchar two_cover[2][TWO_EVENTS]; /* per CPU, per event number */
static atomic_ulong two_records, two_zero_lost, two_bad;


static void *two_writer(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg;

	pin_cpu((int)w);
	for (uint32_t i = 0; i < TWO_EVENTS; i++) {
		uint32_t ev[2] = {w, i};
		while (tb_write(two_ring, ev, sizeof(ev)) != 0)
			; /* never refused in overwrite mode; -EBUSY only without rseq */
	}
	atomic_fetch_add(&two_writers_done, 1);
	return NULL;
}

static void cover(unsigned cpu, uint64_t from, uint64_t to)
{
	for (uint64_t n = from; n < to; n++)
		if (cpu < 2 && n < TWO_EVENTS)
			atomic_fetch_add(&two_cover[cpu][n], 1);
		else
			atomic_fetch_add(&two_bad, 1);
}

static void *two_reader(void *arg)
{
	struct tb_read_event ev;
	(void)arg;

	unpin_cpu();
	for (;;) {
		/* writers done before an empty answer: then it is empty for good */
		int done = atomic_load(&two_writers_done) == 2;
		int rc = tb_consume_merged(two_ring, &ev);

		if (rc == 1 && ev.kind == TB_READ_RECORD) {
			cover(ev.cpu, ev.seqno, ev.seqno + 1);
			atomic_fetch_add(&two_records, 1);
		} else if (rc == 1) {
			cover(ev.cpu, ev.seqno - ev.lost, ev.seqno);
			if (ev.lost == 0)
				atomic_fetch_add(&two_zero_lost, 1);
		} else if (rc < 0 || done) {
			break;
		}
	}
	return NULL;
}

static void two_readers_on(const char *name, size_t kb)
{
	pthread_t w[2], rd[2];
	unsigned once = 0, more = 0, never = 0;

	two_ring = make(kb, TB_CLOCK_TSC, NULL, 0);
	if (!two_ring || tb_ring_ncpus(two_ring) < 2) {
		skip(1, "needs a ring of 2 CPUs or more");
		tb_ring_free(two_ring);
		return;
	}
	memset(two_cover, 0, sizeof(two_cover));
	atomic_store(&two_writers_done, 0);
	atomic_store(&two_records, 0);
	atomic_store(&two_zero_lost, 0);
	atomic_store(&two_bad, 0);
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, two_reader, NULL);
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, two_writer, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	for (int c = 0; c < 2; c++)
		for (int i = 0; i < TWO_EVENTS; i++) {
			unsigned n = atomic_load(&two_cover[c][i]);
			once += n == 1;
			more += n > 1;
			never += n == 0;
		}
	diag("%s: %lu records read, the rest reported lost", name, (unsigned long)atomic_load(&two_records));
	ok(once == 2 * TWO_EVENTS && !atomic_load(&two_zero_lost) && !atomic_load(&two_bad),
	   "%s: two merged readers at once: each of %d event numbers reached one of them once "
	   "(%u twice or more, %u never, %lu LOST of 0, %lu out of range)",
	   name, 2 * TWO_EVENTS, more, never, (unsigned long)atomic_load(&two_zero_lost),
	   (unsigned long)atomic_load(&two_bad));
	tb_ring_free(two_ring);
}

static void test_two_merged_readers(void)
{
	two_readers_on("room for all", TWO_EVENTS * 16 / 1024 + 64);
	is_int(atomic_load(&two_records), 2 * TWO_EVENTS, "room for all: every record arrived");
	/* the smallest ring: a gap, and so a LOST event, every few records */
	two_readers_on("overwrite, 8 KiB", 8);
	pin_cpu(0);
}

int main(void)
{
	pin_cpu(0);
	test_clocks();
	test_time_extend();
	test_pages_with_kbuffer();
	test_iterator_during_writes();
	test_caller_memory();
	test_copy_path_like_e1();
	test_generation_wrap();
	test_iterator_no_false_loss();
	test_fast_path_is_on();
	test_every_length_exact();
	test_unregistered_thread();
	test_recording_switch_race();
	test_two_merged_readers();
	return done_testing();
}
