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
 *
 * The parts: the tokens (pf_lex.c), type names (pf_type.c), the kernel's
 * print helpers as a table of known calls (pf_calls.c); here the output,
 * expressions and directives.  pf_cc.h holds what they share.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "pf_cc.h"

/* ------------------------------------------------------------- output */

/* Room for need elements in *v (grow.h), keeping the caller's array when there is none. */
bool pfc_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	void *p = tb__grow(*v, cap, need, elem, 16);

	if (!p)
		return false;
	*v = p;
	return true;
}

/* Append op with its effect on the stack depth; index of the op or -1. */
long pfc_emit(struct cc *c, struct pf_op op, int delta)
{
	struct tb_printfmt *p = c->p;

	if (c->rc)
		return -1;
	if (!pfc_grow((void **)&p->ops, &c->ops_cap, (size_t)p->nops + 1, sizeof(*p->ops))) {
		pfc_fail(c, -ENOMEM, 0, "out of memory");
		return -1;
	}
	p->ops[p->nops] = op;
	c->depth += delta;
	if (c->depth > c->max_depth)
		c->max_depth = c->depth;
	return (long)p->nops++;
}

/* Append n bytes (and a NUL) to the pool; their offset, or UINT32_MAX. */
uint32_t pfc_pool_add(struct cc *c, const char *s, size_t n)
{
	struct tb_printfmt *p = c->p;
	uint32_t at = p->pool_len;

	if (n > UINT32_MAX / 2 || !pfc_grow((void **)&p->pool, &c->pool_cap, (size_t)p->pool_len + n + 1, 1)) {
		pfc_fail(c, -ENOMEM, 0, "out of memory");
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
		at = pfc_pool_add(c, s, n);
		if (at != UINT32_MAX)
			last->b += (uint32_t)n;
		return;
	}
	at = pfc_pool_add(c, s, n);
	if (at != UINT32_MAX)
		pfc_emit(c, (struct pf_op){.code = OP_TEXT, .a = at, .b = (uint32_t)n}, 0);
}

/* ----------------------------------------------------- expressions */

static int parse_expr(struct cc *c, struct ex *e);
static int parse_unary(struct cc *c, struct ex *e);
static int parse_binary(struct cc *c, struct ex *e, int min_prec);

static int enter(struct cc *c)
{
	if (++c->nest > PF_NEST_MAX)
		return pfc_fail(c, -EINVAL, c->tok.off, "expression nested more than %d deep", PF_NEST_MAX);
	return 0;
}

static void leave(struct cc *c)
{
	c->nest--;
}

/* Put a constant on the stack (its code starts here). */
void pfc_materialize(struct cc *c, struct ex *e)
{
	if (!e->is_const)
		return;
	e->start = c->p->nops;
	if (e->is_str)
		pfc_emit(c, (struct pf_op){.code = OP_STR, .a = e->str, .b = e->str_len}, 1);
	else
		pfc_emit(c, (struct pf_op){.code = OP_CONST, .imm = e->v}, 1);
	e->is_const = false;
	e->is_str = false;
}

/* Throw away the code of e (it must end at the current end). */
void pfc_drop_code(struct cc *c, const struct ex *e, int depth_before)
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

int pfc_need_scalar(struct cc *c, const struct ex *e, const char *what)
{
	if (e->helper)
		return pfc_fail(c, -ENOTSUP, e->off, "%s of a helper's text", what);
	if (!is_scalar(&e->t))
		return pfc_fail(c, -ENOTSUP, e->off, "%s of an array or string (its address is not in the trace)", what);
	return 0;
}

/* Convert e to type t, at compile time or with an op. */
void pfc_convert(struct cc *c, struct ex *e, struct ty t)
{
	if (t.kind == T_INT && (e->t.kind != T_INT || e->t.size != t.size || e->t.sign != t.sign)) {
		if (e->is_const)
			e->v = pf_norm(e->v, t.size, t.sign);
		else if (t.size < 8)
			pfc_emit(c, (struct pf_op){.code = OP_CONVERT, .size = t.size, .sign = t.sign}, 0);
	}
	e->t = t;
}

