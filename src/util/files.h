/* SPDX-License-Identifier: MIT */
/*
 * files.h - small file-system helpers of the reading library's stages:
 * making and removing directory trees, writing a file whole, a private
 * temporary directory.  libc only; nothing here prints.
 *
 * They sit in util/ (the lowest stage) because the input stage (a shm
 * session opened as a capture, src/input/shm_session.c) and the export
 * stage (capture saving, src/export/) both write capture directories,
 * and the input stage may not call up into export.
 *
 * Errors are negative errno values.
 */
#ifndef TRACEBUF_UTIL_FILES_H
#define TRACEBUF_UTIL_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* Create (or truncate) path, mode 0644, and write len bytes; 0 or -errno. */
int write_file(const char *path, const void *data, size_t len);

/* mkdir -p (mode 0755); 0 or -errno. */
int make_dirs(const char *path);

bool is_directory(const char *path);

/*
 * A fresh private directory (mode 0700) named tracebuf-WHAT.XXXXXX under
 * $TMPDIR, else /tmp - or /dev/shm when small (it will hold only a few KiB
 * of text, made and removed in memory): 0 with out filled, or -errno.
 */
int make_private_dir(const char *what, bool small, char *out, size_t size);

/* Remove a directory tree, not following links (NULL or "": nothing). */
void remove_tree(const char *dir);

#endif
