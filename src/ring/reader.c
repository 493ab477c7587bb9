// SPDX-License-Identifier: MIT
/*
 * reader.c - consuming reads (per CPU and merged), page reads, and the
 * non-consuming iterator.
 *
 * The consuming reader owns exactly one page that is not in the ring (the
 * reader page).  To read the oldest page it swaps that page into the slot
 * with one compare-and-swap that also marks the slot "free"; a writer
 * overwriting the same slot swaps the same word, so exactly one of them
 * gets the old data: the reader (which then owns it outright, even if it is
 * the page the writers are still filling) or the writer (which counts it
 * as overrun).  Once held, a page is never written again except by writers
 * still appending to it as the tail, strictly above t_off(tail).
 *
 * Losses are exact because every page carries the number of its first
 * event (meta.cum_before): a reader that expected event n and finds a page
 * starting at m reports m - n lost.  The iterator uses the same numbering.
 *
 * A blob reference is an event like any record; what it refers to is copied
 * out of the blob area when the event is handed to the caller (blob.c).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "crash_point.h"
#include "pagefmt.h"
#include "ring_internal.h"
#include "tracebuf/reader.h"

/*
 * The lock word holds its owner's process id (0: free).  In shared memory
 * the owner may be another process, and it may die holding the lock, or a
 * writer may scribble the word: a waiter that finds the owner gone (kill 0
 * says ESRCH), or still waits for another process after
 * READER_LOCK_TAKEOVER_NS, takes the lock over, so no reader hangs on it.  The reader state it then finds may
 * be half updated; every use of it is range-checked (reader_state_sane),
 * so the cost is data, never a stray read.  Within one process threads
 * share the id, and the owner is alive: they wait for each other as before.
 *
 * A word naming this very process is either held by one of its threads or
 * left by an earlier process that had the same id and died holding it (pid
 * reuse: a restarted container's readers are pid 1 again), or scribbled:
 * the waiter would wait for itself for ever (fuzz_shm found it).  So this
 * process's threads take a word, take it over and leave it only under
 * held_mu, noting it in held[]: a word naming this process that held[]
 * does not list is nobody's here, and is taken over at once.
 */
#define READER_LOCK_TAKEOVER_NS 1000000000ull /* held for a page copy, never for a second */
#define HELD_MAX 64 /* reader locks held at once in a process (one per reading thread) */

static uint32_t my_id;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static const void *held[HELD_MAX]; /* the lock words this process's threads hold; under held_mu */
static unsigned held_count;
static unsigned held_unlisted; /* holds past HELD_MAX: no word naming us is taken over while there are any */

static void forget_id(void)
{
	my_id = 0;
	/* the child's threads hold nothing: the parent's holds are the parent's */
	pthread_mutex_init(&held_mu, NULL);
	held_count = held_unlisted = 0;
}

/* Whether a thread of this process holds the lock at word; under held_mu. */
static int held_here(const void *word)
{
	if (held_unlisted)
		return 1;
	for (unsigned i = 0; i < held_count; i++)
		if (held[i] == word)
			return 1;
	return 0;
}

static void held_note(const void *word)
{
	if (held_count < HELD_MAX)
		held[held_count++] = word;
	else
		held_unlisted++;
}

static void held_drop(const void *word)
{
	for (unsigned i = 0; i < held_count; i++)
		if (held[i] == word) {
			held[i] = held[--held_count];
			return;
		}
	if (held_unlisted)
		held_unlisted--;
}

/* A forked child is another process: it must not lock with its parent's id. */
static void reader_id_init(void)
{
	pthread_atfork(NULL, NULL, forget_id);
}

static uint32_t reader_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, reader_id_init);
	/* relaxed: each thread may compute it; every computation gives the same value */
	uint32_t id = __atomic_load_n(&my_id, __ATOMIC_RELAXED);
	if (!id) {
		id = (uint32_t)getpid();
		__atomic_store_n(&my_id, id, __ATOMIC_RELAXED);
	}
	return id;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int owner_gone(uint32_t owner)
{
	return owner > INT32_MAX || (kill((pid_t)owner, 0) < 0 && errno == ESRCH);
}

/*
 * One try at the word, under held_mu: free, or naming this process with no
 * thread of it holding it.  1 when it is ours now; else *owner is the word.
 */
