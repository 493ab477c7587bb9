/* SPDX-License-Identifier: MIT */
/*
 * pagework.h - a CPU's sub-buffers decoded (and their records rendered) in
 * units of whole pages, by worker threads, then replayed in order.
 *
 * Reading a CPU's sub-buffers (and decompressing them), decoding a record
 * and rendering it are independent of every other CPU; only the merge by
 * time stamp is not.  So a worker reads a few consecutive sub-buffers of
 * one CPU into a unit (the units of one CPU in order, one at a time; the
 * reads of all CPUs one at a time, as the capture is not shared further),
 * walks the unit's pages and writes down, in order, every step the
 * page walk met - a page opened (its header), a page skipped (why), a
 * record (its time, where its payload lies, its text), a page cut short
 * (why) - and the reading thread replays those steps when its merge gets
 * to them, as if it had walked the pages itself.  Problems are reported at
 * replay, so they come out in the order a one-thread walk reports them;
 * those met reading the pages are kept with the unit (diag_defer.h) and
 * told when the reading thread takes the unit.
 *
 * Which records a worker renders: those whose event ID the reading thread
 * marked in `ready` (its printer chosen and thread-safe, printers.h
 * printers_prepare()); the others are left for the reading thread
 * (`here`), which renders them from the unit's page.  The reading thread
 * marks an ID as it meets its first record, so at the start nothing is
 * ready: each CPU's first unit is then one sub-buffer (WARMUP_PAGES) and
 * its other units are queued only once that one is replayed, by when the
 * IDs it held - on a busy CPU most of those the trace will have - are
 * ready.  Queued at once, all of them would be walked before any ID was
 * ready, and their every record rendered on the reading thread while the
 * workers waited (14,000 records of a 2.2 M-event trace.dat).
 *
 * Without workers (threads == 0) a unit is one page, read and decoded when
 * the replay needs it and never rendered: exactly a one-thread page walk,
 * the reading thread rendering every record.  That is the mode for live
 * buffers (pages are read only as they are needed) and small captures.
 *
 * A unit's sub-buffers lie in one slab of its own, written by the capture
 * itself (capture_read_pages(): read, or decompressed, straight there), so
 * a page reaches the walk without a copy.
 *
 * Memory: at most three units per stream, each a slab of at most 32
 * sub-buffers and 256 KiB (or one larger sub-buffer) and their text,
 * whatever the capture's size or the sizes its chunks claim; a count's
 * unit (PW_COUNT) a slab of 64 KiB, read into again, and a time stamp for
 * each record of up to 256 sub-buffers.
 *
 * Ownership: pagework_new() returns a handle freed by pagework_free(); a
 * unit returned by pagework_next() stays valid until the next call for the
 * same CPU.  The capture and schema stay the caller's and must outlive it.
 */
#ifndef TRACEBUF_PAGEWORK_H
#define TRACEBUF_PAGEWORK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "decode/diag_defer.h"
#include "printers.h"
#include "strbuf.h"
#include "tracebuf/capture.h"
#include "tracebuf/page.h"
#include "tracebuf/report.h"

/* Sub-buffers in each CPU's first unit, when workers render records of the IDs the reading thread readies. */
#define PW_WARMUP_PAGES 1

enum pw_step_kind {
	PW_PAGE,       /* a sub-buffer opened: hdr[page] holds its header */
	PW_ZERO_PAGE,  /* a sub-buffer of zeros skipped (never written by the kernel) */
	PW_BAD_PAGE,   /* a sub-buffer skipped whole: reason at offset in it */
	PW_RECORD,     /* a data record */
	PW_PAGE_ERROR, /* the rest of the sub-buffer skipped: reason at offset */
};

struct pw_step {
	uint8_t kind;         /* enum pw_step_kind */
	uint8_t used;         /* PW_RECORD rendered: enum printer_kind */
	bool here;            /* PW_RECORD: not rendered, the reading thread must */
	bool blob;            /* PW_RECORD: a blob reference (tracebuf/blob.h), id 0, never rendered */
	uint16_t id;          /* PW_RECORD: the event ID (0 if too short to hold one) */
	int32_t rc;           /* PW_RECORD rendered: what render_event() returned */
	uint32_t page;        /* index of the page in the unit */
	uint32_t off;         /* byte offset in the page: the payload, or the problem */
	uint32_t len;         /* PW_RECORD: payload bytes */
	uint32_t text_end;    /* PW_RECORD: text.len after this record's line */
	uint32_t err;         /* PW_RECORD with rc -EINVAL: index in errs */
	union {
		const char *reason; /* PW_BAD_PAGE, PW_PAGE_ERROR: a static string */
		struct {            /* PW_RECORD of 8 bytes or more: its common header, read by the worker */
			int32_t pid;        /* so that the merge never touches the payload it only frames */
			uint8_t flags, preempt;
		};
	};
	uint64_t ts;          /* PW_RECORD: its time stamp */
};

