/*
 * A program's events and the live kernel's on one time line, in one
 * trace.dat, as `tracebuf report --like-trace-cmd` (trace-cmd's text, which the
 * checks below read) and the real `trace-cmd report` print it.
 *
 * The traced program (this file, run with --child) writes a marker into
 * its own ring right before each of ROUNDS write() calls whose byte counts
 * are unique (COUNT0 + i).  The kernel side records syscalls:sys_enter_write
 * in a private instance whose clock is the ring's (mono).  Both captures
 * are joined into one trace.dat: the ring as the top buffer, the kernel as
 * the instance "kernel".  The order is known without either tool: marker i
 * happened before write i entered the kernel, which happened before marker
 * i+1.  Both reports must print exactly that order, and the same order of
 * all those lines as each other.
 *
 *   1. `tracebuf capture --clock mono` + `tracebuf convert --buffer`;
 *   2. `tracebuf record --kernel` (when the CLI has `record`): the kernel
 *      session set up by record itself, with the program's ring in shared
 *      memory, uprobes on entry and return of the function doing the
 *      rounds (first and last of the known order), and --offcpu
 *      (sched_switch of the program going to sleep, followed by its
 *      kernel stack in nanosleep; the mono clock it picks).  Afterwards no
 *      probe and no instance is left, and the whole text of both reports
 *      is the same.
 *   3. `record --uprobe` on a function that does not exist: said, exit 2,
 *      before the program runs.
 *   4. The kernel's buffer is drained while the program runs: a burst of
 *      BURST write() calls through a 64 KiB buffer per CPU, which holds a
 *      thousand or so of their events, arrives whole when record says
 *      nothing was lost; when it says some were, every write is either in
 *      the file or in that count (how much a drainer keeps on a busy
 *      machine is the scheduler's); on the ring's default clock, x86-tsc.
 *   5. Without root (setpriv to nobody): said, and the program recorded
 *      alone.
 *
 * Needs root and tracefs; skips cleanly otherwise.  trace-cmd's half skips
 * when trace-cmd is not installed.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/instance.h"
#include "lib/lines.h"
#include "lib/tap.h"
#include "lib/tree.h"
#include "tracebuf/describe.h"
#include "tracebuf/events.h"
#include "tracebuf/ring.h"
#include "tracebuf/schema.h"
#include "tracebuf/tracepoint.h"

#define ROUNDS 5
#define BURST 20000
#define BURST_KB 64
/* A 64 KiB ring keeps (64 KiB / 4 KiB) sub-buffers of ~4 KiB / 48-byte records per CPU. */
#define BURST_PER_CPU_CAP ((BURST_KB / 4) * (4096 / 48))
_Static_assert(BURST > 4 * BURST_PER_CPU_CAP, "the burst must be far beyond what the buffer holds undrained");
#define COUNT0 0xabc00 /* write i writes COUNT0 + i bytes: its sys_enter line shows 0x000abc0i */

static char big[COUNT0 + ROUNDS];

/* An event of the program's own: its ID is dynamic, above the kernel's under record --kernel. */
TB_EVENT(timeline, round, TB_PROTO(int i), TB_FIELDS(tb_field(int, i, i)), TB_PRINTK("i=%d", REC->i))

/*
 * The traced program's work: marker i, then write i, then a short sleep
 * (off CPU in nanosleep, for --offcpu's stacks).  Not inlined and not
 * static: --uprobe finds it in the symbol table.
 */
__attribute__((noinline)) int write_rounds(void);
__attribute__((noinline)) int write_rounds(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char text[64];

	if (fd < 0)
		return 1;
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(text, sizeof(text), "tb-timeline round %d", i);
		if (tb_marker_write(text, strlen(text)) < 0 || write(fd, big, COUNT0 + i) != COUNT0 + i)
			return 1;
		tb_trace_timeline_round(i);
		usleep(2000);
	}
	close(fd);
	return 0;
}

/* --burst: BURST one-byte writes, as fast as they go. */
static int write_burst(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	for (int i = 0; fd >= 0 && i < BURST; i++)
		if (write(fd, "b", 1) != 1)
			return 1;
	return fd < 0;
}

