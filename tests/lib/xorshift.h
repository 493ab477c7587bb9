/*
 * A small deterministic random-number generator for tests (xorshift64):
 * the same sequence on every run, so a failure can be replayed.  One
 * state per test program.
 */
#ifndef TB_TESTS_XORSHIFT_H
#define TB_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#endif
