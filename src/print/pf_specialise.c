// SPDX-License-Identifier: MIT
/*
 * pf_specialise.c - a compiled print fmt's generic program rewritten with
 * fused ops (pf_internal.h), once, right after compiling.
 *
 * The generic program spends most of its time between the real work: a
 * dispatch per op, a value pushed and popped per argument, the directive's
 * flags looked at again for every record.  The shapes nearly every event
 * of a real trace is made of are recognised here and each replaced by one
 * op that does the whole directive, its width and flags decided now:
 *
 *   REC->f, or REC->f & CONST, under a number directive   OP_F_NUM/DEC/HEX
 *   REC->arr[CONST]                                        a field load
 *   a char array or __get_str() under %s                  OP_F_STR/DSTR
 *   __print_symbolic / __print_flags under a plain %s      OP_F_SYMBOLIC...
 *   V ? __print_flags(V, ...) : "text"                     OP_F_FLAGS
 *   V ? "text" : "text"                                    OP_F_SELECT
 *   any other value under a plain number directive         OP_NUM
 *
 * and the literal text before an op that prints becomes its prefix.
 * Symbolic tables of small values get an index by value.  Nothing here
 * decides what is printed: the fused ops print through the same rules
 * (kvsprintf.c) as the generic ones, which the tests hold them against.
 *
 * Jumps: their offsets are made absolute first; an op a jump lands on is
 * never folded into the op before it (unless the jump goes too); a folded
 * op is left as OP_NOP, and the final compaction sends every jump to the
 * first op kept at or after its target.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pf_internal.h"

struct sp {
	struct tb_printfmt *p;
	uint32_t *target; /* [nops]: how many jumps land here */
};

static bool is_jump(unsigned code)
{
	return code == OP_JUMP || code == OP_JZ || code == OP_AND_SC || code == OP_OR_SC;
}

/* Ops that neither print nor jump: text may move across them to the op that prints next. */
static bool is_pure(unsigned code)
{
	switch (code) {
	case OP_CONST: case OP_STR: case OP_FIELD: case OP_FIELD_MEM: case OP_DYN_MEM:
	case OP_DYN_LEN: case OP_LOCAL_GET: case OP_LOCAL_SET: case OP_CONVERT: case OP_BOOL:
	case OP_NEG: case OP_NOT: case OP_LNOT: case OP_BIN: case OP_INDEX: case OP_FIELD_AND:
	case OP_FIELD_BIN: case OP_NOP:
		return true;
	default:
		return false;
	}
}

/* Ops that print their text prefix before anything else they do. */
static bool takes_text(unsigned code)
{
	switch (code) {
	case OP_PRINT: case OP_END: case OP_F_NUM: case OP_F_DEC: case OP_F_HEX: case OP_F_STR:
	case OP_F_DSTR: case OP_F_SYMBOLIC: case OP_F_FLAGS: case OP_F_SELECT: case OP_F_PRINT:
	case OP_SYMBOLIC_OUT: case OP_FLAGS_OUT: case OP_SELECT_STR: case OP_NUM:
		return true;
	default:
		return false;
	}
}

/* The op after i that is still there (folded ops are NOPs no jump lands on). */
static uint32_t next_op(const struct sp *s, uint32_t i)
{
	const struct tb_printfmt *p = s->p;

	for (i++; i < p->nops; i++)
		if (p->ops[i].code != OP_NOP || s->target[i])
			break;
	return i;
}

/* Op j can be folded into the ops before it: it is code and no jump lands on it. */
static bool foldable(const struct sp *s, uint32_t j, unsigned code)
{
	return j < s->p->nops && !s->target[j] && s->p->ops[j].code == code;
}

/* Op i becomes op; j (and k, unless UINT32_MAX), already checked foldable, go. */
static void fold(struct sp *s, uint32_t i, struct pf_op op, uint32_t j, uint32_t k)
{
	s->p->ops[i] = op;
	s->p->ops[j].code = OP_NOP;
	if (k != UINT32_MAX)
		s->p->ops[k].code = OP_NOP;
}

