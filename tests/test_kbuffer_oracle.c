/*
 * Cross-check of the page codec against libtraceevent's kbuffer, the reference
 * user-space reader of the kernel's sub-buffer format.
 *
 * (a) Random pages for every sub-buffer size 4 KiB .. 512 KiB are built with
 *     our encoder while the test keeps its own model of them: record sizes,
 *     offsets, header fields and times follow the format rules of the kernel
 *     ring-buffer reference (kernel-ring-buffer.md §1-§3), not the encoder.
 *     Each page is then decoded by our decoder and by kbuffer, and every record is
 *     compared with the model: kind, order, offset, size, raw header fields,
 *     time, payload length and bytes, commit word and missed-event count.
 *     The seed is printed; TB_SEED=<n> replays another one.
 * (b) Every page of every real capture (tests/data/kernel/ * / *.raw) is
 *     decoded by both readers, which must agree record by record.
 * (c) Edge cases where kbuffer 1.7.1 and our decoder differ, each with the
 *     evidence, plus the encoder's refusal of times it cannot represent.
 *
 * What kbuffer 1.7.1 does (src/kbuffer-parse.c, read for this test, and
 * confirmed by the assertions below):
 *   - commit: size = (unsigned)commit & ((1<<27)-1); bit 31 / bit 30 are
 *     tested on the whole 64-bit word (so the kernel's sign extension is
 *     harmless); lost_events = the stored u64 if bit 30, -1 if only bit 31.
 *   - kbuffer_missed_events() returns lost_events only while kbuf->curr == 0,
 *     i.e. only when the first *data* record sits at data offset 0 (or the
 *     page is empty); a page starting with a time extend, a time stamp or a
 *     padding record reports 0 missed events although the flag is set.  It
 *     also returns int, so a count above INT_MAX comes back truncated.
 *   - padding (29): length = array[0] whatever time_delta is; a "null"
 *     padding header (time_delta 0) is NOT treated as end of page - kbuffer
 *     skips 4 + array[0] bytes and goes on.  The padding's time_delta is
 *     added to the running time (we do the same: it reproduces the writer).
 *   - time extend (30): time += (array[0] << 27) + time_delta.
 *   - time stamp (31): time = (array[0] << 27) + time_delta, OR'ed with the
 *     top 5 bits (0xf8 << 56) of the running time; no correction when the
 *     59-bit stamp wrapped past a 2^59 boundary (we add 2^59 then).
 *   - long data (type_len 0): payload = (array[0] - 4) rounded up to 4; no
 *     check of any length against the commit (a corrupt page makes kbuffer
 *     read past it, which is why (c) only feeds it pages whose records stay
 *     inside the commit).
 *   - bit 30 without bit 31: ignored (no missed events).  Ours reports
 *     lost = false, lost_stored = true and reads the count, and refuses the
 *     page when the count would not fit (e.g. commit 0x40000000 | D); the
 *     kernel never sets bit 30 alone (§1.2), so this only matters for
 *     corrupt pages.  Shown in (c).
 *
 * Disagreements on pages the kernel really produces: none (part b, and part a
 * for every record kind).  The differences are listed in (c).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kbuffer.h>

#include "lib/tap.h"
#include "ring/pagefmt.h"
#include "tracebuf/page.h"

#define DATA "tests/data/kernel/"
#define TS_MSB (0xf8ull << 56)
#define LOW59 ((1ull << 59) - 1)
#define MAX_DIAG 12

static int diag_left = MAX_DIAG;

/* diag() for the first MAX_DIAG problems only; usable as an expression. */
#define report(...) ((void)(diag_left > 0 && (diag_left--, diag(__VA_ARGS__), 1)))

/* ------------------------------------------------------------ random */

static uint64_t rng;

static uint64_t rnd(void) /* splitmix64 */
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Payload bytes come from here; a record's payload is a random slice. */
static uint8_t src[TB_PAGE_MAX_SIZE];

/* --------------------------------------------------- format rules (spec) */

/* §2.3: bytes a data record of payload L occupies (no extend). */
static uint32_t spec_size(uint32_t L)
{
	uint32_t s = L ? L : 1;
	if (s > 112)
		s += 4;
	s = (s + 4 + 3) & ~3u;
	return s == 12 ? 16 : s;
}

static uint32_t spec_hdr_bytes(uint32_t L)
{
	return L > 112 ? 8 : 4;
}

/* ------------------------------------------------------------ the model */

struct exp {
	enum tb_rec_kind kind;
	uint64_t ts; /* running time after the record */
	uint32_t offset, size, type_len, delta;
	uint32_t len, req_len, src_off; /* DATA */
};

struct model {
	size_t psize;
	uint32_t D;
	uint64_t stamp, now, limit;
	struct exp *r;
	size_t n, cap, ndata;
	uint32_t used, data_len;
	bool fill, null_tail;
	int64_t lost;
	bool lost_flag, lost_stored;
	uint64_t lost_count, commit_raw;
	long long kb_missed; /* what kbuffer_missed_events() must say */
};

