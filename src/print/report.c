// SPDX-License-Identifier: MIT
/*
 * report.c - a capture or live instance as the kernel's `trace` text: the
 * header, then every CPU's events merged by time stamp.
 *
 * Each CPU is a stream of sub-buffers decoded one record at a time, so
 * memory stays at one sub-buffer per CPU whatever the capture's size.  The
 * merge takes the smallest time stamp next, the lowest CPU on a tie, which
 * is how the kernel's iterator orders `trace`.  Loss is reported where the
 * kernel's consuming readers report it: before the first event of the
 * sub-buffer that carries the lost flag.  A flag without a stored count
 * gets its count from the CPU's stats file when the numbers allow it
 * (derive_count() below; the rule is in docs/tracebuf.1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "printers.h"
#include "render.h"
#include "strbuf.h"
#include "tracebuf/filter.h"
#include "tracebuf/page.h"
#include "tracebuf/report.h"

/* Loss announced by sub-buffers whose events have not been printed yet. */
struct pending_loss {
	bool any;
	bool count_unknown; /* nothing known beyond the flag */
	bool at_least;      /* count is a lower bound */
	uint64_t count;
};

struct cpu_stream {
	int cpu;
	bool done;
	bool in_page; /* cursor is valid */
	struct tb_raw_page page;
	struct tb_page_cursor cursor;
	bool has_next;
	struct tb_record next;
	struct pending_loss loss;
	uint64_t stored_seen;   /* stored lost counts of the sub-buffers opened so far */
	uint64_t unknown_seen;  /* lost flags without a count opened so far */
	bool have_prev;         /* prev_ts holds the time of the CPU's last event */
	uint64_t prev_ts;
};

/*
 * What the stats file (read before any page was consumed) and a look at all
 * of a CPU's pages in advance say about a loss the kernel flagged without
 * room to store its count.
 */
struct loss_books {
	bool have_stats;
	struct tb_cpu_stats st;
	bool scanned;     /* the pages were looked at in advance (capture dirs) */
	bool complete;    /* scan: no page damaged, at least the events the stats counted */
	bool closed;      /* scan: exactly those, and nothing after the first count-less
			   * flag can have lost more: its count is exact */
};

struct report {
	struct tb_capture *capture;
	struct tb_schema *schema;
	FILE *out;
	struct tb_strbuf text; /* lines not yet written to out */
	struct batcher *batch; /* rendering threads, for large inputs; NULL: render here */
	struct tb_render_opts render;
	struct tb_report_totals t;
	struct cpu_stream *cpus;
	struct loss_books *books;
	int ncpus;
	bool counting; /* first pass: count events, print nothing */
	struct tb_filter_set *filter; /* -F; NULL: every record */
	int fatal;     /* negative errno that stopped the report */
	uint8_t id_seen[65536 / 8];      /* IDs whose first record was printed */
	uint8_t unknown_seen[65536 / 8]; /* IDs already reported as unknown */
	uint8_t prepared[65536 / 8];     /* IDs whose printer was chosen (batched rendering) */
	uint8_t here[65536 / 8];         /* ... and must be rendered by this thread */
	uint64_t *printed;               /* records by ID and printer, for the stat */
};

/* ------------------------------------------------------------ streams */

/*
 * The count of a lost flag without a stored count, from the stats file.
 * The kernel hands each sub-buffer the overrun that grew since the previous
 * sub-buffer a consuming reader took, so when no reader had taken any
 * ("read events: 0"), the losses flagged up to and including a sub-buffer
 * add up to at least the stats' overrun.  For the CPU's first count-less
 * flag that gives overrun - (counts stored before it) as a lower bound, and
 * as the exact count when the pages are the whole buffer the stats counted
 * and nothing after that flag lost more.  true with *count and *exact set,
 * false when nothing is known beyond the flag.
 */
static bool derive_count(const struct report *r, const struct cpu_stream *s, uint64_t *count,
			 bool *exact)
{
	const struct loss_books *b = &r->books[s->cpu];

	if (!b->have_stats || b->st.read != 0 || s->unknown_seen > 0 ||
	    b->st.overrun <= s->stored_seen)
		return false;
	/* A capture missing pages could carry counts we never saw: then no bound. */
	if (b->scanned && !b->complete)
		return false;
	*count = b->st.overrun - s->stored_seen;
	*exact = b->scanned && b->closed;
	return true;
}

