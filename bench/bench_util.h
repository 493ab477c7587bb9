/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what every benchmark here needs around its measurement:
 * a wall clock in nanoseconds and pinning the calling thread to one CPU.
 * Not instrumented, so bench_func (built with -finstrument-functions)
 * measures only the functions it means to.
 */
#ifndef TRACEBUF_BENCH_UTIL_H
#define TRACEBUF_BENCH_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

static inline __attribute__((no_instrument_function, unused)) double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The calling thread on cpu only (best effort: a bench still runs unpinned). */
static inline __attribute__((no_instrument_function, unused)) void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* TSC ticks per nanosecond, measured over 100 ms of the wall clock. */
static inline __attribute__((no_instrument_function, unused)) double tsc_ticks_per_ns(void)
{
	struct timespec pause = {0, 100 * 1000 * 1000};
	double t0 = now_ns();
	uint64_t c0 = __rdtsc();

	nanosleep(&pause, NULL);
	return (double)(__rdtsc() - c0) / (now_ns() - t0);
}

#endif
