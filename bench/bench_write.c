/*
 * bench_write - cost of the write path, side by side with its peers.
 *
 * Prints ns per event for an 8-byte payload written with tb_write and with
 * tb_reserve/tb_commit, one thread and two threads on two CPUs (each on its
 * own CPU buffer), next to a bare rdtsc loop, LTTng-UST (built with
 * -DHAVE_LTTNG; scripts/bench.sh starts an overwrite-mode snapshot session
 * so its events are really recorded) and the kernel's trace_marker (a
 * write(2) into a private tracefs instance), all in the same run, because
 * absolute times on shared machines drift.  Best of BENCH_RUNS.
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

#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

#define EVENTS (20 * 1000 * 1000)

static struct tb_ring *ring;
#ifdef HAVE_LTTNG
void lttng_loop(long n); /* bench/lttng_peer.c */
#endif
static volatile uint64_t sink;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void loop_rdtsc(long n)
{
	uint64_t acc = 0;
	for (long i = 0; i < n; i++)
		acc += __rdtsc();
	sink = acc;
}

static void loop_write(long n)
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
	long n;
	int cpu;
	double ns;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	pin(j->cpu);
	double t0 = now_ns();
	j->fn(j->n);
	j->ns = now_ns() - t0;
	return NULL;
}

/* ns per event on `threads` CPUs at once: elapsed / events per thread (best of runs). */
static double measure(void (*fn)(long), int threads, int runs)
{
	double best = 1e30;

	for (int r = 0; r < runs; r++) {
		pthread_t t[2];
		struct job j[2];
		double worst = 0;
		for (int i = 0; i < threads; i++) {
			j[i] = (struct job){fn, EVENTS, i, 0};
			pthread_create(&t[i], NULL, run_job, &j[i]);
		}
		for (int i = 0; i < threads; i++) {
			pthread_join(t[i], NULL);
			if (j[i].ns > worst)
				worst = j[i].ns;
		}
		/* aggregate: all threads' events over the slowest thread's time */
		double per = worst / ((double)EVENTS * threads);
		if (per < best)
			best = per;
	}
	return best;
}

/* The kernel's trace_marker in our own instance: ns per 8-byte write, or <0 if unavailable. */
static double measure_trace_marker(int runs)
{
	const char *inst = "/sys/kernel/tracing/instances/tb-bench";
	char path[256];
	double best = -1;
	int fd;

	if (mkdir(inst, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/trace_marker", inst);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		pin(0);
		for (int r = 0; r < runs; r++) {
			const long n = 200000;
			double t0 = now_ns();
			for (long i = 0; i < n; i++)
				if (write(fd, "bench123", 8) != 8)
					break;
			double per = (now_ns() - t0) / (double)n;
			if (best < 0 || per < best)
				best = per;
		}
		close(fd);
	}
	rmdir(inst);
	return best;
}

int main(void)
{
	int runs = getenv("BENCH_RUNS") ? atoi(getenv("BENCH_RUNS")) : 5;
	struct tb_ring_opts o;
	double rdtsc, w1, w2, r1, marker;

	tb_ring_opts_default(&o);
	o.size_kb = 4096;
	if (tb_ring_create(&ring, &o) < 0) {
		fprintf(stderr, "bench_write: cannot create the ring\n");
		return 1;
	}
	rdtsc = measure(loop_rdtsc, 1, runs);
	w1 = measure(loop_write, 1, runs);
	w2 = measure(loop_write, 2, runs);
	r1 = measure(loop_reserve, 1, runs);
	marker = measure_trace_marker(runs);
#ifdef HAVE_LTTNG
	double l1 = measure(lttng_loop, 1, runs), l2 = measure(lttng_loop, 2, runs);
#endif

	printf("bench_write: 8-byte payload, %d M events per thread, best of %d, publish=%s\n", EVENTS / 1000000,
	       runs, tb_ring_uses_rseq(ring) ? "rseq" : "try-lock");
	printf("  rdtsc alone                 %6.2f ns\n", rdtsc);
	printf("  tb_write, 1 thread          %6.2f ns/event\n", w1);
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
	tb_ring_destroy(ring);
	return 0;
}