enum feat {
	F_COMPACT, F_LONG, F_LARGEST, F_BUMP16, F_ZERO_LEN, F_EXTEND, F_EXTEND_EDGE, F_ABS,
	F_ABS_MSB, F_DISCARD, F_FILLER, F_NULL_TAIL, F_EXACT, F_EMPTY, F_REAL_END,
	F_LOST_STORED, F_LOST_UNKNOWN, F_LOST_NOROOM, F_LOST_OVER_INT, F_ENOSPC, F_E2BIG,
	F_COUNT
};
static const char *feat_name[F_COUNT] = {
	"compact data", "long data", "largest payload", "12->16 bump", "zero-length payload",
	"time extend", "extend at exactly 2^27", "absolute stamp", "stamp with top bits set",
	"discarded (padding) record", "end-of-page filler", "4-byte null tail",
	"exact fit (commit == D)", "empty page", "real_end page (fill=false)",
	"lost + stored count", "lost, count unknown", "lost, no room for the count",
	"stored count > INT_MAX", "-ENOSPC refusal", "-E2BIG refusal",
};
static unsigned long feat[F_COUNT];

static unsigned long enc_errors; /* encoder return values / bookkeeping vs model */

static struct exp *push(struct model *m)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->r = realloc(m->r, m->cap * sizeof(*m->r));
		if (!m->r)
			abort();
	}
	memset(&m->r[m->n], 0, sizeof(m->r[0]));
	return &m->r[m->n++];
}

static void check_writer(struct model *m, struct tb_page_writer *w, const char *what)
{
	if (tb_page_writer_used(w) != m->used || tb_page_writer_entries(w) != m->ndata) {
		enc_errors++;
		report("%zu-byte page, after %s: writer used %u entries %u, model %u %zu", m->psize,
		       what, tb_page_writer_used(w), tb_page_writer_entries(w), m->used, m->ndata);
	}
}

/* Append one event (abs: with an absolute stamp); returns the encoder's rc. */
static int add_data(struct model *m, struct tb_page_writer *w, uint64_t ts, uint32_t L, bool abs)
{
	uint32_t maxp = m->D - 8, so = (uint32_t)below(sizeof(src) - L + 1);
	uint64_t gap = ts - m->now;
	bool ext = !abs && gap > TB_DELTA_MAX;
	uint32_t s = spec_size(L), total = s + (abs || ext ? 8 : 0), off = TB_PAGE_HDR_SIZE + m->used;
	int want = L > maxp ? -E2BIG : total > m->D - m->used ? -ENOSPC : 0;
	int rc = abs ? tb_page_add_abs(w, ts, src + so, L) : tb_page_add(w, ts, src + so, L);
	struct exp *e;

	if (rc != want) {
		enc_errors++;
		report("%zu-byte page: add%s(len %u, gap %llu) at %u returned %d, want %d", m->psize,
		       abs ? "_abs" : "", L, (unsigned long long)gap, m->used, rc, want);
	}
	if (want == -ENOSPC)
		feat[F_ENOSPC]++;
	if (want == -E2BIG)
		feat[F_E2BIG]++;
	if (rc || want) {
		check_writer(m, w, "a refused add");
		return rc ? rc : -1;
	}
	if (abs || ext) {
		e = push(m);
		e->kind = abs ? TB_REC_TIME_STAMP : TB_REC_TIME_EXTEND;
		e->type_len = abs ? TB_TYPE_TIME_STAMP : TB_TYPE_TIME_EXTEND;
		e->delta = (uint32_t)((abs ? ts : gap) & TB_DELTA_MAX);
		e->ts = ts;
		e->offset = off;
		e->size = 8;
		off += 8;
		feat[abs ? F_ABS : F_EXTEND]++;
		if (abs && (ts & TS_MSB))
			feat[F_ABS_MSB]++;
		if (ext && gap == TB_DELTA_MAX + 1ull)
			feat[F_EXTEND_EDGE]++;
	}
	e = push(m);
	e->kind = TB_REC_DATA;
	e->ts = ts;
	e->offset = off;
	e->size = s;
	e->type_len = L > 112 ? 0 : (s - 4) / 4;
	e->delta = abs || ext ? 0 : (uint32_t)gap;
	e->len = s - spec_hdr_bytes(L);
	e->req_len = L;
	e->src_off = so;
	feat[L > 112 ? F_LONG : F_COMPACT]++;
	feat[F_LARGEST] += L == maxp;
	feat[F_BUMP16] += L >= 5 && L <= 8;
	feat[F_ZERO_LEN] += L == 0;
	m->used += total;
	m->now = ts;
	m->ndata++;
	check_writer(m, w, "an add");
	return 0;
}

static int add_padding(struct model *m, struct tb_page_writer *w, uint32_t delta, uint32_t size)
{
	int want = size > m->D - m->used ? -ENOSPC : 0;
	int rc = tb_page_add_padding(w, delta, size);
	struct exp *e;

	if (rc != want) {
		enc_errors++;
		report("%zu-byte page: add_padding(%u, %u) at %u returned %d, want %d", m->psize, delta,
		       size, m->used, rc, want);
	}
	if (rc || want)
		return rc ? rc : -1;
	e = push(m);
	e->kind = TB_REC_PADDING;
	e->type_len = TB_TYPE_PADDING;
	e->delta = delta;
	e->offset = TB_PAGE_HDR_SIZE + m->used;
	e->size = size;
	e->ts = m->now += delta;
	m->used += size;
	feat[F_DISCARD]++;
	check_writer(m, w, "a padding");
	return 0;
}

static uint64_t pick_gap(struct model *m)
{
	uint64_t g, left = m->limit - m->now;

	switch (rnd() % 16) {
	case 0: case 1: case 2:
		g = 0;
		break;
	case 3: case 4: case 5: case 6: case 7: case 8:
		g = below(2000);
		break;
	case 9: case 10: case 11:
		g = below(TB_DELTA_MAX + 1ull);
		break;
	case 12:
		g = TB_DELTA_MAX; /* the largest delta without an extend */
		break;
	case 13:
		g = TB_DELTA_MAX + 1ull; /* the smallest that needs one */
		break;
	default:
		g = TB_DELTA_MAX + 1ull + below(1ull << (28 + rnd() % 13)); /* up to ~2^40 */
	}
	return g <= left ? g : below(left + 1);
}

