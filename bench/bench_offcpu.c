// SPDX-License-Identifier: MIT
/*
 * bench_offcpu - `tracebuf offcpu` beside `trace-cmd report | awk` doing the
 * same pairing, on one trace.dat.
 *
 * The trace is made up but shaped like the real thing: two CPUs, 64 tasks
 * switching among themselves; each switch is preceded by the wakeup of the
 * task coming in and followed by the kernel_stack the `stacktrace` trigger
 * writes (one of 16 stacks of 10 frames, named by a kallsyms of this bench's
 * own), with the kernel's own format files (tests/data).  EVENTS records
 * (default 1 500 000) go into a capture directory in /dev/shm and are
 * converted to a trace.dat there (tmpfs: the figures are the code's, not a
 * disk's).
 *
 * Measured, fastest of RUNS (3) runs each, alternating: `tracebuf offcpu
 * FILE.dat` and `trace-cmd report -i FILE.dat | awk` where the awk script
 * (bench/offcpu_peer.awk, on trace-cmd's -t nanosecond stamps) does the same pairing - switch-out to switch-in
 * per pid, the stack that follows, sums by comm and stack - with both
 * outputs to /dev/null.  The two must find the same number of intervals
 * and the same total off-CPU time, or the comparison means nothing.
 * tracebuf uses two threads here (merge.c: one decodes pages while the
 * other pairs), so its CPU time is of both.
 * Prints M events/s of each and the ratio; writes
 * BUILD/bench/results-offcpu.json.  Skipped without trace-cmd.
 *
 *   build/bench/bench_offcpu [BUILD_DIR]    (EVENTS=n RUNS=n in the environment)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/synth.h"
#include "tracebuf/tracedat.h"

#define ID_SWITCH 372
#define ID_WAKEUP 374
#define ID_KSTACK 4
#define NTASKS 64
#define NSTACKS 16
#define DEPTH 10
#define NSYMS 48

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void header(uint8_t *p, uint16_t id, int32_t pid)
{
	memcpy(p, &id, 2);
	p[2] = 1;
	p[3] = 2;
	memcpy(p + 4, &pid, 4);
}

static void comm_of(int32_t pid, char *out)
{
	snprintf(out, 16, "task-%d", (int)pid);
}

static void put_switch(struct synth *s, int cpu, uint64_t ts, int32_t prev, int64_t state, int32_t next)
{
	uint8_t r[64] = {0};
	header(r, ID_SWITCH, prev);
	comm_of(prev, (char *)r + 8);
	memcpy(r + 24, &prev, 4);
	memcpy(r + 32, &state, 8);
	comm_of(next, (char *)r + 40);
	memcpy(r + 56, &next, 4);
	synth_add(s, cpu, ts, r, sizeof(r));
}

static void put_wakeup(struct synth *s, int cpu, uint64_t ts, int32_t waker, int32_t pid)
{
	uint8_t r[36] = {0};
	header(r, ID_WAKEUP, waker);
	comm_of(pid, (char *)r + 8);
	memcpy(r + 24, &pid, 4);
	memcpy(r + 32, &cpu, 4);
	synth_add(s, cpu, ts, r, sizeof(r));
}

static uint64_t stack_ip[NSTACKS][DEPTH];

static void put_stack(struct synth *s, int cpu, uint64_t ts, int32_t pid, int k)
{
	uint8_t r[16 + 8 * DEPTH] = {0};
	int32_t n = DEPTH;
	header(r, ID_KSTACK, pid);
	memcpy(r + 8, &n, 4);
	memcpy(r + 16, stack_ip[k], sizeof(stack_ip[k]));
	synth_add(s, cpu, ts, r, sizeof(r));
}

static char *make_kallsyms(void)
{
	static char text[NSYMS * 48];
	size_t used = 0;
	for (int i = 0; i < NSYMS; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "ffffffff81%06x T kfunc_%02d\n",
					 i * 0x1000, i);
	for (int k = 0; k < NSTACKS; k++)
		for (int d = 0; d < DEPTH; d++)
			stack_ip[k][d] = 0xffffffff81000000ull + (uint64_t)((k * 3 + d * 5) % (NSYMS - 1)) * 0x1000 +
					 0x10 + 4 * (next_rand() % 4);
	return text;
}

/* 3 records per switch: the wakeup of the task coming in, the switch, the stack of the one going out. */
static int make_trace(struct synth *s, long events)
{
	int32_t cur[2] = {1000, 1001};
	uint64_t t = 1000000;

	if (synth_open_in(s, "/dev/shm", 2, make_kallsyms()) < 0 ||
	    synth_format(s, "sched", "tests/data/kernel/formats/sched/sched_switch.format") < 0 ||
	    synth_format(s, "sched", "tests/data/kernel/formats/sched/sched_wakeup.format") < 0 ||
	    synth_format(s, "ftrace", "tests/data/kernel/cap-g-kernel-printers/formats/ftrace/kernel_stack.format") < 0)
		return -1;
	for (long i = 0; i < events / 3; i++) {
		int cpu = (int)(i & 1);
		int32_t next;
		do
			next = 1000 + (int32_t)(next_rand() % NTASKS);
		while (next == cur[0] || next == cur[1]);
		t += 2000 + next_rand() % 20000;
		put_wakeup(s, cpu, t, cur[cpu], next);
		put_switch(s, cpu, t + 500, cur[cpu], next_rand() % 4 ? 1 : 0, next);
		put_stack(s, cpu, t + 600, cur[cpu], (int)(next_rand() % NSTACKS));
		cur[cpu] = next;
	}
	return synth_close(s);
}

