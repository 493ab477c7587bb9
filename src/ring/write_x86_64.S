/* SPDX-License-Identifier: MIT */
/*
 * write_x86_64.S - tb_write's fast path, by hand.
 *
 * int tb_write(struct tb_ring *ring, const void *data, uint32_t len)
 *
 * The common case: an rseq ring on the TSC clock, a payload of at most 112
 * bytes (a compact record) that fits on the tail page after at least one
 * record and within a 27-bit delta of the last one, while recording is on.
 * Anything else tail-calls tb__append_slow() in ring.c with the arguments
 * as given, and so does a section the kernel aborted (preempted, migrated,
 * signalled): the slow path retries.  Recording off is seen as a page with
 * no room (the control block's fast_words is 0), so it costs no test of
 * its own here; the general path then refuses the write.
 *
 * Unlike the general path (snapshot first, then a section that re-checks
 * it, publish.h), everything here is read inside the rseq section: the CPU,
 * its tail word, last_ts[phase] and the clock.  Only sections running on
 * that CPU write those words (ring_layout.h), and a section runs whole or
 * is abandoned at .Labort, so what it reads cannot change under it: there
 * is nothing to re-check and no ABA.  (fast_words, also read in the
 * section, is written from anywhere by tb_ring_set_recording; it only ever
 * holds 0 or the page's size, so a stale read is a switch seen a little
 * late, which recording allows.)  The section, in order (docs/design.md, I1-I3):
 *   - read the CPU (rseq cpu_id; valid until the section ends) and find
 *     its control block; read the TSC; read the tail word and last_ts of
 *     its phase;
 *   - zero the record's last 8 bytes (its fill), store the header, copy
 *     the payload: all beyond the published tail, seen by nobody yet;
 *   - store last_ts[new phase], then the new tail word: the commit.  x86
 *     keeps stores in order, so the commit publishes everything before it
 *     to a reader's acquire load of the tail word.
 *
 * Why the clock is read in the middle: on the machines we measured, rdtsc
 * behaved as if it waited for the instructions before it and held back
 * those after it (no architectural promise; correctness does not depend
 * on it), so the cost of a write is rdtsc plus the dependency chains and
 * the instructions around it.  Moving work to either side of the clock,
 * adding one load-and-branch, or a multiply on the chain after it, each
 * showed up in bench/; what is here is what measured best: the chain
 * before (rseq offset -> CPU -> control block), the one after (tail word ->
 * record address -> stores, with a shift where a multiply was).
 *
 * The count of writes begun (inflight.c, docs/design.md §10) comes first,
 * before anything of the write can be interrupted and before the section
 * (a restarted section must not count twice): the thread's cached slot,
 * one TLS word, is this ring's if it xors with the handle's count_key to
 * an index; then one incq of the slot's count.  Only this thread writes
 * that word, and a signal handler lands between two instructions, never in
 * one: no lock prefix.  x86 keeps stores in order, so the count is visible
 * before the commit store that a recovering reader sees (it pairs with the
 * reader's acquire load of the tail word, read before the table).  A miss
 * goes to tb__write_miss (claims or finds the slot, counts, comes back at
 * tb__write_counted); tb_commit enters at tb__write_counted, tb_reserve
 * having counted.  Every way out to the general path is counted, and the
 * general path undoes the count of a write it refuses.
 *
 * Registers: rdi ring, then the phase (the ring waits in the red zone at
 * -8(%rsp) for .Lout); rsi data, r9 len, r8 type_len, then the copy index;
 * r10 control block, r11 tail word, then the new one; rax the time stamp,
 * rcx the record, rdx scratch; xmm0 and xmm1 the payload's first and last
 * 8 bytes (16 from 32 bytes on), xmm2 its middle's.  No stack frame: the
 * red zone is ours in a leaf, and signal frames skip it.  shrx is BMI2:
 * ring.c turns the fast path off without it.
 */