static uint32_t pick_len(struct model *m)
{
	uint32_t maxp = m->D - 8, mid = maxp < 4096 ? maxp : 4096;

	switch (rnd() % 20) {
	case 0:
		return 0;
	case 1:
		return 1 + (uint32_t)below(8); /* 5..8 hit the 12 -> 16 bump */
	case 2: case 3: case 4: case 5: case 6: case 7: case 8:
		return (uint32_t)below(113);
	case 9:
		return 109 + (uint32_t)below(8); /* compact / long boundary */
	case 10: case 11: case 12: case 13: case 14:
		return 113 + (uint32_t)below(mid - 112);
	case 15: case 16:
		return (uint32_t)below(maxp + 1ull);
	case 17:
		return maxp + 4; /* refused with -E2BIG */
	default: { /* exactly what is left, when a single record can be that size */
		uint32_t left = m->D - m->used;
		if (left >= 8 && left != 12 && left != 120)
			return left <= 116 ? left - 4 : left - 8;
		return (uint32_t)below(113);
	}
	}
}

/* A payload length whose record is exactly s bytes; -1 if none is. */
static long len_for_size(uint32_t s)
{
	if (s < 8 || s % 4 || s == 12 || s == 120)
		return -1;
	return s <= 116 ? s - 4 : s - 8;
}

enum style { S_MIXED, S_SMALL, S_LARGE, S_LARGEST, S_EXACT, S_EMPTY, S_SPECIAL, S_COUNT };

static void gen_page(struct model *m, uint8_t *page, size_t psize, size_t index)
{
	size_t j = index / S_COUNT;
	enum style style = (enum style)(index % S_COUNT);
	struct tb_page_writer w;
	unsigned refusals = 0;
	uint32_t stop_after;
	int lost_kind;

	m->psize = psize;
	m->D = tb_page_data_size(psize);
	m->n = m->ndata = 0;
	m->used = 0;
	m->null_tail = false;
	switch (rnd() % 3) {
	case 0:
		m->stamp = below(1ull << 50);
		break;
	case 1: /* top five bits set: absolute stamps must restore them */
		m->stamp = ((1 + below(31)) << 59) | below(1ull << 57);
		break;
	default:
		m->stamp = 1700000000000ull + below(1ull << 40);
	}
	/* Stay inside one 2^59 bucket: crossing it is case (c). */
	m->limit = m->stamp + (1ull << 56);
	m->now = m->stamp;
	if (tb_page_writer_init(&w, page, psize, m->stamp) != 0) {
		enc_errors++;
		report("writer_init(%zu) failed", psize);
		return;
	}
	stop_after = rnd() % 2 ? UINT32_MAX : (uint32_t)below(m->D / 48 + 2);

	switch (style) {
	case S_EMPTY:
		break;
	case S_LARGEST: /* the largest payload fills the data area exactly */
		add_data(m, &w, m->now + 5, m->D - 8, true); /* + stamp: -ENOSPC */
		add_data(m, &w, m->now + (1ull << 30), m->D - 8, false); /* + extend: -ENOSPC */
		add_data(m, &w, m->now, m->D - 4, false);                /* -E2BIG */
		add_data(m, &w, m->now, m->D - 8, false);
		add_data(m, &w, m->now, 0, false); /* full: -ENOSPC */
		break;
	case S_EXACT: { /* fill, then leave exactly r bytes: 0, 4 or 8 */
		uint32_t r = (uint32_t)(j % 3) * 4;
		long L;
		while (m->D - m->used > 600) {
			uint32_t room = m->D - m->used - 400;
			if (add_data(m, &w, m->now + below(3000), (uint32_t)below(room < 5000 ? room : 5000),
				     false))
				break;
		}
		while ((L = len_for_size(m->D - m->used - r)) < 0 && m->D - m->used >= r + 8)
			r += 4;
		if (L >= 0)
			add_data(m, &w, m->now + below(3000), (uint32_t)L, false);
		break;
	}
	default:
		if (rnd() % 10 < 3)
			add_data(m, &w, m->now + pick_gap(m), pick_len(m), false); /* first with a delta */
		while (refusals < 3 && m->ndata < stop_after) {
			unsigned op = rnd() % 100;
			int rc;

			if (style == S_SMALL)
				rc = add_data(m, &w, m->now + below(200), (uint32_t)below(33), false);
			else if (style == S_LARGE)
				rc = add_data(m, &w, m->now + pick_gap(m),
					      113 + (uint32_t)below(m->D - 8 - 112), rnd() % 8 == 0);
			else if (op < (style == S_SPECIAL ? 30u : 8u))
				rc = add_data(m, &w, m->now + pick_gap(m), pick_len(m), true);
			else if (op < (style == S_SPECIAL ? 60u : 18u)) {
				uint32_t size = 8 + 4 * (uint32_t)below(rnd() % 4 ? 32 : 1024);
				uint32_t delta = rnd() % 2 ? 1 + (uint32_t)below(100)
							   : 1 + (uint32_t)below(TB_DELTA_MAX);
				if (m->now + delta > m->limit)
					delta = 1;
				rc = add_padding(m, &w, delta, size);
			} else
				rc = add_data(m, &w, m->now + pick_gap(m), pick_len(m), false);
			refusals += rc != 0;
		}
	}

	/* Close the page: fill alternates, the loss kind cycles. */
	m->fill = j % 2 == 0;
	lost_kind = (int)(j / 2 % 5);
	m->lost = lost_kind == 0   ? 0
		  : lost_kind == 1 ? -1
		  : lost_kind == 2 ? (int64_t)(1 + below(1000000))
		  : lost_kind == 3 ? (int64_t)((1ull << 31) + below(1ull << 40))
				   : (int64_t)(1 + below(INT64_MAX));
	{
		uint32_t left = m->D - m->used;
		m->data_len = m->used;
		if (m->fill && left >= 8) {
			struct exp *e = push(m);
			e->kind = TB_REC_PADDING;
			e->type_len = TB_TYPE_PADDING;
			e->delta = 1;
			e->offset = TB_PAGE_HDR_SIZE + m->used;
			e->size = left;
			e->ts = m->now + 1;
			m->data_len = m->D;
			feat[F_FILLER]++;
		} else if (m->fill && left == 4) {
			m->null_tail = true;
			feat[F_NULL_TAIL]++;
		}
		feat[F_EXACT] += m->used == m->D;
		feat[F_EMPTY] += m->n == 0 && m->data_len == 0;
		feat[F_REAL_END] += !m->fill && left >= 8;
	}
	m->lost_flag = m->lost != 0;
	m->lost_stored = m->lost > 0 && m->D - m->data_len >= 8;
	m->lost_count = m->lost_stored ? (uint64_t)m->lost : 0;
	m->commit_raw = (uint64_t)(int64_t)(int32_t)(m->data_len | (m->lost_flag ? 1u << 31 : 0) |
						     (m->lost_stored ? 1u << 30 : 0));
	feat[F_LOST_STORED] += m->lost_stored;
	feat[F_LOST_UNKNOWN] += m->lost < 0;
	feat[F_LOST_NOROOM] += m->lost > 0 && !m->lost_stored;
	feat[F_LOST_OVER_INT] += m->lost_stored && m->lost_count > INT_MAX;
	/* kbuffer: only while its cursor is at data offset 0, as an int. */
	if (m->lost_flag && ((m->n > 0 && m->r[0].kind == TB_REC_DATA) || m->data_len == 0))
		m->kb_missed = m->lost_stored ? (int)(uint32_t)m->lost_count : -1;
	else
		m->kb_missed = 0;
	if (tb_page_finish(&w, m->fill, m->lost) != 0) {
		enc_errors++;
		report("tb_page_finish failed");
	}
}

