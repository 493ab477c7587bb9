// SPDX-License-Identifier: MIT
/*
 * report.c - a capture or live instance as the kernel's `trace` text: the
 * header, then every CPU's events merged by time stamp.
 *
 * Each CPU is a stream of sub-buffers walked by pagework.c - in units of
 * a few pages decoded and rendered by worker threads for large captures,
 * one page at a time here otherwise - so memory stays at a few sub-buffers
 * per CPU whatever the capture's size; this file replays each CPU's steps
 * as its merge reaches them.  The merge takes the smallest time stamp next, the lowest CPU on a tie, which
 * is how the kernel's iterator orders `trace`.  Loss is reported where the
 * kernel's consuming readers report it: before the first event of the
 * sub-buffer that carries the lost flag.  A flag without a stored count
 * gets its count from the CPU's stats file when the numbers allow it
 * (derive_count() below; the rule is in docs/man/report.roff, tracebuf-report(1)).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/blob_store.h"
#include "decode/capture_source.h"
#include "pagework.h"
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
	struct pw_cursor steps;     /* the CPU's pages as walked, replayed */
	bool has_next;
	const struct pw_step *next; /* the record to print next, in unit */
	struct pending_loss loss;
	uint64_t stored_seen;   /* stored lost counts of the sub-buffers opened so far */
	uint64_t unknown_seen;  /* lost flags without a count opened so far */
	bool have_prev;         /* prev_ts holds the time of the CPU's last event */
	uint64_t prev_ts;
	bool started;           /* annotate: its first record was printed */
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
	struct pagework *work; /* the streams' pages, decoded (and rendered) in units */
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
	uint8_t prepared[65536 / 8];     /* IDs whose printer was chosen */
	/* ... and may be rendered by workers; set here (release), read by them (pagework.c) */
	_Atomic uint8_t ready[65536 / 8];
	struct printed_tally printed;    /* records by ID and printer, for the stat */
	/* latency-format: where in text the previous line's delay mark is (SIZE_MAX: none), and its time */
	bool latency_marks;
	size_t mark_at;
	uint64_t mark_ts;
	/* latency-format with verbose: the index fields and times to the next record (set_verbose_fields) */
	bool verbose_lat;
	uint64_t next_index;
	/* annotate: each CPU's start is marked when the buffer overran; records printed so far */
	bool annotate, overran;
	uint64_t printed_records;
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

/* A sub-buffer dated before the CPU's previous event: said once per sub-buffer, order kept. */
static void check_time_order(struct report *r, struct cpu_stream *s, const struct pw_unit *u,
			     uint32_t page)
{
	uint64_t stamp = u->hdr[page].timestamp;

	if (s->have_prev && stamp < s->prev_ts)
		tb_capture_problem(r->capture, u->file[page], u->file_offset[page],
				  "time goes back: this sub-buffer's stamp %llu is %llu before the "
				  "CPU's previous event; its events keep the file's order",
				  (unsigned long long)stamp, (unsigned long long)(s->prev_ts - stamp));
}

struct page_ctx {
	struct report *r;
	struct cpu_stream *s;
};

/* What a page-level step says: pages opened (their loss, their time) and skipped. */
static void page_step(void *ctx, const struct pw_unit *u, const struct pw_step *st)
{
	struct report *r = ((struct page_ctx *)ctx)->r;
	struct cpu_stream *s = ((struct page_ctx *)ctx)->s;
	const char *file = u->file[st->page];
	uint64_t at = u->file_offset[st->page];

	switch (st->kind) {
	case PW_ZERO_PAGE: /* a short read() of trace_pipe_raw leaves them */
		r->t.pages++;
		r->t.bad_pages++;
		tb_capture_problem(r->capture, file, at,
				  "sub-buffer is all zeros (no time stamp, no data): not one "
				  "the kernel wrote; skipped");
		break;
	case PW_BAD_PAGE:
		r->t.pages++;
		r->t.bad_pages++;
		tb_capture_problem(r->capture, file, at + st->off, "%s; sub-buffer skipped", st->reason);
		break;
	case PW_PAGE:
		r->t.pages++;
		note_page_loss(r, s, &u->hdr[st->page]);
		check_time_order(r, s, u, st->page);
		break;
	case PW_PAGE_ERROR:
		r->t.bad_pages++;
		tb_capture_problem(r->capture, file, at + st->off, "%s; rest of the sub-buffer skipped",
				  st->reason);
		break;
	}
}

