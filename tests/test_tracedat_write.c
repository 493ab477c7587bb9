/*
 * Writing trace.dat files: real kernel captures (tests/data/kernel) and a
 * tracebuf ring's own pages, as version 6 and version 7 (uncompressed,
 * zstd, zlib).
 *
 * What is checked, for each file written:
 *  - read back, every sub-buffer is byte for byte the one in the capture's
 *    raw file (the writer copies pages as they are, compressed or not);
 *  - the kernel-text report of the file prints the same events and loss
 *    lines as the report of the capture directory itself;
 *  - the real `trace-cmd report` opens it and prints exactly what
 *    `tracebuf report` prints on it (skipped without trace-cmd, or for zlib
 *    when trace-cmd was built without it);
 * and the writer refuses misuse with a message (wrong page size, partial
 * pages, pages outside a CPU, an instance v6 was not told about).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/lines.h"
#include "lib/common_fields.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/report.h"
#include "tracebuf/ring.h"
#include "tracebuf/tracedat.h"

#define KDATA "tests/data/kernel/"

static unsigned long problems;
static char last_problem[300];

static void collect(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	if (!d->warning)
		problems++;
	snprintf(last_problem, sizeof(last_problem), "%s: byte %llu: %s", d->file,
		 (unsigned long long)d->offset, d->reason);
}

/* ----------------------------------------------------------- trace-cmd */

static bool have_trace_cmd, trace_cmd_zlib;

static void probe_trace_cmd(void)
{
	char line[256];
	FILE *p = popen("trace-cmd list -c 2>&1", "r");

	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		have_trace_cmd |= strstr(line, "zstd") != NULL;
		trace_cmd_zlib |= strstr(line, "zlib") != NULL;
	}
	have_trace_cmd &= pclose(p) == 0;
}