/* ------------------------------------------------------- our decoder */

struct ours {
	int init_rc, rc;
	struct tb_page_header hdr;
	struct tb_record *r;
	size_t n, cap;
};

static void decode_ours(struct ours *o, const uint8_t *page, size_t psize)
{
	struct tb_page_cursor c;
	struct tb_record rec;

	o->n = 0;
	o->rc = o->init_rc = tb_page_cursor_init(&c, page, psize);
	if (o->init_rc)
		return;
	o->hdr = c.hdr;
	while ((o->rc = tb_page_next(&c, &rec)) == 1) {
		if (o->n == o->cap) {
			o->cap = o->cap ? 2 * o->cap : 256;
			o->r = realloc(o->r, o->cap * sizeof(*o->r));
			if (!o->r)
				abort();
		}
		o->r[o->n++] = rec;
	}
}

static bool is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Our decoder against the model: every record and the header. */
static unsigned long check_ours_model(const struct model *m, const uint8_t *page, const struct ours *o)
{
	unsigned long bad = 0;
	size_t tail;

	if (o->init_rc || o->rc != 0) {
		report("%zu-byte page: our decoder failed (init %d, next %d)", m->psize, o->init_rc, o->rc);
		return 1;
	}
	if (o->hdr.timestamp != m->stamp || o->hdr.commit_raw != m->commit_raw ||
	    o->hdr.data_len != m->data_len || o->hdr.lost != m->lost_flag ||
	    o->hdr.lost_stored != m->lost_stored || o->hdr.lost_count != m->lost_count) {
		report("%zu-byte page header: commit %#llx len %u lost %d/%d/%llu, model %#llx %u %d/%d/%llu",
		       m->psize, (unsigned long long)o->hdr.commit_raw, o->hdr.data_len, o->hdr.lost,
		       o->hdr.lost_stored, (unsigned long long)o->hdr.lost_count,
		       (unsigned long long)m->commit_raw, m->data_len, m->lost_flag, m->lost_stored,
		       (unsigned long long)m->lost_count);
		bad++;
	}
	if (o->n != m->n) {
		report("%zu-byte page: our decoder gave %zu records, model %zu", m->psize, o->n, m->n);
		bad++;
	}
	for (size_t i = 0; i < o->n && i < m->n; i++) {
		const struct tb_record *r = &o->r[i];
		const struct exp *e = &m->r[i];
		bool same = r->kind == e->kind && r->ts == e->ts && r->offset == e->offset &&
			    r->size == e->size && r->type_len == e->type_len && r->time_delta == e->delta;

		if (same && e->kind == TB_REC_DATA)
			same = r->len == e->len &&
			       (const uint8_t *)r->data ==
				       page + e->offset + spec_hdr_bytes(e->req_len) &&
			       memcmp(r->data, src + e->src_off, e->req_len) == 0 &&
			       is_zero((const uint8_t *)r->data + e->req_len, e->len - e->req_len);
		else if (same)
			same = r->data == NULL && r->len == 0;
		if (!same) {
			report("%zu-byte page record %zu: ours kind %d ts %llu off %u size %u type %u delta %u "
			       "len %u; model kind %d ts %llu off %u size %u type %u delta %u len %u",
			       m->psize, i, r->kind, (unsigned long long)r->ts, r->offset, r->size,
			       r->type_len, r->time_delta, r->len, e->kind, (unsigned long long)e->ts,
			       e->offset, e->size, e->type_len, e->delta, e->len);
			bad++;
		}
	}
	/* After the data (and the count) the page is zero, but for a null tail header. */
	tail = TB_PAGE_HDR_SIZE + m->data_len + (m->lost_stored ? 8 : 0);
	if (m->null_tail) {
		if (tbf_get32(page + tail) != TB_TYPE_PADDING) {
			report("%zu-byte page: no null padding header at %zu", m->psize, tail);
			bad++;
		}
		tail += 4;
	}
	if (!is_zero(page + tail, m->psize - tail)) {
		report("%zu-byte page: bytes after the data are not zero", m->psize);
		bad++;
	}
	return bad;
}

