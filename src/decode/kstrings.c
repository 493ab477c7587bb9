// SPDX-License-Identifier: MIT
/*
 * kstrings.c - printk_formats parsed into an array sorted by address.
 *
 * The file has a few hundred lines, so every string gets its own
 * allocation; lookups are a binary search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "kstrings.h"
#include "util/sorted_find.h"
#include "util/grow.h"

struct kstring {
	uint64_t addr;
	char *text;
	size_t order; /* line order: the first of two strings at one address wins */
};

struct tb_kstrings {
	struct kstring *v;
	size_t n, cap;
};

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The unescaped TEXT of s[0..len) (after the opening quote, closing quote last). */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < len && strchr("nt\"", s[i + 1])) {
			c = s[++i] == 'n' ? '\n' : s[i] == 't' ? '\t' : '"';
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

/* One line; NULL with *e filled, or why it is bad (*bad_at: its offset in the line). */
static const char *parse_line(const char *s, size_t len, struct kstring *e, size_t *bad_at)
{
	size_t i = 2;
	uint64_t addr = 0;

	if (memchr(s, '\0', len))
		return *bad_at = (size_t)((const char *)memchr(s, '\0', len) - s), "NUL byte in the line";
	if (len < 2 || s[0] != '0' || s[1] != 'x')
		return *bad_at = 0, "line does not start with 0x";
	for (; i < len && hex_value(s[i]) >= 0; i++) {
		if (i == 18)
			return *bad_at = i, "address longer than 16 hex digits";
		addr = addr << 4 | (uint64_t)hex_value(s[i]);
	}
	if (i == 2)
		return *bad_at = i, "no hex digits after 0x";
	if (len - i < 5 || memcmp(s + i, " : \"", 4))
		return *bad_at = i, "address not followed by ' : \"'";
	if (s[len - 1] != '"' || len - 1 < i + 4)
		return *bad_at = len - 1, "string not closed by '\"' at the end of the line";
	e->addr = addr;
	e->text = unescape(s + i + 4, len - 1 - (i + 4));
	return NULL;
}

static int by_address(const void *a, const void *b)
{
	const struct kstring *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int append(struct tb_kstrings *k, const struct kstring *e)
{
	if (k->n == k->cap) {
		struct kstring *v = tb__grow(k->v, &k->cap, k->n + 1, sizeof(*v), 64);
		if (!v)
			return -ENOMEM;
		k->v = v;
	}
	k->v[k->n++] = *e;
	return 0;
}

int tb_kstrings_parse(const char *file, const char *text, size_t len, tb_problem_fn *diag,
		      void *diag_ctx, struct tb_kstrings **out)
{
	struct tb_kstrings *k = calloc(1, sizeof(*k));
	size_t pos = 0, bad_at;
	int rc = 0;

	*out = NULL;
	if (!k)
		return -ENOMEM;
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		struct kstring e = {.order = k->n};
		const char *why = n ? parse_line(line, n, &e, &bad_at) : NULL;

		if (why) {
			struct tb_problem d = {.file = file};
			diag_fail(&d, pos + bad_at, "printk_formats line: %s", why);
			if (diag)
				diag(diag_ctx, &d);
			rc = -EINVAL;
		} else if (n && (!e.text || append(k, &e) < 0)) {
			free(e.text);
			tb_kstrings_free(k);
			return -ENOMEM;
		}
		pos += n + 1;
	}
	if (k->n > 1)
		qsort(k->v, k->n, sizeof(*k->v), by_address);
	*out = k;
	return rc;
}

void tb_kstrings_free(struct tb_kstrings *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].text);
	free(k->v);
	free(k);
}

size_t tb_kstrings_count(const struct tb_kstrings *k)
{
	return k ? k->n : 0;
}

const char *tb_kstrings_at(const struct tb_kstrings *k, size_t i, uint64_t *addr)
{
	*addr = k->v[i].addr;
	return k->v[i].text;
}

const char *tb_kstrings_find(const struct tb_kstrings *k, uint64_t addr)
{
	/* the first entry with that address, if any */
	size_t lo = k ? TB_SORTED_COUNT_BELOW(k->v, k->n, addr, addr) : 0;

	return lo < (k ? k->n : 0) && k->v[lo].addr == addr ? k->v[lo].text : NULL;
}
