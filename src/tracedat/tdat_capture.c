// SPDX-License-Identifier: MIT
/*
 * tdat_capture.c - a trace.dat as a struct tb_capture, so that everything
 * that reads captures (hist, off-CPU, the exporters, list) reads trace.dat
 * files too: every buffer with data (the program's and `record --kernel`'s
 * "kernel", say) in one capture, or the one buffer asked for.
 *
 * Each buffer's CPUs take slots one buffer after the other, in trace-cmd's
 * merged order (the top buffer, then the instances), as `report` numbers
 * them; within a buffer the capture numbers CPUs as the kernel did (a
 * buffer may list CPU 3 alone), and tb_capture_slot_cpu() gives a slot's
 * CPU back.  Each slot has its own page stream, so the merge by time
 * (analyze/merge.h) interleaves the buffers as it does CPUs.  No stats are given to the
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

static int source_next_page(void *ctx, int cpu, struct tb_capture_page *page)
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

/* A buffer's CPU slots: its highest CPU number with an entry + 1. */
static int buffer_slots(const struct tdat_buffer *b)
{
	int slots = 0;

	for (int i = 0; i < b->pub.ncpus; i++)
		if (b->cpus[i].cpu + 1 > slots)
			slots = b->cpus[i].cpu + 1;
	return slots;
}

/* A buffer's clock as read: trace-cmd reads a file that names none as the local clock's nanoseconds. */
static const char *buffer_clock(const struct tdat_buffer *b)
{
	return b->clock ? b->clock : "local";
}

/*
 * The blob store of the capture: the buffers' own, when one of them has
 * one (tracebuf writes blobs for the program's buffer alone; the kernel's
 * buffers hold no references).  NULL: none.
 */
static const struct tdat_store *blob_store_for(struct tb_tracedat *td, const int *buffers, int n)
{
	for (int i = 0; i < n; i++) {
		const struct tdat_store *st = tdat_store_of(td, td->buffers[buffers[i]].name);
		if (st)
			return st;
	}
	return NULL;
}

/* A slot of every CPU of each buffer in turn, with its stream, CPU number and buffer name. */
static int lay_out_slots(struct tdat_source *src, const int *buffers, int n, bool **has, int **cpu,
			 const char ***name)
{
	struct tb_tracedat *td = src->td;

	for (int i = 0; i < n; i++)
		src->slots += buffer_slots(&td->buffers[buffers[i]]);
	size_t room = src->slots ? (size_t)src->slots : 1;
	src->streams = calloc(room, sizeof(*src->streams));
	*has = calloc(room, sizeof(**has));
	*cpu = calloc(room, sizeof(**cpu));
	*name = calloc(room, sizeof(**name));
	if (!src->streams || !*has || !*cpu || !*name)
		return -ENOMEM;
	for (int i = 0, base = 0; i < n; base += buffer_slots(&td->buffers[buffers[i]]), i++) {
		const struct tdat_buffer *b = &td->buffers[buffers[i]];
		for (int c = 0; c < buffer_slots(b); c++) {
			(*cpu)[base + c] = c;
			(*name)[base + c] = b->name;
		}
		for (int c = 0; c < b->pub.ncpus; c++) {
			tdat_stream_init(&src->streams[base + b->cpus[c].cpu], td, b, &b->cpus[c]);
			(*has)[base + b->cpus[c].cpu] = true;
		}
	}
	return 0;
}

