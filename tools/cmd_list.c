// SPDX-License-Identifier: MIT
/*
 * tracebuf list [-i] [-F] [-c] FILE.dat | CAPTURE_DIR
 * tracebuf list [-i] [-F] [-U] [--] PROGRAM [ARGS...]
 * tracebuf list [-i] [-F]
 *
 * The events of a trace.dat, of a capture directory, or of a program
 * linked with libtracebuf (run so that it describes its events and exits
 * before main, program_formats.h): one SYSTEM:NAME a line, sorted, as
 * `trace-cmd list -e` prints them.  -i puts the ID in front, -F lists each
 * event's own fields below it with their offset and size (the common_*
 * fields every event has are left out; arrays as NAME[]), -c counts the records of each event in a file (every buffer
 * of a trace.dat, every CPU) and lists only the events that occur, the
 * count in front.  -U (a program) puts after each event the name of its
 * USDT probe as bpftrace takes it (usdt:OBJECT:SYSTEM:NAME), read from the
 * SDT notes of the program and of the libraries it loads at start
 * (ld.so's LD_TRACE_LOADED_OBJECTS, as ldd lists them); "-" when none has
 * one (built with TB_NO_USDT, or the event lives in a dlopen'ed library).
 *
 * Without an argument: the running kernel's events (every format file under
 * tracefs's events/, ftrace's own included; available_events lists the
 * others).
 *
 * What is a file and what a program: a directory is a capture, a file that
 * starts with trace.dat's magic a trace.dat, anything else (or anything
 * after "--") a program.  Exit status: cli_opts.h's table; 1 is an input
 * with problems (said on stderr; what could be read is listed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "program_formats.h"
#include "lib_internal.h"
#include "tracebuf/capture.h"
#include "tracebuf/input.h"
#include "tracebuf/page.h"
#include "tracebuf/schema.h"
#include "tracebuf/tracedat.h"

#define MAX_ID 65535

/* The SDT notes of a program and its libraries, for -U. */
struct usdt_object {
	char *path;
	struct usdt_notes notes;
};

struct options {
	bool ids, fields, counts, usdt;
	struct usdt_object *objects; /* -U with a program: what its objects declare */
	size_t nobjects, objects_cap;
	bool damaged_object; /* -U: an object's notes could not be read (exit 1) */
	const char *buffer; /* --buffer NAME: a trace.dat's one buffer counted (NULL: every buffer) */
	bool program; /* "--" given: what follows is a program */
};

struct listed {
	const struct tb_format *f;
	const char *system;
	uint64_t count;
};

enum { O_IDS, O_FIELDS, O_COUNTS, O_USDT, O_BUFFER, O_N };
static const struct cli_opt opts[] = {
    [O_IDS] = {"ids", 0, CLI_FLAG, NULL, "the event ID in front"},
    [O_FIELDS] = {"fields", 0, CLI_FLAG, NULL, "each event's fields below it, offset and size (not common_*)",
		  "list -e -F"},
    [O_COUNTS] = {"counts", 'c', CLI_FLAG, NULL, "records of each event in the file; only events that occur"},
    [O_USDT] = {"usdt", 'U', CLI_FLAG, NULL, "a program: each event's USDT probe (usdt:OBJECT:SYSTEM:NAME)"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME",
		  "with --counts: a trace.dat's buffer alone (default: every buffer; \"\" is the top buffer)", "-B"},
};

static int run(int argc, char **argv);

const struct cli_command cli_list = {
    "list", "the events of a trace.dat, a capture directory or a program",
    "[OPTIONS] FILE.dat | CAPTURE_DIR\n[OPTIONS] [--] PROGRAM [ARGS...]\n[OPTIONS]",
    "The events of a trace.dat, a capture directory or a program linked with libtracebuf (which is run only "
    "to describe its events), as SYSTEM:NAME lines; without an argument, the running kernel's (tracefs).",
    opts, O_N, .run = run, .operands_end_options = true,
    .exit_notes = "the input had problems (said on stderr; what could be read is listed)",
};

