// SPDX-License-Identifier: MIT
/*
 * tracebuf formats [--dir DIR] [--list] PROGRAM [ARGS...]
 *
 * The format files of a program's events.  PROGRAM runs with
 * TRACEBUF_FORMATS=DIR in its environment: libtracebuf then writes them,
 * with header_page, header_event, printk_formats and kallsyms, in the
 * layout of a capture directory as soon as the program's own events are
 * registered, and exits before main().  They are printed (in ID order, each
 * followed by an empty line), or listed as "ID SYSTEM:NAME" with --list;
 * with --dir the directory is kept.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "program_formats.h"

struct format_file {
	unsigned id;
	char name[300]; /* SYSTEM:NAME */
	char *text;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t size = 0, n;
	FILE *out;
	char chunk[4096];

	if (!f)
		return NULL;
	out = open_memstream(&buf, &size);
	while (out && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, out);
	fclose(f);
	if (out)
		fclose(out);
	return buf;
}

static int by_id(const void *a, const void *b)
{
	const struct format_file *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* Every DIR/formats/SYSTEM/NAME.format, sorted by ID; -1 on error. */
static long read_formats(const char *dir, struct format_file **out)
{
	char path[4096];
	struct format_file *v = NULL;
	long n = 0;
	DIR *systems, *events;
	struct dirent *s, *e;

	snprintf(path, sizeof(path), "%s/formats", dir);
	if (!(systems = opendir(path)))
		return -1;
	while ((s = readdir(systems)) != NULL) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/formats/%s", dir, s->d_name);
		if (!(events = opendir(path)))
			continue;
		while ((e = readdir(events)) != NULL) {
			size_t len = strlen(e->d_name);
			struct format_file *grown;
			const char *id;
			if (len < 8 || strcmp(e->d_name + len - 7, ".format"))
				continue;
			grown = realloc(v, (size_t)(n + 1) * sizeof(*v));
			if (!grown)
				break;
			v = grown;
			snprintf(path, sizeof(path), "%s/formats/%s/%s", dir, s->d_name, e->d_name);
			v[n].text = slurp(path);
			if (!v[n].text)
				continue;
			id = strstr(v[n].text, "\nID: ");
			v[n].id = id ? (unsigned)strtoul(id + 5, NULL, 10) : 0;
			snprintf(v[n].name, sizeof(v[n].name), "%s:%.*s", s->d_name, (int)(len - 7), e->d_name);
			n++;
		}
		closedir(events);
	}
	closedir(systems);
	qsort(v, (size_t)n, sizeof(*v), by_id);
	*out = v;
	return n;
}

enum { O_DIR, O_LIST, O_N };
static const struct cli_opt opts[] = {
    [O_DIR] = {"dir", 0, CLI_STRING, "DIR", "keep the description (a capture directory's metadata) in DIR"},
    [O_LIST] = {"list", 0, CLI_FLAG, NULL, "one \"ID SYSTEM:NAME\" line per event instead of the texts"},
};

static int run(int argc, char **argv);

const struct cli_command cli_formats = {
    "formats", "the format files of a program's events (tracebuf/tracepoint.h)", "[OPTIONS] PROGRAM [ARGS...]",
    "The format files of the events of PROGRAM (linked with libtracebuf), which is run only to describe them "
    "(TRACEBUF_FORMATS) and exits before main().",
    opts, O_N, .run = run, .operands_end_options = true,
};

static int run(int argc, char **argv)
{
	char tmp[] = "/tmp/tracebuf-formats-XXXXXX";
	const char *dir = NULL;
	struct format_file *files = NULL;
	bool list = false;
	long n;
	struct cli_args a;
	int rc = cli_parse(&cli_formats, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	dir = cli_str(&a, O_DIR);
	list = cli_given(&a, O_LIST);
	if (!a.noperands) {
		cli_free(&a);
		return cli_usage_error(&cli_formats, "the program to run is missing");
	}
	rc = 0;
	if (!dir && !(dir = mkdtemp(tmp))) {
		perror("tracebuf formats: mkdtemp");
		cli_free(&a);
		return CLI_EXIT_SYSTEM;
	}
	if (program_formats("formats", a.operands, dir) < 0) {
		rc = CLI_EXIT_INPUT; /* no program, or one that does not describe events */
	} else if ((n = read_formats(dir, &files)) < 0) {
		fprintf(stderr, "tracebuf formats: %s/formats: %s\n", dir, strerror(errno));
		rc = CLI_EXIT_INPUT;
	} else {
		for (long k = 0; k < n; k++) {
			if (list)
				printf("%u %s\n", files[k].id, files[k].name);
			else
				printf("%s\n", files[k].text);
			free(files[k].text);
		}
		free(files);
	}
	if (dir == tmp)
		program_formats_remove("formats", tmp);
	cli_free(&a);
	return rc;
}
