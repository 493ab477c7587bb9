// SPDX-License-Identifier: MIT
/*
 * tracebuf sql [-i] INPUT... [-Q QUERY | --query-file FILE] [--db FILE] [--format text|csv|json]
 *              [--with-text] [--host NAME]
 *
 * Load traces into SQLite as the tables of docs/sql.md (the export stage's
 * "sqlite" kind, one input after the other into one database) and run a
 * query on them.  All or nothing: the load goes into a temporary file
 * beside the database (a copy of it when --db names one that exists), the
 * query runs there, and only then is it renamed into place - a failed
 * load or query leaves the database as it was, and no temporary behind.
 * Without --db the database is temporary when a query is given, else
 * tracebuf.db, and how to open it is said.  With --db and no input the
 * query runs on the database as it is (SQLite makes each statement atomic).  Exit status: 0, 1 when damaged
 * input was left out (each place said, and a row of `lost`), 2 usage, a
 * failed query or nothing loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_opts.h"
#include "cmds.h"
#include "tracebuf/export.h"
#include "tracebuf/sql.h"

#define TOOL "tracebuf sql"
#define DEFAULT_DB "tracebuf.db"

struct sql_args {
	const char **inputs;
	int ninputs;
	const char *query, *query_file, *db, *host;
	enum tb_sql_format format;
	bool with_text;
	bool progress; /* the exporter's progress line */
};

static const char *const format_names[] = {[TB_SQL_TEXT] = "text", [TB_SQL_CSV] = "csv", [TB_SQL_JSON] = "json", NULL};

/*
 * The query is -Q/--query, not -q: -q is --quiet in every subcommand, as in
 * trace-cmd (docs/cli.md: one letter, one meaning); -f is trace-cmd's filter.
 */
enum { O_INPUT, O_QUERY, O_QUERY_FILE, O_DB, O_FORMAT, O_WITH_TEXT, O_HOST, O_N };
static const struct cli_opt opts[] = {
    [O_INPUT] = {"input", 'i', CLI_LIST, "INPUT", "a trace to load (or give them after the options)", "-i"},
    [O_QUERY] = {"query", 'Q', CLI_STRING, "SQL", "the query (several statements: each result printed)"},
    [O_QUERY_FILE] = {"query-file", 0, CLI_STRING, "FILE", "the query read from FILE"},
    [O_DB] = {"db", 0, CLI_STRING, "FILE", "keep the database in FILE (appended to when it exists)"},
    [O_FORMAT] = {"format", 0, CLI_ENUM, "FMT", "text (aligned, default), csv or json", .choices = format_names},
    [O_WITH_TEXT] = {"with-text", 0, CLI_FLAG, NULL, "events.text: each record's line as report prints it"},
    [O_HOST] = {"host", 0, CLI_STRING, "NAME", "the host column (default: each input's base name)"},
};

static int run(int argc, char **argv);

const struct cli_command cli_sql = {
    "sql", "traces as SQLite tables, and a query on them", "[OPTIONS] INPUT... [-Q QUERY | --query-file FILE]\n"
    "--db FILE -Q QUERY | --query-file FILE [--format text|csv|json]",
    "Load traces (trace.dat, capture directories, live instances) into SQLite as tables - one per event type, "
    "events, lost, thread, process, sched_slice, thread_state (docs/sql.md) - and run a query on them.  The load "
    "goes into a temporary copy renamed into place only when the load and the query succeed.  Without a query the "
    "database is kept (--db, else " DEFAULT_DB ") to open with sqlite3; with --db and no input the query runs on "
    "the database as it is.",
    opts, O_N, .run = run, .long_work = true, .results_on_stdout = true,
    .exit_notes = "damaged input was left out (each place said, and a row of lost)",
};

/* The options: 0, or the exit status (0 after --help, 2 a usage error). */
static int parse_args(int argc, char **argv, struct sql_args *a)
{
	struct cli_args ca;
	int rc = cli_parse(&cli_sql, argc, argv, &ca);

	if (rc != CLI_PARSED)
		return rc == 0 ? -1 : rc; /* -1: --help printed */
	a->query = cli_str(&ca, O_QUERY);
	a->query_file = cli_str(&ca, O_QUERY_FILE);
	a->db = cli_str(&ca, O_DB);
	a->host = cli_str(&ca, O_HOST);
	a->format = cli_given(&ca, O_FORMAT) ? (enum tb_sql_format)cli_num(&ca, O_FORMAT) : TB_SQL_TEXT;
	a->with_text = cli_given(&ca, O_WITH_TEXT);
	a->progress = cli_show_progress(&ca);
	a->inputs = calloc((size_t)ca.v[O_INPUT].given + (size_t)ca.noperands + 1, sizeof(*a->inputs));
	if (!a->inputs) {
		cli_free(&ca);
		return CLI_EXIT_SYSTEM;
	}
	for (int i = 0; i < ca.v[O_INPUT].given; i++)
		a->inputs[a->ninputs++] = ca.v[O_INPUT].list[i];
	for (int i = 0; i < ca.noperands; i++)
		a->inputs[a->ninputs++] = ca.operands[i];
	cli_free(&ca);
	/* no input: a query on the --db there is */
	if (a->query && a->query_file)
		return cli_usage_error(&cli_sql, "-Q and --query-file: one query");
	if (!a->ninputs && !(a->db && (a->query || a->query_file)))
		return cli_usage_error(&cli_sql, "no input to load (or --db and a query)");
	return 0;
}

