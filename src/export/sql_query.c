// SPDX-License-Identifier: MIT
/*
 * sql_query.c - queries on a trace's SQLite database, printed as aligned
 * text, CSV or JSON (tracebuf/sql.h).  Text is aligned, so a result is
 * held whole before it is printed; CSV and JSON stream row by row.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "tracebuf/sql.h"
#include "util/grow.h"

/* A result held for alignment: every cell as its text (NULL: an empty cell). */
struct held {
	char **cells;
	size_t n, cap;
	int ncols;
	bool oom;
};

static void hold(struct held *h, const char *text)
{
	char **v = tb__grow(h->cells, &h->cap, h->n + 1, sizeof(*v), 64);
	char *copy = text ? strdup(text) : NULL;

	if (!v || (text && !copy)) {
		free(copy);
		h->oom = true;
		return;
	}
	h->cells = v;
	h->cells[h->n++] = copy;
}

static void print_held(const struct held *h, FILE *out)
{
	size_t *width = calloc((size_t)h->ncols, sizeof(*width));

	if (!width)
		return;
	for (size_t i = 0; i < h->n; i++) {
		size_t w = h->cells[i] ? strlen(h->cells[i]) : 0;
		if (w > width[i % (size_t)h->ncols])
			width[i % (size_t)h->ncols] = w;
	}
	for (size_t i = 0; i < h->n; i++) {
		int col = (int)(i % (size_t)h->ncols);
		bool last = col == h->ncols - 1;
		const char *cell = h->cells[i] ? h->cells[i] : "";
		if (last)
			fprintf(out, "%s\n", cell);
		else
			fprintf(out, "%-*s  ", (int)width[col], cell);
		if (i + 1 == (size_t)h->ncols) /* the rule under the header */
			for (int c = 0; c < h->ncols; c++)
				fprintf(out, "%.*s%s", (int)width[c],
					"----------------------------------------------------------------", c + 1 < h->ncols ? "  " : "\n");
	}
	free(width);
}

static void held_free(struct held *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->cells[i]);
	free(h->cells);
}

static void csv_cell(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void json_string(FILE *out, const unsigned char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = s[i];
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void json_value(FILE *out, sqlite3_stmt *st, int col)
{
	const unsigned char *p;
	int n;

	switch (sqlite3_column_type(st, col)) {
	case SQLITE_NULL:
		fputs("null", out);
		break;
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(st, col));
		break;
	case SQLITE_FLOAT:
		fprintf(out, "%.17g", sqlite3_column_double(st, col));
		break;
	case SQLITE_BLOB:
		p = sqlite3_column_blob(st, col);
		n = sqlite3_column_bytes(st, col);
		fputc('"', out);
		for (int i = 0; i < n; i++)
			fprintf(out, "%02x", p[i]);
		fputc('"', out);
		break;
	default:
		p = sqlite3_column_text(st, col);
		json_string(out, p, (size_t)sqlite3_column_bytes(st, col));
	}
}

/* A cell as text; a blob as hex (x'..' would not align); NULL stays NULL. */
static const char *cell_text(sqlite3_stmt *st, int col, char **scratch)
{
	if (sqlite3_column_type(st, col) != SQLITE_BLOB)
		return (const char *)sqlite3_column_text(st, col);
	const unsigned char *p = sqlite3_column_blob(st, col);
	int n = sqlite3_column_bytes(st, col);
	char *hex = realloc(*scratch, 2 * (size_t)n + 1);
	if (!hex)
		return NULL;
	*scratch = hex;
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", p[i]);
	hex[2 * n] = '\0';
	return hex;
}

/* One header line (text, CSV) or nothing (JSON: names go with each value). */
static void header(sqlite3_stmt *st, enum tb_sql_format fmt, FILE *out, struct held *h)
{
	for (int c = 0; c < h->ncols; c++) {
		const char *name = sqlite3_column_name(st, c);
		if (fmt == TB_SQL_TEXT) {
			hold(h, name);
		} else if (fmt == TB_SQL_CSV) {
			csv_cell(out, name);
			fputc(c + 1 < h->ncols ? ',' : '\n', out);
		}
	}
}

static void row(sqlite3_stmt *st, enum tb_sql_format fmt, FILE *out, struct held *h, size_t nrow, char **scratch)
{
	if (fmt == TB_SQL_JSON)
		fputs(nrow ? ",\n {" : "\n {", out);
	for (int c = 0; c < h->ncols; c++) {
		if (fmt == TB_SQL_JSON) {
			json_string(out, (const unsigned char *)sqlite3_column_name(st, c),
				    strlen(sqlite3_column_name(st, c)));
			fputc(':', out);
			json_value(out, st, c);
			fputs(c + 1 < h->ncols ? ", " : "}", out);
		} else if (fmt == TB_SQL_TEXT) {
			hold(h, cell_text(st, c, scratch));
		} else {
			csv_cell(out, cell_text(st, c, scratch));
			fputc(c + 1 < h->ncols ? ',' : '\n', out);
		}
	}
}

/* Step st to its end, printing its rows; SQLITE_DONE or SQLite's error. */
static int print_statement(sqlite3_stmt *st, enum tb_sql_format fmt, FILE *out, bool *printed)
{
	struct held h = {.ncols = sqlite3_column_count(st)};
	char *scratch = NULL;
	size_t nrow = 0;
	int rc;

	if (h.ncols && *printed && fmt == TB_SQL_TEXT)
		fputc('\n', out);
	if (h.ncols)
		header(st, fmt, out, &h);
	if (h.ncols && fmt == TB_SQL_JSON)
		fputc('[', out);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		row(st, fmt, out, &h, nrow++, &scratch);
	if (h.ncols && fmt == TB_SQL_JSON)
		fputs(nrow ? "\n]\n" : "]\n", out);
	if (rc == SQLITE_DONE && fmt == TB_SQL_TEXT && h.ncols && !h.oom)
		print_held(&h, out);
	*printed |= h.ncols > 0;
	held_free(&h);
	free(scratch);
	return h.oom ? SQLITE_NOMEM : rc;
}

int tb_sql_query(const char *path, const char *sql, enum tb_sql_format fmt, FILE *out, FILE *err, const char *tool)
{
	sqlite3 *db = NULL;
	const char *next = sql;
	bool printed = false;
	int rc = 0;

	if (!path || !sql || !out || !err)
		return -EINVAL;
	tool = tool ? tool : "tracebuf";
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		fprintf(err, "%s: %s: %s\n", tool, path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	while (rc == 0 && next && *next) {
		sqlite3_stmt *st = NULL;
		const char *tail = NULL;
		if (sqlite3_prepare_v2(db, next, -1, &st, &tail) != SQLITE_OK) {
			fprintf(err, "%s: query: %s\n", tool, sqlite3_errmsg(db));
			rc = -EINVAL;
		} else if (st && print_statement(st, fmt, out, &printed) != SQLITE_DONE) {
			fprintf(err, "%s: query: %s\n", tool, sqlite3_errmsg(db));
			rc = -EINVAL;
		}
		sqlite3_finalize(st);
		next = tail;
	}
	sqlite3_close(db);
	if (rc == 0 && (fflush(out) || ferror(out)))
		rc = -EIO;
	return rc;
}
