/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/stats.h - per-CPU counters with the kernel's meanings, plus the
 * arithmetic the kernel's stats file leaves to the reader.
 *
 * Identities (per CPU, exact once writers are quiet):
 *   written   = entries + overrun + read        (every committed event)
 *   refused   = dropped + commit_overrun + too_big + nested + busy + blob_full
 *   lost      = overrun + refused                (never reached a reader)
 *   attempted = written + refused
 * Events a filter at the source left out (tb_events_set_filter) are counted
 * in filtered, apart from all of these: they were never attempted.
 *
 * Blobs (tracebuf/blob.h) are events like records: their reference records
 * are in the counts above.  Their own counters say what became of the bytes:
 * blob_written counts blobs committed into this CPU's blob area, blob_full
 * the blobs it refused for want of room; blob_read and blob_lost count the
 * references consuming readers took from this CPU's buffer whose blob was
 * intact or already overwritten.  Once every reference has been consumed or
 * lost, the sums over all CPUs give
 *   blob_written = blob_read + blob_lost + (references lost with their page).
 *
 * Ownership: a struct tb_cpu_stats is the caller's, filled by value (it
 * holds no pointer); nothing here allocates or keeps a pointer past the
 * call: the ring, the text parsed and the FILE * stay the caller's.
 */
#ifndef TRACEBUF_STATS_H
#define TRACEBUF_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_cpu_stats {
	/* the kernel's per_cpu/cpuN/stats lines */
	uint64_t entries;        /* committed and not yet consumed */
	uint64_t overrun;        /* overwritten, whole sub-buffers at a time */
	uint64_t commit_overrun; /* refused: lapped an uncommitted sub-buffer (0 by design here) */
	uint64_t bytes;          /* unconsumed bytes incl. record headers */
	uint64_t oldest_ts;      /* raw clock: first event of the oldest sub-buffer held */
	uint64_t now_ts;         /* raw clock now */
	uint64_t dropped;        /* refused: full in producer/consumer mode */
	uint64_t read;           /* consumed */
	/* ours */
	uint64_t too_big, nested, busy;
	uint64_t blob_full, blob_written, blob_read, blob_lost;
	uint64_t written, refused, lost, attempted;
	uint64_t newest_ts;      /* raw clock of the newest event held */
	int has_events;          /* oldest/newest are meaningful */
	uint64_t filtered;       /* events a filter at the source left out (tracebuf/filter.h): not lost */
};

/* 0, or -EINVAL for a NULL ring or st or a CPU the ring does not have. */
int tb_stats_read(struct tb_ring *ring, unsigned cpu, struct tb_cpu_stats *st);

/* Fill the derived fields from the raw ones (used for kernel stats files too; NULL: nothing). */
void tb_stats_derive(struct tb_cpu_stats *st);

/*
 * Print in the kernel's stats-file format, then the derived lines:
 *   written, lost (with its share of attempted), and the window of time the
 *   buffer still holds; for a ring with a blob area a "blobs:" line with
 *   written, read, overwritten and refused (area full).  ns_clock:
 *   timestamps are ns (print sec.usec).
 * ts values are printed through tb_ring_to_ns when ring is not NULL.
 * A NULL out or st prints nothing.
 */
void tb_stats_print(FILE *out, const struct tb_ring *ring, const struct tb_cpu_stats *st, int ns_clock);

/*
 * Parse the text of a kernel per_cpu/cpuN/stats file (times "sec.usec"
 * become ns; on other clocks they stay counts).  0, or -EINVAL when a line
 * the kernel always prints is missing or its value is not a number; then
 * *err (if not NULL) gets the byte offset and the reason (its file is left
 * to the caller).  A NULL text or st is -EINVAL.
 */
struct tb_problem; /* tracebuf/problem.h */
int tb_stats_parse_kernel(const char *text, struct tb_cpu_stats *st, struct tb_problem *err);

#ifdef __cplusplus
}
#endif
#endif
