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
 * written, 1 written but some input was left out (said on stderr), 2 usage
 * or nothing could be written.
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
#include <getopt.h>
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
	for (size_t i = 0; i < tb_export_kind_count(); i++) {
		const struct tb_exporter_kind *k = tb_export_kind(i);
		const char *sfx = tb_export_kind_suffixes(k);
		fprintf(f, "  %-11s %-11s %s\n", tb_export_kind_name(k), *sfx ? sfx : "-", tb_export_kind_help(k));
	}
}

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf convert [OPTIONS] CAPTURE_DIR -o FILE.dat\n"
		   "       tracebuf convert CAPTURE_DIR|FILE.dat -o FILE.json\n"
		   "       tracebuf convert [--format NAME] INPUT -o OUTPUT\n"
		   "\n"
		   "Write a capture directory (what `tracebuf capture` saves) as a trace.dat; or a\n"
		   "capture or trace.dat as Chrome/Perfetto trace-event JSON (ui.perfetto.dev,\n"
		   "chrome://tracing), when the output's name ends in .json; or in any format below,\n"
		   "chosen by the output's suffix or by --format (no suffix known: trace.dat).\n"
		   "\n"
		   "  -o FILE            the trace.dat to write\n"
		   "  -i DIR             the capture directory, as trace-cmd takes its input\n"
		   "  -f, --format NAME  the output's format, whatever its name (see below)\n"
		   "  --v7               write version 7 (sections; default: version 6)\n"
		   "  --compress NAME    version 7 compression: none, zlib or zstd\n"
		   "  --file-version N   6 or 7, as trace-cmd convert takes it\n"
		   "  --compression NAME the same as --compress\n"
		   "  --prefix P         the raw and stats files are PcpuN.raw, PcpuN.stats\n"
		   "  --buffer NAME      a trace.dat input's buffer alone (default: every buffer,\n"
		   "                     merged by time; \"\" is the top buffer)\n"
		   "  --add-buffer NAME=DIR  also the capture DIR, as the instance NAME (repeatable)\n"
		   "  --title T          the SVGs' title\n"
		   "  --clickhouse HOST:PORT  load the trace's tables into ClickHouse (no -o;\n"
		   "                     docs/sql.md): idempotent and atomic per trace\n"
		   "  --database D       ClickHouse's database (default: tracebuf)\n"
		   "  --host NAME        the host column's value (default: the input's base name)\n"
		   "  -h, --help         this text\n"
		   "\n"
		   "Formats (NAME, suffix, what):\n");
	list_formats(f);
	fprintf(f, "\nExit status: 0 written; 1 written, but damaged parts of the input were left out\n"
		   "(each said with its file and byte); 2 usage, or nothing could be written.\n");
	return f == stderr ? 2 : 0;
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
	o->progress = isatty(STDERR_FILENO);
	rc = tb_export_run(kind, o, &res);
	tb_usyms_free(o->usyms);
	return rc < 0 ? 2 : res.problems ? 1 : 0;
}

int cmd_convert(int argc, char **argv)
{
	enum { OPT_V7 = 256, OPT_COMPRESS, OPT_VERSION, OPT_PREFIX, OPT_BUFFER, OPT_ADD_BUFFER, OPT_TITLE, OPT_CLICKHOUSE,
	       OPT_DATABASE, OPT_HOST };
	static const struct option longopts[] = {
	    {"v7", no_argument, NULL, OPT_V7},
	    {"compress", required_argument, NULL, OPT_COMPRESS},
	    {"compression", required_argument, NULL, OPT_COMPRESS},
	    {"file-version", required_argument, NULL, OPT_VERSION},
	    {"prefix", required_argument, NULL, OPT_PREFIX},
	    {"buffer", required_argument, NULL, OPT_BUFFER},
	    {"add-buffer", required_argument, NULL, OPT_ADD_BUFFER},
	    {"format", required_argument, NULL, 'f'},
	    {"title", required_argument, NULL, OPT_TITLE},
	    {"clickhouse", required_argument, NULL, OPT_CLICKHOUSE},
	    {"database", required_argument, NULL, OPT_DATABASE},
	    {"host", required_argument, NULL, OPT_HOST},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct tb_tracedat_input buffers[MAX_BUFFERS];
	struct tb_export_opts o = {.tool = "tracebuf convert", .tracedat_version = 6, .buffers = buffers};
	const char *format = NULL;
	const struct tb_exporter_kind *kind;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "hi:o:f:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			o.in = optarg;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case OPT_V7:
			o.tracedat_version = 7;
			break;
		case OPT_COMPRESS:
			o.compression = optarg;
			break;
		case OPT_PREFIX:
			o.prefix = optarg;
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case OPT_CLICKHOUSE:
			o.clickhouse = optarg;
			format = "clickhouse-rowbinary";
			break;
		case OPT_DATABASE:
			o.database = optarg;
			break;
		case OPT_HOST:
			o.host = optarg;
			break;
		case OPT_BUFFER:
			/* NAME=DIR is --add-buffer's old spelling: '=' is in no buffer name record writes */
			if (!strchr(optarg, '=')) {
				o.buffer = optarg;
				break;
			}
			/* fall through */
		case OPT_ADD_BUFFER:
			if (add_buffer(buffers, &o.nbuffers, optarg) < 0)
				return 2;
			break;
		case OPT_VERSION:
			o.tracedat_version = atoi(optarg);
			if (o.tracedat_version != 6 && o.tracedat_version != 7) {
				fprintf(stderr, "tracebuf convert: --file-version %s: 6 or 7\n", optarg);
				return 2;
			}
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (!o.in && optind == argc - 1)
		o.in = argv[optind++];
	if (o.clickhouse && !o.out)
		o.out = o.clickhouse; /* what messages name: the server */
	if (!o.in || !o.out || optind != argc) {
		fprintf(stderr, "tracebuf convert: %s\n",
			!o.in	     ? "the input is missing: a capture directory or trace.dat"
			: !o.out     ? "the output is missing: -o FILE (its suffix chooses the format)"
				     : "one input only");
		return usage(stderr);
	}
	if (!(kind = choose_kind(format, o.out)))
		return 2;
	return convert(kind, &o);
}
