/*
 * tracebuf offcpu on a made-up trace whose off-CPU times are known exactly.
 *
 * Two CPUs, four tasks, times in nanoseconds chosen by hand:
 *   sleeper (100): off at 1.0 ms on CPU0 in S with a nanosleep stack, woken
 *     at 3.0 ms, on CPU1 at 3.5 ms (2500 us: 2000 blocked, 500 waiting);
 *     off again at 4.0 ms on CPU1 with the same functions at other return
 *     addresses, on CPU0 at 5.0 ms without a wakeup (1000 us);
 *   reader (200): off at 1.5 ms on CPU1 in a pipe_read stack, on CPU0 at
 *     2.7 ms (1200 us); preempted at 5.0 ms, never back (open at the end);
 *   spinner (300): preempted (R) at 2.0 ms on CPU1, back at 2.1 ms (100 us),
 *     exits (X) at 3.5 ms: gone, not off CPU;
 *   dstack (400): off at 2.2 ms on CPU0 (D), a wakeup of it at 2.3 ms on
 *     CPU0 and only then a kernel_stack of pid 400: not right after the
 *     switch, so not its stack; back at 2.4 ms (200 us, 100 blocked); exits
 *     at 2.7 ms.
 *   lostin (500): off at 0.2 ms on CPU1, woken at 4.5 ms, and switched out
 *     again at 5.5 ms on CPU1 without a switch-in between (as some kernels
 *     leave out the idle task's): its interval ends at the wakeup (4300 us,
 *     all blocked), the second stays open.
 * Twelve switches; 9.3 ms off CPU in all, 6.4 ms of it blocked before a
 * wakeup and 0.6 ms waiting for a CPU after one.
 * The expected lines below are these sums, written out by hand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/synth.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/offcpu.h"
#include "tracebuf/tracedat.h"

#define ID_SWITCH 372
#define ID_WAKEUP 374
#define ID_KSTACK 4
#define MS 1000000ull

static const char kallsyms[] = "ffffffff81000000 T do_syscall_64\n"
			       "ffffffff81001000 T hrtimer_nanosleep\n"
			       "ffffffff81002000 T do_nanosleep\n"
			       "ffffffff81003000 T schedule\n"
			       "ffffffff81004000 T __schedule\n"
			       "ffffffff81005000 T __traceiter_sched_switch\n"
			       "ffffffff81006000 T pipe_read\n"
			       "ffffffff81007000 T vfs_read\n"
			       "ffffffff81008000 T trace_event_raw_event_sched_switch\n"
			       "ffffffff81009000 T zz_end\n";

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void header(uint8_t *p, uint16_t id, int32_t pid)
{
	put16(p, id);
	p[2] = 1; /* irqs off, as sched_switch always is */
	p[3] = 2;
	put32(p + 4, pid);
}

static void add_switch(struct synth *s, int cpu, uint64_t ts, const char *prev, int32_t prev_pid, int64_t state,
		       const char *next, int32_t next_pid)
{
	uint8_t r[64] = {0};

	header(r, ID_SWITCH, prev_pid);
	strncpy((char *)r + 8, prev, 16);
	put32(r + 24, prev_pid);
	put32(r + 28, 120);
	put64(r + 32, (uint64_t)state);
	strncpy((char *)r + 40, next, 16);
	put32(r + 56, next_pid);
	put32(r + 60, 120);
	synth_add(s, cpu, ts, r, sizeof(r));
}

static void add_wakeup(struct synth *s, int cpu, uint64_t ts, int32_t waker, const char *comm, int32_t pid)
{
	uint8_t r[36] = {0};

	header(r, ID_WAKEUP, waker);
	strncpy((char *)r + 8, comm, 16);
	put32(r + 24, pid);
	put32(r + 28, 120);
	put32(r + 32, cpu);
	synth_add(s, cpu, ts, r, sizeof(r));
}

