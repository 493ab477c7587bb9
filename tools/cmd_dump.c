// SPDX-License-Identifier: MIT
/*
 * tracebuf dump [--records] [--no-pages] [--buffer NAME] [--cpu N] FILE.dat
 *
 * A trace.dat taken apart: its parts with offsets and sizes, its options,
 * buffers and formats, then one line per sub-buffer (or, with --records,
 * one per record).  Exit status: 0, 1 damage met (reported on stderr, the
 * dump goes on), 2 usage or the file could not be read at all.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "tracebuf/tracedat.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf dump [OPTIONS] FILE.dat\n"
		   "\n"
		   "The parts of a trace.dat (offset, size, what), its options, buffers and\n"
		   "formats, then every sub-buffer: where it lies, its time stamp, commit size,\n"
		   "loss flags and record counts.\n"
		   "\n"
		   "  --records      every record: offset, kind, delta, time, event, pid\n"
		   "  --no-pages     the parts only\n"
		   "  --buffer NAME  only this buffer's pages (\"\" is the top buffer)\n"
		   "  --cpu N        only this CPU's pages\n"
		   "  -i FILE        the input, as trace-cmd takes it\n");
	return f == stderr ? 2 : 0;
}

static bool has_cpu(const struct tb_tracedat *td, int cpu)
{
	for (int b = 0; b < tb_tracedat_buffer_count(td); b++)
		for (int c = 0; c < tb_tracedat_buffer(td, b)->ncpus; c++)
			if (tb_tracedat_buffer(td, b)->cpus[c].cpu == cpu)
				return true;
	return false;
}

int cmd_dump(int argc, char **argv)
{
	enum { OPT_RECORDS = 256, OPT_NO_PAGES, OPT_BUFFER, OPT_CPU };
	static const struct option longopts[] = {
	    {"records", no_argument, NULL, OPT_RECORDS},
	    {"no-pages", no_argument, NULL, OPT_NO_PAGES},
	    {"buffer", required_argument, NULL, OPT_BUFFER},
	    {"cpu", required_argument, NULL, OPT_CPU},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct tb_tracedat_dump_opts o = {.cpu = -1};
	struct tb_tracedat *td;
	const char *in = NULL;
	char *end;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "hi:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			in = optarg;
			break;
		case OPT_RECORDS:
			o.records = true;
			break;
		case OPT_NO_PAGES:
			o.no_pages = true;
			break;
		case OPT_BUFFER:
			o.buffer = optarg;
			break;
		case OPT_CPU:
			o.cpu = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || o.cpu < 0)
				return usage(stderr);
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (!in && optind == argc - 1)
		in = argv[optind++];
	if (!in || optind != argc)
		return usage(stderr);
	rc = tb_tracedat_open(in, NULL, &td);
	if (rc < 0) {
		fprintf(stderr, "tracebuf dump: %s: cannot open: %s\n", in, strerror(-rc));
		return 2;
	}
	/* A buffer or CPU the file lacks would leave every page out, and nothing say why. */
	if (o.buffer && tb_tracedat_buffer_find(td, o.buffer) < 0) {
		fprintf(stderr, "tracebuf dump: %s has no buffer '%s'\n", in, o.buffer);
		tb_tracedat_close(td);
		return 2;
	}
	if (o.cpu >= 0 && !has_cpu(td, o.cpu)) {
		fprintf(stderr, "tracebuf dump: %s has no CPU %d\n", in, o.cpu);
		tb_tracedat_close(td);
		return 2;
	}
	rc = tb_tracedat_dump(td, stdout, &o);
	if (rc == 0 && tb_tracedat_problems(td))
		rc = 1;
	tb_tracedat_close(td);
	if (rc < 0) {
		fprintf(stderr, "tracebuf dump: writing: %s\n", strerror(-rc));
		return 2;
	}
	return rc;
}
