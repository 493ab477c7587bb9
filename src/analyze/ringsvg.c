// SPDX-License-Identifier: MIT
/*
 * ringsvg.c - each CPU's ring buffer drawn as a row of sub-buffers
 * (tracebuf/ringsvg.h).
 *
 * A first look at every page of a CPU finds what each cell shows (commit
 * length, events, first and last time stamp, the lost flag and its stored
 * count); then the row is drawn.  Cells share the width left of the
 * reader page; a ring of thousands of sub-buffers gets thin cells, still
 * one per sub-buffer, each with its hover title.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "tracebuf/page.h"
#include "tracebuf/ringsvg.h"
#include "tracebuf/stats.h"
#include "util/grow.h"

#define WIDTH 1200
#define PAD 10
#define ROW_H 185
#define CELL_H 70
#define TOP 60
#define READER_W 56
#define GAP 34 /* between the reader page and the ring, room for the arrow */

struct cell {
	uint32_t commit; /* data bytes */
	uint32_t events;
	uint64_t first_ts, last_ts;
	bool lost, lost_stored, damaged;
	uint64_t lost_count;
};

struct row {
	struct cell *cells;
	size_t n, cap;
	uint32_t data_size;
	bool have_stats;
	struct tb_cpu_stats st;
};

/* ------------------------------------------------------------ reading */

/* A cell drawn as damaged is also said, with the file and byte (and counted). */
static void report_damage(struct tb_capture *c, const struct tb_capture_page *p, const struct tb_page_cursor *cur)
{
	tb_capture_problem(c, p->file, p->file_offset + cur->err.offset, "%s; rest of the sub-buffer skipped",
			  cur->err.reason);
}

static void read_cell(struct tb_capture *c, const struct tb_capture_page *p, struct cell *cl)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	memset(cl, 0, sizeof(*cl));
	if (tb_page_cursor_init(&cur, p->data, p->size) < 0) {
		cl->damaged = true;
		report_damage(c, p, &cur);
		return;
	}
	cl->commit = cur.hdr.data_len;
	cl->lost = cur.hdr.lost;
	cl->lost_stored = cur.hdr.lost_stored;
	cl->lost_count = cur.hdr.lost_count;
	while ((rc = tb_page_next_data(&cur, &rec)) == 1) {
		/* In nanoseconds where a trace.dat's TSC2NSEC says how (capture.h). */
		uint64_t ts = tb_capture_ts_ns(c, rec.ts);
		if (!cl->events++)
			cl->first_ts = ts;
		cl->last_ts = ts;
	}
	cl->damaged = rc < 0;
	if (rc < 0)
		report_damage(c, p, &cur);
}

static int read_row(struct tb_capture *c, int cpu, struct row *r)
{
	struct tb_capture_page p;

	memset(r, 0, sizeof(*r));
	r->data_size = tb_page_data_size(tb_capture_subbuf_size(c));
	r->have_stats = tb_capture_cpu_stats(c, cpu, &r->st) == 0;
	if (r->have_stats)
		tb_stats_derive(&r->st);
	while (tb_capture_next_page(c, cpu, &p) == 1) {
		struct cell *grown = tb__grow(r->cells, &r->cap, r->n + 1, sizeof(*grown), 64);
		if (!grown)
			return -ENOMEM;
		r->cells = grown;
		read_cell(c, &p, &r->cells[r->n++]);
	}
	return 0;
}

/* ------------------------------------------------------------ drawing */

static void text_at(FILE *f, double x, double y, const char *cls, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\">", x, y, cls);
	svg_escape(f, s, strlen(s));
	fputs("</text>\n", f);
}

/* A down arrow with a label above a cell's centre. */
static void marker(FILE *f, double x, double y, const char *label)
{
	fprintf(f, "<path d=\"M%.1f %.1f v12 m-4 -5 l4 5 l4 -5\" class=\"arrow\"/>\n", x, y - 14);
	text_at(f, x, y - 18, "mark", label);
}

