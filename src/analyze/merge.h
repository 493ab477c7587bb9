/* SPDX-License-Identifier: MIT */
/*
 * merge.h - every data record of a capture (directory, trace.dat or live
 * instance), all CPUs merged by time stamp, for the analyses that
 * aggregate rather than print (off-CPU time, the JSON export).
 *
 * Memory stays at one sub-buffer per CPU.  Ties go to the lower CPU, as in
 * the kernel's `trace`.  Damaged sub-buffers are reported through the
 * capture (file and byte offset) and skipped; sub-buffers that carry the
 * lost flag are counted, so an analysis can say its pairing may have gaps.
 *
 * Ownership: merge_open() allocates the streams, merge_close() frees them;
 * the capture stays the caller's and must outlive the merge.  A record's
 * data points into the capture's page buffer and is valid until the next
 * merge_next().
 */
#ifndef TRACEBUF_ANALYZE_MERGE_H
#define TRACEBUF_ANALYZE_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebuf/capture.h"
#include "tracebuf/page.h"

struct merge_stream;

struct merge {
	struct tb_capture *capture;
	struct merge_stream *streams;
	int nstreams;
	bool started;
	struct merge_stream *pending; /* handed out its record; reads ahead on the next call */
	uint64_t records;    /* data records handed out */
	uint64_t pages;      /* sub-buffers read */
	uint64_t bad_pages;  /* sub-buffers that failed to decode, wholly or in part */
	uint64_t lost_pages; /* sub-buffers flagged: events were lost before them */
	uint64_t lost_events; /* the counts those flags stored (a lower bound) */
	uint64_t blob_refs;  /* blob references passed over (tracebuf/blob.h): not events */
};

/* One record of the merged stream. */
struct merged_record {
	int cpu;
	uint64_t ts;
	const uint8_t *data; /* payload, common header first */
	uint32_t len;
	uint16_t id; /* common_type; 0 when the payload is too short to hold it */
};

/* 0, or -ENOMEM. */
int merge_open(struct merge *m, struct tb_capture *c);
/* 1 with *r filled, 0 at the end of every CPU. */
int merge_next(struct merge *m, struct merged_record *r);
void merge_close(struct merge *m);

#endif
