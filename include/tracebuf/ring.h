/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/ring.h - the per-CPU lockless trace ring buffer: creation,
 * sizing, and the write path.
 *
 * A ring owns one buffer per CPU, each a circle of sub-buffers in the
 * kernel's page format plus one reader page.  All of it lives in a single
 * position-independent region, allocated by tb_ring_new() (heap) or
 * supplied by the caller (opts.mem).
 *
 * Ownership: tb_ring_new() returns a handle the caller frees with
 * tb_ring_free(), which frees the handle and, for heap rings, the region;
 * caller memory (opts.mem) stays the caller's, who must keep it mapped
 * until tb_ring_free().
 *
 * After creation the write path (tb_write, tb_reserve/tb_commit) makes no
 * allocation, takes no lock and makes no system call; it never blocks and
 * never fails silently: every event it does not store is counted (see
 * tracebuf/stats.h).  It is async-signal-safe.  One exception: a thread's
 * first write on a ring claims the thread's slot in the ring's table of
 * writes begun (what makes crash recovery's count of writes in flight
 * exact): a scan of the table and a compare-and-swap, and the thread's id,
 * read with two system calls once per thread (by tb_ring_thread_init() if
 * called first).  Another: a thread's first tb_reserve() maps the thread's
 * reservation scratch (one mmap, async-signal-safe; unmapped at the
 * thread's exit), unless tb_ring_thread_init() did.
 *
 * Errors are negative errno values.
 *
 * Misuse: every setup, query and read call checks its pointers and values
 * and answers -EINVAL (queries: 0; void calls: nothing) for a NULL handle
 * or output.  The write path (tb_write, tb_reserve, tb_commit) does not:
 * it is a few instructions long and stays so.  Its ring must be one that
 * tb_ring_new() returned and that is not freed, and data must point
 * to len bytes; a NULL or dangling ring or a NULL data with len > 0 is
 * undefined behaviour (in practice a crash) and the caller's duty.
 */
#ifndef TRACEBUF_RING_H
#define TRACEBUF_RING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tb_ring;

/* Clocks, named after the kernel's trace_clock choices. */
enum tb_clock {
	TB_CLOCK_TSC = 0, /* "x86-tsc": raw TSC, converted to ns when read (default) */
	TB_CLOCK_MONO,    /* "mono": CLOCK_MONOTONIC ns */
	TB_CLOCK_BOOT,    /* "boot": CLOCK_BOOTTIME ns */
	TB_CLOCK_COUNTER, /* "counter": a shared counter, not time */
};

struct tb_ring_opts {
	size_t size_kb;       /* per CPU, like buffer_size_kb (default 1408) */
	size_t subbuf_size;   /* bytes: 4096 << 0..7 (default 4096) */
	unsigned ncpus;       /* buffers (default: configured CPUs) */
	int overwrite;        /* 1 (default): drop oldest; 0: refuse newest */
	enum tb_clock clock;  /* default TB_CLOCK_TSC */
	int no_rseq;          /* 1: publish under a per-buffer try-lock (valgrind, tests) */
	void *mem;            /* optional caller memory for the region */
	size_t mem_size;      /* its size; see tb_ring_region_size() */
	size_t blob_kb;       /* per CPU: the blob area for big payloads (tracebuf/blob.h), 0: none */
};

/* Fill opts with the defaults (NULL: nothing). */
void tb_ring_opts_default(struct tb_ring_opts *opts);

/* Bytes of region the options need (for caller-supplied memory; NULL: the defaults; 0: invalid). */
size_t tb_ring_region_size(const struct tb_ring_opts *opts);

/*
 * Create a ring (opts NULL: the defaults).  0 with *ring set, -EINVAL when
 * ring is NULL or an option is invalid (sub-buffer size not 4 KiB << 0..7,
 * size_kb too large, ncpus above 4096, an unknown clock, mem given with a
 * size below tb_ring_region_size() or not 64-byte aligned), -E2BIG when a
 * CPU would need more than 65535 sub-buffers, -ENOMEM.
 */
int tb_ring_new(struct tb_ring **ring, const struct tb_ring_opts *opts);
/* Free the ring (NULL: nothing).  No call on it may be running or follow. */
void tb_ring_free(struct tb_ring *ring);

/*
 * Discard all data and counters; recording stays on or off as it was.  No
 * writer may be active, nor any other call on the ring.
 */
int tb_ring_reset(struct tb_ring *ring);
/*
 * Change the per-CPU size of a heap ring (data is discarded), like reset
 * otherwise.  -EPERM for a ring in caller memory, -EINVAL for size_kb 0.
 */
int tb_ring_resize(struct tb_ring *ring, size_t size_kb);

/*
 * Stop / restart recording (writes while stopped return -EAGAIN, uncounted).
 * Safe beside writers and other calls of itself; writers may see the
 * change a little late, like the kernel's tracing_on.
 */
void tb_ring_set_recording(struct tb_ring *ring, int on);

unsigned tb_ring_ncpus(const struct tb_ring *ring);
size_t tb_ring_subbuf_size(const struct tb_ring *ring);
/* Largest payload tb_write accepts (sub-buffer data size - 8). */
uint32_t tb_ring_max_payload(const struct tb_ring *ring);
enum tb_clock tb_ring_clock(const struct tb_ring *ring);
const char *tb_clock_name(enum tb_clock clock);
/* Read the ring's clock now (raw units) and convert raw values to ns. */
uint64_t tb_ring_clock_now(const struct tb_ring *ring);
uint64_t tb_ring_to_ns(const struct tb_ring *ring, uint64_t raw);
/* Whether writers use rseq sections (1) or the try-lock fallback (0). */
int tb_ring_uses_rseq(const struct tb_ring *ring);
/* Bytes of each CPU's blob area (0: the ring has none), the largest blob it takes. */
size_t tb_ring_blob_size(const struct tb_ring *ring);

/*
 * The names of the threads that wrote to a ring (one in shared memory,
 * tracebuf/shm.h, is read from any process): fn(arg, tid, name) for the last thread to take each
 * slot of the region's thread table, with the name (comm) it had when it
 * first wrote, also after it ended, until another thread takes the slot.
 * tid is the thread's id in its own process.  `tracebuf record` reads them
 * after each drain for the trace's saved_cmdlines.  A thread renamed after
 * its first write keeps its first name here.  Any ring works (a heap ring's
 * writers take slots too).  Returns how many were handed out, or -EINVAL.
 */
int tb_ring_thread_names(const struct tb_ring *ring, void (*fn)(void *arg, int32_t tid, const char *name), void *arg);

/*
 * Write one event of len bytes to the current CPU's buffer.
 * 0, or -E2BIG (too big), -ENOSPC (ring full, producer/consumer mode),
 * -EBUSY (fallback mode only: every buffer locked), -EAGAIN (not recording).
 * Each refusal except -EAGAIN is counted.
 */
int tb_write(struct tb_ring *ring, const void *data, uint32_t len);

/*
 * tb_write with the record stamped ts, a reading of the ring's clock
 * (tb_ring_clock_now) this thread made just before: for a caller that puts
 * the same time in the payload too (function exit records carry their
 * return time), one clock read instead of two.  Time never goes back in a
 * buffer: a ts before the last record of the CPU the write lands on
 * (another write came in between) or far past it is not used, and the
 * record takes the clock's time then, as tb_write's does; so does every
 * write that tb_write's fast path would not take (on x86-64, a TSC ring
 * with rseq; elsewhere always).  Returns as tb_write.
 */
int tb_write_at(struct tb_ring *ring, const void *data, uint32_t len, uint64_t ts);

/*
 * Reserve len bytes, fill them, commit.  The space is per-thread scratch
 * (TB_RESERVE_MAX bytes, TB_MAX_NEST levels, so signal handlers may nest
 * reservations); tb_commit() time-stamps the event and publishes it into
 * the buffer of the CPU the thread then runs on, in one indivisible step.
 * Reservations are committed innermost first.  NULL (and counted) when the
 * event is too big or nesting is too deep (or, counted as nesting, when
 * the thread's scratch cannot be mapped: see above).  tb_commit() of anything but the
 * innermost reservation's pointer (NULL included) returns -EINVAL and
 * publishes nothing; tb_discard() of it does nothing.  The ring: see
 * "Misuse" above.
 */
#define TB_MAX_NEST 5
#define TB_RESERVE_MAX 4072u
void *tb_reserve(struct tb_ring *ring, uint32_t len);
int tb_commit(struct tb_ring *ring, void *event);
/* Drop the innermost reservation without writing it. */
void tb_discard(struct tb_ring *ring, void *event);

/* Map this thread's reservation scratch and read its id: the system calls of a first write/reserve done now (call before signal handlers may trace). */
void tb_ring_thread_init(void);

/* The kernel's buffer_size_kb arithmetic (see docs/design.md). */
struct tb_sizing {
	uint64_t requested_kb;
	uint32_t subbuf_bytes;
	uint32_t data_bytes;      /* per sub-buffer: subbuf_bytes - 16 */
	uint32_t subbufs_per_cpu; /* n = max(2, ceil(kb * 1024 / data_bytes)) */
	uint64_t usable_bytes;    /* n * data_bytes */
	uint64_t readback_kb;     /* what buffer_size_kb reads back */
	uint64_t allocated_bytes_per_cpu; /* (n + 1) * subbuf_bytes, reader page included */
};

/* subbuf_kb follows buffer_subbuf_size_kb: 1..512, rounded up to 4 KiB << order. */
int tb_sizing_compute(uint64_t size_kb, uint32_t subbuf_kb, struct tb_sizing *out);
void tb_ring_sizing(const struct tb_ring *ring, struct tb_sizing *out);

#ifdef __cplusplus
}
#endif
#endif