/*
 * A field the fused ops can read: they load the 8 bytes that end where it
 * ends, so it must end 8 bytes or more into the record (past the common
 * header, where every field of an event's own lies).
 */
static bool wide_enough(const struct pf_op *op)
{
	return op->a + op->size >= 8;
}

/* OP_FIELD or OP_FIELD_AND: the value "V" of the fused ops (field & mask). */
static bool is_masked_field(const struct pf_op *op)
{
	return (op->code == OP_FIELD || op->code == OP_FIELD_AND) && wide_enough(op);
}

static uint64_t field_mask(const struct pf_op *op)
{
	return op->code == OP_FIELD_AND ? op->imm : UINT64_MAX;
}

static bool same_value(const struct pf_op *x, const struct pf_op *y)
{
	return x->a == y->a && x->size == y->size && x->sign == y->sign && field_mask(x) == y->imm;
}

/* A fused op reading V as the masked field at f reads it. */
static struct pf_op reading(unsigned code, const struct pf_op *f)
{
	return (struct pf_op){.code = (uint8_t)code, .a = f->a, .size = f->size, .sign = f->sign,
			      .imm = field_mask(f)};
}

/* ---------------------------------------------------------- value shapes */

/* REC->arr[CONST] with the index inside the array: a load of the element. */
static void fold_index(struct sp *s, uint32_t i)
{
	const struct pf_op *mem = &s->p->ops[i], *k, *ix;
	uint32_t j1 = next_op(s, i), j2;

	if (!foldable(s, j1, OP_CONST))
		return;
	j2 = next_op(s, j1);
	if (!foldable(s, j2, OP_INDEX))
		return;
	k = &s->p->ops[j1];
	ix = &s->p->ops[j2];
	/* b == 0: an array to the end of the record, whose length only the record knows */
	if (!mem->b || k->imm >= mem->b / ix->size)
		return;
	fold(s, i, (struct pf_op){.code = OP_FIELD, .a = mem->a + (uint32_t)k->imm * ix->size,
				  .size = ix->size, .sign = ix->sign}, j1, j2);
}

/* A field's value is already one of type (size, sign): converting it changes nothing. */
static bool fits(const struct pf_op *f, unsigned size, bool sign)
{
	return size >= 8 || (f->size == size && f->sign == sign) || (f->size < size && (!f->sign || sign));
}

/*
 * REC->f OP constant, for the operators that need no pointer scale.  An
 * & whose operand already has the operator's type is just a mask (the
 * result of two values of a type is of that type): OP_FIELD_AND.
 */
static void fold_field_bin(struct sp *s, uint32_t i)
{
	const struct pf_op *f = &s->p->ops[i], *bin;
	uint32_t j = next_op(s, i);

	if (!wide_enough(f) || !foldable(s, j, OP_BIN))
		return;
	bin = &s->p->ops[j];
	if (bin->mode != PF_IMM_RIGHT || bin->a > PF_B_GE)
		return;
	if (bin->a == PF_B_AND && fits(f, bin->size, bin->sign))
		fold(s, i, (struct pf_op){.code = OP_FIELD_AND, .a = f->a, .size = f->size, .sign = f->sign,
					  .imm = pf_norm(bin->imm, bin->size, bin->sign)}, j, UINT32_MAX);
	else
		fold(s, i, (struct pf_op){.code = OP_FIELD_BIN, .a = f->a, .size = f->size, .sign = f->sign,
					  .mode = (uint8_t)bin->a, .b = bin->size | (uint32_t)bin->sign << 8,
					  .imm = bin->imm}, j, UINT32_MAX);
}

/* --------------------------------------------------------- print shapes */

/* A directive whose arguments are the value alone (no '*'), or NULL. */
static const struct kv_spec *plain_spec(const struct sp *s, const struct pf_op *print)
{
	const struct kv_spec *spec = &s->p->specs[print->a];

	return spec->width_arg || spec->precision_arg ? NULL : spec;
}

