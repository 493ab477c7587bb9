/* SPDX-License-Identifier: MIT */
/*
 * lines.h - a text split into lines, for tests that compare report output
 * with the kernel's trace files line by line.
 *
 *   struct lines l;  split_lines(text, &l);  ... l.v[i] ...  free_lines(&l);
 *
 * split_lines() takes the text over (free_lines() frees it and the index).
 */
#ifndef TB_TEST_LINES_H
#define TB_TEST_LINES_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct lines {
	char *text;
	char **v;
	size_t n;
};

/* Split text (taken over; NULL gives no lines) into lines without their newline. */
static inline void split_lines(char *text, struct lines *l)
{
	size_t cap = 0;
	char *p = text;

	memset(l, 0, sizeof(*l));
	l->text = text;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		if (l->n == cap)
			l->v = realloc(l->v, (cap = cap ? 2 * cap : 1024) * sizeof(*l->v));
		l->v[l->n++] = p;
		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : NULL;
	}
}

static inline void free_lines(struct lines *l)
{
	free(l->v);
	free(l->text);
	memset(l, 0, sizeof(*l));
}

/* An event line: neither a '#' header line nor a "CPU:N [LOST ...]" line. */
static inline bool is_event_line(const char *s)
{
	return s[0] != '#' && strncmp(s, "CPU:", 4) != 0;
}

/* Keep only the event lines, in order. */
static inline void keep_event_lines(struct lines *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (is_event_line(l->v[i]))
			l->v[n++] = l->v[i];
	l->n = n;
}

#endif
