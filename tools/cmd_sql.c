// SPDX-License-Identifier: MIT
/*
 * tracebuf sql [-i] INPUT... [-q QUERY | -f FILE] [--db FILE] [--format text|csv|json]
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
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
};

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf sql [-i] INPUT... [-q QUERY | -f FILE] [--db FILE]\n"
		   "                    [--format text|csv|json] [--with-text] [--host NAME]\n"
		   "       tracebuf sql --db FILE -q QUERY | -f FILE [--format text|csv|json]\n"
		   "\n"
		   "Load traces (trace.dat, capture directories, live instances) into SQLite as\n"
		   "tables - one per event type, events, lost, thread, process, sched_slice,\n"
		   "thread_state (docs/sql.md) - and run a query on them.\n"
		   "\n"
		   "  -i INPUT           a trace to load (or give them after the options)\n"
		   "  -q, --query SQL    the query (several statements: each result printed)\n"
		   "  -f, --file FILE    the query read from FILE\n"
		   "  --db FILE          keep the database in FILE (appended to when it exists)\n"
		   "  --format FMT       text (aligned, default), csv or json\n"
		   "  --with-text        events.text: each record's line as `report` prints it\n"
		   "  --host NAME        the host column (default: each input's base name)\n"
		   "  -h, --help         this text\n"
		   "\n"
		   "Without a query the database is kept (--db, else " DEFAULT_DB ") to open with\n"
		   "sqlite3.  Exit status: 0; 1 when damaged input was left out (said, and a row of\n"
		   "lost); 2 usage, a failed query, or nothing loaded (the database untouched).\n");
	return f == stderr ? 2 : 0;
}

static int parse_format(const char *s, enum tb_sql_format *out)
{
	static const char *const names[] = {[TB_SQL_TEXT] = "text", [TB_SQL_CSV] = "csv", [TB_SQL_JSON] = "json"};

	for (int i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			*out = (enum tb_sql_format)i;
			return 0;
		}
	fprintf(stderr, TOOL ": --format %s: text, csv or json\n", s);
	return -1;
}

/* The options, in one place (the CLI's option layer takes it over). 0, -1 after --help, or 2. */
static int parse_args(int argc, char **argv, struct sql_args *a)
{
	enum { OPT_DB = 256, OPT_FORMAT, OPT_WITH_TEXT, OPT_HOST };
	static const struct option longopts[] = {
	    {"query", required_argument, NULL, 'q'},	  {"file", required_argument, NULL, 'f'},
	    {"db", required_argument, NULL, OPT_DB},	  {"format", required_argument, NULL, OPT_FORMAT},
	    {"with-text", no_argument, NULL, OPT_WITH_TEXT}, {"host", required_argument, NULL, OPT_HOST},
	    {"help", no_argument, NULL, 'h'},		  {NULL, 0, NULL, 0},
	};
	int opt;

	if (!(a->inputs = calloc((size_t)argc, sizeof(*a->inputs))))
		return 2;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:q:f:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			a->inputs[a->ninputs++] = optarg;
			break;
		case 'q':
			a->query = optarg;
			break;
		case 'f':
			a->query_file = optarg;
			break;
		case OPT_DB:
			a->db = optarg;
			break;
		case OPT_FORMAT:
			if (parse_format(optarg, &a->format) < 0)
				return 2;
			break;
		case OPT_WITH_TEXT:
			a->with_text = true;
			break;
		case OPT_HOST:
			a->host = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			return usage(stderr);
		}
	}
	while (optind < argc)
		a->inputs[a->ninputs++] = argv[optind++];
	/* no input: a query on the --db there is */
	if ((!a->ninputs && !(a->db && (a->query || a->query_file))) || (a->query && a->query_file)) {
		fprintf(stderr, TOOL ": %s\n", a->ninputs ? "-q and -f: one query" : "no input to load (or --db and a query)");
		return usage(stderr);
	}
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

/* Every input into tmp: 0, 1 when damage was left out, 2 when one could not be loaded. */
static int load_all(const struct sql_args *a, const char *tmp, uint64_t *records)
{
	const struct tb_exporter_kind *kind = tb_export_find("sqlite");
	int status = 0;

	for (int i = 0; i < a->ninputs; i++) {
		struct tb_export_opts o = {.tool = TOOL, .in = a->inputs[i], .out = tmp, .host = a->host,
					   .sql_text = a->with_text, .progress = isatty(STDERR_FILENO)};
		struct tb_export_result res;
		if (tb_export_run(kind, &o, &res) < 0)
			return 2;
		if (res.problems) {
			fprintf(stderr, TOOL ": %s: warning: %lu damaged places left out, each a row of lost\n",
				a->inputs[i], res.problems);
			status = 1;
		}
		*records += res.records;
	}
	return status;
}

int cmd_sql(int argc, char **argv)
{
	struct sql_args a = {0};
	char *query_text = NULL, *tmp = NULL;
	uint64_t records = 0;
	int status = parse_args(argc, argv, &a);

	if (status)
		goto out;
	status = 2;
	if (a.query_file && !(query_text = read_query_file(a.query_file)))
		goto out;
	const char *query = a.query ? a.query : query_text;
	if (!a.ninputs) { /* nothing to load: the query on the database as it is (each statement atomic) */
		status = tb_sql_query(a.db, query, a.format, stdout, stderr, TOOL) < 0 ? 2 : 0;
		goto out;
	}
	const char *target = a.db ? a.db : query ? NULL : DEFAULT_DB;
	if (!(tmp = temp_db(target)))
		goto out;
	int loaded = load_all(&a, tmp, &records);
	if (loaded == 2 || (query && tb_sql_query(tmp, query, a.format, stdout, stderr, TOOL) < 0))
		goto out; /* the temporary goes, the database stays as it was */
	if (target && rename(tmp, target) < 0) {
		fprintf(stderr, TOOL ": %s: %s\n", target, strerror(errno));
		goto out;
	}
	if (target && !query)
		fprintf(stderr, TOOL ": %llu records in %s; open it with:  sqlite3 %s\n", (unsigned long long)records,
			target, target);
	status = loaded;
out:
	if (tmp && (status == 2 || !target))
		unlink(tmp);
	free(tmp);
	free(query_text);
	free(a.inputs);
	return status < 0 ? 0 : status;
}
