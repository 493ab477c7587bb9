// SPDX-License-Identifier: MIT
/*
 * shm_window.c - what a ring holds now, page by page, read by a process
 * that trusts nothing in the region but its (checked, private) header:
 * tracebuf snapshot (writers running) and tracebuf recover (writers dead,
 * region copied into private memory).
 *
 * Untrusted input: every physical page number taken from a slot, the tail
 * word, tail_hist or the reader state must be <= nr_pages; every length
 * (tail offset, meta.len, read_off) must be within the page's data; every
 * page is walked with the bounds-checked cursor before it is handed on.
 * A word out of range skips the data it describes and counts in `bad`;
 * every page copied is walked, and one whose records go wrong part-way is
 * handed on cut before the damage, its events counted up to it
 * (`damaged`: what a reader of the page prints is what is counted);
 * every loop is bounded by the ring's page count or a retry budget, so a
 * concurrently scribbled region costs data, never a hang or a stray read.
 *
 * Consistency with live writers is the iterator's (reader.c): a page is
 * copied between two reads of its slot word, and a writer claims the slot
 * before it writes a byte of the page for a new lap (I3), so an unchanged
 * slot means an intact copy.  Bytes of the tail page below the tail
 * offset never change while the slot holds that lap (I1).
 *
 * Pages go a batch at a time: every slot of the batch read, the pages
 * copied, every slot checked again; each page is still copied between its
 * own two reads.  A reader of a shared-memory file copies them with one
 * pread per run of adjacent pages (tb__shm_read): no page of the region
 * is faulted into this process or unmapped from it, which was half of a
 * 64 MiB snapshot's time, and the batch is small enough (256 KiB) to
 * stay in the cache while it is walked and handed on.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "pagefmt.h"
#include "ring_internal.h"
#include "tracebuf/page.h"
#include "tracebuf/shm.h"

#define TAIL_TRIES 1000 /* a tail that never resolves is a scribbled control block */
#define BATCH_BYTES (256u << 10) /* pages copied at once: a few large reads, still in the cache when walked */

/* A page of a batch as the first read of its slot found it. */
struct take {
	uint64_t slot;     /* the slot word before the copy: the page is kept if it is unchanged after */
	uint64_t cum;      /* number of the page's first event (meta) */
	uint32_t phys;
	uint32_t limit;    /* data bytes to copy */
	uint32_t entries;  /* meta.entries, final once the page is closed (I4) */
	int ok;            /* worth copying: in the ring, in range, not empty */
};

struct win_cpu {
	struct tb_region *r;
	struct tb_cpu_ctl *c;
	unsigned cpu;
	uint32_t d;       /* data bytes of a page */
	uint8_t *buf;     /* batch sub-buffers, the copies */
	struct take *takes; /* batch entries */
	uint32_t batch;
	struct tb_shm *file; /* the region's file, read with pread; NULL: copy from the mapping */
	int shrank;       /* a read of the file came up short: it shrank */
	uint64_t expect;  /* number of the next event not yet accounted for */
	int first;        /* no page handed over yet */
	tb_shm_page_fn *fn;
	void *ctx;
	struct tb_shm_window *w;
	uint64_t committed; /* events committed on the CPUs walked so far */
	int committed_known; /* 0 once a CPU's tail could not be read */
};

static int tail_checked(struct win_cpu *wc, struct tail_view *v)
{
	for (int i = 0; i < TAIL_TRIES; i++) {
		/* acquire: pairs with the section's final store (tail_hist, meta, page bytes) */
		uint64_t t = atomic_load_explicit(&wc->c->tail, memory_order_acquire);
		if (tail_resolve(wc->c, t, v))
			return v->phys <= wc->r->nr_pages && t_off(v->t) <= wc->d ? 0 : -EIO;
		sched_yield();
	}
	return -EIO;
}

/*
 * A section that stored part of its work and not its tail word: its time
 * in last_ts[other phase] newer than the published one, or tail_hist
 * already naming the page after the tail.  One per CPU at most shows (the
 * next section on the CPU overwrites the evidence); a write that stopped
 * before its first store left nothing to see.  So this is a lower bound,
 * used only when the thread table does not balance (in_flight_exact).
 */
