/*
 * bench_sources - what the sources cost, each beside its peer in the same
 * run: a disabled tracepoint beside a bare load-and-branch loop; an enabled
 * u64 tracepoint, a 22-character string tracepoint and a printf event with
 * three ints beside a bare rdtsc (and beside LTTng-UST's equivalent
 * tracepoints and its tracef, when built with -DHAVE_LTTNG and run in an
 * LTTng session, as scripts/bench.sh does); one thread against two; an
 * event with a two-comparison filter at the source (tb_events_set_filter)
 * that keeps every record (filter_keep), and one that keeps none
 * (filter_drop), each beside the same event layout unfiltered (the
 * filter's cost is the difference); and the unfiltered event beside the
 * same record built and written by hand, without the emitter's test for a
 * filter (what that test costs events that have none), and without its
 * test for an attached USDT consumer (issue 26).  Beside rdtsc too:
 * tb_write of a ready 16- and 35-byte record (the u64 and the string
 * event's sizes), the write path's own share of those events.
 * "bench_sources WORD" runs only the cases whose name contains WORD.
 *
 * As in bench_write: each thread times batches of 1000 events with the TSC
 * and keeps the fastest batch, and every batch of the case is followed by a
 * batch of its peer on the same CPU, so both see the same conditions; the
 * ratio is of the two fastest batches.  Single-thread cases run on CPU 0
 * and CPU 1 in turn and are averaged; each event case also runs on two
 * threads (aggregate time per event) beside itself on one.
 *
 * Prints the figures and writes them, in the results.json shape (case,
 * threads, tracebuf_ns, peer, peer_ns, ratio = peer_ns / tracebuf_ns), to
 * results-sources.json next to this program.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "bench_util.h"

#include "tracebuf/events.h"
#include "tracebuf/func.h"
#include "tracebuf/ring.h"
#include "tracebuf/tracepoint.h"

#define BATCH 1000
#ifndef BATCHES
#define BATCHES 20000
#endif

/* The events measured.  bs:off is never enabled. */
TB_EVENT(bs, off, TB_PROTO(uint64_t v), TB_FIELDS(tb_field(uint64_t, v, v)), TB_PRINTK("v=%llu", (unsigned long long)REC->v))
TB_EVENT(bs, u64, TB_PROTO(uint64_t v), TB_FIELDS(tb_field(uint64_t, v, v)), TB_PRINTK("v=%llu", (unsigned long long)REC->v))
TB_EVENT(bs, str, TB_PROTO(const char *s), TB_FIELDS(tb_string(s, s)), TB_PRINTK("s=%s", __get_str(s)))
/* bs:u64's layout, with filters: bs:keep's keeps every record, bs:drop's none. */
TB_EVENT(bs, keep, TB_PROTO(uint64_t v), TB_FIELDS(tb_field(uint64_t, v, v)), TB_PRINTK("v=%llu", (unsigned long long)REC->v))
TB_EVENT(bs, drop, TB_PROTO(uint64_t v), TB_FIELDS(tb_field(uint64_t, v, v)), TB_PRINTK("v=%llu", (unsigned long long)REC->v))
#define KEEP_FILTER "v < 1000000000000 && common_pid != 0"
#define DROP_FILTER "v > 1000000000000 && common_pid != 0"

const char *bench_string = "/api/v1/users/42/items"; /* 22 characters */
static struct tb_ring *ring;
static volatile uint64_t sink;
static void *volatile flag; /* the bare loop's "enabled" pointer: NULL */

#ifdef HAVE_LTTNG
void lttng_src_u64(long n); /* bench/sources_lttng_peer.c */
void lttng_src_str(long n);
void lttng_src_ints3(long n);
void lttng_src_tracef(long n);
#endif

void bs_func_records(long n); /* bench/sources_func.c: n function entry/exit records */

/* ---------------------------------------------------------- the loops */

__attribute__((noinline)) static void loop_rdtsc(long n)
{
	uint64_t acc = 0;

	for (long i = 0; i < n; i++)
		acc += __rdtsc();
	sink = acc;
}

/* What a disabled tracepoint should cost: load a pointer, test, branch not taken. */
__attribute__((noinline)) static void loop_branch(long n)
{
	for (long i = 0; i < n; i++)
		if (__builtin_expect(__atomic_load_n(&flag, __ATOMIC_RELAXED) != NULL, 0))
			sink = (uint64_t)i;
}

__attribute__((noinline)) static void loop_disabled(long n)
{
	for (long i = 0; i < n; i++)
		tb_trace(bs, off, (uint64_t)i);
}

__attribute__((noinline)) static void loop_u64(long n)
{
	for (long i = 0; i < n; i++)
		tb_trace(bs, u64, (uint64_t)i);
}

