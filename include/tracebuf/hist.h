/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/hist.h - the kernel's hist triggers, computed from recorded
 * pages instead of inside the kernel.
 *
 * A hist spec is what one writes after "hist:" into an event's trigger
 * file: "keys=common_pid.execname,id.syscall:vals=hitcount:sort=hitcount.
 * descending:size=2048".  tb_hist_new() parses it against one event's
 * format and compiles every key and value into a field accessor (offset,
 * size, signedness, string kind); tb_hist_add_capture() then walks the
 * capture's sub-buffers record by record, straight from the pages, and
 * adds every record of that event to a hash table; tb_hist_print() prints
 * the table as the kernel's `hist` file prints it: the "# event histogram"
 * header with the trigger info, one "{ key: value, ... } hitcount: N"
 * line per entry in the sort order, and the Totals footer (Hits, Entries,
 * Dropped).
 *
 * Supported: keys= (up to 3, compound), vals= (up to 2 sums; hitcount
 * always), sort= (up to 2, keys or vals, .ascending/.descending), size=,
 * the modifiers .hex .sym .sym-offset .execname (common_pid) .syscall
 * .log2 .buckets=N .usecs (common_timestamp), common_timestamp,
 * common_cpu, numeric and string fields (fixed char arrays and
 * __data_loc / __rel_loc strings), and "if FILTER" in the kernel's filter
 * language (tracebuf/filter.h; COMM there is the pid's saved comm).  Not
 * supported: variables, expressions, actions (onmax, onmatch, ...),
 * stacktrace keys, name=.
 *
 * What differs from the kernel by nature: .execname prints the comm of the
 * pid from the trace's saved_cmdlines (the kernel saves the running task's
 * comm when the entry is made); .sym needs the trace's kallsyms; .syscall
 * names are those of an x86_64 kernel; the entries the kernel drops when
 * size= is exceeded are those whose first event came last, by time stamp;
 * and entries that tie on every sort key are printed in key order (the
 * kernel leaves their order to its sort).
 *
 * Ownership: tb_hist_new() returns a handle freed with tb_hist_free(); it
 * borrows the schema (for comms and symbols at print time), which must
 * outlive it.  tb_hist_add_capture() keeps nothing of the capture.  A hist
 * is not thread-safe: use each from one thread at a time.  An attached
 * hist (below) is the library's: tb_hist_remove() ends it.
 *
 * Misuse: NULL arguments are -EINVAL.
 */
#ifndef TRACEBUF_HIST_H
#define TRACEBUF_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tracebuf/capture.h"
#include "tracebuf/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_hist;

/* Where a spec is wrong: pos is the byte offset in the spec text. */
struct tb_hist_error {
	size_t pos;
	char reason[256];
};

/*
 * Parse spec (an optional "hist:" prefix is skipped) for event fmt of
 * system.  0 with *out set, -EINVAL with *err filled, or -ENOMEM.
 */
int tb_hist_new(const char *spec, const struct tb_format *fmt, const char *system,
		struct tb_schema *schema, struct tb_hist **out, struct tb_hist_error *err);
void tb_hist_free(struct tb_hist *h);

/* The timestamp unit: whether the clock counts nanoseconds (.usecs divides by 1000 only then). */
void tb_hist_set_ns_clock(struct tb_hist *h, int ns_clock);
/*
 * The time stamps count TSC cycles and the trace says how to make
 * nanoseconds of them (trace.dat's TSC2NSEC: ns = cycles * mult >> shift):
 * every time value (common_timestamp keys and values, .usecs) is converted,
 * and the clock then counts ns.  mult 0: none (the default), and then
 * tb_hist_add_capture() takes the capture's own TSC2NSEC where it has one.
 */
void tb_hist_set_tsc2nsec(struct tb_hist *h, uint32_t mult, uint32_t shift);
/*
 * skip: every tb_hist_add_capture() reads a source that starts again from
 * what it held before (a shared-memory ring's window, copied afresh at each
 * refresh): a CPU's records up to the last one counted (by time stamp, and
 * count at that time stamp) are passed over, so each record counts once.
 */
void tb_hist_skip_seen(struct tb_hist *h, int skip);
/*
 * With skip_seen: count only records stamped at or before ts (the raw
 * time of the source's clock, as its pages hold it; 0: no limit) in the
 * passes from now on; the later ones are left for a later pass.  A source
 * copied CPU after CPU while it is written holds each CPU up to a
 * different moment; a cut taken before the copy began makes every pass
 * one moment of the whole ring (see tools/cmd_hist.c).
 */