uint64_t pfc_type_bytes(const struct ty *t)
{
	return t->kind == T_INT ? t->size : 8;
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
		if (!pfc_grow((void **)&buf, &cap, n + len + 1, 1)) {
			free(buf);
			return pfc_fail(c, -ENOMEM, 0, "out of memory");
		}
		for (size_t i = 0; i < len;) {
			if (s[i] == '\\') {
				i++;
				buf[n++] = (char)pfc_read_escape(s, len, &i);
			} else {
				buf[n++] = s[i++];
			}
		}
		if (pfc_advance(c) < 0) {
			free(buf);
			return c->rc;
		}
	}
	at = pfc_pool_add(c, buf ? buf : "", n);
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
static void element_type(const struct tb_schema_field *fl, struct ty *t)
{
	const char *type = fl->type;
	const struct named_type *nt = pfc_find_named_type(type, strlen(type));
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

const struct tb_schema_field *pfc_field_named(struct cc *c, size_t off, size_t n)
{
	for (size_t i = 0; i < c->f->nfields; i++)
		if (strlen(c->f->fields[i].name) == n && !memcmp(c->f->fields[i].name, c->src + off, n))
			return &c->f->fields[i];
	return NULL;
}

void pfc_note_static(struct cc *c, uint32_t end)
{
	if (end > c->p->static_end)
		c->p->static_end = end;
}

/* REC->name */
static int field_access(struct cc *c, struct ex *e)
{
	const struct tb_schema_field *fl;

	if (c->tok.kind != TK_IDENT)
		return pfc_fail(c, -EINVAL, c->tok.off, "expected a field name after REC->");
	fl = pfc_field_named(c, c->tok.off, c->tok.len);
	if (!fl)
		return pfc_fail(c, -EINVAL, c->tok.off, "no field named %.*s", (int)c->tok.len, c->src + c->tok.off);
	e->is_const = false;
	e->start = c->p->nops;
	if (fl->kind == TB_SCHEMA_FIELD_STATIC && fl->is_array) {
		e->t = (struct ty){.kind = T_MEM};
		element_type(fl, &e->t);
		pfc_note_static(c, fl->offset + fl->size);
		pfc_emit(c, (struct pf_op){.code = OP_FIELD_MEM, .a = fl->offset, .b = fl->size}, 1);
	} else if (fl->kind == TB_SCHEMA_FIELD_STATIC && fl->size != 1 && fl->size != 2 && fl->size != 4 &&
		   fl->size != 8) {
		return pfc_fail(c, -EINVAL, c->tok.off, "field %s of %u bytes is not a number", fl->name, fl->size);
	} else {
		bool ptr = fl->kind == TB_SCHEMA_FIELD_STATIC && strchr(fl->type, '*') && fl->size == 8;
		e->t = (struct ty){.kind = ptr ? T_PTR : T_INT, .size = (uint8_t)fl->size,
				   .sign = fl->is_signed && !ptr};
		if (ptr) {
			struct tb_schema_field elem = *fl;
			char *star = strrchr(elem.type, '*');
			*star = '\0';
			element_type(&elem, &e->t);
			if (!strstr(elem.type, "void") && !pfc_find_named_type(elem.type, strlen(elem.type)) &&
			    !strstr(elem.type, "char") && !strstr(elem.type, "int") && !strstr(elem.type, "long") &&
			    !strstr(elem.type, "short"))
				e->t.elsize = 0;
			if (strstr(elem.type, "void"))
				e->t.elsize = 1;
		}
		pfc_note_static(c, fl->offset + fl->size);
		pfc_emit(c, (struct pf_op){.code = OP_FIELD, .a = fl->offset, .size = (uint8_t)fl->size,
				       .sign = e->t.sign}, 1);
	}
	return pfc_advance(c);
}

/* The dynamic field named by the identifier in a helper's parentheses. */
static int parse_sizeof(struct cc *c, struct ex *e)
{
	struct token after;
	uint64_t bytes = 0;
	int depth = c->depth;

	if (pfc_is_punct(&c->tok, '(') && pfc_lex(c, c->next, &after) == 0 && pfc_starts_type(c, &after)) {
		size_t at;
		struct ty t;
		if (pfc_advance(c) < 0)
			return c->rc;
		at = c->tok.off;
		if (pfc_parse_type(c, &t, &bytes) < 0 || pfc_expect(c, ')', "')'") < 0)
			return c->rc;
		if (!bytes)
			return pfc_fail(c, -ENOTSUP, at, "sizeof of a type of unknown size");
	} else {
		struct ex inner = {0};
		unsigned unknown = c->unknown_vars;
		if (parse_unary(c, &inner) < 0)
			return c->rc;
		pfc_drop_code(c, &inner, depth);
		c->unknown_vars = unknown; /* only its type counts: sizeof(jiffies) is known */
		if (inner.t.kind == T_MEM)
			return pfc_fail(c, -ENOTSUP, inner.off, "sizeof of an array");
		bytes = pfc_type_bytes(&inner.t);
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

	if (pfc_advance(c) < 0) /* the '{' */
		return c->rc;
	for (;;) {
		struct token after;
		if (c->tok.kind == TK_IDENT && pfc_starts_type(c, &c->tok) &&
		    !(pfc_lex(c, c->next, &after) == 0 && pfc_is_punct(&after, P2('-', '>')))) {
			struct ty t;
			uint64_t bytes;
			struct ex init = {0};
			struct local *l;
			if (pfc_parse_type(c, &t, &bytes) < 0)
				return c->rc;
			if (c->tok.kind != TK_IDENT)
				return pfc_fail(c, -ENOTSUP, c->tok.off, "declaration without a plain name");
			if (c->nlocals == PF_LOCALS_MAX || t.kind == T_VOID)
				return pfc_fail(c, -ENOTSUP, c->tok.off, "too many or unusable local variables");
			l = &c->locals[c->nlocals];
			l->name = c->src + c->tok.off;
			l->name_len = c->tok.len;
			if (pfc_advance(c) < 0 || pfc_expect(c, '=', "'=' (declarations need a value)") < 0)
				return c->rc;
			init.off = c->tok.off;
			if (pfc_parse_assign(c, &init) < 0 || pfc_need_scalar(c, &init, "a local variable") < 0 ||
			    pfc_expect(c, ';', "';'") < 0)
				return c->rc;
			pfc_convert(c, &init, t);
			l->t = t;
			l->is_const = init.is_const;
			l->v = init.v;
			if (!init.is_const) {
				l->slot = c->nslots++;
				if (l->slot >= PF_LOCALS_MAX)
					return pfc_fail(c, -ENOTSUP, init.off, "too many local variables");
				pfc_emit(c, (struct pf_op){.code = OP_LOCAL_SET, .a = l->slot}, -1);
			}
			c->nlocals++;
			continue;
		}
		if (parse_expr(c, e) < 0)
			return c->rc;
		if (pfc_expect(c, ';', "';'") < 0)
			return c->rc;
		if (!pfc_is_punct(&c->tok, '}'))
			return pfc_fail(c, -ENOTSUP, e->off, "statement other than a declaration in ({ })");
		break;
	}
	c->nlocals = nlocals;
	if (pfc_advance(c) < 0)
		return c->rc;
	(void)depth;
	return pfc_expect(c, ')', "')' after '})'");
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

/*
 * Names libtraceevent gives a value of its own in a table entry (its
 * eval_flag()): an event using one of them unknown here prints by it.
 */
static bool tep_knows(const char *name)
{
	static const char *const names[] = {
		"HI_SOFTIRQ", "TIMER_SOFTIRQ", "NET_TX_SOFTIRQ", "NET_RX_SOFTIRQ", "BLOCK_SOFTIRQ",
		"IRQ_POLL_SOFTIRQ", "BLOCK_IOPOLL_SOFTIRQ", "TASKLET_SOFTIRQ", "SCHED_SOFTIRQ",
		"HRTIMER_SOFTIRQ", "RCU_SOFTIRQ", "HRTIMER_NORESTART", "HRTIMER_RESTART",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

bool pfc_unknown_name(struct cc *c)
{
	const char *name = c->src + c->tok.off;
	size_t n = c->tok.len;
	char buf[TB_NAME_MAX];
	int64_t value;
	struct token after;

	if (c->tok.kind != TK_IDENT || n >= sizeof(buf) || pfc_lex(c, c->next, &after) < 0 ||
	    !pfc_is_punct(&after, ','))
		return false;
	for (unsigned i = 0; i < c->nlocals; i++)
		if (c->locals[i].name_len == n && !memcmp(c->locals[i].name, name, n))
			return false;
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (!strcmp(buf, "REC") || !strcmp(buf, "NULL") || !strcmp(buf, "false") || !strcmp(buf, "true") ||
	    is_ulong_variable(buf) || tep_knows(buf))
		return false;
	return !c->env || !c->env->constant || !c->env->constant(c->env->ctx, buf, &value);
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
				pfc_emit(c, (struct pf_op){.code = OP_LOCAL_GET, .a = l->slot}, 1);
			}
			return pfc_advance(c);
		}
	}
	if (pfc_tok_is(c, &c->tok, "REC")) {
		if (pfc_advance(c) < 0)
			return c->rc;
		if (!pfc_is_punct(&c->tok, P2('-', '>')))
			return pfc_fail(c, -EINVAL, c->tok.off, "REC used other than as REC->field");
		if (pfc_advance(c) < 0)
			return c->rc;
		return field_access(c, e);
	}
	if (pfc_tok_is(c, &c->tok, "NULL") || pfc_tok_is(c, &c->tok, "false") || pfc_tok_is(c, &c->tok, "true")) {
		e->is_const = true;
		e->v = pfc_tok_is(c, &c->tok, "true");
		e->t = pfc_tok_is(c, &c->tok, "NULL") ? (struct ty){.kind = T_PTR, .size = 8, .elsize = 1} : ty_int;
		return pfc_advance(c);
	}
	if (pfc_lex(c, c->next, &after) < 0)
		return c->rc;
	if (pfc_is_punct(&after, '('))
		return pfc_fail(c, -ENOTSUP, at, "function %.*s", (int)n, name);
	if (n >= sizeof(buf))
		return pfc_fail(c, -ENOTSUP, at, "unknown name %.*s", (int)n, name);
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (!c->env || !c->env->constant || !c->env->constant(c->env->ctx, buf, &value)) {
		/*
		 * A kernel variable the trace does not give (vmemmap_base moves
		 * with every boot): not a made-up value, which would read as an
		 * address, but '?' for what needs it.
		 */
		if (!is_ulong_variable(buf))
			return pfc_fail(c, -ENOTSUP, at, "unknown name %s", buf);
		/* A stand-in the directive printing it replaces by '?' (struct cc). */
		c->unknown_vars++;
		e->is_const = false;
		e->start = c->p->nops;
		e->t = ty_ulong;
		pfc_emit(c, (struct pf_op){.code = OP_CONST, .imm = 0}, 1);
		return pfc_advance(c);
	}
	e->is_const = true;
	e->v = (uint64_t)value;
	e->t = is_ulong_variable(buf) ? ty_ulong
	       : value >= INT32_MIN && value <= INT32_MAX ? ty_int : ty_long;
	return pfc_advance(c);
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
		return pfc_advance(c);
	case TK_STR:
		return parse_string_literal(c, e);
	case TK_IDENT:
		if (pfc_tok_is(c, &c->tok, "sizeof")) {
			if (pfc_advance(c) < 0)
				return c->rc;
			return parse_sizeof(c, e);
		}
		if (pfc_lex(c, c->next, &after) < 0)
			return c->rc;
		if (pfc_is_punct(&after, '(') && !pfc_tok_is(c, &c->tok, "REC"))
			return pfc_call(c, e);
		return identifier(c, e);
	case TK_PUNCT:
		if (pfc_is_punct(&c->tok, '(')) {
			if (pfc_advance(c) < 0)
				return c->rc;
			if (pfc_is_punct(&c->tok, '{'))
				return statement_expr(c, e);
			if (pfc_tok_is(c, &c->tok, "REC") && pfc_lex(c, c->next, &after) == 0 && pfc_is_punct(&after, ')')) {
				/* (REC)->field, as some macros write it */
				if (pfc_advance(c) < 0 || pfc_advance(c) < 0)
					return c->rc;
				if (!pfc_is_punct(&c->tok, P2('-', '>')))
					return pfc_fail(c, -EINVAL, c->tok.off, "REC used other than as REC->field");
				if (pfc_advance(c) < 0)
					return c->rc;
				return field_access(c, e);
			}
			if (parse_expr(c, e) < 0)
				return c->rc;
			e->off = e->off; /* keep the opening parenthesis */
			return pfc_expect(c, ')', "')'");
		}
		break;
	default:
		break;
	}
	if (c->tok.kind == TK_END)
		return pfc_fail(c, -EINVAL, c->tok.off, "expression expected before the end");
	return pfc_fail(c, -EINVAL, c->tok.off, "expression expected");
}

/* x[i] on an array, a string or a dynamic array. */
static int index_into(struct cc *c, struct ex *e)
{
	struct ex idx = {0};
	struct ty t = e->t;

	if (e->helper || t.kind != T_MEM)
		return pfc_fail(c, -ENOTSUP, e->off, "indexing %s",
			    e->helper ? "a helper's text" : "kernel memory (not in the trace)");
	if (t.elsize != 1 && t.elsize != 2 && t.elsize != 4 && t.elsize != 8)
		return pfc_fail(c, -ENOTSUP, e->off, "indexing elements of unknown size");
	pfc_materialize(c, e);
	if (pfc_advance(c) < 0)
		return c->rc;
	idx.off = c->tok.off;
	if (parse_expr(c, &idx) < 0 || pfc_need_scalar(c, &idx, "an index") < 0)
		return c->rc;
	pfc_materialize(c, &idx);
	if (pfc_expect(c, ']', "']'") < 0)
		return c->rc;
	pfc_emit(c, (struct pf_op){.code = OP_INDEX, .size = (uint8_t)t.elsize, .sign = t.elsign}, -1);
	e->t = (struct ty){.kind = T_INT, .size = (uint8_t)t.elsize, .sign = t.elsign};
	return 0;
}

static int parse_postfix(struct cc *c, struct ex *e)
{
	if (parse_primary(c, e) < 0)
		return c->rc;
	for (;;) {
		if (pfc_is_punct(&c->tok, '[')) {
			if (index_into(c, e) < 0)
				return c->rc;
		} else if (pfc_is_punct(&c->tok, P2('-', '>')) || pfc_is_punct(&c->tok, '.')) {
			return pfc_fail(c, -EINVAL, c->tok.off, "member access other than REC->field");
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

	if (pfc_advance(c) < 0 || pfc_parse_type(c, &t, &bytes) < 0 || pfc_expect(c, ')', "')' after a type") < 0 ||
	    parse_unary(c, e) < 0)
		return c->rc;
	e->off = at;
	if (t.kind == T_VOID && t.aggregate)
		return pfc_fail(c, -ENOTSUP, at, "cast to a struct or union");
	if (t.kind == T_VOID)
		return 0; /* (void)x: nothing prints it */
	if (e->t.kind == T_MEM) {
		if (t.kind != T_PTR)
			return pfc_fail(c, -ENOTSUP, at, "cast of an array's address to a number");
		/* Still the same bytes, seen as other elements. */
		e->t.elsize = t.elsize;
		e->t.elsign = t.elsign;
		e->t.is_char = t.is_char;
		return 0;
	}
	if (e->helper)
		return pfc_fail(c, -ENOTSUP, at, "cast of a helper's text");
	if (t.is_bool) {
		/* (bool)x is x != 0, not its low byte */
		if (e->is_const)
			e->v = e->v != 0;
		else
			pfc_emit(c, (struct pf_op){.code = OP_BOOL}, 0);
		e->t = t;
		return 0;
	}
	if (t.kind == T_PTR) {
		if (e->is_const)
			e->v = pf_norm(e->v, pfc_type_bytes(&e->t), e->t.sign);
		e->t = t;
		return 0;
	}
	pfc_convert(c, e, t);
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
	if (pfc_is_punct(&c->tok, '(') && pfc_lex(c, c->next, &after) == 0 && pfc_starts_type(c, &after)) {
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
	if (pfc_advance(c) < 0 || parse_unary(c, e) < 0) {
		leave(c);
		return c->rc;
	}
	leave(c);
	if (op == '&')
		return pfc_fail(c, -ENOTSUP, e->off, "address of an expression");
	if (op == '*') {
		if (e->t.kind != T_MEM || e->helper)
			return pfc_fail(c, -ENOTSUP, e->off, "dereference of kernel memory");
		/* *array: its first element */
		struct ty t = e->t;
		if (t.elsize != 1 && t.elsize != 2 && t.elsize != 4 && t.elsize != 8)
			return pfc_fail(c, -ENOTSUP, e->off, "dereference of elements of unknown size");
		pfc_materialize(c, e);
		pfc_emit(c, (struct pf_op){.code = OP_CONST, .imm = 0}, 1);
		pfc_emit(c, (struct pf_op){.code = OP_INDEX, .size = (uint8_t)t.elsize, .sign = t.elsign}, -1);
		e->t = (struct ty){.kind = T_INT, .size = (uint8_t)t.elsize, .sign = t.elsign};
		return 0;
	}
	if (pfc_need_scalar(c, e, "an operator") < 0)
		return c->rc;
	if (op == '!') {
		if (e->is_const)
			e->v = e->v == 0;
		else
			pfc_emit(c, (struct pf_op){.code = OP_LNOT}, 0);
		e->t = ty_int;
		return 0;
	}
	pfc_convert(c, e, promote(e->t));
	if (op == '+')
		return 0;
	if (e->is_const)
		e->v = pf_norm(op == '-' ? 0 - e->v : ~e->v, e->t.size, e->t.sign);
	else
		pfc_emit(c, (struct pf_op){.code = op == '-' ? OP_NEG : OP_NOT, .size = e->t.size,
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

	if (pfc_need_scalar(c, l, "an operator") < 0 || pfc_need_scalar(c, r, "an operator") < 0)
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
					return pfc_fail(c, -ENOTSUP, at, "integer + pointer with both computed");
				*l = *r;
				*r = tmp;
				op = PF_B_PADD;
				scale = l->t.elsize;
			} else {
				return pfc_fail(c, -EINVAL, at, "integer - pointer");
			}
			if (!scale && c->unknown_vars != c->unknown_vars_at_directive &&
			    c->unknown_vars_at_directive != UINT_MAX)
				scale = 1; /* printed as '?' (struct cc): the size does not matter */
			if (!scale)
				return pfc_fail(c, -ENOTSUP, at, "pointer arithmetic on a type of unknown size");
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
			l->v = pf_norm(l->v, pfc_type_bytes(&t), t.sign);
		if (r->is_const)
			r->v = pf_norm(r->v, pfc_type_bytes(&t), t.sign);
	}
	if (l->is_const && r->is_const) {
		if (!pf_binop(op, l->v, r->v, (unsigned)pfc_type_bytes(&t), t.sign, scale, &v))
			return pfc_fail(c, -EINVAL, at, "division by zero");
		l->v = v;
		l->t = is_compare(op) ? ty_int : t;
		if (op == PF_B_PADD || op == PF_B_PSUB)
			l->t = t;
		return 0;
	}
	if ((op == PF_B_DIV || op == PF_B_MOD) && r->is_const && r->v == 0)
		return pfc_fail(c, -EINVAL, at, "division by zero");
	mode = l->is_const ? PF_IMM_LEFT : r->is_const ? PF_IMM_RIGHT : PF_BOTH;
	if (!l->is_const && !r->is_const && l->start > r->start)
		return pfc_fail(c, -EINVAL, at, "internal: operands out of order");
	pfc_emit(c, (struct pf_op){.code = OP_BIN, .mode = (uint8_t)mode, .a = op, .b = (uint32_t)scale,
			       .size = (uint8_t)pfc_type_bytes(&t), .sign = t.sign,
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

	if (pfc_need_scalar(c, l, "a logical operator") < 0)
		return c->rc;
	if (!l->is_const)
		jump = pfc_emit(c, (struct pf_op){.code = is_and ? OP_AND_SC : OP_OR_SC}, -1);
	depth = c->depth;
	r.off = c->tok.off;
	if (parse_binary(c, &r, prec + 1) < 0 || pfc_need_scalar(c, &r, "a logical operator") < 0)
		return c->rc;
	if (l->is_const) {
		if ((is_and && !l->v) || (!is_and && l->v)) {
			pfc_drop_code(c, &r, depth);
			l->v = !is_and;
		} else if (r.is_const) {
			l->v = r.v != 0;
		} else {
			pfc_emit(c, (struct pf_op){.code = OP_BOOL}, 0);
			l->is_const = false;
			l->start = r.start;
		}
		l->t = ty_int;
		return 0;
	}
	pfc_materialize(c, &r);
	pfc_emit(c, (struct pf_op){.code = OP_BOOL}, 0);
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
		if (pfc_advance(c) < 0)
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
		return pfc_fail(c, -EINVAL, at, "?: between a string and a number");
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

	if (parse_binary(c, e, 1) < 0 || !pfc_is_punct(&c->tok, '?'))
		return c->rc;
	if (enter(c) < 0) {
		leave(c);
		return c->rc;
	}
	at = c->tok.off;
	if (pfc_need_scalar(c, e, "a condition") < 0 || pfc_advance(c) < 0) {
		leave(c);
		return c->rc;
	}
	if (!e->is_const)
		jz = pfc_emit(c, (struct pf_op){.code = OP_JZ}, -1);
	depth = c->depth;
	x_start = c->p->nops;
	x.off = c->tok.off;
	if (parse_expr(c, &x) < 0 || pfc_expect(c, ':', "':'") < 0) {
		leave(c);
		return c->rc;
	}
	if (!e->is_const) {
		pfc_materialize(c, &x);
		px = pfc_emit(c, (struct pf_op){.code = OP_NOP}, 0);
		jmp = pfc_emit(c, (struct pf_op){.code = OP_JUMP}, 0);
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
			pfc_drop_code(c, &y, c->depth - (y.is_const ? 0 : 1));
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
			pfc_emit(c, (struct pf_op){.code = OP_CONVERT, .size = t.size, .sign = t.sign}, 0);
		*e = *keep;
		e->t = t;
		return 0;
	}
	pfc_materialize(c, &y);
	py = pfc_emit(c, (struct pf_op){.code = OP_NOP}, 0);
	convert_branch(c, &x, px, t);
	convert_branch(c, &y, py, t);
	c->p->ops[jz].a = (uint32_t)(y_start - (size_t)jz);
	c->p->ops[jmp].a = (uint32_t)(c->p->nops - (size_t)jmp);
	e->t = t;
	e->helper = x.helper || y.helper;
	return 0;
}

int pfc_parse_assign(struct cc *c, struct ex *e)
{
	e->off = c->tok.off;
	if (parse_ternary(c, e) < 0)
		return c->rc;
	if (pfc_is_punct(&c->tok, '='))
		return pfc_fail(c, -EINVAL, c->tok.off, "assignment");
	return 0;
}

/* A full expression: the comma operator keeps its right side (nothing has side effects). */
static int parse_expr(struct cc *c, struct ex *e)
{
	int depth = c->depth;

	if (pfc_parse_assign(c, e) == 0) {
		while (pfc_is_punct(&c->tok, ',')) {
			pfc_drop_code(c, e, depth);
			memset(e, 0, sizeof(*e));
			if (pfc_advance(c) < 0 || pfc_parse_assign(c, e) < 0)
				break;
		}
	}
	return c->rc;
}

/* ------------------------------------------------------ directives */

static uint32_t add_spec(struct cc *c, const struct kv_spec *s)
{
	struct tb_printfmt *p = c->p;

	if (!pfc_grow((void **)&p->specs, &c->specs_cap, (size_t)p->nspecs + 1, sizeof(*p->specs))) {
		pfc_fail(c, -ENOMEM, 0, "out of memory");
		return 0;
	}
	p->specs[p->nspecs] = *s;
	return p->nspecs++;
}

/* The next argument of the format: parsed after its comma. */
static int next_arg(struct cc *c, struct ex *e, size_t fmt_at)
{
	if (!pfc_is_punct(&c->tok, ','))
		return pfc_fail(c, -EINVAL, c->tok.off,
			    "too few arguments for the format string (directive at byte %zu)", fmt_at);
	if (pfc_advance(c) < 0)
		return c->rc;
	memset(e, 0, sizeof(*e));
	e->off = c->tok.off;
	return pfc_parse_assign(c, e);
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
		pfc_fail(c, -ENOMEM, 0, "out of memory");
	sb_free(&tmp);
	return true;
}

/* The width, precision and value arguments of directive s, parsed into w, pr and v. */
static int directive_args(struct cc *c, const struct kv_spec *s, struct ex *w, struct ex *pr, struct ex *v,
			  size_t fmt_at)
{
	if (s->width_arg && (next_arg(c, w, fmt_at) < 0 || pfc_need_scalar(c, w, "a '*' width") < 0))
		return c->rc;
	if (s->width_arg) {
		pfc_convert(c, w, ty_int);
		pfc_materialize(c, w);
	}
	if (s->precision_arg && (next_arg(c, pr, fmt_at) < 0 || pfc_need_scalar(c, pr, "a '*' precision") < 0))
		return c->rc;
	if (s->precision_arg) {
		pfc_convert(c, pr, ty_int);
		pfc_materialize(c, pr);
	}
	if (next_arg(c, v, fmt_at) < 0)
		return c->rc;
	return 0;
}

static int directive(struct cc *c, struct kv_spec *s, size_t fmt_at)
{
	struct ex w = {0}, pr = {0}, v = {0};
	uint32_t start = c->p->nops;
	int depth = c->depth;
	unsigned unknown = c->unknown_vars;
	uint8_t mode;

	c->unknown_vars_at_directive = unknown;
	if (directive_args(c, s, &w, &pr, &v, fmt_at) < 0) {
		c->unknown_vars_at_directive = UINT_MAX;
		return c->rc;
	}
	c->unknown_vars_at_directive = UINT_MAX;
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
		if (pfc_need_scalar(c, &v, s->kind == KV_CHAR ? "%c" : "a number directive") < 0)
			return c->rc;
		mode = s->kind == KV_CHAR ? PF_PRINT_CHAR : PF_PRINT_NUM;
		break;
	case KV_STRING:
		mode = PF_PRINT_STR;
		break;
	default: /* KV_POINTER */
		switch (kv_pointer_use(s)) {
		case KV_PTR_VALUE:
			if (pfc_need_scalar(c, &v, "%p") < 0)
				return c->rc;
			mode = PF_PRINT_PTR_VAL;
			break;
		case KV_PTR_MEMORY:
			if (v.helper || v.t.kind != T_MEM)
				return pfc_fail(c, -ENOTSUP, v.off, "%%p%s of a kernel address (dereferenced at print time)",
					    s->ext);
			mode = PF_PRINT_PTR_MEM;
			break;
		default:
			return pfc_fail(c, -ENOTSUP, fmt_at, "%%p%s (needs kernel objects or errno names)", s->ext);
		}
		break;
	}
	if (c->rc)
		return c->rc;
	if (fold_directive(c, s, &v))
		return c->rc;
	pfc_materialize(c, &v);
	pfc_emit(c, (struct pf_op){.code = OP_PRINT, .mode = mode, .a = add_spec(c, s)},
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
		return pfc_fail(c, -EINVAL, c->tok.off, "print fmt does not start with a string");
	if (parse_string_literal(c, &e) < 0)
		return c->rc;
	/* The pool may move while compiling: work on a copy, which ends at the first NUL as C does. */
	*fmt = strdup(c->p->pool + e.str);
	c->p->pool_len = e.str; /* the format's own copy is not needed in the program */
	if (!*fmt)
		return pfc_fail(c, -ENOMEM, 0, "out of memory");
	return 0;
}

/* PF_POOL_PAD zero bytes after the pool, for the 16-byte copies of text. */
static void pad_pool(struct cc *c)
{
	struct tb_printfmt *p = c->p;

	if (!pfc_grow((void **)&p->pool, &c->pool_cap, (size_t)p->pool_len + PF_POOL_PAD, 1)) {
		pfc_fail(c, -ENOMEM, 0, "out of memory");
		return;
	}
	memset(p->pool + p->pool_len, 0, PF_POOL_PAD);
}

/*
 * A table printed as libtraceevent does (pf_table.tep_like) must go
 * straight to a plain %s: under a width libtraceevent pads each name on
 * its own, and as anything else the libtraceevent text is not known here.
 */
static void check_tep_like(struct cc *c)
{
	const struct tb_printfmt *p = c->p;

	for (uint32_t i = 0; i + 1 < p->nops && !c->rc; i++) {
		const struct pf_op *op = &p->ops[i], *next = op + 1;
		const struct kv_spec *spec = next->code == OP_PRINT ? &p->specs[next->a] : NULL;
		if ((op->code != OP_FLAGS && op->code != OP_SYMBOLIC) || !p->tables[op->a].tep_like)
			continue;
		if (!spec || next->mode != PF_PRINT_STR || spec->width_arg || spec->precision_arg ||
		    spec->width > 0 || spec->precision >= 0)
			pfc_fail(c, -ENOTSUP, 0, "unknown name in a table not printed by a plain %%s");
		/* libtraceevent prints a number of its own for a kernel variable where we print '?' */
		else if (c->unknown_vars)
			pfc_fail(c, -ENOTSUP, 0, "unknown name in a table, and a kernel variable");
	}
}

int tb_printfmt_compile(const struct tb_format *f, const struct tb_print_env *env,
			struct tb_printfmt **out, struct tb_problem *err)
{
	return pf_compile(f, env, true, out, err);
}

int pf_compile(const struct tb_format *f, const struct tb_print_env *env, bool specialise,
	       struct tb_printfmt **out, struct tb_problem *err)
{
	struct cc c = {.f = f, .env = env, .err = err, .src = f->print_fmt, .len = f->print_fmt_len,
		       .unknown_vars_at_directive = UINT_MAX};
	char *fmt = NULL;

	*out = NULL;
	if (!f->print_fmt)
		return diag_fail(err, 0, "format has no print fmt");
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p)
		return -ENOMEM;
	c.p->f = f;
	c.p->env = env;
	if (pfc_advance(&c) == 0 && read_format(&c, &fmt) == 0 && compile_format(&c, fmt, 0) == 0) {
		/* Extra arguments: the kernel ignores them, but they must parse. */
		int depth = c.depth;
		while (pfc_is_punct(&c.tok, ',') && !c.rc) {
			struct ex e = {0};
			uint32_t start = c.p->nops;
			if (pfc_advance(&c) < 0 || pfc_parse_assign(&c, &e) < 0)
				break;
			c.p->nops = start;
			c.depth = depth;
		}
		if (!c.rc && c.tok.kind != TK_END)
			pfc_fail(&c, -EINVAL, c.tok.off, "unexpected text after the arguments");
	}
	free(fmt);
	if (!c.rc && c.max_depth > PF_STACK_MAX)
		pfc_fail(&c, -EINVAL, 0, "expression needs more than %d values at once", PF_STACK_MAX);
	if (!c.rc)
		pfc_emit(&c, (struct pf_op){.code = OP_END}, 0);
	if (!c.rc)
		check_tep_like(&c);
	if (!c.rc)
		pad_pool(&c);
	if (!c.rc && specialise && pf_specialise(c.p) < 0)
		pfc_fail(&c, -ENOMEM, 0, "out of memory");
	if (!c.rc && specialise)
		pf_known_attach(c.p);
	if (c.rc) {
		tb_printfmt_free(c.p);
		return c.rc;
	}
	*out = c.p;
	return 0;
}

bool tb_printfmt_guesses(const struct tb_printfmt *p)
{
	for (uint32_t i = 0; i < p->ntables; i++)
		if (p->tables[i].tep_like)
			return true;
	return false;
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
