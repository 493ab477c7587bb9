// SPDX-License-Identifier: MIT
/*
 * paced_app - a program linked with libtracebuf and nothing else, for
 * bench_record.sh to run under the real `tracebuf record`: one thread fires
 * paced:tick (a u64) at RATE events per second for SECONDS, paced in
 * batches of 64 by the monotonic clock (a batch never starts before its
 * time, so the rate is at most RATE), then prints what it wrote:
 *
 *   paced_app RATE SECONDS   ->   "paced_app: wrote N events in S s"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "tracebuf/tracepoint.h"

#define BATCH 64

TB_EVENT(paced, tick, TB_PROTO(uint64_t n), TB_FIELDS(tb_field(uint64_t, n, n)),
	 TB_PRINTK("n=%llu", (unsigned long long)REC->n))

int main(int argc, char **argv)
{
	double rate = argc > 1 ? strtod(argv[1], NULL) : 10e6;
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 2;
	uint64_t n = (uint64_t)(rate * seconds) / BATCH * BATCH;
	double per_event = 1e9 / rate, t0, t;

	pin(0);
	t0 = now_ns();
	for (uint64_t i = 0; i < n; i += BATCH) {
		while (now_ns() - t0 < (double)i * per_event)
			;
		for (uint64_t k = i; k < i + BATCH; k++)
			tb_trace(paced, tick, k);
	}
	t = (now_ns() - t0) / 1e9;
	printf("paced_app: wrote %llu events in %.3f s\n", (unsigned long long)n, t);
	return 0;
}
