// SPDX-License-Identifier: MIT
/*
 * kernel_session.c - a private tracefs instance recording beside a traced
 * program (see kernel_session.h).
 *
 * Order of set-up: instance, tracing off, clock, size, events, uprobes
 * (defined in the shared uprobe_events, enabled in the instance only),
 * the off-CPU trigger, the drain thread, tracing on.  Order of tear-down,
 * the reverse, because the kernel refuses to delete a probe whose event is
 * enabled anywhere: tracing off, drain thread joined (its files closed,
 * else rmdir says EBUSY), capture saved, trigger removed, instance
 * removed (which disables its events), probes deleted.
 *
 * The drain thread reads each CPU's trace_pipe_raw non-blocking, one whole
 * sub-buffer per read, appending to DIR/cpuN.raw: when poll() says a CPU's
 * buffer filled to the instance's buffer_percent (the kernel's wake-up
 * mark, 50 % by default), every DRAIN_MS in any case, and once more when
 * told to stop.  It shares nothing with the main thread but the
 * stop pipe and the file names, fixed before it starts; the main thread
 * reads its results only after pthread_join.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "event_select.h"
#include "tracebuf/page.h"
#include "kernel_session.h"
#include "lib_internal.h"
#include "uprobes.h"

#define DRAIN_MS 100
#define MAX_CPUS 4096
#define TRIGGER	 "stacktrace"

struct kernel_session {
	struct kernel_session_opts o;
	const char *root;
	char inst[PATH_MAX];
	char clock[32];
	struct uprobe_set probes;
	bool trigger_set;
	size_t subbuf;
	int ncpus;	  /* per_cpu/cpuN directories: N < ncpus */
	int stop_pipe[2]; /* the main thread closes [1]: the drain thread wakes and ends */
	pthread_t drainer;
	bool draining;
	int drain_error; /* the drain thread's first error (read after join) */
	struct timespec started;
};

/* The session to tear down at exit (set only while it runs). */
static struct kernel_session *live_session;

static int say(const struct kernel_session *ks, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int say(const struct kernel_session *ks, int rc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: --kernel: ", ks->o.who ? ks->o.who : "tracebuf");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

/* ------------------------------------------------------------- set-up */

static int set(struct kernel_session *ks, const char *file, const char *value)
{
	int rc = tracefs_write(ks->inst, file, value);

	if (rc < 0)
		say(ks, rc, "%s/%s: cannot write '%s': %s", ks->inst, file, value, strerror(-rc));
	return rc;
}

static int set_clock(struct kernel_session *ks)
{
	int rc = tracefs_write(ks->inst, "trace_clock", ks->o.clock);

	if (rc < 0) {
		char *clocks = tracefs_read_line(ks->inst, "trace_clock");
		say(ks, rc,
		    "the program's ring uses the clock '%s', which this kernel's trace_clock does not offer "
		    "(it has: %s); a ring with --clock mono or boot can share a time line with it",
		    ks->o.clock, clocks ? clocks : "?");
		free(clocks);
		return rc;
	}
	snprintf(ks->clock, sizeof(ks->clock), "%s", ks->o.clock);
	return 0;
}

static int enable(struct kernel_session *ks, const char *spec)
{
	char err[512];
	int n = enable_events(ks->inst, spec, err, sizeof(err));

	return n < 0 ? say(ks, n, "%s", err) : 0;
}

static int define_uprobes(struct kernel_session *ks)
{
	char err[PATH_MAX + 256];
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < ks->o.nuprobes; i++)
		rc = uprobe_add(&ks->probes, ks->o.uprobes[i], ks->o.program, err, sizeof(err));
	if (rc == 0)
		rc = uprobes_define(ks->root, &ks->probes, err, sizeof(err));
	if (rc < 0)
		return say(ks, rc, "%s", err);
	return ks->probes.n ? enable(ks, uprobes_system(&ks->probes)) : 0;
}

static int set_offcpu(struct kernel_session *ks)
{
	int rc = enable(ks, OFFCPU_EVENTS);

	if (rc == 0) {
		rc = tracefs_append(ks->inst, "events/sched/sched_switch/trigger", TRIGGER);
		if (rc < 0)
			return say(ks, rc, "cannot set the %s trigger on sched_switch: %s", TRIGGER, strerror(-rc));
		ks->trigger_set = true;
	}
	return rc;
}

/* Only the program and its children (kernel_session.h, FOLLOWING). */
static int set_follow(struct kernel_session *ks)
{
	char pid[16];
	int rc;

	snprintf(pid, sizeof(pid), "%d", ks->o.follow_pid);
	rc = set(ks, "set_event_pid", pid);
	return rc < 0 ? rc : set(ks, "options/event-fork", "1");
}

static int count_cpus(struct kernel_session *ks)
{
	char *dir = path_of(ks->inst, "per_cpu");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	unsigned cpu;
	char end;

	free(dir);
	if (!d)
		return say(ks, -errno, "%s/per_cpu: %s", ks->inst, strerror(errno));
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "cpu%u%c", &cpu, &end) == 1 && cpu < MAX_CPUS && (int)cpu >= ks->ncpus)
			ks->ncpus = (int)cpu + 1;
	closedir(d);
	return 0;
}

