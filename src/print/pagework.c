// SPDX-License-Identifier: MIT
/*
 * pagework.c - units of whole sub-buffers decoded and rendered by workers,
 * handed back per CPU in page order (pagework.h says what and why).
 *
 * Each CPU has a queue of at most depth units in page order.  The reading
 * thread appends a FREE unit to its CPU's queue as QUEUED; a worker takes
 * the first QUEUED unit of a CPU no other worker is filling (so a CPU's
 * units are filled in page order), fills it with the CPU's next pages under
 * the read lock (WORKING), walks it and marks it DONE - or DONE and empty
 * when the CPU has no more pages; the reading thread replays the head unit
 * of a CPU once it is DONE and, when it asks for the CPU's next unit, queues
 * the one it replayed again.  One mutex guards every state change (a few
 * per unit of thousands of records, never per record); a unit's contents
 * belong to whoever holds it in its state - the reading thread in FREE and
 * DONE, a worker in WORKING - and the mutex hand-over orders those
 * accesses.  The read lock keeps the capture's page sources to one thread
 * at a time (they share descriptors and the file's handle).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/capture_source.h"
#include "pagecount.h"
#include "ring/pagefmt.h"
#include "pagework.h"
#include "tracebuf/blob.h"
#include "render.h"
#include "util/grow.h"

/*
 * A unit of the threaded mode: up to UNIT_PAGES sub-buffers, no more than
 * UNIT_BYTES of them (large sub-buffers: fewer), and DEPTH units in flight
 * per CPU - what bounds memory whatever the capture's size.  A unit is
 * handed between threads under a lock with a wake-up; at 8 pages of 4 KiB
 * the analyses' merge (offcpu) spent more on hand-offs than the worker
 * saved it (107 ms with a worker, 84 without, on 1.5 M events; 72 ms at 32).
 * 64 was measured with the pages read straight into the slab (20:15 UTC,
 * 2026-12-01): no faster than 32 on the bench files, report or --count.
 */
#define UNIT_PAGES 32
#define UNIT_BYTES (256u * 1024)
#define DEPTH 3
/*
 * A unit of a count (PW_COUNT) keeps no page: each is walked where the
 * capture wrote it and the slab is written again by the next read, so a
 * unit can span many slabs and the hand-offs that cost a wake-up each
 * become fewer.  What stays is a stamp a record (8 bytes, against the
 * record's 8 or more) and a header a page.  COUNT_UNIT_PAGES chosen by
 * measure (docs/benchmarks.md, 2026-12-07).
 */
#define COUNT_UNIT_PAGES 256
/*
 * A count's slab: each read is walked right after the copy that wrote it,
 * and a slab that stays in the core's cache makes the kernel's copy out of
 * the page cache (half a v6 count's CPU) cheaper: task-clock of the mixed
 * v6 recording's count (perf stat -r 20, three rounds in turns, load 16)
 * 55.4, 57.1, 46.4 ms against 61.6, 61.7, 52.0 ms with 256 KiB; v7+zstd
 * chunks of up to 16 sub-buffers still decompress straight into it
 * (callgrind: the same instructions).
 */
#define COUNT_SLAB_BYTES (64u * 1024)

enum unit_state { U_FREE, U_QUEUED, U_WORKING, U_DONE };

struct stream_queue {
	struct pw_unit *units[DEPTH]; /* units[head..head+count) in page order */
	size_t head, count;
	struct pw_unit *replayed;     /* handed out last: refilled at the next call */
	bool exhausted;               /* the capture has no more pages for the stream's CPU */
	struct pw_source src;
	bool started;
	bool filling;                 /* a worker is filling one of its units (under lock) */
	int unsent;                   /* units not yet queued (a warm-up holds them back) */
};

struct pagework {
	struct tb_schema *schema;
	struct tb_render_opts opts;
	const _Atomic uint8_t *ready;
	int render; /* enum pw_render */
	pw_render_fn *render_fn; /* NULL: render_event_body() (pagework_set_renderer) */
	void *render_ctx;
	int nstreams, depth;
	size_t unit_pages;
	bool warmup;            /* each CPU's first unit is PW_WARMUP_PAGES alone (pagework.h) */
	struct stream_queue *queues;
	struct pw_unit *units;  /* ncpus * depth */
	pthread_mutex_t lock;
	pthread_cond_t work;    /* a unit became QUEUED, a CPU's fill ended, or stop */
	pthread_cond_t done;    /* the unit awaited became DONE */
	struct pw_unit *awaited; /* the unit the reading thread waits for (under lock), or NULL */
	bool stop;
	pthread_t *threads;
	int nthreads;
};

