/*
 * Switching events on and off, and moving them between rings, while other
 * threads fire them: every record that arrives is whole and belongs to one
 * of the events fired, writes stop when the events are off, and nothing
 * races (this test also runs under ThreadSanitizer).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(tpt2, fixed, TB_PROTO(uint32_t n, uint32_t twice), TB_FIELDS(tb_field(uint32_t, n, n), tb_field(uint32_t, twice, twice)),
	 TB_PRINTK("n=%u twice=%u", REC->n, REC->twice))
TB_EVENT(tpt2, text, TB_PROTO(const char *s, uint32_t n), TB_FIELDS(tb_string(s, s), tb_field(uint32_t, n, n)),
	 TB_PRINTK("s=%s n=%u", __get_str(s), REC->n))

static atomic_int stop;
static atomic_ulong rounds[2]; /* loops each writer has finished */

static void *writer(void *arg)
{
	atomic_ulong *done = arg;
	uint32_t n = 0;

	while (!atomic_load(&stop)) {
		atomic_fetch_add(done, 1);
		n++;
		tb_trace(tpt2, fixed, n, 2 * n);
		tb_trace(tpt2, text, "a string of some length", n);
		tb_printf("n=%u\n", n);
	}
	return NULL;
}

struct tally {
	unsigned long fixed, text, bprint, bad;
};

/*
 * Every record of ring must be one of the three, whole and self-consistent.
 * At most DRAIN_MAX records a call: writers of events still on may keep
 * the ring as full as the reader empties it (under ThreadSanitizer the
 * reader is the slower one), and the tally needs no more than some of them.
 */
#define DRAIN_MAX 20000

static void drain(struct tb_ring *ring, struct tally *t)
{
	struct tb_read_event ev;

	for (int n = 0; n < DRAIN_MAX && tb_consume_merged(ring, &ev) == 1; n++) {
		const unsigned char *d = ev.data;
		uint16_t type;

		if (ev.kind != TB_READ_RECORD)
			continue;
		memcpy(&type, d, 2);
		if (type == tb_event_tpt2_fixed.id && ev.len >= sizeof(struct tb_record_tpt2_fixed)) {
			struct tb_record_tpt2_fixed r;
			memcpy(&r, d, sizeof(r));
			t->fixed++;
			t->bad += r.twice != 2 * r.n;
		} else if (type == tb_event_tpt2_text.id && ev.len >= sizeof(struct tb_record_tpt2_text)) {
			struct tb_record_tpt2_text r;
			memcpy(&r, d, sizeof(r));
			t->text++;
			t->bad += (r.s >> 16) != 24 || (r.s & 0xffff) + 24 > ev.len ||
				  memcmp(d + (r.s & 0xffff), "a string of some length", 24) != 0;
		} else if (type == TB_BPRINT_ID && ev.len == 28) {
			t->bprint++;
		} else {
			t->bad++;
		}
	}
}

/* Until every writer has started two more loops (so it has seen the events off). */
static void wait_rounds(void)
{
	unsigned long start[2] = {atomic_load(&rounds[0]), atomic_load(&rounds[1])};
	struct timespec nap = {0, 100000};

	while (atomic_load(&rounds[0]) < start[0] + 2 || atomic_load(&rounds[1]) < start[1] + 2)
		nanosleep(&nap, NULL);
}

int main(void)
{
	struct tb_ring *rings[2];
	struct tb_ring_opts o;
	pthread_t threads[2];
	struct tally t = {0};
	struct timespec nap = {0, 1000000};

	tb_ring_opts_default(&o);
	o.size_kb = 64;
	if (tb_ring_new(&rings[0], &o) < 0 || tb_ring_new(&rings[1], &o) < 0)
		skip_all("cannot create the rings");
	tb_events_attach(rings[0]);
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, writer, &rounds[i]);
	for (int round = 0; round < 60; round++) {
		tb_events_enable("tpt2:*,ftrace:bprint", NULL, 0);
		nanosleep(&nap, NULL);
		if (round % 3 == 0)
			tb_events_attach(rings[round % 2]);
		tb_events_disable(round % 2 ? "tpt2:fixed" : "tpt2:*,ftrace:bprint", NULL, 0);
		drain(rings[0], &t);
		drain(rings[1], &t);
	}
	tb_events_disable("tpt2:*,ftrace:bprint", NULL, 0);
	wait_rounds(); /* a writer may still be inside an emitter it entered before */
	drain(rings[0], &t);
	drain(rings[1], &t);
	{
		struct tally after = {0};
		wait_rounds();
		drain(rings[0], &after);
		drain(rings[1], &after);
		is_int(after.fixed + after.text + after.bprint, 0, "nothing is written once every event is off");
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	diag("records: %lu fixed, %lu with a string, %lu printf", t.fixed, t.text, t.bprint);
	ok(t.fixed > 0 && t.text > 0 && t.bprint > 0, "each kind of event was written while enabled");
	is_int(t.bad, 0, "every record is whole and of a fired event");
	tb_events_attach(NULL);
	tb_ring_free(rings[0]);
	tb_ring_free(rings[1]);
	return done_testing();
}
