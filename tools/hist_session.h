/* SPDX-License-Identifier: MIT */
/*
 * hist_session.h - a running `tracebuf record` session (its shared-memory
 * ring) as the source of `tracebuf hist --session`, read without
 * consuming anything: each copy is the ring's window as `tracebuf
 * snapshot` takes it, put in a private capture directory with the event
 * descriptions the session's processes left, and opened as a capture.
 *
 * Ownership: hist_session_open() returns a handle freed (its temporary
 * directory removed) by hist_session_close(); the capture a copy returns
 * is the handle's, valid until the next copy or the close.
 */
#ifndef TRACEBUF_TOOLS_HIST_SESSION_H
#define TRACEBUF_TOOLS_HIST_SESSION_H

#include "tracebuf/capture.h"
#include "tracebuf/shm.h"

struct hist_session;

/*
 * Attach to the session at path as a reader; formats: where its processes
 * describe their events (NULL: found from path, as snapshot does).  0, or
 * a negative errno said on stderr.
 */
int hist_session_open(const char *path, const char *formats, struct hist_session **out);
/* The ring's window now, as a capture (*w: what it held).  0 or a negative errno, said on stderr. */
int hist_session_copy(struct hist_session *s, struct tb_capture **out, struct tb_shm_window *w);
/* The session's ring (for its clock). */
struct tb_ring *hist_session_ring(const struct hist_session *s);
void hist_session_close(struct hist_session *s);

#endif
