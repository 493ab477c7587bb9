// SPDX-License-Identifier: MIT
/* Placeholder until the subcommand lands; replaced by its issue's work. */
#include <stdio.h>

#include "cmds.h"

int cmd_size(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "tracebuf size: not built yet\n");
	return 2;
}
