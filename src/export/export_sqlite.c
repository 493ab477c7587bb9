// SPDX-License-Identifier: MIT
/*
 * export_sqlite.c - a trace loaded into an SQLite database, as the tables
 * sql_tables.h describes (docs/sql.md): an events kind, so the load
 * streams - each row is copied into its table's batch of 64 rows (struct
 * table_writer), and a full batch is handed (sql_pipe.h) to the thread
 * that binds it to the table's prepared INSERT of 64 rows and steps it;
 * nothing of the trace is held beyond the merge's pages, a batch a table
 * and the SQL_PIPE_DEPTH batches handed over, and the memory is SQLite's
 * page cache (bounded below) plus the per-thread state of the derived
 * tables.
 *
 * Two threads, one connection: the storing thread ("the consumer") uses
 * the connection and the tables' statements while batches are handed;
 * the decoding thread (the driver's, "the producer") uses them only when
 * the pipe is drained (sql_pipe_drain: a new table made, the end of the
 * load), so the connection is opened without SQLite's mutexes.  Decoding
 * and storing then take about the same time (3,400 and 3,500 instructions
 * an event), and the wall clock is about the larger of the two.
 *
 * The output is opened as a database and appended to: a second trace gets
 * the next trace_id, and utids/upids after those already there.  The
 * caller that wants all-or-nothing (tracebuf sql) loads into a temporary
 * copy and renames it: this writer runs without a rollback journal, for
 * speed, so a load cut short leaves a file only fit to be removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "exporter.h"
#include "sql_pipe.h"
#include "sql_record.h"
#include "sql_tables.h"
#include "analyze/intern.h"
#include "tracebuf/report.h"
#include "util/grow.h"

/* Rows per transaction: large enough that commits cost nothing, small enough to bound a spill. */
#define ROWS_PER_COMMIT 1000000
/* SQLite's page cache, 16 MiB (a negative cache_size is KiB): the load's memory beside the database. */
#define CACHE_PRAGMA "PRAGMA cache_size = -16384"

struct kept_problem {
	char *file;
	uint64_t offset;
	char *reason;
};

struct sqlite_state {
	sqlite3 *db;
	struct sql_catalog cat;
	const char *host;
	struct sql_pipe *pipe; /* to the consumer, from the end of begin to finish */
	/* the consumer's (the producer reads `failure` once the pipe has said it failed): */
	uint64_t rows_since_commit;
	char *failure; /* "what: SQLite's message", said by the producer (one thread writes stderr) */
	bool failure_said;
	FILE *text;	/* --with-text: the report line is rendered here */
	char *text_buf;
	size_t text_len;
	bool ns_clock;
	struct kept_problem *problems;
	size_t nproblems, cap_problems;
	uint8_t id_seen[SQL_ID_SEEN_BYTES]; /* common_types met: the first record of each is checked for its format */
	bool events_view;	    /* events is a view of the event tables (no row of its own: a fifth less work) */
	/*
	 * The common columns of the event tables (pid, tid, comm, host,
	 * trace_id, and the record's common_flags and common_preempt_count)
	 * stored once in "common:rows" per distinct (pid, flags, preempt
	 * count, comm), an event's row holding its common_id: found by
	 * `commons` (its id + common_base), and first in common_hits, a cache
	 * by (pid, flags, count) that a record looks up and checks the name of.
	 */
	struct sql_table common_table;
	struct intern commons;
	struct common_hit *common_hits;
	int64_t common_base;
};

