/* SPDX-License-Identifier: MIT */
/*
 * strbuf.h - the printer's output buffer: bytes appended at the end, grown
 * by doubling, written out by whoever owns it.
 *
 * Every line of a report is built here and reaches the output in large
 * writes, so the per-event cost is a few stores, not a stdio call per
 * field.  An allocation failure is sticky (oom) and makes later appends
 * no-ops, so builders need not check each call; the owner checks once.
 *
 * Ownership: the struct is the caller's; sb_free() releases its bytes.
 */
#ifndef TRACEBUF_STRBUF_H
#define TRACEBUF_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

struct tb_strbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

/* sb_grow() when the room is not there already: out of line, so that every caller's common case stays short. */
static __attribute__((noinline, unused)) bool sb_grow_slow(struct tb_strbuf *b, size_t n)
{
	char *p;

	if (b->oom)
		return false;
	p = tb__grow(b->buf, &b->cap, b->len + n, 1, 4096);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->buf = p;
	return true;
}

/* Room for n more bytes; false (and oom set) if it cannot be had. */
static inline bool sb_grow(struct tb_strbuf *b, size_t n)
{
	if (__builtin_expect(!b->oom && b->len + n <= b->cap, 1))
		return true;
	return sb_grow_slow(b, n);
}

static inline void sb_put(struct tb_strbuf *b, const void *p, size_t n)
{
	if (n && sb_grow(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

static inline void sb_putc(struct tb_strbuf *b, char c)
{
	if (b->len < b->cap || sb_grow(b, 1))
		b->buf[b->len++] = c;
}

static inline void sb_puts(struct tb_strbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* n bytes of room at the end, to be filled and then committed with sb_added(); NULL on oom. */
static inline char *sb_room(struct tb_strbuf *b, size_t n)
{
	return sb_grow(b, n) ? b->buf + b->len : NULL;
}

static inline void sb_added(struct tb_strbuf *b, size_t n)
{
	b->len += n;
}

static inline void sb_reset(struct tb_strbuf *b)
{
	b->len = 0;
}

static inline void sb_free(struct tb_strbuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

#endif
