// SPDX-License-Identifier: MIT
/*
 * fuzz_page.c - libFuzzer target for the page codec (src/ring/page.c).
 *
 * Byte 0 of the input picks the mode and the sub-buffer size:
 *   bits 0-2  order k: pages are 4 KiB << k
 *   bit 3     0 = page mode, 1 = writer mode
 *   bit 4     page mode: close re-encoded pages with fill (end-of-page filler)
 *
 * Page mode: the rest of the input is cut into up to MAX_PAGES pages of that
 * size (the last one zero-padded; each in its own exact-size allocation so
 * ASan sees any overread).  Each page is decoded with tb_page_read_header,
 * tb_page_next and tb_page_next_data, checking what the API promises: records
 * are contiguous and inside the commit, header fields match the bytes, times
 * follow the format, the cursor ends or fails for good.  A page that decodes
 * is re-encoded record by record with the writer and decoded again: every
 * event the writer accepts must come back with its time and payload.  The
 * unpadded remainder is also read as one page of its own (odd) size.
 *
 * Writer mode: the rest is a program of writer calls with arbitrary times,
 * lengths and loss counts; whatever the writer accepts must decode back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring/pagefmt.h"
#include "tracebuf/page.h"

#define MAX_PAGES 4
#define LOW59 ((1ull << 59) - 1)

#include "fuzz_check.h"

/* Events handed to the writer and accepted: what decoding must give back. */
struct sent {
	uint64_t ts;
	const uint8_t *data;
	uint32_t len;
};

struct sent_list {
	struct sent *v;
	size_t n, cap;
};

static void sent_push(struct sent_list *l, uint64_t ts, const void *data, uint32_t len)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		CHECK(l->v != NULL);
	}
	l->v[l->n++] = (struct sent){ts, data, len};
}

static volatile uint8_t sink;

/*
 * Decode a page written by our writer: its events must be exactly "sent",
 * and the loss flags what tb_page_finish(fill, lost) promises.
 */
static void verify_written(const uint8_t *q, size_t psize, const struct sent_list *sent,
			   uint32_t used, bool fill, int64_t lost)
{
	uint32_t d = tb_page_data_size(psize), data_len = used;
	struct tb_page_cursor c;
	struct tb_record r;
	size_t k = 0;
	int rc;

	if (fill && d - used >= 8)
		data_len = d;
	CHECK(tb_page_cursor_init(&c, q, psize) == 0);
	CHECK(c.hdr.data_len == data_len);
	CHECK(c.hdr.lost == (lost != 0));
	CHECK(c.hdr.lost_stored == (lost > 0 && d - data_len >= 8));
	CHECK(!c.hdr.lost_stored || c.hdr.lost_count == (uint64_t)lost);
	CHECK((c.hdr.commit_raw >> 32) == (lost ? 0xffffffffu : 0));
	while ((rc = tb_page_next_data(&c, &r)) == 1) {
		uint32_t want_len;

		CHECK(k < sent->n);
		want_len = tb_record_size(sent->v[k].len, 0) - (sent->v[k].len > TBF_MAX_SMALL_DATA ? 8 : 4);
		CHECK(r.ts == sent->v[k].ts);
		CHECK(r.len == want_len);
		CHECK(memcmp(r.data, sent->v[k].data, sent->v[k].len) == 0);
		for (uint32_t i = sent->v[k].len; i < r.len; i++)
			CHECK(((const uint8_t *)r.data)[i] == 0);
		k++;
	}
	CHECK(rc == 0);
	CHECK(k == sent->n);
}

/* One writer call with the bookkeeping checks every call must pass. */
static int write_event(struct tb_page_writer *w, struct sent_list *sent, uint64_t ts,
		       const void *data, uint32_t len, bool abs)
{
	uint32_t used = tb_page_writer_used(w), entries = tb_page_writer_entries(w);
	uint64_t last = w->last_ts;
	int rc = abs ? tb_page_add_abs(w, ts, data, len) : tb_page_add(w, ts, data, len);

	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOSPC || rc == -E2BIG);
	if (ts < last || (!abs && (ts - last) >> 59))
		CHECK(rc == -EINVAL);
	else if (rc != -EINVAL)
		CHECK((rc == -E2BIG) == (len > tb_page_max_payload(w->page_size)));
	if (rc) {
		CHECK(tb_page_writer_used(w) == used && tb_page_writer_entries(w) == entries);
		return rc;
	}
	CHECK(tb_page_writer_used(w) ==
	      used + tb_record_size(len, abs || ts - last > TB_DELTA_MAX ? 8 : 0));
	CHECK(tb_page_writer_entries(w) == entries + 1);
	sent_push(sent, ts, data, len);
	return 0;
}

