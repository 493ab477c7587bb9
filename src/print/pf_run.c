// SPDX-License-Identifier: MIT
/*
 * pf_run.c - running a compiled print fmt over one record.
 *
 * A loop over the ops with a value stack on the C stack: no allocation
 * (the output buffer aside), no C library printf, no recursion.  Every
 * read of the record is checked against its length: fixed fields once
 * (static_end), dynamic fields and indexes each time.
 *
 * The ops write through a cursor (pf_out.h): the fused ones (see
 * pf_specialise.c) check once that the buffer has room for the op's text
 * and value, then store; the generic ones hand the buffer to kvsprintf.c.
 */
#include <errno.h>
#include <string.h>

#include "pf_out.h"

bool pf_binop(unsigned op, uint64_t a, uint64_t b, unsigned size, bool sign, uint64_t scale,
	      uint64_t *r)
{
	unsigned mask = size * 8 - 1;
	uint64_t v;

	a = pf_norm(a, size, sign);
	if (op != PF_B_SHL && op != PF_B_SHR)
		b = pf_norm(b, size, sign);
	switch (op) {
	case PF_B_ADD: v = a + b; break;
	case PF_B_SUB: v = a - b; break;
	case PF_B_MUL: v = a * b; break;
	case PF_B_DIV:
	case PF_B_MOD:
		if (!b)
			return false;
		if (sign && (int64_t)b == -1)
			v = op == PF_B_DIV ? 0 - a : 0; /* no trap on INT_MIN / -1 */
		else if (sign)
			v = (uint64_t)(op == PF_B_DIV ? (int64_t)a / (int64_t)b : (int64_t)a % (int64_t)b);
		else
			v = op == PF_B_DIV ? a / b : a % b;
		break;
	/* A shift by the width or more is undefined in C; the count wraps as on x86. */
	case PF_B_SHL: v = a << (b & mask); break;
	case PF_B_SHR: v = sign ? (uint64_t)((int64_t)a >> (b & mask)) : a >> (b & mask); break;
	case PF_B_AND: v = a & b; break;
	case PF_B_OR: v = a | b; break;
	case PF_B_XOR: v = a ^ b; break;
	case PF_B_EQ: *r = a == b; return true;
	case PF_B_NE: *r = a != b; return true;
	case PF_B_LT: *r = sign ? (int64_t)a < (int64_t)b : a < b; return true;
	case PF_B_GT: *r = sign ? (int64_t)a > (int64_t)b : a > b; return true;
	case PF_B_LE: *r = sign ? (int64_t)a <= (int64_t)b : a <= b; return true;
	case PF_B_GE: *r = sign ? (int64_t)a >= (int64_t)b : a >= b; return true;
	case PF_B_PADD: v = a + b * scale; break;
	case PF_B_PSUB: v = a - b * scale; break;
	case PF_B_PDIFF: v = scale ? (uint64_t)((int64_t)(a - b) / (int64_t)scale) : 0; break;
	default: return false;
	}
	*r = pf_norm(v, size, sign);
	return true;
}

static inline uint64_t load(const uint8_t *p, unsigned size, bool sign)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		u8 = *p;
		return sign ? (uint64_t)(int64_t)(int8_t)u8 : u8;
	case 2:
		memcpy(&u16, p, 2);
		return sign ? (uint64_t)(int64_t)(int16_t)u16 : u16;
	case 4:
		memcpy(&u32, p, 4);
		return sign ? (uint64_t)(int64_t)(int32_t)u32 : u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

/*
 * V of a fused op: the field at a (size, sign) & imm, by one 8-byte load
 * of the bytes that end where the field ends, shifted down.  The fused ops
 * only read fields that end 8 bytes or more into the record (past the
 * common header: pf_specialise.c), and the record holds static_end bytes.
 */
static inline uint64_t field_raw(const uint8_t *rec, const struct pf_op *op)
{
	unsigned shift = 64 - 8 * op->size;
	uint64_t raw;

	memcpy(&raw, rec + op->a + op->size - 8, 8);
	return op->sign ? (uint64_t)((int64_t)raw >> shift) : raw >> shift;
}

