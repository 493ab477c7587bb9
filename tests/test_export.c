/*
 * The export stage's interface (src/export/exporter.h), driven with kinds
 * of the test's own, as a SQL loader would be: an events kind gets every
 * data record of a real capture once, in time order, and every sub-buffer
 * that follows lost events as a loss with its CPU, count and byte - checked
 * against the raw files walked here with the page cursor, not through the
 * reader under test, with the pages walked on the reading thread and by a
 * worker; a pages kind gets each sub-buffer as report reads it
 * (the damaged one of tests/data/bad/record-crossing cut to its intact
 * records, the damage counted); finish runs after a failed begin, so a kind
 * can close what it opened.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/exporter.h"
#include "tracebuf/page.h"

#include "lib/tap.h"

#define SUBBUF 4096
#define MAX_LOSSES 64

/* What the raw files hold, walked here: data records and lost-flagged sub-buffers. */
struct oracle {
	uint64_t records;
	size_t nlosses;
	struct merge_loss losses[MAX_LOSSES]; /* file NULL: compared by cpu, offset, count */
};

static void walk_raw(const char *dir, int cpu, struct oracle *o)
{
	char path[256];
	size_t len;
	uint8_t *raw;

	snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
	raw = (uint8_t *)tap_slurp(path, &len);
	for (size_t off = 0; raw && off + SUBBUF <= len; off += SUBBUF) {
		struct tb_page_header h;
		struct tb_page_cursor c;
		struct tb_record rec;
		if (tb_page_read_header(raw + off, SUBBUF, &h, NULL) < 0)
			continue;
		if (h.lost && o->nlosses < MAX_LOSSES)
			o->losses[o->nlosses++] = (struct merge_loss){
			    .cpu = cpu, .count = h.lost_count, .count_known = h.lost_stored, .offset = off};
		if (tb_page_cursor_init(&c, raw + off, SUBBUF) == 0)
			while (tb_page_next_data(&c, &rec) == 1)
				o->records++;
	}
	free(raw);
}

/* ------------------------------------------------------ an events kind */

struct pages_seen {
	uint64_t pages, records;
	bool bad_record;
};

struct seen {
	uint64_t records, out_of_order;
	uint64_t last_ts;
	size_t nlosses;
	struct merge_loss losses[MAX_LOSSES];
	bool began, finished, failed;
	int fail_begin; /* begin returns this */
};

/* The running test's record of what its kind was told (a kind's own state is the driver's to free). */
static struct seen *seen;
static struct pages_seen *pages_seen;

static struct seen *seen_of(struct export_run *x)
{
	(void)x;
	return seen;
}

static int ev_begin(struct export_run *x)
{
	struct seen *s = seen_of(x);

	s->began = true;
	return s->fail_begin;
}

static int ev_event(struct export_run *x, const struct merged_record *r)
{
	struct seen *s = seen_of(x);

	s->out_of_order += s->records && r->ts < s->last_ts;
	s->last_ts = r->ts;
	s->records++;
	return 0;
}

static int ev_loss(struct export_run *x, const struct merge_loss *l)
{
	struct seen *s = seen_of(x);

	if (s->nlosses < MAX_LOSSES) {
		s->losses[s->nlosses] = *l;
		/* the name is lent for the call only: kept as whether it named the CPU's raw file */
		char want[32];
		snprintf(want, sizeof(want), "/cpu%d.raw", l->cpu);
		bool named = l->file && strlen(l->file) >= strlen(want) &&
			     !strcmp(l->file + strlen(l->file) - strlen(want), want);
		s->losses[s->nlosses++].file = named ? NULL : "another file";
	}
	return 0;
}

static int ev_finish(struct export_run *x)
{
	struct seen *s = seen_of(x);

	s->finished = true;
	s->failed = x->failed;
	return 0;
}

static const struct tb_exporter_kind events_kind = {
    .name = "test-events", .suffixes = "", .help = "", .input = EXPORT_CAPTURE,
    .begin = ev_begin, .event = ev_event, .loss = ev_loss, .finish = ev_finish,
};

