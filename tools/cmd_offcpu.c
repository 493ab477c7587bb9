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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf offcpu [--blocked] [--no-preempted] [--comm COMM] [--svg FILE]\n"
		   "                      [--title TEXT] [--buffer NAME] [-q] "
		   "CAPTURE|FILE.dat\n"
		   "\n"
		   "Time each task spent off CPU, by the kernel (and user) stack it blocked in, from\n"
		   "sched_switch (+ sched_wakeup) and the stacktrace trigger's kernel_stack records.\n"
		   "Prints folded stacks (comm;root;...;leaf MICROSECONDS) on stdout.\n"
		   "\n"
		   "  --svg FILE        also draw a flame graph (SVG, 1200 px wide, titles on hover)\n"
		   "  --title TEXT      the flame graph's title\n"
		   "  --blocked         count only the time blocked (to the wakeup), not the wait for a CPU\n"
		   "  --no-preempted    leave out intervals begun by a preemption (prev_state R)\n"
		   "  --comm COMM       only tasks of this command name\n"
		   "  --buffer NAME     a trace.dat's buffer alone (default: every buffer, merged;\n"
		   "                    \"\" is the top buffer)\n"
		   "  -q                no summary on stderr\n");
	return f == stderr ? 2 : 0;
}

static int parse_args(int argc, char **argv, struct offcpu_args *a)
{
	enum { OPT_SVG = 256, OPT_TITLE, OPT_BLOCKED, OPT_NO_PREEMPTED, OPT_COMM, OPT_BUFFER };
	static const struct option longopts[] = {
	    {"svg", required_argument, NULL, OPT_SVG},
	    {"title", required_argument, NULL, OPT_TITLE},
	    {"blocked", no_argument, NULL, OPT_BLOCKED},
	    {"no-preempted", no_argument, NULL, OPT_NO_PREEMPTED},
	    {"comm", required_argument, NULL, OPT_COMM},
	    {"buffer", required_argument, NULL, OPT_BUFFER},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SVG:
			a->svg = optarg;
			break;
		case OPT_TITLE:
			a->title = optarg;
			break;
		case OPT_BLOCKED:
			a->o.blocked_only = true;
			break;
		case OPT_NO_PREEMPTED:
			a->o.no_preempted = true;
			break;
		case OPT_COMM:
			a->o.comm = optarg;
			break;
		case OPT_BUFFER:
			a->copts.buffer = optarg;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			return usage(stderr);
		}
	}
	if (optind != argc - 1)
		return usage(stderr);
	a->input = argv[optind];
	return 0;
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

int cmd_offcpu(int argc, char **argv)
{
	struct offcpu_args a = {0};
	struct tb_offcpu_totals t;
	struct tb_offcpu *r = NULL;
	struct tb_capture *c;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	rc = tb_capture_open(a.input, &a.copts, &c);
	if (rc < 0) {
		fprintf(stderr, "tracebuf offcpu: %s: cannot open: %s\n", a.input, strerror(-rc));
		return 2;
	}
	rc = tb_offcpu_run(c, &a.o, &r, &t);
	say_missing(&a, &t, rc);
	if (rc == 0) {
		if (!a.quiet)
			summarize(&a, &t);
		rc = tb_offcpu_write_folded(r, stdout);
		if (rc == 0 && a.svg)
			rc = write_svg(&a, r, &t);
	} else if (rc != -ENOENT && !(rc == -EINVAL && a.o.blocked_only)) {
		fprintf(stderr, "tracebuf offcpu: %s: %s\n", a.input, strerror(-rc));
	}
	unsigned long problems = tb_capture_problems(c);
	tb_offcpu_free(r);
	tb_capture_close(c);
	/* No switch at all: nothing was measured, as hist's "holds no records" (said above). */
	return rc < 0 ? 2 : problems || !t.switches ? 1 : 0;
}