/* The u64 event through its out-of-line emitter (tb_trace inlines fixed-size ones), to compare. */
__attribute__((noinline)) static void loop_u64_call(long n)
{
	for (long i = 0; i < n; i++)
		if (__builtin_expect(tb_trace_bs_u64_enabled(), 0))
			tb_trace_bs_u64((uint64_t)i);
}

/* The u64 record built in tb_reserve()'s scratch instead of on the stack. */
__attribute__((noinline)) static void loop_u64_reserve(long n)
{
	for (long i = 0; i < n; i++) {
		struct tb_record_bs_u64 *e = tb_reserve(ring, sizeof(*e));
		uint64_t common = tb__common_word(tb_event_bs_u64.id);
		memcpy(&e->common, &common, sizeof(common));
		e->v = (uint64_t)i;
		tb_commit(ring, e);
	}
}

/* The u64 record as the emitter builds it, written without the test for a filter. */
__attribute__((noinline)) static void loop_u64_unchecked(long n)
{
	for (long i = 0; i < n; i++) {
		struct tb_ring *r = __atomic_load_n(&tb_event_bs_u64.ring, __ATOMIC_RELAXED);
		if (__builtin_expect(r != NULL, 0)) {
			struct tb_record_bs_u64 e;
			uint64_t common = tb__common_word(tb_event_bs_u64.id);
			memcpy(&e.common, &common, sizeof(common));
			e.v = (uint64_t)i;
			tb_write(r, &e, sizeof(e));
		}
	}
}

/*
 * The u64 event as its emitter writes it less the test for an attached USDT
 * consumer (the gate, the ring, the record, the filter test, tb_write): what
 * that test costs an enabled event.
 */
__attribute__((noinline)) static void loop_u64_no_usdt(long n)
{
	for (long i = 0; i < n; i++) {
		if (__builtin_expect(__atomic_load_n(&tb_event_bs_u64.gate.word, __ATOMIC_RELAXED) != 0, 0)) {
			struct tb_ring *r = __atomic_load_n(&tb_event_bs_u64.ring, __ATOMIC_ACQUIRE);
			struct tb_record_bs_u64 e;
			uint64_t common;
			if (r == NULL)
				continue;
			common = tb__common_word(tb_event_bs_u64.id);
			memcpy(&e.common, &common, sizeof(common));
			e.v = (uint64_t)i;
			if (!tb__event_filtered(&tb_event_bs_u64, r, &e, sizeof(e)))
				tb_write(r, &e, sizeof(e));
		}
	}
}

__attribute__((noinline)) static void loop_keep(long n)
{
	for (long i = 0; i < n; i++)
		tb_trace(bs, keep, (uint64_t)i);
}

__attribute__((noinline)) static void loop_drop(long n)
{
	for (long i = 0; i < n; i++)
		tb_trace(bs, drop, (uint64_t)i);
}

__attribute__((noinline)) static void loop_str(long n)
{
	for (long i = 0; i < n; i++)
		tb_trace(bs, str, bench_string);
}

__attribute__((noinline)) static void loop_printf3(long n)
{
	for (long i = 0; i < n; i++)
		tb_printf("%d %d %d", (int)i, (int)i + 1, (int)i + 2);
}

__attribute__((noinline)) static void loop_write(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t payload = 0x1122334455667788ull + (uint64_t)i;
		tb_write(ring, &payload, sizeof(payload));
	}
}

/*
 * The same write without the count of writes begun (docs/design.md §10):
 * tb_write's own code from the label after its count, which tb_commit
 * enters (the library's internal symbol; this bench links libtracebuf.a).
 * Nothing is refused here, so nothing undoes a count that was not made.
 */
int tb__write_counted(struct tb_ring *ring, const void *data, uint32_t len);

__attribute__((noinline)) static void loop_write_uncounted(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t payload = 0x1122334455667788ull + (uint64_t)i;
		tb__write_counted(ring, &payload, sizeof(payload));
	}
}

/*
 * The write path's own floor under the u64 and string events: tb_write of
 * records of their sizes (16 and 35 bytes) from a buffer stored long ago,
 * so nothing of building the record is measured.
 */
static unsigned char ready_record[64];

__attribute__((noinline)) static void loop_write16(long n)
{
	for (long i = 0; i < n; i++)
		tb_write(ring, ready_record, 16);
}

__attribute__((noinline)) static void loop_write35(long n)
{
	for (long i = 0; i < n; i++)
		tb_write(ring, ready_record, 35);
}

/* ------------------------------------------------------------ timing */

static double tsc_per_ns;

