// SPDX-License-Identifier: MIT
/*
 * tracebuf hist -e SYSTEM:EVENT 'keys=...[:vals=...][:sort=...][:size=N]' SOURCE
 *
 * The kernel's hist trigger, computed from a recording: SOURCE is a
 * trace.dat, a capture directory or a live tracefs instance (consumed), and
 * the output is what the event's `hist` file would show had the trigger
 * been set while the events were recorded (tracebuf/hist.h says what is
 * supported).  --live refreshes a live instance's hist every second.
 * --session: SOURCE is a running `tracebuf record` session (the path it
 * printed), read without consuming, like snapshot (hist_session.h).
 * Exit status: cli_opts.h's table; 1 is some input damaged or none of the
 * event in the trace (said on stderr), 2 includes a spec that does not
 * parse.
 */
#include <errno.h>
#include <dirent.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_progress.h"
#include "cmds.h"
#include "event_hint.h"
#include "hist_session.h"
#include "lib_internal.h"
#include "shm_capture.h"
#include "tracebuf/capture.h"
#include "tracebuf/hist.h"
#include "tracebuf/input.h"
#include "tracebuf/tracedat.h"

#define MAX_EVENT_ID 65535

struct hist_args {
	const char *event, *spec, *input, *formats;
	const char *attach; /* --attach PID|SHMFILE: the hists attached in a running program */
	struct tb_capture_opts copts;
	bool live, session;
	long count;
	long long interval_ns; /* between two prints of --live */
	bool progress;	       /* the progress line (cli_progress.h), not with --live */
};

enum { O_EVENT, O_BUFFER, O_PREFIX, O_CLOCK, O_SESSION, O_FORMATS, O_LIVE, O_REFRESHES, O_INTERVAL, O_ATTACH, O_N };
static const struct cli_opt opts[] = {
    [O_EVENT] = {"event", 'e', CLI_STRING, "[SYSTEM:]EVENT", "the event (required)", "-e"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME",
		  "a trace.dat's buffer alone (default: every buffer, merged; \"\" is the top buffer)", "-B"},
    [O_PREFIX] = {"prefix", 0, CLI_STRING, "P", "a capture's raw files are PcpuN.raw"},
    [O_CLOCK] = {"clock", 'C', CLI_STRING, "CLOCK", "the trace clock, for a capture that does not say"},
    [O_SESSION] = {"session", 0, CLI_FLAG, NULL,
		   "SOURCE is a `tracebuf record` session (the path it printed): its ring is read, never consumed"},
    [O_FORMATS] = {"formats", 0, CLI_STRING, "DIR",
		   "with --session: where its processes described their events (default: as snapshot finds them)"},
    [O_LIVE] = {"live", 0, CLI_FLAG, NULL,
		"SOURCE is a live instance or a session: print its hist every --interval, as events come (Ctrl-C stops)"},
    [O_REFRESHES] = {"refreshes", 0, CLI_INT, "N", "with --live: stop after N prints", .min = 1,
		     .max = 1000000000, .old = "count"},
    [O_INTERVAL] = {"interval", 0, CLI_DURATION, "TIME", "with --live: the time between prints (default 1s)",
		    .min = 10000000, .max = 3600000000000LL},
    [O_ATTACH] = {"attach", 0, CLI_STRING, "PID|SHMFILE",
		  "print the hists attached in a running program (TRACEBUF_HIST, tb_hist_attach), read from outside: "
		  "no SPEC nor SOURCE; -e picks one"},
};

static int run(int argc, char **argv);

const struct cli_command cli_hist = {
    "hist", "the kernel's hist triggers over a trace.dat, capture or live instance",
    "-e [SYSTEM:]EVENT [OPTIONS] SPEC SOURCE",
    "The kernel's hist trigger SPEC (what follows 'hist:' in an event's trigger file) computed over the EVENT "
    "records of SOURCE, printed as the event's `hist` file shows it.  SOURCE is a trace.dat, a capture "
    "directory, or a live tracefs instance such as /sys/kernel/tracing/instances/NAME (consumed).\n\n"
    "SPEC is keys=F[,F...][:vals=F[,F]][:sort=F[.descending][,F]][:size=N]; F is a field of EVENT, "
    "common_timestamp or common_cpu, with at most one modifier: .hex .sym .sym-offset .execname .syscall .log2 "
    ".buckets=N .usecs",
    opts, O_N, .run = run, .long_work = true, .results_on_stdout = true,
    .exit_notes = "some input was damaged, or the trace holds none of the event (said on stderr)",
};

