/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/ringsvg.h - a picture of each CPU's ring buffer as a capture
 * saw it: the diagram the kernel's ring-buffer design document draws in
 * ASCII, for the real state of a real ring.
 *
 * Per CPU, one row: the reader page (the spare sub-buffer a reader swaps
 * with the head), then the ring's sub-buffers in the order a reader takes
 * them - the head (oldest) first, the commit page (newest, where the
 * writer is) last, then those holding nothing - each a cell filled to its
 * commit length, with its events and time span on hover; a sub-buffer
 * that follows lost events is marked with the count it stored; before the
 * head, what the writer overwrote (the stats' overrun), and under the row
 * the stats' loss arithmetic (written = entries + overrun + read, lost and
 * its share).
 *
 * The sub-buffers are the capture's raw pages (for a saved tracebuf ring
 * or a kernel capture: everything the ring held, oldest first); the ring's
 * size comes from the caller (a capture's meta.txt buffer_size_kb), and
 * when it is not known the row ends after the pages read.
 *
 * Ownership: nothing is kept; the capture stays the caller's.  The pages
 * are read: rewind the capture (tb_capture_rewind) to read them again.
 */
#ifndef TRACEBUF_RINGSVG_H
#define TRACEBUF_RINGSVG_H

#include <stdio.h>

#include "tracebuf/capture.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_ringsvg_opts {
	const char *title;	   /* NULL: "Ring buffer" */
	unsigned subbufs_per_cpu;  /* the ring's sub-buffers per CPU, reader page excluded; 0: unknown */
};

/* 0, -EIO when writing failed, -ENOMEM. */
int tb_ringsvg_write(struct tb_capture *c, const struct tb_ringsvg_opts *opts, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
