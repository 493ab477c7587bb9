// SPDX-License-Identifier: MIT
/*
 * filter_parse.c - compile a filter expression in the kernel's syntax
 * (tracebuf/filter.h) against a field list.
 *
 * Three steps.  A first scan checks quotes and parentheses, as the kernel
 * does before anything else (so "x == 1 && (" is "Too many '('" whatever
 * else is wrong).  A recursive descent then reads
 *
 *	or    := and { "||" and }
 *	and   := unary { "&&" unary }
 *	unary := { "!" } ( "(" or ")" | FIELD OP VALUE )
 *
 * into a tree, checking each predicate against its field the way the
 * kernel's parse_pred() does, with its messages.  Last, the tree becomes
 * the branch program of filter_internal.h: each predicate learns where to
 * go when true and when false (an && sends a false left side to wherever
 * the whole && goes when false, an || sends a true one to where it goes
 * when true, a '!' swaps the two), so evaluation short-circuits with no
 * stack.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_internal.h"
#include "util/grow.h"

#define MAX_STRING 256 /* the kernel's MAX_FILTER_STR_VAL: a quoted value is shorter */
#define MAX_NUMBER 24  /* the kernel's number buffer: a number token is shorter */
#define MAX_DEPTH 128  /* parentheses; the recursion's bound */
#define MAX_PREDS 4096

/* The kernel's messages (its err_text[]), which a refusal starts with. */
#define E_INVALID_OP "Invalid operator"
#define E_TOO_MANY_OPEN "Too many '('"
#define E_TOO_MANY_CLOSE "Too few '('"
#define E_MISSING_QUOTE "Missing matching quote"
#define E_OPERAND_TOO_LONG "Operand too long"
#define E_EXPECT_STRING "Expecting string field"
#define E_EXPECT_DIGIT "Expecting numeric field"
#define E_ILLEGAL_FIELD_OP "Illegal operation for field type"
#define E_FIELD_NOT_FOUND "Field not found"
#define E_ILLEGAL_INTVAL "Illegal integer value"
#define E_TOO_MANY_PREDS "Too many terms in predicate expression"
#define E_INVALID_VALUE "Invalid value (did you forget quotes)?"
#define E_NO_FILTER "No filter found"

static const char *const op_text[OP_COUNT] = {"~", "!=", "==", "<=", "<", ">=", ">", "&"};

enum node_type { N_PRED, N_AND, N_OR, N_NOT };

struct node {
	uint8_t type;
	int32_t a, b;        /* children (node indices); N_PRED: a is the predicate */
	int32_t first_leaf;  /* the predicate evaluated first in this subtree */
};

/* A field as a predicate sees it: the caller's, or one of the kernel's generic ones. */
enum field_class { F_INT, F_CHARS, F_DATA_LOC, F_REL_LOC, F_OTHER, F_CPU, F_COMM, F_MISSING };

struct field_ref {
	const char *name;
	size_t name_len;
	enum field_class cls;
	uint32_t offset, size;
	bool is_signed;
};

struct parser {
	const char *s;
	size_t pos;
	const struct tb_filter_field *fields;
	size_t nfields;
	unsigned flags; /* TB_FILTER_MISSING_FALSE */
	struct node *nodes;
	size_t nnodes, node_cap;
	struct filter_pred *preds;
	size_t npreds, pred_cap;
	size_t *pat_off; /* per predicate: where its pattern is in pool */
	char *pool;
	size_t pool_len, pool_cap;
	uint32_t min_len;
	unsigned uses;
	struct tb_filter_error *err;
	int rc; /* 0, or the first failure */
};

