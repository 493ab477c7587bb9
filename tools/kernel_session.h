/* SPDX-License-Identifier: MIT */
/*
 * kernel_session.h - the live kernel's events beside a traced program
 * (`tracebuf record --kernel EVENTS --uprobe FUNC --offcpu -- CMD`).
 *
 * A session is a private tracefs instance, instances/tracebuf-kernel-PID
 * (never the top-level buffer), whose trace_clock is the program ring's
 * clock (x86-tsc, mono or boot: the two buffers' time stamps are then one
 * time line, nothing converted or guessed), with the chosen events, the
 * program's uprobes (uprobes.h) and, for off-CPU analysis, sched_switch,
 * sched_wakeup and the stacktrace trigger on sched_switch.  While the
 * program runs a thread drains every CPU's trace_pipe_raw into the
 * capture directory opts.dir, so the buffer's size bounds nothing but the
 * latency of a burst; kernel_session_stop() switches tracing off, saves
 * the rest and every file `tracebuf report` needs there (capture_save.c),
 * and removes the trigger, the instance and the probes.  The directory is
 * then a capture, and tb_tracedat_write_capture_meta/_pages put it into a
 * trace.dat as a buffer of its own.
 *
 * FOLLOWING.  With follow_pid the instance records only the traced program
 * and its descendants, as trace-cmd record -F does: set_event_pid holds its
 * pid and the event-fork option adds each child at fork (and drops it at
 * exit).  The kernel tests the task that is running when the event fires,
 * with two exceptions that keep off-CPU analysis whole: sched_switch is
 * recorded when prev *or* next is followed (the program leaving the CPU and
 * coming back: every one of its switches, whoever runs beside it), and
 * sched_wakeup/sched_waking when the woken task is followed (whoever wakes
 * it).  The stacktrace trigger fires only for records kept, so the
 * kernel_stack records are the program's switches'.  Other events (irq,
 * syscalls...) are kept while a followed task runs.
 *
 * The instance and the probes are also removed at exit (a recording that
 * ends without kernel_session_stop), so an interrupted recording leaves
 * nothing behind.  Messages go to stderr.
 */
#ifndef TRACEBUF_TOOLS_KERNEL_SESSION_H
#define TRACEBUF_TOOLS_KERNEL_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "lib_internal.h"

struct kernel_session_opts {
	const char *events;	     /* --kernel spec (event_select.h); NULL: none */
	const char *const *uprobes; /* --uprobe specs (uprobes.h) */
	size_t nuprobes;
	const char *program;	     /* the traced command's argv[0]: where a bare FUNC lies */
	bool offcpu;		     /* sched_switch, sched_wakeup and their kernel stacks */
	const char *clock;	     /* trace_clock: the program ring's clock name */
	const char *buffer_kb;	     /* buffer_size_kb per CPU; NULL: the kernel's default */
	const char *dir;	     /* the capture directory to fill (new or empty) */
	int follow_pid;		     /* > 0: record only this process and its children (set_event_pid,
				      * event-fork); 0: every task */
	const char *who;	     /* message prefix, "tracebuf record" */
};

/* What `--offcpu` enables (besides the stacktrace trigger). */
#define OFFCPU_EVENTS "sched:sched_switch,sched:sched_wakeup"

struct kernel_session;

/*
 * Set the session up and switch its tracing on.  0 with *out set; or a
 * negative errno, said on stderr with the reason, with nothing left
 * behind: -ENODEV without tracefs, -EACCES/-EPERM without root, -ENOENT
 * for an event or function that is not there.
 */
int kernel_session_start(const struct kernel_session_opts *opts, struct kernel_session **out);

/*
 * The lowest event ID above every kernel event (uprobes included): what
 * the program's own events start from (TRACEBUF_FIRST_ID) so that both
 * sets of formats fit in one file.
 */
unsigned kernel_session_first_free_id(const struct kernel_session *ks);

/* The trace_clock name in use. */
const char *kernel_session_clock(const struct kernel_session *ks);

/*
 * Stop: tracing off, the drain thread joined, the capture saved (res may
 * be NULL), trigger, instance and probes removed, ks freed.  0, or a
 * negative errno when the capture could not be saved (said).
 */
int kernel_session_stop(struct kernel_session *ks, struct save_result *res);

#endif
