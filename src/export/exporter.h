/* SPDX-License-Identifier: MIT */
/*
 * exporter.h - the export stage's one interface: every writer of a trace
 * (tracebuf/export.h lists them) is a struct tb_exporter_kind, one file
 * each, with a row in the table of exporters.c.  exporters.c runs them
 * all the same way: it opens the input, drives the kind's hooks, draws
 * progress, and counts the damage it and the capture reported.
 *
 * A kind has one of three shapes, by what its writer really needs:
 *
 *  - pages: a writer that copies sub-buffers as they are (a capture
 *    directory).  page() gets each CPU's sub-buffers in order, already
 *    checked as report reads them (export_page.c): a damaged one is said
 *    (file, byte) and arrives cut to its intact records, or not at all;
 *  - events: a writer of records (Chrome JSON, and the SQL loaders to
 *    come).  event() gets every data record, all CPUs merged by time
 *    stamp (analyze/merge.h: nanoseconds where the capture converts);
 *    loss() every sub-buffer that follows lost events (cpu, the page's
 *    time, the count when the kernel stored one; lent for the call), before
 *    that CPU's records from the page; blob() every blob reference (NULL: passed
 *    over).  Process and thread names: the capture's schema
 *    (tb_schema_comm), which begin() may keep;
 *  - whole: a writer that needs an analysis of the whole trace first
 *    (folded stacks and the flame graph: off-CPU intervals paired across
 *    the trace; the ring SVG: every CPU's pages side by side), or that
 *    reads capture directories itself (trace.dat: it copies their files
 *    and joins several).  whole() does all of it.
 *
 * Hooks in order: begin (output opened), then page / event+loss+blob /
 * whole, then finish (write what is left, close the output) - finish is
 * called after an error too (begin's included), with x->failed set, so a
 * kind closes what it opened; it must not claim the file is good then.
 * An events kind's finish reads x->merge->fatal: a merge cut short.  Every hook returns 0
 * or a negative errno (said on stderr by the hook, naming the file: the
 * driver adds nothing, so one problem is one message).
 *
 * Ownership: the run owns the capture and the merge; a kind's state is
 * allocated (state_size bytes, zeroed) and freed by the driver - a kind
 * frees only what it allocated inside it, in finish.
 */
#ifndef TRACEBUF_EXPORT_EXPORTER_H
#define TRACEBUF_EXPORT_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/merge.h"
#include "tracebuf/capture.h"
#include "tracebuf/export.h"

struct progress;

enum export_input {
	EXPORT_CAPTURE, /* the driver opens opts->in with tb_capture_open */
	EXPORT_DIRS,	/* the kind reads opts->in (and opts->buffers) as capture directories itself */
};

/* What every hook gets. */
struct export_run {
	const struct tb_export_opts *o;
	const struct tb_exporter_kind *kind;
	const char *tool;		 /* o->tool or "tracebuf" */
	struct tb_capture *capture;	 /* EXPORT_CAPTURE kinds; NULL for EXPORT_DIRS */
	struct merge *merge;		 /* events kinds, from begin on (its mult/shift: the stamps' units) */
	struct tb_export_result *res;	 /* the kind adds its problems when it reports any itself */
	void *state;			 /* the kind's: state_size bytes, zeroed */
	bool failed;			 /* finish: an earlier hook failed; close, do not complete */
	int loss_rc;			 /* private: the first error of loss() or problem() */
	struct progress *progress;	 /* private: the line export_progress() draws */
};

struct tb_exporter_kind {
	const char *name;     /* for --format */
	const char *suffixes; /* output name endings, space separated ("/": a directory); "" none */
	const char *help;     /* one line for --help */
	enum export_input input;
	size_t state_size;
	int (*begin)(struct export_run *x);
	/* pages: */
	int (*page)(struct export_run *x, int cpu, const uint8_t *page, size_t size);
	/* events: */
	int (*event)(struct export_run *x, const struct merged_record *r);
	int (*blob)(struct export_run *x, const struct merged_record *r);
	int (*loss)(struct export_run *x, const struct merge_loss *l);
	/*
	 * Any shape, optional: each problem the capture reports (said on stderr
	 * already), from its open on - so before begin too; lent for the call.
	 * A loader keeps them as rows (SQL's lost table).
	 */
	int (*problem)(struct export_run *x, const struct tb_problem *d);
	/* whole: */
	int (*whole)(struct export_run *x);
	int (*finish)(struct export_run *x);
};

/* The kinds (one file each). */
extern const struct tb_exporter_kind export_tracedat, export_capture_dir, export_chrome_json,
    export_folded, export_flamegraph, export_ring_svg, export_sqlite,
    export_clickhouse;

/* "TOOL: FILE: reason" on stderr (a message naming the user's file); returns rc. */
int export_say(const struct export_run *x, int rc, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/*
 * A whole kind's progress: done of total input bytes (total 0: unknown, or
 * as told before), drawn as the driver draws its own (only when asked, at
 * most 10 times a second, taken away at the end).
 */
void export_progress(struct export_run *x, uint64_t done, uint64_t total);
/* fopen(x->o->out, "w"), said when it fails (NULL). */
FILE *export_fopen(const struct export_run *x);
/* fclose(f) after a writer's rc: the first error, said with the output's name. */
int export_fclose(const struct export_run *x, FILE *f, int rc);

#endif
