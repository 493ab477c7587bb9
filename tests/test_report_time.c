/*
 * The time column of trace-cmd's report layout (tb_tcmd_print_capture)
 * on time stamps chosen at its edges: the first hundred microseconds of the
 * clock (the column's cache starts as their text), each side of a rounding
 * edge (ts + 500 a multiple of 1000, of 100000, of 10^9), then a walk of
 * uneven steps across thousands of edges, and seconds of more than five
 * digits.  The expected column is computed here with snprintf from the
 * time stamp alone: " %5llu.%06llu:" of the microseconds rounded to nearest
 * ((ts + 500) / 1000), " %5llu.%09llu:" of the nanoseconds with -t.  Each
 * layout is asked for with worker threads and without, with the kernel's
 * text (the workers' frame_line) and with libtraceevent's (the reading
 * thread's columns).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/synth.h"
#include "lib/tap.h"
#include "lib/xorshift.h"
#include "tracebuf/capture.h"
#include "tracebuf/tracedat.h"

#define ID_SYS_ENTER 443 /* tests/data/kernel/formats/raw_syscalls/sys_enter.format */
#define MAX_STAMPS 6000

static uint64_t stamps[MAX_STAMPS];
static size_t nstamps;

static void add_stamp(uint64_t ts)
{
	if (nstamps < MAX_STAMPS && (nstamps == 0 || ts >= stamps[nstamps - 1]))
		stamps[nstamps++] = ts;
}

/* The time stamps: edges first, then uneven steps, then a jump to six-digit seconds. */
static void choose_stamps(void)
{
	static const uint64_t edges[] = {0, 1, 499, 500, 501, 999, 1499, 1500, 99499, 99500, 99501, 99999,
					 100000, 100499, 100500, 199499, 199500, 999999499, 999999500,
					 1000000000, 1000099499, 1000099500};
	uint64_t ts;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		add_stamp(edges[i]);
	ts = stamps[nstamps - 1];
	while (nstamps < MAX_STAMPS / 2) {
		ts += 1 + rnd() % 250000; /* up to 2.5 hundreds of microseconds */
		add_stamp(ts);
	}
	ts = 123456ull * 1000000000ull + 99499; /* seconds of six digits, next to an edge */
	while (nstamps < MAX_STAMPS) {
		add_stamp(ts);
		ts += 1 + rnd() % 1200;
	}
}

static int make_capture(struct synth *s)
{
	uint8_t rec[64] = {0};
	uint16_t id = ID_SYS_ENTER;
	int32_t pid = 0;

	if (synth_open(s, 1, NULL) < 0 ||
	    synth_format(s, "raw_syscalls", "tests/data/kernel/formats/raw_syscalls/sys_enter.format") < 0)
		return -1;
	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
	for (size_t i = 0; i < nstamps; i++) {
		uint64_t nr = i % 400;
		memcpy(rec + 8, &nr, 8);
		if (synth_add(s, 0, stamps[i], rec, sizeof(rec)) < 0)
			return -1;
	}
	return synth_close(s);
}

static char *report(const char *dir, const char *threads, bool kernel_text, bool nsec)
{
	struct tb_tcmd_print_opts o = {.kernel_text = kernel_text, .nsec = nsec};
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	setenv("TB_REPORT_THREADS", threads, 1);
	if (tb_capture_open(dir, NULL, &c) < 0)
		return NULL;
	if (!(f = open_memstream(&text, &len))) {
		tb_capture_close(c);
		return NULL;
	}
	rc = tb_tcmd_print_capture(c, f, &o, NULL);
	fclose(f);
	tb_capture_close(c);
	if (rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Every event line's time column as computed here, in order. */
static void check(const char *dir, const char *threads, bool kernel_text, bool nsec)
{
	char *text = report(dir, threads, kernel_text, nsec), *line, *save = NULL;
	size_t n = 0, wrong = 0;
	char want[64];

	if (!text) {
		ok(0, "report (threads %s, %s text%s)", threads, kernel_text ? "kernel" : "libtraceevent",
		   nsec ? ", -t" : "");
		return;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "cpus=", 5))
			continue;
		if (n < nstamps) {
			uint64_t ts = stamps[n];
			if (nsec) {
				snprintf(want, sizeof(want), "] %5" PRIu64 ".%09" PRIu64 ": ", ts / 1000000000,
					 ts % 1000000000);
			} else {
				uint64_t us = (ts + 500) / 1000;
				snprintf(want, sizeof(want), "] %5" PRIu64 ".%06" PRIu64 ": ", us / 1000000,
					 us % 1000000);
			}
			if (!strstr(line, want) && wrong++ < 3)
				diag("record %zu at %" PRIu64 " ns: want '%s' in '%s'", n, ts, want, line);
		}
		n++;
	}
	ok(n == nstamps && wrong == 0, "time column of %zu records (threads %s, %s text%s): %zu lines, %zu wrong",
	   nstamps, threads, kernel_text ? "kernel" : "libtraceevent", nsec ? ", -t" : "", n, wrong);
	free(text);
}

int main(void)
{
	struct synth s;

	choose_stamps();
	if (make_capture(&s) < 0) {
		ok(0, "synthetic capture written");
		synth_remove(&s);
		return done_testing();
	}
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 2; k++)
			for (int ns = 0; ns < 2; ns++)
				check(s.dir, t ? "2" : "0", k, ns);
	synth_remove(&s);
	return done_testing();
}