void tb_hist_count_until(struct tb_hist *h, uint64_t ts);
/* Where names (comms, symbols) are looked up from now on (borrowed; NULL: unchanged). */
void tb_hist_set_schema(struct tb_hist *h, struct tb_schema *schema);

/* What one pass over a capture met. */
struct tb_hist_totals {
	uint64_t records;     /* data records of any event */
	uint64_t matched;     /* records of the hist's event */
	uint64_t bad_records; /* of the event, too short for its fields (the first 10 reported) */
	uint64_t bad_pages;   /* sub-buffers that did not decode (reported) */
	uint64_t lost_pages;  /* sub-buffers flagged as having lost events before them */
};

/*
 * Add every record of the event in c's pages (all CPUs; a live instance is
 * consumed).  0, or a negative errno (-ENOMEM).  Problems are reported
 * through the capture's diag callback and counted in *totals (may be NULL;
 * it is added to, not cleared).
 */
int tb_hist_add_capture(struct tb_hist *h, struct tb_capture *c, struct tb_hist_totals *totals);

/* Add one record (payload, common header first) written at ts on cpu. */
int tb_hist_add_record(struct tb_hist *h, const void *data, uint32_t len, uint64_t ts, int cpu);

/* Print the kernel's `hist` text.  0 or -EIO when writing failed. */
int tb_hist_print(struct tb_hist *h, FILE *out);

/*
 * Hists attached at the source (the same spec): each hit of the event
 * updates an in-process map instead of writing a record.
 *
 *     tb_hist_attach("app:request", "keys=route:vals=bytes:sort=hitcount");
 *     ... tb_trace(app, request, ...) ...
 *     tb_hist_print_attached(stdout);  // the kernel's hist text
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
 * printed to stderr at exit (atexit), on demand with
 * tb_hist_print_attached, and with TRACEBUF_HIST_SIGNAL=USR2 (USR1, or a
 * number) whenever that signal comes: the handler only writes a byte
 * into a pipe, a thread of the library's prints (a signal the program
 * handles itself is left to it, said on stderr).
 *
 * The library owns the maps.  tb_hist_remove closes the gate and forgets
 * the hist; its memory stays allocated for the rest of the
 * process (a writer may still be inside it), so removing is safe while
 * writers run.  Attaching an event that has a hist attached is -EBUSY.
 *
 * Link: these live in libtracebuf-read (the hist parser and printer); an
 * application that only traces needs libtracebuf alone.
 *
 * Read from outside: each attached hist's tables live in a region of
 * shared memory of its own, a memfd named "tracebuf-hist:SYSTEM:EVENT"
 * (sealed against shrinking and growing), which holds the event's format
 * and the spec beside the tables, so another process (same user, or root:
 * /proc/PID/fd) maps it read-only and needs nothing from the program:
 * tb_hist_print_processes(), `tracebuf hist --attach PID|SHMFILE`.  It
 * works with or without an shm session (a session's processes are found
 * through its formats directory).  Each slot's counters are a seqlock the
 * reader retries (never a lock the writers wait for): a counter pair read
 * torn is read again.  A forked child keeps a private copy of its
 * parent's tables at fork (as before) that only it can read; without
 * memfd_create (seccomp), the tables are private memory and readable only
 * in the process.  .sym keys print as addresses from outside (the
 * program's symbols are not in the region).
 */
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
int tb_hist_remove(const char *event);
/* Every attached hist's text, one after another.  0, -EIO, -ENOMEM. */
int tb_hist_print_attached(FILE *out);

/*
 * The hists attached in the running processes pids[0..n), read from their
 * regions now, printed as each process's tb_hist_print_attached() prints
 * them; the hists of one event and spec in several processes (a session's)
 * are merged.  event: only that one ("SYSTEM:EVENT" or "EVENT"; NULL: all).
 * *unsettled (may be NULL): counter sets never read whole (a writer stopped
 * inside an update), taken as read.  0; -ESRCH (no such process), -ENOENT
 * (no hist attached), -EINVAL (a damaged region), -EACCES, -ENOMEM, -EIO;
 * tb_hist_region_error() says which file and byte.
 */
int tb_hist_print_processes(const pid_t *pids, size_t n, const char *event, FILE *out, uint64_t *unsettled);
/* A region's image of size bytes (a copy: fuzzing, tests), checked and printed.  As above. */
int tb_hist_print_region(const void *mem, size_t size, FILE *out);
/* The last problem of this thread's reading, naming the file and byte ("" when none). */
const char *tb_hist_region_error(void);

#ifdef __cplusplus
}
#endif
#endif
