/* SPDX-License-Identifier: MIT */
/*
 * pagecount.h - a unit's pages walked for a count (pagework's PW_COUNT):
 * every record header decoded and checked by the page codec's rules, each
 * data record's time stamp kept, nothing copied and nothing rendered.
 *
 * pagework's fill() hands each sub-buffer here the moment the capture lends
 * it, so the page is walked straight out of the capture's buffer (the page
 * cache's copy for plain trace.dat and raw files, the decompressor's output
 * for compressed ones) and never copied into the unit.  What a page-level
 * step needs later (the header, the file and offset) is kept by fill() as
 * in the other modes.
 *
 * Ownership: the arrays belong to the unit (struct pw_counted);
 * pw_count_free() frees them.
 */
#ifndef TRACEBUF_PAGECOUNT_H
#define TRACEBUF_PAGECOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "pagework.h"

/* Empty the unit's steps and stamps for a new filling. */
void pw_count_reset(struct pw_unit *u);

/*
 * Walk page number page of the unit (size bytes at data, lent by the
 * capture): its page-level steps and its records' stamps appended.  Out of
 * memory: u->text.oom is set (the unit then says oom, as in the other modes).
 */
void pw_count_page(struct pw_unit *u, uint32_t page, const uint8_t *data, size_t size);

void pw_count_free(struct pw_unit *u);

#endif
