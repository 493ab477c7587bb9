/* SPDX-License-Identifier: MIT */
/*
 * publish.h - make a record visible as one indivisible step on one CPU.
 *
 * A publish is: check that the writer still runs on the CPU it chose and
 * that the CPU's tail word still holds what the writer computed from; do a
 * few stores (record header, time stamp, bookkeeping); copy the payload;
 * then store the new tail word.  The last store is the commit.
 *
 * With rseq (glibc >= 2.35 registers it for every thread) the sequence runs
 * as a restartable critical section: if the thread is preempted, migrated
 * or interrupted by a signal anywhere before the final store, the kernel
 * sends it to the abort label and nothing became visible; the caller
 * computes again and retries.  So between "reserve" and "commit" no other
 * writer ever waits for, or is refused because of, this one: a preempted
 * writer has no open reservation at all.
 *
 * Without rseq (valgrind, glibc.pthread.rseq=0, fewer buffers than CPUs)
 * the same steps run under a per-buffer try-lock; a writer that finds it
 * taken does not wait (see ring.c).
 *
 * Every store in the section lands in memory that only this CPU's sections
 * write (ring_layout.h), so plain stores are enough; x86 keeps stores in
 * order, so the final store publishes everything before it.
 */
#ifndef TRACEBUF_PUBLISH_H
#define TRACEBUF_PUBLISH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PUB_MAX_ST64 8
#define PUB_MAX_ST32 8

struct pub_st64 {
	uint64_t *addr;
	uint64_t val;
};

struct pub_st32 {
	uint32_t *addr;
	uint64_t val; /* low 32 bits stored; 16-byte entries keep the asm simple */
};

struct publish {
	_Atomic uint64_t *word;
	uint64_t expect;
	uint64_t update;
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len; /* multiple of 4 */
	uint32_t n64, n32;
	struct pub_st64 st64[PUB_MAX_ST64];
	struct pub_st32 st32[PUB_MAX_ST32];
};

enum { PUB_OK = 0, PUB_STALE = 1, PUB_ABORT = -1, PUB_BUSY = -2 };

static inline void pub_init(struct publish *p, _Atomic uint64_t *word, uint64_t expect)
{
	p->word = word;
	p->expect = expect;
	p->n64 = p->n32 = 0;
	p->dst = NULL;
	p->src = NULL;
	p->len = 0;
}

static inline void pub64(struct publish *p, void *addr, uint64_t val)
{
	p->st64[p->n64].addr = addr;
	p->st64[p->n64++].val = val;
}

static inline void pub32(struct publish *p, void *addr, uint32_t val)
{
	p->st32[p->n32].addr = addr;
	p->st32[p->n32++].val = val;
}

/*
 * The fast form: one small record (header word, payload words, a last
 * partial word, zero words) plus last_ts, then the tail word.  Used for
 * records that need no stamp record and stay on the tail page.
 */
struct publish_fast {
	_Atomic uint64_t *word;
	uint64_t expect;
	uint64_t update;
	uint8_t *dst;
	const uint8_t *src;
	uint64_t whole; /* payload bytes copied from src, a multiple of 4 */
	uint32_t hdr;
	uint32_t tailword;
	uint32_t has_tail;
	uint32_t nzero; /* zero words after the payload */
	uint64_t *last_ts;
	uint64_t ts;
};

#if defined(__x86_64__)
#include <sys/rseq.h>

static inline struct rseq *tb_rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* The CPU the kernel last saw us on; valid only where tb_rseq_available(). */
static inline unsigned tb_rseq_cpu(void)
{
	/* relaxed: a hint; the section re-checks cpu_id before it commits */
	return __atomic_load_n(&tb_rseq_area()->cpu_id_start, __ATOMIC_RELAXED);
}

