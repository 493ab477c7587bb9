// SPDX-License-Identifier: MIT
/*
 * diag_defer.c - problems kept on a worker thread for the reading thread
 * to tell (diag_defer.h says why).
 */
#include <stdlib.h>
#include <string.h>

#include "diag_defer.h"
#include "util/grow.h"

/* Each thread's own: a worker sets it around its reads, nobody else sees it. */
static _Thread_local struct diag_sink *current;

void diag_sink_install(struct diag_sink *sink)
{
	current = sink;
}

bool diag_defer(diag_tell_fn *tell, void *ctx, const struct tb_problem *d)
{
	struct diag_sink *s = current;
	struct diag_deferred *e;

	if (!s)
		return false;
	e = tb__grow(s->v, &s->cap, s->n + 1, sizeof(*e), 8);
	if (!e)
		return false;
	s->v = e;
	e = &s->v[s->n];
	e->tell = tell;
	e->ctx = ctx;
	e->d = *d;
	e->file = strdup(d->file ? d->file : "");
	if (!e->file)
		return false;
	e->d.file = e->file;
	s->n++;
	return true;
}

void diag_sink_tell(struct diag_sink *sink)
{
	for (size_t i = 0; i < sink->n; i++) {
		sink->v[i].tell(sink->v[i].ctx, &sink->v[i].d);
		free(sink->v[i].file);
	}
	sink->n = 0;
}

void diag_sink_free(struct diag_sink *sink)
{
	for (size_t i = 0; i < sink->n; i++)
		free(sink->v[i].file);
	free(sink->v);
	*sink = (struct diag_sink){0};
}
