/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/capture.h - raw sub-buffers per CPU, with what is needed to
 * read them, from one of two sources:
 *
 *  - a capture directory: header_page, optional header_event,
 *    formats/SYSTEM/EVENT.format, cpuN.raw (sub-buffers as read from
 *    per_cpu/cpuN/trace_pipe_raw, back to back), and optionally cpuN.stats,
 *    saved_cmdlines, kallsyms, printk_formats, constants (kernel constants,
 *    see tb_schema_load_constants), meta.txt (ncpus, trace_clock),
 *    trace_clock and current_tracer;  the clock is required (meta.txt or
 *    trace_clock), since the time stamps mean nothing without it;
 *    `tracebuf capture` makes such directories;
 *  - a live tracefs instance (or the tracefs root): formats from its
 *    events/ directory (or the top-level one), comms and printk formats
 *    from the top level, symbols from /proc/kallsyms, kernel constants
 *    from /sys/kernel/btf/vmlinux (when first needed), per_cpu/cpuN/stats
 *    read at open, and per_cpu/cpuN/trace_pipe_raw read with O_NONBLOCK,
 *    one whole sub-buffer per read() until EAGAIN.  Reading CONSUMES the
 *    instance's buffer.
 *
 * The sub-buffer size comes from header_page (data offset + data size).
 *
 * A capture directory's format files are all read at open (parsed then,
 * or with lazy_formats when a record of their event is met, and checked at
 * the end of a report), but a problem in one of them counts only when a
 * record of its event is printed: the
 * report calls tb_capture_event_seen() for each event it meets, which tells
 * (and counts) the problems held for that event, and at its end
 * tb_capture_warn_unused(), which tells the rest as warnings.
 *
 * Inputs are distrusted: only regular files are read (a FIFO, a device or
 * a directory in a file's place is refused and reported, never waited on);
 * a raw file whose pages are plainly of another size than header_page's is
 * refused, both sizes named; cpuN.raw with N above 4095 is reported and
 * ignored; and a capture whose CPUs would need more than 256 MiB of page
 * buffers (one sub-buffer per CPU is held while reporting) is refused.
 *
 * Ownership: tb_capture_open() returns a handle the caller closes with
 * tb_capture_close(); it owns its schema, its open files and the page
 * buffers that tb_capture_next_page() lends out.
 *
 * Misuse: a NULL capture or output is -EINVAL (queries: 0, false, NULL or
 * "nop"; void calls: nothing).
 */
#ifndef TRACEBUF_CAPTURE_H
#define TRACEBUF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/schema.h"
#include "tracebuf/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_capture;

struct tb_capture_opts {
	/* Raw and stats files are PREFIX "cpuN.raw" / PREFIX "cpuN.stats" (capture dirs). */
	const char *prefix;
	tb_problem_fn *diag; /* where problems go; NULL: tb_problem_print to stderr */
	void *diag_ctx;
	/* The trace clock's name, for a capture that does not say (or says wrongly); NULL: its own. */
	const char *clock;
	/*
	 * Capture directories and trace.dat files: formats are indexed by ID
	 * at open and parsed when a record of the ID is first met, as live
	 * instances always are (tb_tracedat_opts.lazy_formats says more).
	 */
	bool lazy_formats;
	/*
	 * Capture directories: kallsyms is not read (readers that print no
	 * text, report --count); nor, with lazy_formats, the format files'
	 * texts beyond their IDs (they are read again when a record needs one).
	 */
	bool no_symbols;
	/*
	 * A trace.dat: the one buffer to read, by name ("" the top buffer).
	 * NULL: every buffer that holds data, one capture whose CPU slots are
	 * the buffers' CPUs one buffer after the other (trace-cmd's merged
	 * order: the top buffer, then each instance), so every reader merges
	 * them by time; tb_capture_slot_cpu() and tb_capture_slot_buffer() say
	 * which CPU of which buffer a slot is.  Other inputs have one buffer,
	 * "": any other name is -ENOENT (reported, naming the buffers there are).
	 */
	const char *buffer;
};

/*
 * Open dir, an input of any kind tracebuf/input.h names that is read as a
 * capture: a capture directory, a live instance, or a trace.dat (every buffer
 * with data, merged, or opts->buffer); opts may be NULL.  The kind is told by the path's type and
 * first bytes, as tb_input_identify() tells it.
 * 0 with *out set, or negative errno: -ENOENT when dir has no header_page
 * / per_cpu, -EINVAL when header_page is unusable or the trace clock is
 * missing or not one whose unit tracebuf knows (reported) or dir or out is
 * NULL, or dir is none of the kinds (reported, naming the kinds tried),
 * -EOPNOTSUPP for a shm session (reported with what reads it), -E2BIG when
 * the CPUs' page buffers would exceed the limit (reported), -ENOMEM; a
 * trace.dat's reader's errors (tracebuf/tracedat.h).
 * Problems in optional files are reported and do not fail the open.
 */
int tb_capture_open(const char *dir, const struct tb_capture_opts *opts, struct tb_capture **out);
void tb_capture_close(struct tb_capture *c);

bool tb_capture_is_live(const struct tb_capture *c);
/* Bytes of raw pages a capture directory holds (0 for a live instance: not known ahead). */
uint64_t tb_capture_data_bytes(const struct tb_capture *c);
/* CPU slots: the highest CPU number with data (raw file or per_cpu dir) + 1. */
int tb_capture_cpu_slots(const struct tb_capture *c);
/* Whether CPU cpu has a page source. */
bool tb_capture_has_cpu(const struct tb_capture *c, int cpu);
/*
 * The CPU a slot's pages were recorded on (the slot itself but in a
 * capture of several buffers, tb_capture_opts.buffer), or -EINVAL.
 */
int tb_capture_slot_cpu(const struct tb_capture *c, int slot);
/* The name of the buffer a slot belongs to: "" for the top (or only) buffer; NULL on misuse. */
const char *tb_capture_slot_buffer(const struct tb_capture *c, int slot);
/* Whether some slot is of a named buffer (an instance of a trace.dat), so views may say which. */
bool tb_capture_has_buffers(const struct tb_capture *c);
/* The #P of the trace header: online CPUs (meta.txt ncpus, or CPU slots). */
int tb_capture_online_cpus(const struct tb_capture *c);
size_t tb_capture_subbuf_size(const struct tb_capture *c);
/* The instance's tracer ("nop" unless current_tracer says otherwise). */
const char *tb_capture_tracer(const struct tb_capture *c);
/*
 * The `trace_options` words that change the `trace` text and that
 * tb_render_event() (tracebuf/report.h) honours.  Each bit is a departure from the kernel's
 * default, so a zeroed tb_render_opts prints the default layout.
 */
enum {
	TB_TOPT_NO_IRQ_INFO = 1u << 0,     /* noirq-info: no irqs-off/need-resched/... columns */
	TB_TOPT_NO_CONTEXT_INFO = 1u << 1, /* nocontext-info: no comm-pid, CPU, flags, time */
	TB_TOPT_RECORD_TGID = 1u << 2,     /* record-tgid: the "(  TGID)" column */
	TB_TOPT_RAW = 1u << 3,             /* raw: "pid cpu ts " and the event's raw text */
	TB_TOPT_HEX = 1u << 4,             /* hex: pid, cpu, ts in hex and the event's hex text */
	TB_TOPT_BIN = 1u << 5,             /* bin: binary records; tracebuf refuses to print it */
	TB_TOPT_LATENCY_FORMAT = 1u << 6,  /* latency-format: its header and columns (delay marks: tb_report_write) */
	TB_TOPT_FIELDS = 1u << 7,          /* fields: every field as NAME=VALUE, the print fmt left aside */
	TB_TOPT_VERBOSE = 1u << 8,         /* verbose: no column legend; with latency-format its verbose columns */
	TB_TOPT_SYM_OFFSET = 1u << 9,      /* sym-offset: ftrace's addresses as "sym+0xoff/0xsize" */
	TB_TOPT_SYM_ADDR = 1u << 10,       /* sym-addr: ftrace's addresses followed by " <%016lx>" */
	TB_TOPT_NO_PRINT_PARENT = 1u << 11, /* noprint-parent: function lines without " <-parent" */
	TB_TOPT_NO_ANNOTATE = 1u << 12,    /* noannotate: no "##### CPU N buffer started ####" (tb_report_write) */
	TB_TOPT_PRINTK_MSG_ONLY = 1u << 13, /* printk-msg-only: print/bprint/bputs records as their text alone */
	TB_TOPT_NO_TRACE_PRINTK = 1u << 14, /* notrace_printk: printk-msg-only does not apply */
	TB_TOPT_SYM_USEROBJ = 1u << 15,    /* sym-userobj: user stack addresses as "FILE[+0xoff]" of their mapping */
};

/* The TB_TOPT_* bits tracebuf knows but does not print as the kernel does. */
#define TB_TOPT_UNSUPPORTED TB_TOPT_BIN

/*
 * Apply trace_options words to *bits as writing them to `trace_options`
 * would: "irq-info" sets that option, "noirq-info" clears it; words are
 * separated by blanks, commas or newlines (a trace_options file, or
 * report --options).  Words of options that do not change the text
 * ("overwrite", "markers", ...) and options this kernel or tracebuf does
 * not know are skipped when strict is false; when strict is true the
 * first word that is not one of the TB_TOPT_* options is an error:
 * -EINVAL with *bad and *bad_len set to it.  Returns 0.
 */
int tb_topt_apply(const char *words, bool strict, unsigned *bits, const char **bad, size_t *bad_len);

/* The trace_options word of one TB_TOPT_* bit ("irq-info", ...), NULL if none. */
const char *tb_topt_name(unsigned bit);

/* The instance's saved trace_options as TB_TOPT_* bits; 0: the defaults. */
unsigned tb_capture_trace_options(const struct tb_capture *c);
/* The traced kernel's release (meta.txt's kernel line; a live instance: this machine's); "" if unknown. */
const char *tb_capture_kernel_version(const struct tb_capture *c);
/* The trace clock's name ("local", "x86-tsc", ...). */
const char *tb_capture_clock(const struct tb_capture *c);
/*
 * Whether it counts nanoseconds: local, global, perf, mono, mono_raw, boot
 * and tai do; counter, uptime, x86-tsc and ppc-tb count, and print raw.
 */
bool tb_capture_clock_is_ns(const struct tb_capture *c);
/*
 * A trace.dat's TSC2NSEC option: its time stamps count CPU cycles and
 * nanoseconds are (ts * mult) >> shift.  True with *mult and *shift set
 * when the capture has one, false for every other capture.
 */
bool tb_capture_tsc2nsec(const struct tb_capture *c, uint32_t *mult, uint32_t *shift);
/*
 * A time stamp of the capture as the analyses measure time: converted by
 * the TSC2NSEC above when there is one, else ts unchanged (nanoseconds for
 * the clocks tb_capture_clock_is_ns() says count them, raw counts else).
 */
uint64_t tb_capture_ts_ns(const struct tb_capture *c, uint64_t ts);
/* The schema (borrowed; owned by the capture). */
struct tb_schema *tb_capture_schema(struct tb_capture *c);

/*
 * per_cpu/cpuN/stats, as read before any page was consumed: the kernel's
 * entries, overrun, commit_overrun, dropped and read fields of struct
 * tb_cpu_stats (stats.h); the others are 0.  0, or -ENOENT when there is
 * no (usable) stats file for cpu.
 */
int tb_capture_cpu_stats(const struct tb_capture *c, int cpu, struct tb_cpu_stats *out);

/* One sub-buffer, lent until the next tb_capture_next_page() for that CPU. */
struct tb_capture_page {
	const uint8_t *data;
	size_t size;          /* the sub-buffer size */
	const char *file;     /* where it was read from */
	uint64_t file_offset; /* byte offset of the page in that file or stream */
};

/*
 * The CPU's next sub-buffer: 1 with *page filled, 0 when there are no more
 * (a live buffer is empty, EAGAIN), negative errno on a read error (then
 * reported; the CPU is finished; -EINVAL for a file refused as above, said
 * again at the start of every pass).  A trailing partial sub-buffer in a raw
 * file is reported and skipped.  Different CPUs may be read by different
 * threads at once (each CPU by one thread at a time): a CPU's reading state
 * is its own.
 */
int tb_capture_next_page(struct tb_capture *c, int cpu, struct tb_capture_page *page);
/* Start every CPU again from its first page (capture dirs only: -ESPIPE live). */
int tb_capture_rewind(struct tb_capture *c);
/*
 * A live instance: every CPU whose buffer ran dry is read on from where it
 * stopped, so the next pass gets the events written since (a CPU that
 * failed stays finished).  -ESPIPE for a capture directory or a trace.dat.
 */
int tb_capture_resume(struct tb_capture *c);

/* Report a problem through the capture's diag callback (and count it). */
void tb_capture_problem(struct tb_capture *c, const char *file, uint64_t offset,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Mute (true) or restore the diag callback, e.g. for a counting pass. */
void tb_capture_quiet(struct tb_capture *c, bool quiet);
/* Problems reported so far (schema loading included; warnings are not counted). */
unsigned long tb_capture_problems(const struct tb_capture *c);
/*
 * A record of event id is about to be printed: report (and count) the
 * problems held back for its format file - and, if id has no format, those
 * of the files whose ID could not be read.  Cheap; call it once per ID.
 */
void tb_capture_event_seen(struct tb_capture *c, uint32_t id);
/*
 * Tell the problems no printed event needed, as warnings (not counted).
 * With lazy_formats, the format files no record needed are checked here
 * (on two threads, from the texts read at open), nothing of them kept.
 */
void tb_capture_warn_unused(struct tb_capture *c);

#ifdef __cplusplus
}
#endif
#endif
