/*
 * Times of a trace.dat recorded with a TSC clock: its stamps count CPU
 * cycles and its TSC2NSEC option says how they become nanoseconds
 * ((cycles * mult) >> shift).  offcpu's intervals, the Chrome JSON's
 * stamps and durations (sched_switch slices and funcgraph_exit's calltime
 * and rettime, which are stamps of the same clock) and the ring picture's
 * time ranges must be in nanoseconds, not cycles.
 *
 * A made-up trace with stamps near 2^51 cycles (days of uptime at 3 GHz:
 * cycles * mult does not fit 64 bits) and a 3 GHz mult/shift.  The
 * expected nanoseconds are computed here from the raw cycles, in 32-bit
 * halves (no 128-bit arithmetic, unlike the code under test); the same
 * capture directory, which has no TSC2NSEC, must give the raw cycles.
 * `trace-cmd report`, where installed, is asked for the stamps as well.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/synth.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/chrome.h"
#include "tracebuf/hist.h"
#include "tracebuf/offcpu.h"
#include "tracebuf/ringsvg.h"
#include "tracebuf/tracedat.h"

#define ID_SWITCH 372
#define ID_FGRAPH_EXIT 10
/* 3 GHz: one cycle is a third of a nanosecond, mult/2^24. */
#define MULT 5592405u
#define SHIFT 24u
#define BASE (1ull << 51)

static const char kallsyms[] = "ffffffff81000000 T do_work\nffffffff81001000 T zz_end\n";

/* (cycles * MULT) >> SHIFT from 32-bit halves: each partial product fits 64 bits, SHIFT <= 32. */
static uint64_t expect_ns(uint64_t cycles)
{
	uint64_t hi = (cycles >> 32) * MULT, lo = (cycles & 0xffffffffull) * MULT;

	return (hi << (32 - SHIFT)) + (lo >> SHIFT);
}

/*
 * Stamps, in cycles: A (100) off CPU 0 from C0 to C1, runs until C4 and
 * goes off again (open at the end); B (200) the same on CPU 1 with C2, C3
 * and C5.
 */
static const uint64_t C0 = BASE + 3000000123ull, C1 = BASE + 9000000456ull, C4 = BASE + 9600000077ull;
static const uint64_t C2 = BASE + 4500000789ull, C3 = BASE + 5100000000ull, C5 = BASE + 5700000999ull;
/* A call of do_work on CPU 0 between them: calltime and rettime are cycles too. */
static const uint64_t CALL = BASE + 6000000000ull, RET = BASE + 6000300001ull, EXIT_AT = BASE + 6000300500ull;

static void add_switch(struct synth *s, int cpu, uint64_t ts, const char *prev, int32_t prev_pid, int64_t state,
		       const char *next, int32_t next_pid)
{
	uint8_t r[64] = {0};
	uint16_t id = ID_SWITCH;

	memcpy(r, &id, 2);
	memcpy(r + 4, &prev_pid, 4);
	strncpy((char *)r + 8, prev, 16);
	memcpy(r + 24, &prev_pid, 4);
	memcpy(r + 32, &state, 8);
	strncpy((char *)r + 40, next, 16);
	memcpy(r + 56, &next_pid, 4);
	synth_add(s, cpu, ts, r, sizeof(r));
}

static void add_exit(struct synth *s, int cpu, uint64_t ts, int32_t pid)
{
	uint8_t r[40] = {0};
	uint16_t id = ID_FGRAPH_EXIT;
	uint64_t func = 0xffffffff81000010ull, call = CALL, ret = RET;

	memcpy(r, &id, 2);
	memcpy(r + 4, &pid, 4);
	memcpy(r + 8, &func, 8);
	memcpy(r + 24, &call, 8);
	memcpy(r + 32, &ret, 8);
	synth_add(s, cpu, ts, r, sizeof(r));
}

static int make_trace(struct synth *s)
{
	if (synth_open(s, 2, kallsyms) < 0 ||
	    synth_write_file(s, "meta.txt", "ncpus: 2\ntrace_clock: local global [x86-tsc]\n") < 0 ||
	    synth_format(s, "sched", "tests/data/kernel/formats/sched/sched_switch.format") < 0 ||
	    synth_format(s, "ftrace", "tests/data/funcgraph/funcgraph_exit.format") < 0)
		return -1;
	add_switch(s, 0, C0, "taskA", 100, 1, "swapper/0", 0);
	add_exit(s, 0, EXIT_AT, 0);
	add_switch(s, 0, C1, "swapper/0", 0, 0, "taskA", 100);
	add_switch(s, 0, C4, "taskA", 100, 1, "swapper/0", 0);
	add_switch(s, 1, C2, "taskB", 200, 2, "swapper/1", 0);
	add_switch(s, 1, C3, "swapper/1", 0, 0, "taskB", 200);
	add_switch(s, 1, C5, "taskB", 200, 1, "swapper/1", 0);
	return synth_close(s);
}

