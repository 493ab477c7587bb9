/* SPDX-License-Identifier: MIT */
/*
 * usdt_events.h - the events t_usdt.sh attaches bpftrace to: one of each
 * argument kind (a signed int, a negative one, a string, a u64, a bool, a
 * char array), and the dlopen'ed library's own.
 */
#ifndef TB_TEST_USDT_EVENTS_H
#define TB_TEST_USDT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebuf/tracepoint.h"

TB_EVENT(usdt_t, hit,
	 TB_PROTO(int phase, int i, const char *s, uint64_t big, bool b),
	 TB_FIELDS(tb_field(int, phase, phase), tb_field(int, i, i), tb_field(int, neg, -i - 1),
		   tb_string(s, s), tb_field(uint64_t, big, big), tb_field(bool, b, b),
		   tb_chars(tag, 8, s)),
	 TB_PRINTK("phase=%d i=%d neg=%d s=%s big=%llu b=%d tag=%s", REC->phase, REC->i, REC->neg,
		   __get_str(s), (unsigned long long)REC->big, REC->b, REC->tag))

/* The library's (usdt_lib.c): fires n events, says whether a consumer is attached to them. */
TB_EVENT(usdt_lib, fire, TB_PROTO(int n, const char *who),
	 TB_FIELDS(tb_field(int, n, n), tb_string(who, who)),
	 TB_PRINTK("n=%d who=%s", REC->n, __get_str(who)))

#endif