/* ----------------------------------------------------------- kbuffer */

/* kbuffer's event stream against the model's data records. */
static unsigned long check_kb_model(struct kbuffer *kb, const struct model *m, uint8_t *page)
{
	unsigned long long ts;
	unsigned long bad = 0;
	size_t k = 0;
	void *d;

	if (kbuffer_load_subbuffer(kb, page) != 0)
		return report("kbuffer_load_subbuffer failed"), 1;
	if (kbuffer_subbuffer_size(kb) != (int)m->data_len) {
		report("%zu-byte page: kbuffer size %d, model %u", m->psize, kbuffer_subbuffer_size(kb),
		       m->data_len);
		bad++;
	}
	if (kbuffer_missed_events(kb) != m->kb_missed) {
		report("%zu-byte page: kbuffer missed %d, model %lld (lost %lld)", m->psize,
		       kbuffer_missed_events(kb), m->kb_missed, (long long)m->lost);
		bad++;
	}
	for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
		const struct exp *e = NULL;

		while (k < m->n && m->r[k].kind != TB_REC_DATA)
			k++;
		if (k == m->n) {
			report("%zu-byte page: kbuffer has an extra event at %d", m->psize,
			       kbuffer_curr_offset(kb));
			bad++;
			break;
		}
		e = &m->r[k++];
		if (ts != e->ts || kbuffer_curr_offset(kb) != (int)e->offset ||
		    kbuffer_event_size(kb) != (int)e->len ||
		    (uint8_t *)d != page + e->offset + spec_hdr_bytes(e->req_len) ||
		    memcmp(d, src + e->src_off, e->req_len) != 0) {
			report("%zu-byte page: kbuffer event ts %llu off %d len %d; model ts %llu off %u len %u",
			       m->psize, ts, kbuffer_curr_offset(kb), kbuffer_event_size(kb),
			       (unsigned long long)e->ts, e->offset, e->len);
			bad++;
		}
	}
	while (k < m->n && m->r[k].kind != TB_REC_DATA)
		k++;
	if (k != m->n) {
		report("%zu-byte page: kbuffer stopped early at model record %zu", m->psize, k);
		bad++;
	}
	return bad;
}

/* kbuffer against our decoder: events, then every raw record via kbuffer_raw_get. */
static unsigned long check_kb_ours(struct kbuffer *kb, const struct ours *o, uint8_t *page,
				   size_t *events)
{
	struct kbuffer_raw_info info;
	unsigned long long ts, prev;
	unsigned long bad = 0;
	long long want_missed = 0;
	size_t k = 0, i;
	void *d;

	if (o->init_rc || o->rc != 0)
		return report("our decoder failed on a page (init %d, next %d)", o->init_rc, o->rc), 1;
	if (kbuffer_load_subbuffer(kb, page) != 0)
		return report("kbuffer_load_subbuffer failed"), 1;
	if (kbuffer_subbuffer_size(kb) != (int)o->hdr.data_len) {
		report("kbuffer size %d, ours %u", kbuffer_subbuffer_size(kb), o->hdr.data_len);
		bad++;
	}
	if (o->hdr.lost && ((o->n && o->r[0].kind == TB_REC_DATA) || o->hdr.data_len == 0))
		want_missed = o->hdr.lost_stored ? (int)(uint32_t)o->hdr.lost_count : -1;
	if (kbuffer_missed_events(kb) != want_missed) {
		report("kbuffer missed %d, ours %lld", kbuffer_missed_events(kb), want_missed);
		bad++;
	}
	for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
		while (k < o->n && o->r[k].kind != TB_REC_DATA)
			k++;
		if (k == o->n) {
			report("kbuffer has an extra event at %d", kbuffer_curr_offset(kb));
			bad++;
			break;
		}
		if (ts != o->r[k].ts || d != o->r[k].data ||
		    kbuffer_event_size(kb) != (int)o->r[k].len ||
		    kbuffer_curr_offset(kb) != (int)o->r[k].offset) {
			report("event at %u: kbuffer ts %llu len %d off %d, ours ts %llu len %u",
			       o->r[k].offset, ts, kbuffer_event_size(kb), kbuffer_curr_offset(kb),
			       (unsigned long long)o->r[k].ts, o->r[k].len);
			bad++;
		}
		k++;
		(*events)++;
	}
	while (k < o->n && o->r[k].kind != TB_REC_DATA)
		k++;
	if (k != o->n) {
		report("kbuffer missed our event at %u", o->r[k].offset);
		bad++;
	}
	/* Raw records, all kinds: offset, type, size and the time each one adds. */
	info.next = page + TB_PAGE_HDR_SIZE;
	prev = o->hdr.timestamp;
	for (i = 0; i < o->n; i++) {
		const struct tb_record *r = &o->r[i];
		uint8_t *at = info.next;
		bool same;

		if (!kbuffer_raw_get(kb, page, &info)) {
			report("kbuffer_raw_get ended before our record at %u", r->offset);
			bad++;
			break;
		}
		same = at == page + r->offset && (unsigned)info.type == r->type_len &&
		       (uint8_t *)info.next == at + r->size;
		if (r->kind == TB_REC_TIME_STAMP)
			same = same && (info.delta & LOW59) == (r->ts & LOW59);
		else
			same = same && info.delta == r->ts - prev;
		if (!same) {
			report("raw record at %u: kbuffer type %d size %td delta %llu, ours type %u size %u ts+%llu",
			       r->offset, info.type, (uint8_t *)info.next - at, info.delta, r->type_len,
			       r->size, (unsigned long long)(r->ts - prev));
			bad++;
		}
		prev = r->ts;
	}
	if (i == o->n && (uint8_t *)info.next < page + TB_PAGE_HDR_SIZE + o->hdr.data_len) {
		report("kbuffer_raw_get has records after ours end (%td)", (uint8_t *)info.next - page);
		bad++;
	}
	return bad;
}

