/* SPDX-License-Identifier: MIT */
/*
 * tracefs.h - small file helpers for the code that talks to tracefs and
 * writes capture directories: the CLI commands, and capture saving
 * (capture_save.c), which is the library's since it left tools/.
 *
 * tracefs files report a size of 0, so every read goes to EOF.  Errors are
 * negative errno values (or NULL with errno set); nothing here prints.
 * Strings returned are the caller's to free.
 */
#ifndef TRACEBUF_EXPORT_TRACEFS_H
#define TRACEBUF_EXPORT_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/files.h" /* write_file, make_dirs, is_directory: theirs too */

/* Where tracefs is mounted (/sys/kernel/tracing, or under debugfs); NULL if nowhere. */
const char *tracefs_mount(void);

/* "dir/name"; NULL when out of memory. */
char *path_of(const char *dir, const char *name);

/* The whole file dir/name, NUL-terminated; NULL with errno set. */
char *tracefs_read(const char *dir, const char *name, size_t *len);

/* The first line of dir/name without its newline ("" if empty); NULL with errno set. */
char *tracefs_read_line(const char *dir, const char *name);

/* Write value to dir/name in one write(), as tracefs wants; 0 or -errno. */
int tracefs_write(const char *dir, const char *name, const char *value);

/*
 * The same without truncating: for files where a truncating open means
 * "clear everything" (uprobe_events, kprobe_events, triggers).
 */
int tracefs_append(const char *dir, const char *name, const char *value);

/* Write all len bytes to fd (retrying short writes); 0 or -errno. */
int write_all(int fd, const void *data, size_t len);

/* Copy dir/name to path, reading to EOF; 0 or -errno. */
int copy_file(const char *dir, const char *name, const char *path);

/* An instance's sub-buffer size: buffer_subbuf_size_kb (6.8+), else the page size. */
size_t tracefs_subbuf_size(const char *inst);

#endif
