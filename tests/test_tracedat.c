/*
 * trace.dat reading against the real trace-cmd's own output.
 *
 * tests/data/trace-dat holds real files written by trace-cmd 3.1.6 (v6, v7
 * uncompressed and zstd, instances, dropped events, hand-made minimal
 * files) and, next to each, the exact stdout of `trace-cmd report` with
 * various options (README.vectors.md).  tb_tcmd_print_tracedat() must print
 * the same text byte for byte; the share of identical lines is printed
 * for each file, so a regression shows how far it goes.  The facts the
 * reference and the vectors' README state (buffers, CPU data offsets and
 * sizes, event counts, drop lines) are checked on the parsed file, and a
 * trace.dat opened as a capture must give the same records as its pages
 * decoded directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/lines.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/page.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"

#define DATA "tests/data/trace-dat/"

static struct {
	size_t n;
	char msg[32][300];
} problems;

static void collect(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	if (problems.n < 32)
		snprintf(problems.msg[problems.n], sizeof(problems.msg[0]), "%s: byte %llu: %s%s", d->file,
			 (unsigned long long)d->offset, d->warning ? "warning: " : "", d->reason);
	problems.n++;
}

static struct tb_tracedat *open_dat(const char *name)
{
	char path[256];
	struct tb_tracedat_opts o = {.diag = collect};
	struct tb_tracedat *td = NULL;
	int rc;

	snprintf(path, sizeof(path), DATA "%s", name);
	problems.n = 0;
	rc = tb_tracedat_open(path, &o, &td);
	if (rc < 0)
		diag("%s: open failed: %s", path, strerror(-rc));
	for (size_t i = 0; i < problems.n && i < 32; i++)
		diag("problem: %s", problems.msg[i]);
	return td;
}

/* Lines at the same position that are equal, as a share of the expected lines. */
static void identical_share(const char *what, const char *got, const char *want)
{
	struct lines g, w;
	size_t same = 0;

	split_lines(strdup(got), &g);
	split_lines(strdup(want), &w);
	for (size_t i = 0; i < g.n && i < w.n; i++)
		same += !strcmp(g.v[i], w.v[i]);
	diag("%s: %zu of %zu lines identical (%.1f%%)", what, same, w.n,
	     w.n ? 100.0 * (double)same / (double)w.n : 100.0);
	for (size_t i = 0, shown = 0; i < g.n && i < w.n && shown < 3; i++)
		if (strcmp(g.v[i], w.v[i])) {
			diag("  line %zu: got  %s", i + 1, g.v[i]);
			diag("  line %zu: want %s", i + 1, w.v[i]);
			shown++;
		}
	free_lines(&g);
	free_lines(&w);
}

/* ------------------------------------------------ report vs trace-cmd */

struct report_case {
	const char *dat;
	const char *expected; /* trace-cmd's stdout */
	struct tb_tcmd_print_opts opts;
	bool stat;
};

static const struct report_case cases[] = {
    {"sched-marker-v6.dat", "sched-marker-v6.report.txt", {0}, false},
    {"sched-marker-v6.dat", "sched-marker-v6.report-N.txt", {.no_plugins = true}, false},
    {"sched-marker-v6.dat", "sched-marker-v6.report-R.txt", {.raw = true}, false},
    {"sched-marker-v6.dat", "sched-marker-v6.report-l.txt", {.latency = true}, false},
    {"sched-marker-v6.dat", "sched-marker-v6.report-t.txt", {.nsec = true}, false},
    {"sched-marker-v6.dat", "sched-marker-v6.report-stat.txt", {0}, true},
    /* The vectors' README: convert's v7 files report byte-identically to the v6 one. */
    {"sched-marker-v7-none.dat", "sched-marker-v6.report.txt", {0}, false},
    {"sched-marker-v7-none.dat", "sched-marker-v6.report-l.txt", {.latency = true}, false},
    {"sched-marker-v7-zstd.dat", "sched-marker-v6.report.txt", {0}, false},
    {"sched-marker-v7-zstd.dat", "sched-marker-v6.report-l.txt", {.latency = true}, false},
    {"lost-events-v6.dat", "lost-events-v6.report.txt", {0}, false},
    {"lost-events-v6.dat", "lost-events-v6.report-stat.txt", {0}, true},
    {"sched-v7-zstd.dat", "sched-v7-zstd.report.txt", {0}, false},
    {"sched-v7-zstd.dat", "sched-v7-zstd.report-N.txt", {.no_plugins = true}, false},
    {"sched-v7-zstd.dat", "sched-v7-zstd.report-stat.txt", {0}, true},
    {"top-buffer-v6.dat", "top-buffer-v6.report.txt", {0}, false},
    {"top-buffer-v6.dat", "top-buffer-v6.report-N.txt", {.no_plugins = true}, false},
    {"top-buffer-v6.dat", "top-buffer-v6.report-R.txt", {.raw = true}, false},
    {"top-buffer-v6.dat", "top-buffer-v6.report-l.txt", {.latency = true}, false},
    {"top-buffer-v6.dat", "top-buffer-v6.report-t.txt", {.nsec = true}, false},
    {"top-buffer-v6.dat", "top-buffer-v6.report-stat.txt", {0}, true},
    {"minimal-handmade-v6.dat", "minimal-handmade-v6.report.txt", {0}, false},
    {"minimal-handmade-v6.dat", "minimal-handmade-v6.report-R.txt", {.raw = true}, false},
    {"minimal-handmade-v6.dat", "minimal-handmade-v6.report-l.txt", {.latency = true}, false},
    {"minimal-handmade-v6.dat", "minimal-handmade-v6.report-t.txt", {.nsec = true}, false},
    {"minimal-handmade-v7.dat", "minimal-handmade-v7.report.txt", {0}, false},
};