/* 0, or the exit status. */
static int parse_options(int argc, char **argv, struct options *o, struct cli_args *a)
{
	int rc = cli_parse(&cli_list, argc, argv, a);

	if (rc != CLI_PARSED)
		return rc;
	o->ids = cli_given(a, O_IDS);
	o->fields = cli_given(a, O_FIELDS);
	o->counts = cli_given(a, O_COUNTS);
	o->usdt = cli_given(a, O_USDT);
	o->buffer = cli_str(a, O_BUFFER);
	/* "--" given: what follows is a program, whatever its name */
	o->program = false;
	for (int i = 1; i < argc && argv[i] != a->operands[0]; i++)
		o->program |= !strcmp(argv[i], "--");
	if (o->program && !a->noperands)
		return cli_usage_error(&cli_list, "the program to run is missing after --");
	return 0;
}

/* ------------------------------------------------------------ counting */

/* Every record of every CPU of c, counted by event ID into counts[]. */
static void count_capture(struct tb_capture *c, uint64_t *counts)
{
	struct tb_capture_page page;
	struct tb_page_cursor cur;
	struct tb_record rec;

	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++) {
		if (!tb_capture_has_cpu(c, cpu))
			continue;
		while (tb_capture_next_page(c, cpu, &page) == 1) {
			int rc = tb_page_cursor_init(&cur, page.data, page.size);
			while (rc >= 0 && (rc = tb_page_next_data(&cur, &rec)) == 1)
				if (rec.len >= 2) {
					uint16_t id;
					memcpy(&id, rec.data, sizeof(id));
					counts[id]++;
				}
			/* A damaged sub-buffer makes the counts short: say so (and exit 1). */
			if (rc < 0)
				tb_capture_problem(c, page.file, page.file_offset + cur.err.offset,
						  "%s; rest of the sub-buffer skipped", cur.err.reason);
		}
	}
}

/* Every buffer of td counted, or the one named; the number of problems met, or negative errno. */
static int count_tracedat(struct tb_tracedat *td, const char *only, uint64_t *counts)
{
	int problems = 0;

	for (int b = 0; b < tb_tracedat_buffer_count(td); b++) {
		struct tb_capture *c;
		if (only && strcmp(tb_tracedat_buffer(td, b)->name, only))
			continue;
		int rc = tb_tracedat_capture(td, b, NULL, &c);
		if (rc < 0)
			return rc;
		count_capture(c, counts);
		problems += tb_capture_problems(c) > 0;
		tb_capture_close(c);
	}
	return problems;
}

/* ------------------------------------------------------------- listing */

static int by_name(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;
	int c = strcmp(x->system, y->system);

	return c ? c : strcmp(x->f->name, y->f->name);
}

static void print_fields(const struct tb_format *f)
{
	for (size_t i = 0; i < f->nfields; i++)
		if (strncmp(f->fields[i].name, "common_", 7))
			printf("\t%s %s%s;\toffset:%u;\tsize:%u;\n", f->fields[i].type, f->fields[i].name,
			       f->fields[i].is_array ? "[]" : "", f->fields[i].offset, f->fields[i].size);
}

/* "\tusdt:OBJECT:SYSTEM:NAME" of the first object with that probe, "\t-" when none has it. */
static void print_usdt(const struct options *o, const char *system, const char *name)
{
	for (size_t i = 0; i < o->nobjects; i++)
		if (usdt_notes_find(&o->objects[i].notes, system, name)) {
			printf("\tusdt:%s:%s:%s", o->objects[i].path, system, name);
			return;
		}
	printf("\t-");
}