#include "write_fast.h"
#include "crash_point.h" /* test builds only: empty otherwise */
#ifdef __CET__
#include <cet.h> /* the IBT/SHSTK note, so the library keeps the C objects' marking */
#else
#define _CET_ENDBR
#endif

/*
 * The whole write: the count, the section, the ways out.  stamped 0 is
 * tb_write, which reads the TSC in the section; stamped 1 is tb_write_at,
 * whose caller read it just before and passes it in %r11 (moved there from
 * %rcx first thing).  Everything else is the same instructions, so the
 * section's reasoning above holds for both; tb_write_at's ways out (a
 * miss, the slow path, an abort) go where tb_write's do and read the clock
 * again there.  Labels carry \@, the expansion's number.
 */
/*
 * The payload's middle, [width, len - width), width bytes at a time through
 * reg (the first and last width bytes are stored already; len is %r9, the
 * index %r8), then on to done.
 */
.macro COPY_MIDDLE width, mov, reg, done
	movl	$\width, %r8d
1:
	\mov	(%rsi,%r8), \reg
	\mov	\reg, 4(%rcx,%r8)
	addq	$\width, %r8
	leaq	\width(%r8), %rdx
	cmpq	%r9, %rdx
	jb	1b
	jmp	\done
.endm

.macro WRITE_PATH stamped
	/*
	 * Initial-exec TLS: the word's offset from the thread pointer, from
	 * the GOT; linked into a program the linker makes the load a constant.
	 * libtracebuf.so stays loadable by dlopen because its TLS is small
	 * (inflight.c says why).
	 */
	movq	tb__wcache@GOTTPOFF(%rip), %rax
	movq	%fs:(%rax), %rax		/* the thread's slot: count_key | its offset in the table, one load */
	xorq	WF_RING_COUNT_KEY(%rdi), %rax	/* the slot's offset, if it is this ring's */
	cmpq	$WF_THREAD_SLOTS << WF_THREAD_SLOT_SHIFT, %rax
	jae	.Lmiss\@
	movq	WF_RING_BEGUN0(%rdi), %rcx
	incq	(%rcx,%rax)			/* begun: only this thread writes it; one instruction */
	TB_CRASH_POINT(TB_CP_COUNTED)
	.if !\stamped
tb__write_counted:
	.endif
	cmpl	$WF_MAX_SMALL_DATA, %edx
	ja	.Lslow\@
	movq	%rdi, -8(%rsp)			/* the ring, in the red zone, for .Lout */
	movl	%edx, %r9d			/* len: rdtsc takes %edx */
	/*
	 * 8 bytes or more: the first and the last 8 now, into registers, so
	 * the caller's fresh stores reach us off the chain after the clock;
	 * from 32 bytes the first and last 16 (out of line, below).
	 */
	cmpl	$8, %edx
	jb	.Lloaded\@
	cmpl	$32, %edx
	jae	.Lload16\@
	movq	(%rsi), %xmm0
	movq	-8(%rsi,%r9), %xmm1
.Lloaded\@:
	leaq	tb__small_type_len(%rip), %rax
	movzbl	(%rax,%r9), %r8d		/* type_len: record size / 4 - 1 */

	movq	WF_RING_RSEQ_OFFSET(%rdi), %rdx
	leaq	.Lcs\@(%rip), %rax
	movq	%rax, %fs:WF_RSEQ_CS(%rdx)
