// SPDX-License-Identifier: MIT
/*
 * kind_live_instance.c - the tracefs root or one of its instances, read
 * (and consumed) through per_cpu/cpuN/trace_pipe_raw.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "decode/capture_kinds.h"
#include "input.h"

/* A directory with per_cpu/ is tracefs: no capture directory has one. */
static enum input_confidence sniff_live_instance(const struct input_probe *p)
{
	char per_cpu[4096];
	struct stat st;

	if (!S_ISDIR(p->st.st_mode))
		return INPUT_NO;
	snprintf(per_cpu, sizeof(per_cpu), "%s/per_cpu", p->path);
	return stat(per_cpu, &st) == 0 && S_ISDIR(st.st_mode) ? INPUT_YES : INPUT_NO;
}

const struct input_kind input_live_instance = {
	.id = TB_INPUT_LIVE_INSTANCE,
	.name = "live tracefs instance",
	.sniff = sniff_live_instance,
	.open = capture_open_live,
};
