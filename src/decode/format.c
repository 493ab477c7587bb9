// SPDX-License-Identifier: MIT
/*
 * format.c - parse the kernel's descriptions of its trace data:
 * events/header_page, events/header_event and the per-event format files.
 *
 * These files come from tracefs or from a capture somebody copied, so they
 * are parsed strictly: every line must be one the kernel writes, every
 * number must fit, every field must lie inside a record that fits in a
 * sub-buffer.  The point is that whatever is accepted here can be handed
 * to libtraceevent and used to read records without surprises, and that
 * whatever is rejected is reported with the byte offset of the problem.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "schema_internal.h"
#include "tracebuf/page.h"
#include "tracebuf/schema.h"
#include "util/grow.h"

#define MAX_FIELDS 1024 /* far more than any kernel event has */


/* ------------------------------------------------------------- lines */

/* One line of the input, without its newline; off is its byte offset. */
struct line {
	const char *p;
	size_t len;
	size_t off;
};

struct lines {
	const char *text;
	size_t len;
	size_t pos;
};

/* 1 with *l filled, 0 at the end, -EINVAL on a NUL byte. */
static int next_line(struct lines *ls, struct line *l, struct tb_problem *err)
{
	const char *nl, *nul;

	if (ls->pos >= ls->len)
		return 0;
	l->p = ls->text + ls->pos;
	l->off = ls->pos;
	nl = memchr(l->p, '\n', ls->len - ls->pos);
	l->len = nl ? (size_t)(nl - l->p) : ls->len - ls->pos;
	nul = memchr(l->p, '\0', l->len);
	if (nul)
		return diag_fail(err, l->off + (size_t)(nul - l->p), "NUL byte in a text file");
	ls->pos += l->len + (nl ? 1 : 0);
	return 1;
}

static size_t skip_blanks(const struct line *l, size_t i)
{
	while (i < l->len && (l->p[i] == ' ' || l->p[i] == '\t'))
		i++;
	return i;
}

static bool line_blank(const struct line *l)
{
	return skip_blanks(l, 0) == l->len;
}

/* Does the line, after leading blanks, start with word?  *after = index past it. */
static bool starts_with(const struct line *l, const char *word, size_t *after)
{
	size_t i = skip_blanks(l, 0), n = strlen(word);

	if (l->len - i < n || memcmp(l->p + i, word, n) != 0)
		return false;
	*after = i + n;
	return true;
}

/*
 * The classes of bytes the parser asks about, in ASCII whatever the
 * locale, by one look-up: each format has thousands of bytes, and a call
 * into ctype (or strchr over a set) per byte was most of a format's parse.
 */
enum { IDENT = 1, DECL = 2 }; /* C identifiers; what field declarations are made of */
static const unsigned char byte_class[256] = {
	['0'] = IDENT | DECL, ['1'] = IDENT | DECL, ['2'] = IDENT | DECL, ['3'] = IDENT | DECL,
	['4'] = IDENT | DECL, ['5'] = IDENT | DECL, ['6'] = IDENT | DECL, ['7'] = IDENT | DECL,
	['8'] = IDENT | DECL, ['9'] = IDENT | DECL, ['A'] = IDENT | DECL, ['B'] = IDENT | DECL,
	['C'] = IDENT | DECL, ['D'] = IDENT | DECL, ['E'] = IDENT | DECL, ['F'] = IDENT | DECL,
	['G'] = IDENT | DECL, ['H'] = IDENT | DECL, ['I'] = IDENT | DECL, ['J'] = IDENT | DECL,
	['K'] = IDENT | DECL, ['L'] = IDENT | DECL, ['M'] = IDENT | DECL, ['N'] = IDENT | DECL,
	['O'] = IDENT | DECL, ['P'] = IDENT | DECL, ['Q'] = IDENT | DECL, ['R'] = IDENT | DECL,
	['S'] = IDENT | DECL, ['T'] = IDENT | DECL, ['U'] = IDENT | DECL, ['V'] = IDENT | DECL,
	['W'] = IDENT | DECL, ['X'] = IDENT | DECL, ['Y'] = IDENT | DECL, ['Z'] = IDENT | DECL,
	['a'] = IDENT | DECL, ['b'] = IDENT | DECL, ['c'] = IDENT | DECL, ['d'] = IDENT | DECL,
	['e'] = IDENT | DECL, ['f'] = IDENT | DECL, ['g'] = IDENT | DECL, ['h'] = IDENT | DECL,
	['i'] = IDENT | DECL, ['j'] = IDENT | DECL, ['k'] = IDENT | DECL, ['l'] = IDENT | DECL,
	['m'] = IDENT | DECL, ['n'] = IDENT | DECL, ['o'] = IDENT | DECL, ['p'] = IDENT | DECL,
	['q'] = IDENT | DECL, ['r'] = IDENT | DECL, ['s'] = IDENT | DECL, ['t'] = IDENT | DECL,
	['u'] = IDENT | DECL, ['v'] = IDENT | DECL, ['w'] = IDENT | DECL, ['x'] = IDENT | DECL,
	['y'] = IDENT | DECL, ['z'] = IDENT | DECL, ['_'] = IDENT | DECL,
	[' '] = DECL, ['\t'] = DECL, ['*'] = DECL, ['['] = DECL, [']'] = DECL,
};

