// SPDX-License-Identifier: MIT
/*
 * tdat_pages.c - one CPU's sub-buffers from a trace.dat, one at a time.
 *
 * Plain data is read READ_AHEAD bytes (whole sub-buffers) per pread, and
 * handed out from that buffer: a sixteenth of the system calls of one
 * pread a sub-buffer, and no copy more.  Compressed data (v7) is a
 * chunk count and chunks {u32 compressed size, u32 decompressed size,
 * bytes}; their headers and bytes are taken from a read-ahead of
 * READ_AHEAD bytes of the CPU's data (~10 chunks a pread, where each took
 * two); each chunk is decompressed incrementally, straight into
 * the one sub-buffer being handed out, so memory per CPU is a sub-buffer,
 * the read-ahead and the decompressor, whatever size the chunks claim.  A
 * chunk must produce exactly the size it declares, in whole sub-buffers,
 * and may not claim more than TDAT_MAX_RATIO times its compressed size.
 * A read-ahead that cannot be read is read again as the bytes needed
 * alone, so an I/O error or the file's end is said as reading them said it.
 *
 * tdat_stream_read() writes many sub-buffers at once straight into the
 * caller's memory instead: plain ones with one pread, and each zstd chunk
 * decompressed whole in one call (one pass, no copy out of a window)
 * straight into the caller's memory.  A chunk that does not fit in what is
 * left of it ends the call, to start the next; one larger than the whole
 * buffer is decompressed into the stream's spill buffer (at most SPILL_MAX
 * bytes), whose sub-buffers are copied out in this call and the next.
 * Whatever goes wrong in a chunk read so is found again by going through
 * the chunk a sub-buffer at a time, as tdat_stream_next() does, so the same
 * pages come out before the same problem, said at the same place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/pread_full.h"
#include "tdat_internal.h"

/*
 * Bytes read per pread: whole plain sub-buffers, or compressed data (chunk
 * headers and the chunks that fit whole: ~10 of v7z.dat's per pread; 256
 * KiB made 105 preads of its 312, for 4 times the memory per CPU); and
 * compressed bytes given to the decompressor at a time.
 */
#define READ_AHEAD (64u << 10)
/* The largest chunk decompressed whole into the spill buffer; larger ones are streamed. */
#define SPILL_MAX (1u << 20)

void tdat_stream_init(struct tdat_stream *s, struct tb_tracedat *td, const struct tdat_buffer *b,
		      const struct tb_tracedat_cpu *cpu)
{
	memset(s, 0, sizeof(*s));
	s->td = td;
	s->cpu = cpu;
	s->page_size = b->pub.page_size;
	s->compressed = b->pub.compressed;
	s->chunks_kept = b->chunks_kept ? b->chunks_kept[cpu - b->cpus] : UINT32_MAX;
	s->ahead = READ_AHEAD;
	tdat_stream_rewind(s);
}

void tdat_stream_rewind(struct tdat_stream *s)
{
	s->done = s->cpu->size == 0;
	s->pos = s->cpu->offset;
	s->end = s->cpu->offset + s->cpu->size + (s->compressed ? 4 : 0);
	s->chunks_left = 0;
	s->chunk_in_left = 0;
	s->chunk_out_left = 0;
	s->chunk_ended = false;
	s->in_len = s->in_pos = 0;
	s->zin = NULL;
	s->ra_at = s->ra_len = 0;
	s->spill_pos = s->spill_len = 0;
	s->chunk_at = 0;
	s->label_chunk = 0;
	if (s->compressed)
		s->chunks_left = UINT32_MAX; /* the count is read with the first page */
}

void tdat_stream_free(struct tdat_stream *s)
{
	free(s->page);
	free(s->in);
	free(s->ra);
	free(s->spill);
	free(s->label);
	s->label = NULL;
	tdat_unzip_free(s->unzip);
	s->page = s->in = s->ra = s->spill = NULL;
	s->spill_cap = 0;
	s->unzip = NULL;
}

/* The stream is over: what went wrong, reported, as a negative errno. */
static int stop(struct tdat_stream *s, int rc)
{
	s->done = true;
	return rc;
}

/* The CPU's data ends left bytes (not 0) into the sub-buffer at s->pos: said, and the stream ends. */
static int stop_partial(struct tdat_stream *s, uint64_t left)
{
	tdat_report(s->td, s->pos,
		    "CPU %d's data ends %llu bytes into a %u-byte sub-buffer; "
		    "the partial sub-buffer is skipped",
		    s->cpu->cpu, (unsigned long long)left, s->page_size);
	return stop(s, 0);
}

