// SPDX-License-Identifier: MIT
/*
 * shm_stream.c - a shared-memory ring's window written straight into a
 * trace.dat (shm_capture.h: shmcap_stream): what snapshot and recover do.
 *
 * The pages go from the window's copy (tb_shm_window, shm_window.c) into
 * a staging block and from there, a block at a time, to the trace.dat
 * writer: no cpuN.raw files in between (writing 64 MiB twice and then
 * deleting it was most of a snapshot's time), and a few large write(2)s
 * instead of one per sub-buffer.  The copying and the writing overlap: a
 * second thread hands the full blocks to the writer while the window
 * fills the next, so a snapshot costs about the larger of the two, not
 * their sum.
 *
 * The descriptions (formats, header texts, kallsyms, ...) still go through
 * the small capture directory (shmcap_merge_desc); the CPU stats go from
 * the ring into the file directly.  Version 6 keeps its stats before the
 * pages, so they are read just before the window is taken.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_capture.h"
#include "tracebuf/blob.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracedat.h"

/*
 * A staging block: 64 sub-buffers of 4 KiB (or one larger sub-buffer).
 * Small enough to stay in the cache between the copy into it and the
 * write(2) out of it, and to cost few first-touch faults: 2 MiB blocks
 * took 1,536 faults a snapshot, 10% of its CPU time.
 */
#define BLOCK_BYTES (256u << 10)
#define NBLOCKS 3              /* one being filled, one being written, one spare */

struct block {
	uint8_t *bytes;
	size_t used;
	int cpu; /* whose pages it holds */
};

/*
 * The hand-over between the window (producer) and the writer thread
 * (consumer), under one mutex: full blocks in order, empty ones back.
 * Each block belongs to exactly one side at a time: the producer owns it
 * from taking it empty until putting it full, the consumer from taking it
 * full until putting it back empty.
 */
struct stream {
	struct tb_tracedat_writer *w;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct block blocks[NBLOCKS];
	struct block *full[NBLOCKS], *empty[NBLOCKS];
	unsigned nfull, nempty, full_head;
	struct block *filling; /* the producer's */
	size_t block_bytes;    /* BLOCK_BYTES, or a sub-buffer when that is larger */
	int done;              /* the producer has no more blocks */
	int rc;                /* the writer's first error: the producer stops */
	int cur_cpu;           /* the writer thread's: the CPU begun in the file, -1 none */
	/* the producer's: the blobs the pages refer to, saved as each page is copied */
	struct tb_ring *ring;
	int blobs_fd; /* cap's blobs.bin, which the writer copies into the file at close; -1 none */
	struct tb_blob_save_counts blobs;
};

/* The consumer's side of one block: the CPU's section in the file, then its pages. */
static int write_block(struct stream *s, const struct block *b)
{
	int rc = 0;

	if (b->cpu != s->cur_cpu) {
		if (s->cur_cpu >= 0)
			rc = tb_tracedat_write_end_cpu(s->w);
		if (rc == 0)
			rc = tb_tracedat_write_begin_cpu(s->w, b->cpu);
		s->cur_cpu = b->cpu;
	}
	return rc ? rc : tb_tracedat_write_pages(s->w, b->bytes, b->used);
}

static void *writer_thread(void *arg)
{
	struct stream *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct block *b;
		int rc;

		while (!s->nfull && !s->done)
			pthread_cond_wait(&s->changed, &s->lock);
		if (!s->nfull)
			break;
		b = s->full[s->full_head];
		s->full_head = (s->full_head + 1) % NBLOCKS;
		s->nfull--;
		pthread_mutex_unlock(&s->lock);
		rc = s->rc ? 0 : write_block(s, b); /* after an error, blocks are only given back */
		pthread_mutex_lock(&s->lock);
		if (rc < 0 && !s->rc)
			s->rc = rc;
		b->used = 0;
		s->empty[s->nempty++] = b;
		pthread_cond_broadcast(&s->changed);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The producer: hand the block being filled over (if any) and take an empty one; 0 or the writer's error. */
static int next_block(struct stream *s, int cpu)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	if (s->filling && s->filling->used) {
		s->full[(s->full_head + s->nfull) % NBLOCKS] = s->filling;
		s->nfull++;
		s->filling = NULL;
		pthread_cond_broadcast(&s->changed);
	}
	while (!s->filling && !s->rc) {
		if (s->nempty)
			s->filling = s->empty[--s->nempty];
		else
			pthread_cond_wait(&s->changed, &s->lock);
	}
	if (s->filling)
		s->filling->cpu = cpu;
	rc = s->rc;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* tb_shm_window's callback: pages of one CPU go to a block of that CPU, in order. */
static int put_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct stream *s = ctx;
	struct block *b = s->filling;
	int rc;

	if (size > s->block_bytes)
		return -EINVAL;
	if (!b || b->cpu != (int)cpu || b->used + size > s->block_bytes) {
		if ((rc = next_block(s, (int)cpu)) < 0)
			return rc;
		b = s->filling;
	}
	memcpy(b->bytes + b->used, page, size);
	b->used += size;
	/* the blob area as it is now, while the page is: a blob overwritten later is still saved */
	return s->blobs_fd >= 0 ? tb_blob_save_page(s->ring, page, size, s->blobs_fd, &s->blobs) : 0;
}

static int stream_init(struct stream *s, struct tb_tracedat_writer *w, size_t subbuf_size)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->block_bytes = subbuf_size > BLOCK_BYTES ? subbuf_size : BLOCK_BYTES;
	s->cur_cpu = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->changed, NULL);
	for (unsigned i = 0; i < NBLOCKS; i++) {
		if (!(s->blocks[i].bytes = malloc(s->block_bytes)))
			return -ENOMEM;
		s->empty[s->nempty++] = &s->blocks[i];
	}
	return 0;
}

