// SPDX-License-Identifier: MIT
/*
 * funcgraph.c - a capture as the kernel's function_graph text
 * (tracebuf/funcgraph.h).
 *
 * The layout follows kernel/trace/trace_functions_graph.c: per CPU it
 * remembers the last task (for the "=>" banner), the depth comments are
 * indented at, and which function was entered at each depth (to tell a
 * close whose entry was seen from one whose entry was lost).  Records are
 * merged across CPUs by time like the `trace` file; a CPU's next record is
 * always read before its current one is printed, because an entry whose
 * exit comes right after it on the same CPU is printed as a leaf.  The
 * pages are walked by pagework.c, one at a time, as report.c's are.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagework.h"
#include "render.h"
#include "decode/schema_kernel.h"
#include "strbuf.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/page.h"
#include "tracebuf/report.h"

/* The kernel's limits: per-CPU depths remembered, spaces per level. */
#define RETFUNC_DEPTH 50
#define INDENT 2
#define PROCINFO_LENGTH 14
/* A depth beyond this is damage, not a call stack (and would print a page of blanks). */
#define DEPTH_MAX 4096
#define FLUSH_AT (256 * 1024)
/* Distinct entry/exit event IDs one capture may use. */
#define MAX_LAYOUTS 16

enum kind { KIND_UNSEEN = 0, KIND_ENTRY, KIND_EXIT, KIND_OTHER };

/* Where an entry's or exit's fields are. */
struct layout {
	uint32_t func, depth, parent, overrun, calltime, rettime;
	bool has_parent, has_overrun;
};

struct loss {
	bool any, count_unknown;
	uint64_t count;
};

struct stream {
	int cpu;
	bool done, has_next;
	struct pw_cursor steps;   /* the CPU's pages as walked (pagework.h) */
	struct tb_record next;    /* data, len and ts of the next record */
	const char *next_file;    /* where it lies */
	uint64_t next_offset;
	struct loss loss;
	/* The kernel's struct fgraph_cpu_data. */
	int32_t last_pid;
	int depth;
	uint64_t enter_funcs[RETFUNC_DEPTH];
};

/* A record copied out of its page: reading ahead may replace the page. */
struct current {
	int cpu;
	uint64_t ts;
	uint32_t len;
	uint64_t file_offset;
	const char *file;
	uint8_t *data;
};

struct graph {
	struct tb_capture *capture;
	struct tb_schema *schema;
	struct tb_usyms *usyms;
	const struct tb_graph_opts *o;
	FILE *out;
	struct tb_strbuf text;
	struct tb_graph_totals t;
	struct stream *cpus;
	int ncpus;
	int cpu_width;
	int fatal;
	uint8_t kind[65536];
	struct layout layout[MAX_LAYOUTS]; /* of the few IDs that are entries or exits */
	uint16_t layout_id[MAX_LAYOUTS];
	unsigned nlayouts;
	struct current cur;
	size_t cur_cap;
};

/* Fields read by hand, little-endian like the host. */
static uint64_t u64_at(const uint8_t *p, uint32_t off)
{
	uint64_t v;
	memcpy(&v, p + off, 8);
	return v;
}

static uint32_t u32_at(const uint8_t *p, uint32_t off)
{
	uint32_t v;
	memcpy(&v, p + off, 4);
	return v;
}

static uint16_t id_of(const uint8_t *data)
{
	uint16_t id;
	memcpy(&id, data, 2);
	return id;
}

static int32_t pid_of(const uint8_t *data)
{
	int32_t pid;
	memcpy(&pid, data + 4, 4);
	return pid;
}

/* ----------------------------------------------------- record layouts */

static bool field_at(const struct tb_format *f, const char *name, uint32_t size, uint32_t *offset)
{
	const struct tb_schema_field *fl = tb_format_field(f, name);

	if (!fl || fl->kind != TB_SCHEMA_FIELD_STATIC || fl->size != size)
		return false;
	*offset = fl->offset;
	return true;
}

