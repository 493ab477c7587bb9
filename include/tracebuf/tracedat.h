/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/tracedat.h - trace-cmd's trace.dat files, read and written.
 *
 * A trace.dat holds what a capture directory holds - header_page and
 * header_event, event format files, kallsyms, printk_formats,
 * saved_cmdlines, per-CPU stats, the trace clock - followed by the raw
 * sub-buffers of every CPU of one or more buffers (the top-level buffer
 * and tracefs instances).  Version 6 lays it out in one fixed order;
 * version 7 in sections located through options, optionally compressed
 * with zlib or zstd.  trace-cmd and KernelShark read both.
 *
 * Reading: tb_tracedat_open() parses and checks everything but the pages,
 * which stay in the file: tb_tracedat_capture() gives one buffer as a
 * struct tb_capture (capture.h) whose tb_capture_next_page() reads (and
 * decompresses) one sub-buffer at a time, so a file of any size is read in
 * memory bounded by one sub-buffer and one decompressor per CPU.
 * tb_capture_open() on a regular file does the same for the file's main
 * buffer.  Every problem names the file and the byte offset; a file built
 * to hurt the reader (sizes, counts or offsets out of range, a
 * decompression bomb) is refused, never allocated for or followed.
 *
 * Printing: tb_tcmd_print_tracedat() prints the file the way `trace-cmd
 * report` does (see docs/man/report.roff, tracebuf-report(1), for what is
 * and is not the same); tb_report_write() (report.h) on a capture prints the kernel's
 * `trace` text instead.
 *
 * Writing: a struct tb_tracedat_writer collects the metadata and then the
 * pages, CPU by CPU, and writes a version 6 or 7 file that trace-cmd
 * reads; tb_tracedat_write_capture() does all of it for a capture
 * directory.
 *
 * Ownership: tb_tracedat_open() returns a handle closed with
 * tb_tracedat_close(); it owns the schema, the strings and arrays its
 * queries return (valid until close), and the file descriptor.  A capture
 * from tb_tracedat_capture() borrows the handle and must be closed before
 * it.  The writer copies the metadata texts it is given (they may be freed
 * after the call) and writes pages straight from the caller's memory.
 */
#ifndef TRACEBUF_TRACEDAT_H
#define TRACEBUF_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* trace-cmd's option ids (also the ids of the v7 sections they locate). */
enum tb_tracedat_option_id {
	TB_TDAT_OPT_DONE = 0,
	TB_TDAT_OPT_DATE = 1,
	TB_TDAT_OPT_CPUSTAT = 2,
	TB_TDAT_OPT_BUFFER = 3,
	TB_TDAT_OPT_TRACECLOCK = 4,
	TB_TDAT_OPT_UNAME = 5,
	TB_TDAT_OPT_HOOK = 6,
	TB_TDAT_OPT_OFFSET = 7,
	TB_TDAT_OPT_CPUCOUNT = 8,
	TB_TDAT_OPT_VERSION = 9,
	TB_TDAT_OPT_PROCMAPS = 10,
	TB_TDAT_OPT_TRACEID = 11,
	TB_TDAT_OPT_TIME_SHIFT = 12,
	TB_TDAT_OPT_GUEST = 13,
	TB_TDAT_OPT_TSC2NSEC = 14,
	TB_TDAT_OPT_STRINGS = 15,
	TB_TDAT_OPT_HEADER_INFO = 16,
	TB_TDAT_OPT_FTRACE_EVENTS = 17,
	TB_TDAT_OPT_EVENT_FORMATS = 18,
	TB_TDAT_OPT_KALLSYMS = 19,
	TB_TDAT_OPT_PRINTK = 20,
	TB_TDAT_OPT_CMDLINES = 21,
	TB_TDAT_OPT_BUFFER_TEXT = 22,
	/*
	 * tracebuf's own: the capture's constants file (enum values, type
	 * sizes and kernel variables its print fmts need, tracebuf/schema.h
	 * tb_schema_load_constants).  tracebuf's own options (this and the
	 * two below) are written inside PROCMAPS options, whose payload
	 * libtracecmd skips silently when it does not end with a NUL: an id
	 * it does not know makes it warn "unknown option N" (KernelShark
	 * shows it).  The reader unwraps them, and still reads files that
	 * carry these ids directly (src/tracedat/tdat_internal.h).
	 */
	TB_TDAT_OPT_TB_CONSTANTS = 0x7462,
	/*
	 * tracebuf's own: where the file keeps the blobs its blob references
	 * name, u64 offset + u64 length of a blob store (tracebuf/blob.h)
	 * placed after everything trace-cmd reads (offset 0: none saved); then,
	 * in a file of captures joined, the name of the buffer whose store it
	 * is (a C string; without one, the store serves every buffer).
	 */
	TB_TDAT_OPT_TB_BLOBS = 0x7463,
	/* tracebuf's own: room left unused in an options section (zeros; skipped) */
	TB_TDAT_OPT_TB_PAD = 0x7464,
};