/* The capture over buffers[0..n) of td (trace-cmd's order), which it owns when owns_td. */
static int open_buffers(struct tb_tracedat *td, bool owns_td, const int *buffers, int n,
			const struct tb_capture_opts *opts, struct tb_capture **out)
{
	struct tdat_source *src = calloc(1, sizeof(*src));
	struct capture_source ops = {.next_page = source_next_page, .read_pages = source_read_pages,
				     .rewind = source_rewind, .close = source_close, .problems = source_problems,
				     .ctx = src};
	struct capture_desc desc = {
	    .name = td->path,
	    .schema = td->schema,
	    .online_cpus = td->info.cpus,
	    .clock = opts && opts->clock ? opts->clock : buffer_clock(&td->buffers[buffers[0]]),
	    .tsc2nsec_mult = td->info.tsc2nsec_mult,
	    .tsc2nsec_shift = td->info.tsc2nsec_shift,
	};
	struct tb_capture_opts o = {.diag = td->diag, .diag_ctx = td->diag_ctx};
	const char **slot_buffer = NULL;
	int *slot_cpu = NULL, rc;
	bool *has = NULL;

	if (!src) {
		if (owns_td)
			tb_tracedat_close(td);
		return -ENOMEM;
	}
	src->td = td;
	src->owns_td = owns_td;
	rc = lay_out_slots(src, buffers, n, &has, &slot_cpu, &slot_buffer);
	if (rc < 0) {
		free(has);
		free(slot_cpu);
		free(slot_buffer);
		source_close(src);
		return rc;
	}
	desc.slots = src->slots;
	desc.has_cpu = has;
	/* One buffer keeps the plain numbering (slot N is CPU N of ""), as every capture of one buffer has. */
	if (n > 1) {
		desc.slot_cpu = slot_cpu;
		desc.slot_buffer = slot_buffer;
	}
	rc = capture_open_source(&desc, &ops, &o, out);
	free(has);
	free(slot_cpu);
	free(slot_buffer);
	const struct tdat_store *st = rc == 0 ? blob_store_for(td, buffers, n) : NULL;
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

static bool buffer_has_data(const struct tdat_buffer *b)
{
	for (int c = 0; c < b->pub.ncpus; c++)
		if (b->cpus[c].size)
			return true;
	return false;
}

/* "" (top), "kernel": the buffers' names, for a message. */
static void buffer_names(const struct tb_tracedat *td, char *out, size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (int i = 0; i < td->nbuffers && at < size; i++) {
		int n = snprintf(out + at, size - at, "%s\"%s\"%s", i ? ", " : "", td->buffers[i].name,
				 td->buffers[i].name[0] ? "" : " (top)");
		at += n > 0 ? (size_t)n : 0;
	}
}

/*
 * The buffers a capture reads (into buffers[], td->nbuffers room): the one
 * named, or every buffer with data (the main buffer when none has).  Their
 * count, or a negative errno (reported): -ENOENT for a name the file has
 * not, -EINVAL for buffers of different clocks (their stamps do not
 * compare: one must be chosen).
 */
static int choose_buffers(struct tb_tracedat *td, const struct tb_capture_opts *opts, int *buffers)
{
	char names[512];
	int n = 0;

	if (opts && opts->buffer) {
		if ((buffers[0] = tb_tracedat_buffer_find(td, opts->buffer)) >= 0)
			return 1;
		buffer_names(td, names, sizeof(names));
		tdat_report(td, 0, "no buffer '%s' (the buffers are: %s)", opts->buffer, names);
		return -ENOENT;
	}
	for (int i = 0; i < td->nbuffers; i++)
		if (buffer_has_data(&td->buffers[i]))
			buffers[n++] = i;
	if (n == 0)
		buffers[n++] = tb_tracedat_main_buffer(td);
	for (int i = 1; i < n && !(opts && opts->clock); i++)
		if (strcmp(buffer_clock(&td->buffers[buffers[i]]), buffer_clock(&td->buffers[buffers[0]]))) {
			tdat_report(td, 0,
				    "buffers \"%s\" and \"%s\" have different clocks (%s, %s): their times do "
				    "not compare; read one with --buffer NAME",
				    td->buffers[buffers[0]].name, td->buffers[buffers[i]].name,
				    buffer_clock(&td->buffers[buffers[0]]), buffer_clock(&td->buffers[buffers[i]]));
			return -EINVAL;
		}
	return n;
}

/* The capture of the buffers opts chooses (choose_buffers); td closed on failure when owned. */
static int open_chosen(struct tb_tracedat *td, bool owns_td, const struct tb_capture_opts *opts,
		       struct tb_capture **out)
{
	int *buffers = calloc(td->nbuffers ? (size_t)td->nbuffers : 1, sizeof(*buffers));
	int n = buffers ? choose_buffers(td, opts, buffers) : -ENOMEM, rc;

	if (n < 0) {
		free(buffers);
		if (owns_td)
			tb_tracedat_close(td);
		return n;
	}
	rc = open_buffers(td, owns_td, buffers, n, opts, out);
	free(buffers);
	return rc;
}

int tb_tracedat_capture_chosen(struct tb_tracedat *td, const struct tb_capture_opts *opts,
			       struct tb_capture **out)
{
	*out = NULL;
	if (td->nbuffers == 0)
		return -ENOENT;
	return open_chosen(td, false, opts, out);
}

int tb_tracedat_capture(struct tb_tracedat *td, int buffer, const struct tb_capture_opts *opts,
			struct tb_capture **out)
{
	*out = NULL;
	if (buffer < 0 || buffer >= td->nbuffers)
		return -ENOENT;
	return open_buffers(td, false, &buffer, 1, opts, out);
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
	return open_chosen(td, true, opts, out);
}
