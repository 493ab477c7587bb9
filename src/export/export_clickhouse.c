// SPDX-License-Identifier: MIT
/*
 * export_clickhouse.c - a trace as ClickHouse tables (docs/sql.md), the
 * tables and typed columns of sql_tables.h with the types mapped for
 * ClickHouse 18.16 (Debian 12's), in ClickHouse's RowBinary format.
 *
 * The kind writes a directory: schema.sql (a CREATE TABLE a line, "DB."
 * for the database), tables.tsv (file, table, registry|trace) and one
 * tN.bin of RowBinary rows per table, for `clickhouse-client --query
 * 'INSERT INTO t FORMAT RowBinary' < tN.bin`.  With opts->clickhouse
 * (convert --clickhouse HOST:PORT) the directory is a scratch one and
 * finish loads it over the server's HTTP interface (clickhouse_http.h),
 * then removes it.
 *
 * Idempotent and atomic per trace: every table is partitioned by
 * trace_id, and a trace's id is a hash of its host and its file's real
 * path, so loading it again makes the same partition.  The rows go first
 * into a staging database of the load's own (D__load_ID, same tables);
 * only when every table's rows are in does the loader run `ALTER TABLE
 * D.t REPLACE PARTITION ID FROM D__load_ID.t` table by table, the `trace`
 * table last: a loader that dies before that leaves nothing in D, and a
 * second load replaces the first's partition instead of adding to it.
 * (The swap is one ALTER per table, metadata only; a kill inside it
 * leaves the trace's `trace` row absent, and a re-run completes it.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clickhouse_http.h"
#include "exporter.h"
#include "sql_record.h"
#include "sql_tables.h"
#include "util/grow.h"

/* stdio buffer of each table's file: few syscalls per MiB, a few tables open at once. */
#define TABLE_BUF_BYTES (256 * 1024)
/* A trace's utids are trace_id << UTID_SHIFT + index: unique across traces without asking the server. */
#define UTID_SHIFT 24

/*
 * A table's file and its row encoding, worked out once at the table's
 * open (a per-value lookup by name cost a tenth of the write): per column
 * whether a NULL flag byte leads the value, and an integer's width.
 */
struct ch_table {
	FILE *f;
	uint8_t *buf; /* rows encoded here, written out in TABLE_BUF_BYTES pieces */
	size_t len;
	bool *nullable;
	uint8_t *width; /* an integer column's bytes; 0: text or array (length-prefixed) */
	bool *is_time;	/* a time stamp on the trace's clock: clock_offset is added */
	int64_t clock_offset;
};

struct ch_problem {
	char *file;
	uint64_t offset;
	char *reason;
};

struct ch_state {
	struct sql_catalog cat;
	const char *host;
	char *dir; /* the output directory (a scratch one when loading) */
	FILE *schema;
	FILE *names;
	int ntables;
	const char *database;
	const char *cluster; /* NULL, or the cluster D_all's Distributed tables spread over */
	struct ch_problem *problems;
	size_t nproblems, cap_problems;
	uint8_t id_seen[SQL_ID_SEEN_BYTES];
};

/* ---- types ---------------------------------------------------------- */

static bool has_column(const struct sql_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return true;
	return false;
}

/* A table of no trace (event_table, which table holds which event): deduplicated, not partitioned. */
static bool is_registry(const struct sql_table *t)
{
	return !has_column(t, "trace_id");
}

/*
 * host and trace_id are in every row this writer makes; ts too, but for
 * damage rows of lost.  By name: a field called so is renamed field_NAME.
 * A registry's columns are its sorting key, which ClickHouse wants not
 * Nullable: a NULL there is written as "".
 */
static bool never_null(const struct sql_table *t, const struct sql_column *c)
{
	return is_registry(t) || !strcmp(c->name, "trace_id") || !strcmp(c->name, "host") ||
	       (!strcmp(c->name, "ts") && strcmp(t->name, "lost"));
}

static bool is_event_column(const struct sql_column *c)
{
	return c->src == SRC_INT && c->at.size;
}

/* ClickHouse's type of column c, written into out; "Nullable(...)" where a NULL can come. */
static void ch_type(const struct sql_table *t, const struct sql_column *c, char out[64])
{
	char base[40];
	bool nullable = !never_null(t, c);

	if (c->type == SQL_INT && is_event_column(c))
		snprintf(base, sizeof(base), "%sInt%u", c->at.is_signed ? "" : "U", c->at.size * 8);
	else if (c->type == SQL_INT)
		snprintf(base, sizeof(base), "%s", !strcmp(c->name, "ts") ? "UInt64" : "Int64");
	else if (c->type == SQL_BLOB)
		snprintf(base, sizeof(base), "Array(UInt8)"), nullable = false; /* no Nullable(Array): empty */
	else if (!nullable && (!strcmp(c->name, "comm") || !strcmp(c->name, "host")))
		snprintf(base, sizeof(base), "LowCardinality(String)");
	else
		snprintf(base, sizeof(base), "String");
	snprintf(out, 64, nullable ? "Nullable(%s)" : "%s", base);
}

/*
 * A time stamp of the trace's clock (not a duration, not an event's own
 * field: one called ts is field_ts): what --clock-offset moves.
 */
