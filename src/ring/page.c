// SPDX-License-Identifier: MIT
/*
 * page.c - encode and decode ftrace sub-buffers.
 *
 * The decoder trusts nothing: every record header is bounds-checked against
 * the committed data length before it is read, and every record advances the
 * cursor by at least four bytes, so a corrupt page can neither read outside
 * itself nor loop.  Timestamps follow libtraceevent's kbuffer (padding deltas
 * count), which reproduces the writer's clock exactly.
 */
#include "tracebuf/page.h"

#include <errno.h>
#include <string.h>

#include "pagefmt.h"

int tb_page_size_valid(size_t page_size)
{
	for (size_t s = TB_PAGE_MIN_SIZE; s <= TB_PAGE_MAX_SIZE; s <<= 1)
		if (s == page_size)
			return 1;
	return 0;
}

uint32_t tb_page_data_size(size_t page_size)
{
	return page_size > TB_PAGE_HDR_SIZE ? (uint32_t)(page_size - TB_PAGE_HDR_SIZE) : 0;
}

uint32_t tb_page_max_payload(size_t page_size)
{
	uint32_t d = tb_page_data_size(page_size);
	return d > 8 ? d - 8 : 0;
}

uint32_t tb_record_size(uint32_t len, uint32_t ts_bytes)
{
	return tbf_record_size(len) + ts_bytes;
}

static int fail(struct tb_page_error *err, size_t offset, const char *reason)
{
	if (err) {
		err->offset = offset;
		err->reason = reason;
	}
	return -EINVAL;
}

int tb_page_read_header(const void *page, size_t page_size, struct tb_page_header *hdr,
			struct tb_page_error *err)
{
	const uint8_t *p = page;
	uint32_t d = tb_page_data_size(page_size);

	if (!page || !hdr)
		return fail(err, 0, "no page or no header to fill");
	if (page_size < TB_PAGE_HDR_SIZE + 8)
		return fail(err, 0, "page smaller than its header");
	hdr->timestamp = tbf_get64(p);
	hdr->commit_raw = tbf_get64(p + 8);
	/* Flags live in the low 32 bits; the kernel sign-extends them upward. */
	hdr->data_len = (uint32_t)hdr->commit_raw & TB_PAGE_COMMIT_LEN_MASK;
	hdr->lost = (hdr->commit_raw & TB_PAGE_COMMIT_LOST) != 0;
	hdr->lost_stored = (hdr->commit_raw & TB_PAGE_COMMIT_LOST_STORED) != 0;
	hdr->lost_count = 0;
	if (hdr->data_len > d)
		return fail(err, 8, "commit length beyond the data area");
	if (hdr->lost_stored) {
		if ((size_t)hdr->data_len + 8 > d)
			return fail(err, 8, "stored lost count does not fit after the data");
		hdr->lost_count = tbf_get64(p + TB_PAGE_HDR_SIZE + hdr->data_len);
	}
	return 0;
}

int tb_page_cursor_init(struct tb_page_cursor *c, const void *page, size_t page_size)
{
	if (!c)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->page = page;
	c->page_size = page_size;
	if (tb_page_read_header(page, page_size, &c->hdr, &c->err) < 0) {
		c->failed = 1;
		return -EINVAL;
	}
	c->end = c->hdr.data_len;
	c->time = c->hdr.timestamp;
	return 0;
}

int tb_page_cursor_init_range(struct tb_page_cursor *c, const void *page, size_t page_size,
			      uint32_t pos, uint32_t end, uint64_t time)
{
	if (!c)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->page = page;
	c->page_size = page_size;
	if (!page || end > tb_page_data_size(page_size) || pos > end) {
		c->failed = 1;
		c->err.offset = 8;
		c->err.reason = "range beyond the data area";
		return -EINVAL;
	}
	c->hdr.timestamp = tbf_get64(page);
	c->hdr.data_len = end;
	c->pos = pos;
	c->end = end;
	c->time = time;
	return 0;
}

static int cursor_fail(struct tb_page_cursor *c, const char *reason)
{
	c->failed = 1;
	c->err.offset = TB_PAGE_HDR_SIZE + c->pos;
	c->err.reason = reason;
	c->pos = c->end;
	return -EINVAL;
}

/*
 * The extent of the record at r with avail data bytes left, checked: its
 * type_len, size and array[0] (0 unless it has one).  1 when it fits, 0 at
 * null padding (nothing valid follows), or -EINVAL with *why.  The one
 * rule for where records start and end: the cursor and tb_page_check()
 * both step with it, so they agree on every page.
 */
struct extent {
	uint32_t type_len, size, array0;
};