/*
 * The next whole sub-buffers of the CPU's data into s->in: 0 or a negative
 * errno.  When the big read fails, the sub-buffers are read one at a time,
 * so the one that cannot be read is reported at its own offset, after
 * those before it were handed out - as reading one at a time would.
 */
static int read_ahead_plain(struct tdat_stream *s, uint64_t left)
{
	size_t pages = READ_AHEAD / s->page_size ? READ_AHEAD / s->page_size : 1;
	size_t n = left / s->page_size < pages ? (size_t)(left / s->page_size) * s->page_size : pages * s->page_size;

	if (!s->in && !(s->in = malloc(pages * s->page_size)))
		return -ENOMEM;
	s->in_len = s->in_pos = 0;
	if (!capture_pread_whole(s->td->fd, s->in, n, s->pos)) {
		for (size_t at = 0; at < n; at += s->page_size) {
			int rc = tdat_pread(s->td, s->in + at, s->page_size, s->pos + at, "a sub-buffer");
			if (rc < 0 && at == 0)
				return rc;
			if (rc < 0) {
				n = at;
				break;
			}
		}
	}
	s->in_len = n;
	return 0;
}

static int next_plain_page(struct tdat_stream *s)
{
	uint64_t left = s->end - s->pos;
	int rc;

	if (left == 0)
		return stop(s, 0);
	if (left < s->page_size)
		return stop_partial(s, left);
	if (s->in_pos == s->in_len && (rc = read_ahead_plain(s, left)) < 0)
		return stop(s, rc);
	s->data = s->in + s->in_pos;
	s->in_pos += s->page_size;
	s->pos += s->page_size;
	return 1;
}

/*
 * n bytes of the CPU's data at file offset at (at + n within it, n at most
 * READ_AHEAD), from the read-ahead, which is read again from at when it
 * does not hold them: NULL when they cannot be read, *rc then the negative
 * errno, said as tdat_pread() of those n bytes alone says it.
 */
static const uint8_t *ahead(struct tdat_stream *s, uint64_t at, size_t n, const char *what, int *rc)
{
	size_t most = s->ahead < READ_AHEAD ? s->ahead : READ_AHEAD;
	size_t want = s->end - at < most ? (size_t)(s->end - at) : most;
	int error;

	if (at >= s->ra_at && at + n <= s->ra_at + s->ra_len)
		return s->ra + (at - s->ra_at);
	if (!s->ra && !(s->ra = malloc(READ_AHEAD))) {
		*rc = -ENOMEM;
		return NULL;
	}
	s->ra_at = at;
	s->ra_len = tb__pread_full(s->td->fd, s->ra, want > n ? want : n, at, &error);
	if (s->ra_len >= n)
		return s->ra;
	s->ra_len = 0;
	if ((*rc = tdat_pread(s->td, s->ra, n, at, what)) < 0)
		return NULL;
	s->ra_len = n; /* read the second time */
	return s->ra;
}

/* Read the chunk count (first call) or the next chunk's header. */
static int open_chunk(struct tdat_stream *s)
{
	const uint8_t *h;
	uint32_t clen, ulen;
	int rc;

	if (s->chunks_left == UINT32_MAX) {
		if (!(h = ahead(s, s->pos, 4, "the chunk count", &rc)))
			return rc;
		s->chunks_left = tdat_le32(h);
		s->pos += 4;
		/* A file cut short in this CPU's data: the chunks it holds whole (the cut was said). */
		if (s->chunks_left > s->chunks_kept)
			s->chunks_left = s->chunks_kept;
		if (s->chunks_left > (s->end - s->pos) / 8) {
			tdat_report(s->td, s->pos - 4,
				    "CPU %d: %u compressed chunks cannot fit in its "
				    "%llu bytes",
				    s->cpu->cpu, s->chunks_left, (unsigned long long)(s->end - s->pos));
			return -EINVAL;
		}
	}
	if (s->chunks_left == 0)
		return 0;
	if (s->end - s->pos < 8) {
		tdat_report(s->td, s->pos, "CPU %d's data ends inside a chunk header", s->cpu->cpu);
		return -EINVAL;
	}
	if (!(h = ahead(s, s->pos, 8, "a chunk header", &rc)))
		return rc;
	clen = tdat_le32(h);
	ulen = tdat_le32(h + 4);
	s->chunk_at = s->pos;
	if (clen > s->end - s->pos - 8) {
		tdat_report(s->td, s->pos,
			    "CPU %d: a chunk of %u compressed bytes runs past the %llu "
			    "bytes of the CPU's data",
			    s->cpu->cpu, clen, (unsigned long long)(s->end - s->pos - 8));
		return -EINVAL;
	}
	if (ulen % s->page_size) {
		tdat_report(s->td, s->pos,
			    "CPU %d: a chunk declares %u bytes, not a whole number of "
			    "%u-byte sub-buffers",
			    s->cpu->cpu, ulen, s->page_size);
		return -EINVAL;
	}
	if ((uint64_t)ulen > (uint64_t)clen * TDAT_MAX_RATIO + s->page_size) {
		tdat_report(s->td, s->pos,
			    "CPU %d: %u compressed bytes claim to hold %u: refused "
			    "(a decompression bomb, or damage)",
			    s->cpu->cpu, clen, ulen);
		return -EINVAL;
	}
	if (!s->unzip && (rc = tdat_unzip_new(s->td->codec, &s->unzip)) < 0)
		return rc;
	if ((rc = tdat_unzip_reset(s->unzip)) < 0)
		return rc;
	s->pos += 8;
	s->chunk_clen = clen;
	s->chunk_ulen = ulen;
	s->chunk_in_left = clen;
	s->chunk_out_left = ulen;
	s->chunk_ended = false;
	s->in_len = s->in_pos = 0;
	s->chunks_left--;
	return 1;
}