/* ------------------------------------------------- (a) random pages */

static size_t total_pages, total_records, total_data;

static void random_pages(struct kbuffer *kb, uint8_t *page)
{
	struct model m = {0};
	struct ours o = {0};

	for (int k = 0; k <= 7; k++) {
		size_t psize = TB_PAGE_MIN_SIZE << k, npages = S_COUNT * 10 * (k < 4 ? 256u >> k : 16u);
		unsigned long bad_ours = 0, bad_kb = 0, bad_raw = 0, enc_before = enc_errors;
		unsigned long feat_before[F_COUNT];
		size_t recs = 0, data = 0, ev = 0;

		memcpy(feat_before, feat, sizeof(feat));
		for (size_t i = 0; i < npages; i++) {
			gen_page(&m, page, psize, i);
			decode_ours(&o, page, psize);
			bad_ours += check_ours_model(&m, page, &o);
			bad_kb += check_kb_model(kb, &m, page);
			bad_raw += check_kb_ours(kb, &o, page, &ev);
			recs += m.n;
			data += m.ndata;
		}
		total_pages += npages;
		total_records += recs;
		total_data += data;
		is_int(enc_errors - enc_before, 0,
		       "%zu KiB: encoder results and sizes follow the format rules (%zu pages)", psize >> 10,
		       npages);
		is_int(bad_ours, 0, "%zu KiB: our decoder returns the %zu encoded records (%zu events)",
		       psize >> 10, recs, data);
		is_int(bad_kb, 0, "%zu KiB: kbuffer returns the %zu encoded events and missed counts",
		       psize >> 10, data);
		is_int(bad_raw, 0, "%zu KiB: kbuffer raw records and events agree with our decoder",
		       psize >> 10);
		{
			char missing[512] = "";
			for (int f = 0; f < F_COUNT; f++)
				if (feat[f] == feat_before[f])
					snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
						 "%s%s", *missing ? ", " : "", feat_name[f]);
			ok(!*missing, "%zu KiB: pages cover every record kind and page ending%s%s",
			   psize >> 10, *missing ? " - missing: " : "", missing);
		}
	}
	free(m.r);
	free(o.r);
}

/* ------------------------------------------------- (b) real captures */

/* Sub-buffer size from a capture's header_page: offset + size of "data". */
static size_t capture_page_size(const char *raw_path)
{
	char path[512], *text, *p;
	const char *slash = strrchr(raw_path, '/');
	unsigned off, size;
	size_t ps = 0;

	snprintf(path, sizeof(path), "%.*s/header_page", (int)(slash - raw_path), raw_path);
	text = tap_slurp(path, NULL);
	if (text && (p = strstr(text, "char data;")) &&
	    sscanf(p, "char data;\toffset:%u;\tsize:%u;", &off, &size) == 2)
		ps = (size_t)off + size;
	free(text);
	return ps;
}

static void real_pages(struct kbuffer *kb)
{
	glob_t g;
	struct ours o = {0};
	size_t files = 0, pages_all = 0, events_all = 0;

	if (glob(DATA "*/*.raw", 0, NULL, &g) != 0) {
		ok(0, "real captures found under " DATA);
		return;
	}
	for (size_t f = 0; f < g.gl_pathc; f++) {
		const char *path = g.gl_pathv[f];
		size_t len, psize = capture_page_size(path), pages = 0, events = 0, ours_events = 0;
		uint8_t *raw = (uint8_t *)tap_slurp(path, &len);
		unsigned long bad = 0;

		if (!raw || !tb_page_size_valid(psize) || len == 0 || len % psize) {
			ok(0, "%s: readable, whole %zu-byte sub-buffers", path + strlen(DATA), psize);
			free(raw);
			continue;
		}
		for (size_t off = 0; off < len; off += psize, pages++) {
			decode_ours(&o, raw + off, psize);
			for (size_t i = 0; i < o.n; i++)
				ours_events += o.r[i].kind == TB_REC_DATA;
			bad += check_kb_ours(kb, &o, raw + off, &events);
		}
		is_int(bad, 0, "%s: %zu pages of %zu bytes, %zu events: kbuffer and our decoder agree",
		       path + strlen(DATA), pages, psize, events);
		is_int(events, ours_events, "%s: same event count from both readers", path + strlen(DATA));
		files++;
		pages_all += pages;
		events_all += events;
		free(raw);
	}
	ok(files >= 11, "every capture checked (%zu raw files, %zu pages, %zu events)", files, pages_all,
	   events_all);
	globfree(&g);
	free(o.r);
}