static bool is_digit(char c)
{
	return (unsigned)(unsigned char)c - '0' < 10u;
}

static bool is_ident_char(char c)
{
	return byte_class[(unsigned char)c] & IDENT;
}

/* Decimal number at l->p[*i]; at most 10 digits and UINT32_MAX. */
static int parse_u32(const struct line *l, size_t *i, uint32_t *out, const char *what,
		     struct tb_problem *err)
{
	uint64_t v = 0;
	size_t start = *i;

	while (*i < l->len && is_digit(l->p[*i]) && *i - start < 11)
		v = v * 10 + (uint64_t)(l->p[(*i)++] - '0');
	if (*i == start)
		return diag_fail(err, l->off + start, "%s: expected a decimal number", what);
	if (*i - start > 10 || v > UINT32_MAX)
		return diag_fail(err, l->off + start, "%s: number too large", what);
	*out = (uint32_t)v;
	return 0;
}

/* ------------------------------------------------------- field lines */

/* "field:DECL;  offset:N;  size:N;  signed:N;" as the kernel prints it. */
struct field_line {
	size_t decl_start, decl_len; /* indexes into the line */
	uint32_t offset, size, is_signed;
};

/* "KEY:N;" after optional blanks; n is strlen(key). */
static int parse_key_number(const struct line *l, size_t *i, const char *key, size_t n, uint32_t *out,
			    struct tb_problem *err)
{

	*i = skip_blanks(l, *i);
	if (l->len - *i < n + 1 || memcmp(l->p + *i, key, n) != 0 || l->p[*i + n] != ':')
		return diag_fail(err, l->off + *i, "field line: expected '%s:'", key);
	*i += n + 1;
	*i = skip_blanks(l, *i);
	if (parse_u32(l, i, out, key, err) < 0)
		return -EINVAL;
	if (*i >= l->len || l->p[*i] != ';')
		return diag_fail(err, l->off + *i, "field line: expected ';' after %s", key);
	(*i)++;
	return 0;
}

static int parse_field_line(const struct line *l, struct field_line *fl, struct tb_problem *err)
{
	size_t i, semi;

	if (!starts_with(l, "field:", &i))
		return diag_fail(err, l->off, "expected a 'field:' line");
	fl->decl_start = i;
	for (semi = i; semi < l->len && l->p[semi] != ';'; semi++)
		;
	if (semi == l->len)
		return diag_fail(err, l->off + i, "field line: declaration has no ';'");
	fl->decl_len = semi - i;
	i = semi + 1;
	if (parse_key_number(l, &i, "offset", 6, &fl->offset, err) < 0 ||
	    parse_key_number(l, &i, "size", 4, &fl->size, err) < 0)
		return -EINVAL;
	fl->is_signed = 0;
	if (skip_blanks(l, i) < l->len) {
		if (parse_key_number(l, &i, "signed", 6, &fl->is_signed, err) < 0)
			return -EINVAL;
		if (fl->is_signed > 1)
			return diag_fail(err, l->off + i - 2, "field line: signed must be 0 or 1");
	}
	if (skip_blanks(l, i) != l->len)
		return diag_fail(err, l->off + i, "field line: unexpected text after the last key");
	return 0;
}