/* Every event of schema s, sorted; counts (or NULL) from the file's records. */
static int list_schema(struct tb_schema *s, const uint64_t *counts, const struct options *o)
{
	struct listed *v = malloc((MAX_ID + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t id = 1; id <= MAX_ID; id++) {
		const char *system = "";
		const struct tb_format *f = tb_schema_event(s, id, &system);
		if (f && (!counts || counts[id]))
			v[n++] = (struct listed){f, system, counts ? counts[id] : 0};
	}
	qsort(v, n, sizeof(*v), by_name);
	for (size_t i = 0; i < n; i++) {
		if (counts)
			printf("%llu ", (unsigned long long)v[i].count);
		if (o->ids)
			printf("%u ", v[i].f->id);
		printf("%s:%s", v[i].system, v[i].f->name);
		if (o->usdt)
			print_usdt(o, v[i].system, v[i].f->name);
		putchar('\n');
		if (o->fields)
			print_fields(v[i].f);
	}
	free(v);
	return 0;
}

static int list_tracedat(const char *path, const struct options *o)
{
	uint64_t *counts = o->counts ? calloc(MAX_ID + 1, sizeof(*counts)) : NULL;
	struct tb_tracedat *td;
	int rc = o->counts && !counts ? -ENOMEM : tb_tracedat_open(path, NULL, &td);

	if (rc < 0) {
		free(counts);
		return rc;
	}
	if (o->buffer && tb_tracedat_buffer_find(td, o->buffer) < 0) {
		fprintf(stderr, "tracebuf list: %s: no buffer '%s'\n", path, o->buffer);
		tb_tracedat_close(td);
		free(counts);
		return 2;
	}
	int damaged = counts ? count_tracedat(td, o->buffer, counts) : 0;
	rc = damaged < 0 ? damaged : list_schema(tb_tracedat_schema(td), counts, o);
	if (rc == 0 && (damaged || tb_tracedat_problems(td)))
		rc = 1;
	tb_tracedat_close(td);
	free(counts);
	return rc;
}

/* A capture directory; a program's description is one without pages or clock. */
static int list_capture(const char *dir, const struct options *o)
{
	uint64_t *counts = o->counts ? calloc(MAX_ID + 1, sizeof(*counts)) : NULL;
	struct tb_capture_opts co = {.clock = "local"};
	struct tb_capture *c;
	int rc = o->counts && !counts ? -ENOMEM : tb_capture_open(dir, &co, &c);

	if (rc < 0) {
		free(counts);
		return rc;
	}
	if (counts)
		count_capture(c, counts);
	rc = list_schema(tb_capture_schema(c), counts, o);
	if (rc == 0 && tb_capture_problems(c))
		rc = 1;
	tb_capture_close(c);
	free(counts);
	return rc;
}

/* Every events/SYSTEM/EVENT/format of the tracefs at root into s; -ENOENT if none. */
static int load_live(struct tb_schema *s, const char *root)
{
	char *events = path_of(root, "events"), rel[2 * NAME_MAX + 16];
	DIR *systems = events ? opendir(events) : NULL, *evs;
	struct dirent *sys, *ev;
	size_t len;
	int loaded = 0;

	while (systems && (sys = readdir(systems))) {
		snprintf(rel, sizeof(rel), "%s/%s", events, sys->d_name);
		if (sys->d_name[0] == '.' || !(evs = opendir(rel)))
			continue;
		while ((ev = readdir(evs))) {
			char *text;
			snprintf(rel, sizeof(rel), "%s/%s/format", sys->d_name, ev->d_name);
			if (ev->d_name[0] == '.' || !(text = tracefs_read(events, rel, &len)))
				continue;
			loaded += tb_schema_load_format(s, rel, sys->d_name, text, len) == 0;
			free(text);
		}
		closedir(evs);
	}
	if (systems)
		closedir(systems);
	free(events);
	return loaded ? 0 : -ENOENT;
}

/* The running kernel's events. */
static int list_live(const struct options *o)
{
	const char *root = tracefs_mount();
	struct tb_schema *s;
	int rc;

	if (o->counts) {
		fprintf(stderr, "tracebuf list: -c counts the records of a file\n");
		return 2;
	}
	if (!root) {
		fprintf(stderr, "tracebuf list: no tracefs (mounted at /sys/kernel/tracing? root?)\n");
		return CLI_EXIT_SYSTEM;
	}
	if (!(s = tb_schema_new()))
		return 2;
	rc = load_live(s, root);
	if (rc == 0)
		rc = list_schema(s, NULL, o);
	else
		fprintf(stderr, "tracebuf list: %s/events: no event formats readable\n", root);
	tb_schema_free(s);
	return rc < 0 ? 2 : 0;
}

/* The notes of the object at path, added to o (one that cannot be read is said, and left out). */
static void add_object(struct options *o, const char *path)
{
	struct tb_problem err = {0};
	struct usdt_object *grown = tb__grow(o->objects, &o->objects_cap, o->nobjects + 1, sizeof(*grown), 4);

	if (!grown)
		return;
	o->objects = grown;
	grown += o->nobjects;
	grown->path = strdup(path);
	if (!grown->path)
		return;
	if (usdt_notes_load(path, &grown->notes, &err) < 0) {
		fprintf(stderr, "tracebuf list: %s: byte %llu: %s (its USDT probes are not listed)\n", path,
			(unsigned long long)err.offset, err.reason);
		free(grown->path);
		o->damaged_object = true;
		return;
	}
	o->nobjects++;
}

/* A bare name's executable in a $PATH directory, into out: false for a path or when none is. */
static bool path_lookup(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/') || !path)
		return false;
	for (const char *p = path; *p; p += *p == ':') {
		size_t n = strcspn(p, ":");
		snprintf(out, size, "%.*s/%s", (int)n, n ? p : ".", name);
		if (access(out, X_OK) == 0)
			return true;
		p += n;
	}
	return false;
}

/* The program (a bare name looked up in $PATH), then the libraries ld.so loads for it. */
static void load_objects(struct options *o, const char *program)
{
	char path[PATH_MAX + NAME_MAX + 2], line[PATH_MAX + 64];
	FILE *ldd;
	int fds[2];
	pid_t pid;

	if (!path_lookup(program, path, sizeof(path)))
		snprintf(path, sizeof(path), "%s", program);
	add_object(o, path);
	if (pipe(fds) < 0 || (pid = fork()) < 0)
		return;
	if (pid == 0) { /* ld.so lists what it maps and runs nothing of the program */
		dup2(fds[1], 1);
		close(fds[0]);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ldd = fdopen(fds[0], "r");
	while (ldd && fgets(line, sizeof(line), ldd)) {
		char *to = strstr(line, "=> /"), *end;
		if (to && (end = strstr(to, " (")) != NULL) {
			*end = '\0';
			add_object(o, to + 3);
		}
	}
	if (ldd)
		fclose(ldd);
	else
		close(fds[0]);
	waitpid(pid, NULL, 0);
}

static void free_objects(struct options *o)
{
	for (size_t i = 0; i < o->nobjects; i++) {
		usdt_notes_free(&o->objects[i].notes);
		free(o->objects[i].path);
	}
	free(o->objects);
}

static int list_program(char **argv, struct options *o)
{
	char tmp[] = "/tmp/tracebuf-list-XXXXXX";
	int rc;

	if (o->counts) {
		fprintf(stderr, "tracebuf list: -c counts the records of a file; a program has none yet\n");
		return 2;
	}
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "tracebuf list: mkdtemp: %s\n", strerror(errno));
		return CLI_EXIT_SYSTEM;
	}
	if (o->usdt)
		load_objects(o, argv[0]);
	rc = program_formats("list", argv, tmp) < 0 ? CLI_EXIT_INPUT : list_capture(tmp, o);
	program_formats_remove("list", tmp);
	free_objects(o);
	if (rc == 0 && o->damaged_object)
		rc = 1;
	return rc;
}

