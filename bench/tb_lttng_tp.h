/* LTTng-UST tracepoint provider used only as the benchmark peer. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tb_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tb_lttng_tp.h"

#if !defined(TB_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TB_LTTNG_TP_H

#include <lttng/tracepoint.h>

/* One 8-byte integer: the same payload tb_write carries in bench_write. */
LTTNG_UST_TRACEPOINT_EVENT(tb_bench, event, LTTNG_UST_TP_ARGS(uint64_t, v),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, v, v)))

#endif

#include <lttng/tracepoint-event.h>