static bool is_time_column(const struct sql_column *c)
{
	return c->type == SQL_INT && !is_event_column(c) &&
	       (!strcmp(c->name, "ts") || !strcmp(c->name, "start_ts") || !strcmp(c->name, "end_ts"));
}

/* Bytes of the integer in RowBinary: the field's size for an event field, else 8. */
static unsigned int_bytes(const struct sql_column *c)
{
	return is_event_column(c) ? c->at.size : 8;
}

/* ---- RowBinary -------------------------------------------------------- */

/* A row's values take at most this much beside its texts and arrays: flag and 8 bytes, or a length. */
#define MAX_FIXED_PER_VALUE 11

static int flush_rows(struct ch_table *ct)
{
	if (ct->len && fwrite(ct->buf, 1, ct->len, ct->f) != ct->len)
		return -EIO;
	ct->len = 0;
	return 0;
}

/* Room for n more bytes (a value longer than the buffer goes straight to the file). */
static int room(struct ch_table *ct, size_t n)
{
	return ct->len + n <= TABLE_BUF_BYTES ? 0 : flush_rows(ct);
}

static void put_varuint(struct ch_table *ct, uint64_t v)
{
	while (v >= 0x80) {
		ct->buf[ct->len++] = (uint8_t)((v & 0x7f) | 0x80);
		v >>= 7;
	}
	ct->buf[ct->len++] = (uint8_t)v;
}

/* A time stamp moved by the clock offset; -ERANGE when that takes it below 0 (ts is unsigned here). */
static int shift_time(const struct ch_table *ct, uint64_t *u)
{
	if (ct->clock_offset < 0 && *u < (uint64_t)-ct->clock_offset)
		return -ERANGE;
	*u += (uint64_t)ct->clock_offset;
	return 0;
}

/* One value in RowBinary: [NULL flag] then the integer's low bytes (little endian), or length + bytes. */
static int put_value(struct ch_table *ct, size_t col, const struct sql_value *v)
{
	int rc = room(ct, MAX_FIXED_PER_VALUE);

	if (rc)
		return rc;
	if (ct->nullable[col])
		ct->buf[ct->len++] = v->null;
	if (ct->nullable[col] && v->null)
		return 0;
	if (ct->width[col]) {
		uint64_t u = (uint64_t)(v->null ? 0 : v->i);
		if (ct->is_time[col] && !v->null && (rc = shift_time(ct, &u)))
			return rc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(ct->buf + ct->len, &u, ct->width[col]);
		ct->len += ct->width[col];
#else
		for (unsigned i = 0; i < ct->width[col]; i++)
			ct->buf[ct->len++] = (uint8_t)(u >> (8 * i));
#endif
		return 0;
	}
	uint32_t len = v->null ? 0 : v->len;
	put_varuint(ct, len);
	if (len > TABLE_BUF_BYTES / 2) /* a long one straight out, the buffer before it */
		return flush_rows(ct) || fwrite(v->p, 1, len, ct->f) != len ? -EIO : 0;
	if ((rc = room(ct, len)))
		return rc;
	memcpy(ct->buf + ct->len, v->p, len);
	ct->len += len;
	return 0;
}

static int write_row(void *ctx, struct sql_table *t, const struct sql_value *v)
{
	struct ch_table *ct = t->engine;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < t->ncols; i++)
		rc = put_value(ct, i, &v[i]);
	if (rc == -ERANGE) {
		struct export_run *x = ctx;
		return export_say(x, rc, x->o->in, "a time stamp of table %s plus --clock-offset %lld is below 0",
				  t->name, (long long)ct->clock_offset);
	}
	return rc;
}

/* ---- statements ------------------------------------------------------- */

/* `name` quoted for ClickHouse: backticks, a backtick or backslash inside escaped. */
static void put_ident(FILE *f, const char *name)
{
	putc('`', f);
	for (const char *p = name; *p; p++) {
		if (*p == '`' || *p == '\\')
			putc('\\', f);
		putc(*p, f);
	}
	putc('`', f);
}

static bool has_sort_column(const struct sql_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name) && never_null(t, &t->cols[i]))
			return true;
	return false;
}

/* ENGINE of t: a registry dedupes on all its columns; the rest are partitioned by trace. */
static void engine_clause(FILE *f, const struct sql_table *t)
{
	bool host = has_sort_column(t, "host"), ts = has_sort_column(t, "ts");

	if (is_registry(t)) {
		fputs(") ENGINE = ReplacingMergeTree ORDER BY (", f);
		for (size_t i = 0; i < t->ncols; i++) {
			fputs(i ? ", " : "", f);
			put_ident(f, t->cols[i].name);
		}
		fputs(");\n", f);
		return;
	}
	fprintf(f, ") ENGINE = MergeTree PARTITION BY trace_id ORDER BY %s;\n",
		host && ts ? "(host, ts)" : ts ? "ts" : "trace_id");
}

