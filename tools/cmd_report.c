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
 * (DIR/objects).  Exit status: cli_opts.h's table; 1 is some input damaged
 * (reported on stderr, the rest printed).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_progress.h"
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
	bool progress;                /* the progress line (cli_progress.h) */
	char *trace_options;          /* --options, ','-joined; NULL when none */
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
	O_INPUT, O_FILTER, O_INVERT, O_NSEC, O_RAW, O_LATENCY, O_NO_PLUGINS, O_CPU, O_STAT, O_LIKE_TC, O_LIKE_KERNEL,
	O_BUFFER, O_PREFIX, O_NO_HEADER, O_CLOCK, O_GRAPH, O_NO_GRAPH, O_GRAPH_OPT, O_TOTALS, O_OBJECTS, O_TRACE_OPTIONS, O_N
};
static const struct cli_opt opts[] = {
    [O_INPUT] = {"input", 'i', CLI_STRING, "FILE", "the input (or as the operand)", "-i"},
    [O_FILTER] = {"filter", 'F', CLI_LIST, "'EVENTS: EXPR'",
		  "only these events, and of them the records EXPR (the kernel's filter language) keeps; EVENTS is "
		  "SYSTEM/EVENT, SYSTEM or EVENT (regular expressions), ','-separated; repeatable (a record any -F "
		  "keeps is printed)",
		  "-F"},
    [O_INVERT] = {"invert", 'v', CLI_FLAG, NULL, "the -F options after it drop what they match", "-v"},
    [O_NSEC] = {"nsec", 't', CLI_FLAG, NULL, "trace-cmd's layout: nanosecond time stamps", "-t"},
    [O_RAW] = {"raw", 'R', CLI_FLAG, NULL, "trace-cmd's layout: raw events, every field as name=value", "-R"},
    [O_LATENCY] = {"latency", 'l', CLI_FLAG, NULL, "trace-cmd's layout: the latency columns (irqs-off, need-resched, ...)",
		   "-l"},
    [O_NO_PLUGINS] = {"no-plugins", 'N', CLI_FLAG, NULL, "trace-cmd's layout: every event by its print fmt alone", "-N"},
    [O_CPU] = {"cpu", 0, CLI_STRING, "LIST",
	       "only these CPUs (\"0,2-3\"), numbered as trace-cmd does: the top buffer's CPUs first, then each "
	       "instance's",
	       "--cpu"},
    [O_STAT] = {"stat", 0, CLI_FLAG, NULL,
		"FILE.dat: the per-CPU stats stored in it; DIR: per event, how many records were printed and by which "
		"printer, then the totals",
		"--stat"},
    [O_LIKE_TC] = {"like-trace-cmd", 0, CLI_FLAG, NULL,
		   "trace-cmd's layout for DIR as well; for FILE.dat the event text too (libtraceevent's)"},
    [O_LIKE_KERNEL] = {"like-kernel", 0, CLI_FLAG, NULL, "the kernel's `trace` text for FILE.dat (one buffer)"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME",
		  "with --like-kernel: the instance to print (default: the first buffer with data; \"\" is the top "
		  "buffer); with --count: the one buffer counted",
		  "-B"},
    [O_PREFIX] = {"prefix", 0, CLI_STRING, "P", "raw and stats files are named PcpuN.raw, PcpuN.stats"},
    [O_NO_HEADER] = {"no-header", 0, CLI_FLAG, NULL, "the kernel's layout: print the events only"},
    [O_CLOCK] = {"clock", 'C', CLI_STRING, "CLOCK",
		 "the trace clock (local, x86-tsc, ...), for a capture that does not say which it is"},
    [O_GRAPH] = {"graph", 0, CLI_FLAG, NULL,
		 "print function entries and exits as a call graph (the default when the tracer is function_graph)"},
    [O_NO_GRAPH] = {"no-graph", 0, CLI_FLAG, NULL, "print every event as a line, whatever the tracer"},
    [O_GRAPH_OPT] = {"graph-opt", 0, CLI_LIST, "O",
		     "the kernel's funcgraph options: proc, abstime, tail, overrun, retaddr, nocpu, noduration, "
		     "nooverhead (','-separated, repeatable)"},
    [O_TOTALS] = {"count", 0, CLI_FLAG, NULL,
		  "decode and merge every record, print no text: the totals line (FILE.dat: every buffer, or --buffer)"},
    [O_OBJECTS] = {"objects", 0, CLI_STRING, "FILE",
		   "name user-space addresses from the objects listed in FILE (default: DIR/objects when it exists)"},
    [O_TRACE_OPTIONS] = {"options", 0, CLI_LIST, "WORD[,WORD]",
			 "the kernel's layout: trace_options words over the capture's saved ones, as writing them to "
			 "trace_options would (noirq-info, record-tgid, fields, verbose, sym-offset, raw, ...; repeatable)"},
};

