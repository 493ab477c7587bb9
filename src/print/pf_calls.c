// SPDX-License-Identifier: MIT
/*
 * pf_calls.c - NAME(...) in a print fmt: the kernel's print helpers
 * (__get_str, __print_flags, __print_symbolic, ...), each compiled by its
 * entry in a table of known calls.
 *
 * Part of the print-fmt compiler (pf_cc.h); split from pf_compile.c
 * (issue 22 item 5).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_cc.h"

/* The dynamic field named by the identifier in a helper's parentheses. */
static int dynamic_field(struct cc *c, bool rel, const struct tb_schema_field **out)
{
	const struct tb_schema_field *fl;

	if (c->tok.kind != TK_IDENT)
		return pfc_fail(c, -EINVAL, c->tok.off, "expected a field name");
	fl = pfc_field_named(c, c->tok.off, c->tok.len);
	if (!fl)
		return pfc_fail(c, -EINVAL, c->tok.off, "no field named %.*s", (int)c->tok.len, c->src + c->tok.off);
	if (fl->kind != (rel ? TB_SCHEMA_FIELD_REL_LOC : TB_SCHEMA_FIELD_DATA_LOC))
		return pfc_fail(c, -EINVAL, c->tok.off, "field %s is not a %s field", fl->name,
			    rel ? "__rel_loc" : "__data_loc");
	*out = fl;
	pfc_note_static(c, fl->offset + fl->size);
	return pfc_advance(c);
}

static uint8_t dyn_mode(const struct tb_schema_field *fl)
{
	if (fl->kind == TB_SCHEMA_FIELD_REL_LOC)
		return PF_DYN_REL4;
	return fl->size == 2 ? PF_DYN_LOC2 : PF_DYN_LOC4;
}

/* One argument of a call, on the stack (or constant when allow_const). */
static int call_arg(struct cc *c, struct ex *e, bool allow_const)
{
	if (pfc_parse_assign(c, e) < 0)
		return c->rc;
	if (!allow_const)
		pfc_materialize(c, e);
	return 0;
}

static int comma(struct cc *c)
{
	return pfc_expect(c, ',', "','");
}

/*
 * {value, "name"} entries up to the closing parenthesis of the call.  A
 * name the trace does not give, as a whole value, makes the table print as
 * libtraceevent does (pf_table.tep_like) when the helper's value is
 * unsigned (tep_ok): libtraceevent reads a signed field unsigned, so a
 * negative one would match differently.
 */
static int symbol_table(struct cc *c, uint32_t *table, uint32_t delim, uint32_t delim_len, bool tep_ok)
{
	struct tb_printfmt *p = c->p;
	struct pf_table tab = {.first = p->nsyms, .delim = delim, .delim_len = delim_len};
	bool ended = false;

	while (pfc_is_punct(&c->tok, ',')) {
		struct ex v = {0}, name = {0};
		int depth = c->depth;
		if (pfc_advance(c) < 0)
			return c->rc;
		if (pfc_is_punct(&c->tok, ')'))
			break; /* a trailing comma */
		if (pfc_expect(c, '{', "'{' of a table entry") < 0)
			return c->rc;
		if (pfc_is_punct(&c->tok, '}')) {
			/* { }: all zero, an unnamed entry that ends the table */
			ended = true;
			if (pfc_advance(c) < 0)
				return c->rc;
			continue;
		}
		if (tep_ok && pfc_unknown_name(c)) {
			/* libtraceevent's value for a name it does not know: -1 */
			v = (struct ex){.is_const = true, .v = UINT64_MAX, .t = ty_ulong};
			tab.tep_like = true;
			if (pfc_advance(c) < 0)
				return c->rc;
		} else if (pfc_parse_assign(c, &v) < 0) {
			return c->rc;
		}
		if (!v.is_const || v.is_str) {
			if (!c->rc)
				pfc_fail(c, -EINVAL, v.off, "table value is not a constant");
			return c->rc;
		}
		if (comma(c) < 0 || pfc_parse_assign(c, &name) < 0)
			return c->rc;
		c->depth = depth;
		if (pfc_expect(c, '}', "'}' of a table entry") < 0)
			return c->rc;
		if (!name.is_const || (!name.is_str && (name.t.kind == T_MEM || name.v != 0)))
			return pfc_fail(c, -EINVAL, name.off, "table name is not a string literal");
		if (!name.is_str) /* NULL: the kernel's loops stop at the first unnamed entry */
			ended = true;
		if (ended)
			continue;
		if (!pfc_grow((void **)&p->syms, &c->syms_cap, (size_t)p->nsyms + 1, sizeof(*p->syms)))
			return pfc_fail(c, -ENOMEM, 0, "out of memory");
		/* The kernel prints names as C strings: up to a NUL inside. */
		p->syms[p->nsyms++] = (struct pf_sym){pf_norm(v.v, pfc_type_bytes(&v.t), v.t.sign), name.str,
						      (uint32_t)strnlen(p->pool + name.str, name.str_len)};
		tab.count++;
	}
	if (!pfc_grow((void **)&p->tables, &c->tables_cap, (size_t)p->ntables + 1, sizeof(*p->tables)))
		return pfc_fail(c, -ENOMEM, 0, "out of memory");
	p->tables[p->ntables] = tab;
	*table = p->ntables++;
	return 0;
}