/* ------------------------------------------------------------- walking */

/*
 * One more step of kind on page, its text_end where the text ends now (a
 * record's line starts at the previous step's text_end); NULL when memory
 * ran out (the unit's text says oom).
 */
static bool grow_steps(struct pw_unit *u)
{
	size_t cap = u->steps_cap ? 2 * u->steps_cap : 1024;
	struct pw_step *grown = realloc(u->steps, cap * sizeof(*grown));

	if (!grown) {
		u->text.oom = true;
		return false;
	}
	u->steps = grown;
	u->steps_cap = cap;
	return true;
}

/* A step of kind on page, every other field zero. */
static struct pw_step *new_step(struct pw_unit *u, enum pw_step_kind kind, uint32_t page)
{
	struct pw_step *st;

	if (u->nsteps == u->steps_cap && !grow_steps(u))
		return NULL;
	st = &u->steps[u->nsteps++];
	*st = (struct pw_step){.kind = (uint8_t)kind, .page = page, .text_end = (uint32_t)u->text.len};
	return st;
}

/*
 * A record's step, its fields left for walk_record() to set, each of them
 * (once per record of every walk: zeroing the step first was a tenth of it).
 */
static inline struct pw_step *new_record_step(struct pw_unit *u)
{
	if (u->nsteps == u->steps_cap && !grow_steps(u))
		return NULL;
	return &u->steps[u->nsteps++];
}

static bool keep_error(struct pw_unit *u, const struct tb_problem *err, uint32_t *index)
{
	struct tb_problem *grown = tb__grow(u->errs, &u->errs_cap, u->nerrs + 1, sizeof(*grown), 16);
	if (!grown)
		return false;
	u->errs = grown;
	u->errs[u->nerrs] = *err;
	*index = (uint32_t)u->nerrs++;
	return true;
}

/* Whether workers may render records of id: the reading thread said so. */
static bool id_ready(const struct pagework *w, uint16_t id)
{
	/* acquire: pairs with the reading thread's release after it chose the printer */
	uint8_t bits = atomic_load_explicit(&w->ready[id / 8], memory_order_acquire);

	return bits & (1u << (id % 8));
}

/*
 * Whether rec is a blob reference (tracebuf/blob.h): a record stored with
 * its length in the header's first word (type_len 0) and of that size is
 * asked about.  The kernel stores records as short as a reference with
 * their length in type_len, so the first test is always false for its
 * records (and well predicted: their lengths alternate, sys_enter's and
 * sys_exit's).
 */
static bool is_blob_ref(const struct tb_record *rec)
{
	struct tb_blob_ref ref;

	return rec->type_len == 0 && rec->len == TB_BLOB_REF_SIZE && tb_blob_ref_decode(rec, &ref);
}

/*
 * What a worker renders of a record it may render (pagework_new's render),
 * into u->text; st->rc, st->used and the error set.
 */
static inline void render_record(struct pagework *w, struct pw_unit *u, struct pw_step *st, const uint8_t *d,
				 uint32_t len, uint64_t ts)
{
	struct tb_render_record ev = {u->cpu, ts, d, len};
	struct tb_problem err; /* filled only on failure */
	enum printer_kind used;

	if (w->render == PW_RENDER_BODIES && w->render_fn)
		st->rc = w->render_fn(w->render_ctx, &ev, &u->text, &err, &used);
	else if (w->render == PW_RENDER_BODIES)
		st->rc = render_event_body(w->schema, &ev, w->opts.ns_clock, &u->text, &err, &used);
	else
		st->rc = render_event(w->schema, &ev, &w->opts, &u->text, &err, &used);
	st->used = (uint8_t)used;
	if (st->rc == -EINVAL && !keep_error(u, &err, &st->err))
		st->rc = -ENOMEM;
}

/*
 * A data record's step (payload d of len bytes at ts, on page base; blob:
 * a blob reference), rendered when it may be.  Each field is set once (once
 * per record of every walk: zeroing the step first was a tenth of it), and
 * a record of 8 bytes or more - every event the kernel writes - has its
 * common header read in one load.
 */