static int run(int argc, char **argv);

const struct cli_command cli_report = {
    "report", "print a capture, live instance or trace.dat as text", "[OPTIONS] DIR | FILE.dat\n[OPTIONS] -i FILE.dat",
    "DIR is a capture directory (header_page, formats/, cpuN.raw, ...) or a live tracefs instance such as "
    "/sys/kernel/tracing/instances/NAME, whose buffer is consumed; it prints as the kernel's `trace` file.  "
    "FILE.dat is a trace-cmd trace.dat; it prints in `trace-cmd report`'s layout with the kernel's text of each "
    "event.",
    opts, O_N, .run = run, .long_work = true, .results_on_stdout = true,
    .exit_notes = "some input was damaged (reported on stderr, the rest printed)",
};

/* -F in order, each after a -v dropping what it matches. */
static bool add_filters(struct report_args *r, const struct cli_args *a)
{
	const struct cli_value *f = &a->v[O_FILTER];

	for (int i = 0; i < f->given; i++) {
		r->exclude = cli_given(a, O_INVERT) && a->v[O_INVERT].first_at < f->at[i];
		if (!add_filter(r, f->list[i]))
			return false;
	}
	return true;
}

/* Every --options word checked (a mistyped one would change nothing) and all joined, in order. */
static bool take_trace_options(struct report_args *r, const struct cli_args *a)
{
	const struct cli_value *v = &a->v[O_TRACE_OPTIONS];
	size_t len = 0, bad_len;
	const char *bad;
	unsigned bits = 0;

	for (int i = 0; i < v->given; i++) {
		if (tb_topt_apply(v->list[i], true, &bits, &bad, &bad_len) < 0) {
			cli_usage_error(&cli_report, "--options: '%.*s' is not a trace option report honours "
					"(irq-info, context-info, record-tgid, raw, hex, bin, latency-format, fields, "
					"verbose, sym-offset, sym-addr, sym-userobj, print-parent, annotate, printk-msg-only, "
					"trace_printk, each or its no- form)",
					(int)bad_len, bad);
			return false;
		}
		len += strlen(v->list[i]) + 1;
	}
	if (!v->given)
		return true;
	r->trace_options = calloc(1, len);
	if (!r->trace_options)
		return false;
	for (int i = 0; i < v->given; i++) {
		if (i)
			strcat(r->trace_options, ",");
		strcat(r->trace_options, v->list[i]);
	}
	r->ropts.options = r->trace_options;
	return true;
}

