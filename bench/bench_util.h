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
#include <time.h>

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

#endif
