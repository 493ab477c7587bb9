// SPDX-License-Identifier: MIT
/*
 * test_blob_report - blob references in a saved ring, as the report prints
 * them.  tb_save_ring copies the blob of each reference into the
 * capture's blobs.bin as it takes the page, so each reference prints as
 * "CPU:N [BLOB: LEN bytes, crc32 X] "head"..." with the CRC-32 this test
 * computes itself (zlib) from the bytes it wrote; a blob overwritten before
 * the save prints as "[BLOB LOST: LEN bytes, overwritten before it was
 * saved]" and counts in blobs_lost; a damaged or truncated blobs.bin is
 * reported with the file and offset and its blobs print as lost, never as
 * other bytes; a capture without blobs.bin (saved before blobs were) says
 * "not in the pages read".  With render threads too.  Then through the CLI
 * once converted to a trace.dat: report, report --like-trace-cmd and dump
 * --records give the same, and trace-cmd report (when installed) prints
 * the same lines, and nothing on stderr, for the file with the blob store
 * as for one converted without it.  Two captures joined keep both stores.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/tap.h"
#include "tracebuf/blob.h"
#include "tracebuf/capture.h"
#include "tracebuf/describe.h"
#include "tracebuf/report.h"
#include "tracebuf/ring.h"
#include "tracebuf/schema.h"

/* Above a sub-buffer's payload, below it, and one that fills most of the area. */
static const size_t sizes[] = {5000, 9000, 300, 61000};
#define NBLOBS (sizeof(sizes) / sizeof(sizes[0]))
#define MAXBLOB 61000
static unsigned char payload[NBLOBS][MAXBLOB];

struct problems {
	char text[4096];
	size_t len;
	unsigned n;
};

static void collect(void *ctx, const struct tb_problem *d)
{
	struct problems *p = ctx;
	int n = snprintf(p->text + p->len, sizeof(p->text) - p->len, "%s: byte %llu: %s\n", d->file,
			 (unsigned long long)d->offset, d->reason);

	if (n > 0 && p->len + (size_t)n < sizeof(p->text))
		p->len += (size_t)n;
	p->n++;
}

