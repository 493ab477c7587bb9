// SPDX-License-Identifier: MIT
/*
 * kind_capture_dir.c - a capture directory: tracefs files copied out
 * (header_page, formats/, cpuN.raw, ...), as `tracebuf capture` writes it.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode/capture_kinds.h"
#include "input.h"

/*
 * Any directory that is not a live instance: one with header_page is
 * surely a capture; one without may still be meant as one, and so may a
 * path where nothing is: the capture's reader then names the file it
 * misses.
 */
static enum input_confidence sniff_capture_dir(const struct input_probe *p)
{
	char header_page[4096];

	if (p->missing)
		return INPUT_MAYBE;
	if (!S_ISDIR(p->st.st_mode))
		return INPUT_NO;
	snprintf(header_page, sizeof(header_page), "%s/header_page", p->path);
	return access(header_page, F_OK) == 0 ? INPUT_YES : INPUT_MAYBE;
}

const struct input_kind input_capture_dir = {
	.id = TB_INPUT_CAPTURE_DIR,
	.name = "capture directory",
	.sniff = sniff_capture_dir,
	.open = capture_open_dir,
};
