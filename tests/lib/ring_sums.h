/* SPDX-License-Identifier: MIT */
/*
 * ring_sums.h - a ring's counters summed over its CPUs (tb_stats_read,
 * derived lines included), for tests that balance books across CPUs.
 */
#ifndef TESTS_LIB_RING_SUMS_H
#define TESTS_LIB_RING_SUMS_H

#include <stdint.h>

#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

struct ring_sums {
	uint64_t filtered, lost, refused; /* refused: too_big + nested + busy + dropped */
};

static inline struct ring_sums ring_sums(struct tb_ring *ring)
{
	struct ring_sums t = {0, 0, 0};

	for (unsigned c = 0; c < tb_ring_ncpus(ring); c++) {
		struct tb_cpu_stats st;
		if (tb_stats_read(ring, c, &st) == 0) {
			tb_stats_derive(&st);
			t.filtered += st.filtered;
			t.lost += st.lost;
			t.refused += st.too_big + st.nested + st.busy + st.dropped;
		}
	}
	return t;
}

#endif