static int in_flight(struct win_cpu *wc, const struct tail_view *v)
{
	unsigned ph = t_phase(v->t);
	/* relaxed: evidence only, read after the acquire of the tail word */
	uint64_t mine = atomic_load_explicit(&wc->c->last_ts[ph], memory_order_relaxed);
	uint64_t other = atomic_load_explicit(&wc->c->last_ts[ph ^ 1], memory_order_relaxed);
	uint64_t next = atomic_load_explicit(&wc->c->tail_hist[(v->seq + 1) & 1], memory_order_relaxed);

	return other > mine || h_seq(next) == v->seq + 1;
}

/* What a walk of a copied page found: the events a reader prints, and where it stops. */
struct page_walk {
	uint32_t len;   /* data bytes up to the damage (all end bytes when none) */
	uint64_t events; /* data records in them */
	uint32_t bad_at; /* with damage: the bad record's byte in the page */
	const char *damage; /* why the rest is unreadable; NULL: none */
};

/* Walk the first end data bytes of the copy page (end <= wc->d, checked by the caller). */
static void walk_copy(struct win_cpu *wc, const uint8_t *page, uint32_t end, struct page_walk *pw)
{
	struct tb_page_check pc;

	memset(pw, 0, sizeof(*pw));
	tb_page_check(page, wc->r->subbuf_size, end, &pc); /* end <= d: the callers checked */
	pw->len = pc.len;
	pw->events = pc.events;
	pw->damage = pc.reason;
	pw->bad_at = (uint32_t)pc.offset;
}

/* A damaged page's bad record, counted; the first one's place (a byte of the region) kept. */
static void note_damage(struct win_cpu *wc, const struct page_walk *pw, uint64_t data_at)
{
	if (!pw->damage)
		return;
	if (!wc->w->damaged++) {
		wc->w->damage_at = data_at + pw->bad_at - TB_PAGE_HDR_SIZE;
		wc->w->damage = pw->damage;
	}
}

/* Where p lies in the region: the file's byte (the region is mapped or copied from byte 0). */
static uint64_t region_offset(const struct win_cpu *wc, const uint8_t *p)
{
	return (uint64_t)(p - (const uint8_t *)wc->r);
}

/*
 * The n pages of t (adjacent physical pages, in order) into dst, a
 * sub-buffer each: from the file, their whole sub-buffers in one read; from
 * the mapping, each page's time stamp and its t->limit data bytes, no more
 * (the bytes past them may be a writer's, being written).  0, or the
 * read's error.
 */
static int copy_run(struct win_cpu *wc, uint8_t *dst, const struct take *t, uint32_t n)
{
	uint32_t size = wc->r->subbuf_size;
	int rc;

	if (wc->file) {
		rc = tb__shm_read(wc->file, dst, (size_t)n * size,
				  region_offset(wc, cpu_page(wc->r, wc->c, t->phys)));
		wc->shrank = rc == -EFAULT;
		return rc;
	}
	for (uint32_t i = 0; i < n; i++, dst += size) {
		const uint8_t *page = cpu_page(wc->r, wc->c, t[i].phys);

		tbf_put64(dst, page_ts(page));
		memcpy(dst + TB_PAGE_HDR_SIZE, page + TB_PAGE_HDR_SIZE, t[i].limit);
	}
	return 0;
}

/*
 * Hand over page, holding len data bytes read at data_at whose first event
 * is number cum; events of them counted, and span numbered (more than
 * events when the page was cut at damage: the records after it were
 * committed, not lost to overwriting).
 */
static int emit(struct win_cpu *wc, uint8_t *page, uint32_t len, uint64_t data_at, uint64_t cum, uint64_t events,
		uint64_t span)
{
	uint64_t lost = cum > wc->expect ? cum - wc->expect : 0;

	if (wc->first)
		wc->w->lost_before += lost;
	else
		wc->w->lost_inside += lost;
	memset(page + TB_PAGE_HDR_SIZE + len, 0, wc->d - len);
	tbf_set_commit(page, wc->d, len, (int64_t)lost);
	wc->first = 0;
	wc->expect = cum + span;
	wc->w->events += events;
	wc->w->pages++;
	wc->w->page_data_at = data_at;
	return wc->fn(wc->ctx, wc->cpu, page, wc->r->subbuf_size);
}