static inline __attribute__((always_inline)) void walk_record(struct pagework *w, struct pw_unit *u, uint32_t page,
							     const uint8_t *base, const uint8_t *d, uint32_t len,
							     uint64_t ts, bool blob)
{
	struct pw_step *st = new_record_step(u);

	if (!st)
		return;
	st->kind = PW_RECORD;
	st->page = page;
	st->off = (uint32_t)(d - base);
	st->len = len;
	st->ts = ts;
	st->rc = 0;
	st->used = 0;
	st->err = 0;
	st->blob = blob;
	/* A blob reference has no event fields: the reader says what became of its blob. */
	if (len >= 8 && !blob) {
		uint64_t head; /* id (2 bytes), flags, preempt count, pid (4) */
		memcpy(&head, d, 8);
		st->id = (uint16_t)head;
		st->flags = (uint8_t)(head >> 16);
		st->preempt = (uint8_t)(head >> 24);
		st->pid = (int32_t)(head >> 32);
		st->here = !(w->render && id_ready(w, st->id));
		if (!st->here)
			render_record(w, u, st, d, len, ts);
		st->text_end = (uint32_t)u->text.len;
		return;
	}
	st->id = 0;
	st->pid = 0;
	st->flags = st->preempt = 0;
	st->here = true;
	if (len >= 2 && !blob)
		memcpy(&st->id, d, 2);
	st->text_end = (uint32_t)u->text.len;
}

/*
 * Every step of one page, as a one-thread walk would meet them: the common
 * record (a small data record, never a blob reference: those have type_len
 * 0) straight from the cursor's inline step, any other through
 * tb_page_next_data(), which checks it in full.
 */
static void walk_page(struct pagework *w, struct pw_unit *u, uint32_t page)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	struct pw_step *st;
	const uint8_t *base = u->page[page], *d;
	uint32_t len;
	int rc;

	if (tbf_all_zero(base, u->size[page])) {
		new_step(u, PW_ZERO_PAGE, page);
		return;
	}
	if (tb_page_cursor_init(&cur, base, u->size[page]) < 0) {
		if ((st = new_step(u, PW_BAD_PAGE, page))) {
			st->off = (uint32_t)cur.err.offset;
			st->reason = cur.err.reason;
		}
		return;
	}
	u->hdr[page] = cur.hdr;
	new_step(u, PW_PAGE, page);
	for (;;) {
		if (tbf_next_small_data(&cur, &d, &len)) {
			walk_record(w, u, page, base, d, len, cur.time, false);
		} else if ((rc = tb_page_next_data(&cur, &rec)) == 1) {
			walk_record(w, u, page, base, rec.data, rec.len, rec.ts, is_blob_ref(&rec));
		} else {
			break;
		}
	}
	if (rc < 0 && (st = new_step(u, PW_PAGE_ERROR, page))) {
		st->off = (uint32_t)cur.err.offset;
		st->reason = cur.err.reason;
	}
}

/* ------------------------------------------------ spans and tally */

/*
 * The kinds of record a unit's tally tells apart, in an open-addressed
 * table: a unit holds a few dozen kinds (event ID and printer) at most in
 * practice; past TALLY_MOST the unit is left uncounted (printed_ok false).
 */
#define TALLY_SLOTS 256
#define TALLY_MOST 192

struct pw_tally {
	uint32_t key[TALLY_SLOTS]; /* id << 8 | used, plus 1: 0 is a free slot */
	uint32_t n[TALLY_SLOTS];
	uint32_t kinds;
};

static bool tally_add(struct pw_tally *t, uint16_t id, uint8_t used)
{
	uint32_t key = ((uint32_t)id << 8 | used) + 1, slot = (id * 31u + used) % TALLY_SLOTS;

	while (t->key[slot] && t->key[slot] != key)
		slot = (slot + 1) % TALLY_SLOTS;
	if (!t->key[slot]) {
		if (t->kinds == TALLY_MOST)
			return false;
		t->key[slot] = key;
		t->kinds++;
	}
	t->n[slot]++;
	return true;
}

