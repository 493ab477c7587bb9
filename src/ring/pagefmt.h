/* SPDX-License-Identifier: MIT */
/*
 * pagefmt.h - the byte-level rules of the sub-buffer format, shared by the
 * page codec (page.c) and the ring's write path (ring.c) so both produce the
 * same bytes.  Internal: not installed.
 */
#ifndef TRACEBUF_PAGEFMT_H
#define TRACEBUF_PAGEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebuf/page.h"

#define TBF_MAX_SMALL_DATA (4u * TB_TYPE_DATA_MAX) /* 112: compact payload limit */
#define TBF_TS_BITS 59u                          /* extend / absolute stamp range */
#define TBF_TS_MSB (0xf8ull << 56)                /* top 5 bits a stamp does not carry */

/*
 * The cursor's common step (page.c's tb_page_next() takes it first, and a
 * walk that meets millions of records inlines it): the record at c->pos,
 * when it is a data record of type_len 1..28 that ends before the committed
 * end, stepped over as decode_one() would - c->time made its time, *data and
 * *len its payload.  0 for anything else - another kind, a record that does
 * not fit, the end of data, a failed cursor (its pos is its end) - which
 * tb_page_next() then decodes and checks in full.  Only bytes in [pos, pos +
 * size) with pos + size <= end are read: the bounds the full decoder keeps.
 */
static inline int tbf_next_small_data(struct tb_page_cursor *c, const uint8_t **data, uint32_t *len)
{
	uint32_t pos = c->pos, w, type_len, size;
	const uint8_t *r;

	if (pos + 4 > c->end) /* no wrap: pos <= end <= the data area, far below 4 GiB */
		return 0;
	r = c->page + TB_PAGE_HDR_SIZE + pos;
	memcpy(&w, r, 4);
	type_len = w & 31u;
	size = 4 + 4 * type_len;
	if (type_len - 1u >= TB_TYPE_DATA_MAX || size > c->end - pos)
		return 0;
	c->time += w >> 5;
	c->pos = pos + size;
	*data = r + 4;
	*len = size - 4;
	return 1;
}

/*
 * Every byte of the n at p zero - a sub-buffer no kernel wrote (a short
 * read of trace_pipe_raw leaves them), which every reader skips alike.
 * The first byte is zero and each equals the next: one memcmp, no loop.
 */