/* %s that prints text whole: no width to pad to, no precision to cut at. */
static bool plain_string(const struct kv_spec *spec)
{
	return spec && spec->width <= 0 && spec->precision < 0;
}

/* Width and flags of a number directive the fast formats do; false: kv_number(). */
static bool fast_number(const struct kv_spec *spec, uint8_t *mode, uint32_t *fmt)
{
	if (spec->precision >= 0 || spec->width > PF_FAST_WIDTH ||
	    (spec->flags & ~(KV_SIGN | KV_SMALL | KV_LEFT | KV_ZEROPAD)))
		return false;
	if (spec->base == 10)
		*mode = PF_NUM_DEC;
	else if (spec->base == 16)
		*mode = (spec->flags & KV_SMALL) ? PF_NUM_HEX : PF_NUM_HEXU;
	else
		return false;
	*fmt = (spec->flags & (KV_SIGN | KV_LEFT | KV_ZEROPAD)) | (uint32_t)(spec->width > 0 ? spec->width : 0) << 8;
	return true;
}

static int add_spec(struct tb_printfmt *p, const struct kv_spec *spec, uint32_t *index)
{
	struct kv_spec *specs = realloc(p->specs, (p->nspecs + 1) * sizeof(*specs));

	if (!specs)
		return -ENOMEM;
	p->specs = specs;
	specs[p->nspecs] = *spec;
	*index = p->nspecs++;
	return 0;
}

/*
 * The directive printing a %p-family address as kv_pointer_value() does
 * (hex, 16 zero-padded digits unless a width says otherwise), or false
 * for the symbol kinds (%pS, %ps, %pB).
 */
static int pointer_spec(struct tb_printfmt *p, uint32_t index, uint32_t *out)
{
	struct kv_spec ptr = p->specs[index];

	if (ptr.ext[0] == 'S' || ptr.ext[0] == 's' || ptr.ext[0] == 'B')
		return 1;
	ptr.base = 16;
	ptr.flags = (uint8_t)((ptr.flags | KV_SMALL) & ~KV_SIGN);
	if (ptr.width == -1) {
		ptr.width = 16;
		ptr.flags |= KV_ZEROPAD;
	}
	return add_spec(p, &ptr, out);
}

/* op (of the OP_F_NUM family or OP_NUM) prints under spec index: pick the fastest form. */
static void number_form(const struct tb_printfmt *p, struct pf_op *op, uint32_t index)
{
	uint32_t width;

	op->spec = index;
	if (!fast_number(&p->specs[index], &op->mode, &op->b)) {
		op->mode = PF_NUM_SPEC;
		return;
	}
	/* Unpadded, or zeros in front (after the sign): OP_F_DEC, OP_F_HEX. */
	width = op->b >> 8;
	if (op->code != OP_F_NUM || (width && (op->b & (KV_LEFT | KV_ZEROPAD)) != KV_ZEROPAD))
		return;
	if (op->mode == PF_NUM_DEC && width <= 20) {
		op->code = OP_F_DEC;
		op->mode = (op->b & KV_SIGN) != 0;
		op->b = width;
	} else if (op->mode == PF_NUM_HEX && !(op->b & KV_SIGN) && width <= 16) {
		op->code = OP_F_HEX;
		op->mode = 0;
		op->b = width;
	}
}

/*
 * The load that gives the value a number directive prints from V: va_arg
 * of the directive's type reads the low bytes of the C value, so the
 * directive's cut becomes part of the load (and of the mask: a cut of
 * x & m is the cut of x & the cut of m).
 */
static void number_load(struct pf_op *op, const struct pf_op *f, const struct kv_spec *spec)
{
	unsigned dsize = spec->size;
	bool dsign = spec->flags & KV_SIGN;

	*op = reading(OP_F_NUM, f);
	if (dsize >= 8)
		return;
	op->imm = kv_number_value(spec, op->imm);
	if (dsize <= f->size) {
		op->size = (uint8_t)dsize;
		op->sign = dsign;
	} else if (f->sign && !dsign) {
		op->imm &= (1ull << (8 * dsize)) - 1;
	}
}

