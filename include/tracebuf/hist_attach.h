/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/hist_attach.h - a hist (tracebuf/hist.h, the kernel's hist
 * trigger syntax) attached at the source: each hit of the event updates
 * an in-process map instead of writing a record.
 *
 *     tb_hist_attach("app:request", "keys=route:vals=bytes:sort=hitcount");
 *     ... tb_trace(app, request, ...) ...
 *     tb_hist_print(stdout);   // the kernel's hist text, as `tracebuf hist` prints it
 *
 * The spec is parsed against the event's format at attach time and refused
 * there (-EINVAL, the kernel's wording in *err where it has one).  ":record"
 * anywhere in the spec keeps the record too (written when the event is
 * enabled); without it an attached event writes no record.
 *
 * The write side: every thread updates a table of its own (claimed from a
 * pool made at attach time: TB_HIST_ATTACH_TABLES per hist; a thread gives
 * its table back when it exits, its counts stay), so no lock another CPU
 * can contend and no allocation after attach.  It is async-signal-safe: a
 * handler that fires the event while its thread is inside an update
 * counts into another free table of the pool.  Each table holds at most
 * 2^bits keys (size=, as the kernel's map); a new key of a full table, or
 * a hit that finds no free table (more threads at once than tables), is
 * counted in Dropped, never lost silently.  Printing merges the tables
 * and keeps the first 2^bits keys by first sighting, as the kernel does.
 * (One case differs from the kernel: a thread whose own table is full
 * drops a key that another thread made first.)
 *
 * TRACEBUF_HIST='app:request:keys=route:vals=bytes' in the environment
 * attaches at start (several separated by ';'); every attached hist is
 * printed to stderr at exit (atexit), and on demand with tb_hist_print.
 *
 * Ownership: the library owns the maps.  tb_hist_detach closes the gate
 * and forgets the hist; its memory stays allocated for the rest of the
 * process (a writer may still be inside it), so detach is safe while
 * writers run.  Attaching an event that has a hist attached is -EBUSY.
 *
 * Link: these live in libtracebuf-read (the hist parser and printer); an
 * application that only traces needs libtracebuf alone.
 *
 * Not yet: `tracebuf hist --attach PID|SHMFILE` (reading the maps of a
 * running program from outside) - a later round.
 */
#ifndef TRACEBUF_HIST_ATTACH_H
#define TRACEBUF_HIST_ATTACH_H

#include <stdio.h>

#include "tracebuf/hist.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_HIST_ATTACH_MAX 8	  /* hists attached at once */
#define TB_HIST_ATTACH_TABLES 64  /* per hist: threads updating it at once */

/*
 * Attach spec to event "system:name".  0; -EINVAL (bad spec: *err filled,
 * may be NULL), -ENOENT (no such event registered), -EBUSY (one attached
 * already), -ENOSPC (TB_HIST_ATTACH_MAX attached), -EOPNOTSUPP (a built-in
 * ftrace event), -ENOMEM.
 */
int tb_hist_attach(const char *event, const char *spec, struct tb_hist_error *err);
/* 0, or -ENOENT when none is attached to event. */
int tb_hist_detach(const char *event);
/* Every attached hist's text, one after another.  0, -EIO, -ENOMEM. */
int tb_hist_print_attached(FILE *out);

#ifdef __cplusplus
}
#endif
#endif
