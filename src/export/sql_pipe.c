// SPDX-License-Identifier: MIT
/*
 * sql_pipe.c - the bounded hand-off of row batches from the decoding
 * thread to the storing one (sql_pipe.h says what and why).
 *
 * One mutex guards the queue, the list of empty batches and the flags;
 * every hand-off of a batch (send, take, give back) is a lock and an
 * unlock, so the writes that filled a batch happen before the reads that
 * store it, and the consumer's use of what it shares with the producer
 * (the database connection) happens before the producer's after a drain.
 * No other state is shared, and there are no atomics: the lock is taken a
 * few times a batch of 64 rows, never a row.
 *
 * Wake-ups cost a system call each, so both sides wait for more than one
 * step of the other: a sleeping consumer is woken when WAKE_AT batches
 * wait (or at a drain or the stop), a producer that found the queue full
 * when half of it is free again.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "sql_pipe.h"
#include "util/grow.h"

#define WAKE_AT 16 /* waiting batches that wake a sleeping consumer */

enum producer_wait { WAIT_NONE, WAIT_ROOM, WAIT_IDLE };

struct sql_pipe {
	pthread_mutex_t lock;
	pthread_cond_t work; /* the consumer's: batches to store, or stop */
	pthread_cond_t room; /* the producer's: half the queue free (WAIT_ROOM), or all stored (WAIT_IDLE) */
	/* under lock: */
	struct sql_batch *queue[SQL_PIPE_DEPTH]; /* queue[head..head+count) modulo the depth, in order */
	size_t head, count;
	struct sql_batch *empty; /* given back by the consumer */
	bool busy;		 /* the consumer is storing a batch it took */
	bool consumer_waits;
	enum producer_wait producer_waits;
	bool stop, discard;
	int err; /* the consumer's first error */
	/* the producer's alone: */
	struct sql_batch *spare; /* empty batches taken from `empty` in one go */
	size_t allocated;
	/* set before the thread starts: */
	sql_pipe_fn *consume;
	void *ctx;
	pthread_t thread;
};

/* Under lock: the producer woken when what it waits for is there. */
static void wake_producer(struct sql_pipe *p)
{
	if ((p->producer_waits == WAIT_ROOM && p->count <= SQL_PIPE_DEPTH / 2) ||
	    (p->producer_waits == WAIT_IDLE && !p->count && !p->busy))
		pthread_cond_signal(&p->room);
}

static void *consumer(void *arg)
{
	struct sql_pipe *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->count && !p->stop) {
			p->consumer_waits = true;
			pthread_cond_wait(&p->work, &p->lock);
		}
		p->consumer_waits = false;
		if (!p->count)
			break; /* stopped, everything stored */
		struct sql_batch *b = p->queue[p->head];
		p->head = (p->head + 1) % SQL_PIPE_DEPTH;
		p->count--;
		p->busy = true;
		bool skip = p->err || p->discard;
		pthread_mutex_unlock(&p->lock);
		int rc = skip ? 0 : p->consume(p->ctx, b);
		pthread_mutex_lock(&p->lock);
		if (rc < 0 && !p->err)
			p->err = rc;
		b->next = p->empty;
		p->empty = b;
		p->busy = false;
		wake_producer(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The pipe's own lock, conditions and memory, once no thread uses them. */
static void pipe_free(struct sql_pipe *p)
{
	pthread_cond_destroy(&p->room);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int sql_pipe_start(struct sql_pipe **out, sql_pipe_fn *consume, void *ctx)
{
	struct sql_pipe *p = calloc(1, sizeof(*p));
	sigset_t all, old;
	int rc;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->consume = consume;
	p->ctx = ctx;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->room, NULL);
	/* signals stay the producer's (the thread the command's handlers expect): the consumer blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->thread, NULL, consumer, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pipe_free(p);
		return -rc;
	}
	*out = p;
	return 0;
}

void sql_batch_free(struct sql_batch *b)
{
	if (!b)
		return;
	free(b->cells);
	free(b->bytes);
	free(b);
}

bool sql_batch_room(struct sql_batch *b, size_t bytes)
{
	uint8_t *v = tb__grow(b->bytes, &b->cap_bytes, b->nbytes + bytes, 1, 4096);

	if (!v)
		return false;
	b->bytes = v;
	return true;
}

struct sql_batch *sql_pipe_batch(struct sql_pipe *p, void *table, size_t ncells)
{
	struct sql_batch *b;
	struct sql_cell *cells;

	if (!p->spare) { /* what the consumer gave back, all at once: one lock for many batches */
		pthread_mutex_lock(&p->lock);
		p->spare = p->empty;
		p->empty = NULL;
		pthread_mutex_unlock(&p->lock);
	}
	if ((b = p->spare)) {
		p->spare = b->next;
	} else {
		if (!(b = calloc(1, sizeof(*b))))
			return NULL;
		p->allocated++;
	}
	if (!(cells = tb__grow(b->cells, &b->cap_cells, ncells, sizeof(*cells), 64))) {
		b->next = p->spare;
		p->spare = b;
		return NULL;
	}
	b->cells = cells;
	b->table = table;
	b->nrows = b->ncells = b->nbytes = 0;
	b->next = NULL;
	return b;
}

int sql_pipe_send(struct sql_pipe *p, struct sql_batch *b)
{
	int rc;

	pthread_mutex_lock(&p->lock);
	while (p->count == SQL_PIPE_DEPTH) {
		p->producer_waits = WAIT_ROOM;
		pthread_cond_signal(&p->work); /* (woken at WAKE_AT already: a second signal costs nothing) */
		pthread_cond_wait(&p->room, &p->lock);
	}
	p->producer_waits = WAIT_NONE;
	if ((rc = p->err)) { /* stopped: nothing more is stored */
		b->next = p->empty;
		p->empty = b;
	} else {
		p->queue[(p->head + p->count++) % SQL_PIPE_DEPTH] = b;
		if (p->consumer_waits && p->count >= WAKE_AT)
			pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int sql_pipe_drain(struct sql_pipe *p)
{
	int rc;

	pthread_mutex_lock(&p->lock);
	while (p->count || p->busy) {
		p->producer_waits = WAIT_IDLE;
		if (p->consumer_waits)
			pthread_cond_signal(&p->work);
		pthread_cond_wait(&p->room, &p->lock);
	}
	p->producer_waits = WAIT_NONE;
	rc = p->err;
	pthread_mutex_unlock(&p->lock);
	return rc;
}

static void free_list(struct sql_batch *b)
{
	while (b) {
		struct sql_batch *next = b->next;
		sql_batch_free(b);
		b = next;
	}
}

int sql_pipe_stop(struct sql_pipe *p, bool discard)
{
	int rc;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	p->discard = discard;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	/* the consumer took every batch sent before it ended: they are all in `empty` */
	rc = p->err;
	free_list(p->empty);
	free_list(p->spare);
	pipe_free(p);
	return rc;
}

size_t sql_pipe_allocated(const struct sql_pipe *p)
{
	return p->allocated;
}
