// SPDX-License-Identifier: MIT
/*
 * tsc2nsec.h - a TSC cycle count as nanoseconds, the way a trace.dat's
 * TSC2NSEC option says: ns = cycles * mult >> shift.  The one formula for
 * every reader that turns stamps or time fields into nanoseconds.
 */
#ifndef TB_TSC2NSEC_H
#define TB_TSC2NSEC_H

#include <stdint.h>

/* cycles in ns; mult 0 means no conversion (cycles returned as they are). */
static inline uint64_t tsc2nsec(uint64_t cycles, uint32_t mult, uint32_t shift)
{
	/* 128 bits: a cycle count times mult overflows 64 within hours of uptime. */
	return mult ? (uint64_t)(((unsigned __int128)cycles * mult) >> shift) : cycles;
}

#endif