/* The whole of a query file, NUL-terminated; NULL when unreadable (said). */
static char *read_query_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;

	if (!f) {
		fprintf(stderr, TOOL ": %s: %s\n", path, strerror(errno));
		return NULL;
	}
	FILE *m = open_memstream(&text, &len);
	char buf[65536];
	size_t n;
	while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	if (ferror(f))
		fprintf(stderr, TOOL ": %s: %s\n", path, strerror(errno));
	bool bad = ferror(f) || !m;
	fclose(f);
	if (m)
		fclose(m);
	if (bad) {
		free(text);
		return NULL;
	}
	return text;
}

/* A copy of the database that exists (to append to) in the temporary file fd. 0 or -1 (said). */
static int copy_existing(const char *db, int fd, const char *tmp)
{
	int in = open(db, O_RDONLY);
	char buf[1 << 16];
	ssize_t n;

	if (in < 0)
		return errno == ENOENT ? 0 : (fprintf(stderr, TOOL ": %s: %s\n", db, strerror(errno)), -1);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			fprintf(stderr, TOOL ": %s: %s\n", tmp, strerror(errno));
			close(in);
			return -1;
		}
	close(in);
	return n < 0 ? (fprintf(stderr, TOOL ": %s: %s\n", db, strerror(errno)), -1) : 0;
}

/*
 * The temporary database: beside the target (so the rename stays in one
 * file system), a copy of it when it exists; in $TMPDIR when there is no
 * target.  NULL: said.
 */
static char *temp_db(const char *target)
{
	const char *dir = target ? target : getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *dir_end = target ? strrchr(target, '/') : dir + strlen(dir);
	size_t dlen = dir_end ? (size_t)(dir_end - dir) : 0;
	char *tmp = malloc(dlen + 32);
	int fd;

	if (!tmp)
		return NULL;
	snprintf(tmp, dlen + 32, "%.*s%s.tracebuf-sql-XXXXXX", (int)dlen, dir, dlen ? "/" : "");
	if ((fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, TOOL ": %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return NULL;
	}
	int rc = target ? copy_existing(target, fd, tmp) : 0;
	close(fd);
	if (rc < 0) {
		unlink(tmp);
		free(tmp);
		return NULL;
	}
	return tmp;
}

/* Every input into tmp: 0, 1 when damage was left out, or the exit status of one that could not be loaded. */
static int load_all(const struct sql_args *a, const char *tmp, uint64_t *records)
{
	const struct tb_exporter_kind *kind = tb_export_find("sqlite");
	int status = 0;

	for (int i = 0; i < a->ninputs; i++) {
		struct tb_export_opts o = {.tool = TOOL, .in = a->inputs[i], .out = tmp, .host = a->host,
					   .sql_text = a->with_text, .progress = a->progress};
		struct tb_export_result res;
		int rc = tb_export_run(kind, &o, &res);
		if (rc < 0)
			return cli_exit_for(-rc); /* said: 3 the input, 4 the database, 5 the system */
		if (res.problems) {
			fprintf(stderr, TOOL ": %s: warning: %lu damaged places left out, each a row of lost\n",
				a->inputs[i], res.problems);
			status = 1;
		}
		*records += res.records;
	}
	return status;
}

static int run(int argc, char **argv)
{
	struct sql_args a = {0};
	char *query_text = NULL, *tmp = NULL;
	uint64_t records = 0;
	int status = parse_args(argc, argv, &a);

	if (status)
		goto out;
	status = CLI_EXIT_INPUT;
	if (a.query_file && !(query_text = read_query_file(a.query_file)))
		goto out;
	status = CLI_EXIT_USAGE; /* a failed query, as SQLite said it */
	const char *query = a.query ? a.query : query_text;
	if (!a.ninputs) { /* nothing to load: the query on the database as it is (each statement atomic) */
		status = tb_sql_query(a.db, query, a.format, stdout, stderr, TOOL) < 0 ? 2 : 0;
		goto out;
	}
	const char *target = a.db ? a.db : query ? NULL : DEFAULT_DB;
	status = CLI_EXIT_OUTPUT;
	if (!(tmp = temp_db(target)))
		goto out;
	status = CLI_EXIT_USAGE;
	int loaded = load_all(&a, tmp, &records);
	if (loaded > 1)
		status = loaded;
	if (loaded > 1 || (query && tb_sql_query(tmp, query, a.format, stdout, stderr, TOOL) < 0))
		goto out; /* the temporary goes, the database stays as it was */
	if (target && rename(tmp, target) < 0) {
		fprintf(stderr, TOOL ": %s: %s\n", target, strerror(errno));
		status = CLI_EXIT_OUTPUT;
		goto out;
	}
	if (target && !query)
		fprintf(stderr, TOOL ": %llu records in %s; open it with:  sqlite3 %s\n", (unsigned long long)records,
			target, target);
	status = loaded;
out:
	if (tmp && (status > 1 || !target))
		unlink(tmp);
	free(tmp);
	free(query_text);
	free(a.inputs);
	return status < 0 ? 0 : status;
}