static void stream_free(struct stream *s)
{
	for (unsigned i = 0; i < NBLOCKS; i++)
		free(s->blocks[i].bytes);
	pthread_cond_destroy(&s->changed);
	pthread_mutex_destroy(&s->lock);
}

/* The window through the stream: 0, the window's error, or the writer's. */
static int stream_window(const char *cmd, struct tb_tracedat_writer *w, struct tb_ring *ring,
			 struct tb_shm_window *win, int blobs_fd)
{
	struct stream s;
	pthread_t thread;
	int rc = stream_init(&s, w, tb_ring_subbuf_size(ring));

	s.ring = ring;
	s.blobs_fd = blobs_fd;
	if (rc == 0)
		rc = -pthread_create(&thread, NULL, writer_thread, &s);
	if (rc < 0) {
		stream_free(&s);
		return rc;
	}
	rc = tb_shm_window(ring, put_page, &s, win);
	if (rc == -EFAULT && *tb_shm_error())
		shmcap_say(cmd, rc, "%s", tb_shm_error()); /* a --shm file shrunk under us */
	if (rc == 0)
		rc = next_block(&s, -1); /* the last block over */
	pthread_mutex_lock(&s.lock);
	s.done = 1;
	pthread_cond_broadcast(&s.changed);
	pthread_mutex_unlock(&s.lock);
	pthread_join(thread, NULL);
	if (rc == 0)
		rc = s.rc;
	if (rc == 0 && s.cur_cpu >= 0)
		rc = tb_tracedat_write_end_cpu(w);
	if (rc == 0)
		shmcap_say_blobs(cmd, &s.blobs);
	stream_free(&s);
	return rc;
}

struct all_stats {
	struct tb_ring *ring;
	struct tb_cpu_stats *st;
};

/* Every CPU's counters: reads of the mapping only (tb_shm_guard may abandon it at any of them). */
static int read_stats(void *arg)
{
	struct all_stats *a = arg;
	int rc = 0;

	for (unsigned cpu = 0; rc == 0 && cpu < tb_ring_ncpus(a->ring); cpu++)
		rc = tb_stats_read(a->ring, cpu, &a->st[cpu]);
	return rc;
}

/* Each CPU's stats, as the kernel's per_cpu/cpuN/stats text. */
static int write_stats(const char *cmd, struct tb_tracedat_writer *w, struct tb_shm *shm)
{
	struct all_stats a = {tb_shm_ring(shm), calloc(tb_ring_ncpus(tb_shm_ring(shm)), sizeof(*a.st))};
	int rc = a.st ? tb_shm_guard(shm, read_stats, &a) : -ENOMEM;

	if (rc == -EFAULT && *tb_shm_error())
		shmcap_say(cmd, rc, "%s", tb_shm_error()); /* a --shm file shrunk under us */
	for (unsigned cpu = 0; rc == 0 && cpu < tb_ring_ncpus(a.ring); cpu++) {
		char *text = NULL;
		size_t len = 0;

		if ((rc = shmcap_stats_text(a.ring, &a.st[cpu], &text, &len)) == 0)
			rc = tb_tracedat_write_cpustat(w, "", (int)cpu, text, len);
		free(text);
	}
	free(a.st);
	return rc;
}

int shmcap_stream(const char *cmd, const char *cap, const char *out, struct tb_shm *shm, struct tb_shm_window *win)
{
	struct tb_ring *ring = tb_shm_ring(shm);
	struct tb_tracedat_write_opts o;
	struct tb_tracedat_writer *w;
	char clock[64];
	const char *name = tb_clock_name(tb_ring_clock(ring));
	int rc, closed, blobs_fd;
	struct tb_blob_save_counts counts = {0};

	memset(win, 0, sizeof(*win));
	shmcap_write_opts(ring, &o);
	snprintf(clock, sizeof(clock), "[%s]", name);
	o.cpus = (int)tb_ring_ncpus(ring);
	o.clock = name;
	o.trace_clock = clock;
	/* made before the metadata, which announces it; filled while the pages stream */
	if ((blobs_fd = shmcap_blob_store(cap, ring, &counts)) < -1)
		return shmcap_say(cmd, blobs_fd, "cannot create the blob store in %s: %s", cap, strerror(-blobs_fd));
	if ((rc = tb_tracedat_writer_open(out, &o, &w)) < 0) {
		if (blobs_fd >= 0)
			close(blobs_fd);
		return shmcap_say(cmd, rc, "cannot write %s: %s", out, strerror(-rc));
	}
	rc = tb_tracedat_write_capture_meta(w, cap, NULL, "");
	if (rc == 0)
		rc = write_stats(cmd, w, shm);
	if (rc == 0)
		rc = tb_tracedat_write_begin_buffer(w, "", name);
	if (rc == 0)
		rc = stream_window(cmd, w, ring, win, blobs_fd);
	if (blobs_fd >= 0 && close(blobs_fd) < 0 && rc == 0)
		rc = -errno;
	closed = tb_tracedat_writer_close(w);
	rc = rc ? rc : closed;
	if (rc < 0 && !(rc == -EFAULT && *tb_shm_error())) /* a shrunk file was said already */
		shmcap_say(cmd, rc, "cannot write %s: %s", out, strerror(-rc));
	if (rc < 0)
		unlink(out); /* half a file is no trace.dat */
	return rc;
}
