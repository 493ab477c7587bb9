// SPDX-License-Identifier: MIT
/*
 * tdat_pages.c - one CPU's sub-buffers from a trace.dat, one at a time.
 *
 * Plain data is read a sub-buffer per pread.  Compressed data (v7) is a
 * chunk count and chunks {u32 compressed size, u32 decompressed size,
 * bytes}; each chunk is decompressed incrementally, straight into the one
 * sub-buffer being handed out, so memory per CPU is a sub-buffer, a small
 * read-ahead and the decompressor, whatever size the chunks claim.  A chunk
 * must produce exactly the size it declares, in whole sub-buffers, and may
 * not claim more than TDAT_MAX_RATIO times its compressed size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdat_internal.h"

#define READ_AHEAD (64u << 10)

void tdat_stream_init(struct tdat_stream *s, struct tb_tracedat *td, const struct tdat_buffer *b,
		      const struct tb_tracedat_cpu *cpu)
{
	memset(s, 0, sizeof(*s));
	s->td = td;
	s->cpu = cpu;
	s->page_size = b->pub.page_size;
	s->compressed = b->pub.compressed;
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
	s->chunk_at = 0;
	s->label_chunk = 0;
	if (s->compressed)
		s->chunks_left = UINT32_MAX; /* the count is read with the first page */
}

void tdat_stream_free(struct tdat_stream *s)
{
	free(s->page);
	free(s->in);
	free(s->label);
	s->label = NULL;
	tdat_unzip_free(s->unzip);
	s->page = s->in = NULL;
	s->unzip = NULL;
}

/* The stream is over: what went wrong, reported, as a negative errno. */
static int stop(struct tdat_stream *s, int rc)
{
	s->done = true;
	return rc;
}

static int next_plain_page(struct tdat_stream *s)
{
	uint64_t left = s->end - s->pos;
	int rc;

	if (left == 0)
		return stop(s, 0);
	if (left < s->page_size) {
		tdat_report(s->td, s->pos,
			    "CPU %d's data ends %llu bytes into a %u-byte sub-buffer; "
			    "the partial sub-buffer is skipped",
			    s->cpu->cpu, (unsigned long long)left, s->page_size);
		return stop(s, 0);
	}
	rc = tdat_pread(s->td, s->page, s->page_size, s->pos, "a sub-buffer");
	if (rc < 0)
		return stop(s, rc);
	s->pos += s->page_size;
	return 1;
}

/* Read the chunk count (first call) or the next chunk's header. */
static int open_chunk(struct tdat_stream *s)
{
	uint8_t h[8];
	uint32_t clen, ulen;
	int rc;

	if (s->chunks_left == UINT32_MAX) {
		if ((rc = tdat_pread(s->td, h, 4, s->pos, "the chunk count")) < 0)
			return rc;
		s->chunks_left = tdat_le32(h);
		s->pos += 4;
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
	if ((rc = tdat_pread(s->td, h, 8, s->pos, "a chunk header")) < 0)
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
	s->chunk_in_left = clen;
	s->chunk_out_left = ulen;
	s->chunk_ended = false;
	s->in_len = s->in_pos = 0;
	s->chunks_left--;
	return 1;
}

/* More compressed input from the current chunk; 0, or a negative errno. */
static int refill(struct tdat_stream *s)
{
	size_t n;
	int rc;

	if (s->in_pos < s->in_len || s->chunk_in_left == 0)
		return 0;
	if (!s->in && !(s->in = malloc(READ_AHEAD)))
		return -ENOMEM;
	n = s->chunk_in_left < READ_AHEAD ? (size_t)s->chunk_in_left : READ_AHEAD;
	if ((rc = tdat_pread(s->td, s->in, n, s->pos, "compressed data")) < 0)
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
 * ended, 0 when out is full, negative errno.
 */
static int produce(struct tdat_stream *s, uint8_t *out, size_t want, size_t *got)
{
	const char *why = "is corrupt";

	while (*got < want) {
		size_t in_before = s->in_pos, out_before = *got;
		int rc = refill(s);
		if (rc < 0)
			return rc;
		rc = tdat_unzip_step(s->unzip, s->in ? s->in : (const uint8_t *)"", s->in_len, &s->in_pos,
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

static int next_compressed_page(struct tdat_stream *s)
{
	size_t got = 0;
	int rc;

	while (s->chunk_out_left == 0) {
		if (s->chunk_at && (rc = check_chunk_end(s)) < 0)
			return stop(s, rc);
		s->chunk_at = 0;
		rc = open_chunk(s);
		if (rc <= 0)
			return stop(s, rc);
	}
	rc = produce(s, s->page, s->page_size, &got);
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

int tdat_stream_next(struct tdat_stream *s, struct tb_raw_page *page)
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
	page->data = s->page;
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
	return 1;
}
