// SPDX-License-Identifier: MIT
/*
 * fd_text.c - the rest of an open file as one NUL-terminated text (fd_text.h):
 * one loop for the capture reader, the trace.dat converter and the CLI's
 * tracefs reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fd_text.h"

char *fd_read_text(int fd, size_t max, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL, *grown;
	ssize_t r;
	int e;

	for (;;) {
		/* Room for a page-sized read and the NUL, so a read is never tiny. */
		if (n + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 16384;
			if (cap > max || !(grown = realloc(buf, cap))) {
				errno = cap > max ? EFBIG : ENOMEM;
				goto failed;
			}
			buf = grown;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto failed;
		if (r == 0)
			break;
		n += (size_t)r;
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
