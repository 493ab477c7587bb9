// SPDX-License-Identifier: MIT
/*
 * fd_text.c - the rest of an open file as one NUL-terminated text (fd_text.h):
 * one loop for the capture reader, the trace.dat converter and the CLI's
 * tracefs reads.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "fd_text.h"

/*
 * Room for the next read: a page-sized read and the NUL, so a read is never
 * tiny - except in a first buffer sized from the file's size, which holds
 * the file, a byte more (a file that grew shows so) and the NUL.
 */
static bool need_room(size_t n, size_t cap, bool exact)
{
	return exact ? n + 1 >= cap : n + 4096 + 1 > cap;
}

char *fd_read_text_sized(int fd, size_t max, long long size, size_t *len)
{
	bool exact = size > 0 && (unsigned long long)size < max;
	size_t cap = exact ? (size_t)size + 2 : 0, n = 0;
	char *buf = NULL, *grown;
	ssize_t r;
	int e;

	if (exact && !(buf = malloc(cap))) {
		errno = ENOMEM;
		goto failed;
	}
	for (;;) {
		if (need_room(n, cap, exact)) {
			size_t next = cap ? 2 * cap : 16384;
			while (next < n + 4096 + 1)
				next *= 2;
			if (next > max || !(grown = realloc(buf, next))) {
				errno = next > max ? EFBIG : ENOMEM;
				goto failed;
			}
			buf = grown, cap = next, exact = false;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto failed;
		if (r == 0)
			break;
		n += (size_t)r;
		/* A short read that brings a file of known size to its size met its end: one read, not two. */
		if (size > 0 && n == (size_t)size && (size_t)r < cap - (n - (size_t)r) - 1)
			break;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
failed:
	e = errno;
	free(buf);
	if (len)
		*len = n;
	errno = e;
	return NULL;
}

char *fd_read_text(int fd, size_t max, size_t *len)
{
	return fd_read_text_sized(fd, max, -1, len);
}