static void draw_cell(FILE *f, const struct row *r, size_t i, const char *ring, double x, double y, double w)
{
	const struct cell *cl = &r->cells[i];
	double fill = r->data_size ? (double)cl->commit / r->data_size : 0;
	double h = CELL_H * (fill > 1 ? 1 : fill);

	fprintf(f, "<g><title>%s sub-buffer %zu (%s): %u of %u bytes (%.1f%%), %u events", ring, i + 1,
		i == 0 ? "the head: oldest, read first" : i + 1 == r->n ? "the commit page: newest" : "in between",
		cl->commit, r->data_size, 100 * fill, cl->events);
	if (cl->events)
		fprintf(f, ", time %" PRIu64 " .. %" PRIu64, cl->first_ts, cl->last_ts);
	if (cl->lost && cl->lost_stored)
		fprintf(f, "; %" PRIu64 " events were lost before it", cl->lost_count);
	else if (cl->lost)
		fputs("; events were lost before it (count not stored)", f);
	if (cl->damaged)
		fputs("; damaged: did not decode", f);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"cell\"/>", x, (int)y,
		w, CELL_H);
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" class=\"%s\"/></g>\n", x,
		y + CELL_H - h, w, h, cl->damaged ? "bad" : cl->lost ? "lostfill" : "fill");
	if (cl->lost) {
		char label[48];
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"3\" height=\"%d\" class=\"lostbar\"/>\n", x, (int)y,
			CELL_H);
		if (cl->lost_stored)
			snprintf(label, sizeof(label), "LOST %" PRIu64, cl->lost_count);
		else
			snprintf(label, sizeof(label), "LOST");
		if (w >= 40)
			text_at(f, x + 4, y + 12, "lost", label);
	}
	if (w >= 28) {
		char label[32];
		snprintf(label, sizeof(label), "%u ev", cl->events);
		text_at(f, x + w / 2, y + CELL_H + 13, "small", label);
	}
}

static void draw_empty_cells(FILE *f, size_t from, size_t to, double x0, double y, double w)
{
	if (from >= to)
		return;
	fprintf(f, "<g><title>%zu sub-buffers holding nothing the capture read</title>", to - from);
	for (size_t i = from; i < to; i++)
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"empty\"/>", x0 + i * w,
			(int)y, w, CELL_H);
	fputs("</g>\n", f);
}

static void draw_stats(FILE *f, const struct row *r, double y)
{
	char line[400];
	const struct tb_cpu_stats *s = &r->st;

	if (!r->have_stats) {
		text_at(f, PAD, y, "info", "no stats file for this CPU: entries and losses unknown");
		return;
	}
	snprintf(line, sizeof(line),
		 "written %" PRIu64 " = entries %" PRIu64 " + overrun %" PRIu64 " + read %" PRIu64
		 ";  lost %" PRIu64 " (%.2f%% of %" PRIu64 " attempted: overrun %" PRIu64 ", dropped %" PRIu64
		 ", commit overrun %" PRIu64 ")",
		 s->written, s->entries, s->overrun, s->read, s->lost,
		 s->attempted ? 100.0 * (double)s->lost / (double)s->attempted : 0.0, s->attempted, s->overrun,
		 s->dropped, s->commit_overrun);
	text_at(f, PAD, y, "info", line);
}

static void draw_row(FILE *f, const struct row *r, const char *ring, unsigned ring_n, double y)
{
	size_t total = ring_n > r->n ? ring_n : r->n;
	double x0 = PAD + READER_W + GAP, w = total ? (WIDTH - PAD - x0) / (double)total : 0;
	char label[256];

	snprintf(label, sizeof(label), "%s: %zu sub-buffers read%s", ring, r->n,
		 ring_n ? "" : " (the ring's size is not recorded: only those are drawn)");
	if (ring_n)
		snprintf(label + strlen(label), sizeof(label) - strlen(label), " of %u in the ring + the reader page",
			 ring_n);
	text_at(f, PAD, y - 30, "row", label);
	/* The reader page: a spare the reader swaps with the head; what it held was read first. */
	fprintf(f, "<g><title>the reader page: a spare sub-buffer; a read swaps it with the head page</title>"
		   "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"reader\"/></g>\n",
		PAD, (int)y, READER_W, CELL_H);
	marker(f, PAD + READER_W / 2.0, y, "reader");
	fprintf(f, "<path d=\"M%d %.1f h%d m-6 -4 l6 4 l-6 4\" class=\"arrow\"/>\n", PAD + READER_W + 4,
		y + CELL_H / 2.0, GAP - 8);
	if (r->have_stats && r->st.overrun) {
		snprintf(label, sizeof(label), "%" PRIu64 " overwritten", r->st.overrun);
		text_at(f, PAD + READER_W + 2, y + CELL_H + 28, "lost", label);
	}
	for (size_t i = 0; i < r->n; i++)
		draw_cell(f, r, i, ring, x0 + i * w, y, w);
	draw_empty_cells(f, r->n, total, x0, y, w);
	if (r->n) {
		marker(f, x0 + w / 2, y, "head (oldest)");
		if (r->n > 1)
			marker(f, x0 + (r->n - 0.5) * w, y, "tail: commit page (newest)");
	}
	draw_stats(f, r, y + CELL_H + 44);
}