static inline bool tbf_all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static inline uint32_t tbf_get32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t tbf_get64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void tbf_put32(void *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void tbf_put64(void *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/*
 * Bytes a data record of payload len occupies (kernel rb_calculate_event_length):
 * long form above 112 bytes, 4-byte alignment, and never exactly 12 bytes so
 * any record can later become padding or be preceded by an extend.
 */
static inline uint32_t tbf_record_size(uint32_t len)
{
	uint32_t size = len ? len : 1;

	if (size > TBF_MAX_SMALL_DATA)
		size += 4;
	size = (size + 4 + 3) & ~3u;
	return size == 12 ? 16 : size;
}

/*
 * Bytes a data record of payload len occupies in the long form (type_len 0,
 * array[0]), whatever its length: how tracebuf marks a blob reference
 * (tracebuf/blob.h), a form neither tb_write nor the kernel on x86-64 uses
 * for a payload of 112 bytes or less.
 */
static inline uint32_t tbf_long_record_size(uint32_t len)
{
	return (len + 8 + 3) & ~3u;
}

/* The 32-bit header (and array[0] for the long form) of a data record. */
static inline uint64_t tbf_data_header(uint32_t delta, uint32_t len, uint32_t *hdr_bytes)
{
	uint32_t size = tbf_record_size(len);

	if (len > TBF_MAX_SMALL_DATA) {
		*hdr_bytes = 8;
		return tb_rec_header(0, delta) | ((uint64_t)(size - 4) << 32);
	}
	*hdr_bytes = 4;
	return tb_rec_header((size - 4) / 4, delta);
}

static inline uint64_t tbf_time_extend(uint64_t delta)
{
	return tb_rec_header(TB_TYPE_TIME_EXTEND, (uint32_t)(delta & TB_DELTA_MAX)) |
	       ((delta >> TB_DELTA_BITS) << 32);
}

static inline uint64_t tbf_time_stamp(uint64_t ts)
{
	return tb_rec_header(TB_TYPE_TIME_STAMP, (uint32_t)(ts & TB_DELTA_MAX)) |
	       (((ts >> TB_DELTA_BITS) & 0xffffffffu) << 32);
}

/*
 * The running time after an absolute TIME_STAMP record that carries the low
 * 59 bits "low59", given the running time "prev" before it: the top 5 bits
 * come from prev (kernel rb_fix_abs_ts, libtraceevent kbuffer); a result more
 * than 2^58 behind prev means the 59-bit stamp wrapped, so add 2^59.
 */
static inline uint64_t tbf_abs_time(uint64_t prev, uint64_t low59)
{
	uint64_t t = low59 | (prev & TBF_TS_MSB);

	if (t < prev && prev - t > (1ull << (TBF_TS_BITS - 1)))
		t += 1ull << TBF_TS_BITS;
	return t;
}

static inline uint32_t tbf_put_time_extend(uint8_t *r, uint64_t delta)
{
	tbf_put64(r, tbf_time_extend(delta));
	return 8;
}

static inline uint32_t tbf_put_time_stamp(uint8_t *r, uint64_t ts)
{
	tbf_put64(r, tbf_time_stamp(ts));
	return 8;
}

/* Write a data record; alignment bytes after the payload are zeroed. */
static inline void tbf_put_data(uint8_t *r, uint32_t delta, const void *data, uint32_t len)
{
	uint32_t hb, size = tbf_record_size(len);
	uint64_t h = tbf_data_header(delta, len, &hb);

	if (hb == 8)
		tbf_put64(r, h);
	else
		tbf_put32(r, (uint32_t)h);
	memset(r + hb + len, 0, size - hb - len);
	if (len)
		memcpy(r + hb, data, len);
}

/*
 * A padding record of size bytes (size >= 8) as one 8-byte word; below 8
 * bytes, the 4-byte null header (the low half).
 */
static inline uint64_t tbf_padding(uint32_t delta, uint32_t size)
{
	if (size < 8)
		return tb_rec_header(TB_TYPE_PADDING, 0);
	return tb_rec_header(TB_TYPE_PADDING, delta) | ((uint64_t)(size - 4) << 32);
}

static inline void tbf_put_padding(uint8_t *r, uint32_t delta, uint32_t size)
{
	if (size < 8)
		tbf_put32(r, (uint32_t)tbf_padding(delta, size));
	else
		tbf_put64(r, tbf_padding(delta, size));
}

/*
 * End a page whose records end at pos (kernel rb_reset_tail): padding covers
 * the rest; with only 4 bytes left a null header is written and the data
 * ends at pos.  Returns the data length including the filler.
 */
static inline uint32_t tbf_close_page(uint8_t *data, uint32_t pos, uint32_t d)
{
	if (pos >= d)
		return d;
	tbf_put_padding(data + pos, 1, d - pos);
	return d - pos < 8 ? pos : d;
}

/*
 * Store the commit word with the reader-side loss flags.  The kernel adds
 * the int flags to a long, so bit 31 sign-extends into the upper half; we
 * reproduce that so our pages are byte-identical.  lost < 0: count unknown.
 */
static inline void tbf_set_commit(uint8_t *page, uint32_t d, uint32_t len, int64_t lost)
{
	uint32_t flags = 0;

	if (lost) {
		flags = TB_PAGE_COMMIT_LOST;
		if (lost > 0 && d - len >= 8) {
			flags |= TB_PAGE_COMMIT_LOST_STORED;
			tbf_put64(page + TB_PAGE_HDR_SIZE + len, (uint64_t)lost);
		}
	}
	tbf_put64(page + 8, (uint64_t)(int64_t)(int32_t)(len | flags));
}

#endif
