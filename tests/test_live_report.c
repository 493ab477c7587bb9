/*
 * `tracebuf report` on a live tracefs instance, against the kernel's own
 * `trace` text of that instance.
 *
 * Creates instances/tb-test-PID with an 8 KiB, overwriting buffer, writes
 * enough trace_marker lines from each CPU to overrun it several times,
 * stops tracing, saves the instance's `trace` and per-CPU stats, then runs
 * the real CLI on the instance (which consumes it).  The event lines and the
 * header must equal `trace`, and every CPU's LOST count must equal the
 * overrun of its stats.  The instance is removed afterwards, also when a
 * check fails or the test is killed.  Needs root and tracefs; skips
 * otherwise.  The top-level buffer is never written.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/lines.h"
#include "lib/instance.h"
#include "lib/tap.h"

#define TRACEFS "/sys/kernel/tracing"
#define MARKERS_PER_CPU 3000
#define HEADER_LINES 12
#define MAX_CPUS 2 /* CPUs written on; more only make the test slower */

/* A child pinned to cpu writes n markers, one write() each. */
static pid_t spawn_writer(int cpu, int n)
{
	pid_t pid = fork();

	if (pid == 0) {
		cpu_set_t set;
		char path[512], line[64];
		int fd;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		snprintf(path, sizeof(path), "%s/trace_marker", instance);
		if (sched_setaffinity(0, sizeof(set), &set) < 0 || (fd = open(path, O_WRONLY)) < 0)
			_exit(1);
		for (int i = 0; i < n; i++) {
			int len = snprintf(line, sizeof(line), "tb-live c%d n%07d\n", cpu, i);
			if (write(fd, line, (size_t)len) != len)
				_exit(1);
		}
		close(fd);
		_exit(0);
	}
	return pid;
}

/* Up to MAX_CPUS CPUs this process may run on; their numbers go to cpus[]. */
static int pick_cpus(int cpus[MAX_CPUS])
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* ------------------------------------------------------------ checking */

static long long stat_value(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;

	return p ? atoll(p + strlen(key)) : -1;
}

static char *run_report(int *status)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s", b, instance);
	return tap_command_output(cmd, status);
}

static void compare_events(const struct lines *ours, const struct lines *kernel)
{
	size_t i = 0, j = 0, same = 0, n_ours = 0, n_kernel = 0;

	for (size_t k = 0; k < ours->n; k++)
		n_ours += is_event_line(ours->v[k]);
	for (size_t k = 0; k < kernel->n; k++)
		n_kernel += is_event_line(kernel->v[k]);
	is_int(n_ours, n_kernel, "as many event lines as the instance's trace");
	while (i < ours->n && j < kernel->n) {
		if (!is_event_line(ours->v[i])) {
			i++;
		} else if (!is_event_line(kernel->v[j])) {
			j++;
		} else {
			if (!strcmp(ours->v[i], kernel->v[j]))
				same++;
			else if (same + 5 > i)
				diag("ours:   %s\n# kernel: %s", ours->v[i], kernel->v[j]);
			i++, j++;
		}
	}
	is_int(same, n_kernel, "every event line equals the kernel's byte for byte");
}

static void check_lost(const struct lines *ours, int cpu, const char *stats)
{
	long long overrun = stat_value(stats, "overrun: ");
	char want[64];
	size_t found = 0;

	snprintf(want, sizeof(want), "CPU:%d [LOST %lld EVENTS]", cpu, overrun);
	for (size_t i = 0; i < ours->n; i++)
		if (!strncmp(ours->v[i], "CPU:", 4) && atoi(ours->v[i] + 4) == cpu) {
			found++;
			is_str(ours->v[i], want, "cpu%d: the LOST line carries the stats overrun", cpu);
		}
	ok(overrun > 0, "cpu%d: the buffer was overrun (%lld events)", cpu, overrun);
	is_int(found, 1, "cpu%d: exactly one LOST line", cpu);
}

int main(void)
{
	int cpus[MAX_CPUS], writers = pick_cpus(cpus), status;
	char *stats[MAX_CPUS], *kernel_text, *report, name[64];
	struct lines ours, kernel;

	if (geteuid() != 0)
		skip_all("needs root to create a tracefs instance");
	if (!instance_have_tracefs())
		skip_all("tracefs is not available at " TRACEFS);
	if (writers == 0)
		skip_all("cannot tell which CPUs this test may run on");
	instance_remove_on_exit();
	if (instance_create("tb-test") < 0)
		skip_all("cannot create a tracefs instance");
	alarm(120);
	ok(instance_set("buffer_size_kb", "8") == 0 && instance_set("options/overwrite", "1") == 0 &&
		   instance_set("tracing_on", "1") == 0,
	   "instance %s: 8 KiB per CPU, overwrite on", instance);
	for (int w = 0; w < writers; w++) {
		pid_t pid = spawn_writer(cpus[w], MARKERS_PER_CPU);
		ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			   WEXITSTATUS(status) == 0,
		   "cpu%d: %d markers written", cpus[w], MARKERS_PER_CPU);
	}
	ok(instance_set("tracing_on", "0") == 0, "tracing stopped");

	kernel_text = instance_read("trace");
	for (int w = 0; w < writers; w++) {
		snprintf(name, sizeof(name), "per_cpu/cpu%d/stats", cpus[w]);
		stats[w] = instance_read(name);
	}
	report = run_report(&status);
	ok(report && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "tracebuf report on the instance: exit status 0");
	split_lines(kernel_text, &kernel);
	split_lines(report, &ours);

	ok(ours.n >= HEADER_LINES && kernel.n >= HEADER_LINES, "both have a header");
	for (int i = 0; i < HEADER_LINES && i < (int)ours.n && i < (int)kernel.n; i++)
		is_str(ours.v[i], kernel.v[i], "header line %d equals the kernel's", i + 1);
	compare_events(&ours, &kernel);
	for (int w = 0; w < writers; w++) {
		int cpu = cpus[w];
		char *after;
		check_lost(&ours, cpu, stats[w]);
		snprintf(name, sizeof(name), "per_cpu/cpu%d/stats", cpu);
		after = instance_read(name);
		is_int(stat_value(after, "entries: "), 0,
		       "cpu%d: the report consumed the buffer (entries 0)", cpu);
		is_int(stat_value(after, "read events: "), stat_value(stats[w], "entries: "),
		       "cpu%d: it read every entry the stats had", cpu);
		free(after);
		free(stats[w]);
	}
	free_lines(&ours);
	free_lines(&kernel);

	ok(instance_close() == 0, "instance removed");
	return done_testing();
}
