/* SPDX-License-Identifier: MIT */
/*
 * sql_pipe.h - batches of rows handed from the thread that decodes a trace
 * to the one thread that stores them (export_sqlite.c: SQLite binds and
 * steps on one core while the other decodes, so a load's wall clock is the
 * larger of the two halves, not their sum).
 *
 * A batch is the rows of one table, as many as its INSERT takes (64): the
 * values copied in, text and blobs in the batch's own bytes, so nothing of
 * the record or the catalog is lent across threads.  The hand-off is
 * bounded and single-producer/single-consumer: at most SQL_PIPE_DEPTH
 * batches wait; a producer that finds them all waiting sleeps until the
 * consumer has taken half of them.  Batches go back to the producer when
 * stored, to be filled again: memory is the batches being filled (one a
 * table), those waiting, and the one being stored.
 *
 * A consumer's error (consume() < 0) stops the consumer: batches after it
 * are passed over, and the producer gets the error from its next
 * sql_pipe_send or sql_pipe_drain.  A producer's error ends the pipe with
 * sql_pipe_stop(p, true): what waits is dropped.
 *
 * Threads: sql_pipe_start, _batch, _send, _drain, _stop and _allocated are
 * the producer's (one thread); consume() runs on the pipe's thread.  A
 * batch belongs to whoever holds it: the producer from sql_pipe_batch to
 * sql_pipe_send, then the consumer until consume() returns.
 */
#ifndef TRACEBUF_EXPORT_SQL_PIPE_H
#define TRACEBUF_EXPORT_SQL_PIPE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sql_tables.h"

/*
 * Batches that may wait for the consumer: 128 of 64 rows are about 8 ms
 * of SQLite's work, more than a time slice the other thread loses to the
 * machine's other tasks; at 32 the threads slept 2.8x as often (5,800-6,500
 * voluntary switches against 2,000-2,300 loading 2.1 M events, load 10),
 * for 1.6 MiB of memory more at most.
 */
#define SQL_PIPE_DEPTH 128

enum sql_cell_kind { SQL_CELL_NULL, SQL_CELL_INT, SQL_CELL_TEXT, SQL_CELL_BLOB };

/* One value of a batch's row: an integer, NULL, or len bytes at offset `at` of the batch's bytes. */
struct sql_cell {
	uint8_t kind; /* enum sql_cell_kind */
	uint32_t len;
	union {
		int64_t i;
		size_t at;
	};
};

struct sql_batch {
	void *table;	 /* whose rows: the consumer's to read (the SQLite writer's sql_table) */
	size_t nrows;	 /* rows, of ncells / nrows values each: the producer's to count */
	struct sql_cell *cells;
	size_t ncells, cap_cells;
	uint8_t *bytes; /* the text and blobs of the cells, copied in */
	size_t nbytes, cap_bytes;
	struct sql_batch *next; /* the pipe's list of empty batches */
};

/* Stores batch b (its rows in order): 0, or a negative errno that stops the consumer. */
typedef int sql_pipe_fn(void *ctx, struct sql_batch *b);

struct sql_pipe;

/* The consumer's thread started: 0 or a negative errno (no thread then, *out NULL). */
int sql_pipe_start(struct sql_pipe **out, sql_pipe_fn *consume, void *ctx);

/*
 * An empty batch for table with room for ncells values (one stored, or a
 * new one): NULL when out of memory.
 */
struct sql_batch *sql_pipe_batch(struct sql_pipe *p, void *table, size_t ncells);

/*
 * b to the consumer (waiting while SQL_PIPE_DEPTH batches wait): 0, or
 * the consumer's error, b taken all the same.
 */
int sql_pipe_send(struct sql_pipe *p, struct sql_batch *b);

/*
 * Every batch sent is stored (or passed over after an error) and the
 * consumer waits: until the next sql_pipe_send the producer may use what
 * consume() uses (the pipe's lock orders both sides' accesses).  0 or the
 * consumer's error.
 */
int sql_pipe_drain(struct sql_pipe *p);

/*
 * The consumer stops, after storing what was sent (discard: dropping it),
 * its thread joined, the pipe and its batches freed (NULL: nothing).  The
 * consumer's error, or 0.
 */
int sql_pipe_stop(struct sql_pipe *p, bool discard);

/* Batches the pipe has made so far (the bound above, for tests). */
size_t sql_pipe_allocated(const struct sql_pipe *p);

/* A batch the producer still holds (never sent), freed. */
void sql_batch_free(struct sql_batch *b);

/* Whether b has room for bytes more text (growing it): false when out of memory. */
bool sql_batch_room(struct sql_batch *b, size_t bytes);

/* v as cell c of b (its text or blob copied into b's bytes): 0 or -ENOMEM. */
static inline int sql_cell_set(struct sql_batch *b, struct sql_cell *c, const struct sql_value *v)
{
	if (v->null) {
		*c = (struct sql_cell){.kind = SQL_CELL_NULL};
	} else if (v->type == SQL_INT) {
		*c = (struct sql_cell){.kind = SQL_CELL_INT, .i = v->i};
	} else {
		if (b->nbytes + v->len > b->cap_bytes && !sql_batch_room(b, v->len))
			return -ENOMEM;
		*c = (struct sql_cell){.kind = v->type == SQL_TEXT ? SQL_CELL_TEXT : SQL_CELL_BLOB, .len = v->len,
				       .at = b->nbytes};
		if (v->len)
			memcpy(b->bytes + b->nbytes, v->p, v->len);
		b->nbytes += v->len;
	}
	return 0;
}

/* v as b's next value (the cells were made room for by sql_pipe_batch): 0 or -ENOMEM. */
static inline int sql_batch_put(struct sql_batch *b, const struct sql_value *v)
{
	return sql_cell_set(b, &b->cells[b->ncells++], v);
}

#endif