static void put_header(FILE *f, const char *title, int height, const struct tb_capture *c)
{
	char sub[200];

	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #222; }\n"
		".title { font-size: 17px; text-anchor: middle; } .sub { fill: #555; text-anchor: middle; }\n"
		".row { font-weight: bold; } .mark { text-anchor: middle; font-size: 11px; }\n"
		".small { text-anchor: middle; font-size: 10px; fill: #555; } .lost { fill: #b00; font-size: 11px; }\n"
		".cell { fill: #fff; stroke: #888; stroke-width: 0.5; } .fill { fill: #5a9; }\n"
		".lostfill { fill: #e93; } .bad { fill: #c33; } .lostbar { fill: #b00; }\n"
		".empty { fill: #eee; stroke: #bbb; stroke-width: 0.5; }\n"
		".reader { fill: #dde; stroke: #446; stroke-dasharray: 4 2; }\n"
		".arrow { stroke: #333; fill: none; stroke-width: 1.2; } g:hover rect { stroke: #000; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fafaf6\"/>\n",
		WIDTH, height, WIDTH, height, WIDTH, height);
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"24\">", WIDTH / 2);
	svg_escape(f, title, strlen(title));
	fputs("</text>\n", f);
	snprintf(sub, sizeof(sub), "%zu-byte sub-buffers; cells filled to their commit length (green), orange "
				   "after lost events; hover for details",
		 tb_capture_subbuf_size(c));
	fprintf(f, "<text class=\"sub\" x=\"%d\" y=\"44\">", WIDTH / 2);
	svg_escape(f, sub, strlen(sub));
	fputs("</text>\n", f);
}

int tb_ringsvg_write(struct tb_capture *c, const struct tb_ringsvg_opts *opts, FILE *out)
{
	static const struct tb_ringsvg_opts defaults;
	const struct tb_ringsvg_opts *o = opts ? opts : &defaults;
	int slots, rows = 0, rc = 0;

	if (!c || !out)
		return -EINVAL;
	slots = tb_capture_cpu_slots(c);
	for (int cpu = 0; cpu < slots; cpu++)
		rows += tb_capture_has_cpu(c, cpu);
	put_header(out, o->title ? o->title : "Ring buffer", TOP + 30 + rows * ROW_H, c);
	double y = TOP + 50;
	for (int cpu = 0; rc == 0 && cpu < slots; cpu++) {
		struct row r;
		if (!tb_capture_has_cpu(c, cpu))
			continue;
		char ring[96];
		/* a slot is a CPU of one buffer: the buffer named when a trace.dat has several */
		snprintf(ring, sizeof(ring), "%s%sCPU %d", tb_capture_slot_buffer(c, cpu),
			 tb_capture_slot_buffer(c, cpu)[0] ? " " : "", tb_capture_slot_cpu(c, cpu));
		rc = read_row(c, cpu, &r);
		if (rc == 0)
			draw_row(out, &r, ring, o->subbufs_per_cpu, y);
		free(r.cells);
		y += ROW_H;
	}
	fputs("</svg>\n", out);
	if (rc == 0 && (ferror(out) || fflush(out)))
		rc = -EIO;
	return rc;
}
