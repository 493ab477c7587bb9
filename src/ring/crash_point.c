// SPDX-License-Identifier: MIT
/*
 * crash_point.c - the test build's crash points (crash_point.h): which one
 * is armed, dying there (or raising a signal there).  Not part of
 * libtracebuf; linked only into tests/test_shm_crash and test_shm_pidns.
 */
#include "crash_point.h"

#include <sys/syscall.h>
#include <unistd.h>

#ifdef TB_CRASH_POINTS
volatile int tb__crash_at;
volatile int tb__crash_sig = 9; /* SIGKILL; SIGSTOP holds the writer there for the test to go on */

/*
 * Reached by a jump from the middle of a write, with whatever stack and
 * registers it had: kill(getpid(), tb__crash_sig) as two raw system calls,
 * storing nothing, so the process dies (or stops, to be killed later) with
 * the ring exactly as the write left it.  A stopped writer must not be
 * continued past its handlers: ud2 follows.
 */
void tb__crash_now(void)
{
	__asm__ volatile("movl $39, %%eax\n\t" /* getpid */
			 "syscall\n\t"
			 "movl %%eax, %%edi\n\t"
			 "movl tb__crash_sig(%%rip), %%esi\n\t"
			 "movl $62, %%eax\n\t" /* kill */
			 "syscall\n\t"
			 "ud2"
			 :
			 :
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "memory");
	__builtin_unreachable();
}

volatile int tb__point_signal;

/* Disarmed first, so that the handler's own write passes the point. */
void tb__point_signal_now(void)
{
	int sig = tb__point_signal;

	tb__crash_at = 0;
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}
#endif
