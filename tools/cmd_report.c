// SPDX-License-Identifier: MIT
/* Placeholder until the subcommand lands; replaced by its issue's work. */
#include <stdio.h>

#include "cmds.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "tracebuf report: not built yet\n");
	return 2;
}
