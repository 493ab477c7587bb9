// SPDX-License-Identifier: MIT
/*
 * tracebuf dump [--records] [--no-pages] [--buffer NAME] [--cpu N] FILE.dat
 *
 * A trace.dat taken apart: its parts with offsets and sizes, its options,
 * buffers and formats, then one line per sub-buffer (or, with --records,
 * one per record).  Exit status: cli_opts.h's table; 1 is damage met
 * (reported on stderr, the dump goes on).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "tracebuf/tracedat.h"

static bool has_cpu(const struct tb_tracedat *td, int cpu)
{
	for (int b = 0; b < tb_tracedat_buffer_count(td); b++)
		for (int c = 0; c < tb_tracedat_buffer(td, b)->ncpus; c++)
			if (tb_tracedat_buffer(td, b)->cpus[c].cpu == cpu)
				return true;
	return false;
}

enum { O_INPUT, O_RECORDS, O_NO_PAGES, O_BUFFER, O_CPU, O_N };
static const struct cli_opt opts[] = {
    [O_INPUT] = {"input", 'i', CLI_STRING, "FILE", "the input (or as the operand)", "-i"},
    [O_RECORDS] = {"records", 0, CLI_FLAG, NULL, "every record: offset, kind, delta, time, event, pid"},
    [O_NO_PAGES] = {"no-pages", 0, CLI_FLAG, NULL, "the parts only"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME", "only this buffer's pages (\"\" is the top buffer)", "-B"},
    [O_CPU] = {"cpu", 0, CLI_INT, "N", "only this CPU's pages", "--cpu", .min = 0, .max = 65535},
};

static int run(int argc, char **argv);

const struct cli_command cli_dump = {
    "dump", "a trace.dat's sections and sub-buffers, annotated", "[OPTIONS] FILE.dat",
    "The parts of a trace.dat (offset, size, what), its options, buffers and formats, then every "
    "sub-buffer: where it lies, its time stamp, commit size, loss flags and record counts.",
    opts, O_N, .run = run,
    .exit_notes = "damage met (each said on stderr with its byte; the dump goes on)",
};

static int run(int argc, char **argv)
{
	struct tb_tracedat_dump_opts o = {.cpu = -1};
	struct tb_tracedat *td;
	const char *in = NULL;
	struct cli_args a;
	int rc = cli_parse(&cli_dump, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	o.records = cli_given(&a, O_RECORDS);
	o.no_pages = cli_given(&a, O_NO_PAGES);
	o.buffer = cli_str(&a, O_BUFFER);
	if (cli_given(&a, O_CPU))
		o.cpu = (int)cli_num(&a, O_CPU);
	rc = cli_one_input(&a, O_INPUT, &in);
	cli_free(&a);
	if (rc)
		return rc;
	rc = tb_tracedat_open(in, NULL, &td);
	if (rc < 0) {
		return cli_input_error(&cli_dump, in, -rc);
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
		return CLI_EXIT_OUTPUT;
	}
	return rc;
}