/* CPU seconds (user + system) of the children waited for so far. */
static double children_cpu(void)
{
	struct rusage u;
	getrusage(RUSAGE_CHILDREN, &u);
	return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

/*
 * Run cmd (output to a file): its wall time in seconds, < 0 when it failed,
 * and in *cpu the CPU time of all it ran (on a machine shared with other
 * work the wall time grows while this does not).
 */
static double timed(const char *cmd, double *cpu)
{
	double t0 = now(), c0 = children_cpu();
	int rc = system(cmd);
	*cpu = children_cpu() - c0;
	return rc == 0 ? now() - t0 : -1;
}

int main(int argc, char **argv)
{
	const char *b = argc > 1 ? argv[1] : "build";
	long events = getenv("EVENTS") ? atol(getenv("EVENTS")) : 1500000;
	int runs = getenv("RUNS") ? atoi(getenv("RUNS")) : 3;
	char dat[128], tb_cmd[512], tc_cmd[512], check[512], json[256];
	struct synth s;
	double best_tb = 0, best_tc = 0, cpu_tb = 0, cpu_tc = 0;

	if (system("command -v trace-cmd >/dev/null 2>&1") != 0) {
		printf("bench_offcpu: skipped: trace-cmd not installed\n");
		return 0;
	}
	if (make_trace(&s, events) < 0) {
		fprintf(stderr, "bench_offcpu: cannot make the trace in /dev/shm (run from the source tree)\n");
		return 1;
	}
	snprintf(dat, sizeof(dat), "%s.dat", s.dir);
	struct tb_tracedat_write_opts wo = {.version = 6};
	if (tb_tracedat_write_capture(s.dir, NULL, dat, &wo) < 0) {
		fprintf(stderr, "bench_offcpu: cannot write %s\n", dat);
		return 1;
	}
	synth_remove(&s);
	snprintf(tb_cmd, sizeof(tb_cmd), "%s/tracebuf offcpu -q %s > %s.tb", b, dat, s.dir);
	snprintf(tc_cmd, sizeof(tc_cmd), "trace-cmd report -t -i %s 2>/dev/null | awk -f bench/offcpu_peer.awk > %s.tc",
		 dat, s.dir);
	for (int i = 0; i < runs; i++) {
		double ca, cc, a = timed(tb_cmd, &ca), c = timed(tc_cmd, &cc);
		if (a < 0 || c < 0) {
			fprintf(stderr, "bench_offcpu: a run failed (%s / %s)\n", tb_cmd, tc_cmd);
			return 1;
		}
		if (!best_tb || a < best_tb)
			best_tb = a;
		if (!best_tc || c < best_tc)
			best_tc = c;
		if (!cpu_tb || ca < cpu_tb)
			cpu_tb = ca;
		if (!cpu_tc || cc < cpu_tc)
			cpu_tc = cc;
	}
	/* Both must have paired the same: the total microseconds of their folded lines. */
	snprintf(check, sizeof(check),
		 "a=$(awk '{s+=$NF} END {print s}' %s.tb); c=$(awk '{s+=$NF} END {print s}' %s.tc); "
		 "echo \"  total off-CPU: tracebuf $a us, trace-cmd+awk $c us\"; d=$((a - c)); "
		 "[ ${d#-} -le $(( $(wc -l < %s.tb) + 1 )) ]",
		 s.dir, s.dir, s.dir);
	int same = system(check) == 0;
	double tb_ns = best_tb * 1e9 / (double)events, tc_ns = best_tc * 1e9 / (double)events;
	printf("bench_offcpu: %ld events (sched_wakeup, sched_switch, kernel_stack), trace.dat v6, fastest of %d\n",
	       events, runs);
	printf("  tracebuf offcpu            %8.1f ms (%.1f ns/event, %.1f M events/s); CPU %.1f ms (%.1f M events/s)\n",
	       best_tb * 1e3, tb_ns, events / best_tb / 1e6, cpu_tb * 1e3, events / cpu_tb / 1e6);
	printf("  trace-cmd report | awk     %8.1f ms (%.1f ns/event, %.2f M events/s); CPU %.1f ms; tracebuf is %.1fx "
	       "as fast (%.1fx in CPU time)\n",
	       best_tc * 1e3, tc_ns, events / best_tc / 1e6, cpu_tc * 1e3, best_tc / best_tb, cpu_tc / cpu_tb);
	if (!same)
		printf("  WARNING: the two found different totals: the comparison is off\n");
	snprintf(json, sizeof(json), "%s/bench/results-offcpu.json", b);
	FILE *f = fopen(json, "w");
	if (f) {
		fprintf(f, "[\n  {\"case\": \"offcpu\", \"threads\": 2, \"tracebuf_ns\": %.2f, \"peer\": \"trace-cmd "
			   "report | awk\", \"peer_ns\": %.2f, \"ratio\": %.2f, \"tracebuf_mevents_s\": %.1f, "
			   "\"tracebuf_cpu_mevents_s\": %.1f, \"cpu_ratio\": %.1f}\n]\n",
			tb_ns, tc_ns, tc_ns / tb_ns, events / best_tb / 1e6, events / cpu_tb / 1e6, cpu_tc / cpu_tb);
		fclose(f);
	}
	if (getenv("KEEP"))
		printf("  kept %s\n", dat);
	else
		unlink(dat);
	snprintf(check, sizeof(check), "rm -f %s.tb %s.tc", s.dir, s.dir);
	(void)!system(check);
	return same ? 0 : 1;
}