/* The name trace-cmd's dump gives an option id ("CPUSTAT"), or NULL. */
const char *tb_tracedat_option_name(unsigned id);

/* ------------------------------------------------------------- reading */

struct tb_tracedat;

struct tb_tracedat_opts {
	tb_problem_fn *diag; /* where problems go; NULL: tb_problem_print to stderr */
	void *diag_ctx;
	/*
	 * The kallsyms section is bounds-checked but its symbols are not
	 * parsed (nor, in a v6 file, its text read; nor, in a v7 file, a
	 * compressed section decompressed: its sizes are checked, and
	 * tb_tracedat_info's kallsyms_len stays 0): for readers that print no
	 * text (report --count), as parsing a kernel's symbols costs more than
	 * decoding millions of events.
	 */
	bool no_symbols;
	/*
	 * Event formats are indexed by ID at open and each is parsed when a
	 * record of its ID is first met (tb_schema_find_event), so opening a
	 * file with a kernel's thousands of formats costs no parsing; a
	 * malformed format is reported then, naming the file, the section and
	 * the event.  For readers that look events up by ID only (report):
	 * tb_schema_event() and enumerations see only the formats parsed so far.
	 */
	bool lazy_formats;
};

/*
 * Open and check path.  0 with *out set, or a negative errno: -ENOENT etc.
 * when it cannot be opened, -EINVAL when it is not a trace.dat tracebuf can
 * read (wrong magic, a version other than 6 and 7, big endian, a damaged
 * or hostile header; reported with the byte offset), -ENOMEM.
 */
int tb_tracedat_open(const char *path, const struct tb_tracedat_opts *opts, struct tb_tracedat **out);
void tb_tracedat_close(struct tb_tracedat *td);

/* What the file says about itself. */
struct tb_tracedat_info {
	const char *path;
	uint64_t file_size;
	int version;			 /* 6 or 7 */
	unsigned long_size;		 /* of the recording program, as stored */
	uint32_t page_size;		 /* sub-buffer size */
	const char *compression;	 /* "none", "zlib", "zstd" (v6: "none") */
	const char *compression_version; /* as stored, "" if none */
	int cpus;			 /* what `trace-cmd report` prints as cpus= */
	bool latency;			 /* the data is the kernel's latency text */
	/* Options; NULL / 0 when absent. */
	const char *trace_clock;		/* TRACECLOCK: the trace_clock file's text */
	const char *uname;			/* UNAME */
	const char *version_string;		/* VERSION: the writing tool's version */
	const char *cpustats;			/* every CPUSTAT text, joined as trace-cmd shows them */
	bool has_date;				/* DATE option present */
	int64_t ts_offset;			/* ns added to every time stamp: DATE (µs) + OFFSET */
	uint32_t tsc2nsec_mult, tsc2nsec_shift; /* TSC2NSEC: mult 0 = none */
	uint64_t tsc2nsec_offset;
	/* Metadata sizes, for dumps. */
	size_t header_page_len, header_event_len, kallsyms_len, printk_len, cmdlines_len;
	size_t nftrace_formats, nevent_formats, nsystems;
};
const struct tb_tracedat_info *tb_tracedat_info(const struct tb_tracedat *td);

/* One CPU's data in a buffer, as stored. */
struct tb_tracedat_cpu {
	int cpu;
	uint64_t offset; /* file offset of its first sub-buffer (v7 compressed: of the chunk count) */
	uint64_t size;	 /* bytes (v7 compressed: of the chunks, the 4-byte count excluded) */
};

struct tb_tracedat_buffer {
	const char *name;  /* "" for the top-level buffer */
	const char *clock; /* its trace clock ("local"), NULL when the file names none */
	uint32_t page_size;
	bool compressed;
	int ncpus; /* entries in cpus[] */
	const struct tb_tracedat_cpu *cpus;
	int slots;			 /* CPU numbers it takes in trace-cmd's merged order */
	uint64_t offset;		 /* of its flyrecord block (v6) or section (v7) */
	uint64_t text_offset, text_size; /* latency text, when the buffer is one */
};
int tb_tracedat_buffer_count(const struct tb_tracedat *td);
/* Buffer i in trace-cmd's order: the top-level buffer first (if the file has one). */
const struct tb_tracedat_buffer *tb_tracedat_buffer(const struct tb_tracedat *td, int i);
/* The buffer a plain capture view shows: the first that has data. */
int tb_tracedat_main_buffer(const struct tb_tracedat *td);
/* The index of the buffer called name ("" is the top-level one), or -ENOENT. */
int tb_tracedat_buffer_find(const struct tb_tracedat *td, const char *name);

