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
#include <sys/rseq.h>

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
	/*
	 * A second word that must still hold what the writer saw: last_ts of
	 * the snapshot's phase.  Time moves on, so the pair (tail word, last
	 * time) never comes back: no ABA even after the tail word's 14-bit
	 * generation has wrapped while this writer was preempted.
	 */
	_Atomic uint64_t *word2;
	uint64_t expect2;
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len; /* multiple of 4 */
	uint32_t n64, n32;
	struct pub_st64 st64[PUB_MAX_ST64];
	struct pub_st32 st32[PUB_MAX_ST32];
};

enum { PUB_OK = 0, PUB_STALE = 1, PUB_ABORT = -1, PUB_BUSY = -2 };

static inline void pub_init(struct publish *p, _Atomic uint64_t *word, uint64_t expect,
			    _Atomic uint64_t *word2, uint64_t expect2)
{
	p->word = word;
	p->expect = expect;
	p->word2 = word2;
	p->expect2 = expect2;
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

/* This thread's rseq area, registered by glibc (its fields are valid when __rseq_size > 0). */
static inline struct rseq *pub_rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* Whether this thread has a registered rseq area now (it may unregister). */
int pub_rseq_available(void);
/* The CPU the kernel last saw this thread on, and the rseq area's copy. */
unsigned pub_current_cpu(void);

/* Publish under rseq on cpu; PUB_OK, PUB_STALE or PUB_ABORT. */
int pub_section(unsigned cpu, struct publish *p);
/* Publish under a try-lock; PUB_OK, PUB_STALE or PUB_BUSY. */
int pub_locked(_Atomic uint32_t *lock, struct publish *p);

#endif