static int parse_args(int argc, char **argv, struct hist_args *a)
{
	struct cli_args ca;
	int rc = cli_parse(&cli_hist, argc, argv, &ca);

	if (rc != CLI_PARSED)
		return rc;
	a->event = cli_str(&ca, O_EVENT);
	a->copts.buffer = cli_str(&ca, O_BUFFER);
	a->copts.prefix = cli_str(&ca, O_PREFIX);
	a->copts.clock = cli_str(&ca, O_CLOCK);
	a->session = cli_given(&ca, O_SESSION);
	a->formats = cli_str(&ca, O_FORMATS);
	a->live = cli_given(&ca, O_LIVE);
	a->count = (long)cli_num(&ca, O_REFRESHES);
	a->interval_ns = cli_given(&ca, O_INTERVAL) ? cli_num(&ca, O_INTERVAL) : 1000000000LL;
	a->progress = cli_show_progress(&ca) && !a->live;
	a->attach = cli_str(&ca, O_ATTACH);
	if (a->attach)
		rc = ca.noperands ? cli_usage_error(&cli_hist, "--attach takes no SPEC nor SOURCE: the program's hists say theirs")
		     : a->session ? cli_usage_error(&cli_hist, "--attach and --session: one or the other")
				  : CLI_PARSED;
	else if (!a->event)
		rc = cli_usage_error(&cli_hist, "the event is missing: -e [SYSTEM:]EVENT");
	else if (ca.noperands != 2)
		rc = cli_usage_error(&cli_hist, "%s", ca.noperands < 2 ? "SPEC and SOURCE are needed (e.g. keys=prev_comm trace.dat)"
								      : "one SPEC and one SOURCE, no more");
	else
		rc = CLI_PARSED;
	if (rc == CLI_PARSED && !a->attach) {
		a->spec = ca.operands[0];
		a->input = ca.operands[1];
	}
	cli_free(&ca);
	return rc;
}

/* SYSTEM:EVENT (or SYSTEM/EVENT, or EVENT alone) split into its parts. */
static void split_event(const char *name, char *sys, size_t n, const char **event)
{
	const char *sep = strpbrk(name, ":/");

	sys[0] = '\0';
	*event = name;
	if (sep && (size_t)(sep - name) < n) {
		memcpy(sys, name, (size_t)(sep - name));
		sys[sep - name] = '\0';
		*event = sep + 1;
	}
}

/*
 * A live instance's events/SYS/EVENT/id (SYS "*" when not given: the first
 * system with such an event), so its format is loaded on demand; 0 if none.
 */
static uint32_t live_event_id(const char *dir, const char *sys, const char *event)
{
	char path[4096];
	unsigned id = 0;
	glob_t g;
	FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, sys[0] ? sys : "*", event);
	if (glob(path, 0, NULL, &g) == 0) {
		f = fopen(g.gl_pathv[0], "r");
		globfree(&g);
	}
	if (!f)
		return 0;
	if (fscanf(f, "%u", &id) != 1)
		id = 0;
	fclose(f);
	return id <= MAX_EVENT_ID ? id : 0;
}

/* The event's format in the schema: by name among the loaded ones, else a live instance's id file. */
static const struct tb_format *find_event(struct tb_capture *c, const char *dir, const char *name,
					  const char **system)
{
	struct tb_schema *s = tb_capture_schema(c);
	const char *event;
	char sys[TB_NAME_MAX];

	split_event(name, sys, sizeof(sys), &event);
	for (uint32_t id = 1; id <= MAX_EVENT_ID; id++) {
		const struct tb_format *f = tb_schema_event(s, id, system);
		if (f && !strcmp(f->name, event) && (!sys[0] || !strcmp(*system, sys)))
			return f;
	}
	if (tb_capture_is_live(c)) {
		uint32_t id = live_event_id(dir, sys, event);
		return id ? tb_schema_find_event(s, id, system) : NULL;
	}
	return NULL;
}

/* The spec's error, with the spec and a caret under the offset, as the kernel's error_log shows it. */
static void spec_error(const struct hist_args *a, const struct tb_hist_error *err)
{
	fprintf(stderr, "tracebuf hist: error in the hist spec at offset %zu: %s\n  Command: %s\n%*s^\n", err->pos,
		err->reason, a->spec, (int)(err->pos + strlen("  Command: ")), "");
}