/* Is this format an entry or an exit, and where are its fields? */
static enum kind classify(const struct tb_format *f, struct layout *l)
{
	memset(l, 0, sizeof(*l));
	if (!field_at(f, "func", 8, &l->func) || !field_at(f, "depth", 4, &l->depth))
		return KIND_OTHER;
	if (!strcmp(f->name, "funcgraph_entry")) {
		l->has_parent = field_at(f, "parent_ip", 8, &l->parent);
		return KIND_ENTRY;
	}
	if (!strcmp(f->name, "funcgraph_exit") && field_at(f, "calltime", 8, &l->calltime) &&
	    field_at(f, "rettime", 8, &l->rettime)) {
		l->has_overrun = field_at(f, "overrun", 4, &l->overrun);
		return KIND_EXIT;
	}
	return KIND_OTHER;
}

static const struct layout *layout_of(const struct graph *g, uint16_t id)
{
	for (unsigned i = 0; i < g->nlayouts; i++)
		if (g->layout_id[i] == id)
			return &g->layout[i];
	return NULL;
}

static enum kind kind_of(struct graph *g, const uint8_t *data, uint32_t len, const struct layout **l)
{
	uint16_t id;
	const struct tb_format *f;
	struct layout found;
	const char *system;

	if (len < 8)
		return KIND_OTHER;
	id = id_of(data);
	if (g->kind[id] == KIND_UNSEEN) {
		f = tb_schema_find_event(g->schema, id, &system);
		g->kind[id] = f ? (uint8_t)classify(f, &found) : KIND_OTHER;
		if (g->kind[id] != KIND_OTHER) {
			if (g->nlayouts == sizeof(g->layout_id) / sizeof(g->layout_id[0]))
				g->kind[id] = KIND_OTHER;
			else {
				g->layout_id[g->nlayouts] = id;
				g->layout[g->nlayouts++] = found;
			}
		}
	}
	*l = g->kind[id] == KIND_OTHER ? NULL : layout_of(g, id);
	return (enum kind)g->kind[id];
}

/* ---------------------------------------------------------- streams */

static void note_page_loss(struct stream *s, const struct tb_page_header *h)
{
	if (!h->lost)
		return;
	s->loss.any = true;
	if (h->lost_stored)
		s->loss.count += h->lost_count;
	else
		s->loss.count_unknown = true;
}

struct page_ctx {
	struct graph *g;
	struct stream *s;
};

/* What comes before a CPU's next record: a page's loss, and pages the capture could not give whole. */
static void page_step(void *ctx, const struct pw_unit *u, const struct pw_step *st)
{
	struct page_ctx *pc = ctx;
	const char *file = u->file[st->page];
	uint64_t at = u->file_offset[st->page] + st->off;

	if (st->kind == PW_PAGE)
		note_page_loss(pc->s, &u->hdr[st->page]);
	else if (st->kind == PW_BAD_PAGE)
		tb_capture_problem(pc->g->capture, file, at, "%s; sub-buffer skipped", st->reason);
	else if (st->kind == PW_PAGE_ERROR)
		tb_capture_problem(pc->g->capture, file, at, "%s; rest of the sub-buffer skipped", st->reason);
	/* PW_ZERO_PAGE: no records, no loss: nothing to say in a graph. */
}

/* Read the CPU's next data record into s->next; false when there is none. */
static bool advance(struct graph *g, struct stream *s)
{
	struct page_ctx pc = {g, s};
	const struct pw_step *st = s->done ? NULL : pw_cursor_next_record(&s->steps, page_step, &pc);

	s->has_next = st != NULL;
	if (st) {
		pw_record_at(&s->steps, st, &s->next, &s->next_file, &s->next_offset);
		return true;
	}
	if (s->steps.oom && !g->fatal)
		g->fatal = -ENOMEM;
	s->done = true;
	return false;
}

static struct stream *earliest(struct graph *g)
{
	struct stream *best = NULL;

	for (int i = 0; i < g->ncpus; i++)
		if (g->cpus[i].has_next && (!best || g->cpus[i].next.ts < best->next.ts))
			best = &g->cpus[i];
	return best;
}

/* Copy the stream's next record into g->cur. */
static bool take_current(struct graph *g, struct stream *s)
{
	if (s->next.len + 64 > g->cur_cap) {
		size_t cap = s->next.len + 64;
		uint8_t *grown = realloc(g->cur.data, cap);
		if (!grown) {
			g->fatal = -ENOMEM;
			return false;
		}
		g->cur.data = grown;
		g->cur_cap = cap;
	}
	memcpy(g->cur.data, s->next.data, s->next.len);
	memset(g->cur.data + s->next.len, 0, 64); /* a string read past the record still ends */
	g->cur.cpu = s->cpu;
	g->cur.ts = s->next.ts;
	g->cur.len = s->next.len;
	g->cur.file = s->next_file;
	g->cur.file_offset = s->next_offset;
	return true;
}

