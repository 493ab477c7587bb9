// SPDX-License-Identifier: MIT
/* The command-line layer: one parser, help, man pages and completion from the tables (cli_opts.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_opts.h"

/* ------------------------------------------------------------ common */

static const char *const color_choices[] = {"auto", "always", "never", NULL};

/* What every subcommand takes (help, colour), and long work besides (quiet, progress). */
enum { C_HELP, C_COLOR, C_QUIET, C_PROGRESS, C_N };
static const struct cli_opt common_opts[C_N] = {
    [C_HELP] = {"help", 'h', CLI_FLAG, NULL, "print this help and exit", "-h"},
    [C_COLOR] = {"color", 0, CLI_ENUM, "WHEN", "colour on a terminal: auto (default; NO_COLOR set: never), always or never",
		 .choices = color_choices},
    [C_QUIET] = {"quiet", 'q', CLI_FLAG, NULL, "no progress line and no summary on stderr", "-q"},
    [C_PROGRESS] = {"progress", 0, CLI_FLAG, NULL, "a progress line on stderr even when it is not a terminal"},
};

/* Set by --color for the run (one command a process). */
static int color_mode = 0; /* index into color_choices */

static int common_count(const struct cli_command *cmd)
{
	return cmd->long_work ? C_N : C_QUIET;
}

/* Option k of the command: its own first, then the common ones. */
static const struct cli_opt *opt_at(const struct cli_command *cmd, int k)
{
	return k < cmd->nopts ? &cmd->opts[k] : &common_opts[k - cmd->nopts];
}

static int opt_total(const struct cli_command *cmd)
{
	return cmd->nopts + common_count(cmd);
}

const char *const cli_exit_table[][2] = {
    {"0", "success"},
    {"1", "done, with findings the command reports: damaged input (each place named with its file "
	  "and byte), losses, or nothing of what was asked for"},
    {"2", "usage: an unknown option, a value out of range, a name (event, buffer, format) that does not exist"},
    {"3", "an input is missing, unreadable, a directory where a file is wanted, or not of a kind tracebuf reads"},
    {"4", "an output cannot be written (a directory not empty, a full disk, standard output closed)"},
    {"5", "the system: tracefs not mounted, not permitted, out of memory"},
    {NULL, NULL},
};

/* ------------------------------------------------------------ errors */

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tracebuf %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: tracebuf %s %.*s\n(tracebuf %s --help for every option)\n", cmd->name,
		(int)strcspn(cmd->synopsis, "\n"), cmd->synopsis, cmd->name);
	return CLI_EXIT_USAGE;
}

/* What the user can do about err on path, or NULL. */
static const char *input_advice(const char *path, int err)
{
	struct stat st;
	bool is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);

	if (is_dir && err == ENOENT) /* it is there: a file inside it was missing */
		return "not a capture directory: give one written by `tracebuf capture`, or a trace.dat file";
	if (is_dir && err == EINVAL)
		err = EISDIR; /* a reader of files refused it as not one */
	switch (err) {
	case ENOENT:
		return "check the path";
	case EACCES:
	case EPERM:
		return "check its permissions";
	case EISDIR:
		return "a file is wanted here, not a directory";
	case ENOTDIR:
		return "a directory is wanted here, not a file";
	default:
		return NULL;
	}
}

int cli_input_error(const struct cli_command *cmd, const char *path, int err)
{
	const char *todo = input_advice(path, err);

	/*
	 * The library has said what went wrong already ("PATH: byte 0: no such
	 * file", through the problem printer): only what to do is added, so the
	 * reason is not said twice.
	 */
	if (todo)
		fprintf(stderr, "tracebuf %s: %s: %s\n", cmd->name, path, todo);
	else
		fprintf(stderr, "tracebuf %s: %s: cannot open: %s\n", cmd->name, path, strerror(err));
	return CLI_EXIT_INPUT;
}

int cli_exit_for(int err)
{
	switch (err) {
	case ENOSPC: case EROFS: case EEXIST: case ENOTEMPTY: case EFBIG: case EIO: case EPIPE: case EDQUOT:
	/* an output that is a server (convert --clickhouse) it cannot reach */
	case ECONNREFUSED: case ECONNRESET: case EHOSTUNREACH: case ENETUNREACH: case ETIMEDOUT:
		return CLI_EXIT_OUTPUT;
	case ENOMEM: case EMFILE: case ENFILE: case ENOSYS: case ENODEV:
		return CLI_EXIT_SYSTEM;
	default:
		return CLI_EXIT_INPUT;
	}
}