/* The declaration characters that start d[0..len), which need not be NUL-terminated. */
static size_t decl_span(const char *d, size_t len)
{
	size_t i = 0;

	while (i < len && byte_class[(unsigned char)d[i]] & DECL)
		i++;
	return i;
}

/* Brackets only as "[N]" or "[]" groups (N a number or a name), never nested. */
static size_t bad_bracket(const char *d, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (d[i] == ']')
			return i;
		if (d[i] != '[')
			continue;
		while (++i < len && is_ident_char(d[i]))
			;
		if (i == len || d[i] != ']')
			return i;
	}
	return len;
}

/* Length of d[0..len) without trailing blanks. */
static size_t trim_end(const char *d, size_t len)
{
	while (len > 0 && (d[len - 1] == ' ' || d[len - 1] == '\t'))
		len--;
	return len;
}

/*
 * Split "TYPE NAME" or "TYPE NAME[N]" into the name and what kind of field
 * it is.  The name is the last identifier; a type must precede it.
 */
static int parse_decl(const struct line *l, const struct field_line *fl, struct tb_schema_field *f,
		      bool *is_array, struct tb_problem *err)
{
	const char *d = l->p + fl->decl_start, *type;
	size_t at = l->off + fl->decl_start, end = trim_end(d, fl->decl_len), start, type_len, lead;
	size_t odd = decl_span(d, fl->decl_len);

	/* C declarations only: libtraceevent's own parser is not safe with the rest. */
	if (odd < fl->decl_len)
		return diag_fail(err, at + odd, "unexpected character in field declaration");
	if ((odd = bad_bracket(d, fl->decl_len)) < fl->decl_len)
		return diag_fail(err, at + odd, "misplaced bracket in field declaration");
	*is_array = end > 0 && d[end - 1] == ']';
	if (*is_array) {
		const char *open = memrchr(d, '[', end);
		if (!open)
			return diag_fail(err, at + end - 1, "field declaration: ']' without '['");
		end = trim_end(d, (size_t)(open - d));
	}
	for (start = end; start > 0 && is_ident_char(d[start - 1]);)
		start--;
	if (start == end || is_digit(d[start]))
		return diag_fail(err, at + end, "field declaration: no field name");
	if (end - start >= TB_NAME_MAX)
		return diag_fail(err, at + start, "field name longer than %d bytes", TB_NAME_MAX - 1);
	type_len = trim_end(d, start);
	if (type_len == 0)
		return diag_fail(err, at, "field declaration: no type before the name");
	memcpy(f->name, d + start, end - start);
	f->name[end - start] = '\0';
	lead = 0; /* the type has a non-blank byte, so this stops inside it */
	while (d[lead] == ' ' || d[lead] == '\t')
		lead++;
	type = d + lead;
	type_len -= lead;
	if (type_len >= TB_NAME_MAX)
		return diag_fail(err, at + lead, "field type longer than %d bytes", TB_NAME_MAX - 1);
	memcpy(f->type, type, type_len);
	f->type[type_len] = '\0';
	f->is_array = *is_array;
	f->kind = TB_SCHEMA_FIELD_STATIC;
	if (type_len >= 10 && memcmp(type, "__data_loc", 10) == 0)
		f->kind = TB_SCHEMA_FIELD_DATA_LOC;
	else if (type_len >= 9 && memcmp(type, "__rel_loc", 9) == 0)
		f->kind = TB_SCHEMA_FIELD_REL_LOC;
	f->is_string = (*is_array || f->kind != TB_SCHEMA_FIELD_STATIC) && memmem(type, type_len, "char", 4);
	return 0;
}

