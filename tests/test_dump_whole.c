// SPDX-License-Identifier: MIT
/*
 * test_dump_whole.c - a process's event descriptions (tb_events_dump) are
 * read whole while the process writes them again.
 *
 * In a session, record and the commands that read the session merge each
 * process's description directory while the process runs, and the
 * process rewrites it when an object registers and at exit.  A file
 * rewritten in place is empty or cut short for a moment; a reader then
 * took an event for not described (a flake of t_docs under load:
 * `hist --session` said "no event app:tick").  Specification:
 *   1. a reader that reads the files over and over while another process
 *      dumps them again and again only ever sees each file whole;
 *   2. nothing of the writing is left behind (no temporary file).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/events.h"

#define DUMPS 300

static const char *const files[] = {"header_page", "header_event", "printk_formats", "trace_clock"};

static char *read_file(const char *dir, const char *name, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return tap_slurp(path, len);
}

/* Reads every file while the child dumps: how many reads were torn, of how many. */
static void read_while_dumped(const char *dir, pid_t child, char *const want[], const size_t want_len[],
			      long *reads, long *torn)
{
	int status;

	while (waitpid(child, &status, WNOHANG) == 0) {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			size_t len = 0;
			char *got = read_file(dir, files[i], &len);
			if (!got)
				continue; /* trace_clock: no ring, no file */
			(*reads)++;
			if (len != want_len[i] || memcmp(got, want[i], len)) {
				if (!(*torn)++)
					diag("%s: %zu bytes read, %zu written", files[i], len, want_len[i]);
			}
			free(got);
		}
	}
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child dumped %d times", DUMPS);
}

static int leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)) != NULL)
		n += !strncmp(de->d_name, ".partial", 8);
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/tb-dump-whole-XXXXXX";
	char *want[4] = {0};
	size_t want_len[4] = {0};
	long reads = 0, torn = 0;

	if (!mkdtemp(dir))
		skip_all("no temporary directory");
	ok(tb_events_dump(dir, NULL) == 0, "dumped once");
	for (size_t i = 0; i < 4; i++)
		want[i] = read_file(dir, files[i], &want_len[i]);
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < DUMPS; i++)
			if (tb_events_dump(dir, NULL) != 0)
				_exit(1);
		_exit(0);
	}
	ok(child > 0, "forked the writer");
	if (child > 0)
		read_while_dumped(dir, child, want, want_len, &reads, &torn);
	ok(reads > 0 && torn == 0, "%ld reads during the dumps, %ld torn", reads, torn);
	ok(leftovers(dir) == 0, "no temporary file left");
	for (size_t i = 0; i < 4; i++)
		free(want[i]);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
