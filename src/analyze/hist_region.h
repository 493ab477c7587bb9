/* SPDX-License-Identifier: MIT */
/*
 * hist_region.h - where an attached hist's tables live: one shared-memory
 * region per attached hist (a memfd named "tracebuf-hist:SYSTEM:EVENT",
 * sealed against shrinking and growing), self-describing, so a reader in
 * another process (`tracebuf hist --attach PID`) maps it read-only and
 * needs nothing from the program:
 *
 *   [header: magic, version, geometry, counters][event][spec][format]
 *   [ntables table headers, 32 bytes each][ntables * nslots slots]
 *
 * A slot is [state][first_ts][hitcount][sums...][key words...], u64 each.
 * state is 0 (empty) or a sequence number: odd while its one writer
 * changes the slot, even (>= 2) when the slot is whole.  The writer
 * (hist_attach.c) makes it odd, issues a release fence, changes the
 * counters, and stores the next even number with release; a reader loads
 * state with acquire, copies the slot, issues an acquire fence and loads
 * state again: the copy is whole only when both loads are the same even
 * number (a seqlock: the reader never writes, so the writers never wait).
 *
 * The writer trusts only its private copy of the geometry; a reader
 * trusts nothing in the region (hist_region.c checks it all).
 */
#ifndef TB_HIST_REGION_H
#define TB_HIST_REGION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hist_internal.h"

/*
 * GCC refuses atomic_thread_fence under ThreadSanitizer (-Wtsan, an error
 * here).  Every word of a slot is an atomic, so TSan has no race to see;
 * under it the reader's fence is left out (hist_region.c).
 */
#if defined(__SANITIZE_THREAD__)
#define HIST_REGION_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HIST_REGION_TSAN 1
#endif
#endif

#define HIST_REGION_MAGIC "TBHISTR"
#define HIST_REGION_VERSION 1
#define HIST_REGION_NAME "tracebuf-hist:" /* the memfd's name, before SYSTEM:EVENT */
#define HIST_REGION_TEXT_MAX (64u * 1024) /* event + spec + format */
#define HIST_REGION_TABLES_MAX 4096

/* A slot's words */
#define SLOT_STATE 0
#define SLOT_FIRST_TS 1
#define SLOT_HITCOUNT 2
#define SLOT_SUMS 3

enum { HIST_REGION_LIVE = 1, HIST_REGION_REMOVED = 2 };

struct hist_region_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* this struct */
	uint64_t region_size; /* the whole region */
	_Atomic uint32_t state; /* LIVE, REMOVED (tb_hist_remove) */
	uint32_t pid;
	uint32_t ordinal; /* the attached hist's place in the process (print order) */
	uint32_t ntables, nslots, slot_words, max_entries;
	uint32_t event_len, spec_len, format_len; /* texts after the header, in this order, no NULs */
	uint64_t tables_off; /* table headers */
	uint64_t slots_off;  /* table i's slots at slots_off + i * nslots * slot_words * 8 */
	_Atomic uint64_t no_table; /* hits that found every table busy (Dropped) */
	_Atomic uint64_t filtered;
};

struct hist_region_table {
	_Atomic uint32_t busy; /* claimed by one writer */
	uint32_t pad;
	_Atomic uint64_t used;	  /* slots filled */
	_Atomic uint64_t dropped; /* hits of a new key while full */
	uint64_t pad2;
};

/* How often a reader copies a slot that changes under it before it takes it as it is. */
#define HIST_REGION_TRIES 10000

/*
 * Add every whole slot of the region at base into h's table, and its
 * Dropped counts into h->dropped.  geo: the region's geometry (a private,
 * checked copy for a reader outside; the header itself in the process);
 * fd: the region's file, whose holes (tables never written) are passed over
 * unread so reading allocates nothing, or -1 (read every slot).  tries: how
 * often a slot that changes under the copy is read again; *unsettled counts
 * those never read whole (taken as last read).  0 or -ENOMEM.
 */
int hist_region_merge(struct tb_hist *h, const struct hist_region_header *geo, const void *base, int fd,
		      unsigned tries, uint64_t *unsettled);

#endif
