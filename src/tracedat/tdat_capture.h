/* SPDX-License-Identifier: MIT */
/*
 * tdat_capture.h - a trace.dat opened as a capture (tdat_capture.c): the
 * input stage's trace.dat kind (src/input/kind_tracedat.c) calls it.
 */
#ifndef TRACEBUF_TDAT_CAPTURE_H
#define TRACEBUF_TDAT_CAPTURE_H

#include "tracebuf/capture.h"

/*
 * The file's main buffer (tb_tracedat_main_buffer) as a capture: 0 with
 * *out set (closed with tb_capture_close(), which closes the file too), or
 * a negative errno, reported through opts' diag: the reader's errors,
 * -ENOENT for a file without a buffer, -EINVAL for latency text.
 */
int tracedat_capture_open(const char *path, const struct tb_capture_opts *opts, struct tb_capture **out);

#endif
