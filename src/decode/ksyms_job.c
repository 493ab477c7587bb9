// SPDX-License-Identifier: MIT
/*
 * ksyms_job.c - kallsyms parsed on its own thread (ksyms_job.h says why).
 *
 * The job is written by its thread only between pthread_create() and
 * pthread_join(), and read by the caller only after the join, which orders
 * the two: no other synchronisation is needed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms_job.h"

struct ksyms_job {
	pthread_t thread;
	bool threaded;
	char *file; /* what the kept problems' file points at */
	char *buf;
	size_t len;
	struct tb_ksyms *table;
	int rc;
	struct tb_diag *problems;
	size_t nproblems, cap;
	bool lost; /* a problem could not be kept */
};

/* tb_diag_fn on the job's thread: keep the problem for ksyms_job_finish(). */
static void keep_problem(void *ctx, const struct tb_diag *d)
{
	struct ksyms_job *j = ctx;

	if (j->nproblems == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 16;
		struct tb_diag *v = realloc(j->problems, cap * sizeof(*v));
		if (!v) {
			j->lost = true;
			return;
		}
		j->problems = v;
		j->cap = cap;
	}
	j->problems[j->nproblems++] = *d;
}

static void *parse(void *arg)
{
	struct ksyms_job *j = arg;

	j->rc = tb_ksyms_parse_buffer(j->file, j->buf, j->len, keep_problem, j, &j->table);
	j->buf = NULL; /* the table's now, or freed */
	return NULL;
}

int ksyms_job_start(const char *file, char *buf, size_t len, struct ksyms_job **out)
{
	struct ksyms_job *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (!j || !(j->file = strdup(file ? file : ""))) {
		free(j);
		free(buf);
		return -ENOMEM;
	}
	j->buf = buf;
	j->len = len;
	j->threaded = pthread_create(&j->thread, NULL, parse, j) == 0;
	if (!j->threaded)
		parse(j);
	*out = j;
	return 0;
}

int ksyms_job_finish(struct ksyms_job *j, tb_diag_fn *tell, void *ctx, struct tb_ksyms **out)
{
	int rc;

	if (j->threaded)
		pthread_join(j->thread, NULL); /* everything the thread wrote is visible from here */
	for (size_t i = 0; tell && i < j->nproblems; i++)
		tell(ctx, &j->problems[i]);
	rc = j->lost ? -ENOMEM : j->rc;
	*out = j->table;
	if (j->lost) {
		tb_ksyms_free(j->table);
		*out = NULL;
	}
	free(j->problems);
	free(j->file);
	free(j);
	return rc;
}
