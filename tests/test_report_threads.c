/*
 * A report rendered by worker threads (src/print/pagework.c) is the report
 * rendered by one thread: the same bytes, the same totals, the same
 * problems - for real captures, one of them damaged, whatever the number
 * of workers.  A count (no text) gives the totals of the same merge.  Also run under ThreadSanitizer (make test-tsan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"

struct outcome {
	int rc;
	char *text;
	size_t len;
	struct tb_report_totals totals;
	unsigned long problems;
};

static void count_problem(void *ctx, const struct tb_problem *d)
{
	(void)d;
	++*(unsigned long *)ctx;
}

static struct outcome report_with_opts(const char *dir, const char *threads,
				       const struct tb_report_opts *ropts)
{
	struct outcome o = {0};
	struct tb_capture_opts opts = {.diag = count_problem, .diag_ctx = &o.problems};
	struct tb_capture *c;
	FILE *f;

	setenv("TB_REPORT_THREADS", threads, 1);
	if (tb_capture_open(dir, &opts, &c) < 0) {
		o.rc = -1;
		return o;
	}
	f = open_memstream(&o.text, &o.len);
	o.rc = f ? tb_report_write(c, f, ropts, &o.totals) : -1;
	if (f)
		fclose(f);
	tb_capture_close(c);
	return o;
}

static struct outcome report_with(const char *dir, const char *threads)
{
	return report_with_opts(dir, threads, NULL);
}

/* --count: no text, and the totals of the merge a report makes - events, sub-buffers, losses. */
static void same_count(const char *dir, const char *threads)
{
	struct tb_report_opts count = {.count_only = true};
	struct outcome full = report_with(dir, "0"), n = report_with_opts(dir, threads, &count);

	is_int(n.rc, full.rc, "%s, count by %s workers: same result", dir, threads);
	is_int(n.len, 0, "%s, count by %s workers: no text", dir, threads);
	ok(n.totals.events == full.totals.events + full.totals.bad_records &&
	   n.totals.pages == full.totals.pages && n.totals.bad_pages == full.totals.bad_pages &&
	   n.totals.lost_lines == full.totals.lost_lines && n.totals.lost_events == full.totals.lost_events,
	   "%s, count by %s workers: %llu records (the report: %llu events, %llu skipped), %llu sub-buffers, "
	   "%llu LOST lines of %llu events, as the report", dir, threads,
	   (unsigned long long)n.totals.events, (unsigned long long)full.totals.events,
	   (unsigned long long)full.totals.bad_records, (unsigned long long)n.totals.pages,
	   (unsigned long long)n.totals.lost_lines, (unsigned long long)n.totals.lost_events);
	free(full.text);
	free(n.text);
}

static void same_report(const char *dir, const char *threads)
{
	struct outcome one = report_with(dir, "0"), many = report_with(dir, threads);

	ok(one.rc >= 0 && one.len > 0, "%s: the report by one thread is written", dir);
	is_int(many.rc, one.rc, "%s, %s workers: same result", dir, threads);
	ok(many.len == one.len && one.text && many.text && !memcmp(many.text, one.text, one.len),
	   "%s, %s workers: the same %zu bytes of text", dir, threads, one.len);
	ok(!memcmp(&many.totals, &one.totals, sizeof(one.totals)),
	   "%s, %s workers: the same totals (%llu events, %llu bad records)", dir, threads,
	   (unsigned long long)one.totals.events, (unsigned long long)one.totals.bad_records);
	is_int(many.problems, one.problems, "%s, %s workers: the same number of problems", dir, threads);
	free(one.text);
	free(many.text);
}

/*
 * trace-cmd's layout with the kernel's text, then the table of which
 * printer printed how many records of each event (tb_report_write_printers):
 * the workers' units count their records themselves (pagework.h, the
 * tally), one thread counts each record as it prints it.
 */
static char *printers_after(const char *dir, const char *threads, const int *cpus, size_t ncpus)
{
	struct tb_tcmd_print_opts o = {.kernel_text = true, .cpus = cpus, .ncpus = ncpus};
	struct tb_capture *c;
	char *text = NULL, *table = NULL;
	size_t len = 0, tlen = 0;
	FILE *f, *t;
	int rc;

	unsigned long problems = 0;
	struct tb_capture_opts copts = {.diag = count_problem, .diag_ctx = &problems};

	setenv("TB_REPORT_THREADS", threads, 1);
	if (tb_capture_open(dir, &copts, &c) < 0)
		return NULL;
	f = open_memstream(&text, &len);
	rc = f ? tb_tcmd_print_capture(c, f, &o, NULL) : -1;
	if (f)
		fclose(f);
	t = rc >= 0 ? open_memstream(&table, &tlen) : NULL;
	if (t) {
		tb_report_write_printers(c, t);
		fclose(t);
	}
	tb_capture_close(c);
	free(text);
	return table;
}

static void same_printers(const char *dir, const int *cpus, size_t ncpus)
{
	char *one = printers_after(dir, "0", cpus, ncpus), *many = printers_after(dir, "2", cpus, ncpus);

	ok(one && many && strstr(one, " records") && !strcmp(one, many),
	   "%s%s, trace-cmd's layout: the printers' counts of 2 workers are one thread's", dir,
	   cpus ? " (--cpu 1)" : "");
	if (!one || !many || strcmp(one, many))
		diag("one thread:\n%s\n2 workers:\n%s", one ? one : "(none)", many ? many : "(none)");
	free(one);
	free(many);
}

int main(void)
{
	static const char *const dirs[] = {
		"tests/data/kernel/cap-f-many-systems", /* every kind of printer */
		"tests/data/kernel/cap-d-abs-timestamp", /* many sub-buffers, losses */
		"tests/data/bad/record-crossing",        /* damaged records: problems in order */
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		same_report(dirs[i], "1");
		same_report(dirs[i], "3");
		same_count(dirs[i], "0");
		same_count(dirs[i], "2");
		same_printers(dirs[i], NULL, 0);
		same_printers(dirs[i], (const int[]){1}, 1);
	}
	return done_testing();
}
