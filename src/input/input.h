/* SPDX-License-Identifier: MIT */
/*
 * input.h - the input kinds: one interface, one table (input.c).
 *
 * The input stage sits above everything that reads (decode, tracedat) and
 * below the consumers and the CLI.  It owns one decision: which reader a
 * path goes to.  Each kind is one file, kind_*.c, defining one const
 * struct input_kind; input.c lists them in input_kinds[], and
 * tb_capture_open() and tb_input_identify() go through that table alone.
 *
 * A new kind (a CTF trace, a SQL database) is one new kind_NAME.c with
 * its sniff and open, one enum tb_input_kind value (tracebuf/input.h) and
 * one row in input_kinds[].  Nothing else chooses by stat() or suffix.
 *
 * Sniffing: every kind looks at the same probe (the path, its stat, its
 * first bytes when it is a regular file) and answers how sure it is.  It
 * must not open anything else but small directory entries (a capture
 * directory's header_page, an instance's per_cpu), must not report, and
 * must be cheap: all kinds sniff every input.  The surest kind wins; on a
 * tie, the earlier row.
 *
 * Opening: open(path, opts, &capture) makes the struct tb_capture that
 * everything reading captures takes (a kind whose pages come from
 * elsewhere builds it over a struct capture_source, capture_source.h, as
 * the trace.dat kind does).  It returns 0 with *out set, or a negative
 * errno with *out NULL, the problem reported through opts' diag.  The
 * caller owns the capture and closes it with tb_capture_close(), which
 * frees what the kind allocated.  A kind with open NULL is recognised but
 * not read as a capture; says_instead tells the user what reads it.
 *
 * Ownership: the table and the kinds are static and never freed; a probe
 * lives on the caller's stack for one sniff round.
 */
#ifndef TRACEBUF_INPUT_INPUT_H
#define TRACEBUF_INPUT_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tracebuf/capture.h"
#include "tracebuf/input.h"

/* Bytes of a regular file's start the kinds sniff (the longest magic they look for). */
#define INPUT_HEAD_BYTES 16

struct input_probe {
	const char *path;
	int missing;    /* ENOENT or ENOTDIR when nothing is at path (st is then zeros), else 0 */
	struct stat st;
	uint8_t head[INPUT_HEAD_BYTES]; /* a regular file's first bytes; head_len of them valid */
	size_t head_len;
};

enum input_confidence {
	INPUT_NO = 0,    /* not this kind */
	INPUT_MAYBE = 1, /* could be: the kind's own reader says best what is wrong with it */
	INPUT_YES = 2,   /* its magic or its layout says so */
};

struct input_kind {
	enum tb_input_kind id;
	const char *name; /* as messages name it: "capture directory" */
	enum input_confidence (*sniff)(const struct input_probe *p);
	int (*open)(const char *path, const struct tb_capture_opts *opts, struct tb_capture **out);
	const char *says_instead; /* open NULL: what reads this kind, for the refusal */
};

extern const struct input_kind input_capture_dir;
extern const struct input_kind input_live_instance;
extern const struct input_kind input_tracedat;
extern const struct input_kind input_shm_session;

#endif
