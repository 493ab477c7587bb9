// SPDX-License-Identifier: MIT
/*
 * pf_lex.c - the print fmt's tokens: identifiers, numbers with
 * their C types, character and string literals with the kernel's escapes,
 * punctuators of one or two characters.
 *
 * Part of the print-fmt compiler (pf_cc.h); split from pf_compile.c
 * (issue 22 item 5).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_cc.h"

/* Record the first failure; returns rc for the caller's return. */
int pfc_fail(struct cc *c, int rc, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (c->rc)
		return c->rc;
	c->rc = rc;
	if (c->err) {
		va_start(ap, fmt);
		diag_vset(c->err, off, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static bool is_ident_start(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static bool is_ident_char(char ch)
{
	return is_ident_start(ch) || (ch >= '0' && ch <= '9');
}

static int hex_value(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * One escape sequence at s[*i] (after the backslash), its byte value.
 * Octal and hex escapes as C reads them; an unknown escape is the
 * character itself.
 */
unsigned pfc_read_escape(const char *s, size_t len, size_t *i)
{
	char ch = s[(*i)++];
	unsigned v = 0;
	int d, n = 0;

	switch (ch) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'e': return 27;
	case 'x':
		while (*i < len && (d = hex_value(s[*i])) >= 0) {
			v = (v << 4 | (unsigned)d) & 0xff;
			(*i)++;
		}
		return v;
	default:
		if (ch >= '0' && ch <= '7') {
			v = (unsigned)(ch - '0');
			while (++n < 3 && *i < len && s[*i] >= '0' && s[*i] <= '7')
				v = v * 8 + (unsigned)(s[(*i)++] - '0');
			return v & 0xff;
		}
		return (unsigned char)ch;
	}
}

/* The type C gives an integer literal: suffixes u, l, ll and the value's size. */
static struct ty literal_type(uint64_t v, bool decimal, bool is_unsigned, int longs)
{
	if (longs == 0 && !is_unsigned && v <= INT32_MAX)
		return ty_int;
	if (longs == 0 && (is_unsigned || !decimal) && v <= UINT32_MAX)
		return ty_uint;
	if (!is_unsigned && v <= INT64_MAX)
		return ty_long;
	return ty_ulong;
}

static int lex_number(struct cc *c, size_t i, struct token *t)
{
	const char *s = c->src;
	uint64_t v = 0;
	unsigned base = 10;
	bool is_unsigned = false, overflow = false;
	int longs = 0, d;

	if (s[i] == '0' && i + 1 < c->len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
		if (i >= c->len || hex_value(s[i]) < 0)
			return pfc_fail(c, -EINVAL, i, "hexadecimal constant without digits");
	} else if (s[i] == '0') {
		base = 8;
	}
	for (; i < c->len && (d = hex_value(s[i])) >= 0 && (unsigned)d < base; i++) {
		if (v > (UINT64_MAX - (unsigned)d) / base)
			overflow = true;
		v = v * base + (unsigned)d;
	}
	for (; i < c->len; i++) {
		if ((s[i] == 'u' || s[i] == 'U') && !is_unsigned)
			is_unsigned = true;
		else if ((s[i] == 'l' || s[i] == 'L') && longs < 2)
			longs++;
		else
			break;
	}
	if (i < c->len && is_ident_char(s[i]))
		return pfc_fail(c, -EINVAL, i, "bad character in a number");
	if (overflow)
		return pfc_fail(c, -EINVAL, t->off, "integer constant does not fit in 64 bits");
	t->kind = TK_NUM;
	t->num = v;
	t->numty = literal_type(v, base == 10, is_unsigned, longs);
	t->len = i - t->off;
	return 0;
}

/* A quoted literal from s[i] == q: its length including quotes, or 0 if unterminated. */
static size_t quoted_len(const char *s, size_t len, size_t i, char q)
{
	size_t j = i + 1;

	while (j < len && s[j] != q) {
		if (s[j] == '\\')
			j++;
		j++;
	}
	return j < len ? j + 1 - i : 0;
}

static const char *const two_char_puncts[] = {"->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};

/* The token starting at or after position i. */
int pfc_lex(struct cc *c, size_t i, struct token *t)
{
	const char *s = c->src;

	while (i < c->len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	memset(t, 0, sizeof(*t));
	t->off = i;
	if (i >= c->len || s[i] == '\0') {
		t->kind = TK_END;
		return 0;
	}
	if (is_ident_start(s[i])) {
		size_t j = i;
		while (j < c->len && is_ident_char(s[j]))
			j++;
		t->kind = TK_IDENT;
		t->len = j - i;
		return 0;
	}
	if (s[i] >= '0' && s[i] <= '9')
		return lex_number(c, i, t);
	if (s[i] == '"' || s[i] == '\'') {
		t->len = quoted_len(s, c->len, i, s[i]);
		if (!t->len)
			return pfc_fail(c, -EINVAL, i, "unterminated %s literal", s[i] == '"' ? "string" : "character");
		if (s[i] == '"') {
			t->kind = TK_STR;
			return 0;
		}
		size_t k = i + 1;
		unsigned v = (unsigned char)s[k];
		if (v == '\'' )
			return pfc_fail(c, -EINVAL, i, "empty character literal");
		k++;
		if (v == '\\')
			v = pfc_read_escape(s, c->len, &k);
		if (k != i + t->len - 1)
			return pfc_fail(c, -EINVAL, i, "multi-character literal");
		t->kind = TK_CHAR;
		t->num = (uint64_t)(int64_t)(int8_t)v; /* char is signed on x86 */
		t->numty = ty_int;
		return 0;
	}
	for (size_t k = 0; k < sizeof(two_char_puncts) / sizeof(two_char_puncts[0]); k++)
		if (i + 1 < c->len && s[i] == two_char_puncts[k][0] && s[i + 1] == two_char_puncts[k][1]) {
			t->kind = TK_PUNCT;
			t->punct = P2(s[i], s[i + 1]);
			t->len = 2;
			return 0;
		}
	if (strchr("()[]{},?:;+-*/%&|^~!<>=.", s[i])) {
		t->kind = TK_PUNCT;
		t->punct = (unsigned char)s[i];
		t->len = 1;
		return 0;
	}
	return pfc_fail(c, -EINVAL, i, "unexpected character 0x%02x", (unsigned char)s[i]);
}

int pfc_advance(struct cc *c)
{
	int rc = pfc_lex(c, c->next, &c->tok);

	c->next = c->tok.off + c->tok.len;
	return rc;
}

bool pfc_is_punct(const struct token *t, unsigned p)
{
	return t->kind == TK_PUNCT && t->punct == p;
}

bool pfc_tok_is(const struct cc *c, const struct token *t, const char *word)
{
	size_t n = strlen(word);

	return t->kind == TK_IDENT && t->len == n && !memcmp(c->src + t->off, word, n);
}

int pfc_expect(struct cc *c, unsigned p, const char *what)
{
	if (!pfc_is_punct(&c->tok, p))
		return pfc_fail(c, -EINVAL, c->tok.off, "expected %s", what);
	return pfc_advance(c);
}
