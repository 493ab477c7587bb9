// SPDX-License-Identifier: MIT
/*
 * tracebuf record [-e EVENTS] [-b KB] [-o FILE] [--flight-recorder]
 *                 [--group G] [--shm PATH] [--clock CLOCK]
 *                 [--kernel EVENTS] [--uprobe FUNC] [--offcpu] [--kernel-kb KB] [-a]
 *                 -- CMD [ARGS...]
 *
 * Trace a program linked with libtracebuf from outside it.  The session is
 * a ring in shared memory (tracebuf/shm.h): a sealed memfd, or the named
 * file --shm gives (kept afterwards, for snapshot and recover).  CMD runs
 * with TRACEBUF_SHM (the region's path), TRACEBUF_EVENTS (-e) and
 * TRACEBUF_SHM_FORMATS (where each of its processes describes its events)
 * in its environment; libtracebuf's constructor attaches to the ring
 * (src/source/session.c), so the program needs no code of its own, and its
 * children inherit the session.
 *
 * While CMD runs, this process drains the ring with the consuming reader
 * (the reader-page swap works across processes) into a capture directory,
 * and writes it as a trace.dat when CMD ends, when a signal stops us or on
 * Ctrl-C: the file is always complete.  With --flight-recorder nothing is
 * drained: the ring keeps the newest events (overwrite mode) and what it
 * holds when CMD ends is written (tracebuf snapshot copies it meanwhile).
 *
 * With --kernel, --uprobe or --offcpu the live kernel records too, in a
 * private tracefs instance on the ring's clock (kernel_session.c), drained
 * by a thread of its own; its capture becomes the trace.dat's second
 * buffer, the instance "kernel".  It follows CMD and its children (CMD is
 * forked held before its exec until the instance knows its pid), or every
 * task with -a (kernel_session.h, FOLLOWING).  CMD's events get IDs above the kernel's
 * (TRACEBUF_FIRST_ID).  Without tracefs or root that is said, and CMD is
 * recorded alone.
 *
 * The shape is open to more buffers (the kernel's, through a tracefs
 * instance): each source has a drain step called from the loop and a final
 * step that puts its pages into the capture directory before it is
 * written.  Exit status: the program's once the file is written (128 + N
 * when signal N killed it; program_status()); our own failures by the CLI's
 * table (2 usage, 3 CMD cannot run, 4 the trace.dat cannot be written, 5
 * the system).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "event_select.h"
#include "kernel_session.h"
#include "record_check.h"
#include "record_pages.h"
#include "shm_capture.h"
#include "tracebuf/blob.h"
#include "tracebuf/reader.h"
#include "tracebuf/shm.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracedat.h"
#include "lib_internal.h"

#define CMD "record"
#define IDLE_NS (1000 * 1000) /* sleep between drains that found nothing */

struct options {
	char *events;  /* comma-joined -e items; NULL: every event */
	size_t kb;     /* per CPU; 0: the ring's default */
	const char *out;
	bool flight;
	const char *group;
	const char *shm_path;
	const char *clock;	/* the ring's clock name; NULL: the default (x86-tsc) */
	char *kernel_events;	/* --kernel, comma-joined */
	const char **uprobes;	/* --uprobe */
	size_t nuprobes;
	bool offcpu;
	bool all_tasks;		/* -a: the kernel records every task, not only CMD's */
	bool progress;		/* the live line: events/s and lost per CPU (cli_show_progress) */
	const char *kernel_kb;
	size_t blob_kb; /* per CPU: the ring's blob area (tracebuf/blob.h); 0: none */
	char **command;
};

struct recorder {
	struct options o;
	struct tb_shm *shm;        /* the creator's handle: owns the file */
	struct tb_shm *shm_reader; /* our reader's view of it */
	struct tb_ring *ring;      /* shm_reader's ring */
	char tmp[PATH_MAX];  /* our temporaries: the capture directory */
	char cap[PATH_MAX + 16];
	char desc[PATH_MAX]; /* where CMD's processes describe their events */
	int *raw;            /* per CPU: the capture's cpuN.raw */
	struct page_packer *packers; /* per CPU: drained pages packed into full ones (record_pages.h) */
	struct thread_names names;   /* the threads met in the records */
	bool names_failed;           /* out of memory naming them */
	int blobs_fd;        /* the capture's blobs.bin (a blob area only), else -1 */
	struct tb_blob_save_counts blobs;
	uint8_t *page;
	uint64_t pages, events, lost;
	pid_t child;
	int go_fd;     /* CMD waits before its exec until this says go (child_release) */
	int failed_fd; /* CMD's exec error, if it fails */
	int child_status;
	bool child_done;
	bool events_checked; /* -e items matched CMD's own events (record_check.h) */
	bool events_wrong;   /* an -e item matched no process's events: exit 2 */
	int fail_exit;       /* CLI_EXIT_* of our own failure, 0: from its errno (cli_exit_for) */
	struct kernel_session *kernel; /* NULL: the program alone */
	char kernel_cap[PATH_MAX + 16];
	unsigned first_id;		/* TRACEBUF_FIRST_ID for CMD; 0: not set */
	struct progress_line live;	/* events drained, their rate, lost per CPU (o.progress) */
};

