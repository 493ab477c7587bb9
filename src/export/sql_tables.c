// SPDX-License-Identifier: MIT
/*
 * sql_tables.c - the tables a trace becomes, for every engine
 * (sql_tables.h): the fixed tables' columns, one table per event type
 * typed from its format, and the rows of those tables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_tables.h"
#include "util/grow.h"

/* ------------------------------------------------------------ fixed tables */

struct col_def {
	const char *name;
	enum sql_type type;
};

#define I SQL_INT
#define T SQL_TEXT
static const struct col_def trace_cols[] = {{"trace_id", I}, {"host", T},	{"path", T},	 {"clock", T},
					    {"records", I},  {"lost_pages", I}, {"problems", I}, {NULL, 0}};
static const struct col_def events_cols[] = {{"ts", I},	  {"cpu", I},	   {"pid", I},	 {"name", T},
					     {"host", T}, {"trace_id", I}, {"text", T}, {NULL, 0}};
static const struct col_def lost_cols[] = {{"cpu", I},	  {"ts", I},	{"count", I},	 {"path", T},
					   {"offset", I}, {"reason", T}, {"host", T}, {"trace_id", I}, {NULL, 0}};
static const struct col_def thread_cols[] = {{"utid", I},     {"tid", I},    {"name", T},     {"upid", I},
					     {"start_ts", I}, {"end_ts", I}, {"trace_id", I}, {NULL, 0}};
static const struct col_def process_cols[] = {{"upid", I}, {"pid", I}, {"name", T}, {"trace_id", I}, {NULL, 0}};
static const struct col_def slice_cols[] = {{"ts", I},	      {"dur", I},      {"cpu", I},	{"utid", I},
					    {"end_state", T}, {"priority", I}, {"trace_id", I}, {NULL, 0}};
static const struct col_def state_cols[] = {{"ts", I},	       {"dur", I},     {"utid", I},	{"state", T},
					    {"cpu", I},	       {"waker_utid", I}, {"io_wait", I}, {"trace_id", I},
					    {NULL, 0}};
/*
 * running (sql_tables.h): a slice that is a Running span, the state that
 * span followed (NULL: none kept), and how long the state after it (its
 * end_state, from ts + dur) lasted (NULL: open at the end, or the span is)
 */
static const struct col_def running_cols[] = {{"ts", I},	    {"dur", I},		 {"cpu", I},
					      {"utid", I},	    {"end_state", T},	 {"priority", I},
					      {"trace_id", I},	    {"before_ts", I},	 {"before_state", T},
					      {"before_waker_utid", I}, {"after_dur", I}, {NULL, 0}};
static const struct col_def unknown_cols[] = {{"ts", I},	{"cpu", I},	  {"pid", I}, {"id", I},
					      {"host", T}, {"trace_id", I}, {NULL, 0}};
static const struct col_def registry_cols[] = {{"name", T}, {"event", T}, {"system", T}, {NULL, 0}};
static const struct col_def spurious_cols[] = {{"ts", I}, {"utid", I}, {"waker_utid", I}, {"trace_id", I}, {NULL, 0}};
#undef I
#undef T

static const struct {
	const char *name;
	const struct col_def *cols;
} fixed_defs[SQL_NFIXED] = {
    [SQL_TRACE] = {"trace", trace_cols},
    [SQL_EVENTS] = {"events", events_cols},
    [SQL_LOST] = {"lost", lost_cols},
    [SQL_THREAD] = {"thread", thread_cols},
    [SQL_PROCESS] = {"process", process_cols},
    [SQL_SCHED_SLICE] = {"sched_slice", slice_cols},
    [SQL_THREAD_STATE] = {"thread_state", state_cols},
    [SQL_SPURIOUS_WAKEUP] = {"spurious_sched_wakeup", spurious_cols},
    [SQL_EVENTS_UNKNOWN] = {"events_unknown", unknown_cols},
    [SQL_EVENT_TABLE] = {"event_table", registry_cols},
};

/* Names every engine would take as a table of ours; an event called so gets its system's prefix. */
static const char *const reserved_names[] = {"sched", "sqlite_master", "sqlite_sequence", "sqlite_schema"};

/* Kept in lower case: SQL names are case-blind ("Thread" is the table thread). */
int sql_name_take(struct sql_catalog *c, const char *name)
{
	size_t n = strlen(name);
	char *lower = malloc(n + 1);
	bool added;
	int64_t id;

	if (!lower)
		return -ENOMEM;
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] - 'A' + 'a' : name[i]);
	id = intern_add(&c->names, lower, (uint32_t)n, &added);
	free(lower);
	return id < 0 ? -ENOMEM : (added ? 1 : 0);
}

static int fixed_init(struct sql_table *t, const char *name, const struct col_def *defs, bool with_text)
{
	size_t n = 0;

	while (defs[n].name)
		n++;
	if (defs == events_cols && !with_text)
		n--; /* text is the last column, there only when asked */
	if (!(t->cols = calloc(n, sizeof(*t->cols))) || !(t->name = strdup(name)))
		return -ENOMEM;
	t->ncols = n;
	for (size_t i = 0; i < n; i++) {
		if (!(t->cols[i].name = strdup(defs[i].name)))
			return -ENOMEM;
		t->cols[i].type = defs[i].type;
		t->cols[i].nullable = true;
	}
	return 0;
}

int sql_catalog_init(struct sql_catalog *c, bool with_text, sql_row_fn *row, void *row_ctx)
{
	memset(c, 0, sizeof(*c));
	c->with_text = with_text;
	c->row = row;
	c->row_ctx = row_ctx;
	for (int i = 0; i < SQL_NFIXED; i++)
		if (fixed_init(&c->fixed[i], fixed_defs[i].name, fixed_defs[i].cols, with_text) < 0 ||
		    sql_name_take(c, fixed_defs[i].name) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
		if (sql_name_take(c, reserved_names[i]) < 0)
			return -ENOMEM;
	return fixed_init(&c->running, "running", running_cols, false);
}

static void table_free(struct sql_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncols; i++)
		free(t->cols[i].name);
	free(t->cols);
	free(t->name);
}

void sql_catalog_free(struct sql_catalog *c)
{
	for (int i = 0; i < SQL_NFIXED; i++)
		table_free(&c->fixed[i]);
	table_free(&c->running);
	for (size_t i = 0; i < c->nby_id; i++) {
		table_free(c->by_id[i]);
		free(c->by_id[i]);
	}
	free(c->by_id);
	intern_free(&c->names);
	pidmap_free(&c->tids);
	free(c->threads);
	free(c->cpus);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------ event tables */

/* The common columns every event table starts with, in this order. */
static const struct {
	const char *name;
	enum sql_type type;
	enum sql_source src;
} common_cols[] = {
    {"ts", SQL_INT, SRC_TS},	 {"cpu", SQL_INT, SRC_CPU},   {"pid", SQL_INT, SRC_PID},
    {"tid", SQL_INT, SRC_TID},	 {"comm", SQL_TEXT, SRC_COMM}, {"host", SQL_TEXT, SRC_HOST},
    {"trace_id", SQL_INT, SRC_TRACE_ID},
};
#define NCOMMON (sizeof(common_cols) / sizeof(common_cols[0]))

static bool column_taken(const struct sql_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcasecmp(t->cols[i].name, name)) /* SQL names are case-blind */
			return true;
	return false;
}

/*
 * A field's column name: its own, or "field_NAME" when a common column (or
 * an earlier field, case aside) has it already - sched_waking's pid is the
 * woken task's, its common pid the waker's.
 */
static char *column_name(const struct sql_table *t, const char *field)
{
	size_t len = strlen(field) + 8;
	char *name = malloc(len + 16);

	if (!name)
		return NULL;
	snprintf(name, len + 16, "%s", field);
	for (int n = 0; column_taken(t, name); n++)
		snprintf(name, len + 16, n ? "field_%s_%d" : "field_%s", field, n);
	return name;
}

/* The source and type of a field, by its kind, size and sign. */
static void field_typed(const struct tb_schema_field *f, struct sql_column *col)
{
	col->kind = f->kind;
	col->at = (struct field_at){.offset = f->offset, .size = f->size, .found = true, .is_signed = f->is_signed};
	if (f->kind != TB_SCHEMA_FIELD_STATIC) {
		col->src = f->is_string ? SRC_DYN_STRING : SRC_DYN_BYTES;
	} else if (f->size == 0) {
		col->src = f->is_string ? SRC_REST_STRING : SRC_REST;
	} else if (f->is_string) {
		col->src = SRC_STRING;
	} else if (!f->is_array && (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)) {
		col->src = SRC_INT;
	} else {
		col->src = SRC_BYTES;
	}
	col->type = col->src == SRC_INT ? SQL_INT
		    : (col->src == SRC_STRING || col->src == SRC_DYN_STRING || col->src == SRC_REST_STRING)
			? SQL_TEXT
			: SQL_BLOB;
	col->nullable = true;
}

/* The table's name: the event's, else SYSTEM_EVENT, else SYSTEM_EVENT_ID (docs/sql.md: clashes). */
static char *table_name(struct sql_catalog *c, const struct tb_format *f, const char *sys)
{
	size_t len = strlen(f->name) + (sys ? strlen(sys) : 0) + 16;
	char *name = malloc(len);
	int rc;

	if (!name)
		return NULL;
	snprintf(name, len, "%s", f->name);
	if ((rc = sql_name_take(c, name)) == 0) {
		snprintf(name, len, "%s_%s", sys && *sys ? sys : "event", f->name);
		if ((rc = sql_name_take(c, name)) == 0) {
			snprintf(name, len, "%s_%s_%u", sys && *sys ? sys : "event", f->name, f->id);
			rc = sql_name_take(c, name);
		}
	}
	if (rc < 0) {
		free(name);
		return NULL;
	}
	return name;
}

static struct sql_table *event_table_new(struct sql_catalog *c, const struct tb_format *f, const char *sys)
{
	struct sql_table *t = calloc(1, sizeof(*t));

	if (!t || !(t->cols = calloc(NCOMMON + f->nfields, sizeof(*t->cols))) || !(t->name = table_name(c, f, sys)))
		goto fail;
	for (size_t i = 0; i < NCOMMON; i++) {
		struct sql_column *col = &t->cols[t->ncols];
		if (!(col->name = strdup(common_cols[i].name)))
			goto fail;
		col->type = common_cols[i].type;
		col->src = common_cols[i].src;
		t->ncols++;
	}
	for (size_t i = 0; i < f->nfields; i++) {
		const struct tb_schema_field *fld = &f->fields[i];
		struct sql_column *col = &t->cols[t->ncols];
		/* the type is the table; common_pid is pid and tid */
		if (!strcmp(fld->name, "common_type") || !strcmp(fld->name, "common_pid"))
			continue;
		field_typed(fld, col);
		if (!(col->name = column_name(t, fld->name)))
			goto fail;
		t->ncols++;
	}
	return t;
fail:
	table_free(t);
	free(t);
	return NULL;
}

struct sql_table *sql_event_table(struct sql_catalog *c, const struct tb_format *f, const char *sys, bool *made)
{
	*made = false;
	if (f->id < c->nby_id && c->by_id[f->id])
		return c->by_id[f->id];
	if (f->id >= c->nby_id) {
		size_t cap = c->nby_id;
		struct sql_table **v = tb__grow(c->by_id, &cap, (size_t)f->id + 1, sizeof(*v), 64);
		if (!v)
			return NULL;
		memset(v + c->nby_id, 0, (cap - c->nby_id) * sizeof(*v));
		c->by_id = v;
		c->nby_id = cap;
	}
	if (!(c->by_id[f->id] = event_table_new(c, f, sys)))
		return NULL;
	*made = true;
	return c->by_id[f->id];
}

/* The bytes a __data_loc / __rel_loc field points to, inside the record; false when outside. */
static bool dynamic_bytes(const struct sql_column *col, const struct merged_record *r, const uint8_t **p,
			  uint32_t *len)
{
	int64_t word;
	struct field_at at = col->at;

	at.size = 4;
	at.is_signed = false;
	if (!field_int(&at, r->data, r->len, &word))
		return false;
	uint32_t off = (uint32_t)word & 0xffff, n = (uint32_t)word >> 16;
	if (col->kind == TB_SCHEMA_FIELD_REL_LOC)
		off += col->at.offset + 4; /* counted from the field's end */
	if (off > r->len || r->len - off < n)
		return false;
	*p = r->data + off;
	*len = n;
	return true;
}

/*
 * The values are written member by member into the caller's array: built
 * as a struct and returned, gcc stored it in pieces and loaded it whole, a
 * store-forwarding stall per column (a tenth of a load's cycles, perf).
 */
static void set_int(struct sql_value *v, int64_t i)
{
	v->type = SQL_INT;
	v->null = false;
	v->i = i;
}

static void set_null(struct sql_value *v, enum sql_type t)
{
	v->type = t;
	v->null = true;
}

static void set_bytes(struct sql_value *v, enum sql_type t, const void *p, uint32_t len)
{
	v->type = t;
	v->null = false;
	v->p = p;
	v->len = len;
}

/* A string of at most max bytes at p: up to its first NUL. */
static void set_string(struct sql_value *v, const uint8_t *p, uint32_t max)
{
	const uint8_t *nul = memchr(p, 0, max);

	set_bytes(v, SQL_TEXT, p, nul ? (uint32_t)(nul - p) : max);
}

/* The bytes of a field from p (len of them): text up to the first NUL, else a blob. */
static void set_field_bytes(struct sql_value *v, const struct sql_column *col, const uint8_t *p, uint32_t len)
{
	if (col->type == SQL_TEXT)
		set_string(v, p, len);
	else
		set_bytes(v, SQL_BLOB, p, len);
}

static void field_value(struct sql_value *v, const struct sql_column *col, const struct merged_record *r)
{
	const uint8_t *p;
	uint32_t n;
	int64_t i;

	switch (col->src) {
	case SRC_INT:
		if (field_int(&col->at, r->data, r->len, &i))
			set_int(v, i);
		else
			set_null(v, SQL_INT);
		return;
	case SRC_STRING:
	case SRC_BYTES:
		if (col->at.offset >= r->len)
			break;
		/* a record shorter than its format (ftrace's kernel_stack): the bytes it holds */
		n = r->len - col->at.offset < col->at.size ? r->len - col->at.offset : col->at.size;
		set_field_bytes(v, col, r->data + col->at.offset, n);
		return;
	case SRC_REST:
	case SRC_REST_STRING:
		if (col->at.offset > r->len)
			break;
		set_field_bytes(v, col, r->data + col->at.offset, r->len - col->at.offset);
		return;
	case SRC_DYN_STRING:
	case SRC_DYN_BYTES:
		if (!dynamic_bytes(col, r, &p, &n))
			break;
		set_field_bytes(v, col, p, n);
		return;
	default:
		break;
	}
	set_null(v, col->type);
}

/* common_pid: at byte 4, as every format has it (tb_format_parse checks the layout). */
static int64_t record_pid(const struct merged_record *r)
{
	static const struct field_at pid_at = {.offset = 4, .size = 4, .found = true, .is_signed = true};
	int64_t pid;

	return field_int(&pid_at, r->data, r->len, &pid) ? pid : -1;
}

void sql_event_row(const struct sql_catalog *c, const struct sql_table *t, const struct merged_record *r,
		   const char *comm, size_t comm_len, struct sql_value *v)
{
	int64_t pid = record_pid(r);

	for (size_t i = 0; i < t->ncols; i++) {
		const struct sql_column *col = &t->cols[i];
		if (col->elsewhere)
			continue;
		switch (col->src) {
		case SRC_TS:
			set_int(&v[i], (int64_t)r->ts);
			break;
		case SRC_CPU:
			set_int(&v[i], r->cpu);
			break;
		case SRC_PID: /* a capture holds no thread group ids: pid is the thread's (docs/sql.md) */
		case SRC_TID:
			set_int(&v[i], pid);
			break;
		case SRC_COMM:
		case SRC_HOST: {
			const char *text = col->src == SRC_COMM ? comm : c->host;
			if (text)
				set_bytes(&v[i], SQL_TEXT, text, col->src == SRC_COMM ? (uint32_t)comm_len : c->host_len);
			else
				set_null(&v[i], SQL_TEXT);
			break;
		}
		case SRC_TRACE_ID:
			set_int(&v[i], c->trace_id);
			break;
		default:
			field_value(&v[i], col, r);
		}
	}
}

/* ------------------------------------------------------------ thread states */

#define COMM_LEN 16

/* Whether a state (32 bytes, NUL-padded after its end) is "Running": one 8-byte compare, no strcmp call. */
static bool is_running(const char state[32])
{
	return !memcmp(state, "Running", 8);
}

/* A slice that is its thread's Running span, as a row of running (sql_tables.h) will hold it. */
struct sql_run {
	int64_t ts, dur, cpu, prio;
	bool ended;
	char end_state[32];
	bool has_before;
	char before[32];
	int64_t before_since, before_waker;
};

/*
 * One thread's state as the tracker follows it.  Invariant: `open` is
 * true from the thread's first switch or wakeup on, and state/since then
 * describe the thread_state row that is not written yet (it is written
 * when the next transition closes it, or at the end with dur NULL).
 */
struct sql_thread {
	int64_t tid;
	char name[COMM_LEN];
	bool open;
	char state[32]; /* "Running", "R", "S", "R+", "S|D", ... (sql_state_letters) */
	int64_t since;
	int64_t cpu;	    /* Running: its CPU; else -1 (NULL) */
	int64_t waker_utid; /* R after a wakeup: the waker; else -1 */
	int64_t first_ts, last_ts;
	bool covered; /* the open state is Running and its CPU's slice, written to running, holds it */
	/* running_in_slices: the state the open Running span followed, not written yet: it goes with the span */
	bool has_before;
	char before[32];
	int64_t before_since, before_waker;
	/* and the last such span, written when the state after it (the open one) ends */
	bool has_pending;
	struct sql_run pending;
};

/* A CPU's open sched_slice: the thread that was switched in, when, at what priority. */
struct sql_cpu {
	bool has;
	int64_t ts, prio;
	uint32_t thread;
};

/* sched_switch's fields, from its format f: the switches followed from now on (false: f lacks one). */
static bool follow_switch(struct sql_catalog *c, const struct tb_format *f)
{
	struct field_at sw[6];

	if (!field_at_find(f, "prev_pid", &sw[0]) || !field_at_find(f, "prev_state", &sw[1]) ||
	    !field_at_find(f, "prev_comm", &sw[2]) || !field_at_find(f, "next_pid", &sw[3]) ||
	    !field_at_find(f, "next_prio", &sw[4]) || !field_at_find(f, "next_comm", &sw[5]))
		return false;
	c->prev_pid = sw[0], c->prev_state = sw[1], c->prev_comm = sw[2];
	c->next_pid = sw[3], c->next_prio = sw[4], c->next_comm = sw[5];
	c->switch_id = f->id;
	return true;
}

/* The wakeup event followed (sched_waking or sched_wakeup), from its format f. */
static bool follow_wakeup(struct sql_catalog *c, const struct tb_format *f)
{
	if (!field_at_find(f, "pid", &c->woken_pid))
		return false;
	c->waking_id = f->id;
	return true;
}

int sql_derived_begin(struct sql_catalog *c, const struct tb_schema *s, int ncpus, int64_t utid_base,
		      int64_t upid_base)
{
	const struct tb_format *f;

	c->utid_base = utid_base;
	c->upid_base = upid_base;
	if (ncpus > 0 && !(c->cpus = calloc((size_t)ncpus, sizeof(*c->cpus))))
		return -ENOMEM;
	c->ncpus = ncpus > 0 ? (size_t)ncpus : 0;
	if ((f = schema_find_by_name(s, "sched", "sched_switch")))
		follow_switch(c, f);
	/* Perfetto follows sched_waking where it was recorded, else sched_wakeup */
	if ((f = schema_find_by_name(s, "sched", "sched_waking")) || (f = schema_find_by_name(s, "sched", "sched_wakeup")))
		c->wakeup_chosen = follow_wakeup(c, f);
	return 0;
}

/*
 * A live instance's formats come when their first record is met, so the
 * events to follow may be learnt only then: sched_switch when it comes;
 * sched_wakeup until a sched_waking record is met, sched_waking from then
 * on (at most the first wakeups before the first waking are followed from
 * sched_wakeup: a thread is then R already when its waking comes, as it is).
 */
void sql_derived_note(struct sql_catalog *c, const struct tb_format *f, const char *sys)
{
	if (!sys || strcmp(sys, "sched"))
		return;
	if (!c->switch_id && !strcmp(f->name, "sched_switch"))
		follow_switch(c, f);
	else if (!c->wakeup_chosen && !strcmp(f->name, "sched_waking"))
		c->wakeup_chosen = follow_wakeup(c, f);
	else if (!c->wakeup_chosen && !c->waking_id && !strcmp(f->name, "sched_wakeup"))
		follow_wakeup(c, f);
}

/* The thread of tid (added when new): its index, or -1 out of memory. */
static int64_t thread_of(struct sql_catalog *c, int64_t tid, int64_t ts)
{
	bool added = false;
	int64_t idx = pidmap_known(&c->tids, (int32_t)tid);

	if (idx < 0)
		idx = pidmap_add(&c->tids, (int32_t)tid, &added);
	if (idx < 0)
		return -1;
	if (added) {
		struct sql_thread *v = tb__grow(c->threads, &c->cap_threads, (size_t)idx + 1, sizeof(*v), 64);
		if (!v)
			return -1;
		c->threads = v;
		v[idx] = (struct sql_thread){.tid = tid, .cpu = -1, .waker_utid = -1, .first_ts = ts, .last_ts = ts};
	}
	c->threads[idx].last_ts = ts;
	return idx;
}

const char *sql_state_letters(int64_t state, char buf[32])
{
	static const char letters[] = "SDTtXZPI"; /* bits 0..7, as the kernel's sched_switch prints them */
	size_t n = 0;

	if ((state & 0xff) == 0)
		buf[n++] = 'R';
	for (int b = 0; b < 8; b++)
		if (state & (1 << b)) {
			if (n)
				buf[n++] = '|';
			buf[n++] = letters[b];
		}
	if (state & 0x100) /* TASK_REPORT_MAX: preempted while running */
		buf[n++] = '+';
	buf[n] = '\0';
	return buf;
}

/* A row of thread_state: thread idx in state from since to end (dur NULL when not ended); cpu, waker -1: NULL. */
static int state_row_of(struct sql_catalog *c, uint32_t idx, int64_t since, int64_t end, bool ended, const char *state,
			int64_t cpu, int64_t waker)
{
	struct sql_value v[8] = {
	    sql_int(since),
	    ended ? sql_int(end - since) : sql_null(SQL_INT),
	    sql_int(c->utid_base + idx),
	    sql_text(state, strlen(state)),
	    cpu >= 0 ? sql_int(cpu) : sql_null(SQL_INT),
	    waker >= 0 ? sql_int(waker) : sql_null(SQL_INT),
	    sql_null(SQL_INT), /* io_wait: not in the events tracebuf reads */
	    sql_int(c->trace_id),
	};
	return c->row(c->row_ctx, &c->fixed[SQL_THREAD_STATE], v);
}

static int state_row(struct sql_catalog *c, uint32_t idx, int64_t end, bool ended)
{
	const struct sql_thread *t = &c->threads[idx];

	return state_row_of(c, idx, t->since, end, ended, t->state, t->cpu, t->waker_utid);
}

/* The kept state before the open Running span, as a row of its own (the span is not a slice's). */
static int before_row(struct sql_catalog *c, uint32_t idx)
{
	struct sql_thread *t = &c->threads[idx];

	if (!t->has_before)
		return 0;
	t->has_before = false;
	return state_row_of(c, idx, t->before_since, t->since, true, t->before, -1, t->before_waker);
}

static int running_row(struct sql_catalog *c, uint32_t idx, const struct sql_run *run, int64_t after_end,
		       bool after_ended);

/*
 * The open state ends at ts: its row - or, with running_in_slices, the
 * state after a slice's span ends that span's pending row (after_dur),
 * and a state that a Running span follows is kept, to be written with
 * the span's slice (running's before_*) or, when the span is not a
 * slice's, as a row of its own when the span ends.
 */
static int state_close(struct sql_catalog *c, uint32_t idx, int64_t ts, bool to_running)
{
	struct sql_thread *t = &c->threads[idx];
	bool running = is_running(t->state);
	int rc;

	if (t->has_pending) { /* the state after a slice's span: its row is the span's (after_dur) */
		t->has_pending = false;
		return running_row(c, idx, &t->pending, ts, true);
	}
	if (c->running_in_slices && to_running && !running) {
		memcpy(t->before, t->state, sizeof(t->before));
		t->before_since = t->since;
		t->before_waker = t->waker_utid;
		t->has_before = true;
		return 0;
	}
	if (running && (rc = before_row(c, idx)) < 0)
		return rc;
	return state_row(c, idx, ts, true);
}

/* Close the thread's open state at ts (a row) and open `state` from ts. */
static int state_change(struct sql_catalog *c, uint32_t idx, int64_t ts, const char *state, int64_t cpu,
			int64_t waker)
{
	struct sql_thread *t = &c->threads[idx];
	int rc = t->open && !t->covered ? state_close(c, idx, ts, cpu >= 0 /* Running: the only state with a CPU */) : 0;
	size_t n = strnlen(state, sizeof(t->state) - 1);

	t->open = true;
	t->covered = false;
	memcpy(t->state, state, n); /* not snprintf: a state change is made per switch (2% of a load in vsnprintf) */
	t->state[n] = '\0';
	t->since = ts;
	t->cpu = cpu;
	t->waker_utid = waker;
	return rc;
}

static void thread_name(struct sql_thread *t, const struct field_at *at, const struct merged_record *r)
{
	char buf[COMM_LEN + 1] = "";

	/* the name it had (NUL-padded, as kept): nothing to copy, the case of nearly every switch */
	if (at->size == COMM_LEN && at->offset <= r->len && r->len - at->offset >= COMM_LEN &&
	    !memcmp(t->name, r->data + at->offset, COMM_LEN))
		return;
	if (field_str(at, r->data, r->len, buf, sizeof(buf)) >= 0)
		memcpy(t->name, buf, COMM_LEN); /* buf was zeroed: the name is NUL-padded */
}

/*
 * Whether the slice sc of this CPU, ending now, is its thread's whole
 * Running span (the thread is switched out here, Running since the slice
 * began, on this CPU): with running_in_slices it is then written once, to
 * running, and the thread's Running row is not (covered).  A slice of the
 * idle task, or one whose thread ran elsewhere since (lost switches), is
 * not: it and the Running row are written apart.
 */
static bool slice_is_running(struct sql_catalog *c, const struct sql_cpu *sc, int cpu, int64_t prev_idx)
{
	struct sql_thread *t = &c->threads[sc->thread];

	if (!c->running_in_slices || (prev_idx >= 0 && prev_idx != sc->thread) || !t->open || t->tid == 0 ||
	    t->since != sc->ts || t->cpu != cpu || !is_running(t->state))
		return false;
	t->covered = true;
	return true;
}

/* A row of running: the span, the state before it, and the state after it until after_end (NULL: not ended). */
static int running_row(struct sql_catalog *c, uint32_t idx, const struct sql_run *run, int64_t after_end,
		       bool after_ended)
{
	struct sql_value v[11] = {
	    sql_int(run->ts),
	    run->ended ? sql_int(run->dur) : sql_null(SQL_INT),
	    sql_int(run->cpu),
	    sql_int(c->utid_base + idx),
	    run->ended ? sql_text(run->end_state, strlen(run->end_state)) : sql_null(SQL_TEXT),
	    sql_int(run->prio),
	    sql_int(c->trace_id),
	    run->has_before ? sql_int(run->before_since) : sql_null(SQL_INT),
	    run->has_before ? sql_text(run->before, strlen(run->before)) : sql_null(SQL_TEXT),
	    run->has_before && run->before_waker >= 0 ? sql_int(run->before_waker) : sql_null(SQL_INT),
	    run->ended && after_ended ? sql_int(after_end - (run->ts + run->dur)) : sql_null(SQL_INT),
	};
	return c->row(c->row_ctx, &c->running, v);
}

/*
 * The CPU's slice sc ends at end (or the trace does: not ended).  A
 * slice that is its thread's Running span becomes the thread's pending
 * row of running, written when the state after it ends (or at once when
 * the span is still open); another is a row of sched_slice.
 */
static int slice_row(struct sql_catalog *c, const struct sql_cpu *sc, int cpu, int64_t end, bool ended,
		     const char *end_state, int64_t prev_idx)
{
	struct sql_thread *t = &c->threads[sc->thread];

	if (slice_is_running(c, sc, cpu, prev_idx)) {
		struct sql_run *run = &t->pending;
		*run = (struct sql_run){.ts = sc->ts, .dur = end - sc->ts, .cpu = cpu, .prio = sc->prio, .ended = ended,
					.has_before = t->has_before, .before_since = t->before_since,
					.before_waker = t->before_waker};
		memcpy(run->before, t->before, sizeof(run->before));
		size_t n = end_state ? strnlen(end_state, sizeof(run->end_state) - 1) : 0;
		memcpy(run->end_state, end_state ? end_state : "", n); /* not snprintf: once a switch */
		run->end_state[n] = '\0';
		t->has_before = false;
		t->has_pending = ended;
		return ended ? 0 : running_row(c, sc->thread, run, 0, false);
	}
	struct sql_value v[7] = {
	    sql_int(sc->ts),
	    ended ? sql_int(end - sc->ts) : sql_null(SQL_INT),
	    sql_int(cpu),
	    sql_int(c->utid_base + sc->thread),
	    end_state ? sql_text(end_state, strlen(end_state)) : sql_null(SQL_TEXT),
	    sql_int(sc->prio),
	    sql_int(c->trace_id),
	};
	return c->row(c->row_ctx, &c->fixed[SQL_SCHED_SLICE], v);
}

/*
 * sched_switch: the CPU's slice ends with prev's state letters, prev's
 * Running ends with them (pid 0, the idle task, has slices but no
 * states, as in Perfetto), and next runs.
 */
static int on_switch(struct sql_catalog *c, const struct merged_record *r)
{
	int64_t prev, state, next, prio, ts = (int64_t)r->ts;
	int64_t pi, ni;
	char letters[32];
	int rc;

	if (!field_int(&c->prev_pid, r->data, r->len, &prev) || !field_int(&c->prev_state, r->data, r->len, &state) ||
	    !field_int(&c->next_pid, r->data, r->len, &next) || !field_int(&c->next_prio, r->data, r->len, &prio))
		return 0; /* a short record: nothing to follow */
	sql_state_letters(state, letters);
	if ((pi = thread_of(c, prev, ts)) < 0 || (ni = thread_of(c, next, ts)) < 0)
		return -ENOMEM;
	thread_name(&c->threads[pi], &c->prev_comm, r);
	thread_name(&c->threads[ni], &c->next_comm, r);
	struct sql_cpu *sc = (size_t)r->cpu < c->ncpus ? &c->cpus[r->cpu] : NULL;
	if (sc && sc->has && (rc = slice_row(c, sc, r->cpu, ts, true, letters, pi)) < 0)
		return rc;
	if (sc)
		*sc = (struct sql_cpu){.has = true, .ts = ts, .prio = prio, .thread = (uint32_t)ni};
	if (prev != 0 && (rc = state_change(c, (uint32_t)pi, ts, letters, -1, -1)) < 0)
		return rc;
	if (next != 0 && (rc = state_change(c, (uint32_t)ni, ts, "Running", r->cpu, -1)) < 0)
		return rc;
	return 0;
}

/* Blocked: a state after a switch-out that was not a preemption (R, R+) and not Running. */
static bool is_blocked(const struct sql_thread *t)
{
	return t->open && t->state[0] != 'R'; /* not R, R+, Running */
}

/* sched_waking (or sched_wakeup): a blocked thread becomes R with its waker; others are spurious. */
static int on_waking(struct sql_catalog *c, const struct merged_record *r)
{
	int64_t pid, ts = (int64_t)r->ts, wi, ki;

	if (!field_int(&c->woken_pid, r->data, r->len, &pid) || pid == 0)
		return 0;
	if ((wi = thread_of(c, pid, ts)) < 0 || (ki = thread_of(c, record_pid(r), ts)) < 0)
		return -ENOMEM;
	struct sql_thread *t = &c->threads[wi];
	if (!t->open || is_blocked(t))
		return state_change(c, (uint32_t)wi, ts, "R", -1, c->utid_base + ki);
	c->spurious++;
	struct sql_value v[4] = {sql_int(ts), sql_int(c->utid_base + wi), sql_int(c->utid_base + ki),
				 sql_int(c->trace_id)};
	return c->row(c->row_ctx, &c->fixed[SQL_SPURIOUS_WAKEUP], v);
}

int sql_derived_feed(struct sql_catalog *c, const struct merged_record *r)
{
	if (r->id == 0)
		return 0;
	if (r->id == c->switch_id)
		return on_switch(c, r);
	if (r->id == c->waking_id)
		return on_waking(c, r);
	return 0;
}

/* The open slices and states (dur NULL), then one thread and one process row per thread. */
int sql_derived_end(struct sql_catalog *c, const struct tb_schema *s)
{
	int rc = 0;

	for (size_t cpu = 0; rc == 0 && cpu < c->ncpus; cpu++)
		if (c->cpus[cpu].has)
			rc = slice_row(c, &c->cpus[cpu], (int)cpu, 0, false, NULL, -1);
	for (size_t i = 0; rc == 0 && i < c->tids.count; i++) {
		struct sql_thread *t = &c->threads[i];
		size_t len = strnlen(t->name, COMM_LEN);
		const char *name = t->name;
		if (t->has_pending) /* the state after its last span is open: that span's row says so */
			rc = running_row(c, (uint32_t)i, &t->pending, 0, false);
		else if (t->open && !t->covered && (rc = before_row(c, (uint32_t)i)) == 0)
			rc = state_row(c, (uint32_t)i, 0, false);
		if (rc < 0)
			break;
		if (!len)
			name = tb_schema_comm(s, (int)t->tid, &len);
		struct sql_value th[7] = {sql_int(c->utid_base + (int64_t)i), sql_int(t->tid), sql_text(name, len),
					  sql_int(c->upid_base + (int64_t)i), sql_int(t->first_ts), sql_int(t->last_ts),
					  sql_int(c->trace_id)};
		struct sql_value pr[4] = {sql_int(c->upid_base + (int64_t)i), sql_int(t->tid), sql_text(name, len),
					  sql_int(c->trace_id)};
		if ((rc = c->row(c->row_ctx, &c->fixed[SQL_THREAD], th)) == 0)
			rc = c->row(c->row_ctx, &c->fixed[SQL_PROCESS], pr);
	}
	return rc;
}
