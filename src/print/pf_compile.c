// SPDX-License-Identifier: MIT
/*
 * pf_compile.c - a print fmt (the kernel's TP_printk as the format file
 * shows it) compiled into a program of ops (pf_internal.h).
 *
 * One pass, recursive descent: the format string is walked directive by
 * directive, and each directive parses the C argument expressions it
 * consumes, emitting their code right there.  Constants fold as they are
 * parsed (an expression with no record input emits no code), so the
 * flag tables of __print_flags and the masks the kernel's macros expand to
 * cost nothing per record.  Every recursion of the parser counts against
 * PF_NEST_MAX, and every token is lexed a bounded number of times, so the
 * time is linear in the text and the stack is bounded whatever the input.
 *
 * What is not a print fmt the kernel could have (a field of 3 or 9 bytes
 * used as a number, a float, a table or delimiter that is not a literal,
 * an assignment...) is malformed: -EINVAL, and libtraceevent, which
 * crashes on some such input, never sees it.  What the compiler cannot
 * reproduce exactly it refuses with -ENOTSUP (the caller may hand it to
 * libtraceevent) and names the construct in err->reason: an enum or variable name the
 * environment does not know, a function other than the kernel's print
 * helpers, a pointer the kernel would dereference at print time (%pI4 of
 * an address, %pd, %pV...), the address of record data (%p of an array),
 * statements other than declarations in a ({ ... }) block.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "pf_internal.h"

/* ------------------------------------------------------------- types */

enum { T_INT, T_PTR, T_MEM, T_VOID };

struct ty {
	uint8_t kind;  /* T_* */
	uint8_t size;  /* T_INT: 1, 2, 4 or 8; T_PTR: 8 */
	bool sign;
	bool is_char;  /* T_PTR / T_MEM: the elements are char */
	bool is_bool;  /* T_INT: _Bool, which converts by != 0 */
	bool aggregate; /* T_VOID: a struct or union (sizeof only) */
	bool elsign;
	uint32_t elsize; /* T_PTR / T_MEM: bytes of an element, 0 unknown */
};

static const struct ty ty_int = {.kind = T_INT, .size = 4, .sign = true};
static const struct ty ty_uint = {.kind = T_INT, .size = 4};
static const struct ty ty_long = {.kind = T_INT, .size = 8, .sign = true};
static const struct ty ty_ulong = {.kind = T_INT, .size = 8};

/* Typedef names the kernel's formats use, with their size and signedness on x86-64. */
static const struct named_type {
	const char *name;
	uint8_t size;
	bool sign;
} named_types[] = {
	{"u8", 1, false},        {"s8", 1, true},          {"__u8", 1, false},
	{"__s8", 1, true},       {"uint8_t", 1, false},    {"int8_t", 1, true},
	{"bool", 1, false},      {"_Bool", 1, false},      {"blk_status_t", 1, false},
	{"u16", 2, false},       {"s16", 2, true},         {"__u16", 2, false},
	{"__s16", 2, true},      {"uint16_t", 2, false},   {"int16_t", 2, true},
	{"__le16", 2, false},    {"__be16", 2, false},     {"umode_t", 2, false},
	{"u32", 4, false},       {"s32", 4, true},         {"__u32", 4, false},
	{"__s32", 4, true},      {"uint32_t", 4, false},   {"int32_t", 4, true},
	{"__le32", 4, false},    {"__be32", 4, false},     {"uint", 4, false},
	{"pid_t", 4, true},      {"gfp_t", 4, false},      {"dev_t", 4, false},
	{"uid_t", 4, false},     {"gid_t", 4, false},      {"fmode_t", 4, false},
	{"__kernel_rwf_t", 4, true}, {"blk_opf_t", 4, false}, {"xfs_agnumber_t", 4, false},
	{"xfs_agblock_t", 4, false}, {"xfs_extlen_t", 4, false}, {"xfs_nlink_t", 4, false},
	{"u64", 8, false},       {"s64", 8, true},         {"__u64", 8, false},
	{"__s64", 8, true},      {"uint64_t", 8, false},   {"int64_t", 8, true},
	{"__le64", 8, false},    {"__be64", 8, false},     {"size_t", 8, false},
	{"ssize_t", 8, true},    {"loff_t", 8, true},      {"ulong", 8, false},
	{"uintptr_t", 8, false}, {"intptr_t", 8, true},    {"ptrdiff_t", 8, true},
	{"sector_t", 8, false},  {"blkcnt_t", 8, false},   {"dma_addr_t", 8, false},
	{"phys_addr_t", 8, false}, {"resource_size_t", 8, false}, {"ino_t", 8, false},
	{"time64_t", 8, true},   {"ktime_t", 8, true},     {"pgoff_t", 8, false},
	{"xfs_ino_t", 8, false}, {"xfs_off_t", 8, true},   {"xfs_fsize_t", 8, true},
	{"xfs_fileoff_t", 8, false}, {"xfs_fsblock_t", 8, false}, {"xfs_daddr_t", 8, true},
	{"xfs_rfsblock_t", 8, false}, {"xfs_filblks_t", 8, false}, {"xfs_rtblock_t", 8, false},
};

static const struct named_type *find_named_type(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(named_types) / sizeof(named_types[0]); i++)
		if (strlen(named_types[i].name) == n && !memcmp(named_types[i].name, s, n))
			return &named_types[i];
	return NULL;
}

/* ------------------------------------------------------------- lexer */

enum tok_kind { TK_END, TK_IDENT, TK_NUM, TK_CHAR, TK_STR, TK_PUNCT, TK_BAD };

#define P2(a, b) ((unsigned)(a) << 8 | (unsigned)(b))

struct token {
	uint8_t kind;
	unsigned punct; /* TK_PUNCT: the character(s), P2() for two */
	size_t off, len;
	uint64_t num;   /* TK_NUM, TK_CHAR */
	struct ty numty;
};

struct local {
	const char *name;
	size_t name_len;
	struct ty t;
	bool is_const;
	uint64_t v;
	unsigned slot;
};

struct cc {
	const struct tb_format *f;
	const struct tb_print_env *env;
	struct tb_diag *err;
	int rc;          /* first error, 0 while all is well */
	const char *src; /* the print fmt */
	size_t len;
	struct token tok; /* current token */
	size_t next;      /* where the token after it starts */
	int nest;
	struct tb_printfmt *p;
	size_t ops_cap, pool_cap, specs_cap, syms_cap, tables_cap;
	int depth, max_depth; /* run-time stack, as emitted */
	struct local locals[PF_LOCALS_MAX];
	unsigned nlocals, nslots;
	/*
	 * Uses of jiffies when the environment does not know it: the kernel
	 * reads it when it prints the line, so a trace that did not keep the
	 * value of that moment cannot give it.  The directive whose argument
	 * uses it prints '?' instead of a number made up from a stand-in.
	 */
	unsigned unknown_vars;
};

/* Record the first failure; returns rc for the caller's return. */
static int fail(struct cc *c, int rc, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct cc *c, int rc, size_t off, const char *fmt, ...)
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
static unsigned read_escape(const char *s, size_t len, size_t *i)
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
			return fail(c, -EINVAL, i, "hexadecimal constant without digits");
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
		return fail(c, -EINVAL, i, "bad character in a number");
	if (overflow)
		return fail(c, -EINVAL, t->off, "integer constant does not fit in 64 bits");
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
static int lex(struct cc *c, size_t i, struct token *t)
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
			return fail(c, -EINVAL, i, "unterminated %s literal", s[i] == '"' ? "string" : "character");
		if (s[i] == '"') {
			t->kind = TK_STR;
			return 0;
		}
		size_t k = i + 1;
		unsigned v = (unsigned char)s[k];
		if (v == '\'' )
			return fail(c, -EINVAL, i, "empty character literal");
		k++;
		if (v == '\\')
			v = read_escape(s, c->len, &k);
		if (k != i + t->len - 1)
			return fail(c, -EINVAL, i, "multi-character literal");
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
	return fail(c, -EINVAL, i, "unexpected character 0x%02x", (unsigned char)s[i]);
}

static int advance(struct cc *c)
{
	int rc = lex(c, c->next, &c->tok);

	c->next = c->tok.off + c->tok.len;
	return rc;
}

static bool is_punct(const struct token *t, unsigned p)
{
	return t->kind == TK_PUNCT && t->punct == p;
}

static bool tok_is(const struct cc *c, const struct token *t, const char *word)
{
	size_t n = strlen(word);

	return t->kind == TK_IDENT && t->len == n && !memcmp(c->src + t->off, word, n);
}

static int expect(struct cc *c, unsigned p, const char *what)
{
	if (!is_punct(&c->tok, p))
		return fail(c, -EINVAL, c->tok.off, "expected %s", what);
	return advance(c);
}

/* ------------------------------------------------------------- output */

static bool grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * elem);
	if (!p)
		return false;
	*v = p;
	*cap = n;
	return true;
}

/* Append op with its effect on the stack depth; index of the op or -1. */
static long emit(struct cc *c, struct pf_op op, int delta)
{
	struct tb_printfmt *p = c->p;

	if (c->rc)
		return -1;
	if (!grow((void **)&p->ops, &c->ops_cap, (size_t)p->nops + 1, sizeof(*p->ops))) {
		fail(c, -ENOMEM, 0, "out of memory");
		return -1;
	}
	p->ops[p->nops] = op;
	c->depth += delta;
	if (c->depth > c->max_depth)
		c->max_depth = c->depth;
	return (long)p->nops++;
}