/* What fn writes to a stream, as a string (NULL if fn failed or memory ran out). */
typedef int write_fn(struct tb_capture *c, void *arg, FILE *f);
static char *written(write_fn *fn, struct tb_capture *c, void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = f ? fn(c, arg, f) : -1;

	if (f)
		fclose(f);
	if (rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int write_folded(struct tb_capture *c, void *r, FILE *f)
{
	(void)c;
	return tb_offcpu_write_folded(r, f);
}

static int write_json(struct tb_capture *c, void *t, FILE *f)
{
	return tb_chrome_json_write(c, f, NULL, t);
}

static int write_ring(struct tb_capture *c, void *arg, FILE *f)
{
	(void)arg;
	return tb_ringsvg_write(c, NULL, f);
}

/* offcpu: each task's interval, the difference of its stamps in nanoseconds (or in cycles). */
static void check_offcpu(struct tb_capture *c, bool tsc, const char *what)
{
	uint64_t a = tsc ? expect_ns(C1) - expect_ns(C0) : C1 - C0;
	uint64_t b = tsc ? expect_ns(C3) - expect_ns(C2) : C3 - C2;
	struct tb_offcpu_totals t;
	struct tb_offcpu *r;
	char expect[128], *text;

	if (!ok(tb_offcpu_run(c, NULL, &r, &t) == 0, "%s: offcpu runs", what))
		return;
	is_int(t.intervals, 2, "%s: two intervals", what);
	is_int(t.open_at_end, 2, "%s: two more open at the end", what);
	is_int(t.off_ns, a + b, "%s: off-CPU time %s", what, tsc ? "in nanoseconds" : "in raw cycles");
	text = written(write_folded, c, r);
	if (!ok(text != NULL, "%s: folded lines written", what))
		text = strdup("");
	snprintf(expect, sizeof(expect), "taskA %" PRIu64 "\ntaskB %" PRIu64 "\n", (a + 500) / 1000, (b + 500) / 1000);
	is_str(text, expect, "%s: folded lines in microseconds of %s", what, tsc ? "nanoseconds" : "cycles");
	free(text);
	tb_offcpu_free(r);
}

/* A stamp as the JSON writes it: microseconds with three decimals. */
static void us_text(char *buf, size_t size, uint64_t ns)
{
	snprintf(buf, size, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void check_json(struct tb_capture *c)
{
	char ts[40], dur[40], want[256], *text;
	struct tb_chrome_totals t;

	if (!ok((text = written(write_json, c, &t)) != NULL, "JSON written"))
		return;
	us_text(ts, sizeof(ts), expect_ns(C1));
	us_text(dur, sizeof(dur), expect_ns(C4) - expect_ns(C1));
	snprintf(want, sizeof(want), "\"name\":\"taskA 100\",\"pid\":%d,\"tid\":0,\"ts\":%s,\"dur\":%s",
		 TB_CHROME_CPU_PID, ts, dur);
	ok(strstr(text, want) != NULL, "taskA's slice on CPU 0 at %s us for %s us (nanoseconds of the cycles)", ts,
	   dur);
	us_text(ts, sizeof(ts), expect_ns(C3));
	us_text(dur, sizeof(dur), expect_ns(C5) - expect_ns(C3));
	snprintf(want, sizeof(want), "\"name\":\"taskB 200\",\"pid\":%d,\"tid\":1,\"ts\":%s,\"dur\":%s",
		 TB_CHROME_CPU_PID, ts, dur);
	ok(strstr(text, want) != NULL, "taskB's slice on CPU 1 at %s us for %s us", ts, dur);
	us_text(ts, sizeof(ts), expect_ns(CALL));
	us_text(dur, sizeof(dur), expect_ns(RET) - expect_ns(CALL));
	snprintf(want, sizeof(want), "\"name\":\"do_work\",\"pid\":0,\"tid\":0,\"ts\":%s,\"dur\":%s", ts, dur);
	ok(strstr(text, want) != NULL, "do_work's call from calltime %s us for %s us (its fields converted too)", ts,
	   dur);
	snprintf(want, sizeof(want), "\"tsc2nsec\":{\"mult\":%u,\"shift\":%u}", MULT, SHIFT);
	ok(strstr(text, want) != NULL, "the JSON says the stamps were converted, and how");
	free(text);
}

static void check_ring_svg(struct tb_capture *c)
{
	char want[128], *text;

	if (!ok((text = written(write_ring, c, NULL)) != NULL, "ring picture drawn"))
		return;
	snprintf(want, sizeof(want), "time %" PRIu64 " .. %" PRIu64, expect_ns(C0), expect_ns(C4));
	ok(strstr(text, want) != NULL, "CPU 0's sub-buffer spans %s", want);
	free(text);
}

static int write_hist(struct tb_capture *c, void *h, FILE *f)
{
	int rc = tb_hist_add_capture(h, c, NULL);

	return rc < 0 ? rc : tb_hist_print(h, f);
}

/* hist's common_timestamp.usecs: the nanoseconds, rounded to microseconds as the kernel's ns2usecs(). */
static void check_hist(struct tb_capture *c)
{
	const struct tb_format *sw = tb_schema_event(tb_capture_schema(c), ID_SWITCH, NULL);
	struct tb_hist_error err;
	struct tb_hist *h = NULL;
	char want[96], *text;

	if (!ok(sw && tb_hist_new("keys=common_timestamp.usecs", sw, "sched", tb_capture_schema(c), &h, &err) == 0,
		"a hist of sched_switch by common_timestamp.usecs"))
		return;
	tb_hist_set_ns_clock(h, 1);
	if (ok((text = written(write_hist, c, h)) != NULL, "hist printed")) {
		snprintf(want, sizeof(want), "{ common_timestamp: %10" PRIu64 " } hitcount:", (expect_ns(C2) + 500) / 1000);
		ok(strstr(text, want) != NULL, "taskB's switch-out keyed at %" PRIu64 " us", (expect_ns(C2) + 500) / 1000);
		free(text);
	}
	tb_hist_free(h);
}

/* trace-cmd, where installed, prints the same nanoseconds (its -t: all nine digits). */
static void check_trace_cmd(const char *dat)
{
	char cmd[512], want[64];

	if (system("command -v trace-cmd >/dev/null 2>&1") != 0) {
		skip(1, "trace-cmd is not installed");
		return;
	}
	snprintf(want, sizeof(want), "%" PRIu64 ".%09" PRIu64 ":", expect_ns(C2) / 1000000000,
		 expect_ns(C2) % 1000000000);
	snprintf(cmd, sizeof(cmd), "trace-cmd report -t -i %s 2>/dev/null | grep -q -F ' %s'", dat, want);
	ok(system(cmd) == 0, "trace-cmd report prints taskB's switch at %s as well", want);
}

int main(void)
{
	struct tb_capture *c;
	struct synth s;
	uint32_t mult = 0, shift = 0;
	char dat[128];

	if (make_trace(&s) < 0) {
		ok(0, "made the synthetic trace in %s", s.dir);
		return done_testing();
	}
	snprintf(dat, sizeof(dat), "%s.dat", s.dir);
	struct tb_tracedat_write_opts wo = {.version = 6, .clock = "x86-tsc", .tsc2nsec_mult = MULT,
					    .tsc2nsec_shift = SHIFT};
	ok(tb_tracedat_write_capture(s.dir, NULL, dat, &wo) == 0, "written as a trace.dat with TSC2NSEC");
	if (ok(tb_capture_open(dat, NULL, &c) == 0, "the trace.dat opens")) {
		bool has = tb_capture_tsc2nsec(c, &mult, &shift);
		ok(has && mult == MULT && shift == SHIFT, "its capture has the TSC2NSEC mult %u and shift %u", mult,
		   shift);
		is_int(tb_capture_ts_ns(c, C0), expect_ns(C0), "a stamp converted as computed here");
		check_offcpu(c, true, "trace.dat");
		tb_capture_rewind(c);
		check_json(c);
		tb_capture_rewind(c);
		check_ring_svg(c);
		tb_capture_rewind(c);
		check_hist(c);
		tb_capture_close(c);
	}
	check_trace_cmd(dat);
	if (ok(tb_capture_open(s.dir, NULL, &c) == 0, "the capture directory opens")) {
		ok(!tb_capture_tsc2nsec(c, &mult, &shift), "it has no TSC2NSEC");
		check_offcpu(c, false, "capture dir");
		tb_capture_close(c);
	}
	unlink(dat);
	synth_remove(&s);
	return done_testing();
}
