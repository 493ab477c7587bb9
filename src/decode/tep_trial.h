/* SPDX-License-Identifier: MIT */
/*
 * tep_trial.h - a format tried on libtraceevent in a child process first.
 *
 * libtraceevent 1.7.1 crashes on some print fmts (NULL dereferences in its
 * parser; fuzz_format keeps finding more, such as a print fmt with an
 * unknown name followed by garbage).  Our compiler parses every print fmt
 * first and hands libtraceevent only what it parsed and declined for a
 * construct it does not do - a handful of a kernel's formats - but it stops
 * at the first such construct, so what follows it is unchecked.  Each of
 * those formats is therefore parsed, and one all-zero record printed, by a
 * helper process (fork, no exec; tep_trial.c) before libtraceevent in this
 * process sees it.  The helper answers format after format: a fork when it
 * is first needed, again after it crashed on one, and after it left idle.
 */
#ifndef TRACEBUF_TEP_TRIAL_H
#define TRACEBUF_TEP_TRIAL_H

#include <stddef.h>
#include <sys/types.h>

#include "tracebuf/schema.h"

/* 0 if libtraceevent survives the format; -EFAULT if it crashed or hung (*how: signal, or -exit status). */
int tep_trial(const char *text, size_t len, const char *system, const struct tb_format *f, int *how);

/*
 * End this process's helper now, if it has one (the next trial forks a new
 * one).  While it lives, every page it shares with this process is copied
 * on this process's first write to it, with a TLB shoot-down on every CPU
 * the process runs on: freeing a schema's libtraceevent handle wrote to
 * thousands of them (a fifth to a half of a small report's time).
 */
void tep_trial_stop(void);

/* The process id of this process's helper now, 0 when it has none (for tests). */
pid_t tep_trial_helper(void);

#endif