/* "-x" or "--name", as the user wrote it, for messages. */
static void spelling(const struct cli_opt *o, bool as_long, char *buf, size_t n)
{
	if (as_long || !o->letter)
		snprintf(buf, n, "--%s", o->name);
	else
		snprintf(buf, n, "-%c", o->letter);
}

/* ------------------------------------------------------------ values */

/* A decimal integer, strictly: digits alone (a leading '-' when signed), nothing after, in range. */
static int read_int(const char *s, long long *v, char **end)
{
	if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
		return -EINVAL;
	errno = 0;
	*v = strtoll(s, end, 10);
	return errno == ERANGE ? -ERANGE : 0;
}

/* The multiplier of a size's suffix, in KiB; 0 when it is none of them. */
static long long size_unit(const char *suffix)
{
	static const struct {
		const char *s;
		long long kib;
	} units[] = {{"", 1}, {"K", 1}, {"k", 1}, {"KiB", 1}, {"M", 1024}, {"MiB", 1024}, {"G", 1 << 20}, {"GiB", 1 << 20}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(suffix, units[i].s))
			return units[i].kib;
	return 0;
}

static long long duration_unit(const char *suffix)
{
	static const struct {
		const char *s;
		long long ns;
	} units[] = {{"", 1000000000LL}, {"s", 1000000000LL}, {"ms", 1000000LL}, {"us", 1000LL}, {"m", 60000000000LL}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(suffix, units[i].s))
			return units[i].ns;
	return 0;
}

/* What the kind takes, for the message when a value is not that. */
static const char *kind_wants(const struct cli_opt *o)
{
	switch (o->kind) {
	case CLI_INT:
		return "an integer";
	case CLI_SIZE:
		return "a size in KiB (a K, M or G suffix allowed)";
	case CLI_DURATION:
		return "a duration such as 500ms, 2s or 1m";
	default:
		return "a value";
	}
}

static int out_of_range(const struct cli_command *cmd, const char *sp, const struct cli_opt *o, const char *s)
{
	if (o->max)
		return cli_usage_error(cmd, "%s '%s': out of range (%lld to %lld%s)", sp, s, o->min, o->max,
				       o->kind == CLI_SIZE ? " KiB" : o->kind == CLI_DURATION ? " ns" : "");
	if (s[0] == '-')
		return cli_usage_error(cmd, "%s '%s': at least %lld", sp, s, o->min);
	return cli_usage_error(cmd, "%s '%s': too large", sp, s);
}

/* A number of the option's kind into *v: 0, or the usage error said. */
static int read_number(const struct cli_command *cmd, const char *sp, const struct cli_opt *o, const char *s,
		       long long *v)
{
	char *end;
	long long unit = 1;
	double frac = 0;

	int rc = read_int(s, v, &end);

	if (rc == -ERANGE)
		return out_of_range(cmd, sp, o, s);
	if (rc < 0)
		return cli_usage_error(cmd, "%s '%s': not %s", sp, s, kind_wants(o));
	if (o->kind == CLI_DURATION && *end == '.' && isdigit((unsigned char)end[1]))
		frac = strtod(end, &end);
	if (o->kind == CLI_SIZE)
		unit = size_unit(end);
	else if (o->kind == CLI_DURATION)
		unit = duration_unit(end);
	else if (*end)
		unit = 0;
	if (!unit)
		return cli_usage_error(cmd, "%s '%s': not %s", sp, s, kind_wants(o));
	if (*v < 0 && o->min >= 0)
		return out_of_range(cmd, sp, o, s);
	if (*v > INT64_MAX / unit)
		return out_of_range(cmd, sp, o, s);
	*v = *v * unit + (long long)(frac * (double)unit);
	if (*v < o->min || (o->max && *v > o->max))
		return out_of_range(cmd, sp, o, s);
	return 0;
}

int cli_operand_number(const struct cli_command *cmd, const char *name, enum cli_kind kind, long long min,
		       long long max, const char *s, long long *v)
{
	const struct cli_opt o = {name, 0, kind, name, "", .min = min, .max = max};

	return read_number(cmd, name, &o, s, v);
}