/* Bits that can be set in imm: 0 for 0, 64 for a value with the top bit set. */
static unsigned bit_length(uint64_t imm)
{
	return imm ? 64u - (unsigned)__builtin_clzll(imm) : 0u;
}

/*
 * Whether v's code reads one unsigned field and then only shifts it right
 * and masks it by constants, every value on the way non-negative in its C
 * type: ((REC->ioprio) >> 13) & 7 of an unsigned short, an int by C's
 * promotion.  libtraceevent computes such a value as C does (it reads the
 * field unsigned, and nothing is negative for the signs to differ on), so
 * its type's sign need not keep a table from printing as libtraceevent does.
 * bits: how many low bits of the value may be set.
 */
static bool unsigned_field_masked(const struct cc *c, const struct ex *v)
{
	const struct pf_op *op = c->p->ops + v->start, *end = c->p->ops + c->p->nops;
	unsigned bits;

	if (v->is_const || op >= end || op->code != OP_FIELD || op->sign || op->size == 0 || op->size > 8)
		return false;
	bits = 8u * op->size;
	for (op++; op < end; op++) {
		if (op->code == OP_CONVERT && op->size <= 8)
			bits = bits < 8u * op->size ? bits : 8u * op->size;
		else if (op->code == OP_BIN && op->a == PF_B_SHR && op->mode == PF_IMM_RIGHT)
			bits = op->imm < bits ? bits - (unsigned)op->imm : 0;
		else if (op->code == OP_BIN && op->a == PF_B_AND && op->mode != PF_BOTH)
			bits = bit_length(op->imm) < bits ? bit_length(op->imm) : bits;
		else
			return false;
		if (op->size == 0 || op->size > 8 || (op->sign && bits >= 8u * op->size))
			return false; /* may be negative there */
	}
	return true;
}

/* The unsigned long value a flags / symbolic helper receives; *was_signed: C may compute it negative (its type signed, and not unsigned_field_masked()). */
static int helper_value(struct cc *c, struct ex *v, bool *was_signed)
{
	if (call_arg(c, v, false) < 0 || pfc_need_scalar(c, v, "a helper's value") < 0)
		return c->rc;
	*was_signed = v->t.sign && !unsigned_field_masked(c, v);
	pfc_convert(c, v, ty_ulong);
	return 0;
}

static int helper_flags(struct cc *c, struct ex *e)
{
	struct ex v = {.off = c->tok.off}, delim = {0};
	uint32_t table;
	int depth = c->depth;
	bool was_signed;

	if (helper_value(c, &v, &was_signed) < 0 || comma(c) < 0 || pfc_parse_assign(c, &delim) < 0)
		return c->rc;
	if (!delim.is_str) {
		if (!(delim.is_const && !delim.v))
			return pfc_fail(c, -EINVAL, delim.off, "__print_flags delimiter is not a string literal");
		delim.str = pfc_pool_add(c, "", 0), delim.str_len = 0;
	}
	if (symbol_table(c, &table, delim.str, (uint32_t)strnlen(c->p->pool + delim.str, delim.str_len),
			 !was_signed) < 0)
		return c->rc;
	c->depth = depth + 1;
	pfc_emit(c, (struct pf_op){.code = OP_FLAGS, .a = table}, 0);
	e->helper = true;
	return 0;
}

