/* SPDX-License-Identifier: MIT */
/*
 * merge.h - every data record of a capture (directory, trace.dat or live
 * instance), all CPUs of all its buffers merged by time stamp, for the analyses that
 * aggregate rather than print (off-CPU time, the JSON export).
 *
 * The pages are walked by pagework.c (the project's one page walk): by a
 * worker thread for a capture of some size, so decoding overlaps the
 * analysis, else on the calling thread one page at a time.  Memory stays
 * at a few sub-buffers per CPU.  Ties go to the lower CPU slot, as in the
 * kernel's `trace` (and trace-cmd's order of buffers).  Damaged sub-buffers are reported through the capture
 * (file and byte offset) and skipped; sub-buffers that carry the lost flag
 * are counted, so an analysis can say its pairing may have gaps.
 *
 * Time stamps are handed out in nanoseconds where the capture says how to
 * make them (tb_capture_ts_ns: a trace.dat's TSC2NSEC), else as stored.
 *
 * Ownership: merge_open() allocates the streams and the page walk,
 * merge_close() frees them; the capture stays the caller's and must
 * outlive the merge.  A record's data points into the walk's copy of its
 * page and is valid until the next merge_next().
 */
#ifndef TRACEBUF_ANALYZE_MERGE_H
#define TRACEBUF_ANALYZE_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebuf/capture.h"
#include "tracebuf/page.h"
#include "decode/tsc2nsec.h"

struct merge_stream;
struct pagework;

/* One sub-buffer flagged as following lost events, for a reader that lists losses (merge.on_loss). */
struct merge_loss {
	int cpu;
	uint64_t ts;	  /* the sub-buffer's time stamp, converted as the records' are */
	uint64_t count;	  /* the events lost, when count_known */
	bool count_known; /* the kernel stored the count (else: some, how many unknown) */
	const char *file; /* where the sub-buffer was read, and its byte */
	uint64_t offset;
};
typedef void merge_loss_fn(void *ctx, const struct merge_loss *l);

struct merge {
	struct tb_capture *capture;
	uint32_t mult, shift; /* the capture's TSC2NSEC (mult 0: none), kept at hand for every record */
	struct pagework *work;
	struct merge_stream *streams;
	int nstreams;
	bool started;
	struct merge_stream *pending; /* handed out its record; reads ahead on the next call */
	struct merge_stream *until;   /* the runner-up: pending keeps handing out while before it */
	int active;                   /* streams with a record, as the last scan found them */
	int fatal;           /* -ENOMEM when a page could not be walked whole */
	uint64_t records;    /* data records handed out */
	uint64_t pages;      /* sub-buffers read */
	uint64_t bad_pages;  /* sub-buffers that failed to decode, wholly or in part */
	uint64_t lost_pages; /* sub-buffers flagged: events were lost before them */
	uint64_t lost_events; /* the counts those flags stored (a lower bound) */
	uint64_t blob_refs;  /* blob references passed over (tracebuf/blob.h): not events */
	bool want_blobs;     /* set before the first merge_next: hand references out too (r->blob) */
	/*
	 * Set before the first merge_next: told of each lost-flagged sub-buffer
	 * when its CPU's stream reaches it, so before that CPU's records from
	 * it are handed out (other CPUs' earlier records may still follow).
	 * The loss, and its file name, are lent for the call only.
	 */
	merge_loss_fn *on_loss;
	void *loss_ctx;
};

/* One record of the merged stream. */
struct merged_record {
	int cpu;             /* the CPU it was written on */
	int slot;            /* the capture's slot (tb_capture_slot_buffer: which buffer) */
	uint64_t ts;         /* nanoseconds where the capture converts (merge_ts) */
	const uint8_t *data; /* payload, common header first */
	uint32_t len;
	uint16_t id; /* common_type; 0 when the payload is too short to hold it */
	bool blob;   /* a blob reference (want_blobs only): data is its 24-byte payload, id means nothing */
	const char *file;     /* where the record was read (the walk's name, valid as data is) */
	uint64_t file_offset; /* the byte of its payload in file, for a problem's message */
};

/* 0, or -ENOMEM. */
int merge_open(struct merge *m, struct tb_capture *c);
/* 1 with *r filled, 0 at the end of every CPU (m->fatal says whether it ended early). */
int merge_next(struct merge *m, struct merged_record *r);
void merge_close(struct merge *m);

/* A time taken from a record's field (a function's calltime) converted as the stamps are. */
static inline uint64_t merge_ts(const struct merge *m, uint64_t ts)
{
	return tsc2nsec(ts, m->mult, m->shift); /* as tb_capture_ts_ns(), without a call per record */
}

#endif
