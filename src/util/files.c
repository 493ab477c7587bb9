// SPDX-License-Identifier: MIT
/*
 * files.c - directory trees and whole files (files.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "write_all.h"

bool is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc;

	if (fd < 0)
		return -errno;
	rc = tb__write_all(fd, data, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int make_dirs(const char *path)
{
	char *copy = strdup(path);
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; rc == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			rc = -errno;
		*p = c;
		if (c == '\0')
			break;
	}
	free(copy);
	return rc;
}

int make_private_dir(const char *what, bool small, char *out, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		/* a few KiB of descriptions: made and removed in memory, where ext4's journal costs nothing */
		tmp = small && is_directory("/dev/shm") && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	if ((size_t)snprintf(out, size, "%s/tracebuf-%s.XXXXXX", tmp, what) >= size)
		return -ENAMETOOLONG;
	return mkdtemp(out) ? 0 : -errno;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

void remove_tree(const char *dir)
{
	if (dir && *dir)
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
