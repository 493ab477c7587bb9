/* SPDX-License-Identifier: MIT */
/*
 * tree.h - a test's temporary directory removed with all it holds
 * (rm -rf without a shell, so a path needs no quoting).  Links are
 * removed, never followed: a capture directory made of symlinks to
 * tests/data leaves the real files alone.
 */
#ifndef TB_TEST_TREE_H
#define TB_TEST_TREE_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static inline int tree_remove_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)type, (void)f;
	return remove(path);
}

/* dir and everything below it, children first; 0, or -1 with errno if something stayed. */
static inline int tree_remove(const char *dir)
{
	return nftw(dir, tree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
