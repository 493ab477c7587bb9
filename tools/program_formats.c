// SPDX-License-Identifier: MIT
/*
 * program_formats.c - run a program so that it describes its events (see
 * program_formats.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "program_formats.h"

/* Run argv with TRACEBUF_FORMATS=dir; its exit status, or -1. */
static int run_program(const char *who, char **argv, const char *dir)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		setenv("TRACEBUF_FORMATS", dir, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "tracebuf %s: cannot run %s: %s\n", who, argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int program_formats(const char *who, char **argv, const char *dir)
{
	char path[4200];
	struct stat st;
	int status = run_program(who, argv, dir);

	snprintf(path, sizeof(path), "%s/header_event", dir);
	if (status == 0 && stat(path, &st) == 0)
		return 0;
	fprintf(stderr,
		"tracebuf %s: %s wrote no formats (exit status %d): it must be linked with "
		"libtracebuf and include tracebuf/tracepoint.h\n",
		who, argv[0], status);
	return -1;
}

void program_formats_remove(const char *who, const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "tracebuf %s: could not remove %s\n", who, dir);
}