static int read_choice(const struct cli_command *cmd, const char *sp, const struct cli_opt *o, const char *s,
		       long long *v)
{
	char list[256] = "";

	for (int i = 0; o->choices[i]; i++) {
		if (!strcmp(s, o->choices[i])) {
			*v = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", o->choices[i]);
	}
	return cli_usage_error(cmd, "%s '%s': one of %s", sp, s, list);
}

/* Option k's value s (NULL for a flag) into a: 0, or the usage error said. */
static int take(const struct cli_command *cmd, struct cli_args *a, int k, const char *sp, const char *s, int at)
{
	const struct cli_opt *o = opt_at(cmd, k);
	struct cli_value *v = &a->v[k];

	if (!v->given++)
		v->first_at = at;
	v->str = s;
	switch (o->kind) {
	case CLI_FLAG:
		v->num = 1;
		return 0;
	case CLI_INT:
	case CLI_SIZE:
	case CLI_DURATION:
		return read_number(cmd, sp, o, s, &v->num);
	case CLI_ENUM:
		return read_choice(cmd, sp, o, s, &v->num);
	case CLI_STRING:
		return 0;
	case CLI_LIST: {
		const char **grown = realloc(v->list, ((size_t)v->given + 1) * sizeof(*grown));
		int *at_grown = grown ? realloc(v->at, (size_t)v->given * sizeof(*at_grown)) : NULL;
		if (grown)
			v->list = grown;
		if (!at_grown) {
			fprintf(stderr, "tracebuf %s: out of memory\n", cmd->name);
			return CLI_EXIT_SYSTEM;
		}
		v->at = at_grown;
		v->list[v->given - 1] = s;
		v->list[v->given] = NULL;
		v->at[v->given - 1] = at;
		return 0;
	}
	}
	return 0;
}

char *cli_join(const struct cli_args *a, int i)
{
	const struct cli_value *v = &a->v[i];
	size_t n = 1;
	char *s;

	if (!v->given)
		return NULL;
	for (int k = 0; k < v->given; k++)
		n += strlen(v->list[k]) + 1;
	if (!(s = malloc(n)))
		return NULL;
	s[0] = '\0';
	for (int k = 0; k < v->given; k++)
		strcat(strcat(s, k ? "," : ""), v->list[k]);
	return s;
}

int cli_one_input(struct cli_args *a, int opt, const char **in)
{
	*in = opt >= 0 ? cli_str(a, opt) : NULL;
	if (!*in && a->noperands == 1)
		*in = a->operands[0];
	else if (*in ? a->noperands > 0 : a->noperands > 1)
		return cli_usage_error(a->cmd, "one input only ('%s' is one more)", a->operands[a->noperands - 1]);
	if (!*in)
		return cli_usage_error(a->cmd, "the input is missing");
	return 0;
}

/* ------------------------------------------------------------ parsing */

/* The option called name (n bytes), or -1; *old set when it is an old spelling. */
static int find_long(const struct cli_command *cmd, const char *name, size_t n, bool *old)
{
	for (int k = 0; k < opt_total(cmd); k++) {
		const struct cli_opt *o = opt_at(cmd, k);
		if (strlen(o->name) == n && !strncmp(o->name, name, n)) {
			*old = false;
			return k;
		}
		if (o->old && strlen(o->old) == n && !strncmp(o->old, name, n)) {
			*old = true;
			return k;
		}
		if (o->also && strlen(o->also) == n && !strncmp(o->also, name, n)) {
			*old = false;
			return k;
		}
	}
	return -1;
}

static int find_letter(const struct cli_command *cmd, char c)
{
	for (int k = 0; k < opt_total(cmd); k++)
		if (c && opt_at(cmd, k)->letter == c)
			return k;
	return -1;
}

/* "--name[=value]" at argv[*i]: 0, or the exit status. */
static int parse_long(const struct cli_command *cmd, struct cli_args *a, int argc, char **argv, int *i)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	bool old;
	int k = find_long(cmd, name, n, &old);
	char sp[80];

	if (k < 0)
		return cli_usage_error(cmd, "unknown option --%.*s", (int)n, name);
	spelling(opt_at(cmd, k), true, sp, sizeof(sp));
	if (old)
		fprintf(stderr, "tracebuf %s: note: --%s is now %s; the old spelling will go\n", cmd->name,
			opt_at(cmd, k)->old, sp);
	if (opt_at(cmd, k)->kind == CLI_FLAG) {
		if (eq)
			return cli_usage_error(cmd, "%s takes no value", sp);
		return take(cmd, a, k, sp, NULL, *i);
	}
	if (eq)
		return take(cmd, a, k, sp, eq + 1, *i);
	if (*i + 1 >= argc)
		return cli_usage_error(cmd, "%s needs a value (%s)", sp, opt_at(cmd, k)->arg);
	++*i;
	return take(cmd, a, k, sp, argv[*i], *i);
}

