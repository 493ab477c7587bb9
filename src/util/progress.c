// SPDX-License-Identifier: MIT
/* The one progress line (progress.h). */
#include <stdio.h>
#include <string.h>

#include "util/progress.h"

#define REDRAW_NS 100000000LL /* at most 10 lines a second: a terminal keeps up, the work is not slowed */

static long long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

void progress_line_init(struct progress_line *p, bool on, enum progress_unit unit, const char *tool,
			const char *what, uint64_t total)
{
	*p = (struct progress_line){.on = on, .unit = unit, .tool = tool, .what = what, .total = total};
	clock_gettime(CLOCK_MONOTONIC, &p->started);
}

/* "12.3 MiB" or "123456 events" into buf. */
static void amount(const struct progress_line *p, double n, char *buf, size_t size)
{
	if (p->unit == PROGRESS_BYTES)
		snprintf(buf, size, "%.1f MiB", n / (1 << 20));
	else
		snprintf(buf, size, "%.0f events", n);
}

bool progress_line_due(const struct progress_line *p)
{
	struct timespec now;

	if (!p->on)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return !p->drawn || ns_between(&p->last, &now) >= REDRAW_NS;
}

void progress_line_draw(struct progress_line *p, uint64_t done, const char *detail, bool force)
{
	struct timespec now;
	char share[16] = "", count[32], rate[48] = "", left[32] = "";
	double secs;

	if (!p->on || (!force && !progress_line_due(p)))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	p->last = now;
	p->drawn = true;
	secs = (double)ns_between(&p->started, &now) / 1e9;
	if (p->total)
		snprintf(share, sizeof(share), "%3u%% ", (unsigned)(done >= p->total ? 100 : done * 100 / p->total));
	amount(p, (double)done, count, sizeof(count));
	if (secs > 0.2 && done) {
		amount(p, (double)done / secs, rate, sizeof(rate));
		snprintf(rate + strlen(rate), sizeof(rate) - strlen(rate), "/s");
	}
	if (secs > 0.2 && done && p->total > done)
		snprintf(left, sizeof(left), ", %.0f s left", (double)(p->total - done) / ((double)done / secs));
	fprintf(stderr, "\r\033[K%s: %s%s%s(%s%s%s%s)%s%s", p->tool, p->what ? p->what : "", p->what ? ": " : "", share,
		count, rate[0] ? ", " : "", rate, left, detail ? " " : "", detail ? detail : "");
}

void progress_line_clear(struct progress_line *p)
{
	if (p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = false;
}