static inline uint64_t field_value(const uint8_t *rec, const struct pf_op *op)
{
	return field_raw(rec, op) & op->imm;
}

/*
 * Where the data of the dynamic field at field (of kind mode, PF_DYN_*)
 * lies: 0, or -EINVAL when outside the record.
 */
static inline int dynamic(const uint8_t *rec, uint32_t len, unsigned mode, uint32_t field,
			  uint32_t *off, uint32_t *n)
{
	uint32_t loc;

	if (mode == PF_DYN_LOC2) {
		uint16_t l16;
		memcpy(&l16, rec + field, 2);
		*off = l16;
		*n = l16 <= len ? len - l16 : 0;
	} else {
		memcpy(&loc, rec + field, 4);
		*off = (loc & 0xffff) + (mode == PF_DYN_REL4 ? field + 4 : 0);
		*n = loc >> 16;
	}
	return (uint64_t)*off + *n <= len ? 0 : -EINVAL;
}

/* ------------------------------------------------------------ helpers */

struct pf_cur pf_cur_grow(struct tb_strbuf *b, struct pf_cur c, size_t n)
{
	pf_cur_sync(b, c);
	if (!sb_grow(b, n))
		return (struct pf_cur){NULL, NULL};
	return pf_cur_load(b);
}

/* The op's text prefix, with room for extra bytes after it; false on oom. */
static inline bool put_prefix(const struct tb_printfmt *p, const struct pf_op *op, struct tb_strbuf *out,
			      struct pf_cur *c, size_t extra)
{
	if (!pf_room(out, c, (size_t)op->text_len + PF_POOL_PAD + extra))
		return false;
	c->w = pf_put_text(c->w, p->pool + op->text, op->text_len);
	return true;
}

/* v under op's number format (the OP_F_NUM family, OP_NUM); false on oom. */
static inline bool put_number_op(const struct tb_printfmt *p, const struct pf_op *op, uint64_t v,
				 struct tb_strbuf *out, struct pf_cur *c)
{
	if (op->mode != PF_NUM_SPEC) {
		if (!put_prefix(p, op, out, c, PF_NUMBER_ROOM))
			return false;
		c->w = pf_put_number(c->w, v, op->mode, op->b);
		return true;
	}
	if (!put_prefix(p, op, out, c, 0))
		return false;
	pf_cur_sync(out, *c);
	kv_number(out, v, &p->specs[op->spec]);
	*c = pf_cur_load(out);
	return true;
}

/* The selects: the prefix, then the lit text for a non-zero value, else the alt text. */
static inline bool put_choice(const struct tb_printfmt *p, const struct pf_op *op, bool nonzero,
			      struct tb_strbuf *out, struct pf_cur *c)
{
	uint32_t n = nonzero ? op->lit_len : op->alt_len;

	if (!put_prefix(p, op, out, c, n))
		return false;
	c->w = pf_put_text(c->w, p->pool + (nonzero ? op->lit : op->alt), n);
	return true;
}

/*
 * %s of a char array the record holds rounded up to 16 bytes (PF_STR_WIDE:
 * a comm): found and copied 16 bytes at a time; false on oom.
 */
static inline bool put_wide_string(const struct tb_printfmt *p, const struct pf_op *op, const char *s,
				   struct tb_strbuf *out, struct pf_cur *c)
{
	size_t n = pf_strnlen_wide(s, op->b < op->imm ? op->b : op->imm);

	if (!put_prefix(p, op, out, c, n))
		return false;
	for (size_t i = 0; i < n; i += 16)
		memcpy(c->w + i, s + i, 16);
	c->w += n;
	return true;
}

/* %s of s[0..max) under op: plain (at most op->imm bytes) or through its spec; false on oom. */
static bool put_string(const struct tb_printfmt *p, const struct pf_op *op, const char *s, size_t max,
		       struct tb_strbuf *out, struct pf_cur *c)
{
	size_t n;