/* "-abc" or "-bVALUE" at argv[*i]: 0, or the exit status. */
static int parse_short(const struct cli_command *cmd, struct cli_args *a, int argc, char **argv, int *i)
{
	for (const char *p = argv[*i] + 1; *p; p++) {
		int k = find_letter(cmd, *p), rc;
		char sp[8];

		if (k < 0)
			return cli_usage_error(cmd, "unknown option -%c", *p);
		spelling(opt_at(cmd, k), false, sp, sizeof(sp));
		if (opt_at(cmd, k)->kind == CLI_FLAG) {
			if ((rc = take(cmd, a, k, sp, NULL, *i)))
				return rc;
			continue;
		}
		if (p[1])
			return take(cmd, a, k, sp, p + 1, *i);
		if (*i + 1 >= argc)
			return cli_usage_error(cmd, "%s needs a value (%s)", sp, opt_at(cmd, k)->arg);
		++*i;
	return take(cmd, a, k, sp, argv[*i], *i);
	}
	return 0;
}

static int parse_into(const struct cli_command *cmd, int argc, char **argv, struct cli_args *a)
{
	int rc = 0, i;

	*a = (struct cli_args){.cmd = cmd};
	a->v = calloc((size_t)opt_total(cmd), sizeof(*a->v));
	a->operands = calloc((size_t)argc + 1, sizeof(*a->operands));
	if (!a->v || !a->operands) {
		fprintf(stderr, "tracebuf %s: out of memory\n", cmd->name);
		return CLI_EXIT_SYSTEM;
	}
	for (i = 1; i < argc && rc == 0; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--")) {
			a->dashdash = true;
			i++;
			break;
		}
		if (s[0] != '-' || !s[1]) {
			a->operands[a->noperands++] = argv[i];
			if (cmd->operands_end_options) {
				i++;
				break;
			}
			continue;
		}
		rc = s[1] == '-' ? parse_long(cmd, a, argc, argv, &i) : parse_short(cmd, a, argc, argv, &i);
	}
	if (rc)
		return rc;
	while (i < argc)
		a->operands[a->noperands++] = argv[i++];
	color_mode = (int)a->v[cmd->nopts + C_COLOR].num;
	if (a->v[cmd->nopts + C_HELP].given) {
		cli_print_help(cmd, stdout);
		return CLI_EXIT_OK;
	}
	if (cmd->long_work)
		a->progress = a->v[cmd->nopts + C_QUIET].given	  ? CLI_PROGRESS_OFF
			      : a->v[cmd->nopts + C_PROGRESS].given ? CLI_PROGRESS_ON
								    : CLI_PROGRESS_AUTO;
	return CLI_PARSED;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, struct cli_args *a)
{
	int rc = parse_into(cmd, argc, argv, a);

	if (rc != CLI_PARSED)
		cli_free(a); /* the caller returns rc at once: nothing of a is left to free */
	return rc;
}

void cli_free(struct cli_args *a)
{
	if (a->v && a->cmd)
		for (int k = 0; k < opt_total(a->cmd); k++)
			free(a->v[k].list), free(a->v[k].at);
	free(a->v);
	free(a->operands);
	a->v = NULL;
	a->operands = NULL;
}

bool cli_show_progress(const struct cli_args *a)
{
	if (a->progress != CLI_PROGRESS_AUTO)
		return a->progress == CLI_PROGRESS_ON;
	return isatty(STDERR_FILENO) && !(a->cmd->results_on_stdout && isatty(STDOUT_FILENO));
}

bool cli_color(FILE *f)
{
	const char *no = getenv("NO_COLOR");

	if (color_mode)
		return color_mode == 1;
	return !(no && *no) && isatty(fileno(f));
}

/* ------------------------------------------------------------ help */

/* "-e, --event EVENT" as help shows it. */
static void opt_spelling(const struct cli_opt *o, char *buf, size_t n)
{
	char letter[8] = "    ";

	if (o->letter)
		snprintf(letter, sizeof(letter), "-%c, ", o->letter);
	snprintf(buf, n, "%s--%s%s%s", letter, o->name, o->arg ? (o->kind == CLI_ENUM ? "=" : " ") : "",
		 o->arg ? o->arg : "");
}