/* --child DIR: a mono ring of our own, the rounds, the ring saved as a capture in DIR. */
static int child_own_ring(const char *dir)
{
	struct tb_ring_opts o;
	struct tb_ring *ring;
	struct tb_problem err = {.file = ""};

	tb_ring_opts_default(&o);
	o.size_kb = 64;
	o.clock = TB_CLOCK_MONO;
	if (tb_ring_new(&ring, &o) < 0)
		return 1;
	tb_events_attach(ring);
	if (tb_events_enable("ftrace:print,timeline:round", NULL, 0) < 0 || write_rounds())
		return 1;
	tb_events_attach(NULL);
	if (tb_events_dump(dir, ring) < 0 || tb_save_ring(ring, dir, NULL, &err) < 0) {
		fprintf(stderr, "child: %s\n", err.reason);
		return 1;
	}
	tb_ring_free(ring);
	return 0;
}

/* Index of the first line at or after from containing every one of a and b; -1 if none. */
static long find_line(const struct lines *l, size_t from, const char *a, const char *b)
{
	for (size_t i = from; i < l->n; i++)
		if (strstr(l->v[i], a) && strstr(l->v[i], b))
			return (long)i;
	return -1;
}

/*
 * The lines of interest of a report, in its order: "M i" for marker i,
 * "W i" for write i's sys_enter; false when one is missing.
 */
static bool timeline(const struct lines *l, char order[2 * ROUNDS][16], long at[2 * ROUNDS])
{
	char marker[64], count[32];
	bool all = true;

	for (int i = 0; i < ROUNDS; i++) {
		snprintf(marker, sizeof(marker), "tb-timeline round %d", i);
		snprintf(count, sizeof(count), "%x", COUNT0 + i);
		at[2 * i] = find_line(l, 0, marker, "");
		at[2 * i + 1] = find_line(l, 0, "sys_enter_write", count);
		all = all && at[2 * i] >= 0 && at[2 * i + 1] >= 0;
	}
	/* Sort the line numbers, keeping which is which. */
	int idx[2 * ROUNDS];
	for (int i = 0; i < 2 * ROUNDS; i++)
		idx[i] = i;
	for (int i = 1; i < 2 * ROUNDS; i++)
		for (int k = i; k > 0 && at[idx[k - 1]] > at[idx[k]]; k--) {
			int t = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = t;
		}
	for (int i = 0; i < 2 * ROUNDS; i++)
		snprintf(order[i], sizeof(order[i]), "%c %d", idx[i] % 2 ? 'W' : 'M', idx[i] / 2);
	return all;
}

/* The known order: M 0, W 0, M 1, W 1, ... */
static bool in_known_order(char order[2 * ROUNDS][16])
{
	char want[16];

	for (int i = 0; i < 2 * ROUNDS; i++) {
		snprintf(want, sizeof(want), "%c %d", i % 2 ? 'W' : 'M', i / 2);
		if (strcmp(order[i], want))
			return false;
	}
	return true;
}

