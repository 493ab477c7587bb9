/* SPDX-License-Identifier: MIT */
/*
 * progress.h - the one progress line: long work (an export, a report of a
 * big file, record's drain) redraws one line on stderr, at most 10 times a
 * second: the share done when the total is known, the amount, the rate,
 * the time left, and what the caller adds.  Only when the caller asks (the
 * CLI asks when stderr is a terminal, or --progress), so logs and pipes
 * see none of it.  libc only; nothing here is public API.
 */
#ifndef TRACEBUF_UTIL_PROGRESS_H
#define TRACEBUF_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum progress_unit { PROGRESS_BYTES, PROGRESS_EVENTS };

struct progress_line {
	bool on, drawn;
	enum progress_unit unit;
	const char *tool; /* "tracebuf convert" */
	const char *what; /* the file, or NULL */
	uint64_t total;	  /* in unit; 0: unknown (no share, no time left) */
	struct timespec started, last;
};

/* p ready for progress_line_draw: drawn only when on. */
void progress_line_init(struct progress_line *p, bool on, enum progress_unit unit, const char *tool,
			const char *what, uint64_t total);

/*
 * done of p->total so far, detail (NULL: none) after it; redrawn when a
 * tenth of a second passed since the last draw, or force.
 */
void progress_line_draw(struct progress_line *p, uint64_t done, const char *detail, bool force);

/* Whether a draw now would be shown (on, and a tenth of a second since the last): skip costly details when not. */
bool progress_line_due(const struct progress_line *p);

/* The line taken away, so what is said after it starts on a clean line. */
void progress_line_clear(struct progress_line *p);

#endif