static void heading(FILE *f, const char *text)
{
	bool c = cli_color(f);

	fprintf(f, "%s%s%s\n", c ? "\033[1m" : "", text, c ? "\033[0m" : "");
}

/* The option's help line with what it adds: its range, its choices, trace-cmd's spelling. */
static void opt_help(const struct cli_opt *o, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "%s", o->help);

	if (o->kind == CLI_ENUM && o->choices != color_choices)
		for (int i = 0; o->choices[i] && len < n; i++)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "|" : " (", o->choices[i]);
	if (o->kind == CLI_ENUM && o->choices != color_choices && len < n)
		len += (size_t)snprintf(buf + len, n - len, ")");
	if (o->trace_cmd && len < n)
		snprintf(buf + len, n - len, " [trace-cmd %s]", o->trace_cmd);
}

/* text on f in lines of at most 79 columns, each but the first indented by indent, from column col. */
static void wrap(FILE *f, const char *text, int indent, int col)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " \n");
		if (col > indent && col + 1 + (int)word > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)word, p);
		col += (int)word;
		p += word;
		if (*p == '\n') {
			fputs(p[1] == '\n' ? "\n\n" : "\n", f);
			p += p[1] == '\n' ? 2 : 1;
			col = 0;
		}
		p += strspn(p, " ");
	}
	fputc('\n', f);
}

void cli_print_help(const struct cli_command *cmd, FILE *f)
{
	const char *s = cmd->synopsis;
	char sp[80], help[512];

	for (int first = 1; *s || first; first = 0) {
		size_t n = strcspn(s, "\n");
		fprintf(f, "%s tracebuf %s %.*s\n", first ? "usage:" : "      ", cmd->name, (int)n, s);
		s += n + (s[n] == '\n');
	}
	fputc('\n', f);
	wrap(f, cmd->description, 0, 0);
	fputc('\n', f);
	heading(f, "Options:");
	for (int k = 0; k < opt_total(cmd); k++) {
		const struct cli_opt *o = opt_at(cmd, k);
		opt_spelling(o, sp, sizeof(sp));
		opt_help(o, help, sizeof(help));
		if (strlen(sp) > 24)
			fprintf(f, "  %s\n%*s", sp, 28, "");
		else
			fprintf(f, "  %-24s  ", sp);
		wrap(f, help, 28, 28);
	}
	fprintf(f, "\n");
	if (cmd->more_help) {
		cmd->more_help(f);
		fprintf(f, "\n");
	}
	heading(f, "Exit status:");
	for (int i = 0; cli_exit_table[i][0]; i++)
		fprintf(f, "  %s  ", cli_exit_table[i][0]), wrap(f, i == 1 && cmd->exit_notes ? cmd->exit_notes : cli_exit_table[i][1], 5, 5);
	fprintf(f, "\nSee tracebuf-%s(1) and docs/cli.md.\n", cmd->name);
}

/* ------------------------------------------------------------ man pages */