/*
 * A unit walked for PW_COUNT (pagecount.c): its pages are never copied and
 * its records get no step.  steps[] holds the page-level steps alone
 * (PW_PAGE, PW_ZERO_PAGE, PW_BAD_PAGE, PW_PAGE_ERROR), and step_at[k] says
 * how many of the unit's records come before steps[k]; stamps[] holds every
 * data record's time stamp in page order - what a merge needs of a record.
 */
struct pw_counted {
	uint64_t *stamps;  /* [nstamps] */
	size_t nstamps, stamps_cap;
	uint32_t *step_at; /* [nsteps of the unit] */
	size_t step_at_cap;
	uint64_t blobs;    /* records that are blob references (tracebuf/blob.h) */
	uint8_t (*refs)[24]; /* [blobs]: their payloads, to be looked up in the capture's blob store */
	size_t refs_cap;
	bool unsorted;     /* some page's stamps go back (an absolute stamp did, or the time wrapped) */
};

/* Whether st is a record whose whole text a worker rendered (not left here, rendered TB_RENDER_OK). */
static inline bool pw_step_rendered(const struct pw_step *st)
{
	return st->kind == PW_RECORD && !st->here && st->rc == TB_RENDER_OK;
}

/* How many records of one event ID one printer rendered in a unit. */
struct pw_printed {
	uint16_t id;
	uint8_t used; /* enum printer_kind */
	uint32_t n;
};

struct pw_tally;

struct pw_unit {
	int cpu;
	size_t npages;
	size_t cap;                   /* private: the most pages the arrays below hold */
	uint8_t **page;               /* [npages]: the sub-buffers, in slab (PW_COUNT: NULL, walked as read) */
	size_t *size;                 /* [npages]: their sizes */
	const char **file;            /* [npages]: where each page was read */
	uint64_t *file_offset;        /* [npages] */
	struct tb_page_header *hdr;   /* [npages] */
	struct pw_step *steps;
	size_t nsteps, steps_cap;
	struct tb_strbuf text;        /* the rendered records' lines, in step order */
	struct tb_problem *errs;
	size_t nerrs, errs_cap;
	int state;                    /* private: enum unit_state (pagework.c) */
	struct diag_sink problems;    /* private: met reading its pages on a worker, told at hand-out */
	uint8_t *slab;                /* private: where the capture wrote the unit's sub-buffers */
	size_t slab_cap;              /* private: its bytes */
	size_t pages_wanted;          /* private: this filling's pages, when not the usual count (0) */
	char **names;                 /* private: [nnames] the unit's own copies of file[] */
	size_t nnames;
	char **old_names;             /* private: [nold] those of its previous filling, still valid */
	size_t nold;
	struct pw_counted counted;    /* PW_COUNT: what its records come to */
	/*
	 * With a renderer of its own (pagework_set_renderer), what the reading
	 * thread would otherwise work out a record at a time, made by the
	 * worker in one pass after the walk:
	 * span_end[i], for a record step i whose line the worker rendered
	 * (not here, rc TB_RENDER_OK): the first step after i that is not
	 * such a record or whose time stamp is lower than the one before it -
	 * a span whose lines lie one after another in text, in time order;
	 * printed[0..nprinted): how many records of each event ID and printer
	 * the worker rendered (not here, rc >= 0), unless printed_ok is false
	 * (too many kinds in one unit: the reading thread counts them itself).
	 * spans_ok false: no spans (no memory for them).
	 */
	uint32_t *span_end;
	size_t span_cap;
	bool spans_ok;
	struct pw_printed *printed;
	size_t nprinted;
	bool printed_ok;
	struct pw_tally *tally;       /* private: the pass's table of kinds */
};

struct pagework;