/* CREATE TABLE of t in database "DB" (written as the word DB: the loader puts each database in). */
static void create_statement(FILE *f, const struct sql_table *t)
{
	char type[64];
	fputs("CREATE TABLE IF NOT EXISTS DB.", f);
	put_ident(f, t->name);
	fputs(" (", f);
	for (size_t i = 0; i < t->ncols; i++) {
		ch_type(t, &t->cols[i], type);
		fputs(i ? ", " : "", f);
		put_ident(f, t->cols[i].name);
		fprintf(f, " %s", type);
	}
	engine_clause(f, t);
}

/* A table met: its file, its CREATE, its line in tables.tsv. */
static int table_open(struct export_run *x, struct sql_table *t)
{
	struct ch_state *s = x->state;
	struct ch_table *ct = calloc(1, sizeof(*ct));
	char path[PATH_MAX];

	if (ct)
		t->engine = ct; /* freed by close_tables, whatever else fails */
	if (!ct || !(ct->buf = malloc(TABLE_BUF_BYTES)) || !(ct->nullable = calloc(t->ncols, sizeof(bool))) ||
	    !(ct->width = calloc(t->ncols, 1)) || !(ct->is_time = calloc(t->ncols, sizeof(bool))))
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	for (size_t i = 0; i < t->ncols; i++) {
		const struct sql_column *c = &t->cols[i];
		ct->nullable[i] = c->type != SQL_BLOB && !never_null(t, c);
		ct->width[i] = c->type == SQL_INT ? (uint8_t)int_bytes(c) : 0;
		ct->is_time[i] = is_time_column(c);
	}
	ct->clock_offset = x->o->clock_offset;
	snprintf(path, sizeof(path), "%s/t%d.bin", s->dir, s->ntables);
	if (!(ct->f = fopen(path, "w")))
		return export_say(x, -errno, path, "%s", strerror(errno));
	fprintf(s->names, "t%d.bin\t%s\t%s\n", s->ntables++, t->name, is_registry(t) ? "registry" : "trace");
	create_statement(s->schema, t);
	return 0;
}

/* ---- the trace's identity ------------------------------------------- */

