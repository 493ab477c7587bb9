/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/chrome.h - a capture or trace.dat as Chrome / Perfetto
 * trace-event JSON, the format ui.perfetto.dev, chrome://tracing and
 * speedscope open.
 *
 * Tracks: one process "CPUs" (pid TB_CHROME_CPU_PID) with a thread per
 * CPU, and one track per task (pid = tid = the task's pid; the kernel's
 * records do not say which tasks are threads of one process).  Events:
 *   - sched_switch: a complete ("X") slice on the CPU's track named after
 *     the task that ran, from the switch that put it on to the one that
 *     took it off, and the same slice ("running") on the task's track;
 *     the idle task gets none;
 *   - funcgraph_exit (tracebuf's function tracing, or the kernel's): a
 *     complete slice from calltime to rettime on the task's track, named
 *     after the function (user symbols, then kernel symbols, then hex);
 *   - tracebuf:pmu_counters: a counter ("C") per field on the task's process;
 *     tracebuf:pmu_sample: an instant, and a counter of the periods summed;
 *   - everything else: an instant ("i", thread scope) named after the event,
 *     its fields as args.
 * Metadata ("M") events name every process and thread.  Time stamps are
 * microseconds with three decimals (the clock's nanoseconds, exactly).
 * Strings are escaped; bytes outside ASCII are written as \u00XX, so the
 * output is valid JSON (and UTF-8) whatever the trace holds.
 *
 * Ownership: nothing is kept past the call; the capture and the usyms stay
 * the caller's.
 */
#ifndef TRACEBUF_CHROME_H
#define TRACEBUF_CHROME_H

#include <stdint.h>
#include <stdio.h>

#include "tracebuf/capture.h"
#include "tracebuf/usyms.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Above the kernel's PID_MAX_LIMIT (4 Mi), so never a task's. */
#define TB_CHROME_CPU_PID 10000000

struct tb_chrome_opts {
	struct tb_usyms *usyms; /* names for user-space function addresses; NULL: kernel symbols only */
};

struct tb_chrome_totals {
	uint64_t records;	/* data records read */
	uint64_t cpu_slices;	/* X events on CPU tracks */
	uint64_t task_slices;	/* X "running" events on task tracks */
	uint64_t calls;		/* X events of function calls */
	uint64_t counters;	/* C events */
	uint64_t instants;	/* i events */
	uint64_t tracks;	/* tasks named by metadata */
	uint64_t lost_pages;	/* sub-buffers flagged as following lost events */
};

/*
 * Write the whole capture as one JSON object {"traceEvents": [...], ...}.
 * 0, -EIO when writing failed, -ENOMEM.  Damaged sub-buffers are reported
 * through the capture and skipped.  totals may be NULL.
 */
int tb_chrome_json_write(struct tb_capture *c, FILE *out, const struct tb_chrome_opts *opts,
			 struct tb_chrome_totals *totals);

#ifdef __cplusplus
}
#endif
#endif