/* ------------------------------------------------------------ columns */

static void put_fmt(struct graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put_fmt(struct graph *g, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(&g->text, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void put_spaces(struct graph *g, long n)
{
	char *p = n > 0 ? sb_room(&g->text, (size_t)n) : NULL;

	if (p) {
		memset(p, ' ', (size_t)n);
		sb_added(&g->text, (size_t)n);
	}
}

/* x86-64 and arm64 user space: the lower half of the address space. */
#define USER_SPACE_END 0x800000000000ull

/*
 * %ps: the function's name, or its address in hex.  A user address is
 * named from the objects only: the schema's table names any address after
 * its nearest symbol, however far, so it would misname one in a gap.
 */
static void put_symbol(struct graph *g, uint64_t addr, bool with_offset)
{
	struct tb_usym sym;
	const char *name = NULL;

	if (g->usyms && tb_usyms_lookup(g->usyms, addr, &sym)) {
		sb_puts(&g->text, sym.name);
		if (with_offset)
			put_fmt(g, "+0x%llx/0x%llx", (unsigned long long)sym.offset,
				(unsigned long long)sym.size);
		return;
	}
	uint64_t start = 0;

	if (!g->usyms || addr >= USER_SPACE_END)
		name = tb_schema_symbol(g->schema, addr, &start, NULL, NULL);
	if (name && !with_offset) {
		sb_puts(&g->text, name);
		return;
	}
	if (name) {
		put_fmt(g, "%s+0x%llx", name, (unsigned long long)(addr - start));
		return;
	}
	put_fmt(g, "0x%llx", (unsigned long long)addr);
}

static void put_cpu(struct graph *g, int cpu)
{
	put_fmt(g, " %*d) ", g->cpu_width, cpu);
}

/* "comm-pid" centred in 14 columns, the comm cut to 7 characters. */
static void put_proc(struct graph *g, int32_t pid)
{
	size_t comm_len;
	const char *comm = tb_schema_comm(g->schema, pid, &comm_len);
	char pid_str[16];
	int pid_len = snprintf(pid_str, sizeof(pid_str), "%d", pid), spaces = 0, len;

	if (comm_len > 7)
		comm_len = 7;
	len = (int)comm_len + pid_len + 1;
	if (len < PROCINFO_LENGTH)
		spaces = PROCINFO_LENGTH - len;
	put_spaces(g, spaces / 2);
	sb_put(&g->text, comm, comm_len);
	sb_putc(&g->text, '-');
	sb_put(&g->text, pid_str, (size_t)pid_len);
	put_spaces(g, spaces - spaces / 2);
}

/* The task banner when a CPU's task changed since its last line. */
static void verify_pid(struct graph *g, struct stream *s, int32_t pid)
{
	int32_t prev = s->last_pid;

	if (prev == pid)
		return;
	s->last_pid = pid;
	if (prev == -1)
		return;
	sb_puts(&g->text, " ------------------------------------------\n");
	put_cpu(g, s->cpu);
	put_proc(g, prev);
	sb_puts(&g->text, " => ");
	put_proc(g, pid);
	sb_puts(&g->text, "\n ------------------------------------------\n\n");
}

static void prologue(struct graph *g, struct stream *s, int32_t pid)
{
	verify_pid(g, s, pid);
	if (g->o->abstime) {
		unsigned long long t = g->cur.ts;
		put_fmt(g, "%5llu.%06llu |  ", t / 1000000000ull, t % 1000000000ull / 1000);
	}
	if (!g->o->no_cpu)
		put_cpu(g, s->cpu);
	if (g->o->proc) {
		put_proc(g, pid);
		sb_puts(&g->text, " | ");
	}
}

/* The kernel's overhead marks: the first threshold the duration exceeds. */
static char overhead_mark(unsigned long long d)
{
	static const struct {
		unsigned long long ns;
		char mark;
	} marks[] = {
		{1000000000ull, '$'}, {100000000ull, '@'}, {10000000ull, '*'},
		{1000000ull, '#'},    {100000ull, '!'},    {10000ull, '+'},
	};

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (d > marks[i].ns)
			return marks[i].mark;
	return ' ';
}

/* "  0.123 us    |  ": at most 7 digits before " us", nanoseconds while they fit. */
static void put_duration(struct graph *g, unsigned long long d)
{
	char usecs[24], nsecs[8];
	int len;

	if (g->o->no_duration)
		return;
	if (g->o->no_overhead)
		sb_puts(&g->text, "  ");
	else
		put_fmt(g, "%c ", overhead_mark(d));
	len = snprintf(usecs, sizeof(usecs), "%llu", d / 1000);
	sb_put(&g->text, usecs, (size_t)len);
	if (len < 7) {
		/* The kernel cuts the three digits to what fits in 7 columns with the dot. */
		int keep = 8 - len < 5 ? 8 - len : 5;
		snprintf(nsecs, (size_t)keep, "%03llu", d % 1000);
		sb_putc(&g->text, '.');
		sb_puts(&g->text, nsecs);
		len += (int)strlen(nsecs) + 1;
	}
	sb_puts(&g->text, " us ");
	put_spaces(g, 8 - len);
	sb_puts(&g->text, "|  ");
}

/* An empty duration column. */
static void put_no_duration(struct graph *g)
{
	if (!g->o->no_duration)
		sb_puts(&g->text, "              |  ");
}

/* ------------------------------------------------------------ records */

static void put_retaddr(struct graph *g, const struct layout *l, const uint8_t *rec)
{
	if (!g->o->retaddr || !l->has_parent)
		return;
	sb_puts(&g->text, " /* <-");
	put_symbol(g, u64_at(rec, l->parent), true);
	sb_puts(&g->text, " */");
}

/* The exit that makes the current entry a leaf: the next record on its CPU. */
static bool is_leaf(struct graph *g, struct stream *s, const uint8_t *entry, const struct layout *el,
		    uint64_t *duration)
{
	const struct layout *xl;
	const uint8_t *next = s->next.data;

	if (!s->has_next || kind_of(g, next, s->next.len, &xl) != KIND_EXIT)
		return false;
	if (tb_schema_check_record(tb_schema_find_event(g->schema, id_of(next), NULL),
				   next, s->next.len, NULL) < 0)
		return false;
	if (pid_of(next) != pid_of(entry) || u64_at(next, xl->func) != u64_at(entry, el->func))
		return false;
	*duration = u64_at(next, xl->rettime) - u64_at(next, xl->calltime);
	return true;
}

static void print_entry(struct graph *g, struct stream *s, const struct layout *l)
{
	const uint8_t *rec = g->cur.data;
	uint64_t func = u64_at(rec, l->func), duration;
	int depth = (int)u32_at(rec, l->depth);

	g->t.entries++;
	prologue(g, s, pid_of(rec));
	if (is_leaf(g, s, rec, l, &duration)) {
		s->depth = depth - 1;
		if (depth < RETFUNC_DEPTH)
			s->enter_funcs[depth] = 0;
		put_duration(g, duration);
		put_spaces(g, (long)depth * INDENT);
		put_symbol(g, func, false);
		sb_puts(&g->text, "();");
		put_retaddr(g, l, rec);
		sb_putc(&g->text, '\n');
		g->t.leaves++;
		g->t.exits++;
		advance(g, s); /* the exit is printed */
		return;
	}
	s->depth = depth;
	if (depth < RETFUNC_DEPTH)
		s->enter_funcs[depth] = func;
	put_no_duration(g);
	put_spaces(g, (long)depth * INDENT);
	put_symbol(g, func, false);
	sb_puts(&g->text, "() {");
	put_retaddr(g, l, rec);
	sb_putc(&g->text, '\n');
}

static void print_exit(struct graph *g, struct stream *s, const struct layout *l)
{
	const uint8_t *rec = g->cur.data;
	uint64_t func = u64_at(rec, l->func);
	int depth = (int)u32_at(rec, l->depth);
	bool matched = true;

	g->t.exits++;
	s->depth = depth - 1;
	if (depth < RETFUNC_DEPTH) {
		matched = s->enter_funcs[depth] == func;
		s->enter_funcs[depth] = 0;
	}
	prologue(g, s, pid_of(rec));
	put_duration(g, u64_at(rec, l->rettime) - u64_at(rec, l->calltime));
	put_spaces(g, (long)depth * INDENT);
	if (matched && !g->o->tail) {
		sb_putc(&g->text, '}');
	} else {
		sb_puts(&g->text, "} /* ");
		put_symbol(g, func, false);
		sb_puts(&g->text, " */");
	}
	sb_putc(&g->text, '\n');
	if (g->o->overrun && l->has_overrun)
		put_fmt(g, " (Overruns: %u)\n", u32_at(rec, l->overrun));
}

/* ftrace print/bprint/bputs comments show the message alone. */
static bool message_only(struct graph *g, const uint8_t *rec)
{
	const char *system = "";
	const struct tb_format *f = tb_schema_find_event(g->schema, id_of(rec), &system);

	return f && !strcmp(system, "ftrace") &&
	       (!strcmp(f->name, "print") || !strcmp(f->name, "bprint") || !strcmp(f->name, "bputs"));
}

static int print_comment(struct graph *g, struct stream *s, struct tb_problem *err)
{
	struct tb_render_record ev = {g->cur.cpu, g->cur.ts, g->cur.data, g->cur.len};
	struct tb_strbuf body = {0};
	const char *text;
	size_t n;
	int rc = render_event_info(g->schema, &ev, &body, err);

	if (rc < 0) {
		sb_free(&body);
		return rc;
	}
	g->t.comments++;
	prologue(g, s, pid_of(g->cur.data));
	put_no_duration(g);
	if (s->depth > 0)
		put_spaces(g, (long)(s->depth + 1) * INDENT);
	text = body.buf ? body.buf : "";
	n = body.len;
	if (message_only(g, g->cur.data)) {
		const char *colon = memchr(text, ':', n);
		if (colon && colon + 1 < text + n && colon[1] == ' ') {
			n -= (size_t)(colon + 2 - text);
			text = colon + 2;
		}
	}
	if (n && text[n - 1] == '\n')
		n--;
	sb_puts(&g->text, "/* ");
	sb_put(&g->text, text, n);
	sb_puts(&g->text, " */\n");
	sb_free(&body);
	return 0;
}

/* ----------------------------------------------------------- the loop */

static void flush_text(struct graph *g)
{
	if (g->text.oom && !g->fatal)
		g->fatal = -ENOMEM;
	if (g->text.len && fwrite(g->text.buf, 1, g->text.len, g->out) != g->text.len && !g->fatal)
		g->fatal = -EIO;
	sb_reset(&g->text);
}

static void print_loss(struct graph *g, struct stream *s)
{
	if (!s->loss.any)
		return;
	g->t.lost_lines++;
	g->t.lost_events += s->loss.count;
	if (s->loss.count_unknown)
		put_fmt(g, "CPU:%d [LOST EVENTS]\n", s->cpu);
	else
		put_fmt(g, "CPU:%d [LOST %llu EVENTS]\n", s->cpu, (unsigned long long)s->loss.count);
	memset(&s->loss, 0, sizeof(s->loss));
}

static void bad_record(struct graph *g, const struct tb_problem *err)
{
	g->t.bad_records++;
	tb_capture_problem(g->capture, g->cur.file, g->cur.file_offset + err->offset, "%s; record skipped",
			  err->reason);
}

static void emit_current(struct graph *g, struct stream *s)
{
	const struct layout *l;
	struct tb_problem err = {0};
	size_t line_start = g->text.len;
	enum kind k = kind_of(g, g->cur.data, g->cur.len, &l);
	const struct tb_format *f;

	if (k != KIND_OTHER) {
		f = tb_schema_find_event(g->schema, id_of(g->cur.data), NULL);
		if (tb_schema_check_record(f, g->cur.data, g->cur.len, &err) < 0)
			return bad_record(g, &err);
		if (u32_at(g->cur.data, l->depth) > DEPTH_MAX) {
			err.offset = l->depth;
			snprintf(err.reason, sizeof(err.reason), "call depth %u is not plausible (over %d)",
				 u32_at(g->cur.data, l->depth), DEPTH_MAX);
			return bad_record(g, &err);
		}
	}
	if (k == KIND_ENTRY)
		print_entry(g, s, l);
	else if (k == KIND_EXIT)
		print_exit(g, s, l);
	else {
		int rc = print_comment(g, s, &err);
		if (rc == -EINVAL) {
			g->text.len = line_start;
			return bad_record(g, &err);
		}
		if (rc < 0)
			g->fatal = rc;
	}
}

static void merge(struct graph *g)
{
	struct stream *s;

	struct pw_source *src = calloc(g->ncpus > 0 ? (size_t)g->ncpus : 1, sizeof(*src));
	struct pagework *work = NULL;

	for (int i = 0; src && i < g->ncpus; i++)
		src[i] = (struct pw_source){tb_capture_has_cpu(g->capture, i) ? g->capture : NULL, i};
	/* One thread: the graph needs each record's text in order, and it is small work. */
	if (!src || pagework_new(src, g->ncpus, g->schema, NULL, 0, false, NULL, &work) < 0) {
		free(src);
		g->fatal = -ENOMEM;
		return;
	}
	free(src);
	for (int i = 0; i < g->ncpus; i++) {
		memset(&g->cpus[i], 0, sizeof(g->cpus[i]));
		g->cpus[i].cpu = i;
		g->cpus[i].last_pid = -1;
		g->cpus[i].steps = (struct pw_cursor){.work = work, .stream = i};
		advance(g, &g->cpus[i]);
	}
	while (!g->fatal && (s = earliest(g))) {
		print_loss(g, s);
		if (!take_current(g, s))
			break;
		advance(g, s);
		emit_current(g, s);
		if (g->text.len >= FLUSH_AT)
			flush_text(g);
	}
	for (int i = 0; i < g->ncpus && !g->fatal; i++)
		print_loss(g, &g->cpus[i]);
	pagework_free(work);
	flush_text(g);
}

static void print_header(struct graph *g)
{
	const struct tb_graph_opts *o = g->o;

	sb_puts(&g->text, "# tracer: function_graph\n#\n");
	sb_putc(&g->text, '#');
	if (o->abstime)
		sb_puts(&g->text, "     TIME       ");
	if (!o->no_cpu)
		sb_puts(&g->text, " CPU");
	if (o->proc)
		sb_puts(&g->text, "  TASK/PID       ");
	if (!o->no_duration)
		sb_puts(&g->text, "  DURATION   ");
	sb_puts(&g->text, "               FUNCTION CALLS\n");
	sb_putc(&g->text, '#');
	if (o->abstime)
		sb_puts(&g->text, "      |         ");
	if (!o->no_cpu)
		sb_puts(&g->text, " |  ");
	if (o->proc)
		sb_puts(&g->text, "   |    |        ");
	if (!o->no_duration)
		sb_puts(&g->text, "   |   |      ");
	sb_puts(&g->text, "               |   |   |   |\n");
}

int tb_funcgraph_write(struct tb_capture *c, struct tb_usyms *usyms, FILE *out,
		       const struct tb_graph_opts *opts, struct tb_graph_totals *totals)
{
	static const struct tb_graph_opts defaults;
	struct graph *g = calloc(1, sizeof(*g));
	int rc, cpus;

	if (!g)
		return -ENOMEM;
	g->capture = c;
	g->schema = tb_capture_schema(c);
	g->usyms = usyms;
	g->o = opts ? opts : &defaults;
	g->out = out;
	g->ncpus = tb_capture_cpu_slots(c);
	/* Width of the highest CPU number, as the kernel sizes its CPU column. */
	cpus = tb_capture_online_cpus(c) > g->ncpus ? tb_capture_online_cpus(c) : g->ncpus;
	g->cpu_width = snprintf(NULL, 0, "%d", cpus > 0 ? cpus - 1 : 0);
	g->cpus = calloc(g->ncpus > 0 ? (size_t)g->ncpus : 1, sizeof(*g->cpus));
	if (!g->cpus) {
		free(g);
		return -ENOMEM;
	}
	if (!g->o->no_header)
		print_header(g);
	merge(g);
	rc = g->fatal;
	g->t.problems = tb_capture_problems(c);
	if (totals)
		*totals = g->t;
	sb_free(&g->text);
	free(g->cur.data);
	free(g->cpus);
	free(g);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = -EIO;
	if (rc < 0)
		return rc;
	return tb_capture_problems(c) ? 1 : 0;
}
