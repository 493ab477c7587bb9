/* SPDX-License-Identifier: MIT */
/*
 * batch.h - records turned into text by several threads, written in order.
 *
 * Turning a record into its line is most of a report's cost, and records
 * are independent once their printers are chosen, so a large report hands
 * them out in batches: the merging thread copies the records of the next
 * few thousand lines into a batch, worker threads render whole batches, and
 * the merging thread writes the batches' text out in the order they were
 * filled and accounts for each record (counts, problems) then, in order.
 *
 * What the workers touch must not change while they run: the caller
 * prepares every record's printer in the merging thread before adding it
 * (printers_prepare()); records that only the merging thread may render
 * (libtraceevent's, which is not thread-safe) it renders itself and adds
 * as text.
 *
 * Ownership: batcher_new() returns a handle freed by batcher_finish(),
 * which first renders and delivers everything added.
 */
#ifndef TRACEBUF_BATCH_H
#define TRACEBUF_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "printers.h"
#include "tracebuf/report.h"

/* A record rendered: what render_event() returned, where it came from, its problem if any. */
struct batch_result {
	int rc;
	int cpu;
	uint16_t id;
	const char *file;
	uint64_t file_offset;
	const struct tb_diag *err; /* when rc is -EINVAL */
	enum printer_kind used;    /* which printer printed it */
};

struct batch_sink {
	void *ctx;
	/* Text in output order; returns 0 or a negative errno that stops everything. */
	int (*write)(void *ctx, const char *text, size_t len);
	/* Each record after its text was written, in order. */
	void (*done)(void *ctx, const struct batch_result *r);
};

struct batcher;

/* 0 with *out set, or -ENOMEM; workers >= 1 threads render. */
int batcher_new(struct tb_schema *s, const struct tb_render_opts *opts, int workers,
		const struct batch_sink *sink, struct batcher **out);

/* Add a record (its payload is copied); file and offset name it in problems. 0 or negative errno. */
int batcher_add_event(struct batcher *b, const struct tb_event_ref *ev, const char *file,
		      uint64_t file_offset);

/* Add text that goes out as it is, between the records around it. */
int batcher_add_text(struct batcher *b, const char *text, size_t len);

/* Render and deliver everything, stop the workers, free b.  0 or the first error. */
int batcher_finish(struct batcher *b);

#endif
