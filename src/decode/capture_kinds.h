/* SPDX-License-Identifier: MIT */
/*
 * capture_kinds.h - the two inputs whose pages are files the capture reads
 * itself: a capture directory and a live tracefs instance.
 *
 * The input stage (src/input) decides which one a path is and calls the
 * opener; these do not look at the path's kind again.  Both return 0 with
 * *out set (the caller closes it with tb_capture_close()) or a negative
 * errno with *out NULL and the problem reported through opts' diag, as
 * tb_capture_open() documents.
 */
#ifndef TRACEBUF_CAPTURE_KINDS_H
#define TRACEBUF_CAPTURE_KINDS_H

#include <sys/types.h>

#include "tracebuf/capture.h"

/* A directory of copied tracefs files: header_page, formats/, PREFIXcpuN.raw and .stats, meta.txt. */
int capture_open_dir(const char *dir, const struct tb_capture_opts *opts, struct tb_capture **out);
/* A tracefs root or instance: per_cpu/cpuN/trace_pipe_raw, consumed as it is read. */
int capture_open_live(const char *dir, const struct tb_capture_opts *opts, struct tb_capture **out);

/* What a file that is not a regular file is, for messages: "a directory", "a FIFO", ... */
const char *capture_file_kind(mode_t mode);

#endif