/* A kernel_stack as the kernel writes it: size entries, leaf first; end marks ULONG_MAX after them. */
static void add_stack(struct synth *s, int cpu, uint64_t ts, int32_t pid, const uint64_t *ips, int n, bool end)
{
	uint8_t r[16 + 8 * 20] = {0};
	uint32_t len = 16 + 8 * (uint32_t)(n + end);

	header(r, ID_KSTACK, pid);
	put32(r + 8, end ? 8 : n);
	for (int i = 0; i < n; i++)
		put64(r + 16 + 8 * i, ips[i]);
	if (end)
		put64(r + 16 + 8 * n, UINT64_MAX);
	synth_add(s, cpu, ts, r, len);
}

static const uint64_t sleep_stack1[] = {0xffffffff81008010, 0xffffffff81005020, 0xffffffff81004100,
					0xffffffff81003010, 0xffffffff81002040, 0xffffffff81001080,
					0xffffffff81000050};
static const uint64_t sleep_stack2[] = {0xffffffff81008010, 0xffffffff81005020, 0xffffffff81004200,
					0xffffffff81003020, 0xffffffff81002090, 0xffffffff81001080,
					0xffffffff81000050};
static const uint64_t pipe_stack[] = {0xffffffff81003010, 0xffffffff81006010, 0xffffffff81007010};

static int make_trace(struct synth *s)
{
	if (synth_open(s, 2, kallsyms) < 0 ||
	    synth_format(s, "sched", "tests/data/kernel/formats/sched/sched_switch.format") < 0 ||
	    synth_format(s, "sched", "tests/data/kernel/formats/sched/sched_wakeup.format") < 0 ||
	    synth_format(s, "ftrace", "tests/data/kernel/cap-g-kernel-printers/formats/ftrace/kernel_stack.format") < 0)
		return -1;
	/* CPU0, in time order */
	add_switch(s, 0, 1 * MS, "sleeper", 100, 1, "dstack", 400);
	add_stack(s, 0, 1 * MS + 100, 100, sleep_stack1, 7, false);
	add_switch(s, 0, 2200000, "dstack", 400, 2, "swapper/0", 0);
	add_wakeup(s, 0, 2300000, 0, "dstack", 400);
	add_stack(s, 0, 2300100, 400, pipe_stack, 3, true);
	add_switch(s, 0, 2400000, "swapper/0", 0, 0, "dstack", 400);
	add_switch(s, 0, 2700000, "dstack", 400, 0x10, "reader", 200);
	add_switch(s, 0, 5 * MS, "reader", 200, 0, "sleeper", 100);
	/* CPU1 */
	add_switch(s, 1, 200000, "lostin", 500, 1, "reader", 200);
	add_switch(s, 1, 1500000, "reader", 200, 1, "spinner", 300);
	add_stack(s, 1, 1500050, 200, pipe_stack, 3, true);
	add_switch(s, 1, 2 * MS, "spinner", 300, 0, "swapper/1", 0);
	add_switch(s, 1, 2100000, "swapper/1", 0, 0, "spinner", 300);
	add_wakeup(s, 1, 3 * MS, 300, "sleeper", 100);
	add_switch(s, 1, 3500000, "spinner", 300, 0x10, "sleeper", 100);
	add_switch(s, 1, 4 * MS, "sleeper", 100, 1, "swapper/1", 0);
	add_stack(s, 1, 4 * MS + 80, 100, sleep_stack2, 7, true);
	add_wakeup(s, 1, 4500000, 0, "lostin", 500);
	add_switch(s, 1, 5500000, "lostin", 500, 1, "swapper/1", 0);
	return synth_close(s);
}

static char *folded_text(struct tb_offcpu *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	tb_offcpu_write_folded(r, f);
	fclose(f);
	return buf;
}

static const char expect_all[] = "dstack 200\n"
				 "lostin 4300\n"
				 "reader;vfs_read;pipe_read;schedule 1200\n"
				 "sleeper;do_syscall_64;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 3500\n"
				 "spinner 100\n";