static int lock_try(struct tb_cpu_ctl *c, uint32_t me, uint32_t *owner)
{
	int got;

	pthread_mutex_lock(&held_mu);
	*owner = 0;
	/* acquire: pairs with reader_unlock's release; the reader state is ours */
	got = atomic_compare_exchange_strong_explicit(&c->reader_lock, owner, me, memory_order_acquire,
						      memory_order_relaxed) ||
	      (*owner == me && !held_here(&c->reader_lock) &&
	       /* acquire: as above, from an earlier process of our id */
	       atomic_compare_exchange_strong_explicit(&c->reader_lock, owner, me, memory_order_acquire,
						       memory_order_relaxed));
	if (got)
		held_note(&c->reader_lock);
	pthread_mutex_unlock(&held_mu);
	return got;
}

/* Take the word over from another process, dead or stuck: 1 if it is ours now. */
static int lock_take_over(struct tb_cpu_ctl *c, uint32_t me, uint32_t owner)
{
	int got;

	pthread_mutex_lock(&held_mu);
	/* acquire: as in lock_try, taking over from a dead or stuck owner */
	got = atomic_compare_exchange_strong_explicit(&c->reader_lock, &owner, me, memory_order_acquire,
						      memory_order_relaxed);
	if (got)
		held_note(&c->reader_lock);
	pthread_mutex_unlock(&held_mu);
	return got;
}

/* ------------------------------------------------------------ committing */

/*
 * A consumption is committed whole or not at all, whatever instruction
 * the consumer dies at (struct tb_reader_journal, ring_layout.h):
 * R1  the state it leaves (read_off, held, time, next_cum, pending_lost)
 *     and the read count after it are stored in rj, then rj.word with
 *     RJ_PENDING (release: pairs with journal_finish's acquire, so a
 *     holder that finds the word set reads these targets);
 * R2  rd's fields and cnt.read are stored from the targets - the count a
 *     store, not an add: only the lock holder writes it;
 * R3  rj.word is cleared (release: pairs with journal_finish's acquire, so
 *     a holder that finds it clear sees R2's stores).
 * Invariant (J): outside a commit, cnt.read counts exactly the records
 * the position in rd has passed (and the pages it handed over whole).  A
 * holder that died between R1 and R3 left RJ_PENDING set, and the next
 * holder redoes R2 and R3 before anything else (journal_finish, in
 * reader_lock): the stores are absolute values, so redoing those already
 * done changes nothing.  Dying before R1 leaves the old state and count,
 * which agree.  Taking a page (take_next) moves no record past the
 * position and keeps its own order (the slot CAS first).
 */
struct commit {
	uint32_t read_off, held;
	uint64_t time, next_cum, pending_lost;
	uint64_t read;
};

/* R2 and R3: the state and the count stored from *to, then the journal cleared. */
static void commit_apply(struct tb_cpu_ctl *c, const struct commit *to)
{
	c->rd.read_off = to->read_off;
	c->rd.held = to->held;
	c->rd.time = to->time;
	c->rd.next_cum = to->next_cum;
	c->rd.pending_lost = to->pending_lost;
	TB_CRASH_C(TB_CP_READ_MOVED);
	/* relaxed: R3's release orders it for the next holder; stats read it under the lock */
	atomic_store_explicit(&c->cnt.read, to->read, memory_order_relaxed);
	TB_CRASH_C(TB_CP_READ_COUNTED);
	/* release: R3, pairs with journal_finish's acquire */
	atomic_store_explicit(&c->rj.word, 0, memory_order_release);
}

/* Move the reader to *to (under its lock): R1, then R2 and R3. */
static void reader_commit(struct tb_cpu_ctl *c, const struct commit *to)
{
	c->rj.time = to->time;
	c->rj.next_cum = to->next_cum;
	c->rj.pending_lost = to->pending_lost;
	c->rj.read = to->read;
	/* release: R1, pairs with journal_finish's acquire (the targets before the word) */
	atomic_store_explicit(&c->rj.word, RJ_PENDING | (to->held ? RJ_HELD : 0) | to->read_off, memory_order_release);
	TB_CRASH_C(TB_CP_READ_JOURNALED);
	commit_apply(c, to);
}

/* The reader's read count now (the lock holder's own stores). */
static uint64_t read_count(struct tb_cpu_ctl *c)
{
	return atomic_load_explicit(&c->cnt.read, memory_order_relaxed);
}

/* Just after the lock is taken: finish the commit a holder that died left under way. */
static void journal_finish(struct tb_cpu_ctl *c)
{
	/* acquire: pairs with R1's release (the targets) and R3's (R2's stores) */
	uint64_t word = atomic_load_explicit(&c->rj.word, memory_order_acquire);

	if (word & RJ_PENDING)
		commit_apply(c, &(struct commit){(uint32_t)word, (word & RJ_HELD) != 0, c->rj.time, c->rj.next_cum,
						  c->rj.pending_lost, c->rj.read});
}

