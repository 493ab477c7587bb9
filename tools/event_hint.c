// SPDX-License-Identifier: MIT
/*
 * event_hint.c - the command that records a missing event, and the real
 * names nearest to one that is no event (event_hint.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_hint.h"
#include "lib_internal.h"
#include "tracebuf/input.h"
#include "tracebuf/schema.h"

#define MAX_EVENT_ID 65535
#define NEAREST	     3

void hint_how_to_record(const char *input, const char *events, const char *record_flags)
{
	enum tb_input_kind kind = TB_INPUT_UNKNOWN;
	char flags[512];

	tb_input_identify(input, NULL, NULL, true, &kind);
	if (kind == TB_INPUT_TRACEDAT) {
		snprintf(flags, sizeof(flags), "%s", record_flags ? record_flags : "--kernel ");
		if (!record_flags)
			snprintf(flags + strlen(flags), sizeof(flags) - strlen(flags), "%s", events);
		fprintf(stderr, "  record it with:  tracebuf record %s -o FILE.dat -- CMD ARGS\n", flags);
		/* trace-cmd's spelling for plain events; a flag of ours (--offcpu) has none in one word */
		if (!record_flags)
			fprintf(stderr, "             or:  trace-cmd record -e %s CMD ARGS\n", events);
		return;
	}
	snprintf(flags, sizeof(flags), "%s%s", record_flags ? record_flags : "-e ", record_flags ? "" : events);
	fprintf(stderr, "  record it with:  tracebuf capture %s -o DIR -- CMD ARGS%s\n", flags,
		kind == TB_INPUT_LIVE_INSTANCE ? "   (a live instance: enable it in the instance's events/)" : "");
}

/* Levenshtein distance of a and b, two rows of the table; SIZE_MAX for names too long to matter. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[2][129];

	if (la > 128 || lb > 128)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *prev = row[(i - 1) & 1], *cur = row[i & 1];
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			cur[j] = best;
		}
	}
	return row[la & 1][lb];
}

/* The NEAREST names seen so far, nearest first; a name comes once. */
struct nearest {
	const char *want_sys, *want_event; /* the name asked for, split */
	bool found;			   /* it is an event */
	bool system_seen;		   /* the schema has events of the system asked for */
	bool kernel_listed;		   /* the running kernel's events were read */
	char names[NEAREST][128];
	size_t dist[NEAREST];
	int n;
};

static void consider(struct nearest *near, const char *sys, const char *event)
{
	char full[128];
	size_t d;
	int at;

	near->system_seen |= near->want_sys[0] && !strcmp(sys, near->want_sys);
	if (!strcmp(event, near->want_event) && (!near->want_sys[0] || !strcmp(sys, near->want_sys))) {
		near->found = true;
		return;
	}
	snprintf(full, sizeof(full), "%s:%s", sys, event);
	d = edit_distance(near->want_event, event);
	if (near->want_sys[0]) {
		size_t ds = edit_distance(near->want_sys, sys);
		d = ds == SIZE_MAX || d == SIZE_MAX ? SIZE_MAX : d + ds;
	}
	/* Near enough to be the name meant: a third of it mistyped at most (two letters for short ones). */
	size_t len = strlen(near->want_event);
	if (d == SIZE_MAX || d > (len / 3 > 2 ? len / 3 : 2))
		return;
	for (int i = 0; i < near->n; i++)
		if (!strcmp(near->names[i], full))
			return;
	for (at = near->n; at > 0 && near->dist[at - 1] > d; at--)
		;
	if (at >= NEAREST)
		return;
	int last = near->n < NEAREST ? near->n : NEAREST - 1;
	memmove(near->names[at + 1], near->names[at], (size_t)(last - at) * sizeof(near->names[0]));
	memmove(&near->dist[at + 1], &near->dist[at], (size_t)(last - at) * sizeof(near->dist[0]));
	snprintf(near->names[at], sizeof(near->names[at]), "%s", full);
	near->dist[at] = d;
	if (near->n < NEAREST)
		near->n++;
}

/* The running kernel's events, "system:event" a line, as tracefs lists them. */
static void consider_kernel(struct nearest *near)
{
	const char *root = tracefs_mount();
	char *text = root ? tracefs_read(root, "available_events", NULL) : NULL;

	near->kernel_listed = text != NULL;
	for (char *line = text, *next; line && *line; line = next) {
		char *colon;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if ((colon = strchr(line, ':'))) {
			*colon = '\0';
			consider(near, line, colon + 1);
		}
	}
	free(text);
}

bool event_exists(struct tb_schema *s, const char *name, char *closest, size_t size)
{
	const char *sep = strpbrk(name, ":/");
	char sys[128] = "";
	struct nearest near = {.want_sys = sys, .want_event = sep ? sep + 1 : name};

	if (sep)
		snprintf(sys, sizeof(sys), "%.*s", (int)(sep - name), name);
	for (uint32_t id = 1; s && id <= MAX_EVENT_ID && !near.found; id++) {
		const char *system = "";
		const struct tb_format *f = tb_schema_event(s, id, &system);
		if (f)
			consider(&near, system, f->name);
	}
	if (!near.found)
		consider_kernel(&near);
	if (closest && size) {
		closest[0] = '\0';
		for (int i = 0; i < near.n; i++)
			snprintf(closest + strlen(closest), size - strlen(closest), "%s%s", i ? ", " : "",
				 near.names[i]);
	}
	/*
	 * Without the kernel's list a kernel event the input lacks cannot be
	 * told from a typo: only a name in a system the input has (a
	 * program's, say) is surely none.
	 */
	return near.found || (!near.kernel_listed && !near.system_seen);
}
