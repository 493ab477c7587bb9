// SPDX-License-Identifier: MIT
/*
 * session.c - a program traced by `tracebuf record` (or any consumer that
 * made a shared-memory ring, tracebuf/shm.h) joins the session through its
 * environment, with no code of its own:
 *
 *   TRACEBUF_SHM=PATH          the region to attach as a writer; enabled
 *                              events write there (TRACEBUF_EVENTS picks
 *                              them, events.h)
 *   TRACEBUF_SHM_FORMATS=DIR   where this process describes its events:
 *                              DIR/PID is a capture directory's metadata
 *                              (tb_events_dump), written once the program's
 *                              own events are registered, again whenever an
 *                              object registers later, and at exit
 *
 * Event IDs: in a session every process takes its events' IDs from one
 * table, DIR/event_ids (session_ids.c), so unrelated programs agree on
 * them too.  The consumer merges the PID directories and says so should
 * two still disagree (a process whose table could not be used).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry.h"
#include "tracebuf/events.h"
#include "tracebuf/shm.h"

static struct tb_shm *session;

void tb__session_start(void)
{
	const char *path = getenv("TRACEBUF_SHM");
	int rc;

	if (!path || !*path || session)
		return;
	rc = tb_shm_attach(path, TB_SHM_WRITER, &session);
	if (rc < 0) {
		fprintf(stderr, "tracebuf: TRACEBUF_SHM: cannot attach: %s\n",
			*tb_shm_error() ? tb_shm_error() : strerror(-rc));
		return;
	}
	tb__events_session(tb_shm_ring(session));
}

void tb__session_formats(void)
{
	const char *dir = getenv("TRACEBUF_SHM_FORMATS");
	char path[PATH_MAX];
	int rc;

	if (!session || !dir || !*dir)
		return;
	if (snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid()) >= (int)sizeof(path))
		return;
	rc = tb_events_dump(path, tb_shm_ring(session));
	if (rc < 0)
		fprintf(stderr, "tracebuf: TRACEBUF_SHM_FORMATS: cannot write %s: %s\n", path, strerror(-rc));
}
