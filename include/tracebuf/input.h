/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/input.h - what kind of input a path is.
 *
 * tb_capture_open() reads every kind it can open as a capture; a program
 * that does something different per kind (a trace.dat's buffers, a live
 * instance's refresh) asks here first, so that the choice is made once,
 * by the same sniffing tb_capture_open() uses, and not again by each
 * caller from stat().
 *
 * Ownership: nothing is allocated; the names are static strings.
 */
#ifndef TRACEBUF_INPUT_H
#define TRACEBUF_INPUT_H

#include "tracebuf/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tb_input_kind {
	TB_INPUT_UNKNOWN = 0,
	TB_INPUT_CAPTURE_DIR,   /* a capture directory (header_page, formats, cpuN.raw ...) */
	TB_INPUT_LIVE_INSTANCE, /* a tracefs root or instance (per_cpu/cpuN/trace_pipe_raw) */
	TB_INPUT_TRACEDAT,      /* a trace.dat, version 6 or 7 (what `tracebuf record` writes) */
	TB_INPUT_SHM_SESSION,   /* a shared-memory session's region (tracebuf/shm.h) */
};

/*
 * The kind of input path is, from its type and first bytes (not its
 * name: a trace.dat without its extension is still one).  0 with *kind
 * set, or a negative errno with *kind TB_INPUT_UNKNOWN: -ENOENT (or the
 * stat error) when path cannot be looked at, -EINVAL when it is none of
 * the kinds or path or kind is NULL.  The problem, naming the file and
 * the kinds tried, goes to diag (NULL: tb_problem_print to stderr) unless
 * quiet.
 */
int tb_input_identify(const char *path, tb_problem_fn *diag, void *diag_ctx, bool quiet,
		      enum tb_input_kind *kind);

/* "capture directory", "trace.dat", ...: the kind as messages name it ("unknown input" for none). */
const char *tb_input_kind_name(enum tb_input_kind kind);

#ifdef __cplusplus
}
#endif

#endif