	if (op->mode == PF_STR_SPEC) {
		if (!put_prefix(p, op, out, c, 0))
			return false;
		pf_cur_sync(out, *c);
		kv_string(out, s, max, &p->specs[op->spec]);
		*c = pf_cur_load(out);
		return true;
	}
	n = pf_strnlen(s, max < op->imm ? max : op->imm);
	if (!put_prefix(p, op, out, c, n))
		return false;
	c->w = pf_copy(c->w, s, n);
	return true;
}

/* "0x" and v in hex: the helpers' way of printing a value no entry names. */
static inline bool put_0x(struct tb_strbuf *out, struct pf_cur *c, uint64_t v)
{
	if (!pf_room(out, c, 2 + 16))
		return false;
	*c->w++ = '0';
	*c->w++ = 'x';
	c->w = kv_put_hex(c->w, v, kv_hex_len(v), false);
	return true;
}

/*
 * __print_flags as libtraceevent prints it (pf_table.tep_like), its
 * entries' values signed: a zero value left prints the next entry of
 * unknown (negative) value and stops; a positive value all of whose bits
 * are set prints, delimited, and its bits go; what is left, in hex.
 */
static struct pf_cur tep_flags(const struct tb_printfmt *p, const struct pf_table *t, uint64_t flags,
			       struct tb_strbuf *out, struct pf_cur c)
{
	const char *delim = p->pool + t->delim;
	bool printed = false;

	for (uint32_t i = 0; i < t->count; i++) {
		const struct pf_sym *s = &p->syms[t->first + i];
		bool unknown = (int64_t)s->value < 0;
		if (!flags && unknown) {
			if (pf_room(out, &c, (size_t)s->name_len + PF_POOL_PAD))
				c.w = pf_put_text(c.w, p->pool + s->name, s->name_len);
			return c;
		}
		if (unknown || !s->value || (flags & s->value) != s->value)
			continue;
		if (!pf_room(out, &c, (size_t)t->delim_len + s->name_len + PF_POOL_PAD))
			return c;
		if (printed)
			c.w = pf_put_text(c.w, delim, t->delim_len);
		printed = true;
		c.w = pf_put_text(c.w, p->pool + s->name, s->name_len);
		flags &= ~s->value;
	}
	if (!flags)
		return c;
	if (printed) {
		if (!pf_room(out, &c, (size_t)t->delim_len + PF_POOL_PAD))
			return c;
		c.w = pf_put_text(c.w, delim, t->delim_len);
	}
	put_0x(out, &c, flags);
	return c;
}

/* The kernel's trace_print_flags_seq(); the cursor after it (w NULL on oom). */
static __attribute__((noinline)) struct pf_cur print_flags(const struct tb_printfmt *p, uint32_t table,
							   uint64_t flags, struct tb_strbuf *out,
							   struct pf_cur c)
{
	const struct pf_table *t = &p->tables[table];
	const char *delim = p->pool + t->delim;
	bool first = true;

	if (t->tep_like)
		return tep_flags(p, t, flags, out, c);

	for (uint32_t i = 0; i < t->count && flags; i++) {
		const struct pf_sym *s = &p->syms[t->first + i];
		if ((flags & s->value) != s->value)
			continue;
		flags &= ~s->value;
		if (!pf_room(out, &c, (size_t)t->delim_len + s->name_len + PF_POOL_PAD))
			return c;
		if (!first)
			c.w = pf_put_text(c.w, delim, t->delim_len);
		first = false;
		c.w = pf_put_text(c.w, p->pool + s->name, s->name_len);
	}
	if (!flags)
		return c;
	if (!first) {
		if (!pf_room(out, &c, (size_t)t->delim_len + PF_POOL_PAD))
			return c;
		c.w = pf_put_text(c.w, delim, t->delim_len);
	}
	put_0x(out, &c, flags);
	return c;
}