/* More compressed input from the current chunk (READ_AHEAD bytes at most); 0, or a negative errno. */
static int refill(struct tdat_stream *s)
{
	size_t n;
	int rc = 0;

	if (s->in_pos < s->in_len || s->chunk_in_left == 0)
		return 0;
	n = s->chunk_in_left < READ_AHEAD ? (size_t)s->chunk_in_left : READ_AHEAD;
	if (!(s->zin = ahead(s, s->pos, n, "compressed data", &rc)))
		return rc;
	s->pos += n;
	s->chunk_in_left -= n;
	s->in_len = n;
	s->in_pos = 0;
	return 0;
}

static int corrupt(struct tdat_stream *s, const char *why)
{
	tdat_report(s->td, s->chunk_at, "CPU %d: the %s chunk here %s", s->cpu->cpu,
		    tdat_codec_name(s->td->codec), why);
	return -EINVAL;
}

/*
 * Decompress into out[*got..want), refilling as needed.  1 when the block
 * ended, 0 when out is full, negative errno (reported).
 */
static int produce(struct tdat_stream *s, uint8_t *out, size_t want, size_t *got)
{
	const char *why = "is corrupt";

	while (*got < want) {
		size_t in_before = s->in_pos, out_before = *got;
		int rc = refill(s);
		if (rc < 0)
			return rc;
		rc = tdat_unzip_step(s->unzip, s->zin ? s->zin : (const uint8_t *)"", s->in_len, &s->in_pos,
				     out, want, got, &why);
		if (rc < 0)
			return corrupt(s, why);
		if (rc == 1)
			return 1;
		if (s->in_pos == in_before && *got == out_before && s->in_pos == s->in_len &&
		    s->chunk_in_left == 0)
			return corrupt(s, "ends before the size it declares");
	}
	return 0;
}

/* After the declared bytes, the block must end there and then. */
static int check_chunk_end(struct tdat_stream *s)
{
	uint8_t probe;
	size_t got = 0;
	int rc = s->chunk_ended ? 1 : produce(s, &probe, 1, &got);

	if (rc < 0)
		return rc;
	if (got)
		return corrupt(s, "decompresses to more bytes than it declares");
	/* Whatever compressed bytes remain belong to nobody: skip to the next chunk. */
	s->pos += s->chunk_in_left;
	s->chunk_in_left = 0;
	s->in_len = s->in_pos = 0;
	return 0;
}

/* A chunk with pages left to produce: 1, or what ends the stream (0 or a negative errno, reported). */
static int next_chunk(struct tdat_stream *s)
{
	int rc;

	while (s->chunk_out_left == 0) {
		if (s->chunk_at && (rc = check_chunk_end(s)) < 0)
			return stop(s, rc);
		s->chunk_at = 0;
		rc = open_chunk(s);
		if (rc <= 0)
			return stop(s, rc);
	}
	return 1;
}

