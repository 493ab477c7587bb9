/* SPDX-License-Identifier: MIT */
/*
 * crash_point.h - named points of the write path where a test can make
 * the writing process die (SIGKILL, raised at that instruction), to check
 * what crash recovery returns for a write stopped exactly there
 * (tests/test_shm_crash.c); and of a consuming reader's commit, to check
 * its read count after a consumer died there.
 *
 * Compiled in only when TB_CRASH_POINTS is defined (the test's own build
 * of the library, $(B)/obj-crash); otherwise every point expands to
 * nothing and the write path is byte for byte what it was.  Inside an rseq
 * section a point is a compare and a conditional jump: it stores nothing,
 * so it changes no state the section keeps.
 */
#ifndef TRACEBUF_CRASH_POINT_H
#define TRACEBUF_CRASH_POINT_H

/* The points: the count and the fast path (write_x86_64.S), the general path's section and its locked twin (publish.c). */
#define TB_CP_COUNTED 7        /* tb_write's count of writes begun stored, nothing else (inflight.c) */
#define TB_CP_FAST_ENTERED 1   /* in the section, nothing stored */
#define TB_CP_FAST_FILL 2      /* the record's last 8 bytes zeroed */
#define TB_CP_FAST_HEADER 3    /* the header stored */
#define TB_CP_FAST_PAYLOAD 4   /* the payload stored */
#define TB_CP_FAST_TIME 5      /* last_ts[new phase] stored: only the tail word is missing */
#define TB_CP_FAST_COMMITTED 6 /* after the tail word: committed */
#define TB_CP_GEN_CHECKED 11   /* the section's checks passed, nothing stored */
#define TB_CP_GEN_WORDS 12     /* bookkeeping stored (header, time, meta, tail_hist) */
#define TB_CP_GEN_PAYLOAD 13   /* the payload stored: only the tail word is missing */
#define TB_CP_GEN_COMMITTED 14 /* after the tail word: committed */
#define TB_CP_LOCKED_STORES 21 /* fallback: everything but the tail word, lock held */
/* A thread's first write on a ring, before its count (inflight.c, ring.c): nothing of the write stored yet. */
#define TB_CP_CLAIM_LOCKED 31  /* the slot's file lock taken, its owner word not stored */
#define TB_CP_CLAIM_OWNED 32   /* the owner word stored, the thread's claim not filed */
#define TB_CP_CLAIM_FILED 33   /* the claim filed, the count not added, the cache not set */
#define TB_CP_SCRATCH_MAPPED 34 /* the first tb_reserve: its scratch mapped, not installed */
#define TB_CP_CLAIMED 35       /* a page switch: the next slot claimed over unread data, no section run (ring.c) */
/* A consuming reader's commit (reader.c, R1-R3): what it consumed is counted whole or not at all. */
#define TB_CP_READ_JOURNALED 41 /* R1: the journal's targets and word stored, nothing of the state */
#define TB_CP_READ_MOVED 42     /* R2: the position stored, the read count not */
#define TB_CP_READ_COUNTED 43   /* R2 done: the count stored, the journal not cleared */

#ifdef TB_CRASH_POINTS
#ifdef __ASSEMBLER__
#define TB_CRASH_POINT(n) cmpl $n, tb__crash_at(%rip); je tb__crash_now
#else
extern volatile int tb__crash_at __attribute__((visibility("hidden")));
extern volatile int tb__crash_sig __attribute__((visibility("hidden"))); /* what the point raises: SIGKILL */
__attribute__((noreturn, visibility("hidden"))) void tb__crash_now(void);
/* For inline asm: a string of instructions (operands escaped for asm goto). */
#define TB_CRASH_ASM(n) TB_CRASH_ASM_(n) /* n expanded first: the point's name works */
#define TB_CRASH_ASM_(n) "cmpl $" #n ", tb__crash_at(%%rip)\n\tje tb__crash_now\n\t"
/*
 * Points in C may also raise a signal and go on (tb__point_signal nonzero):
 * the point disarms itself and sends that signal to the calling thread,
 * whose handler runs before the point returns - a handler landing exactly
 * there, forced (tests/test_shm_pidns.c).
 */
extern volatile int tb__point_signal __attribute__((visibility("hidden")));
void tb__point_signal_now(void) __attribute__((visibility("hidden")));
#define TB_CRASH_C(n)                                                                              \
	do {                                                                                       \
		if (tb__crash_at == (n)) {                                                         \
			if (tb__point_signal)                                                      \
				tb__point_signal_now();                                            \
			else                                                                       \
				tb__crash_now();                                                   \
		}                                                                                  \
	} while (0)
#endif
#else
#define TB_CRASH_POINT(n)
#define TB_CRASH_ASM(n) ""
#define TB_CRASH_C(n) ((void)0)
#endif

#endif