__attribute__((format(printf, 4, 5))) static int fail(struct parser *p, size_t pos, const char *msg,
						      const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (p->rc)
		return -1;
	p->rc = -EINVAL;
	if (!p->err)
		return -1;
	p->err->pos = pos;
	n = (size_t)snprintf(p->err->reason, sizeof(p->err->reason), "%s", msg);
	if (fmt && n + 2 < sizeof(p->err->reason)) {
		memcpy(p->err->reason + n, ": ", 3);
		va_start(ap, fmt);
		vsnprintf(p->err->reason + n + 2, sizeof(p->err->reason) - n - 2, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int out_of_memory(struct parser *p)
{
	if (!p->rc)
		p->rc = -ENOMEM;
	return -1;
}

static void skip_space(struct parser *p)
{
	while (isspace((unsigned char)p->s[p->pos]))
		p->pos++;
}

/* ---------------------------------------------------------- first scan */

/* Quotes closed, parentheses balanced and not too deep, and some predicate at all. */
static int check_balance(struct parser *p)
{
	size_t open_at[MAX_DEPTH + 1], depth = 0, quote_at = 0;
	bool anything = false;
	char quote = 0;

	for (size_t i = 0; p->s[i]; i++) {
		char c = p->s[i];
		if (quote) {
			if (c == quote)
				quote = 0;
			continue;
		}
		if (c == '"' || c == '\'') {
			quote = c;
			quote_at = i;
		} else if (c == '(') {
			if (depth == MAX_DEPTH)
				return fail(p, i, E_TOO_MANY_OPEN, "nested deeper than %d", MAX_DEPTH);
			open_at[depth++] = i;
		} else if (c == ')') {
			if (depth == 0)
				return fail(p, i, E_TOO_MANY_CLOSE, "this ')' closes nothing");
			depth--;
		} else if (!isspace((unsigned char)c) && c != '!' && c != '&' && c != '|') {
			anything = true;
		}
	}
	if (quote)
		return fail(p, quote_at, E_MISSING_QUOTE, "the string starting here does not end");
	if (depth)
		return fail(p, open_at[depth - 1], E_TOO_MANY_OPEN, "this '(' is never closed");
	if (!anything)
		return fail(p, 0, E_NO_FILTER, "the expression has no predicate");
	return 0;
}

/* ---------------------------------------------------------------- tree */

static int add_node(struct parser *p, enum node_type type, int32_t a, int32_t b)
{
	if (a < 0 || (type != N_PRED && type != N_NOT && b < 0))
		return -1;
	struct node *grown = tb__grow(p->nodes, &p->node_cap, p->nnodes + 1, sizeof(*grown), 16);
	if (!grown)
		return out_of_memory(p);
	p->nodes = grown;
	p->nodes[p->nnodes] = (struct node){(uint8_t)type, a, b,
					    type == N_PRED ? a : p->nodes[a].first_leaf};
	return (int)p->nnodes++;
}

/* A new predicate, zeroed; NULL when out of memory or past MAX_PREDS. */
static struct filter_pred *add_pred(struct parser *p, size_t pos)
{
	if (p->npreds == MAX_PREDS) {
		fail(p, pos, E_TOO_MANY_PREDS, "more than %d predicates", MAX_PREDS);
		return NULL;
	}
	if (p->npreds == p->pred_cap) {
		size_t cap = p->pred_cap ? 2 * p->pred_cap : 8;
		struct filter_pred *grown = realloc(p->preds, cap * sizeof(*grown));
		size_t *offs = grown ? realloc(p->pat_off, cap * sizeof(*offs)) : NULL;
		if (grown)
			p->preds = grown;
		if (!offs) {
			out_of_memory(p);
			return NULL;
		}
		p->pat_off = offs;
		p->pred_cap = cap;
	}
	memset(&p->preds[p->npreds], 0, sizeof(p->preds[0]));
	p->pat_off[p->npreds] = SIZE_MAX;
	return &p->preds[p->npreds++];
}

/* text[0..len) and a NUL into the pool; its offset, or SIZE_MAX when out of memory. */
static size_t pool_add(struct parser *p, const char *text, size_t len)
{
	size_t at = p->pool_len;

	char *grown = tb__grow(p->pool, &p->pool_cap, p->pool_len + len + 1, 1, 64);
	if (!grown)
		return SIZE_MAX;
	p->pool = grown;
	memcpy(p->pool + at, text, len);
	p->pool[at + len] = '\0';
	p->pool_len += len + 1;
	return at;
}

/* -------------------------------------------------------------- fields */

static enum field_class class_of(const struct tb_filter_field *f)
{
	switch (f->kind) {
	case TB_FILTER_INT:
		return F_INT;
	case TB_FILTER_CHARS:
		return F_CHARS;
	case TB_FILTER_DATA_LOC:
		return F_DATA_LOC;
	case TB_FILTER_REL_LOC:
		return F_REL_LOC;
	default:
		return F_OTHER;
	}
}

/* The event's own fields first, then the kernel's generic ones (as trace_find_event_field). */
static bool find_field(const struct parser *p, const char *name, size_t len, struct field_ref *out)
{
	static const struct {
		const char *name;
		enum field_class cls;
	} generic[] = {{"CPU", F_CPU}, {"cpu", F_CPU}, {"common_cpu", F_CPU}, {"COMM", F_COMM}, {"comm", F_COMM}};

	*out = (struct field_ref){.name = name, .name_len = len, .cls = F_MISSING};
	for (size_t i = 0; i < p->nfields; i++) {
		const struct tb_filter_field *f = &p->fields[i];
		if (f->name && strlen(f->name) == len && !memcmp(f->name, name, len)) {
			out->cls = class_of(f);
			out->offset = f->offset;
			out->size = f->size;
			out->is_signed = f->is_signed;
			return true;
		}
	}
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (strlen(generic[i].name) == len && !memcmp(generic[i].name, name, len)) {
			out->cls = generic[i].cls;
			out->size = 4;
			out->is_signed = true; /* the kernel declares CPU an int */
			return true;
		}
	return false;
}

static bool is_string_class(enum field_class c)
{
	return c == F_CHARS || c == F_DATA_LOC || c == F_REL_LOC || c == F_COMM;
}

static void need_bytes(struct parser *p, uint32_t offset, uint32_t size)
{
	uint64_t end = (uint64_t)offset + size;

	if (end > p->min_len)
		p->min_len = end > UINT32_MAX ? UINT32_MAX : (uint32_t)end;
}

/* --------------------------------------------------------------- values */

/* The kernel's kstrtoull with base 0: 0x hex, 0 octal, else decimal; every character a digit. */
static bool parse_unsigned(const char *t, size_t n, uint64_t *out)
{
	unsigned base = 10;
	size_t i = 0;
	uint64_t v = 0;

	if (n >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
		base = 16, i = 2;
	else if (n >= 1 && t[0] == '0')
		base = 8;
	if (i == n)
		return false;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		unsigned d = isdigit(c) ? (unsigned)(c - '0') : isxdigit(c) ? (unsigned)(tolower(c) - 'a' + 10) : 99;
		if (d >= base || v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* kstrtoll: an optional '-', then as above, within int64_t. */
static bool parse_signed(const char *t, size_t n, uint64_t *out)
{
	bool neg = n > 0 && t[0] == '-';
	uint64_t mag;

	if (!parse_unsigned(t + neg, n - neg, &mag))
		return false;
	if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? (uint64_t)0 - mag : mag;
	return true;
}

/* v cut to size bytes, then extended as the field is: what the kernel's (type) cast leaves. */
static uint64_t fit(uint64_t v, unsigned size, bool is_signed)
{
	unsigned shift = 64 - 8 * size;

	if (size >= 8)
		return v;
	v &= (UINT64_C(1) << (8 * size)) - 1;
	return is_signed ? (uint64_t)((int64_t)(v << shift) >> shift) : v;
}

static int number_pred(struct parser *p, const struct field_ref *f, enum filter_op op, size_t vpos)
{
	size_t end = vpos + (p->s[vpos] == '-');
	struct filter_pred *pred;
	uint64_t v;

	if (is_string_class(f->cls))
		return fail(p, vpos, E_EXPECT_STRING, "%.*s is a string: quote the value",
			    (int)f->name_len, f->name);
	if (op == OP_GLOB)
		return fail(p, vpos, E_ILLEGAL_FIELD_OP, "~ matches strings, %.*s is a number",
			    (int)f->name_len, f->name);
	while (isalnum((unsigned char)p->s[end]))
		end++;
	if (end - vpos >= MAX_NUMBER)
		return fail(p, vpos, E_OPERAND_TOO_LONG, "a number has fewer than %d characters",
			    MAX_NUMBER);
	if (!(f->is_signed || f->cls == F_MISSING ? parse_signed : parse_unsigned)(p->s + vpos, end - vpos, &v) &&
	    !(f->cls == F_MISSING && parse_unsigned(p->s + vpos, end - vpos, &v)))
		return fail(p, vpos, E_ILLEGAL_INTVAL, "'%.*s' is not a%s 64-bit number", (int)(end - vpos),
			    p->s + vpos, f->is_signed ? " signed" : "n unsigned");
	if (f->cls == F_OTHER || (f->cls == F_INT && f->size != 1 && f->size != 2 && f->size != 4 &&
				  f->size != 8))
		return fail(p, vpos, E_ILLEGAL_FIELD_OP, "%.*s (%u bytes) is no integer to compare",
			    (int)f->name_len, f->name, f->size);
	pred = add_pred(p, vpos);
	if (!pred)
		return -1;
	pred->kind = f->cls == F_CPU ? PRED_CPU : f->cls == F_MISSING ? PRED_FALSE : PRED_INT;
	pred->op = (uint8_t)op;
	pred->size = (uint8_t)f->size;
	pred->is_signed = f->is_signed;
	pred->offset = f->offset;
	pred->val = fit(v, f->size, f->is_signed);
	if (f->cls == F_CPU)
		p->uses |= TB_FILTER_USES_CPU;
	else if (f->cls != F_MISSING)
		need_bytes(p, f->offset, f->size);
	p->pos = end;
	return (int)(p->npreds - 1);
}

/*
 * A '~' pattern the kernel's way (filter_parse_regex): a leading '!'
 * inverts; one starting with a digit is matched whole; "*x" is a suffix,
 * "x*" a prefix, "*x*" a substring; any other '*', or '?', '[' or '\',
 * makes it a glob.
 */
static enum str_match glob_kind(char *pat, size_t *len, bool *invert, const char **start)
{
	enum str_match kind = MATCH_FULL;
	size_t n = *len;

	*invert = false;
	if (n && pat[0] == '!') {
		*invert = true;
		pat++, n--;
	}
	*start = pat;
	*len = n;
	if (n && isdigit((unsigned char)pat[0]))
		return MATCH_FULL;
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == '*' && i == 0) {
			kind = MATCH_END;
		} else if (pat[i] == '*' && i == n - 1) {
			kind = kind == MATCH_END ? MATCH_MIDDLE : MATCH_FRONT;
			*len = i; /* the final '*' goes */
			break;
		} else if (pat[i] == '*' || strchr("[?\\", pat[i])) {
			return MATCH_GLOB;
		}
	}
	if (n && pat[0] == '*') {
		(*start)++;
		(*len)--;
	}
	return kind;
}

static int string_pred(struct parser *p, const struct field_ref *f, enum filter_op op, size_t vpos)
{
	const char *close = strchr(p->s + vpos + 1, p->s[vpos]);
	char pat[MAX_STRING];
	const char *start = pat;
	size_t len;
	struct filter_pred *pred;
	bool invert = op == OP_NE;
	enum str_match kind = MATCH_FULL;

	if (op != OP_EQ && op != OP_NE && op != OP_GLOB)
		return fail(p, vpos, E_ILLEGAL_FIELD_OP, "strings take ==, != and ~, not %s", op_text[op]);
	if (!is_string_class(f->cls) && f->cls != F_MISSING)
		return fail(p, vpos, E_EXPECT_DIGIT, "%.*s is %s: its value takes no quotes",
			    (int)f->name_len, f->name, f->cls == F_OTHER ? "no string" : "a number");
	if (!close)
		return fail(p, vpos, E_MISSING_QUOTE, "the string starting here does not end");
	len = (size_t)(close - (p->s + vpos + 1));
	if (len >= MAX_STRING)
		return fail(p, vpos, E_OPERAND_TOO_LONG, "a string has fewer than %d characters",
			    MAX_STRING);
	memcpy(pat, p->s + vpos + 1, len);
	if (op == OP_GLOB)
		kind = glob_kind(pat, &len, &invert, &start);
	pred = add_pred(p, vpos);
	if (!pred)
		return -1;
	pred->kind = f->cls == F_MISSING ? PRED_FALSE : PRED_STR;
	pred->op = (uint8_t)op;
	pred->invert = invert;
	pred->match = (uint8_t)kind;
	pred->offset = f->offset;
	pred->field_size = f->size;
	pred->pat_len = (uint32_t)len;
	pred->source = f->cls == F_CHARS ? SRC_CHARS : f->cls == F_DATA_LOC ? SRC_DATA_LOC
					  : f->cls == F_REL_LOC ? SRC_REL_LOC : SRC_COMM;
	p->pat_off[p->npreds - 1] = pool_add(p, start, len);
	if (p->pat_off[p->npreds - 1] == SIZE_MAX)
		return out_of_memory(p);
	if (f->cls == F_COMM)
		p->uses |= TB_FILTER_USES_COMM;
	else if (f->cls != F_MISSING)
		need_bytes(p, f->offset, f->cls == F_CHARS ? f->size : 4);
	p->pos = (size_t)(close - p->s) + 1;
	return (int)(p->npreds - 1);
}

/* FIELD OP VALUE: the predicate's index, or -1. */
static int predicate(struct parser *p)
{
	size_t start = p->pos, vpos;
	struct field_ref f;
	int op = 0;

	while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_')
		p->pos++;
	if (p->pos == start)
		return fail(p, start, E_FIELD_NOT_FOUND, "expected a field name here");
	if (!find_field(p, p->s + start, p->pos - start, &f) && !(p->flags & TB_FILTER_MISSING_FALSE))
		return fail(p, start, E_FIELD_NOT_FOUND, "this event has no field '%.*s'",
			    (int)(p->pos - start), p->s + start);
	skip_space(p);
	while (op < OP_COUNT && strncmp(p->s + p->pos, op_text[op], strlen(op_text[op])))
		op++;
	if (op == OP_COUNT)
		return fail(p, p->pos, E_INVALID_OP, "expected ==, !=, <, <=, >, >=, & or ~ after %.*s",
			    (int)f.name_len, f.name);
	p->pos += strlen(op_text[op]);
	skip_space(p);
	vpos = p->pos;
	if (p->s[vpos] == '"' || p->s[vpos] == '\'')
		return string_pred(p, &f, (enum filter_op)op, vpos);
	if (isdigit((unsigned char)p->s[vpos]) || p->s[vpos] == '-')
		return number_pred(p, &f, (enum filter_op)op, vpos);
	return fail(p, vpos, E_INVALID_VALUE, "expected a number or a quoted string");
}

/* ---------------------------------------------------------- connectives */

enum joint { J_END, J_AND, J_OR, J_BAD };

/* What follows a predicate or a ')': the end, a ')', && or ||; anything else is refused. */
static enum joint joint(struct parser *p)
{
	char c;

	skip_space(p);
	c = p->s[p->pos];
	if (c == '\0' || c == ')')
		return J_END;
	if ((c == '&' || c == '|') && p->s[p->pos + 1] == c)
		return c == '&' ? J_AND : J_OR;
	fail(p, p->pos, E_TOO_MANY_PREDS, "expected &&, || or ')' here");
	return J_BAD;
}

/* The kernel ignores a final && or || (with only '!'s and spaces after it). */
static bool only_tail_left(struct parser *p)
{
	for (size_t i = p->pos; p->s[i]; i++)
		if (!isspace((unsigned char)p->s[i]) && p->s[i] != '!')
			return false;
	p->pos += strlen(p->s + p->pos);
	return true;
}

static int parse_or(struct parser *p, int depth);

static int unary(struct parser *p, int depth)
{
	bool negate = false;
	int n;

	for (;;) {
		skip_space(p);
		if (p->s[p->pos] != '!' || p->s[p->pos + 1] == '=' || p->s[p->pos + 1] == '~')
			break;
		negate = !negate;
		p->pos++;
	}
	if (p->s[p->pos] == '(') {
		p->pos++;
		n = parse_or(p, depth + 1);
		if (n < 0)
			return -1;
		skip_space(p);
		if (p->s[p->pos] != ')') /* the first scan makes this unreachable */
			return fail(p, p->pos, E_TOO_MANY_OPEN, "expected ')' here");
		p->pos++;
	} else {
		n = predicate(p);
		if (n < 0)
			return -1;
		n = add_node(p, N_PRED, n, 0);
	}
	return negate ? add_node(p, N_NOT, n, 0) : n;
}

static int parse_and(struct parser *p, int depth)
{
	int left = unary(p, depth);
	enum joint j;

	while (left >= 0 && (j = joint(p)) == J_AND) {
		p->pos += 2;
		if (only_tail_left(p))
			break;
		left = add_node(p, N_AND, left, unary(p, depth));
	}
	return p->rc ? -1 : left;
}

static int parse_or(struct parser *p, int depth)
{
	int left = parse_and(p, depth);

	while (left >= 0 && joint(p) == J_OR) {
		p->pos += 2;
		if (only_tail_left(p))
			break;
		left = add_node(p, N_OR, left, parse_and(p, depth));
	}
	return p->rc ? -1 : left;
}

/* ------------------------------------------------------------- program */

/* Where each predicate of subtree n goes, the subtree going to t when true and f when false. */
static void wire(struct parser *p, int n, int32_t t, int32_t f)
{
	const struct node *nd = &p->nodes[n];

	switch (nd->type) {
	case N_PRED:
		p->preds[nd->a].on_true = t;
		p->preds[nd->a].on_false = f;
		break;
	case N_AND:
		wire(p, nd->a, p->nodes[nd->b].first_leaf, f);
		wire(p, nd->b, t, f);
		break;
	case N_OR:
		wire(p, nd->a, t, p->nodes[nd->b].first_leaf);
		wire(p, nd->b, t, f);
		break;
	default:
		wire(p, nd->a, f, t);
		break;
	}
}

static int finish(struct parser *p, int root, struct tb_filter **out)
{
	struct tb_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	wire(p, root, FILTER_ACCEPT, FILTER_REJECT);
	for (size_t i = 0; i < p->npreds; i++) {
		if (p->pat_off[i] != SIZE_MAX)
			p->preds[i].pattern = p->pool + p->pat_off[i];
		filter_bind(&p->preds[i]);
	}
	f->npreds = (uint32_t)p->npreds;
	f->min_len = p->min_len;
	f->uses = p->uses;
	f->preds = p->preds;
	f->pool = p->pool;
	p->preds = NULL;
	p->pool = NULL;
	filter_tabulate(f);
	*out = f;
	return 0;
}

int tb_filter_compile(const char *expr, const struct tb_filter_field *fields, size_t n,
		      struct tb_filter **out, struct tb_filter_error *err)
{
	return tb_filter_compile_flags(expr, fields, n, 0, out, err);
}

int tb_filter_compile_flags(const char *expr, const struct tb_filter_field *fields, size_t n,
			    unsigned flags, struct tb_filter **out, struct tb_filter_error *err)
{
	struct parser p = {.s = expr, .fields = fields, .nfields = n, .flags = flags, .err = err};
	int root = -1, rc;

	if (!expr || !out || (n && !fields))
		return -EINVAL;
	*out = NULL;
	if (check_balance(&p) == 0) {
		root = parse_or(&p, 0);
		if (root >= 0 && p.s[p.pos] == ')')
			fail(&p, p.pos, E_TOO_MANY_CLOSE, "this ')' closes nothing");
	}
	rc = p.rc ? p.rc : root < 0 ? -ENOMEM : finish(&p, root, out);
	free(p.nodes);
	free(p.preds);
	free(p.pat_off);
	free(p.pool);
	return rc;
}

void tb_filter_free(struct tb_filter *f)
{
	if (!f)
		return;
	free(f->preds);
	free(f->pool);
	free(f);
}

size_t tb_filter_error_text(const char *expr, const struct tb_filter_error *err, char *buf,
			    size_t size)
{
	int n;

	if (!expr || !err)
		return 0;
	n = snprintf(buf, size, "%s\n%*s^\nparse_error: %s\n", expr, (int)err->pos, "", err->reason);
	return n < 0 ? 0 : (size_t)n;
}