/* The entry the kernel's trace_print_symbols_seq() stops at for v, or NULL. */
static inline const struct pf_sym *symbol_of(const struct tb_printfmt *p, const struct pf_table *t,
					     uint64_t v)
{
	if (t->direct_len) {
		uint16_t k = v < t->direct_len ? p->direct[t->direct_first + v] : 0;
		return k ? &p->syms[t->first + k - 1] : NULL;
	}
	for (uint32_t i = 0; i < t->count; i++)
		if (p->syms[t->first + i].value == v)
			return &p->syms[t->first + i];
	return NULL;
}

/* The kernel's trace_print_symbols_seq(); false on oom. */
static inline bool print_symbolic(const struct tb_printfmt *p, uint32_t table, uint64_t v,
				  struct tb_strbuf *out, struct pf_cur *c)
{
	const struct pf_sym *s = symbol_of(p, &p->tables[table], v);

	/* an empty name prints nothing, so the kernel falls back to hex (libtraceevent does not) */
	if (!s || (!s->name_len && !p->tables[table].tep_like))
		return put_0x(out, c, v);
	if (!pf_room(out, c, (size_t)s->name_len + PF_POOL_PAD))
		return false;
	c->w = pf_put_text(c->w, p->pool + s->name, s->name_len);
	return true;
}

/* __print_flags or __print_symbolic of v; false on oom. */
static inline bool print_helper(const struct tb_printfmt *p, bool flags, uint32_t table, uint64_t v,
				struct tb_strbuf *out, struct pf_cur *c)
{
	if (!flags)
		return print_symbolic(p, table, v, out, c);
	*c = print_flags(p, table, v, out, *c);
	return c->w != NULL;
}

/* The kernel's trace_print_hex_seq(): 16 bytes per %*ph, spaced or not. */
static __attribute__((noinline)) void print_hex(const uint8_t *b, int64_t n, bool concat, struct tb_strbuf *out)
{
	struct kv_spec s = {.kind = KV_POINTER, .ext = {'h', concat ? 'N' : 0}, .precision = -1};

	for (int64_t i = 0; i < n; i += 16) {
		if (!concat && i)
			sb_putc(out, ' ');
		s.width = (int32_t)(n - i < 16 ? n - i : 16);
		kv_pointer_memory(out, b + i, (size_t)s.width, &s);
	}
}

/* The kernel's trace_print_array_seq(). */
static __attribute__((noinline)) void print_array(const uint8_t *b, uint64_t bytes, uint32_t elsize, struct tb_strbuf *out)
{
	const char *prefix = "";

	sb_putc(out, '{');
	for (uint64_t i = 0; i < bytes; i += elsize) {
		sb_puts(out, prefix);
		if (elsize != 1 && elsize != 2 && elsize != 4 && elsize != 8) {
			sb_puts(out, "BAD SIZE:");
			kv_decimal(out, elsize, false);
			sb_putc(out, ' ');
			elsize = 1;
		}
		sb_put(out, "0x", 2);
		kv_hex(out, load(b + i, elsize, false), false);
		prefix = ",";
	}
	sb_putc(out, '}');
}

/* Memory a value stands for; false for an integer. */
static bool memory_of(const struct pf_val *v, const struct tb_strbuf *out, const uint8_t **p,
		      uint32_t *n)
{
	if (v->where == PF_MEM) {
		*p = v->p;
		*n = v->n;
		return true;
	}
	if (v->where == PF_OUT && !out->oom && v->u <= out->len) {
		*p = (const uint8_t *)out->buf + v->u;
		*n = (uint32_t)(out->len - v->u);
		return true;
	}
	return false;
}

/* Print the value at sp (its '*' arguments below it) in mode (PF_PRINT_*) under specs[index]. */
static __attribute__((noinline)) int print_arg(const struct tb_printfmt *p, unsigned mode, uint32_t index, struct pf_val *sp,
		     struct tb_strbuf *out)
{
	const struct kv_spec *spec = &p->specs[index];
	struct kv_spec star;
	struct pf_val *v = sp;
	const uint8_t *mem;
	uint32_t n;