static inline int record_extent(const uint8_t *r, uint32_t avail, struct extent *e, const char **why)
{
	uint32_t w;

	if (avail < 4) {
		*why = "record header crosses the end of data";
		return -EINVAL;
	}
	w = tbf_get32(r);
	e->type_len = w & 31u;
	e->array0 = 0;
	if (e->type_len - 1u < TB_TYPE_DATA_MAX) { /* a small data record: most of them, one branch */
		e->size = 4 + 4 * e->type_len;
		if (e->size > avail) {
			*why = "record crosses the end of data";
			return -EINVAL;
		}
		return 1;
	}
	if (e->type_len == TB_TYPE_PADDING && (w >> 5) == 0)
		return 0;
	if (e->type_len == 0 || e->type_len > TB_TYPE_DATA_MAX) {
		if (avail < 8) {
			*why = "record crosses the end of data";
			return -EINVAL;
		}
		e->array0 = tbf_get32(r + 4);
	}
	switch (e->type_len) {
	case 0:
		if (e->array0 < 4 || e->array0 % 4) {
			*why = "bad length in long data record";
			return -EINVAL;
		}
		e->size = e->array0 + 4;
		break;
	case TB_TYPE_PADDING:
		if (e->array0 % 4) {
			*why = "bad length in padding record";
			return -EINVAL;
		}
		e->size = e->array0 + 4;
		break;
	case TB_TYPE_TIME_EXTEND:
	case TB_TYPE_TIME_STAMP:
		e->size = 8;
		break;
	default:
		e->size = 4 + 4 * e->type_len;
	}
	if (e->size > avail || e->size < 4) {
		*why = "record crosses the end of data";
		return -EINVAL;
	}
	return 1;
}

/* Decode the record at c->pos into *rec without moving; 0 = end of data. */
static int decode_one(struct tb_page_cursor *c, struct tb_record *rec)
{
	const uint8_t *r = c->page + TB_PAGE_HDR_SIZE + c->pos;
	const char *why;
	struct extent e;
	int rc = record_extent(r, c->end - c->pos, &e, &why);

	if (rc < 0)
		return cursor_fail(c, why);
	rec->offset = TB_PAGE_HDR_SIZE + c->pos;
	rec->data = NULL;
	rec->len = 0;
	rec->type_len = e.type_len;
	rec->time_delta = tbf_get32(r) >> 5;
	if (rc == 0)
		return 0; /* null padding: nothing valid follows */
	rec->size = e.size;
	switch (e.type_len) {
	case 0:
		rec->kind = TB_REC_DATA;
		rec->len = e.array0 - 4;
		rec->data = r + 8;
		break;
	case TB_TYPE_PADDING:
		rec->kind = TB_REC_PADDING;
		break;
	case TB_TYPE_TIME_EXTEND:
		rec->kind = TB_REC_TIME_EXTEND;
		break;
	case TB_TYPE_TIME_STAMP:
		rec->kind = TB_REC_TIME_STAMP;
		break;
	default:
		rec->kind = TB_REC_DATA;
		rec->len = 4 * e.type_len;
		rec->data = r + 4;
	}
	if (rec->kind == TB_REC_TIME_EXTEND)
		c->time += ((uint64_t)e.array0 << TB_DELTA_BITS) + rec->time_delta;
	else if (rec->kind == TB_REC_TIME_STAMP)
		c->time = tbf_abs_time(c->time, ((uint64_t)e.array0 << TB_DELTA_BITS) + rec->time_delta);
	else
		c->time += rec->time_delta;
	rec->ts = c->time;
	return 1;
}

int tb_page_check(const void *page, size_t page_size, uint32_t end, struct tb_page_check *out)
{
	const uint8_t *data = (const uint8_t *)page + TB_PAGE_HDR_SIZE;
	uint32_t pos = 0;
	struct extent e;
	int rc = 1;

	if (!page || !out || end > tb_page_data_size(page_size))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	while (pos < end && (rc = record_extent(data + pos, end - pos, &e, &out->reason)) == 1) {
		/* a data record: type_len 1..28, or 0 (its length in array[0]) */
		out->events += e.type_len <= TB_TYPE_DATA_MAX;
		pos += e.size;
	}
	out->len = rc == 0 ? end : pos; /* null padding ends the data as the commit would */
	if (rc < 0)
		out->offset = TB_PAGE_HDR_SIZE + pos;
	else
		out->reason = NULL;
	return rc < 0 ? -EINVAL : 0;
}

