// SPDX-License-Identifier: MIT
/*
 * kind_shm_session.c - a shared-memory session's region (tracebuf/shm.h):
 * the ring `tracebuf record --shm PATH` and the traced program share.
 *
 * Recognised, not opened as a capture: a copy of the ring is only a
 * capture with the descriptions its processes left in the session's
 * formats directory merged in, and that merging (and the window copy) is
 * the CLI's (tools/shm_capture.c, shared with record and snapshot, and
 * moving with capture saving to the exporters).  So a region handed to a
 * command that reads captures is named for what it is, with what reads it.
 */
#include <string.h>
#include <sys/stat.h>

#include "input.h"
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

const struct input_kind input_shm_session = {
	.id = TB_INPUT_SHM_SESSION,
	.name = "shm session",
	.sniff = sniff_shm_session,
	.open = NULL,
	.says_instead = "the ring of a `tracebuf record` session; copy it with `tracebuf snapshot` or "
			"`tracebuf recover`, or watch it with `tracebuf hist --session`",
};
