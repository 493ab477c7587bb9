// SPDX-License-Identifier: MIT
/*
 * export_offcpu.c - off-CPU time as folded stacks and as a flame graph
 * (tracebuf/offcpu.h): whole kinds, as an interval pairs a switch-out with
 * a switch-in anywhere later in the trace, so nothing can be written
 * before the trace is read to its end.  The analysis runs with the
 * defaults of `tracebuf offcpu` (every task, blocked and runnable time);
 * that command's options stay its own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "exporter.h"
#include "tracebuf/offcpu.h"

typedef int offcpu_writer(struct export_run *x, const struct tb_offcpu *r, const struct tb_offcpu_totals *t,
			  FILE *f);

/* Run the analysis, then writer to the output; an input without sched_switch is said as offcpu says it. */
static int offcpu_whole(struct export_run *x, offcpu_writer *writer)
{
	struct tb_offcpu_opts oo = {0};
	struct tb_offcpu_totals t;
	struct tb_offcpu *r = NULL;
	FILE *f;
	int rc = tb_offcpu_run(x->capture, &oo, &r, &t);

	/* No switch to pair, format or not: an empty profile would look like a program that never blocked. */
	if (rc == -ENOENT || (rc == 0 && !t.switches)) {
		tb_offcpu_free(r);
		return export_say(x, -ENOENT, x->o->in,
				  "has no sched:sched_switch records to pair (record them with `tracebuf record "
				  "--offcpu` or `tracebuf capture --offcpu`)");
	}
	if (rc < 0)
		return export_say(x, rc, x->o->in, "%s", strerror(-rc));
	x->res->records = t.records;
	x->res->lost_pages = t.lost_pages;
	if ((f = export_fopen(x)))
		rc = export_fclose(x, f, writer(x, r, &t, f));
	else
		rc = -errno;
	tb_offcpu_free(r);
	return rc;
}

static int write_folded(struct export_run *x, const struct tb_offcpu *r, const struct tb_offcpu_totals *t,
			FILE *f)
{
	(void)x, (void)t;
	return tb_offcpu_write_folded(r, f);
}

static int write_flamegraph(struct export_run *x, const struct tb_offcpu *r, const struct tb_offcpu_totals *t,
			    FILE *f)
{
	return tb_offcpu_flamegraph(r, t, NULL, x->o->in, x->o->title, f);
}

static int folded_whole(struct export_run *x)
{
	return offcpu_whole(x, write_folded);
}

static int flamegraph_whole(struct export_run *x)
{
	return offcpu_whole(x, write_flamegraph);
}

const struct tb_exporter_kind export_folded = {
    .name = "folded",
    .suffixes = ".folded",
    .help = "off-CPU time as folded stacks, `STACK MICROSECONDS` lines (flamegraph.pl, speedscope)",
    .input = EXPORT_CAPTURE,
    .whole = folded_whole,
};

const struct tb_exporter_kind export_flamegraph = {
    .name = "flamegraph",
    .suffixes = ".flame.svg",
    .help = "off-CPU time as an SVG flame graph (titles on hover, no script)",
    .input = EXPORT_CAPTURE,
    .whole = flamegraph_whole,
};
