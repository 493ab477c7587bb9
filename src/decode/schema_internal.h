/* SPDX-License-Identifier: MIT */
/*
 * schema_internal.h - what the printing stage keeps inside a schema.
 *
 * The printer compiles each event's print fmt once and keeps the programs
 * for as long as the schema lives (they point into its formats).  The
 * schema owns that state and frees it, through free_fn, before anything it
 * points into.
 */
#ifndef TRACEBUF_SCHEMA_INTERNAL_H
#define TRACEBUF_SCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksyms_job.h"
#include "tracebuf/schema.h"

/*
 * The schema's libtraceevent handle (NULL for a NULL schema); borrowed,
 * owned by the schema.  Internal: no public header names a libtraceevent
 * type (tests/t_public_names.sh); struct tb_schema is the handle callers get.
 */
struct tep_handle;
struct tep_handle *schema_tep(struct tb_schema *s);

/* Replace the printer's state (the old one is freed with its own free_fn). */
void schema_set_print_state(struct tb_schema *s, void *state, void (*free_fn)(void *));
void *schema_print_state(const struct tb_schema *s);

/*
 * Hand event id's format to libtraceevent now, if it has not seen it yet
 * (the fallback printer's first record); false if it refused it (reported).
 */
bool schema_tep_ready(struct tb_schema *s, uint32_t id);

/*
 * What tb_schema_load_format() would say of the format, said alike, but
 * nothing kept: for the files no record needed (0, -EINVAL or -ENOMEM).
 */
int schema_check_format(struct tb_schema *s, const char *file, const char *system, const char *text,
			size_t len);
/*
 * Whether schema_check_format() would find nothing to say, found without
 * saying anything or changing s: safe on several threads at once while
 * nobody changes s.  False also when memory ran out (the check then says it).
 */
bool schema_format_clean(const struct tb_schema *s, const char *system, const char *text, size_t len);

/*
 * The event loaded under *id, or under the next ID above it that has one,
 * with *id set to that ID and *system to its system; NULL after the last.
 * Skips the ID blocks no event was loaded into, so a walk of every loaded
 * event costs the blocks in use, not 65,536 look-ups:
 * for (id = 0; (f = schema_next_event(s, &id, &sys)); id++).
 */
const struct tb_format *schema_next_event(const struct tb_schema *s, uint32_t *id, const char **system);

/* Report a problem in event id's format file, at offset bytes into it. */
void schema_report_format(struct tb_schema *s, uint32_t id, uint64_t offset, const char *reason);

/* The pid's "%16s-%-7d" column of `trace` lines, made once; NULL for a pid without a name (comms.h). */
const char *schema_comm_column(const struct tb_schema *s, int pid, size_t *len);

/* The pid's thread group from saved_tgids; 0 when it has none (the kernel prints "-------"). */
int32_t schema_tgid(const struct tb_schema *s, int32_t pid);

/*
 * Hand print fmts to libtraceevent as they are, without the fix of its
 * OR-group parsing bug (schema.c): what trace-cmd, which does not fix it,
 * prints.  For events libtraceevent has not seen yet.
 */
void schema_set_tep_verbatim(struct tb_schema *s, bool verbatim);

/*
 * The number on the "ID:" line of a format file, 0 if there is none or it
 * is not a 16-bit number: which event a file is about before (or without)
 * parsing it (format.c).
 */
uint32_t format_text_id(const char *text, size_t len);

/*
 * kallsyms read and parsed on a thread of its own while the caller reads
 * on (ksyms_job.h): schema_kallsyms_start() runs fill(ctx) and the parse
 * there (0 or -ENOMEM); schema_kallsyms_filled() waits for fill and
 * returns what it returned (0 when nothing is pending).  The table is the
 * schema's - and the parse's problems are told, through the schema's diag
 * - only once schema_kallsyms_settle() has run, on the thread that started
 * it, before anything looks a symbol up or the schema is handed on.
 * settle returns what tb_schema_load_kallsyms() returns (0 when nothing is
 * pending).  A schema freed unsettled drops the problems unsaid.
 */
int schema_kallsyms_start(struct tb_schema *s, const char *file, ksyms_fill_fn *fill, void *ctx);
int schema_kallsyms_filled(struct tb_schema *s, size_t *len);
void schema_kallsyms_drop(struct tb_schema *s); /* waited for, its table and problems dropped */
bool schema_kallsyms_pending(const struct tb_schema *s);
int schema_kallsyms_settle(struct tb_schema *s);

#endif
