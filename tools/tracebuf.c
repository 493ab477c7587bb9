// SPDX-License-Identifier: MIT
/*
 * tracebuf - command-line front end.  Each subcommand lives in its own
 * tools/cmd_*.c file and is listed here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"capture", cmd_capture, "trace a command in a private tracefs instance and save it"},
	{"report", cmd_report, "print a capture, live instance or trace.dat as text"},
	{"hist", cmd_hist, "the kernel's hist triggers over a trace.dat, capture or live instance"},
	{"convert", cmd_convert, "write a capture directory as a trace.dat (trace-cmd's format)"},
	{"record", cmd_record, "run a program with its ring in shared memory and write a trace.dat"},
	{"snapshot", cmd_snapshot, "copy what a flight-recorder session holds now into a trace.dat"},
	{"recover", cmd_recover, "the committed events of a session whose writers died, as a trace.dat"},
	{"dump", cmd_dump, "a trace.dat's sections and sub-buffers, annotated"},
	{"size", cmd_size, "kernel buffer sizing arithmetic for a per-CPU size"},
	{"stats", cmd_stats, "a kernel's per-CPU stats with written, lost share and time window"},
	{"demo", cmd_demo, "fill a small ring far past its size and show every read path"},
	{"list", cmd_list, "the events of a trace.dat, a capture directory or a program"},
	{"sql", cmd_sql, "traces as SQL tables in SQLite: load, query (docs/sql.md)"},
	{"offcpu", cmd_offcpu, "off-CPU time by blocking stack: folded stacks, SVG flame graph"},
	{"formats", cmd_formats, "the format files of a program's events (tracebuf/tracepoint.h)"},
};

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nSee tracebuf(1).\n");
	return f == stderr ? 2 : 0;
}

/*
 * What a command printed on stdout and could not write (a full disk, a closed
 * pipe's EIO) is an error, not a success: most commands print with stdio and
 * return before its buffer is flushed.  A command that failed keeps its status.
 */
static int checked_stdout(const char *name, int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	fprintf(stderr, "tracebuf %s: writing standard output: %s\n", name, strerror(errno));
	return rc ? rc : 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return usage(stdout);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return checked_stdout(argv[1], commands[i].run(argc - 1, argv + 1));
	fprintf(stderr, "tracebuf: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
