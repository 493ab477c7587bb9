// SPDX-License-Identifier: MIT
/*
 * tracebuf stats DIR
 *
 * A kernel's per-CPU stats, each followed by the arithmetic the kernel
 * leaves to the reader: events written (entries + overrun + read), the
 * share lost, and the most time the buffer can still cover.  DIR is a live
 * tracefs directory (/sys/kernel/tracing or .../instances/NAME: reads
 * per_cpu/cpuN/stats) or a capture directory (cpuN.stats).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"

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
		struct tb_diag d = {.file = path};
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

int cmd_stats(int argc, char **argv)
{
	const char *dir;
	int found = 0, bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: tracebuf stats DIR   (tracefs dir, instance, or capture)\n");
		return 2;
	}
	dir = argv[1];
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