	if (spec->precision_arg || spec->width_arg) {
		star = *spec;
		if (star.precision_arg)
			kv_set_precision(&star, (int64_t)(--sp)->u);
		if (star.width_arg)
			kv_set_width(&star, (int64_t)(--sp)->u);
		spec = &star;
	}
	switch (mode) {
	case PF_PRINT_NUM: {
		uint64_t x = kv_number_value(spec, v->u);
		if (spec->width < 0 && spec->precision < 0 && !(spec->flags & ~(KV_SIGN | KV_SMALL))) {
			if (spec->base == 10)
				kv_decimal(out, x, spec->flags & KV_SIGN);
			else if (spec->base == 16)
				kv_hex(out, x, !(spec->flags & KV_SMALL));
			else
				kv_number(out, x, spec);
		} else {
			kv_number(out, x, spec);
		}
		return 0;
	}
	case PF_PRINT_CHAR:
		kv_char(out, (uint8_t)v->u, spec);
		return 0;
	case PF_PRINT_STR:
		if (v->where == PF_OUT)
			kv_string_in_place(out, v->u, spec);
		else if (v->where == PF_MEM)
			kv_string(out, (const char *)v->p, v->n, spec);
		else
			kv_string_at(out, v->u, spec, p->env);
		return 0;
	case PF_PRINT_PTR_VAL:
		kv_pointer_value(out, v->u, spec, p->env);
		return 0;
	default:
		if (!memory_of(v, out, &mem, &n) || v->where == PF_OUT)
			return -EINVAL;
		return kv_pointer_memory(out, mem, n, spec) ? 0 : -EINVAL;
	}
}

/* -------------------------------------------------------- the program */

/* The generic print of op (OP_PRINT, OP_F_PRINT) through the buffer itself. */
static inline int print_generic(const struct tb_printfmt *p, unsigned mode, uint32_t index,
				struct pf_val *sp, struct tb_strbuf *out, struct pf_cur *c)
{
	int rc;

	pf_cur_sync(out, *c);
	rc = print_arg(p, mode, index, sp, out);
	*c = pf_cur_load(out);
	return rc;
}

int tb_printfmt_run(const struct tb_printfmt *p, const uint8_t *rec, uint32_t len,
		    struct tb_strbuf *out)
{
	struct pf_val stack[PF_STACK_MAX + 1], *sp = stack; /* sp: the top value */
	uint64_t locals[PF_LOCALS_MAX];
	const struct pf_op *op = p->ops;
	struct pf_cur c;
	const uint8_t *mem;
	uint32_t off, n;
	uint64_t r;

