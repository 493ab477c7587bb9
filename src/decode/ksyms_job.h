/* SPDX-License-Identifier: MIT */
/*
 * ksyms_job.h - a kallsyms text read and parsed on a thread of its own, so
 * that a trace.dat's other metadata is read meanwhile (reading, maybe
 * decompressing, and parsing a kernel's 5 MB table is the longest step of
 * opening one).
 *
 * The job has two steps on its thread: fill (the caller's function, which
 * gets the text into a buffer from tb_ksyms_text_buffer()) and parse.  The
 * thread tells nobody anything: fill keeps its own problems (its caller
 * tells them after ksyms_job_filled()), and the parser's are kept, in
 * order, and told by ksyms_job_finish() on the caller's thread, which
 * joins the thread first.  Until then the job's table is the job's:
 * nothing may look symbols up in it.
 *
 * Ownership: ctx is the caller's and must live until ksyms_job_filled()
 * or ksyms_job_finish() has returned; ksyms_job_finish() frees the job and
 * hands over the table (the caller frees it with tb_ksyms_free()).
 */
#ifndef TRACEBUF_KSYMS_JOB_H
#define TRACEBUF_KSYMS_JOB_H

#include <stddef.h>

#include "ksyms.h"

struct ksyms_job;

/*
 * Fill *buf (from tb_ksyms_text_buffer(), then the job's) with *len bytes
 * of kallsyms text at *buf + *skip; 0, or a negative errno (nothing is
 * parsed then).  Runs on the job's thread.
 */
typedef int ksyms_fill_fn(void *ctx, char **buf, size_t *skip, size_t *len);

/*
 * Start filling and parsing (the parse's problems to be named after file).
 * Where no thread can be had it is all done now.  0, or -ENOMEM.
 */
int ksyms_job_start(const char *file, ksyms_fill_fn *fill, void *ctx, struct ksyms_job **out);

/* Wait for the fill step; what it returned, and the text's length (0 if it failed). */
int ksyms_job_filled(struct ksyms_job *j, size_t *len);

/*
 * Wait for the parse, tell its problems to tell(ctx, d) in the order met
 * (tell NULL: dropped), and free the job.  Returns the fill's failure, or
 * what tb_ksyms_parse() returns, with *out set as it sets it; -ENOMEM when
 * a problem could not be kept.
 */
int ksyms_job_finish(struct ksyms_job *j, tb_problem_fn *tell, void *ctx, struct tb_ksyms **out);

#endif