/* The report of dir as text (caller frees), its totals in *t. */
static char *report_of(const char *dir, struct tb_report_totals *t, int *rc, struct problems *p)
{
	struct tb_capture_opts o = {.diag = collect, .diag_ctx = p};
	struct tb_capture *c;
	struct tb_report_opts ro = {.no_header = true};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	memset(p, 0, sizeof(*p));
	*rc = tb_capture_open(dir, &o, &c);
	if (*rc == 0) {
		*rc = tb_report_write(c, f, &ro, t);
		tb_capture_close(c);
	}
	fclose(f);
	return text;
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The line the report must print for blob i, up to its escaped head. */
static void want_line(char *want, size_t cap, size_t i)
{
	snprintf(want, cap, "CPU:0 [BLOB: %zu bytes, crc32 %08lx] \"blob %zu: ", sizes[i],
		 crc32(0L, payload[i], (uInt)sizes[i]), i);
}

/* Blob i's bytes: a text head naming it, then bytes of every value. */
static void make_payload(size_t i)
{
	int n = snprintf((char *)payload[i], MAXBLOB, "blob %zu: ", i);

	for (size_t k = (size_t)n; k < sizes[i]; k++)
		payload[i][k] = (unsigned char)(k * 7 + i);
}

static void check_report(const char *dir, const char *how)
{
	struct tb_report_totals t = {0};
	struct problems p;
	char want[160];
	int rc;
	char *text = report_of(dir, &t, &rc, &p);
	size_t found = 0;

	is_int(rc, 0, "%s: the report is made without a problem", how);
	for (size_t i = 0; i < NBLOBS; i++) {
		want_line(want, sizeof(want), i);
		found += count_of(text, want) == 1;
	}
	is_int((int)found, (int)NBLOBS, "%s: one BLOB line per blob, its length and the CRC-32 of what was written",
	       how);
	ok(strstr(text ? text : "", "\\x81") != NULL, "%s: bytes outside printable ASCII escaped", how);
	is_int((int)count_of(text, "\"...\n"), (int)NBLOBS, "%s: each head cut at 64 bytes, then \"...\"", how);
	is_int((int)count_of(text, "\n"), (int)NBLOBS, "%s: and nothing else", how);
	ok(t.blobs_lost == 0 && t.events == NBLOBS && t.unknown_events == 0 && p.n == 0,
	   "%s: totals: %llu blobs lost of %llu events, %llu unknown, %u problems", how,
	   (unsigned long long)t.blobs_lost, (unsigned long long)t.events, (unsigned long long)t.unknown_events, p.n);
	if (text && found != NBLOBS)
		diag("report:\n%s%s", text, p.text);
	free(text);
}

/* report --count: each reference is an event, lost when its bytes are not in the store, as in the text's totals (pagecount.c). */
static void check_count(const char *dir, const char *how, uint64_t want_lost, int want_rc)
{
	struct tb_capture_opts o = {0};
	struct tb_report_opts ro = {.count_only = true};
	struct tb_report_totals t = {0};
	struct tb_capture *c;
	FILE *f = fopen("/dev/null", "w");
	int rc = f ? tb_capture_open(dir, &o, &c) : -1;

	if (rc == 0) {
		rc = tb_report_write(c, f, &ro, &t);
		tb_capture_close(c);
	}
	if (f)
		fclose(f);
	is_int(rc, want_rc, "%s, count: returns what the text report returns", how);
	ok(t.blobs_lost == want_lost && t.events == NBLOBS, "%s, count: %llu blobs lost of %llu events (want %llu)",
	   how, (unsigned long long)t.blobs_lost, (unsigned long long)t.events, (unsigned long long)want_lost);
}

/* Damage in blobs.bin: reported with the file and an offset, its blobs lost, the rest still printed. */
static void check_damage(const char *dir)
{
	struct tb_report_totals t = {0};
	struct problems p;
	char path[256], want[160];
	struct stat st;
	int rc;
	char *text;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, TB_BLOB_STORE_FILE);
	/* one byte of the first blob's bytes flipped (its entry header is 24 bytes) */
	f = fopen(path, "r+");
	ok(f && fseek(f, 24 + 100, SEEK_SET) == 0 && fputc(payload[0][100] ^ 0x55, f) != EOF && fclose(f) == 0,
	   "a byte of blobs.bin changed");
	text = report_of(dir, &t, &rc, &p);
	ok(count_of(text, "CPU:0 [BLOB LOST: 5000 bytes, its saved copy is damaged]\n") == 1,
	   "damaged: that blob prints as lost, with why");
	ok(strstr(p.text, TB_BLOB_STORE_FILE ": byte 24: ") && strstr(p.text, "CRC-32"),
	   "and the problem names the file and the blob's offset");
	want_line(want, sizeof(want), 1);
	ok(count_of(text, want) == 1 && t.blobs_lost == 1, "the other blobs still print (%llu lost)",
	   (unsigned long long)t.blobs_lost);
	if (!strstr(p.text, "CRC-32"))
		diag("%s%s", text ? text : "", p.text);
	free(text);
	check_count(dir, "damaged", 1, rc);

	/* cut in the middle of the last entry */
	ok(stat(path, &st) == 0 && truncate(path, st.st_size - 1000) == 0, "blobs.bin truncated");
	text = report_of(dir, &t, &rc, &p);
	ok(count_of(text, "CPU:0 [BLOB LOST: 61000 bytes, its saved copy is damaged]\n") == 1 &&
	       strstr(p.text, "truncated?") && strstr(p.text, TB_BLOB_STORE_FILE ": byte "),
	   "truncated: the last blob is lost and the problem says where");
	want_line(want, sizeof(want), 2);
	ok(count_of(text, want) == 1, "the entries before it still print");
	free(text);

	/* no store at all: a capture saved before blobs were */
	ok(unlink(path) == 0, "blobs.bin removed");
	text = report_of(dir, &t, &rc, &p);
	is_int((int)count_of(text, "bytes, not in the pages read]\n"), (int)NBLOBS,
	       "no blobs.bin: every reference says not in the pages read");
	ok(t.blobs_lost == NBLOBS && p.n == 0, "counted lost, and no problem");
	free(text);
	check_count(dir, "no blobs.bin", NBLOBS, rc);
}

