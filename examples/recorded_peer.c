/*
 * recorded_peer - a second program with events of its own, unrelated to
 * examples/recorded.c: both can write into one `tracebuf record` session
 * and every record still reads as its own event, because the session's
 * processes take their event IDs from one table (src/source/session_ids.c).
 *
 *   tracebuf record -o both.dat -- sh -c 'build/examples/recorded_peer 500 & build/examples/recorded 500; wait'
 *   tracebuf report both.dat
 *
 * recorded_peer [N]: fires net:send N times (seq = 0..N-1, bytes = 64 * seq),
 * then net:closed once.  Its events are declared in a different order and
 * shape than recorded's, so per-process IDs would collide.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tracebuf/tracepoint.h"

TB_EVENT(net, closed, TB_PROTO(uint32_t sent), TB_FIELDS(tb_field(uint32_t, sent, sent)),
	 TB_PRINTK("sent=%u", REC->sent))

TB_EVENT(net, send, TB_PROTO(uint32_t seq, uint32_t bytes),
	 TB_FIELDS(tb_field(uint32_t, seq, seq), tb_field(uint32_t, bytes, bytes)),
	 TB_PRINTK("seq=%u bytes=%u", REC->seq, REC->bytes))

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 500;

	for (uint32_t i = 0; i < n; i++)
		tb_trace(net, send, i, 64 * i);
	tb_trace(net, closed, n);
	return 0;
}
