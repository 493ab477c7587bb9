/* SPDX-License-Identifier: MIT */
/*
 * The progress line of work the library does in one call (report, hist,
 * offcpu of a big file): a thread samples the bytes this process has read
 * (/proc/self/io's rchar: the inputs are read with read/pread, never
 * mapped) against the input's size, or the bytes written (wchar) when the
 * input is memory (a session's ring), and draws the line of
 * util/progress.h ten times a second until the work is done.  Nothing is
 * started unless the line is wanted (cli_show_progress).
 */
#ifndef TRACEBUF_TOOLS_CLI_PROGRESS_H
#define TRACEBUF_TOOLS_CLI_PROGRESS_H

#include "cli_opts.h"

struct cli_progress;

/* When on (cli_show_progress), the sampler for reading input (a file, or a directory's files: their sizes are the total); NULL: none. */
struct cli_progress *cli_progress_start(const struct cli_command *cmd, bool on, const char *input);

/* When on, the sampler for writing output (a session's window: its size is not known before). */
struct cli_progress *cli_progress_start_writing(const struct cli_command *cmd, bool on, const char *output);

/* The sampler stopped and its line taken away; p may be NULL. */
void cli_progress_stop(struct cli_progress *p);

#endif
