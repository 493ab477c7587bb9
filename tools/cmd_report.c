// SPDX-License-Identifier: MIT
/*
 * tracebuf report [--prefix P] [--no-header] [--clock CLOCK] DIR
 *
 * Print a capture directory or a live tracefs instance as the kernel's
 * `trace` text.  A live instance is consumed (its trace_pipe_raw is read).
 * Exit status: 0 clean, 1 some input was damaged (reported on stderr, the
 * rest printed), 2 usage or the input could not be opened at all.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf report [--prefix P] [--no-header] [--clock CLOCK] DIR\n"
		   "\n"
		   "DIR is a capture directory (header_page, formats/, cpuN.raw, ...) or a\n"
		   "live tracefs instance such as /sys/kernel/tracing/instances/NAME, whose\n"
		   "buffer is consumed.\n"
		   "\n"
		   "  --prefix P    raw and stats files are named PcpuN.raw, PcpuN.stats\n"
		   "  --no-header   print the events only\n"
		   "  --clock CLOCK the trace clock (local, x86-tsc, ...), for a capture\n"
		   "                that does not say which it is\n"
		   "  --stat        no event lines: per event, how many records were printed and\n"
		   "                by which printer (the kernel's own, the compiled print fmt,\n"
		   "                or libtraceevent with the reason), then the totals\n");
	return f == stderr ? 2 : 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"prefix", required_argument, NULL, 'p'},
		{"no-header", no_argument, NULL, 'n'},
		{"clock", required_argument, NULL, 'c'},
		{"stat", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct tb_capture_opts copts = {0};
	struct tb_report_opts ropts = {0};
	struct tb_report_totals totals;
	struct tb_capture *c;
	FILE *out = stdout;
	bool stat = false;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'p')
			copts.prefix = optarg;
		else if (opt == 'n')
			ropts.no_header = true;
		else if (opt == 'c')
			copts.clock = optarg;
		else if (opt == 's')
			stat = true;
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
	if (stat && !(out = fopen("/dev/null", "w"))) {
		fprintf(stderr, "tracebuf report: /dev/null: %s\n", strerror(errno));
		tb_capture_close(c);
		return 2;
	}
	rc = tb_report_write(c, out, &ropts, &totals);
	if (stat) {
		fclose(out);
		tb_report_write_printers(c, stdout);
		printf("\nevents %llu (unknown %llu), records skipped %llu, sub-buffers %llu (bad %llu), "
		       "LOST lines %llu (%llu events)\n",
		       (unsigned long long)totals.events, (unsigned long long)totals.unknown_events,
		       (unsigned long long)totals.bad_records, (unsigned long long)totals.pages,
		       (unsigned long long)totals.bad_pages, (unsigned long long)totals.lost_lines,
		       (unsigned long long)totals.lost_events);
	}
	tb_capture_close(c);
	if (rc < 0) {
		fprintf(stderr, "tracebuf report: writing the report: %s\n", strerror(-rc));
		return 2;
	}
	return rc ? 1 : 0;
}
