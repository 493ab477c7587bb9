/* SPDX-License-Identifier: MIT */
/* ring_internal.h - the process-local ring handle.  Internal. */
#ifndef TRACEBUF_RING_INTERNAL_H
#define TRACEBUF_RING_INTERNAL_H

#include "ring_layout.h"
#include "tracebuf/ring.h"

struct tb_ring {
	/* What the write fast path reads, together. */
	struct tb_region *r;     /* the shared, position-independent region */
	struct tb_cpu_ctl **cpu; /* per CPU control blocks in r */
	uint8_t **pages;         /* per CPU first page in r */
	uint32_t ncpus;
	uint32_t clock;
	uint32_t data_size;    /* record bytes per sub-buffer */
	uint32_t subbuf_shift; /* log2 of the sub-buffer size */
	int use_rseq;          /* publish with rseq sections (else try-lock) */

	int owns_mem; /* heap region: freed with the handle */
	struct tb_ring_opts opts;
};

/* The reader side serialises per CPU; readers may wait, writers never do. */
void reader_lock(struct tb_cpu_ctl *c);
/* Events committed on c so far, read consistently with the tail it returns in *v. */
uint64_t tail_events(struct tb_region *r, struct tb_cpu_ctl *c, struct tail_view *v);
void reader_unlock(struct tb_cpu_ctl *c);

#endif
