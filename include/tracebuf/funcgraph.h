/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/funcgraph.h - a trace of function entries and exits printed as
 * the kernel's function_graph tracer prints its `trace` file:
 *
 *     # tracer: function_graph
 *     #
 *     # CPU  DURATION                  FUNCTION CALLS
 *     # |     |   |                     |   |   |   |
 *      0)               |  parse_args() {
 *      0)   0.312 us    |    skip_blanks();
 *      0)   2.540 us    |  }
 *
 * A call whose exit is the next record on the same CPU is a leaf and takes
 * one line; others open with "name() {" and close with "}" (or
 * "} /\* name *\/" when the entry was not seen).  Durations are rettime -
 * calltime of the exit record, with the kernel's overhead marks (+ over
 * 10 us, ! 100 us, # 1 ms, * 10 ms, @ 100 ms, $ 1 s).  A change of task on
 * a CPU prints the kernel's "=>" banner; other events print as comments,
 * losses as "CPU:N [LOST M EVENTS]".
 *
 * Entries and exits are recognised by name - events called funcgraph_entry
 * and funcgraph_exit in any system, with the kernel's field names (func,
 * depth; overrun, calltime, rettime) - so the kernel's own records print
 * the same way as tracebuf's (tracebuf/func.h).
 *
 * Names come from the user-space symbols (tracebuf/usyms.h) when given,
 * else from the schema's kernel symbols, else the address prints as hex.
 *
 * Ownership: nothing here keeps a pointer past the call.
 */
#ifndef TRACEBUF_FUNCGRAPH_H
#define TRACEBUF_FUNCGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/capture.h"
#include "tracebuf/usyms.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's funcgraph-* options; all false gives its defaults. */
struct tb_graph_opts {
	bool no_header;
	bool proc;        /* funcgraph-proc: a TASK/PID column */
	bool abstime;     /* funcgraph-abstime: the entry's time stamp */
	bool tail;        /* funcgraph-tail: "} /\* name *\/" on every close */
	bool overrun;     /* funcgraph-overrun: " (Overruns: N)" after each close */
	bool retaddr;     /* funcgraph-retaddr: the call site after each entry */
	bool no_cpu;      /* nofuncgraph-cpu */
	bool no_duration; /* nofuncgraph-duration */
	bool no_overhead; /* nofuncgraph-overhead */
};

struct tb_graph_totals {
	uint64_t entries;    /* entry records */
	uint64_t exits;      /* exit records (leaves included) */
	uint64_t leaves;     /* entry+exit pairs printed as one line */
	uint64_t comments;   /* other events */
	uint64_t lost_lines, lost_events;
	uint64_t bad_records; /* reported and left out */
	unsigned long problems;
};

/*
 * Print the capture as a call graph.  usyms may be NULL.  0 if no problem
 * was reported, 1 if some input was damaged (the rest is printed),
 * negative errno if the output could not be written.
 */
int tb_funcgraph_write(struct tb_capture *c, struct tb_usyms *usyms, FILE *out,
		       const struct tb_graph_opts *opts, struct tb_graph_totals *totals);

#ifdef __cplusplus
}
#endif
#endif
