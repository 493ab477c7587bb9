/* SPDX-License-Identifier: MIT */
/*
 * arena.h - many small strings that live as long as their table, taken
 * from 64 KiB chunks instead of a malloc each (a kernel's thousands of
 * comms, format names and format texts at start-up), and freed together.
 *
 * Ownership: arena_free() releases every chunk; nothing taken from the
 * arena may be freed on its own.
 */
#ifndef TRACEBUF_ARENA_H
#define TRACEBUF_ARENA_H

#include <stdlib.h>
#include <string.h>

struct arena {
	char *chunk; /* the newest; each chunk starts with the previous one's address */
	char *free_at;
	size_t free_left;
};

#define ARENA_CHUNK (64u * 1024)

/* n bytes (unaligned: for text), from the current chunk or a new one; NULL without memory. */
static inline char *arena_take(struct arena *a, size_t n)
{
	char *p;

	if (n > a->free_left) {
		size_t size = n + sizeof(char *) > ARENA_CHUNK ? n + sizeof(char *) : ARENA_CHUNK;
		char *chunk = malloc(size);
		if (!chunk)
			return NULL;
		memcpy(chunk, &a->chunk, sizeof(char *)); /* the chain arena_free() walks */
		a->chunk = chunk;
		a->free_at = chunk + sizeof(char *);
		a->free_left = size - sizeof(char *);
	}
	p = a->free_at;
	a->free_at += n;
	a->free_left -= n;
	return p;
}

/* A NUL-terminated copy of s; NULL without memory. */
static inline char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_take(a, n);

	return p ? memcpy(p, s, n) : NULL;
}

static inline void arena_free(struct arena *a)
{
	while (a->chunk) {
		char *prev;
		memcpy(&prev, a->chunk, sizeof(prev));
		free(a->chunk);
		a->chunk = prev;
	}
	a->free_at = NULL;
	a->free_left = 0;
}

#endif
