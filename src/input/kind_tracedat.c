// SPDX-License-Identifier: MIT
/*
 * kind_tracedat.c - a trace.dat, version 6 or 7, compressed or not: what
 * trace-cmd record writes, and what `tracebuf record` and `convert` write
 * (record's output is a trace.dat, one buffer or two, not a kind of its
 * own).  Recognised by trace-cmd's magic, whatever the file is called.
 */
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "tracedat/tdat_capture.h"

/* trace-cmd's magic: 0x17 0x08 0x44 and "tracing" (its version string follows). */
static const uint8_t TRACEDAT_MAGIC[10] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};

static enum input_confidence sniff_tracedat(const struct input_probe *p)
{
	if (!S_ISREG(p->st.st_mode) || p->head_len < sizeof(TRACEDAT_MAGIC))
		return INPUT_NO;
	return memcmp(p->head, TRACEDAT_MAGIC, sizeof(TRACEDAT_MAGIC)) ? INPUT_NO : INPUT_YES;
}

const struct input_kind input_tracedat = {
	.id = TB_INPUT_TRACEDAT,
	.name = "trace.dat v6/v7",
	.sniff = sniff_tracedat,
	.open = tracedat_capture_open,
};
