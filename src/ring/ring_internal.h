/* SPDX-License-Identifier: MIT */
/* ring_internal.h - the process-local ring handle.  Internal. */
#ifndef TRACEBUF_RING_INTERNAL_H
#define TRACEBUF_RING_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ring_layout.h"
#include "tracebuf/ring.h"

/*
 * The first fields are what the write fast path reads, together; their
 * offsets are a contract with write_x86_64.S (write_fast.h, checked in
 * ring.c).  A CPU's control block is found by arithmetic, not through a
 * table: a load saved on the write path's longest chain.
 */
struct tb_ring {
	struct tb_region *r;   /* the shared, position-independent region */
	uint8_t *ctl0;         /* CPU 0's control block in r */
	uint64_t cpu_stride;   /* bytes from one CPU's block to the next */
	uint64_t data_offset;  /* from a control block to its page 0's records */
	uint64_t page_mask;    /* with phys_shift: (tail >> phys_shift) & page_mask = phys * subbuf_size */
	uint32_t fast_ncpus;   /* CPUs the asm path appends on: ncpus, or 0 (no rseq, not the TSC clock, no BMI2) */
	uint32_t phys_shift;   /* T_PHYS_SHIFT - log2(subbuf_size): sub-buffers are powers of two */
	ptrdiff_t rseq_offset; /* glibc's __rseq_offset, read once */
	/*
	 * The count of writes begun (inflight.c): this handle's number << 16,
	 * xored with the thread's cached slot (count_key | offset), and the
	 * address of slot 0's count in this process's mapping.
	 */
	uint64_t count_key;
	uint64_t *begun0;

	int use_rseq; /* publish with rseq sections (else try-lock) */
	int owns_mem; /* heap region: freed with the handle */
	struct tb_ring_opts opts;
	/*
	 * Rings with a blob area: per CPU, where a consuming reader copies the
	 * blob of the reference it consumes (under that CPU's reader lock), so
	 * the event's data stays valid like a record's.  Process-local.
	 */
	struct blob_copy *blob_copies;
	/*
	 * A reader of a named shared-memory file, which cannot be sealed:
	 * another process may shrink it under the mapping.  tb_shm_window
	 * runs under the SIGBUS guard (shm_guard.c) over the region, and a
	 * fault is -EFAULT with the text tb__shm_shrank() leaves.  NULL: none.
	 */
	struct tb_shm *guard_shm;
	/*
	 * A reader of a shared-memory file (memfd or named): tb_shm_window
	 * copies the pages out of the file with pread (tb__shm_read) rather
	 * than through the mapping, so no page of the region is faulted in
	 * and none has to be unmapped (those faults were half of a
	 * snapshot's time).  NULL: the mapping is read (heap, private copy).
	 */
	struct tb_shm *page_file;
	struct tb_ring *live_next; /* the handles alive in this process (inflight.c) */
	/*
	 * Who this handle's threads are in the region's thread table
	 * (inflight.c): a description of the region's file opened for the
	 * byte locks that tell a slot's owner lives (-1: none, a heap region
	 * or a copy), and the upper half
	 * of their owner words: the writer number the region gave this handle
	 * in this process (0 until its first claim, and again in a forked child).
	 */
	int lock_fd;
	uint64_t lock_file[2]; /* st_dev, st_ino of the region's file: what lock_fd must still name */
	_Atomic uint32_t writer_hi;
};

struct blob_copy {
	void *buf;
	size_t cap;
};

/*
 * The write path: the common case in write_x86_64.S, everything else in
 * tb__append_slow (ring.c).  Hidden: internal to the library.
 */
#define TB_HIDDEN __attribute__((visibility("hidden")))
#if defined(__x86_64__)
TB_HIDDEN int tb__write(struct tb_ring *ring, const void *data, uint32_t len); /* tb_write, no PLT */
TB_HIDDEN extern const uint8_t tb__small_type_len[];
#else
#define tb__write tb_write
#endif
TB_HIDDEN int tb__append_slow(struct tb_ring *ring, const void *data, uint32_t len);
/*
 * Count a record the filter at the source rejected (src/source/event_filter.c):
 * in filtered, or in too_big when the ring could not have held it; nothing
 * while recording is off.  The record was never reserved.
 */
