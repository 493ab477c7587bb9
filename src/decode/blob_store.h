/* SPDX-License-Identifier: MIT */
/*
 * blob_store.h - the blobs a saved trace keeps for its blob references (a
 * capture's blobs.bin, a trace.dat's TB_TDAT_OPT_TB_BLOBS region; the
 * format is tracebuf/blob.h's), looked up when a reference is printed.
 * Internal to the reading side.
 *
 * The store reads its bytes with pread from fd at [base, base + len); it
 * indexes the entries on the first lookup (a trace without references
 * never reads them).  Damage (a bad entry, a length past the end, a CRC
 * that does not match) is told through problem() with the file and offset,
 * and the references it touches print as BLOB LOST.
 */
#ifndef TRACEBUF_BLOB_STORE_H
#define TRACEBUF_BLOB_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blob_store;
typedef void blob_problem_fn(void *ctx, const char *file, uint64_t offset, const char *reason);

/* NULL when out of memory.  owns_fd: blob_store_free closes fd.  name is copied. */
struct blob_store *blob_store_new(int fd, bool owns_fd, const char *name, uint64_t base, uint64_t len);
void blob_store_set_problem(struct blob_store *bs, blob_problem_fn *fn, void *ctx);
void blob_store_free(struct blob_store *bs);

/* The longest line blob_store_line makes, its newline included. */
#define BLOB_LINE_MAX 400

/*
 * What became of a reference: its bytes, or why they are not there: the
 * trace saved no blobs, this one was overwritten before it was saved, or
 * its copy is damaged (or not found in a store damaged before its end).
 */
enum blob_fate { BLOB_FOUND, BLOB_NO_STORE, BLOB_NOT_SAVED, BLOB_DAMAGED };

/*
 * The report line for the blob reference whose 24-byte payload is ref, on
 * cpu, into out (at least BLOB_LINE_MAX bytes): "CPU:N [BLOB: LEN bytes,
 * crc32 XXXXXXXX] "head"..." or a "CPU:N [BLOB LOST: LEN bytes, why]" line.
 * bs NULL: the trace saved no blobs.  Returns the length; *fate says which.
 */
size_t blob_store_line(struct blob_store *bs, int cpu, const void *ref, char *out, enum blob_fate *fate);

/* The blob ref names, read whole into *bytes (malloc'ed, the caller frees): its fate, *crc its CRC-32. */
enum blob_fate blob_store_get(struct blob_store *bs, const void *ref, uint8_t **bytes, uint32_t *crc);

#endif