/* Size and position rules every field must obey. */
static int check_field_extent(const struct line *l, const struct tb_schema_field *f, bool is_array,
			      struct tb_problem *err)
{
	uint64_t end = (uint64_t)f->offset + f->size;

	if (end > TB_PAGE_MAX_SIZE)
		return diag_fail(err, l->off, "field %s: offset %u + size %u exceeds any sub-buffer", f->name,
			    f->offset, f->size);
	if (f->kind != TB_SCHEMA_FIELD_STATIC && f->size != 4 && !(f->kind == TB_SCHEMA_FIELD_DATA_LOC && f->size == 2))
		return diag_fail(err, l->off, "field %s: a dynamic field must be 4 bytes, not %u", f->name,
			    f->size);
	if (f->size == 0 && !is_array)
		return diag_fail(err, l->off, "field %s: size 0 for a field that is not an array", f->name);
	return 0;
}

static int parse_field(const struct line *l, struct tb_schema_field *f, struct tb_problem *err)
{
	struct field_line fl;
	bool is_array = false;

	memset(f, 0, sizeof(*f));
	if (parse_field_line(l, &fl, err) < 0 || parse_decl(l, &fl, f, &is_array, err) < 0)
		return -EINVAL;
	f->offset = fl.offset;
	f->size = fl.size;
	f->is_signed = fl.is_signed != 0;
	return check_field_extent(l, f, is_array, err);
}

/* -------------------------------------------------------- header_page */

/* Byte offsets of the timestamp, commit and data lines; SIZE_MAX if absent. */
enum { HP_TIMESTAMP, HP_COMMIT, HP_DATA, HP_FIELDS };
static const char *const hp_names[HP_FIELDS] = {"timestamp", "commit", "data"};

static int check_header_page(const struct tb_header_page *hp, const size_t at[HP_FIELDS],
			     size_t len, struct tb_problem *err)
{
	for (int i = 0; i < HP_FIELDS; i++)
		if (at[i] == SIZE_MAX)
			return diag_fail(err, len, "header_page lacks the %s field", hp_names[i]);
	if (hp->timestamp_offset != 0 || hp->timestamp_size != 8)
		return diag_fail(err, at[HP_TIMESTAMP], "timestamp must be 8 bytes at offset 0");
	if (hp->commit_offset != 8 || hp->commit_size != 8)
		return diag_fail(err, at[HP_COMMIT], "commit word of %u bytes at offset %u: only 64-bit "
			    "kernels (8 bytes at offset 8) are supported", hp->commit_size,
			    hp->commit_offset);
	if (hp->data_offset != TB_PAGE_HDR_SIZE)
		return diag_fail(err, at[HP_DATA], "data at offset %u, expected %u", hp->data_offset,
			    TB_PAGE_HDR_SIZE);
	if (!tb_page_size_valid((size_t)hp->data_offset + hp->data_size))
		return diag_fail(err, at[HP_DATA], "data offset %u + size %u is not a sub-buffer size "
			    "(4 KiB << 0..7)", hp->data_offset, hp->data_size);
	return 0;
}

static void header_page_take(struct tb_header_page *hp, const struct tb_schema_field *f, int which)
{
	uint32_t *dst[HP_FIELDS][2] = {
		{&hp->timestamp_offset, &hp->timestamp_size},
		{&hp->commit_offset, &hp->commit_size},
		{&hp->data_offset, &hp->data_size},
	};

	*dst[which][0] = f->offset;
	*dst[which][1] = f->size;
}

int tb_header_page_parse(const char *text, size_t len, struct tb_header_page *out,
			 struct tb_problem *err)
{
	struct lines ls = {text, len, 0};
	struct line l;
	struct tb_schema_field f;
	size_t at[HP_FIELDS] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
	int rc;

	if (!out || (!text && len))
		return diag_fail(err, 0, "no text or no header_page to fill");
	memset(out, 0, sizeof(*out));
	while ((rc = next_line(&ls, &l, err)) == 1) {
		if (line_blank(&l))
			continue;
		if (parse_field(&l, &f, err) < 0)
			return -EINVAL;
		/* Anything else ("overwrite", a legacy placeholder) has no storage. */
		for (int i = 0; i < HP_FIELDS; i++)
			if (!strcmp(f.name, hp_names[i])) {
				if (at[i] != SIZE_MAX)
					return diag_fail(err, l.off, "%s appears twice", f.name);
				header_page_take(out, &f, i);
				at[i] = l.off;
			}
	}
	return rc < 0 ? rc : check_header_page(out, at, len, err);
}