/* FNV-1a, 32 bits: the trace_id of (host, the input's real path); the same trace, the same id. */
static int64_t trace_identity(const char *host, const char *in)
{
	char real[PATH_MAX];
	const char *path = realpath(in, real) ? real : in;
	uint32_t h = 2166136261u;

	for (const char *p = host; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	h = (h ^ 0) * 16777619u;
	for (const char *p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h ? h : 1; /* 0 is no trace */
}


/* ---- clickhouse-client ------------------------------------------------ */

/* One statement (body_fd: its rows, or -1); the server's refusal said with the statement. */
static int statement(struct export_run *x, const char *sql, int body_fd, char **answer)
{
	char *msg = NULL;
	int rc = ch_http(x->o->clickhouse, sql, body_fd, &msg);

	if (rc == -EIO)
		export_say(x, rc, x->o->clickhouse, "ClickHouse refused `%.300s`: %s", sql, msg ? msg : "");
	else if (rc < 0)
		export_say(x, rc, x->o->clickhouse, "%s (ClickHouse's HTTP interface, 8123 by default)",
			   msg ? msg : strerror(-rc));
	if (answer && rc == 0)
		*answer = msg;
	else
		free(msg);
	return rc;
}

/* The server answers and is 18.16 or newer; else said with its address. */
static int check_server(struct export_run *x)
{
	char *version = NULL;
	int major = 0, minor = 0, rc;

	if ((rc = statement(x, "SELECT version()", -1, &version)) < 0)
		return rc;
	if (sscanf(version, "%d.%d", &major, &minor) != 2 || major < 18 || (major == 18 && minor < 16))
		rc = export_say(x, -EIO, x->o->clickhouse, "ClickHouse %.*s there: 18.16 or newer is needed",
				(int)strcspn(version, "\n"), version);
	free(version);
	return rc;
}

/* Statements separated by ";\n", one request each (HTTP takes one statement a request). */
static int run_script(struct export_run *x, char *text)
{
	int rc = 0;

	for (char *st = text, *end; rc == 0 && st && *st; st = end) {
		if ((end = strstr(st, ";\n")))
			*end = '\0', end += 2;
		rc = statement(x, st, -1, NULL);
	}
	return rc;
}

/*
 * One load's statements.  Each costs the server 10-100 ms (DDL above
 * all; 2-vCPU VM), so the plan makes only what this trace needs: the
 * tables with rows, created in D when D lacks them and in the load's
 * staging database, their inserts, their swaps (`trace` last), and a
 * DROP PARTITION for a table of D that has this trace but no rows now.
 */
enum { PLAN_CREATE, PLAN_INSERTS, PLAN_SWAP, PLAN_AFTER, PLAN_DERIVE, PLAN_ROWS, PLAN_TEXTS };

struct load_plan {
	FILE *create, *inserts, *swap, *after; /* inserts: FILE \t TARGET lines */
	FILE *derive;			       /* the summaries' INSERT ... SELECTs, after the inserts */
	FILE *rows;			       /* "\nNAME\n...": the tables this load has rows for */
	char *text[PLAN_TEXTS];
	size_t len[PLAN_TEXTS];
	char trace_swap[1024];
	char *have_tables, *have_trace; /* "\nNAME\n..." of D: its tables, those holding this trace */
	char *have_dist;		/* D_all's tables (with --cluster): made once, not at every load */
};

/* NAME is a line of list ("\nA\nB\n"). */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list ? strstr(list, name) : NULL; p; p = strstr(p + 1, name))
		if ((p == list || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* D_all's Distributed table over D's table NAME, made after the swap (D.NAME exists then), once. */
static void plan_distributed(const struct ch_state *s, const char *name, struct load_plan *p)
{
	if (s->cluster && !listed(p->have_dist, name))
		fprintf(p->after,
			"CREATE TABLE IF NOT EXISTS `%s_all`.`%s` AS `%s`.`%s` ENGINE = Distributed(`%s`, `%s`, `%s`);\n",
			s->database, name, s->database, name, s->cluster, s->database, name);
}

/* The swap of table NAME's partition of this trace from the staging database into D. */
static void swap_statement(const struct ch_state *s, const char *name, const char *stage, char *out,
			   size_t size)
{
	snprintf(out, size, "ALTER TABLE `%s`.`%s` REPLACE PARTITION %lld FROM `%s`.`%s`;\n", s->database,
		 name, (long long)s->cat.trace_id, stage, name);
}

/* The drop of this trace's partition of D's table NAME: an earlier load had rows there, this one none. */
static void drop_statement(const struct ch_state *s, const char *name, FILE *out)
{
	fprintf(out, "ALTER TABLE `%s`.`%s` DROP PARTITION %lld;\n", s->database, name, (long long)s->cat.trace_id);
}

/*
 * One table: tables.tsv's line (FILE \t NAME \t registry|trace) and its
 * CREATE (schema.sql's line, "DB." for the database).  A registry's rows
 * go straight into D (ReplacingMergeTree: a second load's rows merge away
 * at OPTIMIZE FINAL); a trace table's into the staging table, then swapped.
 */
static void plan_table(struct ch_state *s, char *line, const char *create, const char *stage,
		       struct load_plan *p)
{
	char *name = strchr(line, '\t'), *what = name ? strchr(name + 1, '\t') : NULL;
	char file[PATH_MAX + 1100];
	struct stat st;

	if (!what)
		return;
	*name++ = '\0';
	*what++ = '\0';
	what[strcspn(what, "\n")] = '\0';
	snprintf(file, sizeof(file), "%s/%s", s->dir, line);
	bool rows = stat(file, &st) == 0 && st.st_size > 0, registry = !strcmp(what, "registry");
	if (rows)
		fprintf(p->rows, "%s\n", name);
	if (rows)
		plan_distributed(s, name, p);
	if (!rows) {
		if (!registry && listed(p->have_trace, name)) /* an earlier load of it had rows here */
			drop_statement(s, name, p->swap);
		return;
	}
	if (!listed(p->have_tables, name))
		fprintf(p->create, "CREATE TABLE IF NOT EXISTS `%s`.%s", s->database, create + 3);
	if (registry) {
		fprintf(p->inserts, "%s\t`%s`.`%s`\n", line, s->database, name);
		fprintf(p->after, "OPTIMIZE TABLE `%s`.`%s` FINAL;\n", s->database, name);
		return;
	}
	fprintf(p->create, "CREATE TABLE `%s`.%s", stage, create + 3);
	fprintf(p->inserts, "%s\t`%s`.`%s`\n", line, stage, name);
	char sql[1024];
	swap_statement(s, name, stage, sql, sizeof(sql));
	if (!strcmp(name, "trace"))
		snprintf(p->trace_swap, sizeof(p->trace_swap), "%s", sql);
	else
		fputs(sql, p->swap);
}

/*
 * Per-trace summaries, made on the server from the staging tables before
 * the swap and swapped with them (docs/fleet.md): a fleet's question over
 * every host then reads a table of a few rows per thread instead of one
 * per event, and never joins (each row has its thread's name).  `%1$s` in
 * a SELECT is the staging database.  Exact: each holds counts and sums
 * (or, for the latencies, each value with its count) that add up across
 * traces to what the same question over the full tables answers.
 */
struct summary {
	const char *name;
	const char *needs[2]; /* the tables its rows come from: made when this load has rows there */
	const char *columns;
	const char *select;
};

#define SUMMARY_HOST "(SELECT any(host) FROM `%1$s`.trace)"

static const struct summary summaries[] = {
	{"event_count", {"events", NULL},
	 "host LowCardinality(String), trace_id Int64, name Nullable(String), n UInt64",
	 "SELECT host, trace_id, name, count() FROM `%1$s`.events GROUP BY host, trace_id, name"},
	/* sched_slice by thread, end state and power-of-two duration (us) bucket (sql.md's) */
	{"sched_slice_by_thread", {"sched_slice", "thread"},
	 "host LowCardinality(String), trace_id Int64, utid Nullable(Int64), tid Nullable(Int64), "
	 "name Nullable(String), end_state Nullable(String), us_from Int64, n UInt64, dur_sum Int64",
	 "SELECT " SUMMARY_HOST ", trace_id, utid, tid, name, end_state, us_from, n, dur_sum FROM ("
	 "SELECT trace_id, utid, end_state, CASE WHEN d < 2000 THEN 1 ELSE CAST(pow(2, floor(log2(d / 1000))) AS Int64) "
	 "END AS us_from, count() AS n, sum(d) AS dur_sum FROM (SELECT trace_id, utid, end_state, assumeNotNull(dur) AS d "
	 "FROM `%1$s`.sched_slice WHERE dur IS NOT NULL) GROUP BY trace_id, utid, end_state, us_from) "
	 "ALL LEFT JOIN (SELECT utid, tid, name FROM `%1$s`.thread) USING (utid)"},
	/* thread_state by thread, state and waker: spans, those that ended, their time */
	{"thread_state_by_thread", {"thread_state", "thread"},
	 "host LowCardinality(String), trace_id Int64, utid Nullable(Int64), name Nullable(String), "
	 "state Nullable(String), waker_utid Nullable(Int64), waker_name Nullable(String), n UInt64, "
	 "n_ended UInt64, dur_sum Int64",
	 "SELECT " SUMMARY_HOST ", trace_id, utid, name, state, waker_utid, waker_name, n, n_ended, dur_sum FROM ("
	 "SELECT trace_id, utid, name, state, waker_utid, n, n_ended, dur_sum FROM (SELECT trace_id, utid, state, "
	 "waker_utid, count() AS n, count(dur) AS n_ended, sum(ifNull(dur, 0)) AS dur_sum FROM `%1$s`.thread_state "
	 "GROUP BY trace_id, utid, state, waker_utid) ALL LEFT JOIN (SELECT utid, name FROM `%1$s`.thread) USING (utid)) "
	 "ALL LEFT JOIN (SELECT utid AS waker_utid, name AS waker_name FROM `%1$s`.thread) USING (waker_utid)"},
	/* each wakeup latency (R after a waker, to running) of a thread name, with its count.  Not
	   `assumeNotNull(dur) AS dur`: an alias is seen by WHERE, which would then keep the NULLs. */
	{"wakeup_latency", {"thread_state", "thread"},
	 "host LowCardinality(String), trace_id Int64, comm Nullable(String), dur Int64, n UInt64",
	 "SELECT " SUMMARY_HOST ", trace_id, name, d, n FROM (SELECT trace_id, utid, assumeNotNull(dur) AS d, "
	 "count() AS n FROM `%1$s`.thread_state WHERE state = 'R' AND waker_utid IS NOT NULL AND dur IS NOT NULL "
	 "GROUP BY trace_id, utid, d) ALL LEFT JOIN (SELECT utid, name FROM `%1$s`.thread) USING (utid)"},
	/* off-CPU time per comm: each thread's switches in time order, each paired with the next
	   (clickhouse.md's text of it before the summary, per trace) */
	{"offcpu_by_comm", {"sched_switch", NULL},
	 "host LowCardinality(String), trace_id Int64, comm Nullable(String), off_ns UInt64",
	 "SELECT host, trace_id, comm, sum(next_ts - ts) FROM (SELECT host, trace_id, tupleElement(e, 1) AS ts, "
	 "tupleElement(e, 3) AS is_in, tupleElement(e, 4) AS state, tupleElement(e, 5) AS comm, "
	 "tupleElement(n, 1) AS next_ts, tupleElement(n, 3) AS next_in FROM (SELECT host, trace_id, "
	 "arraySort(groupArray((ts, 0, is_in, state, comm))) AS evs FROM (SELECT host, trace_id, ts, prev_pid AS tid, "
	 "prev_comm AS comm, prev_state AS state, 0 AS is_in FROM `%1$s`.sched_switch WHERE prev_pid != 0 UNION ALL "
	 "SELECT host, trace_id, ts, next_pid AS tid, '' AS comm, 0 AS state, 1 AS is_in FROM `%1$s`.sched_switch "
	 "WHERE next_pid != 0) GROUP BY host, trace_id, tid) ARRAY JOIN arrayPopBack(evs) AS e, arrayPopFront(evs) AS n) "
	 "WHERE is_in = 0 AND next_in = 1 AND bitAnd(state, 48) = 0 GROUP BY host, trace_id, comm"},
};

/*
 * The summaries this load makes: in the staging database (and in D when
 * D lacks one), filled from the staged rows, swapped before `trace`.  One
 * whose tables have no rows now but had this trace before loses its
 * partition, as a table does.
 */
/* This load has rows in every table summary m is made from. */
static bool has_sources(const struct load_plan *p, const struct summary *m)
{
	for (size_t i = 0; i < sizeof(m->needs) / sizeof(m->needs[0]); i++)
		if (m->needs[i] && !listed(p->text[PLAN_ROWS], m->needs[i]))
			return false;
	return true;
}

static void plan_summaries(const struct ch_state *s, const char *stage, struct load_plan *p)
{
	char sql[1024];

	fflush(p->rows);
	for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++) {
		const struct summary *m = &summaries[i];
		if (!has_sources(p, m)) {
			if (listed(p->have_trace, m->name))
				drop_statement(s, m->name, p->swap);
			continue;
		}
		const char *create =
		    "CREATE TABLE %s`%s`.`%s` (%s) ENGINE = MergeTree PARTITION BY trace_id ORDER BY host;\n";
		if (!listed(p->have_tables, m->name))
			fprintf(p->create, create, "IF NOT EXISTS ", s->database, m->name, m->columns);
		fprintf(p->create, create, "", stage, m->name, m->columns);
		fprintf(p->derive, "INSERT INTO `%s`.`%s` ", stage, m->name);
		fprintf(p->derive, m->select, stage);
		fputs(";\n", p->derive);
		swap_statement(s, m->name, stage, sql, sizeof(sql));
		fputs(sql, p->swap);
		plan_distributed(s, m->name, p);
	}
}

/* Each FILE \t TARGET line of the plan's inserts. */
static int run_inserts(struct export_run *x, struct ch_state *s, char *lines)
{
	char file[PATH_MAX + 1100], insert[800];
	int rc = 0;

	for (char *line = strtok(lines, "\n"); rc == 0 && line; line = strtok(NULL, "\n")) {
		char *target = strchr(line, '\t');
		if (!target)
			continue;
		*target++ = '\0';
		snprintf(file, sizeof(file), "%s/%s", s->dir, line);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return export_say(x, -errno, file, "%s", strerror(errno));
		snprintf(insert, sizeof(insert), "INSERT INTO %s FORMAT RowBinary", target);
		rc = statement(x, insert, fd, NULL);
		close(fd);
	}
	return rc;
}

/* What D has: its tables, and those with a part of this trace (one query each). */
static int survey(struct export_run *x, struct ch_state *s, struct load_plan *p)
{
	char sql[800], *tables = NULL, *trace = NULL;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT name FROM system.tables WHERE database = '%s'", s->database);
	if ((rc = statement(x, sql, -1, &tables)) < 0)
		return rc;
	snprintf(sql, sizeof(sql),
		 "SELECT DISTINCT table FROM system.parts WHERE database = '%s' AND partition_id = '%lld' AND active",
		 s->database, (long long)s->cat.trace_id);
	if ((rc = statement(x, sql, -1, &trace)) < 0) {
		free(tables);
		return rc;
	}
	/* each list as "\nA\nB\n": a name is found between newlines */
	if (asprintf(&p->have_tables, "\n%s", tables) < 0 || asprintf(&p->have_trace, "\n%s", trace) < 0)
		rc = export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	free(tables);
	free(trace);
	if (rc == 0 && s->cluster) { /* a DDL statement costs 10-100 ms: a fleet's loads make D_all's once */
		char *dist = NULL;
		snprintf(sql, sizeof(sql), "SELECT name FROM system.tables WHERE database = '%s_all'", s->database);
		if ((rc = statement(x, sql, -1, &dist)) == 0 && asprintf(&p->have_dist, "\n%s", dist) < 0)
			rc = export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
		free(dist);
	}
	return rc;
}

/* The plan from tables.tsv and schema.sql, read line by line together. */
static int make_plan(struct export_run *x, struct ch_state *s, const char *stage, struct load_plan *p)
{
	FILE **f[PLAN_TEXTS] = {&p->create, &p->inserts, &p->swap, &p->after, &p->derive, &p->rows};
	char path[PATH_MAX], line[1024], *create = NULL;
	size_t create_cap = 0;
	FILE *names, *schema;
	int rc = survey(x, s, p);

	for (int i = 0; rc == 0 && i < PLAN_TEXTS; i++)
		if (!(*f[i] = open_memstream(&p->text[i], &p->len[i])))
			rc = export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	if (rc == 0)
		fputs("\n", p->rows);
	snprintf(path, sizeof(path), "%s/tables.tsv", s->dir);
	names = fopen(path, "r");
	snprintf(path, sizeof(path), "%s/schema.sql", s->dir);
	schema = fopen(path, "r");
	if (rc == 0 && (!names || !schema))
		rc = export_say(x, -errno, path, "%s", strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), names) && getline(&create, &create_cap, schema) > 0)
		plan_table(s, line, create + strlen("CREATE TABLE IF NOT EXISTS "), stage, p);
	free(create);
	if (names)
		fclose(names);
	if (schema)
		fclose(schema);
	if (rc == 0)
		plan_summaries(s, stage, p);
	if (p->swap)
		fputs(p->trace_swap, p->swap);
	for (int i = 0; i < PLAN_TEXTS; i++)
		if (*f[i] && fclose(*f[i]) && rc == 0)
			rc = export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	return rc;
}

