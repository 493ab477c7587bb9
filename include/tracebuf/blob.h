/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/blob.h - payloads too big for a record, by indirection.
 *
 * A record holds at most tb_ring_max_payload() bytes, and every record is
 * copied whole inside one publish step.  A bigger payload goes to the ring's
 * blob area instead (opts.blob_kb per CPU, in the same region): the writer
 * gets contiguous space there, fills it outside the publish step, and then
 * commits a small record into the ring that refers to it (a blob
 * reference).  Readers resolve the reference: tb_consume(),
 * tb_consume_merged() and the iterator return TB_READ_BLOB with the bytes,
 * or TB_READ_BLOB_LOST when the blob was overwritten before it was read
 * (tracebuf/reader.h).  A reader never gets torn bytes, nor another blob's.
 *
 * Overwrite mode: new blobs reuse the oldest space, read or not; a reference
 * read after its blob was overwritten says so.  Producer/consumer mode: space
 * is reused only once a consuming reader has taken the blob's reference
 * (tb_consume, tb_consume_merged, or tb_read_page, which hands the reference
 * over with its page); until then a full area refuses new blobs.  Either way
 * a blob being filled is never overwritten: a writer that would have to
 * refuses (-ENOBUFS).
 *
 * Every refusal except -EAGAIN (recording off) and the caller's mistakes
 * (-EINVAL, -EOPNOTSUPP) is counted, like tb_write's (tracebuf/stats.h):
 * -ENOBUFS in blob_full, -E2BIG in too_big, and the reference record's own
 * refusals where tb_write counts them.
 *
 * All writer calls are async-signal-safe, make no allocation and no system
 * call, and never wait for another thread.
 *
 * Ownership: the blob area belongs to its ring (tb_ring_free() frees it
 * with the ring).  A struct tb_blob is the caller's, anywhere it likes;
 * its data points into the ring's area and is the caller's to fill only
 * until tb_blob_commit() or tb_blob_discard().  Bytes a reader gets
 * (TB_READ_BLOB, tracebuf/reader.h) follow that reader's rule;
 * tb_blob_resolve() copies into the caller's buffer; tb_blob_save_page()
 * writes to the caller's fd and keeps nothing.
 */
#ifndef TRACEBUF_BLOB_H
#define TRACEBUF_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/page.h"
#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Copy len bytes into the blob area and commit the reference record.
 * 0, or -EINVAL (data NULL with len > 0), -EOPNOTSUPP (the ring has no blob
 * area), -E2BIG (len above tb_ring_blob_size), -ENOBUFS (no room that may be
 * reused), -EAGAIN (not recording), or the reference record's refusals as
 * tb_write returns them (-ENOSPC, -EBUSY).
 */
int tb_blob_write(struct tb_ring *ring, const void *data, size_t len);

/*
 * A reservation in the blob area (zero copy): tb_blob_reserve() gives the
 * space, the caller fills data[0..len), tb_blob_commit() publishes the
 * reference (or tb_blob_discard() gives the space back).  The handle is the
 * caller's, on its stack or anywhere; several may be open at once, on any
 * thread; each is committed or discarded exactly once.
 */
struct tb_blob {
	void *data;   /* where the len bytes go */
	uint32_t len;
	int error;    /* 0, or why tb_blob_reserve returned NULL (-errno as tb_blob_write) */
	/* private */
	uint32_t area;
	uint32_t chunks;
	uint64_t first;
};

void *tb_blob_reserve(struct tb_ring *ring, size_t len, struct tb_blob *blob);
/* 0 or tb_blob_write's errors; the space is given back on failure.  -EINVAL: not an open reservation. */
int tb_blob_commit(struct tb_ring *ring, struct tb_blob *blob);
void tb_blob_discard(struct tb_ring *ring, struct tb_blob *blob);

/*
 * The reference record, as it is in the ring's pages (and in tb_read_page's):
 * a data record in the kernel's long form (type_len 0, array[0] = 28) with a
 * 24-byte payload, little endian:
 *
 *   offset 0  u32 magic   TB_BLOB_REF_MAGIC ("TBLB")
 *   offset 4  u32 len     the blob's bytes
 *   offset 8  u64 first   allocation number of its first chunk in the area
 *   offset 16 u32 area    the CPU block whose blob area holds it
 *   offset 20 u32 zero
 *
 * tb_write never writes a payload this small in the long form (nor does the
 * kernel on x86-64), so the form is what marks a reference; the magic and
 * the size are checked too.  docs/design.md §9 says where the bytes are.
 */
#define TB_BLOB_REF_MAGIC 0x424c4254u
#define TB_BLOB_REF_SIZE 24u

struct tb_blob_ref {
	uint32_t len;
	uint32_t area;
	uint64_t first;
};

/* 1 with *ref filled when rec is a blob reference, else 0. */
int tb_blob_ref_decode(const struct tb_record *rec, struct tb_blob_ref *ref);

/*
 * Copy the blob a reference names (from a raw page, say) into buf, without
 * consuming anything.  Returns its length; -ESTALE when it has been
 * overwritten (or never was a blob of this ring; buf's bytes are then
 * meaningless); -ENOSPC when size is smaller than the blob (nothing copied);
 * -EINVAL for NULL arguments.  Safe beside running writers and readers.
 */
long tb_blob_resolve(struct tb_ring *ring, const struct tb_blob_ref *ref, void *buf, size_t size);

/*
 * Saving blobs with the pages that refer to them.  A saver of pages (a
 * capture directory's cpuN.raw, a trace.dat) carries the references but not
 * the blob area, so it copies each referenced blob, when it takes the page,
 * into a blob store: a stream of entries, little endian, each
 *
 *   offset 0  u32 magic   TB_BLOB_SAVED_MAGIC ("TBBS")
 *   offset 4  u32 len     the blob's bytes
 *   offset 8  u64 first   the reference's first
 *   offset 16 u32 area    the reference's area
 *   offset 20 u32 crc     CRC-32 of the bytes (IEEE, as zlib's crc32)
 *   offset 24 len bytes, then zeros up to a multiple of 8
 *
 * A reader finds a reference's blob by (area, first, len).  A blob
 * overwritten before its page was saved has no entry (and is counted
 * lost).  A capture directory keeps the store as blobs.bin; a trace.dat
 * holds it in an option (docs/library.md, "Blobs").
 */
#define TB_BLOB_SAVED_MAGIC 0x53424254u
#define TB_BLOB_SAVED_HEADER 24u
#define TB_BLOB_STORE_FILE "blobs.bin"

struct tb_blob_save_counts {
	uint64_t saved;	 /* blobs copied into the store */
	uint64_t lost;	 /* references whose blob was overwritten (or never of this ring) */
	uint64_t bytes;	 /* blob bytes saved */
};

/*
 * Append to fd the blob of every reference on page (size bytes, a page as
 * tb_read_page gives it) that ring's blob area still holds intact (the
 * checks of tb_blob_resolve: never torn bytes, never another blob's).
 * Counts go into *counts (added to).  0, or -errno: -ENOMEM, a write error
 * (the store then ends with a partial entry, which readers report).
 * Allocates one buffer per blob; no lock; safe beside running writers.
 */
int tb_blob_save_page(struct tb_ring *ring, const void *page, size_t size, int fd,
		      struct tb_blob_save_counts *counts);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of n bytes, continuing crc (0 to start). */
uint32_t tb_crc32(uint32_t crc, const void *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif
