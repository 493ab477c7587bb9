// SPDX-License-Identifier: MIT
/*
 * chrome_json.c - a capture as Chrome / Perfetto trace-event JSON
 * (tracebuf/chrome.h).
 *
 * One pass over the merged records.  Per CPU it remembers since when the
 * current task runs (from the last sched_switch there), so each switch
 * closes one slice; per task its comm (for the metadata at the end) and
 * the sum of its PMU sample periods.  Each event's role is decided once
 * per ID.  The text is built in a buffer written out in large pieces.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "util/id_table.h"
#include "intern.h"
#include "decode/blob_store.h"
#include "decode/capture_source.h"
#include "json_out.h"
#include "merge.h"
#include "print/render.h"
#include "decode/schema_kernel.h"
#include "tracebuf/chrome.h"
#include "chrome_stream.h"

#define COMM_LEN 16
#define FLUSH_AT (256 * 1024)
#define STR_MAX 256

enum role { R_UNSEEN = 0, R_INSTANT, R_SWITCH, R_FUNC_EXIT, R_SKIP, R_COUNTERS, R_SAMPLE, R_TEXT };

/* An instant named by a printf event's text shows this much of it; args.text holds it whole. */
#define TEXT_NAME_MAX 80

struct event_info {
	uint8_t role;
	const struct tb_format *f;
	const char *system;
};

struct cpu_run {
	bool have; /* a switch was seen: since/pid/comm are known */
	uint64_t since;
	int32_t pid;
};

struct task_info {
	char comm[COMM_LEN];
	uint64_t periods; /* PMU sample periods summed */
};

struct chrome {
	struct tb_capture *capture;
	struct tb_schema *schema;
	const struct tb_chrome_opts *o;
	struct tb_chrome_totals *t;
	FILE *out;
	struct tb_strbuf b;
	struct tb_strbuf text; /* a printf event's text, rendered as report prints it */
	bool first; /* no event written yet: no comma before the next */
	struct cpu_run *cpus;
	int ncpus;
	struct pidmap pids;
	struct task_info *tasks;
	size_t tasks_cap;
	struct id_table events; /* struct event_info by ID, in blocks of the IDs met (id_table.h) */
	struct field_at prev_comm, prev_pid, next_comm, next_pid, prev_state;
	struct field_at func, calltime, rettime, depth;
	struct field_at period, ip;
	int fatal;
};

/* ------------------------------------------------------------ output */

static void flush(struct chrome *c, bool force)
{
	if (c->b.len && (force || c->b.len >= FLUSH_AT)) {
		if (fwrite(c->b.buf, 1, c->b.len, c->out) != c->b.len && !c->fatal)
			c->fatal = -EIO;
		sb_reset(&c->b);
	}
}

/* `{"ph":"P","name":NAME,"pid":P,"tid":T,"ts":TS` - the caller adds the rest and the "}". */
static void begin_event(struct chrome *c, char ph, const char *name, size_t name_len, int64_t pid, int64_t tid,
			uint64_t ts)
{
	sb_puts(&c->b, c->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
	c->first = false;
	sb_putc(&c->b, ph);
	sb_puts(&c->b, "\",\"name\":");
	json_str(&c->b, name, name_len);
	sb_puts(&c->b, ",\"pid\":");
	json_i64(&c->b, pid);
	sb_puts(&c->b, ",\"tid\":");
	json_i64(&c->b, tid);
	sb_puts(&c->b, ",\"ts\":");
	json_us(&c->b, ts);
}

static void put_cat(struct chrome *c, const char *cat)
{
	sb_puts(&c->b, ",\"cat\":");
	json_str(&c->b, cat, SIZE_MAX);
}

static void put_dur(struct chrome *c, uint64_t ns)
{
	sb_puts(&c->b, ",\"dur\":");
	json_us(&c->b, ns);
}

/* ------------------------------------------------------------- tasks */

static struct task_info *task(struct chrome *c, int32_t pid)
{
	bool added;
	int64_t i = pidmap_add(&c->pids, pid, &added);

	if (i < 0)
		return NULL;
	struct task_info *tasks = intern_room(c->tasks, &c->tasks_cap, (size_t)i, sizeof(*tasks));
	if (!tasks)
		return NULL;
	c->tasks = tasks;
	if (added) {
		memset(&c->tasks[i], 0, sizeof(c->tasks[i]));
		size_t len;
		const char *comm = tb_schema_comm(c->schema, pid, &len);
		memcpy(c->tasks[i].comm, comm, len < COMM_LEN - 1 ? len : COMM_LEN - 1);
	}
	return &c->tasks[i];
}

/* The task is seen, under comm when the record names it (sched_switch). */
static struct task_info *see_task(struct chrome *c, int32_t pid, const char *comm)
{
	struct task_info *ti = task(c, pid);

	if (!ti)
		c->fatal = -ENOMEM;
	else if (comm && comm[0])
		snprintf(ti->comm, COMM_LEN, "%.15s", comm);
	return ti;
}

/* ------------------------------------------------------------ events */

static int32_t common_pid(const struct merged_record *r)
{
	int32_t pid = 0;

	if (r->len >= 8)
		memcpy(&pid, r->data + 4, 4);
	return pid;
}

/* A field as a JSON value: integers, fixed and dynamic strings; false for what is neither. */
static bool put_field_value(struct chrome *c, const struct tb_schema_field *fd, const struct merged_record *r)
{
	struct field_at fa = {fd->offset, fd->size, true, fd->is_signed};
	char s[STR_MAX];
	int64_t v;

	if (fd->kind != TB_SCHEMA_FIELD_STATIC) {
		uint32_t loc;
		if (!fd->is_string || fd->offset > r->len || r->len - fd->offset < 4)
			return false;
		memcpy(&loc, r->data + fd->offset, 4);
		uint32_t at = (loc & 0xffff) + (fd->kind == TB_SCHEMA_FIELD_REL_LOC ? fd->offset + 4 : 0), n = loc >> 16;
		if (at > r->len || r->len - at < n)
			return false;
		json_str(&c->b, (const char *)r->data + at, n);
		return true;
	}
	if (fd->is_string) {
		if (field_str(&fa, r->data, r->len, s, sizeof(s)) < 0)
			return false;
		json_str(&c->b, s, sizeof(s));
		return true;
	}
	if (fd->is_array || !field_int(&fa, r->data, r->len, &v))
		return false;
	if (fd->is_signed)
		json_i64(&c->b, v);
	else
		json_u64(&c->b, (uint64_t)v);
	return true;
}

/* The event's own fields as "args". */
static void put_args(struct chrome *c, const struct tb_format *f, const struct merged_record *r)
{
	bool any = false;

	for (size_t i = 0; i < f->nfields; i++) {
		const struct tb_schema_field *fd = &f->fields[i];
		if (!strncmp(fd->name, "common_", 7))
			continue;
		size_t mark = c->b.len;
		sb_puts(&c->b, any ? "," : ",\"args\":{");
		json_str(&c->b, fd->name, SIZE_MAX);
		sb_putc(&c->b, ':');
		if (put_field_value(c, fd, r))
			any = true;
		else
			c->b.len = mark; /* a value we cannot show: leave the field out */
	}
	if (any)
		sb_putc(&c->b, '}');
}

static void on_instant(struct chrome *c, const struct event_info *ev, const struct merged_record *r)
{
	int32_t pid = common_pid(r);

	see_task(c, pid, NULL);
	begin_event(c, 'i', ev->f->name, SIZE_MAX, pid, pid, r->ts);
	put_cat(c, ev->system);
	sb_puts(&c->b, ",\"s\":\"t\"");
	put_args(c, ev->f, r);
	sb_putc(&c->b, '}');
	c->t->instants++;
}

/*
 * A printf event (tb_printf's bprint, bputs, a marker's print): an instant
 * named by its text, the line `report` prints after the event's name, so
 * a timeline shows what the program said; args.text holds it whole.  A
 * record the printer cannot format falls back to its fields.
 */
static void on_text(struct chrome *c, const struct event_info *ev, const struct merged_record *r)
{
	const struct tb_render_record ref = {.cpu = r->cpu, .ts = r->ts, .data = r->data, .len = r->len};
	struct tb_problem err;
	int32_t pid = common_pid(r);

	c->text.len = 0;
	if (render_event_info(c->schema, &ref, &c->text, &err) != 0 || !c->text.len) {
		on_instant(c, ev, r);
		return;
	}
	while (c->text.len && c->text.buf[c->text.len - 1] == '\n')
		c->text.len--;
	see_task(c, pid, NULL);
	begin_event(c, 'i', c->text.buf, c->text.len < TEXT_NAME_MAX ? c->text.len : TEXT_NAME_MAX, pid, pid,
		    r->ts);
	put_cat(c, ev->system);
	sb_puts(&c->b, ",\"s\":\"t\",\"args\":{\"event\":");
	json_str(&c->b, ev->f->name, SIZE_MAX);
	sb_puts(&c->b, ",\"text\":");
	json_str(&c->b, c->text.buf, c->text.len);
	sb_puts(&c->b, "}}");
	c->t->instants++;
}

/* The task that ran on the CPU since the last switch there, as a slice on the CPU's and its own track. */
static void close_run(struct chrome *c, const struct merged_record *r, int32_t pid, const char *comm)
{
	struct cpu_run *run = &c->cpus[r->cpu];
	char label[COMM_LEN + 16];

	if (!run->have || pid == 0 || run->pid != pid)
		return;
	snprintf(label, sizeof(label), "%s %d", comm, (int)pid);
	begin_event(c, 'X', label, SIZE_MAX, TB_CHROME_CPU_PID, r->cpu, run->since);
	put_dur(c, r->ts - run->since);
	put_cat(c, "sched");
	sb_puts(&c->b, "}");
	begin_event(c, 'X', "running", SIZE_MAX, pid, pid, run->since);
	put_dur(c, r->ts - run->since);
	put_cat(c, "sched");
	sb_puts(&c->b, ",\"args\":{\"cpu\":");
	json_i64(&c->b, r->cpu);
	sb_puts(&c->b, "}}");
	c->t->cpu_slices++;
	c->t->task_slices++;
}

static void on_switch(struct chrome *c, const struct merged_record *r)
{
	char prev_comm[COMM_LEN + 1], next_comm[COMM_LEN + 1];
	int64_t prev, next;

	if (!field_int(&c->prev_pid, r->data, r->len, &prev) || !field_int(&c->next_pid, r->data, r->len, &next) ||
	    field_str(&c->prev_comm, r->data, r->len, prev_comm, sizeof(prev_comm)) < 0 ||
	    field_str(&c->next_comm, r->data, r->len, next_comm, sizeof(next_comm)) < 0)
		return;
	see_task(c, (int32_t)prev, prev_comm);
	see_task(c, (int32_t)next, next_comm);
	close_run(c, r, (int32_t)prev, prev_comm);
	c->cpus[r->cpu] = (struct cpu_run){.have = true, .since = r->ts, .pid = (int32_t)next};
}

/* A function's name: user symbols first, then the kernel's, else its address. */
static void put_function_name(struct chrome *c, uint64_t addr, char *buf, size_t size)
{
	struct tb_usym us;
	uint64_t start, len;
	const char *module, *name;

	if (c->o->usyms && tb_usyms_lookup(c->o->usyms, addr, &us))
		snprintf(buf, size, "%s", us.name);
	else if ((name = tb_schema_symbol(c->schema, addr, &start, &len, &module)))
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)addr);
}

static void on_func_exit(struct chrome *c, const struct merged_record *r)
{
	int64_t func, call, ret, depth;
	char name[STR_MAX];
	int32_t pid = common_pid(r);

	if (!field_int(&c->func, r->data, r->len, &func) || !field_int(&c->calltime, r->data, r->len, &call) ||
	    !field_int(&c->rettime, r->data, r->len, &ret) || (uint64_t)ret < (uint64_t)call)
		return;
	see_task(c, pid, NULL);
	put_function_name(c, (uint64_t)func, name, sizeof(name));
	/* calltime and rettime are stamps of the trace clock: converted as the records' own are (merge.h). */
	uint64_t start = tb_capture_ts_ns(c->capture, (uint64_t)call), end = tb_capture_ts_ns(c->capture, (uint64_t)ret);
	begin_event(c, 'X', name, SIZE_MAX, pid, pid, start);
	put_dur(c, end - start);
	put_cat(c, "func");
	if (field_int(&c->depth, r->data, r->len, &depth)) {
		sb_puts(&c->b, ",\"args\":{\"depth\":");
		json_i64(&c->b, depth);
		sb_putc(&c->b, '}');
	}
	sb_putc(&c->b, '}');
	c->t->calls++;
}

/* Counter values: each field of the record, on the task's process. */
static void on_counters(struct chrome *c, const struct event_info *ev, const struct merged_record *r)
{
	int32_t pid = common_pid(r);

	see_task(c, pid, NULL);
	begin_event(c, 'C', ev->f->name, SIZE_MAX, pid, pid, r->ts);
	put_cat(c, ev->system);
	size_t mark = c->b.len;
	put_args(c, ev->f, r);
	if (c->b.len == mark)
		sb_puts(&c->b, ",\"args\":{}");
	sb_putc(&c->b, '}');
	c->t->counters++;
}

/* A PMU sample: an instant where it hit, and the task's running sum of sample periods. */
static void on_sample(struct chrome *c, const struct event_info *ev, const struct merged_record *r)
{
	int32_t pid = common_pid(r);
	int64_t period;
	struct task_info *ti;

	on_instant(c, ev, r);
	if (!field_int(&c->period, r->data, r->len, &period) || !(ti = see_task(c, pid, NULL)))
		return;
	ti->periods += (uint64_t)period;
	begin_event(c, 'C', "pmu_sample periods", SIZE_MAX, pid, pid, r->ts);
	sb_puts(&c->b, ",\"args\":{\"sum\":");
	json_u64(&c->b, ti->periods);
	sb_puts(&c->b, "}}");
	c->t->counters++;
}

/* ------------------------------------------------------------- roles */

static bool named(const struct event_info *ev, const char *system, const char *name)
{
	return !strcmp(ev->f->name, name) && (!system || !strcmp(ev->system, system));
}

/* What an event's records become, decided on its first record. */
static uint8_t role_of(struct chrome *c, struct event_info *ev, uint16_t id)
{
	ev->f = tb_schema_find_event(c->schema, id, &ev->system);
	if (!ev->f)
		return R_SKIP;
	if (!ev->system)
		ev->system = "";
	if (named(ev, "sched", "sched_switch") && field_at_find(ev->f, "prev_pid", &c->prev_pid) &&
	    field_at_find(ev->f, "next_pid", &c->next_pid) && field_at_find(ev->f, "prev_comm", &c->prev_comm) &&
	    field_at_find(ev->f, "next_comm", &c->next_comm))
		return R_SWITCH;
	if (named(ev, NULL, "funcgraph_exit") && field_at_find(ev->f, "func", &c->func) &&
	    field_at_find(ev->f, "calltime", &c->calltime) && field_at_find(ev->f, "rettime", &c->rettime)) {
		field_at_find(ev->f, "depth", &c->depth);
		return R_FUNC_EXIT;
	}
	if (named(ev, NULL, "funcgraph_entry"))
		return R_SKIP; /* the exit carries the call's start and end */
	if (named(ev, "tracebuf", "pmu_counters"))
		return R_COUNTERS;
	if (named(ev, "tracebuf", "pmu_sample") && field_at_find(ev->f, "period", &c->period))
		return R_SAMPLE;
	if (named(ev, "ftrace", "bprint") || named(ev, "ftrace", "bputs") || named(ev, "ftrace", "print"))
		return R_TEXT;
	return R_INSTANT;
}

/*
 * A blob reference: an instant on its CPU's track (the reference names no
 * task) with the blob's length and, when the capture saved it, its CRC-32
 * and the first 64 bytes; else why it is not there.
 */
static void on_blob(struct chrome *c, const struct merged_record *r)
{
	static const char *const why[] = {
	    [BLOB_NO_STORE] = "not in the pages read",
	    [BLOB_NOT_SAVED] = "overwritten before it was saved",
	    [BLOB_DAMAGED] = "its saved copy is damaged",
	};
	uint32_t len = (uint32_t)r->data[4] | (uint32_t)r->data[5] << 8 | (uint32_t)r->data[6] << 16 |
		       (uint32_t)r->data[7] << 24, crc = 0;
	uint8_t *bytes;
	enum blob_fate fate = blob_store_get(capture_blobs(c->capture), r->data, &bytes, &crc);
	char hex[9];

	begin_event(c, 'i', "blob", SIZE_MAX, TB_CHROME_CPU_PID, r->cpu, r->ts);
	put_cat(c, "tracebuf");
	sb_puts(&c->b, ",\"s\":\"t\",\"args\":{\"len\":");
	json_u64(&c->b, len);
	if (fate == BLOB_FOUND) {
		snprintf(hex, sizeof(hex), "%08x", crc);
		sb_puts(&c->b, ",\"crc32\":");
		json_str(&c->b, hex, SIZE_MAX);
		sb_puts(&c->b, ",\"head\":");
		json_str(&c->b, (const char *)bytes, len < 64 ? len : 64);
	} else {
		sb_puts(&c->b, ",\"lost\":");
		json_str(&c->b, why[fate], SIZE_MAX);
	}
	sb_puts(&c->b, "}}");
	free(bytes);
	c->t->instants++;
}

static void feed(struct chrome *c, const struct merged_record *r)
{
	struct event_info *ev = id_table_slot(&c->events, r->id);

	if (!ev) {
		c->fatal = -ENOMEM;
		return;
	}
	if (r->blob) {
		on_blob(c, r);
		flush(c, false);
		return;
	}
	if (ev->role == R_UNSEEN)
		ev->role = role_of(c, ev, r->id);
	switch (ev->role) {
	case R_SWITCH:
		on_switch(c, r);
		break;
	case R_FUNC_EXIT:
		on_func_exit(c, r);
		break;
	case R_COUNTERS:
		on_counters(c, ev, r);
		break;
	case R_SAMPLE:
		on_sample(c, ev, r);
		break;
	case R_INSTANT:
		on_instant(c, ev, r);
		break;
	case R_TEXT:
		on_text(c, ev, r);
		break;
	default:
		break;
	}
	flush(c, false);
}

/* ---------------------------------------------------------- metadata */

static void put_name_meta(struct chrome *c, const char *what, int64_t pid, int64_t tid, const char *name)
{
	sb_puts(&c->b, c->first ? "\n{\"ph\":\"M\",\"name\":" : ",\n{\"ph\":\"M\",\"name\":");
	c->first = false;
	json_str(&c->b, what, SIZE_MAX);
	sb_puts(&c->b, ",\"pid\":");
	json_i64(&c->b, pid);
	sb_puts(&c->b, ",\"tid\":");
	json_i64(&c->b, tid);
	sb_puts(&c->b, ",\"args\":{\"name\":");
	json_str(&c->b, name, SIZE_MAX);
	sb_puts(&c->b, "}}");
}

