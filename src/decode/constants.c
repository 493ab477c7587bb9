// SPDX-License-Identifier: MIT
/*
 * constants.c - a capture's kernel constants: the file's parser, its
 * writer, and the scan of print fmts for the names worth writing.
 *
 * A capture has a few hundred constants at most, and they are looked up
 * once per event when its print fmt is compiled, so a plain array searched
 * in order is enough.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "constants.h"
#include "diag.h"
#include "util/grow.h"

#define MAX_NAME 128

struct entry {
	char *name;   /* an identifier, or the TYPE of a sizeof line */
	bool is_size; /* "sizeof(name) value" */
	int64_t value;
};

struct tb_constants {
	struct entry *v;
	size_t n, cap;
};

struct tb_constants *tb_constants_new(void)
{
	return calloc(1, sizeof(struct tb_constants));
}

void tb_constants_free(struct tb_constants *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
	free(c);
}

size_t tb_constants_count(const struct tb_constants *c)
{
	return c ? c->n : 0;
}

static struct entry *find(const struct tb_constants *c, const char *name, bool is_size)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (c->v[i].is_size == is_size && !strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

/*
 * Enum constants kernel print fmts name and the kernel leaves unresolved in
 * its format files (no TRACE_DEFINE_ENUM), for inputs that carry neither a
 * constants file nor BTF (trace-cmd's trace.dat never do).  Only values
 * fixed for years belong here: enum hrtimer_mode (include/linux/hrtimer.h)
 * is ABS 0, REL 1, | PINNED 2, | SOFT 4, | HARD 8, unchanged since 5.4.
 */
bool tb_constants_builtin(const char *name, int64_t *value)
{
	static const struct {
		const char *suffix;
		int64_t value;
	} modes[] = {
	    {"ABS", 0},		    {"REL", 1},		    {"ABS_PINNED", 2},	    {"REL_PINNED", 3},
	    {"ABS_SOFT", 4},	    {"REL_SOFT", 5},	    {"ABS_PINNED_SOFT", 6}, {"REL_PINNED_SOFT", 7},
	    {"ABS_HARD", 8},	    {"REL_HARD", 9},	    {"ABS_PINNED_HARD", 10}, {"REL_PINNED_HARD", 11},
	};
	static const char prefix[] = "HRTIMER_MODE_";

	if (strncmp(name, prefix, sizeof(prefix) - 1))
		return false;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(name + sizeof(prefix) - 1, modes[i].suffix)) {
			*value = modes[i].value;
			return true;
		}
	return false;
}

bool tb_constants_value(const struct tb_constants *c, const char *name, int64_t *value)
{
	const struct entry *e = find(c, name, false);

	if (e)
		*value = e->value;
	return e != NULL;
}

/* Type names compare with their blanks collapsed: "struct  page " is "struct page". */
static void normalize_type(const char *in, size_t len, char *out, size_t size)
{
	size_t o = 0;
	bool blank = false;

	for (size_t i = 0; i < len && o + 2 < size; i++) {
		if (in[i] == ' ' || in[i] == '\t') {
			blank = o > 0;
			continue;
		}
		if (blank)
			out[o++] = ' ';
		blank = false;
		out[o++] = in[i];
	}
	out[o] = '\0';
}

bool tb_constants_type_size(const struct tb_constants *c, const char *type, uint64_t *size)
{
	char norm[MAX_NAME];
	const struct entry *e;

	normalize_type(type, strlen(type), norm, sizeof(norm));
	e = find(c, norm, true);
	if (e)
		*size = (uint64_t)e->value;
	return e != NULL;
}