static void note_page_loss(struct report *r, struct cpu_stream *s, const struct tb_page_header *h)
{
	uint64_t count;
	bool exact;

	if (!h->lost)
		return;
	s->loss.any = true;
	if (h->lost_stored) {
		s->loss.count += h->lost_count;
		s->stored_seen += h->lost_count;
		return;
	}
	if (derive_count(r, s, &count, &exact)) {
		s->loss.count += count;
		s->loss.at_least |= !exact;
	} else {
		s->loss.count_unknown = true;
	}
	s->unknown_seen++;
}

/* A page that is all zeros was never written by the kernel (a short read() of trace_pipe_raw leaves them). */
static bool all_zero(const struct tb_raw_page *p)
{
	for (size_t i = 0; i < p->size; i++)
		if (p->data[i])
			return false;
	return true;
}

/* A sub-buffer dated before the CPU's previous event: said once per sub-buffer, order kept. */
static void check_time_order(struct report *r, struct cpu_stream *s)
{
	uint64_t stamp = s->cursor.hdr.timestamp;

	if (s->have_prev && stamp < s->prev_ts)
		tb_capture_report(r->capture, s->page.file, s->page.file_offset,
				  "time goes back: this sub-buffer's stamp %llu is %llu before the "
				  "CPU's previous event; its events keep the file's order",
				  (unsigned long long)stamp, (unsigned long long)(s->prev_ts - stamp));
}

/* Load the CPU's next sub-buffer that has a readable header. */
static bool open_next_page(struct report *r, struct cpu_stream *s)
{
	while (!s->done) {
		int rc = tb_capture_next_page(r->capture, s->cpu, &s->page);
		if (rc <= 0) {
			s->done = true;
			break;
		}
		r->t.pages++;
		if (all_zero(&s->page)) {
			r->t.bad_pages++;
			tb_capture_report(r->capture, s->page.file, s->page.file_offset,
					  "sub-buffer is all zeros (no time stamp, no data): not one "
					  "the kernel wrote; skipped");
			continue;
		}
		if (tb_page_cursor_init(&s->cursor, s->page.data, s->page.size) == 0) {
			note_page_loss(r, s, &s->cursor.hdr);
			check_time_order(r, s);
			s->in_page = true;
			return true;
		}
		r->t.bad_pages++;
		tb_capture_report(r->capture, s->page.file, s->page.file_offset + s->cursor.err.offset,
				  "%s; sub-buffer skipped", s->cursor.err.reason);
	}
	return false;
}

/* Find the CPU's next data record; false when the CPU has no more. */
static bool advance(struct report *r, struct cpu_stream *s)
{
	s->has_next = false;
	for (;;) {
		if (!s->in_page && !open_next_page(r, s))
			return false;
		int rc = tb_page_next_data(&s->cursor, &s->next);
		if (rc == 1) {
			s->has_next = true;
			s->have_prev = true;
			s->prev_ts = s->next.ts;
			return true;
		}
		s->in_page = false;
		if (rc < 0) {
			r->t.bad_pages++;
			tb_capture_report(r->capture, s->page.file,
					  s->page.file_offset + s->cursor.err.offset,
					  "%s; rest of the sub-buffer skipped", s->cursor.err.reason);
		}
	}
}

/* The stream with the earliest next record; ties go to the lower CPU. */
static struct cpu_stream *earliest(struct report *r)
{
	struct cpu_stream *best = NULL;

	for (int i = 0; i < r->ncpus; i++) {
		struct cpu_stream *s = &r->cpus[i];
		if (s->has_next && (!best || s->next.ts < best->next.ts))
			best = s;
	}
	return best;
}

/* ------------------------------------------------------------- output */

/* Lines reach out in writes of this size or more: one stdio call per many events. */
#define FLUSH_AT (256 * 1024)
/* Raw data from which rendering is shared out among threads: less is done faster alone. */
#define THREADED_FROM (4u << 20)

static void flush_text(struct report *r)
{
	if (r->text.oom && !r->fatal)
		r->fatal = -ENOMEM;
	if (r->text.len && fwrite(r->text.buf, 1, r->text.len, r->out) != r->text.len && !r->fatal)
		r->fatal = -EIO;
	sb_reset(&r->text);
}

/* Text that goes out between records: straight into the text, or through the batches. */
static void put_text(struct report *r, const char *text, size_t len)
{
	int rc;

	if (!r->batch) {
		sb_put(&r->text, text, len);
		return;
	}
	rc = batcher_add_text(r->batch, text, len);
	if (rc < 0 && !r->fatal)
		r->fatal = rc;
}

