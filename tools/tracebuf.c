// SPDX-License-Identifier: MIT
/*
 * tracebuf - command-line front end.  Each subcommand lives in its own
 * tools/cmd_*.c file as a table (cli_opts.h) and is listed here; help, the
 * man pages and the bash completion are printed from those tables.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"

static const struct cli_command *const commands[] = {
    &cli_capture, &cli_report, &cli_hist,  &cli_convert, &cli_record, &cli_snapshot, &cli_recover,
    &cli_dump,	  &cli_size,   &cli_stats, &cli_demo,    &cli_list,   &cli_offcpu,   &cli_formats, &cli_sql,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf COMMAND [OPTIONS] [ARGS]\n       tracebuf help COMMAND\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nExit status (every command):\n");
	for (int i = 0; cli_exit_table[i][0]; i++)
		fprintf(f, "  %s  %s\n", cli_exit_table[i][0], cli_exit_table[i][1]);
	fprintf(f, "\nSee tracebuf(1), tracebuf-COMMAND(1) and docs/cli.md.\n");
	return f == stderr ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i]->name))
			return commands[i];
	return NULL;
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
	return rc ? rc : CLI_EXIT_OUTPUT;
}

static int unknown(const char *name)
{
	fprintf(stderr, "tracebuf: unknown command '%s'\n", name);
	return usage(stderr);
}

/*
 * The hidden modes the build uses: __complete; __man CMD [DETAILS.roff] for
 * tracebuf-CMD(1), __man tracebuf [DETAILS.roff] for tracebuf(1).
 */
static int generate(int argc, char **argv)
{
	const char *details = argc > 3 ? argv[3] : NULL;
	int rc = 0;

	if (!strcmp(argv[1], "__complete"))
		cli_print_completion(commands, NCOMMANDS, stdout);
	else if (argc < 3)
		return usage(stderr);
	else if (!strcmp(argv[2], "tracebuf"))
		rc = cli_print_man_index(commands, NCOMMANDS, stdout, details);
	else if (find(argv[2]))
		rc = cli_print_man(find(argv[2]), stdout, details);
	else
		return unknown(argv[2]);
	return checked_stdout(argv[1], rc < 0 ? CLI_EXIT_INPUT : CLI_EXIT_OK);
}

int main(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "__man") || !strcmp(argv[1], "__complete"))
		return generate(argc, argv);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		if (argc < 3)
			return usage(stdout);
		if (!(c = find(argv[2])))
			return unknown(argv[2]);
		cli_print_help(c, stdout);
		return checked_stdout(argv[2], CLI_EXIT_OK);
	}
	if (!(c = find(argv[1])))
		return unknown(argv[1]);
	return checked_stdout(argv[1], c->run(argc - 1, argv + 1));
}
