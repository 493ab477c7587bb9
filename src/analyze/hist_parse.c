// SPDX-License-Identifier: MIT
/*
 * hist_parse.c - a hist trigger spec ("keys=...:vals=...:sort=...:size=N")
 * parsed by the kernel's rules (kernel/trace/trace_events_hist.c) and
 * compiled against one event's format: every key and value becomes an
 * offset, a size, a signedness and a string kind, so the feeding loop never
 * looks a name up.  Every error names the byte offset in the spec.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist_internal.h"
#include "tracebuf/filter.h"

/* The spec being parsed: a writable copy, and where the copy starts in the user's text. */
struct spec {
	char *text;
	size_t base;
	const struct tb_format *fmt;
	const char *system;
	struct tb_hist_error *err;
};

static int fail(struct spec *s, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct spec *s, const char *at, const char *fmt, ...)
{
	va_list ap;

	s->err->pos = s->base + (size_t)(at - s->text);
	va_start(ap, fmt);
	vsnprintf(s->err->reason, sizeof(s->err->reason), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const char *hist_mod_name(enum hist_mod m)
{
	static const char *const names[] = {
	    [HIST_MOD_HEX] = "hex",	    [HIST_MOD_SYM] = "sym",	  [HIST_MOD_SYM_OFFSET] = "sym-offset",
	    [HIST_MOD_EXECNAME] = "execname", [HIST_MOD_SYSCALL] = "syscall", [HIST_MOD_LOG2] = "log2",
	    [HIST_MOD_BUCKETS] = "buckets",   [HIST_MOD_USECS] = "usecs",
	};
	return m > HIST_MOD_NONE && m <= HIST_MOD_USECS ? names[m] : NULL;
}

/* "bucket=N" or "buckets=N", N > 0 (the kernel reads it with base 0). */
static int parse_buckets(struct spec *s, const char *mod, struct hist_field *f)
{
	const char *p = mod + strlen("bucket");
	char *end;

	if (*p == 's')
		p++;
	if (*p != '=')
		return fail(s, mod, "invalid field modifier '%s' (did you mean buckets=N?)", mod);
	p++;
	errno = 0;
	f->buckets = strtoull(p, &end, 0);
	if (errno || end == p || *end || !f->buckets || *p == '-')
		return fail(s, p, "buckets= needs a positive number, not '%s'", p);
	f->mod = HIST_MOD_BUCKETS;
	return 0;
}

static int parse_modifier(struct spec *s, char *mod, struct hist_field *f)
{
	static const struct {
		const char *name;
		enum hist_mod mod;
	} mods[] = {
	    {"hex", HIST_MOD_HEX},	   {"sym", HIST_MOD_SYM},     {"sym-offset", HIST_MOD_SYM_OFFSET},
	    {"execname", HIST_MOD_EXECNAME}, {"syscall", HIST_MOD_SYSCALL}, {"log2", HIST_MOD_LOG2},
	    {"usecs", HIST_MOD_USECS},
	};

	if (!strncmp(mod, "bucket", 6))
		return parse_buckets(s, mod, f);
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (!strcmp(mod, mods[i].name)) {
			f->mod = mods[i].mod;
			return 0;
		}
	return fail(s, mod,
		    "invalid field modifier '%s' (one of: hex, sym, sym-offset, execname, syscall, "
		    "log2, buckets=N, usecs)",
		    mod);
}

/* "a, b, c" of the event's fields, for a message. */
static void field_list(const struct tb_format *fmt, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < fmt->nfields && used + 1 < n; i++) {
		int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", fmt->fields[i].name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (used >= n && n > 4)
		memcpy(buf + n - 4, "...", 4);
}

/* The event field name, compiled into f; false with an error when it does not exist or fit. */
static int bind_event_field(struct spec *s, const char *name, struct hist_field *f)
{
	const struct tb_schema_field *fld = tb_format_field(s->fmt, name);
	char list[160];

	if (!fld) {
		if (!strcmp(name, "cpu") || !strcmp(name, "CPU")) {
			f->src = HIST_SRC_CPU; /* the kernel's older name for common_cpu */
			snprintf(f->name, sizeof(f->name), "common_cpu");
			return 0;
		}
		field_list(s->fmt, list, sizeof(list));
		return fail(s, name, "Couldn't find field '%s' in %s:%s (its fields: %s)", name, s->system,
			    s->fmt->name, list);
	}
	f->src = HIST_SRC_FIELD;
	f->offset = fld->offset;
	f->size = fld->size;
	f->is_signed = fld->is_signed;
	if (fld->is_string) {
		f->str = fld->kind == TB_SCHEMA_FIELD_DATA_LOC	  ? HIST_STR_DYN
			 : fld->kind == TB_SCHEMA_FIELD_REL_LOC ? HIST_STR_REL
							 : HIST_STR_STATIC;
		if (f->str != HIST_STR_STATIC)
			f->size = 4; /* the u32 locator */
		else if (!f->size)
			return fail(s, name, "'%s' is a string of no fixed size (%s)", name, fld->type);
		return 0;
	}
	if (fld->is_array || fld->kind != TB_SCHEMA_FIELD_STATIC ||
	    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
		return fail(s, name,
			    "'%s' (%s) is an array or a %u-byte field; hist keys and values are "
			    "numbers of 1, 2, 4 or 8 bytes, or strings",
			    name, fld->type, f->size);
	return 0;
}

/* Whether modifier m can apply to f, as key or value; an error when not. */
static int check_modifier(struct spec *s, const char *at, const struct hist_field *f, bool key)
{
	const char *m = hist_mod_name(f->mod);

	if (!key && f->str != HIST_STR_NONE)
		return fail(s, at, "vals= sums numbers, and '%s' is a string", f->name);
	if (f->mod == HIST_MOD_NONE)
		return 0;
	if (f->str != HIST_STR_NONE)
		return fail(s, at, "the modifier .%s needs a number, and '%s' is a string", m, f->name);
	if (!key && f->mod != HIST_MOD_HEX)
		return fail(s, at, "only .hex applies to a value (vals= sums numbers); .%s is for keys", m);
	if (f->mod == HIST_MOD_EXECNAME && strcmp(f->name, "common_pid"))
		return fail(s, at, ".execname applies to common_pid only, not to '%s'", f->name);
	if (f->mod == HIST_MOD_USECS && f->src != HIST_SRC_TIMESTAMP)
		return fail(s, at, ".usecs applies to common_timestamp only, not to '%s'", f->name);
	return 0;
}

/* One "name[.modifier]" of keys= or vals= at text, compiled into f. */
static int parse_field(struct spec *s, char *text, struct hist_field *f, bool key)
{
	char *mod = strchr(text, '.');
	const char *op;
	int rc;

	memset(f, 0, sizeof(*f));
	if (mod)
		*mod++ = '\0';
	if (!*text)
		return fail(s, text, "empty field name");
	if ((op = strpbrk(text, "+-*/$()")) != NULL)
		return fail(s, op, "expressions and variables are not supported by tracebuf hist");
	if (!strcmp(text, "stacktrace") || !strcmp(text, "common_stacktrace"))
		return fail(s, text, "stacktrace keys need the kernel's stack at the event; not supported");
	snprintf(f->name, sizeof(f->name), "%s", text);
	if (!strcmp(text, "common_timestamp"))
		f->src = HIST_SRC_TIMESTAMP;
	else if (!strcmp(text, "common_cpu"))
		f->src = HIST_SRC_CPU;
	else if ((rc = bind_event_field(s, text, f)) < 0)
		return rc;
	if (mod && (rc = parse_modifier(s, mod, f)) < 0)
		return rc;
	return check_modifier(s, mod ? mod : text, f, key);
}

/* The room a key takes in the compound key (the kernel's create_key_field). */
static uint32_t key_room(const struct hist_field *f)
{
	uint32_t size = f->str == HIST_STR_STATIC ? f->size : f->str != HIST_STR_NONE ? HIST_STR_MAX : 8;

	return (size + 7u) & ~7u;
}

/* The record bytes f needs (the locator of a dynamic string; none for the buffer's own data). */
static void need_bytes(struct tb_hist *h, const struct hist_field *f)
{
	if (f->src == HIST_SRC_FIELD && f->offset + f->size > h->min_size)
		h->min_size = f->offset + f->size;
}

static int parse_keys(struct spec *s, struct tb_hist *h, char *list)
{
	char *save = list, *item;

	while ((item = strsep(&save, ",")) != NULL) {
		struct hist_field *f;
		int rc;

		if (h->nkeys == HIST_KEYS_MAX)
			return fail(s, item, "too many keys (%d at most)", HIST_KEYS_MAX);
		f = &h->keys[h->nkeys];
		if ((rc = parse_field(s, item, f, true)) < 0)
			return rc;
		f->key_offset = h->key_size;
		f->key_size = key_room(f);
		h->key_size += f->key_size;
		if (h->key_size > HIST_STR_MAX + 16 * 8)
			return fail(s, item, "the keys together take %u bytes, more than the kernel's %d",
				    h->key_size, HIST_STR_MAX + 16 * 8);
		need_bytes(h, f);
		h->nkeys++;
	}
	return 0;
}

static int parse_vals(struct spec *s, struct tb_hist *h, char *list)
{
	char *save = list, *item;

	while ((item = strsep(&save, ",")) != NULL) {
		int rc;

		if (!strcmp(item, "hitcount"))
			continue; /* always there */
		if (h->nvals == HIST_VALS_MAX)
			return fail(s, item, "too many values (%d besides hitcount at most)", HIST_VALS_MAX);
		if ((rc = parse_field(s, item, &h->vals[h->nvals], false)) < 0)
			return rc;
		need_bytes(h, &h->vals[h->nvals]);
		h->nvals++;
	}
	return 0;
}

/* A sort name: hitcount, then the values, then the keys, by the name printed without modifier. */
static bool find_sort_field(const struct tb_hist *h, const char *name, struct hist_sort *k)
{
	if (!strcmp(name, "hitcount")) {
		*k = (struct hist_sort){.is_key = false, .index = 0};
		return true;
	}
	for (unsigned i = 0; i < h->nvals; i++)
		if (!strcmp(name, h->vals[i].name)) {
			*k = (struct hist_sort){.is_key = false, .index = i + 1};
			return true;
		}
	for (unsigned i = 0; i < h->nkeys; i++)
		if (!strcmp(name, h->keys[i].name)) {
			*k = (struct hist_sort){.is_key = true, .index = i};
			return true;
		}
	return false;
}

static int parse_sort(struct spec *s, struct tb_hist *h, char *list)
{
	char *save = list, *item;

	h->nsort = 0;
	while ((item = strsep(&save, ",")) != NULL) {
		char *dir = strchr(item, '.');
		struct hist_sort *k;

		if (h->nsort == HIST_SORT_MAX)
			return fail(s, item, "Too many sort fields (Max = %d)", HIST_SORT_MAX);
		if (dir)
			*dir++ = '\0';
		if (!*item)
			return fail(s, item, "Empty sort field");
		k = &h->sort[h->nsort];
		if (!find_sort_field(h, item, k))
			return fail(s, item, "Sort field must be a key or a val: '%s' is neither", item);
		if (dir && strcmp(dir, "descending") && strcmp(dir, "ascending"))
			return fail(s, dir, "Invalid sort modifier '%s' (descending or ascending)", dir);
		k->descending = dir && !strcmp(dir, "descending");
		h->nsort++;
	}
	return 0;
}

/* size=N: the table holds 2^bits entries, N rounded up to a power of two. */
static int parse_size(struct spec *s, struct tb_hist *h, char *text)
{
	char *end;
	unsigned long long n;
	unsigned bits = 0;

	errno = 0;
	n = strtoull(text, &end, 0);
	if (errno || end == text || *end || *text == '-')
		return fail(s, text, "size= needs a number, not '%s'", text);
	while (bits < 64 && (1ull << bits) < n)
		bits++;
	if (bits < HIST_BITS_MIN || bits > HIST_BITS_MAX)
		return fail(s, text, "size=%s is out of range: %u to %u entries", text, 1u << HIST_BITS_MIN,
			    1u << HIST_BITS_MAX);
	h->map_bits = bits;
	return 0;
}

/* One ':'-separated attribute; sort= is kept for after the keys and values are known. */
static int parse_attr(struct spec *s, struct tb_hist *h, char *attr, char **keys, char **vals, char **sort)
{
	char *eq = strchr(attr, '=');
	char *rhs = eq ? eq + 1 : NULL;

	if (!eq)
		return fail(s, attr,
			    *attr ? "'%s' is not supported by tracebuf hist (keys=, vals=, sort=, "
				    "size=, clock=)"
				  : "empty attribute%s",
			    attr);
	if (!*rhs)
		return fail(s, attr, "Empty assignment");
	*eq = '\0';
	if (!strcmp(attr, "keys") || !strcmp(attr, "key"))
		*keys = rhs;
	else if (!strcmp(attr, "vals") || !strcmp(attr, "val") || !strcmp(attr, "values"))
		*vals = rhs;
	else if (!strcmp(attr, "sort"))
		*sort = rhs;
	else if (!strcmp(attr, "size"))
		return parse_size(s, h, rhs);
	else if (!strcmp(attr, "clock"))
		snprintf(h->clock, sizeof(h->clock), "%s", rhs);
	else
		return fail(s, attr, "'%s=' is not supported by tracebuf hist (keys=, vals=, sort=, size=, "
				     "clock=)",
			    attr);
	return 0;
}

/*
 * "if EXPR" compiled against the event (tracebuf/filter.h, the kernel's
 * filter language).  As the kernel keeps it, EXPR starts one blank after
 * "if" and is printed back as given.
 */
static int parse_filter(struct spec *s, struct tb_hist *h, char *at_if)
{
	char *expr = at_if + 3;
	struct tb_filter_error ferr = {0};
	int rc;

	if (!*expr)
		return fail(s, at_if, "'if' with no filter after it");
	h->filter_text = strdup(expr);
	if (!h->filter_text)
		return -ENOMEM;
	rc = tb_filter_compile_format(expr, s->fmt, 0, &h->filter, &ferr);
	if (rc == -EINVAL)
		return fail(s, expr + ferr.pos, "in the filter: %s", ferr.reason);
	if (rc < 0)
		return rc;
	h->filter_uses = tb_filter_uses(h->filter);
	return 0;
}

/* Where " if " starts the filter (the kernel wants blanks on both sides), or NULL. */
static char *find_filter(char *text)
{
	for (char *p = strstr(text, "if"); p; p = strstr(p + 1, "if"))
		if (p > text && (p[-1] == ' ' || p[-1] == '\t') && (p[2] == ' ' || p[2] == '\t'))
			return p;
	return NULL;
}

static int parse_all(struct spec *s, struct tb_hist *h)
{
	char *keys = NULL, *vals = NULL, *sort = NULL, *save = s->text, *attr;
	char *filter = find_filter(s->text);
	int rc;

	if (filter) {
		char *end = filter - 1;
		while (end > s->text && (end[-1] == ' ' || end[-1] == '\t'))
			end--; /* the attributes end where the blanks before "if" start */
		*end = '\0';
		if ((rc = parse_filter(s, h, filter)) < 0)
			return rc;
	}
	while ((attr = strsep(&save, ":")) != NULL)
		if ((rc = parse_attr(s, h, attr, &keys, &vals, &sort)) < 0)
			return rc;
	if (!keys)
		return fail(s, s->text, "no keys=: a hist needs at least one key, e.g. keys=common_pid");
	if ((rc = parse_keys(s, h, keys)) < 0 || (vals && (rc = parse_vals(s, h, vals)) < 0))
		return rc;
	h->timestamps = false;
	for (unsigned i = 0; i < h->nkeys; i++) {
		h->timestamps |= h->keys[i].src == HIST_SRC_TIMESTAMP;
		h->ts_usecs |= h->keys[i].mod == HIST_MOD_USECS;
	}
	for (unsigned i = 0; i < h->nvals; i++)
		h->timestamps |= h->vals[i].src == HIST_SRC_TIMESTAMP;
	return sort ? parse_sort(s, h, sort) : 0;
}

int hist_parse(struct tb_hist *h, const char *spec, const struct tb_format *fmt, struct tb_hist_error *err)
{
	size_t skip = 0, end;
	struct spec s = {.fmt = fmt, .err = err};
	int rc;

	while (spec[skip] == ' ' || spec[skip] == '\t')
		skip++;
	if (!strncmp(spec + skip, "hist:", 5))
		skip += 5;
	end = strlen(spec);
	while (end > skip && (spec[end - 1] == ' ' || spec[end - 1] == '\t' || spec[end - 1] == '\n'))
		end--;
	s.text = strndup(spec + skip, end - skip);
	if (!s.text)
		return -ENOMEM;
	s.base = skip;
	s.system = h->system;
	h->map_bits = HIST_BITS_DEFAULT;
	h->nsort = 1; /* hitcount, ascending */
	h->sort[0] = (struct hist_sort){0};
	snprintf(h->clock, sizeof(h->clock), "global");
	rc = parse_all(&s, h);
	free(s.text);
	return rc;
}
