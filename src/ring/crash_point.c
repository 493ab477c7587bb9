// SPDX-License-Identifier: MIT
/*
 * crash_point.c - the test build's crash points (crash_point.h): which one
 * is armed, and dying there.  Not part of libtracebuf; linked only into
 * tests/test_shm_crash.
 */
#include "crash_point.h"

#ifdef TB_CRASH_POINTS
volatile int tb__crash_at;

/*
 * Reached by a jump from the middle of a write, with whatever stack and
 * registers it had: kill(getpid(), SIGKILL) as two raw system calls,
 * touching no memory, so the process dies with the ring exactly as the
 * write left it.
 */
void tb__crash_now(void)
{
	__asm__ volatile("movl $39, %%eax\n\t" /* getpid */
			 "syscall\n\t"
			 "movl %%eax, %%edi\n\t"
			 "movl $9, %%esi\n\t"  /* SIGKILL */
			 "movl $62, %%eax\n\t" /* kill */
			 "syscall\n\t"
			 "ud2"
			 :
			 :
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "memory");
	__builtin_unreachable();
}
#endif
