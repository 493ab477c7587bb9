// SPDX-License-Identifier: MIT
/*
 * fuzz_blob.c - libFuzzer target for the blob area (src/ring/blob.c) and
 * the read paths that resolve its references.
 *
 * Byte 0 of the input picks the ring: bit 0 overwrite mode, bits 1-2 the blob
 * area (16, 32, 64 or 128 KiB per CPU), bit 3 the try-lock fallback.  The
 * rest is a program, one opcode byte and its operands per step (see run()):
 * blob writes of any length, reservations into four handle slots and their
 * commits and discards (in any order, twice, after a reset), records,
 * consumes, page reads with their references resolved, iterations,
 * references forged from the input, resets, recording switched off and on.
 *
 * Checked: every blob a reader calls intact has the bytes and the length it
 * was committed with; producer/consumer mode never reports one overwritten;
 * the API's answers are the documented ones; and at the end, after a drain,
 * the books balance: every event committed since the last reset was read or
 * counted in a LOST event, the blob counters match what the readers saw.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/blob.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

#include "fuzz_check.h"

#define MAX_IDS 65536
#define SLOTS 4

/* The program's state: what was committed, what the readers saw. */
struct run {
	struct tb_ring *ring;
	int overwrite;
	uint32_t next_id;
	uint64_t committed_events;  /* records and blobs since the last reset */
	uint64_t committed_blobs;
	uint64_t seen_events, seen_lost, blobs_intact, blobs_lost; /* consuming readers */
	bool lost_unknown; /* a page said "lost" without room for the count */
	struct tb_blob slot[SLOTS];
	uint32_t slot_id[SLOTS];
	uint8_t *buf, *page;
	/*
	 * Last, and cleared only as far as ids were given out (forget_ids):
	 * clearing all 256 KiB twice a run was half of a run's time.
	 */
	uint32_t len_of[MAX_IDS];   /* committed blob id -> its length (0: none) */
};

/* Every id given out so far unknown again (ids are never reused, so only those are set). */
static void forget_ids(struct run *r)
{
	memset(r->len_of, 0, (r->next_id < MAX_IDS ? r->next_id : MAX_IDS) * sizeof(r->len_of[0]));
}

/*
 * The pattern after a blob's id: byte i is id * 31 + i * 7 (mod 256), so it
 * repeats every 256 bytes.  One period is made per call and copied or
 * compared a period at a time: byte by byte, every comparison of the loop
 * was a call into the fuzzer's comparison tracing, and a blob runs to
 * 136 KiB (three fifths of a run were those calls).
 */
#define PERIOD 256

static void period_of(uint8_t period[PERIOD], uint32_t id, uint32_t len)
{
	for (uint32_t i = 0; i < PERIOD && i < len; i++)
		period[i] = (uint8_t)(id * 31 + i * 7);
}

/* A blob's bytes: its id in the first 4 (when it has them), then the pattern. */
static void fill(uint8_t *p, uint32_t len, uint32_t id)
{
	uint8_t period[PERIOD];

	period_of(period, id, len);
	for (uint32_t at = 0; at < len; at += PERIOD)
		memcpy(p + at, period, len - at < PERIOD ? len - at : PERIOD);
	for (uint32_t i = 0; i < 4 && i < len; i++)
		p[i] = (uint8_t)(id >> (8 * i));
}

/* A blob a reader calls intact: one that was committed, with its length and bytes. */
static void check_blob(const struct run *r, const uint8_t *data, uint32_t len)
{
	uint8_t period[PERIOD];
	uint32_t id;

	if (len < 4)
		return; /* too short to say whose; the length alone was checked by the caller */
	memcpy(&id, data, 4);
	CHECK(id < MAX_IDS && r->len_of[id] == len);
	period_of(period, id, len);
	CHECK(!memcmp(data + 4, period + 4, (len < PERIOD ? len : PERIOD) - 4));
	for (uint32_t at = PERIOD; at < len; at += PERIOD)
		CHECK(!memcmp(data + at, period, len - at < PERIOD ? len - at : PERIOD));
}

static uint32_t take(const uint8_t **p, const uint8_t *end, unsigned bytes)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < bytes && *p < end; i++)
		v |= (uint32_t)*(*p)++ << (8 * i);
	return v;
}