/* "TOOL: DB: what: SQLite's message"; -EIO. */
static int db_error(const struct export_run *x, sqlite3 *db, const char *what)
{
	return export_say(x, -EIO, x->o->out, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

static int exec(const struct export_run *x, sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	export_say(x, -EIO, x->o->out, "%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

/* "name" quoted for SQL, a quote inside doubled: keywords and odd names load as they are. */
static char *quoted(const char *name)
{
	size_t n = strlen(name), q = 0;

	for (size_t i = 0; i < n; i++)
		q += name[i] == '"';
	char *out = malloc(n + q + 3), *p = out;
	if (!out)
		return NULL;
	*p++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (name[i] == '"')
			*p++ = '"';
		*p++ = name[i];
	}
	*p++ = '"';
	*p = '\0';
	return out;
}

static const char *sqlite_type(enum sql_type t)
{
	return t == SQL_INT ? "INTEGER" : t == SQL_TEXT ? "TEXT" : "BLOB";
}

/* A growing string for the statements; NULL on overflow of memory (then freed). */
struct sql_text {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct sql_text *b, const char *s)
{
	size_t n = strlen(s);
	char *v;

	if (b->oom || !(v = tb__grow(b->s, &b->cap, b->len + n + 1, 1, 256))) {
		b->oom = true;
		return;
	}
	b->s = v;
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

static void put_name(struct sql_text *b, const char *name)
{
	char *q = quoted(name);

	if (!q)
		b->oom = true;
	else
		put(b, q);
	free(q);
}

/* The columns the table has in the database already (PRAGMA table_info), as a set by name. */
static bool has_column(sqlite3 *db, const char *qtable, const char *col)
{
	char sql[512];
	sqlite3_stmt *st;
	bool found = false;

	snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info(%s) WHERE name = ?1 COLLATE NOCASE", qtable);
	/* pragma_table_info takes the name as a string: the identifier's quotes turned to a literal's */
	for (char *p = sql; *p; p++)
		if (*p == '"')
			*p = '\'';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/*
 * Rows bound to one INSERT of many VALUES: a statement's own cost (its
 * cursor, transaction, halt and reset: 40% of a one-row INSERT of eight
 * integers, callgrind) is paid once for this many rows.  64 gives 2,745
 * instructions a row where 1 gives 4,736 and 16 gives 2,845.
 */
#define BATCH_ROWS 64

/* One entry of the common key cache (struct sqlite_state): the last key of a (pid, flags, preempt count). */
struct common_hit {
	int32_t pid;
	uint16_t flags; /* common_flags | common_preempt_count << 8 */
	bool used;
	uint32_t id;
};
#define COMMON_HITS 4096 /* a power of two */

/*
 * One parameter of the batch's INSERT as last bound (the consumer's).
 * SQLite keeps a binding across sqlite3_reset, so a value equal to the
 * one bound is not bound again (a trace's host, trace_id, a CPU, flags),
 * and text and blobs are bound SQLITE_STATIC from the slot's own buffer,
 * which SQLite reads when the statement steps: a new value of the same
 * length is only copied there.  Binding was a quarter of the load's
 * instructions (callgrind).
 */
struct slot {
	enum { SLOT_NONE, SLOT_NULL, SLOT_INT, SLOT_TEXT, SLOT_BLOB } kind;
	uint32_t len, cap;
	int64_t i;
	uint8_t *buf; /* never NULL once text or a blob was kept: a NULL pointer would bind NULL */
};

/* A column the database stores: its name and type, and which value of the row given it takes. */
struct stored_col {
	const char *name; /* lent by the catalog's table, or a literal */
	enum sql_type type;
	int from; /* the row's value of this index, or FROM_COMMON */
};
#define FROM_COMMON (-1) /* the record's common_id ("common:rows") */

/*
 * The writer's handle of a table (sql_table.engine): the table it stores
 * to and its columns (a table as the catalog has it, or the "NAME:rows"
 * under a view: stored_of), made while the pipe is drained and read by
 * both threads after; the rows being copied (the producer's batch); its
 * INSERTs and what is bound to them (the consumer's: slot r * ncols +
 * column is parameter r * ncols + column + 1 of the batch's INSERT).
 */
struct table_writer {
	char *name;
	struct stored_col *cols;
	bool flags_common; /* an event table's common_flags and common_preempt_count are "common:rows"' */
	size_t batch, ncols;
	struct sql_batch *fill; /* the producer's: rows not handed yet (NULL: none) */
	sqlite3_stmt *one;  /* one row: the rows of a batch handed before it is full */
	sqlite3_stmt *many; /* batch rows (NULL when batch is 1) */
	struct slot *slots; /* batch * ncols */
};

/* "INSERT INTO t (c1, ...) VALUES (?, ...)" with nrows rows of values. */
static void insert_text(struct sql_text *ins, const struct table_writer *w, size_t nrows)
{
	put(ins, "INSERT INTO ");
	put_name(ins, w->name);
	put(ins, " (");
	for (size_t i = 0; i < w->ncols; i++) {
		put(ins, i ? ", " : "");
		put_name(ins, w->cols[i].name);
	}
	put(ins, ") VALUES ");
	for (size_t r = 0; r < nrows; r++) {
		put(ins, r ? ", (" : "(");
		for (size_t i = 0; i < w->ncols; i++)
			put(ins, i ? ", ?" : "?");
		put(ins, ")");
	}
}

static int prepare(const struct export_run *x, sqlite3 *db, const struct table_writer *w, size_t nrows,
		   sqlite3_stmt **st)
{
	struct sql_text ins = {0};
	int rc = 0;

	insert_text(&ins, w, nrows);
	if (ins.oom)
		rc = export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	else if (sqlite3_prepare_v3(db, ins.s, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
		rc = db_error(x, db, w->name);
	free(ins.s);
	return rc;
}

static void writer_free(struct table_writer *w)
{
	if (!w)
		return;
	sql_batch_free(w->fill);
	sqlite3_finalize(w->one);
	sqlite3_finalize(w->many);
	for (size_t i = 0; w->slots && i < w->batch * w->ncols; i++)
		free(w->slots[i].buf);
	free(w->slots);
	free(w->cols);
	free(w->name);
	free(w);
}

/* The table's INSERTs, as many rows a batch as SQLite's limit of parameters lets. */
static int writer_prepare(const struct export_run *x, sqlite3 *db, struct table_writer *w)
{
	size_t max_params = (size_t)sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
	int rc;

	w->batch = w->ncols && max_params / w->ncols < BATCH_ROWS ? max_params / w->ncols : BATCH_ROWS;
	if (w->batch < 1)
		w->batch = 1;
	if (!(w->slots = calloc(w->batch * (w->ncols ? w->ncols : 1), sizeof(*w->slots))))
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	if ((rc = prepare(x, db, w, 1, &w->one)) < 0)
		return rc;
	return w->batch > 1 ? prepare(x, db, w, w->batch, &w->many) : 0;
}

/* "CREATE TABLE IF NOT EXISTS" (or, with alter, "ALTER TABLE ... ADD COLUMN") of column i on. */
static void create_text(struct sql_text *b, const struct table_writer *w, size_t i, bool alter)
{
	b->len = 0;
	put(b, alter ? "ALTER TABLE " : "CREATE TABLE IF NOT EXISTS ");
	put_name(b, w->name);
	put(b, alter ? " ADD COLUMN " : " (");
	for (size_t n = i; n < (alter ? i + 1 : w->ncols); n++) {
		put(b, n > i ? ", " : "");
		put_name(b, w->cols[n].name);
		put(b, " ");
		put(b, sqlite_type(w->cols[n].type));
	}
	put(b, alter ? "" : ")");
}

/*
 * CREATE TABLE IF NOT EXISTS of the stored table, then any column an
 * earlier trace's table lacks (a newer kernel's format adds fields), then
 * the table's INSERTs.
 */
static int stored_open(const struct export_run *x, sqlite3 *db, struct table_writer *w)
{
	struct sql_text b = {0};
	char *qt = quoted(w->name);
	int rc = qt ? 0 : -ENOMEM;

	create_text(&b, w, 0, false);
	rc = rc || b.oom ? export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM)) : exec(x, db, b.s);
	for (size_t i = 0; rc == 0 && i < w->ncols; i++) {
		if (has_column(db, qt, w->cols[i].name))
			continue;
		create_text(&b, w, i, true);
		rc = b.oom ? -ENOMEM : exec(x, db, b.s);
	}
	if (rc == 0)
		rc = writer_prepare(x, db, w);
	free(qt);
	free(b.s);
	return rc;
}

/*
 * How the database stores a table of the catalog: as it is (the fixed
 * tables but two), as "NAME:rows" under a view NAME (an event table:
 * ts, cpu, its common_id, its fields; the view joins "common:rows" for
 * pid, tid, comm, host and trace_id), or as "NAME:rows" under views made
 * once (sched_slice, thread_state and running: derived_views).
 */
enum stored_kind { STORED_AS_IS, STORED_EVENT, STORED_UNDER_VIEW };

/* "NAME:rows", taken in the catalog (NAME:rows_2, ... where an event's table has it). */
static char *stored_name(struct sql_catalog *c, const char *name)
{
	size_t len = strlen(name) + 32;
	char *out = malloc(len);
	int rc = 0;

	for (int n = 1; out && rc == 0; n++) {
		snprintf(out, len, n == 1 ? "%s:rows" : "%s:rows_%d", name, n);
		rc = sql_name_take(c, out);
	}
	if (rc < 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* The event table's column of the common key: "common_id", or with more '_' before it where a field has it. */
static const char *common_column(const struct sql_table *t)
{
	static const char name[] = "________common_id";
	const char *n = name + 8;

	for (size_t i = 0; i < t->ncols && n > name; i++)
		if (!strcasecmp(t->cols[i].name, n)) {
			n--;
			i = (size_t)-1; /* again from the start, with the new name */
		}
	return n;
}

/* Column c is the byte at offset of every record (common_flags at 2, common_preempt_count at 3). */
static bool header_byte(const struct sql_column *c, const char *name, uint32_t offset)
{
	return !strcmp(c->name, name) && c->src == SRC_INT && c->at.offset == offset && c->at.size == 1 &&
	       !c->at.is_signed;
}

/*
 * Whether t's common_flags and common_preempt_count can come from
 * "common:rows" (which keeps bytes 2 and 3 of the record): the format has
 * them there, and the stored table does not have them already (an earlier
 * load's format had them elsewhere).
 */
static bool flags_in_common(sqlite3 *db, const struct table_writer *w, const struct sql_table *t)
{
	bool flags = false, count = false;
	char *qt;

	for (size_t i = 0; i < t->ncols; i++) {
		flags = flags || header_byte(&t->cols[i], "common_flags", 2);
		count = count || header_byte(&t->cols[i], "common_preempt_count", 3);
	}
	if (!flags || !count || !(qt = quoted(w->name)))
		return false;
	flags = !has_column(db, qt, "common_flags");
	free(qt);
	return flags;
}

/*
 * The writer's stored table and columns for t stored as kind: 0 or
 * -ENOMEM.  An event table's columns not stored there are marked
 * elsewhere: sql_event_row does not make their values.
 */
static int stored_of(struct sqlite_state *s, struct table_writer *w, struct sql_table *t, enum stored_kind kind)
{
	if (!(w->cols = calloc(t->ncols + 1, sizeof(*w->cols))))
		return -ENOMEM;
	if (!(w->name = kind == STORED_AS_IS ? strdup(t->name) : stored_name(&s->cat, t->name)))
		return -ENOMEM;
	w->flags_common = kind == STORED_EVENT && flags_in_common(s->db, w, t);
	for (size_t i = 0; i < t->ncols; i++) {
		struct sql_column *c = &t->cols[i];
		if (kind == STORED_EVENT && i == 2)
			w->cols[w->ncols++] = (struct stored_col){common_column(t), SQL_INT, FROM_COMMON};
		/* what the view gives: the common columns but ts and cpu, the flags in common, io_wait (always NULL) */
		c->elsewhere = (kind == STORED_EVENT && c->src != SRC_TS && c->src != SRC_CPU && c->src < SRC_INT) ||
			       (w->flags_common && (header_byte(c, "common_flags", 2) ||
						    header_byte(c, "common_preempt_count", 3)));
		if (c->elsewhere)
			continue;
		if (kind == STORED_UNDER_VIEW && !strcmp(c->name, "io_wait"))
			continue;
		w->cols[w->ncols++] = (struct stored_col){c->name, c->type, (int)i};
	}
	return 0;
}

/*
 * The view of an event table: its stored columns but the key, with the
 * common columns of "common:rows" in their place; made again when a
 * later trace's format added columns (all the stored table has).
 */
static int event_view(const struct export_run *x, sqlite3 *db, const struct sql_table *t, const struct table_writer *w)
{
	struct sql_text b = {0};
	sqlite3_stmt *st;
	int rc;

	put(&b, "SELECT name FROM pragma_table_info(?1) WHERE cid > 2 ORDER BY cid");
	if (b.oom || sqlite3_prepare_v2(db, b.s, -1, &st, NULL) != SQLITE_OK) {
		free(b.s);
		return db_error(x, db, t->name);
	}
	b.len = 0;
	put(&b, "DROP VIEW IF EXISTS ");
	put_name(&b, t->name);
	put(&b, "; CREATE VIEW ");
	put_name(&b, t->name);
	put(&b, " AS SELECT e.ts, e.cpu, c.pid, c.pid AS tid, c.comm, c.host, c.trace_id");
	put(&b, w->flags_common ? ", c.common_flags, c.common_preempt_count" : "");
	sqlite3_bind_text(st, 1, w->name, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		put(&b, ", e.");
		put_name(&b, (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	put(&b, " FROM ");
	put_name(&b, w->name);
	put(&b, " e JOIN \"common:rows\" c ON c.common_id = e.");
	put_name(&b, w->cols[2].name);
	rc = b.oom ? export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM)) : exec(x, db, b.s);
	free(b.s);
	return rc;
}

static int drained(const struct export_run *x, struct sqlite_state *s);

/*
 * t's writer (t->engine) and its stored table, as kind says: made by the
 * producer with the consumer waiting (a new event type's first record).
 */
static int table_open(const struct export_run *x, struct sql_table *t, enum stored_kind kind)
{
	struct sqlite_state *s = x->state;
	struct table_writer *w;
	int rc = drained(x, s);

	if (rc < 0)
		return rc;
	if (!(w = calloc(1, sizeof(*w))) || (t->engine = w, stored_of(s, w, t, kind) < 0))
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	if ((rc = stored_open(x, s->db, w)) < 0)
		return rc;
	return kind == STORED_EVENT ? event_view(x, s->db, t, w) : 0;
}

/* ------------------------------------------------ the consumer: batches bound and stepped */

/* What failed on the consumer, kept for the producer to say ("what: message", or the message): rc. */
static int consumer_failed(struct sqlite_state *s, int rc, const char *what, const char *msg)
{
	size_t n = (what ? strlen(what) + 2 : 0) + strlen(msg) + 1;

	if (!s->failure && (s->failure = malloc(n)))
		snprintf(s->failure, n, "%s%s%s", what ? what : "", what ? ": " : "", msg);
	return rc;
}

/* The cell's bytes: a pointer for none too (SQLite binds a NULL pointer as NULL). */
static const void *cell_bytes(const struct sql_batch *b, const struct sql_cell *c)
{
	return c->len ? b->bytes + c->at : (const void *)"";
}

/* Cell c of b kept in its slot and bound to parameter n of st when it differs from what is bound: 0 or -ENOMEM. */
static int slot_set(sqlite3_stmt *st, int n, struct slot *sl, const struct sql_batch *b, const struct sql_cell *c)
{
	if (c->kind == SQL_CELL_NULL) {
		if (sl->kind != SLOT_NULL)
			sqlite3_bind_null(st, n);
		sl->kind = SLOT_NULL;
		return 0;
	}
	if (c->kind == SQL_CELL_INT) {
		if (sl->kind != SLOT_INT || sl->i != c->i)
			sqlite3_bind_int64(st, n, c->i);
		sl->kind = SLOT_INT;
		sl->i = c->i;
		return 0;
	}
	bool rebind = sl->kind != (c->kind == SQL_CELL_TEXT ? SLOT_TEXT : SLOT_BLOB) || sl->len != c->len;
	if (!sl->buf || c->len > sl->cap) {
		size_t cap = sl->cap;
		uint8_t *grown = tb__grow(sl->buf, &cap, c->len, 1, 32);
		if (!grown)
			return -ENOMEM;
		sl->buf = grown;
		sl->cap = (uint32_t)cap;
		rebind = true; /* the buffer may have moved */
	}
	if (c->len)
		memcpy(sl->buf, b->bytes + c->at, c->len);
	sl->kind = c->kind == SQL_CELL_TEXT ? SLOT_TEXT : SLOT_BLOB;
	sl->len = c->len;
	if (rebind && sl->kind == SLOT_TEXT)
		sqlite3_bind_text(st, n, (const char *)sl->buf, (int)sl->len, SQLITE_STATIC);
	else if (rebind)
		sqlite3_bind_blob(st, n, sl->buf, (int)sl->len, SQLITE_STATIC);
	return 0;
}

/* A row of b bound, as the batch holds it, to the one-row INSERT (read when it steps, before b goes back). */
static void bind_row(sqlite3_stmt *st, const struct sql_batch *b, const struct sql_cell *c, size_t ncols)
{
	for (size_t i = 0; i < ncols; i++) {
		int n = (int)i + 1;
		if (c[i].kind == SQL_CELL_INT)
			sqlite3_bind_int64(st, n, c[i].i);
		else if (c[i].kind == SQL_CELL_TEXT)
			sqlite3_bind_text(st, n, cell_bytes(b, &c[i]), (int)c[i].len, SQLITE_STATIC);
		else if (c[i].kind == SQL_CELL_BLOB)
			sqlite3_bind_blob(st, n, cell_bytes(b, &c[i]), (int)c[i].len, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, n);
	}
}

static int step(struct sqlite_state *s, const struct sql_table *t, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : consumer_failed(s, -EIO, t->name, sqlite3_errmsg(s->db));
}

/* exec() on the consumer: the message kept. */
static int consumer_exec(struct sqlite_state *s, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK
		     ? 0
		     : consumer_failed(s, -EIO, sql, msg ? msg : sqlite3_errmsg(s->db));

	sqlite3_free(msg);
	return rc;
}

/*
 * The pipe's consumer: batch b into its table - a full one by the INSERT
 * of its rows (binding what differs from what is bound), fewer (a table's
 * last rows) one by one - and a transaction committed every
 * ROWS_PER_COMMIT rows.
 */
static int store(void *ctx, struct sql_batch *b)
{
	struct sqlite_state *s = ctx;
	const struct sql_table *t = b->table;
	struct table_writer *w = t->engine;
	int rc = 0;

	if (b->nrows == w->batch) {
		sqlite3_stmt *st = w->many ? w->many : w->one;
		for (size_t k = 0; k < b->ncells; k++) {
			const struct sql_cell *c = &b->cells[k];
			struct slot *sl = &w->slots[k];
			if (c->kind == SQL_CELL_INT && sl->kind == SLOT_INT && sl->i == c->i)
				continue; /* the most common case, with no call: the value bound already */
			if (slot_set(st, (int)k + 1, sl, b, c) < 0)
				return consumer_failed(s, -ENOMEM, NULL, strerror(ENOMEM));
		}
		rc = step(s, t, st);
	} else {
		for (size_t r = 0; rc == 0 && r < b->nrows; r++) {
			bind_row(w->one, b, b->cells + r * w->ncols, w->ncols);
			rc = step(s, t, w->one);
		}
	}
	if (rc < 0 || (s->rows_since_commit += b->nrows) < ROWS_PER_COMMIT)
		return rc;
	s->rows_since_commit = 0;
	rc = consumer_exec(s, "COMMIT");
	return rc ? rc : consumer_exec(s, "BEGIN");
}

/* ------------------------------------------------ the producer: rows copied and handed */

/* The consumer's failure said, once (the producer may meet it at a later hand-off again): rc. */
static int consumer_said(const struct export_run *x, struct sqlite_state *s, int rc)
{
	if (!s->failure_said)
		export_say(x, rc, x->o->out, "%s", s->failure ? s->failure : strerror(-rc));
	s->failure_said = true;
	return rc;
}

/* w's rows to the consumer. */
static int hand(const struct export_run *x, struct sqlite_state *s, struct table_writer *w)
{
	struct sql_batch *b = w->fill;
	int rc;

	w->fill = NULL;
	rc = sql_pipe_send(s->pipe, b);
	return rc < 0 ? consumer_said(x, s, rc) : 0;
}

/*
 * Every row handed is stored and the consumer waits: the connection and
 * the statements are the producer's until its next hand-off.  No pipe
 * yet (begin): nothing was handed.
 */
static int drained(const struct export_run *x, struct sqlite_state *s)
{
	int rc = s->pipe ? sql_pipe_drain(s->pipe) : 0;

	return rc < 0 ? consumer_said(x, s, rc) : 0;
}

/* The table's rows not handed yet, handed (fewer than a batch: stored one by one). */
static int flush(const struct export_run *x, struct sqlite_state *s, struct sql_table *t)
{
	struct table_writer *w = t->engine;

	return w && w->fill && w->fill->nrows ? hand(x, s, w) : 0;
}

/* Row v of t (its catalog's columns) copied into its table's batch, handed when full; common: its key. */
static int insert_stored(struct export_run *x, struct sql_table *t, const struct sql_value *v, int64_t common)
{
	struct sqlite_state *s = x->state;
	struct table_writer *w = t->engine;
	struct sql_value key = sql_int(common);

	struct sql_batch *b = w->fill;

	if (!b && !(b = w->fill = sql_pipe_batch(s->pipe, t, w->batch * w->ncols)))
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	struct sql_cell *c = b->cells + b->ncells;
	for (size_t i = 0; i < w->ncols; i++, c++) {
		int from = w->cols[i].from;
		const struct sql_value *val = from == FROM_COMMON ? &key : &v[from];
		if (val->type == SQL_INT && !val->null) /* most values, inline */
			*c = (struct sql_cell){.kind = SQL_CELL_INT, .i = val->i};
		else if (sql_cell_set(b, c, val) < 0)
			return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	}
	b->ncells += w->ncols;
	return ++b->nrows == w->batch ? hand(x, s, w) : 0;
}

/* The catalog's row hook. */
static int insert_row(void *ctx, struct sql_table *t, const struct sql_value *v)
{
	return insert_stored(ctx, t, v, 0);
}

/* Every table's rows into the database, the consumer waiting after: before a query of them and at the end. */
static int flush_all(const struct export_run *x, struct sqlite_state *s)
{
	int rc = 0;

	for (int i = 0; rc == 0 && i < SQL_NFIXED; i++)
		rc = flush(x, s, &s->cat.fixed[i]);
	if (rc == 0)
		rc = flush(x, s, &s->cat.running);
	if (rc == 0)
		rc = flush(x, s, &s->common_table);
	for (size_t i = 0; rc == 0 && i < s->cat.nby_id; i++)
		if (s->cat.by_id[i])
			rc = flush(x, s, s->cat.by_id[i]);
	return rc ? rc : drained(x, s);
}

static int64_t max_plus_one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}


static int open_db(struct export_run *x, struct sqlite_state *s)
{
	static const char *const setup[] = {
	    /* a new file's pages of 64 KiB: a sixteenth of the page writes, half the kernel's time of a load */
	    "PRAGMA page_size = 65536",
	    "PRAGMA journal_mode = OFF", /* no rollback: the caller renames a finished file into place */
	    "PRAGMA synchronous = OFF",
	    "PRAGMA locking_mode = EXCLUSIVE",
	    CACHE_PRAGMA,
	    "PRAGMA temp_store = FILE",
	    "BEGIN",
	};
	int rc;

	/*
	 * The connection is this thread's alone: no mutex around each call
	 * (NOMUTEX), and no global memory statistics, whose mutex every
	 * malloc takes (a fifth of the load's time in serialized mode).  The
	 * latter is process-wide and only takes before SQLite's first use; a
	 * process that used SQLite already keeps its setting.
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(x->o->out, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return db_error(x, s->db, "cannot open the database");
	for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
		if ((rc = exec(x, s->db, setup[i])) < 0)
			return rc;
	return 0;
}

/* "table", "view" or "" (none): what the database has called name. */
static void object_type(sqlite3 *db, const char *name, char out[8])
{
	sqlite3_stmt *st;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db, "SELECT type FROM sqlite_master WHERE name = ?1", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(out, 8, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

/*
 * events is a table of its own only when the report's text is asked for
 * (or a database made so is appended to); else it is a view of the event
 * tables, made at the end (events_view_make), which saves a row per record.
 */
static int events_shape(struct export_run *x, struct sqlite_state *s)
{
	char type[8];

	object_type(s->db, "events", type);
	if (!strcmp(type, "view") && x->o->sql_text)
		return export_say(x, -EINVAL, x->o->out,
				  "its events is a view (loaded without --with-text): the text needs a new database");
	s->events_view = strcmp(type, "table") && !x->o->sql_text;
	return 0;
}

/*
 * sched_slice and thread_state as views: a slice that is its thread's
 * whole Running span is one row of "running:rows" (sql_tables.h:
 * running_in_slices), and gives both; the other slices and states are
 * rows of their own; the state a Running span followed (R after a wakeup,
 * R+ after a preemption, ...) is kept in the span's row (before_*), and
 * so is the length of the state after it (after_dur: from ts + dur, in
 * end_state, as the switch that ended the slice left the thread).  The
 * first SELECT names the view's columns and types.  Made again at each
 * load, so a database is read as this tracebuf stores it.
 */
static const char *const derived_views[] = {
    "DROP VIEW IF EXISTS sched_slice; CREATE VIEW sched_slice AS"
    " SELECT ts, dur, cpu, utid, end_state, priority, trace_id FROM \"sched_slice:rows\""
    " UNION ALL SELECT ts, dur, cpu, utid, end_state, priority, trace_id FROM \"running:rows\"",
    "DROP VIEW IF EXISTS thread_state; CREATE VIEW thread_state AS"
    " SELECT ts, dur, utid, state, cpu, waker_utid, NULL AS io_wait, trace_id FROM \"thread_state:rows\""
    " UNION ALL SELECT ts, dur, utid, 'Running', cpu, NULL, NULL, trace_id FROM \"running:rows\""
    " UNION ALL SELECT before_ts, ts - before_ts, utid, before_state, NULL, before_waker_utid, NULL, trace_id"
    " FROM \"running:rows\" WHERE before_ts IS NOT NULL"
    " UNION ALL SELECT ts + dur, after_dur, utid, end_state, NULL, NULL, NULL, trace_id"
    " FROM \"running:rows\" WHERE dur IS NOT NULL",
};

/* The pid, comm, host and trace_id of the event tables, stored once: "common:rows". */
static struct sql_column common_cols[] = {
    {.name = "common_id", .type = SQL_INT},	     {.name = "pid", .type = SQL_INT},
    {.name = "comm", .type = SQL_TEXT},		     {.name = "host", .type = SQL_TEXT},
    {.name = "trace_id", .type = SQL_INT},	     {.name = "common_flags", .type = SQL_INT},
    {.name = "common_preempt_count", .type = SQL_INT},
};

/* Every fixed table's stored table, the views over them, the common columns' table. */
static int tables_open(struct export_run *x, struct sqlite_state *s)
{
	char type[8];
	int rc = 0;

	object_type(s->db, "thread_state", type);
	if (!strcmp(type, "table"))
		return export_say(x, -EINVAL, x->o->out,
				  "its tables are an earlier tracebuf's (thread_state is not a view): load into a new database");
	for (int i = 0; rc == 0 && i < SQL_NFIXED; i++)
		if (i != SQL_EVENTS || !s->events_view)
			rc = table_open(x, &s->cat.fixed[i],
					i == SQL_SCHED_SLICE || i == SQL_THREAD_STATE ? STORED_UNDER_VIEW : STORED_AS_IS);
	if (rc == 0)
		rc = table_open(x, &s->cat.running, STORED_UNDER_VIEW);
	for (size_t i = 0; rc == 0 && i < sizeof(derived_views) / sizeof(derived_views[0]); i++)
		rc = exec(x, s->db, derived_views[i]);
	s->common_table = (struct sql_table){.name = "common:rows", .ncols = 7, .cols = common_cols};
	if (!(s->common_hits = calloc(COMMON_HITS, sizeof(*s->common_hits))))
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	if (rc == 0 && sql_name_take(&s->cat, s->common_table.name) < 0)
		rc = export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	if (rc == 0)
		rc = table_open(x, &s->common_table, STORED_AS_IS);
	s->common_base = max_plus_one(s->db, "SELECT COALESCE(MAX(common_id), -1) + 1 FROM \"common:rows\"");
	return rc;
}

static int sqlite_begin(struct export_run *x)
{
	struct sqlite_state *s = x->state;
	struct tb_capture *c = x->capture;
	int rc;

	if ((rc = open_db(x, s)) < 0)
		return rc;
	if (sql_catalog_init(&s->cat, x->o->sql_text, insert_row, x) < 0)
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	s->cat.running_in_slices = true;
	if ((rc = events_shape(x, s)) < 0 || (rc = tables_open(x, s)) < 0)
		return rc;
	s->host = x->o->host ? x->o->host : sql_default_host(x->o->in);
	s->cat.host = s->host;
	s->cat.host_len = (uint32_t)strlen(s->host);
	s->cat.trace_id = max_plus_one(s->db, "SELECT COALESCE(MAX(trace_id), 0) + 1 FROM trace");
	rc = sql_derived_begin(&s->cat, tb_capture_schema(c), tb_capture_cpu_slots(c),
			       max_plus_one(s->db, "SELECT COALESCE(MAX(utid), -1) + 1 FROM thread"),
			       max_plus_one(s->db, "SELECT COALESCE(MAX(upid), -1) + 1 FROM process"));
	if (rc < 0)
		return export_say(x, rc, x->o->out, "%s", strerror(-rc));
	s->ns_clock = tb_capture_clock_is_ns(c) || x->merge->mult;
	if (x->o->sql_text && !(s->text = open_memstream(&s->text_buf, &s->text_len)))
		return export_say(x, -errno, x->o->out, "%s", strerror(errno));
	/* the consumer from the first row on: table_open() before it was the producer's alone */
	if ((rc = sql_pipe_start(&s->pipe, store, s)) < 0)
		return export_say(x, rc, x->o->out, "%s", strerror(-rc));
	return 0;
}

/* The report's line for r (without its newline), or NULL when it has none. */
static const char *report_line(struct export_run *x, const struct merged_record *r, size_t *len)
{
	struct sqlite_state *s = x->state;
	struct tb_render_record ev = {.cpu = r->cpu, .ts = r->ts, .data = r->data, .len = r->len};
	struct tb_render_opts ro = {.ns_clock = s->ns_clock};
	struct tb_problem err = {0};

	rewind(s->text);
	if (tb_render_event(tb_capture_schema(x->capture), &ev, &ro, s->text, &err) < 0 || fflush(s->text))
		return NULL;
	*len = (size_t)ftell(s->text);
	while (*len && s->text_buf[*len - 1] == '\n')
		(*len)--;
	return s->text_buf;
}


static int events_row(struct export_run *x, const struct merged_record *r, const char *name)
{
	struct sqlite_state *s = x->state;
	struct sql_table *t = &s->cat.fixed[SQL_EVENTS];
	size_t tlen = 0;
	const char *text = x->o->sql_text ? report_line(x, r, &tlen) : NULL;
	struct sql_value v[7] = {sql_int((int64_t)r->ts), sql_int(r->cpu), sql_int(sql_record_pid(r)),
				 sql_text(name, name ? strlen(name) : 0), sql_text(s->host, s->cat.host_len),
				 sql_int(s->cat.trace_id), sql_text(text, tlen)};
	return insert_row(x, t, v);
}



/* A record of no format, where events is a view: a row of events_unknown. */
static int unknown_row(struct export_run *x, const struct merged_record *r)
{
	struct sqlite_state *s = x->state;
	struct sql_value v[6] = {sql_int((int64_t)r->ts), sql_int(r->cpu), sql_int(sql_record_pid(r)),
				 sql_int(r->id), sql_text(s->host, s->cat.host_len), sql_int(s->cat.trace_id)};

	return insert_row(x, &s->cat.fixed[SQL_EVENTS_UNKNOWN], v);
}

/* A new event table named in event_table (once: a later trace's table of the same name is known). */
static int registry_row(struct export_run *x, struct sql_table *t, const struct tb_format *f, const char *sys)
{
	struct sqlite_state *s = x->state;
	sqlite3_stmt *st;
	bool known = false;
	int rc = flush(x, s, &s->cat.fixed[SQL_EVENT_TABLE]);

	if (rc < 0 || (rc = drained(x, s)) < 0) /* the SELECT below is the producer's */
		return rc;
	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM event_table WHERE name = ?1", -1, &st, NULL) != SQLITE_OK)
		return db_error(x, s->db, "event_table");
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
	known = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (known)
		return 0;
	struct sql_value v[3] = {sql_text(t->name, strlen(t->name)), sql_text(f->name, strlen(f->name)),
				 sql_text(sys, sys ? strlen(sys) : 0)};
	return insert_row(x, &s->cat.fixed[SQL_EVENT_TABLE], v);
}

/*
 * The key "common:rows" keeps a record's common columns by: pid, whether
 * the record has common_flags and common_preempt_count (bytes 2 and 3 of
 * every record) and them, whether there is a name, the name.
 */
static uint32_t common_bytes(uint8_t *out, int32_t pid, const struct merged_record *r, const char *comm, size_t len)
{
	memcpy(out, &pid, 4);
	out[4] = r->len >= 4;
	out[5] = r->len >= 4 ? r->data[2] : 0;
	out[6] = r->len >= 4 ? r->data[3] : 0;
	out[7] = comm != NULL;
	if (len)
		memcpy(out + 8, comm, len);
	return (uint32_t)len + 8;
}

/* A new key's row of "common:rows". */
static int common_row(struct export_run *x, const uint8_t *key, int32_t pid, const char *comm, size_t len, int64_t id)
{
	struct sqlite_state *s = x->state;
	struct sql_value row[7] = {sql_int(s->common_base + id),
				   sql_int(pid),
				   sql_text(comm, len),
				   sql_text(s->host, s->cat.host_len),
				   sql_int(s->cat.trace_id),
				   key[4] ? sql_int(key[5]) : sql_null(SQL_INT),
				   key[4] ? sql_int(key[6]) : sql_null(SQL_INT)};

	return insert_row(x, &s->common_table, row);
}

/*
 * The record's common_id: the cache's entry of its (pid, flags, count)
 * when the name is the same (a lookup and a compare, per record), else
 * found or made by the whole key.  -1 when out of memory.
 */
static int64_t common_key(struct export_run *x, const struct merged_record *r, const char *comm, size_t len)
{
	struct sqlite_state *s = x->state;
	int32_t pid = (int32_t)sql_record_pid(r);
	uint16_t fp = r->len >= 4 ? (uint16_t)(r->data[2] | r->data[3] << 8) : 0;
	struct common_hit *h = &s->common_hits[((uint32_t)pid * 2654435761u ^ fp) & (COMMON_HITS - 1)];
	uint8_t small[64], *key = len + 8 <= sizeof(small) ? small : malloc(len + 8);
	uint32_t klen, id_len;
	bool added;
	int64_t id = -1;

	if (!key)
		return -1;
	klen = common_bytes(key, pid, r, comm, len);
	if (h->used && h->pid == pid && h->flags == fp) {
		const void *known = intern_key(&s->commons, h->id, &id_len);
		if (id_len == klen && !memcmp(known, key, klen))
			id = h->id;
	}
	if (id < 0 && (id = intern_add(&s->commons, key, klen, &added)) >= 0) {
		*h = (struct common_hit){.pid = pid, .flags = fp, .used = true, .id = (uint32_t)id};
		if (added && common_row(x, key, pid, comm, len, id) < 0)
			id = -1;
	}
	if (key != small)
		free(key);
	return id < 0 ? -1 : s->common_base + id;
}

static int sqlite_event(struct export_run *x, const struct merged_record *r)
{
	struct sqlite_state *s = x->state;
	struct tb_schema *schema = tb_capture_schema(x->capture);
	const char *sys = NULL;
	const struct tb_format *f = tb_schema_find_event(schema, r->id, &sys);
	int rc;

	sql_record_first_of_id(x->capture, s->id_seen, r, f);
	if (f && !sql_record_intact(x->capture, r, f, sys))
		return 0;
	if (f) {
		bool made;
		struct sql_table *t = sql_event_table(&s->cat, f, sys, &made);
		if (!t)
			return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
		if (made && (rc = table_open(x, t, STORED_EVENT)) < 0)
			return rc;
		if (made && (rc = registry_row(x, t, f, sys)) < 0)
			return rc;
		if (made)
			sql_derived_note(&s->cat, f, sys);
		struct sql_value v[t->ncols];
		size_t clen;
		const char *comm = tb_schema_comm(schema, (int)sql_record_pid(r), &clen);
		int64_t common = common_key(x, r, comm, clen);
		if (common < 0)
			return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
		sql_event_row(&s->cat, t, r, comm, clen, v);
		if ((rc = insert_stored(x, t, v, common)) < 0)
			return rc;
	}
	if (!s->events_view)
		rc = events_row(x, r, f ? f->name : NULL);
	else if (!f)
		rc = unknown_row(x, r);
	if (rc < 0)
		return rc;
	return sql_derived_feed(&s->cat, r);
}

/* A sub-buffer that follows lost events: a row of lost (count NULL when the kernel kept none). */
static int sqlite_loss(struct export_run *x, const struct merge_loss *l)
{
	struct sqlite_state *s = x->state;
	struct sql_value v[8] = {sql_int(l->cpu),
				 sql_int((int64_t)l->ts),
				 l->count_known ? sql_int((int64_t)l->count) : sql_null(SQL_INT),
				 sql_text(l->file, l->file ? strlen(l->file) : 0),
				 sql_int((int64_t)l->offset),
				 sql_text("lost events", 11),
				 sql_text(s->host, s->cat.host_len),
				 sql_int(s->cat.trace_id)};
	return insert_row(x, &s->cat.fixed[SQL_LOST], v);
}

/* Damage the capture reported (said already, by the driver): kept for rows of lost at the end. */
static int sqlite_problem(struct export_run *x, const struct tb_problem *d)
{
	struct sqlite_state *s = x->state;
	struct kept_problem *v;

	if (d->warning)
		return 0;
	if (!(v = tb__grow(s->problems, &s->cap_problems, s->nproblems + 1, sizeof(*v), 8)))
		return -ENOMEM;
	s->problems = v;
	v[s->nproblems] = (struct kept_problem){strdup(d->file ? d->file : ""), d->offset, strdup(d->reason)};
	if (!v[s->nproblems].file || !v[s->nproblems].reason)
		return -ENOMEM;
	s->nproblems++;
	return 0;
}

/* Damage as rows of lost: no CPU, time or count - what is known is where (file, byte) and why. */
static int problem_rows(struct export_run *x)
{
	struct sqlite_state *s = x->state;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < s->nproblems; i++) {
		const struct kept_problem *p = &s->problems[i];
		struct sql_value v[8] = {sql_null(SQL_INT),
					 sql_null(SQL_INT),
					 sql_null(SQL_INT),
					 sql_text(p->file, strlen(p->file)),
					 sql_int((int64_t)p->offset),
					 sql_text(p->reason, strlen(p->reason)),
					 sql_text(s->host, s->cat.host_len),
					 sql_int(s->cat.trace_id)};
		rc = insert_row(x, &s->cat.fixed[SQL_LOST], v);
	}
	return rc;
}

static int trace_row(struct export_run *x)
{
	struct sqlite_state *s = x->state;
	const char *clock = tb_capture_clock(x->capture);
	struct sql_value v[7] = {sql_int(s->cat.trace_id),
				 sql_text(s->host, s->cat.host_len),
				 sql_text(x->o->in, strlen(x->o->in)),
				 sql_text(clock, clock ? strlen(clock) : 0),
				 sql_int((int64_t)x->merge->records),
				 sql_int((int64_t)x->merge->lost_pages),
				 sql_int((int64_t)s->nproblems)};
	return insert_row(x, &s->cat.fixed[SQL_TRACE], v);
}

/* Terms of one view: SQLite parses at most 500 in a compound SELECT, a view of more is made of parts. */
#define VIEW_TERMS 200

/* One SELECT of the view: the table's records as events' columns. */
static void view_term(struct sql_text *b, const char *table, const char *event)
{
	char *lit = quoted(event);

	for (char *p = lit ? lit + 1 : NULL; p && p[1]; p++) /* a string literal: its quotes single */
		if (*p == '"')
			*p = '\'';
	if (lit) {
		lit[0] = lit[strlen(lit) - 1] = '\'';
		put(b, b->len ? " UNION ALL " : "");
		put(b, "SELECT ts, cpu, pid, ");
		put(b, lit);
		put(b, " AS name, host, trace_id FROM ");
		put_name(b, table);
	} else {
		b->oom = true;
	}
	free(lit);
}

static int view_create(struct export_run *x, struct sqlite_state *s, const char *name, struct sql_text *body)
{
	struct sql_text b = {0};
	int rc;

	put(&b, "CREATE VIEW ");
	put_name(&b, name);
	put(&b, " AS ");
	put(&b, body->s ? body->s : "SELECT NULL AS ts, NULL AS cpu, NULL AS pid, NULL AS name, NULL AS host, NULL AS trace_id WHERE 0");
	rc = b.oom || body->oom ? export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM)) : exec(x, s->db, b.s);
	free(b.s);
	return rc;
}

/*
 * events as a view: every event table of the database (event_table) and
 * events_unknown, UNION ALL, made again after each load (in parts of
 * VIEW_TERMS tables when there are more).  Its rows are the records: no
 * order of their own (ORDER BY ts).
 */
static int events_view_make(struct export_run *x, struct sqlite_state *s)
{
	struct sql_text all = {0}, part = {0};
	sqlite3_stmt *st = NULL;
	int rc = exec(x, s->db, "DROP VIEW IF EXISTS events"), nparts = 0, terms = 0;
	char name[48];

	for (int i = 1; rc == 0; i++) { /* the parts of the last view */
		snprintf(name, sizeof(name), "events_part_%d", i);
		char type[8];
		object_type(s->db, name, type);
		if (strcmp(type, "view"))
			break;
		snprintf(name, sizeof(name), "DROP VIEW events_part_%d", i);
		rc = exec(x, s->db, name);
	}
	if (rc == 0 && sqlite3_prepare_v2(s->db, "SELECT name, event FROM event_table ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
		rc = db_error(x, s->db, "event_table");
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		view_term(&part, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1));
		if (++terms < VIEW_TERMS)
			continue;
		snprintf(name, sizeof(name), "events_part_%d", ++nparts);
		rc = view_create(x, s, name, &part);
		part.len = 0;
		terms = 0;
	}
	sqlite3_finalize(st);
	put(&part, part.len ? " UNION ALL " : "");
	put(&part, "SELECT ts, cpu, pid, NULL AS name, host, trace_id FROM events_unknown");
	if (rc == 0 && nparts) {
		for (int i = 1; i <= nparts; i++) {
			snprintf(name, sizeof(name), "events_part_%d", i);
			put(&all, i > 1 ? " UNION ALL SELECT * FROM " : "SELECT * FROM ");
			put(&all, name);
		}
		put(&all, " UNION ALL ");
		put(&all, part.s);
		rc = view_create(x, s, "events", &all);
	} else if (rc == 0) {
		rc = view_create(x, s, "events", &part);
	}
	free(all.s);
	free(part.s);
	return rc;
}

static int sqlite_complete(struct export_run *x)
{
	struct sqlite_state *s = x->state;
	int rc = x->merge->fatal;

	if (rc == 0)
		rc = sql_derived_end(&s->cat, tb_capture_schema(x->capture));
	if (rc == 0)
		rc = problem_rows(x);
	if (rc == 0)
		rc = trace_row(x);
	if (rc == 0)
		rc = flush_all(x, s);
	if (rc == 0 && s->events_view)
		rc = events_view_make(x, s);
	if (rc == 0)
		rc = exec(x, s->db, "COMMIT");
	return rc;
}

static void close_statements(struct sql_catalog *c)
{
	for (int i = 0; i < SQL_NFIXED; i++)
		writer_free(c->fixed[i].engine);
	writer_free(c->running.engine);
	for (size_t i = 0; i < c->nby_id; i++)
		if (c->by_id[i])
			writer_free(c->by_id[i]->engine);
}

static int sqlite_finish(struct export_run *x)
{
	struct sqlite_state *s = x->state;
	int rc = 0;

	if (s->db && !x->failed)
		rc = sqlite_complete(x);
	/*
	 * complete() left nothing waiting; after a failure what waits is
	 * dropped (the database is not kept), and a failure of SQLite's the
	 * decoding side did not meet (it failed first) is said too.
	 */
	int stored = sql_pipe_stop(s->pipe, true);
	s->pipe = NULL;
	if (stored < 0)
		rc = rc ? rc : consumer_said(x, s, stored);
	close_statements(&s->cat);
	writer_free(s->common_table.engine);
	intern_free(&s->commons);
	free(s->common_hits);
	sql_catalog_free(&s->cat);
	if (s->db && sqlite3_close(s->db) != SQLITE_OK && rc == 0)
		rc = db_error(x, s->db, "close");
	if (s->text)
		fclose(s->text);
	free(s->text_buf);
	for (size_t i = 0; i < s->nproblems; i++) {
		free(s->problems[i].file);
		free(s->problems[i].reason);
	}
	free(s->problems);
	free(s->failure);
	return rc;
}

const struct tb_exporter_kind export_sqlite = {
    .name = "sqlite",
    .suffixes = ".db .sqlite .sqlite3",
    .help = "an SQLite database of the trace's tables (docs/sql.md; appended to when it exists)",
    .input = EXPORT_CAPTURE,
    .state_size = sizeof(struct sqlite_state),
    .begin = sqlite_begin,
    .event = sqlite_event,
    .loss = sqlite_loss,
    .problem = sqlite_problem,
    .finish = sqlite_finish,
};
