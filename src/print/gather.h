/* SPDX-License-Identifier: MIT */
/*
 * gather.h - output made of text that already lies elsewhere in memory
 * (lines the workers wrote into their units) and of the writer's own text,
 * written with one writev() per batch instead of being copied once more
 * into an output buffer first.
 *
 * The writer appends its own text to a strbuf of its own as usual (own);
 * gather_borrow() adds a span of someone else's memory after it.  Own text
 * appended since the last piece becomes a piece of its own when the next
 * span is borrowed and at flush; a span that continues the previous one
 * (the next line of the same unit) only lengthens it.  gather_flush()
 * writes the pieces in order - to the stream's descriptor after flushing
 * the stream, or piece by piece with fwrite() for a stream without one
 * (open_memstream) - and empties own.
 *
 * Set out and own, the rest zero.  Ownership: the struct, out and own are
 * the caller's; a borrowed span must
 * stay valid and unchanged until the next gather_flush(); gather_free()
 * releases the pieces' array.
 */
#ifndef TRACEBUF_GATHER_H
#define TRACEBUF_GATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "strbuf.h"

/* Pieces per batch: at most IOV_MAX (1024 on Linux) for one writev(). */
#define GATHER_PIECES 1024

struct gather_piece {
	const char *base; /* NULL: own text from off */
	size_t off, len;
};

struct gather {
	FILE *out;
	struct tb_strbuf *own;
	size_t own_mark; /* own->len where its text not yet in a piece starts */
	struct gather_piece *pieces; /* [GATHER_PIECES], allocated on first use */
	size_t npieces;
	int err; /* the first failure (-ENOMEM, -EIO), sticky: nothing more is written */
};

/* Borrow n bytes at p as the next piece (writing the batch first when it is full). */
void gather_borrow_slow(struct gather *g, const char *p, size_t n);

/* Inline for the common case, the next line of the span borrowed last with no own text between: once per line. */
static inline void gather_borrow(struct gather *g, const char *p, size_t n)
{
	struct gather_piece *last = g->npieces ? &g->pieces[g->npieces - 1] : NULL;

	if (last && last->base && last->base + last->len == p && g->own->len == g->own_mark && !g->err)
		last->len += n;
	else
		gather_borrow_slow(g, p, n);
}

/* Write every piece in order and empty own: 0, or the first failure (g->err). */
int gather_flush(struct gather *g);

void gather_free(struct gather *g);

#endif
