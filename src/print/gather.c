// SPDX-License-Identifier: MIT
/*
 * gather.c - pieces of text written in order with writev() (gather.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gather.h"

/* Own text appended since the last piece, as a piece. */
static void close_own(struct gather *g)
{
	if (g->own->len > g->own_mark) {
		g->pieces[g->npieces++] = (struct gather_piece){NULL, g->own_mark, g->own->len - g->own_mark};
		g->own_mark = g->own->len;
	}
}

void gather_borrow_slow(struct gather *g, const char *p, size_t n)
{
	struct gather_piece *last;

	if (g->err || !n)
		return;
	if (!g->pieces && !(g->pieces = malloc(GATHER_PIECES * sizeof(*g->pieces)))) {
		g->err = -ENOMEM;
		return;
	}
	/* Room for own text and this span, and for own text again at flush: three pieces. */
	if (g->npieces + 3 > GATHER_PIECES && gather_flush(g) < 0)
		return;
	close_own(g);
	last = g->npieces ? &g->pieces[g->npieces - 1] : NULL;
	if (last && last->base && last->base + last->len == p)
		last->len += n; /* the next line of the same text */
	else
		g->pieces[g->npieces++] = (struct gather_piece){p, 0, n};
}

/* Every byte of iov[0..n) to fd, however the kernel splits the writes. */
static int write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t done = writev(fd, iov, n);
		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return -EIO;
		for (; n > 0 && (size_t)done >= iov->iov_len; iov++, n--)
			done -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + done;
			iov->iov_len -= (size_t)done;
		}
	}
	return 0;
}

static const char *piece_text(const struct gather *g, const struct gather_piece *p)
{
	return p->base ? p->base : g->own->buf + p->off;
}

int gather_flush(struct gather *g)
{
	struct iovec iov[GATHER_PIECES];
	int fd = fileno(g->out);

	if (g->own->oom && !g->err)
		g->err = -ENOMEM;
	if (!g->err && g->pieces) {
		close_own(g);
		if (fd >= 0 && fflush(g->out) == 0) {
			for (size_t i = 0; i < g->npieces; i++)
				iov[i] = (struct iovec){(void *)piece_text(g, &g->pieces[i]), g->pieces[i].len};
			if (write_all(fd, iov, (int)g->npieces) < 0)
				g->err = -EIO;
		} else {
			for (size_t i = 0; i < g->npieces && !g->err; i++)
				if (fwrite(piece_text(g, &g->pieces[i]), 1, g->pieces[i].len, g->out) != g->pieces[i].len)
					g->err = -EIO;
		}
	} else if (!g->err && g->own->len && fwrite(g->own->buf, 1, g->own->len, g->out) != g->own->len) {
		g->err = -EIO; /* nothing borrowed yet: own text alone */
	}
	g->npieces = 0;
	g->own_mark = 0;
	sb_reset(g->own);
	return g->err;
}

void gather_free(struct gather *g)
{
	free(g->pieces);
	g->pieces = NULL;
	g->npieces = 0;
}
