/*
 * bench_write - cost of the write path, side by side with its peers.
 *
 * Prints ns per event for an 8-byte payload written with tb_write (fresh
 * values each event, as a tracepoint writes them; and, apart, one payload
 * bumped in place) and with tb_reserve/tb_commit, one thread and two
 * threads on two CPUs (each on its own CPU buffer), next to a bare rdtsc loop, LTTng-UST (built with
 * -DHAVE_LTTNG; scripts/bench.sh starts an overwrite-mode snapshot session
 * so its events are really recorded) and the kernel's trace_marker (a
 * write(2) into a private tracefs instance), all in the same run, because
 * absolute times on shared machines drift.
 *
 * Each thread times batches of 1000 events with the TSC and keeps the
 * fastest batch: interference from other load only ever slows a batch down,
 * so the minimum is the cost of the code itself (a contention that is always
 * there, such as shared cache lines, slows every batch and still shows).
 * Several threads run their batches at the same time; their rates add up.
 *
 * Writes results-write.json beside the program in the results.json shape
 * (case, threads, tracebuf_ns, peer, peer_ns, ratio = peer_ns / tracebuf_ns).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bench_util.h"

#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

#define BATCH 1000
#define BATCHES 20000

static struct tb_ring *ring;
#ifdef HAVE_LTTNG
void lttng_loop(long n); /* bench/lttng_peer.c */
#endif
static volatile uint64_t sink;

static void loop_rdtsc(long n)
{
	uint64_t acc = 0;
	for (long i = 0; i < n; i++)
		acc += __rdtsc();
	sink = acc;
}

/*
 * Two callers.  A tracepoint stores fresh values into its payload and
 * calls: loop_write.  loop_write_inplace bumps one payload in memory each
 * time (load, add, store, then our load of it: a chain through memory from
 * one event to the next that the caller adds).  Both are printed.
 */
static void loop_write(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t payload = 0x1122334455667788ull + (uint64_t)i;
		tb_write(ring, &payload, sizeof(payload));
	}
}

static void loop_write_inplace(long n)
{
	uint64_t payload = 0x1122334455667788ull;
	for (long i = 0; i < n; i++) {
		payload++;
		tb_write(ring, &payload, sizeof(payload));
	}
}

static void loop_reserve(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t *p = tb_reserve(ring, 8);
		*p = (uint64_t)i;
		tb_commit(ring, p);
	}
}

struct job {
	void (*fn)(long);
	long batch;
	int cpu;
	uint64_t best;     /* TSC ticks of the fastest batch */
	uint64_t best_ref; /* the same for a bare rdtsc batch run between fn's batches */
};

static double tsc_per_ns;

static void *run_job(void *arg)
{
	struct job *j = arg;
	pin(j->cpu);
	j->best = j->best_ref = UINT64_MAX;
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = __rdtsc();
		j->fn(j->batch);
		uint64_t t1 = __rdtsc();
		loop_rdtsc(j->batch); /* the reference, under the same conditions */
		uint64_t t2 = __rdtsc();
		if (t1 - t0 < j->best)
			j->best = t1 - t0;
		if (t2 - t1 < j->best_ref)
			j->best_ref = t2 - t1;
	}
	return NULL;
}

/* ns per event with `threads` threads on their own CPUs at once (aggregate: rates add). */
static int first_cpu;    /* 1-thread runs go here */
static double last_ratio; /* fn's batch over the interleaved rdtsc batch, last measure */

