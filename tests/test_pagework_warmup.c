/*
 * The warm-up of worker rendering (src/print/pagework.h): workers render
 * only the records of event IDs the reading thread has made ready, and it
 * readies an ID when it meets the ID's first record.  So each CPU's first
 * unit is one sub-buffer, and its other units are queued only after that
 * one is replayed: an ID first met in the first sub-buffer is never left
 * to the reading thread again.  Queued at once, the other units would
 * have been walked with nothing ready, and every record of theirs left
 * to the reading thread.
 *
 * Played here as the report plays it, on a real kernel capture with 53
 * sub-buffers on CPU 0: the reading thread (this test) readies each ID
 * the first time a unit leaves one of its records to it.  The sub-buffers
 * and records met must be those of a walk without workers, in order.
 * Also run under ThreadSanitizer (make test-tsan).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tap.h"
#include "print/pagework.h"
#include "tracebuf/capture.h"
#include "tracebuf/schema.h"

#define CAPTURE "tests/data/kernel/cap-f-many-systems"

static _Atomic uint8_t ready[65536 / 8];
static uint8_t readied_in_first[65536 / 8]; /* IDs readied while the first unit was replayed */

static bool bit(const uint8_t *map, uint16_t id)
{
	return map[id / 8] & (1u << (id % 8));
}

/* What the report does when it meets an ID's record left to it: its printer chosen, then ready. */
static void make_ready(struct tb_schema *s, uint16_t id)
{
	const char *system = "";
	const struct tb_format *f = tb_schema_find_event(s, id, &system);

	if (!f || printers_prepare(s, f, system))
		return; /* no format, or libtraceevent's: never for the workers */
	/* release: pairs with the workers' acquire of the bit (pagework.c id_ready) */
	atomic_fetch_or_explicit(&ready[id / 8], (uint8_t)(1u << (id % 8)), memory_order_release);
}

struct walk {
	size_t units, records, here, here_again, pages;
	size_t first_unit_records, here_in_first;
	size_t first_unit_pages, second_unit_pages;
	uint64_t stamp_sum; /* the records' time stamps, in order: their sum and order hash */
	uint64_t order_hash;
};

static void take(struct walk *wk, uint64_t ts)
{
	wk->records++;
	wk->stamp_sum += ts;
	wk->order_hash = wk->order_hash * 1099511628211ull ^ ts;
}

/* CPU cpu of the capture walked by pagework with threads workers (a capture of its own: a walk consumes it). */
static struct walk walk_cpu(int cpu, int threads, bool readying)
{
	struct tb_capture *c;
	struct tb_schema *s;
	struct pw_source src;
	struct tb_render_opts opts = {0};
	struct pagework *w;
	struct walk wk = {0};
	const struct pw_unit *u;

	if (tb_capture_open(CAPTURE, NULL, &c) < 0) {
		ok(0, "open " CAPTURE);
		return wk;
	}
	s = tb_capture_schema(c);
	src = (struct pw_source){c, cpu};
	memset((void *)ready, 0, sizeof(ready));
	if (pagework_new(&src, 1, s, &opts, threads, PW_RENDER_BODIES, ready, &w) < 0) {
		ok(0, "pagework_new with %d workers", threads);
		tb_capture_close(c);
		return wk;
	}
	while ((u = pagework_next(w, 0))) {
		wk.units++;
		wk.pages += u->npages;
		if (wk.units == 1)
			wk.first_unit_pages = u->npages;
		if (wk.units == 2)
			wk.second_unit_pages = u->npages;
		for (size_t i = 0; i < u->nsteps; i++) {
			const struct pw_step *st = &u->steps[i];
			if (st->kind != PW_RECORD)
				continue;
			take(&wk, st->ts);
			wk.first_unit_records += wk.units == 1;
			if (!st->here)
				continue;
			wk.here++;
			wk.here_in_first += wk.units == 1;
			if (wk.units > 1 && bit(readied_in_first, st->id))
				wk.here_again++;
			if (readying && !bit((const uint8_t *)ready, st->id)) {
				make_ready(s, st->id);
				if (wk.units == 1 && atomic_load(&ready[st->id / 8]) & (1u << (st->id % 8)))
					readied_in_first[st->id / 8] |= (uint8_t)(1u << (st->id % 8));
			}
		}
	}
	pagework_free(w);
	tb_capture_close(c);
	return wk;
}

int main(void)
{
	struct walk alone = walk_cpu(0, 0, false), workers = walk_cpu(0, 2, true);

	ok(alone.pages == 53 && alone.records > 1000, "without workers: CPU 0's 53 sub-buffers, %zu records",
	   alone.records);
	ok(workers.first_unit_pages == PW_WARMUP_PAGES, "with workers the CPU's first unit is %d sub-buffer (got %zu)",
	   PW_WARMUP_PAGES, workers.first_unit_pages);
	ok(workers.second_unit_pages > PW_WARMUP_PAGES, "and the next ones are whole units (%zu sub-buffers)",
	   workers.second_unit_pages);
	ok(workers.pages == alone.pages && workers.records == alone.records,
	   "the same sub-buffers and records as without workers (%zu, %zu)", workers.pages, workers.records);
	ok(workers.stamp_sum == alone.stamp_sum && workers.order_hash == alone.order_hash,
	   "in the same order");
	ok(workers.first_unit_records > 0 && workers.here_in_first == workers.first_unit_records,
	   "the first unit, walked before any ID was ready, left all its %zu records to the reading thread",
	   workers.first_unit_records);
	ok(workers.here_again == 0,
	   "no record of an ID readied in the first unit is left to the reading thread later (%zu were)",
	   workers.here_again);

	return done_testing();
}