.Lstart\@:
	/*
	 * From here to the commit the kernel sends us to .Labort if we are
	 * preempted, migrated or signalled: the CPU read here stays ours,
	 * and so does its tail, which only sections on this CPU write.
	 */
	TB_CRASH_POINT(TB_CP_FAST_ENTERED)
	movl	%fs:WF_RSEQ_CPU_ID(%rdx), %r10d
	cmpl	WF_RING_FAST_NCPUS(%rdi), %r10d
	jae	.Lout\@				/* not a fast ring, a CPU born after it, or no rseq */
	imulq	WF_RING_CPU_STRIDE(%rdi), %r10
	addq	WF_RING_CTL0(%rdi), %r10	/* the CPU's control block */
	.if \stamped
	movq	%r11, %rax			/* ts: the caller's */
	.else
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax			/* ts */
	.endif
	/* acquire (an x86 load is one): pairs with the commit store below, of an earlier section */
	movq	WF_CTL_TAIL(%r10), %r11
	movl	%r11d, %ecx
	andl	$WF_T_OFF_MASK, %ecx		/* off / 4 */
	jz	.Lout\@				/* the page's first record carries its stamp */
	/*
	 * Does it fit?  fast_words is 0 while recording is off, so this is
	 * also where a stopped ring turns the write over to the general path.
	 */
	leal	1(%r8,%rcx), %edx
	cmpl	WF_CTL_FAST_WORDS(%r10), %edx
	ja	.Lout\@
	/* the record: control block + off * 4 + data offset + phys * subbuf_size (a shift and a mask) */
	movl	WF_RING_PHYS_SHIFT(%rdi), %edx
	shrxq	%rdx, %r11, %rdx
	andq	WF_RING_PAGE_MASK(%rdi), %rdx
	addq	WF_RING_DATA_OFFSET(%rdi), %rdx
	leaq	(%r10,%rcx,4), %rcx
	addq	%rdx, %rcx
	/* the delta from last_ts[phase]: loaded after the tail word, whose phase names it */
	movq	%r11, %rdi
	shrq	$WF_T_PHASE_BIT, %rdi		/* phase */
	movq	%rax, %rdx
	subq	WF_CTL_LAST_TS(%r10,%rdi,8), %rdx
	/* a delta over 27 bits needs a time extend; a clock that stepped back wraps to huge */
	cmpq	$WF_DELTA_MAX, %rdx
	ja	.Lout\@
	/* the new tail word: off += size / 4, count += 1, the phase flips */
	leaq	WF_T_COUNT_ONE+1(%r11,%r8), %r11
	btcq	$WF_T_PHASE_BIT, %r11
	movq	$0, -4(%rcx,%r8,4)		/* the record's last 8 bytes: its fill */
	TB_CRASH_POINT(TB_CP_FAST_FILL)
	shll	$5, %edx
	orl	%r8d, %edx			/* the header */
	movl	%edx, (%rcx)
	TB_CRASH_POINT(TB_CP_FAST_HEADER)
	/*
	 * The payload, len bytes to 4(%rcx).  Every branch stays inside the
	 * section: the commit must be its last instruction, so the other
	 * lengths sit before .Lcopied\@, after 8..16 bytes' one taken branch.
	 */
	cmpl	$8, %r9d
	jb	.Lshort\@
	cmpl	$32, %r9d
	jae	.Lbig\@
	movq	%xmm0, 4(%rcx)			/* 8..31 bytes: the first and last 8 from registers, */
	movq	%xmm1, -4(%rcx,%r9)		/* overlapping; the middle 8 at a time */
	cmpl	$16, %r9d
	jbe	.Lcopied\@
	COPY_MIDDLE 8, movq, %rdx, .Lcopied\@
	/*
	 * 32..112 bytes (a function's entry and exit records, strings): the
	 * first and last 16, overlapping, the middle 16 at a time; 8 at a time
	 * was 2 or 3 turns of the loop for those records, 12 or 18 instructions.
	 */
.Lbig\@:
	movdqu	%xmm0, 4(%rcx)
	movdqu	%xmm1, -12(%rcx,%r9)
	cmpl	$32, %r9d
	je	.Lcopied\@
	COPY_MIDDLE 16, movdqu, %xmm2, .Lcopied\@
