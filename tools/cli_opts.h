// SPDX-License-Identifier: MIT
/*
 * The command-line layer: every subcommand declares its options once, in a
 * table, and this one parser reads them, prints `--help`, writes the man
 * pages and the bash completion (tracebuf __man / __complete).  The same
 * table is the source of all four, so they cannot drift apart.
 *
 * Adding a subcommand (docs/cli.md says the same for users):
 *   1. in tools/cmd_NAME.c, an enum of its option indices and a table
 *        enum { O_OUTPUT, O_COUNT, O_N };
 *        static const struct cli_opt opts[] = {
 *            [O_OUTPUT] = {"output", 'o', CLI_STRING, "FILE", "the file to write", "-o"},
 *            [O_COUNT] = {"count", 0, CLI_INT, "N", "how many", .min = 1, .max = 1000},
 *        };
 *        const struct cli_command cli_NAME = {"NAME", "what it does (one line)",
 *            "[OPTIONS] INPUT", "The paragraph of the man page's DESCRIPTION.",
 *            opts, O_N, cmd_NAME};
 *   2. cmd_NAME(argc, argv) starts with
 *        struct cli_args a;
 *        int rc = cli_parse(&cli_NAME, argc, argv, &a);
 *        if (rc != CLI_PARSED) return rc;   (help printed: 0; usage error said: 2)
 *      and reads cli_str(&a, O_OUTPUT), cli_num(&a, O_COUNT), a.operands...
 *   3. one line in tools/cmds.h (extern const struct cli_command cli_NAME)
 *      and one in tools/tracebuf.c's list.
 * Its help, man page tracebuf-NAME(1), completion and the CLI table test
 * (tests/t_cli_table.sh, one row) follow from that.
 *
 * Letters mean one thing in every subcommand (docs/cli.md has the table):
 * -e event(s), -o output, -i input, -b buffer size in KiB, -B buffer
 * (instance) name, -C clock, -F filter, -q quiet, -h help; a new option
 * takes its letter's meaning or no letter.
 */
#ifndef TRACEBUF_TOOLS_CLI_OPTS_H
#define TRACEBUF_TOOLS_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The exit status of every subcommand (docs/cli.md, tracebuf(1) EXIT STATUS). */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FINDINGS = 1, /* done, and something to report: damage, losses, nothing matched */
	CLI_EXIT_USAGE = 2,    /* the command line: an option, a value, a name that does not exist */
	CLI_EXIT_INPUT = 3,    /* an input missing, unreadable or not of a kind tracebuf reads */
	CLI_EXIT_OUTPUT = 4,   /* an output that cannot be written */
	CLI_EXIT_SYSTEM = 5,   /* the system: no tracefs, not permitted, out of memory */
};

/* What cli_parse returns when the command should go on (any other value is the exit status). */
#define CLI_PARSED (-1)

enum cli_kind {
	CLI_FLAG,     /* no value */
	CLI_INT,      /* a decimal integer within [min, max] */
	CLI_SIZE,     /* KiB, with K, M or G (x1, x1024, x1048576), within [min, max] KiB */
	CLI_DURATION, /* ns from "250ms", "2s", "1m", "1.5s" or seconds alone, within [min, max] ns */
	CLI_ENUM,     /* one of choices (NULL-terminated); cli_num is its index */
	CLI_STRING,   /* any text; the last given wins */
	CLI_LIST,     /* repeatable: every value kept, in order */
};

struct cli_opt {
	const char *name;      /* the long name, without "--" */
	char letter;	       /* the short letter, 0 for none */
	enum cli_kind kind;
	const char *arg;       /* the value's name in help and man page ("KB", "FILE") */
	const char *help;      /* one sentence */
	const char *trace_cmd; /* trace-cmd's spelling of the same thing, NULL when none */
	long long min, max;    /* CLI_INT, CLI_SIZE, CLI_DURATION (max 0: no bound) */
	const char *const *choices; /* CLI_ENUM */
	const char *old;       /* an old long spelling still taken, with a note on stderr */
	const char *also;      /* another long spelling taken as it is (trace-cmd's), no note */
};

struct cli_args;

