// SPDX-License-Identifier: MIT
/*
 * tracebuf stats DIR | FILE.dat
 *
 * A kernel's per-CPU stats, each followed by the arithmetic the kernel
 * leaves to the reader: events written (entries + overrun + read), the
 * share lost, and the most time the buffer can still cover.  DIR is a live
 * tracefs directory (/sys/kernel/tracing or .../instances/NAME: reads
 * per_cpu/cpuN/stats) or a capture directory (cpuN.stats); FILE.dat a
 * trace.dat, whose CPUSTAT options hold the stats trace-cmd read when it
 * stopped recording (of every buffer it recorded).
 *
 * tracebuf stats --svg FILE.svg DIR|FILE.dat draws each CPU's ring instead
 * (tracebuf/ringsvg.h): its sub-buffers as the capture holds them, with the
 * ring's size from meta.txt's buffer_size_kb where the capture says it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cmds.h"
#include "tracebuf/capture.h"
#include "tracebuf/input.h"
#include "tracebuf/ring.h"
#include "tracebuf/export.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracedat.h"

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = calloc(1, 4096);
	n = buf ? fread(buf, 1, 4095, f) : 0;
	(void)n;
	fclose(f);
	return buf;
}

static int print_cpu(const char *path, int cpu)
{
	struct tb_cpu_stats st;
	char *text = read_text(path);
	int rc = -ENOENT;

	if (text) {
		struct tb_problem d = {.file = path};
		rc = tb_stats_parse_kernel(text, &st, &d);
		if (rc < 0)
			fprintf(stderr, "tracebuf stats: %s: offset %llu: %s\n", path, (unsigned long long)d.offset,
				d.reason);
		else {
			printf("== cpu%d (%s)\n", cpu, path);
			tb_stats_print(stdout, NULL, &st, 1);
		}
	}
	free(text);
	return rc;
}

/* The CPUSTAT stats of every buffer of a trace.dat, or of the one named (only, non-NULL). */
static int tracedat_stats(const char *path, const char *only)
{
	struct tb_tracedat *td;
	struct tb_cpu_stats st;
	int rc = tb_tracedat_open(path, NULL, &td), found = 0;

	if (rc < 0) {
		return cli_input_error(&cli_stats, path, -rc);
	}
	/* The top buffer's stats (if any), then each instance's. */
	for (int b = -1; b < tb_tracedat_buffer_count(td); b++) {
		const char *name = b < 0 ? "" : tb_tracedat_buffer(td, b)->name;
		if ((b >= 0 && !name[0]) || (only && strcmp(only, name)))
			continue;
		for (int cpu = 0; cpu < tb_tracedat_info(td)->cpus; cpu++) {
			if (tb_tracedat_cpu_stats(td, name, cpu, &st) < 0)
				continue;
			printf("== cpu%d (%s%s%s)\n", cpu, path, name[0] ? ", buffer " : "", name);
			tb_stats_print(stdout, NULL, &st, 1);
			found++;
		}
	}
	/* Damage met opening the file (a cut, a bad buffer block) was said: the stats printed are what is left. */
	bool damaged = tb_tracedat_problems(td) != 0;
	tb_tracedat_close(td);
	if (!found && only) {
		fprintf(stderr, "tracebuf stats: %s: no per-CPU stats (CPUSTAT options) of buffer '%s'\n", path,
			only);
		return 2;
	}
	if (!found) {
		fprintf(stderr, "tracebuf stats: %s: no per-CPU stats (CPUSTAT options) in the file\n",
			path);
		return 1;
	}
	return damaged ? 1 : 0;
}

/* Any other input the input table opens (a shm session): the stats its capture holds, per CPU. */
static int capture_stats(const char *path)
{
	struct tb_cpu_stats st;
	struct tb_capture *c;
	int found = 0;
	bool damaged;

	if (tb_capture_open(path, NULL, &c) < 0)
		return CLI_EXIT_INPUT; /* said */
	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++) {
		if (tb_capture_cpu_stats(c, cpu, &st) < 0)
			continue;
		/* In the clock report shows, as tracedat_stats() prints a trace.dat's. */
		st.oldest_ts = tb_capture_ts_ns(c, st.oldest_ts);
		st.now_ts = tb_capture_ts_ns(c, st.now_ts);
		printf("== cpu%d (%s)\n", cpu, path);
		tb_stats_print(stdout, NULL, &st, 1);
		found++;
	}
	damaged = tb_capture_problems(c) != 0;
	tb_capture_close(c);
	if (!found) {
		fprintf(stderr, "tracebuf stats: %s: no per-CPU stats in it\n", path);
		return 1;
	}
	return damaged ? 1 : 0;
}