/* ----------------------------------------------------------- signals */

static volatile sig_atomic_t stop_signal;
static volatile pid_t child_pid;

/*
 * Stop: the file is written with what was drained so far.  A signal from
 * the terminal (SI_KERNEL) reached CMD already (same process group);
 * anything else is passed on once.
 */
static void on_stop(int sig, siginfo_t *si, void *unused)
{
	(void)unused;
	if (!stop_signal && child_pid > 0 && si->si_code != SI_KERNEL)
		kill(child_pid, sig);
	stop_signal = sig;
}

static void install_handlers(void)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
}

/* ------------------------------------------------------------ options */

static int add_uprobe(struct options *o, const char *spec)
{
	const char **grown = realloc(o->uprobes, (o->nuprobes + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	o->uprobes = grown;
	o->uprobes[o->nuprobes++] = spec;
	return 0;
}

/* The ring clock named by --clock ("tsc" for x86-tsc too); -EINVAL if none. */
static int ring_clock(const char *name, enum tb_clock *out)
{
	static const enum tb_clock clocks[] = {TB_CLOCK_TSC, TB_CLOCK_MONO, TB_CLOCK_BOOT};

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (!strcmp(name, tb_clock_name(clocks[i]))) {
			*out = clocks[i];
			return 0;
		}
	if (!strcmp(name, "tsc")) {
		*out = TB_CLOCK_TSC;
		return 0;
	}
	return -EINVAL;
}

enum {
	O_EVENTS, O_SIZE, O_OUTPUT, O_FLIGHT, O_GROUP, O_SHM, O_BLOB_KB, O_CLOCK, O_KERNEL, O_UPROBE, O_OFFCPU,
	O_KERNEL_KB, O_ALL, O_N
};
static const struct cli_opt opts[] = {
    [O_EVENTS] = {"event", 'e', CLI_LIST, "EVENTS", "SYSTEM:NAME globs, comma-separated, repeatable (default: all)",
		  "-e", .old = "events"},
    [O_SIZE] = {"buffer-size", 'b', CLI_SIZE, "KB", "ring size per CPU in KiB (default 1408)", "-b", .min = 1,
		.max = 1 << 22, .old = "buffer-kb"},
    [O_OUTPUT] = {"output", 'o', CLI_STRING, "FILE", "the trace.dat (default trace.dat)", "-o"},
    [O_FLIGHT] = {"flight-recorder", 0, CLI_FLAG, NULL,
		  "keep the newest events, do not drain; write them at the end (tracebuf snapshot copies them meanwhile)"},
    [O_GROUP] = {"group", 0, CLI_STRING, "G", "the shared memory is mode 0660 for group G (default 0600)"},
    [O_SHM] = {"shm", 0, CLI_STRING, "PATH",
	       "make the ring in this file (e.g. /dev/shm/NAME; kept, for snapshot and recover) instead of a sealed memfd"},
    [O_BLOB_KB] = {"blob-kb", 0, CLI_SIZE, "KB",
		   "a blob area of KB per CPU for payloads bigger than a record (tb_blob_write; default none)",
		   .min = 0, .max = 1 << 22},
    [O_CLOCK] = {"clock", 'C', CLI_STRING, "CLOCK", "the ring's clock: x86-tsc (default; mono with --offcpu), mono or boot",
		 "-C"},
    [O_KERNEL] = {"kernel", 0, CLI_LIST, "EVENTS",
		  "kernel events too (sched:sched_switch,irq:*,...; root, tracefs: a private instance), repeatable"},
    [O_UPROBE] = {"uprobe", 0, CLI_LIST, "FUNC",
		  "a uprobe on CMD's function FUNC (FILE:FUNC for another object, FUNC%return for its return), repeatable"},
    [O_OFFCPU] = {"offcpu", 0, CLI_FLAG, NULL,
		  "what `tracebuf offcpu` needs: sched_switch, sched_wakeup and the kernel stack of every switch"},
    [O_KERNEL_KB] = {"kernel-kb", 0, CLI_SIZE, "KB", "the kernel instance's buffer_size_kb per CPU", .min = 1,
		     .max = 1 << 30},
    [O_ALL] = {"all-cpus", 'a', CLI_FLAG, NULL,
	       "the kernel's events of every task (default: CMD and its children only, as trace-cmd record -F)"},
};

static int run_record(int argc, char **argv);

const struct cli_command cli_record = {
    "record", "run a program with its ring in shared memory and write a trace.dat", "[OPTIONS] -- CMD [ARGS...]",
    "Run CMD (linked with libtracebuf) with a ring in shared memory, drain it from outside while CMD runs, and "
    "write a trace.dat when it ends (or on a signal).  With --kernel, --uprobe or --offcpu the live kernel "
    "records on the same time line.\n\n"
    "Exit status: CMD's own once the file is written (128+N when signal N killed it), as `time` gives it; "
    "the statuses below when tracebuf itself fails before that.",
    opts, O_N, .run = run_record, .operands_end_options = true, .long_work = true,
};

/* 0, or the exit status of a usage error. */
static int take_options(struct cli_args *a, struct options *o)
{
	static char kernel_kb[32];

	o->out = cli_given(a, O_OUTPUT) ? cli_str(a, O_OUTPUT) : "trace.dat";
	if (cli_given(a, O_EVENTS) && !(o->events = cli_join(a, O_EVENTS)))
		return CLI_EXIT_SYSTEM;
	if (cli_given(a, O_KERNEL) && !(o->kernel_events = cli_join(a, O_KERNEL)))
		return CLI_EXIT_SYSTEM;
	o->kb = (size_t)cli_num(a, O_SIZE);
	o->flight = cli_given(a, O_FLIGHT);
	o->group = cli_str(a, O_GROUP);
	o->shm_path = cli_str(a, O_SHM);
	o->clock = cli_str(a, O_CLOCK);
	for (int i = 0; i < a->v[O_UPROBE].given; i++)
		if (add_uprobe(o, a->v[O_UPROBE].list[i]) < 0)
			return CLI_EXIT_SYSTEM;
	o->offcpu = cli_given(a, O_OFFCPU);
	if (cli_given(a, O_KERNEL_KB)) {
		snprintf(kernel_kb, sizeof(kernel_kb), "%lld", cli_num(a, O_KERNEL_KB));
		o->kernel_kb = kernel_kb;
	}
	o->blob_kb = (size_t)cli_num(a, O_BLOB_KB);
	o->all_tasks = cli_given(a, O_ALL);
	o->progress = cli_show_progress(a);
	if (!a->noperands)
		return cli_usage_error(&cli_record, "no command to run (tracebuf record [OPTIONS] -- CMD)");
	o->command = a->operands;
	return 0;
}

/* ------------------------------------------------------------ session */

static int resolve_group(const char *name, gid_t *gid)
{
	struct group *g = getgrnam(name);
	char *end;

	if (g) {
		*gid = g->gr_gid;
		return 0;
	}
	*gid = (gid_t)strtoul(name, &end, 10);
	return *name && !*end ? 0 : -ENOENT;
}

static int session_open(struct recorder *rec)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.path = rec->o.shm_path, .ring = &ro};
	unsigned ncpus;
	int rc;

	tb_ring_opts_default(&ro);
	if (rec->o.kb)
		ro.size_kb = rec->o.kb;
	ro.blob_kb = rec->o.blob_kb;
	if (rec->o.clock && ring_clock(rec->o.clock, &ro.clock) < 0)
		return shmcap_say(CMD, -EINVAL, "--clock: '%s' is not x86-tsc, mono or boot", rec->o.clock);
	/* Off-CPU time is read as durations: a clock in nanoseconds, for every reader. */
	if (!rec->o.clock && rec->o.offcpu)
		ro.clock = TB_CLOCK_MONO;
	if (rec->o.group && resolve_group(rec->o.group, &so.group) < 0) {
		rec->fail_exit = CLI_EXIT_USAGE;
		return shmcap_say(CMD, -ENOENT, "--group: no group '%s'", rec->o.group);
	}
	so.has_group = rec->o.group != NULL;
	rc = tb_shm_open(&so, &rec->shm);
	if (rc < 0)
		return shmcap_say(CMD, rc, "cannot make the shared memory: %s", tb_shm_error());
	/* our own view is a reader's: the header private and checked, like any consumer's */
	struct tb_shm *reader;
	rc = tb_shm_attach(tb_shm_path(rec->shm), TB_SHM_READER, &reader);
	if (rc < 0)
		return shmcap_say(CMD, rc, "cannot attach to %s", tb_shm_error());
	rec->ring = tb_shm_ring(reader);
	rec->shm_reader = reader;
	shmcap_desc_dir(tb_shm_path(rec->shm), rec->desc, sizeof(rec->desc));
	if (mkdir(rec->desc, 0700) < 0 && errno != EEXIST)
		return shmcap_say(CMD, -errno, "cannot create %s: %s", rec->desc, strerror(errno));
	if ((rc = shmcap_tmpdir(CMD, 0, rec->tmp, sizeof(rec->tmp))) < 0)
		return shmcap_say(CMD, rc, "cannot create a temporary directory: %s", strerror(-rc));
	snprintf(rec->cap, sizeof(rec->cap), "%s/capture", rec->tmp);
	if ((rc = make_dirs(rec->cap)) < 0)
		return shmcap_say(CMD, rc, "cannot create %s: %s", rec->cap, strerror(-rc));
	ncpus = tb_ring_ncpus(rec->ring);
	rec->raw = malloc(ncpus * sizeof(int));
	rec->packers = calloc(ncpus, sizeof(*rec->packers));
	rec->page = malloc(tb_ring_subbuf_size(rec->ring));
	if (!rec->raw || !rec->packers || !rec->page)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s/cpu%u.raw", rec->cap, cpu);
		rec->raw[cpu] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (rec->raw[cpu] < 0)
			return shmcap_say(CMD, -errno, "cannot create %s: %s", path, strerror(errno));
		if (packer_init(&rec->packers[cpu], rec->raw[cpu], tb_ring_subbuf_size(rec->ring)) < 0)
			return -ENOMEM;
	}
	if (tb_ring_blob_size(rec->ring)) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s/%s", rec->cap, TB_BLOB_STORE_FILE);
		rec->blobs_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (rec->blobs_fd < 0)
			return shmcap_say(CMD, -errno, "cannot create %s: %s", path, strerror(errno));
	}
	fprintf(stderr, "tracebuf record: session %s (%s, %zu KiB per CPU, %u CPUs)\n", tb_shm_path(rec->shm),
		rec->o.flight ? "flight recorder" : "drained", ro.size_kb, ncpus);
	return 0;
}