/* ------------------------------------------------------- header_event */

/* The values the page codec decodes; header_event must agree. */
static const struct header_event_key {
	const char *key;
	uint32_t want;
} header_event_keys[] = {
	{"type_len", 5},   {"time_delta", 27},  {"array", 32},        {"padding", 29},
	{"time_extend", 30}, {"time_stamp", 31}, {"data max type_len", 28},
};
#define N_HEADER_EVENT_KEYS (sizeof(header_event_keys) / sizeof(header_event_keys[0]))

/* "KEY : N bits", "KEY : type == N" or "data max type_len  == N". */
static int parse_header_event_line(const struct line *l, size_t *key_index, uint32_t *value,
				   struct tb_problem *err)
{
	size_t i = skip_blanks(l, 0), key_end;

	for (size_t k = 0; k < N_HEADER_EVENT_KEYS; k++) {
		size_t n = strlen(header_event_keys[k].key);
		if (l->len - i > n && memcmp(l->p + i, header_event_keys[k].key, n) == 0 &&
		    (l->p[i + n] == ' ' || l->p[i + n] == '\t' || l->p[i + n] == ':')) {
			*key_index = k;
			key_end = i + n;
			i = skip_blanks(l, key_end);
			if (i < l->len && l->p[i] == ':')
				i = skip_blanks(l, i + 1);
			if (l->len - i >= 4 && memcmp(l->p + i, "type", 4) == 0)
				i = skip_blanks(l, i + 4);
			if (l->len - i >= 2 && memcmp(l->p + i, "==", 2) == 0)
				i = skip_blanks(l, i + 2);
			if (parse_u32(l, &i, value, header_event_keys[k].key, err) < 0)
				return -EINVAL;
			i = skip_blanks(l, i);
			if (l->len - i >= 4 && memcmp(l->p + i, "bits", 4) == 0)
				i = skip_blanks(l, i + 4);
			if (i != l->len)
				return diag_fail(err, l->off + i, "header_event: unexpected text");
			return 1;
		}
	}
	return 0; /* a line we do not know: newer kernels may add some */
}