/* V under a number directive, %c, or the %p family printing the address. */
static int fold_number(struct sp *s, uint32_t i, uint32_t j)
{
	struct tb_printfmt *p = s->p;
	const struct pf_op *print = &p->ops[j];
	const struct kv_spec *spec = plain_spec(s, print);
	struct pf_op op;
	uint32_t index = print->a;
	int rc;

	if (!spec)
		return 0;
	if (print->mode == PF_PRINT_NUM) {
		number_load(&op, &p->ops[i], spec);
	} else if (print->mode == PF_PRINT_PTR_VAL && (rc = pointer_spec(p, print->a, &index)) <= 0) {
		if (rc < 0)
			return rc;
		op = reading(OP_F_NUM, &p->ops[i]);
	} else {
		/* %c, %pS and the like: the generic print, without the push and pop */
		op = reading(OP_F_PRINT, &p->ops[i]);
		op.mode = p->ops[j].mode;
		op.spec = p->ops[j].a;
		fold(s, i, op, j, UINT32_MAX);
		return 0;
	}
	number_form(p, &op, index);
	fold(s, i, op, j, UINT32_MAX);
	return 0;
}

/* A char array, bytes to the end of the record, or a dynamic field, under %s. */
static void fold_string(struct sp *s, uint32_t i, uint32_t j, bool dynamic)
{
	const struct pf_op *mem = &s->p->ops[i], *print = &s->p->ops[j];
	const struct kv_spec *spec = plain_spec(s, print);
	struct pf_op op;

	if (!spec || print->mode != PF_PRINT_STR)
		return;
	op = (struct pf_op){.code = dynamic ? OP_F_DSTR : OP_F_STR, .a = mem->a, .b = dynamic ? 0 : mem->b,
			    .size = dynamic ? mem->mode : 0, .spec = print->a,
			    .mode = spec->width > 0 ? PF_STR_SPEC : PF_STR_PLAIN,
			    .imm = spec->precision >= 0 ? (uint64_t)spec->precision : UINT64_MAX};
	/* A char array whose bytes, rounded up to 16, the record is known to hold. */
	if (!dynamic && op.mode == PF_STR_PLAIN && op.b && (uint64_t)op.a + ((op.b + 15) & ~15u) <= s->p->static_end)
		op.mode = PF_STR_WIDE;
	fold(s, i, op, j, UINT32_MAX);
}

/* The helper op of the __print_symbolic (or flags) that prints its own text. */
static unsigned helper_out(unsigned code)
{
	return code == OP_SYMBOLIC ? OP_SYMBOLIC_OUT : OP_FLAGS_OUT;
}

/* V then a helper that prints: one op. */
static void fold_field_helper(struct sp *s, uint32_t i, uint32_t j)
{
	struct tb_printfmt *p = s->p;
	struct pf_op op = reading(p->ops[j].code == OP_SYMBOLIC_OUT ? OP_F_SYMBOLIC : OP_F_FLAGS, &p->ops[i]);

	op.b = p->ops[j].b;
	fold(s, i, op, j, UINT32_MAX);
}

/* __print_symbolic / __print_flags under a plain %s: the helper prints it all. */
static void fold_helper(struct sp *s, uint32_t h)
{
	struct tb_printfmt *p = s->p;
	uint32_t j = next_op(s, h);

	if (!foldable(s, j, OP_PRINT) || p->ops[j].mode != PF_PRINT_STR || !plain_string(plain_spec(s, &p->ops[j])))
		return;
	fold(s, h, (struct pf_op){.code = (uint8_t)helper_out(p->ops[h].code), .b = p->ops[h].a}, j, UINT32_MAX);
}

