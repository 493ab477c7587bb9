// SPDX-License-Identifier: MIT
/*
 * tracebuf capture [-e EVENTS]... [-b KB] [--clock C] [--no-hash-ptr] [--offcpu]
 *                  [--with-trace] [--kallsyms all|used|none] -o DIR -- CMD [ARGS...]
 * tracebuf capture [--with-trace] [--kallsyms all|used|none] -o DIR INSTANCE
 *
 * The first form traces CMD in a private tracefs instance
 * (instances/tracebuf-PID): it creates the instance, sizes it, sets its
 * clock, enables the events, runs CMD with tracing on, then saves the
 * instance as a capture directory (capture_save.c) and removes it - also
 * when CMD fails or a signal stops the capture.  A first SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT stops CMD (it is passed on, unless CMD got it from the
 * terminal already), a second sends CMD SIGTERM, a third SIGKILL; the
 * capture is saved either way.  The top-level buffer is never touched.
 *
 * The second form saves an instance someone else set up, with its tracing
 * switched off while it is saved and then restored; it is not removed.
 *
 * CMD runs with TRACEBUF_INSTANCE set to the instance's directory, so it
 * can write markers (trace_marker, trace_marker_raw) into the capture.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib_internal.h"
#include "cmds.h"
#include "event_select.h"

/* What --offcpu enables besides -e: the switches and the wakeups that split their time. */
#define OFFCPU_EVENTS "sched:sched_switch,sched:sched_wakeup"

struct options {
	const char *events; /* comma-joined -e items; NULL: DEFAULT_EVENTS */
	char *events_buf;
	const char *buffer_kb;
	const char *clock;
	bool no_hash_ptr;
	bool with_trace;
	bool offcpu; /* sched_switch + sched_wakeup, a kernel stack at every switch */
	enum kallsyms_mode kallsyms;
	const char *out;
	char **command;	      /* after "--" */
	const char *instance; /* someone else's */
};

/* ----------------------------------------------------------- signals */

/* The instance to remove however we leave (set only while it exists). */
static char own_instance[PATH_MAX];
static volatile sig_atomic_t stop_signal, stop_count;
static volatile pid_t child_pid;

static void remove_own_instance(void)
{
	if (own_instance[0])
		rmdir(own_instance);
}

/*
 * Stop CMD, and remember that the capture was interrupted.  A signal from
 * the terminal (SI_KERNEL) reached CMD already: it is in our process group.
 */
static void on_stop(int sig, siginfo_t *si, void *unused)
{
	pid_t child = child_pid;

	(void)unused;
	stop_signal = sig;
	stop_count++;
	if (child <= 0)
		return;
	if (stop_count == 1 && si->si_code != SI_KERNEL)
		kill(child, sig);
	else if (stop_count == 2)
		kill(child, SIGTERM);
	else if (stop_count >= 3)
		kill(child, SIGKILL);
}

static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction before_us[sizeof(crashes) / sizeof(crashes[0])];

/*
 * A crash of our own: the instance must not outlive us.  Then the handler
 * that was there before (the default, or a sanitizer's) gets the signal
 * again: a faulting instruction faults again when we return; a signal some
 * process sent (kill, abort) is raised again.
 */
