// SPDX-License-Identifier: MIT
/*
 * tracebuf convert CAPTURE_DIR -o FILE.dat [--v7 [--compress zstd|zlib]]
 *                  [--add-buffer NAME=DIR]...
 *
 * Write a capture directory as a trace.dat that trace-cmd and KernelShark
 * read: version 6 by default, version 7 with --v7 (trace-cmd's
 * --file-version 7 and --compression NAME are taken too).  Each --add-buffer
 * (--buffer NAME=DIR, its old spelling, still works) adds another capture as an instance NAME beside it (a program's ring and
 * a kernel capture with the same clock, on one time line).  Exit status: 0
 * written, 1 written but some input was left out (said on stderr), the
 * others cli_opts.h's table.
 *
 * tracebuf convert FILE.dat|CAPTURE_DIR -o FILE.json writes Chrome / Perfetto
 * trace-event JSON instead (tracebuf/chrome.h), chosen by the name's .json,
 * from every buffer of a trace.dat merged by time (--buffer NAME: one);
 * every format of the export stage's table (tracebuf/export.h) is chosen
 * the same way, by the output's suffix, or by --format NAME.  This file
 * keeps only the arguments: the writing, its progress line (when stderr is
 * a terminal) and its damage handling are the export stage's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "objects_file.h"
#include "tracebuf/export.h"

/* The formats, from the export stage's table: name, suffixes, what it writes. */
static void list_formats(FILE *f)
{
	fprintf(f, "Formats (NAME, suffix, what):\n");
	for (size_t i = 0; i < tb_export_kind_count(); i++) {
		const struct tb_exporter_kind *k = tb_export_kind(i);
		const char *sfx = tb_export_kind_suffixes(k);
		fprintf(f, "  %-11s %-11s %s\n", tb_export_kind_name(k), *sfx ? sfx : "-", tb_export_kind_help(k));
	}
}

#define MAX_BUFFERS 63

/* --add-buffer NAME=DIR: one more capture, as an instance. */
static int add_buffer(struct tb_tracedat_input *inputs, size_t *n, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		fprintf(stderr, "tracebuf convert: --add-buffer takes NAME=DIR, not '%s'\n", arg);
		return -1;
	}
	if (*n == MAX_BUFFERS) {
		fprintf(stderr, "tracebuf convert: at most %d buffers\n", MAX_BUFFERS);
		return -1;
	}
	*eq = '\0';
	inputs[(*n)++] = (struct tb_tracedat_input){.dir = eq + 1, .name = arg};
	return 0;
}

/* The kind --format names, or the one the output's suffix says (none: trace.dat, as before formats). */
static const struct tb_exporter_kind *choose_kind(const char *format, const char *out)
{
	const struct tb_exporter_kind *k;

	if (format) {
		if (!(k = tb_export_find(format))) {
			fprintf(stderr, "tracebuf convert: --format %s: unknown; the formats are:", format);
			for (size_t i = 0; i < tb_export_kind_count(); i++)
				fprintf(stderr, " %s", tb_export_kind_name(tb_export_kind(i)));
			fputc('\n', stderr);
		}
		return k;
	}
	k = tb_export_for_path(out);
	return k ? k : tb_export_find("tracedat");
}

/* Write it, the objects file's user symbols at hand for the JSON's function names. */
static int convert(const struct tb_exporter_kind *kind, struct tb_export_opts *o)
{
	struct tb_export_result res;
	int rc;

	if (kind == tb_export_find("json"))
		o->usyms = objects_load("convert", o->in, NULL);
	rc = tb_export_run(kind, o, &res);
	tb_usyms_free(o->usyms);
	return rc < 0 ? cli_exit_for(-rc) : res.problems ? 1 : 0;
}

static const char *const compressions[] = {"none", "zlib", "zstd", NULL};