/* PUB_OK, PUB_STALE or PUB_ABORT; see tb_publish_rseq for the labels. */
static inline int tb_publish_fast(unsigned cpu, struct publish_fast *p)
{
	struct rseq *rs = tb_rseq_area();

	__asm__ goto(
		".pushsection __rseq_cs, \"aw\"\n\t"
		".balign 32\n\t"
		"3:\n\t"
		".long 0x0, 0x0\n\t"
		".quad 1f, (2f - 1f), 4f\n\t"
		".popsection\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %[rseq_cs]\n\t"
		"1:\n\t"
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"movq %c[o_word](%[p]), %%rsi\n\t"
		"movq (%%rsi), %%rax\n\t"
		"cmpq %c[o_expect](%[p]), %%rax\n\t"
		"jnz %l[stale]\n\t"
		"movq %c[o_dst](%[p]), %%rdi\n\t"
		"movl %c[o_hdr](%[p]), %%eax\n\t"
		"movl %%eax, (%%rdi)\n\t"
		"addq $4, %%rdi\n\t"
		"movq %c[o_src](%[p]), %%rdx\n\t"
		"movq %c[o_whole](%[p]), %%rcx\n\t"
		"5:\n\t"
		"cmpq $8, %%rcx\n\t"
		"jb 6f\n\t"
		"movq (%%rdx), %%rax\n\t"
		"movq %%rax, (%%rdi)\n\t"
		"addq $8, %%rdx\n\t"
		"addq $8, %%rdi\n\t"
		"subq $8, %%rcx\n\t"
		"jmp 5b\n\t"
		"6:\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 7f\n\t"
		"movl (%%rdx), %%eax\n\t"
		"movl %%eax, (%%rdi)\n\t"
		"addq $4, %%rdi\n\t"
		"7:\n\t"
		"cmpl $0, %c[o_has_tail](%[p])\n\t"
		"je 8f\n\t"
		"movl %c[o_tailword](%[p]), %%eax\n\t"
		"movl %%eax, (%%rdi)\n\t"
		"addq $4, %%rdi\n\t"
		"8:\n\t"
		"movl %c[o_nzero](%[p]), %%ecx\n\t"
		"9:\n\t"
		"testl %%ecx, %%ecx\n\t"
		"jz 10f\n\t"
		"movl $0, (%%rdi)\n\t"
		"addq $4, %%rdi\n\t"
		"decl %%ecx\n\t"
		"jmp 9b\n\t"
		"10:\n\t"
		"movq %c[o_last](%[p]), %%rdx\n\t"
		"movq %c[o_ts](%[p]), %%rax\n\t"
		"movq %%rax, (%%rdx)\n\t"
		/* the commit */
		"movq %c[o_update](%[p]), %%rax\n\t"
		"movq %%rax, (%%rsi)\n\t"
		"2:\n\t"
		".pushsection __rseq_failure, \"ax\"\n\t"
		".byte 0x0f, 0xb9, 0x3d\n\t"
		".long 0x53053053\n\t"
		"4:\n\t"
		"jmp %l[aborted]\n\t"
		".popsection\n\t"
		:
		: [p] "r"(p), [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		  [o_word] "i"(offsetof(struct publish_fast, word)),
		  [o_expect] "i"(offsetof(struct publish_fast, expect)),
		  [o_update] "i"(offsetof(struct publish_fast, update)),
		  [o_dst] "i"(offsetof(struct publish_fast, dst)),
		  [o_src] "i"(offsetof(struct publish_fast, src)),
		  [o_whole] "i"(offsetof(struct publish_fast, whole)),
		  [o_hdr] "i"(offsetof(struct publish_fast, hdr)),
		  [o_tailword] "i"(offsetof(struct publish_fast, tailword)),
		  [o_has_tail] "i"(offsetof(struct publish_fast, has_tail)),
		  [o_nzero] "i"(offsetof(struct publish_fast, nzero)),
		  [o_last] "i"(offsetof(struct publish_fast, last_ts)),
		  [o_ts] "i"(offsetof(struct publish_fast, ts))
		: "rax", "rcx", "rdx", "rsi", "rdi", "memory", "cc"
		: stale, aborted);
	return PUB_OK;
stale:
	return PUB_STALE;
aborted:
	return PUB_ABORT;
}
#endif

/* Whether this thread has a usable rseq area (probed once per thread). */
int tb_rseq_available(void);
/* The CPU the kernel last saw this thread on, and the rseq area's copy. */
unsigned tb_current_cpu(void);

/* Publish under rseq on cpu; PUB_OK, PUB_STALE or PUB_ABORT. */
int tb_publish_rseq(unsigned cpu, struct publish *p);
/* Publish under a try-lock; PUB_OK, PUB_STALE or PUB_BUSY. */
int tb_publish_locked(_Atomic uint32_t *lock, struct publish *p);

#endif