static void session_close(struct recorder *rec)
{
	if (rec->raw)
		for (unsigned cpu = 0; rec->ring && cpu < tb_ring_ncpus(rec->ring); cpu++)
			if (rec->raw[cpu] >= 0)
				close(rec->raw[cpu]);
	free(rec->raw);
	for (unsigned cpu = 0; rec->packers && cpu < tb_ring_ncpus(rec->ring); cpu++)
		packer_free(&rec->packers[cpu]);
	free(rec->packers);
	thread_names_free(&rec->names);
	if (rec->blobs_fd >= 0)
		close(rec->blobs_fd);
	free(rec->page);
	tb_shm_close(rec->shm_reader);
	/* a memfd session ends with us; a named one stays for snapshot and recover */
	if (rec->shm && !rec->o.shm_path)
		shmcap_rmtree(rec->desc);
	tb_shm_close(rec->shm);
	shmcap_rmtree(rec->tmp);
	free(rec->o.events);
	free(rec->o.kernel_events);
	free(rec->o.uprobes);
}

/* -------------------------------------------------- the kernel source */

static bool kernel_wanted(const struct options *o)
{
	return o->kernel_events || o->nuprobes || o->offcpu;
}

/*
 * The kernel's instance on the ring's clock, following CMD (held before its
 * exec) unless -a.  Without tracefs or root, CMD is recorded alone (said);
 * any other failure - an event or function that is not there, a clock the
 * kernel lacks - is the user's to fix: -errno, said, nothing left behind.
 */