enum {
	O_INPUT, O_OUTPUT, O_FORMAT, O_V7, O_COMPRESS, O_VERSION, O_PREFIX, O_BUFFER, O_ADD_BUFFER, O_TITLE,
	O_CLICKHOUSE, O_DATABASE, O_CLUSTER, O_HOST, O_CLOCK_OFFSET, O_N
};
static const struct cli_opt opts[] = {
    [O_INPUT] = {"input", 'i', CLI_STRING, "INPUT", "the capture directory or trace.dat (or as the operand)", "-i"},
    [O_OUTPUT] = {"output", 'o', CLI_STRING, "FILE", "the file to write; its suffix chooses the format (required)", "-o"},
    [O_FORMAT] = {"format", 0, CLI_STRING, "NAME", "the output's format, whatever its name (see below)"},
    [O_V7] = {"v7", 0, CLI_FLAG, NULL, "write trace.dat version 7 (sections; default: version 6)", "--file-version 7"},
    [O_COMPRESS] = {"compress", 0, CLI_ENUM, "NAME", "version 7 compression", "--compression",
		    .choices = compressions, .also = "compression"},
    [O_VERSION] = {"file-version", 0, CLI_INT, "N", "the trace.dat version, 6 or 7", "--file-version", .min = 6,
		   .max = 7},
    [O_PREFIX] = {"prefix", 0, CLI_STRING, "P", "the raw and stats files are PcpuN.raw, PcpuN.stats"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME",
		  "a trace.dat input's buffer alone (default: every buffer, merged by time; \"\" is the top buffer)",
		  "-B"},
    [O_ADD_BUFFER] = {"add-buffer", 0, CLI_LIST, "NAME=DIR", "also the capture DIR, as the instance NAME (repeatable)"},
    [O_TITLE] = {"title", 0, CLI_STRING, "T", "the SVGs' title"},
    [O_CLICKHOUSE] = {"clickhouse", 0, CLI_STRING, "HOST:PORT",
		      "load the trace's tables into ClickHouse over HTTP (no -o; docs/clickhouse.md): idempotent and "
		      "atomic per trace"},
    [O_DATABASE] = {"database", 0, CLI_STRING, "D", "ClickHouse's database (default: tracebuf)"},
    [O_CLUSTER] = {"cluster", 0, CLI_STRING, "NAME",
		   "also a Distributed table over the server's cluster NAME per table loaded, in database D_all"},
    [O_HOST] = {"host", 0, CLI_STRING, "NAME", "the host column's value (default: the input's base name)"},
    [O_CLOCK_OFFSET] = {"clock-offset", 0, CLI_INT, "NS",
			"ClickHouse: add NS (may be negative) to every time stamp loaded: this host's clock on the fleet's",
			.min = -(1LL << 62), .max = 1LL << 62},
};

static int run(int argc, char **argv);

const struct cli_command cli_convert = {
    "convert", "write a capture directory as a trace.dat (trace-cmd's format)",
    "[OPTIONS] CAPTURE_DIR -o FILE.dat\nCAPTURE_DIR|FILE.dat -o FILE.json\n[--format NAME] INPUT -o OUTPUT",
    "Write a capture directory (what `tracebuf capture` saves) as a trace.dat; or a capture or trace.dat as "
    "Chrome/Perfetto trace-event JSON (ui.perfetto.dev, chrome://tracing), when the output's name ends in .json; "
    "or in any format of the export stage, chosen by the output's suffix or by --format (no suffix known: "
    "trace.dat).  `tracebuf convert --format list` lists the formats.",
    opts, O_N, .run = run, .long_work = true,
    .exit_notes = "written, but damaged parts of the input were left out (each said with its file and byte)",
    .more_help = list_formats,
};