/* trace-cmd report's stdout for path (NULL if it failed). */
static char *trace_cmd_report(const char *path)
{
	char cmd[512], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len), *p;
	int c;

	snprintf(cmd, sizeof(cmd), "trace-cmd report '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	while (p && (c = fgetc(p)) != EOF)
		fputc(c, out);
	fclose(out);
	if (!p || pclose(p) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static char *our_report(const char *path)
{
	struct tb_tracedat_opts o = {.diag = collect};
	struct tb_tracedat *td;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int rc;

	if (tb_tracedat_open(path, &o, &td) < 0)
		return NULL;
	out = open_memstream(&text, &len);
	rc = tb_tcmd_print_tracedat(td, out, NULL, NULL);
	fclose(out);
	tb_tracedat_close(td);
	if (rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void first_difference(const char *a, const char *b)
{
	struct lines x, y;

	split_lines(strdup(a), &x);
	split_lines(strdup(b), &y);
	for (size_t i = 0; i < x.n || i < y.n; i++)
		if (i >= x.n || i >= y.n || strcmp(x.v[i], y.v[i])) {
			diag("line %zu: trace-cmd: %s", i + 1, i < x.n ? x.v[i] : "(end)");
			diag("line %zu: tracebuf:  %s", i + 1, i < y.n ? y.v[i] : "(end)");
			break;
		}
	free_lines(&x);
	free_lines(&y);
}

static void check_with_trace_cmd(const char *path, const char *what, bool zlib)
{
	char *theirs, *ours;

	if (!have_trace_cmd || (zlib && !trace_cmd_zlib)) {
		skip(1, zlib && have_trace_cmd ? "this trace-cmd was built without zlib"
					       : "trace-cmd is not installed");
		return;
	}
	theirs = trace_cmd_report(path);
	ours = our_report(path);
	ok(theirs && ours && !strcmp(theirs, ours),
	   "%s: trace-cmd report opens it and prints what tracebuf report prints", what);
	if (theirs && ours && strcmp(theirs, ours))
		first_difference(theirs, ours);
	if (!theirs)
		diag("trace-cmd report failed on %s", path);
	free(theirs);
	free(ours);
}

/* ---------------------------------------------------- kernel captures */

/* Every whole page of a raw file equals the capture's page, in order. */
static bool same_pages(struct tb_capture *c, int cpu, const char *raw, size_t page_size, uint64_t *pages)
{
	size_t len;
	char *want = tap_slurp(raw, &len);
	struct tb_capture_page p;
	size_t at = 0;
	bool same = want != NULL;

	while (same && tb_capture_next_page(c, cpu, &p) == 1) {
		same = p.size == page_size && at + page_size <= len && !memcmp(p.data, want + at, page_size);
		at += page_size;
		(*pages)++;
	}
	same = same && at == len / page_size * page_size;
	free(want);
	return same;
}

/* The report's lines but the '#' header (whose E/W may come from stats or from the data). */
static char *body_of_report(struct tb_capture *c)
{
	struct tb_report_opts o = {.no_header = true};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	tb_report_write(c, f, &o, NULL);
	fclose(f);
	return text;
}

static void roundtrip_capture(const char *cap, const char *prefix, int version, const char *compression)
{
	char dir[256], out[256], what[256], raw[400];
	struct tb_tracedat_write_opts o = {.version = version, .compression = compression, .diag = collect};
	struct tb_capture_opts co = {.prefix = prefix, .diag = collect};
	struct tb_capture *from = NULL, *to = NULL;
	char *a = NULL, *b = NULL;
	bool pages_same = true;
	uint64_t pages = 0;
	int rc;

	snprintf(dir, sizeof(dir), KDATA "%s", cap);
	snprintf(out, sizeof(out), "/tmp/tb-tdw-%d-%s-v%d%s.dat", (int)getpid(), cap, version,
		 compression ? compression : "");
	snprintf(what, sizeof(what), "%s%s as v%d%s%s", cap, prefix ? prefix : "", version,
		 compression ? " " : "", compression ? compression : "");
	problems = 0;
	rc = tb_tracedat_write_capture(dir, prefix, out, &o);
	ok(rc == 0 && problems == 0, "%s: written", what);
	if (rc < 0) {
		diag("%s", last_problem);
		return;
	}
	if (tb_capture_open(dir, &co, &from) == 0 && tb_capture_open(out, &co, &to) == 0) {
		for (int cpu = 0; cpu < tb_capture_cpu_slots(from); cpu++) {
			if (!tb_capture_has_cpu(from, cpu))
				continue;
			snprintf(raw, sizeof(raw), "%s/%scpu%d.raw", dir, prefix ? prefix : "", cpu);
			pages_same &= same_pages(to, cpu, raw, tb_capture_subbuf_size(from), &pages);
		}
		ok(pages_same && pages > 0, "%s: its %llu sub-buffers read back byte for byte", what,
		   (unsigned long long)pages);
		tb_capture_rewind(to);
		a = body_of_report(from);
		b = body_of_report(to);
		ok(a && b && !strcmp(a, b), "%s: the kernel-text report of the file equals the directory's",
		   what);
		free(a);
		free(b);
	} else {
		ok(0, "%s: the directory and the file open as captures (%s)", what, last_problem);
		ok(0, "%s: (skipped by the failure above)", what);
	}
	tb_capture_close(from);
	tb_capture_close(to);
	check_with_trace_cmd(out, what, compression && !strcmp(compression, "zlib"));
	unlink(out);
}

static void test_captures(void)
{
	static const struct {
		const char *dir, *prefix;
	} caps[] = {
	    {"cap-a-small-noloss", NULL},
	    {"cap-b-overrun", NULL},
	    {"cap-c-subbuf8k", NULL},
	    {"cap-d-abs-timestamp", NULL},
	    {"cap-e-partial-and-padding", "e1."},
	    {"cap-e-partial-and-padding", "e2."},
	    {"cap-f-many-systems", NULL},
	};
	static const struct {
		int version;
		const char *compression;
	} kinds[] = {{6, NULL}, {7, NULL}, {7, "zstd"}, {7, "zlib"}};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			roundtrip_capture(caps[i].dir, caps[i].prefix, kinds[k].version,
					  kinds[k].compression);
}

/* ------------------------------------------------------- a tracebuf ring */

#define SAMPLE_ID 900
#define SAMPLES	  3000

static const char sample_format[] =
    "name: sample\n"
    "ID: 900\n"
    "format:\n"
    FORMAT_COMMON_FIELDS
    "\n"
    "\tfield:u64 seq;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:u32 value;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\n"
    "print fmt: \"seq=%llu value=%u\", REC->seq, REC->value\n";

struct sample {
	uint16_t type;
	uint8_t flags, preempt;
	int32_t pid;
	uint64_t seq;
	uint32_t value, pad;
};

/* A ring's pages, drained CPU by CPU into a trace.dat buffer. */
static int write_ring(struct tb_tracedat_writer *w, struct tb_ring *ring, const char *buffer)
{
	size_t size = tb_ring_subbuf_size(ring);
	uint8_t *page = malloc(size);
	int rc = tb_tracedat_write_begin_buffer(w, buffer, "mono");

	for (unsigned cpu = 0; rc == 0 && cpu < tb_ring_ncpus(ring); cpu++) {
		rc = tb_tracedat_write_begin_cpu(w, (int)cpu);
		while (rc == 0 && tb_read_page(ring, cpu, page, size) > 0)
			rc = tb_tracedat_write_pages(w, page, size);
		if (rc == 0)
			rc = tb_tracedat_write_end_cpu(w);
	}
	free(page);
	return rc;
}

static struct tb_ring *filled_ring(void)
{
	struct tb_ring_opts ro;
	struct tb_ring *ring;
	struct sample s = {.type = SAMPLE_ID, .pid = (int32_t)getpid()};

	tb_ring_opts_default(&ro);
	ro.clock = TB_CLOCK_MONO;
	ro.size_kb = 1024; /* room for every sample: nothing is overwritten */
	if (tb_ring_new(&ring, &ro) < 0)
		return NULL;
	for (uint32_t i = 0; i < SAMPLES; i++) {
		s.seq = i;
		s.value = i * 7;
		tb_write(ring, &s, sizeof(s));
	}
	return ring;
}

/* The samples come back in order, each with its own values: derived from what was written. */
static bool samples_in_order(const char *text, const char *prefix)
{
	struct lines l;
	uint64_t next = 0;
	bool good = true;

	split_lines(strdup(text), &l);
	for (size_t i = 1; i < l.n && good; i++) {
		char want[96], *at = strstr(l.v[i], " sample: ");
		snprintf(want, sizeof(want), "seq=%llu value=%llu", (unsigned long long)next,
			 (unsigned long long)next * 7);
		good = at && strstr(at, want) && !strncmp(l.v[i], prefix, strlen(prefix)) &&
		       strstr(l.v[i], "tb-ring-test-");
		next++;
	}
	good = good && next == SAMPLES && !strcmp(l.v[0], "cpus=2");
	if (!good)
		diag("sample %llu out of place: %s", (unsigned long long)next,
		     next < l.n ? l.v[next] : "(missing)");
	free_lines(&l);
	return good;
}

static void ring_file(int version, const char *compression, const char *instance)
{
	char out[256], what[128], cmdline[64], *hp, *he, *text;
	size_t hp_len, he_len;
	const char *instances[] = {instance, NULL};
	struct tb_tracedat_write_opts o = {.version = version,
					   .compression = compression,
					   .cpus = 2,
					   .clock = "mono",
					   .diag = collect,
					   .instances = instance ? instances : NULL};
	struct tb_tracedat_writer *w;
	struct tb_ring *ring = filled_ring();
	int rc;

	snprintf(out, sizeof(out), "/tmp/tb-tdw-%d-ring-v%d%s.dat", (int)getpid(), version,
		 compression ? compression : "");
	snprintf(what, sizeof(what), "a tracebuf ring as v%d%s%s%s%s", version, compression ? " " : "",
		 compression ? compression : "", instance ? " in instance " : "", instance ? instance : "");
	hp = tap_slurp(KDATA "header_page", &hp_len);
	he = tap_slurp(KDATA "header_event", &he_len);
	snprintf(cmdline, sizeof(cmdline), "%d tb-ring-test-%d\n", (int)getpid(), (int)getpid() % 10);
	problems = 0;
	rc = ring && hp && he ? tb_tracedat_writer_open(out, &o, &w) : -EINVAL;
	if (rc == 0) {
		tb_tracedat_write_headers(w, hp, hp_len, he, he_len);
		tb_tracedat_write_format(w, "tbtest", sample_format, sizeof(sample_format) - 1);
		tb_tracedat_write_cmdlines(w, cmdline, strlen(cmdline));
		if (instance)
			tb_tracedat_write_begin_buffer(w, "", NULL); /* an empty top buffer first */
		write_ring(w, ring, instance ? instance : "");
		rc = tb_tracedat_writer_close(w);
	}
	ok(rc == 0 && problems == 0, "%s: written (%s)", what, rc ? last_problem : "ok");
	text = our_report(out);
	ok(text && samples_in_order(text, instance ? "app: " : " "),
	   "%s: all %d samples read back in order, with their values", what, SAMPLES);
	free(text);
	check_with_trace_cmd(out, what, compression && !strcmp(compression, "zlib"));
	unlink(out);
	tb_ring_free(ring);
	free(hp);
	free(he);
}

static void test_ring(void)
{
	ring_file(6, NULL, NULL);
	ring_file(7, NULL, NULL);
	ring_file(7, "zstd", NULL);
	ring_file(7, "zlib", NULL);
	ring_file(6, NULL, "app");
	ring_file(7, "zstd", "app");
}

/* --------------------------------------------------------------- misuse */

static void test_misuse(void)
{
	char out[128], *hp;
	size_t hp_len;
	struct tb_tracedat_write_opts o = {.version = 6, .cpus = 1, .diag = collect};
	struct tb_tracedat_writer *w;
	uint8_t page[4096] = {0};

	snprintf(out, sizeof(out), "/tmp/tb-tdw-%d-misuse.dat", (int)getpid());
	hp = tap_slurp(KDATA "header_page", &hp_len);

	o.version = 6;
	o.compression = "zstd";
	ok(tb_tracedat_writer_open(out, &o, &w) == -EINVAL, "v6 with compression is refused");
	o.compression = "lz4";
	o.version = 7;
	ok(tb_tracedat_writer_open(out, &o, &w) == -EINVAL, "an unknown compression is refused");
	o.compression = NULL;
	o.version = 6;

	o.page_size = 8192;
	tb_tracedat_writer_open(out, &o, &w);
	tb_tracedat_write_headers(w, hp, hp_len, "", 0);
	ok(tb_tracedat_write_begin_buffer(w, "", NULL) == -EINVAL && strstr(last_problem, "8192"),
	   "a page size header_page does not describe is refused, both named");
	ok(tb_tracedat_writer_close(w) == -EINVAL, "and close says so too");
	o.page_size = 0;

	tb_tracedat_writer_open(out, &o, &w);
	ok(tb_tracedat_write_pages(w, page, 4096) == -EINVAL, "pages outside a CPU are refused");
	tb_tracedat_writer_close(w);

	tb_tracedat_writer_open(out, &o, &w);
	tb_tracedat_write_headers(w, hp, hp_len, "", 0);
	tb_tracedat_write_begin_buffer(w, "", NULL);
	tb_tracedat_write_begin_cpu(w, 0);
	ok(tb_tracedat_write_pages(w, page, 100) == -EINVAL && strstr(last_problem, "100 bytes"),
	   "a partial sub-buffer is refused");
	tb_tracedat_writer_close(w);

	tb_tracedat_writer_open(out, &o, &w);
	tb_tracedat_write_headers(w, hp, hp_len, "", 0);
	ok(tb_tracedat_write_begin_buffer(w, "inst", NULL) == -EINVAL && strstr(last_problem, "inst"),
	   "v6: an instance not announced is refused, named");
	tb_tracedat_writer_close(w);

	/* Formats of several captures: one text per event, and one event per ID. */
	static const char a5[] = "name: alpha\nID: 1500\nformat:\n", a5_again[] = "name: alpha\nID: 1500\nformat:\n";
	static const char b5[] = "name: beta\nID: 1500\nformat:\n", a6[] = "name: alpha\nID: 1600\nformat:\n";
	tb_tracedat_writer_open(out, &o, &w);
	ok(tb_tracedat_write_format(w, "sys", a5, sizeof(a5) - 1) == 0 &&
	       tb_tracedat_write_format(w, "sys", a5_again, sizeof(a5_again) - 1) == 0,
	   "an event given twice with one ID is kept once");
	ok(tb_tracedat_write_format(w, "other", b5, sizeof(b5) - 1) == -EINVAL &&
	       strstr(last_problem, "sys:alpha and other:beta both have ID 1500"),
	   "two events with one ID are refused, both named");
	tb_tracedat_writer_close(w);
	tb_tracedat_writer_open(out, &o, &w);
	tb_tracedat_write_format(w, "sys", a5, sizeof(a5) - 1);
	ok(tb_tracedat_write_format(w, "sys", a6, sizeof(a6) - 1) == -EINVAL &&
	       strstr(last_problem, "sys:alpha is given with ID 1500 and with ID 1600"),
	   "one event with two IDs is refused");
	tb_tracedat_writer_close(w);

	tb_tracedat_writer_open(out, &o, &w);
	ok(tb_tracedat_writer_close(w) == -EINVAL && strstr(last_problem, "header_page"),
	   "a file without header_page is refused");
	unlink(out);
	free(hp);
}

/* The process's peak resident memory so far, in KiB. */
static long peak_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* cp of src into dst, copies times over (a bigger raw file of real sub-buffers); false on failure. */
static bool repeat_file(const char *src, const char *dst, int copies)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	static char buf[1 << 16];
	bool good = in && out;
	size_t n;

	for (int i = 0; good && i < copies; i++) {
		rewind(in);
		while (good && (n = fread(buf, 1, sizeof(buf), in)) > 0)
			good = fwrite(buf, 1, n, out) == n;
	}
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		good = false;
	return good;
}

/*
 * A capture's raw file is checked and copied a block at a time: writing a
 * 48 MiB raw file as trace.dat must not hold it in memory (a mapping of the
 * whole file, populated, once did: every byte of it counted as resident).
 */
static void test_bounded_memory(void)
{
	const char *src = KDATA "cap-a-small-noloss";
	static const char *const files[] = {"header_page", "header_event", "meta.txt", "saved_cmdlines"};
	char dir[] = "/tmp/tb-tdw-big-XXXXXX", from[512], to[512], out[600];
	struct tb_tracedat_write_opts o = {.version = 6, .diag = collect};
	long before;
	int rc;

	if (!mkdtemp(dir)) {
		ok(0, "a temporary directory for the big capture");
		return;
	}
	bool made = true;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s", src, files[i]);
		snprintf(to, sizeof(to), "%s/%s", dir, files[i]);
		if (access(from, R_OK) == 0)
			made &= repeat_file(from, to, 1);
	}
	snprintf(from, sizeof(from), "cp -r %s/formats %s/", src, dir);
	made &= system(from) == 0;
	snprintf(from, sizeof(from), "%s/cpu0.raw", src);
	snprintf(to, sizeof(to), "%s/cpu0.raw", dir);
	made &= repeat_file(from, to, 48 * 1024 * 1024 / 36864);
	ok(made, "a capture whose cpu0.raw is 48 MiB of real sub-buffers (cap-a's, repeated)");
	snprintf(out, sizeof(out), "%s/big.dat", dir);
	before = peak_kib();
	problems = 0;
	rc = tb_tracedat_write_capture(dir, NULL, out, &o);
	long grown = peak_kib() - before;
	ok(rc == 0 && problems == 0, "the 48 MiB capture written as trace.dat (%s)", rc ? last_problem : "ok");
	ok(before > 0 && grown < 16 * 1024, "its peak resident memory grew by %ld KiB (at most 16 MiB: a block, not the file)",
	   grown);
	snprintf(from, sizeof(from), "rm -rf %s", dir);
	if (system(from) != 0)
		diag("could not remove %s", dir);
}

int main(void)
{
	test_bounded_memory(); /* first: its measure is the growth of the process's peak */
	probe_trace_cmd();
	if (!have_trace_cmd)
		diag("trace-cmd is not installed: its checks are skipped");
	test_captures();
	test_ring();
	test_misuse();
	return done_testing();
}