static void put_metadata(struct chrome *c)
{
	char label[64];

	put_name_meta(c, "process_name", TB_CHROME_CPU_PID, 0, "CPUs");
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		snprintf(label, sizeof(label), "CPU %d", cpu);
		put_name_meta(c, "thread_name", TB_CHROME_CPU_PID, cpu, label);
	}
	for (size_t i = 0; i < c->pids.count; i++) {
		int32_t pid = c->pids.pids[i];
		snprintf(label, sizeof(label), "%.*s %d", COMM_LEN, c->tasks[i].comm, (int)pid);
		put_name_meta(c, "process_name", pid, pid, label);
		put_name_meta(c, "thread_name", pid, pid, label);
		c->t->tracks++;
		flush(c, false);
	}
}

/* ------------------------------------------------------- the stream */

struct chrome *chrome_begin(struct tb_capture *cap, FILE *out, const struct tb_chrome_opts *opts,
			    struct tb_chrome_totals *totals, uint32_t mult, uint32_t shift)
{
	static const struct tb_chrome_opts defaults;
	struct chrome *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	memset(totals, 0, sizeof(*totals));
	*c = (struct chrome){.capture = cap, .schema = tb_capture_schema(cap), .o = opts ? opts : &defaults,
			     .t = totals, .out = out, .first = true, .ncpus = tb_capture_cpu_slots(cap)};
	c->cpus = calloc(c->ncpus > 0 ? (size_t)c->ncpus : 1, sizeof(*c->cpus));
	id_table_init(&c->events, sizeof(struct event_info));
	if (!c->cpus) {
		chrome_free(c);
		return NULL;
	}
	sb_puts(&c->b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"tracebuf convert\",\"clock\":");
	json_str(&c->b, tb_capture_clock(cap), SIZE_MAX);
	if (mult) { /* the stamps were cycles: say how they became nanoseconds */
		sb_puts(&c->b, ",\"tsc2nsec\":{\"mult\":");
		json_i64(&c->b, mult);
		sb_puts(&c->b, ",\"shift\":");
		json_i64(&c->b, shift);
		sb_putc(&c->b, '}');
	}
	sb_puts(&c->b, "},\"traceEvents\":[");
	return c;
}

int chrome_feed(struct chrome *c, const struct merged_record *r)
{
	if (!c->fatal)
		feed(c, r);
	return c->fatal;
}

int chrome_end(struct chrome *c, const struct merge *m)
{
	if (!c->fatal)
		c->fatal = m->fatal;
	c->t->records = m->records;
	c->t->lost_pages = m->lost_pages;
	put_metadata(c);
	sb_puts(&c->b, "\n]}\n");
	if (c->b.oom)
		c->fatal = -ENOMEM;
	flush(c, true);
	if (fflush(c->out) != 0 && !c->fatal)
		c->fatal = -EIO;
	return c->fatal;
}

void chrome_free(struct chrome *c)
{
	if (!c)
		return;
	sb_free(&c->b);
	sb_free(&c->text);
	pidmap_free(&c->pids);
	free(c->tasks);
	free(c->cpus);
	id_table_free(&c->events);
	free(c);
}

int tb_chrome_json_write(struct tb_capture *cap, FILE *out, const struct tb_chrome_opts *opts,
			 struct tb_chrome_totals *totals)
{
	struct tb_chrome_totals scratch;
	struct merged_record r;
	struct merge m;
	struct chrome *c;
	int rc;

	if (!cap || !out)
		return -EINVAL;
	if (!totals)
		totals = &scratch;
	memset(totals, 0, sizeof(*totals));
	rc = merge_open(&m, cap);
	if (rc < 0)
		return rc;
	m.want_blobs = true;
	c = chrome_begin(cap, out, opts, totals, m.mult, m.shift);
	if (!c) {
		merge_close(&m);
		return -ENOMEM;
	}
	while (merge_next(&m, &r) == 1 && chrome_feed(c, &r) == 0)
		;
	rc = chrome_end(c, &m);
	merge_close(&m);
	chrome_free(c);
	return rc;
}