struct cli_command {
	const char *name;
	const char *summary;	 /* one line: tracebuf help, tracebuf(1) */
	const char *synopsis;	 /* after "tracebuf NAME "; '\n' separates forms */
	const char *description; /* paragraphs, '\n\n' between them */
	const struct cli_opt *opts;
	int nopts;
	int (*run)(int argc, char **argv);
	bool operands_end_options; /* the first operand starts a program's command line */
	bool long_work;		   /* it reads or writes much: --quiet, --progress */
	bool results_on_stdout;	   /* its results go to stdout: no progress line between them on a terminal */
	const char *exit_notes;	   /* what 1 (findings) means for this command, NULL: nothing found */
	void (*more_help)(FILE *f); /* lines after the options (help and man page), NULL: none */
};

struct cli_value {
	int given; /* how many times */
	const char *str;
	long long num;
	const char **list; /* CLI_LIST: every value */
	int first_at;	   /* the argv index of the first (for options whose order matters) */
	int *at;	   /* CLI_LIST: each value's argv index */
};

enum cli_progress_mode { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF };

struct cli_args {
	const struct cli_command *cmd;
	struct cli_value *v; /* by option index */
	char **operands;     /* what is not an option, in order (NULL-terminated) */
	int noperands;
	bool dashdash;	     /* "--" ended the options */
	enum cli_progress_mode progress; /* --quiet, --progress */
};

/*
 * argv[0] is the subcommand's name.  CLI_PARSED, a->operands set; or the
 * exit status: 0 after --help, CLI_EXIT_USAGE after a usage error said on
 * stderr (naming the option and the value), with a released already.
 * After CLI_PARSED, cli_free releases a (freeing twice is harmless).
 */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, struct cli_args *a);
void cli_free(struct cli_args *a);

static inline bool cli_given(const struct cli_args *a, int i) { return a->v[i].given > 0; }
static inline const char *cli_str(const struct cli_args *a, int i) { return a->v[i].str; }
static inline long long cli_num(const struct cli_args *a, int i) { return a->v[i].num; }

/* An operand read as option kind (CLI_INT, CLI_SIZE, CLI_DURATION) would be: 0, or the usage error said. */
int cli_operand_number(const struct cli_command *cmd, const char *name, enum cli_kind kind, long long min,
		       long long max, const char *s, long long *v);

/* CLI_LIST's values joined by ',' (malloc'd; NULL when none given or out of memory). */
char *cli_join(const struct cli_args *a, int i);

/* The one input, -i's (option opt) or the one operand: 0, or the usage error said. */
int cli_one_input(struct cli_args *a, int opt, const char **in);

/* A usage error: "tracebuf CMD: MESSAGE" and a pointer to --help; CLI_EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * An input that could not be opened: "tracebuf CMD: PATH: why" (with what
 * to do for the common errnos); CLI_EXIT_INPUT.
 */
int cli_input_error(const struct cli_command *cmd, const char *path, int err);

/*
 * The status of work that failed with errno err, said already: an output's
 * errors (no space, exists, not empty, EIO) 4, the system's (memory, files,
 * no such device) 5, anything else the input's, 3.
 */
int cli_exit_for(int err);

/*
 * Whether long work shows its progress line: --progress, --quiet, else
 * stderr is a terminal (and stdout is not, when the results go there).
 */
bool cli_show_progress(const struct cli_args *a);

/* Whether to colour what goes to f: --color, NO_COLOR, and f a terminal. */
bool cli_color(FILE *f);

/*
 * Help, man page and completion, from the table.  A man page takes the
 * prose of docs/man/NAME.roff (details: its path, NULL for none) as it is;
 * -1 when it cannot be read (said).
 */
void cli_print_help(const struct cli_command *cmd, FILE *f);
int cli_print_man(const struct cli_command *cmd, FILE *f, const char *details);
int cli_print_man_index(const struct cli_command *const *cmds, size_t n, FILE *f, const char *details);
void cli_print_completion(const struct cli_command *const *cmds, size_t n, FILE *f);

/* The exit-status table, as help and man pages print it. */
extern const char *const cli_exit_table[][2];

#endif