/*
 * The load: a staging database of this load's own (D__load_ID: dropped
 * first, what a killed load of the trace left), the tables, the rows, the
 * swap, the staging database dropped.
 */
static int load(struct export_run *x, struct ch_state *s)
{
	struct load_plan p = {0};
	char stage[300], sql[800];
	int rc;

	snprintf(stage, sizeof(stage), "%s__load_%lld", s->database, (long long)s->cat.trace_id);
	if (s->cluster)
		snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s`;\nCREATE DATABASE IF NOT EXISTS `%s_all`;\n",
			 s->database, s->database);
	else
		snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s`;\n", s->database);
	if ((rc = run_script(x, sql)) < 0 || (rc = make_plan(x, s, stage, &p)) < 0)
		goto out;
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS `%s`;\nCREATE DATABASE `%s`;\n", stage, stage);
	if ((rc = run_script(x, sql)) == 0 && (rc = run_script(x, p.text[PLAN_CREATE])) == 0 &&
	    (rc = run_inserts(x, s, p.text[PLAN_INSERTS])) == 0 &&
	    (rc = run_script(x, p.text[PLAN_DERIVE])) == 0 && (rc = run_script(x, p.text[PLAN_SWAP])) == 0 &&
	    (rc = run_script(x, p.text[PLAN_AFTER])) == 0) {
		snprintf(sql, sizeof(sql), "DROP DATABASE `%s`", stage);
		rc = statement(x, sql, -1, NULL);
	}
out:
	for (int i = 0; i < PLAN_TEXTS; i++)
		free(p.text[i]);
	free(p.have_tables);
	free(p.have_trace);
	free(p.have_dist);
	return rc;
}

