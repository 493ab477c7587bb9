/* SPDX-License-Identifier: MIT */
/*
 * ksyms_job.h - a kallsyms text parsed on a thread of its own, so that a
 * trace.dat's other metadata is read meanwhile (the parse of a kernel's
 * 5 MB table is the longest step of opening one).
 *
 * The thread tells nobody anything: the problems the parser finds are
 * kept, in order, and told by ksyms_job_finish() on the caller's thread,
 * which joins the thread first.  Until then the job's table is the job's:
 * nothing may look symbols up in it.
 *
 * Ownership: ksyms_job_start() takes buf (from tb_ksyms_text_buffer())
 * whatever it returns; ksyms_job_finish() frees the job and hands over
 * the table (the caller frees it with tb_ksyms_free()).
 */
#ifndef TRACEBUF_KSYMS_JOB_H
#define TRACEBUF_KSYMS_JOB_H

#include <stddef.h>

#include "ksyms.h"

struct ksyms_job;

/*
 * Start parsing len bytes of kallsyms text in buf (its problems to be
 * named after file).  Where no thread can be had it is parsed now.
 * 0, or -ENOMEM.
 */
int ksyms_job_start(const char *file, char *buf, size_t len, struct ksyms_job **out);

/*
 * Wait for the parse, tell its problems to tell(ctx, d) in the order met
 * (tell NULL: dropped), and free the job.  Returns what tb_ksyms_parse()
 * returns, with *out set as it sets it; -ENOMEM when a problem could not
 * be kept.
 */
int ksyms_job_finish(struct ksyms_job *j, tb_diag_fn *tell, void *ctx, struct tb_ksyms **out);

#endif