/* Run cmd; its output as lines (taken over by l). */
static int run_lines(const char *cmd, struct lines *l)
{
	int status;
	char *out = tap_command_output(cmd, &status);

	split_lines(out, l);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Both reports of dat print the known order, and the same order. */
static void check_reports(const char *build, const char *dat, const char *what)
{
	char cmd[2048], ours[2 * ROUNDS][16], theirs[2 * ROUNDS][16];
	long at_ours[2 * ROUNDS], at_theirs[2 * ROUNDS];
	struct lines l;
	bool all;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --like-trace-cmd %s 2>&1", build, dat);
	ok(run_lines(cmd, &l) == 0, "%s: tracebuf report exits 0", what);
	all = timeline(&l, ours, at_ours);
	ok(all, "%s: tracebuf report prints all %d markers and their writes' sys_enter", what, ROUNDS);
	ok(all && in_known_order(ours), "%s: tracebuf report: each marker before its write, after the one before",
	   what);
	if (!all || !in_known_order(ours))
		for (size_t i = 0; i < l.n && i < 60; i++)
			diag("%s", l.v[i]);
	free_lines(&l);

	if (access("/usr/bin/trace-cmd", X_OK) != 0) {
		skip(3, "trace-cmd is not installed");
		return;
	}
	snprintf(cmd, sizeof(cmd), "trace-cmd report %s 2>/dev/null", dat);
	ok(run_lines(cmd, &l) == 0, "%s: trace-cmd report exits 0", what);
	all = timeline(&l, theirs, at_theirs);
	ok(all && in_known_order(theirs), "%s: trace-cmd report: the same known order", what);
	bool same = all;
	for (int i = 0; all && i < 2 * ROUNDS; i++)
		same = same && !strcmp(ours[i], theirs[i]);
	ok(same, "%s: both tools print the lines in the same order", what);
	if (!all || !same)
		for (size_t i = 0; i < l.n && i < 60; i++)
			diag("%s", l.v[i]);
	free_lines(&l);
}

static void via_capture(const char *build, const char *self, const char *tmp)
{
	char cmd[8192], prog[512], kern[512], dat[512];

	snprintf(prog, sizeof(prog), "%s/program", tmp);
	snprintf(kern, sizeof(kern), "%s/kernel", tmp);
	snprintf(dat, sizeof(dat), "%s/joined.dat", tmp);
	snprintf(cmd, sizeof(cmd),
		 "TRACEBUF_FIRST_ID=60000 %s/tracebuf capture --clock mono -e syscalls:sys_enter_write --kallsyms none -o %s -- %s "
		 "--child %s 2>&1",
		 build, kern, self, prog);
	int status;
	char *out = tap_command_output(cmd, &status);
	ok(status == 0, "capture: the kernel captured around the program");
	if (status)
		diag("%s", out ? out : "");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf convert %s --buffer kernel=%s -o %s 2>&1", build, prog, kern, dat);
	out = tap_command_output(cmd, &status);
	ok(status == 0, "capture: tracebuf convert joins the program's capture and the kernel's");
	if (status)
		diag("%s", out ? out : "");
	free(out);
	check_reports(build, dat, "capture");
}

/* Some line at or after from has all of a, b and c. */
static bool has_line(const struct lines *l, const char *a, const char *b, const char *c)
{
	for (size_t i = 0; i < l->n; i++)
		if (strstr(l->v[i], a) && strstr(l->v[i], b) && strstr(l->v[i], c))
			return true;
	return false;
}

/* The program's sched_switch away to sleep, then its stack: a line naming nanosleep before the next event. */
static bool sleep_stack(const struct lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!strstr(l->v[i], "sched_switch:") || !strstr(l->v[i], "test_kernel_tim:") ||
		    !strstr(l->v[i], "] S ==>"))
			continue;
		for (size_t k = i + 1; k < l->n && k < i + 40; k++)
			if (strstr(l->v[k], "kernel_stack:")) {
				for (size_t j = k + 1; j < l->n && !strstr(l->v[j], ": "); j++)
					if (strstr(l->v[j], "nanosleep"))
						return true;
				break;
			}
	}
	return false;
}

/* The time stamp after "[CPU]" is in seconds with a fraction (a clock in ns), not a raw count. */
static bool stamp_in_seconds(const char *line)
{
	const char *p = strstr(line, "] ");

	p = p ? strstr(line, "]") + 1 : NULL;
	while (p && *p == ' ')
		p++;
	while (p && *p >= '0' && *p <= '9')
		p++;
	return p && *p == '.';
}

/*
 * A record's instance (tracebuf-kernel-PID) or uprobe group (tb_PID) still
 * there after its process PID is gone.  Tests beside this one run records
 * of their own, whose instances and probes come and go: only those of a
 * dead process are left behind.  The name is looked at again once the
 * process is known dead, since a record removes them just before it exits.
 */
static bool left_by_dead(pid_t pid, const char *still_there_cmd)
{
	int status;
	char *out;
	bool there;

	if (pid <= 0 || kill(pid, 0) == 0 || errno == EPERM)
		return false;
	out = tap_command_output(still_there_cmd, &status);
	there = out && out[0];
	free(out);
	return there;
}