/* The part of the page a consuming reader holds that it has not consumed yet. */
static int held_page(struct win_cpu *wc, const struct tb_reader_state *rd, const struct tail_view *v)
{
	struct take t = {.phys = rd->held_phys};
	uint32_t limit, n;
	struct page_walk pw;
	uint64_t data_at;
	int rc;

	if (!rd->held)
		return 0;
	if (rd->held_phys > wc->r->nr_pages || rd->read_off > wc->d) {
		wc->w->bad++;
		return 0;
	}
	limit = page_end(wc->r, wc->c, v, rd->held_seq, rd->held_phys);
	if (limit > wc->d || limit < rd->read_off) {
		wc->w->bad++;
		return 0;
	}
	n = limit - rd->read_off;
	if (!n)
		return 0;
	/* the page from its start, then its unconsumed records moved to the start of the data */
	t.limit = limit;
	if ((rc = copy_run(wc, wc->buf, &t, 1)) < 0)
		return rc;
	memmove(wc->buf + TB_PAGE_HDR_SIZE, wc->buf + TB_PAGE_HDR_SIZE + rd->read_off, n);
	if (rd->read_off)
		tbf_put64(wc->buf, rd->time);
	data_at = region_offset(wc, cpu_page(wc->r, wc->c, rd->held_phys)) + TB_PAGE_HDR_SIZE + rd->read_off;
	walk_copy(wc, wc->buf, n, &pw);
	note_damage(wc, &pw, data_at);
	return emit(wc, wc->buf, pw.len, data_at, rd->next_cum, pw.events, pw.events);
}

/* Page seq's slot, first read: t->ok when the ring still holds the page and it is worth a copy. */
static void take_page(struct win_cpu *wc, uint64_t seq, const struct tail_view *v, struct take *t)
{
	_Atomic uint64_t *slot = &cpu_slots(wc->r, wc->c)[seq % wc->r->nr_pages];

	/* acquire: pairs with the claim CAS; the page's meta and bytes read after it are that lap's */
	t->slot = atomic_load_explicit(slot, memory_order_acquire);
	t->phys = s_phys(t->slot);
	t->ok = 0;
	if (s_seq(t->slot) != seq || s_free(t->slot))
		return; /* overwritten, taken by the consuming reader, or never written */
	if (t->phys > wc->r->nr_pages) {
		wc->w->bad++;
		return;
	}
	t->limit = page_end(wc->r, wc->c, v, seq, t->phys);
	t->cum = meta_cum(&cpu_meta(wc->r, wc->c)[t->phys]);
	t->entries = meta_entries(&cpu_meta(wc->r, wc->c)[t->phys]);
	if (t->limit > wc->d) {
		wc->w->bad++;
		return;
	}
	t->ok = t->limit != 0;
}

/* Whether page seq's slot still holds what take_page read, now that the page is copied. */
static int slot_held(struct win_cpu *wc, uint64_t seq, const struct take *t)
{
	_Atomic uint64_t *slot = &cpu_slots(wc->r, wc->c)[seq % wc->r->nr_pages];
	uint64_t before = t->slot;

	/*
	 * A load first: fn, run for the page before, may have shrunk a named
	 * file, and the guard abandons the walk at the fault (shm_guard.c); in
	 * a sanitizer's compare-and-swap that would leave its lock taken.
	 * relaxed: a changed word is enough to drop the page; the CAS decides.
	 */
	if (atomic_load_explicit(slot, memory_order_relaxed) != before)
		return 0;
	/*
	 * acq_rel: pairs with the claim CAS, as take_page's load; its release
	 * half keeps the copy (copy_run: a memcpy, or the kernel's copy for a
	 * pread, made by this thread in program order) before it.  Success
	 * means nobody claimed or took the slot since take_page.
	 */
	return atomic_compare_exchange_strong_explicit(slot, &before, before, memory_order_acq_rel,
						       memory_order_relaxed);
}