static int kernel_start(struct recorder *rec)
{
	struct kernel_session_opts ko = {
	    .events = rec->o.kernel_events,
	    .uprobes = rec->o.uprobes,
	    .nuprobes = rec->o.nuprobes,
	    .program = rec->o.command[0],
	    .offcpu = rec->o.offcpu,
	    .clock = tb_clock_name(tb_ring_clock(rec->ring)),
	    .buffer_kb = rec->o.kernel_kb,
	    .dir = rec->kernel_cap,
	    .who = "tracebuf record",
	    .follow_pid = rec->o.all_tasks ? 0 : rec->child,
	};
	int rc;

	snprintf(rec->kernel_cap, sizeof(rec->kernel_cap), "%s/kernel", rec->tmp);
	rc = kernel_session_start(&ko, &rec->kernel);
	if (rc < 0) {
		rec->kernel = NULL;
		rec->kernel_cap[0] = '\0';
		if (rc == -ENOENT) /* --kernel naming no event of this kernel (said) */
			rec->fail_exit = CLI_EXIT_USAGE;
		if (rc != -ENODEV && rc != -EACCES && rc != -EPERM)
			return rc;
		shmcap_say(CMD, 0, "recording %s without the kernel", rec->o.command[0]);
		return 0;
	}
	rec->first_id = kernel_session_first_free_id(rec->kernel);
	return 0;
}

