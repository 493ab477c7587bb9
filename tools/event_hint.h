/* SPDX-License-Identifier: MIT */
/*
 * event_hint.h - what a command says when the events it reads are not in
 * its input: the command that would have recorded them (one for each kind
 * of input: `tracebuf record` writes trace.dat files, `tracebuf capture`
 * capture directories and reads live instances), and for a name that is
 * no event at all - not in the input, not in the running kernel - the
 * closest real names, so a typo is told apart from an event not recorded.
 */
#ifndef TRACEBUF_TOOLS_EVENT_HINT_H
#define TRACEBUF_TOOLS_EVENT_HINT_H

#include <stdbool.h>
#include <stddef.h>

#include "tracebuf/schema.h"

/*
 * Say on stderr how to record events for an input like input:
 * "  record it with:  tracebuf record --kernel EVENTS -o FILE.dat -- CMD ARGS"
 * for a trace.dat, capture's spelling for the other kinds.  record_flags
 * (e.g. "--offcpu") replaces "--kernel EVENTS" / "-e EVENTS" when the
 * command has a flag of its own for what is missing; NULL: none.
 */
void hint_how_to_record(const char *input, const char *events, const char *record_flags);

/*
 * Whether name ([SYSTEM:]EVENT, or SYSTEM/EVENT) is an event anywhere:
 * in schema s, or among the running kernel's events (tracefs, when
 * mounted; without it, a name is taken to be a kernel event unless its
 * system is one of the schema's).  When not, closest gets up to three comma-separated real names
 * nearest to it by edit distance ("" when none is near).
 */
bool event_exists(struct tb_schema *s, const char *name, char *closest, size_t size);

#endif
