// SPDX-License-Identifier: MIT
/*
 * tracebuf convert CAPTURE_DIR -o FILE.dat [--v7 [--compress zstd|zlib]]
 *                  [--buffer NAME=DIR]...
 *
 * Write a capture directory as a trace.dat that trace-cmd and KernelShark
 * read: version 6 by default, version 7 with --v7 (trace-cmd's
 * --file-version 7 and --compression NAME are taken too).  Each --buffer
 * adds another capture as an instance NAME beside it (a program's ring and
 * a kernel capture with the same clock, on one time line).  Exit status: 0
 * written, 1 written but some input was left out (said on stderr), 2 usage
 * or nothing could be written.
 *
 * tracebuf convert FILE.dat|CAPTURE_DIR -o FILE.json writes Chrome / Perfetto
 * trace-event JSON instead (tracebuf/chrome.h), chosen by the name's .json.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "objects_file.h"
#include "tracebuf/chrome.h"
#include "tracebuf/tracedat.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf convert [OPTIONS] CAPTURE_DIR -o FILE.dat\n"
		   "       tracebuf convert CAPTURE_DIR|FILE.dat -o FILE.json\n"
		   "\n"
		   "Write a capture directory (what `tracebuf capture` saves) as a trace.dat; or a\n"
		   "capture or trace.dat as Chrome/Perfetto trace-event JSON (ui.perfetto.dev,\n"
		   "chrome://tracing), when the output's name ends in .json.\n"
		   "\n"
		   "  -o FILE            the trace.dat to write\n"
		   "  -i DIR             the capture directory, as trace-cmd takes its input\n"
		   "  --v7               write version 7 (sections; default: version 6)\n"
		   "  --compress NAME    version 7 compression: none, zlib or zstd\n"
		   "  --file-version N   6 or 7, as trace-cmd convert takes it\n"
		   "  --compression NAME the same as --compress\n"
		   "  --prefix P         the raw and stats files are PcpuN.raw, PcpuN.stats\n"
		   "  --buffer NAME=DIR  also the capture DIR, as the instance NAME (repeatable)\n"
		   "  -h, --help         this text\n");
	return f == stderr ? 2 : 0;
}

#define MAX_INPUTS 64

/* --buffer NAME=DIR: one more capture, as an instance. */
static int add_buffer(struct tb_tracedat_input *inputs, size_t *n, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		fprintf(stderr, "tracebuf convert: --buffer takes NAME=DIR, not '%s'\n", arg);
		return -1;
	}
	if (*n == MAX_INPUTS) {
		fprintf(stderr, "tracebuf convert: at most %d buffers\n", MAX_INPUTS - 1);
		return -1;
	}
	*eq = '\0';
	inputs[(*n)++] = (struct tb_tracedat_input){.dir = eq + 1, .name = arg};
	return 0;
}

struct counted {
	unsigned long problems;
};

static void count_diag(void *ctx, const struct tb_diag *d)
{
	struct counted *c = ctx;

	if (!d->warning)
		c->problems++;
	tb_diag_print(NULL, d);
}

static bool is_json_name(const char *path)
{
	size_t n = strlen(path);

	return n > 5 && !strcmp(path + n - 5, ".json");
}

/* The JSON export: tasks, CPUs, calls and counters as tracks (tracebuf/chrome.h). */
static int convert_json(const char *in, const char *out)
{
	struct tb_chrome_totals t;
	struct tb_capture *c;
	FILE *f;
	int rc = tb_capture_open(in, NULL, &c);

	if (rc < 0) {
		fprintf(stderr, "tracebuf convert: %s: cannot open: %s\n", in, strerror(-rc));
		return 2;
	}
	struct tb_chrome_opts o = {.usyms = objects_load("convert", in, NULL)};
	if (o.usyms)
		tb_usyms_register(o.usyms, tb_capture_schema(c));
	if (!(f = fopen(out, "w"))) {
		fprintf(stderr, "tracebuf convert: %s: %s\n", out, strerror(errno));
		rc = -errno;
	} else {
		rc = tb_chrome_json_write(c, f, &o, &t);
		if (fclose(f) != 0 && rc == 0)
			rc = -EIO;
		if (rc < 0)
			fprintf(stderr, "tracebuf convert: %s: %s\n", out, strerror(-rc));
	}
	if (rc == 0)
		fprintf(stderr,
			"tracebuf convert: %s: %llu records: %llu CPU slices, %llu calls, %llu counter values, "
			"%llu instants, %llu tasks\n",
			out, (unsigned long long)t.records, (unsigned long long)t.cpu_slices,
			(unsigned long long)t.calls, (unsigned long long)t.counters, (unsigned long long)t.instants,
			(unsigned long long)t.tracks);
	unsigned long problems = tb_capture_problems(c);
	tb_usyms_free(o.usyms);
	tb_capture_close(c);
	return rc < 0 ? 2 : problems ? 1 : 0;
}

int cmd_convert(int argc, char **argv)
{
	enum { OPT_V7 = 256, OPT_COMPRESS, OPT_VERSION, OPT_PREFIX, OPT_BUFFER };
	static const struct option longopts[] = {
	    {"v7", no_argument, NULL, OPT_V7},
	    {"compress", required_argument, NULL, OPT_COMPRESS},
	    {"compression", required_argument, NULL, OPT_COMPRESS},
	    {"file-version", required_argument, NULL, OPT_VERSION},
	    {"prefix", required_argument, NULL, OPT_PREFIX},
	    {"buffer", required_argument, NULL, OPT_BUFFER},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct counted counted = {0};
	struct tb_tracedat_write_opts o = {.version = 6, .diag = count_diag, .diag_ctx = &counted};
	const char *in = NULL, *out = NULL, *prefix = NULL;
	struct tb_tracedat_input inputs[MAX_INPUTS];
	size_t ninputs = 1;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "hi:o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			in = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_V7:
			o.version = 7;
			break;
		case OPT_COMPRESS:
			o.compression = optarg;
			break;
		case OPT_PREFIX:
			prefix = optarg;
			break;
		case OPT_BUFFER:
			if (add_buffer(inputs, &ninputs, optarg) < 0)
				return 2;
			break;
		case OPT_VERSION:
			o.version = atoi(optarg);
			if (o.version != 6 && o.version != 7) {
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
	if (!in && optind == argc - 1)
		in = argv[optind++];
	if (!in || !out || optind != argc)
		return usage(stderr);
	if (is_json_name(out))
		return convert_json(in, out);
	if (o.compression && strcmp(o.compression, "none") && o.version != 7) {
		fprintf(stderr, "tracebuf convert: compression needs version 7 (--v7)\n");
		return 2;
	}
	inputs[0] = (struct tb_tracedat_input){.dir = in, .prefix = prefix, .name = ""};
	rc = tb_tracedat_write_captures(inputs, ninputs, out, &o);
	if (rc < 0) {
		fprintf(stderr, "tracebuf convert: %s -> %s: %s\n", in, out, strerror(-rc));
		return 2;
	}
	return counted.problems ? 1 : 0;
}