/*
 * What every record a cursor returns must satisfy: it starts where the
 * previous one ended, lies inside [.., end), its raw fields are the bytes at
 * its offset and its time follows the format from the previous time.
 * Returns a hash of what was seen, to compare two walks.
 */
static uint64_t check_record(const uint8_t *p, const struct tb_record *r, uint64_t *prev,
			     uint32_t *expect, size_t end)
{
	uint32_t w0 = tbf_get32(p + r->offset), a0;

	CHECK(r->offset == *expect && r->size >= 4);
	CHECK((size_t)r->offset + r->size <= end);
	CHECK(r->type_len == (w0 & 31) && r->time_delta == w0 >> 5);
	a0 = r->size >= 8 ? tbf_get32(p + r->offset + 4) : 0;
	switch (r->kind) {
	case TB_REC_DATA: {
		uint32_t hb = r->type_len ? 4 : 8, x = 0;

		CHECK(r->type_len <= TB_TYPE_DATA_MAX);
		CHECK((const uint8_t *)r->data == p + r->offset + hb && r->len + hb == r->size);
		CHECK(r->type_len ? r->len == 4 * r->type_len : r->len + 4 == a0);
		CHECK(r->ts == *prev + r->time_delta);
		for (uint32_t i = 0; i < r->len; i++)
			x += ((const uint8_t *)r->data)[i];
		sink = (uint8_t)x;
		break;
	}
	case TB_REC_PADDING:
		CHECK(r->type_len == TB_TYPE_PADDING && r->time_delta != 0);
		CHECK(r->size == a0 + 4 && r->data == NULL && r->len == 0);
		CHECK(r->ts == *prev + r->time_delta);
		break;
	case TB_REC_TIME_EXTEND:
		CHECK(r->type_len == TB_TYPE_TIME_EXTEND && r->size == 8 && r->data == NULL);
		CHECK(r->ts == *prev + ((uint64_t)a0 << TB_DELTA_BITS) + r->time_delta);
		break;
	case TB_REC_TIME_STAMP:
		CHECK(r->type_len == TB_TYPE_TIME_STAMP && r->size == 8 && r->data == NULL);
		CHECK((r->ts & LOW59) == ((((uint64_t)a0 << TB_DELTA_BITS) + r->time_delta) & LOW59));
		break;
	default:
		CHECK(!"unknown record kind");
	}
	*prev = r->ts;
	*expect += r->size;
	return (r->ts * 31 + r->offset) * 131 + r->kind;
}

/* After a walk ended with rc: the end, a null header, or a sticky failure. */
static void check_end(const uint8_t *p, struct tb_page_cursor *c, int rc, uint32_t expect,
		      size_t end)
{
	struct tb_record r;

	CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		if (expect < end)
			CHECK((tbf_get32(p + expect) & 31) == TB_TYPE_PADDING &&
			      (tbf_get32(p + expect) >> 5) == 0);
		else
			CHECK(expect == end);
	} else {
		CHECK(c->err.reason != NULL && c->err.offset == expect);
	}
	CHECK(tb_page_next(c, &r) == rc);
	CHECK(tb_page_next_data(c, &r) == rc);
}

/* A cursor over data offsets [pos, end) with running time t (reader resume). */
static uint64_t walk_range(const uint8_t *p, size_t psize, uint32_t pos, uint32_t end, uint64_t t,
			   int *rc_out)
{
	struct tb_page_cursor c;
	struct tb_record r;
	uint32_t expect = TB_PAGE_HDR_SIZE + pos;
	uint64_t hash = 0;
	size_t n = 0;
	int rc = tb_page_cursor_init_range(&c, p, psize, pos, end, t);

	if (end > tb_page_data_size(psize) || pos > end) {
		CHECK(rc == -EINVAL && c.err.reason != NULL);
		CHECK(tb_page_next(&c, &r) == -EINVAL);
		*rc_out = rc;
		return 0;
	}
	CHECK(rc == 0);
	while ((rc = tb_page_next(&c, &r)) == 1) {
		hash = hash * 1000003 + check_record(p, &r, &t, &expect, TB_PAGE_HDR_SIZE + (size_t)end);
		CHECK(++n <= (end - pos) / 4);
	}
	check_end(p, &c, rc, expect, TB_PAGE_HDR_SIZE + (size_t)end);
	*rc_out = rc;
	return hash;
}

/*
 * Walk one page of any size with every reader entry point and check the
 * invariants; if it decodes and the size is a real sub-buffer size,
 * re-encode it and check the round trip.
 */