/* ---- the kind's hooks ------------------------------------------------ */

static int ch_begin(struct export_run *x)
{
	struct ch_state *s = x->state;
	char path[PATH_MAX];
	int rc;

	s->database = x->o->database ? x->o->database : "tracebuf";
	s->cluster = x->o->cluster;
	if (x->o->clickhouse && (rc = check_server(x)) < 0)
		return rc;
	if (x->o->clickhouse) {
		const char *tmp = getenv("TMPDIR");
		snprintf(path, sizeof(path), "%s/tracebuf-ch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(path))
			return export_say(x, -errno, path, "%s", strerror(errno));
	} else {
		snprintf(path, sizeof(path), "%s", x->o->out);
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return export_say(x, -errno, path, "%s", strerror(errno));
	}
	if (!(s->dir = strdup(path)))
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/schema.sql", s->dir);
	if (!(s->schema = fopen(path, "w")))
		return export_say(x, -errno, path, "%s", strerror(errno));
	snprintf(path, sizeof(path), "%s/tables.tsv", s->dir);
	if (!(s->names = fopen(path, "w")))
		return export_say(x, -errno, path, "%s", strerror(errno));
	if (sql_catalog_init(&s->cat, false, write_row, x) < 0)
		return export_say(x, -ENOMEM, x->o->out, "%s", strerror(ENOMEM));
	/* events is a table here (ClickHouse stores it by columns: a view of every event table costs more) */
	for (int i = 0; i < SQL_NFIXED; i++)
		if (i != SQL_EVENTS_UNKNOWN && (rc = table_open(x, &s->cat.fixed[i])) < 0)
			return rc;
	s->host = x->o->host ? x->o->host : sql_default_host(x->o->in);
	s->cat.host = s->host;
	s->cat.host_len = (uint32_t)strlen(s->host);
	s->cat.trace_id = trace_identity(s->host, x->o->in);
	rc = sql_derived_begin(&s->cat, tb_capture_schema(x->capture), tb_capture_cpu_slots(x->capture),
			       s->cat.trace_id << UTID_SHIFT, s->cat.trace_id << UTID_SHIFT);
	return rc < 0 ? export_say(x, rc, x->o->out, "%s", strerror(-rc)) : 0;
}




static int event_table_row(struct export_run *x, struct sql_table *t, const struct tb_format *f, const char *sys)
{
	struct ch_state *s = x->state;
	struct sql_value v[3] = {sql_text(t->name, strlen(t->name)), sql_text(f->name, strlen(f->name)),
				 sql_text(sys, sys ? strlen(sys) : 0)};
	return write_row(x, &s->cat.fixed[SQL_EVENT_TABLE], v);
}

static int ch_event(struct export_run *x, const struct merged_record *r)
{
	struct ch_state *s = x->state;
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
		if (made && ((rc = table_open(x, t)) < 0 || (rc = event_table_row(x, t, f, sys)) < 0))
			return rc;
		if (made)
			sql_derived_note(&s->cat, f, sys);
		struct sql_value v[t->ncols];
		size_t clen;
		const char *comm = tb_schema_comm(schema, (int)sql_record_pid(r), &clen);
		sql_event_row(&s->cat, t, r, comm, clen, v);
		if ((rc = write_row(x, t, v)) < 0)
			return rc;
	}
	const char *name = f ? f->name : NULL;
	struct sql_value ev[7] = {sql_int((int64_t)r->ts), sql_int(r->cpu), sql_int(sql_record_pid(r)),
				  sql_text(name, name ? strlen(name) : 0), sql_text(s->host, s->cat.host_len),
				  sql_int(s->cat.trace_id), sql_null(SQL_TEXT)};
	if ((rc = write_row(x, &s->cat.fixed[SQL_EVENTS], ev)) < 0)
		return rc;
	return sql_derived_feed(&s->cat, r);
}

