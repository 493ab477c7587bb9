// SPDX-License-Identifier: MIT
/*
 * shm_guard.c - reading a mapping whose file may shrink: SIGBUS from
 * inside the mapped bytes becomes an error return (tb_shm_guard, shm.h).
 *
 * A memfd region is sealed against shrinking; a named file cannot be, so
 * another process may truncate it under a reader's mapping, and the next
 * touch of a page past the new end raises SIGBUS.  A guarded call runs
 * with a per-thread guard record naming the mapped range and a jump
 * buffer.  The process-wide handler, installed on the first guarded call,
 * jumps back to the innermost guard of the faulting thread whose range
 * holds the faulting address; any other SIGBUS goes to whatever handled
 * it before (or, for the default action, kills as it would have: the
 * default is put back and the access runs again).
 *
 * What a guarded function may do: only reads of the mapping that can be
 * abandoned at any instruction - no lock taken, nothing allocated, across
 * an access to the mapping (the jump skips whatever would release it).
 * tb_shm_window (shm_window.c) is written that way; after a fault the
 * handle is good only for tb_shm_close().
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ring_internal.h"

struct bus_guard {
	sigjmp_buf jump;
	uintptr_t lo, hi;          /* the guarded bytes */
	struct bus_guard *outer;   /* the guard this one is nested in, or NULL */
};

/* The faulting thread's guards, innermost first: only that thread and its handler touch it. */
static _Thread_local struct bus_guard *guards;
static struct sigaction bus_before;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static int bus_installed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t at = (uintptr_t)si->si_addr;

	for (struct bus_guard *g = guards; g; g = g->outer)
		if (at >= g->lo && at < g->hi)
			siglongjmp(g->jump, 1);
	/* not a guarded read: as before we were installed */
	if ((bus_before.sa_flags & SA_SIGINFO) && bus_before.sa_sigaction) {
		bus_before.sa_sigaction(sig, si, uc);
	} else if (!(bus_before.sa_flags & SA_SIGINFO) && bus_before.sa_handler != SIG_DFL &&
		   bus_before.sa_handler != SIG_IGN) {
		bus_before.sa_handler(sig);
	} else {
		/* the default action: put it back; returning runs the access again, which dies of it */
		signal(SIGBUS, SIG_DFL);
	}
}

static void bus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	bus_installed = sigaction(SIGBUS, &sa, &bus_before) == 0;
}

int tb__sigbus_guarded(const void *lo, size_t len, int (*fn)(void *arg), void *arg, int *faulted)
{
	struct bus_guard g;
	int rc;

	*faulted = 0;
	pthread_once(&bus_once, bus_install);
	if (!bus_installed)
		return fn(arg); /* no handler: unguarded, as before */
	g.lo = (uintptr_t)lo;
	g.hi = g.lo + len;
	g.outer = guards;
	/* savemask 1: the jump out of the handler unblocks SIGBUS again */
	if (sigsetjmp(g.jump, 1)) {
		guards = g.outer;
		*faulted = 1;
		return -EFAULT;
	}
	guards = &g;
	/* the handler runs on this thread: a signal fence orders the guard before the reads */
	atomic_signal_fence(memory_order_seq_cst);
	rc = fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	guards = g.outer;
	return rc;
}