.Lshort\@:
	cmpl	$4, %r9d
	jb	.Ltiny\@
	movl	(%rsi), %edx			/* 4..7 bytes: two 4-byte moves, overlapping */
	movl	%edx, 4(%rcx)
	movl	-4(%rsi,%r9), %edx
	movl	%edx, (%rcx,%r9)
	jmp	.Lcopied\@
.Ltiny\@:
	testl	%r9d, %r9d			/* 0..3 bytes: a byte, then the last two */
	jz	.Lcopied\@
	movzbl	(%rsi), %edx
	movb	%dl, 4(%rcx)
	cmpl	$2, %r9d
	jb	.Lcopied\@
	movzwl	-2(%rsi,%r9), %edx
	movw	%dx, 2(%rcx,%r9)
.Lcopied\@:
	TB_CRASH_POINT(TB_CP_FAST_PAYLOAD)
	xorl	$1, %edi			/* the new phase */
	movq	%rax, WF_CTL_LAST_TS(%r10,%rdi,8)
	TB_CRASH_POINT(TB_CP_FAST_TIME)
	movq	%r11, WF_CTL_TAIL(%r10)		/* the commit: the section's last instruction */
.Lend\@:
	TB_CRASH_POINT(TB_CP_FAST_COMMITTED)
	xorl	%eax, %eax
	ret

	/* Not the fast case, or aborted: the general path, arguments as given. */
.Lout\@:
	movq	-8(%rsp), %rdi
	movl	%r9d, %edx
.Lslow\@:
	jmp	tb__append_slow
.Lload16\@:
	movdqu	(%rsi), %xmm0			/* 32 bytes or more (before the section) */
	movdqu	-16(%rsi,%r9), %xmm1
	jmp	.Lloaded\@
.Lmiss\@:
	jmp	tb__write_miss
	.cfi_endproc

	/* The abort handler, preceded by the signature the kernel checks. */
	.pushsection __rseq_failure, "ax"
	.byte	0x0f, 0xb9, 0x3d		/* ud1 <sig>(%rip), %edi: disassembles */
	.long	WF_RSEQ_SIG
.Labort\@:
	.cfi_startproc
	jmp	.Lout\@
	.cfi_endproc
	.popsection

	.pushsection __rseq_cs, "aw"
	.balign	32
.Lcs\@:
	.long	0, 0				/* version, flags */
	.quad	.Lstart\@, .Lend\@ - .Lstart\@, .Labort\@
	.popsection

.endm

	.text
	.globl	tb_write
	.type	tb_write, @function
	.globl	tb__write
	.hidden	tb__write
	.type	tb__write, @function
	.globl	tb__write_counted
	.hidden	tb__write_counted
	.type	tb__write_counted, @function
	.hidden	tb__append_slow
	.hidden	tb__write_miss
	.hidden	tb__wcache
	.hidden	tb__small_type_len
	.p2align 5
tb_write:
tb__write:
	.cfi_startproc
	_CET_ENDBR
	WRITE_PATH 0

	.size	tb_write, . - tb_write
	.size	tb__write, . - tb__write
	.size	tb__write_counted, . - tb__write_counted

	/*
	 * int tb_write_at(struct tb_ring *ring, const void *data, uint32_t len, uint64_t ts)
	 * tb_write with the time stamp ts (%rcx) in place of the section's own
	 * read of the TSC.  The section still checks it against last_ts of the
	 * CPU it runs on: a ts before it (another write came between the
	 * caller's read and the section) or more than a delta past it goes to
	 * the general path, which reads the clock itself, so time never goes
	 * back in a buffer (I2).
	 */
	.globl	tb_write_at
	.type	tb_write_at, @function
	.p2align 5
tb_write_at:
	.cfi_startproc
	_CET_ENDBR
	movq	%rcx, %r11			/* the TLS look-up below takes %rax and %rcx */
	WRITE_PATH 1

	.size	tb_write_at, . - tb_write_at

	.section .note.GNU-stack, "", @progbits