/* One option as stored (in file order). */
struct tb_tracedat_option {
	uint16_t id;
	uint32_t size;
	uint64_t offset;     /* file offset of its payload (its section's, if compressed) */
	const uint8_t *data; /* the payload */
};
size_t tb_tracedat_option_count(const struct tb_tracedat *td);
const struct tb_tracedat_option *tb_tracedat_option(const struct tb_tracedat *td, size_t i);

/* One part of the file: a v6 block or a v7 section. */
struct tb_tracedat_part {
	const char *what; /* "header_page", "ftrace formats", "options", "buffer dat", ... */
	int section_id;	  /* v7 section id, -1 in v6 */
	unsigned flags;	  /* v7 section flags (bit 0: compressed) */
	uint64_t offset;  /* where it starts (v7: its 16-byte header) */
	uint64_t size;	  /* bytes in the file */
	uint64_t usize;	  /* bytes once decompressed (= size when stored plainly) */
};
size_t tb_tracedat_part_count(const struct tb_tracedat *td);
const struct tb_tracedat_part *tb_tracedat_part(const struct tb_tracedat *td, size_t i);

/* Event formats as stored: system, name, ID and where the text is. */
struct tb_tracedat_format {
	const char *system;
	const char *name; /* "" if the text has no name line */
	uint32_t id;	  /* 0 if the text has no ID line */
	uint64_t offset;  /* file offset of the text (its section's, if compressed) */
	size_t len;
};
size_t tb_tracedat_format_count(const struct tb_tracedat *td);
const struct tb_tracedat_format *tb_tracedat_format(const struct tb_tracedat *td, size_t i);

/* The schema built from the file (borrowed). */
struct tb_schema *tb_tracedat_schema(struct tb_tracedat *td);
/* The header_page / header_event text (borrowed; len may be NULL). */
const char *tb_tracedat_header_page(const struct tb_tracedat *td, size_t *len);
const char *tb_tracedat_header_event(const struct tb_tracedat *td, size_t *len);

/*
 * Buffer i as a capture (opts may be NULL; its diag is ignored: problems go
 * to the trace.dat's).  The capture borrows td: close it first.
 */
int tb_tracedat_capture(struct tb_tracedat *td, int buffer, const struct tb_capture_opts *opts,
			struct tb_capture **out);
/*
 * The buffers opts->buffer chooses as one capture, as tb_capture_open()
 * makes of a trace.dat (NULL: every buffer with data, merged; a name: that
 * one, -ENOENT reported when the file lacks it).  Borrows td as above.
 */
int tb_tracedat_capture_chosen(struct tb_tracedat *td, const struct tb_capture_opts *opts,
			       struct tb_capture **out);

/* Problems reported so far (warnings not counted). */
unsigned long tb_tracedat_problems(const struct tb_tracedat *td);

/* ------------------------------------------------ trace-cmd's report */

struct tb_tcmd_print_opts {
	bool nsec;	 /* -t: nanosecond time stamps */
	bool raw;	 /* -R: fields as name=value */
	bool latency;	 /* -l: the latency columns */
	bool no_plugins; /* -N: every event by its print fmt alone */
	/*
	 * The kernel's text of each event (tracebuf's printer: the kernel's own
	 * printers, the compiled print fmt, libtraceevent last) inside trace-cmd's
	 * framing, rendered by worker threads; false: libtraceevent's text, as
	 * trace-cmd prints it.  Ignored with raw (-R is libtraceevent's).
	 */
	bool kernel_text;
	const int *cpus; /* --cpu: only these merged CPU numbers (NULL: all) */
	size_t ncpus;
	struct tb_filter_set *filter; /* -F: only the records it keeps (NULL: all); borrowed */
};

/*
 * Print td as `trace-cmd report` does: cpus=N, then every record of every
 * buffer merged by time stamp, instance names in front, drop lines where
 * sub-buffers lost events.  0 if nothing was wrong, 1 if some input was
 * damaged (reported; the rest printed), negative errno if the output
 * failed.  totals may be NULL.
 */
