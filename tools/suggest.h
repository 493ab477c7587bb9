/* SPDX-License-Identifier: MIT */
/*
 * suggest.h - the closest real names to a name that matched nothing
 * ("sched:sched_swich" -> sched:sched_switch), for error messages.
 *
 * Names are offered one by one; the few closest by edit distance (each
 * insertion, deletion or substitution of a character counts 1) are kept,
 * and only those close enough to be a slip: at most a third of the
 * longer name's characters, at least 2.  A wanted name with no system
 * ("sched_swich") is compared with the event part of each "SYSTEM:NAME".
 */
#ifndef TRACEBUF_TOOLS_SUGGEST_H
#define TRACEBUF_TOOLS_SUGGEST_H

#include <stddef.h>

#define SUGGEST_MAX 3

struct suggest {
	const char *wanted;
	char best[SUGGEST_MAX][256]; /* closest first */
	unsigned dist[SUGGEST_MAX];
	int n;
};

void suggest_init(struct suggest *s, const char *wanted);
/* Offer a real name, "SYSTEM:NAME" (or a system alone). */
void suggest_offer(struct suggest *s, const char *name);
/* Offer "system:name". */
void suggest_offer2(struct suggest *s, const char *system, const char *name);
/* "; the closest: a, b" (or "" when none is close) into buf. */
const char *suggest_text(const struct suggest *s, char *buf, size_t size);

#endif
