// SPDX-License-Identifier: MIT
/*
 * The gate every emit tests (tracepoint.h, docs/usdt.md): the kernel's count
 * of attached USDT consumers and tracebuf's own switch share one word, and
 * neither writer disturbs the other.  The kernel's stores into the
 * semaphore are made here by the test itself, as the kernel makes them (a
 * 16-bit store into the event's descriptor), so this runs without uprobes;
 * t_usdt.sh attaches the real thing.  Also under ThreadSanitizer: writers
 * fire while the count changes under them.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(ugate, ev, TB_PROTO(uint32_t n), TB_FIELDS(tb_field(uint32_t, n, n)), TB_PRINTK("n=%u", REC->n))

#define PER_WRITER 2000

static atomic_int writers_done;

/* What the kernel does when a consumer attaches (count 1 up) or detaches: a store of the 16 bits. */
static void kernel_count(uint16_t count)
{
	__atomic_store_n(&tb_event_ugate_ev.gate.part.usdt, count, __ATOMIC_RELAXED);
}

static unsigned long records(struct tb_ring *ring)
{
	struct tb_read_event ev;
	unsigned long n = 0;

	while (tb_consume_merged(ring, &ev) == 1)
		n += ev.kind == TB_READ_RECORD;
	return n;
}

static void fire(int n)
{
	for (int i = 0; i < n; i++)
		tb_trace(ugate, ev, (uint32_t)i);
}

static void one_thread(struct tb_ring *ring)
{
	ok(!tb_trace_ugate_ev_enabled() && !tb_usdt_attached(ugate, ev), "a new event: nobody wants it");
	kernel_count(3);
	ok(tb_trace_ugate_ev_enabled() && tb_usdt_attached(ugate, ev), "a USDT consumer attached: the event is wanted");
	fire(10);
	is_int((long long)records(ring), 0, "... and fires its probe alone: tracebuf's switch is off, no record");
	tb_events_enable("ugate:ev", NULL, 0);
	is_int(tb_event_ugate_ev.gate.part.usdt, 3, "enabling it leaves the kernel's count as it was");
	fire(10);
	is_int((long long)records(ring), 10, "both on: tracebuf records every hit");
	kernel_count(0);
	ok(tb_trace_ugate_ev_enabled() && !tb_usdt_attached(ugate, ev), "the consumer detached: still enabled for tracebuf");
	fire(10);
	is_int((long long)records(ring), 10, "... which records every hit");
	kernel_count(1);
	tb_events_disable("ugate:ev", NULL, 0);
	ok(tb_event_ugate_ev.gate.part.usdt == 1 && tb_event_ugate_ev.gate.part.on == 0,
	   "disabling it leaves the kernel's count as it was");
	kernel_count(0);
	ok(!tb_trace_ugate_ev_enabled(), "nobody wants it again: the gate is 0");
	tb_events_enable("ftrace:bprint", NULL, 0);
	ok(tb__printf_gate.part.on == 1 && tb__printf_gate.part.usdt == 0,
	   "ftrace:bprint enabled: the printf gate of this object (which has a tb_printf) opens");
	tb_printf("through the gate %d", 1);
	is_int((long long)records(ring), 1, "... and its tb_printf records");
	tb_events_disable("ftrace:bprint", NULL, 0);
	ok(tb__printf_gate.word == 0, "... and closes");
}

static void *writer(void *arg)
{
	(void)arg;
	fire(PER_WRITER);
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

/* Two writers fire PER_WRITER hits each while a consumer attaches and detaches over and over. */
static unsigned long while_consumers_come_and_go(struct tb_ring *ring)
{
	pthread_t t[2];
	uint16_t count = 0;

	atomic_store(&writers_done, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	while (atomic_load(&writers_done) < 2)
		kernel_count(count++ & 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	kernel_count(0);
	return records(ring);
}

int main(void)
{
	struct tb_ring *ring;

	if (tb_ring_new(&ring, NULL) < 0) /* 1408 KiB a CPU: every record of this test fits */
		skip_all("cannot create the ring");
	tb_events_attach(ring);
	one_thread(ring);
	tb_events_enable("ugate:ev", NULL, 0);
	is_int((long long)while_consumers_come_and_go(ring), 2 * PER_WRITER,
	       "tracebuf on, a USDT consumer attaching and detaching under 2 writers: every hit recorded");
	tb_events_disable("ugate:ev", NULL, 0);
	is_int((long long)while_consumers_come_and_go(ring), 0,
	       "tracebuf off, the consumer coming and going: no record");
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return done_testing();
}
