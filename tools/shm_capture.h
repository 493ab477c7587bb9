/* SPDX-License-Identifier: MIT */
/*
 * shm_capture.h - a shared-memory session (tracebuf/shm.h) turned into a
 * capture directory and then a trace.dat: what record, snapshot and recover
 * share.
 *
 * A session has two parts: the region, and a directory where each traced
 * process describes its events (TRACEBUF_SHM_FORMATS, one PID directory
 * each, src/source/session.c).  shmcap_desc_dir() derives that directory
 * from the region's path, so snapshot and recover find it from the path
 * alone.  A capture directory gets the merged descriptions, meta.txt, per
 * CPU stats and cpuN.raw pages; shmcap_tracedat() writes it as a trace.dat.
 * Messages go to stderr, prefixed with the command's name.
 */
#ifndef TRACEBUF_TOOLS_SHM_CAPTURE_H
#define TRACEBUF_TOOLS_SHM_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/ring.h"
#include "tracebuf/shm.h"

/* Where the processes of the session at shm_path describe their events. */
void shmcap_desc_dir(const char *shm_path, char *out, size_t size);

/*
 * A fresh private directory (mode 0700) under $TMPDIR, else /tmp, or
 * /dev/shm when small (it will only hold descriptions): 0 or -errno.
 */
int shmcap_tmpdir(const char *what, int small, char *out, size_t size);
/* Remove a directory tree made here (NULL or "": nothing). */
void shmcap_rmtree(const char *dir);

/*
 * Merge desc_dir's PID directories into cap (created): header texts and
 * trace_clock of the first, every format file (a conflicting one is
 * reported and the first kept), printk_formats, kallsyms and
 * saved_cmdlines joined, and the names of the ring's writer threads
 * that the lists lack (tb_ring_thread_names: threads that ended before the
 * last description).  Returns how many process descriptions were
 * found; a session without any still gets header texts (events then
 * print without names).  Negative errno on a write error.
 */
int shmcap_merge_desc(const char *cmd, const char *desc_dir, const char *cap, const struct tb_ring *ring);

/* A CPU's stats of ring as the kernel's stats text, in *text (malloc'ed, the caller frees): 0 or -errno. */
struct tb_cpu_stats;
int shmcap_stats_text(const struct tb_ring *ring, const struct tb_cpu_stats *st, char **text, size_t *len);
/* meta.txt and cpuN.stats for ring into cap: 0 or -errno. */
int shmcap_meta(const char *cmd, const char *cap, struct tb_ring *ring);

/*
 * Where each sub-buffer of a window's cpuN.raw files was read in the region:
 * at[cpu][k] is the region's byte of sub-buffer k's first data byte (the
 * window's page_data_at).  Filled by shmcap_window, freed by
 * shmcap_origins_free (the struct itself is the caller's).
 */
struct shmcap_origins {
	unsigned ncpus;
	uint64_t **at; /* [ncpus][n[cpu]] */
	size_t *n, *cap;
};
void shmcap_origins_free(struct shmcap_origins *o);
/* The region's byte for byte offset of cpuN.raw: true when known (*at set). */
bool shmcap_origin(const struct shmcap_origins *o, unsigned cpu, uint64_t offset, size_t subbuf, uint64_t *at);

/*
 * The pages the ring holds now (tb_shm_window) as cap/cpuN.raw: 0 or -errno;
 * counts in *w.  With blobs (not NULL) and a blob area, the blobs the pages
 * refer to go to cap/blobs.bin as each page is copied, counted in *blobs.
 * With origins (not NULL), where each page was read (emptied first).
 */
struct tb_blob_save_counts;
int shmcap_window(const char *cmd, const char *cap, struct tb_ring *ring, struct tb_shm_window *w,
		  struct tb_blob_save_counts *blobs, struct shmcap_origins *origins);
/*
 * The damage a window met (w->damaged: pages cut at a bad record) said on
 * stderr as report says it, naming the region file region and its byte:
 * true when there was any.
 */
bool shmcap_say_damage(const char *cmd, const char *region, const struct tb_shm_window *w);
/* cap/blobs.bin created for ring's blobs (tb_blob_save_page): an fd; -1 when there are none to save; -errno. */
int shmcap_blob_store(const char *cap, const struct tb_ring *ring, const struct tb_blob_save_counts *blobs);
/* "tracebuf CMD: blobs: N saved ..." on stderr, when there were any. */
void shmcap_say_blobs(const char *cmd, const struct tb_blob_save_counts *blobs);

/*
 * The pages shm's ring holds now (tb_shm_window) straight into the trace.dat
 * out (version 6), with cap's descriptions (shmcap_merge_desc) and the
 * ring's CPU stats (read under tb_shm_guard): no cpuN.raw in between
 * (shm_stream.c).  0 or -errno
 * (said on stderr); counts in *w.
 */
int shmcap_stream(const char *cmd, const char *cap, const char *out, struct tb_shm *shm, struct tb_shm_window *w);
/* cap as the trace.dat out (version 6): 0 or -errno. */
int shmcap_tracedat(const char *cmd, const char *cap, const char *out, const struct tb_ring *ring);
/* Options for writing ring's pages as a trace.dat: v6, and TSC2NSEC on an x86-tsc ring. */
struct tb_tracedat_write_opts;
void shmcap_write_opts(const struct tb_ring *ring, struct tb_tracedat_write_opts *o);

/* "tracebuf CMD: " and the message on stderr; returns rc. */
int shmcap_say(const char *cmd, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