int tb_page_next(struct tb_page_cursor *c, struct tb_record *rec)
{
	const uint8_t *data;
	int rc;

	if (!c || !rec)
		return -EINVAL;
	if (c->failed || c->pos >= c->end)
		return c->failed ? -EINVAL : 0;
	if (tbf_next_small_data(c, &data, &rec->len)) {
		/* the rest of what decode_one() says of such a record */
		rec->kind = TB_REC_DATA;
		rec->ts = c->time;
		rec->data = data;
		rec->size = rec->len + 4;
		rec->offset = TB_PAGE_HDR_SIZE + c->pos - rec->size;
		rec->type_len = rec->len / 4;
		rec->time_delta = tbf_get32(data - 4) >> 5;
		return 1;
	}
	rc = decode_one(c, rec);
	if (rc <= 0) {
		if (rc == 0)
			c->pos = c->end;
		return rc;
	}
	c->pos += rec->size;
	return 1;
}

int tb_page_next_data(struct tb_page_cursor *c, struct tb_record *rec)
{
	int rc;

	while ((rc = tb_page_next(c, rec)) == 1)
		if (rec->kind == TB_REC_DATA)
			return 1;
	return rc;
}

int tb_page_writer_init(struct tb_page_writer *w, void *page, size_t page_size, uint64_t ts)
{
	if (!w)
		return -EINVAL;
	memset(w, 0, sizeof(*w)); /* a writer whose init failed refuses every call */
	if (!page || !tb_page_size_valid(page_size))
		return -EINVAL;
	memset(page, 0, page_size);
	w->page = page;
	w->page_size = page_size;
	w->pos = 0;
	w->last_ts = ts;
	w->entries = 0;
	tbf_put64(w->page, ts);
	return 0;
}

static int page_add(struct tb_page_writer *w, uint64_t ts, const void *data, uint32_t len, int abs)
{
	uint32_t d, ts_bytes, size;
	uint64_t delta;
	uint8_t *r;

	if (!w || !w->page || (len && !data) || ts < w->last_ts)
		return -EINVAL;
	d = tb_page_data_size(w->page_size);
	delta = ts - w->last_ts;
	/*
	 * A time no reader could reconstruct is refused rather than truncated:
	 * an extend holds 59 bits of delta, and an absolute stamp 59 bits of
	 * time placed by the reader next to the previous time.
	 */
	if (abs ? tbf_abs_time(w->last_ts, ts & ((1ull << TBF_TS_BITS) - 1)) != ts
		: delta >> TBF_TS_BITS != 0)
		return -EINVAL;
	ts_bytes = (abs || delta > TB_DELTA_MAX) ? 8 : 0;
	size = tbf_record_size(len) + ts_bytes;
	if (len > tb_page_max_payload(w->page_size))
		return -E2BIG;
	if (size > d - w->pos)
		return -ENOSPC;
	r = w->page + TB_PAGE_HDR_SIZE + w->pos;
	if (abs)
		r += tbf_put_time_stamp(r, ts);
	else if (ts_bytes)
		r += tbf_put_time_extend(r, delta);
	tbf_put_data(r, ts_bytes ? 0 : (uint32_t)delta, data, len);
	w->pos += size;
	w->last_ts = ts;
	w->entries++;
	return 0;
}

int tb_page_add(struct tb_page_writer *w, uint64_t ts, const void *data, uint32_t len)
{
	return page_add(w, ts, data, len, 0);
}

int tb_page_add_abs(struct tb_page_writer *w, uint64_t ts, const void *data, uint32_t len)
{
	return page_add(w, ts, data, len, 1);
}

int tb_page_add_padding(struct tb_page_writer *w, uint32_t delta, uint32_t size)
{
	uint32_t d;

	if (!w || !w->page)
		return -EINVAL;
	d = tb_page_data_size(w->page_size);
	if (delta == 0 || delta > TB_DELTA_MAX || size < 8 || size % 4)
		return -EINVAL;
	if (size > d - w->pos)
		return -ENOSPC;
	tbf_put_padding(w->page + TB_PAGE_HDR_SIZE + w->pos, delta, size);
	w->pos += size;
	w->last_ts += delta;
	return 0;
}

uint32_t tb_page_writer_used(const struct tb_page_writer *w)
{
	return w ? w->pos : 0;
}

uint32_t tb_page_writer_entries(const struct tb_page_writer *w)
{
	return w ? w->entries : 0;
}

int tb_page_finish(struct tb_page_writer *w, bool fill, int64_t lost)
{
	uint32_t d, len;

	if (!w || !w->page)
		return -EINVAL;
	d = tb_page_data_size(w->page_size);
	len = w->pos;

	if (fill)
		len = tbf_close_page(w->page + TB_PAGE_HDR_SIZE, w->pos, d);
	tbf_set_commit(w->page, d, len, lost);
	return 0;
}
