/* SPDX-License-Identifier: MIT */
/*
 * capdir.h - a temporary capture directory made of symlinks to the files of
 * a real one (under other names where a test wants), so a test can add or
 * vary one file and leave the real capture alone.
 *
 *   static const char *const links[][2] = {{"e1.cpu0.raw", "cpu0.raw"}, ...};
 *   char dir[] = "/tmp/tb-test-XXXXXX";
 *   if (capdir_make(dir, "tests/data/...", links, n) == 0) {
 *           ... files the test adds itself it removes itself ...
 *           capdir_remove(dir, links, n);
 *   }
 *
 * links[i] = {name in src, name in dir}.  capdir_make returns 0, or -1 when
 * the directory could not be made (a failed link is reported with diag).
 */
#ifndef TB_TEST_CAPDIR_H
#define TB_TEST_CAPDIR_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static inline int capdir_make(char *dir, const char *src, const char *const links[][2], size_t n)
{
	char real[PATH_MAX], from[PATH_MAX + 256], to[PATH_MAX];

	if (!realpath(src, real) || !mkdtemp(dir))
		return -1;
	for (size_t i = 0; i < n; i++) {
		snprintf(from, sizeof(from), "%s/%s", real, links[i][0]);
		snprintf(to, sizeof(to), "%s/%s", dir, links[i][1]);
		if (symlink(from, to) < 0)
			diag("symlink %s: %s", to, strerror(errno));
	}
	return 0;
}

static inline void capdir_remove(const char *dir, const char *const links[][2], size_t n)
{
	char to[PATH_MAX];

	for (size_t i = 0; i < n; i++) {
		snprintf(to, sizeof(to), "%s/%s", dir, links[i][1]);
		unlink(to);
	}
	rmdir(dir);
}

#endif
