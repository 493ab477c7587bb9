// SPDX-License-Identifier: MIT
/*
 * publish.c - the commit step of the write path: an rseq critical section
 * on x86-64, a try-lock elsewhere.  See publish.h for the contract.
 */
#include "publish.h"
#include "crash_point.h" /* test builds only: empty otherwise */

#include <sched.h>
#include <stddef.h>
#include <string.h>

int pub_rseq_available(void)
{
#if defined(__x86_64__)
	/* cpu_id is (u32)-1 before registration, -2 when it failed. */
	return __rseq_size >= 20 && pub_rseq_area()->cpu_id < 0xfffffffeu;
#else
	return 0;
#endif
}

unsigned pub_current_cpu(void)
{
	if (__rseq_size >= 20) {
		/* relaxed: a hint; the section re-checks cpu_id before it commits */
		unsigned cpu = __atomic_load_n(&pub_rseq_area()->cpu_id_start, __ATOMIC_RELAXED);
		if (cpu < 0xfffffffeu)
			return cpu;
	}
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned)cpu;
}

#if defined(__x86_64__)
/*
 * The frame of an x86-64 rseq critical section.  Labels: 1 start, 2 just
 * after the commit store, 3 the descriptor, 4 the abort handler, preceded
 * by the signature the kernel checks (written as "ud1 sig(%rip), %edi" so
 * it disassembles).  Everything between 1 and 2 may be abandoned at any
 * instruction; the asm using the frame names the goto label "aborted".
 */
#define PUB_ASM_BEGIN(rseq_cs)                                                                     \
	".pushsection __rseq_cs, \"aw\"\n\t"                                                          \
	".balign 32\n\t"                                                                           \
	"3:\n\t"                                                                                    \
	".long 0x0, 0x0\n\t"                                                                        \
	".quad 1f, (2f - 1f), 4f\n\t"                                                               \
	".popsection\n\t"                                                                           \
	"leaq 3b(%%rip), %%rax\n\t"                                                                 \
	"movq %%rax, " rseq_cs "\n\t"                                                               \
	"1:\n\t"

#define PUB_ASM_END                                                                                \
	"2:\n\t"                                                                                    \
	".pushsection __rseq_failure, \"ax\"\n\t"                                                    \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                                                \
	".long 0x53053053\n\t"                                                                      \
	"4:\n\t"                                                                                    \
	"jmp %l[aborted]\n\t"                                                                       \
	".popsection\n\t"

/* Copy %rcx bytes (a multiple of 4, struct publish) from (%rsi) to (%rdi): 8 at a time, then 4; %rax is scratch. */
#define PUB_ASM_COPY                                                                               \
	"5:\n\t"                                                                                    \
	"cmpq $8, %%rcx\n\t"                                                                        \
	"jb 6f\n\t"                                                                                 \
	"movq (%%rsi), %%rax\n\t"                                                                   \
	"movq %%rax, (%%rdi)\n\t"                                                                   \
	"addq $8, %%rsi\n\t"                                                                        \
	"addq $8, %%rdi\n\t"                                                                        \
	"subq $8, %%rcx\n\t"                                                                        \
	"jmp 5b\n\t"                                                                                \
	"6:\n\t"                                                                                    \
	"testq %%rcx, %%rcx\n\t"                                                                    \
	"jz 7f\n\t"                                                                                 \
	"movl (%%rsi), %%eax\n\t"                                                                   \
	"movl %%eax, (%%rdi)\n\t"                                                                   \
	"7:\n\t"