static void test_reports(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct report_case *c = &cases[i];
		char path[256], *want, *got = NULL, what[160];
		size_t len = 0;
		struct tb_tracedat *td = open_dat(c->dat);
		FILE *f = open_memstream(&got, &len);
		int rc = -1;

		snprintf(path, sizeof(path), DATA "%s", c->expected);
		want = tap_slurp(path, NULL);
		if (td)
			rc = c->stat ? tb_tracedat_print_stat(td, f)
				     : tb_tcmd_print_tracedat(td, f, &c->opts, NULL);
		fclose(f);
		snprintf(what, sizeof(what), "%s as %s", c->dat, c->expected);
		ok(td && want && rc == 0 && problems.n == 0, "%s: read and printed, no problem", what);
		ok(want && got && !strcmp(got, want), "%s: trace-cmd's text, byte for byte", what);
		if (want && got)
			identical_share(what, got, want);
		free(got);
		free(want);
		tb_tracedat_close(td);
	}
}

/* --cpu numbers CPUs as trace-cmd merges them: the (empty) top buffer's, then dat's. */
static void test_cpu_filter(void)
{
	struct tb_tracedat *td = open_dat("sched-marker-v6.dat");
	int cpu0[] = {0}, cpu2[] = {2}, cpu3[] = {3};
	struct {
		int *cpus;
		uint64_t want; /* events, from the README: CPU0 845, CPU1 199 */
	} sel[] = {{cpu0, 0}, {cpu2, 845}, {cpu3, 199}};

	for (size_t i = 0; td && i < 3; i++) {
		struct tb_tcmd_print_opts o = {.cpus = sel[i].cpus, .ncpus = 1};
		struct tb_report_totals t;
		FILE *f = fopen("/dev/null", "w");
		tb_tcmd_print_tracedat(td, f, &o, &t);
		fclose(f);
		is_int(t.events, sel[i].want, "--cpu %d selects %llu events", sel[i].cpus[0],
		       (unsigned long long)sel[i].want);
	}
	tb_tracedat_close(td);
}

/* ------------------------------------------------------- parsed facts */