/* -------------------------------------- (c) disagreements and edges */

/* Decode one page with both readers: first data record's time, counts. */
static void both_first(struct kbuffer *kb, uint8_t *page, size_t psize, uint64_t *ours_ts,
		       unsigned long long *kb_ts)
{
	struct tb_page_cursor c;
	struct tb_record r;

	*ours_ts = 0;
	*kb_ts = 0;
	if (tb_page_cursor_init(&c, page, psize) == 0 && tb_page_next_data(&c, &r) == 1)
		*ours_ts = r.ts;
	kbuffer_load_subbuffer(kb, page);
	if (!kbuffer_read_event(kb, kb_ts))
		*kb_ts = 0;
}

static void edge_cases(struct kbuffer *kb, uint8_t *page)
{
	struct tb_page_writer w;
	struct tb_page_cursor c;
	struct tb_record r;
	uint64_t ours, prev, ts;
	unsigned long long kts;
	const size_t ps = 4096;
	int rc;

	/* The largest extend: a delta of 2^59 - 1 is (2^32 - 1) << 27 | (2^27 - 1). */
	tb_page_writer_init(&w, page, ps, 1000);
	rc = tb_page_add(&w, 1000 + LOW59, "abcd", 4);
	tb_page_finish(&w, false, 0);
	both_first(kb, page, ps, &ours, &kts);
	ok(rc == 0 && ours == 1000 + LOW59 && kts == ours,
	   "extend of 2^59-1 ns: both readers get the time back (%llu, %llu)", (unsigned long long)ours,
	   kts);

	/*
	 * A gap of 2^59 ns or more cannot be stored: array[0] holds 32 bits of
	 * delta >> 27.  The encoder must refuse it, not truncate it (the kernel
	 * warns "Delta way too big" and writes 0).
	 */
	tb_page_writer_init(&w, page, ps, 1000);
	rc = tb_page_add(&w, 1000 + (1ull << 59), "abcd", 4);
	ok(rc == -EINVAL && tb_page_writer_used(&w) == 0,
	   "a gap of 2^59 ns is refused with -EINVAL, nothing written (rc %d)", rc);
	tb_page_writer_init(&w, page, ps, 5);
	rc = tb_page_add(&w, UINT64_MAX, "abcd", 4);
	ok(rc == -EINVAL && tb_page_writer_used(&w) == 0, "a gap of ~2^64 ns is refused (rc %d)", rc);

	/*
	 * Absolute stamp across a 2^59 boundary: the stamp keeps the low 59 bits
	 * (1000), the reader takes the top bits from the running time (0).  Our
	 * decoder sees the time go back by more than 2^58 and adds 2^59; kbuffer
	 * 1.7.1 does not and returns 1000 - 2^59 ns ago.  DISAGREEMENT (kbuffer
	 * wrong; only a clock that passes a multiple of 2^59 ns, e.g. TAI every
	 * 18.3 years, gets there).
	 */
	prev = (1ull << 59) - 1000;
	ts = (1ull << 59) + 1000;
	tb_page_writer_init(&w, page, ps, prev);
	rc = tb_page_add_abs(&w, ts, "abcd", 4);
	tb_page_finish(&w, false, 0);
	both_first(kb, page, ps, &ours, &kts);
	ok(rc == 0 && ours == ts, "stamp across 2^59: our decoder restores %llu (got %llu)",
	   (unsigned long long)ts, (unsigned long long)ours);
	ok(kts == ((ts & LOW59) | (prev & TS_MSB)),
	   "stamp across 2^59: kbuffer returns %llu (no wrap correction, documented)", kts);

	/* Top bits set, same bucket: both readers restore them. */
	prev = (3ull << 59) + 5;
	ts = (3ull << 59) + LOW59;
	tb_page_writer_init(&w, page, ps, prev);
	rc = tb_page_add_abs(&w, ts, "abcd", 4);
	tb_page_finish(&w, false, 0);
	both_first(kb, page, ps, &ours, &kts);
	ok(rc == 0 && ours == ts && kts == ts, "stamp with top bits 3<<59: both readers restore it");

	/*
	 * An absolute stamp that no reader could place: 2^58 or more past a
	 * 2^59 boundary from the previous time.  Refused like the gap above.
	 */
	tb_page_writer_init(&w, page, ps, (1ull << 59) - 1);
	rc = tb_page_add_abs(&w, (1ull << 59) + (1ull << 58) + 5, "abcd", 4);
	ok(rc == -EINVAL && tb_page_writer_used(&w) == 0,
	   "an absolute stamp the readers cannot place is refused (rc %d)", rc);
	tb_page_writer_init(&w, page, ps, 0);
	rc = tb_page_add_abs(&w, 7ull << 59, "abcd", 4);
	ok(rc == -EINVAL, "an absolute stamp 7 * 2^59 past the page stamp is refused (rc %d)", rc);

	/*
	 * Missed events when the page does not start with an event: kbuffer's
	 * kbuffer_missed_events() only answers while curr == 0.  Ours reports
	 * the stored count from the header.  DISAGREEMENT (kbuffer API).
	 */
	tb_page_writer_init(&w, page, ps, 1000);
	tb_page_add_padding(&w, 3, 16);
	tb_page_add(&w, 1003, "abcd", 4);
	tb_page_finish(&w, false, 77);
	tb_page_cursor_init(&c, page, ps);
	kbuffer_load_subbuffer(kb, page);
	ok(c.hdr.lost && c.hdr.lost_stored && c.hdr.lost_count == 77 && kbuffer_missed_events(kb) == 0,
	   "page starting with padding: ours lost 77, kbuffer_missed_events 0 (documented)");

	/* A count above INT_MAX comes back truncated from kbuffer (int). */
	tb_page_writer_init(&w, page, ps, 1000);
	tb_page_add(&w, 1000, "abcd", 4);
	tb_page_finish(&w, false, (int64_t)(1ull << 32) + 5);
	tb_page_cursor_init(&c, page, ps);
	kbuffer_load_subbuffer(kb, page);
	ok(c.hdr.lost_count == (1ull << 32) + 5 && kbuffer_missed_events(kb) == 5,
	   "lost 2^32+5: ours exact, kbuffer_missed_events %d (int, documented)",
	   kbuffer_missed_events(kb));

	/*
	 * Null padding (type 29, time_delta 0) inside the commit: the format says
	 * nothing valid follows; our decoder stops.  kbuffer skips 4 + array[0]
	 * bytes and reads on.  DISAGREEMENT on a page the kernel never hands out
	 * (it ends the commit before a null header, §2.4).
	 */
	{
		int ours_n = 0, kb_n = 0;

		tb_page_writer_init(&w, page, ps, 1000);
		tb_page_add(&w, 1000, "abcd", 4);
		tb_page_add(&w, 1010, "efgh", 4);
		tb_page_finish(&w, false, 0);
		tbf_put64(page + TB_PAGE_HDR_SIZE + 8, tb_rec_header(TB_TYPE_PADDING, 0) | (4ull << 32));
		tbf_put32(page + TB_PAGE_HDR_SIZE + 16, tb_rec_header(1, 10));
		memcpy(page + TB_PAGE_HDR_SIZE + 20, "ijkl", 4);
		tbf_put64(page + 8, 24);
		tb_page_cursor_init(&c, page, ps);
		while ((rc = tb_page_next_data(&c, &r)) == 1)
			ours_n++;
		kbuffer_load_subbuffer(kb, page);
		for (void *d = kbuffer_read_event(kb, NULL); d; d = kbuffer_next_event(kb, NULL))
			kb_n++;
		ok(rc == 0 && ours_n == 1 && kb_n == 2,
		   "null padding inside the commit: ours stops after 1 event, kbuffer reads %d", kb_n);
	}

	/*
	 * Long record whose array[0] is not a multiple of 4: we call the page
	 * corrupt; kbuffer rounds the payload up (118 - 4 -> 116) and goes on.
	 * DISAGREEMENT on a page the kernel never writes.
	 */
	tb_page_writer_init(&w, page, ps, 1000);
	tb_page_add(&w, 1000, src, 200);
	tb_page_finish(&w, false, 0);
	tbf_put32(page + TB_PAGE_HDR_SIZE + 4, 118);
	tb_page_cursor_init(&c, page, ps);
	rc = tb_page_next(&c, &r);
	kbuffer_load_subbuffer(kb, page);
	ok(rc == -EINVAL && kbuffer_read_event(kb, NULL) && kbuffer_event_size(kb) == 116,
	   "long record with array[0] 118: ours -EINVAL, kbuffer a %d-byte event",
	   kbuffer_event_size(kb));
}

