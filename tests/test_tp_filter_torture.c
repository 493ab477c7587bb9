// SPDX-License-Identifier: MIT
/*
 * test_tp_filter_torture - the books of filters at the source balance
 * exactly under load: more writing threads than CPUs (preempted and
 * migrated between building a record and testing it), a signal handler
 * emitting on top of each of them, and a reader consuming all the while.
 * Two events with filters: tpft:ev, whose filter has the compact form the
 * emitters run inline, and tpft:str, whose filter reads a string (the
 * out-of-line program).  Every writer decides in C, independently, whether
 * each record it fires should pass, and counts.  Then:
 *
 *   - no record the filter should have dropped is ever read;
 *   - the rings' filtered counters add up to exactly the records that
 *     should have been dropped (never counted as lost or refused);
 *   - with room for everything, the records read are exactly the ones that
 *     should have passed, and nothing is lost or refused;
 *   - in a small ring that overwrites, what is read plus what the LOST
 *     markers count is exactly the records that should have passed.
 *
 * TB_TORTURE_SIGNALS=0 leaves the signal writers out (the ThreadSanitizer
 * build); TB_TORTURE_SECONDS is not used: each writer fires a fixed count.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ring_sums.h"
#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(tpft, ev, TB_PROTO(uint32_t writer, uint32_t seq, uint64_t v),
	 TB_FIELDS(tb_field(uint32_t, writer, writer), tb_field(uint32_t, seq, seq), tb_field(uint64_t, v, v)),
	 TB_PRINTK("writer=%u seq=%u v=%llu", REC->writer, REC->seq, (unsigned long long)REC->v))
TB_EVENT(tpft, str, TB_PROTO(uint32_t writer, uint32_t seq, const char *s),
	 TB_FIELDS(tb_field(uint32_t, writer, writer), tb_field(uint32_t, seq, seq), tb_string(s, s)),
	 TB_PRINTK("writer=%u seq=%u s=%s", REC->writer, REC->seq, __get_str(s)))

/* The filters, and the same conditions in C. */
#define EV_FILTER "v & 1 && writer != 3 || seq < 50"
#define STR_FILTER "s ~ \"k*\" || seq < 50"
#define SIG_WRITER 100 /* a signal handler on thread i writes as SIG_WRITER + i */

static bool ev_passes(uint32_t writer, uint32_t seq, uint64_t v)
{
	return ((v & 1) && writer != 3) || seq < 50;
}

static bool str_passes(uint32_t seq, const char *s, size_t len)
{
	return (len > 0 && s[0] == 'k') || seq < 50;
}

static uint64_t mix(uint32_t writer, uint32_t seq)
{
	uint64_t x = (uint64_t)writer << 32 | seq;

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15u;
	return x ^ x >> 29;
}

#define THREADS 5
#define PER_THREAD 200000

/* One writing context (a thread, or the signal handler on it): what it fired and what should pass. */
struct writer {
	uint32_t id, seq;
	uint64_t pass, drop;
};

static _Thread_local struct writer *sig_writer; /* the handler's, on this thread */
static bool use_signals = true;

static void fire_one(struct writer *w)
{
	uint32_t seq = w->seq++;
	uint64_t v = mix(w->id, seq);
	const char *s = v & 2 ? "keep this one" : "drop this one";
	bool pass;

	if (seq % 2 == 0) {
		tb_trace(tpft, ev, w->id, seq, v);
		pass = ev_passes(w->id, seq, v);
	} else {
		tb_trace(tpft, str, w->id, seq, s);
		pass = str_passes(seq, s, strlen(s));
	}
	if (pass)
		w->pass++;
	else
		w->drop++;
}

static void on_signal(int sig)
{
	(void)sig;
	if (sig_writer)
		for (int i = 0; i < 4; i++)
			fire_one(sig_writer);
}

struct thread_arg {
	struct writer main, sig;
};

static void *write_all(void *p)
{
	struct thread_arg *a = p;

	sig_writer = &a->sig;
	atomic_signal_fence(memory_order_seq_cst); /* set before a handler on this thread may read it */
	for (int i = 0; i < PER_THREAD; i++) {
		fire_one(&a->main);
		if (use_signals && i % 97 == 0)
			raise(SIGUSR1);
	}
	return NULL;
}

/* ----------------------------------------------------------- reading */

struct books {
	uint64_t read, lost, bad; /* bad: records read that should have been dropped */
};

static atomic_bool writers_done;