/* ------------------------------------------------------------ the lock */

/* The lock word ours: free, ours from an earlier process, or taken over from a dead or stuck owner. */
static void reader_lock_take(struct tb_cpu_ctl *c)
{
	uint32_t me = reader_id();
	uint64_t since = 0;

	for (unsigned spins = 0;; spins++) {
		uint32_t owner;

		if (lock_try(c, me, &owner))
			return;
		if (owner && owner != me && spins % 256 == 255) {
			if (!since)
				since = now_ns();
			if ((owner_gone(owner) || now_ns() - since > READER_LOCK_TAKEOVER_NS) &&
			    lock_take_over(c, me, owner))
				return;
		}
		sched_yield();
	}
}

void reader_lock(struct tb_cpu_ctl *c)
{
	reader_lock_take(c);
	journal_finish(c);
}

void reader_unlock(struct tb_cpu_ctl *c)
{
	pthread_mutex_lock(&held_mu);
	held_drop(&c->reader_lock);
	/* release: pairs with reader_lock's acquire */
	atomic_store_explicit(&c->reader_lock, 0, memory_order_release);
	pthread_mutex_unlock(&held_mu);
}

#define TAIL_TRIES 10000 /* a tail that never resolves is a scribbled control block (shm.c) */

/*
 * A consistent view of the tail.  A region shared with other processes is
 * not trusted: a tail that does not resolve after TAIL_TRIES attempts is
 * taken as its words say, and the page it names is kept inside the region,
 * so a scribbled control block costs data, never a hang or a stray read.
 */
static void tail_now(struct tb_region *r, struct tb_cpu_ctl *c, struct tail_view *v)
{
	for (int i = 0; i < TAIL_TRIES; i++) {
		/* acquire: pairs with the publish's final store (tail_hist, meta, page bytes) */
		if (tail_resolve(c, atomic_load_explicit(&c->tail, memory_order_acquire), v) &&
		    v->phys <= r->nr_pages)
			return;
		sched_yield();
	}
	/* acquire: as above */
	v->t = atomic_load_explicit(&c->tail, memory_order_acquire);
	/* relaxed: the fallback for a broken region; its value is only kept in range */
	v->seq = h_seq(atomic_load_explicit(&c->tail_hist[t_gen(v->t) & 1], memory_order_relaxed));
	v->phys = t_phys(v->t) <= r->nr_pages ? t_phys(v->t) : r->nr_pages;
}

/*
 * Events committed on the CPU so far, and the tail they were counted at.
 * The tail page's cum_before is read between two loads of the same tail
 * word (a seqlock read): a writer rewrites it only when it enters that page
 * again, which moves the tail word first.
 */
uint64_t tail_events(struct tb_region *r, struct tb_cpu_ctl *c, struct tail_view *v)
{
	for (;;) {
		uint64_t cum;

		tail_now(r, c, v);
		/* acquire: keeps the re-load of the tail word below after this load */
		cum = __atomic_load_n(&cpu_meta(r, c)[v->phys].cum_before, __ATOMIC_ACQUIRE);
		/* acquire: pairs with the section's final store, like every tail load */
		if (atomic_load_explicit(&c->tail, memory_order_acquire) == v->t)
			return cum + t_count(v->t);
	}
}

/*
 * Readable end of the held page, and whether writers are still appending
 * to it.  Once they have left it, the end is remembered: it cannot move.
 */
static uint32_t held_limit(struct tb_region *r, struct tb_cpu_ctl *c, int *writer_on)
{
	struct tb_reader_state *rd = &c->rd;
	struct tail_view v;
	uint32_t end;

	if (rd->held_closed) {
		*writer_on = 0;
		return rd->held_end;
	}
	tail_now(r, c, &v);
	*writer_on = v.seq == rd->held_seq;
	end = page_end(r, c, &v, rd->held_seq, rd->held_phys);
	if (!*writer_on) {
		rd->held_closed = 1;
		rd->held_end = end;
	}
	return end;
}

/* ------------------------------------------------------------ taking pages */