static char *cli(const char *fmt, const char *a, const char *b, int *status)
{
	const char *build = getenv("TB_BUILD");
	char cmd[1024], tail[700];

	snprintf(tail, sizeof(tail), fmt, a, b);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf %s", build ? build : "build", tail);
	return tap_command_output(cmd, status);
}

/* trace-cmd report of the file with the blob store and of the one without: the same lines, stderr empty. */
static void check_trace_cmd(const char *dir)
{
	char cmd[512], *with, *without, *err;
	int status;

	if (system("trace-cmd --version >/dev/null 2>&1") != 0) {
		skip(4, "trace-cmd is not installed");
		return;
	}
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i %s/t.dat 2>/dev/null", dir);
	with = tap_command_output(cmd, &status);
	is_int(status, 0, "trace-cmd report opens the file with the blob store");
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i %s/bare.dat 2>/dev/null | sed 's|bare.dat|t.dat|'", dir);
	without = tap_command_output(cmd, &status);
	ok(with && without && !strcmp(with, without) && count_of(with, "\n") > NBLOBS,
	   "and prints what it prints for the file without it");
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i %s/t.dat 2>&1 >/dev/null", dir);
	err = tap_command_output(cmd, &status);
	is_str(err ? err : "?", "", "with nothing on stderr");
	free(err);
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i %s/t7.dat 2>&1 >/dev/null", dir);
	err = tap_command_output(cmd, &status);
	ok(status == 0 && err && !*err, "the same for the v7 file: exit 0, nothing on stderr");
	free(with);
	free(without);
	free(err);
}

/* The capture converted to a trace.dat, then report, trace-cmd's form and the dump, through the CLI. */
static void check_tracedat(const char *dir)
{
	char want[160], crc[32], path[200], sh[2000];
	int status;
	size_t found = 0, found_tc = 0, dumped = 0;
	char *report, *tc, *dump, *out;

	out = cli("convert %s -o %s/t.dat 2>&1", dir, dir, &status);
	is_int(status, 0, "the capture converted to a trace.dat");
	free(out);
	report = cli("report %s/t.dat 2>&1", dir, "", &status);
	is_int(status, 0, "tracebuf report FILE.dat: exit 0");
	tc = cli("report --like-trace-cmd %s/t.dat 2>&1", dir, "", &status);
	is_int(status, 0, "tracebuf report --like-trace-cmd FILE.dat: exit 0");
	dump = cli("dump --records %s/t.dat 2>&1", dir, "", &status);
	is_int(status, 0, "tracebuf dump --records: exit 0");
	for (size_t i = 0; i < NBLOBS; i++) {
		want_line(want, sizeof(want), i);
		found += count_of(report, want) == 1;
		found_tc += count_of(tc, want) == 1;
		snprintf(crc, sizeof(crc), "saved, crc32 %08lx", crc32(0L, payload[i], (uInt)sizes[i]));
		snprintf(want, sizeof(want), ": blob reference, %zu bytes (area 0, ", sizes[i]);
		dumped += count_of(dump, want) == 1 && count_of(dump, crc) == 1;
	}
	is_int((int)found, (int)NBLOBS, "the trace.dat's report: each blob's line, with the CRC-32 written");
	is_int((int)found_tc, (int)NBLOBS, "the same in trace-cmd's form");
	ok(!strstr(report ? report : "", "UNKNOWN") && !strstr(report ? report : "", "[FAILED TO PARSE]"),
	   "and no reference printed as an event");
	is_int((int)dumped, (int)NBLOBS, "its dump: each reference saved, with its length and CRC-32");
	if (found != NBLOBS || dumped != NBLOBS)
		diag("report:\n%s\ndump:\n%s", report ? report : "", dump ? dump : "");
	free(report);
	free(tc);
	free(dump);

	/* version 7, compressed: the store follows the last section, where the section walk stops */
	out = cli("convert --v7 --compress zstd %s -o %s/t7.dat 2>&1", dir, dir, &status);
	is_int(status, 0, "converted to a v7 trace.dat too");
	free(out);
	report = cli("report %s/t7.dat 2>&1", dir, "", &status);
	found = 0;
	for (size_t i = 0; i < NBLOBS; i++) {
		want_line(want, sizeof(want), i);
		found += count_of(report, want) == 1;
	}
	ok(status == 0 && found == NBLOBS && count_of(report, "\n") == NBLOBS + 1,
	   "its report: the same lines, and no problem (%zu found)", found);
	if (found != NBLOBS || count_of(report, "\n") != NBLOBS + 1)
		diag("%s", report ? report : "");
	free(report);

	/* the same capture without its store, for trace-cmd's side-by-side */
	snprintf(path, sizeof(path), "%s/bare", dir);
	snprintf(sh, sizeof(sh), "mkdir -p %s && cp %s/* %s/ 2>/dev/null; cp -r %s/formats %s/ 2>/dev/null; rm -f %s/*.dat %s/" TB_BLOB_STORE_FILE, path, dir, path, dir, path, path, path);
	ok(system(sh) == 0, "a copy of the capture without blobs.bin");
	out = cli("convert %s -o %s.dat 2>&1", path, path, &status);
	is_int(status, 0, "converted too");
	free(out);
	check_trace_cmd(dir);
}

