/* SPDX-License-Identifier: MIT */
/*
 * shm_session.h - a shared-memory session (tracebuf/shm.h) read as a
 * capture: the input stage's shm session kind (kind_shm_session.c), and
 * the parts `tracebuf record`, `snapshot`, `recover` and `hist --session`
 * share (tools/shm_capture.c is their CLI glue).
 *
 * A session has two parts: the region (the ring), and a directory where
 * each traced process describes its events (TRACEBUF_SHM_FORMATS, one PID
 * directory each, src/source/session.c).  shm_session_desc_dir() derives
 * that directory from the region's path, so every reader finds it from the
 * path alone.  A copy of the ring becomes a capture directory with the
 * merged descriptions (shm_session_merge_desc), meta.txt and per-CPU stats
 * (shm_session_meta), and the window's pages in cpuN.raw
 * (shm_session_window); shm_session_capture() does all of it in a private
 * directory and opens that as a capture whose messages name the region.
 *
 * Nothing here consumes the ring: a window is copied seqlock-style while
 * the writers go on (src/ring/shm_window.c), so crash recovery and a
 * running record are untouched.  Nothing here prints: problems go through
 * a tb_problem_fn.  Errors are negative errno values.
 */
#ifndef TRACEBUF_INPUT_SHM_SESSION_H
#define TRACEBUF_INPUT_SHM_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/blob.h"
#include "tracebuf/capture.h"
#include "tracebuf/shm.h"
#include "tracebuf/stats.h"

/* Where the processes of the session whose region is at region describe their events. */
void shm_session_desc_dir(const char *region, char *out, size_t size);

/*
 * Merge desc_dir's PID directories into the capture directory cap
 * (created): header texts and trace_clock of ring, every format file (one
 * that two processes wrote differently is said as a warning through diag,
 * naming desc_dir, and the first kept), printk_formats, kallsyms and
 * saved_cmdlines joined, and the names of the ring's writer threads that
 * the lists lack (tb_ring_thread_names: threads that ended before the last
 * description).  Returns how many process descriptions were found; a
 * session without any still gets header texts (events then print without
 * names).  A negative errno on a write error.
 */
int shm_session_merge_desc(const char *desc_dir, const char *cap, const struct tb_ring *ring, tb_problem_fn *diag,
			   void *diag_ctx);

/* A CPU's stats of ring as the kernel's stats text, in *text (malloc'ed, the caller frees): 0 or -errno. */
int shm_session_stats_text(const struct tb_ring *ring, const struct tb_cpu_stats *st, char **text, size_t *len);
/* meta.txt ("producer: tracebuf PRODUCER", CPUs, clock, sub-buffer size) and cpuN.stats for ring into cap. */
int shm_session_meta(const char *producer, const char *cap, struct tb_ring *ring);

/*
 * Where each sub-buffer of a window's cpuN.raw files was read in the region:
 * at[cpu][k] is the region's byte of sub-buffer k's first data byte (the
 * window's page_data_at).  Filled by shm_session_window, freed by
 * shm_origins_free (the struct itself is the caller's).
 */
struct shm_origins {
	unsigned ncpus;
	uint64_t **at; /* [ncpus][n[cpu]] */
	size_t *n, *cap;
};
void shm_origins_free(struct shm_origins *o);
/* The region's byte for byte offset of cpuN.raw: true when known (*at set). */
bool shm_origin(const struct shm_origins *o, unsigned cpu, uint64_t offset, size_t subbuf, uint64_t *at);

/* cap/blobs.bin created for ring's blobs (tb_blob_save_page): an fd; -1 when there are none to save; -errno. */
int shm_session_blob_store(const char *cap, const struct tb_ring *ring, const struct tb_blob_save_counts *blobs);

/*
 * The pages ring holds now (tb_shm_window) as cap/cpuN.raw: 0 or -errno
 * (-EFAULT: a named region shrank under the reader, tb_shm_error() says
 * how); counts in *w.  With blobs (not NULL) and a blob area, the blobs
 * the pages refer to go to cap/blobs.bin as each page is copied, counted
 * in *blobs.  With origins (not NULL), where each page was read.
 */
int shm_session_window(const char *cap, struct tb_ring *ring, struct tb_shm_window *w,
		       struct tb_blob_save_counts *blobs, struct shm_origins *origins);

/*
 * The ring's cycles-to-ns conversion as trace.dat's TSC2NSEC (ns = cycles
 * * mult >> shift), from the ring's own calibration; mult 0 when the ring
 * is not x86-tsc or is uncalibrated (its stamps are used as they are).
 */
void shm_session_tsc2nsec(const struct tb_ring *ring, uint32_t *mult, uint32_t *shift);

/*
 * The window shm's ring holds now, with its session's descriptions
 * (desc_dir; NULL: shm_session_desc_dir of the region's path), as a
 * capture: copied into a private directory (under $TMPDIR, else /tmp)
 * that tb_capture_close() removes.  Every message the capture gives
 * names the region's file - a page's problem at its byte in the region -
 * never the private copy; damage the window met (w->damaged, w->bad) is
 * reported through the capture as a problem, so tb_capture_problems()
 * counts it.  An x86-tsc ring's stamps convert to ns by its calibration
 * (tb_capture_tsc2nsec), as its trace.dat would.  With owns_shm the
 * capture closes shm at its close (also on failure); else shm must
 * outlive the capture.  0 with *out set and *w the window's counts (w may
 * be NULL), or a negative errno, said through opts' diag.
 */
int shm_session_capture(struct tb_shm *shm, bool owns_shm, const char *desc_dir, const struct tb_capture_opts *opts,
			struct tb_capture **out, struct tb_shm_window *w);

#endif