/* Take the oldest unread page into the reader's hands: 1, or 0 if none. */
static int take_next(struct tb_region *r, struct tb_cpu_ctl *c)
{
	struct tb_reader_state *rd = &c->rd;
	_Atomic uint64_t *slots = cpu_slots(r, c);
	struct tail_view v;

	tail_now(r, c, &v);
	if (rd->next_seq < oldest_seq(r, v.seq))
		rd->next_seq = oldest_seq(r, v.seq);
	while (rd->next_seq <= v.seq) {
		uint64_t seq = rd->next_seq;
		_Atomic uint64_t *slot = &slots[seq % r->nr_pages];
		/* acquire: pairs with the writer's claim, so a page we see is the one claimed */
		uint64_t cur = atomic_load_explicit(slot, memory_order_acquire);
		uint64_t cum;

		if (s_seq(cur) != seq || s_free(cur) || s_phys(cur) > r->nr_pages) {
			rd->next_seq++; /* overwritten (the gap shows in cum_before), or a scribbled word */
			continue;
		}
		/* seq_cst: a writer overwriting this slot and this take are totally ordered */
		if (!atomic_compare_exchange_strong(slot, &cur, s_make(rd->held_phys, seq, 1)))
			continue;
		rd->held = 1;
		rd->held_phys = s_phys(cur);
		rd->held_seq = seq;
		rd->held_closed = 0;
		rd->read_off = 0;
		rd->next_seq = seq + 1;
		cum = meta_cum(&cpu_meta(r, c)[rd->held_phys]);
		if (cum > rd->next_cum)
			rd->pending_lost += cum - rd->next_cum;
		rd->next_cum = cum;
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ consuming */

struct item {
	int lost;      /* 1: a LOST event precedes the record */
	int blob;      /* the record is a blob reference: ref */
	uint64_t ts;
	const void *data;
	uint32_t len;
	uint32_t next_off; /* read_off after the record */
	struct tb_blob_ref ref;
};

/* Next data record of the held page, without consuming it: 1, 0 (none yet), -EIO. */
static int peek_held(struct tb_region *r, struct tb_cpu_ctl *c, struct item *it, int *writer_on)
{
	struct tb_reader_state *rd = &c->rd;
	uint8_t *page = cpu_page(r, c, rd->held_phys);
	uint32_t limit = held_limit(r, c, writer_on);
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (rd->read_off >= limit)
		return 0;
	if (rd->read_off == 0)
		rd->time = page_ts(page);
	if (tb_page_cursor_init_range(&cur, page, r->subbuf_size, rd->read_off, limit, rd->time) < 0)
		return -EIO;
	while ((rc = tb_page_next(&cur, &rec)) == 1) {
		if (rec.kind != TB_REC_DATA)
			continue;
		it->ts = rec.ts;
		it->data = rec.data;
		it->len = rec.len;
		it->next_off = cur.pos;
		it->blob = r->blob_chunks && blob_ref_parse(rec.type_len, rec.data, rec.len, &it->ref);
		return 1;
	}
	if (rc < 0)
		return -EIO;
	/* only stamp records were left: passed, with their time */
	reader_commit(c, &(struct commit){cur.pos, 1, cur.time, rd->next_cum, rd->pending_lost, read_count(c)});
	return 0;
}

/* Next item of one CPU under its reader lock: 1, 0 (nothing now), -errno. */
static int peek(struct tb_region *r, struct tb_cpu_ctl *c, struct item *it)
{
	struct tb_reader_state *rd = &c->rd;
	int writer_on = 0, rc;

	for (;;) {
		if (rd->held) {
			rc = peek_held(r, c, it, &writer_on);
			if (rc) {
				it->lost = rc == 1 && rd->pending_lost > 0;
				return rc;
			}
			if (writer_on)
				return 0;
			/* The page is finished: it becomes the spare. */
			rd->held = 0;
		}
		if (!take_next(r, c))
			return 0;
	}
}

static void advance(struct tb_cpu_ctl *c, const struct item *it)
{
	struct tb_reader_state *rd = &c->rd;

	if (it->lost) {
		rd->pending_lost = 0;
		return;
	}
	reader_commit(c, &(struct commit){it->next_off, 1, it->ts, rd->next_cum + 1, rd->pending_lost,
					   read_count(c) + 1});
}

/* The item as the caller's event; a blob is copied out now.  0, or -ENOMEM with nothing consumed. */
static int to_event(struct tb_ring *ring, unsigned cpu, const struct tb_cpu_ctl *c, const struct item *it,
		    struct tb_read_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->cpu = cpu;
	ev->ts = it->ts;
	ev->ns = tb_ring_to_ns(ring, it->ts);
	ev->seqno = c->rd.next_cum;
	if (it->lost) {
		ev->kind = TB_READ_LOST;
		ev->lost = c->rd.pending_lost;
		return 0;
	}
	ev->kind = TB_READ_RECORD;
	ev->data = it->data;
	ev->len = it->len;
	return it->blob ? blob_consume(ring, cpu, &it->ref, ev) : 0;
}

int tb_consume(struct tb_ring *ring, unsigned cpu, struct tb_read_event *ev)
{
	struct tb_cpu_ctl *c;
	struct item it;
	int rc;

	if (!ring || !ev || cpu >= ring->r->ncpus)
		return -EINVAL;
	c = region_cpu(ring->r, cpu);
	reader_lock(c);
	if (!reader_state_sane(ring->r, &c->rd)) {
		reader_unlock(c);
		return -EIO;
	}
	rc = peek(ring->r, c, &it);
	if (rc == 1) {
		int err = to_event(ring, cpu, c, &it, ev);
		if (err < 0)
			rc = err;
		else
			advance(c, &it);
	}
	reader_unlock(c);
	return rc;
}

/* What identifies the reader's position: every change of it under the lock changes one of these. */
struct reader_pos {
	uint64_t held_seq, next_cum, pending_lost;
	uint32_t held, read_off;
};

static struct reader_pos reader_pos(const struct tb_reader_state *rd)
{
	return (struct reader_pos){rd->held_seq, rd->next_cum, rd->pending_lost, rd->held, rd->read_off};
}

static bool same_pos(struct reader_pos a, struct reader_pos b)
{
	return a.held_seq == b.held_seq && a.next_cum == b.next_cum && a.pending_lost == b.pending_lost &&
	       a.held == b.held && a.read_off == b.read_off;
}

/*
 * Peek every CPU, take the oldest.  The item peeked is consumed as it is
 * when nobody moved that CPU's reader in between (held records below the
 * limit never change); otherwise another consumer took something, and the
 * choice starts over.  So 0 means every CPU was empty when it was peeked.
 */
int tb_consume_merged(struct tb_ring *ring, struct tb_read_event *ev)
{
	struct tb_region *r;

	if (!ring || !ev)
		return -EINVAL;
	r = ring->r;
	for (;;) {
		unsigned best = r->ncpus;
		struct item best_it = {0};
		struct reader_pos best_pos = {0};
		struct tb_cpu_ctl *c;

		for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
			struct item it;
			struct reader_pos pos;
			int rc;

			c = region_cpu(r, cpu);
			reader_lock(c);
			rc = reader_state_sane(r, &c->rd) ? peek(r, c, &it) : -EIO;
			pos = reader_pos(&c->rd);
			reader_unlock(c);
			if (rc < 0)
				return rc;
			if (rc == 1 && (best == r->ncpus || it.ts < best_it.ts)) {
				best = cpu;
				best_it = it;
				best_pos = pos;
			}
		}
		if (best == r->ncpus)
			return 0;
		c = region_cpu(r, best);
		reader_lock(c);
		if (same_pos(reader_pos(&c->rd), best_pos)) {
			int err = to_event(ring, best, c, &best_it, ev);
			if (err == 0)
				advance(c, &best_it);
			reader_unlock(c);
			return err < 0 ? err : 1;
		}
		reader_unlock(c);
	}
}

/* ------------------------------------------------------------ page reads */

/*
 * Flag the loss in the page's commit word (and store the count when 8 bytes
 * are left, as trace_pipe_raw does); the caller's info gets the count
 * either way, with the page's first event number and its event count.
 * The reader's pending loss is reported with the page: its commit zeroes it.
 */
static void set_loss(uint8_t *buf, uint32_t d, uint32_t len, const struct tb_reader_state *rd,
		     struct tb_read_info *info, uint64_t first, uint32_t events)
{
	if (info)
		*info = (struct tb_read_info){rd->pending_lost, first, events};
	tbf_set_commit(buf, d, len, (int64_t)rd->pending_lost);
}

/*
 * References handed over in a raw page count as consumed: their blobs'
 * space may be reused (producer/consumer mode needs that).  The records of
 * page[from, to) with running time time.
 */
static void release_blobs(struct tb_region *r, const uint8_t *page, uint32_t from, uint32_t to, uint64_t time)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	struct tb_blob_ref ref;

	if (!r->blob_chunks || tb_page_cursor_init_range(&cur, page, r->subbuf_size, from, to, time) < 0)
		return;
	while (tb_page_next_data(&cur, &rec) == 1)
		if (blob_ref_parse(rec.type_len, rec.data, rec.len, &ref))
			blob_release(r, &ref);
}

