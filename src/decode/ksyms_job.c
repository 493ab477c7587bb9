// SPDX-License-Identifier: MIT
/*
 * ksyms_job.c - kallsyms filled and parsed on its own thread (ksyms_job.h
 * says why).
 *
 * The job's results are written by its thread and read by the caller only
 * after a point that orders the two: fill_rc and len under the mutex that
 * ksyms_job_filled() takes, everything else before the pthread_join() of
 * ksyms_job_finish().
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
	ksyms_fill_fn *fill;
	void *fill_ctx;
	pthread_mutex_t lock; /* guards filled, fill_rc, len */
	pthread_cond_t filled_cond;
	bool filled;
	int fill_rc;
	size_t len;
	char *file; /* what the kept problems' file points at */
	struct tb_ksyms *table;
	int rc;
	struct tb_ksyms_problems problems; /* the parse's, for ksyms_job_finish() to tell */
};

static void *work(void *arg)
{
	struct ksyms_job *j = arg;
	char *buf = NULL;
	size_t skip = 0, len = 0;
	int rc = j->fill(j->fill_ctx, &buf, &skip, &len);

	pthread_mutex_lock(&j->lock);
	j->filled = true;
	j->fill_rc = rc;
	j->len = rc < 0 ? 0 : len;
	pthread_cond_broadcast(&j->filled_cond);
	pthread_mutex_unlock(&j->lock);
	/* From here fill_ctx may be gone: only the job's own fields are used. */
	j->rc = rc < 0 ? rc : tb_ksyms_parse_buffer(j->file, buf, skip, len, tb_ksyms_keep_problem, &j->problems,
								&j->table);
	return NULL;
}

int ksyms_job_start(const char *file, ksyms_fill_fn *fill, void *ctx, struct ksyms_job **out)
{
	struct ksyms_job *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (!j || !(j->file = strdup(file ? file : ""))) {
		free(j);
		return -ENOMEM;
	}
	j->fill = fill;
	j->fill_ctx = ctx;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->filled_cond, NULL);
	j->threaded = pthread_create(&j->thread, NULL, work, j) == 0;
	if (!j->threaded)
		work(j);
	*out = j;
	return 0;
}

int ksyms_job_filled(struct ksyms_job *j, size_t *len)
{
	int rc;

	pthread_mutex_lock(&j->lock);
	while (!j->filled)
		pthread_cond_wait(&j->filled_cond, &j->lock);
	rc = j->fill_rc;
	*len = j->len;
	pthread_mutex_unlock(&j->lock);
	return rc;
}

int ksyms_job_finish(struct ksyms_job *j, tb_problem_fn *tell, void *ctx, struct tb_ksyms **out)
{
	int rc;

	if (j->threaded)
		pthread_join(j->thread, NULL); /* everything the thread wrote is visible from here */
	for (size_t i = 0; tell && i < j->problems.n; i++)
		tell(ctx, &j->problems.v[i]);
	rc = j->problems.lost ? -ENOMEM : j->rc;
	*out = j->table;
	if (j->problems.lost) {
		tb_ksyms_free(j->table);
		*out = NULL;
	}
	pthread_cond_destroy(&j->filled_cond);
	pthread_mutex_destroy(&j->lock);
	free(j->problems.v);
	free(j->file);
	free(j);
	return rc;
}