/* Page seq, copied into page and its slot found unchanged: walked, counted, handed over. */
static int keep_page(struct win_cpu *wc, uint64_t seq, const struct tail_view *v, const struct take *t,
		     uint8_t *page)
{
	uint64_t span, data_at;
	struct page_walk pw;

	/*
	 * Every page is walked: what is counted is what a reader of the copy
	 * prints, never a stored count over bytes that may have been
	 * scribbled.  A closed page's count is final (I4), read under the same
	 * slot check as its bytes: when it is possible (a record takes 8 bytes
	 * at least), the events numbered on the page, so that records cut off
	 * at damage are not taken for ones overwritten.
	 */
	data_at = region_offset(wc, cpu_page(wc->r, wc->c, t->phys)) + TB_PAGE_HDR_SIZE;
	walk_copy(wc, page, t->limit, &pw);
	note_damage(wc, &pw, data_at);
	span = seq != v->seq && t->entries <= t->limit / 8 && t->entries >= pw.events ? t->entries : pw.events;
	return emit(wc, page, pw.len, data_at, t->cum, pw.events, span);
}

/* Pages seq .. seq + n - 1 (n <= batch): every slot read, the pages copied, each kept if its slot held. */
static int ring_pages(struct win_cpu *wc, uint64_t seq, uint32_t n, const struct tail_view *v)
{
	struct take *t = wc->takes;
	uint32_t size = wc->r->subbuf_size, run;
	int rc = 0;

	for (uint32_t i = 0; i < n; i++)
		take_page(wc, seq + i, v, &t[i]);
	/* one copy per run of pages worth copying that lie side by side in the region */
	for (uint32_t i = 0; i < n && rc == 0; i += run) {
		for (run = 1; t[i].ok && i + run < n && t[i + run].ok && t[i + run].phys == t[i].phys + run; run++)
			;
		if (t[i].ok)
			rc = copy_run(wc, wc->buf + (size_t)i * size, &t[i], run);
	}
	for (uint32_t i = 0; i < n && rc == 0; i++)
		if (t[i].ok && slot_held(wc, seq + i, &t[i]))
			rc = keep_page(wc, seq + i, v, &t[i], wc->buf + (size_t)i * size);
	return rc;
}

static int window_cpu(struct win_cpu *wc)
{
	struct tb_reader_state rd;
	struct tail_view v;
	uint64_t seq, n = wc->r->nr_pages;
	int rc;

	if (tail_checked(wc, &v) < 0) {
		wc->w->bad++;
		wc->committed_known = 0;
		return 0;
	}
	wc->w->in_flight += (uint64_t)in_flight(wc, &v);
	/* events committed on the CPU: the tail page's number plus its records (I4) */
	wc->committed += meta_cum(&cpu_meta(wc->r, wc->c)[v.phys]) + t_count(v.t);
	/* one copy of the reader state: it is shared memory like the rest */
	memcpy(&rd, &wc->c->rd, sizeof(rd));
	/*
	 * A commit under way (or left by a consumer that died in it) is taken
	 * as done, as the next lock holder finishes it (reader.c, R1-R3).
	 * acquire: pairs with R1's release, the targets before the word.
	 */
	rj_overlay(&wc->c->rj, atomic_load_explicit(&wc->c->rj.word, memory_order_acquire), &rd);
	wc->expect = rd.next_cum - rd.pending_lost;
	wc->first = 1;
	rc = held_page(wc, &rd, &v);
	seq = rd.next_seq;
	if (seq < oldest_seq(wc->r, v.seq) || seq > v.seq + 1)
		seq = oldest_seq(wc->r, v.seq);
	/* at most the ring's n pages: bounded whatever the words say */
	for (uint64_t i = 0; rc == 0 && i < n && seq <= v.seq;) {
		uint64_t k = v.seq - seq + 1;

		k = k < n - i ? k : n - i;
		k = k < wc->batch ? k : wc->batch;
		rc = ring_pages(wc, seq, (uint32_t)k, &v);
		i += k;
		seq += k;
	}
	return rc;
}

