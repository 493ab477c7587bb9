/* SPDX-License-Identifier: MIT */
/*
 * crash_events.h - what the crash-recovery tests (test_shm_crash,
 * test_shm_pidns) write and look at: a scenario (a write that dies at a
 * named point), event i's payload and its write, the data records of a
 * recovered page, and the region's thread table mapped shared.
 *
 *   crash_fill(p, len, i);  crash_write(ring, API_RESERVE, len, i);
 *   bad += crash_page_records(page, size, on_record, ctx);
 *   if (crash_map_table(path, &m)) { ... m.t->slot[i] ...; crash_unmap_table(&m); }
 */
#ifndef TB_TEST_CRASH_EVENTS_H
#define TB_TEST_CRASH_EVENTS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/ring_layout.h"
#include "tracebuf/page.h"
#include "tracebuf/ring.h"

enum api { API_WRITE, API_RESERVE };

/* A write that dies at a named point (crash_point.h), after others that commit. */
struct scenario {
	const char *name;
	int point;
	enum api api;
	enum tb_clock clock;
	uint32_t len;    /* payload bytes */
	unsigned before; /* events committed before the one that dies */
	int no_rseq;     /* through a handle in the locked fallback */
	int committed;   /* the dying write is past its commit */
	int in_flight;   /* what recovery must count for it */
};

/* The payload of event i: its number, then a pattern a torn copy would break. */
static inline void crash_fill(uint8_t *p, uint32_t len, uint32_t i)
{
	memcpy(p, &i, 4);
	for (uint32_t k = 4; k < len; k++)
		p[k] = (uint8_t)(i * 31 + k);
}

/* Event i, len bytes, written with tb_write or tb_reserve + tb_commit. */
static inline int crash_write(struct tb_ring *ring, enum api api, uint32_t len, uint32_t i)
{
	uint8_t buf[1024];

	if (api == API_RESERVE) {
		void *p = tb_reserve(ring, len);
		if (!p)
			return -ENOMEM;
		crash_fill(p, len, i);
		return tb_commit(ring, p);
	}
	if (len > sizeof(buf))
		return -E2BIG;
	crash_fill(buf, len, i);
	return tb_write(ring, buf, len);
}

/* Each data record of a page to fn; 1 when the page or a record in it does not decode, else 0. */
static inline int crash_page_records(const void *page, size_t size, void (*fn)(void *ctx, const struct tb_record *rec),
				     void *ctx)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (tb_page_cursor_init(&cur, page, size) < 0)
		return 1;
	while ((rc = tb_page_next_data(&cur, &rec)) == 1)
		fn(ctx, &rec);
	return rc < 0;
}

/* A region's thread table, mapped shared; fd: this process's own description of the file. */
struct table_map {
	void *mem;
	size_t size;
	struct tb_thread_table *t;
	int fd;
};

static inline void crash_unmap_table(struct table_map *m)
{
	if (m->mem)
		munmap(m->mem, m->size);
	if (m->fd >= 0)
		close(m->fd);
	memset(m, 0, sizeof(*m));
	m->fd = -1;
}

static inline int crash_map_table(const char *path, struct table_map *m)
{
	struct tb_region hdr;

	memset(m, 0, sizeof(*m));
	m->fd = open(path, O_RDWR | O_CLOEXEC);
	if (m->fd < 0 || pread(m->fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		crash_unmap_table(m);
		return 0;
	}
	m->size = hdr.size;
	m->mem = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->mem == MAP_FAILED) {
		m->mem = NULL;
		crash_unmap_table(m);
		return 0;
	}
	m->t = region_threads(m->mem);
	return 1;
}

/* Slot i's file lock, taken through the table's description (what a live writer holds): 0, or -1. */
static inline int crash_lock_slot(const struct table_map *m, unsigned i)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};

	fl.l_start = (off_t)tb_thread_slot_lock_offset(m->mem, i);
	return fcntl(m->fd, F_OFD_SETLK, &fl);
}

#endif
