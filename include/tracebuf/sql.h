/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/sql.h - SQL over a trace loaded into SQLite (docs/sql.md says
 * which tables a trace becomes).  Loading is an exporter kind,
 * "sqlite" (tracebuf/export.h: tb_export_run with tb_export_find("sqlite"),
 * opts.host and opts.sql_text); this runs queries on the database it made.
 *
 * Ownership: nothing is kept past the call; the FILEs stay the caller's.
 */
#ifndef TRACEBUF_SQL_H
#define TRACEBUF_SQL_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tb_sql_format {
	TB_SQL_TEXT, /* columns aligned, a header line and a rule under it */
	TB_SQL_CSV,  /* RFC 4180, a header line; NULL is an empty field */
	TB_SQL_JSON, /* one array of objects per statement that returns rows; blobs as hex */
};

/*
 * Run every statement of sql (one or several, ';'-separated) on the SQLite
 * database at db, each result printed to out in fmt (results apart by a
 * blank line in text).  0, or -EINVAL when a statement fails: SQLite's
 * message is printed on err as "tool: query: MESSAGE" and no later
 * statement runs; -EIO when the database cannot be opened or out fails.
 */
int tb_sql_query(const char *db, const char *sql, enum tb_sql_format fmt, FILE *out, FILE *err,
		 const char *tool);

#ifdef __cplusplus
}
#endif
#endif
