/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/func.h - function entry and exit, for code built with
 * -finstrument-functions: the shape of the kernel's function_graph tracer,
 * in user space.
 *
 * A program opts in by linking libtracebuf-func.a (before libtracebuf):
 *
 *     cc -finstrument-functions -c app.c
 *     cc app.o -ltracebuf-func -ltracebuf -lpthread
 *
 * That archive defines __cyg_profile_func_enter/exit, which GCC and clang
 * call at every instrumented function's entry and exit; programs that do
 * not link it are unaffected (glibc's own versions of those two do
 * nothing).  While tracing is on (tb_func_start), each call writes
 *
 *   tracebuf:funcgraph_entry  func, depth, parent_ip (the call site)
 *   tracebuf:funcgraph_exit   func, depth, overrun, calltime, rettime
 *
 * to the ring: the kernel's funcgraph_entry / funcgraph_exit records
 * (kernel/trace/trace_entries.h), with the call site that
 * -finstrument-functions hands over in the slot where the kernel's entry
 * has its args.  common_pid is the thread id; depth counts the recorded
 * calls open on that thread (0 for the outermost); calltime and rettime are
 * the ring's clock in nanoseconds, as tb_ring_to_ns() gives them (the
 * kernel's are trace_clock_local ns).  `tracebuf report` on a saved ring
 * (tb_func_save) prints the call graph the way the kernel's function_graph
 * tracer does, with names from the program's and its libraries' symbol
 * tables.
 *
 * What is not traced:
 *  - functions the compiler was told to leave alone
 *    (-finstrument-functions-exclude-function-list=NAME,...,
 *    -finstrument-functions-exclude-file-list=PATH,..., or
 *    __attribute__((no_instrument_function)));
 *  - functions excluded at run time (tb_func_exclude, or the
 *    TRACEBUF_FUNC_EXCLUDE environment variable read by tb_func_start: a
 *    comma-separated list of glob patterns, a pattern ending in ":children"
 *    also drops everything the function calls);
 *  - the tracer itself: it and everything it calls is built without
 *    instrumentation, and a per-thread guard drops calls that arrive while
 *    the thread is inside the tracer (a signal handler, or an instrumented
 *    build of the ring), so it never records itself or recurses.
 *
 * The per-thread stack holds TB_FUNC_STACK calls; calls deeper than that
 * are not recorded and are counted in the next exit record's overrun (the
 * kernel's meaning).  A longjmp over recorded calls abandons them: their
 * exits never come and the reader shows them open.
 *
 * A program started with TRACEBUF_FUNC_SAVE=DIR traces itself from before
 * main into a ring of its own (TRACEBUF_FUNC_KB KiB per CPU) and saves it to
 * DIR at exit, with no code of its own.
 *
 * The hooks are async-signal-safe when the archive is linked into the
 * executable (its TLS is then static).  Stop tracing and let running calls
 * finish before freeing the ring (tb_ring_free).
 *
 * Ownership: the ring stays the caller's; tb_func_start() borrows it until
 * tb_func_stop().  The library owns the exclusion list (a replaced one is
 * kept for the rest of the process: a hook may still be reading it) and
 * each thread's shadow stack (thread-local storage, nothing to free).  The
 * record descriptions (tb_func_entry_event, tb_func_exit_event) are
 * constant data.  tb_func_save() keeps nothing.
 */
#ifndef TRACEBUF_FUNC_H
#define TRACEBUF_FUNC_H

#include <stdint.h>

#include "tracebuf/describe.h"
#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* IDs the records carry unless tb_func_opts says otherwise. */
#define TB_FUNC_ENTRY_ID 65280
#define TB_FUNC_EXIT_ID 65281
/* Calls a thread's stack holds. */
#define TB_FUNC_STACK 128

/* Record layouts (the kernel's; fields as the format files describe them). */
struct tb_func_entry {
	struct tb_common_header hdr;
	uint64_t func;      /* entry address of the called function */
	uint32_t depth;     /* recorded calls already open on the thread */
	uint32_t pad;
	uint64_t parent_ip; /* the call site: where the call returns to */
};

struct tb_func_exit {
	struct tb_common_header hdr;
	uint64_t func;
	uint32_t depth;
	uint32_t overrun;   /* calls the thread could not record so far (stack full) */
	uint64_t calltime;  /* ns, the ring's clock */
	uint64_t rettime;
};

/* Their descriptions (system "tracebuf"), for a registry or tb_save_ring. */
extern const struct tb_evdesc tb_func_entry_event;
extern const struct tb_evdesc tb_func_exit_event;

struct tb_func_opts {
	uint16_t entry_id; /* 0: TB_FUNC_ENTRY_ID */
	uint16_t exit_id;  /* 0: TB_FUNC_EXIT_ID */
	/* Record calls only up to this depth (the kernel's max_graph_depth); 0: all. */
	unsigned max_depth;
};

/*
 * Start tracing into ring (opts may be NULL).  Reads TRACEBUF_FUNC_EXCLUDE
 * (see above).  Threads already inside instrumented functions start
 * recording with their next call.  0, -EINVAL (no ring, or an ID of 0),
 * -EBUSY (already tracing), or the error of an exclusion pattern.
 */
int tb_func_start(struct tb_ring *ring, const struct tb_func_opts *opts);
/* Stop: calls that start after it return at once.  Safe at any time. */
void tb_func_stop(void);
/* Whether tracing is on. */
int tb_func_active(void);

#define TB_FUNC_EXCLUDE_CHILDREN 1u /* also leave out everything the function calls */

/*
 * Leave out every function whose symbol matches the glob pattern
 * (fnmatch), in the executable and the shared libraries loaded now, read
 * from their symbol tables.  Returns how many functions matched (0 is not
 * an error), or -errno.  Safe while tracing: the new list is published at
 * once; calls already open keep their state.
 */
int tb_func_exclude(const char *pattern, unsigned flags);
/* Leave out the function at address fn. 0 or -ENOMEM. */
int tb_func_exclude_addr(const void *fn, unsigned flags);
/* Forget every run-time exclusion. */
void tb_func_exclude_clear(void);

/* The calling thread's counts. */
struct tb_func_thread_stats {
	uint64_t entries;    /* entry records written (or refused by the ring) */
	uint64_t exits;      /* exit records */
	uint64_t overrun;    /* calls not recorded: the stack was full */
	uint64_t unmatched;  /* exits with no entry on the stack (tracing began inside them) */
	uint64_t abandoned;  /* recorded calls left without an exit (longjmp) */
	uint64_t reentered;  /* hook calls dropped: the thread was inside the tracer */
};
void tb_func_thread_stats(struct tb_func_thread_stats *st);

/*
 * Save the ring as a capture directory (tb_save_ring) that describes
 * the function records, with current_tracer function_graph, plus the
 * extra events given (PMU events, for instance; may be NULL/0).  Consumes
 * the ring.  0 or -errno (err as tb_save_ring's).
 */
struct tb_problem; /* tracebuf/problem.h */
int tb_func_save(struct tb_ring *ring, const char *dir, const struct tb_save_event *extra,
		 size_t nextra, struct tb_problem *err);

#ifdef __cplusplus
}
#endif
#endif
