// SPDX-License-Identifier: MIT
/*
 * tracebuf offcpu [--blocked] [--no-preempted] [--comm C] [--svg FILE] [--title T] [--buffer NAME] [-q] FILE
 *
 * Off-CPU time of a capture directory or trace.dat, by the stack each task
 * blocked in (tracebuf/offcpu.h): folded stacks on stdout (`comm;frame;...
 * N`, N microseconds, frames root first) for flamegraph tools, and with
 * --svg a flame graph of our own.  A summary goes to stderr; a trace that
 * lacks the events says which to record and how.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_progress.h"
#include "cmds.h"
#include "event_hint.h"
#include "tracebuf/offcpu.h"

/* What --offcpu records, for the hint: the events and the trigger that adds each switch's stack. */
#define OFFCPU_EVENTS "sched:sched_switch,sched:sched_wakeup (+ the stacktrace trigger on sched_switch)"

struct offcpu_args {
	struct tb_offcpu_opts o;
	struct tb_capture_opts copts;
	const char *input, *svg, *title;
	bool quiet;
	bool progress; /* the progress line (cli_progress.h) */
};

enum { O_SVG, O_TITLE, O_BLOCKED, O_NO_PREEMPTED, O_COMM, O_BUFFER, O_N };
static const struct cli_opt opts[] = {
    [O_SVG] = {"svg", 0, CLI_STRING, "FILE", "also draw a flame graph (SVG, 1200 px wide, titles on hover)"},
    [O_TITLE] = {"title", 0, CLI_STRING, "TEXT", "the flame graph's title"},
    [O_BLOCKED] = {"blocked", 0, CLI_FLAG, NULL, "count only the time blocked (to the wakeup), not the wait for a CPU"},
    [O_NO_PREEMPTED] = {"no-preempted", 0, CLI_FLAG, NULL, "leave out intervals begun by a preemption (prev_state R)"},
    [O_COMM] = {"comm", 0, CLI_STRING, "COMM", "only tasks of this command name"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME",
		  "a trace.dat's buffer alone (default: every buffer, merged; \"\" is the top buffer)", "-B"},
};

static int run(int argc, char **argv);

const struct cli_command cli_offcpu = {
    "offcpu", "off-CPU time by blocking stack: folded stacks, SVG flame graph", "[OPTIONS] CAPTURE | FILE.dat",
    "Time each task spent off CPU, by the kernel (and user) stack it blocked in, from sched_switch (+ "
    "sched_wakeup) and the stacktrace trigger's kernel_stack records.  Prints folded stacks (comm;root;...;leaf "
    "MICROSECONDS) on stdout, a summary on stderr.",
    opts, O_N, .run = run, .long_work = true, .results_on_stdout = true,
    .exit_notes = "damage met, or no sched_switch in the trace (nothing measured; what to record is said)",
};

static int parse_args(int argc, char **argv, struct offcpu_args *a)
{
	struct cli_args ca;
	int rc = cli_parse(&cli_offcpu, argc, argv, &ca);

	if (rc != CLI_PARSED)
		return rc;
	a->svg = cli_str(&ca, O_SVG);
	a->title = cli_str(&ca, O_TITLE);
	a->o.blocked_only = cli_given(&ca, O_BLOCKED);
	a->o.no_preempted = cli_given(&ca, O_NO_PREEMPTED);
	a->o.comm = cli_str(&ca, O_COMM);
	a->copts.buffer = cli_str(&ca, O_BUFFER);
	a->quiet = ca.progress == CLI_PROGRESS_OFF;
	a->progress = cli_show_progress(&ca);
	rc = cli_one_input(&ca, -1, &a->input);
	cli_free(&ca);
	return rc ? rc : CLI_PARSED;
}

