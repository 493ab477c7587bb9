// SPDX-License-Identifier: MIT
/*
 * test_func_self - the function tracer does not trace itself, even when
 * the ring and the tracer are built with -finstrument-functions (the
 * Makefile links this test against such a build, obj-instr/): every
 * function of the ring then calls the hooks from inside a hook, and the
 * per-thread guard must drop those calls - no record of them, no
 * recursion.  The tracer's own files carry no_instrument_function, so
 * they make no hook calls at all (tests/t_func_notrace.sh reads that back
 * from the object code).
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/func.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"

#define NOTRACE __attribute__((no_instrument_function))

/* The only functions of this program that are instrumented: two calls. */
__attribute__((noipa)) int traced_inner(int x)
{
	return x * 3;
}

__attribute__((noipa)) int traced_outer(int x)
{
	return traced_inner(x) + 1;
}

NOTRACE int main(void)
{
	struct tb_func_thread_stats st;
	struct tb_ring *ring;
	struct tb_read_event ev;
	uint64_t funcs[8];
	int n = 0, entries = 0, others = 0;

	if (tb_ring_new(&ring, NULL) < 0)
		skip_all("cannot create a ring");
	is_int(tb_func_start(ring, NULL), 0, "tracing starts with an instrumented ring");
	traced_outer(2);
	tb_func_stop();
	tb_func_thread_stats(&st);
	while (tb_consume_merged(ring, &ev) == 1) {
		uint16_t id;
		uint64_t fn;
		if (ev.kind != TB_READ_RECORD)
			continue;
		memcpy(&id, ev.data, 2);
		memcpy(&fn, (const uint8_t *)ev.data + 8, 8);
		if (n < 8)
			funcs[n] = fn;
		n++;
		entries += id == TB_FUNC_ENTRY_ID;
		others += fn != (uint64_t)(uintptr_t)traced_outer && fn != (uint64_t)(uintptr_t)traced_inner;
	}
	is_int(n, 4, "exactly 4 records: the entries and exits of the program's two calls");
	is_int(entries, 2, "2 of them entries");
	is_int(others, 0, "no record of a function of the ring or of the tracer");
	ok(n >= 1 && funcs[0] == (uint64_t)(uintptr_t)traced_outer, "the first is traced_outer's entry");
	ok(st.reentered > 0,
	   "the instrumented ring called the hooks from inside a hook %llu times; each was dropped",
	   (unsigned long long)st.reentered);
	is_int(st.entries, 2, "the thread counts 2 entries written");
	tb_ring_free(ring);
	return done_testing();
}