static int fold_print(struct sp *s, uint32_t i)
{
	struct tb_printfmt *p = s->p;
	unsigned code = p->ops[i].code;
	uint32_t j;

	if (code == OP_SYMBOLIC || code == OP_FLAGS) {
		fold_helper(s, i);
		return 0;
	}
	if (!is_masked_field(&p->ops[i]) && code != OP_FIELD_MEM && code != OP_DYN_MEM)
		return 0;
	j = next_op(s, i);
	if (is_masked_field(&p->ops[i]) && j < p->nops && !s->target[j] &&
	    (p->ops[j].code == OP_SYMBOLIC || p->ops[j].code == OP_FLAGS)) {
		fold_helper(s, j);
		if (p->ops[j].code == OP_SYMBOLIC_OUT || p->ops[j].code == OP_FLAGS_OUT)
			fold_field_helper(s, i, j);
		return 0;
	}
	if (is_masked_field(&p->ops[i]) && foldable(s, j, OP_SYMBOLIC_OUT))
		fold_field_helper(s, i, j);
	else if (is_masked_field(&p->ops[i]) && foldable(s, j, OP_FLAGS_OUT))
		fold_field_helper(s, i, j);
	if (!foldable(s, j, OP_PRINT))
		return 0;
	if (is_masked_field(&p->ops[i]))
		return fold_number(s, i, j);
	fold_string(s, i, j, code == OP_DYN_MEM);
	return 0;
}

/* Any other value under a plain number directive or %p: OP_NUM. */
static int fold_plain_number(struct sp *s, uint32_t i)
{
	struct tb_printfmt *p = s->p;
	struct pf_op *print = &p->ops[i];
	const struct kv_spec *spec = plain_spec(s, print);
	struct pf_op op = {.code = OP_NUM, .size = 8, .text = print->text, .text_len = print->text_len};
	uint32_t index = print->a;
	int rc;

	if (!spec)
		return 0;
	if (print->mode == PF_PRINT_NUM) {
		op.size = spec->size;
		op.sign = (spec->flags & KV_SIGN) != 0;
	} else if (print->mode != PF_PRINT_PTR_VAL || (rc = pointer_spec(p, print->a, &index)) > 0) {
		return 0;
	} else if (rc < 0) {
		return rc;
	}
	number_form(p, &op, index);
	p->ops[i] = op;
	return 0;
}

/* ------------------------------------------------------------- ternaries */

/* No op in [from, to) jumps or is jumped to. */
static bool straight(const struct sp *s, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++)
		if (s->target[k] || is_jump(s->p->ops[k].code))
			return false;
	return true;
}

/* The last op before end that is not a NOP, or UINT32_MAX if none at or after from. */
static uint32_t last_op(const struct sp *s, uint32_t from, uint32_t end)
{
	while (end > from) {
		end--;
		if (s->p->ops[end].code != OP_NOP)
			return end;
	}
	return UINT32_MAX;
}

/* A branch's value op made to print itself under a plain %s (it then pushes nothing). */
static void print_in_place(struct sp *s, uint32_t k)
{
	struct pf_op *op = &s->p->ops[k];

	if (op->code == OP_STR)
		*op = (struct pf_op){.code = OP_TEXT, .a = op->a,
				     .b = (uint32_t)strnlen(s->p->pool + op->a, op->b)};
	else
		*op = (struct pf_op){.code = (uint8_t)helper_out(op->code), .b = op->a};
}

/*
 * COND ? X : Y under a plain %s, where each branch ends in a string
 * literal or a __print_flags / __print_symbolic: each branch prints its
 * own text and the PRINT goes; two bare literals become OP_SELECT_STR.
 * The kernel's "prev_state=%s" and "gfp_flags=%s" are made this way.
 */
