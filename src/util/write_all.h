/* SPDX-License-Identifier: MIT */
/*
 * write_all.h - a whole buffer written to a file descriptor, for the
 * library's savers (ringsave.c, blobsave.c) and the CLI (tools/tracefs.c).
 * Not part of the public API: an inline, so nothing is exported.
 */
#ifndef TRACEBUF_UTIL_WRITE_ALL_H
#define TRACEBUF_UTIL_WRITE_ALL_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* 0 once all n bytes are written (EINTR retried); -errno, or -EIO for a write of nothing. */
static inline int tb__write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

#endif
