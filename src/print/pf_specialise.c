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
 *   REC->f under a number directive or plain %p    OP_F_NUM
 *   REC->arr[CONST]                                a plain field load
 *   a char array or __get_str() under %s           OP_F_STR, OP_F_DSTR
 *   __print_symbolic / __print_flags under a plain %s, of a field
 *   (OP_F_SYMBOLIC, OP_F_FLAGS) or of any value (OP_*_OUT)
 *   REC->f OP constant                             OP_FIELD_BIN
 *
 * and the literal text before a printing op becomes that op's prefix.
 * Symbolic tables of small values get an index by value.  Nothing here
 * decides what is printed: the fused ops print through the same rules
 * (kvsprintf.c) as the generic ones, and the tests compare the two.
 *
 * Jumps: their offsets are made absolute first; an op a jump lands on is
 * never folded into the op before it; a folded op is left as OP_NOP, and
 * the final compaction sends every jump to the first op kept at or after
 * its target.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pf_internal.h"

struct sp {
	struct tb_printfmt *p;
	bool *target; /* [nops]: some jump lands here */
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
	case OP_NEG: case OP_NOT: case OP_LNOT: case OP_BIN: case OP_INDEX: case OP_FIELD_BIN:
	case OP_NOP:
		return true;
	default:
		return false;
	}
}

