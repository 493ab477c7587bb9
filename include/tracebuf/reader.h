/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/reader.h - every way to read a ring, all safe beside running
 * writers, all reporting losses with exact counts.
 *
 *   tb_consume()         consuming read of one CPU (the kernel's trace_pipe)
 *   tb_consume_merged()  consuming read of all CPUs, merged by time
 *   tb_read_page()       a whole sub-buffer in the kernel's page format, with
 *                        the lost flag and stored count as trace_pipe_raw has
 *   tb_iter_*()          non-consuming iterator; unlike the kernel's `trace`
 *                        file it reports events lost before and during the
 *                        iteration, with counts
 *
 * Every event committed on a CPU has a number (seqno), counted from 0 since
 * the ring was created or reset.  A reader that skips numbers reports the
 * skipped count as a TB_READ_LOST event before the next record, so the
 * count is exactly the gap.  Every read path numbers a LOST event the same
 * way: its .seqno is the number of the first event after the gap (the
 * record that follows it, when one does), so it covers the numbers
 * [.seqno - .lost, .seqno).
 *
 * Consuming readers of the same CPU are serialised internally (they may
 * wait for each other; writers never wait for anyone).
 *
 * Ownership: tb_iter_new() returns an iterator the caller frees with
 * tb_iter_free() (before the ring); struct tb_read_event, struct
 * tb_read_info and page buffers are the caller's.  The data pointer of
 * an event stays valid until the next read call on the same ring (consuming)
 * or iterator (tb_iter_next); copy what you keep.  With several threads
 * consuming one ring, that next call may be another thread's: the ring's
 * state, the numbering and the loss counts stay exact, but a payload can be
 * overwritten before you read it, so such threads must serialise each call
 * together with their use of data (or give each CPU one consumer).
 *
 * Every call here returns -EINVAL for a NULL ring, iterator, event or
 * buffer, a CPU the ring does not have, or a buffer smaller than a
 * sub-buffer; tb_iter_free(NULL) does nothing.
 */
#ifndef TRACEBUF_READER_H
#define TRACEBUF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tb_read_kind {
	TB_READ_RECORD = 0,
	TB_READ_LOST,      /* lost events: count in .lost, numbers [.seqno - .lost, .seqno) */
	TB_READ_BLOB,      /* a blob (tracebuf/blob.h): its bytes in .data, exactly .len */
	TB_READ_BLOB_LOST, /* a blob overwritten before it was read: .len it had, .data NULL */
};

/*
 * A blob is one event, numbered like a record: its reference record is what
 * the CPU's buffer holds.  A reference lost with its page is inside a LOST
 * count like any record; a reference read after its blob was overwritten is
 * TB_READ_BLOB_LOST (the consuming readers count it in blob_lost).
 */
struct tb_read_event {
	enum tb_read_kind kind;
	unsigned cpu;
	uint64_t ts;      /* raw clock value */
	uint64_t ns;      /* ts in ns (tb_ring_to_ns) */
	uint64_t seqno;   /* RECORD, BLOB: its number on its CPU; LOST: the number after the gap */
	const void *data; /* payload (RECORD), the blob's bytes (BLOB) */
	uint32_t len;     /* payload bytes, rounded up to 4 as the format stores them; BLOB: exact */
	uint64_t lost;    /* LOST: how many */
};

/* 1 with *ev filled, 0 when the CPU has nothing more now, or -errno. */
int tb_consume(struct tb_ring *ring, unsigned cpu, struct tb_read_event *ev);
/*
 * The oldest next event of all CPUs: 1, 0 when every CPU had nothing when
 * it was looked at, or -errno.  Several threads may call it at once: each
 * event number reaches exactly one of them, as a record or inside a LOST
 * count (but see above for the data pointer).
 */
int tb_consume_merged(struct tb_ring *ring, struct tb_read_event *ev);

/*
 * Hand over the next sub-buffer of cpu into buf (size >= the sub-buffer
 * size): swapped out whole when the writers have left it (commit = the end
 * of its data), otherwise the records committed so far, copied (page stamp =
 * the reader's current time).  Returns the sub-buffer size, 0 when there is
 * nothing to read, or -errno.  Events lost before it set bit 31 of commit
 * and, when 8 bytes are left, store the count after the data (bit 30).
 */
long tb_read_page(struct tb_ring *ring, unsigned cpu, void *buf, size_t size);
/*
 * A page holds blob references as they are (tracebuf/blob.h): tb_blob_ref_decode
 * finds them and tb_blob_resolve copies the blob while it is still there.
 * Handing a reference over counts as consuming it: in producer/consumer mode
 * its blob's space may then be reused.
 */

/* What a page read knows beside the page itself. */
struct tb_read_info {
	uint64_t lost;        /* events lost right before the page: exact, even when the page
			       * had no room to store the count (bit 31 alone) */
	uint64_t first_seqno; /* number of the page's first event (after the lost ones) */
	uint32_t events;      /* data records in the page */
};

/*
 * tb_read_page(), and *info (when not NULL) filled whenever a page is
 * returned (left alone on 0 or an error).  -EINVAL for a NULL ring or buf.
 */
long tb_read_page_info(struct tb_ring *ring, unsigned cpu, void *buf, size_t size,
		       struct tb_read_info *info);

struct tb_iter;
/*
 * Start a non-consuming walk over everything unread now (up to the tail as
 * it is when the walk starts).  Events it cannot show are reported as
 * TB_READ_LOST with their count: overwritten before or during the walk, or
 * taken meanwhile by a consuming reader of the same ring.  Caller frees with
 * tb_iter_free().
 */
int tb_iter_new(struct tb_ring *ring, struct tb_iter **it);
/*
 * 1 with *ev (records merged across CPUs by time, LOST events in place), 0
 * at the end, or -ENOMEM when a blob's copy could not be allocated (the
 * event is not lost: the next call returns it again).
 */
int tb_iter_next(struct tb_iter *it, struct tb_read_event *ev);
void tb_iter_free(struct tb_iter *it);

#ifdef __cplusplus
}
#endif
#endif