static void summarize(const struct offcpu_args *a, const struct tb_offcpu_totals *t)
{
	fprintf(stderr,
		"tracebuf offcpu: %s: %llu records, %llu sched_switch, %llu off-CPU intervals "
		"(%.3f s; %llu with a kernel stack, %llu with a user stack, %llu preempted)\n",
		a->input, (unsigned long long)t->records, (unsigned long long)t->switches,
		(unsigned long long)t->intervals, (double)t->off_ns / 1e9, (unsigned long long)t->kernel_stacks,
		(unsigned long long)t->user_stacks, (unsigned long long)t->preempted);
	if (t->have_wakeup)
		fprintf(stderr, "tracebuf offcpu: %llu intervals woken: %.3f s blocked, %.3f s waiting for a CPU\n",
			(unsigned long long)t->woken, (double)t->blocked_ns / 1e9, (double)t->runq_ns / 1e9);
	if (t->open_at_end)
		fprintf(stderr, "tracebuf offcpu: %llu tasks were still off CPU when the trace ended (not counted)\n",
			(unsigned long long)t->open_at_end);
	if (t->inferred || t->dropped)
		fprintf(stderr,
			"tracebuf offcpu: %llu tasks ran again without a switch-in in the trace: %llu intervals "
			"end at their wakeup, %llu without one are left out\n",
			(unsigned long long)(t->inferred + t->dropped), (unsigned long long)t->inferred,
			(unsigned long long)t->dropped);
	if (t->backwards)
		fprintf(stderr,
			"tracebuf offcpu: warning: %llu intervals end before they begin (time stamps going back: "
			"damage) and are left out\n",
			(unsigned long long)t->backwards);
	if (t->lost_pages)
		fprintf(stderr,
			"tracebuf offcpu: warning: %llu sub-buffers follow lost events: some intervals may be "
			"missing or merged (a larger -b keeps them)\n",
			(unsigned long long)t->lost_pages);
}

/* What the trace lacks, said with the flags that record it. */
static void say_missing(const struct offcpu_args *a, const struct tb_offcpu_totals *t, int rc)
{
	const char *buffer = a->copts.buffer ? " in the buffer asked for" : "";

	if (rc == -ENOENT || (rc == 0 && !t->switches))
		fprintf(stderr, "tracebuf offcpu: %s has no sched:sched_switch %s%s\n", a->input,
			rc ? "events" : "records", buffer);
	else if (rc == -EINVAL && a->o.blocked_only)
		fprintf(stderr, "tracebuf offcpu: --blocked needs sched:sched_wakeup, which %s lacks%s\n", a->input,
			buffer);
	else if (rc == 0 && t->switches && !t->have_kernel_stack)
		fprintf(stderr,
			"tracebuf offcpu: warning: %s has no kernel stacks (ftrace:kernel_stack)%s, so the "
			"stacks are comms alone\n",
			a->input, buffer);
	else
		return;
	hint_how_to_record(a->input, OFFCPU_EVENTS, "--offcpu");
}

static int write_svg(const struct offcpu_args *a, const struct tb_offcpu *r, const struct tb_offcpu_totals *t)
{
	FILE *f = fopen(a->svg, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "tracebuf offcpu: %s: %s\n", a->svg, strerror(errno));
		return -errno;
	}
	rc = tb_offcpu_flamegraph(r, t, &a->o, a->input, a->title, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc < 0)
		fprintf(stderr, "tracebuf offcpu: writing %s: %s\n", a->svg, strerror(-rc));
	return rc;
}

static int run(int argc, char **argv)
{
	struct offcpu_args a = {0};
	struct tb_offcpu_totals t;
	struct tb_offcpu *r = NULL;
	struct tb_capture *c;
	bool svg_failed = false;
	int rc = parse_args(argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	rc = tb_capture_open(a.input, &a.copts, &c);
	if (rc < 0)
		return cli_input_error(&cli_offcpu, a.input, -rc);
	struct cli_progress *pg = cli_progress_start(&cli_offcpu, a.progress, a.input);
	rc = tb_offcpu_run(c, &a.o, &r, &t);
	cli_progress_stop(pg);
	say_missing(&a, &t, rc);
	if (rc == 0) {
		if (!a.quiet)
			summarize(&a, &t);
		rc = tb_offcpu_write_folded(r, stdout);
		if (rc == 0 && a.svg && write_svg(&a, r, &t) < 0)
			svg_failed = true;
	} else if (rc != -ENOENT && !(rc == -EINVAL && a.o.blocked_only)) {
		fprintf(stderr, "tracebuf offcpu: %s: %s\n", a.input, strerror(-rc));
	}
	unsigned long problems = tb_capture_problems(c);
	tb_offcpu_free(r);
	tb_capture_close(c);
	/* No switch at all: nothing was measured, as hist's "holds no records" (said above). */
	if (svg_failed)
		return CLI_EXIT_OUTPUT; /* said by write_svg */
	if (rc == -EINVAL && a.o.blocked_only)
		return CLI_EXIT_USAGE; /* --blocked without wakeups: said */
	if (rc < 0 && rc != -ENOENT)
		return cli_exit_for(-rc);
	return rc == -ENOENT || problems || !t.switches || t.backwards ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
}
