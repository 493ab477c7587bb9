// SPDX-License-Identifier: MIT
/*
 * batch.c - records rendered by worker threads, written out in order.
 *
 * A fixed ring of batches.  The merging thread fills the batch at fill,
 * marks it READY and moves on; a worker takes the oldest READY batch,
 * renders it (WORKING) and marks it DONE; the merging thread writes out
 * the batch at head once it is DONE and makes it FREE again.  So text
 * leaves in the order batches were filled, whichever worker finished
 * first.  One mutex guards every state change (a batch is a few thousand
 * records: the lock is taken a few times per batch, never per record); a
 * batch's contents belong to whoever holds it in its state (the merging
 * thread in FREE and DONE, a worker in WORKING), and the mutex hand-over
 * orders those accesses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "render.h"
#include "strbuf.h"

#define BATCH_RECORDS 4096
#define BATCH_ARENA (256 * 1024)
#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

enum batch_state { B_FREE, B_READY, B_WORKING, B_DONE };

struct item {
	uint64_t ts;
	const char *file;
	uint64_t file_offset;
	size_t off, len;   /* payload or text in the arena */
	size_t text_end;   /* out.len once this item is rendered */
	int cpu;
	int rc;
	uint32_t err;      /* index into errs when rc is -EINVAL */
	enum printer_kind used;
	bool is_text;
};

struct batch {
	enum batch_state state;
	struct item *items;
	size_t nitems;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct tb_strbuf out;
	struct tb_diag *errs;
	size_t nerrs, errs_cap;
};

struct batcher {
	struct tb_schema *schema;
	struct tb_render_opts opts;
	struct batch_sink sink;
	pthread_mutex_t lock;
	pthread_cond_t ready; /* a batch became READY, or stop */
	pthread_cond_t done;  /* a batch became DONE */
	bool stop;
	int error;            /* first write error: nothing more is written */
	struct batch *ring;
	size_t nring, head, fill; /* head: oldest not written; fill: being filled */
	pthread_t *threads;
	int nthreads;
};

/* ------------------------------------------------------------ rendering */

