/*
 * A program's events and the live kernel's on one time line, in one
 * trace.dat, as `tracebuf report` and the real `trace-cmd report` print it.
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
 *      memory.
 *
 * Needs root and tracefs; skips cleanly otherwise.  trace-cmd's half skips
 * when trace-cmd is not installed.
 */
#include <errno.h>
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
#define COUNT0 0xabc00 /* write i writes COUNT0 + i bytes: its sys_enter line shows 0x000abc0i */

static char big[COUNT0 + ROUNDS];

/* The traced program's work: marker i, then write i. */
static int write_rounds(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char text[64];

	if (fd < 0)
		return 1;
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(text, sizeof(text), "tb-timeline round %d", i);
		if (tb_marker_write(text, strlen(text)) < 0 || write(fd, big, COUNT0 + i) != COUNT0 + i)
			return 1;
	}
	close(fd);
	return 0;
}

/* --child DIR: a mono ring of our own, the rounds, the ring saved as a capture in DIR. */
static int child_own_ring(const char *dir)
{
	struct tb_ring_opts o;
	struct tb_ring *ring;
	struct tb_diag err = {.file = ""};

	tb_ring_opts_default(&o);
	o.size_kb = 64;
	o.clock = TB_CLOCK_MONO;
	if (tb_ring_create(&ring, &o) < 0)
		return 1;
	tb_events_attach(ring);
	if (tb_events_enable("ftrace:print", NULL, 0) < 0 || write_rounds())
		return 1;
	tb_events_attach(NULL);
	if (tb_events_dump(dir, ring) < 0 || tb_ring_save_dir(ring, dir, NULL, &err) < 0) {
		fprintf(stderr, "child: %s\n", err.reason);
		return 1;
	}
	tb_ring_destroy(ring);
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

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s 2>&1", build, dat);
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
		 "%s/tracebuf capture --clock mono -e syscalls:sys_enter_write --kallsyms none -o %s -- %s "
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

static void via_record(const char *build, const char *self, const char *tmp)
{
	char cmd[8192], dat[512];
	int status;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf record --help >/dev/null 2>&1", build);
	if (system(cmd) != 0) {
		skip(8, "this tracebuf has no record command");
		return;
	}
	snprintf(dat, sizeof(dat), "%s/record.dat", tmp);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf record --clock mono -e ftrace:print --kernel syscalls:sys_enter_write -o %s -- %s "
		 "--record-child 2>&1",
		 build, dat, self);
	char *out = tap_command_output(cmd, &status);
	ok(status == 0, "record --kernel: recorded");
	if (status)
		diag("%s", out ? out : "");
	free(out);
	check_reports(build, dat, "record --kernel");
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
	tree_remove(tmp);
	return done_testing();
}