static void walk(const uint8_t *p, size_t psize, bool fill)
{
	struct tb_page_header h;
	struct tb_page_error err = {0, NULL};
	struct tb_page_cursor c, cd;
	struct tb_record r, rd;
	struct tb_page_writer w;
	struct sent_list sent = {0};
	uint8_t *q = NULL;
	uint32_t expect = TB_PAGE_HDR_SIZE, d;
	uint64_t prev, hash = 0;
	bool abs_next = false;
	size_t n = 0;
	int hrc, rc, rrc;

	hrc = tb_page_read_header(p, psize, &h, &err);
	CHECK(hrc == 0 || hrc == -EINVAL);
	rc = tb_page_cursor_init(&c, p, psize);
	CHECK(rc == hrc);
	if (hrc) {
		CHECK(err.reason != NULL && err.offset < psize);
		CHECK(tb_page_next(&c, &r) == -EINVAL);
		CHECK(tb_page_next_data(&c, &r) == -EINVAL);
		return;
	}
	d = tb_page_data_size(psize);
	CHECK(psize >= TB_PAGE_HDR_SIZE + 8);
	CHECK(h.timestamp == tbf_get64(p) && h.commit_raw == tbf_get64(p + 8));
	CHECK(h.data_len == ((uint32_t)h.commit_raw & TB_PAGE_COMMIT_LEN_MASK) && h.data_len <= d);
	CHECK(h.lost == ((h.commit_raw & TB_PAGE_COMMIT_LOST) != 0));
	CHECK(h.lost_stored == ((h.commit_raw & TB_PAGE_COMMIT_LOST_STORED) != 0));
	if (h.lost_stored)
		CHECK((size_t)h.data_len + 8 <= d &&
		      h.lost_count == tbf_get64(p + TB_PAGE_HDR_SIZE + h.data_len));
	else
		CHECK(h.lost_count == 0);
	CHECK(tb_page_cursor_init(&cd, p, psize) == 0);

	if (tb_page_size_valid(psize)) {
		q = malloc(psize);
		CHECK(q != NULL);
		CHECK(tb_page_writer_init(&w, q, psize, h.timestamp) == 0);
	}

	prev = h.timestamp;
	while ((rc = tb_page_next(&c, &r)) == 1) {
		hash = hash * 1000003 +
		       check_record(p, &r, &prev, &expect, TB_PAGE_HDR_SIZE + (size_t)h.data_len);
		CHECK(++n <= h.data_len / 4);
		if (r.kind == TB_REC_DATA) {
			/* tb_page_next_data sees the same event */
			CHECK(tb_page_next_data(&cd, &rd) == 1);
			CHECK(rd.offset == r.offset && rd.ts == r.ts && rd.data == r.data &&
			      rd.len == r.len);
			if (q)
				write_event(&w, &sent, r.ts, r.data, r.len, abs_next);
			abs_next = false;
		} else if (r.kind == TB_REC_TIME_STAMP) {
			abs_next = true;
		} else if (r.kind == TB_REC_PADDING && q && r.size >= 8) {
			uint32_t used = tb_page_writer_used(&w);
			int prc = tb_page_add_padding(&w, r.time_delta, r.size);

			CHECK(prc == 0 || prc == -ENOSPC);
			CHECK(tb_page_writer_used(&w) == used + (prc ? 0 : r.size));
		}
	}
	CHECK(tb_page_next_data(&cd, &rd) == rc);
	check_end(p, &c, rc, expect, TB_PAGE_HDR_SIZE + (size_t)h.data_len);

	/* tb_page_check walks as the cursor did: the same data records, the same stop and reason. */
	{
		struct tb_page_check pc;
		int crc = tb_page_check(p, psize, h.data_len, &pc);
		size_t events = 0;
		struct tb_page_cursor cc;
		CHECK(tb_page_cursor_init(&cc, p, psize) == 0);
		while (tb_page_next_data(&cc, &rd) == 1)
			events++;
		CHECK(crc == (rc < 0 ? -EINVAL : 0) && pc.events == events);
		if (rc < 0)
			CHECK(pc.offset == c.err.offset && pc.reason == c.err.reason &&
			      pc.len == c.err.offset - TB_PAGE_HDR_SIZE);
		else
			CHECK(pc.reason == NULL && pc.len == h.data_len);
	}

	/* The same walk through tb_page_cursor_init_range over the commit ... */
	CHECK(walk_range(p, psize, 0, h.data_len, h.timestamp, &rrc) == hash && rrc == rc);
	/* ... and over a range picked by the page's last 8 bytes (a resuming reader). */
	{
		uint32_t a = tbf_get32(p + psize - 8), b = tbf_get32(p + psize - 4);
		uint32_t lim = tb_page_data_size(psize) + 8;

		walk_range(p, psize, a % lim, b % lim, prev ^ a, &rrc);
		walk_range(p, psize, a, b, prev, &rrc);
	}

	if (q) {
		int64_t lost = 0;

		if (h.lost)
			lost = h.lost_stored && h.lost_count && h.lost_count <= INT64_MAX
				       ? (int64_t)h.lost_count
				       : -1;
		{
			uint32_t used = tb_page_writer_used(&w);
			CHECK(tb_page_finish(&w, fill, lost) == 0);
			verify_written(q, psize, &sent, used, fill, lost);
		}
	}
	free(q);
	free(sent.v);
}