/* One event consumed: a record checked against the conditions, or a LOST count. */
static void account(struct books *b, const struct tb_read_event *ev)
{
	const uint8_t *d = ev->data;
	uint16_t type;
	uint32_t writer, seq, loc;
	uint64_t v;

	if (ev->kind == TB_READ_LOST) {
		b->lost += ev->lost;
		return;
	}
	if (ev->kind != TB_READ_RECORD || ev->len < 16)
		return;
	memcpy(&type, d, 2);
	memcpy(&writer, d + 8, 4);
	memcpy(&seq, d + 12, 4);
	b->read++;
	if (type == tb_event_tpft_ev.id && ev->len >= 24) {
		memcpy(&v, d + 16, 8);
		b->bad += !ev_passes(writer, seq, v);
	} else if (type == tb_event_tpft_str.id && ev->len >= 20) {
		uint32_t off, len;
		memcpy(&loc, d + 16, 4);
		off = loc & 0xffff, len = loc >> 16;
		b->bad += off + len > ev->len || !str_passes(seq, (const char *)d + off, len);
	} else {
		b->bad++;
	}
}

struct reader_arg {
	struct tb_ring *ring;
	struct books books;
};

static void *read_all(void *p)
{
	struct reader_arg *r = p;
	struct tb_read_event ev;

	for (;;) {
		/* acquire: the writers' counts are final once this is seen (pairs with the store in run) */
		bool done = atomic_load_explicit(&writers_done, memory_order_acquire);
		int got = 0;
		while (tb_consume_merged(r->ring, &ev) == 1) {
			account(&r->books, &ev);
			got = 1;
		}
		if (done && !got)
			return NULL;
	}
}

static void run(const char *name, size_t kb, int overwrite)
{
	static struct thread_arg args[THREADS];
	struct tb_ring_opts o;
	struct tb_ring *ring;
	struct reader_arg reader = {0};
	pthread_t w[THREADS], r;
	uint64_t pass = 0, drop = 0;
	struct ring_sums t;

	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.overwrite = overwrite;
	if (tb_ring_new(&ring, &o) < 0) {
		ok(0, "%s: the ring is created", name);
		return;
	}
	tb_events_attach(ring);
	if (!ok(tb_events_enable("tpft:*", NULL, 0) == 2 && tb_events_set_filter("tpft:ev", EV_FILTER, NULL) == 0 &&
			tb_events_set_filter("tpft:str", STR_FILTER, NULL) == 0,
		"%s: the events are enabled with their filters", name)) {
		tb_events_attach(NULL);
		tb_ring_free(ring);
		return;
	}
	reader.ring = ring;
	atomic_store(&writers_done, false);
	pthread_create(&r, NULL, read_all, &reader);
	for (int i = 0; i < THREADS; i++) {
		args[i] = (struct thread_arg){{(uint32_t)i, 0, 0, 0}, {SIG_WRITER + (uint32_t)i, 0, 0, 0}};
		pthread_create(&w[i], NULL, write_all, &args[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i], NULL);
		pass += args[i].main.pass + args[i].sig.pass;
		drop += args[i].main.drop + args[i].sig.drop;
	}
	/* release: pairs with the reader's acquire load */
	atomic_store_explicit(&writers_done, true, memory_order_release);
	pthread_join(r, NULL);
	t = ring_sums(ring);
	diag("%s: %llu fired, %llu should pass; read %llu, LOST %llu, filtered %llu, refused %llu", name,
	     (unsigned long long)(pass + drop), (unsigned long long)pass, (unsigned long long)reader.books.read,
	     (unsigned long long)reader.books.lost, (unsigned long long)t.filtered, (unsigned long long)t.refused);
	is_int((long long)reader.books.bad, 0, "%s: no record read should have been dropped", name);
	is_int((long long)t.filtered, (long long)drop, "%s: filtered counts exactly the records dropped", name);
	is_int((long long)t.refused, 0, "%s: nothing refused", name);
	if (overwrite) {
		ok(reader.books.lost > 0, "%s: the small ring overwrote some", name);
		is_int((long long)(reader.books.read + reader.books.lost), (long long)pass,
		       "%s: read + LOST is exactly what should have passed", name);
	} else {
		is_int((long long)reader.books.read, (long long)pass, "%s: read is exactly what should have passed", name);
		is_int((long long)(reader.books.lost + t.lost), 0, "%s: nothing lost", name);
	}
	tb_events_attach(NULL);
	tb_ring_free(ring);
}

int main(void)
{
	const char *sig_env = getenv("TB_TORTURE_SIGNALS");
	struct sigaction sa;

	use_signals = !sig_env || strcmp(sig_env, "0") != 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	diag("%d writing threads%s", THREADS, use_signals ? ", each with a signal handler writing on top" : "");
	run("room for everything", 24576, 0);
	run("small ring, overwriting", 64, 1);
	return done_testing();
}