/* Hand over the whole held page: the writers have left it and nothing was read. */
static void give_whole(struct tb_region *r, struct tb_cpu_ctl *c, uint8_t *buf,
		       struct tb_read_info *info)
{
	struct tb_reader_state *rd = &c->rd;
	struct tb_page_meta *m = &cpu_meta(r, c)[rd->held_phys];
	uint32_t d = tb_page_data_size(r->subbuf_size), len = meta_len(m), entries = meta_entries(m);

	if (len > d)
		len = d; /* a scribbled length (shm.c): the copy stays in the page */
	uint8_t *page = cpu_page(r, c, rd->held_phys);

	tbf_put64(buf, page_ts(page));
	memcpy(buf + TB_PAGE_HDR_SIZE, page + TB_PAGE_HDR_SIZE, len);
	memset(buf + TB_PAGE_HDR_SIZE + len, 0, d - len);
	set_loss(buf, d, len, rd, info, meta_cum(m), entries);
	release_blobs(r, page, 0, len, page_ts(page));
	/* the page handed over whole: it becomes the spare */
	reader_commit(c, &(struct commit){rd->read_off, 0, rd->time, meta_cum(m) + entries, 0, read_count(c) + entries});
}

/* Copy the held page's unread committed records, stamped with the reader's time. */
static int give_copy(struct tb_region *r, struct tb_cpu_ctl *c, uint8_t *buf, uint32_t limit,
		     struct tb_read_info *info)
{
	struct tb_reader_state *rd = &c->rd;
	uint8_t *page = cpu_page(r, c, rd->held_phys);
	uint32_t d = tb_page_data_size(r->subbuf_size), n = limit - rd->read_off, events = 0;
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (rd->read_off == 0)
		rd->time = page_ts(page);
	tbf_put64(buf, rd->time);
	memcpy(buf + TB_PAGE_HDR_SIZE, page + TB_PAGE_HDR_SIZE + rd->read_off, n);
	memset(buf + TB_PAGE_HDR_SIZE + n, 0, d - n);
	if (tb_page_cursor_init_range(&cur, page, r->subbuf_size, rd->read_off, limit, rd->time) < 0)
		return -EIO;
	while ((rc = tb_page_next(&cur, &rec)) == 1)
		events += rec.kind == TB_REC_DATA;
	if (rc < 0)
		return -EIO;
	release_blobs(r, page, rd->read_off, limit, rd->time);
	set_loss(buf, d, n, rd, info, rd->next_cum, events);
	reader_commit(c, &(struct commit){limit, 1, cur.time, rd->next_cum + events, 0, read_count(c) + events});
	return 0;
}

