// SPDX-License-Identifier: MIT
/*
 * pf_run.c - running a compiled print fmt over one record.
 *
 * A loop over the ops with a value stack on the C stack: no allocation
 * (the output buffer aside), no C library printf, no recursion.  Every
 * read of the record is checked against its length: fixed fields once
 * (static_end), dynamic fields and indexes each time.
 *
 * The fused ops (pf_specialise.c) write straight into the output buffer:
 * one check that it has room for the op's text, its value and the spare
 * bytes of a 16-byte copy, then stores.
 */
#include <errno.h>
#include <string.h>

#include "pf_internal.h"

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
 * A fixed field's value: one 8-byte load cut to the field's size where
 * the record goes on for 8 bytes (nearly always), else by its size.
 */
static inline uint64_t field_value(const uint8_t *rec, uint32_t len, const struct pf_op *op)
{
	unsigned shift = 64 - 8 * op->size;
	uint64_t raw;

	if (__builtin_expect((uint64_t)op->a + 8 > len, 0))
		return load(rec + op->a, op->size, op->sign);
	memcpy(&raw, rec + op->a, 8);
	raw <<= shift;
	return op->sign ? (uint64_t)((int64_t)raw >> shift) : raw >> shift;
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

/* ------------------------------------------------------ direct output */

/* n bytes of room at the end of out, NULL when it cannot grow (oom: the owner sees it). */
static inline char *room(struct tb_strbuf *out, size_t n)
{
	if (__builtin_expect(out->cap - out->len >= n, 1))
		return out->buf + out->len;
	return sb_room(out, n);
}

/* Text of the pool at d in 16-byte pieces: room and the pool's padding hold the spill. */
static inline char *put_text(char *d, const char *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i += 16)
		memcpy(d + i, s + i, 16);
	return d + n;
}

/* An op's text prefix, with room for extra bytes after it; NULL on oom. */
static inline char *put_prefix(const struct tb_printfmt *p, const struct pf_op *op,
			       struct tb_strbuf *out, size_t extra)
{
	char *d = room(out, op->text_len + PF_POOL_PAD + extra);

	return d ? put_text(d, p->pool + op->text, op->text_len) : NULL;
}

/* The output ends at d (inside its room). */
static inline void commit(struct tb_strbuf *out, char *d)
{
	out->len = (size_t)(d - out->buf);
}

/* Just the op's text prefix, when something else appends what follows. */
static inline void put_text_only(const struct tb_printfmt *p, const struct pf_op *op,
				 struct tb_strbuf *out)
{
	char *d;

	if (op->text_len && (d = put_prefix(p, op, out, 0)) != NULL)
		commit(out, d);
}

static inline void put_fill(char *d, char c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		d[i] = c;
}

/*
 * v as the kernel's number() prints it when the directive has no
 * precision and no flags but '-' and '0' (fmt: KV_SIGN | KV_LEFT |
 * KV_ZEROPAD | width << 8, width <= PF_FAST_WIDTH).  Needs 21 +
 * PF_FAST_WIDTH bytes at d; returns the end.
 */
static inline char *put_number(char *d, uint64_t v, unsigned mode, uint32_t fmt)
{
	unsigned width = fmt >> 8, n, pad;
	bool negative = (fmt & KV_SIGN) && (int64_t)v < 0;

	if (negative)
		v = 0 - v;
	n = mode == PF_NUM_DEC ? kv_dec_len(v) : kv_hex_len(v);
	pad = width > n + negative ? width - n - negative : 0;
	if (pad && !(fmt & (KV_LEFT | KV_ZEROPAD))) {
		put_fill(d, ' ', pad);
		d += pad;
	}
	if (negative)
		*d++ = '-';
	if (pad && (fmt & (KV_LEFT | KV_ZEROPAD)) == KV_ZEROPAD) {
		put_fill(d, '0', pad);
		d += pad;
	}
	d = mode == PF_NUM_DEC ? kv_put_dec(d, v, n) : kv_put_hex(d, v, n, mode == PF_NUM_HEXU);
	if (pad && (fmt & KV_LEFT)) {
		put_fill(d, ' ', pad);
		d += pad;
	}
	return d;
}

/* v under op's number format (the OP_F_NUM family, OP_NUM). */
static inline void put_number_op(const struct tb_printfmt *p, const struct pf_op *op, uint64_t v,
				 struct tb_strbuf *out)
{
	char *d;

	if (op->mode == PF_NUM_SPEC) {
		put_text_only(p, op, out);
		kv_number(out, v, &p->specs[op->spec]);
	} else if ((d = put_prefix(p, op, out, 21 + PF_FAST_WIDTH)) != NULL) {
		commit(out, put_number(d, v, op->mode, op->b));
	}
}