static int lost_row(struct export_run *x, struct sql_value cpu, struct sql_value ts, struct sql_value count,
		    const char *file, uint64_t offset, const char *reason)
{
	struct ch_state *s = x->state;
	struct sql_value v[8] = {cpu,
				 ts,
				 count,
				 sql_text(file, file ? strlen(file) : 0),
				 sql_int((int64_t)offset),
				 sql_text(reason, strlen(reason)),
				 sql_text(s->host, s->cat.host_len),
				 sql_int(s->cat.trace_id)};
	return write_row(x, &s->cat.fixed[SQL_LOST], v);
}

static int ch_loss(struct export_run *x, const struct merge_loss *l)
{
	return lost_row(x, sql_int(l->cpu), sql_int((int64_t)l->ts),
			l->count_known ? sql_int((int64_t)l->count) : sql_null(SQL_INT), l->file, l->offset,
			"lost events");
}

/* Damage is kept for rows of lost at the end (a problem can come before begin: no table yet). */
static int ch_problem(struct export_run *x, const struct tb_problem *d)
{
	struct ch_state *s = x->state;
	struct ch_problem *v;

	if (d->warning)
		return 0;
	if (!(v = tb__grow(s->problems, &s->cap_problems, s->nproblems + 1, sizeof(*v), 8)))
		return -ENOMEM;
	s->problems = v;
	v[s->nproblems] = (struct ch_problem){strdup(d->file ? d->file : ""), d->offset, strdup(d->reason)};
	if (!v[s->nproblems].file || !v[s->nproblems].reason)
		return -ENOMEM;
	s->nproblems++;
	return 0;
}