TB_HIDDEN void tb__ring_filtered(struct tb_ring *ring, uint32_t len);
/* Write a record in the long form whatever its length: a blob reference (blob.c). */
TB_HIDDEN int tb__append_long(struct tb_ring *ring, const void *data, uint32_t len);

/*
 * The count of writes begun (inflight.c, docs/design.md §10).  Every write
 * that can reach a publish section is counted once in this thread's slot
 * before anything of it can be interrupted, and undone if it is refused:
 * tb_write counts in write_x86_64.S and enters tb__write_counted, tb_reserve
 * counts and tb_commit publishes through tb__write_counted, blob references
 * count in tb__append_long; tb__append_slow undoes every refusal.
 */
TB_HIDDEN void tb__count_begun(struct tb_ring *ring);
TB_HIDDEN void tb__count_undo(struct tb_ring *ring);
#if defined(__x86_64__)
TB_HIDDEN int tb__write_counted(struct tb_ring *ring, const void *data, uint32_t len);
#else
#define tb__write_counted tb__append_slow
#endif
/* The thread's slot missed in tb_write: count, then write (the asm's .Lmiss). */
TB_HIDDEN int tb__write_miss(struct tb_ring *ring, const void *data, uint32_t len);
/* A handle is born (a new count_key, listed alive), renewed (resize: a new key), or gone. */
/* A writer's handle on a region's file (shm.c): a description of fd's file of its own takes the slots' locks. */
TB_HIDDEN void tb__count_ring_file(struct tb_ring *ring, int fd);
TB_HIDDEN void tb__count_ring_born(struct tb_ring *ring);
TB_HIDDEN void tb__count_ring_renew(struct tb_ring *ring);
TB_HIDDEN void tb__count_ring_gone(struct tb_ring *ring);
/* tb_ring_thread_init: the count's thread-local state touched, the thread's id read (no syscall in a first write). */
TB_HIDDEN void tb__count_thread_init(void);
/* At this thread's exit, release its slots and its reservation scratch (async-signal-safe in glibc). */
TB_HIDDEN void tb__thread_exit_arm(void);
/* The thread's reservation scratch unmapped (ring.c; thread exit). */
TB_HIDDEN void tb__scratch_release(void);
/* A new or reset region's table: every count 0 (owners kept on reset: their threads go on). */
TB_HIDDEN void tb__thread_table_init(struct tb_region *r, int keep_owners);

/* Attaching to a region another process made (shm.c): check it, then wrap it in a handle. */
TB_HIDDEN int tb__region_check(const struct tb_region *r, size_t mapped, const char **why);
TB_HIDDEN int tb__ring_attach(struct tb_ring **out, void *mem);

/*
 * fn(arg) with a SIGBUS raised by a read of [lo, lo + len) turned into
 * -EFAULT and *faulted = 1 (shm_guard.c: what fn may do); otherwise fn's
 * result and *faulted = 0.
 */
TB_HIDDEN int tb__sigbus_guarded(const void *lo, size_t len, int (*fn)(void *arg), void *arg, int *faulted);
struct tb_shm;
/* After a guarded read faulted: say, for tb_shm_error(), how the file shrank (shm.c). */
TB_HIDDEN int tb__shm_shrank(struct tb_shm *shm);
/*
 * len bytes of shm's file at off (a byte of the region) into dst: 0,
 * -EFAULT when the file ends first (a named file shrunk: tb__shm_shrank
 * says so), or a read's -errno.  Touches no page of the mapping.
 */
TB_HIDDEN int tb__shm_read(struct tb_shm *shm, void *dst, size_t len, uint64_t off);

/* The reader side serialises per CPU; readers may wait, writers never do. */
void reader_lock(struct tb_cpu_ctl *c);
/* Events committed on c so far, read consistently with the tail it returns in *v. */
uint64_t tail_events(struct tb_region *r, struct tb_cpu_ctl *c, struct tail_view *v);
void reader_unlock(struct tb_cpu_ctl *c);

#endif