/* The chunk's next sub-buffer into out: 1, or a negative errno (reported; the stream ends). */
static int produce_page(struct tdat_stream *s, uint8_t *out)
{
	size_t got = 0;
	int rc;

	if (s->spill_pos < s->spill_len) { /* decompressed already */
		memcpy(out, s->spill + s->spill_pos, s->page_size);
		s->spill_pos += s->page_size;
		s->chunk_out_left -= s->page_size;
		return 1;
	}
	rc = produce(s, out, s->page_size, &got);
	if (rc < 0)
		return stop(s, rc);
	if (rc == 1) {
		s->chunk_ended = true;
		if (got < s->page_size)
			return stop(s, corrupt(s, "ends before the size it declares"));
	}
	s->chunk_out_left -= s->page_size;
	return 1;
}

static int next_compressed_page(struct tdat_stream *s)
{
	int rc = next_chunk(s);

	return rc <= 0 ? rc : produce_page(s, s->page);
}

/* What a sub-buffer read at file offset at (plain) or decompressed next (compressed) is handed out as. */
static void describe(struct tdat_stream *s, const uint8_t *data, uint64_t at, struct tb_capture_page *page)
{
	page->data = data;
	page->size = s->page_size;
	page->file = s->td->path;
	page->file_offset = at;
	if (s->compressed) {
		/* A decompressed page has no offset in the file: name its chunk and its place in it. */
		if (!s->label || s->label_chunk != s->chunk_at) {
			free(s->label);
			s->label = NULL;
			if (asprintf(&s->label, "%s (CPU %d, the %s chunk at byte %llu, decompressed)",
				     s->td->path, s->cpu->cpu, tdat_codec_name(s->td->codec),
				     (unsigned long long)s->chunk_at) < 0)
				s->label = NULL;
			s->label_chunk = s->chunk_at;
			s->chunk_pos = 0;
		}
		page->file = s->label ? s->label : s->td->path;
		page->file_offset = s->chunk_pos;
		s->chunk_pos += s->page_size;
	}
}

int tdat_stream_next(struct tdat_stream *s, struct tb_capture_page *page)
{
	uint64_t at;
	int rc;

	if (s->done)
		return 0;
	if (!s->page && !(s->page = malloc(s->page_size)))
		return stop(s, -ENOMEM);
	at = s->pos;
	rc = s->compressed ? next_compressed_page(s) : next_plain_page(s);
	if (rc <= 0)
		return rc;
	describe(s, s->compressed ? s->page : s->data, at, page);
	return 1;
}

/* ------------------------------------------------ many pages, no copy */

/*
 * Up to pages plain sub-buffers into buf with one pread; when it fails they
 * are read one at a time, so the one that cannot be read is reported at its
 * own offset after those before it were handed over.
 */
static int read_plain(struct tdat_stream *s, uint8_t *buf, size_t pages, capture_page_fn *got, void *ctx)
{
	uint64_t left = s->end - s->pos;
	size_t n = left / s->page_size < pages ? (size_t)(left / s->page_size) : pages;
	bool whole = n > 1 && capture_pread_whole(s->td->fd, buf, n * s->page_size, s->pos);
	struct tb_capture_page page;

	for (size_t i = 0; i < n; i++) {
		uint8_t *at = buf + i * s->page_size;
		int rc = whole ? 0 : tdat_pread(s->td, at, s->page_size, s->pos, "a sub-buffer");
		if (rc < 0)
			return stop(s, i ? (int)i : rc);
		describe(s, at, s->pos, &page);
		got(ctx, &page);
		s->pos += s->page_size;
	}
	left = s->end - s->pos;
	if (n < pages)
		left ? stop_partial(s, left) : stop(s, 0);
	return (int)n;
}

/*
 * Up to pages sub-buffers of the current chunk into buf, decompressed a
 * sub-buffer at a time: the number made, or a negative errno (reported;
 * the stream ends).  A problem ends the stream after the sub-buffers made
 * before it (and they are handed over).
 */
static int stream_pages(struct tdat_stream *s, uint8_t *buf, size_t pages)
{
	size_t n = 0;
	int rc = 1;

	while (n < pages && (rc = produce_page(s, buf + n * s->page_size)) == 1)
		n++;
	return n ? (int)n : rc;
}

/* Whether the chunk just opened is decompressed in one call: zstd, its compressed bytes read at once. */
static bool one_call(const struct tdat_stream *s)
{
	return s->td->codec == TDAT_CODEC_ZSTD && s->chunk_clen <= READ_AHEAD && s->chunk_out_left == s->chunk_ulen;
}

