/* SPDX-License-Identifier: MIT */
/* clock.h - reading the ring's clock on the write path.  Internal. */
#ifndef TRACEBUF_CLOCK_H
#define TRACEBUF_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "tracebuf/ring.h"

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_read(enum tb_clock clock, _Atomic uint64_t *counter)
{
	switch (clock) {
	case TB_CLOCK_TSC:
#if defined(__x86_64__) || defined(__i386__)
		return __rdtsc();
#else
		return clock_ns(CLOCK_MONOTONIC_RAW);
#endif
	case TB_CLOCK_MONO:
		return clock_ns(CLOCK_MONOTONIC);
	case TB_CLOCK_BOOT:
		return clock_ns(CLOCK_BOOTTIME);
	case TB_CLOCK_COUNTER:
		/* relaxed: the count only has to be unique and increasing */
		return atomic_fetch_add_explicit(counter, 1, memory_order_relaxed) + 1;
	}
	return 0;
}

#endif
