// SPDX-License-Identifier: MIT
/*
 * tracebuf report [OPTIONS] DIR | FILE.dat | -i FILE.dat
 *
 * Print a capture directory or a live tracefs instance as the kernel's
 * `trace` text, and a trace.dat as `trace-cmd report` prints it (each
 * layout can be asked for the other input: --like-trace-cmd,
 * --like-kernel).  A live instance is consumed (its trace_pipe_raw is
 * read).  When a capture's tracer is function_graph (a saved function
 * trace, tracebuf/func.h) its events print as the call graph that tracer
 * prints; user-space addresses are named from the objects file
 * (DIR/objects).  Exit status: 0 clean, 1 some input was damaged (reported
 * on stderr, the rest printed), 2 usage or the input could not be opened
 * at all.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "event_hint.h"
#include "objects_file.h"
#include "tracebuf/capture.h"
#include "tracebuf/filter.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/input.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"
#include "tracebuf/usyms.h"

#define MAX_CPU_FILTER 65536

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf report [OPTIONS] DIR | FILE.dat\n"
		   "       tracebuf report [OPTIONS] -i FILE.dat\n"
		   "\n"
		   "DIR is a capture directory (header_page, formats/, cpuN.raw, ...) or a\n"
		   "live tracefs instance such as /sys/kernel/tracing/instances/NAME, whose\n"
		   "buffer is consumed; it prints as the kernel's `trace` file.  FILE.dat is\n"
		   "a trace-cmd trace.dat; it prints in `trace-cmd report`'s layout with\n"
		   "the kernel's text of each event.\n"
		   "\n"
		   "  --like-trace-cmd  trace-cmd's layout for DIR as well; for FILE.dat the\n"
		   "                    event text too (libtraceevent's, as trace-cmd prints it)\n"
		   "  --like-kernel     the kernel's `trace` text for FILE.dat (one buffer)\n"
		   "  --buffer NAME     with --like-kernel: the instance to print (default: the\n"
		   "                    first buffer with data; \"\" is the top-level buffer);\n"
		   "                    with --count: the one buffer counted\n"
		   "  -i FILE           the input, as trace-cmd takes it\n"
		   "  -F 'EVENTS: EXPR' only these events, and of them the records EXPR (the\n"
		   "                    kernel's filter language) keeps; EVENTS is SYSTEM/EVENT,\n"
		   "                    SYSTEM or EVENT (regular expressions), ','-separated;\n"
		   "                    repeatable (a record any -F keeps is printed)\n"
		   "  -v                the -F options after it drop what they match\n"
		   "\n"
		   "trace-cmd's layout:\n"
		   "  -t                nanosecond time stamps\n"
		   "  -R                raw events: every field as name=value\n"
		   "  -l                the latency columns (irqs-off, need-resched, ...)\n"
		   "  -N                no plugins: every event by its print fmt alone\n"
		   "  --cpu LIST        only these CPUs (\"0,2-3\"), numbered as trace-cmd does:\n"
		   "                    the top buffer's CPUs first, then each instance's\n"
		   "  --stat            the per-CPU stats stored in FILE.dat\n"
		   "\n"
		   "the kernel's layout:\n"
		   "  --prefix P        raw and stats files are named PcpuN.raw, PcpuN.stats\n"
		   "  --no-header       print the events only\n"
		   "  --clock CLOCK     the trace clock (local, x86-tsc, ...), for a capture\n"
		   "                    that does not say which it is\n"
		   "  --stat            no event lines: per event, how many records were printed\n"
		   "                    and by which printer (the kernel's own, the compiled\n"
		   "                    print fmt, or libtraceevent with the reason), then totals\n"
		   "  --graph           print function entries and exits as a call graph (the\n"
		   "                    default when the capture's tracer is function_graph)\n"
		   "  --no-graph        print every event as a line, whatever the tracer\n"
		   "  --graph-opt O     the kernel's funcgraph options: proc, abstime, tail,\n"
		   "                    overrun, retaddr, nocpu, noduration, nooverhead\n"
		   "  --count           decode and merge every record, print no text: the\n"
		   "                    totals line (FILE.dat: every buffer, or --buffer NAME)\n"
		   "  --objects FILE    name user-space addresses from the objects listed in\n"
		   "                    FILE (default: DIR/objects when it exists)\n");
	return f == stderr ? 2 : 0;
}

/* "proc,tail,...": false on an unknown name. */
static bool graph_options(char *list, struct tb_graph_opts *o)
{
	static const struct {
		const char *name;
		size_t offset;
	} names[] = {
		{"proc", offsetof(struct tb_graph_opts, proc)},
		{"abstime", offsetof(struct tb_graph_opts, abstime)},
		{"tail", offsetof(struct tb_graph_opts, tail)},
		{"overrun", offsetof(struct tb_graph_opts, overrun)},
		{"retaddr", offsetof(struct tb_graph_opts, retaddr)},
		{"nocpu", offsetof(struct tb_graph_opts, no_cpu)},
		{"noduration", offsetof(struct tb_graph_opts, no_duration)},
		{"nooverhead", offsetof(struct tb_graph_opts, no_overhead)},
	};
	char *save = NULL;

	for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < sizeof(names) / sizeof(names[0]) && strcmp(p, names[i].name))
			i++;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "tracebuf report: unknown --graph-opt '%s'\n", p);
			return false;
		}
		*(bool *)((char *)o + names[i].offset) = true;
	}
	return true;
}

