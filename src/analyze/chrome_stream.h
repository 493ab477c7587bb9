/* SPDX-License-Identifier: MIT */
/*
 * chrome_stream.h - the Chrome JSON writer (chrome_json.c) a record at a
 * time, for a reader that owns the merge: tb_chrome_json_write() and the
 * export stage's kind (export/export_json.c) both drive it.
 *
 * chrome_begin() writes the opening (the clock, and the TSC conversion
 * when mult is not 0) into its buffer; chrome_feed() takes each merged
 * record (blob references too: they name their blob's instant);
 * chrome_end() writes the tracks' names and the closing, flushes, and says
 * the first error (-EIO, -ENOMEM, or the merge's).  totals are filled as
 * tb_chrome_json_write() fills them.
 *
 * Ownership: chrome_begin() allocates, chrome_free() frees (NULL is fine);
 * out, opts, totals and the capture stay the caller's and must outlive it.
 */
#ifndef TRACEBUF_ANALYZE_CHROME_STREAM_H
#define TRACEBUF_ANALYZE_CHROME_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "merge.h"
#include "tracebuf/chrome.h"

struct chrome;

/* NULL when memory ran out. */
struct chrome *chrome_begin(struct tb_capture *cap, FILE *out, const struct tb_chrome_opts *opts,
			    struct tb_chrome_totals *totals, uint32_t mult, uint32_t shift);
/* 0, or the error that stopped the writer (it takes no more records then). */
int chrome_feed(struct chrome *c, const struct merged_record *r);
int chrome_end(struct chrome *c, const struct merge *m);
void chrome_free(struct chrome *c);

#endif