/* ------------------------------------------------------------- parsing */

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A VALUE: -?decimal or 0x hex, filling the whole of s[0..len). */
static bool parse_value(const char *s, size_t len, int64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	bool neg = false;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (len - 2 > 16)
			return false;
		for (i = 2; i < len; i++) {
			if (!isxdigit((unsigned char)s[i]))
				return false;
			v = v << 4 | (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0'
									 : (s[i] | 0x20) - 'a' + 10);
		}
		*out = (int64_t)v;
		return true;
	}
	if (len > 0 && s[0] == '-')
		neg = true, i = 1;
	if (i == len)
		return false;
	for (; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static int add(struct tb_constants *c, const char *name, size_t len, bool is_size, int64_t value)
{
	struct entry *e;

	e = tb__grow(c->v, &c->cap, c->n + 1, sizeof(*e), 32);
	if (!e)
		return -ENOMEM;
	c->v = e;
	e = &c->v[c->n];
	e->name = strndup(name, len);
	if (!e->name)
		return -ENOMEM;
	e->is_size = is_size;
	e->value = value;
	c->n++;
	return 0;
}

/*
 * One line: "NAME VALUE" or "sizeof(TYPE) VALUE".  Returns NULL with the
 * entry added, or the reason the line is bad (*bad_at its offset in it).
 */
static const char *parse_line(struct tb_constants *c, const char *s, size_t len, size_t *bad_at,
			      int *rc)
{
	char name[MAX_NAME];
	size_t i = 0, value_at;
	bool is_size = false;
	int64_t value, old;
	const struct entry *e;

	if (len > 7 && !memcmp(s, "sizeof(", 7)) {
		const char *close = memchr(s, ')', len);
		is_size = true;
		if (!close || close == s + 7)
			return *bad_at = 7, "sizeof( without a type and ')'";
		for (const char *p = s + 7; p < close; p++)
			if (!is_ident_char(*p) && *p != ' ' && *p != '*')
				return *bad_at = (size_t)(p - s), "bad character in a type name";
		if ((size_t)(close - s - 7) >= MAX_NAME)
			return *bad_at = 7, "type name too long";
		normalize_type(s + 7, (size_t)(close - s - 7), name, sizeof(name));
		i = (size_t)(close - s) + 1;
	} else {
		if (!is_ident_start(s[0]))
			return *bad_at = 0, "a line must start with a name or sizeof(";
		while (i < len && is_ident_char(s[i]))
			i++;
		if (i >= MAX_NAME)
			return *bad_at = 0, "name too long";
		memcpy(name, s, i);
		name[i] = '\0';
	}
	if (i >= len || s[i] != ' ')
		return *bad_at = i, "name not followed by one space and a value";
	value_at = i + 1;
	if (!parse_value(s + value_at, len - value_at, &value))
		return *bad_at = value_at, "value is not a decimal or 0x hex number";
	e = find(c, name, is_size);
	if (e) {
		old = e->value;
		return old == value ? NULL : (*bad_at = value_at, "a second, different value");
	}
	*rc = add(c, name, strlen(name), is_size, value);
	return NULL;
}

int tb_constants_parse(struct tb_constants *c, const char *file, const char *text, size_t len,
		       tb_problem_fn *diag, void *diag_ctx)
{
	size_t pos = 0, bad_at;
	int rc = 0, alloc = 0;

	while (pos < len && alloc == 0) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		const char *why = NULL, *nul = memchr(line, '\0', n);

		if (nul)
			why = "NUL byte in the line", bad_at = (size_t)(nul - line);
		else if (n > 0 && line[0] != '#')
			why = parse_line(c, line, n, &bad_at, &alloc);
		if (why) {
			struct tb_problem d = {.file = file};
			diag_fail(&d, pos + bad_at, "constants line: %s", why);
			if (diag)
				diag(diag_ctx, &d);
			rc = -EINVAL;
		}
		pos += n + 1;
	}
	return alloc ? alloc : rc;
}

/* ------------------------------------------------- print fmt identifiers */

static bool is_keyword(const char *w, size_t n)
{
	static const char *const words[] = {
		"REC", "sizeof", "unsigned", "signed", "int", "long", "short", "char", "void",
		"const", "volatile", "struct", "union", "enum", "_Bool", "bool",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == n && !memcmp(words[i], w, n))
			return true;
	return false;
}

/* Index after the string or character literal that starts at s[i]. */
static size_t skip_literal(const char *s, size_t i, size_t len)
{
	char quote = s[i++];

	while (i < len && s[i] != quote)
		i += s[i] == '\\' ? 2 : 1;
	return i < len ? i + 1 : len;
}

/* Whether the identifier at s[i] follows "->" or "." (a member, not a name). */
static bool is_member(const char *s, size_t i)
{
	while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	return (i > 0 && s[i - 1] == '.') || (i > 1 && s[i - 1] == '>' && s[i - 2] == '-');
}