/* A ring whose second blob takes the first one's chunks before the save: lost, counted, said. */
static void check_overwritten(const char *dir)
{
	struct tb_ring *ring;
	struct tb_ring_opts o;
	struct tb_save_opts save = {NULL, 0, NULL};
	struct tb_problem err = {0};
	struct tb_report_totals t = {0};
	struct problems p;
	char want[160];
	int rc;
	char *text;

	tb_ring_opts_default(&o);
	o.blob_kb = 64; /* 16 chunks: a 61000-byte blob takes 15, so the next one laps it */
	if (tb_ring_new(&ring, &o) < 0) {
		skip(4, "no ring");
		return;
	}
	ok(tb_blob_write(ring, payload[3], sizes[3]) == 0 && tb_blob_write(ring, payload[2], sizes[2]) == 0 &&
	       tb_blob_write(ring, payload[3], sizes[3]) == 0,
	   "three blobs, the third over the first (chunks 0-14 of 16; the second has chunk 15)");
	ok(tb_save_ring(ring, dir, &save, &err) == 0, "saved (%s)", err.reason);
	text = report_of(dir, &t, &rc, &p);
	ok(count_of(text, "CPU:0 [BLOB LOST: 61000 bytes, overwritten before it was saved]\n") == 1,
	   "the overwritten one prints as lost before it was saved");
	want_line(want, sizeof(want), 2);
	ok(count_of(text, want) == 1 && t.blobs_lost == 1 && t.events == 3,
	   "the others print, and the loss is counted (%llu lost of %llu)", (unsigned long long)t.blobs_lost,
	   (unsigned long long)t.events);
	if (t.blobs_lost != 1)
		diag("report:\n%s", text ? text : "");
	free(text);
	tb_ring_free(ring);
}

/*
 * Two captures joined into one trace.dat (convert DIR --buffer other=DIR2):
 * two rings number their blobs alike, so the second ring writes blobs of
 * the same sizes (the same keys) with other bytes; each buffer's lines
 * must show its own ring's bytes, in v6 and v7+zstd.  The file once kept
 * only the first capture's store: the second's references printed the
 * first's blobs.
 */
static unsigned char other_payload[NBLOBS][MAXBLOB];