long tb_read_page_info(struct tb_ring *ring, unsigned cpu, void *buf, size_t size,
		       struct tb_read_info *info)
{
	struct tb_region *r;
	struct tb_cpu_ctl *c;
	long rc = 0;

	if (!ring || !buf)
		return -EINVAL;
	r = ring->r;
	if (cpu >= r->ncpus || size < r->subbuf_size)
		return -EINVAL;
	c = region_cpu(r, cpu);
	reader_lock(c);
	if (!reader_state_sane(r, &c->rd)) {
		reader_unlock(c);
		return -EIO;
	}
	for (;;) {
		int writer_on;
		uint32_t limit;

		if (!c->rd.held && !take_next(r, c))
			break;
		limit = held_limit(r, c, &writer_on);
		if (!writer_on && c->rd.read_off == 0) {
			give_whole(r, c, buf, info);
			rc = (long)r->subbuf_size;
			break;
		}
		if (c->rd.read_off < limit) {
			/* like the kernel's copy path: a closed page's end filler travels along */
			uint32_t d = tb_page_data_size(r->subbuf_size);
			if (!writer_on && d - limit >= 8)
				limit = d;
			rc = give_copy(r, c, buf, limit, info) < 0 ? -EIO : (long)r->subbuf_size;
			break;
		}
		if (writer_on)
			break;
		c->rd.held = 0; /* finished; look at the next page */
	}
	reader_unlock(c);
	return rc;
}

long tb_read_page(struct tb_ring *ring, unsigned cpu, void *buf, size_t size)
{
	return tb_read_page_info(ring, cpu, buf, size, NULL);
}

/* ------------------------------------------------------------ iterator */