int pub_section(unsigned cpu, struct publish *p)
{
	struct rseq *rs = pub_rseq_area();

	/* The frame is PUB_ASM_BEGIN/END above; the final movq commits. */
	__asm__ goto(
		PUB_ASM_BEGIN("%[rseq_cs]")
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"movq %c[o_word](%[p]), %%rsi\n\t"
		"movq (%%rsi), %%rax\n\t"
		"cmpq %c[o_expect](%[p]), %%rax\n\t"
		"jnz %l[stale]\n\t"
		"movq %c[o_word2](%[p]), %%rdi\n\t"
		"movq (%%rdi), %%rax\n\t"
		"cmpq %c[o_expect2](%[p]), %%rax\n\t"
		"jnz %l[stale]\n\t"
		TB_CRASH_ASM(TB_CP_GEN_CHECKED)
		/* 64-bit stores */
		"movl %c[o_n64](%[p]), %%ecx\n\t"
		"leaq %c[o_st64](%[p]), %%rdx\n\t"
		"10:\n\t"
		"testl %%ecx, %%ecx\n\t"
		"jz 11f\n\t"
		"movq (%%rdx), %%rdi\n\t"
		"movq 8(%%rdx), %%rax\n\t"
		"movq %%rax, (%%rdi)\n\t"
		"addq $16, %%rdx\n\t"
		"decl %%ecx\n\t"
		"jmp 10b\n\t"
		"11:\n\t"
		/* 32-bit stores */
		"movl %c[o_n32](%[p]), %%ecx\n\t"
		"leaq %c[o_st32](%[p]), %%rdx\n\t"
		"12:\n\t"
		"testl %%ecx, %%ecx\n\t"
		"jz 13f\n\t"
		"movq (%%rdx), %%rdi\n\t"
		"movl 8(%%rdx), %%eax\n\t"
		"movl %%eax, (%%rdi)\n\t"
		"addq $16, %%rdx\n\t"
		"decl %%ecx\n\t"
		"jmp 12b\n\t"
		"13:\n\t"
		TB_CRASH_ASM(TB_CP_GEN_WORDS)
		/* the payload */
		"movq %c[o_dst](%[p]), %%rdi\n\t"
		"movq %c[o_src](%[p]), %%rsi\n\t"
		"movq %c[o_len](%[p]), %%rcx\n\t"
		PUB_ASM_COPY
		TB_CRASH_ASM(TB_CP_GEN_PAYLOAD)
		/* the commit: one store makes the record and its bookkeeping visible */
		"movq %c[o_word](%[p]), %%rdx\n\t"
		"movq %c[o_update](%[p]), %%rax\n\t"
		"movq %%rax, (%%rdx)\n\t"
		PUB_ASM_END
		TB_CRASH_ASM(TB_CP_GEN_COMMITTED)
		:
		: [p] "r"(p), [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [o_word] "i"(offsetof(struct publish, word)),
		  [o_expect] "i"(offsetof(struct publish, expect)),
		  [o_word2] "i"(offsetof(struct publish, word2)),
		  [o_expect2] "i"(offsetof(struct publish, expect2)),
		  [o_update] "i"(offsetof(struct publish, update)),
		  [o_dst] "i"(offsetof(struct publish, dst)), [o_src] "i"(offsetof(struct publish, src)),
		  [o_len] "i"(offsetof(struct publish, len)), [o_n64] "i"(offsetof(struct publish, n64)),
		  [o_n32] "i"(offsetof(struct publish, n32)),
		  [o_st64] "i"(offsetof(struct publish, st64)),
		  [o_st32] "i"(offsetof(struct publish, st32))
		: "rax", "rcx", "rdx", "rsi", "rdi", "memory", "cc"
		: stale, aborted);
	return PUB_OK;
stale:
	return PUB_STALE;
aborted:
	return PUB_ABORT;
}
#else
int pub_section(unsigned cpu, struct publish *p)
{
	(void)cpu;
	(void)p;
	return PUB_ABORT;
}
#endif

/*
 * The section's stores, under the lock.  Aligned words may be read at the
 * same time by readers holding an older snapshot (tail_hist, meta, page
 * stamps), so they are stored as relaxed atomics; record bytes are only read
 * after the tail word that publishes them (release below).
 */
static void do_stores(struct publish *p)
{
	for (uint32_t i = 0; i < p->n64; i++) {
		if (((uintptr_t)p->st64[i].addr & 7) == 0)
			__atomic_store_n(p->st64[i].addr, p->st64[i].val, __ATOMIC_RELAXED);
		else
			memcpy(p->st64[i].addr, &p->st64[i].val, 8);
	}
	for (uint32_t i = 0; i < p->n32; i++) {
		uint32_t v = (uint32_t)p->st32[i].val;
		if (((uintptr_t)p->st32[i].addr & 3) == 0)
			__atomic_store_n(p->st32[i].addr, v, __ATOMIC_RELAXED);
		else
			memcpy(p->st32[i].addr, &v, 4);
	}
	if (p->len)
		memcpy(p->dst, p->src, p->len);
}

int pub_locked(_Atomic uint32_t *lock, struct publish *p)
{
	uint32_t free_ = 0;
	int rc = PUB_STALE;

	/* acquire: pairs with the release below, so the last holder's stores are seen */
	if (!atomic_compare_exchange_strong_explicit(lock, &free_, 1, memory_order_acquire,
						     memory_order_relaxed))
		return PUB_BUSY;
	/* relaxed: the lock's acquire already orders them after the last holder's release */
	if (atomic_load_explicit(p->word, memory_order_relaxed) == p->expect &&
	    atomic_load_explicit(p->word2, memory_order_relaxed) == p->expect2) {
		do_stores(p);
		TB_CRASH_C(TB_CP_LOCKED_STORES);
		/* release: readers' acquire of the tail word sees the record */
		atomic_store_explicit(p->word, p->update, memory_order_release);
		rc = PUB_OK;
	}
	/* release: pairs with the acquire above */
	atomic_store_explicit(lock, 0, memory_order_release);
	return rc;
}