/* Nothing left in tracefs by a record that has ended: no tracebuf-kernel-* instance, no tb_* probe. */
static bool tracefs_clean(void)
{
	char *probes = tap_slurp(TRACEFS "/uprobe_events", NULL);
	int status;
	char *inst = tap_command_output("ls " TRACEFS "/instances | grep '^tracebuf-kernel-'", &status);
	char cmd[256];
	bool clean = probes && inst;

	for (char *p = inst; clean && p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		pid_t pid = (pid_t)atoi(p + strlen("tracebuf-kernel-"));
		snprintf(cmd, sizeof(cmd), "ls -d " TRACEFS "/instances/tracebuf-kernel-%d 2>/dev/null", (int)pid);
		clean = !left_by_dead(pid, cmd);
	}
	for (char *p = probes; clean && p && (p = strstr(p, ":tb_")) != NULL; p++) {
		pid_t pid = (pid_t)atoi(p + 4);
		snprintf(cmd, sizeof(cmd), "grep ':tb_%d/' " TRACEFS "/uprobe_events", (int)pid);
		clean = !left_by_dead(pid, cmd);
	}
	if (!clean)
		diag("left behind: probes '%s', instances '%s'", probes ? probes : "?", inst ? inst : "?");
	free(probes);
	free(inst);
	return clean;
}

static void via_record(const char *build, const char *self, const char *tmp)
{
	char cmd[8192], dat[512];
	struct lines ours, theirs;
	int status;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf record --help >/dev/null 2>&1", build);
	if (system(cmd) != 0) {
		skip(19, "this tracebuf has no record command");
		return;
	}
	snprintf(dat, sizeof(dat), "%s/record.dat", tmp);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf record -e ftrace:print,timeline:round --kernel syscalls:sys_enter_write --uprobe write_rounds "
		 "--uprobe 'write_rounds%%return' --offcpu -o %s -- %s --record-child 2>&1",
		 build, dat, self);
	char *out = tap_command_output(cmd, &status);
	ok(status == 0, "record --kernel: recorded");
	if (status)
		diag("%s", out ? out : "");
	free(out);
	ok(tracefs_clean(), "record --kernel: its instance and uprobes are removed");
	check_reports(build, dat, "record --kernel");

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --like-trace-cmd %s 2>&1", build, dat);
	run_lines(cmd, &ours);
	long entry = find_line(&ours, 0, "write_rounds:", "kernel:");
	long ret = find_line(&ours, 0, "write_rounds__return:", "kernel:");
	long first = find_line(&ours, 0, "tb-timeline round 0", "");
	char last_count[32];
	snprintf(last_count, sizeof(last_count), "%x", COUNT0 + ROUNDS - 1);
	long last = find_line(&ours, 0, "sys_enter_write", last_count);
	ok(entry >= 0 && first >= 0 && entry < first, "--uprobe: the function's entry before its first marker");
	ok(ret >= 0 && last >= 0 && ret > last, "--uprobe FUNC%%return: its return after its last write");
	ok(has_line(&ours, "kernel:", "sched_wakeup:", "test_kernel_tim:"), "--offcpu: sched_wakeup recorded");
	ok(find_line(&ours, 0, " round:", "i=4") > last,
	   "the program's own event (ID above the kernel's) printed by name, after the last write");
	ok(sleep_stack(&ours), "--offcpu: the program's switch to sleep, then its kernel stack in nanosleep");
	long sw = find_line(&ours, 0, "sched_switch:", "kernel:");
	ok(sw >= 0 && stamp_in_seconds(ours.v[sw]), "--offcpu: on the mono clock by default (time stamps in seconds)");
	if (access("/usr/bin/trace-cmd", X_OK) == 0) {
		snprintf(cmd, sizeof(cmd), "trace-cmd report %s 2>/dev/null", dat);
		run_lines(cmd, &theirs);
		size_t same = 0;
		while (same < ours.n && same < theirs.n && !strcmp(ours.v[same], theirs.v[same]))
			same++;
		ok(ours.n == theirs.n && same == ours.n, "record --kernel: tracebuf report's text is trace-cmd's (%zu lines)",
		   ours.n);
		if (same < ours.n || same < theirs.n)
			diag("first difference at line %zu:\n  tracebuf:  %s\n  trace-cmd: %s", same + 1,
			     same < ours.n ? ours.v[same] : "(end)", same < theirs.n ? theirs.v[same] : "(end)");
		free_lines(&theirs);
	} else {
		skip(1, "trace-cmd is not installed");
	}
	free_lines(&ours);

	/*
	 * A probe that cannot be set is the user's mistake (issue 23): said, exit 2, before the
	 * program runs (so no file), nothing left behind.
	 */
	snprintf(dat, sizeof(dat), "%s/alone.dat", tmp);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf record -e ftrace:print --uprobe no_such_function_here -o %s -- %s --record-child 2>&1",
		 build, dat, self);
	out = tap_command_output(cmd, &status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 2, "--uprobe of a missing function: exit 2");
	ok(out && strstr(out, "no function 'no_such_function_here'"), "--uprobe of a missing function: said");
	free(out);
	ok(access(dat, F_OK) < 0, "--uprobe of a missing function: the program did not run, no file written");
	ok(tracefs_clean(), "--uprobe of a missing function: nothing left in tracefs");
}