/* Tracing off, the rest of the kernel's pages and its descriptions saved. */
static int kernel_stop(struct recorder *rec)
{
	struct save_result r;
	int rc;

	if (!rec->kernel)
		return 0;
	rc = kernel_session_stop(rec->kernel, &r);
	rec->kernel = NULL;
	if (rc < 0) {
		rec->kernel_cap[0] = '\0';
		return shmcap_say(CMD, 0, "the kernel's capture is lost; writing %s alone", rec->o.command[0]);
	}
	/* the tasks beside the program's switches, named as the kernel's records name them */
	if ((rc = kernel_names_complete(rec->kernel_cap)) < 0)
		shmcap_say(CMD, 0, "cannot name the kernel's tasks: %s", strerror(-rc));
	fprintf(stderr, "tracebuf record: kernel: %llu sub-buffers (%llu KiB)", (unsigned long long)r.subbufs,
		(unsigned long long)(r.bytes >> 10));
	if (r.overrun || r.dropped)
		fprintf(stderr, "; lost %llu (overwritten %llu, buffer full %llu: a larger --kernel-kb keeps them)",
			(unsigned long long)(r.overrun + r.dropped), (unsigned long long)r.overrun,
			(unsigned long long)r.dropped);
	fputc('\n', stderr);
	return 0;
}

/* The program's capture as the top buffer, the kernel's as the instance "kernel". */
static int write_both(const struct recorder *rec)
{
	struct tb_tracedat_input in[] = {
	    {.dir = rec->cap, .name = ""},
	    {.dir = rec->kernel_cap, .name = "kernel"},
	};
	struct tb_tracedat_write_opts o;
	int rc;

	shmcap_write_opts(rec->ring, &o); /* the kernel's x86-tsc counts the same cycles */
	rc = tb_tracedat_write_captures(in, 2, rec->o.out, &o);

	if (rc < 0)
		shmcap_say(CMD, rc, "cannot write %s: %s", rec->o.out, strerror(-rc));
	return rc;
}

/* ------------------------------------------------------------ the child */

/* What CMD waits for before its exec. */
struct go_word {
	int run;	   /* 0: end without running */
	unsigned first_id; /* TRACEBUF_FIRST_ID; 0: not set */
};

/* In the child: wait for the go, then become CMD with the session in its environment. */
static _Noreturn void child_exec(const struct recorder *rec, int go_fd, int failed_fd)
{
	const char *base = strrchr(rec->o.command[0], '/');
	struct go_word go = {0};
	ssize_t r;
	int e;

	/*
	 * Already the name the exec will give (its file's, cut to 15 bytes): the kernel may
	 * record this task before the exec, and every reader then names it one way, not
	 * "tracebuf" before and CMD after (trace-cmd learns names from sched_switch).
	 */
	prctl(PR_SET_NAME, base ? base + 1 : rec->o.command[0]);
	do
		r = read(go_fd, &go, sizeof(go));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(go) || !go.run)
		_exit(127);
	setenv("TRACEBUF_SHM", tb_shm_path(rec->shm), 1);
	setenv("TRACEBUF_SHM_FORMATS", rec->desc, 1);
	setenv("TRACEBUF_EVENTS", rec->o.events ? rec->o.events : "*", 1);
	if (go.first_id) {
		char id[16];
		snprintf(id, sizeof(id), "%u", go.first_id);
		setenv("TRACEBUF_FIRST_ID", id, 1);
	}
	execvp(rec->o.command[0], rec->o.command);
	e = errno;
	(void)!write(failed_fd, &e, sizeof(e));
	_exit(127);
}

/*
 * Fork CMD, held before its exec until child_release(): the kernel's
 * instance can follow its pid before it runs an instruction of its own,
 * and learn the first event ID it leaves free for CMD's events.
 */
static int child_fork(struct recorder *rec)
{
	int go[2], failed[2], e;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return shmcap_say(CMD, -errno, "pipe: %s", strerror(errno));
	if (pipe2(failed, O_CLOEXEC) < 0) {
		e = errno;
		close(go[0]), close(go[1]);
		return shmcap_say(CMD, -e, "pipe: %s", strerror(e));
	}
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(go[0]), close(go[1]), close(failed[0]), close(failed[1]);
		return shmcap_say(CMD, -e, "fork: %s", strerror(e));
	}
	if (pid == 0)
		child_exec(rec, go[0], failed[1]); /* never returns */
	close(go[0]);
	close(failed[1]);
	rec->go_fd = go[1];
	rec->failed_fd = failed[0];
	rec->child = pid;
	child_pid = pid;
	return 0;
}