struct report_args {
	const char *input;
	bool like_trace_cmd, like_kernel, stat;
	const char *buffer;
	struct tb_capture_opts copts;
	struct tb_report_opts ropts;
	struct tb_tcmd_print_opts topts;
	int *cpus;
	size_t ncpus;
	int graph; /* -1: as the capture's tracer says */
	struct tb_graph_opts gopts;
	const char *objects;
	struct tb_filter_set *filter; /* -F, NULL when none */
	bool exclude;                 /* -v seen: later -F drop */
};

/* One -F spec into a->filter; false (said why) when it is malformed. */
static bool add_filter(struct report_args *a, const char *spec)
{
	struct tb_filter_error err;
	int rc;

	if (!a->filter && !(a->filter = tb_filter_set_new()))
		return false;
	rc = tb_filter_set_add(a->filter, spec, a->exclude, &err);
	if (rc == -EINVAL)
		fprintf(stderr, "tracebuf report: -F '%s': at byte %zu: %s\n", spec, err.pos, err.reason);
	else if (rc < 0)
		fprintf(stderr, "tracebuf report: -F: %s\n", strerror(-rc));
	return rc == 0;
}

/* trace-cmd's CPU list: numbers and ranges separated by ',' or ':'. */
static int add_cpu_list(struct report_args *a, const char *list)
{
	const char *p = list;

	do {
		char *end;
		long lo, hi;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		lo = hi = strtol(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -EINVAL;
			hi = strtol(end + 1, &end, 10);
		}
		if (lo > hi || hi >= INT_MAX || (size_t)(hi - lo) + a->ncpus >= MAX_CPU_FILTER)
			return -EINVAL;
		int *grown = realloc(a->cpus, (a->ncpus + (size_t)(hi - lo) + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		a->cpus = grown;
		for (long c = lo; c <= hi; c++)
			a->cpus[a->ncpus++] = (int)c;
		p = end;
		if (*p == ',' || *p == ':')
			p++;
		else if (*p)
			return -EINVAL;
	} while (*p);
	return 0;
}

enum {
	OPT_PREFIX = 256,
	OPT_NO_HEADER,
	OPT_CLOCK,
	OPT_LIKE_TC,
	OPT_LIKE_KERNEL,
	OPT_BUFFER,
	OPT_CPU,
	OPT_STAT,
	OPT_GRAPH,
	OPT_NO_GRAPH,
	OPT_GRAPH_OPT,
	OPT_OBJECTS,
	OPT_COUNT
};

static int parse_args(int argc, char **argv, struct report_args *a)
{
	static const struct option longopts[] = {
	    {"prefix", required_argument, NULL, OPT_PREFIX},
	    {"no-header", no_argument, NULL, OPT_NO_HEADER},
	    {"clock", required_argument, NULL, OPT_CLOCK},
	    {"like-trace-cmd", no_argument, NULL, OPT_LIKE_TC},
	    {"like-kernel", no_argument, NULL, OPT_LIKE_KERNEL},
	    {"buffer", required_argument, NULL, OPT_BUFFER},
	    {"cpu", required_argument, NULL, OPT_CPU},
	    {"stat", no_argument, NULL, OPT_STAT},
	    {"graph", no_argument, NULL, OPT_GRAPH},
	    {"no-graph", no_argument, NULL, OPT_NO_GRAPH},
	    {"graph-opt", required_argument, NULL, OPT_GRAPH_OPT},
	    {"objects", required_argument, NULL, OPT_OBJECTS},
	    {"count", no_argument, NULL, OPT_COUNT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "hi:tRlNF:v", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PREFIX:
			a->copts.prefix = optarg;
			break;
		case OPT_NO_HEADER:
			a->ropts.no_header = a->gopts.no_header = true;
			break;
		case OPT_GRAPH:
		case OPT_NO_GRAPH:
			a->graph = opt == OPT_GRAPH;
			break;
		case OPT_GRAPH_OPT:
			if (!graph_options(optarg, &a->gopts))
				return 2;
			break;
		case OPT_OBJECTS:
			a->objects = optarg;
			break;
		case OPT_CLOCK:
			a->copts.clock = optarg;
			break;
		case OPT_LIKE_TC:
			a->like_trace_cmd = true;
			break;
		case OPT_LIKE_KERNEL:
			a->like_kernel = true;
			break;
		case OPT_BUFFER:
			a->buffer = optarg;
			break;
		case OPT_STAT:
			a->stat = true;
			break;
		case OPT_COUNT:
			a->ropts.count_only = true;
			break;
		case 'i':
			a->input = optarg;
			break;
		case 't':
			a->topts.nsec = true;
			break;
		case 'R':
			a->topts.raw = true;
			break;
		case 'l':
			a->topts.latency = true;
			break;
		case 'N':
			a->topts.no_plugins = true;
			break;
		case 'F':
			if (!add_filter(a, optarg))
				return 2;
			break;
		case 'v':
			a->exclude = true;
			break;
		case OPT_CPU:
			if (add_cpu_list(a, optarg) < 0) {
				fprintf(stderr,
					"tracebuf report: --cpu %s: not a list of CPUs such as "
					"0,2-3\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			return usage(stdout) - 1; /* -1: exit 0 after the help */
		default:
			return usage(stderr);
		}
	}
	if (!a->input && optind == argc - 1)
		a->input = argv[optind++];
	if (!a->input || optind != argc || (a->like_kernel && a->like_trace_cmd))
		return usage(stderr);
	/* A trace.dat's events print in the kernel's text unless trace-cmd's is asked for. */
	a->topts.kernel_text = !a->like_trace_cmd;
	a->topts.cpus = a->cpus;
	a->topts.ncpus = a->ncpus;
	a->topts.filter = a->ropts.filter = a->filter;
	return 0;
}

static int exit_status(const char *what, int rc)
{
	if (rc < 0) {
		fprintf(stderr, "tracebuf report: %s: %s\n", what, strerror(-rc));
		return 2;
	}
	return rc ? 1 : 0;
}

/* The buffer called name, or -1. */
/* The totals of a report: what --count and --stat end with. */
static void print_totals(const struct tb_report_totals *t)
{
	const struct tb_report_totals totals = *t;

	printf("events %llu (unknown %llu), records skipped %llu, sub-buffers %llu (bad %llu), "
	       "LOST lines %llu (%llu events)\n",
	       (unsigned long long)totals.events, (unsigned long long)totals.unknown_events,
	       (unsigned long long)totals.bad_records, (unsigned long long)totals.pages,
	       (unsigned long long)totals.bad_pages, (unsigned long long)totals.lost_lines,
	       (unsigned long long)totals.lost_events);
}

/* --count: every record decoded and merged, no text: the totals alone. */
static int report_count(struct tb_capture *c, const struct tb_report_opts *ropts)
{
	struct tb_report_totals totals;
	int rc = tb_report_write(c, stdout, ropts, &totals);

	if (rc >= 0)
		print_totals(&totals);
	return rc;
}

/*
 * Whether every event -F names is in the schema; else said, with the
 * closest real names, as a usage error: a mistyped name would keep nothing.
 */
static bool filter_names_known(const struct report_args *a, struct tb_schema *s)
{
	const char *unknown = tb_filter_set_unmatched(a->filter, s);
	char closest[512];

	if (!unknown)
		return true;
	event_exists(s, unknown, closest, sizeof(closest));
	fprintf(stderr, "tracebuf report: -F: no event '%s' in %s%s%s\n", unknown, a->input,
		closest[0] ? "; the closest: " : "", closest);
	return false;
}

static int report_tracedat(struct report_args *a)
{
	struct tb_tracedat *td;
	struct tb_capture *c;
	/* --count prints no symbol: the kernel's symbols are not parsed. */
	struct tb_tracedat_opts topen = {.no_symbols = a->ropts.count_only && !a->stat, .lazy_formats = true};
	int rc = tb_tracedat_open(a->input, &topen, &td), buffer;

	if (rc < 0) {
		fprintf(stderr, "tracebuf report: %s: cannot open: %s\n", a->input, strerror(-rc));
		return 2;
	}
	if (a->filter && !filter_names_known(a, tb_tracedat_schema(td))) {
		tb_tracedat_close(td);
		return 2;
	}
	if (a->stat)
		rc = tb_tracedat_print_stat(td, stdout);
	else if (!a->like_kernel && !a->ropts.count_only)
		rc = tb_tcmd_print_tracedat(td, stdout, &a->topts, NULL);
	else if (!a->like_kernel) { /* --count: every buffer, merged, as the report prints them (or --buffer's) */
		a->copts.buffer = a->buffer;
		rc = tb_tracedat_capture_chosen(td, &a->copts, &c);
		if (rc < 0) {
			tb_tracedat_close(td);
			return rc == -ENOENT ? 2 : exit_status(a->input, rc); /* a buffer the file lacks: said */
		}
		rc = report_count(c, &a->ropts);
		tb_capture_close(c);
	} else {
		buffer = a->buffer ? tb_tracedat_buffer_find(td, a->buffer) : tb_tracedat_main_buffer(td);
		if (buffer < 0) {
			fprintf(stderr, "tracebuf report: %s has no buffer '%s'\n", a->input, a->buffer);
			tb_tracedat_close(td);
			return 2;
		}
		rc = tb_tracedat_capture(td, buffer, &a->copts, &c);
		if (rc < 0) {
			tb_tracedat_close(td);
			return exit_status(a->input, rc);
		}
		rc = a->ropts.count_only ? report_count(c, &a->ropts) : tb_report_write(c, stdout, &a->ropts, NULL);
		tb_capture_close(c);
	}
	if (rc == 0 && tb_tracedat_problems(td))
		rc = 1;
	tb_tracedat_close(td);
	return exit_status("writing the report", rc);
}

/* --stat for the kernel's layout: no lines, the printers and the totals. */
static int report_printers(struct tb_capture *c, const struct tb_report_opts *ropts)
{
	struct tb_report_totals totals;
	FILE *null = fopen("/dev/null", "w");
	int rc;

	if (!null)
		return -errno;
	rc = tb_report_write(c, null, ropts, &totals);
	fclose(null);
	tb_report_write_printers(c, stdout);
	putchar('\n');
	print_totals(&totals);
	return rc;
}

/* A capture directory or a live instance, in the kernel's layout (or trace-cmd's, or as a graph). */
static int report_capture(struct report_args *a)
{
	struct tb_usyms *usyms;
	struct tb_capture *c;
	int rc;

	/* A report looks events up by the IDs of its records: formats are parsed as they are met. */
	a->copts.lazy_formats = true;
	/* --count prints no symbol: the kernel's symbols are not parsed. */
	a->copts.no_symbols = a->ropts.count_only && !a->like_trace_cmd && a->graph <= 0 && !a->stat;
	rc = tb_capture_open(a->input, &a->copts, &c);
	if (rc < 0) {
		fprintf(stderr, "tracebuf report: %s: cannot open: %s\n", a->input, strerror(-rc));
		return 2;
	}
	/* a live instance's formats are read as met: asking for every ID would read every one */
	if (a->filter && !tb_capture_is_live(c) && !filter_names_known(a, tb_capture_schema(c))) {
		tb_capture_close(c);
		return 2;
	}
	usyms = objects_load("report", a->input, a->objects);
	if (usyms)
		tb_usyms_register(usyms, tb_capture_schema(c));
	if (a->graph < 0) /* --count counts, whatever the tracer */
		a->graph = !a->ropts.count_only && !strcmp(tb_capture_tracer(c), "function_graph");
	if (a->like_trace_cmd)
		rc = tb_tcmd_print_capture(c, stdout, &a->topts, NULL);
	else if (a->graph)
		rc = tb_funcgraph_write(c, usyms, stdout, &a->gopts, NULL);
	else if (a->ropts.count_only)
		rc = report_count(c, &a->ropts);
	else if (a->stat)
		rc = report_printers(c, &a->ropts);
	else
		rc = tb_report_write(c, stdout, &a->ropts, NULL);
	/* Objects whose symbols could not be read were reported: damaged input too. */
	if (rc == 0 && usyms && tb_usyms_problems(usyms))
		rc = 1;
	tb_capture_close(c);
	tb_usyms_free(usyms);
	return exit_status("writing the report", rc);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {.graph = -1};
	enum tb_input_kind kind;
	int rc = parse_args(argc, argv, &a);

	/*
	 * A trace.dat has its own layouts and buffers; any other input
	 * is opened as a capture, which refuses what it cannot read.
	 */
	if (rc == 0)
		rc = tb_input_identify(a.input, NULL, NULL, true, &kind) == 0 && kind == TB_INPUT_TRACEDAT
			     ? report_tracedat(&a)
			     : report_capture(&a);
	else if (rc < 0)
		rc = 0; /* --help */
	/* An -F expression that did not fit an event it names: said, and a usage error. */
	if (tb_filter_set_failures(a.filter))
		rc = 2;
	tb_filter_set_free(a.filter);
	free(a.cpus);
	return rc;
}
