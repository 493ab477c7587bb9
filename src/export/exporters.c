// SPDX-License-Identifier: MIT
/*
 * exporters.c - the table of exporters and the one driver that runs them
 * (tracebuf/export.h, exporter.h).
 *
 * A new exporter is one file (its struct tb_exporter_kind) and one row in
 * kinds[] below; everything else here - opening the input, the page walk
 * or the merge, progress, damage counting - it gets for nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter.h"
#include "tracedat/page_repair.h"
#include "util/progress.h"
#include "tracebuf/page.h"

/* Listed in this order by `convert --help`; a suffix matches the first kind that has it. */
static const struct tb_exporter_kind *const kinds[] = {
    &export_tracedat, &export_capture_dir, &export_chrome_json,
    &export_folded,   &export_flamegraph,  &export_ring_svg, &export_sqlite,
    &export_clickhouse,
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

size_t tb_export_kind_count(void)
{
	return NKINDS;
}

const struct tb_exporter_kind *tb_export_kind(size_t i)
{
	return i < NKINDS ? kinds[i] : NULL;
}

const char *tb_export_kind_name(const struct tb_exporter_kind *k)
{
	return k ? k->name : NULL;
}

const char *tb_export_kind_suffixes(const struct tb_exporter_kind *k)
{
	return k ? k->suffixes : NULL;
}

const char *tb_export_kind_help(const struct tb_exporter_kind *k)
{
	return k ? k->help : NULL;
}

const struct tb_exporter_kind *tb_export_find(const char *name)
{
	for (size_t i = 0; name && i < NKINDS; i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

/* Whether path ends in one of the space-separated suffixes. */
static bool ends_in_one_of(const char *path, const char *suffixes)
{
	size_t plen = strlen(path);

	for (const char *s = suffixes; *s;) {
		size_t n = strcspn(s, " ");
		if (n && plen > n && !memcmp(path + plen - n, s, n))
			return true;
		s += n;
		s += strspn(s, " ");
	}
	return false;
}

const struct tb_exporter_kind *tb_export_for_path(const char *path)
{
	for (size_t i = 0; path && i < NKINDS; i++)
		if (ends_in_one_of(path, kinds[i]->suffixes))
			return kinds[i];
	return NULL;
}

/* ------------------------------------------------------- messages */

int export_say(const struct export_run *x, int rc, const char *file, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", x->tool, file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

FILE *export_fopen(const struct export_run *x)
{
	FILE *f = fopen(x->o->out, "w");

	if (!f)
		export_say(x, -errno, x->o->out, "%s", strerror(errno));
	return f;
}

int export_fclose(const struct export_run *x, FILE *f, int rc)
{
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc < 0)
		export_say(x, rc, x->o->out, "%s", strerror(-rc));
	return rc;
}

/* ------------------------------------------------------- progress */

/*
 * The line (util/progress.h): the share of the input's bytes read, and
 * what was written.  A whole kind tells bytes alone (export_progress).
 */
struct progress {
	struct progress_line line;
	bool bytes_only; /* a whole kind tells bytes (export_progress): no sub-buffer or record counts */
};

static void progress_draw(struct progress *p, const struct export_run *x, uint64_t done, bool force)
{
	char detail[96];

	if (p->bytes_only) {
		progress_line_draw(&p->line, done, NULL, force);
		return;
	}
	snprintf(detail, sizeof(detail), "%llu sub-buffers, %llu records", (unsigned long long)x->res->pages,
		 (unsigned long long)x->res->records);
	progress_line_draw(&p->line, done, detail, force);
}

void export_progress(struct export_run *x, uint64_t done, uint64_t total)
{
	x->progress->bytes_only = true;
	if (total)
		x->progress->line.total = total;
	progress_draw(x->progress, x, done, false);
}

static void progress_clear(struct progress *p)
{
	progress_line_clear(&p->line);
}

/* --------------------------------------------------------- shapes */

/* A sub-buffer flagged as following lost events, counted (the page kinds copy the flag with it). */
static void count_lost(struct tb_export_result *res, const uint8_t *page, size_t size)
{
	struct tb_page_header h;

	if (tb_page_read_header(page, size, &h, NULL) == 0 && h.lost) {
		res->lost_pages++;
		res->lost_events += h.lost_stored ? h.lost_count : 0;
	}
}

/* A page's problem, through the capture: said with file and byte, and counted. */
static void page_problem(void *ctx, const struct tb_problem *d)
{
	struct export_run *x = ctx;

	tb_capture_problem(x->capture, d->file, d->offset, "%s", d->reason);
}

/* Every CPU's sub-buffers in order to page(), each as report reads it (page_repair.h). */
static int run_pages(struct export_run *x, struct progress *pg)
{
	size_t size = tb_capture_subbuf_size(x->capture);
	uint8_t *repaired = malloc(size ? size : 1);
	int rc = repaired ? 0 : -ENOMEM;

	for (int cpu = 0; rc == 0 && cpu < tb_capture_cpu_slots(x->capture); cpu++) {
		struct tb_capture_page p;
		int got;
		if (!tb_capture_has_cpu(x->capture, cpu))
			continue;
		while (rc == 0 && (got = tb_capture_next_page(x->capture, cpu, &p)) == 1) {
			uint32_t cut = 0;
			x->res->pages++;
			switch (page_verdict(p.data, (uint32_t)p.size, p.file, p.file_offset, page_problem, x, &cut)) {
			case PAGE_CLEAN:
				rc = x->kind->page(x, cpu, p.data, p.size);
				break;
			case PAGE_CUT:
				memcpy(repaired, p.data, p.size);
				page_cut(repaired, (uint32_t)p.size, cut);
				rc = x->kind->page(x, cpu, repaired, p.size);
				break;
			case PAGE_LEFT_OUT:
				break;
			}
			count_lost(x->res, p.data, p.size);
			progress_draw(pg, x, x->res->pages * size, false);
		}
	}
	free(repaired);
	return rc;
}

/* A loss the merge met: to the kind (its first error kept to stop the run). */
static void on_loss(void *ctx, const struct merge_loss *l)
{
	struct export_run *x = ctx;
	int rc = x->kind->loss(x, l);

	if (rc < 0 && !x->loss_rc)
		x->loss_rc = rc;
}

/* Every data record, CPUs merged by time, to event() (blob references to blob()). */
static int run_events(struct export_run *x, struct merge *m, struct progress *pg)
{
	size_t size = tb_capture_subbuf_size(x->capture);
	struct merged_record r;
	int rc = 0;

	while (rc == 0 && !x->loss_rc && merge_next(m, &r) == 1) {
		rc = r.blob ? x->kind->blob(x, &r) : x->kind->event(x, &r);
		x->res->records = m->records;
		x->res->pages = m->pages;
		if ((m->records & 1023) == 0)
			progress_draw(pg, x, m->pages * size, false);
	}
	x->res->records = m->records;
	x->res->pages = m->pages;
	x->res->lost_pages = m->lost_pages;
	x->res->lost_events = m->lost_events;
	if (rc == 0)
		rc = x->loss_rc ? x->loss_rc : m->fatal;
	return rc;
}

/* begin, the kind's shape, finish (always, once begun). */
static int run_kind(struct export_run *x, struct progress *pg)
{
	const struct tb_exporter_kind *k = x->kind;
	struct merge m;
	bool merging = k->event != NULL;
	int rc = 0;

	if (merging) {
		rc = merge_open(&m, x->capture);
		if (rc < 0)
			return export_say(x, rc, x->o->in, "%s", strerror(-rc));
		m.want_blobs = k->blob != NULL;
		if (k->loss) {
			m.on_loss = on_loss;
			m.loss_ctx = x;
		}
		x->merge = &m;
	}
	rc = k->begin ? k->begin(x) : 0;
	if (rc == 0) {
		if (k->page)
			rc = run_pages(x, pg);
		else if (merging)
			rc = run_events(x, &m, pg);
		else if (k->whole)
			rc = k->whole(x);
		else
			rc = export_say(x, -ENOSYS, x->o->out, "the %s exporter writes nothing", k->name);
		if (rc == 0 && pg->line.drawn) /* the last state shown, then taken away */
			progress_draw(pg, x, pg->line.total, true);
		progress_clear(pg);
	}
	x->failed = rc < 0;
	int end = k->finish ? k->finish(x) : 0;
	if (rc == 0)
		rc = end;
	if (merging)
		merge_close(&m);
	x->merge = NULL;
	return rc;
}

/* A problem the capture found: said as every command says it, then to the kind that keeps them. */
static void on_problem(void *ctx, const struct tb_problem *d)
{
	struct export_run *x = ctx;
	int rc;

	tb_problem_print(NULL, d);
	if (x->kind->problem && x->state && (rc = x->kind->problem(x, d)) < 0 && !x->loss_rc)
		x->loss_rc = export_say(x, rc, x->o->out, "%s", strerror(-rc));
}

int tb_export_run(const struct tb_exporter_kind *kind, const struct tb_export_opts *opts,
		  struct tb_export_result *result)
{
	struct tb_export_result scratch;
	struct tb_capture_opts co = {0};
	struct progress pg = {.bytes_only = false};
	int rc;

	if (!kind || !opts || !opts->in || !opts->out)
		return -EINVAL;
	if (!result)
		result = &scratch;
	memset(result, 0, sizeof(*result));
	struct export_run x = {.o = opts, .tool = opts->tool ? opts->tool : "tracebuf", .kind = kind, .res = result,
			       .progress = &pg};
	progress_line_init(&pg.line, opts->progress, PROGRESS_BYTES, x.tool, opts->out, 0);
	/* the state first: a kind that keeps problems has them from the open on */
	x.state = kind->state_size ? calloc(1, kind->state_size) : NULL;
	if (kind->state_size && !x.state)
		return export_say(&x, -ENOMEM, opts->in, "%s", strerror(ENOMEM));
	if (kind->input == EXPORT_CAPTURE) {
		co.prefix = opts->prefix;
		co.buffer = opts->buffer;
		if (kind->problem) {
			co.diag = on_problem;
			co.diag_ctx = &x;
		}
		rc = tb_capture_open(opts->in, &co, &x.capture);
		if (rc < 0) {
			if (kind->problem) { /* it may keep problems of the open: its finish frees them */
				x.failed = true;
				kind->finish(&x);
			}
			free(x.state);
			/* the open said why, naming the file (not said twice) */
			return rc == -ENOMEM ? export_say(&x, rc, opts->in, "%s", strerror(ENOMEM)) : rc;
		}
		pg.line.total = tb_capture_data_bytes(x.capture);
	}
	rc = run_kind(&x, &pg);
	if (x.capture) {
		result->problems += tb_capture_problems(x.capture);
		tb_capture_close(x.capture);
	}
	free(x.state);
	return rc;
}
