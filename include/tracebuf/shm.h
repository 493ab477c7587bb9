/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/shm.h - rings in shared memory: one region written by several
 * processes and read by another (tracebuf record, snapshot, recover).
 *
 * The creator makes the region in a memfd (sealed against shrinking and
 * growing, so a reader can never be handed a file that shrinks under its
 * mapping) or in a named file (under /dev/shm; it outlives every process,
 * which is what crash recovery needs, but cannot be sealed).  The file is
 * mode 0600, or 0660 and owned by a named group.  Other processes attach to
 * it by path (a memfd's is /proc/PID/fd/N) as writers, which trace into it
 * with the usual tb_write()/tb_reserve() on the handle's ring, or as
 * readers.
 *
 * A reader treats the region as untrusted: the header is copied once into
 * private memory and checked against the geometry it implies and the
 * file's size before anything is derived from it, so a writer that
 * scribbles over it afterwards changes nothing the reader uses.
 * tb_shm_load() goes further for recovery: the whole file is copied into
 * private memory first, so nothing can change under the reader at all.
 * A named file cannot be sealed: a reader's tb_shm_window (and whatever
 * runs under tb_shm_guard) turns a file shrunk under it into -EFAULT.
 *
 * Ownership: a struct tb_shm owns its mapping, its file descriptor and its
 * ring handle (tb_shm_ring(), valid until tb_shm_close()).  The creator's
 * named file stays until tb_shm_unlink() or the caller removes it.
 * Errors are negative errno values; the text of the first problem found in
 * a file is available from tb_shm_error() (and named with the file).
 */
#ifndef TRACEBUF_SHM_H
#define TRACEBUF_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracebuf/reader.h"
#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_shm;

struct tb_shm_opts {
	const char *path;            /* NULL: a sealed memfd; else create this file (must not exist) */
	gid_t group;                 /* with has_group: mode 0660 and this group; else 0600 */
	int has_group;
	const struct tb_ring_opts *ring; /* the ring's options (mem is ignored); NULL: defaults */
};

enum tb_shm_mode {
	TB_SHM_WRITER = 0, /* trace into it */
	TB_SHM_READER = 1, /* consume, snapshot (header private and checked) */
};

/* Make a region and its ring. 0 with *out set, or -errno (errors as open/memfd_create, tb_ring_new). */
int tb_shm_open(const struct tb_shm_opts *opts, struct tb_shm **out);
/*
 * Map an existing region.  -ENOENT/-EACCES as open(2), -EINVAL when the
 * file is not a tracebuf region or a field is out of range (tb_shm_error()
 * says which), -EPERM for a reader of a memfd that is not sealed against
 * shrinking.
 */
int tb_shm_attach(const char *path, enum tb_shm_mode mode, struct tb_shm **out);
/* Copy the file into private memory and check it there: recovery after writers died. */
int tb_shm_load(const char *path, struct tb_shm **out);
/* Check a region in memory (size bytes): 0 or -EINVAL with the reason in *why (static text). */
int tb_shm_check(const void *mem, size_t size, const char **why);

struct tb_ring *tb_shm_ring(const struct tb_shm *shm);
/* The path others attach with: the named file, or /proc/PID/fd/N of the memfd. */
const char *tb_shm_path(const struct tb_shm *shm);
/* The last attach/load problem of this thread, as text ("" when none). */
const char *tb_shm_error(void);
int tb_shm_unlink(const struct tb_shm *shm);
/* Unmap, close, free (NULL: nothing).  The ring handle goes with it. */
void tb_shm_close(struct tb_shm *shm);

/*
 * What a ring holds now, without consuming it and without stopping
 * writers: the window of pages still in the ring (and the unconsumed part
 * of the page a consuming reader holds), each page copied seqlock-style and
 * kept only if no writer claimed it meanwhile.  fn gets each page as a
 * whole sub-buffer in the kernel's format: commit set, the loss flag and
 * count on the first page after a gap.  Counts go to *w.
 */
struct tb_shm_window {
	uint64_t events;      /* events in the pages handed over */
	uint64_t lost_before; /* events before the window (overwritten or refused) */
	uint64_t lost_inside; /* pages overwritten while they were copied */
	/*
	 * Writes begun and neither committed nor refused: writers that died
	 * (or, live, are writing) in the middle of tb_write, between
	 * tb_reserve and tb_commit/tb_discard, or publishing a blob.  Exact
	 * when in_flight_exact is 1 (the region's table of writes begun per
	 * thread balanced); otherwise a lower bound, from what dead sections
	 * left: at most one per CPU shows.
	 */
	uint64_t in_flight;
	uint64_t pages;
	uint64_t bad;         /* control words out of range: data skipped */
	int in_flight_exact;
	int table_bad;        /* the thread table did not balance (scribbled): in_flight is a lower bound */
	/*
	 * Pages whose records go wrong part-way (page bytes scribbled): each
	 * is handed over cut before the record that goes wrong (what a reader
	 * of the page would print), and only the records before it count in
	 * events.  The first one: the byte of the region (its file) where that
	 * record lies, and why (static text; NULL when there is none).
	 */
	uint64_t damaged;
	uint64_t damage_at;
	const char *damage;
	/* While fn runs: the byte of the region where the page's first data byte was read. */
	uint64_t page_data_at;
};
typedef int tb_shm_page_fn(void *ctx, unsigned cpu, const void *page, size_t size);
/*
 * 0, fn's first negative return, or -EFAULT when the region is a named
 * file (attached as a reader) that another process shrank while it was
 * read: tb_shm_error() says to what size, and the handle is then good
 * only for tb_shm_close() (see tb_shm_guard).
 */
int tb_shm_window(struct tb_ring *ring, tb_shm_page_fn *fn, void *ctx, struct tb_shm_window *w);

/*
 * fn(ctx), with reads of shm's mapping made safe against the file
 * shrinking: a named file cannot be sealed, and touching a page past its
 * new end raises SIGBUS.  Under the guard that SIGBUS returns -EFAULT
 * from here instead (tb_shm_error() says how the file shrank); otherwise
 * fn's result.  A memfd (sealed) runs fn unguarded.  The first guarded
 * call installs a process-wide SIGBUS handler that passes every other
 * SIGBUS on to the handler before it (or to the default action).  fn is
 * abandoned at the faulting read: it must hold no lock and own no memory
 * across its reads of the mapping, and after -EFAULT the handle is good
 * only for tb_shm_close().  tb_shm_window guards itself.
 */
int tb_shm_guard(struct tb_shm *shm, int (*fn)(void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
