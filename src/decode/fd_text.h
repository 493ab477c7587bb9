/* SPDX-License-Identifier: MIT */
/*
 * fd_text.h - the rest of an open file as one NUL-terminated text.
 *
 * tracefs files report size 0, so they are read to EOF, never by st_size;
 * max bounds what a damaged or hostile file can make us allocate.
 */
#ifndef TB_FD_TEXT_H
#define TB_FD_TEXT_H

#include <stddef.h>

/*
 * Read fd to EOF (EINTR retried); fd stays open, the caller closes it.
 * Returns the text, malloc'd and NUL-terminated (the caller frees), with
 * *len its length; or NULL with errno set (EFBIG once it would need more
 * than max bytes, ENOMEM, or read's error) and *len the bytes read before
 * the failure.  len may be NULL.
 */
char *fd_read_text(int fd, size_t max, size_t *len);

/*
 * The same for a file whose size is known (fstat's st_size, size > 0; -1
 * or 0: unknown, as tracefs and /proc files report): read into a buffer of
 * that size, ending at the first short read that brings it to its size
 * (one read() for a regular file, not two); a file that grew is read on.
 */
char *fd_read_text_sized(int fd, size_t max, long long size, size_t *len);

#endif