static int run_once(struct tb_hist *h, struct tb_capture *c, struct tb_hist_totals *t)
{
	int rc = tb_hist_add_capture(h, c, t);

	if (rc < 0) {
		fprintf(stderr, "tracebuf hist: %s\n", strerror(-rc));
		return cli_exit_for(-rc);
	}
	return tb_hist_print(h, stdout) < 0 ? CLI_EXIT_OUTPUT : 0;
}

/* Between two prints of --live: a second, then a cleared screen (or a blank line in a file). */
static void refresh_pause(const struct hist_args *a)
{
	struct timespec t = {(time_t)(a->interval_ns / 1000000000LL), (long)(a->interval_ns % 1000000000LL)};

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
	fputs(isatty(STDOUT_FILENO) ? "\033[H\033[2J" : "\n", stdout);
}

static int run_live(const struct hist_args *a, struct tb_hist *h, struct tb_capture *c, struct tb_hist_totals *t)
{
	int rc = 0;

	for (long n = 0; rc == 0 && (a->count <= 0 || n < a->count); n++) {
		if (n) {
			refresh_pause(a);
			tb_capture_resume(c); /* read on: the events written since the last pass */
		}
		rc = run_once(h, c, t);
		fflush(stdout);
	}
	return rc;
}

/* After the pass: what the reader should know about the numbers. */
static int verdict(const struct hist_args *a, struct tb_capture *c, const struct tb_hist_totals *t)
{
	if (t->lost_pages)
		fprintf(stderr,
			"tracebuf hist: warning: %s lost events on %llu sub-buffers: the kernel's hist "
			"would have counted them\n",
			a->input, (unsigned long long)t->lost_pages);
	if (t->bad_records)
		fprintf(stderr, "tracebuf hist: %llu damaged %s records left out (the first are named above)\n",
			(unsigned long long)t->bad_records, a->event);
	if (!t->matched && !a->live) {
		fprintf(stderr, "tracebuf hist: %s holds no %s records (%llu records of other events)\n", a->input,
			a->event, (unsigned long long)t->records);
		hint_how_to_record(a->input, a->event, NULL);
		return 1;
	}
	return tb_capture_problems(c) ? 1 : 0;
}

/* The hist of a->spec over c's event: 0 with *out set, else the exit status (said on stderr). */
static int make_hist(const struct hist_args *a, struct tb_capture *c, struct tb_hist **out)
{
	struct tb_hist_error err;
	const char *system = "";
	const struct tb_format *f = find_event(c, a->input, a->event, &system);
	int rc;

	char closest[512];

	*out = NULL;
	/* a session's processes describe their events as they go: one not described yet may still come */
	if (!f && !a->session && !event_exists(tb_capture_schema(c), a->event, closest, sizeof(closest))) {
		fprintf(stderr, "tracebuf hist: no event %s, in %s nor in the running kernel%s%s\n", a->event,
			a->input, closest[0] ? "; the closest: " : "", closest);
		return 2;
	}
	if (!f && tb_capture_is_live(c)) {
		fprintf(stderr, "tracebuf hist: %s: this kernel has no event %s (see its events/ directory)\n",
			a->input, a->event);
		return 1;
	}
	if (!f) {
		fprintf(stderr, "tracebuf hist: %s has no event %s (no format for it: it was not recorded%s)\n",
			a->input, a->event, a->session ? ", or no process of the session described it yet" : "");
		hint_how_to_record(a->input, a->event, NULL);
		return 1;
	}
	rc = tb_hist_new(a->spec, f, system, tb_capture_schema(c), out, &err);
	if (rc < 0) {
		if (rc == -EINVAL)
			spec_error(a, &err);
		else
			fprintf(stderr, "tracebuf hist: %s\n", strerror(-rc));
		return 2;
	}
	/* A trace.dat's TSC2NSEC comes with its capture (tb_hist_add_capture). */
	tb_hist_set_ns_clock(*out, tb_capture_clock_is_ns(c));
	return 0;
}

static int hist_capture(const struct hist_args *a, struct tb_capture *c)
{
	struct tb_hist_totals t = {0};
	struct tb_hist *h;
	int rc = make_hist(a, c, &h);

	if (rc)
		return rc;
	if (a->live) {
		rc = run_live(a, h, c, &t);
	} else {
		struct cli_progress *pg = cli_progress_start(&cli_hist, a->progress, a->input);
		int added = tb_hist_add_capture(h, c, &t);
		cli_progress_stop(pg); /* before the hist is printed */
		rc = added < 0 ? (fprintf(stderr, "tracebuf hist: %s\n", strerror(-added)), cli_exit_for(-added))
		     : tb_hist_print(h, stdout) < 0 ? CLI_EXIT_OUTPUT
						     : 0;
	}
	if (rc == 0)
		rc = verdict(a, c, &t);
	tb_hist_free(h);
	return rc;
}