void tb_print_fmt_identifiers(const char *s, size_t len, void (*fn)(void *ctx, const char *name),
			      void *ctx)
{
	char name[MAX_NAME + 8];
	const char *tag = NULL; /* "struct", "union", "enum" waiting for their name */

	for (size_t i = 0; i < len;) {
		size_t start = i, n;

		if (s[i] == '"' || s[i] == '\'') {
			i = skip_literal(s, i, len);
			tag = NULL;
			continue;
		}
		if (isdigit((unsigned char)s[i])) { /* a number with its suffix: 0x1fUL */
			while (i < len && is_ident_char(s[i]))
				i++;
			continue;
		}
		if (!is_ident_start(s[i])) {
			if (s[i] != ' ' && s[i] != '\t')
				tag = NULL;
			i++;
			continue;
		}
		while (i < len && is_ident_char(s[i]))
			i++;
		n = i - start;
		if (n >= MAX_NAME || is_member(s, start)) {
			tag = NULL;
			continue;
		}
		if (tag) {
			snprintf(name, sizeof(name), "%s %.*s", tag, (int)n, s + start);
			fn(ctx, name);
			tag = NULL;
		} else if (n == 6 && !memcmp(s + start, "struct", 6)) {
			tag = "struct";
		} else if (n == 5 && !memcmp(s + start, "union", 5)) {
			tag = "union";
		} else if (n == 4 && !memcmp(s + start, "enum", 4)) {
			tag = "enum";
		} else if (!is_keyword(s + start, n)) {
			memcpy(name, s + start, n);
			name[n] = '\0';
			fn(ctx, name);
		}
	}
}

/* -------------------------------------------------------------- writing */

struct collect {
	struct tb_constants *found;
	const struct tb_constants_source *src;
	int rc;
};

/*
 * Constants a print fmt needs without naming them: the kernel's HZ is a
 * macro the kernel expanded when it made the print fmt, but the printer's
 * jiffies_to_msecs() computes with it, and a count of jiffies is a time
 * only with it.
 */
static const struct {
	const char *name, *needs;
} implied[] = {
	{"jiffies_to_msecs", "HZ"},
	{"jiffies", "HZ"},
};

static void collect_name(void *ctx, const char *name)
{
	struct collect *c = ctx;
	bool is_type = strchr(name, ' ') != NULL;
	int64_t value;
	uint64_t size;

	for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]); i++)
		if (!strcmp(name, implied[i].name))
			collect_name(ctx, implied[i].needs);
	if (c->rc || find(c->found, name, false) || find(c->found, name, true))
		return;
	if (!is_type && c->src->constant && c->src->constant(c->src->ctx, name, &value))
		c->rc = add(c->found, name, strlen(name), false, value);
	else if (c->src->type_size && c->src->type_size(c->src->ctx, name, &size))
		c->rc = add(c->found, name, strlen(name), true, (int64_t)size);
}

static int by_kind_and_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->is_size != y->is_size)
		return x->is_size ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * Small values (enums) and jiffies (a count) print in decimal, the rest
 * (addresses) as 0x and their 64 bits.
 */
static int write_entry(FILE *out, const struct entry *e)
{
	if (e->is_size)
		return fprintf(out, "sizeof(%s) %lld\n", e->name, (long long)e->value);
	if ((e->value < INT32_MIN || e->value > UINT32_MAX) && strcmp(e->name, "jiffies"))
		return fprintf(out, "%s 0x%llx\n", e->name, (unsigned long long)e->value);
	return fprintf(out, "%s %lld\n", e->name, (long long)e->value);
}

int tb_constants_write(FILE *out, const struct tb_format *const *formats, size_t n,
		       const struct tb_constants_source *src)
{
	struct collect c = {.found = tb_constants_new(), .src = src};
	int rc;

	if (!c.found)
		return -ENOMEM;
	for (size_t i = 0; i < n && c.rc == 0; i++)
		if (formats[i] && formats[i]->print_fmt)
			tb_print_fmt_identifiers(formats[i]->print_fmt, formats[i]->print_fmt_len,
						 collect_name, &c);
	rc = c.rc;
	if (rc == 0) {
		if (c.found->n > 1)
			qsort(c.found->v, c.found->n, sizeof(*c.found->v), by_kind_and_name);
		if (fputs("# tracebuf kernel constants: NAME VALUE, sizeof(TYPE) VALUE\n", out) < 0)
			rc = -EIO;
		for (size_t i = 0; i < c.found->n && rc == 0; i++)
			if (write_entry(out, &c.found->v[i]) < 0)
				rc = -EIO;
		if (rc == 0)
			rc = (int)c.found->n;
	}
	tb_constants_free(c.found);
	return rc;
}