struct job {
	void (*fn)(long), (*peer)(long);
	int cpu;
	uint64_t best, best_peer; /* TSC ticks of the fastest batches */
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	pin(j->cpu);
	j->best = j->best_peer = UINT64_MAX;
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = __rdtsc(), t1, t2;
		j->fn(BATCH);
		t1 = __rdtsc();
		if (j->peer)
			j->peer(BATCH);
		t2 = __rdtsc();
		if (t1 - t0 < j->best)
			j->best = t1 - t0;
		if (t2 - t1 < j->best_peer)
			j->best_peer = t2 - t1;
	}
	return NULL;
}

struct figure {
	double ns, peer_ns; /* per event (aggregate for several threads) */
};

/* fn beside peer with `threads` threads (one per CPU); single threads on each CPU in turn, averaged. */
static struct figure measure(void (*fn)(long), void (*peer)(long), int threads)
{
	struct figure f = {0, 0};
	pthread_t t[2];
	struct job j[2];
	int rounds = threads == 1 ? 2 : 1;

	for (int r = 0; r < rounds; r++) {
		double rate = 0, peer_rate = 0;
		for (int i = 0; i < threads; i++) {
			j[i] = (struct job){fn, peer, threads == 1 ? r : i, 0, 0};
			pthread_create(&t[i], NULL, run_job, &j[i]);
		}
		for (int i = 0; i < threads; i++) {
			pthread_join(t[i], NULL);
			rate += BATCH / ((double)j[i].best / tsc_per_ns);
			peer_rate += BATCH / ((double)j[i].best_peer / tsc_per_ns);
		}
		f.ns += 1.0 / rate / rounds;
		f.peer_ns += peer ? 1.0 / peer_rate / rounds : 0;
	}
	return f;
}

static void calibrate(void)
{
	struct timespec a, b, pause = {0, 100 * 1000 * 1000};
	uint64_t c0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	c0 = __rdtsc();
	nanosleep(&pause, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	tsc_per_ns = (double)(__rdtsc() - c0) / ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec));
}

/* ------------------------------------------------------------ output */

static FILE *json;
static int json_entries;
static const char *only; /* argv[1]: run only the cases whose name contains it */

/* Whether to measure the case called name (every case when no filter was given). */
static int wanted(const char *name)
{
	return !only || strstr(name, only);
}

static void result(const char *name, int threads, double ns, const char *peer, double peer_ns)
{
	printf("  %-34s %7.2f ns   %-30s %7.2f ns   %.2fx its time\n", name, ns, peer, peer_ns, ns / peer_ns);
	if (json)
		fprintf(json, "%s\n  {\"case\": \"%s\", \"threads\": %d, \"tracebuf_ns\": %.3f, \"peer\": \"%s\", "
			"\"peer_ns\": %.3f, \"ratio\": %.4f}", json_entries++ ? "," : "", name, threads, ns, peer,
			peer_ns, peer_ns / ns);
}

static FILE *open_json(const char *argv0)
{
	char path[4096];
	const char *slash = strrchr(argv0, '/');

	snprintf(path, sizeof(path), "%.*sresults-sources.json", slash ? (int)(slash - argv0 + 1) : 0, argv0);
	json = fopen(path, "w");
	if (json)
		fputs("[", json);
	return json;
}

/* One thread of case beside one of its peer (a case whose name or peer's name contains argv[1] if given). */
static struct figure side_by_side(const char *name, void (*fn)(long), const char *peer_name, void (*peer)(long))
{
	struct figure f = {0, 0};

	if (!wanted(name) && !wanted(peer_name))
		return f;
	f = measure(fn, peer, 1);
	result(name, 1, f.ns, peer_name, f.peer_ns);
	return f;
}

/* A case beside its peer, then what the case adds to it in ns (what, e.g. "the filter's cost"). */
static void added_cost(const char *name, void (*fn)(long), const char *peer_name, void (*peer)(long),
		       const char *what, const char *goal)
{
	struct figure f;

	if (!wanted(name) && !wanted(peer_name))
		return;
	f = measure(fn, peer, 1);
	result(name, 1, f.ns, peer_name, f.peer_ns);
	printf("  %-34s %+7.2f ns per event%s\n", what, f.ns - f.peer_ns, goal);
}

/* Two threads of a case (aggregate time per event) beside one thread of it. */
static void two_threads(const char *name, void (*fn)(long))
{
	char name2[128], name1[128];
	struct figure f1, f2;

	snprintf(name2, sizeof(name2), "%s, 2 threads", name);
	snprintf(name1, sizeof(name1), "%s, 1 thread", name);
	if (!wanted(name2))
		return;
	f1 = measure(fn, NULL, 1);
	f2 = measure(fn, NULL, 2);
	result(name2, 2, f2.ns, name1, f1.ns);
}