/* What workers render of each record they may render (pagework_new's render). */
enum pw_render {
	PW_RENDER_NONE = 0,   /* decode only */
	PW_RENDER_LINES = 1,  /* the kernel's `trace` line (render_event) */
	PW_RENDER_BODIES = 2, /* the body alone (render_event_body): the caller frames it */
	PW_COUNT = 3,         /* no steps per record: each page walked as it is read, no copy (pagecount.c) */
};

/* One stream of pages: a CPU of a capture (NULL: a stream without pages). */
struct pw_source {
	struct tb_capture *capture;
	int cpu;
};

/*
 * How many workers a walk of data_bytes of raw data gets: TB_REPORT_THREADS
 * when set (0: none, at most 16); else none below PW_THREADED_FROM or on one
 * CPU (less is done faster alone than shared out, and a small file's report
 * should not pay for threads and their units), one per online CPU up to 4.
 */
#define PW_THREADED_FROM (4u << 20)
int pagework_threads(uint64_t data_bytes);

/*
 * 0 with *out set, -ENOMEM, or -EAGAIN when no thread could be started.
 * render (enum pw_render) PW_RENDER_NONE (or ready NULL): records are only
 * decoded, never rendered.
 * ready: a bitmap of 65536 event IDs the reading thread sets (release) and
 * workers read (acquire); it must outlive the handle.  Records are rendered
 * with s and opts, as the kernel's `trace` lines.
 */
int pagework_new(const struct pw_source *streams, int nstreams, struct tb_schema *s,
		 const struct tb_render_opts *opts, int threads, int render,
		 const _Atomic uint8_t *ready, struct pagework **out);

/*
 * The stream's next unit, its steps all written (waiting for a worker if
 * need be); NULL when the stream has no more pages.  The previous unit of
 * the stream is taken back and refilled.
 */
const struct pw_unit *pagework_next(struct pagework *w, int stream);

/*
 * A stream's steps one at a time, across its units: what a page walk of
 * one CPU meets, in order.  Zero it, set work and stream, then call
 * pw_cursor_next() until it returns NULL.  A record's payload lies at
 * unit->page[step->page] + step->off, valid until the next call.
 */
struct pw_cursor {
	struct pagework *work;
	int stream;
	const struct pw_unit *unit; /* the unit the last step came from */
	size_t step;
	bool done;
	bool oom; /* a unit could not be filled or walked whole */
};

const struct pw_step *pw_cursor_next(struct pw_cursor *c);

/*
 * The stream's next PW_RECORD step, after handing every page-level step
 * before it to page_step (with the unit it belongs to); NULL at the end.
 */
typedef void pw_page_step_fn(void *ctx, const struct pw_unit *u, const struct pw_step *st);
const struct pw_step *pw_cursor_next_record_slow(struct pw_cursor *c, pw_page_step_fn *page_step, void *ctx);

/* Inline for the common case, a record next in the same unit: once per record of every report. */
static inline const struct pw_step *pw_cursor_next_record(struct pw_cursor *c, pw_page_step_fn *page_step,
							  void *ctx)
{
	if (c->unit && c->step < c->unit->nsteps && c->unit->steps[c->step].kind == PW_RECORD)
		return &c->unit->steps[c->step++];
	return pw_cursor_next_record_slow(c, page_step, ctx);
}

/* The PW_RECORD step st the cursor just gave: its data, len and ts, and where its payload lies in which file. */
void pw_record_at(const struct pw_cursor *c, const struct pw_step *st, struct tb_record *rec,
		  const char **file, uint64_t *file_offset);

/*
 * A record's text as the caller wants it, written by a worker in place of
 * render_event_body() in PW_RENDER_BODIES mode: fn appends to out and
 * returns as render_event_body() does (what it appends for a result other
 * than TB_RENDER_OK is the caller's to ignore).  Several workers call fn
 * with the same ctx at once: it may only read what does not change while
 * the units are walked.  Set it before the first pagework_next(), which
 * hands it to the workers (under the lock that queues the first units).
 */
typedef int pw_render_fn(void *ctx, const struct tb_render_record *ev, struct tb_strbuf *out,
			 struct tb_problem *err, enum printer_kind *used);
void pagework_set_renderer(struct pagework *w, pw_render_fn *fn, void *ctx);

/* Stop the workers and free everything. */
void pagework_free(struct pagework *w);

#endif
