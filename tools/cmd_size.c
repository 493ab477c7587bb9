// SPDX-License-Identifier: MIT
/*
 * tracebuf size KB [--subbuf-kb K] [--cpus N] [--json]
 *
 * The kernel's buffer_size_kb arithmetic for a request, and what a
 * tracebuf ring of that size really allocates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "numarg.h"
#include "tracebuf/page.h"
#include "tracebuf/ring.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: tracebuf size KB [--subbuf-kb K] [--cpus N] [--json]\n"
		   "\n"
		   "What the kernel makes of buffer_size_kb KB (sub-buffers, what the file reads\n"
		   "back, bytes per CPU with the reader page) and what a tracebuf ring of that\n"
		   "size allocates.\n"
		   "\n"
		   "  --subbuf-kb K  sub-buffer size in KiB (buffer_subbuf_size_kb; default 4)\n"
		   "  --cpus N       CPUs, for the totals (default 1)\n"
		   "  --json         the figures as one JSON object\n"
		   "  -h, --help     this text\n");
	return f == stderr ? 2 : 0;
}

int cmd_size(int argc, char **argv)
{
	unsigned long long kb = 0, subbuf_kb = 4, cpus = 1;
	struct tb_ring_opts o;
	struct tb_sizing s;
	int json = 0, have_kb = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(stdout);
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--subbuf-kb") && i + 1 < argc) {
			if (parse_u64(argv[++i], &subbuf_kb) < 0)
				return usage(stderr);
		} else if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
			if (parse_u64(argv[++i], &cpus) < 0 || cpus == 0 || cpus > 4096)
				return usage(stderr);
		} else if (!have_kb && parse_u64(argv[i], &kb) == 0)
			have_kb = 1;
		else
			return usage(stderr);
	}
	if (!have_kb)
		return usage(stderr);
	if (subbuf_kb > 512 || tb_sizing_compute(kb, (uint32_t)subbuf_kb, &s) < 0) {
		fprintf(stderr, "tracebuf size: %llu KiB with %llu KiB sub-buffers is not a size the kernel accepts\n",
			kb, subbuf_kb);
		return 1;
	}
	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.subbuf_size = s.subbuf_bytes;
	o.ncpus = (unsigned)cpus;
	if (json) {
		printf("{\"requested_kb\": %llu, \"subbuf_bytes\": %u, \"subbufs_per_cpu\": %u, "
		       "\"readback_kb\": %llu, \"allocated_bytes_per_cpu\": %llu, \"data_bytes_per_subbuf\": %u, "
		       "\"usable_bytes_per_cpu\": %llu, \"cpus\": %llu, \"total_readback_kb\": %llu, "
		       "\"tracebuf_region_bytes\": %zu}\n",
		       (unsigned long long)s.requested_kb, s.subbuf_bytes, s.subbufs_per_cpu,
		       (unsigned long long)s.readback_kb, (unsigned long long)s.allocated_bytes_per_cpu,
		       s.data_bytes, (unsigned long long)s.usable_bytes, cpus,
		       (unsigned long long)s.readback_kb * cpus, tb_ring_region_size(&o));
		return 0;
	}
	printf("requested:          %llu KiB per CPU (buffer_size_kb)\n", (unsigned long long)s.requested_kb);
	printf("sub-buffer:         %u bytes (%u for records, max payload %u)\n", s.subbuf_bytes, s.data_bytes,
	       tb_page_max_payload(s.subbuf_bytes));
	printf("sub-buffers/CPU:    %u  = max(2, ceil(%llu * 1024 / %u))\n", s.subbufs_per_cpu,
	       (unsigned long long)s.requested_kb, s.data_bytes);
	printf("usable bytes/CPU:   %llu\n", (unsigned long long)s.usable_bytes);
	printf("reads back:         %llu KiB (what buffer_size_kb shows)\n", (unsigned long long)s.readback_kb);
	printf("allocated/CPU:      %llu bytes (%u sub-buffers + 1 reader page)\n",
	       (unsigned long long)s.allocated_bytes_per_cpu, s.subbufs_per_cpu);
	printf("CPUs:               %llu  (buffer_total_size_kb %llu)\n", cpus,
	       (unsigned long long)s.readback_kb * cpus);
	printf("tracebuf region:    %zu bytes for %llu CPU(s), control blocks included\n", tb_ring_region_size(&o),
	       cpus);
	return 0;
}