/*
 * Let CMD exec (run) or end unrun.  An exec that fails is told back through
 * the close-on-exec pipe, so that record stops there (exit 2) rather than
 * write an empty trace.dat.
 */
static int child_release(struct recorder *rec, bool run)
{
	struct go_word go = {.run = run, .first_id = rec->first_id};
	int e = 0;
	ssize_t r;

	(void)!write(rec->go_fd, &go, sizeof(go));
	close(rec->go_fd);
	rec->go_fd = -1;
	do
		r = read(rec->failed_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(rec->failed_fd);
	rec->failed_fd = -1;
	if (!run || r == (ssize_t)sizeof(e)) {
		waitpid(rec->child, NULL, 0);
		rec->child_done = true;
		child_pid = 0;
	}
	if (r == (ssize_t)sizeof(e)) {
		rec->fail_exit = CLI_EXIT_INPUT; /* the table's "a program that cannot run" */
		return shmcap_say(CMD, -e, "cannot run %s: %s", rec->o.command[0], strerror(e));
	}
	return 0;
}

/* Whether CMD has ended (reaped); block says whether to wait for it. */
static bool child_ended(struct recorder *rec, bool block)
{
	pid_t got;

	if (rec->child_done)
		return true;
	got = waitpid(rec->child, &rec->child_status, block ? 0 : WNOHANG);
	if (got == rec->child) {
		rec->child_done = true;
		child_pid = 0;
	}
	return rec->child_done;
}

/* ---------------------------------------------------- the shm source */

/* One page taken by the consuming reader, under the guard against a --shm file shrunk by another process. */
struct take {
	struct recorder *rec;
	unsigned cpu;
	struct tb_read_info info;
	long n;
	int blobs_rc; /* saving the page's blobs: 0 or -errno */
};

/*
 * The page, and at once the blobs it refers to: taking the page hands its
 * references over, so their space may be reused from then on.  (A SIGBUS
 * from a shrunk --shm file abandons this at the faulting read: then the
 * blob copy's buffer is leaked, and the recording ends.)
 */
static int take_page(void *arg)
{
	struct take *t = arg;
	struct recorder *rec = t->rec;

	t->n = tb_read_page_info(rec->ring, t->cpu, rec->page, tb_ring_subbuf_size(rec->ring), &t->info);
	if (t->n > 0 && rec->blobs_fd >= 0)
		t->blobs_rc = tb_blob_save_page(rec->ring, rec->page, (size_t)t->n, rec->blobs_fd, &rec->blobs);
	return 0;
}

static void give_name(void *arg, int32_t tid, const char *name)
{
	struct recorder *rec = arg;

	if (thread_names_give(&rec->names, tid, name) < 0)
		rec->names_failed = true;
}

/* Every page the consuming reader can take now: how many, or -errno. */
static long drain_ring(struct recorder *rec)
{
	long total = 0;

	for (unsigned cpu = 0; cpu < tb_ring_ncpus(rec->ring); cpu++) {
		struct take t = {.rec = rec, .cpu = cpu};
		int rc;

		while ((rc = tb_shm_guard(rec->shm_reader, take_page, &t)) == 0 && t.n > 0) {
			rc = packer_add(&rec->packers[cpu], rec->page, t.info.lost, &rec->names);
			if (rc == -EINVAL)
				return shmcap_say(CMD, rc, "CPU %u: a page taken from the ring is damaged", cpu);
			if (rc < 0 || (rc = t.blobs_rc) < 0)
				return shmcap_say(CMD, rc, "cannot write the pages: %s", strerror(-rc));
			rec->events += t.info.events;
			rec->lost += t.info.lost;
			total++;
		}
		if (rc < 0)
			return shmcap_say(CMD, rc, "%s", tb_shm_error());
		if (t.n < 0)
			return shmcap_say(CMD, (int)t.n, "CPU %u: the ring is damaged (%s)", cpu, strerror((int)-t.n));
	}
	/* after the pages: a thread still running was named from /proc, one that ended is named here */
	if (total)
		tb_ring_thread_names(rec->ring, give_name, rec);
	return rec->names_failed ? shmcap_say(CMD, -ENOMEM, "out of memory naming the threads") : total;
}

/* The pages still being filled written: every CPU's last one. */
static int drain_end(struct recorder *rec)
{
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(rec->ring); cpu++) {
		int rc = packer_flush(&rec->packers[cpu]);
		if (rc < 0)
			return shmcap_say(CMD, rc, "cannot write the pages: %s", strerror(-rc));
		rec->pages += rec->packers[cpu].pages;
	}
	return 0;
}