/*
 * A live session's processes describe their events when they register
 * them, which may come after the session's region is there (a program
 * just started by record): a refresh before that waits for the next, said
 * once.  Without --live there is no next: make_hist says what is missing.
 */
static bool described_yet(const struct hist_args *a, struct tb_capture *c)
{
	static bool said;
	const char *system;

	if (find_event(c, a->input, a->event, &system))
		return true;
	if (!said)
		fprintf(stderr, "tracebuf hist: %s: no process has described %s yet; each refresh looks again\n",
			a->input, a->event);
	said = true;
	return false;
}

/*
 * One pass over a session: a fresh copy of its window, the hist made at the
 * first (each record counted once across copies), its names from the copy.
 */
static int session_pass(const struct hist_args *a, struct hist_session *s, struct tb_hist **h,
			struct tb_hist_totals *t, struct tb_capture **c, bool *damaged)
{
	struct tb_shm_window w;
	/*
	 * The cut, read before the copy begins: the copy takes the CPUs one
	 * after another while the session writes on, so a thread that moved
	 * from a CPU already copied to one not yet copied would have its
	 * later records counted and the earlier ones not (seen beside two
	 * CPU hogs: a print's ticks were not 0..n-1).  Counting up to the
	 * cut makes each print one moment of the ring; what lies past it
	 * counts in the next print.  A record stamped before the cut but not
	 * yet committed when its CPU was copied is its thread's last: the
	 * print then ends just before it.  A counter clock has no "now" a
	 * reader may take (reading it takes a number from the writers'
	 * counter, in a region a reader may only read): no cut there.
	 */
	struct tb_ring *ring = hist_session_ring(s);
	uint64_t cut = tb_ring_clock(ring) != TB_CLOCK_COUNTER ? tb_ring_clock_now(ring) : 0;
	int rc = hist_session_copy(s, c, &w);

	if (rc < 0)
		return CLI_EXIT_INPUT; /* said by hist_session_copy */
	*damaged |= w.damaged > 0; /* said by hist_session_copy */
	if (!*h && a->live && !described_yet(a, *c))
		return 0; /* this refresh prints nothing; the next looks again */
	if (!*h) {
		struct tb_tracedat_write_opts o;
		if ((rc = make_hist(a, *c, h)))
			return rc;
		tb_hist_skip_seen(*h, 1);
		/* An x86-tsc ring's cycles in ns, by the ring's calibration, as its trace.dat would say. */
		shmcap_write_opts(ring, &o);
		tb_hist_set_tsc2nsec(*h, o.tsc2nsec_mult, o.tsc2nsec_shift);
	} else {
		tb_hist_set_schema(*h, tb_capture_schema(*c));
	}
	tb_hist_count_until(*h, cut);
	/* The window's first page says what went before it: not a loss of this hist's. */
	uint64_t lost_pages = t->lost_pages;
	rc = run_once(*h, *c, t);
	t->lost_pages = lost_pages;
	return rc;
}

static int hist_session(const struct hist_args *a)
{
	struct tb_hist_totals t = {0};
	struct hist_session *s;
	struct tb_hist *h = NULL;
	struct tb_capture *c = NULL;
	bool damaged = false;
	int rc = hist_session_open(a->input, a->formats, &s);

	if (rc < 0)
		return CLI_EXIT_INPUT; /* said */
	for (long n = 0; rc == 0 && (n == 0 || (a->live && (a->count <= 0 || n < a->count))); n++) {
		if (n)
			refresh_pause(a);
		rc = session_pass(a, s, &h, &t, &c, &damaged);
		fflush(stdout);
	}
	if (rc == 0 && !h)
		rc = make_hist(a, c, &h); /* never described: says so, exit 1 */
	if (rc == 0)
		rc = verdict(a, c, &t);
	if (rc == 0 && damaged)
		rc = 1;
	tb_hist_free(h);
	hist_session_close(s);
	return rc;
}