/* --blocked: to the wakeup where one came (sleeper 2000 + 1000, dstack 100), preempted spinner out. */
static const char expect_blocked[] = "dstack 100\n"
				     "lostin 4300\n"
				     "reader;vfs_read;pipe_read;schedule 1200\n"
				     "sleeper;do_syscall_64;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 3000\n";

static void check_run(const char *path, const char *what)
{
	struct tb_capture *c;
	struct tb_offcpu *r;
	struct tb_offcpu_totals t;
	struct tb_offcpu_opts blocked = {.blocked_only = true};
	char *text;

	if (!ok(tb_capture_open(path, NULL, &c) == 0, "%s opens", what))
		return;
	ok(tb_offcpu_run(c, NULL, &r, &t) == 0, "%s: offcpu runs", what);
	text = folded_text(r);
	is_str(text, expect_all, "%s: folded stacks, times exact, return addresses merged by function", what);
	free(text);
	is_int(t.intervals, 6, "%s: six intervals", what);
	is_int(t.switches, 12, "%s: twelve switches", what);
	is_int(t.kernel_stacks, 3, "%s: three with a stack (the late one of dstack not taken)", what);
	is_int(t.preempted, 1, "%s: one preemption", what);
	is_int(t.woken, 3, "%s: three woken", what);
	is_int(t.inferred, 1, "%s: one switch-in missing, ended at the wakeup", what);
	is_int(t.off_ns, 9300000, "%s: 9.3 ms off CPU in all", what);
	is_int(t.blocked_ns, 6400000, "%s: 6.4 ms blocked before a wakeup", what);
	is_int(t.runq_ns, 600000, "%s: 0.6 ms waiting for a CPU after one", what);
	is_int(t.open_at_end, 2, "%s: reader and lostin still off at the end", what);
	tb_offcpu_free(r);
	tb_capture_rewind(c);
	ok(tb_offcpu_run(c, &blocked, &r, &t) == 0, "%s: --blocked runs", what);
	text = folded_text(r);
	is_str(text, expect_blocked, "%s: blocked time only", what);
	free(text);
	tb_offcpu_free(r);
	tb_capture_close(c);
}

/*
 * The flame graph of three lines written by hand: 1000 in all over 1180 px
 * (1200 less 10 px margins), so a (300 + 100) is 472 px, a;b 354 px, and d
 * (600) starts at 10 + 472 and is 708 px wide.
 */
static void check_svg(void)
{
	struct tb_folded lines[] = {{"a;b", 300}, {"a;c", 100}, {"d<&>", 600}};
	struct tb_flame_opts o = {.title = "T <&> \"quoted\"", .unit = "ms", .scale = 1, .cold = true};
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);

	ok(tb_flamegraph_svg(lines, 3, &o, f) == 0, "svg written");
	fclose(f);
	ok(strstr(svg, "width=\"1200\"") != NULL, "svg: 1200 px wide");
	ok(strstr(svg, "T &lt;&amp;&gt; &quot;quoted&quot;") != NULL, "svg: the title escaped");
	ok(strstr(svg, "<title>all (1000 ms, 100.00%)</title><rect x=\"10.0\" y=\"") != NULL &&
	       strstr(svg, "width=\"1180.0\"") != NULL,
	   "svg: the root spans 1180 px");
	ok(strstr(svg, "<title>a (400 ms, 40.00%)</title><rect x=\"10.0\"") != NULL &&
	       strstr(svg, "width=\"472.0\"") != NULL,
	   "svg: a is 40%% = 472 px");
	ok(strstr(svg, "<title>b (300 ms, 30.00%)</title><rect x=\"10.0\"") != NULL &&
	       strstr(svg, "width=\"354.0\"") != NULL,
	   "svg: a;b is 354 px, above a");
	ok(strstr(svg, "<title>d&lt;&amp;&gt; (600 ms, 60.00%)</title><rect x=\"482.0\"") != NULL &&
	       strstr(svg, "width=\"708.0\"") != NULL,
	   "svg: d (escaped) starts at 482 px and is 708 px wide");
	ok(strstr(svg, "<script") == NULL, "svg: no script");
	free(svg);
}