static void committed(struct run *r, uint32_t id, uint32_t len)
{
	if (id < MAX_IDS)
		r->len_of[id] = len;
	r->committed_events++;
	r->committed_blobs++;
}

static void account(struct run *r, const struct tb_read_event *ev)
{
	if (ev->kind == TB_READ_LOST) {
		r->seen_lost += ev->lost;
		return;
	}
	r->seen_events++;
	if (ev->kind == TB_READ_BLOB) {
		r->blobs_intact++;
		check_blob(r, ev->data, ev->len);
	} else if (ev->kind == TB_READ_BLOB_LOST) {
		CHECK(r->overwrite && ev->data == NULL);
		r->blobs_lost++;
	}
}

/* A raw page: its references resolve to committed blobs or say -ESTALE. */
static void read_page(struct run *r, unsigned cpu)
{
	long n = tb_read_page(r->ring, cpu, r->page, tb_ring_subbuf_size(r->ring));
	struct tb_page_cursor cur;
	struct tb_record rec;
	struct tb_blob_ref ref;

	struct tb_page_header hdr;

	CHECK(n >= 0);
	if (n == 0)
		return;
	CHECK(tb_page_read_header(r->page, (size_t)n, &hdr, NULL) == 0);
	if (hdr.lost && hdr.lost_stored)
		r->seen_lost += hdr.lost_count;
	else if (hdr.lost)
		r->lost_unknown = true;
	CHECK(tb_page_cursor_init(&cur, r->page, (size_t)n) == 0);
	while (tb_page_next_data(&cur, &rec) == 1) {
		r->seen_events++;
		if (!tb_blob_ref_decode(&rec, &ref))
			continue;
		long got = tb_blob_resolve(r->ring, &ref, r->buf, tb_ring_blob_size(r->ring));
		CHECK(got == (long)ref.len || got == -ESTALE);
		if (got >= 0)
			check_blob(r, r->buf, ref.len);
	}
}

/* No writer may be active across a reset: the open reservations are discarded first. */
static void reset(struct run *r)
{
	for (int i = 0; i < SLOTS; i++)
		tb_blob_discard(r->ring, &r->slot[i]);
	CHECK(tb_ring_reset(r->ring) == 0);
	forget_ids(r);
	r->committed_events = r->committed_blobs = 0;
	r->seen_events = r->seen_lost = r->blobs_intact = r->blobs_lost = 0;
	r->lost_unknown = false;
}

static void step(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	size_t area = tb_ring_blob_size(r->ring);
	unsigned s = take(p, end, 1) % SLOTS;
	uint32_t len = take(p, end, 2) * 3 % (uint32_t)(area + 8193);
	struct tb_read_event ev;
	int rc;

	switch (op % 11) {
	case 0: { /* tb_blob_write */
		uint32_t id = r->next_id++;
		fill(r->buf, len, id);
		rc = tb_blob_write(r->ring, r->buf, len);
		CHECK(rc == 0 || rc == -ENOBUFS || rc == -E2BIG || rc == -ENOSPC || rc == -EBUSY || rc == -EAGAIN);
		CHECK(rc != -E2BIG || len > area);
		if (rc == 0)
			committed(r, id, len);
		break;
	}
	case 1: /* reserve into a slot (an open one is discarded first) */
		tb_blob_discard(r->ring, &r->slot[s]);
		if (tb_blob_reserve(r->ring, len, &r->slot[s])) {
			r->slot_id[s] = r->next_id++;
			fill(r->slot[s].data, len, r->slot_id[s]);
		} else
			CHECK(r->slot[s].error == -ENOBUFS || r->slot[s].error == -E2BIG || r->slot[s].error == -EAGAIN);
		break;
	case 2: { /* commit a slot: an open reservation or -EINVAL */
		bool open = r->slot[s].data != NULL;
		uint32_t blen = r->slot[s].len;
		rc = tb_blob_commit(r->ring, &r->slot[s]);
		CHECK(open ? rc != -EINVAL : rc == -EINVAL);
		if (rc == 0)
			committed(r, r->slot_id[s], blen);
		break;
	}
	case 3:
		tb_blob_discard(r->ring, &r->slot[s]);
		CHECK(tb_blob_commit(r->ring, &r->slot[s]) == -EINVAL);
		break;
	case 4: /* a record */
		fill(r->buf, 8, UINT32_MAX);
		if (tb_write(r->ring, r->buf, 8) == 0)
			r->committed_events++;
		break;
	case 5:
		if (tb_consume(r->ring, s % tb_ring_ncpus(r->ring), &ev) == 1)
			account(r, &ev);
		break;
	case 6:
		if (tb_consume_merged(r->ring, &ev) == 1)
			account(r, &ev);
		break;
	case 7:
		read_page(r, s % tb_ring_ncpus(r->ring));
		break;
	case 8: { /* the iterator: intact blobs are committed ones */
		struct tb_iter *it;
		CHECK(tb_iter_new(r->ring, &it) == 0);
		while (tb_iter_next(it, &ev) == 1)
			if (ev.kind == TB_READ_BLOB)
				check_blob(r, ev.data, ev.len);
			else if (ev.kind == TB_READ_BLOB_LOST)
				CHECK(r->overwrite);
		tb_iter_free(it);
		break;
	}
	case 9: { /* a forged reference: no harm, whatever it names */
		struct tb_blob_ref ref = {len, s, take(p, end, 2)};
		long got = tb_blob_resolve(r->ring, &ref, r->buf, area);
		CHECK(got == (long)len || got == -ESTALE);
		break;
	}
	default:
		if (s == 0)
			reset(r);
		else
			tb_ring_set_recording(r->ring, s != 1);
	}
}

