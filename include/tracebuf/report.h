/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/report.h - decoded events as the text of the kernel's `trace`
 * file.
 *
 * tb_render_event() prints one event the way the kernel does: TASK-PID,
 * [CPU], the five irqs-off / need-resched / hardirq-softirq / preempt-depth
 * / migrate-disable columns, the time stamp, the event name and its fields
 * (rendered by libtraceevent from the event's print fmt; the ftrace
 * internal events print, bprint, bputs and raw_data are laid out the way
 * the kernel's own output functions do).
 *
 * tb_report_write() prints a whole capture or live instance: the `trace`
 * header, then the events of all CPUs merged by time stamp, with a
 * "CPU:N [LOST M EVENTS]" line before the first event of every sub-buffer
 * that carries the lost flag.  A flag without a stored count takes its
 * count from the CPU's stats (exact, or "LOST at least M EVENTS" when only
 * a lower bound is sound), else prints "CPU:N [LOST EVENTS]"; the rule is in
 * docs/man/report.roff (tracebuf-report(1)).  Damaged input is reported
 * through the capture's tb_problem_fn (file, byte offset, reason) and
 * skipped; decoding goes on.
 *
 * Ownership: nothing here keeps a pointer past the call; the capture, the
 * schema and the FILE * stay the caller's.
 *
 * Misuse: a NULL schema, event, capture or FILE * is -EINVAL
 * (tb_render_header: nothing printed).
 */
#ifndef TRACEBUF_REPORT_H
#define TRACEBUF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/capture.h"
#include "tracebuf/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One event record: where it was written, when, and its payload. */
struct tb_render_record {
	int cpu;
	uint64_t ts;      /* clock value; nanoseconds for nanosecond clocks */
	const void *data; /* payload, common header first; borrowed */
	uint32_t len;     /* payload bytes */
};

struct tb_render_opts {
	bool ns_clock; /* print ts as seconds.microseconds (else the raw count) */
	unsigned trace_options; /* TB_TOPT_* bits (tracebuf/capture.h): how the capture's trace_options depart from the defaults */
};

enum {
	TB_RENDER_OK = 0,
	TB_RENDER_UNKNOWN = 1, /* no format for the ID: "[UNKNOWN EVENT id=N]" printed */
};

/*
 * Print ev as one `trace` line, newline included.  Returns TB_RENDER_OK,
 * TB_RENDER_UNKNOWN, or -EINVAL when the record does not hold what its
 * format describes: nothing is printed then and *err says why (err->offset
 * relative to the payload start, err->file untouched).
 */
int tb_render_event(struct tb_schema *s, const struct tb_render_record *ev,
		    const struct tb_render_opts *opts, FILE *out, struct tb_problem *err);

/*
 * The comment lines the kernel's `trace` file starts with (default options:
 * irq-info on, no tgid column): tracer, entries-in-buffer/entries-written
 * and #P, and the column legend.
 */
void tb_render_header(FILE *out, const char *tracer, uint64_t entries, uint64_t written,
		      int cpus);

/* As tb_render_header(), laid out for the TB_TOPT_* trace_options bits (0: the default). */
void tb_render_header_opts(FILE *out, const char *tracer, uint64_t entries, uint64_t written,
			   int cpus, unsigned trace_options);

struct tb_filter_set; /* tracebuf/filter.h */

struct tb_report_opts {
	bool no_header;  /* events only */
	bool count_only; /* decode and merge every record, print nothing: the totals alone */
	struct tb_filter_set *filter; /* -F: only the records it keeps (NULL: all); borrowed */
	const char *options; /* --options: trace_options words over the capture's own; NULL: none */
};

struct tb_report_totals {
	uint64_t events;         /* event lines printed, unknown ones included */
	uint64_t unknown_events; /* of which "[UNKNOWN EVENT id=N]" */
	uint64_t bad_records;    /* records reported and left out */
	uint64_t pages;          /* sub-buffers read */
	uint64_t bad_pages;      /* sub-buffers that failed to decode (wholly or in part) */
	uint64_t lost_lines;     /* "CPU:N [LOST ...]" lines printed */
	uint64_t lost_events;    /* sum of their counts (lower bounds as printed) */
	uint64_t entries, written; /* the header's E/W */
	unsigned long problems;  /* all problems reported, loading included */
	uint64_t blobs_lost;     /* of events: "CPU:N [BLOB LOST: ...]", a blob reference whose bytes are not there */
};

/*
 * Print the whole report.  0 if no problem was reported, 1 if some input
 * was damaged (all the rest is printed), negative errno if the report
 * could not be written.  totals may be NULL.
 */
int tb_report_write(struct tb_capture *c, FILE *out, const struct tb_report_opts *opts,
		    struct tb_report_totals *totals);

/*
 * After a report: one line per event printed, with its records and the
 * printer that printed them (the kernel's own, the compiled print fmt, or
 * libtraceevent with the reason our compiler gave), for `report --stat`.
 */
void tb_report_write_printers(struct tb_capture *c, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
