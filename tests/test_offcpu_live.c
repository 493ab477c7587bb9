/*
 * tracebuf offcpu on a real recording: a program that sleeps, blocks on a
 * pipe and waits for the disk, captured with `tracebuf capture --offcpu`
 * from the live kernel (skipped without root or tracefs).
 *
 * The workload is this program run again with --workload, named
 * tb-offcpu-load: it sleeps 300 ms; then forks a child (same name) that
 * writes and fsyncs a file in the build directory and reads it back with
 * O_DIRECT for 300 ms before writing one byte into a pipe the parent waits
 * on.  Its off-CPU time must therefore be three towers - nanosleep, the
 * pipe read, the disk I/O - each near 300 ms, and the three biggest.
 * A tower is told by its kernel frames (do_nanosleep; pipe_read; fsync /
 * io_schedule / jbd2 waits).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/offcpu.h"

#define LOAD_COMM "tb-offcpu-load"
#define PHASE_NS 300000000ll

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* Write + fdatasync, then O_DIRECT reads, until PHASE_NS has passed. */
static void disk_io(const char *dir)
{
	char path[PATH_MAX];
	static char block[1 << 16] __attribute__((aligned(4096)));
	long long end = now_ns() + PHASE_NS;
	int fd, dfd, written = 0;

	snprintf(path, sizeof(path), "%s/offcpu-io-%d", dir, (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	memset(block, 'x', sizeof(block));
	/* Half the time written and flushed, block by block; the other half read back past the page cache. */
	for (int i = 0; fd >= 0 && now_ns() < end - PHASE_NS / 2; i++, written += written < 64) {
		if (pwrite(fd, block, sizeof(block), (off_t)(i % 64) * sizeof(block)) < 0 || fdatasync(fd) < 0)
			break;
	}
	dfd = written ? open(path, O_RDONLY | O_DIRECT) : -1;
	for (int i = 0; dfd >= 0 && now_ns() < end; i++)
		if (pread(dfd, block, sizeof(block), (off_t)(i % written) * sizeof(block)) <= 0)
			break;
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	unlink(path);
}

static int workload(const char *dir)
{
	struct timespec nap = {0, PHASE_NS};
	int p[2];
	char c;

	prctl(PR_SET_NAME, LOAD_COMM);
	nanosleep(&nap, NULL);
	if (pipe(p) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		disk_io(dir);
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	waitpid(pid, NULL, 0);
	return 0;
}

enum tower { T_SLEEP, T_PIPE, T_IO, T_OTHER };

static enum tower tower_of(const char *stack)
{
	if (strstr(stack, "do_nanosleep"))
		return T_SLEEP;
	if (strstr(stack, "pipe_read"))
		return T_PIPE;
	if (strstr(stack, "sync") || strstr(stack, "io_schedule") || strstr(stack, "jbd2") ||
	    strstr(stack, "blkdev") || strstr(stack, "direct_IO") || strstr(stack, "iomap_dio"))
		return T_IO;
	return T_OTHER;
}

static char cleanup_cmd[3 * PATH_MAX + 64];

/* The capture and the CLI's outputs go whatever happens (TB_KEEP=1 keeps them). */
static void clean_up(void)
{
	if (cleanup_cmd[0] && !getenv("TB_KEEP"))
		(void)!system(cleanup_cmd);
}

int main(int argc, char **argv)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char dir[PATH_MAX], self[PATH_MAX], cmd[3 * PATH_MAX + 200];
	static const char *const names[] = {"nanosleep", "pipe read", "disk I/O", "other"};
	struct tb_capture *c;
	struct tb_offcpu *r;
	struct tb_offcpu_opts o = {.comm = LOAD_COMM};
	struct tb_offcpu_totals t;

	if (argc == 3 && !strcmp(argv[1], "--workload"))
		return workload(argv[2]);
	if (geteuid() != 0)
		skip_all("needs root (tracefs)");
	if (access("/sys/kernel/tracing/instances", W_OK) != 0)
		skip_all("tracefs is not available at /sys/kernel/tracing");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		skip_all("cannot find this program");
	self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s/tests/offcpu-live-%d", b, (int)getpid());
	snprintf(cleanup_cmd, sizeof(cleanup_cmd), "rm -rf %s %s.svg %s.folded", dir, dir, dir);
	atexit(clean_up);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf capture --offcpu -b 4096 --kallsyms used -o %s -- %s --workload %s/tests",
		 b, dir, self, b);
	if (!ok(system(cmd) == 0, "captured: %s", cmd))
		return done_testing();
	if (!ok(tb_capture_open(dir, NULL, &c) == 0, "the capture opens"))
		return done_testing();
	ok(tb_offcpu_run(c, &o, &r, &t) == 0, "offcpu runs");
	ok(t.have_kernel_stack && t.kernel_stacks > 0, "kernel stacks were recorded (%llu intervals with one)",
	   (unsigned long long)t.kernel_stacks);
	ok(t.lost_pages == 0, "nothing lost");

	uint64_t sum[4] = {0};
	size_t nlines;
	const struct tb_folded *lines = tb_offcpu_stacks(r, &nlines);
	for (size_t i = 0; i < nlines; i++)
		sum[tower_of(lines[i].stack)] += lines[i].value;
	for (int i = 0; i < 4; i++)
		diag("%-10s %8.1f ms", names[i], (double)sum[i] / 1e6);
	/* Each phase lasts 300 ms; its tower holds most of it (the rest runs or waits for a CPU). */
	for (int i = T_SLEEP; i <= T_IO; i++)
		ok(sum[i] >= 200000000ull && sum[i] <= 900000000ull, "%s tower: %.1f ms (200..900)", names[i],
		   (double)sum[i] / 1e6);
	/* Rank the towers: the three named ones outweigh everything else the program did. */
	ok(sum[T_OTHER] < sum[T_SLEEP] && sum[T_OTHER] < sum[T_PIPE] && sum[T_OTHER] < sum[T_IO],
	   "the three biggest towers are nanosleep, pipe read and disk I/O (other: %.1f ms)",
	   (double)sum[T_OTHER] / 1e6);
	tb_offcpu_free(r);
	tb_capture_close(c);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf offcpu -q --comm " LOAD_COMM " --svg %s.svg %s > %s.folded", b, dir,
		 dir, dir);
	ok(system(cmd) == 0, "the CLI writes the folded stacks and the SVG");
	return done_testing();
}
