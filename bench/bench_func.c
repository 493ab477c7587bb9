/*
 * bench_func - cost of function entry/exit tracing (tracebuf/func.h): one
 * call of an instrumented function with tracing on (an entry and an exit
 * record), beside a bare rdtsc, a plain call, the same call with tracing
 * off, and with the function excluded at run time.
 *
 * This file is built with -finstrument-functions (the Makefile); every
 * function here but the measured ones is no_instrument_function.  Each
 * figure is the fastest of many batches of 1000 calls timed with the TSC
 * on one pinned CPU: other load only ever slows a batch down.  Also writes
 * the figures as JSON (case, threads, tracebuf_ns, peer, peer_ns, ratio =
 * peer_ns / tracebuf_ns) to argv[1], or to results-func.json beside the
 * program.
 *
 * A traced call reads the TSC twice: each hook once, for its record's
 * stamp (tb_write_at) and the time in the payload (calltime, rettime).
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

#include "tracebuf/func.h"
#include "tracebuf/ring.h"

#define NOTRACE __attribute__((no_instrument_function))
#define BATCH 1000
#define BATCHES 20000

static volatile uint64_t sink;

/* The measured functions: instrumented, kept out of line and unchanged. */
__attribute__((noipa)) void traced_call(uint64_t x);
__attribute__((noipa)) void traced_call(uint64_t x)
{
	sink = x;
}

__attribute__((noipa)) void excluded_call(uint64_t x);
__attribute__((noipa)) void excluded_call(uint64_t x)
{
	sink = x;
}

/* The same body without hooks: what a call costs anyway. */
__attribute__((noipa)) NOTRACE void plain_call(uint64_t x);
__attribute__((noipa)) NOTRACE void plain_call(uint64_t x)
{
	sink = x;
}

static NOTRACE double tsc_per_ns(void)
{
	struct timespec pause = {0, 50 * 1000 * 1000};
	double t0 = now_ns();
	uint64_t c0 = __rdtsc();

	nanosleep(&pause, NULL);
	return (double)(__rdtsc() - c0) / (now_ns() - t0);
}

enum what { RDTSC, PLAIN, TRACED, EXCLUDED };

/* Fastest batch, in TSC ticks per call. */
static NOTRACE double fastest(enum what w)
{
	uint64_t best = UINT64_MAX;

	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = __rdtsc();
		switch (w) {
		case RDTSC:
			for (int i = 0; i < BATCH; i++)
				sink = __rdtsc();
			break;
		case PLAIN:
			for (int i = 0; i < BATCH; i++)
				plain_call((uint64_t)i);
			break;
		case TRACED:
			for (int i = 0; i < BATCH; i++)
				traced_call((uint64_t)i);
			break;
		case EXCLUDED:
			for (int i = 0; i < BATCH; i++)
				excluded_call((uint64_t)i);
			break;
		}
		uint64_t t = __rdtsc() - t0;
		if (t < best)
			best = t;
	}
	return (double)best / BATCH;
}

struct result {
	const char *name;
	double ns;
};

NOTRACE int main(int argc, char **argv)
{
	struct tb_ring *ring;
	struct tb_func_thread_stats st;
	cpu_set_t one;
	double f, rdtsc, plain, off, on, excl;
	char path[4096];
	FILE *json;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	if (tb_ring_new(&ring, NULL) < 0)
		return 1;
	f = tsc_per_ns();
	rdtsc = fastest(RDTSC) / f;
	plain = fastest(PLAIN) / f;
	off = fastest(TRACED) / f;
	tb_func_exclude_addr((const void *)excluded_call, 0);
	tb_func_start(ring, NULL);
	on = fastest(TRACED) / f;
	excl = fastest(EXCLUDED) / f;
	tb_func_stop();
	tb_func_thread_stats(&st);

	printf("bench_func: -finstrument-functions entry+exit, fastest of %d batches of %d calls, CPU 0\n",
	       BATCHES, BATCH);
	printf("  rdtsc alone                   %6.2f ns (%.1f TSC ticks at %.3f GHz)\n", rdtsc, rdtsc * f, f);
	printf("  plain call (no hooks)         %6.2f ns\n", plain);
	printf("  instrumented, tracing off     %6.2f ns\n", off);
	printf("  instrumented, tracing on      %6.2f ns per call: an entry and an exit record, "
	       "%.2fx an rdtsc\n", on, on / rdtsc);
	printf("    of which the two records    %6.2f ns (%.2fx an rdtsc each)\n", on - plain,
	       (on - plain) / 2 / rdtsc);
	printf("  excluded at run time          %6.2f ns\n", excl);
	printf("  records written %llu entries, %llu exits\n", (unsigned long long)st.entries,
	       (unsigned long long)st.exits);
	if (argc > 1) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		const char *slash = strrchr(argv[0], '/');
		snprintf(path, sizeof(path), "%.*sresults-func.json", slash ? (int)(slash - argv[0] + 1) : 0,
			 argv[0]);
	}
	json = fopen(path, "w");
	if (json) {
		fprintf(json,
			"[\n"
			"  {\"case\": \"func_entry_exit_pair\", \"threads\": 1, \"tracebuf_ns\": %.3f, "
			"\"peer\": \"rdtsc\", \"peer_ns\": %.3f, \"ratio\": %.4f},\n"
			"  {\"case\": \"func_disabled_pair\", \"threads\": 1, \"tracebuf_ns\": %.3f, "
			"\"peer\": \"plain_call\", \"peer_ns\": %.3f, \"ratio\": %.4f}\n"
			"]\n",
			on, rdtsc, rdtsc / on, off, plain, plain / off);
		fclose(json);
	}
	tb_ring_free(ring);
	return 0;
}