int main(int argc, char **argv)
{
	struct tb_ring_opts o;
	struct figure disabled;

	only = argc > 1 ? argv[1] : NULL;
	tb_ring_opts_default(&o);
	o.size_kb = 4096;
	if (tb_ring_new(&ring, &o) < 0) {
		fprintf(stderr, "bench_sources: cannot create the ring\n");
		return 1;
	}
	tb_events_attach(ring);
	if (tb_events_enable("bs:u64,bs:str,bs:keep,bs:drop,ftrace:bprint", NULL, 0) != 5 ||
	    tb_events_set_filter("bs:keep", KEEP_FILTER, NULL) < 0 ||
	    tb_events_set_filter("bs:drop", DROP_FILTER, NULL) < 0) {
		fprintf(stderr, "bench_sources: cannot enable the events and their filters\n");
		return 1;
	}
	calibrate();
	open_json(argv[0]);
	printf("bench_sources: fastest of %d batches of %d events per thread, each beside a batch of its peer\n",
	       BATCHES, BATCH);

	disabled = side_by_side("disabled tracepoint", loop_disabled, "load-and-branch loop", loop_branch);
	if (disabled.ns > 0) /* no PMU in a VM: cycles as the TSC counts them */
		printf("  %-34s %7.2f TSC cycles  %-30s %7.2f TSC cycles per iteration (goal: <= 1.2x)\n", "",
		       disabled.ns * tsc_per_ns, "", disabled.peer_ns * tsc_per_ns);
	side_by_side("u64 tracepoint", loop_u64, "rdtsc", loop_rdtsc);
	side_by_side("u64 tracepoint, emitter called", loop_u64_call, "rdtsc", loop_rdtsc);
	side_by_side("u64 record via tb_reserve/commit", loop_u64_reserve, "rdtsc", loop_rdtsc);
	side_by_side("tb_write 16 bytes, record ready", loop_write16, "rdtsc", loop_rdtsc);
	side_by_side("22-char string tracepoint", loop_str, "rdtsc", loop_rdtsc);
	side_by_side("tb_write 35 bytes, record ready", loop_write35, "rdtsc", loop_rdtsc);
	side_by_side("printf, 3 ints", loop_printf3, "rdtsc", loop_rdtsc);
	if (wanted("function entry/exit record") || wanted("rdtsc")) {
		/* its own ring: the hooks are the only writers to it */
		struct tb_ring *fring;

		if (tb_ring_new(&fring, &o) < 0 || tb_func_start(fring, NULL) < 0) {
			fprintf(stderr, "bench_sources: cannot start function tracing\n");
			return 1;
		}
		side_by_side("function entry/exit record", bs_func_records, "rdtsc", loop_rdtsc);
		tb_func_stop();
		tb_ring_free(fring);
	}
	added_cost("tb_write 8 bytes", loop_write, "tb_write 8 bytes, no count of writes begun", loop_write_uncounted,
		   "  the count of writes begun", " (goal: at most 2% of tb_write)");
	added_cost("u64 tracepoint", loop_u64, "u64 record by hand, no filter test", loop_u64_unchecked,
		   "  the test for a filter", "");
	added_cost("u64 tracepoint", loop_u64, "u64 tracepoint, no USDT test", loop_u64_no_usdt,
		   "  the test for a USDT consumer", " (goal: ~0)");
	added_cost("filter_keep (u64, 2 comparisons)", loop_keep, "u64 tracepoint, no filter", loop_u64,
		   "  the filter's cost", " (goal: at most +5)");
	added_cost("filter_drop (u64, 2 comparisons)", loop_drop, "u64 tracepoint, no filter", loop_u64,
		   "  the filter's cost", " (goal: at most +5)");
	two_threads("u64 tracepoint", loop_u64);
	two_threads("22-char string tracepoint", loop_str);
	two_threads("printf, 3 ints", loop_printf3);
#ifdef HAVE_LTTNG
	side_by_side("tb_write 8 bytes", loop_write, "LTTng-UST u64 tracepoint", lttng_src_u64);
	side_by_side("u64 tracepoint", loop_u64, "LTTng-UST u64 tracepoint", lttng_src_u64);
	side_by_side("22-char string tracepoint", loop_str, "LTTng-UST string tracepoint", lttng_src_str);
	side_by_side("printf, 3 ints", loop_printf3, "LTTng-UST 3-int tracepoint", lttng_src_ints3);
	side_by_side("printf, 3 ints", loop_printf3, "LTTng-UST tracef, 3 ints", lttng_src_tracef);
#else
	(void)loop_write;
	printf("  LTTng-UST peers                    not built (liblttng-ust-dev missing)\n");
#endif
	if (json) {
		fputs("\n]\n", json);
		fclose(json);
	}
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return 0;
}
