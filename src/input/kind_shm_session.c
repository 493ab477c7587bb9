// SPDX-License-Identifier: MIT
/*
 * kind_shm_session.c - a shared-memory session's region (tracebuf/shm.h):
 * the ring `tracebuf record --shm PATH` and the traced program share.
 *
 * Opened as a capture of the window its ring holds now, read without
 * consuming (as `tracebuf snapshot` copies it: writers go on, and a
 * running record or a crash's recovery is untouched), with the
 * descriptions the session's processes left beside it merged in
 * (shm_session.c).  The path is the region's file, or a memfd's
 * /proc/PID/fd/N, as `tracebuf record` prints it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "shm_session.h"
#include "ring/ring_layout.h"

/* The region starts with its magic (struct tb_region), in the machine's byte order. */
static enum input_confidence sniff_shm_session(const struct input_probe *p)
{
	uint64_t magic;

	if (!S_ISREG(p->st.st_mode) || p->head_len < sizeof(magic))
		return INPUT_NO;
	memcpy(&magic, p->head, sizeof(magic));
	return magic == TB_MAGIC ? INPUT_YES : INPUT_NO;
}

/* Attached as a reader (header private and checked), its window copied into a capture that owns it. */
static int open_shm_session(const char *path, const struct tb_capture_opts *opts, struct tb_capture **out)
{
	struct tb_problem d = {.file = path};
	struct tb_shm *shm;
	int rc;

	*out = NULL;
	if ((rc = tb_shm_attach(path, TB_SHM_READER, &shm)) == 0)
		return shm_session_capture(shm, true, NULL, opts, out, NULL);
	snprintf(d.reason, sizeof(d.reason), "cannot read the session: %s",
		 *tb_shm_error() ? tb_shm_error() : strerror(-rc));
	(opts && opts->diag ? opts->diag : tb_problem_print)(opts && opts->diag ? opts->diag_ctx : NULL, &d);
	return rc;
}

const struct input_kind input_shm_session = {
	.id = TB_INPUT_SHM_SESSION,
	.name = "shm session",
	.sniff = sniff_shm_session,
	.open = open_shm_session,
};