/* Flight recorder: what the ring holds at the end, pages copied without consuming. */
static int window_ring(struct recorder *rec)
{
	struct tb_shm_window w;
	int rc = shmcap_window(CMD, rec->cap, rec->ring, &w, &rec->blobs, NULL);

	if (rc == 0) {
		rec->pages = w.pages;
		rec->events = w.events;
		rec->lost = w.lost_before + w.lost_inside;
		shmcap_say_damage(CMD, tb_shm_path(rec->shm), &w);
	}
	return rc;
}

/* ------------------------------------------------------------ running */

static void idle(void)
{
	struct timespec ts = {0, IDLE_NS};

	nanosleep(&ts, NULL);
}

/*
 * The -e items against CMD's own events, as soon as CMD (its pid: the exec
 * keeps it) has described them, before main: an item that names none is
 * a mistake, and CMD is stopped at once.  (When CMD is a launcher - a shell
 * - that describes nothing, finish() checks against every process at the
 * end instead.)  0, or -ENOENT with CMD stopped.
 */
static int check_events_early(struct recorder *rec)
{
	int rc;

	if (!rec->o.events || rec->events_checked)
		return 0;
	rc = record_check_events(CMD, rec->desc, rec->o.events, rec->child);
	rec->events_checked = rc <= 0;
	if (rc == -ENOENT) /* an -e naming no event of the program: a usage error */
		rec->fail_exit = CLI_EXIT_USAGE;
	if (rc < 0 && !child_ended(rec, false)) {
		kill(rec->child, SIGTERM);
		child_ended(rec, true);
	}
	return rc < 0 ? rc : 0;
}

/* The live line: events drained and their rate, and each CPU's losses so far (the ring's own stats). */
static void draw_live(struct recorder *rec)
{
	char lost[256] = "lost:";
	size_t len = strlen(lost);
	struct tb_cpu_stats st;

	if (!progress_line_due(&rec->live))
		return;
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(rec->ring) && len < sizeof(lost); cpu++)
		if (tb_stats_read(rec->ring, cpu, &st) == 0)
			len += (size_t)snprintf(lost + len, sizeof(lost) - len, " cpu%u %llu", cpu,
						(unsigned long long)(st.overrun + st.dropped + st.too_big + st.nested +
								     st.busy + st.blob_full));
	progress_line_draw(&rec->live, rec->events, lost, false);
}

/* Drain while CMD runs; stop when it ends or a signal stops us. */
static int run(struct recorder *rec)
{
	long n = 0;
	int rc;

	progress_line_init(&rec->live, rec->o.progress && !rec->o.flight, PROGRESS_EVENTS, "tracebuf record",
			   rec->o.out, 0);
	while (!stop_signal && !child_ended(rec, rec->o.flight)) {
		if (rec->o.flight)
			continue; /* the wait returned early: a signal */
		if ((rc = check_events_early(rec)) < 0)
			return rc;
		if ((n = drain_ring(rec)) < 0)
			return (int)n;
		draw_live(rec);
		if (n == 0)
			idle();
	}
	progress_line_clear(&rec->live);
	/* a signal: CMD has it too; give it a moment to end, not forever */
	for (int i = 0; i < 1000 && !child_ended(rec, false); i++)
		idle();
	if (rec->o.flight)
		return window_ring(rec);
	return drain_ring(rec) < 0 || drain_end(rec) < 0 ? -EIO : 0;
}

static void print_summary(const struct recorder *rec)
{
	struct tb_cpu_stats st;
	uint64_t overrun = 0, dropped = 0, refused = 0;

	for (unsigned cpu = 0; cpu < tb_ring_ncpus(rec->ring); cpu++)
		if (tb_stats_read(rec->ring, cpu, &st) == 0) {
			overrun += st.overrun;
			dropped += st.dropped;
			refused += st.too_big + st.nested + st.busy + st.blob_full;
		}
	fprintf(stderr, "tracebuf record: %llu events in %llu pages; lost %llu (overwritten %llu, ring full %llu, "
			"refused %llu)\n",
		(unsigned long long)rec->events, (unsigned long long)rec->pages,
		(unsigned long long)(rec->lost > overrun ? rec->lost : overrun + dropped + refused),
		(unsigned long long)overrun, (unsigned long long)dropped, (unsigned long long)refused);
	shmcap_say_blobs(CMD, &rec->blobs);
	if (rec->child_done && WIFEXITED(rec->child_status))
		fprintf(stderr, "tracebuf record: %s exited with status %d\n", rec->o.command[0],
			WEXITSTATUS(rec->child_status));
	else if (rec->child_done && WIFSIGNALED(rec->child_status))
		fprintf(stderr, "tracebuf record: %s was killed by signal %d\n", rec->o.command[0],
			WTERMSIG(rec->child_status));
	else
		fprintf(stderr, "tracebuf record: %s is still running (stopped by signal %d)\n", rec->o.command[0],
			(int)stop_signal);
}

