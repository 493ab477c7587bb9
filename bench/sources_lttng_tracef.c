/* LTTng-UST's tracef as a peer of bench_sources' printf event (apart: it must not see TRACEPOINT_DEFINE). */
#include <lttng/tracef.h>

void lttng_src_tracef(long n);

void lttng_src_tracef(long n)
{
	for (long i = 0; i < n; i++)
		lttng_ust_tracef("%d %d %d", (int)i, (int)i + 1, (int)i + 2);
}