static void check_joined(const char *dir, bool top_saved)
{
	struct tb_ring *ring;
	struct tb_ring_opts o;
	struct tb_save_opts save = {NULL, 0, NULL};
	struct tb_problem err = {0};
	char other[200], want[160];
	int written = 0, status;

	tb_ring_opts_default(&o);
	o.blob_kb = 128;
	snprintf(other, sizeof(other), "%s/joined-other%d", dir, top_saved);
	if (tb_ring_new(&ring, &o) < 0) {
		skip(5, "no ring");
		return;
	}
	for (size_t i = 0; i < NBLOBS; i++) {
		int n = snprintf((char *)other_payload[i], MAXBLOB, "join %zu: ", i);
		for (size_t k = (size_t)n; k < sizes[i]; k++)
			other_payload[i][k] = (unsigned char)(k * 13 + 5 * i + 1);
		written += tb_blob_write(ring, other_payload[i], sizes[i]) == 0;
	}
	ok(written == (int)NBLOBS && tb_save_ring(ring, other, &save, &err) == 0,
	   "a second ring: blobs of the same sizes, other bytes, saved (%s)", err.reason);
	tb_ring_free(ring);
	for (int v7 = 0; v7 < 2; v7++) {
		char args[600], *out, *report;
		size_t mine = 0, theirs = 0;
		snprintf(args, sizeof(args), "%s %s --buffer other=%s -o %s/joined.dat 2>&1",
			 v7 ? "--v7 --compress zstd" : "", dir, other, dir);
		out = cli("convert %s%s", args, "", &status);
		is_int(status, 0, "the two captures joined (%s)", v7 ? "v7+zstd" : "v6");
		free(out);
		report = cli("report %s/joined.dat 2>&1%s", dir, "", &status);
		for (size_t i = 0; i < NBLOBS; i++) {
			if (top_saved)
				want_line(want, sizeof(want), i);
			else
				snprintf(want, sizeof(want), "CPU:0 [BLOB LOST: %zu bytes, not in the pages read]", sizes[i]);
			mine += count_of(report, want) == 1;
			snprintf(want, sizeof(want), "CPU:0 [BLOB: %zu bytes, crc32 %08lx] \"join %zu: ", sizes[i],
				 crc32(0L, other_payload[i], (uInt)sizes[i]), i);
			theirs += count_of(report, want) == 1;
		}
		ok(status == 0 && mine == NBLOBS && theirs == NBLOBS &&
		       count_of(report, "BLOB LOST") == (top_saved ? 0 : NBLOBS),
		   "%s: each buffer's blobs from its own capture's store%s (%zu and %zu of %zu, exit %d)",
		   v7 ? "v7+zstd" : "v6", top_saved ? "" : ", none for the top buffer's", mine, theirs, NBLOBS,
		   status);
		if (mine != NBLOBS || theirs != NBLOBS)
			diag("%s", report ? report : "");
		free(report);
	}
}

int main(void)
{
	struct tb_ring *ring;
	struct tb_ring_opts o;
	struct tb_save_opts save = {NULL, 0, NULL};
	struct tb_problem err = {0};
	char dir[] = "/tmp/tb-test-blob-report-XXXXXX", dir2[100], cmd[400];
	cpu_set_t cpu0;
	int written = 0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0) < 0) {
		skip_all("cannot run on CPU 0");
		return done_testing();
	}
	tb_ring_opts_default(&o);
	o.blob_kb = 128;
	if (!mkdtemp(dir) || tb_ring_new(&ring, &o) < 0) {
		skip_all("no ring with a blob area");
		return done_testing();
	}
	for (size_t i = 0; i < NBLOBS; i++) {
		make_payload(i);
		written += tb_blob_write(ring, payload[i], sizes[i]) == 0;
	}
	is_int(written, (int)NBLOBS, "%zu blobs written (on CPU 0)", NBLOBS);
	ok(tb_save_ring(ring, dir, &save, &err) == 0, "the ring saved (%s)", err.reason);

	unsetenv("TB_REPORT_THREADS");
	check_report(dir, "one thread");
	check_count(dir, "one thread", 0, 0);
	setenv("TB_REPORT_THREADS", "2", 1);
	check_report(dir, "two render threads");
	check_count(dir, "two threads", 0, 0);
	unsetenv("TB_REPORT_THREADS");
	check_tracedat(dir);
	check_joined(dir, true);
	check_damage(dir);
	check_joined(dir, false);
	snprintf(dir2, sizeof(dir2), "%s/over", dir);
	check_overwritten(dir2);

	tb_ring_free(ring);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
