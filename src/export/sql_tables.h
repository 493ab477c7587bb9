/* SPDX-License-Identifier: MIT */
/*
 * sql_tables.h - which SQL tables a trace becomes, said once for every
 * database engine (docs/sql.md): the writers (export_sqlite.c today, a
 * ClickHouse RowBinary writer next) take the table descriptions and the
 * rows from here and only map the neutral column types to their own.
 *
 *  - fixed tables (enum sql_fixed): trace, events, lost, thread, process,
 *    sched_slice, thread_state, spurious_sched_wakeup, events_unknown and
 *    event_table (a writer may make events a view of the event tables and
 *    events_unknown, as the SQLite writer does unless the text is asked);
 *  - one table per event type, made when the first record of the type is
 *    met (a live instance's formats come on demand): the common columns
 *    first (ts, cpu, pid, tid, comm, host, trace_id, common_flags,
 *    common_preempt_count), then the format's fields typed by size, sign
 *    and kind (sql_event_table);
 *  - the derived tables' rows come from sql_derived_feed, which follows
 *    sched_switch / sched_waking as Perfetto's thread-state tracker does.
 *
 * Ownership: struct sql_catalog owns every table description and the
 * derived tables' per-thread state; sql_catalog_free() frees them.  Values
 * handed to a sink point into the record or the catalog and are lent for
 * the call.
 */
#ifndef TRACEBUF_EXPORT_SQL_TABLES_H
#define TRACEBUF_EXPORT_SQL_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/fields.h"
#include "analyze/intern.h"
#include "analyze/merge.h"
#include "tracebuf/schema.h"

/* The column types every engine can hold; a writer maps them (SQLite: INTEGER, TEXT, BLOB). */
enum sql_type {
	SQL_INT,  /* 64-bit signed; an unsigned 64-bit field keeps its bit pattern (docs/sql.md) */
	SQL_TEXT, /* UTF-8 or bytes, without a terminating NUL */
	SQL_BLOB,
};

/* Where an event table's column takes its value from. */
enum sql_source {
	SRC_TS, SRC_CPU, SRC_PID, SRC_TID, SRC_COMM, SRC_HOST, SRC_TRACE_ID, /* the common columns */
	SRC_INT,		/* an integer field of the record */
	SRC_STRING,		/* a fixed char array, up to its first NUL */
	SRC_BYTES,		/* a fixed array of anything else (or an odd size) */
	SRC_DYN_STRING,		/* __data_loc / __rel_loc char[] */
	SRC_DYN_BYTES,		/* __data_loc / __rel_loc of anything else */
	SRC_REST,		/* a trailing flexible array: the record's remaining bytes */
	SRC_REST_STRING,	/* a trailing char[]: up to its first NUL (ftrace's print) */
};

struct sql_column {
	char *name; /* as the table has it (a clash renamed: docs/sql.md) */
	enum sql_type type;
	bool nullable;
	/* event tables only: */
	bool elsewhere; /* the writer stores it another way: sql_event_row leaves its value unset */
	enum sql_source src;
	struct field_at at;
	enum tb_schema_field_kind kind;
};

struct sql_table {
	char *name;
	size_t ncols;
	struct sql_column *cols;
	void *engine; /* the writer's handle for the table (a prepared statement) */
};

/* One value of a row; text and blobs are lent (p, len). */
struct sql_value {
	enum sql_type type;
	bool null;
	int64_t i;
	const void *p;
	uint32_t len;
};

enum sql_fixed {
	SQL_TRACE,
	SQL_EVENTS,
	SQL_LOST,
	SQL_THREAD,
	SQL_PROCESS,
	SQL_SCHED_SLICE,
	SQL_THREAD_STATE,
	SQL_SPURIOUS_WAKEUP,
	SQL_EVENTS_UNKNOWN, /* records of an ID with no format, where events is a view of the event tables */
	SQL_EVENT_TABLE,    /* which table holds which event: name, event, system */
	SQL_NFIXED
};

/* Where a row goes: the writer's hook (0 or a negative errno, which stops the load). */
typedef int sql_row_fn(void *ctx, struct sql_table *t, const struct sql_value *v);

struct sql_thread; /* sql_tables.c: one thread's derived state */
struct sql_cpu;

