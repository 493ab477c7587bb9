/* SPDX-License-Identifier: MIT */
/*
 * sql_record.h - what every SQL writer (export_sqlite.c, export_clickhouse.c)
 * does with a merged record before it makes the record's rows: the checks
 * report makes too, so a table holds what report prints and the damage is
 * said once, with its file and byte.
 *
 * Ownership: nothing is kept; the id_seen bitmap is the caller's (65536 bits,
 * zeroed at its begin).
 */
#ifndef TRACEBUF_EXPORT_SQL_RECORD_H
#define TRACEBUF_EXPORT_SQL_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/merge.h"
#include "tracebuf/capture.h"
#include "tracebuf/schema.h"

#define SQL_ID_SEEN_BYTES (65536 / 8)

/* The record's common_pid (-1 when it is too short to have one). */
int64_t sql_record_pid(const struct merged_record *r);

/*
 * The first record of each ID lets the capture tell what its format file
 * had wrong (as report does); a record of no format (f NULL) is said once
 * per ID.
 */
void sql_record_first_of_id(struct tb_capture *c, uint8_t *id_seen, const struct merged_record *r,
			    const struct tb_format *f);

/*
 * Whether r holds what its format says; else said (file, byte) and left
 * out, as report leaves it.  The kernel's own ftrace events are written
 * shorter than their formats (kernel_stack holds the entries it has, not
 * caller[8]): as report's printers of them, the row takes what is there.
 */
bool sql_record_intact(struct tb_capture *c, const struct merged_record *r, const struct tb_format *f,
		       const char *sys);

/* The input's base name (trailing '/' ignored): the default host column, one host per trace. */
const char *sql_default_host(const char *path);

#endif
