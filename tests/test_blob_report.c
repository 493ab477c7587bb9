// SPDX-License-Identifier: MIT
/*
 * test_blob_report - blob references in a saved ring, as the report prints
 * them.  A capture holds the ring's pages, not its blob area, so each
 * reference must print as one "CPU:N [BLOB LOST: LEN bytes ...]" line with
 * the length the writer gave, never as an event of an unknown ID (the
 * reference's magic read as common_type), and count in the totals; with
 * render threads too (the reference is left to the reading thread).  The
 * same through the CLI once the capture is converted to a trace.dat:
 * `tracebuf report FILE.dat` prints the same lines, `tracebuf dump
 * --records` names each reference and its length as a lost blob.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/blob.h"
#include "tracebuf/capture.h"
#include "tracebuf/describe.h"
#include "tracebuf/report.h"
#include "tracebuf/ring.h"
#include "tracebuf/schema.h"

static const size_t sizes[] = {5000, 9000, 300};
#define NBLOBS (sizeof(sizes) / sizeof(sizes[0]))

/* The report of dir as text (caller frees), its totals in *t; NULL if it could not be made. */
static char *report_of(const char *dir, struct tb_report_totals *t, int *rc)
{
	struct tb_capture_opts o = {0};
	struct tb_capture *c;
	struct tb_report_opts ro = {.no_header = true};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

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

static void check_report(const char *dir, const char *how)
{
	struct tb_report_totals t = {0};
	char want[96];
	int rc;
	char *text = report_of(dir, &t, &rc);
	size_t found = 0;

	is_int(rc, 0, "%s: the report is made without a problem", how);
	for (size_t i = 0; i < NBLOBS; i++) {
		snprintf(want, sizeof(want), "CPU:0 [BLOB LOST: %zu bytes, not in the pages read]\n", sizes[i]);
		found += count_of(text, want) == 1;
	}
	is_int((int)found, (int)NBLOBS, "%s: one BLOB LOST line per blob, with its length", how);
	is_int((int)count_of(text, "\n"), (int)NBLOBS, "%s: and nothing else", how);
	ok(!strstr(text ? text : "", "UNKNOWN"), "%s: no reference printed as an unknown event", how);
	ok(t.blobs_lost == NBLOBS && t.events == NBLOBS && t.unknown_events == 0,
	   "%s: totals: %llu blobs lost of %llu events, %llu unknown", how, (unsigned long long)t.blobs_lost,
	   (unsigned long long)t.events, (unsigned long long)t.unknown_events);
	if (text && found != NBLOBS)
		diag("report:\n%s", text);
	free(text);
}

/* report --count: each reference is an event and a lost blob, as in the text's totals (pagecount.c). */
static void check_count(const char *dir, const char *how)
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
	is_int(rc, 0, "%s, count: made without a problem", how);
	ok(t.blobs_lost == NBLOBS && t.events == NBLOBS, "%s, count: %llu blobs lost of %llu events", how,
	   (unsigned long long)t.blobs_lost, (unsigned long long)t.events);
}

/* The capture converted to a trace.dat, then its report and its dump, through the CLI. */
static void check_tracedat(const char *dir)
{
	const char *b = getenv("TB_BUILD");
	char cmd[512], want[128];
	int status;
	size_t found = 0, dumped = 0;
	char *report, *dump;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf convert %s -o %s/t.dat >/dev/null 2>&1", b ? b : "build", dir, dir);
	ok(system(cmd) == 0, "the capture converted to a trace.dat");
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s/t.dat 2>&1", b ? b : "build", dir);
	report = tap_command_output(cmd, &status);
	is_int(status, 0, "tracebuf report FILE.dat: exit 0");
	snprintf(cmd, sizeof(cmd), "%s/tracebuf dump --records %s/t.dat 2>&1", b ? b : "build", dir);
	dump = tap_command_output(cmd, &status);
	is_int(status, 0, "tracebuf dump --records: exit 0");
	for (size_t i = 0; i < NBLOBS; i++) {
		snprintf(want, sizeof(want), "CPU:0 [BLOB LOST: %zu bytes, not in the pages read]\n", sizes[i]);
		found += count_of(report, want) == 1;
		snprintf(want, sizeof(want), ": blob reference, %zu bytes (area 0, ", sizes[i]);
		dumped += count_of(dump, want) == 1;
	}
	is_int((int)found, (int)NBLOBS, "the trace.dat's report: one BLOB LOST line per blob");
	ok(!strstr(report ? report : "", "UNKNOWN") && !strstr(report ? report : "", "[FAILED TO PARSE]"),
	   "and no reference printed as an event");
	is_int((int)dumped, (int)NBLOBS, "its dump: each reference named, with its length");
	is_int((int)count_of(dump, "blob lost, not in the file"), (int)NBLOBS, "and said lost");
	if (found != NBLOBS)
		diag("report:\n%s", report ? report : "");
	free(report);
	free(dump);
}

int main(void)
{
	struct tb_ring *ring;
	struct tb_ring_opts o;
	struct tb_save_opts save = {NULL, 0, NULL};
	struct tb_diag err = {0};
	char dir[] = "/tmp/tb-test-blob-report-XXXXXX", cmd[128];
	cpu_set_t cpu0;
	static unsigned char payload[9000];
	int written = 0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0) < 0) {
		skip_all("cannot run on CPU 0");
		return done_testing();
	}
	tb_ring_opts_default(&o);
	o.blob_kb = 64;
	if (!mkdtemp(dir) || tb_ring_create(&ring, &o) < 0) {
		skip_all("no ring with a blob area");
		return done_testing();
	}
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (unsigned char)(i * 7);
	for (size_t i = 0; i < NBLOBS; i++)
		written += tb_blob_write(ring, payload, sizes[i]) == 0;
	is_int(written, (int)NBLOBS, "%zu blobs written (on CPU 0)", NBLOBS);
	ok(tb_ring_save_dir(ring, dir, &save, &err) == 0, "the ring saved (%s)", err.reason);

	unsetenv("TB_REPORT_THREADS");
	check_report(dir, "one thread");
	check_count(dir, "one thread");
	setenv("TB_REPORT_THREADS", "2", 1);
	check_report(dir, "two render threads");
	check_count(dir, "two threads");
	unsetenv("TB_REPORT_THREADS");
	check_tracedat(dir);

	tb_ring_destroy(ring);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