static void fold_ternary(struct sp *s, uint32_t i)
{
	struct tb_printfmt *p = s->p;
	uint32_t y = p->ops[i].a, jump = y - 1, end, xl, yl;

	if (y <= i + 1 || p->ops[jump].code != OP_JUMP || s->target[y] != 1)
		return;
	end = p->ops[jump].a;
	if (p->ops[end].code != OP_PRINT || p->ops[end].mode != PF_PRINT_STR || s->target[end] != 1 ||
	    p->ops[end].text_len || !plain_string(plain_spec(s, &p->ops[end])) ||
	    !straight(s, i + 1, jump) || !straight(s, y + 1, end))
		return;
	xl = last_op(s, i + 1, jump);
	yl = last_op(s, y, end);
	if (xl == UINT32_MAX || yl == UINT32_MAX)
		return;
	for (uint32_t k = 0; k < 2; k++) {
		unsigned code = p->ops[k ? yl : xl].code;
		if (code != OP_STR && code != OP_FLAGS && code != OP_SYMBOLIC)
			return;
	}
	print_in_place(s, xl);
	print_in_place(s, yl);
	p->ops[end].code = OP_NOP;
	if (p->ops[xl].code == OP_TEXT && p->ops[yl].code == OP_TEXT && next_op(s, i) == xl &&
	    next_op(s, xl) == jump && yl == y) {
		p->ops[i] = (struct pf_op){.code = OP_SELECT_STR, .lit = p->ops[xl].a, .lit_len = p->ops[xl].b,
					   .alt = p->ops[yl].a, .alt_len = p->ops[yl].b};
		p->ops[xl].code = p->ops[jump].code = p->ops[yl].code = OP_NOP;
		/* the jumps are gone: nothing lands on y or end any more */
		s->target[y] = s->target[end] = 0;
	}
}

/*
 * What follows the ternaries and the field masks:
 *   BOOL before a test of zero goes;
 *   V SELECT_STR                      -> OP_F_SELECT
 *   V JZ F_FLAGS(V) JUMP TEXT         -> OP_F_FLAGS with the text for zero
 * (__print_flags(0) prints nothing, so a zero V printing the text is the
 * same whichever way the test goes).
 */
static void fold_select(struct sp *s, uint32_t i)
{
	struct tb_printfmt *p = s->p;
	struct pf_op *v = &p->ops[i], op;
	uint32_t j = next_op(s, i), x, jump, y;

	if (j < p->nops && p->ops[j].code == OP_BOOL && !s->target[j]) {
		uint32_t k = next_op(s, j);
		if (k < p->nops && (p->ops[k].code == OP_JZ || p->ops[k].code == OP_SELECT_STR)) {
			p->ops[j].code = OP_NOP;
			j = k;
		}
	}
	if (foldable(s, j, OP_SELECT_STR)) {
		op = reading(OP_F_SELECT, v);
		op.lit = p->ops[j].lit;
		op.lit_len = p->ops[j].lit_len;
		op.alt = p->ops[j].alt;
		op.alt_len = p->ops[j].alt_len;
		fold(s, i, op, j, UINT32_MAX);
		return;
	}
	if (!foldable(s, j, OP_JZ))
		return;
	x = next_op(s, j);
	jump = next_op(s, x);
	y = p->ops[j].a;
	/* a tep_like table prints an entry for zero (pf_run.c): the test must stay */
	if (!foldable(s, x, OP_F_FLAGS) || p->tables[p->ops[x].b].tep_like || !same_value(v, &p->ops[x]) ||
	    p->ops[x].text_len ||
	    p->ops[x].alt_len || !foldable(s, jump, OP_JUMP) || next_op(s, jump) != y || y >= p->nops ||
	    p->ops[y].code != OP_TEXT || s->target[y] != 1 || p->ops[jump].a != next_op(s, y) ||
	    s->target[p->ops[jump].a] != 1)
		return;
	op = p->ops[x];
	op.alt = p->ops[y].a;
	op.alt_len = p->ops[y].b;
	p->ops[i] = op;
	s->target[y] = 0;
	s->target[p->ops[jump].a] = 0;
	p->ops[j].code = p->ops[x].code = p->ops[jump].code = p->ops[y].code = OP_NOP;
}

/* ----------------------------------------------------------------- text */

/* Literal text moved into the next op that prints, across ops that neither print nor jump. */
static void fold_text(struct sp *s, uint32_t i)
{
	struct tb_printfmt *p = s->p;
	uint32_t j;

	for (j = i + 1; j < p->nops && !s->target[j] && is_pure(p->ops[j].code); j++)
		;
	if (j >= p->nops || s->target[j] || !takes_text(p->ops[j].code) || p->ops[j].text_len)
		return;
	p->ops[j].text = p->ops[i].a;
	p->ops[j].text_len = p->ops[i].b;
	p->ops[i].code = OP_NOP;
}

