/* SPDX-License-Identifier: MIT */
/*
 * shm_capture.h - the CLI's glue over a shared-memory session's library
 * side (src/input/shm_session.h, through lib_internal.h): what record,
 * snapshot, recover and hist --session say on stderr, prefixed with the
 * command's name, around the library's copying and merging, which says
 * nothing itself.
 *
 * The session's two parts (the region, and the directory where its
 * processes describe their events), the description merge, the window
 * copied into cpuN.raw files and the stats are the library's; the names
 * below are kept so the commands read as before.
 */
#ifndef TRACEBUF_TOOLS_SHM_CAPTURE_H
#define TRACEBUF_TOOLS_SHM_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/ring.h"
#include "tracebuf/shm.h"
#include "lib_internal.h"

/* Where the processes of the session at shm_path describe their events. */
static inline void shmcap_desc_dir(const char *shm_path, char *out, size_t size)
{
	shm_session_desc_dir(shm_path, out, size);
}

/* A fresh private directory (util/files.h: make_private_dir): 0 or -errno. */
static inline int shmcap_tmpdir(const char *what, int small, char *out, size_t size)
{
	return make_private_dir(what, small, out, size);
}

/* Remove a directory tree made here (NULL or "": nothing). */
static inline void shmcap_rmtree(const char *dir)
{
	remove_tree(dir);
}

/*
 * shm_session_merge_desc, its warning (processes that disagree on an
 * event) said as "tracebuf CMD: ...": how many process descriptions were
 * found, or a negative errno (not said).
 */
int shmcap_merge_desc(const char *cmd, const char *desc_dir, const char *cap, const struct tb_ring *ring);

/* meta.txt ("producer: tracebuf CMD") and cpuN.stats for ring into cap: 0 or -errno. */
static inline int shmcap_meta(const char *cmd, const char *cap, struct tb_ring *ring)
{
	return shm_session_meta(cmd, cap, ring);
}

/* A CPU's stats of ring as the kernel's stats text, in *text (malloc'ed, the caller frees): 0 or -errno. */
static inline int shmcap_stats_text(const struct tb_ring *ring, const struct tb_cpu_stats *st, char **text,
				    size_t *len)
{
	return shm_session_stats_text(ring, st, text, len);
}

/* cap/blobs.bin created for ring's blobs: an fd; -1 when there are none to save; -errno. */
static inline int shmcap_blob_store(const char *cap, const struct tb_ring *ring,
				    const struct tb_blob_save_counts *blobs)
{
	return shm_session_blob_store(cap, ring, blobs);
}

/*
 * The pages the ring holds now as cap/cpuN.raw (shm_session_window),
 * blobs to cap/blobs.bin when counted, where each page was read in
 * origins (NULL: not kept): 0 or -errno, said on stderr; counts in *w.
 */
int shmcap_window(const char *cmd, const char *cap, struct tb_ring *ring, struct tb_shm_window *w,
		  struct tb_blob_save_counts *blobs, struct shm_origins *origins);
/*
 * The damage a window met (w->damaged: pages cut at a bad record) said on
 * stderr as report says it, naming the region file region and its byte:
 * true when there was any.
 */
bool shmcap_say_damage(const char *cmd, const char *region, const struct tb_shm_window *w);
/* "tracebuf CMD: blobs: N saved ..." on stderr, when there were any. */
void shmcap_say_blobs(const char *cmd, const struct tb_blob_save_counts *blobs);

/*
 * The pages shm's ring holds now (tb_shm_window) straight into the trace.dat
 * out (version 6), with cap's descriptions (shmcap_merge_desc) and the
 * ring's CPU stats (read under tb_shm_guard): no cpuN.raw in between
 * (shm_stream.c).  0 or -errno (said on stderr); counts in *w.
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