/* The capture directory: descriptions, stats, pages (drained already), then the trace.dat. */
static int finish(struct recorder *rec)
{
	int found = shmcap_merge_desc(CMD, rec->desc, rec->cap, rec->ring), rc;

	if (found < 0)
		return shmcap_say(CMD, found, "cannot write the descriptions: %s", strerror(-found));
	if (found == 0)
		shmcap_say(CMD, 0, "%s described no events (is it linked with libtracebuf?)", rec->o.command[0]);
	if (found > 0 && rec->events == 0 && !rec->o.flight)
		shmcap_say(CMD, 0,
			   "%s described its events but wrote none to the session: none was enabled (see -e), "
			   "none fired, or it wrote them with tb_write, tb_printf or tb_marker_write to a ring of "
			   "its own (only its tracepoints are copied to the session's ring)",
			   rec->o.command[0]);
	/* not checked while it ran: against every process's events now; the file is still written */
	if (found > 0 && rec->o.events && !rec->events_checked &&
	    record_check_events(CMD, rec->desc, rec->o.events, 0) == -ENOENT)
		rec->events_wrong = true;
	rc = shmcap_meta(CMD, rec->cap, rec->ring);
	if (rc < 0)
		return shmcap_say(CMD, rc, "cannot write the stats: %s", strerror(-rc));
	rc = thread_names_save(&rec->names, rec->cap);
	if (rc < 0)
		return shmcap_say(CMD, rc, "cannot write the thread names: %s", strerror(-rc));
	rc = rec->kernel_cap[0] ? write_both(rec) : shmcap_tracedat(CMD, rec->cap, rec->o.out, rec->ring);
	if (rc < 0)
		rec->fail_exit = CLI_EXIT_OUTPUT;
	if (rc == 0)
		fprintf(stderr, "tracebuf record: wrote %s\n", rec->o.out);
	return rc;
}

/*
 * What record exits with once the file is written: the program's own
 * status, as `time` and `perf record` give it (scripts and CI keep
 * working when wrapped), 128 + N when a signal N ended it (the shell's
 * convention), or 128 + the signal that stopped us while it still ran.
 * Losses are said on stderr, never folded into the status: a status of 1
 * would be the program's or ours, and nobody could tell which.
 */
static int program_status(const struct recorder *rec)
{
	if (rec->child_done && WIFEXITED(rec->child_status))
		return WEXITSTATUS(rec->child_status);
	if (rec->child_done && WIFSIGNALED(rec->child_status))
		return 128 + WTERMSIG(rec->child_status);
	return 128 + (int)stop_signal;
}

static int run_record(int argc, char **argv)
{
	struct recorder rec = {.child = -1, .blobs_fd = -1, .go_fd = -1, .failed_fd = -1};
	struct cli_args a;
	int rc = cli_parse(&cli_record, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	rc = take_options(&a, &rec.o);
	if (rc) {
		cli_free(&a);
		free(rec.o.events), free(rec.o.kernel_events), free(rec.o.uprobes);
		return rc;
	}
	install_handlers();
	rc = session_open(&rec);
	if (rc == 0)
		rc = child_fork(&rec);
	if (rc == 0 && kernel_wanted(&rec.o) && (rc = kernel_start(&rec)) < 0)
		child_release(&rec, false); /* CMD never ran */
	if (rc == 0)
		rc = child_release(&rec, true);
	if (rc == 0)
		rc = run(&rec);
	if (kernel_stop(&rec) < 0 && rc == 0)
		rc = -EIO;
	if (rc == 0) {
		rc = finish(&rec);
		print_summary(&rec);
	}
	session_close(&rec);
	cli_free(&a); /* rec.o.command pointed into it */
	if (rec.events_wrong)
		return CLI_EXIT_USAGE;
	if (rc < 0) /* ours, by the table of docs/cli.md: never the program's status */
		return rec.fail_exit ? rec.fail_exit : cli_exit_for(-rc);
	return program_status(&rec);
}
