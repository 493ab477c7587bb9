// SPDX-License-Identifier: MIT
/*
 * tdat_capture.c - one buffer of a trace.dat as a struct tb_capture, so
 * that everything that reads captures (the report, the tests) reads
 * trace.dat files too.
 *
 * The capture numbers CPUs as the kernel did (a buffer may list CPU 3
 * alone); each has its own page stream.  No stats are given to the
 * capture: the ones trace-cmd stores were taken after it drained the
 * buffer, so the report's entries/written header counts the data instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/blob_store.h"
#include "decode/capture_source.h"
#include "tdat_capture.h"
#include "tdat_internal.h"

struct tdat_source {
	struct tb_tracedat *td;
	bool owns_td;
	int slots;
	struct tdat_stream *streams; /* by CPU number; cpu NULL where the buffer has none */
};

static int source_next_page(void *ctx, int cpu, struct tb_raw_page *page)
{
	struct tdat_source *src = ctx;

	if (cpu < 0 || cpu >= src->slots || !src->streams[cpu].cpu)
		return 0;
	return tdat_stream_next(&src->streams[cpu], page);
}

static int source_read_pages(void *ctx, int cpu, uint8_t *buf, size_t room, size_t max_pages,
			     capture_page_fn *got, void *got_ctx)
{
	struct tdat_source *src = ctx;

	if (cpu < 0 || cpu >= src->slots || !src->streams[cpu].cpu)
		return 0;
	return tdat_stream_read(&src->streams[cpu], buf, room, max_pages, got, got_ctx);
}

static int source_rewind(void *ctx)
{
	struct tdat_source *src = ctx;

	for (int i = 0; i < src->slots; i++)
		if (src->streams[i].cpu)
			tdat_stream_rewind(&src->streams[i]);
	return 0;
}

static void source_close(void *ctx)
{
	struct tdat_source *src = ctx;

	if (!src)
		return;
	for (int i = 0; i < src->slots; i++)
		tdat_stream_free(&src->streams[i]);
	free(src->streams);
	if (src->owns_td)
		tb_tracedat_close(src->td);
	free(src);
}

/* What the trace.dat's reader said of the file: its open (a cut, a bad buffer block) and its pages. */
static unsigned long source_problems(void *ctx)
{
	const struct tdat_source *src = ctx;

	return tb_tracedat_problems(src->td);
}

static int open_buffer(struct tb_tracedat *td, bool owns_td, int buffer, const struct tb_capture_opts *opts,
		       struct tb_capture **out)
{
	const struct tdat_buffer *b = &td->buffers[buffer];
	struct tdat_source *src = calloc(1, sizeof(*src));
	struct capture_source ops = {.next_page = source_next_page, .read_pages = source_read_pages,
				     .rewind = source_rewind, .close = source_close, .problems = source_problems,
				     .ctx = src};
	struct capture_desc desc = {
	    .name = td->path,
	    .schema = td->schema,
	    .online_cpus = td->info.cpus,
	    /* trace-cmd reads a file that names no clock as the local clock's nanoseconds. */
	    .clock = opts && opts->clock ? opts->clock
		     : b->clock		 ? b->clock
					 : "local",
	    .tsc2nsec_mult = td->info.tsc2nsec_mult,
	    .tsc2nsec_shift = td->info.tsc2nsec_shift,
	};
	struct tb_capture_opts o = {.diag = td->diag, .diag_ctx = td->diag_ctx};
	bool *has = NULL;
	int rc = 0;

	if (!src) {
		if (owns_td)
			tb_tracedat_close(td);
		return -ENOMEM;
	}
	src->td = td;
	src->owns_td = owns_td;
	for (int i = 0; i < b->pub.ncpus; i++)
		if (b->cpus[i].cpu + 1 > src->slots)
			src->slots = b->cpus[i].cpu + 1;
	src->streams = calloc(src->slots ? (size_t)src->slots : 1, sizeof(*src->streams));
	has = calloc(src->slots ? (size_t)src->slots : 1, sizeof(*has));
	if (!src->streams || !has)
		rc = -ENOMEM;
	for (int i = 0; rc == 0 && i < b->pub.ncpus; i++) {
		tdat_stream_init(&src->streams[b->cpus[i].cpu], td, b, &b->cpus[i]);
		has[b->cpus[i].cpu] = true;
	}
	if (rc < 0) {
		free(has);
		source_close(src);
		return rc;
	}
	desc.slots = src->slots;
	desc.has_cpu = has;
	rc = capture_open_source(&desc, &ops, &o, out);
	free(has);
	const struct tdat_store *st = rc == 0 ? tdat_store_of(td, b->name) : NULL;
	if (st) {
		/* td's descriptor, open as long as the capture reads its pages */
		struct blob_store *bs = blob_store_new(td->fd, false, td->path, st->at, st->len);
		if (!bs) {
			tb_capture_close(*out);
			*out = NULL;
			return -ENOMEM;
		}
		capture_set_blobs(*out, bs);
	}
	return rc;
}

int tb_tracedat_capture(struct tb_tracedat *td, int buffer, const struct tb_capture_opts *opts,
			struct tb_capture **out)
{
	*out = NULL;
	if (buffer < 0 || buffer >= td->nbuffers)
		return -ENOENT;
	return open_buffer(td, false, buffer, opts, out);
}

int tracedat_capture_open(const char *path, const struct tb_capture_opts *opts, struct tb_capture **out)
{
	struct tb_tracedat_opts o = {.diag = opts ? opts->diag : NULL, .diag_ctx = opts ? opts->diag_ctx : NULL,
				     .lazy_formats = opts && opts->lazy_formats};
	struct tb_tracedat *td;
	int rc = tb_tracedat_open(path, &o, &td);

	*out = NULL;
	if (rc < 0)
		return rc;
	if (td->nbuffers == 0) {
		tdat_report(td, 0, "the file holds no trace buffer");
		tb_tracedat_close(td);
		return -ENOENT;
	}
	if (td->info.latency) {
		tdat_report(td, 0,
			    "the file holds latency text, not sub-buffers: print it with "
			    "`tracebuf report --like-trace-cmd`");
		tb_tracedat_close(td);
		return -EINVAL;
	}
	return open_buffer(td, true, tb_tracedat_main_buffer(td), opts, out);
}