static void bit30_alone(struct kbuffer *kb, uint8_t *page)
{
	struct tb_page_writer w;
	struct tb_page_cursor c;
	struct tb_page_header h;
	const size_t ps = 4096;
	int rc, kb_n = 0;

	/* Bit 30 without bit 31, data up to the end: kbuffer reads the event. */
	tb_page_writer_init(&w, page, ps, 1000);
	tb_page_add(&w, 1000, src, tb_page_max_payload(ps));
	tb_page_finish(&w, false, 0);
	tbf_put64(page + 8, (1u << 30) | tb_page_data_size(ps));
	rc = tb_page_cursor_init(&c, page, ps);
	kbuffer_load_subbuffer(kb, page);
	for (void *d = kbuffer_read_event(kb, NULL); d; d = kbuffer_next_event(kb, NULL))
		kb_n++;
	ok(rc == -EINVAL && kb_n == 1 && kbuffer_missed_events(kb) == 0,
	   "bit 30 alone, no room for a count: ours refuses the page, kbuffer reads %d event", kb_n);

	/* With room: ours reads a count but says not lost. */
	tbf_put64(page + 8, (1u << 30) | 16u);
	rc = tb_page_read_header(page, ps, &h, NULL);
	ok(rc == 0 && !h.lost && h.lost_stored, "bit 30 alone with room: ours lost=false, lost_stored=true");
}

int main(void)
{
	const char *env = getenv("TB_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0) : 0x7462756620323032ull;
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint8_t *page = malloc(TB_PAGE_MAX_SIZE);

	if (!kb || !page)
		skip_all("cannot allocate a kbuffer");
	diag("seed %#llx (set TB_SEED to replay another)", (unsigned long long)seed);
	rng = seed;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)rnd();

	random_pages(kb, page);
	diag("seed %#llx: %zu random pages, %zu records (%zu events) cross-checked",
	     (unsigned long long)seed, total_pages, total_records, total_data);
	real_pages(kb);
	edge_cases(kb, page);
	bit30_alone(kb, page);

	kbuffer_free(kb);
	free(page);
	return done_testing();
}