static void print_loss(struct report *r, struct cpu_stream *s)
{
	if (!s->loss.any)
		return;
	r->t.lost_lines++;
	r->t.lost_events += s->loss.count;
	if (!r->counting) {
		char line[80];
		int n = s->loss.count_unknown
				? snprintf(line, sizeof(line), "CPU:%d [LOST EVENTS]\n", s->cpu)
				: snprintf(line, sizeof(line), "CPU:%d [LOST %s%llu EVENTS]\n", s->cpu,
					   s->loss.at_least ? "at least " : "",
					   (unsigned long long)s->loss.count);
		put_text(r, line, (size_t)n);
	}
	memset(&s->loss, 0, sizeof(s->loss));
}

/* Byte offset of the record's payload in its file. */
static uint64_t payload_offset(const struct cpu_stream *s)
{
	return s->page.file_offset + (uint64_t)((const uint8_t *)s->next.data - s->page.data);
}

static uint16_t record_id(const struct tb_record *rec)
{
	uint16_t id = 0;

	if (rec->len >= sizeof(id))
		memcpy(&id, rec->data, sizeof(id));
	return id;
}

/* The first record of each ID lets the capture tell what its format file had wrong, if anything. */
static void note_first_record(struct report *r, const struct cpu_stream *s)
{
	uint16_t id = record_id(&s->next);

	if (s->next.len >= sizeof(id) && !(r->id_seen[id / 8] & (1u << (id % 8)))) {
		r->id_seen[id / 8] |= (uint8_t)(1u << (id % 8));
		tb_capture_event_seen(r->capture, id);
	}
}

/* What a rendered record adds to the totals and the problems, in output order. */
static void account(struct report *r, const struct batch_result *res)
{
	uint16_t id = res->id;

	if (res->rc == -EINVAL) {
		r->t.bad_records++;
		tb_capture_report(r->capture, res->file, res->file_offset + res->err->offset,
				  "%s; record skipped", res->err->reason);
		return;
	}
	if (res->rc < 0) {
		if (!r->fatal)
			r->fatal = res->rc;
		return;
	}
	r->t.events++;
	if (r->printed && res->used < PRINTER_KINDS)
		r->printed[(size_t)id * PRINTER_KINDS + res->used]++;
	if (res->rc == TB_RENDER_UNKNOWN) {
		r->t.unknown_events++;
		/* Once per ID: a missing format would otherwise flood stderr. */
		if (!(r->unknown_seen[id / 8] & (1u << (id % 8)))) {
			r->unknown_seen[id / 8] |= (uint8_t)(1u << (id % 8));
			tb_capture_report(r->capture, res->file, res->file_offset,
					  "event id %u has no format (first record of it; "
					  "all print as [UNKNOWN EVENT id=%u])", id, id);
		}
	}
}

/* Render the record here and now, into text. */
static void emit_here(struct report *r, struct cpu_stream *s, struct tb_strbuf *text)
{
	struct tb_event_ref ev = {s->cpu, s->next.ts, s->next.data, s->next.len};
	struct tb_diag err; /* filled only on failure: zeroing its 200-byte reason per record cost 10% */
	struct batch_result res = {.cpu = s->cpu, .id = record_id(&s->next), .file = s->page.file,
				   .file_offset = payload_offset(s), .err = &err};

	res.rc = render_event(r->schema, &ev, &r->render, text, &err, &res.used);
	account(r, &res);
}

/*
 * Whether records of f must be rendered by this thread (their printer may
 * be libtraceevent): asked of the printers once per ID, then remembered.
 */
static bool here(struct report *r, const struct tb_format *f, const char *system)
{
	uint32_t id = f->id, bit = 1u << (id % 8);

	if (!(r->prepared[id / 8] & bit)) {
		r->prepared[id / 8] |= (uint8_t)bit;
		if (printers_prepare(r->schema, f, system))
			r->here[id / 8] |= (uint8_t)bit;
	}
	return r->here[id / 8] & bit;
}

/*
 * Hand the record to the batches; those whose printer may be libtraceevent
 * (not thread-safe) are rendered here and go as text.
 */
static void emit_batched(struct report *r, struct cpu_stream *s)
{
	struct tb_event_ref ev = {s->cpu, s->next.ts, s->next.data, s->next.len};
	const char *system = "";
	const struct tb_format *f = s->next.len >= 8 ? tb_schema_find_event(r->schema, record_id(&s->next), &system) : NULL;
	int rc;

	if (f && here(r, f, system)) {
		sb_reset(&r->text);
		emit_here(r, s, &r->text);
		put_text(r, r->text.buf, r->text.len);
		sb_reset(&r->text);
		return;
	}
	rc = batcher_add_event(r->batch, &ev, s->page.file, payload_offset(s));
	if (rc < 0 && !r->fatal)
		r->fatal = rc;
}