/* Whether every loss the raw files hold was told once, with its CPU, count and byte. */
static bool same_losses(const struct oracle *o, const struct seen *s)
{
	if (o->nlosses != s->nlosses)
		return false;
	for (size_t i = 0; i < o->nlosses; i++) {
		size_t hits = 0;
		for (size_t j = 0; j < s->nlosses; j++)
			hits += s->losses[j].cpu == o->losses[i].cpu && s->losses[j].offset == o->losses[i].offset &&
				s->losses[j].count_known == o->losses[i].count_known &&
				(!o->losses[i].count_known || s->losses[j].count == o->losses[i].count) &&
				s->losses[j].file == NULL; /* NULL: it named a .raw file (ev_loss) */
		if (hits != 1)
			return false;
	}
	return true;
}

static void test_events(const char *dir)
{
	struct oracle o = {0};
	struct seen s = {0};
	struct tb_export_result res;
	struct tb_export_opts opts = {.tool = "test_export", .in = dir, .out = "/dev/null"};

	seen = &s;
	walk_raw(dir, 0, &o);
	walk_raw(dir, 1, &o);
	int rc = tb_export_run(&events_kind, &opts, &res);
	ok(rc == 0 && s.began && s.finished && !s.failed, "%s: an events kind runs begin .. finish (rc %d)", dir, rc);
	ok(o.records > 0 && s.records == o.records && res.records == o.records,
	   "%s: every data record once: %llu told, %llu in the raw files", dir, (unsigned long long)s.records,
	   (unsigned long long)o.records);
	ok(s.out_of_order == 0, "%s: in time order across CPUs (%llu out of order)", dir,
	   (unsigned long long)s.out_of_order);
	ok(same_losses(&o, &s) && res.lost_pages == o.nlosses,
	   "%s: each of the %zu lost-flagged sub-buffers told once with its CPU, byte and count (%zu told)", dir,
	   o.nlosses, s.nlosses);
	ok(res.problems == 0, "%s: no damage counted (%lu)", dir, res.problems);
}

static void test_failed_begin(const char *dir)
{
	struct seen s = {.fail_begin = -EIO};
	struct tb_export_opts opts = {.tool = "test_export", .in = dir, .out = "/dev/null"};
	int rc;

	seen = &s;
	rc = tb_export_run(&events_kind, &opts, NULL);

	ok(rc == -EIO && s.finished && s.failed && s.records == 0,
	   "a failed begin: its error returned, no record fed, finish told it failed (rc %d)", rc);
}

/* ------------------------------------------------------- a pages kind */

static int pg_page(struct export_run *x, int cpu, const uint8_t *page, size_t size)
{
	struct pages_seen *s = pages_seen;
	struct tb_page_cursor c;
	struct tb_record rec;
	int got;

	(void)x, (void)cpu;
	s->pages++;
	if (tb_page_cursor_init(&c, page, size) < 0) {
		s->bad_record = true;
		return 0;
	}
	while ((got = tb_page_next_data(&c, &rec)) == 1)
		s->records++;
	s->bad_record |= got < 0;
	return 0;
}

static const struct tb_exporter_kind pages_kind = {
    .name = "test-pages", .suffixes = "", .help = "", .input = EXPORT_CAPTURE, .page = pg_page,
};

static void test_damaged_pages(void)
{
	const char *dir = "tests/data/bad/record-crossing";
	struct pages_seen s = {0};
	struct tb_export_result res;
	struct tb_export_opts opts = {.tool = "test_export", .in = dir, .out = "/dev/null"};
	int rc;

	pages_seen = &s;
	fprintf(stderr, "# a damage message naming record-crossing/cpu0.raw, byte 4012, is expected:\n");
	rc = tb_export_run(&pages_kind, &opts, &res);
	/* its README: 148 records can be read before the one that crosses the end of the data */
	ok(rc == 0 && res.problems == 1, "record-crossing: written, the damage counted once (rc %d, %lu)", rc,
	   res.problems);
	ok(!s.bad_record && s.records == 148 && s.pages == res.pages,
	   "record-crossing: every sub-buffer handed out walks clean, 148 records kept (%llu, %llu pages)",
	   (unsigned long long)s.records, (unsigned long long)s.pages);
}

int main(void)
{
	/* the merge's pages walked on this thread, then by a worker thread (TSan runs this test) */
	for (int threads = 0; threads <= 1; threads++) {
		setenv("TB_ANALYZE_THREADS", threads ? "1" : "0", 1);
		diag("pages walked by %s", threads ? "a worker thread" : "the reading thread");
		test_events("tests/data/kernel/cap-b-overrun");
		test_events("tests/data/kernel/cap-f-many-systems");
	}
	test_failed_begin("tests/data/kernel/cap-a-small-noloss");
	test_damaged_pages();
	return done_testing();
}
