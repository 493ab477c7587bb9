/* SPDX-License-Identifier: MIT */
/*
 * pread_full.h - n bytes at a file offset, however the kernel splits the
 * read: the one read loop of the library's loaders (shm.c, elfsyms.c) and
 * of the reading side's (captures, trace.dat, blob stores).  The twin of
 * write_all.h; an inline, so nothing is exported.
 */
#ifndef TRACEBUF_UTIL_PREAD_FULL_H
#define TRACEBUF_UTIL_PREAD_FULL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/*
 * Up to n bytes at off of fd into buf (EINTR retried): the count read,
 * n unless the file ends first (*error 0) or a read fails (*error its
 * errno) - either way after the count, which the caller may name.
 * Never instrumented: the function tracer's own symbol reader
 * (elfsyms.c) calls it, and must make no hook call (t_func_notrace.sh).
 */
__attribute__((no_instrument_function)) static inline size_t tb__pread_full(int fd, void *buf, size_t n,
										 uint64_t off, int *error)
{
	size_t got = 0;

	*error = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			*error = errno;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

#endif