/*
 * The N of record's "kernel: ...; lost N (overwritten O, ...)" line, and O
 * in *overwritten: the events the kernel's pages can count where they
 * were lost.  Both 0 when the line has none.
 */
static unsigned long long kernel_lost(const char *out, unsigned long long *overwritten)
{
	const char *k = out ? strstr(out, "tracebuf record: kernel:") : NULL;
	const char *nl = k ? strchr(k, '\n') : NULL;
	const char *l = k ? strstr(k, "; lost ") : NULL;
	unsigned long long n = 0;

	*overwritten = 0;
	if (!l || (nl && l > nl) || sscanf(l, "; lost %llu (overwritten %llu", &n, overwritten) < 1)
		return 0;
	return n;
}

static void drained_live(const char *build, const char *self, const char *tmp)
{
	char cmd[8192], dat[512];
	struct lines l;
	int status;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf record --help >/dev/null 2>&1", build);
	if (system(cmd) != 0) {
		skip(6, "this tracebuf has no record command");
		return;
	}
	snprintf(dat, sizeof(dat), "%s/burst.dat", tmp);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf record --kernel syscalls:sys_enter_write --kernel-kb %d -o %s -- %s --burst 2>&1", build,
		 BURST_KB, dat, self);
	char *out = tap_command_output(cmd, &status);
	unsigned long long overwritten, lost = kernel_lost(out, &overwritten);
	ok(status == 0, "burst: recorded");
	if (status)
		diag("%s", out ? out : "");
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --like-trace-cmd %s 2>&1", build, dat);
	run_lines(cmd, &l);
	/*
	 * The burst's records: a count of 0x00000001, from the task that wrote
	 * the burst (not record's).  A record right after "kernel: CPU:N [M
	 * EVENTS DROPPED]" has no "kernel:" of its own (trace-cmd's layout),
	 * so the task is looked for anywhere before the CPU column.
	 */
	size_t seen = 0;
	unsigned long long dropped = 0, m;
	bool dropped_counted = true;
	for (size_t i = 0; i < l.n; i++) {
		const char *t = strstr(l.v[i], " test_kernel_tim-"), *cpu = strstr(l.v[i], " [");
		const char *d = strstr(l.v[i], "CPU:");
		if (strstr(l.v[i], "sys_enter_write:") && strstr(l.v[i], "count: 0x00000001") && t && cpu && t < cpu)
			seen++;
		else if (d && strstr(d, "EVENTS DROPPED]")) {
			if (sscanf(d, "CPU:%*d [%llu EVENTS DROPPED]", &m) == 1)
				dropped += m;
			else
				dropped_counted = false;
		}
	}
	long first = find_line(&l, 0, "sys_enter_write:", "kernel:");
	ok(first >= 0 && stamp_in_seconds(l.v[first]),
	   "burst: the ring's default clock, x86-tsc, for both, printed in seconds (the file's TSC2NSEC)");
	/*
	 * What record guarantees is that no write goes missing unsaid: each
	 * is in the file or in record's lost count (which also counts other
	 * processes' writes, hence >=).  How many the drainer kept is the
	 * scheduler's business on a busy machine; when it lost none, all
	 * BURST are there, far more than the buffer alone holds, so it was
	 * drained while the program ran.
	 */
	ok(seen <= BURST && seen + lost >= BURST, "burst: %zu of %d writes kept, %llu lost and said: none missing unsaid",
	   seen, BURST, lost);
	/* the loss is said by the report too, at the place it happened; where
	 * each page could keep its count, they add up to record's */
	ok(lost ? dropped > 0 || !dropped_counted : dropped == 0 && dropped_counted,
	   "burst: the report says where events were dropped (%llu) when record said %llu were lost", dropped, lost);
	if (lost && dropped_counted)
		ok(dropped == overwritten, "burst: the report's dropped counts add up to record's overwritten count (%llu)",
		   overwritten);
	else
		skip(1, lost ? "a page could not keep its count of dropped events" : "nothing was lost");
	if (lost)
		skip(1, "the kernel's buffer overflowed on this (busy) machine; record said so");
	else
		ok(seen == BURST, "burst: record said nothing was lost, and all %d are there, beyond the %d a buffer holds",
		   BURST, BURST_PER_CPU_CAP);
	if (seen + lost < BURST || (!lost && seen != BURST))
		diag("%s", out ? out : "");
	free(out);
	free_lines(&l);
}