/* ------------------------------------------------------- symbolic index */

static int index_table(struct tb_printfmt *p, struct pf_table *t)
{
	uint64_t top = 0;
	uint16_t *direct;

	if (t->direct_len || !t->count || t->count >= UINT16_MAX)
		return 0;
	for (uint32_t k = 0; k < t->count; k++) {
		uint64_t v = p->syms[t->first + k].value;
		if (v >= PF_DIRECT_MAX)
			return 0;
		if (v + 1 > top)
			top = v + 1;
	}
	direct = realloc(p->direct, (p->ndirect + top) * sizeof(*direct));
	if (!direct)
		return -ENOMEM;
	p->direct = direct;
	memset(direct + p->ndirect, 0, top * sizeof(*direct));
	/* The kernel's scan stops at the first entry of the value: later ones never print. */
	for (uint32_t k = t->count; k-- > 0;)
		direct[p->ndirect + p->syms[t->first + k].value] = (uint16_t)(k + 1);
	t->direct_first = p->ndirect;
	t->direct_len = (uint32_t)top;
	p->ndirect += (uint32_t)top;
	return 0;
}

static int index_tables(struct tb_printfmt *p)
{
	for (uint32_t i = 0; i < p->nops; i++) {
		const struct pf_op *op = &p->ops[i];
		uint32_t table;
		if (op->code == OP_SYMBOLIC)
			table = op->a;
		else if (op->code == OP_F_SYMBOLIC || op->code == OP_SYMBOLIC_OUT)
			table = op->b;
		else
			continue;
		if (index_table(p, &p->tables[table]) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---------------------------------------------------------------- whole */

/* Drop the NOPs; jumps (absolute here) become relative to the kept ops again. */
static void compact(struct sp *s, uint32_t *map)
{
	struct tb_printfmt *p = s->p;
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nops; i++) {
		map[i] = n;
		if (p->ops[i].code != OP_NOP)
			n++;
	}
	for (uint32_t i = 0; i < p->nops; i++) {
		struct pf_op *op = &p->ops[i];
		if (op->code == OP_NOP)
			continue;
		if (is_jump(op->code))
			op->a = map[op->a] - map[i];
		p->ops[map[i]] = *op;
	}
	p->nops = n;
}

static int rewrite(struct sp *s)
{
	struct tb_printfmt *p = s->p;
	int rc = 0;

	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_FIELD_MEM)
			fold_index(s, i);
	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_FIELD)
			fold_field_bin(s, i);
	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_JZ)
			fold_ternary(s, i);
	for (uint32_t i = 0; i < p->nops && !rc; i++)
		rc = fold_print(s, i);
	for (uint32_t i = 0; i < p->nops; i++)
		if (is_masked_field(&p->ops[i]))
			fold_select(s, i);
	for (uint32_t i = 0; i < p->nops && !rc; i++)
		if (p->ops[i].code == OP_PRINT)
			rc = fold_plain_number(s, i);
	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_TEXT)
			fold_text(s, i);
	return rc;
}

int pf_specialise(struct tb_printfmt *p)
{
	struct sp s = {.p = p};
	uint32_t *map;
	int rc;

	for (uint32_t i = 0; i < p->nops; i++)
		if (is_jump(p->ops[i].code) && (p->ops[i].a == 0 || p->ops[i].a >= p->nops - i))
			return 0; /* cannot happen; if it did, the generic program still runs */
	s.target = calloc(p->nops, sizeof(*s.target));
	map = malloc(p->nops * sizeof(*map));
	if (!s.target || !map) {
		free(s.target);
		free(map);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->nops; i++) {
		struct pf_op *op = &p->ops[i];
		if (is_jump(op->code)) {
			op->a += i;
			s.target[op->a]++;
		}
	}
	rc = rewrite(&s);
	compact(&s, map);
	if (!rc)
		rc = index_tables(p);
	free(s.target);
	free(map);
	return rc;
}