int tb_header_event_parse(const char *text, size_t len, struct tb_problem *err)
{
	struct lines ls = {text, len, 0};
	struct line l;
	bool seen[N_HEADER_EVENT_KEYS] = {false};

	if (!text && len)
		return diag_fail(err, 0, "no text");
	size_t k;
	uint32_t v;
	int rc;

	while ((rc = next_line(&ls, &l, err)) == 1) {
		if (line_blank(&l) || l.p[skip_blanks(&l, 0)] == '#')
			continue;
		rc = parse_header_event_line(&l, &k, &v, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (v != header_event_keys[k].want)
			return diag_fail(err, l.off, "header_event: %s is %u, the page codec decodes %u",
				    header_event_keys[k].key, v, header_event_keys[k].want);
		seen[k] = true;
	}
	if (rc < 0)
		return rc;
	for (k = 0; k < N_HEADER_EVENT_KEYS; k++)
		if (!seen[k])
			return diag_fail(err, len, "header_event lacks the %s line", header_event_keys[k].key);
	return 0;
}

/* -------------------------------------------------------- format file */

/* "KEY: VALUE" on its own line: the value's index, or -EINVAL. */
static int expect_key_line(struct lines *ls, const char *key, struct line *l, size_t *value,
			   struct tb_problem *err)
{
	int rc = next_line(ls, l, err);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return diag_fail(err, ls->len, "format file ends before the '%s' line", key);
	if (l->len < strlen(key) || memcmp(l->p, key, strlen(key)) != 0)
		return diag_fail(err, l->off, "expected a line starting with '%s'", key);
	*value = skip_blanks(l, strlen(key));
	return 0;
}

static int parse_name_line(struct lines *ls, struct tb_format *f, struct tb_problem *err)
{
	struct line l;
	size_t i, end;

	if (expect_key_line(ls, "name:", &l, &i, err) < 0)
		return -EINVAL;
	for (end = i; end < l.len && !isspace((unsigned char)l.p[end]); end++)
		if (!isgraph((unsigned char)l.p[end]))
			return diag_fail(err, l.off + end, "event name has a non-printable byte");
	if (end == i)
		return diag_fail(err, l.off + i, "empty event name");
	if (skip_blanks(&l, end) != l.len)
		return diag_fail(err, l.off + end, "event name contains a blank");
	if (end - i >= TB_NAME_MAX)
		return diag_fail(err, l.off + i, "event name longer than %d bytes", TB_NAME_MAX - 1);
	memcpy(f->name, l.p + i, end - i);
	f->name[end - i] = '\0';
	return 0;
}

static int parse_id_line(struct lines *ls, struct tb_format *f, struct tb_problem *err)
{
	struct line l;
	size_t i;

	if (expect_key_line(ls, "ID:", &l, &i, err) < 0 || parse_u32(&l, &i, &f->id, "ID", err) < 0)
		return -EINVAL;
	f->id_offset = l.off;
	if (skip_blanks(&l, i) != l.len)
		return diag_fail(err, l.off + i, "ID: unexpected text after the number");
	if (f->id == 0 || f->id > UINT16_MAX)
		return diag_fail(err, l.off, "ID %u does not fit the 16-bit common_type", f->id);
	return 0;
}

static int add_field(struct tb_format *f, const struct tb_schema_field *nf, size_t *cap)
{
	struct tb_schema_field *grown;

	grown = tb__grow(f->fields, cap, f->nfields + 1, sizeof(*grown), 16);
	if (!grown)
		return -ENOMEM;
	f->fields = grown;
	f->fields[f->nfields++] = *nf;
	return 0;
}

/* Field lines up to the "print fmt:" line, which is left in *l. */
static int parse_fields(struct lines *ls, struct tb_format *f, struct line *l,
			struct tb_problem *err)
{
	struct tb_schema_field nf;
	size_t cap = 0, after;
	int rc;

	while ((rc = next_line(ls, l, err)) == 1) {
		if (line_blank(l))
			continue;
		if (starts_with(l, "print fmt:", &after) && after == 10)
			return 0;
		if (parse_field(l, &nf, err) < 0)
			return -EINVAL;
		if (tb_format_field(f, nf.name))
			return diag_fail(err, l->off, "field %s appears twice", nf.name);
		if (f->nfields == MAX_FIELDS)
			return diag_fail(err, l->off, "more than %d fields", MAX_FIELDS);
		if (add_field(f, &nf, &cap) < 0)
			return -ENOMEM;
	}
	return rc < 0 ? rc : diag_fail(err, ls->len, "format file has no 'print fmt:' line");
}

/*
 * The print fmt starts with a quoted string and runs to the end of the file:
 * a "\n" inside the kernel's format string is printed as a real newline.
 */
static int check_print_fmt(const struct lines *ls, const struct line *l, struct tb_problem *err)
{
	size_t i = skip_blanks(l, 10);
	const char *nul = memchr(ls->text + l->off, '\0', ls->len - l->off);

	if (i >= l->len || l->p[i] != '"')
		return diag_fail(err, l->off + i, "print fmt does not start with a quoted string");
	if (nul)
		return diag_fail(err, (size_t)(nul - ls->text), "NUL byte in a text file");
	return 0;
}

/* A copy of the print fmt: from its opening quote to the end, trailing newlines cut. */
static int keep_print_fmt(const struct lines *ls, const struct line *l, struct tb_format *f)
{
	size_t start = l->off + skip_blanks(l, 10), end = ls->len;

	while (end > start && (ls->text[end - 1] == '\n' || ls->text[end - 1] == '\r'))
		end--;
	f->print_fmt = strndup(ls->text + start, end - start);
	if (!f->print_fmt)
		return -ENOMEM;
	f->print_fmt_len = end - start;
	f->print_fmt_text_offset = start;
	return 0;
}

/* The four common fields at the kernel's fixed places (reference §10.1). */
static int check_common_header(const struct tb_format *f, size_t at, struct tb_problem *err)
{
	static const struct {
		const char *name;
		uint32_t offset, size;
	} common[] = {
		{"common_type", 0, 2},
		{"common_flags", 2, 1},
		{"common_preempt_count", 3, 1},
		{"common_pid", 4, 4},
	};

	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++) {
		const struct tb_schema_field *cf = tb_format_field(f, common[i].name);
		if (!cf)
			return diag_fail(err, at, "common field %s is missing", common[i].name);
		if (cf->offset != common[i].offset || cf->size != common[i].size)
			return diag_fail(err, at, "%s is %u bytes at %u, not %u bytes at %u", cf->name,
				    cf->size, cf->offset, common[i].size, common[i].offset);
	}
	for (size_t i = 0; i < f->nfields; i++)
		if (strncmp(f->fields[i].name, "common_", 7) && f->fields[i].offset < 8)
			return diag_fail(err, at, "field %s at offset %u overlaps the common header",
				    f->fields[i].name, f->fields[i].offset);
	return 0;
}

