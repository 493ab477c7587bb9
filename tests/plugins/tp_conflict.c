/*
 * A shared library whose declarations the registry must refuse: tpd:shared
 * with other fields than the program's (tests/plugins/tp_shared.h), and a
 * tb_printf format with a kernel %p extension that reads memory (%pI4).
 */
#include "tracebuf/tracepoint.h"

TB_EVENT(tpd, shared, TB_PROTO(long who), TB_FIELDS(tb_field(long, who, who)), TB_PRINTK("who=%ld", REC->who))

void conflict_fire(void);

void conflict_fire(void)
{
	tb_trace(tpd, shared, 5L);
	tb_printf("addr %pI4\n", (void *)0);
}
