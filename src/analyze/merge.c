// SPDX-License-Identifier: MIT
/*
 * merge.c - a capture's records, all CPUs merged by time (merge.h).
 *
 * Each CPU is a cursor over its pages as pagework.c walked them, with its
 * next record read ahead; merge_next() hands out the earliest and reads
 * that CPU's next.  Which CPU is earliest is found by a scan over the CPUs
 * (captures have a few; a heap would cost more than it saves below a few
 * dozen), and only when the CPU that gave the last record has fallen
 * behind the runner-up of the last scan: records come in runs per CPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge.h"
#include "print/pagework.h"

/* Raw data from which a worker thread walks the pages: less is done as fast alone. */
#define THREADED_FROM (1u << 20)

struct merge_stream {
	int slot; /* the capture's CPU slot: the order of ties */
	int cpu;  /* the CPU its records were written on (a capture of several buffers: not the slot) */
	bool has_next;
	uint64_t ts; /* of next, raw */
	const struct pw_step *next;
	struct pw_cursor steps;
};

/*
 * One worker decodes pages while this thread merges and analyses: the
 * analysis, not decoding, is the larger part, so more would wait.  Live
 * buffers are read as needed, one page at a time.  TB_ANALYZE_THREADS
 * (0 or 1) overrides the choice, for tests of either way.
 */
static int walk_threads(struct tb_capture *c)
{
	const char *env = getenv("TB_ANALYZE_THREADS");

	if (tb_capture_is_live(c))
		return 0;
	if (env && *env)
		return atoi(env) > 0;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || tb_capture_data_bytes(c) < THREADED_FROM)
		return 0;
	return 1;
}

int merge_open(struct merge *m, struct tb_capture *c)
{
	int slots = tb_capture_cpu_slots(c), rc;
	struct pw_source *src = calloc(slots > 0 ? (size_t)slots : 1, sizeof(*src));

	memset(m, 0, sizeof(*m));
	m->capture = c;
	if (!tb_capture_tsc2nsec(c, &m->mult, &m->shift))
		m->mult = m->shift = 0;
	m->streams = calloc(slots > 0 ? (size_t)slots : 1, sizeof(*m->streams));
	if (!m->streams || !src) {
		free(src);
		merge_close(m);
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < slots; cpu++) {
		if (!tb_capture_has_cpu(c, cpu))
			continue;
		src[m->nstreams] = (struct pw_source){c, cpu};
		m->streams[m->nstreams].slot = cpu;
		m->streams[m->nstreams].cpu = tb_capture_slot_cpu(c, cpu);
		m->nstreams++;
	}
	rc = pagework_new(src, m->nstreams, tb_capture_schema(c), NULL, walk_threads(c), PW_RENDER_NONE, NULL,
			  &m->work);
	if (rc == -EAGAIN) /* no thread to be had: walk the pages here */
		rc = pagework_new(src, m->nstreams, tb_capture_schema(c), NULL, 0, PW_RENDER_NONE, NULL, &m->work);
	free(src);
	if (rc < 0) {
		merge_close(m);
		return rc;
	}
	for (int i = 0; i < m->nstreams; i++)
		m->streams[i].steps = (struct pw_cursor){.work = m->work, .stream = i};
	return 0;
}

void merge_close(struct merge *m)
{
	pagework_free(m->work);
	m->work = NULL;
	free(m->streams);
	m->streams = NULL;
}

/* A sub-buffer of u that follows lost events: counted, and told to a reader that lists losses. */
static void count_loss(struct merge *m, const struct pw_unit *u, size_t page)
{
	const struct tb_page_header *h = &u->hdr[page];

	m->lost_pages++;
	m->lost_events += h->lost_stored ? h->lost_count : 0;
	if (m->on_loss)
		m->on_loss(m->loss_ctx, &(struct merge_loss){.cpu = tb_capture_slot_cpu(m->capture, u->cpu),
							     .ts = merge_ts(m, h->timestamp),
							     .count = h->lost_stored ? h->lost_count : 0,
							     .count_known = h->lost_stored,
							     .file = u->file[page],
							     .offset = u->file_offset[page]});
}