/* Append n bytes (and a NUL) to the pool; their offset, or UINT32_MAX. */
static uint32_t pool_add(struct cc *c, const char *s, size_t n)
{
	struct tb_printfmt *p = c->p;
	uint32_t at = p->pool_len;

	if (n > UINT32_MAX / 2 || !grow((void **)&p->pool, &c->pool_cap, (size_t)p->pool_len + n + 1, 1)) {
		fail(c, -ENOMEM, 0, "out of memory");
		return UINT32_MAX;
	}
	if (n)
		memcpy(p->pool + at, s, n);
	p->pool[at + n] = '\0';
	p->pool_len += (uint32_t)n + 1;
	return at;
}

/* Literal text, merged with the text op just before when it ends where this starts. */
static void emit_text(struct cc *c, const char *s, size_t n)
{
	struct tb_printfmt *p = c->p;
	struct pf_op *last = p->nops ? &p->ops[p->nops - 1] : NULL;
	uint32_t at;

	if (!n || c->rc)
		return;
	if (last && last->code == OP_TEXT && last->a + last->b + 1 == p->pool_len) {
		/* Extend in place: drop the NUL, add the text and a new NUL. */
		p->pool_len--;
		at = pool_add(c, s, n);
		if (at != UINT32_MAX)
			last->b += (uint32_t)n;
		return;
	}
	at = pool_add(c, s, n);
	if (at != UINT32_MAX)
		emit(c, (struct pf_op){.code = OP_TEXT, .a = at, .b = (uint32_t)n}, 0);
}

/* ----------------------------------------------------- expressions */

/*
 * A parsed expression.  A constant has no code (v, or the pool string
 * str/str_len for a literal); anything else has emitted code that leaves
 * its value on the stack, from op index start to the current end.
 */
struct ex {
	struct ty t;
	bool is_const;
	bool is_str; /* constant string literal */
	bool helper; /* may be text a helper put in the output buffer */
	uint64_t v;
	uint32_t str, str_len;
	uint32_t start;
	size_t off; /* where it starts in the text, for messages */
};

static int parse_expr(struct cc *c, struct ex *e);
static int parse_assign(struct cc *c, struct ex *e);
static int parse_unary(struct cc *c, struct ex *e);
static int parse_binary(struct cc *c, struct ex *e, int min_prec);

static int enter(struct cc *c)
{
	if (++c->nest > PF_NEST_MAX)
		return fail(c, -EINVAL, c->tok.off, "expression nested more than %d deep", PF_NEST_MAX);
	return 0;
}

static void leave(struct cc *c)
{
	c->nest--;
}

/* Put a constant on the stack (its code starts here). */
static void materialize(struct cc *c, struct ex *e)
{
	if (!e->is_const)
		return;
	e->start = c->p->nops;
	if (e->is_str)
		emit(c, (struct pf_op){.code = OP_STR, .a = e->str, .b = e->str_len}, 1);
	else
		emit(c, (struct pf_op){.code = OP_CONST, .imm = e->v}, 1);
	e->is_const = false;
	e->is_str = false;
}

/* Throw away the code of e (it must end at the current end). */
static void drop_code(struct cc *c, const struct ex *e, int depth_before)
{
	if (!e->is_const)
		c->p->nops = e->start;
	c->depth = depth_before;
}

static struct ty promote(struct ty t)
{
	if (t.kind == T_INT && t.size < 4)
		return ty_int;
	if (t.kind == T_PTR)
		return ty_ulong;
	return t;
}

/* C's usual arithmetic conversions of two integer types. */
static struct ty common_type(struct ty a, struct ty b)
{
	a = promote(a);
	b = promote(b);
	if (a.size == b.size)
		return a.sign && b.sign ? a : (a.sign ? b : a);
	return a.size > b.size ? a : b;
}

static bool is_scalar(const struct ty *t)
{
	return t->kind == T_INT || t->kind == T_PTR;
}

static int need_scalar(struct cc *c, const struct ex *e, const char *what)
{
	if (e->helper)
		return fail(c, -ENOTSUP, e->off, "%s of a helper's text", what);
	if (!is_scalar(&e->t))
		return fail(c, -ENOTSUP, e->off, "%s of an array or string (its address is not in the trace)", what);
	return 0;
}

/* Convert e to type t, at compile time or with an op. */
static void convert(struct cc *c, struct ex *e, struct ty t)
{
	if (t.kind == T_INT && (e->t.kind != T_INT || e->t.size != t.size || e->t.sign != t.sign)) {
		if (e->is_const)
			e->v = pf_norm(e->v, t.size, t.sign);
		else if (t.size < 8)
			emit(c, (struct pf_op){.code = OP_CONVERT, .size = t.size, .sign = t.sign}, 0);
	}
	e->t = t;
}

static uint64_t type_bytes(const struct ty *t)
{
	return t->kind == T_INT ? t->size : 8;
}

/* ------------------------------------------------------ type names */

/* Does the token after '(' start a type name? */
static bool starts_type(struct cc *c, const struct token *t)
{
	static const char *const words[] = {"unsigned", "signed", "char", "short", "int", "long",
					    "void", "const", "volatile", "struct", "union", "enum",
					    "float", "double"};
	struct token after;
	size_t n = t->len;
	const char *s = c->src + t->off;
	uint64_t size;

	if (t->kind != TK_IDENT)
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (tok_is(c, t, words[i]))
			return true;
	for (unsigned i = 0; i < c->nlocals; i++)
		if (c->locals[i].name_len == n && !memcmp(c->locals[i].name, s, n))
			return false;
	if (find_named_type(s, n))
		return true;
	/* A typedef name: "(name *" or "(name)" followed by what can only start an operand. */
	if (lex(c, t->off + t->len, &after) < 0)
		return false;
	if (is_punct(&after, '*'))
		return true;
	if (!is_punct(&after, ')'))
		return false;
	if (n > 2 && s[n - 2] == '_' && s[n - 1] == 't')
		return true;
	if (c->env && c->env->type_size) {
		char name[TB_NAME_MAX];
		if (n < sizeof(name)) {
			memcpy(name, s, n);
			name[n] = '\0';
			if (c->env->type_size(c->env->ctx, name, &size))
				return true;
		}
	}
	return false;
}

/* sizeof of a kernel type from the environment. */
static bool env_type_size(struct cc *c, const char *s, size_t n, uint64_t *size)
{
	char name[TB_NAME_MAX];

	if (!c->env || !c->env->type_size || n >= sizeof(name))
		return false;
	memcpy(name, s, n);
	name[n] = '\0';
	return c->env->type_size(c->env->ctx, name, size);
}

/*
 * A type name: specifiers, then '*'s.  Leaves the token after it current.
 * *bytes gets sizeof the type when known (0 if not).
 */