struct iter_cpu {
	uint8_t *copy;  /* private copy of the page being walked */
	struct tb_page_cursor cur;
	int active;     /* cur walks copy */
	uint64_t next_seq, end_seq, end_cum;
	uint32_t end_off;
	uint64_t expect; /* number of the next event we have not accounted for */
	uint64_t seqno;  /* number of the next record in copy */
	int have;        /* ev holds the next item */
	int held_back;   /* rec is decoded but a LOST item goes first */
	int blob;        /* ev is a blob reference: ref, resolved when it is returned */
	struct tb_blob_ref ref;
	struct tb_record rec;
	struct tb_read_event ev;
};

struct tb_iter {
	struct tb_ring *ring;
	unsigned ncpus;
	struct blob_copy blob; /* the blob of the event returned last */
	struct iter_cpu cpu[];
};

/*
 * Start with what the consuming reader holds and has not consumed.  One view
 * of the tail, taken under the reader lock, fixes both the end point and how
 * much of the held page is copied, so nothing between the two goes missing.
 */
static void iter_start_cpu(struct tb_region *r, struct tb_cpu_ctl *c, struct iter_cpu *ic)
{
	struct tb_reader_state *rd = &c->rd;
	struct tail_view v;

	reader_lock(c);
	ic->end_cum = tail_events(r, c, &v);
	ic->end_seq = v.seq;
	ic->end_off = t_off(v.t);
	ic->expect = rd->next_cum - rd->pending_lost;
	ic->next_seq = rd->next_seq;
	if (rd->held && reader_state_sane(r, rd)) {
		uint32_t limit = page_end(r, c, &v, rd->held_seq, rd->held_phys);
		uint8_t *page = cpu_page(r, c, rd->held_phys);
		uint64_t time = rd->read_off ? rd->time : page_ts(page);

		tbf_put64(ic->copy, page_ts(page));
		memcpy(ic->copy + TB_PAGE_HDR_SIZE, page + TB_PAGE_HDR_SIZE, limit);
		if (rd->read_off <= limit &&
		    tb_page_cursor_init_range(&ic->cur, ic->copy, r->subbuf_size, rd->read_off, limit, time) == 0) {
			ic->active = 1;
			ic->seqno = rd->next_cum;
		}
	}
	reader_unlock(c);
}

/*
 * Copy the next page still in the ring, seqlock-style: read the slot, copy,
 * re-read the slot; a writer claims the slot before it writes a byte (I3),
 * so an unchanged slot word means an intact copy.
 */
static int iter_load_page(struct tb_region *r, struct tb_cpu_ctl *c, struct iter_cpu *ic)
{
	_Atomic uint64_t *slots = cpu_slots(r, c);

	while (ic->next_seq <= ic->end_seq) {
		struct tail_view v;
		uint64_t seq, before, cum;
		uint32_t phys, limit;

		tail_now(r, c, &v);
		if (ic->next_seq < oldest_seq(r, v.seq))
			ic->next_seq = oldest_seq(r, v.seq);
		seq = ic->next_seq++;
		if (seq > ic->end_seq)
			break;
		/* acquire: pairs with the claim CAS; the page's meta and bytes are that lap's */
		before = atomic_load_explicit(&slots[seq % r->nr_pages], memory_order_acquire);
		if (s_seq(before) != seq || s_free(before) || s_phys(before) > r->nr_pages)
			continue; /* overwritten, taken by a consuming reader, or a scribbled word */
		phys = s_phys(before);
		limit = page_end(r, c, &v, seq, phys);
		if (seq == ic->end_seq && limit > ic->end_off)
			limit = ic->end_off;
		cum = meta_cum(&cpu_meta(r, c)[phys]);
		/* the header's commit word may be changing: take the stamp alone */
		tbf_put64(ic->copy, page_ts(cpu_page(r, c, phys)));
		memcpy(ic->copy + TB_PAGE_HDR_SIZE, cpu_page(r, c, phys) + TB_PAGE_HDR_SIZE, limit);
		/*
		 * The seqlock re-check, as a compare-and-swap of the word with
		 * itself: acq_rel keeps the copy before it, and success means no
		 * writer claimed the slot (nor the reader took it) while we copied.
		 */
		if (!atomic_compare_exchange_strong_explicit(&slots[seq % r->nr_pages], &before, before,
							     memory_order_acq_rel, memory_order_relaxed))
			continue; /* overwritten or taken while we copied */
		if (tb_page_cursor_init_range(&ic->cur, ic->copy, r->subbuf_size, 0, limit, tbf_get64(ic->copy)) < 0)
			continue;
		ic->seqno = cum;
		ic->active = 1;
		return 1;
	}
	return 0;
}