#define REGION_MAX (1u << 20) /* the largest region an input asks for (128 KiB of blobs per CPU) fits */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	static void *region;
	struct tb_ring_opts o;
	const uint8_t *p = data + 1, *end = data + size;
	struct tb_read_event ev;
	uint64_t written = 0, read_blobs = 0, lost_blobs = 0;

	if (size < 1)
		return 0;
	forget_ids(&r); /* the last run's */
	memset(&r, 0, offsetof(struct run, len_of));
	tb_ring_opts_default(&o);
	o.size_kb = 8;
	o.overwrite = data[0] & 1;
	o.blob_kb = 16u << ((data[0] >> 1) & 3);
	o.no_rseq = (data[0] >> 3) & 1;
	o.ncpus = 2; /* not the machine's: an input means the same everywhere */
	/*
	 * The region in memory the harness keeps from run to run: the ring's
	 * own was a fresh mapping of up to 300 KiB a run, its every page
	 * faulted in and poisoned and unpoisoned by ASan.  tb_ring_new
	 * initialises all of it, whatever the last run left.
	 */
	o.mem_size = tb_ring_region_size(&o);
	CHECK(o.mem_size && o.mem_size <= REGION_MAX);
	if (!region)
		CHECK((region = aligned_alloc(4096, REGION_MAX)) != NULL);
	o.mem = region;
	r.overwrite = o.overwrite;
	CHECK(tb_ring_new(&r.ring, &o) == 0);
	r.buf = malloc(tb_ring_blob_size(r.ring) + 8192);
	r.page = malloc(tb_ring_subbuf_size(r.ring));
	CHECK(r.buf && r.page);
	while (p < end)
		step(&r, *p++, &p, end);
	for (int i = 0; i < SLOTS; i++)
		tb_blob_discard(r.ring, &r.slot[i]);
	tb_ring_set_recording(r.ring, 1);
	while (tb_consume_merged(r.ring, &ev) == 1)
		account(&r, &ev);
	/* the books: every event committed since the reset was read or counted lost */
	CHECK(r.lost_unknown || r.seen_events + r.seen_lost == r.committed_events);
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(r.ring); cpu++) {
		struct tb_cpu_stats st;
		tb_stats_read(r.ring, cpu, &st);
		written += st.blob_written;
		read_blobs += st.blob_read;
		lost_blobs += st.blob_lost;
	}
	CHECK(written == r.committed_blobs);
	CHECK(read_blobs == r.blobs_intact && lost_blobs == r.blobs_lost);
	if (!r.overwrite)
		CHECK(r.blobs_lost == 0 && r.seen_lost == 0);
	tb_ring_free(r.ring);
	free(r.buf);
	free(r.page);
	return 0;
}