/* The selects: the prefix, then the lit text for a non-zero value, else the alt text. */
static inline void put_choice(const struct tb_printfmt *p, const struct pf_op *op, bool nonzero,
			      struct tb_strbuf *out)
{
	uint32_t at = nonzero ? op->lit : op->alt, n = nonzero ? op->lit_len : op->alt_len;
	char *d = put_prefix(p, op, out, n);

	if (d)
		commit(out, put_text(d, p->pool + at, n));
}

/* The length of the C string in s[0..lim): short ones by hand, long ones by memchr. */
static inline size_t bounded_strlen(const char *s, size_t lim)
{
	const char *nul;

	if (lim <= 32) {
		size_t i = 0;
		while (i < lim && s[i])
			i++;
		return i;
	}
	nul = memchr(s, '\0', lim);
	return nul ? (size_t)(nul - s) : lim;
}

/* %s of s[0..max) under op: plain (at most op->imm bytes) or through its spec. */
static inline void put_string(const struct tb_printfmt *p, const struct pf_op *op, const char *s,
			      size_t max, struct tb_strbuf *out)
{
	size_t n;
	char *d;

	if (op->mode == PF_STR_SPEC) {
		put_text_only(p, op, out);
		kv_string(out, s, max, &p->specs[op->spec]);
		return;
	}
	n = bounded_strlen(s, max < op->imm ? max : op->imm);
	d = put_prefix(p, op, out, n);
	if (d) {
		memcpy(d, s, n);
		commit(out, d + n);
	}
}

/* The kernel's trace_print_flags_seq(). */
static void print_flags(const struct tb_printfmt *p, const struct pf_table *t, uint64_t flags,
			struct tb_strbuf *out)
{
	bool first = true;

	for (uint32_t i = 0; i < t->count && flags; i++) {
		const struct pf_sym *s = &p->syms[t->first + i];
		if ((flags & s->value) != s->value)
			continue;
		flags &= ~s->value;
		if (!first)
			sb_put(out, p->pool + t->delim, t->delim_len);
		first = false;
		sb_put(out, p->pool + s->name, s->name_len);
	}
	if (flags) {
		if (!first)
			sb_put(out, p->pool + t->delim, t->delim_len);
		sb_put(out, "0x", 2);
		kv_hex(out, flags, false);
	}
}

/* The kernel's trace_print_symbols_seq(). */
static void print_symbolic(const struct tb_printfmt *p, const struct pf_table *t, uint64_t v,
			   struct tb_strbuf *out)
{
	if (t->direct_len) {
		uint16_t k = v < t->direct_len ? p->direct[t->direct_first + v] : 0;
		if (k && p->syms[t->first + k - 1].name_len) {
			const struct pf_sym *s = &p->syms[t->first + k - 1];
			sb_put(out, p->pool + s->name, s->name_len);
			return;
		}
		sb_put(out, "0x", 2);
		kv_hex(out, v, false);
		return;
	}
	for (uint32_t i = 0; i < t->count; i++) {
		const struct pf_sym *s = &p->syms[t->first + i];
		if (s->value == v) {
			sb_put(out, p->pool + s->name, s->name_len);
			if (s->name_len)
				return;
			break; /* an empty name prints nothing, so the kernel falls back to hex */
		}
	}
	sb_put(out, "0x", 2);
	kv_hex(out, v, false);
}