static void test_facts(void)
{
	struct tb_tracedat *td = open_dat("sched-marker-v6.dat");
	const struct tb_tracedat_buffer *b;

	ok(td != NULL, "sched-marker-v6.dat opens");
	if (!td)
		return;
	is_int(tb_tracedat_info(td)->version, 6, "version 6");
	is_int(tb_tracedat_info(td)->page_size, 4096, "4096-byte pages");
	is_int(tb_tracedat_info(td)->cpus, 2, "2 CPUs");
	is_int(tb_tracedat_buffer_count(td), 2, "the top buffer and instance dat");
	b = tb_tracedat_buffer(td, 1);
	/* Reference §2.1: dat's block lists (81920, 45056) and (126976, 12288). */
	ok(b && !strcmp(b->name, "dat") && b->ncpus == 2 && b->cpus[0].offset == 81920 &&
	       b->cpus[0].size == 45056 && b->cpus[1].offset == 126976 && b->cpus[1].size == 12288,
	   "dat's CPU data: (81920, 45056) and (126976, 12288)");
	ok(b && b->clock && !strcmp(b->clock, "local"), "dat's clock is local");
	b = tb_tracedat_buffer(td, 0);
	ok(b && !b->name[0] && b->cpus[0].size == 0 && b->cpus[1].size == 0,
	   "the top buffer is there and empty");
	is_int(tb_tracedat_main_buffer(td), 1, "the main buffer is dat");
	ok(tb_tracedat_info(td)->uname &&
	       !strcmp(tb_tracedat_info(td)->uname, "Linux vm 6.18.44-fc-v782 x86_64"),
	   "UNAME option read");
	tb_tracedat_close(td);

	td = open_dat("sched-v7-zstd.dat");
	ok(td && tb_tracedat_info(td)->version == 7 && !strcmp(tb_tracedat_info(td)->compression, "zstd") &&
	       !strcmp(tb_tracedat_info(td)->compression_version, "1.5.4"),
	   "sched-v7-zstd.dat: version 7, zstd 1.5.4");
	/* The vectors' dump: kallsyms 1 012 386 -> 5 414 753 bytes (u32 length + text). */
	ok(td && tb_tracedat_info(td)->kallsyms_len == 5414749, "kallsyms decompressed whole");
	tb_tracedat_close(td);

	td = open_dat("top-buffer-v6.dat");
	b = td ? tb_tracedat_buffer(td, 0) : NULL;
	/* Reference §5: CPU0 = (0x16000, 0x6000), CPU1 = (0x1c000, 0x2000), no TRACECLOCK. */
	ok(b && tb_tracedat_buffer_count(td) == 1 && b->cpus[0].offset == 0x16000 &&
	       b->cpus[0].size == 0x6000 && b->cpus[1].offset == 0x1c000 && b->cpus[1].size == 0x2000 &&
	       !b->clock && !tb_tracedat_info(td)->trace_clock,
	   "top-buffer-v6.dat: its CPU table, and no clock named");
	tb_tracedat_close(td);
}

/* ----------------------------------------------------- capture view */

/* Records of every CPU of a capture, decoded from its pages. */
static uint64_t count_records(struct tb_capture *c, uint64_t *lost_pages)
{
	struct tb_capture_page p;
	struct tb_page_cursor cur;
	struct tb_record r;
	uint64_t n = 0;

	*lost_pages = 0;
	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++)
		while (tb_capture_next_page(c, cpu, &p) == 1)
			if (tb_page_cursor_init(&cur, p.data, p.size) == 0) {
				*lost_pages += cur.hdr.lost;
				while (tb_page_next_data(&cur, &r) == 1)
					n++;
			}
	return n;
}

static void test_capture_view(void)
{
	static const struct {
		const char *dat;
		uint64_t events, lost_pages; /* the vectors' README */
	} files[] = {
	    {"sched-marker-v6.dat", 1044, 0}, {"sched-marker-v7-zstd.dat", 1044, 0},
	    {"lost-events-v6.dat", 3564, 2},  {"sched-v7-zstd.dat", 397, 0},
	    {"top-buffer-v6.dat", 662, 0},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[256], *text = NULL;
		size_t len = 0;
		struct tb_capture_opts o = {.diag = collect};
		struct tb_capture *c = NULL;
		struct tb_report_totals t = {0};
		uint64_t n = 0, lost = 0;
		FILE *f;
		int rc;

		snprintf(path, sizeof(path), DATA "%s", files[i].dat);
		problems.n = 0;
		rc = tb_capture_open(path, &o, &c);
		ok(rc == 0, "%s opens as a capture", files[i].dat);
		if (rc < 0)
			continue;
		n = count_records(c, &lost);
		is_int(n, files[i].events, "%s: %llu records in its pages", files[i].dat,
		       (unsigned long long)files[i].events);
		is_int(lost, files[i].lost_pages, "%s: %llu pages flag lost events", files[i].dat,
		       (unsigned long long)files[i].lost_pages);
		tb_capture_rewind(c);
		f = open_memstream(&text, &len);
		rc = tb_report_write(c, f, NULL, &t);
		fclose(f);
		ok(rc == 0 && t.events == files[i].events && t.lost_lines == files[i].lost_pages,
		   "%s: the kernel-text report prints %llu events and %llu loss lines", files[i].dat,
		   (unsigned long long)files[i].events, (unsigned long long)files[i].lost_pages);
		free(text);
		tb_capture_close(c);
	}
}

/* ------------------------------------------------------ time options */

/*
 * minimal-handmade-v6.dat with an options block inserted before its
 * flyrecord table: DATE "0x1000" (microseconds: +4.096 ms, reference §2.2)
 * and OFFSET "250000" (ns).  Its first event, at 1000.000000 s, must then
 * print at 1000.004346 s - and the real trace-cmd must agree.
 */