/* What the page-level steps say: pages read, their losses, what was skipped and why. */
static void page_step(void *ctx, const struct pw_unit *u, const struct pw_step *st)
{
	struct merge *m = ctx;
	const char *file = u->file[st->page];
	uint64_t at = u->file_offset[st->page] + st->off;

	switch (st->kind) {
	case PW_ZERO_PAGE: /* never written: holds nothing, as a page of no records */
		m->pages++;
		break;
	case PW_BAD_PAGE:
		m->pages++;
		m->bad_pages++;
		tb_capture_problem(m->capture, file, at, "%s; sub-buffer skipped", st->reason);
		break;
	case PW_PAGE:
		m->pages++;
		if (u->hdr[st->page].lost)
			count_loss(m, u, st->page);
		break;
	case PW_PAGE_ERROR:
		m->bad_pages++;
		tb_capture_problem(m->capture, file, at, "%s; rest of the sub-buffer skipped", st->reason);
		break;
	}
}

/* Read the CPU's next data record ahead; false when it has none. */
static bool advance(struct merge *m, struct merge_stream *s)
{
	const struct pw_step *st;

	/* A blob reference is no event with fields: only a reader that asked for them gets them. */
	while ((st = pw_cursor_next_record(&s->steps, page_step, m)) && st->blob && !m->want_blobs)
		m->blob_refs++;
	if (!st) {
		if (s->steps.oom)
			m->fatal = -ENOMEM;
		return s->has_next = false;
	}
	s->next = st;
	s->ts = st->ts;
	return s->has_next = true;
}

/* Whether s's next record comes before other's (ties: the lower slot, so the lower CPU of a buffer). */
static bool before(const struct merge_stream *s, const struct merge_stream *other)
{
	return s->ts < other->ts || (s->ts == other->ts && s->slot < other->slot);
}

/* The stream with the earliest record, and in *until the one that would follow it (NULL: none). */
static struct merge_stream *earliest(struct merge *m, struct merge_stream **until)
{
	struct merge_stream *best = NULL, *second = NULL;

	m->active = 0;
	for (int i = 0; i < m->nstreams; i++) {
		struct merge_stream *s = &m->streams[i];
		if (!s->has_next)
			continue;
		m->active++;
		if (!best || before(s, best)) {
			second = best;
			best = s;
		} else if (!second || before(s, second)) {
			second = s;
		}
	}
	*until = second;
	return best;
}

int merge_next(struct merge *m, struct merged_record *r)
{
	struct merge_stream *best = m->pending;

	if (!m->started) {
		m->started = true;
		for (int i = 0; i < m->nstreams; i++)
			advance(m, &m->streams[i]);
		best = NULL;
	} else if (best) {
		/* The record handed out last is done with: its page may be replaced now. */
		if (!advance(m, best)) {
			best = NULL;
		} else if (m->until && !before(best, m->until)) {
			/*
			 * No other stream moved since the last scan, so the runner-up is
			 * first now; with two streams, the one left behind is its runner-up.
			 */
			if (m->active == 2) {
				struct merge_stream *next = m->until;
				m->until = best;
				best = next;
			} else {
				best = NULL;
			}
		}
	}
	if (!best && !(best = earliest(m, &m->until)))
		return 0;
	const struct pw_unit *u = best->steps.unit;
	const struct pw_step *st = best->next;
	r->cpu = best->cpu;
	r->slot = best->slot;
	r->ts = merge_ts(m, st->ts);
	r->data = u->page[st->page] + st->off;
	r->len = st->len;
	r->id = st->id;
	r->blob = st->blob;
	r->file = u->file[st->page];
	r->file_offset = u->file_offset[st->page] + st->off;
	if (st->blob)
		m->blob_refs++;
	else
		m->records++;
	m->pending = best;
	return 1;
}
