// SPDX-License-Identifier: MIT
/*
 * test_sql_pipe - the hand-off of row batches between the thread that
 * decodes and the one that stores (src/export/sql_pipe.h), on its own,
 * with a consumer that checks each batch's rows (in order, values and
 * text as copied) instead of SQLite: a slow consumer (the producer waits
 * and the memory stays bounded), a slow producer (the consumer sleeps and
 * is woken), drains as barriers (the producer changes what the consumer
 * reads between them: TSan sees the order), an error injected on the
 * consumer (nothing stored after it, the producer told) and on the
 * producer (what waits dropped, the thread joined, nothing leaked).
 * In the TSan list: run there, races are failures.  t_sql.sh checks the
 * same through SQLite (a failing INSERT mid-load).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/sql_pipe.h"
#include "lib/tap.h"

#define ROWS 64
#define COLS 3

/* The consumer's view; read by the producer only after a drain or the stop. */
struct sink {
	uint64_t next;	    /* the sequence number the next row must have */
	size_t calls;	    /* batches given to consume() */
	size_t fail_at;	    /* the call that fails with -EIO (SIZE_MAX: none) */
	unsigned nap_us;    /* a slow consumer: sleeps this long each batch */
	int bad;	    /* rows not as sent */
	int generation;	    /* the producer's, changed between drains: every batch must carry the current one */
	int wrong_generation;
	int table;	    /* the batches' table (its address) */
};

static void nap(unsigned us)
{
	struct timespec ts = {0, (long)us * 1000};

	if (us)
		nanosleep(&ts, NULL);
}

/* A row's text: its number written out, longer every few rows (the bytes grow). */
static int row_text(uint64_t seq, char *out, size_t cap)
{
	return snprintf(out, cap, "row %" PRIu64 "%.*s", seq, (int)(seq % 7) * 5, "-----------------------------------");
}

static int check_batch(void *ctx, struct sql_batch *b)
{
	struct sink *k = ctx;
	char want[96];

	if (k->calls++ == k->fail_at)
		return -EIO;
	nap(k->nap_us);
	if (b->table != &k->table || b->ncells != b->nrows * COLS)
		k->bad++;
	for (size_t r = 0; r < b->nrows; r++, k->next++) {
		const struct sql_cell *c = &b->cells[r * COLS];
		int n = row_text(k->next, want, sizeof(want));
		if (c[0].kind != SQL_CELL_INT || c[0].i != (int64_t)k->next)
			k->bad++;
		if (c[1].kind != SQL_CELL_TEXT || c[1].len != (uint32_t)n || memcmp(b->bytes + c[1].at, want, (size_t)n))
			k->bad++;
		if (c[2].kind != SQL_CELL_INT || c[2].i != k->generation)
			k->wrong_generation++;
	}
	return 0;
}

/* A batch of nrows rows from *seq on, tagged with the producer's generation; NULL when out of memory. */
static struct sql_batch *make_batch(struct sql_pipe *p, struct sink *k, uint64_t *seq, size_t nrows, int generation)
{
	struct sql_batch *b = sql_pipe_batch(p, &k->table, nrows * COLS);
	char text[96];

	for (size_t r = 0; b && r < nrows; r++, (*seq)++) {
		int n = row_text(*seq, text, sizeof(text));
		struct sql_value v[COLS] = {sql_int((int64_t)*seq), sql_text(text, (size_t)n), sql_int(generation)};
		for (int i = 0; i < COLS; i++)
			if (sql_batch_put(b, &v[i]) < 0)
				return NULL;
		b->nrows++;
	}
	return b;
}

/* n batches of ROWS rows sent, the producer napping prod_nap_us between them: 0 or the first error. */
static int send_many(struct sql_pipe *p, struct sink *k, uint64_t *seq, size_t n, unsigned prod_nap_us,
		     size_t *sent)
{
	for (*sent = 0; *sent < n; (*sent)++) {
		struct sql_batch *b = make_batch(p, k, seq, ROWS, k->generation);
		if (!b)
			return -ENOMEM;
		int rc = sql_pipe_send(p, b);
		if (rc < 0)
			return rc;
		nap(prod_nap_us);
	}
	return 0;
}

/* A pipe to a new sink that naps nap_us a batch and fails at call fail_at, its start checked. */
static struct sql_pipe *start(struct sink *k, unsigned nap_us, size_t fail_at)
{
	struct sql_pipe *p = NULL;

	*k = (struct sink){.nap_us = nap_us, .fail_at = fail_at};
	if (!ok(sql_pipe_start(&p, check_batch, k) == 0, "the consumer starts"))
		exit(1);
	return p;
}

/* Every batch sent came to the consumer whole and in order (read after a drain or the stop). */
static void stored_all(const struct sink *k, size_t calls, uint64_t seq)
{
	is_int(k->calls, calls, "every batch stored (%zu)", calls);
	is_int(k->next, seq, "every row, in order (%" PRIu64 ")", seq);
	is_int(k->bad, 0, "values and text as copied");
}

static void slow_consumer(void)
{
	struct sink k;
	struct sql_pipe *p = start(&k, 50, SIZE_MAX);
	uint64_t seq = 0;
	size_t sent;

	ok(send_many(p, &k, &seq, 2000, 0, &sent) == 0, "2000 batches to a slow consumer");
	ok(sql_pipe_drain(p) == 0, "drained");
	stored_all(&k, 2000, seq);
	/* the producer's batch, those waiting, the consumer's: what the memory is bounded by */
	ok(sql_pipe_allocated(p) <= SQL_PIPE_DEPTH + 2, "batches made: %zu, at most the depth %d + 2",
	   sql_pipe_allocated(p), SQL_PIPE_DEPTH);
	is_int(sql_pipe_stop(p, false), 0, "stopped");
}

