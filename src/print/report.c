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
 * sub-buffer that carries the lost flag.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "strbuf.h"
#include "tracebuf/page.h"
#include "tracebuf/report.h"

/* Loss announced by sub-buffers whose events have not been printed yet. */
struct pending_loss {
	bool any;
	bool count_unknown;
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
};

struct report {
	struct tb_capture *capture;
	struct tb_schema *schema;
	FILE *out;
	struct tb_strbuf text; /* lines not yet written to out */
	struct tb_render_opts render;
	struct tb_report_totals t;
	struct cpu_stream *cpus;
	int ncpus;
	bool counting; /* first pass: count events, print nothing */
	int fatal;     /* negative errno that stopped the report */
	uint8_t id_seen[65536 / 8];      /* IDs whose first record was printed */
	uint8_t unknown_seen[65536 / 8]; /* IDs already reported as unknown */
};

/* ------------------------------------------------------------ streams */

static void note_page_loss(struct cpu_stream *s, const struct tb_page_header *h)
{
	if (!h->lost)
		return;
	s->loss.any = true;
	if (h->lost_stored)
		s->loss.count += h->lost_count;
	else
		s->loss.count_unknown = true;
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
		if (tb_page_cursor_init(&s->cursor, s->page.data, s->page.size) == 0) {
			note_page_loss(s, &s->cursor.hdr);
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

static void flush_text(struct report *r)
{
	if (r->text.oom && !r->fatal)
		r->fatal = -ENOMEM;
	if (r->text.len && fwrite(r->text.buf, 1, r->text.len, r->out) != r->text.len && !r->fatal)
		r->fatal = -EIO;
	sb_reset(&r->text);
}

static void print_loss(struct report *r, struct cpu_stream *s)
{
	if (!s->loss.any)
		return;
	r->t.lost_lines++;
	r->t.lost_events += s->loss.count;
	if (!r->counting) {
		char line[64];
		int n = s->loss.count_unknown
				? snprintf(line, sizeof(line), "CPU:%d [LOST EVENTS]\n", s->cpu)
				: snprintf(line, sizeof(line), "CPU:%d [LOST %llu EVENTS]\n", s->cpu,
					   (unsigned long long)s->loss.count);
		sb_put(&r->text, line, (size_t)n);
	}
	memset(&s->loss, 0, sizeof(s->loss));
}

/* Byte offset of the record's payload in its file. */
static uint64_t payload_offset(const struct cpu_stream *s)
{
	return s->page.file_offset + (uint64_t)((const uint8_t *)s->next.data - s->page.data);
}

/* The first record of each ID lets the capture tell what its format file had wrong, if anything. */
static void note_first_record(struct report *r, const struct cpu_stream *s)
{
	uint16_t id;

	if (s->next.len < sizeof(id))
		return;
	memcpy(&id, s->next.data, sizeof(id));
	if (!(r->id_seen[id / 8] & (1u << (id % 8)))) {
		r->id_seen[id / 8] |= (uint8_t)(1u << (id % 8));
		tb_capture_event_seen(r->capture, id);
	}
}

static void emit(struct report *r, struct cpu_stream *s)
{
	struct tb_event_ref ev = {s->cpu, s->next.ts, s->next.data, s->next.len};
	struct tb_diag err = {0};
	size_t line_start;
	uint16_t id = 0;
	int rc;

	print_loss(r, s);
	if (r->counting) {
		r->t.events++;
		return;
	}
	note_first_record(r, s);
	line_start = r->text.len;
	rc = render_event(r->schema, &ev, &r->render, &r->text, &err);
	if (rc != -EINVAL && r->text.len >= FLUSH_AT)
		flush_text(r);
	if (rc == -EINVAL) {
		r->text.len = line_start;
		r->t.bad_records++;
		tb_capture_report(r->capture, s->page.file, payload_offset(s) + err.offset,
				  "%s; record skipped", err.reason);
		return;
	}
	if (rc < 0) {
		r->fatal = rc;
		return;
	}
	r->t.events++;
	if (rc == TB_RENDER_UNKNOWN) {
		r->t.unknown_events++;
		memcpy(&id, s->next.data, sizeof(id));
		/* Once per ID: a missing format would otherwise flood stderr. */
		if (!(r->unknown_seen[id / 8] & (1u << (id % 8)))) {
			r->unknown_seen[id / 8] |= (uint8_t)(1u << (id % 8));
			tb_capture_report(r->capture, s->page.file, payload_offset(s),
					  "event id %u has no format (first record of it; "
					  "all print as [UNKNOWN EVENT id=%u])", id, id);
		}
	}
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
	while (!r->fatal && (s = earliest(r))) {
		emit(r, s);
		advance(r, s);
	}
	/* Loss announced by sub-buffers that held no events still gets its line. */
	for (int i = 0; i < r->ncpus && !r->fatal; i++)
		print_loss(r, &r->cpus[i]);
	flush_text(r);
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
	struct report r = {.capture = c, .schema = tb_capture_schema(c), .out = out};
	uint64_t entries = 0, written = 0;
	int rc = 0;

	r.render.ns_clock = tb_capture_clock_is_ns(c);
	r.ncpus = tb_capture_cpu_slots(c);
	r.cpus = calloc(r.ncpus > 0 ? (size_t)r.ncpus : 1, sizeof(*r.cpus));
	if (!r.cpus)
		return -ENOMEM;
	if (!(opts && opts->no_header)) {
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
	free(r.cpus);
	sb_free(&r.text);
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