static int take_args(struct report_args *r, struct cli_args *a)
{
	r->copts.prefix = cli_str(a, O_PREFIX);
	r->ropts.no_header = r->gopts.no_header = cli_given(a, O_NO_HEADER);
	if (cli_given(a, O_GRAPH) || cli_given(a, O_NO_GRAPH))
		r->graph = a->v[O_GRAPH].first_at > a->v[O_NO_GRAPH].first_at || !cli_given(a, O_NO_GRAPH);
	for (int i = 0; i < a->v[O_GRAPH_OPT].given; i++) {
		char *list = strdup(a->v[O_GRAPH_OPT].list[i]);
		bool ok = list && graph_options(list, &r->gopts);
		free(list);
		if (!ok)
			return CLI_EXIT_USAGE;
	}
	r->objects = cli_str(a, O_OBJECTS);
	r->progress = cli_show_progress(a);
	r->copts.clock = cli_str(a, O_CLOCK);
	r->like_trace_cmd = cli_given(a, O_LIKE_TC);
	r->like_kernel = cli_given(a, O_LIKE_KERNEL);
	r->buffer = cli_str(a, O_BUFFER);
	r->stat = cli_given(a, O_STAT);
	r->ropts.count_only = cli_given(a, O_TOTALS);
	r->topts.nsec = cli_given(a, O_NSEC);
	r->topts.raw = cli_given(a, O_RAW);
	r->topts.latency = cli_given(a, O_LATENCY);
	r->topts.no_plugins = cli_given(a, O_NO_PLUGINS);
	if (!add_filters(r, a))
		return CLI_EXIT_USAGE;
	if (!take_trace_options(r, a))
		return CLI_EXIT_USAGE;
	if (cli_given(a, O_CPU) && add_cpu_list(r, cli_str(a, O_CPU)) < 0)
		return cli_usage_error(&cli_report, "--cpu '%s': not a list of CPUs such as 0,2-3", cli_str(a, O_CPU));
	if (r->like_kernel && r->like_trace_cmd)
		return cli_usage_error(&cli_report, "--like-kernel or --like-trace-cmd, not both");
	return cli_one_input(a, O_INPUT, &r->input);
}

static int parse_args(int argc, char **argv, struct report_args *r)
{
	struct cli_args a;
	int rc = cli_parse(&cli_report, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	rc = take_args(r, &a);
	cli_free(&a);
	if (rc)
		return rc;
	/* A trace.dat's events print in the kernel's text unless trace-cmd's is asked for. */
	r->topts.kernel_text = !r->like_trace_cmd;
	r->topts.cpus = r->cpus;
	r->topts.ncpus = r->ncpus;
	r->topts.filter = r->ropts.filter = r->filter;
	return CLI_PARSED;
}

static int exit_status(const char *what, int rc)
{
	if (rc < 0) {
		fprintf(stderr, "tracebuf report: %s: %s\n", what, strerror(-rc));
		return cli_exit_for(-rc);
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

	if (rc < 0)
		return cli_input_error(&cli_report, a->input, -rc);
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

/* Whether the trace options the text is to be laid out by can be: bin is refused, saying why. */
static bool trace_options_printable(const struct report_args *a, const struct tb_capture *c)
{
	unsigned bits = tb_capture_trace_options(c);

	if (a->trace_options)
		tb_topt_apply(a->trace_options, true, &bits, NULL, NULL);
	if (bits & TB_TOPT_BIN) {
		fprintf(stderr, "tracebuf report: %s: trace option bin is on: the kernel's `trace` holds binary "
			"records then, not text, and tracebuf prints text (--options nobin prints it)\n", a->input);
		return false;
	}
	return true;
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
	if (rc < 0)
		return cli_input_error(&cli_report, a->input, -rc);
	/* a live instance's formats are read as met: asking for every ID would read every one */
	if (a->filter && !tb_capture_is_live(c) && !filter_names_known(a, tb_capture_schema(c))) {
		tb_capture_close(c);
		return 2;
	}
	usyms = objects_load("report", a->input, a->objects);
	if (usyms)
		tb_usyms_register(usyms, tb_capture_schema(c));
	if (!trace_options_printable(a, c)) {
		tb_capture_close(c);
		tb_usyms_free(usyms);
		return cli_exit_for(ENOTSUP);
	}
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

static int run(int argc, char **argv)
{
	struct report_args a = {.graph = -1};
	enum tb_input_kind kind;
	int rc = parse_args(argc, argv, &a);

	/*
	 * A trace.dat has its own layouts and buffers; any other input
	 * is opened as a capture, which refuses what it cannot read.
	 */
	if (rc == CLI_PARSED) {
		struct cli_progress *pg = cli_progress_start(&cli_report, a.progress, a.input);
		rc = tb_input_identify(a.input, NULL, NULL, true, &kind) == 0 && kind == TB_INPUT_TRACEDAT
			     ? report_tracedat(&a)
			     : report_capture(&a);
		cli_progress_stop(pg);
	}
	/* An -F expression that did not fit an event it names: said, and a usage error. */
	if (tb_filter_set_failures(a.filter))
		rc = CLI_EXIT_USAGE;
	tb_filter_set_free(a.filter);
	free(a.cpus);
	free(a.trace_options);
	return rc;
}