/* The kernel's trace_print_hex_seq(): 16 bytes per %*ph, spaced or not. */
static void print_hex(const uint8_t *b, int64_t n, bool concat, struct tb_strbuf *out)
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
static void print_array(const uint8_t *b, uint64_t bytes, uint32_t elsize, struct tb_strbuf *out)
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
static int print_arg(const struct tb_printfmt *p, unsigned mode, uint32_t index, struct pf_val *sp,
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

int tb_printfmt_run(const struct tb_printfmt *p, const uint8_t *rec, uint32_t len,
		    struct tb_strbuf *out)
{
	struct pf_val stack[PF_STACK_MAX + 1], *sp = stack; /* sp: the top value */
	uint64_t locals[PF_LOCALS_MAX];
	const struct pf_op *op = p->ops;
	const uint8_t *mem;
	uint32_t off, n;
	uint64_t r;

	if (len < p->static_end)
		return -EINVAL;
	for (;; op++) {
		switch (op->code) {
		case OP_TEXT: {
			char *d = room(out, op->b + PF_POOL_PAD);
			if (d)
				commit(out, put_text(d, p->pool + op->a, op->b));
			break;
		}
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
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			if (op->code == OP_FLAGS)
				print_flags(p, &p->tables[op->a], v, out);
			else
				print_symbolic(p, &p->tables[op->a], v, out);
			break;
		}
		case OP_HEX: {
			int64_t count = (int64_t)(sp--)->u;
			if (!memory_of(sp, out, &mem, &n) || (count > 0 && (uint64_t)count > n))
				return -EINVAL;
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			print_hex(mem, count, op->mode, out);
			break;
		}
		case OP_ARRAY: {
			int64_t count = (int64_t)(sp--)->u;
			uint64_t bytes = count > 0 ? (uint64_t)count * op->a : 0;
			if (!memory_of(sp, out, &mem, &n) || bytes > n)
				return -EINVAL;
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			print_array(mem, bytes, op->a, out);
			break;
		}
		case OP_BITMASK:
			if (!memory_of(sp, out, &mem, &n))
				return -EINVAL;
			*sp = (struct pf_val){.u = out->len, .where = PF_OUT};
			kv_bitmap(out, mem, (size_t)n * 8, false);
			break;
		case OP_PRINT: {
			struct kv_spec *s = &p->specs[op->a];
			put_text_only(p, op, out);
			if (print_arg(p, op->mode, op->a, sp, out) < 0)
				return -EINVAL;
			sp -= 1 + s->width_arg + s->precision_arg;
			break;
		}
		case OP_NOP:
			break;
		case OP_END:
			put_text_only(p, op, out);
			return 0;
		case OP_F_DEC: {
			uint64_t v = field_value(rec, len, op) & op->imm;
			char *d = put_prefix(p, op, out, 21);
			if (!d)
				break;
			if (op->mode && (int64_t)v < 0) {
				*d++ = '-';
				v = 0 - v;
			}
			commit(out, kv_put_dec(d, v, kv_dec_len(v)));
			break;
		}
		case OP_F_HEX: {
			uint64_t v = field_value(rec, len, op) & op->imm;
			char *d = put_prefix(p, op, out, 16);
			if (d)
				commit(out, kv_put_hex(d, v, kv_hex_len(v), false));
			break;
		}
		case OP_F_NUM:
			put_number_op(p, op, field_value(rec, len, op) & op->imm, out);
			break;
		case OP_NUM:
			put_number_op(p, op, pf_norm((sp--)->u, op->size, op->sign), out);
			break;
		case OP_F_STR:
			put_string(p, op, (const char *)rec + op->a, op->b ? op->b : len - op->a, out);
			break;
		case OP_F_DSTR:
			if (dynamic(rec, len, op->size, op->a, &off, &n) < 0)
				return -EINVAL;
			put_string(p, op, (const char *)rec + off, n, out);
			break;
		case OP_F_SYMBOLIC:
			put_text_only(p, op, out);
			print_symbolic(p, &p->tables[op->b], field_value(rec, len, op) & op->imm, out);
			break;
		case OP_F_FLAGS: {
			uint64_t v = field_value(rec, len, op) & op->imm;
			if (!v) {
				put_choice(p, op, false, out);
				break;
			}
			put_text_only(p, op, out);
			print_flags(p, &p->tables[op->b], v, out);
			break;
		}
		case OP_F_SELECT:
			put_choice(p, op, (field_value(rec, len, op) & op->imm) != 0, out);
			break;
		case OP_SELECT_STR:
			put_choice(p, op, (sp--)->u != 0, out);
			break;
		case OP_SYMBOLIC_OUT:
		case OP_FLAGS_OUT: {
			uint64_t v = (sp--)->u;
			put_text_only(p, op, out);
			if (op->code == OP_FLAGS_OUT)
				print_flags(p, &p->tables[op->b], v, out);
			else
				print_symbolic(p, &p->tables[op->b], v, out);
			break;
		}
		case OP_F_PRINT: {
			struct pf_val v = {.u = field_value(rec, len, op) & op->imm, .where = PF_INT};
			put_text_only(p, op, out);
			if (print_arg(p, op->mode, op->spec, &v, out) < 0)
				return -EINVAL;
			break;
		}
		case OP_FIELD_AND:
			*++sp = (struct pf_val){.u = field_value(rec, len, op) & op->imm, .where = PF_INT};
			break;
		case OP_FIELD_BIN:
			if (!pf_binop(op->mode, field_value(rec, len, op), op->imm, op->b & 0xff, op->b >> 8, 0, &r))
				return -EINVAL;
			*++sp = (struct pf_val){.u = r, .where = PF_INT};
			break;
		default:
			return -EINVAL;
		}
	}
}