static void without_root(const char *build, const char *self, const char *tmp)
{
	char cmd[8192], dir[512];
	struct lines l;
	int status;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf record --help >/dev/null 2>&1 && command -v setpriv >/dev/null", build);
	snprintf(dir, sizeof(dir), "%s/nobody", tmp);
	if (system(cmd) != 0 || mkdir(dir, 0777) < 0 || chmod(dir, 0777) < 0 || chmod(tmp, 0711) < 0) {
		skip(3, "no record command, no setpriv, or no directory for nobody");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "setpriv --reuid=65534 --regid=65534 --clear-groups %s/tracebuf record -e ftrace:print --kernel "
		 "sched:sched_switch -o %s/alone.dat -- %s --record-child 2>&1",
		 build, dir, self);
	char *out = tap_command_output(cmd, &status);
	ok(status == 0, "without root: recorded all the same");
	ok(out && strstr(out, "tracing needs root") && strstr(out, "without the kernel"),
	   "without root: said why, and that the kernel is left out");
	if (!out || !strstr(out, "tracing needs root"))
		diag("%s", out ? out : "");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s/alone.dat 2>&1", build, dir);
	run_lines(cmd, &l);
	ok(find_line(&l, 0, "tb-timeline round 4", "") >= 0 && find_line(&l, 0, "kernel:", "") < 0,
	   "without root: the program's events, no kernel buffer");
	free_lines(&l);
}

int main(int argc, char **argv)
{
	const char *build = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char self[4096], tmp[] = "/tmp/tb-timeline-XXXXXX";
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_own_ring(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "--record-child"))
		return write_rounds();
	if (argc == 2 && !strcmp(argv[1], "--burst"))
		return write_burst();
	if (geteuid() != 0)
		skip_all("needs root (tracefs)");
	if (!instance_have_tracefs())
		skip_all("tracefs is not available");
	if (access(TRACEFS "/events/syscalls/sys_enter_write", F_OK) != 0)
		skip_all("this kernel has no syscalls:sys_enter_write event");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0 || !mkdtemp(tmp))
		skip_all("no /proc/self/exe or no temporary directory");
	self[n] = '\0';
	via_capture(build, self, tmp);
	via_record(build, self, tmp);
	drained_live(build, self, tmp);
	without_root(build, self, tmp);
	tree_remove(tmp);
	return done_testing();
}
