/* SPDX-License-Identifier: MIT */
/*
 * lib_internal.h - the library's internal headers the CLI uses, in one place.
 *
 * Everything else the CLI calls is public API (include/tracebuf/).  These
 * are not: their shape may change with any commit, and only the tracebuf
 * command, built from the same tree, may use them.  A new use belongs here
 * with its reason, or better in a public header.
 *
 *   export/capture_save.h  saving a tracefs instance as a capture directory
 *                          (capture, record, snapshot: the CLI keeps the
 *                          arguments and the instance's lifecycle)
 *   export/tracefs.h       finding tracefs and making/removing instances
 *                          (and util/files.h's directory helpers with it)
 *   decode/usdt_notes.h    an ELF object's SDT notes (list -U names each
 *                          event's USDT probe)
 *   input/shm_session.h    a shm session's window and descriptions as a
 *                          capture directory or a capture (record,
 *                          snapshot, recover, hist --session: the CLI keeps
 *                          the arguments and the session's lifecycle)
 *   util/elfsyms.h         ELF symbol tables, for uprobe addresses
 *   util/grow.h            growing an array (record's thread names and
 *                          event names: the library's one way to do it)
 *   util/progress.h        the progress line the exporters draw, drawn by
 *                          the CLI too (report, hist, offcpu, record)
 */
#ifndef TRACEBUF_TOOLS_LIB_INTERNAL_H
#define TRACEBUF_TOOLS_LIB_INTERNAL_H

#include "decode/usdt_notes.h"
#include "export/capture_save.h"
#include "export/tracefs.h"
#include "input/shm_session.h"
#include "util/elfsyms.h"
#include "util/grow.h"
#include "util/progress.h"

#endif