/* The table's kinds into u->printed; false when memory ran out. */
static bool tally_list(struct pw_unit *u)
{
	struct pw_tally *t = u->tally;
	struct pw_printed *list = realloc(u->printed, (t->kinds ? t->kinds : 1) * sizeof(*list));

	if (!list)
		return false;
	u->printed = list;
	u->nprinted = 0;
	for (uint32_t i = 0; i < TALLY_SLOTS; i++)
		if (t->key[i])
			list[u->nprinted++] = (struct pw_printed){(uint16_t)((t->key[i] - 1) >> 8),
								  (uint8_t)(t->key[i] - 1), t->n[i]};
	return true;
}

/*
 * The unit's spans and tally (pagework.h), in one pass from its last step
 * back: what the reading thread would otherwise read a record at a time.
 */
static void sum_up(struct pw_unit *u)
{
	bool counting = true;

	u->printed_ok = u->spans_ok = false;
	if (u->span_cap < u->nsteps) {
		uint32_t *grown = realloc(u->span_end, u->steps_cap * sizeof(*grown));
		if (!grown)
			return; /* the reading thread goes a record at a time */
		u->span_end = grown;
		u->span_cap = u->steps_cap;
	}
	if (!u->tally && !(u->tally = malloc(sizeof(*u->tally))))
		counting = false;
	if (counting)
		memset(u->tally, 0, sizeof(*u->tally));
	for (size_t i = u->nsteps; i-- > 0;) {
		const struct pw_step *st = &u->steps[i];
		if (st->kind != PW_RECORD || st->here)
			continue;
		if (counting && st->rc >= 0)
			counting = tally_add(u->tally, st->id, st->used);
		if (pw_step_rendered(st))
			u->span_end[i] = i + 1 < u->nsteps && pw_step_rendered(st + 1) && st[1].ts >= st->ts
						 ? u->span_end[i + 1]
						 : (uint32_t)(i + 1);
	}
	u->spans_ok = true;
	u->printed_ok = counting && tally_list(u);
}

static void walk_unit(struct pagework *w, struct pw_unit *u)
{
	if (w->render == PW_COUNT)
		return; /* walked as its pages were read (fill) */
	u->nsteps = 0;
	u->nerrs = 0;
	sb_reset(&u->text);
	for (uint32_t i = 0; i < u->npages; i++)
		walk_page(w, u, i);
	if (w->render_fn)
		sum_up(u);
}

/* ------------------------------------------------------------- workers */

static bool fill(struct pagework *w, struct stream_queue *q, struct pw_unit *u);

/* The CPU's first QUEUED unit: the next of its pages to read; NULL if none waits. */
static struct pw_unit *first_queued(const struct stream_queue *q)
{
	for (size_t k = 0; k < q->count; k++) {
		struct pw_unit *u = q->units[(q->head + k) % DEPTH];
		if (u->state == U_QUEUED)
			return u;
	}
	return NULL;
}

/* The first QUEUED unit of a CPU no worker is filling. */
static struct pw_unit *next_to_fill(struct pagework *w, struct stream_queue **qp)
{
	for (int c = 0; c < w->nstreams; c++) {
		struct stream_queue *q = &w->queues[c];
		struct pw_unit *u = q->filling ? NULL : first_queued(q);
		if (u) {
			*qp = q;
			return u;
		}
	}
	return NULL;
}

/* Fill u from its CPU's pages (its problems kept for the reading thread); false: no more pages. */
static bool fill_here(struct pagework *w, struct stream_queue *q, struct pw_unit *u)
{
	bool filled;

	/*
	 * No lock: q->filling (under w->lock) lets one worker at a time read a
	 * CPU's pages, and the capture keeps each CPU's reading state apart
	 * (its file or stream, buffer, decompressor; capture.h), reading only
	 * what it shares.  So CPUs are read - and decompressed - in parallel.
	 * Problems met go to this thread's sink (diag_defer.h), not the capture.
	 */
	diag_sink_install(&u->problems);
	filled = fill(w, q, u);
	diag_sink_install(NULL);
	return filled;
}