struct sql_catalog {
	struct sql_table fixed[SQL_NFIXED];
	/*
	 * A writer that stores a thread's Running span and its CPU's slice
	 * once (SQLite: sched_slice and thread_state are views) sets
	 * running_in_slices before sql_derived_begin: a slice that is also its
	 * thread's whole Running span then goes to `running` (sched_slice's
	 * columns, then before_ts, before_state, before_waker_utid: the state
	 * the span followed, and after_dur: how long the state it left the
	 * thread in, end_state from ts + dur, lasted), written when that
	 * state ends, and none of those three states is a row of
	 * thread_state; other slices go to sched_slice and other states to
	 * thread_state, as without it.
	 */
	bool running_in_slices;
	struct sql_table running;
	bool with_text; /* events has the report's line as a last column */
	/* event tables by common_type (NULL: not met yet) */
	struct sql_table **by_id;
	size_t nby_id;
	/* table names in use, to rename a clash */
	struct intern names;
	/* this trace's identity, in every row */
	int64_t trace_id;
	const char *host;
	uint32_t host_len;
	/* derived tables */
	int64_t utid_base, upid_base;		 /* the first ids this trace hands out (ids before: earlier traces) */
	struct pidmap tids;			 /* tid -> thread index (dense, in the order met) */
	struct sql_thread *threads;
	size_t cap_threads;
	struct sql_cpu *cpus;
	size_t ncpus;
	uint32_t switch_id, waking_id;		 /* common_type of sched_switch / the wakeup followed; 0: none */
	bool wakeup_chosen;			 /* waking_id is final (sched_waking, or the trace's only wakeup) */
	struct field_at prev_pid, prev_state, prev_comm, next_pid, next_prio, next_comm, woken_pid;
	sql_row_fn *row;
	void *row_ctx;
	uint64_t spurious; /* wakeups of threads not blocked */
};

/*
 * The fixed tables' descriptions; with_text adds events.text.  0 or -ENOMEM.
 * row/row_ctx: where sql_derived_feed and sql_derived_end send rows.
 */
int sql_catalog_init(struct sql_catalog *c, bool with_text, sql_row_fn *row, void *row_ctx);
void sql_catalog_free(struct sql_catalog *c);

/*
 * Take a name for a table of the writer's own (stored tables under views):
 * 1 when it was free, 0 when an event's table or another has it, -ENOMEM.
 * Names are case-blind, as SQL's are.
 */
int sql_name_take(struct sql_catalog *c, const char *name);

/*
 * The table of event f (system sys), made the first time: NULL when out
 * of memory.  *made says it is new (the writer then creates it).
 */
struct sql_table *sql_event_table(struct sql_catalog *c, const struct tb_format *f, const char *sys,
				  bool *made);
/*
 * Row values of record r for t (t->ncols values into v); comm is the
 * writer's name of the record's pid (tb_schema_comm).  A field the record is
 * too short for is NULL.
 */
void sql_event_row(const struct sql_catalog *c, const struct sql_table *t, const struct merged_record *r,
		   const char *comm, size_t comm_len, struct sql_value *v);

/*
 * The derived tables: the trace's sched_switch and wakeup events (from s),
 * utid/upid numbering from the bases given.  Then every record to
 * sql_derived_feed, and sql_derived_end at the end of the trace (the open
 * slices and states, and thread/process rows).  0 or a negative errno.
 */
int sql_derived_begin(struct sql_catalog *c, const struct tb_schema *s, int ncpus, int64_t utid_base,
		      int64_t upid_base);
int sql_derived_feed(struct sql_catalog *c, const struct merged_record *r);
/* Each event's format when its first record is met (its table is made): what a live instance tells late. */
void sql_derived_note(struct sql_catalog *c, const struct tb_format *f, const char *sys);
int sql_derived_end(struct sql_catalog *c, const struct tb_schema *s);

/* A sql_value maker for the writers and the fixed tables' rows. */
static inline struct sql_value sql_int(int64_t i)
{
	return (struct sql_value){.type = SQL_INT, .i = i};
}
static inline struct sql_value sql_text(const char *p, size_t len)
{
	return (struct sql_value){.type = SQL_TEXT, .p = p, .len = (uint32_t)len, .null = p == NULL};
}
static inline struct sql_value sql_null(enum sql_type t)
{
	return (struct sql_value){.type = t, .null = true};
}

/* The kernel's letters for a sched_switch prev_state ("S", "D", "R+", "S|D"); buf of 32 bytes. */
const char *sql_state_letters(int64_t state, char buf[32]);

#endif