/* Ops that print their text prefix before anything else they do. */
static bool takes_text(unsigned code)
{
	switch (code) {
	case OP_PRINT: case OP_END: case OP_F_NUM: case OP_F_STR: case OP_F_DSTR:
	case OP_F_SYMBOLIC: case OP_F_FLAGS: case OP_SYMBOLIC_OUT: case OP_FLAGS_OUT:
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

/* Op j can be folded into the ops before it: it exists and no jump lands on it. */
static bool foldable(const struct sp *s, uint32_t j, unsigned code)
{
	return j < s->p->nops && !s->target[j] && s->p->ops[j].code == code;
}

/* Replace ops i and the ones listed (already checked foldable) with one op at i. */
static void fold(struct sp *s, uint32_t i, struct pf_op op, uint32_t j1, uint32_t j2)
{
	s->p->ops[i] = op;
	s->p->ops[j1].code = OP_NOP;
	if (j2 != UINT32_MAX)
		s->p->ops[j2].code = OP_NOP;
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

/* REC->f OP constant, for the operators that need no pointer scale. */
static void fold_field_bin(struct sp *s, uint32_t i)
{
	const struct pf_op *f = &s->p->ops[i], *bin;
	uint32_t j = next_op(s, i);

	if (!foldable(s, j, OP_BIN))
		return;
	bin = &s->p->ops[j];
	if (bin->mode != PF_IMM_RIGHT || bin->a > PF_B_GE)
		return;
	fold(s, i, (struct pf_op){.code = OP_FIELD_BIN, .a = f->a, .size = f->size, .sign = f->sign,
				  .mode = (uint8_t)bin->a, .b = bin->size | (uint32_t)bin->sign << 8,
				  .imm = bin->imm}, j, UINT32_MAX);
}

/* --------------------------------------------------------- print shapes */

/* A directive the fused string and helper ops can do: its arguments are the value alone. */
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
 * The load that gives the value a number directive prints from a field
 * of fsize bytes: va_arg of the directive's type reads the low bytes of the
 * C value, so the directive's cut becomes part of the load (and a mask,
 * when a signed field is printed by a wider unsigned directive).
 */
static void number_load(struct pf_op *op, const struct pf_op *field, const struct kv_spec *spec)
{
	unsigned dsize = spec->size;
	bool dsign = spec->flags & KV_SIGN;

	op->a = field->a;
	op->size = field->size;
	op->sign = field->sign;
	op->imm = UINT64_MAX;
	if (dsize >= 8)
		return;
	if (dsize <= field->size) {
		op->size = (uint8_t)dsize;
		op->sign = dsign;
	} else if (field->sign && !dsign) {
		op->imm = (1ull << (8 * dsize)) - 1;
	}
}

/* REC->f under a number directive, or under %p printing the address. */
static int fold_number(struct sp *s, uint32_t i, uint32_t j)
{
	struct tb_printfmt *p = s->p;
	const struct pf_op *print = &p->ops[j];
	const struct kv_spec *spec = plain_spec(s, print);
	struct pf_op op = {.code = OP_F_NUM};
	struct kv_spec ptr;

	if (!spec)
		return 0;
	if (print->mode == PF_PRINT_NUM) {
		number_load(&op, &p->ops[i], spec);
		op.spec = print->a;
	} else if (print->mode == PF_PRINT_PTR_VAL && spec->ext[0] != 'S' && spec->ext[0] != 's' &&
		   spec->ext[0] != 'B') {
		/* The address as kv_pointer_value() prints it: hex, 16 zero-padded digits unless a width says otherwise. */
		op.a = p->ops[i].a;
		op.size = p->ops[i].size;
		op.sign = p->ops[i].sign;
		op.imm = UINT64_MAX;
		ptr = *spec;
		ptr.base = 16;
		ptr.flags = (uint8_t)((ptr.flags | KV_SMALL) & ~KV_SIGN);
		if (ptr.width == -1) {
			ptr.width = 16;
			ptr.flags |= KV_ZEROPAD;
		}
		if (add_spec(p, &ptr, &op.spec) < 0)
			return -ENOMEM;
		spec = &p->specs[op.spec];
		print = &p->ops[j];
	} else {
		return 0;
	}
	if (!fast_number(spec, &op.mode, &op.b))
		op.mode = PF_NUM_SPEC;
	fold(s, i, op, j, UINT32_MAX);
	return 0;
}

/* A char array, or bytes to the end of the record, under %s. */
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
	fold(s, i, op, j, UINT32_MAX);
}

/* HELPER PRINT, or FIELD HELPER PRINT, for __print_symbolic and __print_flags under a plain %s. */
static void fold_helper(struct sp *s, uint32_t i)
{
	struct tb_printfmt *p = s->p;
	const struct pf_op *first = &p->ops[i];
	uint32_t h = i, j;
	bool field = first->code == OP_FIELD;
	unsigned helper;

	if (field)
		h = next_op(s, i);
	if (h >= p->nops || (field && s->target[h]) ||
	    (p->ops[h].code != OP_SYMBOLIC && p->ops[h].code != OP_FLAGS))
		return;
	helper = p->ops[h].code;
	j = next_op(s, h);
	if (!foldable(s, j, OP_PRINT) || p->ops[j].mode != PF_PRINT_STR || !plain_string(plain_spec(s, &p->ops[j])))
		return;
	if (field)
		fold(s, i, (struct pf_op){.code = helper == OP_SYMBOLIC ? OP_F_SYMBOLIC : OP_F_FLAGS,
					  .a = first->a, .size = first->size, .sign = first->sign,
					  .b = p->ops[h].a}, h, j);
	else
		fold(s, i, (struct pf_op){.code = helper == OP_SYMBOLIC ? OP_SYMBOLIC_OUT : OP_FLAGS_OUT,
					  .b = p->ops[h].a}, j, UINT32_MAX);
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
	if (code != OP_FIELD && code != OP_FIELD_MEM && code != OP_DYN_MEM)
		return 0;
	j = next_op(s, i);
	if (code == OP_FIELD && j < p->nops && !s->target[j] &&
	    (p->ops[j].code == OP_SYMBOLIC || p->ops[j].code == OP_FLAGS)) {
		fold_helper(s, i);
		return 0;
	}
	if (!foldable(s, j, OP_PRINT))
		return 0;
	if (code == OP_FIELD)
		return fold_number(s, i, j);
	fold_string(s, i, j, code == OP_DYN_MEM);
	return 0;
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

int pf_specialise(struct tb_printfmt *p)
{
	struct sp s = {.p = p};
	uint32_t *map;
	int rc = 0;

	s.target = calloc(p->nops, sizeof(*s.target));
	map = malloc(p->nops * sizeof(*map));
	if (!s.target || !map) {
		free(s.target);
		free(map);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->nops; i++) {
		struct pf_op *op = &p->ops[i];
		if (is_jump(op->code) && op->a >= p->nops - i)
			goto out; /* cannot happen: leave the program generic */
	}
	for (uint32_t i = 0; i < p->nops; i++) {
		struct pf_op *op = &p->ops[i];
		if (is_jump(op->code)) {
			op->a += i;
			s.target[op->a] = true;
		}
	}
	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_FIELD_MEM)
			fold_index(&s, i);
	for (uint32_t i = 0; i < p->nops && !rc; i++)
		rc = fold_print(&s, i);
	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_FIELD)
			fold_field_bin(&s, i);
	for (uint32_t i = 0; i < p->nops; i++)
		if (p->ops[i].code == OP_TEXT)
			fold_text(&s, i);
	compact(&s, map);
	if (!rc)
		rc = index_tables(p);
out:
	free(s.target);
	free(map);
	return rc;
}