/* Whether name is a program the shell would find: a bare name executable in a $PATH directory. */
static bool on_path(const char *name)
{
	char path[PATH_MAX + NAME_MAX + 2];

	return path_lookup(name, path, sizeof(path));
}

static int list_what(const struct options *op, struct cli_args *a)
{
	struct options o = *op; /* list_program keeps -U's objects in it */
	enum tb_input_kind kind;
	struct stat st;
	const char *what;
	int rc;

	if (!a->noperands)
		return list_live(&o);
	what = a->operands[0];
	/*
	 * An input of a known kind is listed; so is a file nobody may execute, which is no
	 * program: the input opener then says what it is not, rather than "cannot run".
	 */
	tb_input_identify(what, NULL, NULL, true, &kind);
	if (!o.program && stat(what, &st) < 0 && !on_path(what)) {
		fprintf(stderr, "tracebuf list: %s: no such file (nor a program on PATH)\n", what);
		return CLI_EXIT_INPUT;
	}
	if (o.program || (kind == TB_INPUT_UNKNOWN && (stat(what, &st) < 0 || !S_ISREG(st.st_mode) ||
						      (st.st_mode & 0111))))
		return list_program(a->operands, &o);
	if (a->noperands != 1)
		return cli_usage_error(&cli_list, "one file only; a program's arguments follow --");
	if (o.usdt)
		return cli_usage_error(&cli_list, "-U lists a program's USDT probes; %s is a recorded file", what);
	rc = kind == TB_INPUT_TRACEDAT ? list_tracedat(what, &o) : list_capture(what, &o);
	if (rc < 0 && cli_exit_for(-rc) == CLI_EXIT_INPUT)
		return cli_input_error(&cli_list, what, -rc);
	if (rc < 0) {
		fprintf(stderr, "tracebuf list: %s: %s\n", what, strerror(-rc));
		return cli_exit_for(-rc);
	}
	return rc;
}

static int run(int argc, char **argv)
{
	struct options o = {0};
	struct cli_args a;
	int rc = parse_options(argc, argv, &o, &a);

	if (rc == 0)
		rc = list_what(&o, &a);
	cli_free(&a);
	return rc;
}