static void on_crash(int sig, siginfo_t *si, void *unused)
{
	(void)unused;
	remove_own_instance();
	for (size_t i = 0; i < sizeof(crashes) / sizeof(crashes[0]); i++)
		if (crashes[i] == sig)
			sigaction(sig, &before_us[i], NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void install_handlers(void)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa, crash;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: a wait returns EINTR */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
	memset(&crash, 0, sizeof(crash));
	crash.sa_sigaction = on_crash;
	crash.sa_flags = SA_SIGINFO;
	sigemptyset(&crash.sa_mask);
	for (size_t i = 0; i < sizeof(crashes) / sizeof(crashes[0]); i++)
		sigaction(crashes[i], &crash, &before_us[i]);
	atexit(remove_own_instance);
}

/* ------------------------------------------------------------ options */

/* Join every -e into one comma-separated spec. */
static int add_events(struct options *o, const char *spec)
{
	int rc = join_events(&o->events_buf, spec);

	o->events = o->events_buf;
	return rc;
}

static const char *const kallsyms_modes[] = {[KALLSYMS_ALL] = "all", [KALLSYMS_USED] = "used",
					     [KALLSYMS_NONE] = "none", NULL};

enum { O_EVENTS, O_SIZE, O_CLOCK, O_NO_HASH_PTR, O_OFFCPU, O_WITH_TRACE, O_KALLSYMS, O_OUTPUT, O_N };
static const struct cli_opt opts[] = {
    [O_EVENTS] = {"event", 'e', CLI_LIST, "EVENTS",
		  "SYSTEM, SYSTEM:EVENT or EVENT, globs allowed, comma-separated, repeatable (default: " DEFAULT_EVENTS ")",
		  "-e", .old = "events"},
    [O_SIZE] = {"buffer-size", 'b', CLI_SIZE, "KB", "buffer_size_kb per CPU (default: the instance's default)", "-b",
		.min = 1, .max = 1 << 30, .old = "buffer-kb"},
    [O_CLOCK] = {"clock", 'C', CLI_STRING, "CLOCK", "trace_clock (default: local)", "-C"},
    [O_NO_HASH_PTR] = {"no-hash-ptr", 0, CLI_FLAG, NULL, "print %p values as they are, not hashed (options/hash-ptr 0)"},
    [O_OFFCPU] = {"offcpu", 0, CLI_FLAG, NULL,
		  "what `tracebuf offcpu` needs: sched_switch, sched_wakeup and the stacktrace trigger on sched_switch"},
    [O_WITH_TRACE] = {"with-trace", 0, CLI_FLAG, NULL, "also save trace.txt, the kernel's own text of the capture"},
    [O_KALLSYMS] = {"kallsyms", 0, CLI_ENUM, "MODE",
		    "all: a copy of /proc/kallsyms (default); used: only the symbols the data refers to; none",
		    .choices = kallsyms_modes},
    [O_OUTPUT] = {"output", 'o', CLI_STRING, "DIR", "the capture directory (created; must be empty; required)", "-o"},
};

static int run(int argc, char **argv);

const struct cli_command cli_capture = {
    "capture", "trace a command in a private tracefs instance and save it",
    "[OPTIONS] -o DIR -- CMD [ARGS...]\n[--with-trace] [--kallsyms MODE] -o DIR INSTANCE",
    "Trace CMD in a private tracefs instance and save what `tracebuf report` needs into DIR; or save the "
    "instance INSTANCE (a name under instances/ or a path) that someone else set up.  Needs root (tracefs).",
    opts, O_N, .run = run, .operands_end_options = true,
};

/* 0, or the exit status of a usage error. */
static int take_options(struct cli_args *a, struct options *o)
{
	static char kb[32];
	bool setup = false;

	for (int i = 0; i < a->v[O_EVENTS].given; i++)
		if (add_events(o, a->v[O_EVENTS].list[i]) < 0)
			return CLI_EXIT_SYSTEM;
	if (cli_given(a, O_SIZE)) {
		snprintf(kb, sizeof(kb), "%lld", cli_num(a, O_SIZE));
		o->buffer_kb = kb;
	}
	o->clock = cli_str(a, O_CLOCK);
	o->no_hash_ptr = cli_given(a, O_NO_HASH_PTR);
	o->with_trace = cli_given(a, O_WITH_TRACE);
	o->offcpu = cli_given(a, O_OFFCPU);
	if (o->offcpu && add_events(o, OFFCPU_EVENTS) < 0)
		return CLI_EXIT_SYSTEM;
	if (cli_given(a, O_KALLSYMS))
		o->kallsyms = (enum kallsyms_mode)cli_num(a, O_KALLSYMS);
	o->out = cli_str(a, O_OUTPUT);
	for (int k = O_EVENTS; k <= O_OFFCPU; k++)
		setup |= cli_given(a, k);
	if (a->dashdash && a->noperands)
		o->command = a->operands;
	else if (a->noperands == 1)
		o->instance = a->operands[0];
	if (!o->out)
		return cli_usage_error(&cli_capture, "the output is missing: -o DIR");
	if (!o->command && !o->instance)
		return cli_usage_error(&cli_capture, "a command after -- or one INSTANCE is needed");
	if (o->instance && setup)
		return cli_usage_error(&cli_capture,
				       "-e, -b, --clock, --no-hash-ptr and --offcpu set up the instance tracebuf "
				       "creates; %s is saved as it is",
				       o->instance);
	return 0;
}

/* ------------------------------------------------------- the instance */

static const char *need_tracefs(void)
{
	const char *root = tracefs_mount();

	if (!root)
		capture_say(1, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	return root;
}

/* Write one setting of the instance, or say which and why it failed. */
static int set(const char *inst, const char *file, const char *value)
{
	int rc = tracefs_write(inst, file, value);

	if (rc < 0)
		capture_say(1, "%s/%s: cannot write '%s': %s", inst, file, value, strerror(-rc));
	return rc;
}

/* Clock, size, hash-ptr and events of a new instance, tracing off: 0, or the exit status (said). */
static int set_up(const char *inst, const struct options *o)
{
	char err[512];
	int n;

	if (set(inst, "tracing_on", "0") < 0)
		return CLI_EXIT_SYSTEM;
	if (o->clock && tracefs_write(inst, "trace_clock", o->clock) < 0) {
		char *clocks = tracefs_read_line(inst, "trace_clock");
		capture_say(1, "this kernel has no trace clock '%s' (it has: %s)", o->clock,
			    clocks ? clocks : "?");
		free(clocks);
		return CLI_EXIT_USAGE;
	}
	if (o->buffer_kb && set(inst, "buffer_size_kb", o->buffer_kb) < 0)
		return CLI_EXIT_SYSTEM;
	if (o->no_hash_ptr && tracefs_write(inst, "options/hash-ptr", "0") < 0)
		fprintf(stderr, "tracebuf capture: warning: this kernel has no hash-ptr option; "
				"%%p values print hashed\n");
	n = enable_events(inst, o->events ? o->events : DEFAULT_EVENTS, err, sizeof(err));
	if (n < 0) {
		capture_say(1, "%s", err);
		return CLI_EXIT_USAGE; /* an event this kernel lacks: named, with the closest */
	}
	/* A kernel_stack record right after each sched_switch, in the task switched out. */
	if (o->offcpu && set(inst, "events/sched/sched_switch/trigger", "stacktrace") < 0)
		return CLI_EXIT_SYSTEM;
	return 0;
}

/* rmdir, retrying a little while some reader still holds one of its files. */
static void remove_instance(const char *inst)
{
	for (int i = 0; i < 50 && rmdir(inst) < 0; i++) {
		if (errno != EBUSY) {
			capture_say(1, "cannot remove %s: %s", inst, strerror(errno));
			break;
		}
		if (i == 49)
			capture_say(1, "cannot remove %s: a file of it is still open; rmdir it later", inst);
		usleep(20000);
	}
	own_instance[0] = '\0';
}

/* ------------------------------------------------------------ command */

/*
 * Fork CMD, held until tracing is on; a pipe closed by exec tells whether
 * it started.  The child's pid, or -1 with the reason said.
 */
static pid_t start_command(char **command, const char *inst, struct timespec *started)
{
	int go[2], failed[2], e = 0;
	pid_t pid;
	ssize_t r;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(failed, O_CLOEXEC) < 0)
		return capture_say(1, "pipe: %s", strerror(errno)), -1;
	pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		close(failed[0]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		/* So CMD can write markers into the capture: $TRACEBUF_INSTANCE/trace_marker. */
		setenv("TRACEBUF_INSTANCE", inst, 1);
		execvp(command[0], command);
		e = errno;
		(void)!write(failed[1], &e, sizeof(e));
		_exit(127);
	}
	close(go[0]);
	close(failed[1]);
	if (pid < 0 || set(inst, "tracing_on", "1") < 0) {
		if (pid < 0)
			capture_say(1, "fork: %s", strerror(errno));
		else
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		close(go[1]), close(failed[0]);
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, started);
	child_pid = pid;
	if (stop_count) /* a signal came before the handler knew the child */
		kill(pid, SIGTERM);
	close(go[1]); /* EOF: go */
	do
		r = read(failed[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(failed[0]);
	if (r == (ssize_t)sizeof(e)) {
		waitpid(pid, NULL, 0);
		child_pid = 0;
		capture_say(1, "cannot run %s: %s", command[0], strerror(e));
		return -1;
	}
	return pid;
}

/* Wait for CMD; its result as text for meta.txt and the summary. */
static void wait_command(pid_t pid, char *result, size_t size)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(result, size, "unknown (%s)", strerror(errno));
			return;
		}
	child_pid = 0;
	if (WIFEXITED(status))
		snprintf(result, size, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(result, size, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
}

/* ----------------------------------------------------------- summary */

static void summarize(const char *out, const struct save_result *r)
{
	fprintf(stderr,
		"tracebuf capture: saved %s: %d CPUs, %llu sub-buffers (%llu KiB), %llu events, "
		"%u format files; kallsyms: %s\n",
		out, r->cpus, (unsigned long long)r->subbufs, (unsigned long long)(r->bytes >> 10),
		(unsigned long long)r->entries, r->formats, r->kallsyms_note ? r->kallsyms_note : "-");
	if (r->overrun)
		fprintf(stderr,
			"tracebuf capture: the buffer overflowed: %llu events were overwritten "
			"(a larger -b keeps them)\n",
			(unsigned long long)r->overrun);
	if (r->dropped)
		fprintf(stderr, "tracebuf capture: %llu events were dropped (buffer full, overwrite off)\n",
			(unsigned long long)r->dropped);
}

static int save(const char *root, const char *inst, const struct options *o, const char *result,
		const struct timespec *started, const struct timespec *stopped)
{
	struct save_request rq = {
	    .inst = inst,
	    .root = root,
	    .out = o->out,
	    .with_trace = o->with_trace,
	    .kallsyms = o->kallsyms,
	    .events = o->instance ? NULL
		      : o->events ? o->events
				  : DEFAULT_EVENTS,
	    .command = o->command,
	    .command_result = result,
	    .interrupted = stop_count > 0,
	    .started = *started,
	    .stopped = *stopped,
	};
	struct save_result res;

	if (capture_save(&rq, &res) < 0)
		return CLI_EXIT_OUTPUT; /* said */
	summarize(o->out, &res);
	return 0;
}

/* The first form: a private instance around CMD. */
static int capture_command(const struct options *o)
{
	const char *root = need_tracefs();
	struct timespec started = {0}, stopped = {0};
	char result[128] = "not run";
	pid_t pid;
	int rc;

	if (!root)
		return CLI_EXIT_SYSTEM;
	snprintf(own_instance, sizeof(own_instance), "%s/instances/tracebuf-%d", root, (int)getpid());
	if (mkdir(own_instance, 0755) < 0) {
		int e = errno;
		own_instance[0] = '\0';
		return capture_say(CLI_EXIT_SYSTEM, "cannot create the instance %s/instances/tracebuf-%d: %s%s", root,
				   (int)getpid(), strerror(e),
				   e == EACCES || e == EPERM ? " (needs root)" : "");
	}
	if ((rc = set_up(own_instance, o)) || stop_count) {
		remove_instance(own_instance);
		return stop_count ? 128 + stop_signal : rc;
	}
	pid = start_command(o->command, own_instance, &started);
	if (pid < 0) {
		remove_instance(own_instance);
		return CLI_EXIT_INPUT; /* CMD cannot run: said */
	}
	wait_command(pid, result, sizeof(result));
	tracefs_write(own_instance, "tracing_on", "0");
	clock_gettime(CLOCK_REALTIME, &stopped);
	if (stop_count)
		fprintf(stderr, "tracebuf capture: interrupted by %s; %s: %s; saving\n",
			strsignal(stop_signal), o->command[0], result);
	else if (strcmp(result, "exit status 0"))
		fprintf(stderr, "tracebuf capture: %s: %s\n", o->command[0], result);
	rc = save(root, own_instance, o, result, &started, &stopped);
	remove_instance(own_instance);
	return rc;
}

/* The second form: someone else's instance, saved with its tracing paused. */
static int capture_instance(const struct options *o)
{
	const char *root = need_tracefs();
	struct timespec none = {0}, stopped;
	char *inst = NULL, *real = NULL, *real_root = NULL, *per_cpu = NULL, *was_on = NULL;
	int rc = CLI_EXIT_INPUT; /* until saved: the instance is not one to save */

	if (!root)
		return CLI_EXIT_SYSTEM;
	if (strchr(o->instance, '/'))
		inst = strdup(o->instance);
	else if (asprintf(&inst, "%s/instances/%s", root, o->instance) < 0)
		inst = NULL;
	real = inst ? realpath(inst, NULL) : NULL;
	real_root = realpath(root, NULL);
	per_cpu = real ? path_of(real, "per_cpu") : NULL;
	if (!real || !per_cpu || !is_directory(per_cpu))
		capture_say(1, "%s is not a tracefs instance (no per_cpu directory)",
			    inst ? inst : o->instance);
	else if (real_root && !strcmp(real, real_root))
		capture_say(1, "%s is the top-level buffer, which tracebuf never consumes; save an instance",
			    real);
	else if (!(was_on = tracefs_read_line(real, "tracing_on")))
		capture_say(1, "%s/tracing_on: %s", real, strerror(errno));
	else if (set(real, "tracing_on", "0") == 0) {
		clock_gettime(CLOCK_REALTIME, &stopped);
		rc = save(root, real, o, NULL, &none, &stopped);
		set(real, "tracing_on", was_on[0] ? was_on : "0");
	}
	free(inst), free(real), free(real_root), free(per_cpu), free(was_on);
	return rc;
}

static int run(int argc, char **argv)
{
	struct options o = {.kallsyms = KALLSYMS_ALL};
	struct cli_args a;
	int rc = cli_parse(&cli_capture, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	rc = take_options(&a, &o);
	if (rc == 0) {
		install_handlers();
		rc = o.command ? capture_command(&o) : capture_instance(&o);
	}
	cli_free(&a);
	free(o.events_buf);
	return rc;
}