static int helper_symbolic(struct cc *c, struct ex *e)
{
	struct ex v = {.off = c->tok.off};
	uint32_t table;
	int depth = c->depth;
	bool was_signed;

	if (helper_value(c, &v, &was_signed) < 0 || symbol_table(c, &table, 0, 0, !was_signed) < 0)
		return c->rc;
	c->depth = depth + 1;
	pfc_emit(c, (struct pf_op){.code = OP_SYMBOLIC, .a = table}, 0);
	e->helper = true;
	return 0;
}

static int need_memory(struct cc *c, const struct ex *e, const char *what)
{
	if (e->helper)
		return pfc_fail(c, -ENOTSUP, e->off, "%s of a helper's text", what);
	if (e->t.kind != T_MEM)
		return pfc_fail(c, -ENOTSUP, e->off, "%s of a kernel address (dereferenced at print time)", what);
	return 0;
}

/* __print_hex(buf, len), __print_hex_str(buf, len) */
static int helper_hex(struct cc *c, struct ex *e, bool concat)
{
	struct ex buf = {.off = c->tok.off}, len = {0};

	if (call_arg(c, &buf, false) < 0 || need_memory(c, &buf, "__print_hex") < 0 || comma(c) < 0)
		return c->rc;
	len.off = c->tok.off;
	if (call_arg(c, &len, false) < 0 || pfc_need_scalar(c, &len, "a length") < 0)
		return c->rc;
	pfc_convert(c, &len, ty_int);
	pfc_emit(c, (struct pf_op){.code = OP_HEX, .mode = concat}, -1);
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
	if (call_arg(c, &count, false) < 0 || pfc_need_scalar(c, &count, "a count") < 0 || comma(c) < 0)
		return c->rc;
	pfc_convert(c, &count, ty_int);
	elsize.off = c->tok.off;
	if (call_arg(c, &elsize, true) < 0)
		return c->rc;
	if (!elsize.is_const || elsize.is_str || elsize.v == 0 || elsize.v > 64)
		return pfc_fail(c, -EINVAL, elsize.off, "__print_array element size is not a small constant");
	pfc_emit(c, (struct pf_op){.code = OP_ARRAY, .a = (uint32_t)elsize.v}, -1);
	e->helper = true;
	return 0;
}

/* __print_dynamic_array(field, el_size) */
static int helper_dynamic_array(struct cc *c, struct ex *e)
{
	const struct tb_schema_field *fl;
	struct ex elsize = {0};

	if (dynamic_field(c, false, &fl) < 0 || comma(c) < 0)
		return c->rc;
	elsize.off = c->tok.off;
	if (call_arg(c, &elsize, true) < 0)
		return c->rc;
	if (!elsize.is_const || elsize.is_str || elsize.v == 0 || elsize.v > 64)
		return pfc_fail(c, -EINVAL, elsize.off, "element size is not a small constant");
	pfc_emit(c, (struct pf_op){.code = OP_DYN_MEM, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	pfc_emit(c, (struct pf_op){.code = OP_DYN_LEN, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	pfc_emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_DIV, .size = 4,
			       .imm = elsize.v}, 0);
	pfc_emit(c, (struct pf_op){.code = OP_ARRAY, .a = (uint32_t)elsize.v}, -1);
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
		return pfc_fail(c, -ENOTSUP, at, "jiffies_to_msecs needs the kernel's HZ");
	num = 1000 / gcd(1000, (uint64_t)hz);
	den = (uint64_t)hz / gcd(1000, (uint64_t)hz);
	e->off = c->tok.off;
	if (call_arg(c, e, true) < 0 || pfc_need_scalar(c, e, "jiffies_to_msecs") < 0)
		return c->rc;
	pfc_convert(c, e, ty_ulong);
	if (e->is_const) {
		e->v = (e->v * num + den - 1) / den;
	} else {
		if (num != 1)
			pfc_emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_MUL,
					       .size = 8, .imm = num}, 0);
		if (den != 1) {
			pfc_emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_ADD,
					       .size = 8, .imm = den - 1}, 0);
			pfc_emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT, .a = PF_B_DIV,
					       .size = 8, .imm = den}, 0);
		}
	}
	pfc_convert(c, e, ty_uint);
	return 0;
}