static void slow_producer(void)
{
	struct sink k;
	struct sql_pipe *p = start(&k, 0, SIZE_MAX);
	uint64_t seq = 0;
	size_t sent;

	ok(send_many(p, &k, &seq, 300, 100, &sent) == 0, "300 batches from a slow producer");
	/* a partial batch, as the end of a table hands it */
	struct sql_batch *b = make_batch(p, &k, &seq, 5, k.generation);
	ok(b && sql_pipe_send(p, b) == 0, "a batch of 5 rows");
	is_int(sql_pipe_stop(p, false), 0, "stop stores what was sent, then joins");
	stored_all(&k, 301, seq);
}

/* The producer changes what the consumer reads only after a drain: TSan sees every such pair ordered. */
static void drains(void)
{
	struct sink k;
	struct sql_pipe *p = start(&k, 0, SIZE_MAX);
	uint64_t seq = 0;
	size_t sent, want = 0;
	int rounds_ok = 0;

	for (int g = 0; g < 200; g++) {
		size_t n = (size_t)g % 11 + 1;
		if (send_many(p, &k, &seq, n, 0, &sent) < 0 || sql_pipe_drain(p) < 0)
			break;
		want += n;
		rounds_ok += k.calls == want && k.next == seq;
		k.generation++; /* the consumer waits: this write is ordered after its reads */
	}
	is_int(rounds_ok, 200, "after each drain everything sent is stored");
	is_int(k.wrong_generation, 0, "each batch saw the producer's state of its round");
	is_int(sql_pipe_stop(p, false), 0, "stopped");
}

static void consumer_fails(void)
{
	struct sink k;
	struct sql_pipe *p = start(&k, 0, 100);
	uint64_t seq = 0;
	size_t sent;

	int rc = send_many(p, &k, &seq, 1000, 0, &sent);
	is_int(rc, -EIO, "the consumer's error comes back to a send");
	/* the send of index k waits for room until batch 100 is taken, so it cannot get past the depth */
	ok(sent >= 100 && sent <= 100 + SQL_PIPE_DEPTH + 1, "at send %zu (the failing batch 100, depth %d)", sent,
	   SQL_PIPE_DEPTH);
	is_int(sql_pipe_drain(p), -EIO, "and to a drain");
	is_int(k.calls, 101, "nothing given to the consumer after its error");
	is_int(k.next, 100 * ROWS, "the rows before it stored");
	struct sql_batch *b = make_batch(p, &k, &seq, 3, 0);
	is_int(b ? sql_pipe_send(p, b) : -ENOMEM, -EIO, "a send after the error is refused, its batch taken");
	is_int(sql_pipe_stop(p, false), -EIO, "the stop says it too");
}

static void producer_fails(void)
{
	struct sink k;
	struct sql_pipe *p = start(&k, 200, SIZE_MAX);
	uint64_t seq = 0;
	size_t sent;

	ok(send_many(p, &k, &seq, 40, 0, &sent) == 0, "40 batches to a slow consumer");
	struct sql_batch *held = make_batch(p, &k, &seq, 10, 0); /* being filled when the producer fails */
	ok(held != NULL, "a batch being filled");
	is_int(sql_pipe_stop(p, true), 0, "the producer fails: the stop drops what waits and joins");
	ok(k.calls <= 40, "the consumer stored %zu of the 40 batches, none after the stop", k.calls);
	is_int(k.bad, 0, "what it stored was whole");
	sql_batch_free(held); /* the producer's own, freed by it (ASan: nothing leaks) */
	is_int(sql_pipe_stop(NULL, true), 0, "no pipe: nothing to stop");
}

static void big_values(void)
{
	struct sink k;
	struct sql_pipe *p = start(&k, 0, SIZE_MAX);
	size_t big = 1u << 20;
	uint8_t *blob = malloc(big);
	struct sql_batch *b;

	for (size_t i = 0; blob && i < big; i++)
		blob[i] = (uint8_t)(i * 131);
	b = sql_pipe_batch(p, &k.table, 4);
	struct sql_value v[4] = {sql_text("", 0), {.type = SQL_BLOB, .p = blob, .len = (uint32_t)big}, sql_null(SQL_INT),
				 sql_text("x", 1)};
	int rc = 0;
	for (int i = 0; b && blob && i < 4; i++)
		rc |= sql_batch_put(b, &v[i]);
	ok(b && blob && rc == 0, "a MiB blob beside empty text, NULL and a letter");
	ok(b && b->cells[0].kind == SQL_CELL_TEXT && b->cells[0].len == 0, "empty text is text, not NULL");
	ok(b && b->cells[1].len == big && !memcmp(b->bytes + b->cells[1].at, blob, big), "the blob copied whole");
	ok(b && b->cells[2].kind == SQL_CELL_NULL, "NULL");
	ok(b && b->cells[3].len == 1 && b->bytes[b->cells[3].at] == 'x', "the letter after it");
	sql_batch_free(b);
	free(blob);
	is_int(sql_pipe_stop(p, false), 0, "stopped");
}

int main(void)
{
	slow_consumer();
	slow_producer();
	drains();
	consumer_fails();
	producer_fails();
	big_values();
	return done_testing();
}