int tb_tcmd_print_tracedat(struct tb_tracedat *td, FILE *out, const struct tb_tcmd_print_opts *opts,
		       struct tb_report_totals *totals);

/*
 * The same layout for a capture directory or live instance (one unnamed
 * buffer, `cpus=` its CPU count, µs or raw time stamps by trace-cmd's rule
 * for its clock).  Both functions leave the schema handing print fmts to
 * libtraceevent as they are (as trace-cmd does); its plugins are loaded for
 * the call only.
 */
int tb_tcmd_print_capture(struct tb_capture *c, FILE *out, const struct tb_tcmd_print_opts *opts,
				   struct tb_report_totals *totals);

/* `trace-cmd report --stat`: cpus=, the stored per-CPU stats, the top buffer's data. */
int tb_tracedat_print_stat(struct tb_tracedat *td, FILE *out);

/*
 * The per-CPU stats stored in the file (CPUSTAT options), parsed: buffer
 * is the instance name they were recorded under ("" for the top buffer).
 * With a TSC2NSEC option the time stamps (oldest, now) are converted to
 * nanoseconds, the clock report and the analyses show the records in.
 * 0, or -ENOENT when the file has none for that CPU.
 */
int tb_tracedat_cpu_stats(const struct tb_tracedat *td, const char *buffer, int cpu,
			  struct tb_cpu_stats *out);

/* ---------------------------------------------------------------- dump */

struct tb_tracedat_dump_opts {
	bool no_pages;	    /* the file's parts only */
	bool records;	    /* every record of every page, not one line per page */
	const char *buffer; /* only this buffer's pages (NULL: all) */
	int cpu;	    /* only this CPU's pages (-1: all) */
};

/*
 * The file's layout, annotated: its initial part, every block or section
 * with offset, size and (compressed) decompressed size, the options, the
 * buffers and their CPUs, the formats, then page by page: where each lies,
 * its time stamp, commit, loss flags and records (with -records one line
 * per record: offset, kind, delta, time, event).  0, 1 if damage was met
 * (reported; the dump goes on), negative errno if writing failed.
 */
int tb_tracedat_dump(struct tb_tracedat *td, FILE *out, const struct tb_tracedat_dump_opts *opts);

/* ------------------------------------------------------------- writing */

struct tb_tracedat_writer;

struct tb_tracedat_write_opts {
	int version;		 /* 6 (default when 0) or 7 */
	const char *compression; /* v7: "none" (default), "zlib" or "zstd" */
	uint32_t page_size;	 /* sub-buffer size; 0: from the header_page text */
	int cpus;		 /* CPUs of the traced machine (cpus=) */
	const char *clock;	 /* the buffer's trace clock name ("local"); NULL: none stored */
	const char *trace_clock; /* the whole trace_clock text for the TRACECLOCK option; NULL: "[clock]" */
	const char *uname;	 /* UNAME option, NULL: none */
	/*
	 * A TSC2NSEC option (mult 0: none): the time stamps are CPU cycle
	 * counts (x86-tsc) and a reader makes nanoseconds of them as
	 * (ts * mult) >> shift, so trace-cmd prints seconds, not raw counts.
	 */
	uint32_t tsc2nsec_mult, tsc2nsec_shift;
	/*
	 * v6 only: the instance names (NULL-terminated list) the file will hold
	 * besides the top buffer; version 6 announces them before any data.
	 */
	const char *const *instances;
	tb_problem_fn *diag;
	void *diag_ctx;
	/*
	 * Told the sub-buffer bytes taken so far, after each run of them is
	 * written (NULL: not told), for a progress line; called on the
	 * writing thread.
	 */
	void (*progress)(void *ctx, uint64_t bytes);
	void *progress_ctx;
};

/*
 * Create path (truncated).  0 or a negative errno.  First the metadata, in
 * any order: header texts (required), formats, kallsyms, printk formats,
 * cmdlines, CPU stats (each optional; copied and written when the first
 * buffer begins).  Then per buffer begin_buffer (v6: the top buffer, if
 * any, first; the instances as announced), and per CPU begin_cpu,
 * write_pages..., end_cpu.  Finally tb_tracedat_writer_close().  After an
 * error every call returns it (it was reported through opts->diag).
 */
int tb_tracedat_writer_open(const char *path, const struct tb_tracedat_write_opts *opts,
			    struct tb_tracedat_writer **out);
int tb_tracedat_write_headers(struct tb_tracedat_writer *w, const char *header_page, size_t hp_len,
			      const char *header_event, size_t he_len);
