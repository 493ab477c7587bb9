/* The LTTng-UST side of bench_sources: providers and timed loops for each case. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tb_src_lttng_tp.h"

void lttng_src_u64(long n);
void lttng_src_str(long n);
void lttng_src_ints3(long n);

extern const char *bench_string; /* bench_sources.c: the 22-character string */

void lttng_src_u64(long n)
{
	for (long i = 0; i < n; i++)
		lttng_ust_tracepoint(tb_src, u64, (uint64_t)i);
}

void lttng_src_str(long n)
{
	for (long i = 0; i < n; i++)
		lttng_ust_tracepoint(tb_src, str, bench_string);
}

void lttng_src_ints3(long n)
{
	for (long i = 0; i < n; i++)
		lttng_ust_tracepoint(tb_src, ints3, (int)i, (int)i + 1, (int)i + 2);
}