static double measure_batch(void (*fn)(long), int threads, long batch)
{
	pthread_t t[2];
	struct job j[2];
	double rate = 0; /* events per ns */

	last_ratio = 0;
	for (int i = 0; i < threads; i++) {
		j[i] = (struct job){fn, batch, threads == 1 ? first_cpu : i, 0, 0};
		pthread_create(&t[i], NULL, run_job, &j[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		rate += (double)batch / ((double)j[i].best / tsc_per_ns);
		last_ratio += (double)j[i].best / (double)j[i].best_ref / threads;
	}
	return 1.0 / rate;
}

static double measure(void (*fn)(long), int threads)
{
	return measure_batch(fn, threads, BATCH);
}

static void calibrate(void)
{
	tsc_per_ns = tsc_ticks_per_ns();
}

/* The kernel's trace_marker in our own instance: ns per 8-byte write, or <0 if unavailable. */
static int marker_fd = -1;

static void loop_marker(long n)
{
	for (long i = 0; i < n; i++)
		if (write(marker_fd, "bench123", 8) != 8)
			break;
}

static double measure_trace_marker(void)
{
	const char *inst = "/sys/kernel/tracing/instances/tb-bench";
	char path[256];
	double best = -1;

	if (mkdir(inst, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/trace_marker", inst);
	marker_fd = open(path, O_WRONLY);
	if (marker_fd >= 0) {
		best = measure_batch(loop_marker, 1, 20);
		close(marker_fd);
	}
	rmdir(inst);
	return best;
}

/* One results.json entry (case, threads, tracebuf_ns, peer, peer_ns, ratio = peer_ns / tracebuf_ns). */
static void json_entry(FILE *f, int *n, const char *name, int threads, double tb_ns, const char *peer,
		       double peer_ns)
{
	if (f && tb_ns > 0 && peer_ns > 0)
		fprintf(f, "%s  {\"case\": \"%s\", \"threads\": %d, \"tracebuf_ns\": %.3f, \"peer\": \"%s\", "
			"\"peer_ns\": %.3f, \"ratio\": %.4f}", (*n)++ ? ",\n" : "", name, threads, tb_ns, peer,
			peer_ns, peer_ns / tb_ns);
}

/*
 * build/bench/results-write.json, beside the program.  A peer that could not
 * be measured is left out, and so is LTTng-UST without a session: its
 * tracepoints are then disabled, a load and a branch.
 */
static void write_json(const char *argv0, const double *f, int have_lttng)
{
	enum { RDTSC, W1, WI, W2, R1, MARKER, L1, L2 };
	const char *slash = strrchr(argv0, '/');
	char path[4096];
	int n = 0;
	FILE *json;

	snprintf(path, sizeof(path), "%.*sresults-write.json", slash ? (int)(slash - argv0 + 1) : 0, argv0);
	json = fopen(path, "w");
	if (!json)
		return;
	fputs("[\n", json);
	json_entry(json, &n, "tb_write 8 bytes", 1, f[W1], "rdtsc", f[RDTSC]);
	json_entry(json, &n, "tb_write 8 bytes, payload bumped in place", 1, f[WI], "rdtsc", f[RDTSC]);
	json_entry(json, &n, "tb_reserve+tb_commit 8 bytes", 1, f[R1], "rdtsc", f[RDTSC]);
	json_entry(json, &n, "tb_write 8 bytes", 2, f[W2], "tb_write 8 bytes, 1 thread", f[W1]);
	/* Only a running session makes LTTng record (scripts/bench.sh starts one and says so). */
	if (have_lttng && getenv("TB_BENCH_LTTNG_SESSION")) {
		json_entry(json, &n, "tb_write 8 bytes", 1, f[W1], "LTTng-UST", f[L1]);
		json_entry(json, &n, "tb_write 8 bytes", 2, f[W2], "LTTng-UST", f[L2]);
	} else if (have_lttng) {
		printf("  (LTTng-UST left out of the JSON: no session recorded it; make bench starts one)\n");
	}
	json_entry(json, &n, "tb_write 8 bytes", 1, f[W1], "kernel trace_marker write", f[MARKER]);
	fputs("\n]\n", json);
	fclose(json);
	printf("  wrote %s\n", path);
}

int main(int argc, char **argv)
{
	struct tb_ring_opts o;
	double rdtsc, w1, w2, r1, marker;

	tb_ring_opts_default(&o);
	o.size_kb = 4096;
	if (tb_ring_new(&ring, &o) < 0) {
		fprintf(stderr, "bench_write: cannot create the ring\n");
		return 1;
	}
	calibrate();
	double rdtsc_cpu[2];
	for (first_cpu = 0; first_cpu < 2; first_cpu++)
		rdtsc_cpu[first_cpu] = measure(loop_rdtsc, 1);
	rdtsc = 2.0 / (1.0 / rdtsc_cpu[0] + 1.0 / rdtsc_cpu[1]);
	/* One thread on each CPU in turn: CPUs of a VM differ (interrupts, neighbours). */
	double w1_cpu[2], ratio = 0, wi_cpu[2], ratio_i = 0, wi;
	for (first_cpu = 0; first_cpu < 2; first_cpu++) {
		w1_cpu[first_cpu] = measure(loop_write, 1);
		ratio += last_ratio / 2;
		wi_cpu[first_cpu] = measure(loop_write_inplace, 1);
		ratio_i += last_ratio / 2;
	}
	first_cpu = 0;
	w1 = 2.0 / (1.0 / w1_cpu[0] + 1.0 / w1_cpu[1]); /* the mean single-CPU rate */
	wi = 2.0 / (1.0 / wi_cpu[0] + 1.0 / wi_cpu[1]);
	w2 = measure(loop_write, 2);
	r1 = measure(loop_reserve, 1);
	marker = measure_trace_marker();
#ifdef HAVE_LTTNG
	double l1 = measure(lttng_loop, 1), l2 = measure(lttng_loop, 2);
#endif

	printf("bench_write: 8-byte payload, fastest of %d batches of %d events per thread, publish=%s\n", BATCHES,
	       BATCH, tb_ring_uses_rseq(ring) ? "rseq" : "try-lock");
	printf("  rdtsc alone                 %6.2f ns (CPU 0: %.2f, CPU 1: %.2f; %.1f TSC ticks at %.3f GHz)\n",
	       rdtsc, rdtsc_cpu[0], rdtsc_cpu[1], rdtsc * tsc_per_ns, tsc_per_ns);
	printf("  tb_write, 1 thread          %6.2f ns/event (CPU 0: %.2f, CPU 1: %.2f), %.2fx an rdtsc\n"
	       "                              (each write batch next to an rdtsc batch on the same CPU)\n",
	       w1, w1_cpu[0], w1_cpu[1], ratio);
	printf("    payload bumped in place   %6.2f ns/event (CPU 0: %.2f, CPU 1: %.2f), %.2fx an rdtsc\n", wi,
	       wi_cpu[0], wi_cpu[1], ratio_i);
	printf("  tb_write, 2 threads         %6.2f ns/event (aggregate), %.2fx the 1-thread rate\n", w2, w1 / w2);
	printf("  tb_reserve+commit, 1 thread %6.2f ns/event\n", r1);
#ifdef HAVE_LTTNG
	printf("  LTTng-UST, 1 thread         %6.2f ns/event; tb_write takes %.2fx its time\n", l1, w1 / l1);
	printf("  LTTng-UST, 2 threads        %6.2f ns/event (aggregate), %.2fx its 1-thread rate; tb_write %.2fx\n",
	       l2, l1 / l2, w2 / l2);
#else
	printf("  LTTng-UST                   not built (liblttng-ust-dev missing)\n");
#endif
	if (marker > 0)
		printf("  kernel trace_marker write   %6.2f ns/event; tb_write is %.0fx faster\n", marker,
		       marker / w1);
	else
		printf("  kernel trace_marker write   unavailable (no tracefs or not root)\n");
#ifdef HAVE_LTTNG
	const double figures[] = {rdtsc, w1, wi, w2, r1, marker, l1, l2};
	write_json(argc > 0 ? argv[0] : "bench_write", figures, 1);
#else
	const double figures[] = {rdtsc, w1, wi, w2, r1, marker, 0, 0};
	write_json(argc > 0 ? argv[0] : "bench_write", figures, 0);
#endif
	tb_ring_free(ring);
	return 0;
}