static void emit(struct report *r, struct cpu_stream *s)
{
	print_loss(r, s);
	if (r->counting) {
		r->t.events++;
		return;
	}
	if (r->filter) {
		struct tb_event_ref ev = {s->cpu, s->next.ts, s->next.data, s->next.len};
		if (!tb_filter_set_keep(r->filter, r->schema, &ev))
			return;
	}
	note_first_record(r, s);
	if (r->batch) {
		emit_batched(r, s);
		return;
	}
	emit_here(r, s, &r->text);
	if (r->text.len >= FLUSH_AT)
		flush_text(r);
}

/* ------------------------------------------------------------- batches */

static int batch_write(void *ctx, const char *text, size_t len)
{
	struct report *r = ctx;

	return fwrite(text, 1, len, r->out) == len ? 0 : -EIO;
}

static void batch_done(void *ctx, const struct batch_result *res)
{
	account(ctx, res);
}

/*
 * Threads to render with: TB_REPORT_THREADS when set (0: none), else one
 * per online CPU, up to 4, for inputs big enough to pay for them.
 */
static int render_threads(struct report *r)
{
	const char *env = getenv("TB_REPORT_THREADS");
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (env && *env)
		return atoi(env) > 0 ? (atoi(env) > 16 ? 16 : atoi(env)) : 0;
	if (online < 2 || tb_capture_data_bytes(r->capture) < THREADED_FROM)
		return 0;
	return online > 4 ? 4 : (int)online;
}

static void start_batches(struct report *r)
{
	struct batch_sink sink = {r, batch_write, batch_done};
	int n = render_threads(r);

	if (n > 0 && batcher_new(r->schema, &r->render, n, &sink, &r->batch) < 0)
		r->batch = NULL; /* no threads to be had: render here */
}

static void finish_batches(struct report *r)
{
	int rc;

	if (!r->batch)
		return;
	rc = batcher_finish(r->batch);
	r->batch = NULL;
	if (rc < 0 && !r->fatal)
		r->fatal = rc;
}

/* Run every stream to its end, merged by time. */
static void merge(struct report *r)
{
	struct cpu_stream *s;

	for (int i = 0; i < r->ncpus; i++) {
		memset(&r->cpus[i], 0, sizeof(r->cpus[i]));
		r->cpus[i].cpu = i;
		r->cpus[i].done = !tb_capture_has_cpu(r->capture, i);
		advance(r, &r->cpus[i]);
	}
	if (!r->counting)
		start_batches(r);
	while (!r->fatal && (s = earliest(r))) {
		emit(r, s);
		advance(r, s);
	}
	/* Loss announced by sub-buffers that held no events still gets its line. */
	for (int i = 0; i < r->ncpus && !r->fatal; i++)
		print_loss(r, &r->cpus[i]);
	finish_batches(r);
	flush_text(r);
}

/* -------------------------------------------------------- loss books */

/* What one look at all of a CPU's pages finds. */
struct scan {
	uint64_t events, newest_ts;
	uint64_t unknown;           /* lost flags without a count */
	uint64_t flags_after_first; /* lost flags of any kind after the first count-less one */
	bool damaged;               /* a page failed to decode: the count of events is not sure */
};

static void scan_page(const struct tb_raw_page *p, struct scan *sc)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (tb_page_cursor_init(&cur, p->data, p->size) < 0) {
		sc->damaged = true;
		return;
	}
	if (cur.hdr.lost && sc->unknown > 0)
		sc->flags_after_first++;
	if (cur.hdr.lost && !cur.hdr.lost_stored)
		sc->unknown++;
	while ((rc = tb_page_next_data(&cur, &rec)) == 1) {
		sc->events++;
		if (rec.ts > sc->newest_ts)
			sc->newest_ts = rec.ts;
	}
	sc->damaged |= rc < 0;
}

/*
 * The certificates derive_count() needs, from a quiet pass over the CPU's
 * pages: the pages hold at least the events the stats counted (none
 * missing), and, for an exact count, exactly those (the same number, none
 * newer than the stats' "now"), with one count-less flag and no flag after
 * it: then no writer ran after the stats were read and nothing after that
 * flag can have lost more.
 */
static void scan_cpu(struct report *r, int cpu, struct loss_books *b)
{
	struct scan sc = {0};
	struct tb_raw_page p;

	while (tb_capture_next_page(r->capture, cpu, &p) == 1)
		scan_page(&p, &sc);
	b->scanned = true;
	b->complete = !sc.damaged && sc.events >= b->st.entries;
	b->closed = b->complete && sc.events == b->st.entries && sc.newest_ts <= b->st.now_ts &&
		    sc.unknown == 1 && sc.flags_after_first == 0;
}

