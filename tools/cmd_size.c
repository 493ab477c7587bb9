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

#include "cli_opts.h"
#include "cmds.h"
#include "tracebuf/page.h"
#include "tracebuf/ring.h"

enum { O_SUBBUF_KB, O_CPUS, O_JSON, O_N };
static const struct cli_opt opts[] = {
    [O_SUBBUF_KB] = {"subbuf-kb", 0, CLI_SIZE, "K", "sub-buffer size in KiB (buffer_subbuf_size_kb; default 4)",
		     .min = 1, .max = 512},
    [O_CPUS] = {"cpus", 0, CLI_INT, "N", "CPUs, for the totals (default 1)", .min = 1, .max = 4096},
    [O_JSON] = {"json", 0, CLI_FLAG, NULL, "the figures as one JSON object"},
};

static int run(int argc, char **argv);

const struct cli_command cli_size = {
    "size", "kernel buffer sizing arithmetic for a per-CPU size", "KB [OPTIONS]",
    "What the kernel makes of buffer_size_kb KB (sub-buffers, what the file reads back, bytes per CPU with "
    "the reader page) and what a tracebuf ring of that size allocates.",
    opts, O_N, .run = run,
};

static int run(int argc, char **argv)
{
	long long kb = 0;
	unsigned long long subbuf_kb = 4, cpus = 1;
	struct tb_ring_opts o;
	struct tb_sizing s;
	struct cli_args a;
	int json, rc = cli_parse(&cli_size, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	if (cli_given(&a, O_SUBBUF_KB))
		subbuf_kb = (unsigned long long)cli_num(&a, O_SUBBUF_KB);
	if (cli_given(&a, O_CPUS))
		cpus = (unsigned long long)cli_num(&a, O_CPUS);
	json = cli_given(&a, O_JSON);
	rc = a.noperands != 1 ? cli_usage_error(&cli_size, "one KB, the per-CPU size, is needed")
			      : cli_operand_number(&cli_size, "KB", CLI_SIZE, 0, 0, a.operands[0], &kb);
	cli_free(&a);
	if (rc)
		return rc;
	if (subbuf_kb > 512 || tb_sizing_compute((uint64_t)kb, (uint32_t)subbuf_kb, &s) < 0) {
		return cli_usage_error(&cli_size, "%lld KiB with %llu KiB sub-buffers is not a size the kernel accepts",
				       kb, subbuf_kb);
	}
	tb_ring_opts_default(&o);
	o.size_kb = (size_t)kb;
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