static int parse_type(struct cc *c, struct ty *t, uint64_t *bytes)
{
	int longs = 0, shorts = 0, chars = 0, voids = 0, bools = 0, n = 0;
	bool is_unsigned = false, is_enum = false, aggregate = false, env_sized = false;
	bool env_int = false; /* a typedef the environment sizes like an integer */
	const struct named_type *named = NULL;
	uint64_t agg_size = 0;
	struct token after;

	memset(t, 0, sizeof(*t));
	*bytes = 0;
	for (;; n++) {
		const struct token *k = &c->tok;
		if (k->kind != TK_IDENT)
			break;
		if (tok_is(c, k, "const") || tok_is(c, k, "volatile") || tok_is(c, k, "signed") ||
		    tok_is(c, k, "int")) {
		} else if (tok_is(c, k, "unsigned")) {
			is_unsigned = true;
		} else if (tok_is(c, k, "long")) {
			longs++;
		} else if (tok_is(c, k, "short")) {
			shorts++;
		} else if (tok_is(c, k, "char")) {
			chars++;
		} else if (tok_is(c, k, "void")) {
			voids++;
		} else if (tok_is(c, k, "_Bool") || tok_is(c, k, "bool")) {
			bools++;
		} else if (tok_is(c, k, "float") || tok_is(c, k, "double")) {
			return fail(c, -EINVAL, k->off, "floating point type");
		} else if (tok_is(c, k, "struct") || tok_is(c, k, "union") || tok_is(c, k, "enum")) {
			size_t tag = k->off;
			is_enum = tok_is(c, k, "enum");
			if (advance(c) < 0)
				return c->rc;
			if (c->tok.kind != TK_IDENT)
				return fail(c, -EINVAL, c->tok.off, "expected a tag name");
			if (!is_enum) {
				aggregate = true;
				env_sized = env_type_size(c, c->src + tag, c->tok.off + c->tok.len - tag, &agg_size);
			}
		} else if (n == 0 && (named = find_named_type(c->src + k->off, k->len)) != NULL) {
		} else if (n == 0) {
			/* Another typedef: sized by the environment, or opaque behind a pointer. */
			env_sized = env_type_size(c, c->src + k->off, k->len, &agg_size);
			if (lex(c, k->off + k->len, &after) < 0)
				return c->rc;
			if (!env_sized && !is_punct(&after, '*'))
				return fail(c, -ENOTSUP, k->off, "unknown type %.*s", (int)k->len, c->src + k->off);
			aggregate = !env_sized || (agg_size != 1 && agg_size != 2 && agg_size != 4 && agg_size != 8);
			env_int = !aggregate; /* sized like an integer: taken as an unsigned one */
		} else {
			break;
		}
		if (advance(c) < 0)
			return c->rc;
	}
	if (!n)
		return fail(c, -EINVAL, c->tok.off, "expected a type");
	if (named) {
		*t = (struct ty){.kind = T_INT, .size = named->size, .sign = named->sign,
				 .is_bool = !strcmp(named->name, "bool") || !strcmp(named->name, "_Bool")};
	} else if (env_int) {
		*t = (struct ty){.kind = T_INT, .size = (uint8_t)agg_size};
	} else if (aggregate || voids) {
		t->kind = T_VOID;
		t->aggregate = aggregate;
	} else if (bools) {
		*t = (struct ty){.kind = T_INT, .size = 1, .is_bool = true};
	} else if (is_enum) {
		*t = ty_uint;
	} else {
		t->kind = T_INT;
		t->size = chars ? 1 : shorts ? 2 : longs ? 8 : 4;
		t->sign = !is_unsigned;
	}
	if (t->kind == T_INT)
		*bytes = t->size;
	else if (aggregate && env_sized)
		*bytes = agg_size;
	if (is_punct(&c->tok, '*')) {
		struct ty base = *t;
		t->kind = T_PTR;
		t->size = 8;
		t->sign = false;
		t->is_bool = false;
		t->aggregate = false;
		t->is_char = base.kind == T_INT && chars && !named;
		t->elsign = base.sign;
		t->elsize = base.kind == T_INT ? base.size : !aggregate ? 1 /* void *: bytes, as GNU C */
				: env_sized ? (uint32_t)agg_size : 0;
		*bytes = 8;
		while (is_punct(&c->tok, '*')) {
			if (advance(c) < 0)
				return c->rc;
			if (is_punct(&c->tok, '*')) {
				t->elsize = 8;
				t->is_char = false;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------ primaries */

static int parse_string_literal(struct cc *c, struct ex *e)
{
	/* Adjacent literals are one string. */
	char *buf = NULL;
	size_t n = 0, cap = 0;
	uint32_t at;

	while (c->tok.kind == TK_STR) {
		const char *s = c->src + c->tok.off + 1;
		size_t len = c->tok.len - 2;
		if (!grow((void **)&buf, &cap, n + len + 1, 1)) {
			free(buf);
			return fail(c, -ENOMEM, 0, "out of memory");
		}
		for (size_t i = 0; i < len;) {
			if (s[i] == '\\') {
				i++;
				buf[n++] = (char)read_escape(s, len, &i);
			} else {
				buf[n++] = s[i++];
			}
		}
		if (advance(c) < 0) {
			free(buf);
			return c->rc;
		}
	}
	at = pool_add(c, buf ? buf : "", n);
	free(buf);
	if (at == UINT32_MAX)
		return c->rc;
	e->is_const = true;
	e->is_str = true;
	e->str = at;
	e->str_len = (uint32_t)n;
	e->t = (struct ty){.kind = T_MEM, .is_char = true, .elsign = true, .elsize = 1};
	return 0;
}

/* The element type of a field declared TYPE NAME[N]. */
static void element_type(const struct tb_field *fl, struct ty *t)
{
	const char *type = fl->type;
	const struct named_type *nt = find_named_type(type, strlen(type));
	bool is_unsigned = strstr(type, "unsigned") != NULL;

	t->elsize = 0;
	t->elsign = !is_unsigned;
	if (nt) {
		t->elsize = nt->size;
		t->elsign = nt->sign;
	} else if (strstr(type, "*")) {
		t->elsize = 8;
		t->elsign = false;
	} else if (strstr(type, "char")) {
		t->elsize = 1;
	} else if (strstr(type, "short")) {
		t->elsize = 2;
	} else if (strstr(type, "long")) {
		t->elsize = 8;
	} else if (strstr(type, "int")) {
		t->elsize = 4;
	}
	t->is_char = strstr(type, "char") != NULL && t->elsize == 1;
}

static const struct tb_field *field_named(struct cc *c, size_t off, size_t n)
{
	for (size_t i = 0; i < c->f->nfields; i++)
		if (strlen(c->f->fields[i].name) == n && !memcmp(c->f->fields[i].name, c->src + off, n))
			return &c->f->fields[i];
	return NULL;
}

static void note_static(struct cc *c, uint32_t end)
{
	if (end > c->p->static_end)
		c->p->static_end = end;
}

/* REC->name */
static int field_access(struct cc *c, struct ex *e)
{
	const struct tb_field *fl;

	if (c->tok.kind != TK_IDENT)
		return fail(c, -EINVAL, c->tok.off, "expected a field name after REC->");
	fl = field_named(c, c->tok.off, c->tok.len);
	if (!fl)
		return fail(c, -EINVAL, c->tok.off, "no field named %.*s", (int)c->tok.len, c->src + c->tok.off);
	e->is_const = false;
	e->start = c->p->nops;
	if (fl->kind == TB_FIELD_STATIC && fl->is_array) {
		e->t = (struct ty){.kind = T_MEM};
		element_type(fl, &e->t);
		note_static(c, fl->offset + fl->size);
		emit(c, (struct pf_op){.code = OP_FIELD_MEM, .a = fl->offset, .b = fl->size}, 1);
	} else if (fl->kind == TB_FIELD_STATIC && fl->size != 1 && fl->size != 2 && fl->size != 4 &&
		   fl->size != 8) {
		return fail(c, -EINVAL, c->tok.off, "field %s of %u bytes is not a number", fl->name, fl->size);
	} else {
		bool ptr = fl->kind == TB_FIELD_STATIC && strchr(fl->type, '*') && fl->size == 8;
		e->t = (struct ty){.kind = ptr ? T_PTR : T_INT, .size = (uint8_t)fl->size,
				   .sign = fl->is_signed && !ptr};
		if (ptr) {
			struct tb_field elem = *fl;
			char *star = strrchr(elem.type, '*');
			*star = '\0';
			element_type(&elem, &e->t);
			if (!strstr(elem.type, "void") && !find_named_type(elem.type, strlen(elem.type)) &&
			    !strstr(elem.type, "char") && !strstr(elem.type, "int") && !strstr(elem.type, "long") &&
			    !strstr(elem.type, "short"))
				e->t.elsize = 0;
			if (strstr(elem.type, "void"))
				e->t.elsize = 1;
		}
		note_static(c, fl->offset + fl->size);
		emit(c, (struct pf_op){.code = OP_FIELD, .a = fl->offset, .size = (uint8_t)fl->size,
				       .sign = e->t.sign}, 1);
	}
	return advance(c);
}

/* The dynamic field named by the identifier in a helper's parentheses. */
static int dynamic_field(struct cc *c, bool rel, const struct tb_field **out)
{
	const struct tb_field *fl;

	if (c->tok.kind != TK_IDENT)
		return fail(c, -EINVAL, c->tok.off, "expected a field name");
	fl = field_named(c, c->tok.off, c->tok.len);
	if (!fl)
		return fail(c, -EINVAL, c->tok.off, "no field named %.*s", (int)c->tok.len, c->src + c->tok.off);
	if (fl->kind != (rel ? TB_FIELD_REL_LOC : TB_FIELD_DATA_LOC))
		return fail(c, -EINVAL, c->tok.off, "field %s is not a %s field", fl->name,
			    rel ? "__rel_loc" : "__data_loc");
	*out = fl;
	note_static(c, fl->offset + fl->size);
	return advance(c);
}

static uint8_t dyn_mode(const struct tb_field *fl)
{
	if (fl->kind == TB_FIELD_REL_LOC)
		return PF_DYN_REL4;
	return fl->size == 2 ? PF_DYN_LOC2 : PF_DYN_LOC4;
}

/* One argument of a call, on the stack (or constant when allow_const). */
static int call_arg(struct cc *c, struct ex *e, bool allow_const)
{
	if (parse_assign(c, e) < 0)
		return c->rc;
	if (!allow_const)
		materialize(c, e);
	return 0;
}

static int comma(struct cc *c)
{
	return expect(c, ',', "','");
}

/* {value, "name"} entries up to the closing parenthesis of the call. */
static int symbol_table(struct cc *c, uint32_t *table, uint32_t delim, uint32_t delim_len)
{
	struct tb_printfmt *p = c->p;
	struct pf_table tab = {.first = p->nsyms, .delim = delim, .delim_len = delim_len};
	bool ended = false;

	while (is_punct(&c->tok, ',')) {
		struct ex v = {0}, name = {0};
		int depth = c->depth;
		if (advance(c) < 0)
			return c->rc;
		if (is_punct(&c->tok, ')'))
			break; /* a trailing comma */
		if (expect(c, '{', "'{' of a table entry") < 0)
			return c->rc;
		if (is_punct(&c->tok, '}')) {
			/* { }: all zero, an unnamed entry that ends the table */
			ended = true;
			if (advance(c) < 0)
				return c->rc;
			continue;
		}
		if (parse_assign(c, &v) < 0)
			return c->rc;
		if (!v.is_const || v.is_str) {
			if (!c->rc)
				fail(c, -EINVAL, v.off, "table value is not a constant");
			return c->rc;
		}
		if (comma(c) < 0 || parse_assign(c, &name) < 0)
			return c->rc;
		c->depth = depth;
		if (expect(c, '}', "'}' of a table entry") < 0)
			return c->rc;
		if (!name.is_const || (!name.is_str && (name.t.kind == T_MEM || name.v != 0)))
			return fail(c, -EINVAL, name.off, "table name is not a string literal");
		if (!name.is_str) /* NULL: the kernel's loops stop at the first unnamed entry */
			ended = true;
		if (ended)
			continue;
		if (!grow((void **)&p->syms, &c->syms_cap, (size_t)p->nsyms + 1, sizeof(*p->syms)))
			return fail(c, -ENOMEM, 0, "out of memory");
		/* The kernel prints names as C strings: up to a NUL inside. */
		p->syms[p->nsyms++] = (struct pf_sym){pf_norm(v.v, type_bytes(&v.t), v.t.sign), name.str,
						      (uint32_t)strnlen(p->pool + name.str, name.str_len)};
		tab.count++;
	}
	if (!grow((void **)&p->tables, &c->tables_cap, (size_t)p->ntables + 1, sizeof(*p->tables)))
		return fail(c, -ENOMEM, 0, "out of memory");
	p->tables[p->ntables] = tab;
	*table = p->ntables++;
	return 0;
}

/* The unsigned long value a flags / symbolic helper receives. */
static int helper_value(struct cc *c, struct ex *v)
{
	if (call_arg(c, v, false) < 0 || need_scalar(c, v, "a helper's value") < 0)
		return c->rc;
	convert(c, v, ty_ulong);
	return 0;
}

static int helper_flags(struct cc *c, struct ex *e)
{
	struct ex v = {.off = c->tok.off}, delim = {0};
	uint32_t table;
	int depth = c->depth;

	if (helper_value(c, &v) < 0 || comma(c) < 0 || parse_assign(c, &delim) < 0)
		return c->rc;
	if (!delim.is_str) {
		if (!(delim.is_const && !delim.v))
			return fail(c, -EINVAL, delim.off, "__print_flags delimiter is not a string literal");
		delim.str = pool_add(c, "", 0), delim.str_len = 0;
	}
	if (symbol_table(c, &table, delim.str, (uint32_t)strnlen(c->p->pool + delim.str, delim.str_len)) < 0)
		return c->rc;
	c->depth = depth + 1;
	emit(c, (struct pf_op){.code = OP_FLAGS, .a = table}, 0);
	e->helper = true;
	return 0;
}

static int helper_symbolic(struct cc *c, struct ex *e)
{
	struct ex v = {.off = c->tok.off};
	uint32_t table;
	int depth = c->depth;

	if (helper_value(c, &v) < 0 || symbol_table(c, &table, 0, 0) < 0)
		return c->rc;
	c->depth = depth + 1;
	emit(c, (struct pf_op){.code = OP_SYMBOLIC, .a = table}, 0);
	e->helper = true;
	return 0;
}

static int need_memory(struct cc *c, const struct ex *e, const char *what)
{
	if (e->helper)
		return fail(c, -ENOTSUP, e->off, "%s of a helper's text", what);
	if (e->t.kind != T_MEM)
		return fail(c, -ENOTSUP, e->off, "%s of a kernel address (dereferenced at print time)", what);
	return 0;
}

/* __print_hex(buf, len), __print_hex_str(buf, len) */
static int helper_hex(struct cc *c, struct ex *e, bool concat)
{
	struct ex buf = {.off = c->tok.off}, len = {0};

	if (call_arg(c, &buf, false) < 0 || need_memory(c, &buf, "__print_hex") < 0 || comma(c) < 0)
		return c->rc;
	len.off = c->tok.off;
	if (call_arg(c, &len, false) < 0 || need_scalar(c, &len, "a length") < 0)
		return c->rc;
	convert(c, &len, ty_int);
	emit(c, (struct pf_op){.code = OP_HEX, .mode = concat}, -1);
	e->helper = true;
	return 0;
}

/* __print_array(array, count, el_size) */
static int helper_array(struct cc *c, struct ex *e)
{
	struct ex arr = {.off = c->tok.off}, count = {0}, elsize = {0};

	if (call_arg(c, &arr, false) < 0 || need_memory(c, &arr, "__print_array") < 0 || comma(c) < 0)
		return c->rc;
	count.off = c->tok.off;
	if (call_arg(c, &count, false) < 0 || need_scalar(c, &count, "a count") < 0 || comma(c) < 0)
		return c->rc;
	convert(c, &count, ty_int);
	elsize.off = c->tok.off;
	if (call_arg(c, &elsize, true) < 0)
		return c->rc;
	if (!elsize.is_const || elsize.is_str || elsize.v == 0 || elsize.v > 64)
		return fail(c, -EINVAL, elsize.off, "__print_array element size is not a small constant");
	emit(c, (struct pf_op){.code = OP_ARRAY, .a = (uint32_t)elsize.v}, -1);
	e->helper = true;
	return 0;
}

/* __print_dynamic_array(field, el_size) */
static int helper_dynamic_array(struct cc *c, struct ex *e)
{
	const struct tb_field *fl;
	struct ex elsize = {0};

	if (dynamic_field(c, false, &fl) < 0 || comma(c) < 0)
		return c->rc;
	elsize.off = c->tok.off;
	if (call_arg(c, &elsize, true) < 0)
		return c->rc;
	if (!elsize.is_const || elsize.is_str || elsize.v == 0 || elsize.v > 64)
		return fail(c, -EINVAL, elsize.off, "element size is not a small constant");
	emit(c, (struct pf_op){.code = OP_DYN_MEM, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	emit(c, (struct pf_op){.code = OP_DYN_LEN, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_DIV, .size = 4,
			       .imm = elsize.v}, 0);
	emit(c, (struct pf_op){.code = OP_ARRAY, .a = (uint32_t)elsize.v}, -1);
	e->helper = true;
	return 0;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/*
 * jiffies_to_msecs(j), with HZ from the environment, as a 64-bit kernel
 * computes it: j * 1000 / HZ rounded up, in unsigned long, returned as
 * unsigned int.  With num/den the ratio 1000/HZ in lowest terms that is
 * (j * num + den - 1) / den, which is also what the kernel's shortcuts for
 * HZ dividing 1000 (den 1) and 1000 dividing HZ (num 1) come to.
 */
static int helper_jiffies(struct cc *c, struct ex *e, size_t at)
{
	int64_t hz = 0;
	uint64_t num, den;

	if (!c->env || !c->env->constant || !c->env->constant(c->env->ctx, "HZ", &hz) || hz <= 0 ||
	    hz > 1000000)
		return fail(c, -ENOTSUP, at, "jiffies_to_msecs needs the kernel's HZ");
	num = 1000 / gcd(1000, (uint64_t)hz);
	den = (uint64_t)hz / gcd(1000, (uint64_t)hz);
	e->off = c->tok.off;
	if (call_arg(c, e, true) < 0 || need_scalar(c, e, "jiffies_to_msecs") < 0)
		return c->rc;
	convert(c, e, ty_ulong);
	if (e->is_const) {
		e->v = (e->v * num + den - 1) / den;
	} else {
		if (num != 1)
			emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_MUL,
					       .size = 8, .imm = num}, 0);
		if (den != 1) {
			emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_ADD,
					       .size = 8, .imm = den - 1}, 0);
			emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_DIV,
					       .size = 8, .imm = den}, 0);
		}
	}
	convert(c, e, ty_uint);
	return 0;
}

/* sizeof(type), sizeof(expr), sizeof expr */
static int parse_sizeof(struct cc *c, struct ex *e)
{
	struct token after;
	uint64_t bytes = 0;
	int depth = c->depth;

	if (is_punct(&c->tok, '(') && lex(c, c->next, &after) == 0 && starts_type(c, &after)) {
		size_t at;
		struct ty t;
		if (advance(c) < 0)
			return c->rc;
		at = c->tok.off;
		if (parse_type(c, &t, &bytes) < 0 || expect(c, ')', "')'") < 0)
			return c->rc;
		if (!bytes)
			return fail(c, -ENOTSUP, at, "sizeof of a type of unknown size");
	} else {
		struct ex inner = {0};
		unsigned unknown = c->unknown_vars;
		if (parse_unary(c, &inner) < 0)
			return c->rc;
		drop_code(c, &inner, depth);
		c->unknown_vars = unknown; /* only its type counts: sizeof(jiffies) is known */
		if (inner.t.kind == T_MEM)
			return fail(c, -ENOTSUP, inner.off, "sizeof of an array");
		bytes = type_bytes(&inner.t);
	}
	e->is_const = true;
	e->t = ty_ulong;
	e->v = bytes;
	return 0;
}

/* ({ TYPE NAME = EXPR; ... EXPR; }) - the kernel's min()/max() and the like. */
static int statement_expr(struct cc *c, struct ex *e)
{
	unsigned nlocals = c->nlocals;
	int depth = c->depth;

	if (advance(c) < 0) /* the '{' */
		return c->rc;
	for (;;) {
		struct token after;
		if (c->tok.kind == TK_IDENT && starts_type(c, &c->tok) &&
		    !(lex(c, c->next, &after) == 0 && is_punct(&after, P2('-', '>')))) {
			struct ty t;
			uint64_t bytes;
			struct ex init = {0};
			struct local *l;
			if (parse_type(c, &t, &bytes) < 0)
				return c->rc;
			if (c->tok.kind != TK_IDENT)
				return fail(c, -ENOTSUP, c->tok.off, "declaration without a plain name");
			if (c->nlocals == PF_LOCALS_MAX || t.kind == T_VOID)
				return fail(c, -ENOTSUP, c->tok.off, "too many or unusable local variables");
			l = &c->locals[c->nlocals];
			l->name = c->src + c->tok.off;
			l->name_len = c->tok.len;
			if (advance(c) < 0 || expect(c, '=', "'=' (declarations need a value)") < 0)
				return c->rc;
			init.off = c->tok.off;
			if (parse_assign(c, &init) < 0 || need_scalar(c, &init, "a local variable") < 0 ||
			    expect(c, ';', "';'") < 0)
				return c->rc;
			convert(c, &init, t);
			l->t = t;
			l->is_const = init.is_const;
			l->v = init.v;
			if (!init.is_const) {
				l->slot = c->nslots++;
				if (l->slot >= PF_LOCALS_MAX)
					return fail(c, -ENOTSUP, init.off, "too many local variables");
				emit(c, (struct pf_op){.code = OP_LOCAL_SET, .a = l->slot}, -1);
			}
			c->nlocals++;
			continue;
		}
		if (parse_expr(c, e) < 0)
			return c->rc;
		if (expect(c, ';', "';'") < 0)
			return c->rc;
		if (!is_punct(&c->tok, '}'))
			return fail(c, -ENOTSUP, e->off, "statement other than a declaration in ({ })");
		break;
	}
	c->nlocals = nlocals;
	if (advance(c) < 0)
		return c->rc;
	(void)depth;
	return expect(c, ')', "')' after '})'");
}

/*
 * The kernel variables print fmts use are declared unsigned long, which
 * decides C's arithmetic on them: jiffies - REC->dirtied_when is unsigned.
 * Other names are enum constants: int, or long when the value needs it.
 */
static bool is_ulong_variable(const char *name)
{
	static const char *const names[] = {"jiffies", "phys_base", "page_offset_base", "vmemmap_base"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static int identifier(struct cc *c, struct ex *e)
{
	const char *name = c->src + c->tok.off;
	size_t n = c->tok.len, at = c->tok.off;
	char buf[TB_NAME_MAX];
	int64_t value;
	struct token after;

	for (unsigned i = c->nlocals; i-- > 0;) {
		struct local *l = &c->locals[i];
		if (l->name_len == n && !memcmp(l->name, name, n)) {
			e->t = l->t;
			if (l->is_const) {
				e->is_const = true;
				e->v = l->v;
			} else {
				e->is_const = false;
				e->start = c->p->nops;
				emit(c, (struct pf_op){.code = OP_LOCAL_GET, .a = l->slot}, 1);
			}
			return advance(c);
		}
	}
	if (tok_is(c, &c->tok, "REC")) {
		if (advance(c) < 0)
			return c->rc;
		if (!is_punct(&c->tok, P2('-', '>')))
			return fail(c, -EINVAL, c->tok.off, "REC used other than as REC->field");
		if (advance(c) < 0)
			return c->rc;
		return field_access(c, e);
	}
	if (tok_is(c, &c->tok, "NULL") || tok_is(c, &c->tok, "false") || tok_is(c, &c->tok, "true")) {
		e->is_const = true;
		e->v = tok_is(c, &c->tok, "true");
		e->t = tok_is(c, &c->tok, "NULL") ? (struct ty){.kind = T_PTR, .size = 8, .elsize = 1} : ty_int;
		return advance(c);
	}
	if (lex(c, c->next, &after) < 0)
		return c->rc;
	if (is_punct(&after, '('))
		return fail(c, -ENOTSUP, at, "function %.*s", (int)n, name);
	if (n >= sizeof(buf))
		return fail(c, -ENOTSUP, at, "unknown name %.*s", (int)n, name);
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (!c->env || !c->env->constant || !c->env->constant(c->env->ctx, buf, &value)) {
		if (strcmp(buf, "jiffies"))
			return fail(c, -ENOTSUP, at, "unknown name %s", buf);
		/* A stand-in the directive printing it replaces by '?' (struct cc). */
		c->unknown_vars++;
		e->is_const = false;
		e->start = c->p->nops;
		e->t = ty_ulong;
		emit(c, (struct pf_op){.code = OP_CONST, .imm = 0}, 1);
		return advance(c);
	}
	e->is_const = true;
	e->v = (uint64_t)value;
	e->t = is_ulong_variable(buf) ? ty_ulong
	       : value >= INT32_MIN && value <= INT32_MAX ? ty_int : ty_long;
	return advance(c);
}

/* NAME( ... ): the kernel's print helpers. */
static int call(struct cc *c, struct ex *e)
{
	struct token name = c->tok;
	const struct tb_field *fl;
	bool rel;

	e->start = c->p->nops;
	e->is_const = false;
	if (advance(c) < 0 || advance(c) < 0) /* NAME ( */
		return c->rc;
	rel = tok_is(c, &name, "__get_rel_str") || tok_is(c, &name, "__get_rel_dynamic_array") ||
	      tok_is(c, &name, "__get_rel_dynamic_array_len") || tok_is(c, &name, "__get_rel_bitmask") ||
	      tok_is(c, &name, "__get_rel_cpumask") || tok_is(c, &name, "__get_rel_sockaddr");
	if (tok_is(c, &name, "__get_str") || tok_is(c, &name, "__get_rel_str") ||
	    tok_is(c, &name, "__get_dynamic_array") || tok_is(c, &name, "__get_rel_dynamic_array") ||
	    tok_is(c, &name, "__get_sockaddr") || tok_is(c, &name, "__get_rel_sockaddr")) {
		if (dynamic_field(c, rel, &fl) < 0)
			return c->rc;
		e->t = (struct ty){.kind = T_MEM, .elsize = 1};
		if (tok_is(c, &name, "__get_str") || tok_is(c, &name, "__get_rel_str"))
			e->t.is_char = e->t.elsign = true;
		emit(c, (struct pf_op){.code = OP_DYN_MEM, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	} else if (tok_is(c, &name, "__get_dynamic_array_len") ||
		   tok_is(c, &name, "__get_rel_dynamic_array_len")) {
		if (dynamic_field(c, rel, &fl) < 0)
			return c->rc;
		e->t = ty_uint;
		emit(c, (struct pf_op){.code = OP_DYN_LEN, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	} else if (tok_is(c, &name, "__get_bitmask") || tok_is(c, &name, "__get_cpumask") ||
		   tok_is(c, &name, "__get_rel_bitmask") || tok_is(c, &name, "__get_rel_cpumask")) {
		if (dynamic_field(c, rel, &fl) < 0)
			return c->rc;
		emit(c, (struct pf_op){.code = OP_DYN_MEM, .mode = dyn_mode(fl), .a = fl->offset}, 1);
		emit(c, (struct pf_op){.code = OP_BITMASK}, 0);
		e->helper = true;
	} else if (tok_is(c, &name, "__print_flags") || tok_is(c, &name, "__print_flags_u64")) {
		if (helper_flags(c, e) < 0)
			return c->rc;
	} else if (tok_is(c, &name, "__print_symbolic") || tok_is(c, &name, "__print_symbolic_u64")) {
		if (helper_symbolic(c, e) < 0)
			return c->rc;
	} else if (tok_is(c, &name, "__print_hex") || tok_is(c, &name, "__print_hex_str")) {
		if (helper_hex(c, e, tok_is(c, &name, "__print_hex_str")) < 0)
			return c->rc;
	} else if (tok_is(c, &name, "__print_array")) {
		if (helper_array(c, e) < 0)
			return c->rc;
	} else if (tok_is(c, &name, "__print_dynamic_array")) {
		if (helper_dynamic_array(c, e) < 0)
			return c->rc;
	} else if (tok_is(c, &name, "__print_ns_to_secs") || tok_is(c, &name, "__print_ns_without_secs")) {
		bool secs = tok_is(c, &name, "__print_ns_to_secs");
		e->off = c->tok.off;
		if (call_arg(c, e, true) < 0 || need_scalar(c, e, "__print_ns") < 0)
			return c->rc;
		convert(c, e, ty_ulong);
		if (e->is_const) {
			e->v = secs ? e->v / 1000000000u : (uint32_t)(e->v % 1000000000u);
		} else {
			emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT,
					       .a = secs ? PF_B_DIV : PF_B_MOD, .size = 8, .imm = 1000000000u}, 0);
		}
		if (!secs)
			convert(c, e, ty_uint);
	} else if (tok_is(c, &name, "__builtin_expect")) {
		struct ex hint = {0};
		int depth;
		e->off = c->tok.off;
		if (call_arg(c, e, true) < 0 || comma(c) < 0)
			return c->rc;
		depth = c->depth;
		if (parse_assign(c, &hint) < 0)
			return c->rc;
		drop_code(c, &hint, depth);
	} else if (tok_is(c, &name, "__builtin_constant_p")) {
		struct ex x = {0};
		int depth = c->depth;
		if (parse_assign(c, &x) < 0)
			return c->rc;
		drop_code(c, &x, depth);
		e->is_const = true;
		e->t = ty_int;
		e->v = x.is_const;
	} else if (tok_is(c, &name, "is_signed_type")) {
		struct ty t;
		uint64_t bytes;
		if (parse_type(c, &t, &bytes) < 0)
			return c->rc;
		e->is_const = true;
		e->t = ty_int;
		e->v = t.kind == T_INT && t.sign;
	} else if (tok_is(c, &name, "jiffies_to_msecs")) {
		if (helper_jiffies(c, e, name.off) < 0)
			return c->rc;
	} else {
		return fail(c, -ENOTSUP, name.off, "function %.*s", (int)name.len, c->src + name.off);
	}
	if (e->helper)
		e->t = (struct ty){.kind = T_MEM, .is_char = true, .elsign = true, .elsize = 1};
	return expect(c, ')', "')' closing the call");
}

static int parse_primary(struct cc *c, struct ex *e)
{
	struct token after;

	e->off = c->tok.off;
	switch (c->tok.kind) {
	case TK_NUM:
	case TK_CHAR:
		e->is_const = true;
		e->v = c->tok.num;
		e->t = c->tok.numty;
		return advance(c);
	case TK_STR:
		return parse_string_literal(c, e);
	case TK_IDENT:
		if (tok_is(c, &c->tok, "sizeof")) {
			if (advance(c) < 0)
				return c->rc;
			return parse_sizeof(c, e);
		}
		if (lex(c, c->next, &after) < 0)
			return c->rc;
		if (is_punct(&after, '(') && !tok_is(c, &c->tok, "REC"))
			return call(c, e);
		return identifier(c, e);
	case TK_PUNCT:
		if (is_punct(&c->tok, '(')) {
			if (advance(c) < 0)
				return c->rc;
			if (is_punct(&c->tok, '{'))
				return statement_expr(c, e);
			if (tok_is(c, &c->tok, "REC") && lex(c, c->next, &after) == 0 && is_punct(&after, ')')) {
				/* (REC)->field, as some macros write it */
				if (advance(c) < 0 || advance(c) < 0)
					return c->rc;
				if (!is_punct(&c->tok, P2('-', '>')))
					return fail(c, -EINVAL, c->tok.off, "REC used other than as REC->field");
				if (advance(c) < 0)
					return c->rc;
				return field_access(c, e);
			}
			if (parse_expr(c, e) < 0)
				return c->rc;
			e->off = e->off; /* keep the opening parenthesis */
			return expect(c, ')', "')'");
		}
		break;
	default:
		break;
	}
	if (c->tok.kind == TK_END)
		return fail(c, -EINVAL, c->tok.off, "expression expected before the end");
	return fail(c, -EINVAL, c->tok.off, "expression expected");
}

/* x[i] on an array, a string or a dynamic array. */
static int index_into(struct cc *c, struct ex *e)
{
	struct ex idx = {0};
	struct ty t = e->t;

	if (e->helper || t.kind != T_MEM)
		return fail(c, -ENOTSUP, e->off, "indexing %s",
			    e->helper ? "a helper's text" : "kernel memory (not in the trace)");
	if (t.elsize != 1 && t.elsize != 2 && t.elsize != 4 && t.elsize != 8)
		return fail(c, -ENOTSUP, e->off, "indexing elements of unknown size");
	materialize(c, e);
	if (advance(c) < 0)
		return c->rc;
	idx.off = c->tok.off;
	if (parse_expr(c, &idx) < 0 || need_scalar(c, &idx, "an index") < 0)
		return c->rc;
	materialize(c, &idx);
	if (expect(c, ']', "']'") < 0)
		return c->rc;
	emit(c, (struct pf_op){.code = OP_INDEX, .size = (uint8_t)t.elsize, .sign = t.elsign}, -1);
	e->t = (struct ty){.kind = T_INT, .size = (uint8_t)t.elsize, .sign = t.elsign};
	return 0;
}

static int parse_postfix(struct cc *c, struct ex *e)
{
	if (parse_primary(c, e) < 0)
		return c->rc;
	for (;;) {
		if (is_punct(&c->tok, '[')) {
			if (index_into(c, e) < 0)
				return c->rc;
		} else if (is_punct(&c->tok, P2('-', '>')) || is_punct(&c->tok, '.')) {
			return fail(c, -EINVAL, c->tok.off, "member access other than REC->field");
		} else {
			return 0;
		}
	}
}

/* (TYPE) expr */
static int parse_cast(struct cc *c, struct ex *e)
{
	struct ty t;
	uint64_t bytes;
	size_t at = c->tok.off;

	if (advance(c) < 0 || parse_type(c, &t, &bytes) < 0 || expect(c, ')', "')' after a type") < 0 ||
	    parse_unary(c, e) < 0)
		return c->rc;
	e->off = at;
	if (t.kind == T_VOID && t.aggregate)
		return fail(c, -ENOTSUP, at, "cast to a struct or union");
	if (t.kind == T_VOID)
		return 0; /* (void)x: nothing prints it */
	if (e->t.kind == T_MEM) {
		if (t.kind != T_PTR)
			return fail(c, -ENOTSUP, at, "cast of an array's address to a number");
		/* Still the same bytes, seen as other elements. */
		e->t.elsize = t.elsize;
		e->t.elsign = t.elsign;
		e->t.is_char = t.is_char;
		return 0;
	}
	if (e->helper)
		return fail(c, -ENOTSUP, at, "cast of a helper's text");
	if (t.is_bool) {
		/* (bool)x is x != 0, not its low byte */
		if (e->is_const)
			e->v = e->v != 0;
		else
			emit(c, (struct pf_op){.code = OP_BOOL}, 0);
		e->t = t;
		return 0;
	}
	if (t.kind == T_PTR) {
		if (e->is_const)
			e->v = pf_norm(e->v, type_bytes(&e->t), e->t.sign);
		e->t = t;
		return 0;
	}
	convert(c, e, t);
	return 0;
}

static int parse_unary(struct cc *c, struct ex *e)
{
	struct token after;
	unsigned op;
	int rc;

	if (enter(c) < 0)
		return c->rc;
	e->off = c->tok.off;
	if (is_punct(&c->tok, '(') && lex(c, c->next, &after) == 0 && starts_type(c, &after)) {
		rc = parse_cast(c, e);
		leave(c);
		return rc;
	}
	if (c->tok.kind != TK_PUNCT ||
	    !(c->tok.punct == '-' || c->tok.punct == '+' || c->tok.punct == '~' || c->tok.punct == '!' ||
	      c->tok.punct == '*' || c->tok.punct == '&')) {
		rc = parse_postfix(c, e);
		leave(c);
		return rc;
	}
	op = c->tok.punct;
	if (advance(c) < 0 || parse_unary(c, e) < 0) {
		leave(c);
		return c->rc;
	}
	leave(c);
	if (op == '&')
		return fail(c, -ENOTSUP, e->off, "address of an expression");
	if (op == '*') {
		if (e->t.kind != T_MEM || e->helper)
			return fail(c, -ENOTSUP, e->off, "dereference of kernel memory");
		/* *array: its first element */
		struct ty t = e->t;
		if (t.elsize != 1 && t.elsize != 2 && t.elsize != 4 && t.elsize != 8)
			return fail(c, -ENOTSUP, e->off, "dereference of elements of unknown size");
		materialize(c, e);
		emit(c, (struct pf_op){.code = OP_CONST, .imm = 0}, 1);
		emit(c, (struct pf_op){.code = OP_INDEX, .size = (uint8_t)t.elsize, .sign = t.elsign}, -1);
		e->t = (struct ty){.kind = T_INT, .size = (uint8_t)t.elsize, .sign = t.elsign};
		return 0;
	}
	if (need_scalar(c, e, "an operator") < 0)
		return c->rc;
	if (op == '!') {
		if (e->is_const)
			e->v = e->v == 0;
		else
			emit(c, (struct pf_op){.code = OP_LNOT}, 0);
		e->t = ty_int;
		return 0;
	}
	convert(c, e, promote(e->t));
	if (op == '+')
		return 0;
	if (e->is_const)
		e->v = pf_norm(op == '-' ? 0 - e->v : ~e->v, e->t.size, e->t.sign);
	else
		emit(c, (struct pf_op){.code = op == '-' ? OP_NEG : OP_NOT, .size = e->t.size,
				       .sign = e->t.sign}, 0);
	return 0;
}

/* Precedence of a binary operator token, 0 if it is none. */
static int precedence(const struct token *t, unsigned *op)
{
	static const struct {
		unsigned punct;
		int prec;
		unsigned op;
	} table[] = {
		{P2('|', '|'), 1, 100}, {P2('&', '&'), 2, 101}, {'|', 3, PF_B_OR},
		{'^', 4, PF_B_XOR},     {'&', 5, PF_B_AND},     {P2('=', '='), 6, PF_B_EQ},
		{P2('!', '='), 6, PF_B_NE}, {'<', 7, PF_B_LT},  {'>', 7, PF_B_GT},
		{P2('<', '='), 7, PF_B_LE}, {P2('>', '='), 7, PF_B_GE}, {P2('<', '<'), 8, PF_B_SHL},
		{P2('>', '>'), 8, PF_B_SHR}, {'+', 9, PF_B_ADD}, {'-', 9, PF_B_SUB},
		{'*', 10, PF_B_MUL},    {'/', 10, PF_B_DIV},    {'%', 10, PF_B_MOD},
	};

	if (t->kind != TK_PUNCT)
		return 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].punct == t->punct) {
			*op = table[i].op;
			return table[i].prec;
		}
	return 0;
}

static bool is_compare(unsigned op)
{
	return op >= PF_B_EQ && op <= PF_B_GE;
}

/* Combine l OP r (both parsed; r's code, if any, after l's). */
static int combine(struct cc *c, struct ex *l, struct ex *r, unsigned op, size_t at)
{
	struct ty t;
	uint64_t scale = 0, v;
	unsigned mode;

	if (need_scalar(c, l, "an operator") < 0 || need_scalar(c, r, "an operator") < 0)
		return c->rc;
	if (l->t.kind == T_PTR || r->t.kind == T_PTR) {
		bool lp = l->t.kind == T_PTR, rp = r->t.kind == T_PTR;
		if (op == PF_B_ADD || op == PF_B_SUB) {
			if (lp && rp && op == PF_B_SUB) {
				op = PF_B_PDIFF;
				scale = l->t.elsize;
			} else if (lp && !rp) {
				op = op == PF_B_ADD ? PF_B_PADD : PF_B_PSUB;
				scale = l->t.elsize;
			} else if (!lp && op == PF_B_ADD) {
				/* int + pointer: swap the roles (the sum is the same) */
				struct ex tmp = *l;
				if (!l->is_const && !r->is_const)
					return fail(c, -ENOTSUP, at, "integer + pointer with both computed");
				*l = *r;
				*r = tmp;
				op = PF_B_PADD;
				scale = l->t.elsize;
			} else {
				return fail(c, -EINVAL, at, "integer - pointer");
			}
			if (!scale)
				return fail(c, -ENOTSUP, at, "pointer arithmetic on a type of unknown size");
		}
	}
	if (op == PF_B_SHL || op == PF_B_SHR)
		t = promote(l->t);
	else if (op == PF_B_PADD || op == PF_B_PSUB)
		t = l->t;
	else if (op == PF_B_PDIFF)
		t = ty_long;
	else
		t = common_type(l->t, r->t);
	if (op != PF_B_SHL && op != PF_B_SHR && op != PF_B_PADD && op != PF_B_PSUB) {
		if (l->is_const)
			l->v = pf_norm(l->v, type_bytes(&t), t.sign);
		if (r->is_const)
			r->v = pf_norm(r->v, type_bytes(&t), t.sign);
	}
	if (l->is_const && r->is_const) {
		if (!pf_binop(op, l->v, r->v, (unsigned)type_bytes(&t), t.sign, scale, &v))
			return fail(c, -EINVAL, at, "division by zero");
		l->v = v;
		l->t = is_compare(op) ? ty_int : t;
		if (op == PF_B_PADD || op == PF_B_PSUB)
			l->t = t;
		return 0;
	}
	if ((op == PF_B_DIV || op == PF_B_MOD) && r->is_const && r->v == 0)
		return fail(c, -EINVAL, at, "division by zero");
	mode = l->is_const ? PF_IMM_LEFT : r->is_const ? PF_IMM_RIGHT : PF_BOTH;
	if (!l->is_const && !r->is_const && l->start > r->start)
		return fail(c, -EINVAL, at, "internal: operands out of order");
	emit(c, (struct pf_op){.code = OP_BIN, .mode = (uint8_t)mode, .a = op, .b = (uint32_t)scale,
			       .size = (uint8_t)type_bytes(&t), .sign = t.sign,
			       .imm = l->is_const ? l->v : r->v},
	     mode == PF_BOTH ? -1 : 0);
	if (l->is_const)
		l->start = r->start;
	l->is_const = false;
	l->t = is_compare(op) ? ty_int : t;
	return 0;
}

/* && and ||: short-circuit jumps, or folding when the left side is constant. */
static int logical(struct cc *c, struct ex *l, bool is_and, int prec)
{
	struct ex r = {0};
	long jump = -1;
	int depth;

	if (need_scalar(c, l, "a logical operator") < 0)
		return c->rc;
	if (!l->is_const)
		jump = emit(c, (struct pf_op){.code = is_and ? OP_AND_SC : OP_OR_SC}, -1);
	depth = c->depth;
	r.off = c->tok.off;
	if (parse_binary(c, &r, prec + 1) < 0 || need_scalar(c, &r, "a logical operator") < 0)
		return c->rc;
	if (l->is_const) {
		if ((is_and && !l->v) || (!is_and && l->v)) {
			drop_code(c, &r, depth);
			l->v = !is_and;
		} else if (r.is_const) {
			l->v = r.v != 0;
		} else {
			emit(c, (struct pf_op){.code = OP_BOOL}, 0);
			l->is_const = false;
			l->start = r.start;
		}
		l->t = ty_int;
		return 0;
	}
	materialize(c, &r);
	emit(c, (struct pf_op){.code = OP_BOOL}, 0);
	if (jump >= 0)
		c->p->ops[jump].a = (uint32_t)(c->p->nops - (size_t)jump);
	l->t = ty_int;
	return 0;
}

static int parse_binary(struct cc *c, struct ex *e, int min_prec)
{
	unsigned op;
	int prec;

	if (parse_unary(c, e) < 0)
		return c->rc;
	while ((prec = precedence(&c->tok, &op)) >= min_prec && prec > 0) {
		size_t at = c->tok.off;
		struct ex r = {0};
		if (advance(c) < 0)
			break;
		if (op == 100 || op == 101) {
			if (logical(c, e, op == 101, prec) < 0)
				break;
			continue;
		}
		r.off = c->tok.off;
		if (parse_binary(c, &r, prec + 1) < 0 || combine(c, e, &r, op, at) < 0)
			break;
	}
	return c->rc;
}

/* Both branches of ?: to one type (C's rules, loosely for pointers and strings). */
static int branch_type(struct cc *c, const struct ex *x, const struct ex *y, struct ty *t, size_t at)
{
	bool xs = x->t.kind == T_MEM || x->helper, ys = y->t.kind == T_MEM || y->helper;

	if (xs || ys) {
		/* A string and a null pointer constant stay a string: %s prints (null). */
		if ((xs || (x->is_const && !x->v && !x->is_str)) && (ys || (y->is_const && !y->v && !y->is_str))) {
			*t = xs ? x->t : y->t;
			return 0;
		}
		return fail(c, -EINVAL, at, "?: between a string and a number");
	}
	if (x->t.kind == T_PTR || y->t.kind == T_PTR) {
		*t = x->t.kind == T_PTR ? x->t : y->t;
		return 0;
	}
	*t = common_type(x->t, y->t);
	return 0;
}

/* Convert a finished branch in place: through its placeholder op, or its constant. */
static void convert_branch(struct cc *c, struct ex *b, long placeholder, struct ty t)
{
	if (t.kind != T_INT || (b->t.kind == T_INT && b->t.size == t.size && b->t.sign == t.sign))
		return;
	if (b->is_const) {
		b->v = pf_norm(b->v, t.size, t.sign);
		return;
	}
	if (placeholder >= 0)
		c->p->ops[placeholder] = (struct pf_op){.code = OP_CONVERT, .size = t.size, .sign = t.sign};
}

static int parse_ternary(struct cc *c, struct ex *e)
{
	struct ex x = {0}, y = {0};
	long jz = -1, jmp = -1, px = -1, py = -1;
	int depth;
	struct ty t;
	size_t at;
	uint32_t x_start, y_start;

	if (parse_binary(c, e, 1) < 0 || !is_punct(&c->tok, '?'))
		return c->rc;
	if (enter(c) < 0) {
		leave(c);
		return c->rc;
	}
	at = c->tok.off;
	if (need_scalar(c, e, "a condition") < 0 || advance(c) < 0) {
		leave(c);
		return c->rc;
	}
	if (!e->is_const)
		jz = emit(c, (struct pf_op){.code = OP_JZ}, -1);
	depth = c->depth;
	x_start = c->p->nops;
	x.off = c->tok.off;
	if (parse_expr(c, &x) < 0 || expect(c, ':', "':'") < 0) {
		leave(c);
		return c->rc;
	}
	if (!e->is_const) {
		materialize(c, &x);
		px = emit(c, (struct pf_op){.code = OP_NOP}, 0);
		jmp = emit(c, (struct pf_op){.code = OP_JUMP}, 0);
		c->depth = depth;
	}
	y_start = c->p->nops;
	y.off = c->tok.off;
	if (parse_ternary(c, &y) < 0) {
		leave(c);
		return c->rc;
	}
	leave(c);
	if (branch_type(c, &x, &y, &t, at) < 0)
		return c->rc;
	if (e->is_const) {
		/* Keep one branch: the other's code goes. */
		struct ex *keep = e->v ? &x : &y;
		if (e->v) {
			drop_code(c, &y, c->depth - (y.is_const ? 0 : 1));
			c->p->nops = y_start;
		} else if (!x.is_const || y_start != x_start) {
			uint32_t n = c->p->nops - y_start;
			memmove(c->p->ops + x_start, c->p->ops + y_start, n * sizeof(*c->p->ops));
			c->p->nops = x_start + n;
			if (!y.is_const)
				y.start = x_start;
			if (!x.is_const)
				c->depth--;
		}
		convert_branch(c, keep, -1, t);
		if (!keep->is_const && t.kind == T_INT &&
		    !(keep->t.kind == T_INT && keep->t.size == t.size && keep->t.sign == t.sign))
			emit(c, (struct pf_op){.code = OP_CONVERT, .size = t.size, .sign = t.sign}, 0);
		*e = *keep;
		e->t = t;
		return 0;
	}
	materialize(c, &y);
	py = emit(c, (struct pf_op){.code = OP_NOP}, 0);
	convert_branch(c, &x, px, t);
	convert_branch(c, &y, py, t);
	c->p->ops[jz].a = (uint32_t)(y_start - (size_t)jz);
	c->p->ops[jmp].a = (uint32_t)(c->p->nops - (size_t)jmp);
	e->t = t;
	e->helper = x.helper || y.helper;
	return 0;
}

static int parse_assign(struct cc *c, struct ex *e)
{
	e->off = c->tok.off;
	if (parse_ternary(c, e) < 0)
		return c->rc;
	if (is_punct(&c->tok, '='))
		return fail(c, -EINVAL, c->tok.off, "assignment");
	return 0;
}

/* A full expression: the comma operator keeps its right side (nothing has side effects). */
static int parse_expr(struct cc *c, struct ex *e)
{
	int depth = c->depth;

	if (parse_assign(c, e) == 0) {
		while (is_punct(&c->tok, ',')) {
			drop_code(c, e, depth);
			memset(e, 0, sizeof(*e));
			if (advance(c) < 0 || parse_assign(c, e) < 0)
				break;
		}
	}
	return c->rc;
}

/* ------------------------------------------------------ directives */

static uint32_t add_spec(struct cc *c, const struct kv_spec *s)
{
	struct tb_printfmt *p = c->p;

	if (!grow((void **)&p->specs, &c->specs_cap, (size_t)p->nspecs + 1, sizeof(*p->specs))) {
		fail(c, -ENOMEM, 0, "out of memory");
		return 0;
	}
	p->specs[p->nspecs] = *s;
	return p->nspecs++;
}

/* The next argument of the format: parsed after its comma. */
static int next_arg(struct cc *c, struct ex *e, size_t fmt_at)
{
	if (!is_punct(&c->tok, ','))
		return fail(c, -EINVAL, c->tok.off,
			    "too few arguments for the format string (directive at byte %zu)", fmt_at);
	if (advance(c) < 0)
		return c->rc;
	memset(e, 0, sizeof(*e));
	e->off = c->tok.off;
	return parse_assign(c, e);
}

/* A constant argument printed once, at compile time, into the text. */
static bool fold_directive(struct cc *c, const struct kv_spec *s, const struct ex *e)
{
	struct tb_strbuf tmp = {0};

	if (!e->is_const || s->width_arg || s->precision_arg)
		return false;
	if (s->kind == KV_NUMBER && !e->is_str && is_scalar(&e->t))
		kv_number(&tmp, kv_number_value(s, e->v), s);
	else if (s->kind == KV_CHAR && !e->is_str && is_scalar(&e->t))
		kv_char(&tmp, (uint8_t)e->v, s);
	else if (s->kind == KV_STRING && e->is_str)
		kv_string(&tmp, c->p->pool + e->str, e->str_len, s);
	else
		return false;
	if (!tmp.oom)
		emit_text(c, tmp.buf ? tmp.buf : "", tmp.len);
	else
		fail(c, -ENOMEM, 0, "out of memory");
	sb_free(&tmp);
	return true;
}

static int directive(struct cc *c, struct kv_spec *s, size_t fmt_at)
{
	struct ex w = {0}, pr = {0}, v = {0};
	uint32_t start = c->p->nops;
	int depth = c->depth;
	unsigned unknown = c->unknown_vars;
	uint8_t mode;

	if (s->width_arg && (next_arg(c, &w, fmt_at) < 0 || need_scalar(c, &w, "a '*' width") < 0))
		return c->rc;
	if (s->width_arg) {
		convert(c, &w, ty_int);
		materialize(c, &w);
	}
	if (s->precision_arg && (next_arg(c, &pr, fmt_at) < 0 || need_scalar(c, &pr, "a '*' precision") < 0))
		return c->rc;
	if (s->precision_arg) {
		convert(c, &pr, ty_int);
		materialize(c, &pr);
	}
	if (next_arg(c, &v, fmt_at) < 0)
		return c->rc;
	if (c->unknown_vars != unknown) {
		/* Its value (or width) needs a kernel variable the trace does not give. */
		c->p->nops = start;
		c->depth = depth;
		emit_text(c, "?", 1);
		return c->rc;
	}
	switch (s->kind) {
	case KV_NUMBER:
	case KV_CHAR:
		if (need_scalar(c, &v, s->kind == KV_CHAR ? "%c" : "a number directive") < 0)
			return c->rc;
		mode = s->kind == KV_CHAR ? PF_PRINT_CHAR : PF_PRINT_NUM;
		break;
	case KV_STRING:
		mode = PF_PRINT_STR;
		break;
	default: /* KV_POINTER */
		switch (kv_pointer_use(s)) {
		case KV_PTR_VALUE:
			if (need_scalar(c, &v, "%p") < 0)
				return c->rc;
			mode = PF_PRINT_PTR_VAL;
			break;
		case KV_PTR_MEMORY:
			if (v.helper || v.t.kind != T_MEM)
				return fail(c, -ENOTSUP, v.off, "%%p%s of a kernel address (dereferenced at print time)",
					    s->ext);
			mode = PF_PRINT_PTR_MEM;
			break;
		default:
			return fail(c, -ENOTSUP, fmt_at, "%%p%s (needs kernel objects or errno names)", s->ext);
		}
		break;
	}
	if (c->rc)
		return c->rc;
	if (fold_directive(c, s, &v))
		return c->rc;
	materialize(c, &v);
	emit(c, (struct pf_op){.code = OP_PRINT, .mode = mode, .a = add_spec(c, s)},
	     -1 - s->width_arg - s->precision_arg);
	return c->rc;
}

/* The format string, directive by directive, with the arguments each consumes. */
static int compile_format(struct cc *c, const char *fmt, size_t fmt_off)
{
	size_t i = 0;

	while (fmt[i] && !c->rc) {
		const char *pct = strchr(fmt + i, '%');
		size_t lit = pct ? (size_t)(pct - (fmt + i)) : strlen(fmt + i), n;
		struct kv_spec s;

		emit_text(c, fmt + i, lit);
		i += lit;
		if (!pct)
			break;
		n = kv_decode(fmt + i, &s);
		if (s.kind == KV_INVALID)
			break; /* the kernel stops the whole output here */
		if (s.kind == KV_PERCENT)
			emit_text(c, "%", 1);
		else if (directive(c, &s, fmt_off) < 0)
			return c->rc;
		i += n;
	}
	return c->rc;
}

/* The format string literal(s) at the start of the print fmt. */
static int read_format(struct cc *c, char **fmt)
{
	struct ex e = {0};

	if (c->tok.kind != TK_STR)
		return fail(c, -EINVAL, c->tok.off, "print fmt does not start with a string");
	if (parse_string_literal(c, &e) < 0)
		return c->rc;
	/* The pool may move while compiling: work on a copy, which ends at the first NUL as C does. */
	*fmt = strdup(c->p->pool + e.str);
	c->p->pool_len = e.str; /* the format's own copy is not needed in the program */
	if (!*fmt)
		return fail(c, -ENOMEM, 0, "out of memory");
	return 0;
}

/* PF_POOL_PAD zero bytes after the pool, for the 16-byte copies of text. */
static void pad_pool(struct cc *c)
{
	struct tb_printfmt *p = c->p;

	if (!grow((void **)&p->pool, &c->pool_cap, (size_t)p->pool_len + PF_POOL_PAD, 1)) {
		fail(c, -ENOMEM, 0, "out of memory");
		return;
	}
	memset(p->pool + p->pool_len, 0, PF_POOL_PAD);
}

int tb_printfmt_compile(const struct tb_format *f, const struct tb_print_env *env,
			struct tb_printfmt **out, struct tb_diag *err)
{
	return pf_compile(f, env, true, out, err);
}

int pf_compile(const struct tb_format *f, const struct tb_print_env *env, bool specialise,
	       struct tb_printfmt **out, struct tb_diag *err)
{
	struct cc c = {.f = f, .env = env, .err = err, .src = f->print_fmt, .len = f->print_fmt_len};
	char *fmt = NULL;

	*out = NULL;
	if (!f->print_fmt)
		return diag_fail(err, 0, "format has no print fmt");
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p)
		return -ENOMEM;
	c.p->f = f;
	c.p->env = env;
	if (advance(&c) == 0 && read_format(&c, &fmt) == 0 && compile_format(&c, fmt, 0) == 0) {
		/* Extra arguments: the kernel ignores them, but they must parse. */
		int depth = c.depth;
		while (is_punct(&c.tok, ',') && !c.rc) {
			struct ex e = {0};
			uint32_t start = c.p->nops;
			if (advance(&c) < 0 || parse_assign(&c, &e) < 0)
				break;
			c.p->nops = start;
			c.depth = depth;
		}
		if (!c.rc && c.tok.kind != TK_END)
			fail(&c, -EINVAL, c.tok.off, "unexpected text after the arguments");
	}
	free(fmt);
	if (!c.rc && c.max_depth > PF_STACK_MAX)
		fail(&c, -EINVAL, 0, "expression needs more than %d values at once", PF_STACK_MAX);
	if (!c.rc)
		emit(&c, (struct pf_op){.code = OP_END}, 0);
	if (!c.rc)
		pad_pool(&c);
	if (!c.rc && specialise && pf_specialise(c.p) < 0)
		fail(&c, -ENOMEM, 0, "out of memory");
	if (c.rc) {
		tb_printfmt_free(c.p);
		return c.rc;
	}
	*out = c.p;
	return 0;
}

void tb_printfmt_free(struct tb_printfmt *p)
{
	if (!p)
		return;
	free(p->ops);
	free(p->pool);
	free(p->specs);
	free(p->syms);
	free(p->tables);
	free(p->direct);
	free(p);
}
