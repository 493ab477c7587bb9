// SPDX-License-Identifier: MIT
/*
 * suggest.c - the closest real names to a mistyped one (see suggest.h).
 */
#include <stdio.h>
#include <string.h>

#include "suggest.h"

/* Edit distance of a and b, capped at cap + 1 (names are short: one row of 256). */
static unsigned distance(const char *a, const char *b, unsigned cap)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[256];

	if (la > 255 || lb > 255)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

void suggest_init(struct suggest *s, const char *wanted)
{
	memset(s, 0, sizeof(*s));
	s->wanted = wanted;
}

void suggest_offer(struct suggest *s, const char *name)
{
	const char *colon = strchr(name, ':');
	/* "NAME" wanted: compared with the event part of "SYSTEM:NAME" */
	const char *part = !strchr(s->wanted, ':') && colon ? colon + 1 : name;
	size_t longer = strlen(part) > strlen(s->wanted) ? strlen(part) : strlen(s->wanted);
	unsigned cap = longer / 3 > 2 ? (unsigned)(longer / 3) : 2;
	unsigned d = distance(s->wanted, part, cap);
	int at;

	if (d > cap || d == 0)
		return;
	for (at = 0; at < s->n && s->dist[at] <= d; at++)
		if (!strcmp(s->best[at], name))
			return;
	if (at >= SUGGEST_MAX)
		return;
	for (int k = s->n < SUGGEST_MAX ? s->n : SUGGEST_MAX - 1; k > at; k--) {
		memcpy(s->best[k], s->best[k - 1], sizeof(s->best[k]));
		s->dist[k] = s->dist[k - 1];
	}
	snprintf(s->best[at], sizeof(s->best[at]), "%s", name);
	s->dist[at] = d;
	if (s->n < SUGGEST_MAX)
		s->n++;
}

void suggest_offer2(struct suggest *s, const char *system, const char *name)
{
	char full[256];

	snprintf(full, sizeof(full), "%s:%s", system, name);
	suggest_offer(s, full);
}

const char *suggest_text(const struct suggest *s, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < s->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "; the closest: ", s->best[i]);
	return buf;
}