static int hist_dir(const struct hist_args *a)
{
	struct tb_capture *c;
	int rc = tb_capture_open(a->input, &a->copts, &c);

	if (rc < 0 && rc == -ENOENT && a->copts.buffer && !access(a->input, R_OK))
		return CLI_EXIT_USAGE; /* a buffer the file lacks: said, with the buffers it has */
	if (rc < 0)
		return cli_input_error(&cli_hist, a->input, -rc);
	if (a->live && !tb_capture_is_live(c)) {
		fprintf(stderr, "tracebuf hist: --live needs a live instance; %s is a capture\n", a->input);
		tb_capture_close(c);
		return 2;
	}
	rc = hist_capture(a, c);
	tb_capture_close(c);
	return rc;
}

/* PID: digits alone. */
static bool is_pid(const char *s, pid_t *pid)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v <= 0 || v > 0x3fffffff || s[0] < '0' || s[0] > '9')
		return false;
	*pid = (pid_t)v;
	return true;
}

/* The processes of the session at path that run now (those that described their events beside it). */
static int session_pids(const char *path, pid_t **pids, size_t *n)
{
	char dir[4096];
	struct dirent *d;
	DIR *dp;
	size_t cap = 0;
	pid_t pid;

	*pids = NULL;
	*n = 0;
	if (access(path, F_OK) < 0) {
		fprintf(stderr, "tracebuf hist: --attach %s: %s (neither a PID nor a session's file)\n", path,
			strerror(errno));
		return CLI_EXIT_INPUT;
	}
	shm_session_desc_dir(path, dir, sizeof(dir));
	if (!(dp = opendir(dir))) {
		fprintf(stderr, "tracebuf hist: --attach %s: not a session: no %s beside it (%s)\n", path, dir,
			strerror(errno));
		return CLI_EXIT_INPUT;
	}
	while ((d = readdir(dp)))
		if (is_pid(d->d_name, &pid) && kill(pid, 0) == 0) {
			pid_t *grown = *n == cap ? tb__grow(*pids, &cap, *n + 1, sizeof(pid_t), 16) : *pids;
			if (!grown)
				break;
			*pids = grown;
			(*pids)[(*n)++] = pid;
		}
	closedir(dp);
	if (!*n) {
		fprintf(stderr, "tracebuf hist: --attach %s: no process of the session runs now (%s)\n", path, dir);
		return CLI_EXIT_INPUT;
	}
	return 0;
}

/* One print of the hists attached in pids: 0 or the exit status (said). */
static int attached_pass(const struct hist_args *a, const pid_t *pids, size_t n)
{
	uint64_t unsettled = 0;
	int rc = tb_hist_print_processes(pids, n, a->event, stdout, &unsettled);

	if (rc == -EIO)
		return CLI_EXIT_OUTPUT;
	if (rc < 0) {
		fprintf(stderr, "tracebuf hist: --attach %s: %s\n", a->attach,
			*tb_hist_region_error() ? tb_hist_region_error() : strerror(-rc));
		return cli_exit_for(-rc);
	}
	if (unsettled)
		fprintf(stderr,
			"tracebuf hist: warning: %llu entries were being updated whenever they were read "
			"(a writer stopped inside an update?): taken as read\n",
			(unsigned long long)unsettled);
	return unsettled ? 1 : 0;
}

/* --attach PID|SHMFILE: read every pass afresh (a session's processes come and go). */
static int hist_attached(const struct hist_args *a)
{
	int rc = 0, unsettled = 0;

	for (long n = 0; rc == 0 && (n == 0 || (a->live && (a->count <= 0 || n < a->count))); n++) {
		pid_t one, *pids = &one;
		size_t npids = 1;
		if (n)
			refresh_pause(a);
		if (!is_pid(a->attach, &one) && (rc = session_pids(a->attach, &pids, &npids)))
			break;
		rc = attached_pass(a, pids, npids);
		fflush(stdout);
		if (rc == 1) { /* warned: read on */
			unsettled = 1;
			rc = 0;
		}
		if (pids != &one)
			free(pids);
	}
	return rc ? rc : unsettled;
}

static int run(int argc, char **argv)
{
	struct hist_args a = {0};
	enum tb_input_kind kind;
	int rc = parse_args(argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	if (a.attach)
		return hist_attached(&a);
	if (a.session)
		return hist_session(&a);
	if (tb_input_identify(a.input, NULL, NULL, true, &kind) == 0 && kind == TB_INPUT_TRACEDAT) {
		if (a.live) {
			fprintf(stderr, "tracebuf hist: --live needs a live instance, not the file %s\n", a.input);
			return 2;
		}
	}
	return hist_dir(&a);
}