/* Find the CPU's next data record, replaying what comes before it; false when the CPU has no more. */
static bool advance(struct report *r, struct cpu_stream *s)
{
	struct page_ctx pc = {r, s};
	const struct pw_step *st = s->done ? NULL : pw_cursor_next_record(&s->steps, page_step, &pc);

	s->has_next = st != NULL;
	if (st) {
		s->next = st;
		s->have_prev = true;
		s->prev_ts = st->ts;
		return true;
	}
	if (s->steps.oom && !r->fatal)
		r->fatal = -ENOMEM;
	s->done = true;
	return false;
}

/*
 * The stream with the earliest next record; ties go to the lower CPU.
 * *until is the stream that would come next were it gone (NULL: none), so
 * the caller may take records from the winner while they still come first.
 */
static struct cpu_stream *earliest(struct report *r, struct cpu_stream **until)
{
	struct cpu_stream *best = NULL, *second = NULL;

	for (int i = 0; i < r->ncpus; i++) {
		struct cpu_stream *s = &r->cpus[i];
		if (!s->has_next)
			continue;
		if (!best || s->next->ts < best->next->ts) {
			second = best;
			best = s;
		} else if (!second || s->next->ts < second->next->ts) {
			second = s;
		}
	}
	*until = second;
	return best;
}

/* Whether s's next record still comes before every record of other (NULL: no other). */
static bool still_first(const struct cpu_stream *s, const struct cpu_stream *other)
{
	if (!s->has_next)
		return false;
	return !other || s->next->ts < other->next->ts ||
	       (s->next->ts == other->next->ts && s->cpu < other->cpu);
}

/* ------------------------------------------------------------- output */

/* Lines reach out in writes of this size or more: one stdio call per many events. */
#define FLUSH_AT (256 * 1024)

static void flush_text(struct report *r)
{
	if (r->text.oom && !r->fatal)
		r->fatal = -ENOMEM;
	if (r->text.len && fwrite(r->text.buf, 1, r->text.len, r->out) != r->text.len && !r->fatal)
		r->fatal = -EIO;
	sb_reset(&r->text);
}

