/*
 * v7chunks.h - the compressed chunks of one CPU of a version 7 trace.dat,
 * walked from the file's bytes alone (a u32 count, then chunks of {u32
 * compressed size, u32 decompressed size, bytes}), for tests that damage a
 * chunk or place a cut and must know where it lies independently of the
 * reader under test; a capture written as v6 and v7 zstd files to compare;
 * and a file written whole.  Include after tap.h.
 */
#ifndef TB_TEST_V7CHUNKS_H
#define TB_TEST_V7CHUNKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/tracedat.h"

struct v7_chunk {
	size_t at; /* its header: u32 compressed size, u32 decompressed size */
	uint32_t clen, ulen;
};

static inline uint32_t v7_le32(const void *p)
{
	const unsigned char *u = p;

	return u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

/* The chunks of the CPU whose data (its chunk count) starts at byte at of bytes: how many, or -1. */
static inline int v7_chunks(const void *bytes, size_t len, size_t at, struct v7_chunk *out, int max)
{
	const char *b = bytes;
	uint32_t count;
	int n = 0;

	if (at + 4 > len)
		return -1;
	count = v7_le32(b + at);
	at += 4;
	for (uint32_t i = 0; i < count && n < max && at + 8 <= len; i++) {
		out[n] = (struct v7_chunk){at, v7_le32(b + at), v7_le32(b + at + 4)};
		at += 8 + out[n++].clen;
	}
	return n;
}

/* len bytes written as the whole file at path. */
static inline bool v7_write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool done = f && fwrite(buf, 1, len, f) == len;

	return f && !fclose(f) && done;
}

/* 64-byte paths in dir: the capture written as v6.dat and v7.dat (zstd) (said), and bad.dat's name. */
static inline void v7_write_pair(const char *capture, const char *dir, char *v6, char *v7, char *bad)
{
	struct tb_tracedat_write_opts o6 = {.version = 6}, o7 = {.version = 7, .compression = "zstd"};

	snprintf(v6, 64, "%s/v6.dat", dir);
	snprintf(v7, 64, "%s/v7.dat", dir);
	snprintf(bad, 64, "%s/bad.dat", dir);
	is_int(tb_tracedat_write_capture(capture, NULL, v6, &o6), 0, "the capture written as v6");
	is_int(tb_tracedat_write_capture(capture, NULL, v7, &o7), 0, "the capture written as v7 with zstd");
}

#endif