/*
 * Read every CPU's stats; scan in advance the CPUs whose stats could give
 * a count (capture dirs only: a live buffer cannot be read twice).
 */
static int open_books(struct report *r)
{
	bool rewind = !tb_capture_is_live(r->capture), scanned = false;

	for (int i = 0; i < r->ncpus; i++) {
		struct loss_books *b = &r->books[i];
		b->have_stats = tb_capture_has_cpu(r->capture, i) &&
				tb_capture_cpu_stats(r->capture, i, &b->st) == 0;
		if (!b->have_stats || b->st.read != 0 || b->st.overrun == 0 || !rewind)
			continue;
		tb_capture_quiet(r->capture, true);
		scan_cpu(r, i, b);
		tb_capture_quiet(r->capture, false);
		scanned = true;
	}
	return scanned ? tb_capture_rewind(r->capture) : 0;
}

/* ------------------------------------------------------------- header */

/*
 * E/W as the kernel computes them (reference §6): entries, and entries +
 * overrun, summed over CPUs - from the stats files when every CPU has one,
 * else from the data itself: the events decoded and the stored lost counts.
 */
static int header_counts(struct report *r, uint64_t *entries, uint64_t *written)
{
	struct tb_cpu_stats st;
	bool all_stats = true;

	*entries = *written = 0;
	for (int i = 0; i < r->ncpus; i++) {
		if (!tb_capture_has_cpu(r->capture, i))
			continue;
		if (tb_capture_cpu_stats(r->capture, i, &st) < 0) {
			all_stats = false;
			continue;
		}
		*entries += st.entries;
		*written += st.entries + st.overrun;
	}
	/* Else a counting pass over the data; only capture dirs can be read twice. */
	if (all_stats || tb_capture_rewind(r->capture) < 0)
		return 0;
	r->counting = true;
	tb_capture_quiet(r->capture, true);
	merge(r);
	tb_capture_quiet(r->capture, false);
	r->counting = false;
	*entries = r->t.events;
	*written = r->t.events + r->t.lost_events;
	memset(&r->t, 0, sizeof(r->t));
	return tb_capture_rewind(r->capture);
}

int tb_report_write(struct tb_capture *c, FILE *out, const struct tb_report_opts *opts,
		    struct tb_report_totals *totals)
{
	struct report r = {.capture = c, .schema = tb_capture_schema(c), .out = out,
			   .filter = opts ? opts->filter : NULL};
	uint64_t entries = 0, written = 0;
	int rc = 0;

	if (!c || !out)
		return -EINVAL;
	r.render.ns_clock = tb_capture_clock_is_ns(c);
	r.ncpus = tb_capture_cpu_slots(c);
	r.cpus = calloc(r.ncpus > 0 ? (size_t)r.ncpus : 1, sizeof(*r.cpus));
	r.books = calloc(r.ncpus > 0 ? (size_t)r.ncpus : 1, sizeof(*r.books));
	if (!r.cpus || !r.books) {
		free(r.cpus);
		free(r.books);
		return -ENOMEM;
	}
	r.printed = calloc((size_t)65536 * PRINTER_KINDS, sizeof(*r.printed));
	rc = r.printed ? open_books(&r) : -ENOMEM;
	if (rc == 0 && !(opts && opts->no_header)) {
		rc = header_counts(&r, &entries, &written);
		if (rc == 0)
			tb_render_header(out, tb_capture_tracer(c), entries, written,
					 tb_capture_online_cpus(c));
	}
	if (rc == 0) {
		merge(&r);
		rc = r.fatal;
	}
	if (rc == 0)
		tb_capture_warn_unused(c);
	for (size_t i = 0; r.printed && i < (size_t)65536 * PRINTER_KINDS; i++)
		if (r.printed[i])
			printers_count(r.schema, (uint32_t)(i / PRINTER_KINDS), (enum printer_kind)(i % PRINTER_KINDS),
				       r.printed[i]);
	free(r.printed);
	free(r.cpus);
	sb_free(&r.text);
	free(r.books);
	r.t.entries = entries;
	r.t.written = written;
	r.t.problems = tb_capture_problems(c);
	if (totals)
		*totals = r.t;
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = -EIO;
	if (rc < 0)
		return rc;
	return r.t.problems ? 1 : 0;
}

void tb_report_write_printers(struct tb_capture *c, FILE *out)
{
	if (c && out)
		printers_write_stat(tb_capture_schema(c), out);
}