static int keep_error(struct batch *b, const struct tb_diag *err)
{
	if (b->nerrs == b->errs_cap) {
		size_t cap = b->errs_cap ? 2 * b->errs_cap : 16;
		struct tb_diag *grown = realloc(b->errs, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		b->errs = grown;
		b->errs_cap = cap;
	}
	b->errs[b->nerrs] = *err;
	return (int)b->nerrs++;
}

static void render_batch(struct batcher *bt, struct batch *b)
{
	struct tb_diag err;

	sb_reset(&b->out);
	b->nerrs = 0;
	for (size_t i = 0; i < b->nitems; i++) {
		struct item *it = &b->items[i];
		if (it->is_text) {
			sb_put(&b->out, b->arena + it->off, it->len);
		} else {
			struct tb_event_ref ev = {it->cpu, it->ts, b->arena + it->off, (uint32_t)it->len};
			it->rc = render_event(bt->schema, &ev, &bt->opts, &b->out, &err, &it->used);
			if (it->rc == -EINVAL) {
				int k = keep_error(b, &err);
				if (k < 0)
					it->rc = k;
				else
					it->err = (uint32_t)k;
			}
		}
		it->text_end = b->out.len;
	}
}

static void *worker(void *arg)
{
	struct batcher *bt = arg;

	pthread_mutex_lock(&bt->lock);
	for (;;) {
		struct batch *b = NULL;
		for (size_t k = 0; k < bt->nring && !b; k++) {
			struct batch *c = &bt->ring[(bt->head + k) % bt->nring];
			if (c->state == B_READY)
				b = c;
		}
		if (!b) {
			if (bt->stop)
				break;
			pthread_cond_wait(&bt->ready, &bt->lock);
			continue;
		}
		b->state = B_WORKING;
		pthread_mutex_unlock(&bt->lock);
		render_batch(bt, b);
		pthread_mutex_lock(&bt->lock);
		b->state = B_DONE;
		pthread_cond_broadcast(&bt->done);
	}
	pthread_mutex_unlock(&bt->lock);
	return NULL;
}

/* ---------------------------------------------------------- writing out */

/* Write the head batch (once DONE) and account for its records; it becomes FREE. */
static void write_head(struct batcher *bt)
{
	struct batch *b = &bt->ring[bt->head];

	pthread_mutex_lock(&bt->lock);
	while (b->state != B_DONE)
		pthread_cond_wait(&bt->done, &bt->lock);
	pthread_mutex_unlock(&bt->lock);
	if (!bt->error && b->out.oom)
		bt->error = -ENOMEM;
	if (!bt->error && b->out.len)
		bt->error = bt->sink.write(bt->sink.ctx, b->out.buf, b->out.len);
	for (size_t i = 0; i < b->nitems && !bt->error; i++) {
		const struct item *it = &b->items[i];
		struct batch_result r = {it->rc, it->cpu, 0, it->file, it->file_offset,
					 it->rc == -EINVAL ? &b->errs[it->err] : NULL, it->used};
		if (it->is_text)
			continue;
		if (it->len >= 2)
			memcpy(&r.id, b->arena + it->off, 2);
		bt->sink.done(bt->sink.ctx, &r);
		if (it->rc < 0 && it->rc != -EINVAL)
			bt->error = it->rc;
	}
	b->nitems = 0;
	b->arena_len = 0;
	pthread_mutex_lock(&bt->lock); /* workers look for READY batches from head */
	b->state = B_FREE;
	bt->head = (bt->head + 1) % bt->nring;
	pthread_mutex_unlock(&bt->lock);
}

/* Hand the batch being filled to the workers and take the next free one. */
static void submit(struct batcher *bt)
{
	struct batch *b = &bt->ring[bt->fill];

	if (b->nitems == 0)
		return;
	pthread_mutex_lock(&bt->lock);
	b->state = B_READY;
	pthread_cond_signal(&bt->ready);
	pthread_mutex_unlock(&bt->lock);
	bt->fill = (bt->fill + 1) % bt->nring;
	if (bt->fill == bt->head)
		write_head(bt); /* every batch in flight: the oldest must go first */
}

/* Room in the batch being filled for one more item of len bytes; NULL if none can be had. */
static struct item *new_item(struct batcher *bt, size_t len)
{
	struct batch *b = &bt->ring[bt->fill];

	if (b->nitems == BATCH_RECORDS || (b->arena_len + len > b->arena_cap && b->nitems)) {
		submit(bt);
		b = &bt->ring[bt->fill];
	}
	if (b->arena_len + len > b->arena_cap) {
		size_t cap = len > BATCH_ARENA ? len : BATCH_ARENA;
		uint8_t *arena = realloc(b->arena, cap);
		if (!arena)
			return NULL;
		b->arena = arena;
		b->arena_cap = cap;
	}
	b->items[b->nitems].off = b->arena_len;
	b->items[b->nitems].len = len;
	b->arena_len += ALIGN8(len);
	return &b->items[b->nitems++];
}

int batcher_add_event(struct batcher *bt, const struct tb_event_ref *ev, const char *file,
		      uint64_t file_offset)
{
	struct item *it = bt->error ? NULL : new_item(bt, ev->len);

	if (!it)
		return bt->error ? bt->error : -ENOMEM;
	memcpy(bt->ring[bt->fill].arena + it->off, ev->data, ev->len);
	it->ts = ev->ts;
	it->cpu = ev->cpu;
	it->file = file;
	it->file_offset = file_offset;
	it->is_text = false;
	it->rc = 0;
	return 0;
}

int batcher_add_text(struct batcher *bt, const char *text, size_t len)
{
	struct item *it = bt->error ? NULL : new_item(bt, len);

	if (!it)
		return bt->error ? bt->error : -ENOMEM;
	memcpy(bt->ring[bt->fill].arena + it->off, text, len);
	it->is_text = true;
	return 0;
}

/* ------------------------------------------------------------ lifetime */

static void free_ring(struct batcher *bt)
{
	for (size_t i = 0; bt->ring && i < bt->nring; i++) {
		free(bt->ring[i].items);
		free(bt->ring[i].arena);
		free(bt->ring[i].errs);
		sb_free(&bt->ring[i].out);
	}
	free(bt->ring);
	free(bt->threads);
	pthread_cond_destroy(&bt->ready);
	pthread_cond_destroy(&bt->done);
	pthread_mutex_destroy(&bt->lock);
	free(bt);
}

static void stop_workers(struct batcher *bt)
{
	pthread_mutex_lock(&bt->lock);
	bt->stop = true;
	pthread_cond_broadcast(&bt->ready);
	pthread_mutex_unlock(&bt->lock);
	for (int i = 0; i < bt->nthreads; i++)
		pthread_join(bt->threads[i], NULL);
}

int batcher_new(struct tb_schema *s, const struct tb_render_opts *opts, int workers,
		const struct batch_sink *sink, struct batcher **out)
{
	struct batcher *bt = calloc(1, sizeof(*bt));

	*out = NULL;
	if (!bt)
		return -ENOMEM;
	bt->schema = s;
	bt->opts = opts ? *opts : (struct tb_render_opts){0};
	bt->sink = *sink;
	pthread_mutex_init(&bt->lock, NULL);
	pthread_cond_init(&bt->ready, NULL);
	pthread_cond_init(&bt->done, NULL);
	bt->nring = 2 * (size_t)workers + 2;
	bt->ring = calloc(bt->nring, sizeof(*bt->ring));
	bt->threads = calloc((size_t)workers, sizeof(*bt->threads));
	for (size_t i = 0; bt->ring && i < bt->nring; i++)
		if (!(bt->ring[i].items = malloc(BATCH_RECORDS * sizeof(struct item))))
			break;
	for (size_t i = 0; bt->ring && i < bt->nring; i++)
		if (!bt->ring[i].items || !bt->threads) {
			free_ring(bt);
			return -ENOMEM;
		}
	for (; bt->nthreads < workers; bt->nthreads++)
		if (pthread_create(&bt->threads[bt->nthreads], NULL, worker, bt) != 0)
			break;
	if (bt->nthreads == 0) {
		free_ring(bt);
		return -EAGAIN;
	}
	*out = bt;
	return 0;
}

int batcher_finish(struct batcher *bt)
{
	int rc;

	submit(bt);
	while (bt->head != bt->fill)
		write_head(bt);
	stop_workers(bt);
	rc = bt->error;
	free_ring(bt);
	return rc;
}
