/* SPDX-License-Identifier: MIT */
/*
 * capture_source.h - a capture whose pages come from somewhere other than
 * a capture directory or tracefs (a trace.dat buffer, src/tracedat).
 *
 * The source describes the capture once (schema, CPUs, clock, stats) and
 * then serves pages through its callbacks; everything else - problems,
 * queries, the report - works as for any capture.  Internal to the reading
 * side.
 *
 * Ownership: the capture calls close(ctx) when it is closed.  The schema is
 * the source's (the capture never frees it).
 */
#ifndef TRACEBUF_CAPTURE_SOURCE_H
#define TRACEBUF_CAPTURE_SOURCE_H

#include "tracebuf/capture.h"

/*
 * A page capture_read_pages() just wrote into the caller's buffer
 * (page->data points there); page->file lives only until the call returns.
 */
typedef void capture_page_fn(void *ctx, const struct tb_capture_page *page);

struct capture_source {
	/* As tb_capture_next_page(), for a CPU the description says has data. */
	int (*next_page)(void *ctx, int cpu, struct tb_capture_page *page);
	/* As capture_read_pages(), for a CPU the description says has data. */
	int (*read_pages)(void *ctx, int cpu, uint8_t *buf, size_t room, size_t max_pages, capture_page_fn *got,
			  void *got_ctx);
	/* Start every CPU again from its first page. */
	int (*rewind)(void *ctx);
	void (*close)(void *ctx);
	/*
	 * Problems the source told itself (a trace.dat's reader: a file cut
	 * short, a chunk that does not decompress), counted in
	 * tb_capture_problems() with the capture's own; may be NULL.
	 */
	unsigned long (*problems)(void *ctx);
	void *ctx;
};

struct capture_desc {
	const char *name;			 /* the input, as messages name it */
	struct tb_schema *schema;		 /* borrowed */
	int slots;				 /* CPU slots */
	const bool *has_cpu;			 /* slots entries: whether the CPU has pages */
	const struct tb_cpu_stats *const *stats; /* slots entries, NULL where none; may be NULL */
	int online_cpus;
	const char *clock;  /* its trace clock; NULL: opts->clock, else an error */
	const char *tracer; /* NULL: "nop" */
	/* A trace.dat's TSC2NSEC: ns = (ts * mult) >> shift (mult 0: the stamps are used as they are). */
	uint32_t tsc2nsec_mult, tsc2nsec_shift;
	/*
	 * Several buffers in one capture: slots entries each, the CPU a slot's
	 * pages were recorded on and its buffer's name (copied).  NULL: slot N
	 * is CPU N of the one buffer, "".
	 */
	const int *slot_cpu;
	const char *const *slot_buffer;
};

/*
 * A capture over src.  0 with *out set, or a negative errno (-EINVAL when
 * the clock is missing or unknown, reported through opts' diag).  On
 * failure src->close is called.
 */
int capture_open_source(const struct capture_desc *desc, const struct capture_source *src,
			const struct tb_capture_opts *opts, struct tb_capture **out);

/*
 * The CPU's next whole sub-buffers written straight into buf, one after the
 * other: as many as tb_capture_next_page() would give in a row, up to
 * max_pages of them and no more than room bytes, each handed to
 * got(got_ctx, page) once it is there.  The number of pages, 0 when there
 * are no more, or a negative errno: -ENOSPC (nothing read) when room cannot
 * hold one sub-buffer (tb_capture_subbuf_size()).  A problem is reported as
 * tb_capture_next_page() reports it, after the pages before it were handed
 * over, and ends the CPU's pages (the call returns the pages before it).
 * Fewer than max_pages is not the end: a v7 trace.dat ends a call before a
 * compressed chunk that does not fit in what is left, to decompress it
 * whole at the start of the next.  Nothing is copied beyond the read (or
 * the decompression) itself - but for a chunk larger than the whole buffer,
 * copied out of the stream's spill buffer - and nothing is ever written
 * past buf + room, whatever sizes the data claims.
 */
int capture_read_pages(struct tb_capture *c, int cpu, uint8_t *buf, size_t room, size_t max_pages,
		       capture_page_fn *got, void *got_ctx);

/* n bytes at off of fd into buf, whole (EINTR retried), or false; nothing is said. */
bool capture_pread_whole(int fd, void *buf, size_t n, uint64_t off);

/* The saved blobs of the capture's references (blob_store.h), which it then owns; NULL: none saved. */
struct blob_store;
void capture_set_blobs(struct tb_capture *c, struct blob_store *bs);
struct blob_store *capture_blobs(const struct tb_capture *c);

/*
 * For an input kind that builds its capture over a private copy (a shm
 * session's window, src/input/shm_session.c): the stamps' TSC2NSEC as a
 * trace.dat of the same pages would carry it (mult 0: none), and a hook
 * tb_capture_close() calls last, after the capture let go of its files,
 * to remove the copy and free ctx.  One hook per capture; a second
 * replaces the first.
 */
void capture_set_tsc2nsec(struct tb_capture *c, uint32_t mult, uint32_t shift);
void capture_on_close(struct tb_capture *c, void (*fn)(void *ctx), void *ctx);

#endif