/* The ring picture: the export stage's ring-svg kind, as `convert --format ring-svg` writes it. */
static int stats_svg(const char *svg, const char *input, const char *buffer)
{
	struct tb_export_opts o = {.tool = "tracebuf stats", .in = input, .out = svg, .buffer = buffer};
	struct tb_export_result res;
	int rc = tb_export_run(tb_export_find("ring-svg"), &o, &res);

	return rc < 0 ? cli_exit_for(-rc) : res.problems ? 1 : 0;
}

enum { O_SVG, O_BUFFER, O_N };
static const struct cli_opt opts[] = {
    [O_SVG] = {"svg", 0, CLI_STRING, "FILE.svg",
	       "draw each CPU's ring instead: sub-buffers as cells, the head, the commit page and the reader page, "
	       "how full each is, what was overwritten and the loss numbers (not of a live instance, which reading "
	       "would consume)"},
    [O_BUFFER] = {"buffer", 'B', CLI_STRING, "NAME", "a trace.dat's buffer alone (\"\" is the top buffer)", "-B"},
};

static int run(int argc, char **argv);

const struct cli_command cli_stats = {
    "stats", "a kernel's per-CPU stats with written, lost share and time window", "[OPTIONS] DIR | FILE.dat",
    "Each CPU's stats, the kernel's lines first, then written, lost (with its share) and the time window.  DIR: "
    "a tracefs directory or instance (per_cpu/cpuN/stats) or a capture directory (cpuN.stats); FILE.dat: the "
    "stats trace-cmd stored when it stopped recording, per buffer; times in the clock report shows.",
    opts, O_N, .run = run,
    .exit_notes = "damage met, or the input holds no stats",
};

static int run(int argc, char **argv)
{
	const char *dir, *buffer, *svg;
	enum tb_input_kind kind;
	int found = 0, bad = 0;
	struct cli_args a;
	int rc = cli_parse(&cli_stats, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	svg = cli_str(&a, O_SVG);
	buffer = cli_str(&a, O_BUFFER);
	dir = a.noperands == 1 ? a.operands[0] : NULL;
	rc = a.noperands == 1 ? 0 : cli_usage_error(&cli_stats, a.noperands ? "one input only" : "the input is missing");
	cli_free(&a);
	if (rc)
		return rc;
	if (svg)
		return stats_svg(svg, dir, buffer);
	if (tb_input_identify(dir, NULL, NULL, false, &kind) < 0)
		return CLI_EXIT_INPUT; /* said: no such file, or none of the kinds */
	if (kind == TB_INPUT_TRACEDAT)
		return tracedat_stats(dir, buffer);
	if (buffer && buffer[0]) {
		fprintf(stderr, "tracebuf stats: %s: no buffer '%s': a %s has one buffer, the top one (\"\")\n", dir,
			buffer, tb_input_kind_name(kind));
		return 2;
	}
	if (kind != TB_INPUT_CAPTURE_DIR && kind != TB_INPUT_LIVE_INSTANCE)
		return capture_stats(dir);
	for (int cpu = 0; cpu < 4096; cpu++) {
		char live[4096], cap[4096];
		int rc;

		snprintf(live, sizeof(live), "%s/per_cpu/cpu%d/stats", dir, cpu);
		snprintf(cap, sizeof(cap), "%s/cpu%d.stats", dir, cpu);
		rc = print_cpu(live, cpu);
		if (rc == -ENOENT)
			rc = print_cpu(cap, cpu);
		if (rc == -ENOENT)
			break;
		found++;
		bad += rc < 0;
	}
	if (!found) {
		fprintf(stderr, "tracebuf stats: %s: no per_cpu/cpuN/stats or cpuN.stats files\n", dir);
		return 1;
	}
	return bad ? 1 : 0;
}