static void test_time_options(void)
{
	static const uint8_t opts[] = {
	    'o', 'p', 't', 'i', 'o', 'n', 's', ' ', ' ', 0,   1,   0,	7,
	    0,	 0,   0,   '0', 'x', '1', '0', '0', '0', 0,		   /* DATE */
	    7,	 0,   7,   0,	0,   0,	  '2', '5', '0', '0', '0', '0', 0, /* OFFSET */
	    0,	 0,							   /* end */
	};
	const size_t at = 0x3c7, shift = sizeof(opts);
	size_t len = 0;
	char *src = tap_slurp(DATA "minimal-handmade-v6.dat", &len), *text = NULL, *tc = NULL;
	char out[64], cmd[128];
	uint8_t *dat = malloc(len + shift);
	uint64_t off = 4096 + shift;
	struct tb_tracedat_opts o = {.diag = collect};
	struct tb_tracedat *td = NULL;
	size_t tlen = 0;
	FILE *f;

	snprintf(out, sizeof(out), "/tmp/tb-tdat-opts-%d.dat", (int)getpid());
	if (!src || !dat || len < 4096) {
		ok(0, "minimal-handmade-v6.dat read");
		free(src);
		free(dat);
		return;
	}
	memcpy(dat, src, at);
	memcpy(dat + at, opts, shift);
	memcpy(dat + at + shift, src + at, len - at);
	memcpy(dat + 0x3d1 + shift, &off, 8); /* the CPU's data moved with the rest */
	f = fopen(out, "wb");
	fwrite(dat, 1, len + shift, f);
	fclose(f);
	problems.n = 0;
	if (tb_tracedat_open(out, &o, &td) == 0) {
		f = open_memstream(&text, &tlen);
		tb_tcmd_print_tracedat(td, f, NULL, NULL);
		fclose(f);
	}
	ok(td && tb_tracedat_info(td)->ts_offset == 4096000 + 250000 && text &&
	       strstr(text, "1000.004346: hello:") && strstr(text, "1000.504348: hello:"),
	   "DATE (µs) and OFFSET (ns) options shift every time stamp");
	snprintf(cmd, sizeof(cmd), "trace-cmd report %s 2>/dev/null", out);
	if ((f = popen(cmd, "r"))) {
		size_t n = 0;
		FILE *m = open_memstream(&tc, &n);
		int c;
		while ((c = fgetc(f)) != EOF)
			fputc(c, m);
		fclose(m);
		if (pclose(f) != 0 || !n) {
			free(tc);
			tc = NULL;
		}
	}
	if (tc)
		ok(text && !strcmp(tc, text), "trace-cmd prints the shifted file the same");
	else
		skip(1, "trace-cmd is not installed");
	tb_tracedat_close(td);
	unlink(out);
	free(text);
	free(tc);
	free(src);
	free(dat);
}

/*
 * A v6 latency file: minimal-handmade-v6.dat with "latency  " where its
 * flyrecord tag was and the kernel's latency text after it.  trace-cmd
 * prints cpus=, the text as it is, and one more newline.
 */
static void test_latency_file(void)
{
	static const char text[] = "# tracer: wakeup\n#\n  <idle>-0       0d...    0us : hello\n";
	const size_t at = 0x3c7;
	char out[64], *src = tap_slurp(DATA "minimal-handmade-v6.dat", NULL), *got = NULL;
	struct tb_tracedat_opts o = {.diag = collect};
	struct tb_tracedat *td = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(out, sizeof(out), "/tmp/tb-tdat-lat-%d.dat", (int)getpid());
	f = fopen(out, "wb");
	if (src && f) {
		fwrite(src, 1, at, f);
		fwrite("latency  ", 1, 10, f);
		fwrite(text, 1, sizeof(text) - 1, f);
	}
	if (f)
		fclose(f);
	if (tb_tracedat_open(out, &o, &td) == 0) {
		f = open_memstream(&got, &len);
		tb_tcmd_print_tracedat(td, f, NULL, NULL);
		fclose(f);
	}
	ok(td && tb_tracedat_info(td)->latency && got && !strncmp(got, "cpus=1\n", 7) &&
	   !strncmp(got + 7, text, sizeof(text) - 1) && !strcmp(got + 7 + sizeof(text) - 1, "\n"),
	   "a latency file prints as cpus=, its text and a newline (trace-cmd's read_latency)");
	tb_tracedat_close(td);
	unlink(out);
	free(got);
	free(src);
}

int main(void)
{
	test_latency_file();
	test_time_options();
	test_reports();
	test_cpu_filter();
	test_facts();
	test_capture_view();
	return done_testing();
}