	if (len < p->static_end)
		return -EINVAL;
	if (p->known) {
		p->known(p, rec, out);
		return 0;
	}
	if (!pf_cur_start(out))
		return 0; /* out of memory: the buffer says so */
	c = pf_cur_load(out);
	for (;; op++) {
		switch (op->code) {
		case OP_TEXT:
			if (!pf_room(out, &c, (size_t)op->b + PF_POOL_PAD))
				return 0;
			c.w = pf_put_text(c.w, p->pool + op->a, op->b);
			break;
		case OP_CONST:
			*++sp = (struct pf_val){.u = op->imm, .where = PF_INT};
			break;
		case OP_STR:
			*++sp = (struct pf_val){.p = (const uint8_t *)p->pool + op->a, .n = op->b + 1,
						.where = PF_MEM};
			break;
		case OP_FIELD:
			*++sp = (struct pf_val){.u = load(rec + op->a, op->size, op->sign), .where = PF_INT};
			break;
		case OP_FIELD_MEM:
			*++sp = (struct pf_val){.p = rec + op->a, .n = op->b ? op->b : len - op->a,
						.where = PF_MEM};
			break;
		case OP_DYN_MEM:
			if (dynamic(rec, len, op->mode, op->a, &off, &n) < 0)
				return -EINVAL;
			*++sp = (struct pf_val){.p = rec + off, .n = n, .where = PF_MEM};
			break;
		case OP_DYN_LEN:
			if (dynamic(rec, len, op->mode, op->a, &off, &n) < 0)
				return -EINVAL;
			*++sp = (struct pf_val){.u = n, .where = PF_INT};
			break;
		case OP_LOCAL_GET:
			*++sp = (struct pf_val){.u = locals[op->a], .where = PF_INT};
			break;
		case OP_LOCAL_SET:
			locals[op->a] = (sp--)->u;
			break;
		case OP_CONVERT:
			sp->u = pf_norm(sp->u, op->size, op->sign);
			break;
		case OP_BOOL:
			sp->u = sp->u != 0;
			break;
		case OP_NEG:
			sp->u = pf_norm(0 - sp->u, op->size, op->sign);
			break;
		case OP_NOT:
			sp->u = pf_norm(~sp->u, op->size, op->sign);
			break;
		case OP_LNOT:
			sp->u = sp->u == 0;
			break;
		case OP_BIN:
			if (op->mode == PF_BOTH) {
				sp--;
				if (!pf_binop(op->a, sp->u, sp[1].u, op->size, op->sign, op->b, &r))
					return -EINVAL;
			} else if (op->mode == PF_IMM_RIGHT) {
				if (!pf_binop(op->a, sp->u, op->imm, op->size, op->sign, op->b, &r))
					return -EINVAL;
			} else if (!pf_binop(op->a, op->imm, sp->u, op->size, op->sign, op->b, &r)) {
				return -EINVAL;
			}
			*sp = (struct pf_val){.u = r, .where = PF_INT};
			break;
		case OP_INDEX: {
			uint64_t i = sp->u;
			sp--;
			pf_cur_sync(out, c);
			if (!memory_of(sp, out, &mem, &n) || i >= n / op->size)
				return -EINVAL;
			*sp = (struct pf_val){.u = load(mem + i * op->size, op->size, op->sign), .where = PF_INT};
			break;
		}
		case OP_JUMP:
			op += op->a - 1;
			break;
		case OP_JZ:
			if ((sp--)->u == 0)
				op += op->a - 1;
			break;
		case OP_AND_SC:
			if (sp->u == 0) {
				sp->u = 0;
				op += op->a - 1;
			} else {
				sp--;
			}
			break;
		case OP_OR_SC:
			if (sp->u != 0) {
				sp->u = 1;
				op += op->a - 1;
			} else {
				sp--;
			}
			break;
		case OP_FLAGS:
		case OP_SYMBOLIC: {
			uint64_t v = sp->u;
			*sp = (struct pf_val){.u = (size_t)(c.w - out->buf), .where = PF_OUT};
			if (!print_helper(p, op->code == OP_FLAGS, op->a, v, out, &c))
				return 0;
			break;
		}
		case OP_HEX: {
			int64_t count = (int64_t)(sp--)->u;
			pf_cur_sync(out, c);
			if (!memory_of(sp, out, &mem, &n) || (count > 0 && (uint64_t)count > n))
				return -EINVAL;
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			print_hex(mem, count, op->mode, out);
			c = pf_cur_load(out);
			break;
		}
		case OP_ARRAY: {
			int64_t count = (int64_t)(sp--)->u;
			uint64_t bytes = count > 0 ? (uint64_t)count * op->a : 0;
			pf_cur_sync(out, c);
			if (!memory_of(sp, out, &mem, &n) || bytes > n)
				return -EINVAL;
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			print_array(mem, bytes, op->a, out);
			c = pf_cur_load(out);
			break;
		}
		case OP_BITMASK:
			pf_cur_sync(out, c);
			if (!memory_of(sp, out, &mem, &n))
				return -EINVAL;
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			kv_bitmap(out, mem, (size_t)n * 8, false);
			c = pf_cur_load(out);
			break;
		case OP_PRINT: {
			struct kv_spec *s = &p->specs[op->a];
			if (!put_prefix(p, op, out, &c, 0))
				return 0;
			if (print_generic(p, op->mode, op->a, sp, out, &c) < 0)
				return -EINVAL;
			sp -= 1 + s->width_arg + s->precision_arg;
			break;
		}
		case OP_NOP:
			break;
		case OP_END:
			if (put_prefix(p, op, out, &c, 0))
				pf_cur_sync(out, c);
			return 0;
		case OP_F_DEC:
			if (!put_prefix(p, op, out, &c, 21)) /* a sign, 20 digits or zeros */
				return 0;
			c.w = pf_put_dec_width(c.w, field_value(rec, op), op->mode, op->b);
			break;
		case OP_F_HEX: {
			uint64_t v = field_value(rec, op);
			unsigned digits = kv_hex_len(v);
			if (!put_prefix(p, op, out, &c, 16))
				return 0;
			c.w = kv_put_hex(c.w, v, digits > op->b ? digits : op->b, false);
			break;
		}
		case OP_F_NUM:
			if (!put_number_op(p, op, field_value(rec, op), out, &c))
				return 0;
			break;
		case OP_NUM:
			if (!put_number_op(p, op, pf_norm((sp--)->u, op->size, op->sign), out, &c))
				return 0;
			break;
		case OP_F_STR:
			if (!(op->mode == PF_STR_WIDE
				      ? put_wide_string(p, op, (const char *)rec + op->a, out, &c)
				      : put_string(p, op, (const char *)rec + op->a, op->b ? op->b : len - op->a, out, &c)))
				return 0;
			break;
		case OP_F_DSTR:
			if (dynamic(rec, len, op->size, op->a, &off, &n) < 0)
				return -EINVAL;
			if (!put_string(p, op, (const char *)rec + off, n, out, &c))
				return 0;
			break;
		case OP_F_SYMBOLIC:
			if (!put_prefix(p, op, out, &c, 0) ||
			    !print_symbolic(p, op->b, field_value(rec, op), out, &c))
				return 0;
			break;
		case OP_F_FLAGS: {
			uint64_t v = field_value(rec, op);
			/* a zero value prints the alt text, or a tep_like table's entry (pf_specialise.c) */
			bool helper = v || p->tables[op->b].tep_like;
			if (!(helper ? put_prefix(p, op, out, &c, 0) && print_helper(p, true, op->b, v, out, &c)
				     : put_choice(p, op, false, out, &c)))
				return 0;
			break;
		}
		case OP_F_SELECT:
			if (!put_choice(p, op, field_value(rec, op) != 0, out, &c))
				return 0;
			break;
		case OP_SELECT_STR:
			if (!put_choice(p, op, (sp--)->u != 0, out, &c))
				return 0;
			break;
		case OP_SYMBOLIC_OUT:
		case OP_FLAGS_OUT: {
			uint64_t v = (sp--)->u;
			if (!put_prefix(p, op, out, &c, 0) ||
			    !print_helper(p, op->code == OP_FLAGS_OUT, op->b, v, out, &c))
				return 0;
			break;
		}
		case OP_F_PRINT: {
			struct pf_val v = {.u = field_value(rec, op), .where = PF_INT};
			if (!put_prefix(p, op, out, &c, 0))
				return 0;
			if (print_generic(p, op->mode, op->spec, &v, out, &c) < 0)
				return -EINVAL;
			break;
		}
		case OP_FIELD_AND:
			*++sp = (struct pf_val){.u = field_value(rec, op), .where = PF_INT};
			break;
		case OP_FIELD_BIN:
			if (!pf_binop(op->mode, field_raw(rec, op), op->imm, op->b & 0xff, op->b >> 8, 0, &r))
				return -EINVAL;
			*++sp = (struct pf_val){.u = r, .where = PF_INT};
			break;
		default:
			return -EINVAL;
		}
	}
}
