// SPDX-License-Identifier: MIT
/*
 * tracebuf report [--prefix P] [--no-header] [--clock CLOCK] [--stat]
 *                 [--graph|--no-graph] [--graph-opt OPT,...] [--objects FILE] DIR
 *
 * Print a capture directory or a live tracefs instance as the kernel's
 * `trace` text.  A live instance is consumed (its trace_pipe_raw is read).
 * When the capture's tracer is function_graph (a saved function trace,
 * tracebuf/func.h) the events print as the call graph that tracer prints;
 * user-space addresses are named from the objects file (DIR/objects).
 * Exit status: 0 clean, 1 some input was damaged (reported on stderr, the
 * rest printed), 2 usage or the input could not be opened at all.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "tracebuf/capture.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/report.h"
#include "tracebuf/usyms.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf report [--prefix P] [--no-header] [--clock CLOCK] [--stat]\n"
		   "                       [--graph | --no-graph] [--graph-opt OPT,...]\n"
		   "                       [--objects FILE] DIR\n"
		   "\n"
		   "DIR is a capture directory (header_page, formats/, cpuN.raw, ...) or a\n"
		   "live tracefs instance such as /sys/kernel/tracing/instances/NAME, whose\n"
		   "buffer is consumed.\n"
		   "\n"
		   "  --prefix P      raw and stats files are named PcpuN.raw, PcpuN.stats\n"
		   "  --no-header     print the events only\n"
		   "  --clock CLOCK   the trace clock (local, x86-tsc, ...), for a capture\n"
		   "                  that does not say which it is\n"
		   "  --stat          no event lines: per event, how many records were printed\n"
		   "                  and by which printer (the kernel's own, the compiled print\n"
		   "                  fmt, or libtraceevent with the reason), then the totals\n"
		   "  --graph         print function entries and exits as a call graph (the\n"
		   "                  default when the capture's tracer is function_graph)\n"
		   "  --no-graph      print every event as a line, whatever the tracer\n"
		   "  --graph-opt O   the kernel's funcgraph options: proc, abstime, tail,\n"
		   "                  overrun, retaddr, nocpu, noduration, nooverhead\n"
		   "  --objects FILE  name user-space addresses from the objects listed in FILE\n"
		   "                  (default: DIR/objects when it exists)\n");
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

/* The objects file given, or DIR/objects if there is one; NULL when none. */
static struct tb_usyms *load_objects(const char *dir, const char *file)
{
	char path[4096];
	struct tb_usyms *u = NULL;
	size_t len = 0, cap = 0;
	char *text = NULL;
	FILE *f;

	if (!file) {
		snprintf(path, sizeof(path), "%s/objects", dir);
		file = path;
	}
	f = fopen(file, "r");
	if (!f) {
		if (file != path)
			fprintf(stderr, "tracebuf report: %s: %s\n", file, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len + 4096 > cap) {
			char *grown = realloc(text, cap = cap ? 2 * cap : 65536);
			if (!grown)
				break;
			text = grown;
		}
		size_t n = fread(text + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	if (text && tb_usyms_load(&u, file, text, len, NULL, NULL) < 0)
		u = NULL;
	free(text);
	return u;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"prefix", required_argument, NULL, 'p'},
		{"no-header", no_argument, NULL, 'n'},
		{"clock", required_argument, NULL, 'c'},
		{"stat", no_argument, NULL, 's'},
		{"graph", no_argument, NULL, 'g'},
		{"no-graph", no_argument, NULL, 'G'},
		{"graph-opt", required_argument, NULL, 'o'},
		{"objects", required_argument, NULL, 'O'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct tb_capture_opts copts = {0};
	struct tb_report_opts ropts = {0};
	struct tb_report_totals totals;
	struct tb_graph_opts gopts = {0};
	const char *objects = NULL;
	struct tb_usyms *usyms;
	struct tb_capture *c;
	FILE *out = stdout;
	bool stat = false;
	int opt, rc, graph = -1;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'p')
			copts.prefix = optarg;
		else if (opt == 'n')
			ropts.no_header = gopts.no_header = true;
		else if (opt == 'c')
			copts.clock = optarg;
		else if (opt == 's')
			stat = true;
		else if (opt == 'g' || opt == 'G')
			graph = opt == 'g';
		else if (opt == 'o') {
			if (!graph_options(optarg, &gopts))
				return 2;
		} else if (opt == 'O')
			objects = optarg;
		else
			return usage(opt == 'h' ? stdout : stderr);
	}
	if (optind != argc - 1)
		return usage(stderr);
	rc = tb_capture_open(argv[optind], &copts, &c);
	if (rc < 0) {
		fprintf(stderr, "tracebuf report: %s: cannot open: %s\n", argv[optind], strerror(-rc));
		return 2;
	}
	usyms = load_objects(argv[optind], objects);
	if (usyms)
		tb_usyms_register(usyms, tb_capture_schema(c));
	if (graph < 0)
		graph = !strcmp(tb_capture_tracer(c), "function_graph");
	if (stat && !(out = fopen("/dev/null", "w"))) {
		fprintf(stderr, "tracebuf report: /dev/null: %s\n", strerror(errno));
		tb_capture_close(c);
		return 2;
	}
	if (graph)
		rc = tb_funcgraph_write(c, usyms, out, &gopts, NULL);
	else
		rc = tb_report_write(c, out, &ropts, &totals);
	if (stat) {
		fclose(out);
		tb_report_write_printers(c, stdout);
		if (!graph)
			printf("\nevents %llu (unknown %llu), records skipped %llu, sub-buffers %llu "
			       "(bad %llu), LOST lines %llu (%llu events)\n",
			       (unsigned long long)totals.events, (unsigned long long)totals.unknown_events,
			       (unsigned long long)totals.bad_records, (unsigned long long)totals.pages,
			       (unsigned long long)totals.bad_pages, (unsigned long long)totals.lost_lines,
			       (unsigned long long)totals.lost_events);
	}
	/* Objects whose symbols could not be read were reported: damaged input too. */
	if (rc == 0 && usyms && tb_usyms_problems(usyms))
		rc = 1;
	tb_capture_close(c);
	tb_usyms_free(usyms);
	if (rc < 0) {
		fprintf(stderr, "tracebuf report: writing the report: %s\n", strerror(-rc));
		return 2;
	}
	return rc ? 1 : 0;
}
