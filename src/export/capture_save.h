/* SPDX-License-Identifier: MIT */
/*
 * capture_save.h - save a tracefs instance as a capture directory: every
 * file `tracebuf report` reads, in the layout of docs/man/tracebuf.roff, tracebuf(1) (CAPTURE
 * DIRECTORY) and tests/data/kernel/README.md.
 *
 * The instance's tracing should be off: the text files, the stats and the
 * raw pages must describe the same events.  Saving CONSUMES the instance's
 * buffer (the raw pages are read through trace_pipe_raw), so everything
 * that does not consume is saved first.  Messages go to stderr.
 *
 * Part of the reading library (export stage) since it left tools/: the CLI
 * (`tracebuf capture`, `record --kernel`) keeps only argument handling and
 * the instance's lifecycle.
 */
#ifndef TRACEBUF_EXPORT_CAPTURE_SAVE_H
#define TRACEBUF_EXPORT_CAPTURE_SAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum kallsyms_mode {
	KALLSYMS_ALL,  /* a copy of /proc/kallsyms */
	KALLSYMS_USED, /* only the symbols the raw pages refer to, with their neighbours */
	KALLSYMS_NONE,
};

struct save_request {
	const char *inst; /* the instance directory */
	const char *root; /* the tracefs mount (saved_cmdlines, printk_formats) */
	const char *out;  /* the capture directory: created, or empty */
	bool with_trace;  /* also trace.txt, the kernel's own text */
	enum kallsyms_mode kallsyms;
	/*
	 * out already holds cpuN.raw files of pages drained while tracing ran
	 * (kernel_session.c): they are kept, the rest is appended, and out
	 * may hold nothing else.
	 */
	bool raw_started;
	/* For meta.txt only: */
	const char *events;		  /* the -e spec; NULL: an instance someone else set up */
	char *const *command;		  /* CMD and its arguments; NULL: none */
	const char *command_result;	  /* "exit status 0", "killed by signal 2", ... */
	bool interrupted;		  /* a signal stopped the capture */
	struct timespec started, stopped; /* tracing on and off (CLOCK_REALTIME); 0: unknown */
};

struct save_result {
	int cpus;			    /* CPUs whose pages were read */
	uint64_t subbufs, bytes;	    /* sub-buffers saved, and their bytes */
	uint64_t entries, overrun, dropped; /* summed over the stats read before the pages */
	unsigned formats;		    /* format files saved */
	const char *kallsyms_note;	    /* what was done about kallsyms (static text) */
};

/* 0 when the capture was saved, -errno otherwise (said on stderr). */
int capture_save(const struct save_request *rq, struct save_result *res);

/*
 * Read one whole sub-buffer from a trace_pipe_raw opened O_NONBLOCK: 1, 0
 * when the buffer is empty, -EIO when it came back cut short, or -errno.
 */
int capture_read_subbuf(int fd, uint8_t *page, size_t size);

/* "tracebuf capture: " and the message, a line on stderr; returns rc (for `return capture_say(...)`). */
int capture_say(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