/* Text that goes out between records. */
static void put_text(struct report *r, const char *text, size_t len)
{
	sb_put(&r->text, text, len);
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

/* The first record of each ID lets the capture tell what its format file had wrong, if anything. */
static void note_first_record(struct report *r, const struct cpu_stream *s)
{
	uint16_t id = s->next->id;

	if (s->next->len >= sizeof(id) && !(r->id_seen[id / 8] & (1u << (id % 8)))) {
		r->id_seen[id / 8] |= (uint8_t)(1u << (id % 8));
		tb_schema_find_event(r->schema, id, NULL); /* a format parsed when first met (lazy_formats) */
		tb_capture_event_seen(r->capture, id);
	}
}

/* A record rendered: what render_event() returned, where it came from, its problem if any. */
struct rendered {
	int rc;
	uint16_t id;
	const char *file;
	uint64_t file_offset;
	const struct tb_problem *err; /* when rc is -EINVAL */
	enum printer_kind used;    /* which printer printed it */
};

/* What a rendered record adds to the totals and the problems, in output order. */
static void account(struct report *r, const struct rendered *res)
{
	uint16_t id = res->id;

	if (res->rc == -EINVAL) {
		r->t.bad_records++;
		tb_capture_problem(r->capture, res->file, res->file_offset + res->err->offset,
				  "%s; record skipped", res->err->reason);
		return;
	}
	if (res->rc < 0) {
		if (!r->fatal)
			r->fatal = res->rc;
		return;
	}
	r->t.events++;
	if (res->used < PRINTER_KINDS)
		printed_tally_add(&r->printed, r->schema, id, res->used, 1);
	if (res->rc == TB_RENDER_UNKNOWN) {
		r->t.unknown_events++;
		/* Once per ID: a missing format would otherwise flood stderr. */
		if (!(r->unknown_seen[id / 8] & (1u << (id % 8)))) {
			r->unknown_seen[id / 8] |= (uint8_t)(1u << (id % 8));
			tb_capture_problem(r->capture, res->file, res->file_offset,
					  "event id %u has no format (first record of it; "
					  "all print as [UNKNOWN EVENT id=%u])", id, id);
		}
	}
}

/*
 * Whether workers may render records of the ID: its printer is chosen (here,
 * once per ID) and is not libtraceevent, which only this thread may call.
 */
static void prepare(struct report *r, uint16_t id)
{
	const char *system = "";
	const struct tb_format *f = tb_schema_find_event(r->schema, id, &system);
	uint32_t bit = 1u << (id % 8);

	if (r->prepared[id / 8] & bit)
		return;
	r->prepared[id / 8] |= (uint8_t)bit;
	/* An ID without a format prints as unknown, here: that needs no printer. */
	if (f && !printers_prepare(r->schema, f, system))
		/* release: the printer chosen above is complete before a worker sees the bit (pagework.c acquires) */
		atomic_fetch_or_explicit(&r->ready[id / 8], (uint8_t)bit, memory_order_release);
}

/* Render the record here and now, into the text. */
static void emit_here(struct report *r, const struct cpu_stream *s, const struct pw_step *st)
{
	const struct pw_unit *u = s->steps.unit;
	struct tb_render_record ev = {s->cpu, st->ts, u->page[st->page] + st->off, st->len};
	struct tb_problem err; /* filled only on failure: zeroing its 200-byte reason per record cost 10% */
	struct rendered res = {.id = st->id, .file = u->file[st->page],
			       .file_offset = u->file_offset[st->page] + st->off, .err = &err};

	if (st->len >= 8)
		prepare(r, st->id);
	res.rc = render_event(r->schema, &ev, &r->render, &r->text, &err, &res.used);
	account(r, &res);
}

/* The text a worker rendered for the record, and what it adds up to. */
static void emit_rendered(struct report *r, const struct cpu_stream *s, const struct pw_step *st)
{
	const struct pw_unit *u = s->steps.unit;
	uint32_t start = st == u->steps ? 0 : st[-1].text_end;
	struct rendered res = {.rc = st->rc, .id = st->id, .file = u->file[st->page],
			       .file_offset = u->file_offset[st->page] + st->off,
			       .err = st->rc == -EINVAL ? &u->errs[st->err] : NULL, .used = st->used};

	sb_put(&r->text, u->text.buf + start, st->text_end - start);
	account(r, &res);
}

/* Whether the bytes of the blob reference ref (its 24-byte payload) are in the capture's store, checked whole. */
static enum blob_fate blob_fate_of(const struct report *r, const void *ref)
{
	uint8_t *bytes;
	uint32_t crc;
	enum blob_fate fate = blob_store_get(capture_blobs(r->capture), ref, &bytes, &crc);

	free(bytes);
	return fate;
}

/*
 * A blob reference (tracebuf/blob.h): its bytes were in the ring's blob
 * area, which the saver copied into the capture's blob store when it took
 * the page.  One line like a LOST line gives the length, the CRC-32 and an
 * escaped head of the bytes, or says why they are not there (no store, not
 * saved, damaged: blob_store.c); it counts as an event.  A filter, which
 * can only select event fields, leaves it out.
 */
static void emit_blob(struct report *r, const struct cpu_stream *s)
{
	const uint8_t *ref = s->steps.unit->page[s->next->page] + s->next->off;
	char line[BLOB_LINE_MAX];
	enum blob_fate fate;
	size_t n;

	if (r->filter)
		return;
	r->t.events++;
	if (r->counting) {
		fate = blob_fate_of(r, ref);
	} else {
		n = blob_store_line(capture_blobs(r->capture), s->cpu, ref, line, &fate);
		sb_put(&r->text, line, n);
	}
	if (fate != BLOB_FOUND)
		r->t.blobs_lost++;
}

/*
 * The delay mark of latency-format (trace_find_mark in the kernel's
 * trace_output.c): how long from one record to the next of any CPU, in
 * whole microseconds (rounded as ns2usecs does), past 1 s, 100 ms, 10 ms,
 * 1 ms, 100 us or 10 us.
 */
static char delay_mark(uint64_t delta_ns)
{
	static const struct {
		uint64_t over_ns;
		char mark;
	} marks[] = {{1000000000ull, '$'}, {100000000ull, '@'}, {10000000ull, '*'},
		     {1000000ull, '#'},    {100000ull, '!'},     {10000ull, '+'}};
	uint64_t d = (delta_ns + 500) / 1000 * 1000;

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (d > marks[i].over_ns)
			return marks[i].mark;
	return ' ';
}

/*
 * latency-format: the line before this record gets its mark now that the
 * next record's time is known; the line this record just added is found by
 * its "us" (the first after the comm: the pid, CPU and irq columns hold no
 * 'u') and waits for the record after it.  emit() keeps that line in text.
 */
static void set_latency_mark(struct report *r, size_t line_start, uint64_t ts)
{
	const char *us;

	if (r->mark_at != SIZE_MAX && r->mark_at < line_start)
		r->text.buf[r->mark_at] = delay_mark(ts - r->mark_ts);
	r->mark_at = SIZE_MAX;
	if (r->text.len <= line_start + 8)
		return;
	us = memmem(r->text.buf + line_start + 8, r->text.len - line_start - 8, "us", 2);
	if (us && (size_t)(us - r->text.buf) + 2 < r->text.len) {
		r->mark_at = (size_t)(us - r->text.buf) + 2;
		r->mark_ts = ts;
	}
}

/*
 * Replace the byte at text[at] by len bytes of with, moving the rest of
 * the text along (a line's tail: the text is flushed every FLUSH_AT bytes).
 */
static bool replace_byte(struct report *r, size_t at, const char *with, size_t len)
{
	size_t tail = r->text.len - at - 1;

	if (!sb_room(&r->text, len))
		return false;
	memmove(r->text.buf + at + len, r->text.buf + at + 1, tail);
	memcpy(r->text.buf + at, with, len);
	r->text.len = at + len + tail;
	return true;
}

/*
 * The previous line's time to this record (ts; the last line's: 0, as the
 * kernel's, whose next record is itself) in place of its TB_VERBOSE_NEXT:
 * "%ld.%03ldms" of microseconds, or the count for a clock of counts.
 */
static void put_verbose_next(struct report *r, uint64_t ts)
{
	char text[48];
	uint64_t d = ts - r->mark_ts, us = (d + 500) / 1000;
	int n = r->render.ns_clock ? snprintf(text, sizeof(text), "%llu.%03llums", (unsigned long long)(us / 1000),
					      (unsigned long long)(us % 1000))
				   : snprintf(text, sizeof(text), "%llu", (unsigned long long)d);

	if (!replace_byte(r, r->mark_at, text, (size_t)n))
		r->fatal = r->fatal ? r->fatal : -ENOMEM;
	r->mark_at = SIZE_MAX;
}

/*
 * latency-format with verbose: the line before this record gets its time
 * to this one (ts); the line this record added (from line_start) its index
 * in the merged order, "%08lx", and it waits for the next record's time.
 * The placeholders are the first of their bytes after the comm (the pid,
 * CPU, flags and depth columns are digits).  Returns where the line starts
 * now that the previous one's may have grown.
 */
static size_t set_verbose_fields(struct report *r, size_t line_start, uint64_t ts)
{
	size_t before = r->text.len;
	char index[24];
	char *p;

	if (r->mark_at != SIZE_MAX && r->mark_at < line_start)
		put_verbose_next(r, ts);
	line_start += r->text.len - before;
	if (r->text.len <= line_start + 16)
		return line_start;
	p = memchr(r->text.buf + line_start + 16, TB_VERBOSE_INDEX, r->text.len - line_start - 16);
	if (p && replace_byte(r, (size_t)(p - r->text.buf), index,
			      (size_t)snprintf(index, sizeof(index), "%08llx", (unsigned long long)r->next_index++))) {
		p = memchr(r->text.buf + line_start + 16, TB_VERBOSE_NEXT, r->text.len - line_start - 16);
		if (p) {
			r->mark_at = (size_t)(p - r->text.buf);
			r->mark_ts = ts;
		}
	}
	return line_start;
}

/* Write out the text before keep (the rest stays: a line waiting for its mark). */
static void flush_text_before(struct report *r, size_t keep)
{
	size_t rest = r->text.len - keep;

	if (r->text.oom && !r->fatal)
		r->fatal = -ENOMEM;
	if (keep && fwrite(r->text.buf, 1, keep, r->out) != keep && !r->fatal)
		r->fatal = -EIO;
	memmove(r->text.buf, r->text.buf + keep, rest);
	r->text.len = rest;
	if (r->mark_at != SIZE_MAX)
		r->mark_at -= keep;
}

/*
 * annotate (test_cpu_buff_start in the kernel's trace.c): when the buffer
 * overran, where each CPU's records start, as its first record is printed -
 * unless that is one of the first two records of the text (the kernel's
 * "iter->idx > 1"), where it is only noted.  Overran: the stats count
 * overwritten events or, where there are none (a trace.dat's capture), a
 * LOST line has been printed (this CPU's comes just before).
 */
static void annotate_start(struct report *r, struct cpu_stream *s)
{
	char text[48];

	if (!s->started && r->printed_records > 1 && (r->overran || r->t.lost_lines))
		put_text(r, text, (size_t)snprintf(text, sizeof(text), "##### CPU %d buffer started ####\n", s->cpu));
	s->started = true;
	r->printed_records++;
}

static void emit(struct report *r, struct cpu_stream *s)
{
	size_t line_start;

	print_loss(r, s);
	if (s->next->blob) {
		emit_blob(r, s);
		return;
	}
	if (r->counting) {
		r->t.events++;
		return;
	}
	if (r->filter) {
		/* a worker may have rendered it already: the filter decides what is printed */
		const struct pw_step *st = s->next;
		struct tb_render_record ev = {s->cpu, st->ts, s->steps.unit->page[st->page] + st->off, st->len};
		if (!tb_filter_set_keep(r->filter, r->schema, &ev))
			return;
	}
	note_first_record(r, s);
	if (r->annotate)
		annotate_start(r, s);
	line_start = r->text.len;
	if (s->next->here)
		emit_here(r, s, s->next);
	else
		emit_rendered(r, s, s->next);
	if (r->latency_marks && r->text.len > line_start)
		set_latency_mark(r, line_start, s->next->ts);
	else if (r->verbose_lat && r->text.len > line_start)
		line_start = set_verbose_fields(r, line_start, s->next->ts);
	if (r->text.len >= FLUSH_AT)
		flush_text_before(r, (r->latency_marks || r->verbose_lat) && r->mark_at != SIZE_MAX ? line_start
												: r->text.len);
}

/* ------------------------------------------------------------- streams */

/*
 * Threads to render with: TB_REPORT_THREADS when set (0: none), else one
 * per online CPU, up to 4, for inputs big enough to pay for them; never
 * for a live buffer, whose pages are read only as the merge needs them.
 */
static int render_threads(struct report *r)
{
	if (tb_capture_is_live(r->capture))
		return 0;
	return pagework_threads(tb_capture_data_bytes(r->capture));
}

/* Start the CPUs' page walks: rendered by workers when threads, else here (render: enum pw_render). */
static int start_streams(struct report *r, int render)
{
	struct pw_source *src = calloc(r->ncpus > 0 ? (size_t)r->ncpus : 1, sizeof(*src));
	int rc;

	if (!src)
		return -ENOMEM;
	for (int i = 0; i < r->ncpus; i++)
		src[i] = (struct pw_source){tb_capture_has_cpu(r->capture, i) ? r->capture : NULL, i};
	rc = pagework_new(src, r->ncpus, r->schema, &r->render, render_threads(r), render, r->ready, &r->work);
	if (rc == -EAGAIN) /* no threads to be had: walk the pages here */
		rc = pagework_new(src, r->ncpus, r->schema, &r->render, 0, render == PW_COUNT ? render : 0, NULL,
				  &r->work);
	free(src);
	for (int i = 0; rc == 0 && i < r->ncpus; i++) {
		memset(&r->cpus[i], 0, sizeof(r->cpus[i]));
		r->cpus[i].cpu = i;
		r->cpus[i].steps = (struct pw_cursor){.work = r->work, .stream = i};
	}
	return rc;
}

/* Run every stream to its end, merged by time. */
static void merge(struct report *r)
{
	struct cpu_stream *s, *other;
	int rc = start_streams(r, !r->counting);

	if (rc < 0) {
		r->fatal = rc;
		return;
	}
	for (int i = 0; i < r->ncpus; i++)
		advance(r, &r->cpus[i]);
	/* A CPU's records go out in a run for as long as they come before every other CPU's next. */
	while (!r->fatal && (s = earliest(r, &other))) {
		do {
			emit(r, s);
			advance(r, s);
		} while (!r->fatal && still_first(s, other));
	}
	/* Loss announced by sub-buffers that held no events still gets its line. */
	for (int i = 0; i < r->ncpus && !r->fatal; i++)
		print_loss(r, &r->cpus[i]);
	pagework_free(r->work);
	r->work = NULL;
	if (r->verbose_lat && r->mark_at != SIZE_MAX)
		put_verbose_next(r, r->mark_ts);
	flush_text(r);
}

/* --------------------------------------------------------------- count */

/*
 * --count: merge()'s merge with nothing to render, over the time stamps of
 * PW_COUNT units (pagecount.h) instead of a step per record.
 *
 * merge() takes, record by record, the CPU whose next record has the
 * smallest stamp (the lower CPU on a tie), and right after a CPU's record
 * replays the page-level steps that follow it in that CPU's pages.  Here
 * the same choice is made along arrays of stamps: between two page-level
 * steps nothing is replayed, so a CPU's records up to its next step (its
 * "stop", at most a page further) are taken by comparisons alone - with two
 * CPUs left, until one reaches its stop; with more, a run of the earliest
 * CPU while it stays before the second; a binary search when the stamps are
 * in order (count_two()) - and a CPU's steps are replayed through
 * page_step() the moment its last record before them is taken, with that
 * record's stamp as the CPU's previous.  So the totals, the loss accounting
 * and every problem come out as merge() gives them, in its order.
 */
struct count_stream {
	struct cpu_stream s;        /* cpu, has_next, loss and previous stamp, as merge() keeps them */
	const struct pw_unit *unit; /* the unit being taken; NULL before the first */
	const uint64_t *stamps;     /* its records' stamps */
	size_t next, n;             /* the next record, and the unit's records */
	size_t step;                /* the unit's next page-level step */
	size_t stop;                /* the records before that step (n when none is left) */
	bool oom;                   /* a unit could not be filled or walked whole */
};

/* The unit's page-level steps that come before record cs->next, replayed. */
static void replay_page_steps(struct report *r, struct count_stream *cs)
{
	const struct pw_unit *u = cs->unit;
	const uint32_t *at = u->counted.step_at;
	struct page_ctx pc = {r, &cs->s};

	if (cs->next > 0) { /* as advance() left it: the stamp of the record before the steps */
		cs->s.have_prev = true;
		cs->s.prev_ts = cs->stamps[cs->next - 1];
	}
	while (cs->step < u->nsteps && at[cs->step] == cs->next)
		page_step(&pc, u, &u->steps[cs->step++]);
	cs->stop = cs->step < u->nsteps ? at[cs->step] : cs->n;
}

/*
 * A unit taken whole: its records are events; its blob references too,
 * but for a filter, each looked up in the capture's blob store and counted
 * lost when its bytes are not there (emit_blob()).
 */
static void count_unit(struct report *r, const struct pw_unit *u)
{
	r->t.events += u->counted.nstamps;
	if (r->filter) {
		r->t.events -= u->counted.blobs;
		return;
	}
	for (uint64_t i = 0; i < u->counted.blobs; i++)
		r->t.blobs_lost += blob_fate_of(r, u->counted.refs[i]) != BLOB_FOUND;
}

/*
 * advance() for a count, once the CPU's records up to its stop are taken:
 * the steps there replayed, and on to the next unit when the unit is done.
 * A pending loss is accounted at once when a record follows (without text
 * nothing else happens between here and that record); false when the CPU
 * has no more records.
 */
static bool count_advance(struct report *r, struct count_stream *cs)
{
	for (;;) {
		if (cs->unit) {
			replay_page_steps(r, cs);
			if (cs->next < cs->n) {
				print_loss(r, &cs->s);
				return cs->s.has_next = true;
			}
			count_unit(r, cs->unit);
		}
		cs->unit = pagework_next(r->work, cs->s.cpu);
		if (!cs->unit)
			break;
		cs->oom |= cs->unit->text.oom;
		cs->stamps = cs->unit->counted.stamps;
		cs->n = cs->unit->counted.nstamps;
		cs->next = cs->step = 0;
	}
	if (cs->oom && !r->fatal)
		r->fatal = -ENOMEM;
	return cs->s.has_next = false;
}

/* Whether a's next record comes before b's (a tie: the lower CPU's). */
static bool count_before(const struct count_stream *a, const struct count_stream *b)
{
	uint64_t x = a->stamps[a->next], y = b->stamps[b->next];

	return x < y || (x == y && a->s.cpu < b->s.cpu);
}

/* The streams with the earliest and second earliest next records; how many have one. */
static int count_earliest(struct count_stream *v, int n, struct count_stream **best, struct count_stream **second)
{
	int live = 0;

	*best = *second = NULL;
	for (int i = 0; i < n; i++) {
		struct count_stream *cs = &v[i];
		if (!cs->s.has_next)
			continue;
		live++;
		if (!*best || count_before(cs, *best)) {
			*second = *best;
			*best = cs;
		} else if (!*second || count_before(cs, *second)) {
			*second = cs;
		}
	}
	return live;
}

/* Whether the stream's stamps up to its stop never go back: then they may be searched. */
static bool count_sorted(const struct count_stream *cs)
{
	return !cs->unit->counted.unsorted;
}

/* The first index in [from, to) of ts (in order) whose stamp is above limit (or_equal: at or above). */
static size_t first_after(const uint64_t *ts, size_t from, size_t to, uint64_t limit, bool or_equal)
{
	while (from < to) {
		size_t mid = from + (to - from) / 2;
		if (ts[mid] > limit || (or_equal && ts[mid] == limit))
			to = mid;
		else
			from = mid + 1;
	}
	return from;
}

/*
 * Two CPUs, lo the lower: records taken one by one, the earlier first (lo's
 * on a tie), until one of them reaches its stop.  When both runs of stamps
 * are in order that end is known without walking it: the run whose last
 * stamp comes first runs out first, and by then the other has given every
 * stamp that comes before that last one - a binary search.  Otherwise
 * branch-free, one record at a time: the comparison steps one index or the other.
 */
static void count_two(struct count_stream *lo, struct count_stream *hi)
{
	const uint64_t *a = lo->stamps, *b = hi->stamps;
	size_t i = lo->next, j = hi->next, ea = lo->stop, eb = hi->stop;

	if (count_sorted(lo) && count_sorted(hi)) {
		if (a[ea - 1] <= b[eb - 1]) /* lo's last first; hi's equal stamps come after it */
			hi->next = first_after(b, j, eb, a[ea - 1], true), lo->next = ea;
		else /* hi's last first; lo's equal stamps come before it */
			lo->next = first_after(a, i, ea, b[eb - 1], false), hi->next = eb;
		return;
	}
	while (i < ea && j < eb) {
		size_t take_lo = a[i] <= b[j];
		i += take_lo;
		j += 1 - take_lo;
	}
	lo->next = i;
	hi->next = j;
}

/* More CPUs: best's records while they still come before second's next, up to best's stop. */
static void count_run(struct count_stream *best, const struct count_stream *second)
{
	const uint64_t *ts = best->stamps;
	uint64_t limit = second->stamps[second->next];
	bool lower = best->s.cpu < second->s.cpu; /* a tie goes to the lower CPU */
	size_t j = best->next + 1;

	if (count_sorted(best))
		j = first_after(ts, j, best->stop, limit, !lower);
	else if (lower)
		while (j < best->stop && ts[j] <= limit)
			j++;
	else
		while (j < best->stop && ts[j] < limit)
			j++;
	best->next = j;
}

/* merge() for a count: every stream to its end, merged by time, nothing rendered. */
static void count_merge(struct report *r)
{
	struct count_stream *v = calloc(r->ncpus > 0 ? (size_t)r->ncpus : 1, sizeof(*v)), *best, *second;
	int rc = v ? start_streams(r, PW_COUNT) : -ENOMEM, live;

	if (rc < 0) {
		free(v);
		r->fatal = rc;
		return;
	}
	for (int i = 0; i < r->ncpus; i++) {
		v[i].s.cpu = i;
		count_advance(r, &v[i]);
	}
	while (!r->fatal && (live = count_earliest(v, r->ncpus, &best, &second)) > 0) {
		if (live == 1)
			best->next = best->stop;
		else if (live == 2 && best->s.cpu < second->s.cpu)
			count_two(best, second);
		else if (live == 2)
			count_two(second, best);
		else
			count_run(best, second);
		/* Whichever reached its stop has its steps replayed before any other record is taken. */
		if (best->next == best->stop)
			count_advance(r, best);
		else if (live == 2 && second->next == second->stop)
			count_advance(r, second);
	}
	/* Loss announced by sub-buffers that held no events still gets its line. */
	for (int i = 0; i < r->ncpus && !r->fatal; i++)
		print_loss(r, &v[i].s);
	pagework_free(r->work);
	r->work = NULL;
	free(v);
}

/* -------------------------------------------------------- loss books */

/* What one look at all of a CPU's pages finds. */
struct scan {
	uint64_t events, newest_ts;
	uint64_t unknown;           /* lost flags without a count */
	uint64_t flags_after_first; /* lost flags of any kind after the first count-less one */
	bool damaged;               /* a page failed to decode: the count of events is not sure */
};

static void scan_page(const struct tb_capture_page *p, struct scan *sc)
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
	struct tb_capture_page p;

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

/* Whether any CPU's stats count overwritten events (the kernel's ring_buffer_overruns()). */
static bool overran(const struct report *r)
{
	for (int i = 0; i < r->ncpus; i++)
		if (r->books[i].have_stats && r->books[i].st.overrun)
			return true;
	return false;
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

static bool latency_header_wanted(unsigned topts)
{
	return (topts & (TB_TOPT_LATENCY_FORMAT | TB_TOPT_NO_CONTEXT_INFO)) == TB_TOPT_LATENCY_FORMAT;
}

/*
 * latency-format's header (print_trace_header, print_lat_help_header in
 * the kernel's trace.c), nothing past the tracer line for an empty buffer.
 * The latency and its task are those of a latency tracer's worst case: 0
 * and nobody for any other tracer.  The preemption model (M:) is not in a
 * capture: "?" stands for it.
 */
static void print_latency_header(struct report *r, uint64_t entries, uint64_t written)
{
	const char *tracer = tb_capture_tracer(r->capture);

	fprintf(r->out, "# tracer: %s\n#\n", tracer);
	if (!entries)
		return;
	fprintf(r->out, "# %s latency trace v1.1.5 on %s\n", tracer, tb_capture_kernel_version(r->capture));
	fputs("# --------------------------------------------------------------------\n", r->out);
	fprintf(r->out, "# latency: 0 us, #%llu/%llu, CPU#0 | (M:? VP:0, KP:0, SP:0 HP:0 #P:%d)\n",
		(unsigned long long)entries, (unsigned long long)written, tb_capture_online_cpus(r->capture));
	fputs("#    -----------------\n"
	      "#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n"
	      "#    -----------------\n"
	      "#\n",
	      r->out);
	/* print_lat_help_header, which verbose leaves out */
	if (r->render.trace_options & TB_TOPT_VERBOSE)
		return;
	fputs("#                    _------=> CPU#            \n"
	      "#                   / _-----=> irqs-off/BH-disabled\n"
	      "#                  | / _----=> need-resched    \n"
	      "#                  || / _---=> hardirq/softirq \n"
	      "#                  ||| / _--=> preempt-depth   \n"
	      "#                  |||| / _-=> migrate-disable \n"
	      "#                  ||||| /     delay           \n"
	      "#  cmd     pid     |||||| time  |   caller     \n"
	      "#     \\   /        ||||||  \\    |    /       \n",
	      r->out);
}

/*
 * The trace_options the text is laid out by: the capture's saved ones, then
 * the caller's words over them.  -EINVAL for a word that is not one of the
 * TB_TOPT_* options, -ENOTSUP when bin is on: the kernel writes binary
 * records then, and tracebuf prints text.
 */
static int report_trace_options(const struct tb_capture *c, const struct tb_report_opts *opts, unsigned *bits)
{
	*bits = tb_capture_trace_options(c);
	if (opts && opts->options && tb_topt_apply(opts->options, true, bits, NULL, NULL) < 0)
		return -EINVAL;
	return *bits & TB_TOPT_BIN ? -ENOTSUP : 0;
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
	rc = report_trace_options(c, opts, &r.render.trace_options);
	if (rc < 0)
		return rc;
	r.latency_marks = r.render.ns_clock && (r.render.trace_options & (TB_TOPT_LATENCY_FORMAT | TB_TOPT_NO_CONTEXT_INFO |
									 TB_TOPT_RAW | TB_TOPT_HEX)) ==
							 TB_TOPT_LATENCY_FORMAT;
	/* latency-format with verbose: its own context, index and time to the next record, on any clock */
	r.verbose_lat = (r.render.trace_options & (TB_TOPT_LATENCY_FORMAT | TB_TOPT_VERBOSE | TB_TOPT_NO_CONTEXT_INFO |
						   TB_TOPT_RAW | TB_TOPT_HEX)) == (TB_TOPT_LATENCY_FORMAT | TB_TOPT_VERBOSE);
	r.latency_marks = r.latency_marks && !r.verbose_lat;
	r.mark_at = SIZE_MAX;
	r.ncpus = tb_capture_cpu_slots(c);
	r.cpus = calloc(r.ncpus > 0 ? (size_t)r.ncpus : 1, sizeof(*r.cpus));
	r.books = calloc(r.ncpus > 0 ? (size_t)r.ncpus : 1, sizeof(*r.books));
	if (!r.cpus || !r.books) {
		free(r.cpus);
		free(r.books);
		return -ENOMEM;
	}
	/* A count renders nothing: no printer to count (emit() is not called, r.printed stays empty). */
	rc = open_books(&r);
	if (rc == 0 && opts && opts->count_only) {
		r.counting = true; /* the merge's order and its loss accounting, no text */
		count_merge(&r);
		rc = r.fatal;
	} else if (rc == 0 && !(opts && opts->no_header)) {
		rc = header_counts(&r, &entries, &written);
		if (rc == 0 && latency_header_wanted(r.render.trace_options))
			print_latency_header(&r, entries, written);
		else if (rc == 0)
			tb_render_header_opts(out, tb_capture_tracer(c), entries, written,
					      tb_capture_online_cpus(c), r.render.trace_options);
	}
	r.annotate = !(r.render.trace_options & (TB_TOPT_NO_ANNOTATE | TB_TOPT_RAW | TB_TOPT_HEX));
	r.overran = overran(&r);
	if (rc == 0 && !r.counting) {
		merge(&r);
		rc = r.fatal;
	}
	if (rc == 0 && !(opts && opts->count_only)) /* a count meets no event by its format */
		tb_capture_warn_unused(c);
	printed_tally_tell(&r.printed, r.schema);
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
