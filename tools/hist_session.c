// SPDX-License-Identifier: MIT
/*
 * hist_session.c - a record session's ring, copied as a capture for hist
 * (hist_session.h).
 *
 * Non-consuming, like snapshot: record's own consumer (a drained session)
 * or the flight recorder's overwriting go on untouched, and several hists
 * may watch one session.  What that means for the counts: each copy is the
 * window the ring holds at that moment, and the hist counts every record
 * once across copies (tb_hist_skip_seen); a flight recorder whose window
 * outlasts the interval between copies gives every event, while a drained
 * session shows only what record has not yet taken (mostly nothing).
 * Consuming instead would take the events from record's trace.dat.
 *
 * Each copy is the library's shm session capture (src/input/shm_session.h):
 * the window in a private directory it removes at close, every message
 * naming the region file the user gave, damage reported through it.  The
 * session stays attached between copies.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist_session.h"
#include "shm_capture.h"

#define CMD "hist"

struct hist_session {
	struct tb_shm *shm;
	const char *formats;        /* --formats, or NULL: the session's own */
	struct tb_capture *capture; /* the current copy, opened */
};

int hist_session_open(const char *path, const char *formats, struct hist_session **out)
{
	struct hist_session *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	if ((rc = tb_shm_attach(path, TB_SHM_READER, &s->shm)) < 0) {
		shmcap_say(CMD, rc, "cannot read the session %s: %s", path, tb_shm_error());
		free(s);
		return rc;
	}
	s->formats = formats;
	*out = s;
	return 0;
}

int hist_session_copy(struct hist_session *s, struct tb_capture **out, struct tb_shm_window *w)
{
	int rc;

	*out = NULL;
	tb_capture_close(s->capture);
	s->capture = NULL;
	if ((rc = shm_session_capture(s->shm, false, s->formats, NULL, &s->capture, w)) < 0)
		return rc; /* said through the capture's diag */
	*out = s->capture;
	return 0;
}

struct tb_ring *hist_session_ring(const struct hist_session *s)
{
	return tb_shm_ring(s->shm);
}

void hist_session_close(struct hist_session *s)
{
	if (!s)
		return;
	tb_capture_close(s->capture);
	tb_shm_close(s->shm);
	free(s);
}