/* Record size needed for every field; dynamic data is checked per record. */
static uint32_t format_min_size(const struct tb_format *f)
{
	uint32_t need = 0;

	for (size_t i = 0; i < f->nfields; i++) {
		uint32_t end = f->fields[i].offset + f->fields[i].size;
		if (end > need)
			need = end;
	}
	return need;
}

int tb_format_parse(const char *text, size_t len, struct tb_format *out, struct tb_problem *err)
{
	struct lines ls = {text, len, 0};
	struct line l;
	size_t i;
	int rc;

	if (!out || (!text && len))
		return diag_fail(err, 0, "no text or no format to fill");
	memset(out, 0, sizeof(*out));
	if ((rc = parse_name_line(&ls, out, err)) < 0 || (rc = parse_id_line(&ls, out, err)) < 0 ||
	    (rc = expect_key_line(&ls, "format:", &l, &i, err)) < 0)
		goto failed;
	if (i != l.len) {
		rc = diag_fail(err, l.off + i, "unexpected text after 'format:'");
		goto failed;
	}
	if ((rc = parse_fields(&ls, out, &l, err)) < 0)
		goto failed;
	out->print_fmt_offset = l.off;
	if ((rc = check_print_fmt(&ls, &l, err)) < 0 ||
	    (rc = check_common_header(out, l.off, err)) < 0 || (rc = keep_print_fmt(&ls, &l, out)) < 0)
		goto failed;
	out->min_size = format_min_size(out);
	return 0;
failed:
	tb_format_free(out);
	return rc;
}

void tb_format_free(struct tb_format *f)
{
	if (!f)
		return;
	free(f->fields);
	free(f->print_fmt);
	f->fields = NULL;
	f->nfields = 0;
	f->print_fmt = NULL;
	f->print_fmt_len = 0;
}

const struct tb_schema_field *tb_format_field(const struct tb_format *f, const char *name)
{
	if (!f || !name)
		return NULL;
	/* the first byte first: printers look fields up by name for each record */
	for (size_t i = 0; i < f->nfields; i++)
		if (f->fields[i].name[0] == name[0] && !strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

/*
 * The number on the "ID:" line of a format file, 0 if there is none.  Only
 * to know which event a file is about before (or without) parsing it.
 */
uint32_t format_text_id(const char *text, size_t len)
{
	for (size_t pos = 0; pos + 3 < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		uint32_t id = 0;

		if (!strncmp(text + pos, "ID:", 3)) {
			size_t i = pos + 3;
			while (i < end && text[i] == ' ')
				i++;
			for (; i < end && text[i] >= '0' && text[i] <= '9' && id <= 65535; i++)
				id = id * 10 + (uint32_t)(text[i] - '0');
			return i == end && id <= 65535 ? id : 0;
		}
		pos = end + 1;
	}
	return 0;
}
