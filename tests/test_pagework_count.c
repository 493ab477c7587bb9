/*
 * A count (report --count) by worker threads is the count of one thread,
 * on inputs large enough that a worker's unit spans many reads of its
 * slab and each CPU goes through its queue of units several times
 * (src/print/pagework.c, COUNT_UNIT_PAGES): the same totals and the same
 * problems, each with its file and byte, in the same order.
 *
 * The inputs are real kernel sub-buffers: a capture's raw files repeated
 * (so the time goes back at each repeat, a problem said per repeat, and
 * the losses its pages announce come again), as a capture directory, a
 * trace.dat v6 and a trace.dat v7 with zstd chunks.  Also run under
 * ThreadSanitizer (make test-tsan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"

#define KDATA "tests/data/kernel/"

struct outcome {
	int rc;
	struct tb_report_totals totals;
	char *problems; /* "FILE: byte N: REASON\n" each, in the order told */
	size_t len;
	FILE *log;
	unsigned long n;
};

static void keep_problem(void *ctx, const struct tb_problem *d)
{
	struct outcome *o = ctx;

	fprintf(o->log, "%s: byte %llu: %s%s\n", d->file, (unsigned long long)d->offset,
		d->warning ? "warning: " : "", d->reason);
	o->n++;
}

static struct outcome count_with(const char *input, const char *threads)
{
	struct outcome o = {0};
	struct tb_capture_opts opts = {.diag = keep_problem, .diag_ctx = &o};
	struct tb_report_opts count = {.count_only = true};
	struct tb_capture *c;
	FILE *f = fopen("/dev/null", "w");

	o.log = open_memstream(&o.problems, &o.len);
	setenv("TB_REPORT_THREADS", threads, 1);
	if (!f || !o.log || tb_capture_open(input, &opts, &c) < 0) {
		o.rc = -1;
	} else {
		o.rc = tb_report_write(c, f, &count, &o.totals);
		tb_capture_close(c);
	}
	if (f)
		fclose(f);
	if (o.log)
		fclose(o.log);
	return o;
}

static void same_count(const char *input, const char *what)
{
	struct outcome one = count_with(input, "0"), two = count_with(input, "2");

	ok(one.rc >= 0 && one.totals.events > 0 && one.totals.pages > 3 * 256,
	   "%s: counted by one thread (%llu events in %llu sub-buffers)", what,
	   (unsigned long long)one.totals.events, (unsigned long long)one.totals.pages);
	is_int(two.rc, one.rc, "%s: 2 workers, the same result", what);
	ok(!memcmp(&two.totals, &one.totals, sizeof(one.totals)),
	   "%s: 2 workers, the same totals (%llu events, %llu sub-buffers, %llu LOST lines of %llu events)", what,
	   (unsigned long long)two.totals.events, (unsigned long long)two.totals.pages,
	   (unsigned long long)two.totals.lost_lines, (unsigned long long)two.totals.lost_events);
	ok(one.n > 0 && one.problems && two.problems && !strcmp(one.problems, two.problems),
	   "%s: 2 workers, the same %lu problems in the same order", what, one.n);
	if (one.problems && two.problems && strcmp(one.problems, two.problems))
		diag("one thread:\n%.2000s\n2 workers:\n%.2000s", one.problems, two.problems);
	free(one.problems);
	free(two.problems);
}

/* Append src to dst copies times; false on failure. */
static bool repeat_into(const char *src, const char *dst, int copies)
{
	size_t len;
	char *data = tap_slurp(src, &len);
	FILE *out = fopen(dst, "wb");
	bool good = data && out;

	for (int i = 0; good && i < copies; i++)
		good = fwrite(data, 1, len, out) == len;
	if (out && fclose(out) != 0)
		good = false;
	free(data);
	return good;
}

/* A copy of capture src in dir whose raw files hold each CPU's sub-buffers copies times. */
static bool grown_capture(const char *src, const char *dir, int copies)
{
	char cmd[1024], from[512], to[512];
	bool good;

	snprintf(cmd, sizeof(cmd), "cp -r %s/. %s/", src, dir);
	good = system(cmd) == 0;
	for (int cpu = 0; good && cpu < 2; cpu++) {
		snprintf(from, sizeof(from), "%s/cpu%d.raw", src, cpu);
		snprintf(to, sizeof(to), "%s/cpu%d.raw", dir, cpu);
		good = repeat_into(from, to, copies);
	}
	return good;
}

static void grown(const char *src, int copies)
{
	char dir[] = "/tmp/tb-pwcount-XXXXXX", path[600], what[700];
	struct tb_tracedat_write_opts v6 = {.version = 6}, v7 = {.version = 7, .compression = "zstd"};

	if (!mkdtemp(dir)) {
		ok(0, "a temporary directory");
		return;
	}
	ok(grown_capture(src, dir, copies), "%s, each CPU's sub-buffers %d times", src, copies);
	snprintf(what, sizeof(what), "%s x%d, capture", src, copies);
	same_count(dir, what);
	snprintf(path, sizeof(path), "%s/v6.dat", dir);
	ok(tb_tracedat_write_capture(dir, NULL, path, &v6) == 0, "%s x%d written as trace.dat v6", src, copies);
	snprintf(what, sizeof(what), "%s x%d, trace.dat v6", src, copies);
	same_count(path, what);
	snprintf(path, sizeof(path), "%s/v7.dat", dir);
	ok(tb_tracedat_write_capture(dir, NULL, path, &v7) == 0, "%s x%d written as trace.dat v7 zstd", src, copies);
	snprintf(what, sizeof(what), "%s x%d, trace.dat v7 zstd", src, copies);
	same_count(path, what);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}

int main(void)
{
	grown(KDATA "cap-f-many-systems", 30); /* 33 sub-buffers a CPU: 990 */
	grown(KDATA "cap-d-abs-timestamp", 20); /* absolute stamps, losses; CPU 0 1,060 sub-buffers, CPU 1 40 */
	return done_testing();
}