static int ch_complete(struct export_run *x)
{
	struct ch_state *s = x->state;
	const char *clock = tb_capture_clock(x->capture);
	int rc = x->merge->fatal;

	if (rc == 0)
		rc = sql_derived_end(&s->cat, tb_capture_schema(x->capture));
	for (size_t i = 0; rc == 0 && i < s->nproblems; i++)
		rc = lost_row(x, sql_null(SQL_INT), sql_null(SQL_INT), sql_null(SQL_INT), s->problems[i].file,
			      s->problems[i].offset, s->problems[i].reason);
	struct sql_value v[7] = {sql_int(s->cat.trace_id),
				 sql_text(s->host, s->cat.host_len),
				 sql_text(x->o->in, strlen(x->o->in)),
				 sql_text(clock, clock ? strlen(clock) : 0),
				 sql_int((int64_t)x->merge->records),
				 sql_int((int64_t)x->merge->lost_pages),
				 sql_int((int64_t)s->nproblems)};
	if (rc == 0)
		rc = write_row(x, &s->cat.fixed[SQL_TRACE], v);
	return rc;
}

/* Close every table's file; the first error. */
static int close_tables(struct sql_catalog *c)
{
	int rc = 0;

	for (size_t i = 0; i < SQL_NFIXED + c->nby_id; i++) {
		struct sql_table *t = i < SQL_NFIXED ? &c->fixed[i] : c->by_id[i - SQL_NFIXED];
		struct ch_table *ct = t ? t->engine : NULL;
		if (!ct)
			continue;
		int frc = ct->f ? flush_rows(ct) : 0;
		if (ct->f && fclose(ct->f) && frc == 0)
			frc = -errno;
		rc = rc ? rc : frc;
		free(ct->buf);
		free(ct->nullable);
		free(ct->width);
		free(ct->is_time);
		free(ct);
		t->engine = NULL;
	}
	return rc;
}

static void remove_dir(const char *dir)
{
	char path[PATH_MAX], line[1024];
	FILE *names;

	snprintf(path, sizeof(path), "%s/tables.tsv", dir);
	if ((names = fopen(path, "r"))) {
		while (fgets(line, sizeof(line), names)) {
			line[strcspn(line, "\t")] = '\0';
			snprintf(path, sizeof(path), "%s/%s", dir, line);
			unlink(path);
		}
		fclose(names);
	}
	snprintf(path, sizeof(path), "%s/tables.tsv", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/schema.sql", dir);
	unlink(path);
	rmdir(dir);
}

static int ch_finish(struct export_run *x)
{
	struct ch_state *s = x->state;
	int rc = 0;

	if (s->dir && !x->failed)
		rc = ch_complete(x);
	int crc = close_tables(&s->cat);
	if (rc == 0 && crc < 0)
		rc = export_say(x, crc, s->dir, "%s", strerror(-crc));
	if (s->schema && fclose(s->schema) && rc == 0)
		rc = export_say(x, -errno, s->dir, "%s", strerror(errno));
	if (s->names && fclose(s->names) && rc == 0)
		rc = export_say(x, -errno, s->dir, "%s", strerror(errno));
	if (rc == 0 && !x->failed && x->o->clickhouse)
		rc = load(x, s);
	if (s->dir && x->o->clickhouse)
		remove_dir(s->dir);
	sql_catalog_free(&s->cat);
	for (size_t i = 0; i < s->nproblems; i++) {
		free(s->problems[i].file);
		free(s->problems[i].reason);
	}
	free(s->problems);
	free(s->dir);
	return rc;
}

const struct tb_exporter_kind export_clickhouse = {
    .name = "clickhouse-rowbinary",
    .suffixes = "",
    .help = "a directory: ClickHouse's CREATE TABLEs and RowBinary rows per table (docs/sql.md)",
    .input = EXPORT_CAPTURE,
    .state_size = sizeof(struct ch_state),
    .begin = ch_begin,
    .event = ch_event,
    .loss = ch_loss,
    .problem = ch_problem,
    .finish = ch_finish,
};