/* ----------------------------------------------------- writer mode */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)in->p[0] << (8 * i);
	return v;
}

static uint8_t pattern[TB_PAGE_MAX_SIZE + 4096];

static void writer_program(struct in *in, size_t psize)
{
	struct tb_page_writer w;
	struct sent_list sent = {0};
	uint8_t *q = malloc(psize);
	uint32_t maxp = tb_page_max_payload(psize);

	CHECK(q != NULL);
	if (!pattern[1])
		for (size_t i = 0; i < sizeof(pattern); i++)
			pattern[i] = (uint8_t)(i * 131 + (i >> 9) + 1);
	CHECK(tb_page_writer_init(&w, q, psize, take(in, 8)) == 0);
	while (in->n) {
		unsigned op = (unsigned)take(in, 1);

		switch (op & 3) {
		case 0:
		case 1: { /* event: gap of 0/1/4/8 bytes, length small or scaled */
			static const unsigned gap_bytes[4] = {0, 1, 4, 8};
			uint64_t gap = take(in, gap_bytes[(op >> 2) & 3]);
			uint32_t len = (uint32_t)take(in, 2);

			if (op & 0x10)
				len = (uint32_t)((uint64_t)len * (maxp + 8) >> 16) + (op >> 7) * 4;
			else
				len &= 0xff;
			if (op & 0x20)
				gap = UINT64_MAX - gap; /* times that wrap or jump 2^59 */
			write_event(&w, &sent, w.last_ts + gap, pattern + (op * 977u) % 4096, len,
				    op & 1);
			break;
		}
		case 2: { /* padding: any delta and size */
			uint32_t delta = (uint32_t)take(in, 4), size = (uint32_t)take(in, 3);
			uint32_t used = tb_page_writer_used(&w);
			uint64_t last = w.last_ts;
			int rc = tb_page_add_padding(&w, delta, size);

			if (delta == 0 || delta > TB_DELTA_MAX || size < 8 || size % 4)
				CHECK(rc == -EINVAL);
			else
				CHECK(rc == (size > tb_page_data_size(psize) - used ? -ENOSPC : 0));
			CHECK(tb_page_writer_used(&w) == used + (rc ? 0 : size));
			CHECK(w.last_ts == last + (rc ? 0 : delta));
			break;
		}
		default: { /* close the page, check it, start the next one */
			int64_t lost = (int64_t)take(in, 8);
			uint32_t used = tb_page_writer_used(&w);

			if (op & 0x40)
				lost = (int8_t)lost; /* small counts, -1 and 0 */
			CHECK(tb_page_finish(&w, op & 4, lost) == 0);
			verify_written(q, psize, &sent, used, op & 4, lost);
			sent.n = 0;
			CHECK(tb_page_writer_init(&w, q, psize, take(in, 8)) == 0);
		}
		}
	}
	{
		uint32_t used = tb_page_writer_used(&w);
		CHECK(tb_page_finish(&w, false, 0) == 0);
		verify_written(q, psize, &sent, used, false, 0);
	}
	free(q);
	free(sent.v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t psize;
	unsigned mode;

	if (size < 1)
		return 0;
	mode = data[0];
	psize = (size_t)TB_PAGE_MIN_SIZE << (mode & 7);
	CHECK(tb_page_size_valid(psize));
	data++;
	size--;

	if (mode & 8) {
		struct in in = {data, size};
		writer_program(&in, psize);
		return 0;
	}

	/* Whole pages, the last one zero-padded. */
	for (size_t off = 0, i = 0; i < MAX_PAGES && (off < size || i == 0); off += psize, i++) {
		size_t n = size - off < psize ? size - off : psize;
		uint8_t *page = malloc(psize);

		CHECK(page != NULL);
		memcpy(page, data + off, n);
		memset(page + n, 0, psize - n);
		walk(page, psize, mode & 0x10);
		free(page);
	}
	/* The input itself as a page of its own size (usually not a valid one). */
	if (size) {
		uint8_t *page = malloc(size);

		CHECK(page != NULL);
		memcpy(page, data, size);
		walk(page, size, false);
		free(page);
	}
	return 0;
}
