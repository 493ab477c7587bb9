/* SPDX-License-Identifier: MIT */
/*
 * write_fast.h - the layout contract between the C ring handle and the
 * hand-written write fast path (write_x86_64.S).  Plain #defines so the
 * assembler can include it; ring.c proves every offset with _Static_assert.
 * Internal.
 */
#ifndef TRACEBUF_WRITE_FAST_H
#define TRACEBUF_WRITE_FAST_H

/* struct tb_ring (ring_internal.h) */
#define WF_RING_REGION 0       /* struct tb_region *r */
#define WF_RING_CTL0 8         /* CPU 0's control block */
#define WF_RING_CPU_STRIDE 16  /* bytes per CPU block */
#define WF_RING_DATA_OFFSET 24 /* control block to page 0's records */
#define WF_RING_PAGE_MASK 32   /* uint64_t: 0xffff << log2(subbuf_size) */
#define WF_RING_FAST_NCPUS 40  /* uint32_t: CPUs the fast path may append on, 0 for none */
#define WF_RING_PHYS_SHIFT 44  /* uint32_t: WF_T_PHYS_SHIFT - log2(subbuf_size) */
#define WF_RING_RSEQ_OFFSET 48 /* ptrdiff_t: glibc's __rseq_offset */
#define WF_RING_COUNT_KEY 56   /* uint64_t: the handle's number << 16 (inflight.c) */
#define WF_RING_BEGUN0 64      /* uint64_t *: slot 0's count of writes begun, in this mapping */

/* The thread table (ring_layout.h) */
#define WF_THREAD_SLOTS 256
#define WF_THREAD_SLOT_SHIFT 6

/* struct tb_cpu_ctl (ring_layout.h) */
#define WF_CTL_TAIL 0
#define WF_CTL_LAST_TS 24 /* last_ts[2], indexed by the tail word's phase */
#define WF_CTL_FAST_WORDS 40 /* uint32_t: data words per page, 0 while recording is off */

/* The tail word (ring_layout.h) */
#define WF_T_OFF_MASK 0x1ffff /* off, in 4-byte units */
#define WF_T_COUNT_ONE 0x20000 /* 1 << T_COUNT_SHIFT */
#define WF_T_PHYS_SHIFT 33
#define WF_T_PHASE_BIT 63

/* struct rseq (linux/rseq.h) */
#define WF_RSEQ_CPU_ID 4
#define WF_RSEQ_CS 8
#define WF_RSEQ_SIG 0x53053053 /* glibc's RSEQ_SIG on x86 */

/* page format (tracebuf/page.h, pagefmt.h) */
#define WF_MAX_SMALL_DATA 112 /* longest payload of a compact record */
#define WF_DELTA_MAX 0x7ffffff /* 27 bits */

#endif
