/* SPDX-License-Identifier: MIT */
/*
 * problems.h - the diagnostics a reader reports, kept for a test to check:
 *
 *   struct tb_capture_opts o = {.diag = problems_collect, .diag_ctx = &problems};
 *   problems.n = 0;  ... open or report ...
 *   ok(problems.n == 1 && ends_with(problems.p[0].file, "cpu0.raw"), ...);
 *
 * The first PROBLEMS_MAX are kept (copied: the tb_problem is the reader's);
 * every one is also printed as a TAP diagnostic.
 */
#ifndef TB_TEST_PROBLEMS_H
#define TB_TEST_PROBLEMS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tracebuf/schema.h" /* struct tb_problem */

#define PROBLEMS_MAX 32

struct problem {
	char file[PATH_MAX];
	unsigned long long offset;
	char reason[TB_PROBLEM_REASON_MAX];
	bool warning;
};

static struct problems {
	size_t n;
	struct problem p[PROBLEMS_MAX];
} problems;

static inline void problems_collect(void *ctx, const struct tb_problem *d)
{
	struct problems *ps = ctx;

	if (ps->n < PROBLEMS_MAX) {
		struct problem *p = &ps->p[ps->n++];
		snprintf(p->file, sizeof(p->file), "%s", d->file);
		p->offset = d->offset;
		snprintf(p->reason, sizeof(p->reason), "%s", d->reason);
		p->warning = d->warning;
	}
	diag("reported%s: %s: byte %llu: %s", d->warning ? " (warning)" : "", d->file,
	     (unsigned long long)d->offset, d->reason);
}

static inline bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

#endif