/* A format file; system "ftrace" ones go where trace-cmd keeps ftrace's own. */
int tb_tracedat_write_format(struct tb_tracedat_writer *w, const char *system, const char *text, size_t len);
int tb_tracedat_write_kallsyms(struct tb_tracedat_writer *w, const char *text, size_t len);
int tb_tracedat_write_printk(struct tb_tracedat_writer *w, const char *text, size_t len);
int tb_tracedat_write_cmdlines(struct tb_tracedat_writer *w, const char *text, size_t len);
/* A capture's constants file, kept in tracebuf's own option (TB_TDAT_OPT_TB_CONSTANTS). */
int tb_tracedat_write_constants(struct tb_tracedat_writer *w, const char *text, size_t len);
/*
 * A blob store file (tracebuf/blob.h; a capture's blobs.bin) whose entries
 * the file keeps for the blob references in its pages: announced with the
 * metadata (before the first buffer), copied from path at close, in
 * bounded memory, to the end of the file, which TB_TDAT_OPT_TB_BLOBS
 * points to.  The file may still grow until then.  It serves every buffer:
 * a second call is ignored (returns 0).  0 or -errno.
 */
int tb_tracedat_write_blobs(struct tb_tracedat_writer *w, const char *path);
/*
 * The same for the blobs of one buffer (name; "" the top buffer): captures
 * joined into one file keep every capture's store, each read for its own
 * buffer's references (two rings number their blobs alike).  A second
 * store for one buffer, or any after tb_tracedat_write_blobs(), is ignored.
 */
int tb_tracedat_write_buffer_blobs(struct tb_tracedat_writer *w, const char *buffer, const char *path);
/* A CPU's stats text (the kernel's stats file) under buffer name ("" top). */
int tb_tracedat_write_cpustat(struct tb_tracedat_writer *w, const char *buffer, int cpu, const char *text,
			      size_t len);
/* A buffer: its name ("" for the top buffer) and clock name (NULL: opts->clock). */
int tb_tracedat_write_begin_buffer(struct tb_tracedat_writer *w, const char *name, const char *clock);
int tb_tracedat_write_begin_cpu(struct tb_tracedat_writer *w, int cpu);
/* Whole sub-buffers, as they are (n bytes, a multiple of the page size). */
int tb_tracedat_write_pages(struct tb_tracedat_writer *w, const void *pages, size_t n);
int tb_tracedat_write_end_cpu(struct tb_tracedat_writer *w);
/* Finish the file; 0 or a negative errno (the first error of any call). Frees w. */
int tb_tracedat_writer_close(struct tb_tracedat_writer *w);
/* Bytes written so far. */
uint64_t tb_tracedat_writer_bytes(const struct tb_tracedat_writer *w);

/*
 * A capture directory (header_page, formats/, cpuN.raw, ...) as a
 * trace.dat: prefix as tb_capture_opts.prefix (NULL: ""), opts as above
 * (its page size, CPUs, clock and uname are filled from the directory when
 * 0 / NULL).
 */
int tb_tracedat_write_capture(const char *dir, const char *prefix, const char *path,
			      const struct tb_tracedat_write_opts *opts);

/*
 * Several capture directories in one file, each a buffer: a program's
 * ring beside the kernel's instance (`tracebuf record --kernel`).  The
 * first may be the top buffer (name ""), the others are instances named
 * name.  Header texts, clock and CPU count come from the first; formats
 * are joined (one text per event; two events with one ID are an error,
 * -EINVAL, as a reader could not tell their records apart), kallsyms,
 * printk formats, cmdlines and constants are joined, stats are kept per
 * buffer.  The pieces, for a writer opened by the caller:
 * tb_tracedat_write_capture_meta() for each capture before any buffer
 * begins, then tb_tracedat_write_capture_pages() for each (its clock: the
 * buffer's trace clock name, NULL: the writer's).  opts of _pages: where a
 * partial sub-buffer is said (NULL: stderr).
 */
struct tb_tracedat_input {
	const char *dir;
	const char *prefix; /* as tb_capture_opts.prefix (NULL: "") */
	const char *name;   /* "" or NULL: the top buffer */
};
int tb_tracedat_write_captures(const struct tb_tracedat_input *in, size_t n, const char *path,
			       const struct tb_tracedat_write_opts *opts);
int tb_tracedat_write_capture_meta(struct tb_tracedat_writer *w, const char *dir, const char *prefix,
				   const char *buffer);
int tb_tracedat_write_capture_pages(struct tb_tracedat_writer *w, const char *dir, const char *prefix,
				    const char *buffer, const char *clock,
				    const struct tb_tracedat_write_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
