/* The LTTng-UST side of bench_write: the provider and the timed loop. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tb_lttng_tp.h"

void lttng_loop(long n);

void lttng_loop(long n)
{
	for (long i = 0; i < n; i++)
		lttng_ust_tracepoint(tb_bench, event, (uint64_t)i);
}