/* A LOST item numbered like the consuming reads': seqno is the number after the gap. */
static void iter_lost(struct iter_cpu *ic, unsigned cpu, uint64_t ts, uint64_t count)
{
	memset(&ic->ev, 0, sizeof(ic->ev));
	ic->ev.kind = TB_READ_LOST;
	ic->ev.cpu = cpu;
	ic->ev.ts = ts;
	ic->ev.lost = count;
	ic->expect += count;
	ic->ev.seqno = ic->expect;
	ic->have = 1;
	ic->blob = 0;
}

static void iter_record(struct tb_iter *it, struct iter_cpu *ic, unsigned cpu)
{
	memset(&ic->ev, 0, sizeof(ic->ev));
	ic->ev.kind = TB_READ_RECORD;
	ic->ev.cpu = cpu;
	ic->ev.ts = ic->rec.ts;
	ic->ev.ns = tb_ring_to_ns(it->ring, ic->rec.ts);
	ic->ev.seqno = ic->seqno++;
	ic->ev.data = ic->rec.data;
	ic->ev.len = ic->rec.len;
	ic->expect = ic->seqno;
	ic->have = 1;
	ic->blob = it->ring->r->blob_chunks && blob_ref_parse(ic->rec.type_len, ic->rec.data, ic->rec.len, &ic->ref);
}

/* Make ic->ev the CPU's next item: 1, or 0 when the CPU is done. */
static int iter_peek(struct tb_iter *it, unsigned cpu)
{
	struct tb_region *r = it->ring->r;
	struct iter_cpu *ic = &it->cpu[cpu];
	struct tb_cpu_ctl *c = region_cpu(r, cpu);

	if (ic->have)
		return 1;
	if (ic->held_back) {
		ic->held_back = 0;
		iter_record(it, ic, cpu);
		return 1;
	}
	for (;;) {
		if (ic->active && tb_page_next_data(&ic->cur, &ic->rec) == 1) {
			if (ic->seqno > ic->expect) {
				iter_lost(ic, cpu, ic->rec.ts, ic->seqno - ic->expect);
				ic->ev.ns = tb_ring_to_ns(it->ring, ic->rec.ts);
				ic->held_back = 1;
			} else
				iter_record(it, ic, cpu);
			return 1;
		}
		ic->active = 0;
		if (!iter_load_page(r, c, ic))
			break;
	}
	if (ic->expect < ic->end_cum) { /* the newest pages went while we walked */
		iter_lost(ic, cpu, UINT64_MAX, ic->end_cum - ic->expect);
		ic->ev.ns = UINT64_MAX;
		return 1;
	}
	return 0;
}

int tb_iter_new(struct tb_ring *ring, struct tb_iter **out)
{
	struct tb_region *r;
	struct tb_iter *it;

	if (!ring || !out)
		return -EINVAL;
	r = ring->r;
	it = calloc(1, sizeof(*it) + r->ncpus * sizeof(struct iter_cpu));
	if (!it)
		return -ENOMEM;
	it->ring = ring;
	it->ncpus = r->ncpus;
	for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
		it->cpu[cpu].copy = malloc(r->subbuf_size);
		if (!it->cpu[cpu].copy) {
			tb_iter_free(it);
			return -ENOMEM;
		}
		iter_start_cpu(r, region_cpu(r, cpu), &it->cpu[cpu]);
	}
	*out = it;
	return 0;
}

int tb_iter_next(struct tb_iter *it, struct tb_read_event *ev)
{
	unsigned best;

	if (!it || !ev)
		return -EINVAL;
	best = it->ncpus;

	for (unsigned cpu = 0; cpu < it->ncpus; cpu++)
		if (iter_peek(it, cpu) && (best == it->ncpus || it->cpu[cpu].ev.ts < it->cpu[best].ev.ts))
			best = cpu;
	if (best == it->ncpus)
		return 0;
	*ev = it->cpu[best].ev;
	if (it->cpu[best].blob) {
		/* resolved as late as it can be, when the caller gets it; nothing is consumed */
		int rc = blob_fetch(it->ring->r, &it->cpu[best].ref, &it->blob);
		if (rc < 0)
			return rc;
		ev->kind = rc ? TB_READ_BLOB : TB_READ_BLOB_LOST;
		ev->data = rc ? it->blob.buf : NULL;
		ev->len = it->cpu[best].ref.len;
	}
	it->cpu[best].have = 0;
	return 1;
}

void tb_iter_free(struct tb_iter *it)
{
	if (!it)
		return;
	for (unsigned cpu = 0; cpu < it->ncpus; cpu++)
		free(it->cpu[cpu].copy);
	free(it->blob.buf);
	free(it);
}