/* --add-buffer, and --buffer NAME=DIR (its old spelling: '=' is in no buffer name record writes). */
static int add_buffers(struct cli_args *a, struct tb_tracedat_input *buffers, struct tb_export_opts *o)
{
	const char *b = cli_str(a, O_BUFFER);

	if (b && strchr(b, '=')) {
		fprintf(stderr, "tracebuf convert: note: --buffer NAME=DIR is now --add-buffer NAME=DIR\n");
		if (add_buffer(buffers, &o->nbuffers, (char *)b) < 0)
			return CLI_EXIT_USAGE;
		b = NULL;
	}
	o->buffer = b;
	for (int i = 0; i < a->v[O_ADD_BUFFER].given; i++)
		if (add_buffer(buffers, &o->nbuffers, (char *)a->v[O_ADD_BUFFER].list[i]) < 0)
			return CLI_EXIT_USAGE;
	return 0;
}

static int run(int argc, char **argv)
{
	struct tb_tracedat_input buffers[MAX_BUFFERS];
	struct tb_export_opts o = {.tool = "tracebuf convert", .tracedat_version = 6, .buffers = buffers};
	const struct tb_exporter_kind *kind;
	struct cli_args a;
	int rc = cli_parse(&cli_convert, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	if (cli_given(&a, O_FORMAT) && !strcmp(cli_str(&a, O_FORMAT), "list")) {
		list_formats(stdout);
		cli_free(&a);
		return 0;
	}
	o.out = cli_str(&a, O_OUTPUT);
	o.prefix = cli_str(&a, O_PREFIX);
	o.title = cli_str(&a, O_TITLE);
	o.compression = cli_str(&a, O_COMPRESS);
	if (cli_given(&a, O_VERSION))
		o.tracedat_version = (int)cli_num(&a, O_VERSION);
	if (cli_given(&a, O_V7))
		o.tracedat_version = 7;
	o.progress = cli_show_progress(&a);
	o.clickhouse = cli_str(&a, O_CLICKHOUSE);
	o.database = cli_str(&a, O_DATABASE);
	o.cluster = cli_str(&a, O_CLUSTER);
	o.host = cli_str(&a, O_HOST);
	o.clock_offset = cli_given(&a, O_CLOCK_OFFSET) ? (int64_t)cli_num(&a, O_CLOCK_OFFSET) : 0;
	if (o.clickhouse && !o.out)
		o.out = o.clickhouse; /* what messages name: the server */
	const char *port = o.clickhouse ? strrchr(o.clickhouse, ':') : NULL;
	rc = 0;
	if (o.clickhouse && (!port || port == o.clickhouse || !port[1] || strspn(port + 1, "0123456789") != strlen(port + 1)))
		rc = cli_usage_error(&cli_convert, "--clickhouse %s: not HOST:PORT (the HTTP port, 8123 by default)",
				     o.clickhouse);
	if (!rc && o.cluster && !o.clickhouse)
		rc = cli_usage_error(&cli_convert, "--cluster %s is for a load: add --clickhouse HOST:PORT", o.cluster);
	if (!rc && o.clock_offset && !o.clickhouse && !(cli_given(&a, O_FORMAT) && !strcmp(cli_str(&a, O_FORMAT), "clickhouse-rowbinary")))
		rc = cli_usage_error(&cli_convert, "--clock-offset is for ClickHouse: add --clickhouse HOST:PORT or --format clickhouse-rowbinary");
	if (!rc)
		rc = cli_one_input(&a, O_INPUT, &o.in);
	if (!rc && o.compression && o.tracedat_version != 7)
		rc = cli_usage_error(&cli_convert, "--compress is for version 7: add --v7");
	if (!rc && !o.out)
		rc = cli_usage_error(&cli_convert, "the output is missing: -o FILE (its suffix chooses the format) or --clickhouse HOST:PORT");
	if (!rc)
		rc = add_buffers(&a, buffers, &o);
	if (!rc && !(kind = choose_kind(o.clickhouse ? "clickhouse-rowbinary" : cli_str(&a, O_FORMAT), o.out)))
		rc = CLI_EXIT_USAGE;
	if (!rc)
		rc = convert(kind, &o);
	cli_free(&a);
	return rc;
}
