/* An event declared in a header that both the test program and its plugin include. */
#ifndef TP_SHARED_H
#define TP_SHARED_H

#include "tracebuf/tracepoint.h"

TB_EVENT(tpd, shared, TB_PROTO(int who, int n), TB_FIELDS(tb_field(int, who, who), tb_field(int, n, n)),
	 TB_PRINTK("who=%d n=%d", REC->who, REC->n))

#endif
