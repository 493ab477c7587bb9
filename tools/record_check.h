/* SPDX-License-Identifier: MIT */
/*
 * record_check.h - `record -e` items checked against the events the traced
 * program declares, so that a misspelt name ("pool:requst") is an error
 * naming the closest real ones, not an empty recording.
 *
 * The program's processes describe their events in the session's formats
 * directory (src/source/session.c): DIR/PID/formats/SYSTEM/NAME.format,
 * complete once DIR/PID/trace_clock exists (tb_events_dump writes it
 * last).  Items follow the registry's rules (tracebuf/events.h): globs,
 * "NAME" for "*:NAME", "SYSTEM:" for "SYSTEM:*".
 */
#ifndef TRACEBUF_TOOLS_RECORD_CHECK_H
#define TRACEBUF_TOOLS_RECORD_CHECK_H

/*
 * Check every item of spec (comma-separated) against the events described
 * in desc_dir: by process pid only when pid > 0, else by every process.
 * 0 when each matches some event; 1 when nothing (pid's description) is
 * complete yet; -ENOENT when an item matches none (said on stderr, prefixed
 * "tracebuf CMD: ", with the closest names); -ENOMEM.
 */
int record_check_events(const char *cmd, const char *desc_dir, const char *spec, int pid);

#endif
