/* LTTng-UST tracepoints used only as peers of bench_sources: the same payloads as its cases. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tb_src

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tb_src_lttng_tp.h"

#if !defined(TB_SRC_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TB_SRC_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(tb_src, u64, LTTNG_UST_TP_ARGS(uint64_t, v),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, v, v)))

LTTNG_UST_TRACEPOINT_EVENT(tb_src, str, LTTNG_UST_TP_ARGS(const char *, s),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_string(s, s)))

LTTNG_UST_TRACEPOINT_EVENT(tb_src, ints3, LTTNG_UST_TP_ARGS(int, a, int, b, int, c),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, a, a)
					       lttng_ust_field_integer(int, b, b)
					       lttng_ust_field_integer(int, c, c)))

#endif

#include <lttng/tracepoint-event.h>
