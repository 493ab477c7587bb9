/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/events.h - the registry of the process's events: where enabled
 * events write, switching them on and off by name, and what they look like
 * in the kernel's format-file syntax.
 *
 * Events are declared with tracebuf/tracepoint.h and register themselves
 * when their executable or shared library is loaded.  Each system:name has
 * one ID for the process.  The built-in events are the kernel's own
 * ftrace:print (tb_marker_write), ftrace:bprint (tb_printf) and
 * ftrace:raw_data (tb_marker_raw_write), with the kernel's IDs 5, 6, 19.
 *
 * WHERE RECORDS GO.  Every event starts disabled.  Enabled events write to
 * the ring given to tb_events_attach(); enabling an event while none is
 * attached creates a default ring (tb_ring_new() defaults: 1408 KiB per
 * CPU, overwrite, TSC clock), owned by the library for the rest of the
 * process and returned by tb_events_ring().
 *
 * ON/OFF.  Patterns are comma-separated SYSTEM:NAME globs (fnmatch):
 * "app:*", "*:send", "app:req*".  "NAME" alone means "*:NAME" and
 * "SYSTEM:" means "SYSTEM:*", as in the kernel's set_event.  At start the
 * environment variable TRACEBUF_EVENTS (same syntax) enables events, and
 * keeps doing so for events of libraries loaded later; a pattern that
 * matched no event once the program's own events have registered is
 * reported on standard error ("tracebuf: TRACEBUF_EVENTS: no event
 * matches 'X'").
 *
 * SELF-DESCRIPTION.  Each event's format text is byte-for-byte what tracefs
 * events/SYSTEM/NAME/format would show for it; header_page and header_event
 * are the kernel's (the ring's pages are the kernel's format); the
 * printk_formats text maps each tb_printf() call site's key to its format
 * string like the kernel's, and a kallsyms-style text names the function
 * each site is in (a bprint record's ip holds the same key).  With
 * TRACEBUF_FORMATS=DIR in its environment, a program writes all of it to
 * DIR in the layout of a capture directory (header_page, header_event,
 * formats/SYSTEM/NAME.format, printk_formats, kallsyms, saved_cmdlines, and
 * trace_clock when a ring is attached) as soon as its own
 * events are registered - before main() - and exits: that is what
 * `tracebuf formats PROGRAM` runs.  (A program that does not include
 * tracepoint.h itself does it at exit instead.)
 *
 * IDs.  Events declared without an ID get one from 1000 up, or from
 * TRACEBUF_FIRST_ID when the environment names one (1000 to 65535):
 * `tracebuf record --kernel` starts them above the kernel's own so both
 * share one trace.dat.
 *
 * Problems found at registration - conflicting declarations of one event,
 * malformed descriptors, printf formats the kernel's rules cannot record -
 * are printed on standard error with the file and line of the declaration
 * and counted (tb_events_problems()); the event or call site concerned
 * stays disabled.
 *
 * Ownership: the registry is the library's, for the process; so is the
 * default ring it creates.  A ring given to tb_events_attach() stays the
 * caller's.  Strings handed to callbacks are valid during the call only;
 * texts returned are malloc'ed and the caller frees them.
 *
 * Everything here is thread-safe.  Errors are negative errno values.
 */
#ifndef TRACEBUF_EVENTS_H
#define TRACEBUF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/ring.h"
#include "tracebuf/tracepoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Send enabled events to ring (NULL: they stop writing, and stay enabled).
 * The ring must outlive its attachment; see tracepoint.h for freeing it.
 */
void tb_events_attach(struct tb_ring *ring);
/* The ring events write to now, or NULL. */
struct tb_ring *tb_events_ring(void);

/*
 * Enable or disable the events matching each pattern of the comma-separated
 * list.  Returns how many events matched, or -ENOENT when some pattern
 * matched none (the others still took effect; the unmatched ones are
 * written comma-separated into unknown[0..size) when unknown is not NULL),
 * -EINVAL for an empty pattern, or the error of creating the default ring.
 */
int tb_events_enable(const char *patterns, char *unknown, size_t size);
int tb_events_disable(const char *patterns, char *unknown, size_t size);

/*
 * Filter event ("SYSTEM:NAME") at the source with expr in the kernel's
 * event-filter language (tracebuf/filter.h), as writing the kernel's
 * events/SYSTEM/NAME/filter does: a record the filter rejects is built
 * (on the emitter's stack, as always) and tested, but never reserved in
 * the ring, and is counted in the ring's filtered counter (tb_stats_read,
 * `tracebuf stats`), never as lost.  COMM is the writing thread's name,
 * CPU the CPU it writes on.  expr NULL, "" or "0" removes the filter.
 * Events without a filter write exactly as before; a filtered event costs
 * the test of its filter more.  A filter stays set across attach, enable
 * and disable.  0, -ENOENT (no such event loaded), -EOPNOTSUPP (the
 * built-in ftrace events), -EINVAL (a malformed event name, or expr:
 * *err then says where and why, if err is not NULL) or -ENOMEM.
 */
struct tb_filter_error; /* tracebuf/filter.h */
int tb_events_set_filter(const char *event, const char *expr, struct tb_filter_error *err);

struct tb_events_info {
	const char *system, *name;
	uint16_t id;
	bool enabled;
	bool loaded;            /* false once every object declaring it is unloaded */
	const char *format;     /* the format file text */
	size_t format_len;
	const char *declared;   /* "FILE:LINE" of the first declaration */
};

/* Calls fn for every event ever registered, in ID order, until fn returns non-zero (returned). */
typedef int tb_events_info_fn(void *ctx, const struct tb_events_info *ev);
int tb_events_foreach(tb_events_info_fn *fn, void *ctx);

struct tb_events_printf_info {
	uint64_t key;           /* the printk_formats address of its records */
	const char *fmt, *func;
	const char *declared;   /* "FILE:LINE" */
	bool loaded;
	bool recordable;        /* false: refused at registration (see problems) */
};

typedef int tb_events_printf_info_fn(void *ctx, const struct tb_events_printf_info *site);
int tb_events_foreach_printf(tb_events_printf_info_fn *fn, void *ctx);

/* The kernel's events/header_page for sub-buffers of subbuf_size bytes, and header_event. */
char *tb_events_header_page(size_t subbuf_size);
char *tb_events_header_event(void);
/* printk_formats ("0xKEY : \"FMT\"" lines) and kallsyms ("KEY t FUNC" lines); *len set. */
char *tb_events_printk_formats(size_t *len);
char *tb_events_kallsyms(size_t *len);

/*
 * Write every text above to dir (created if missing) in the layout of a
 * capture directory, for ring's sub-buffer size (4096 when ring is NULL),
 * with ring's clock in trace_clock and the comm of the process's threads in
 * saved_cmdlines.  Adding the ring's pages as cpuN.raw (tb_read_page) makes
 * a directory `tracebuf report` prints.  0 or -errno.
 */
int tb_events_dump(const char *dir, const struct tb_ring *ring);

/* Problems reported by the registry since the process started. */
unsigned long tb_events_problems(void);

/* Reading these events back: tb_schema_load_events() (tracebuf/schema.h). */

#ifdef __cplusplus
}
#endif
#endif
