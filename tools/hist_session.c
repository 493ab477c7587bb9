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
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist_session.h"
#include "shm_capture.h"
#include "lib_internal.h"

#define CMD "hist"

struct hist_session {
	struct tb_shm *shm;
	char desc[PATH_MAX];   /* the processes' descriptions */
	char tmp[PATH_MAX];    /* private, removed at close */
	char cap[PATH_MAX + 32]; /* the current copy's capture directory */
	unsigned copies;
	struct tb_capture *capture; /* the current copy, opened */
	struct shmcap_origins origins; /* where the current copy's pages were read in the region */
	size_t cap_len;             /* strlen(cap) */
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
	if (formats)
		snprintf(s->desc, sizeof(s->desc), "%s", formats);
	else
		shmcap_desc_dir(path, s->desc, sizeof(s->desc));
	if ((rc = shmcap_tmpdir(CMD, 0, s->tmp, sizeof(s->tmp))) < 0) {
		shmcap_say(CMD, rc, "cannot create a temporary directory: %s", strerror(-rc));
		s->tmp[0] = '\0';
		hist_session_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The window, the descriptions and the counters into a fresh capture directory. */
static int write_copy(struct hist_session *s, struct tb_shm_window *w)
{
	struct tb_ring *ring = tb_shm_ring(s->shm);
	int rc, found;

	snprintf(s->cap, sizeof(s->cap), "%s/copy%u", s->tmp, s->copies++);
	if ((rc = make_dirs(s->cap)) < 0)
		return shmcap_say(CMD, rc, "cannot create %s: %s", s->cap, strerror(-rc));
	if ((rc = shmcap_window(CMD, s->cap, ring, w, NULL, &s->origins)) < 0)
		return rc;
	shmcap_say_damage(CMD, tb_shm_path(s->shm), w);
	found = shmcap_merge_desc(CMD, s->desc, s->cap, ring);
	if (found < 0)
		return found;
	if (found == 0)
		shmcap_say(CMD, 0, "no event descriptions in %s yet: no event has a name", s->desc);
	return shmcap_meta(CMD, s->cap, ring);
}

/*
 * A problem met reading the copy, named where it lies in the session's
 * region (the file the user named) rather than in the private copy: a
 * byte of cap/cpuN.raw is a byte of one of the region's pages.
 */
static void region_diag(void *ctx, const struct tb_diag *d)
{
	const struct hist_session *s = ctx;
	struct tb_diag moved = *d;
	unsigned cpu;
	char end;
	uint64_t at;

	if (d->file && !strncmp(d->file, s->cap, s->cap_len) &&
	    sscanf(d->file + s->cap_len, "/cpu%u.ra%c", &cpu, &end) == 2 && end == 'w' &&
	    shmcap_origin(&s->origins, cpu, d->offset, tb_ring_subbuf_size(tb_shm_ring(s->shm)), &at)) {
		moved.file = tb_shm_path(s->shm);
		moved.offset = at;
	}
	tb_diag_print(NULL, &moved);
}

int hist_session_copy(struct hist_session *s, struct tb_capture **out, struct tb_shm_window *w)
{
	struct tb_capture_opts o = {.diag = region_diag, .diag_ctx = s};
	int rc;

	*out = NULL;
	tb_capture_close(s->capture);
	s->capture = NULL;
	if (s->copies)
		shmcap_rmtree(s->cap);
	if ((rc = write_copy(s, w)) < 0)
		return rc;
	s->cap_len = strlen(s->cap);
	if ((rc = tb_capture_open(s->cap, &o, &s->capture)) < 0)
		return shmcap_say(CMD, rc, "cannot read the copy of the session in %s: %s", s->cap, strerror(-rc));
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
	shmcap_origins_free(&s->origins);
	if (s->tmp[0])
		shmcap_rmtree(s->tmp);
	tb_shm_close(s->shm);
	free(s);
}