/* sizeof(type), sizeof(expr), sizeof expr */

/* ------------------------------------------------- the known calls */

/*
 * The kernel's print helpers, one entry each: a name, the function that
 * compiles its arguments, and what that function is told about the
 * variant.  pfc_call() finds the name here (a scan of a few dozen entries,
 * once per call in a print fmt: at compile time, never per record).  A
 * name missing here is refused with -ENOTSUP.
 */
enum {
	CALL_REL = 1,     /* __get_rel_*: the field is a __rel_loc */
	CALL_STR = 2,     /* the memory is a string (chars, signed) */
	CALL_VARIANT = 4, /* __print_hex_str: concatenated; __print_ns_to_secs: seconds */
	CALL_LEN = 8,     /* __get_dynamic_array_len: the length, not the bytes */
};

struct known_call {
	const char *name;
	/* One of the two: plain when the helper needs nothing but its arguments. */
	int (*compile)(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off);
	int (*plain)(struct cc *c, struct ex *e);
	unsigned flags; /* CALL_*, for compile */
};

/*
 * __get_str, __get_dynamic_array, __get_sockaddr and their __rel_ forms:
 * the field's bytes; __get_dynamic_array_len (CALL_LEN): their count.
 */
static int call_dyn(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	const struct tb_schema_field *fl;
	bool len = k->flags & CALL_LEN;

	(void)name_off;
	if (dynamic_field(c, k->flags & CALL_REL, &fl) < 0)
		return c->rc;
	if (len) {
		e->t = ty_uint;
	} else {
		e->t = (struct ty){.kind = T_MEM, .elsize = 1};
		if (k->flags & CALL_STR)
			e->t.is_char = e->t.elsign = true;
	}
	pfc_emit(c, (struct pf_op){.code = len ? OP_DYN_LEN : OP_DYN_MEM, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	return 0;
}

/* __get_bitmask, __get_cpumask and their __rel_ forms: the kernel's bitmask text. */
static int call_bitmask(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	const struct tb_schema_field *fl;

	(void)name_off;
	if (dynamic_field(c, k->flags & CALL_REL, &fl) < 0)
		return c->rc;
	pfc_emit(c, (struct pf_op){.code = OP_DYN_MEM, .mode = dyn_mode(fl), .a = fl->offset}, 1);
	pfc_emit(c, (struct pf_op){.code = OP_BITMASK}, 0);
	e->helper = true;
	return 0;
}

static int call_hex(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	(void)name_off;
	return helper_hex(c, e, k->flags & CALL_VARIANT);
}

/* __print_ns_to_secs (CALL_VARIANT) and __print_ns_without_secs: ns split at the second. */
static int call_ns(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	bool secs = k->flags & CALL_VARIANT;

	(void)name_off;
	e->off = c->tok.off;
	if (call_arg(c, e, true) < 0 || pfc_need_scalar(c, e, "__print_ns") < 0)
		return c->rc;
	pfc_convert(c, e, ty_ulong);
	if (e->is_const) {
		e->v = secs ? e->v / 1000000000u : (uint32_t)(e->v % 1000000000u);
	} else {
		pfc_emit(c, (struct pf_op){.code = OP_BIN, .mode = PF_IMM_RIGHT,
					   .a = secs ? PF_B_DIV : PF_B_MOD, .size = 8, .imm = 1000000000u}, 0);
	}
	if (!secs)
		pfc_convert(c, e, ty_uint);
	return 0;
}

/* __builtin_expect(x, hint): x; the hint is parsed and its code dropped. */
static int call_builtin_expect(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	struct ex hint = {0};
	int depth;

	(void)k, (void)name_off;
	e->off = c->tok.off;
	if (call_arg(c, e, true) < 0 || comma(c) < 0)
		return c->rc;
	depth = c->depth;
	if (pfc_parse_assign(c, &hint) < 0)
		return c->rc;
	pfc_drop_code(c, &hint, depth);
	return 0;
}

/* __builtin_constant_p(x): whether x folded to a constant. */
static int call_builtin_constant_p(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	struct ex x = {0};
	int depth = c->depth;

	(void)k, (void)name_off;
	if (pfc_parse_assign(c, &x) < 0)
		return c->rc;
	pfc_drop_code(c, &x, depth);
	e->is_const = true;
	e->t = ty_int;
	e->v = x.is_const;
	return 0;
}

/* is_signed_type(type): a constant. */
static int call_is_signed_type(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	struct ty t;
	uint64_t bytes;

	(void)k, (void)name_off;
	if (pfc_parse_type(c, &t, &bytes) < 0)
		return c->rc;
	e->is_const = true;
	e->t = ty_int;
	e->v = t.kind == T_INT && t.sign;
	return 0;
}

static int call_jiffies(struct cc *c, struct ex *e, const struct known_call *k, size_t name_off)
{
	(void)k;
	return helper_jiffies(c, e, name_off);
}

static const struct known_call known_calls[] = {
	{"__get_str", .compile = call_dyn, .flags = CALL_STR},
	{"__get_rel_str", .compile = call_dyn, .flags = CALL_REL | CALL_STR},
	{"__get_dynamic_array", .compile = call_dyn},
	{"__get_rel_dynamic_array", .compile = call_dyn, .flags = CALL_REL},
	{"__get_sockaddr", .compile = call_dyn},
	{"__get_rel_sockaddr", .compile = call_dyn, .flags = CALL_REL},
	{"__get_dynamic_array_len", .compile = call_dyn, .flags = CALL_LEN},
	{"__get_rel_dynamic_array_len", .compile = call_dyn, .flags = CALL_REL | CALL_LEN},
	{"__get_bitmask", .compile = call_bitmask},
	{"__get_cpumask", .compile = call_bitmask},
	{"__get_rel_bitmask", .compile = call_bitmask, .flags = CALL_REL},
	{"__get_rel_cpumask", .compile = call_bitmask, .flags = CALL_REL},
	{"__print_flags", .plain = helper_flags},
	{"__print_flags_u64", .plain = helper_flags},
	{"__print_symbolic", .plain = helper_symbolic},
	{"__print_symbolic_u64", .plain = helper_symbolic},
	{"__print_hex", .compile = call_hex},
	{"__print_hex_str", .compile = call_hex, .flags = CALL_VARIANT},
	{"__print_array", .plain = helper_array},
	{"__print_dynamic_array", .plain = helper_dynamic_array},
	{"__print_ns_to_secs", .compile = call_ns, .flags = CALL_VARIANT},
	{"__print_ns_without_secs", .compile = call_ns},
	{"__builtin_expect", .compile = call_builtin_expect},
	{"__builtin_constant_p", .compile = call_builtin_constant_p},
	{"is_signed_type", .compile = call_is_signed_type},
	{"jiffies_to_msecs", .compile = call_jiffies},
};

static const struct known_call *known_call_named(const struct cc *c, const struct token *name)
{
	for (size_t i = 0; i < sizeof(known_calls) / sizeof(known_calls[0]); i++)
		if (pfc_tok_is(c, name, known_calls[i].name))
			return &known_calls[i];
	return NULL;
}

/* NAME( ... ): the kernel's print helpers. */
int pfc_call(struct cc *c, struct ex *e)
{
	struct token name = c->tok;
	const struct known_call *k = known_call_named(c, &name);

	e->start = c->p->nops;
	e->is_const = false;
	if (pfc_advance(c) < 0 || pfc_advance(c) < 0) /* NAME ( */
		return c->rc;
	if (!k)
		return pfc_fail(c, -ENOTSUP, name.off, "function %.*s", (int)name.len, c->src + name.off);
	if ((k->plain ? k->plain(c, e) : k->compile(c, e, k, name.off)) < 0)
		return c->rc;
	if (e->helper)
		e->t = (struct ty){.kind = T_MEM, .is_char = true, .elsign = true, .elsize = 1};
	return pfc_expect(c, ')', "')' closing the call");
}