/* -------------------------------------------------------------- drain */

struct drain_cpu {
	int in, out;
};

/*
 * The sub-buffers in, appended to out, up to the first one not full (the
 * one the kernel is writing: read now, it comes back cut at its commit,
 * and reading on would give a sliver per read); 0 or -errno.
 */
static int drain_once(int in, int out, uint8_t *page, size_t size)
{
	struct tb_page_header h;
	int rc;

	while ((rc = capture_read_subbuf(in, page, size)) == 1) {
		if ((rc = write_all(out, page, size)) < 0)
			return rc;
		/* A sub-buffer the kernel moved past is all but full: less than half is the one being written. */
		if (tb_page_read_header(page, size, &h, NULL) < 0 || h.data_len < (size - 16) / 2)
			return 0;
	}
	return rc;
}

static int open_cpus(struct kernel_session *ks, struct drain_cpu *c)
{
	char rel[64], name[64], *from, *to;

	for (int cpu = 0; cpu < ks->ncpus; cpu++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		snprintf(name, sizeof(name), "cpu%d.raw", cpu);
		from = path_of(ks->inst, rel);
		to = path_of(ks->o.dir, name);
		c[cpu].in = from ? open(from, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
		/* An offline CPU has no buffer: nothing to drain, nothing to create. */
		c[cpu].out = c[cpu].in < 0 || !to ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		free(from);
		free(to);
		if (c[cpu].in >= 0 && c[cpu].out < 0)
			return -errno;
	}
	return 0;
}

/*
 * Wait for a CPU's buffer to fill to buffer_percent, for DRAIN_MS or for
 * the stop pipe.  Returns 1 when told to stop, 0 on time-out (every CPU is
 * due), or the number of CPUs with data, their `due` set.
 */
static int wait_for_data(struct kernel_session *ks, const struct drain_cpu *c, struct pollfd *fds, bool *due)
{
	int n = 0, ready, woken = 0;

	fds[n++] = (struct pollfd){.fd = ks->stop_pipe[0], .events = POLLIN};
	for (int cpu = 0; cpu < ks->ncpus; cpu++)
		if (c[cpu].in >= 0)
			fds[n++] = (struct pollfd){.fd = c[cpu].in, .events = POLLIN};
	ready = poll(fds, (nfds_t)n, DRAIN_MS);
	if (ready > 0 && fds[0].revents)
		return -1;
	for (int cpu = 0, i = 1; cpu < ks->ncpus; cpu++) {
		due[cpu] = c[cpu].in >= 0 && (ready <= 0 || fds[i].revents);
		woken += due[cpu] && ready > 0;
		i += c[cpu].in >= 0;
	}
	return woken;
}

static void *drain_thread(void *arg)
{
	struct kernel_session *ks = arg;
	struct drain_cpu *c = calloc((size_t)ks->ncpus, sizeof(*c));
	struct pollfd *fds = calloc((size_t)ks->ncpus + 1, sizeof(*fds));
	bool *due = calloc((size_t)ks->ncpus, sizeof(*due));
	uint8_t *page = malloc(ks->subbuf);
	int rc = c && fds && due && page ? 0 : -ENOMEM;

	for (int cpu = 0; c && cpu < ks->ncpus; cpu++)
		c[cpu].in = c[cpu].out = -1;
	if (rc == 0)
		rc = open_cpus(ks, c);
	for (bool last = false; rc == 0 && !last;) {
		/* Told to stop: every CPU once more, then done (capture_save reads the rest). */
		last = wait_for_data(ks, c, fds, due) < 0;
		for (int cpu = 0; rc == 0 && cpu < ks->ncpus; cpu++)
			if (c[cpu].in >= 0 && (last || due[cpu]))
				rc = drain_once(c[cpu].in, c[cpu].out, page, ks->subbuf);
	}
	for (int cpu = 0; c && cpu < ks->ncpus; cpu++) {
		if (c[cpu].in >= 0)
			close(c[cpu].in);
		if (c[cpu].out >= 0 && close(c[cpu].out) < 0 && rc == 0)
			rc = -errno;
	}
	free(c);
	free(fds);
	free(due);
	free(page);
	ks->drain_error = rc;
	return NULL;
}

static int start_draining(struct kernel_session *ks)
{
	int rc;

	if (pipe2(ks->stop_pipe, O_CLOEXEC) < 0)
		return say(ks, -errno, "pipe: %s", strerror(errno));
	rc = -pthread_create(&ks->drainer, NULL, drain_thread, ks);
	if (rc < 0) {
		close(ks->stop_pipe[0]), close(ks->stop_pipe[1]);
		return say(ks, rc, "cannot start the drain thread: %s", strerror(-rc));
	}
	ks->draining = true;
	return 0;
}

static int stop_draining(struct kernel_session *ks)
{
	if (!ks->draining)
		return 0;
	close(ks->stop_pipe[1]);
	pthread_join(ks->drainer, NULL);
	close(ks->stop_pipe[0]);
	ks->draining = false;
	if (ks->drain_error < 0)
		say(ks, ks->drain_error, "draining %s: %s", ks->inst, strerror(-ks->drain_error));
	return ks->drain_error;
}

/* ---------------------------------------------------------- tear-down */

static void remove_instance(struct kernel_session *ks)
{
	if (ks->trigger_set)
		tracefs_append(ks->inst, "events/sched/sched_switch/trigger", "!" TRIGGER);
	ks->trigger_set = false;
	for (int i = 0; i < 50 && rmdir(ks->inst) < 0; i++) {
		if (errno != EBUSY) {
			say(ks, 0, "cannot remove %s: %s", ks->inst, strerror(errno));
			break;
		}
		if (i == 49)
			say(ks, 0, "cannot remove %s: a file of it is still open; rmdir it later", ks->inst);
		usleep(20000);
	}
	uprobes_remove(ks->root, &ks->probes);
}

static void free_session(struct kernel_session *ks)
{
	if (live_session == ks)
		live_session = NULL;
	free(ks);
}

/* atexit: a recording that ends without kernel_session_stop leaves nothing behind. */
static void remove_at_exit(void)
{
	struct kernel_session *ks = live_session;

	if (!ks)
		return;
	tracefs_write(ks->inst, "tracing_on", "0");
	stop_draining(ks);
	remove_instance(ks);
	free_session(ks);
}

/* ------------------------------------------------------------- public */

static int set_up(struct kernel_session *ks)
{
	int rc = set(ks, "tracing_on", "0");

	if (rc == 0)
		rc = set_clock(ks);
	if (rc == 0 && ks->o.buffer_kb)
		rc = set(ks, "buffer_size_kb", ks->o.buffer_kb);
	/* %p as the address, as `tracebuf capture --no-hash-ptr`: the kernel's key never leaves it. */
	if (rc == 0)
		tracefs_write(ks->inst, "options/hash-ptr", "0");
	if (rc == 0 && ks->o.events && ks->o.events[0])
		rc = enable(ks, ks->o.events);
	if (rc == 0)
		rc = define_uprobes(ks);
	if (rc == 0 && ks->o.offcpu)
		rc = set_offcpu(ks);
	if (rc == 0 && ks->o.follow_pid > 0)
		rc = set_follow(ks);
	if (rc == 0)
		rc = count_cpus(ks);
	if (rc == 0 && make_dirs(ks->o.dir) < 0)
		rc = say(ks, -errno, "%s: cannot create: %s", ks->o.dir, strerror(errno));
	if (rc == 0)
		rc = start_draining(ks);
	if (rc == 0)
		rc = set(ks, "tracing_on", "1");
	return rc;
}

int kernel_session_start(const struct kernel_session_opts *opts, struct kernel_session **out)
{
	static bool registered;
	struct kernel_session *ks = calloc(1, sizeof(*ks));
	int rc;

	*out = NULL;
	if (!ks)
		return -ENOMEM;
	ks->o = *opts;
	ks->root = tracefs_mount();
	if (!ks->root) {
		struct stat st;
		/* Mounted but closed to us, or not there at all. */
		bool closed = stat("/sys/kernel/tracing/instances", &st) < 0 && errno == EACCES;
		say(ks, 0, "%s", closed ? "/sys/kernel/tracing is not open to this user (tracing needs root)"
				      : "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		free(ks);
		return closed ? -EACCES : -ENODEV;
	}
	snprintf(ks->inst, sizeof(ks->inst), "%s/instances/tracebuf-kernel-%d", ks->root, (int)getpid());
	if (mkdir(ks->inst, 0755) < 0) {
		rc = -errno;
		say(ks, rc, "cannot create the instance %s: %s%s", ks->inst, strerror(-rc),
		    rc == -EACCES || rc == -EPERM ? " (needs root)" : "");
		free(ks);
		return rc;
	}
	live_session = ks;
	if (!registered)
		atexit(remove_at_exit);
	registered = true;
	ks->subbuf = tracefs_subbuf_size(ks->inst);
	rc = set_up(ks);
	if (rc < 0) {
		tracefs_write(ks->inst, "tracing_on", "0");
		stop_draining(ks);
		remove_instance(ks);
		free_session(ks);
		return rc;
	}
	clock_gettime(CLOCK_REALTIME, &ks->started);
	*out = ks;
	return 0;
}

unsigned kernel_session_first_free_id(const struct kernel_session *ks)
{
	char *events = path_of(ks->root, "events"), path[PATH_MAX];
	DIR *sys = events ? opendir(events) : NULL;
	struct dirent *s, *e;
	unsigned top = 0;

	while (sys && (s = readdir(sys))) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", events, s->d_name);
		DIR *evs = opendir(path);
		while (evs && (e = readdir(evs))) {
			char rel[2 * NAME_MAX + 8], *id;
			if (e->d_name[0] == '.')
				continue;
			snprintf(rel, sizeof(rel), "%s/%s/id", s->d_name, e->d_name);
			if ((id = tracefs_read_line(events, rel))) {
				unsigned long n = strtoul(id, NULL, 10);
				top = n > top && n < 65535 ? (unsigned)n : top;
				free(id);
			}
		}
		if (evs)
			closedir(evs);
	}
	if (sys)
		closedir(sys);
	free(events);
	return top + 1;
}

const char *kernel_session_clock(const struct kernel_session *ks)
{
	return ks->clock;
}

int kernel_session_stop(struct kernel_session *ks, struct save_result *res)
{
	struct save_result ignored;
	struct timespec stopped;
	int rc;

	tracefs_write(ks->inst, "tracing_on", "0");
	clock_gettime(CLOCK_REALTIME, &stopped);
	rc = stop_draining(ks);
	struct save_request rq = {
	    .inst = ks->inst,
	    .root = ks->root,
	    .out = ks->o.dir,
	    .kallsyms = KALLSYMS_ALL,
	    .raw_started = true,
	    .events = ks->o.events ? ks->o.events : "",
	    .started = ks->started,
	    .stopped = stopped,
	};
	if (capture_save(&rq, res ? res : &ignored) < 0 && rc == 0)
		rc = -EIO;
	remove_instance(ks);
	free_session(ks);
	return rc;
}
