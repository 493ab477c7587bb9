/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/offcpu.h - time tasks spent off CPU, by the stack they blocked
 * in, as folded stacks and as an SVG flame graph.
 *
 * From a capture or trace.dat with sched:sched_switch: a task's off-CPU
 * interval runs from the sched_switch that takes it off a CPU (it is
 * prev_pid) to the next that puts it on one (it is next_pid), on any CPU.
 * The stack is the kernel_stack record the `stacktrace` trigger on
 * sched_switch writes right after the switch on the same CPU (and the
 * user_stack record of options/userstacktrace, where recorded).  With
 * sched_wakeup (or sched_waking) recorded, each interval splits into the
 * time blocked (switch-out to wakeup) and the time waiting for a CPU
 * (wakeup to switch-in).  The idle task (pid 0) is left out.
 *
 * A folded line is `comm;root;...;leaf` - user frames (hex addresses)
 * first, then kernel frames by name - with its value; tracing's own
 * frames at the leaf (trace_event_raw_event_sched_switch, __traceiter_*)
 * are dropped.  Lines are sorted by text, identical texts summed.
 *
 * Ownership: tb_offcpu_run() returns a result freed by tb_offcpu_free();
 * its lines and their strings are the result's.  The capture stays the
 * caller's.
 */
#ifndef TRACEBUF_OFFCPU_H
#define TRACEBUF_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/capture.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One folded stack: frames joined by ';', and its value (off-CPU nanoseconds here). */
struct tb_folded {
	char *stack;
	uint64_t value;
};

struct tb_offcpu_opts {
	/* Count only the time blocked (to the wakeup), not waiting for a CPU; needs sched_wakeup. */
	bool blocked_only;
	/* Leave out intervals that began with a preemption (prev_state R): waiting, not blocking. */
	bool no_preempted;
	/* Only tasks whose comm (as the switch-out names it, 15 bytes at most) is this; NULL: all. */
	const char *comm;
};

struct tb_offcpu_totals {
	uint64_t records;	  /* data records read */
	uint64_t switches;	  /* sched_switch records */
	uint64_t intervals;	  /* switch-out .. switch-in pairs counted */
	uint64_t kernel_stacks;	  /* of them, with a kernel stack */
	uint64_t user_stacks;	  /* of them, with a user stack */
	uint64_t preempted;	  /* of them, begun by a preemption */
	uint64_t woken;		  /* of them, with a wakeup seen */
	uint64_t off_ns;	  /* their summed length */
	uint64_t blocked_ns;	  /* of it, switch-out to wakeup (intervals with one) */
	uint64_t runq_ns;	  /* of it, wakeup to switch-in */
	uint64_t open_at_end;	  /* tasks still off CPU when the trace ends (not counted) */
	uint64_t inferred;	  /* intervals whose switch-in is missing, ended at their wakeup */
	uint64_t dropped;	  /* intervals whose switch-in is missing and no wakeup came (not counted) */
	uint64_t lost_pages;	  /* sub-buffers flagged as following lost events */
	uint64_t bad_pages;	  /* sub-buffers that did not decode */
	bool have_wakeup, have_kernel_stack, have_user_stack; /* the trace has the events' formats */
	/* intervals whose switch-in is stamped before their switch-out (time going back: damage; not counted) */
	uint64_t backwards;
};

struct tb_offcpu;

/*
 * Read the whole capture.  0 with *out set; -ENOENT when the capture has
 * no sched_switch format (nothing to pair: record sched:sched_switch),
 * -EINVAL when blocked_only is asked of a trace without sched_wakeup,
 * -ENOMEM.  Damaged sub-buffers are reported through the capture and
 * skipped.  totals may be NULL.
 */
int tb_offcpu_run(struct tb_capture *c, const struct tb_offcpu_opts *opts, struct tb_offcpu **out,
		  struct tb_offcpu_totals *totals);
/* The folded stacks, sorted by text; *n set to their number. */
const struct tb_folded *tb_offcpu_stacks(const struct tb_offcpu *r, size_t *n);
/* `STACK N` lines, N in microseconds (rounded; lines that round to 0 left out).  0 or -EIO. */
int tb_offcpu_write_folded(const struct tb_offcpu *r, FILE *out);
void tb_offcpu_free(struct tb_offcpu *r);

struct tb_flame_opts {
	const char *title;    /* NULL: "Flame Graph" */
	const char *subtitle; /* NULL: none */
	const char *unit;     /* value unit shown in titles after scaling: NULL "us" */
	double scale;	      /* value * scale is shown in unit; 0: 1e-3 (ns as us) */
	int width;	      /* pixels; 0: 1200 */
	bool cold;	      /* blue-green palette (off-CPU), else warm (on-CPU) */
};

/*
 * An SVG flame graph of lines: one box per frame, widths proportional to
 * value, children above their parent, each box with a <title> (frame,
 * value, share) shown on hover; no script.  0 or -EIO / -ENOMEM.
 */
int tb_flamegraph_svg(const struct tb_folded *lines, size_t n, const struct tb_flame_opts *opts,
		      FILE *out);

/*
 * The off-CPU flame graph of r as `tracebuf offcpu --svg` draws it: cold
 * palette, microseconds, title (NULL: "Off-CPU Time Flame Graph") and a
 * subtitle naming input with t's intervals and seconds (o: the options r
 * was run with, for "blocked time only"; NULL: none).  0 or -EIO / -ENOMEM.
 */
int tb_offcpu_flamegraph(const struct tb_offcpu *r, const struct tb_offcpu_totals *t,
			 const struct tb_offcpu_opts *o, const char *input, const char *title, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