/*
 * Whether the caller's buffer ends before the chunk just opened, left of
 * its pages pages free: when the chunk is decompressed in one call and
 * fits in an empty buffer but not in what is left.  The next call then
 * decompresses it straight into the caller's memory, where the spill
 * buffer costs a copy and its cache lines (on v7z.dat, cachegrind: 6 %
 * fewer L1 data misses in all, 0.1 % fewer instructions, for 7 % more
 * units).
 */
static bool ends_before(const struct tdat_stream *s, size_t left, size_t pages)
{
	return one_call(s) && s->chunk_ulen > left * s->page_size && s->chunk_ulen <= pages * s->page_size;
}

/*
 * Where the chunk starting now is decompressed whole: buf when it fits
 * there, else the spill buffer when the chunk is no larger than SPILL_MAX;
 * NULL: it is streamed.
 */
static uint8_t *whole_into(struct tdat_stream *s, uint8_t *buf, size_t want)
{
	if (want >= s->chunk_ulen)
		return buf;
	if (s->chunk_ulen > SPILL_MAX || !one_call(s))
		return NULL;
	if (s->spill_cap < s->chunk_ulen) {
		free(s->spill);
		s->spill_cap = 0;
		if (!(s->spill = malloc(s->chunk_ulen)))
			return NULL; /* streamed instead, in less memory */
		s->spill_cap = s->chunk_ulen;
	}
	return s->spill;
}

/*
 * The current chunk decompressed whole in one call when it starts here
 * and its compressed bytes are read at once (READ_AHEAD) - zstd then
 * decodes straight into memory, where streaming decodes into its window
 * and copies out - into buf when it fits, else into the spill buffer and
 * its first pages copied into buf; else up to pages of its sub-buffers
 * streamed: the number made, or a negative errno (reported; the stream
 * ends).  When the one call finds something wrong, the chunk is streamed
 * again from its start, a sub-buffer at a time as tdat_stream_next() does,
 * so the same sub-buffers come out before the same problem, said the same
 * way.
 */
static int decompress_run(struct tdat_stream *s, uint8_t *buf, size_t pages)
{
	size_t want = pages * s->page_size, used;
	uint8_t *into;
	int rc;

	if (s->chunk_out_left != s->chunk_ulen || s->chunk_clen > READ_AHEAD || !(into = whole_into(s, buf, want)))
		return stream_pages(s, buf, pages);
	if ((rc = refill(s)) < 0)
		return stop(s, rc);
	rc = tdat_unzip_whole(s->unzip, s->zin, s->in_len, into, s->chunk_ulen, &used);
	if (rc == 0 && into == buf) {
		s->in_pos = used;
		s->chunk_ended = true;
		s->chunk_out_left = 0;
		return (int)(s->chunk_ulen / s->page_size);
	}
	if (rc == 0) { /* the spill's first pages now, the rest in the next calls */
		s->in_pos = used;
		s->chunk_ended = true;
		s->spill_pos = 0;
		s->spill_len = s->chunk_ulen;
		return stream_pages(s, buf, pages);
	}
	if (rc == -EINVAL && (rc = tdat_unzip_reset(s->unzip)) < 0)
		return stop(s, rc);
	s->in_pos = 0; /* the block again from its start, through the streaming decoder */
	return stream_pages(s, buf, pages);
}

static int read_compressed(struct tdat_stream *s, uint8_t *buf, size_t pages, capture_page_fn *got, void *ctx)
{
	struct tb_capture_page page;
	size_t n = 0;
	int rc = 0;

	while (n < pages && !s->done && (rc = next_chunk(s)) == 1) {
		size_t left = s->chunk_out_left / s->page_size;
		uint8_t *at = buf + n * s->page_size;
		if (n > 0 && ends_before(s, pages - n, pages))
			break; /* the chunk stays open for the next call */
		rc = decompress_run(s, at, pages - n < left ? pages - n : left);
		for (int i = 0; i < rc; i++) {
			describe(s, at + (size_t)i * s->page_size, 0, &page);
			got(ctx, &page);
		}
		if (rc <= 0)
			return n ? (int)n : rc;
		n += (size_t)rc;
	}
	return n ? (int)n : rc;
}

int tdat_stream_read(struct tdat_stream *s, uint8_t *buf, size_t room, size_t max_pages, capture_page_fn *got,
		     void *ctx)
{
	size_t pages = room / s->page_size < max_pages ? room / s->page_size : max_pages;

	if (pages == 0)
		return -ENOSPC;
	if (s->done)
		return 0;
	return s->compressed ? read_compressed(s, buf, pages, got, ctx) : read_plain(s, buf, pages, got, ctx);
}