static void *worker(void *arg)
{
	struct pagework *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct stream_queue *q = NULL;
		struct pw_unit *u = w->stop ? NULL : next_to_fill(w, &q);
		bool filled;
		if (!u) {
			if (w->stop)
				break;
			pthread_cond_wait(&w->work, &w->lock);
			continue;
		}
		u->state = U_WORKING;
		q->filling = true;
		pthread_mutex_unlock(&w->lock);
		filled = fill_here(w, q, u);
		pthread_mutex_lock(&w->lock);
		q->filling = false;
		if (first_queued(q)) /* the CPU's next unit may be filled now, by a worker waiting (this one walks) */
			pthread_cond_signal(&w->work);
		if (filled) {
			pthread_mutex_unlock(&w->lock);
			walk_unit(w, u);
			pthread_mutex_lock(&w->lock);
		} else {
			u->npages = 0; /* DONE and empty: the CPU's pages ended */
		}
		u->state = U_DONE;
		if (u == w->awaited) /* the reading thread sleeps for this unit alone: not woken for the others */
			pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* --------------------------------------------------------- reading side */

/*
 * A new filling of u: the names of the filling before last are freed, those
 * of the last one kept one filling more - a consumer may still hold the
 * last record it took (with its name) when it takes the next (funcgraph
 * does), and that next can come from this unit refilled.
 */
static void age_names(struct pw_unit *u)
{
	char **spare = u->old_names;

	for (size_t i = 0; i < u->nold; i++)
		free(u->old_names[i]);
	u->old_names = u->names;
	u->nold = u->nnames;
	u->names = spare;
	u->nnames = 0;
}

/*
 * The name a page was read under may not outlive the next page (a
 * decompressed chunk's label is replaced with the chunk), and the unit's
 * records are told about long after: the unit keeps its own copy, one per
 * run of pages with the same name.
 */
static const char *keep_name(struct pw_unit *u, const char *file)
{
	char *copy;

	if (!file)
		return NULL;
	if (u->nnames && strcmp(u->names[u->nnames - 1], file) == 0)
		return u->names[u->nnames - 1];
	if (u->nnames == u->cap || !(copy = strdup(file)))
		return "(a page whose name could not be kept)";
	u->names[u->nnames++] = copy;
	return copy;
}

/* What fill() reads a CPU's pages for. */
struct fill_into {
	struct pagework *w;
	struct pw_unit *u;
};

/* A page the capture wrote into the unit's slab (capture_read_pages). */
static void took_page(void *ctx, const struct tb_capture_page *p)
{
	struct fill_into *f = ctx;
	struct pw_unit *u = f->u;
	size_t i = u->npages;

	if (f->w->render == PW_COUNT) {
		pw_count_page(u, (uint32_t)i, p->data, p->size); /* walked where it was read */
		u->page[i] = NULL; /* the slab is written again by the unit's next read */
	} else {
		u->page[i] = u->slab + (p->data - u->slab);
	}
	u->size[i] = p->size;
	u->file[i] = keep_name(u, p->file);
	u->file_offset[i] = p->file_offset;
	u->npages++;
}

/*
 * Bytes of a unit's slab for a capture's sub-buffers: unit_pages of them,
 * no more than UNIT_BYTES (a count: COUNT_SLAB_BYTES) unless one
 * sub-buffer is larger.
 */
static size_t slab_bytes(const struct pagework *w, const struct tb_capture *c)
{
	size_t cap = w->render == PW_COUNT ? COUNT_SLAB_BYTES : UNIT_BYTES;
	size_t page = tb_capture_subbuf_size(c), most = page > cap ? page : cap;

	return page && w->unit_pages <= most / page ? w->unit_pages * page : most;
}

/*
 * Up to unit_pages of the CPU's next pages into u, read (or decompressed)
 * by the capture straight into the unit's slab; false when there were none.
 */
static bool fill(struct pagework *w, struct stream_queue *q, struct pw_unit *u)
{
	struct fill_into f = {w, u};
	size_t room, want;
	int rc;

	u->npages = 0;
	age_names(u);
	if (w->render == PW_COUNT)
		pw_count_reset(u);
	if (q->exhausted)
		return u->text.oom;
	room = slab_bytes(w, q->src.capture);
	if (room > u->slab_cap) {
		free(u->slab);
		u->slab_cap = 0;
		if (!(u->slab = malloc(room))) { /* the pages are lost: said as an oom by the unit's text */
			u->text.oom = true;
			q->exhausted = true;
			return true;
		}
		u->slab_cap = room;
	}
	want = u->pages_wanted ? u->pages_wanted : w->unit_pages;
	u->pages_wanted = 0;
	/* A count's unit spans slabs: each read walked at once (took_page), the slab read into again. */
	do
		rc = capture_read_pages(q->src.capture, q->src.cpu, u->slab, room, want - u->npages, took_page, &f);
	while (rc > 0 && w->render == PW_COUNT && u->npages < want && !u->text.oom);
	if (rc <= 0)
		q->exhausted = true;
	return u->npages > 0 || u->text.oom;
}

/* Queue u for the workers to fill and walk (or fill and walk it here, without them). */
static void submit(struct pagework *w, struct stream_queue *q, struct pw_unit *u)
{
	if (w->nthreads == 0) {
		if (!fill(w, q, u))
			return;
		walk_unit(w, u);
		u->state = U_DONE;
		q->units[(q->head + q->count++) % DEPTH] = u;
		return;
	}
	pthread_mutex_lock(&w->lock);
	u->state = U_QUEUED;
	q->units[(q->head + q->count++) % DEPTH] = u;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
}

/* n more of the stream's units never queued yet, queued in their order. */
static void submit_unsent(struct pagework *w, int stream, int n)
{
	struct stream_queue *q = &w->queues[stream];

	for (; n > 0 && q->unsent > 0; n--, q->unsent--)
		submit(w, q, &w->units[(size_t)stream * DEPTH + (size_t)(w->depth - q->unsent)]);
}

const struct pw_unit *pagework_next(struct pagework *w, int stream)
{
	struct stream_queue *q = &w->queues[stream];
	struct pw_unit *u;

	if (!q->started) {
		q->started = true;
		q->unsent = w->depth;
		if (w->warmup)
			w->units[(size_t)stream * DEPTH].pages_wanted = PW_WARMUP_PAGES;
		submit_unsent(w, stream, w->warmup ? 1 : w->depth);
	} else if (q->replayed) {
		u = q->replayed;
		q->replayed = NULL;
		u->state = U_FREE;
		submit(w, q, u);
		submit_unsent(w, stream, q->unsent); /* after a warm-up: the units held back */
	}
	if (q->count == 0)
		return NULL;
	u = q->units[q->head];
	if (w->nthreads > 0) {
		pthread_mutex_lock(&w->lock);
		while (u->state != U_DONE) {
			w->awaited = u;
			pthread_cond_wait(&w->done, &w->lock);
		}
		w->awaited = NULL;
		/* The head leaves the queue under the lock: workers scan the queues for QUEUED units. */
		q->head = (q->head + 1) % DEPTH;
		q->count--;
		pthread_mutex_unlock(&w->lock);
		diag_sink_tell(&u->problems); /* what reading its pages met, in page order */
		if (u->npages == 0 && !u->text.oom) {
			u->state = U_FREE; /* the CPU's pages ended; the units queued after it end so too */
			return NULL;
		}
	} else {
		q->head = (q->head + 1) % DEPTH;
		q->count--;
	}
	q->replayed = u;
	return u;
}

/* ------------------------------------------------------------ lifetime */

static void free_unit(struct pw_unit *u)
{
	free(u->slab);
	free(u->page);
	free(u->size);
	free(u->file);
	free(u->file_offset);
	if (u->names && u->old_names) {
		age_names(u);
		age_names(u);
	}
	free(u->names);
	free(u->old_names);
	free(u->hdr);
	free(u->steps);
	free(u->span_end);
	free(u->printed);
	free(u->tally);
	free(u->errs);
	sb_free(&u->text);
	diag_sink_free(&u->problems);
	pw_count_free(u);
}

/* A unit of up to cap pages. */
static bool alloc_unit(struct pw_unit *u, int cpu, size_t cap)
{
	u->cpu = cpu; /* as the records' lines show it */
	u->cap = cap;
	u->page = calloc(cap, sizeof(*u->page));
	u->size = calloc(cap, sizeof(*u->size));
	u->file = calloc(cap, sizeof(*u->file));
	u->file_offset = calloc(cap, sizeof(*u->file_offset));
	u->hdr = calloc(cap, sizeof(*u->hdr));
	u->names = calloc(cap, sizeof(*u->names));
	u->old_names = calloc(cap, sizeof(*u->old_names));
	return u->page && u->size && u->file && u->file_offset && u->hdr && u->names &&
	       u->old_names;
}

static void stop_workers(struct pagework *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	w->nthreads = 0;
}

/* Units allocated for nstreams streams: a trace with no CPU to read still gets one stream's worth. */
static size_t unit_count(int nstreams)
{
	return (size_t)(nstreams > 0 ? nstreams : 1) * DEPTH;
}

void pagework_free(struct pagework *w)
{
	if (!w)
		return;
	stop_workers(w);
	for (size_t i = 0; w->units && i < unit_count(w->nstreams); i++)
		free_unit(&w->units[i]);
	free(w->units);
	free(w->queues);
	free(w->threads);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

int pagework_threads(uint64_t data_bytes)
{
	const char *env = getenv("TB_REPORT_THREADS");
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (env && *env)
		return atoi(env) > 0 ? (atoi(env) > 16 ? 16 : atoi(env)) : 0;
	if (online < 2 || data_bytes < PW_THREADED_FROM)
		return 0;
	return online > 4 ? 4 : (int)online;
}

int pagework_new(const struct pw_source *streams, int nstreams, struct tb_schema *s,
		 const struct tb_render_opts *opts, int threads, int render,
		 const _Atomic uint8_t *ready, struct pagework **out)
{
	struct pagework *w = calloc(1, sizeof(*w));
	size_t nunits = unit_count(nstreams);

	*out = NULL;
	if (!w)
		return -ENOMEM;
	*w = (struct pagework){.schema = s, .ready = ready, .render = ready || render == PW_COUNT ? render : PW_RENDER_NONE,
			       .nstreams = nstreams, .opts = opts ? *opts : (struct tb_render_opts){0}};
	/* Without workers: one page at a time, read when the replay needs it. */
	w->depth = threads > 0 ? DEPTH : 1;
	w->unit_pages = threads <= 0 ? 1 : w->render == PW_COUNT ? COUNT_UNIT_PAGES : UNIT_PAGES;
	w->warmup = threads > 0 && ready && (w->render == PW_RENDER_BODIES || w->render == PW_RENDER_LINES);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	w->queues = calloc(nunits / DEPTH, sizeof(*w->queues));
	w->units = calloc(nunits, sizeof(*w->units));
	w->threads = calloc(threads > 0 ? (size_t)threads : 1, sizeof(*w->threads));
	for (size_t i = 0; w->queues && i < (size_t)nstreams; i++) {
		w->queues[i].src = streams[i];
		w->queues[i].exhausted = !streams[i].capture;
	}
	for (size_t i = 0; w->units && i < nunits; i++)
		if (!alloc_unit(&w->units[i], nstreams > 0 ? streams[i / DEPTH].cpu : 0, w->unit_pages)) {
			free(w->queues);
			w->queues = NULL;
			break;
		}
	if (!w->queues || !w->units || !w->threads) {
		pagework_free(w);
		return -ENOMEM;
	}
	for (; w->nthreads < threads; w->nthreads++)
		if (pthread_create(&w->threads[w->nthreads], NULL, worker, w) != 0)
			break;
	if (threads > 0 && w->nthreads == 0) {
		pagework_free(w);
		return -EAGAIN;
	}
	*out = w;
	return 0;
}

void pagework_set_renderer(struct pagework *w, pw_render_fn *fn, void *ctx)
{
	w->render_fn = fn;
	w->render_ctx = ctx;
}

const struct pw_step *pw_cursor_next(struct pw_cursor *c)
{
	while (!c->done) {
		if (c->unit && c->step < c->unit->nsteps)
			return &c->unit->steps[c->step++];
		c->unit = pagework_next(c->work, c->stream);
		c->step = 0;
		if (!c->unit)
			c->done = true;
		else if (c->unit->text.oom)
			c->oom = true;
	}
	return NULL;
}

const struct pw_step *pw_cursor_next_record_slow(struct pw_cursor *c, pw_page_step_fn *page_step, void *ctx)
{
	const struct pw_step *st;

	while ((st = pw_cursor_next(c)) && st->kind != PW_RECORD)
		page_step(ctx, c->unit, st);
	return st;
}

void pw_record_at(const struct pw_cursor *c, const struct pw_step *st, struct tb_record *rec,
		  const char **file, uint64_t *file_offset)
{
	const struct pw_unit *u = c->unit;

	*rec = (struct tb_record){.data = u->page[st->page] + st->off, .len = st->len, .ts = st->ts};
	*file = u->file[st->page];
	*file_offset = u->file_offset[st->page] + st->off;
}