/* Text for roff: a leading '.' or '\'' guarded, '\\' and '-' escaped. */
static void roff(FILE *f, const char *s)
{
	bool bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

static void man_header(FILE *f, const char *title, const char *name, const char *summary)
{
	fprintf(f, ".TH %s 1 \"\" \"tracebuf\" \"tracebuf manual\"\n.SH NAME\n", title);
	roff(f, name);
	fputs(" \\- ", f);
	roff(f, summary);
	fputc('\n', f);
}

static void man_paragraphs(FILE *f, const char *text)
{
	for (const char *p = text; *p;) {
		const char *end = strstr(p, "\n\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *para = strndup(p, n);
		fputs(".PP\n", f);
		roff(f, para ? para : "");
		fputc('\n', f);
		free(para);
		p += n + (end ? 2 : 0);
	}
}

static void man_exit(FILE *f, const char *findings)
{
	fputs(".SH EXIT STATUS\n", f);
	for (int i = 0; cli_exit_table[i][0]; i++) {
		fprintf(f, ".TP\n.B %s\n", cli_exit_table[i][0]);
		roff(f, i == 1 && findings ? findings : cli_exit_table[i][1]);
		fputc('\n', f);
	}
}

/* The hand-written prose of a page (docs/man/NAME.roff), copied as it is; -errno when it cannot be read. */
static int man_details(FILE *f, const char *heading_line, const char *path)
{
	char buf[4096];
	size_t n;
	FILE *in;

	if (!path)
		return 0;
	if (!(in = fopen(path, "re"))) {
		fprintf(stderr, "tracebuf: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fputs(heading_line, f);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, f);
	fclose(in);
	return 0;
}

int cli_print_man(const struct cli_command *cmd, FILE *f, const char *details)
{
	char title[64], name[64], sp[80], help[512];
	const char *s = cmd->synopsis;

	snprintf(title, sizeof(title), "TRACEBUF-%s", cmd->name);
	for (char *p = title; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	snprintf(name, sizeof(name), "tracebuf-%s", cmd->name);
	man_header(f, title, name, cmd->summary);
	fputs(".SH SYNOPSIS\n", f);
	while (*s) {
		size_t n = strcspn(s, "\n");
		char *line = strndup(s, n);
		fprintf(f, ".B tracebuf %s\n", cmd->name);
		roff(f, line ? line : "");
		fputs("\n.br\n", f);
		free(line);
		s += n + (s[n] == '\n');
	}
	fputs(".SH DESCRIPTION\n", f);
	man_paragraphs(f, cmd->description);
	fputs(".SH OPTIONS\n", f);
	for (int k = 0; k < opt_total(cmd); k++) {
		opt_spelling(opt_at(cmd, k), sp, sizeof(sp));
		opt_help(opt_at(cmd, k), help, sizeof(help));
		fputs(".TP\n.B ", f);
		roff(f, sp + strspn(sp, " "));
		fputc('\n', f);
		roff(f, help);
		fputc('\n', f);
	}
	if (cmd->more_help) {
		fputs(".PP\n.nf\n", f);
		cmd->more_help(f);
		fputs(".fi\n", f);
	}
	if (man_details(f, ".SH DETAILS\n", details) < 0)
		return -1;
	man_exit(f, cmd->exit_notes);
	fputs(".SH SEE ALSO\n.BR tracebuf (1)\n", f);
	return 0;
}

int cli_print_man_index(const struct cli_command *const *cmds, size_t n, FILE *f, const char *details)
{
	man_header(f, "TRACEBUF", "tracebuf", "a user-space trace pipeline in the kernel's ftrace page format");
	fputs(".SH SYNOPSIS\n.B tracebuf\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n.br\n"
	      ".B tracebuf help\n\\fICOMMAND\\fR\n.SH COMMANDS\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, ".TP\n.BR tracebuf\\-%s (1)\n", cmds[i]->name);
		roff(f, cmds[i]->summary);
		fputc('\n', f);
	}
	fputs(".SH COMMON OPTIONS\n", f);
	for (int k = 0; k < C_N; k++) {
		char sp[80];
		opt_spelling(&common_opts[k], sp, sizeof(sp));
		fputs(".TP\n.B ", f);
		roff(f, sp + strspn(sp, " "));
		fputc('\n', f);
		roff(f, common_opts[k].help);
		fputc('\n', f);
	}
	man_paragraphs(f, "--quiet and --progress are taken by the commands that read or write much. "
			  "A letter means the same in every command: -e event(s), -o output, -i input, "
			  "-b buffer size in KiB, -B buffer (instance) name, -C clock, -F filter, -q quiet.");
	if (man_details(f, "", details) < 0)
		return -1;
	man_exit(f, NULL);
	return 0;
}

/* ------------------------------------------------------------ completion */

void cli_print_completion(const struct cli_command *const *cmds, size_t n, FILE *f)
{
	fputs("# bash completion for tracebuf, generated by `tracebuf __complete` from the option tables\n"
	      "_tracebuf()\n{\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} words\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\twords='help",
	      f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %s", cmds[i]->name);
	fputs("'\n\telse\n\t\tcase ${COMP_WORDS[1]} in\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "\t\t%s) words='", cmds[i]->name);
		for (int k = 0; k < opt_total(cmds[i]); k++) {
			const struct cli_opt *o = opt_at(cmds[i], k);
			fprintf(f, "%s--%s", k ? " " : "", o->name);
			if (o->letter)
				fprintf(f, " -%c", o->letter);
		}
		fputs("' ;;\n", f);
	}
	fputs("\t\thelp) words='", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", cmds[i]->name);
	fputs("' ;;\n\t\t*) words= ;;\n\t\tesac\n"
	      "\t\tcase $cur in\n\t\t-*) ;;\n\t\t*) [ \"${COMP_WORDS[1]}\" = help ] || { COMPREPLY=($(compgen -f -- \"$cur\")); return; } ;;\n\t\tesac\n"
	      "\tfi\n\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -F _tracebuf tracebuf\n",
	      f);
}
