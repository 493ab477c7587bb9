// SPDX-License-Identifier: MIT
/*
 * merge.c - a capture's records, all CPUs merged by time (merge.h).
 *
 * Each CPU is a cursor over its current sub-buffer with its next record
 * read ahead; merge_next() hands out the earliest and reads that CPU's
 * next.  A linear scan over the CPUs picks the earliest: captures have a
 * few CPUs, and a heap would cost more than it saves below a few dozen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "tracebuf/blob.h"

struct merge_stream {
	int cpu;
	bool done, in_page, has_next;
	struct tb_raw_page page;
	struct tb_page_cursor cursor;
	struct tb_record next;
};

int merge_open(struct merge *m, struct tb_capture *c)
{
	int slots = tb_capture_cpu_slots(c);

	memset(m, 0, sizeof(*m));
	m->capture = c;
	m->streams = calloc(slots > 0 ? (size_t)slots : 1, sizeof(*m->streams));
	if (!m->streams)
		return -ENOMEM;
	for (int cpu = 0; cpu < slots; cpu++) {
		if (!tb_capture_has_cpu(c, cpu))
			continue;
		m->streams[m->nstreams].cpu = cpu;
		m->nstreams++;
	}
	return 0;
}

void merge_close(struct merge *m)
{
	free(m->streams);
	m->streams = NULL;
}

/* The CPU's next sub-buffer whose header decodes; false when it has no more. */
static bool open_next_page(struct merge *m, struct merge_stream *s)
{
	while (!s->done) {
		if (tb_capture_next_page(m->capture, s->cpu, &s->page) <= 0) {
			s->done = true;
			break;
		}
		m->pages++;
		if (tb_page_cursor_init(&s->cursor, s->page.data, s->page.size) == 0) {
			if (s->cursor.hdr.lost) {
				m->lost_pages++;
				m->lost_events += s->cursor.hdr.lost_stored ? s->cursor.hdr.lost_count : 0;
			}
			s->in_page = true;
			return true;
		}
		m->bad_pages++;
		tb_capture_report(m->capture, s->page.file, s->page.file_offset + s->cursor.err.offset,
				  "%s; sub-buffer skipped", s->cursor.err.reason);
	}
	return false;
}

/* Read the CPU's next data record ahead; false when it has none. */
static bool advance(struct merge *m, struct merge_stream *s)
{
	s->has_next = false;
	for (;;) {
		if (!s->in_page && !open_next_page(m, s))
			return false;
		int rc = tb_page_next_data(&s->cursor, &s->next);
		struct tb_blob_ref ref;
		if (rc == 1 && tb_blob_ref_decode(&s->next, &ref)) {
			m->blob_refs++; /* not an event: the blob's bytes are not in the pages */
			continue;
		}
		if (rc == 1)
			return s->has_next = true;
		s->in_page = false;
		if (rc < 0) {
			m->bad_pages++;
			tb_capture_report(m->capture, s->page.file, s->page.file_offset + s->cursor.err.offset,
					  "%s; rest of the sub-buffer skipped", s->cursor.err.reason);
		}
	}
}

int merge_next(struct merge *m, struct merged_record *r)
{
	struct merge_stream *best = NULL;

	if (!m->started) {
		m->started = true;
		for (int i = 0; i < m->nstreams; i++)
			advance(m, &m->streams[i]);
	} else if (m->pending) {
		advance(m, m->pending);
		m->pending = NULL;
	}
	for (int i = 0; i < m->nstreams; i++) {
		struct merge_stream *s = &m->streams[i];
		if (s->has_next && (!best || s->next.ts < best->next.ts))
			best = s;
	}
	if (!best)
		return 0;
	r->cpu = best->cpu;
	r->ts = best->next.ts;
	r->data = best->next.data;
	r->len = best->next.len;
	r->id = r->len >= 2 ? (uint16_t)(r->data[0] | r->data[1] << 8) : 0;
	m->records++;
	/*
	 * The record's payload lives in best's page, which advancing may
	 * replace: hand it out first, read ahead on the next call.
	 */
	m->pending = best;
	return 1;
}
