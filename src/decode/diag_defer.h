/* SPDX-License-Identifier: MIT */
/*
 * diag_defer.h - problems met on a worker thread, told later by the thread
 * that owns the output.
 *
 * pagework's workers read pages (and decompress them) for the reading
 * thread.  What the readers find wrong there must still come out through
 * the capture's or the file's own channel - counted, in order with the rest
 * of the report, from one thread - so a worker installs a sink for the
 * duration of a read: the channels (capture.c tell, tdat_read.c tell) hand
 * each problem to diag_defer() instead of telling it, and the reading
 * thread calls diag_sink_tell() when it reaches the pages they were met in.
 *
 * Ownership: the sink is the caller's; diag_sink_tell() empties it,
 * diag_sink_free() frees what it holds.
 */
#ifndef TRACEBUF_DIAG_DEFER_H
#define TRACEBUF_DIAG_DEFER_H

#include <stdbool.h>
#include <stddef.h>

#include "tracebuf/schema.h"

typedef void diag_tell_fn(void *ctx, const struct tb_problem *d);

struct diag_deferred {
	diag_tell_fn *tell;
	void *ctx;
	struct tb_problem d; /* d.file points at file */
	char *file;
};

struct diag_sink {
	struct diag_deferred *v;
	size_t n, cap;
};

/* Problems told on this thread go to sink (NULL: told at once, the default). */
void diag_sink_install(struct diag_sink *sink);

/*
 * Keep d (and a copy of its file name) for tell(ctx, d) later, if this
 * thread has a sink; false if it has none and the caller tells it now.
 * Without memory to keep it, it is told now (a counter may then race; the
 * message is not lost).
 */
bool diag_defer(diag_tell_fn *tell, void *ctx, const struct tb_problem *d);

/* Tell everything kept, in order, and empty the sink. */
void diag_sink_tell(struct diag_sink *sink);
void diag_sink_free(struct diag_sink *sink);

#endif
