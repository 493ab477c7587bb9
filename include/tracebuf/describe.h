/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/describe.h - records that describe themselves: event
 * descriptions in the kernel's format-file syntax, the list of objects
 * mapped in the process (so addresses can be named when read), and a ring
 * saved as a capture directory that `tracebuf report` reads.
 *
 * A source (the function tracer, the PMU source, ...) writes records that
 * start with the kernel's 8-byte common header (common_type = the event's
 * ID, common_flags, common_preempt_count, common_pid = the thread id) and
 * describes them with a struct tb_evdesc: plain constant data, so a
 * registry of events can take them as they are and hand out the IDs.
 *
 * Ownership: descriptions are the caller's (sources keep theirs in static
 * storage); tb_objects_text() returns a malloc'd string the caller frees.
 * Everything here uses libc alone.
 */
#ifndef TRACEBUF_DESCRIBE_H
#define TRACEBUF_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The common header every described record starts with (the kernel's). */
struct tb_common_header {
	uint16_t type;         /* the event's ID */
	uint8_t flags;         /* the kernel's irqs-off/need-resched/... bits: 0 here */
	uint8_t preempt_count; /* 0 here */
	int32_t pid;           /* the thread id of the writer (or of the sampled thread) */
};

/* One field after the common header, as its format-file line says it. */
struct tb_evfield {
	const char *type; /* C type as the kernel writes it: "unsigned long", "int" */
	const char *name; /* field name; an array keeps its brackets: "args[6]" */
	uint16_t offset;  /* from the record's start (the common header is at 0..7) */
	uint16_t size;
	uint8_t is_signed;
};

/* One event: its names, its record layout and how to print it. */
struct tb_evdesc {
	const char *system;    /* the events/SYSTEM directory name */
	const char *name;      /* the event name */
	uint16_t size;         /* record bytes, common header included */
	unsigned nfields;
	const struct tb_evfield *fields; /* after the common header, by offset */
	const char *print_fmt; /* what follows "print fmt: ": "\"...\", REC->x, ..." */
};

/*
 * The event's format file, as the kernel writes events/SYSTEM/NAME/format,
 * with ID id, into buf (NUL-terminated when size > 0).  Returns the text's
 * length (snprintf's rule: a result >= size means it was cut short).
 */
int tb_evdesc_format(const struct tb_evdesc *desc, uint16_t id, char *buf, size_t size);

/*
 * The objects (executable, shared libraries) mapped in this process now,
 * one line each:
 *     START END BIAS BUILD-ID PATH
 * START..END spans the object's loadable segments, BIAS is what was added
 * to its link-time addresses, all three lower-case hex without 0x;
 * BUILD-ID is its GNU build-id in hex or "-"; PATH runs to the line's end.
 * The vDSO, which has no file, is listed with the path TB_OBJECTS_VDSO
 * (readers use their own vDSO's symbols when its build-id matches: the
 * same kernel).  The first line is a comment naming the columns.  0 with
 * *text (malloc'd, NUL-terminated) and *len, or -ENOMEM.
 */
#define TB_OBJECTS_VDSO "[vdso]"
int tb_objects_text(char **text, size_t *len);

/* An event to describe in a saved capture, with the ID its records carry. */
struct tb_save_event {
	const struct tb_evdesc *desc;
	uint16_t id;
};

struct tb_save_opts {
	const struct tb_save_event *events; /* the events the ring's records use */
	size_t nevents;
	/*
	 * current_tracer of the capture: NULL for "nop".  "function_graph"
	 * makes `tracebuf report` print the call graph, as the kernel's
	 * trace file does with that tracer.
	 */
	const char *tracer;
};

/*
 * Save the ring as a capture directory dir (created if missing; files in
 * it are replaced): header_page, header_event, formats/SYSTEM/NAME.format
 * for each event, cpuN.stats (taken first) and cpuN.raw (every sub-buffer,
 * read with tb_read_page, so the ring is CONSUMED), blobs.bin when the ring
 * has a blob area (the blob of each reference on those pages, copied as the
 * page is taken: tb_blob_save_page, tracebuf/blob.h), meta.txt (ncpus,
 * trace_clock), current_tracer, saved_cmdlines (this process's threads as
 * they are now) and objects (tb_objects_text).  Stop the writers first for
 * a consistent picture (with writers running, at most one ring's worth of
 * sub-buffers per CPU, plus two, is read).  0, or -errno with err->reason naming the file and
 * what failed (err may be NULL; err->file is set to dir).
 */
struct tb_problem; /* tracebuf/problem.h */
int tb_save_ring(struct tb_ring *ring, const char *dir, const struct tb_save_opts *opts,
		     struct tb_problem *err);

#ifdef __cplusplus
}
#endif
#endif