/*
 * More writes in flight than this cannot be true: every thread of a slot
 * and of the shared count would need thousands of nested signal handlers,
 * each stopped in a write.  A table that says more was scribbled.
 */
#define IN_FLIGHT_MAX ((uint64_t)(TB_THREAD_SLOTS + 1) << 12)

/*
 * The exact count (docs/design.md §10, inflight.c C2): writes begun, summed
 * over the thread table, less the events committed, which were read before
 * it (every CPU's tail word first, acquire): a write whose commit was seen
 * had its count stored before that commit (x86 store order; the general
 * path's commit is a release), so no commit is counted without its begin.
 * With the writers dead (recover) the difference is exact; with writers
 * running (snapshot) it also counts writes begun after the tails were read.
 * A difference below 0 or above IN_FLIGHT_MAX means a scribbled table: the
 * evidence count (a lower bound) stays, and table_bad says so.
 */
static void exact_in_flight(struct win_cpu *wc)
{
	struct tb_thread_table *t = region_threads(wc->r);
	/* relaxed: counts; ordered after the tail words' acquire loads above */
	uint64_t begun = atomic_load_explicit(&t->shared_begun, memory_order_relaxed), d;

	if (!wc->committed_known) {
		wc->w->table_bad = 1;
		return;
	}
	for (int i = 0; i < TB_THREAD_SLOTS; i++)
		begun += __atomic_load_n(&t->slot[i].begun, __ATOMIC_RELAXED); /* sums mod 2^64: an undo may sit in another slot */
	d = begun - wc->committed;
	if (d > IN_FLIGHT_MAX) {
		wc->w->table_bad = 1; /* below 0 (wrapped) or absurd */
		return;
	}
	wc->w->in_flight = d;
	wc->w->in_flight_exact = 1;
}

/* Every CPU's window in turn: reads of the mapping only, abandoned anywhere on a fault (shm_guard.c). */
static int window_all(void *arg)
{
	struct win_cpu *wc = arg;
	int rc = 0;

	for (unsigned cpu = 0; rc == 0 && cpu < wc->r->ncpus; cpu++) {
		wc->cpu = cpu;
		wc->c = region_cpu(wc->r, cpu);
		rc = window_cpu(wc);
	}
	if (rc == 0)
		exact_in_flight(wc);
	return rc;
}

int tb_shm_window(struct tb_ring *ring, tb_shm_page_fn *fn, void *ctx, struct tb_shm_window *w)
{
	struct win_cpu wc;
	int rc, faulted = 0;

	if (!ring || !fn || !w)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	wc.r = ring->r;
	wc.d = tb_page_data_size(wc.r->subbuf_size);
	wc.fn = fn;
	wc.ctx = ctx;
	wc.w = w;
	wc.committed = 0;
	wc.committed_known = 1;
	wc.file = ring->page_file;
	wc.shrank = 0;
	wc.batch = BATCH_BYTES / wc.r->subbuf_size ? BATCH_BYTES / wc.r->subbuf_size : 1;
	/* owned outside the guarded walk, which may be abandoned at any read of the mapping */
	wc.buf = malloc((size_t)wc.batch * wc.r->subbuf_size);
	wc.takes = malloc(wc.batch * sizeof(*wc.takes));
	if (!wc.buf || !wc.takes) {
		free(wc.buf);
		free(wc.takes);
		return -ENOMEM;
	}
	/* a named file may shrink under the mapping: a read past its end is an error, not SIGBUS */
	if (ring->guard_shm)
		rc = tb__sigbus_guarded(ring->r, ring->r->size, window_all, &wc, &faulted);
	else
		rc = window_all(&wc);
	free(wc.buf);
	free(wc.takes);
	if (faulted)
		return tb__shm_shrank(ring->guard_shm);
	return wc.shrank ? tb__shm_shrank(ring->page_file) : rc;
}