/* A trace without sched_switch: -ENOENT, for the CLI to say what to record. */
static void check_missing(void)
{
	struct synth s;
	struct tb_capture *c;
	struct tb_offcpu *r;

	if (synth_open(&s, 1, NULL) < 0 ||
	    synth_format(&s, "sched", "tests/data/kernel/formats/sched/sched_wakeup.format") < 0) {
		ok(0, "made a trace without sched_switch");
		return;
	}
	add_wakeup(&s, 0, 1000, 1, "x", 5);
	synth_close(&s);
	ok(tb_capture_open(s.dir, NULL, &c) == 0 && tb_offcpu_run(c, NULL, &r, NULL) == -ENOENT,
	   "no sched_switch: -ENOENT");
	tb_capture_close(c);
	synth_remove(&s);
}

/*
 * Time going back on a CPU (a damaged trace; here a second sub-buffer
 * stamped before the first): a's switch-in at 1 ms follows its switch-out
 * at 5 ms.  That interval has no length and is counted as such; the sums
 * hold only b's 1 ms (a wrapped length once made off_ns smaller than
 * blocked_ns: fuzz/regressions/analyze/crash_f6986d...).
 */
static void check_backwards(void)
{
	struct synth s;
	struct tb_capture *c;
	struct tb_offcpu *r;
	struct tb_offcpu_totals t;

	if (synth_open(&s, 1, NULL) < 0 ||
	    synth_format(&s, "sched", "tests/data/kernel/formats/sched/sched_switch.format") < 0) {
		ok(0, "made a trace with time going back");
		return;
	}
	add_switch(&s, 0, 5 * MS, "a", 10, 1, "b", 20);
	add_switch(&s, 0, 6 * MS, "b", 20, 1, "c", 30);
	synth_flush(&s, 0);
	add_switch(&s, 0, 1 * MS, "c", 30, 1, "a", 10);
	add_switch(&s, 0, 7 * MS, "a", 10, 1, "b", 20);
	synth_close(&s);
	if (ok(tb_capture_open(s.dir, NULL, &c) == 0, "time going back: opens")) {
		ok(tb_offcpu_run(c, NULL, &r, &t) == 0, "time going back: offcpu runs");
		is_int(t.backwards, 1, "a's interval ends before it begins: counted as such");
		is_int(t.intervals, 1, "b's interval alone is counted");
		is_int(t.off_ns, 1 * MS, "its 1 ms alone is off CPU");
		is_int(t.open_at_end, 2, "a and c still off at the end");
		tb_offcpu_free(r);
		tb_capture_close(c);
	}
	synth_remove(&s);
}

int main(void)
{
	struct synth s;
	char dat[128];

	if (make_trace(&s) < 0) {
		ok(0, "made the synthetic trace in %s", s.dir);
		return done_testing();
	}
	check_run(s.dir, "capture dir");
	snprintf(dat, sizeof(dat), "%s.dat", s.dir);
	struct tb_tracedat_write_opts wo = {.version = 6};
	ok(tb_tracedat_write_capture(s.dir, NULL, dat, &wo) == 0, "written as trace.dat");
	check_run(dat, "trace.dat");
	/* The same with a worker thread decoding the pages (merge.c, pagework.c), as for big captures. */
	setenv("TB_ANALYZE_THREADS", "1", 1);
	check_run(dat, "trace.dat, pages decoded by a worker");
	check_run(s.dir, "capture dir, pages decoded by a worker");
	unsetenv("TB_ANALYZE_THREADS");
	check_svg();
	check_missing();
	check_backwards();
	unlink(dat);
	synth_remove(&s);
	return done_testing();
}
