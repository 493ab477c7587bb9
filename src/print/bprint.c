// SPDX-License-Identifier: MIT
/*
 * bprint.c - the kernel's bstr_printf() over a bprint record's words.
 *
 * The packing is vbin_printf()'s (lib/vsprintf.c): walking the format,
 * every '*' width or precision is an int, every number is stored at its
 * size (1, 2, 4 or 8 bytes) aligned to that size, except that 8-byte
 * values are aligned to 4 only (the buffer is an array of u32); a %s
 * string is copied inline with its NUL and no alignment; a %p that prints
 * an address (plain, S, s, x, K, e) stores the 8-byte pointer, and any
 * other %p extension stores the text it printed at the call, NUL-ended.
 */
#include <errno.h>
#include <string.h>

#include "bprint.h"
#include "kvsprintf.h"

struct cursor {
	const uint8_t *args;
	uint32_t len, pos;
};

/* The next size-byte value (aligned as vbin_printf stores it), sign-extended if asked. */
static int take(struct cursor *c, unsigned size, bool sign, uint64_t *v)
{
	unsigned align = size == 8 ? 4 : size;
	uint32_t pos = (c->pos + align - 1) & ~(align - 1);
	uint64_t x = 0;

	if (pos > c->len || c->len - pos < size)
		return -EINVAL;
	for (unsigned i = size; i-- > 0;)
		x = x << 8 | c->args[pos + i];
	if (sign && size < 8)
		x = (uint64_t)((int64_t)(x << (64 - 8 * size)) >> (64 - 8 * size));
	*v = x;
	c->pos = pos + size;
	return 0;
}

/* A NUL-terminated string inline at the cursor. */
static int take_string(struct cursor *c, const char **s, size_t *n)
{
	const uint8_t *nul;

	if (c->pos >= c->len)
		return -EINVAL;
	nul = memchr(c->args + c->pos, '\0', c->len - c->pos);
	if (!nul)
		return -EINVAL;
	*s = (const char *)c->args + c->pos;
	*n = (size_t)(nul - (c->args + c->pos));
	c->pos += (uint32_t)*n + 1;
	return 0;
}

/* %p directives whose argument vbin_printf stores as the pointer itself. */
static bool pointer_stored(const struct kv_spec *s)
{
	return !s->ext[0] || strchr("SsxKe", s->ext[0]);
}

static int directive(struct cursor *c, struct kv_spec *s, const struct tb_print_env *env,
		     struct tb_strbuf *out)
{
	uint64_t v;
	const char *str;
	size_t n;

	if (s->width_arg) {
		if (take(c, 4, true, &v) < 0)
			return -EINVAL;
		kv_set_width(s, (int64_t)v);
	}
	if (s->precision_arg) {
		if (take(c, 4, true, &v) < 0)
			return -EINVAL;
		kv_set_precision(s, (int64_t)v);
	}
	switch (s->kind) {
	case KV_NUMBER:
		if (take(c, s->size, s->flags & KV_SIGN, &v) < 0)
			return -EINVAL;
		kv_number(out, kv_number_value(s, v), s);
		return 0;
	case KV_CHAR:
		if (take(c, 1, false, &v) < 0)
			return -EINVAL;
		kv_char(out, (uint8_t)v, s);
		return 0;
	case KV_STRING:
		if (take_string(c, &str, &n) < 0)
			return -EINVAL;
		kv_string(out, str, n, s);
		return 0;
	default: /* KV_POINTER */
		if (pointer_stored(s)) {
			if (take(c, 8, false, &v) < 0)
				return -EINVAL;
			kv_pointer_value(out, v, s, env);
			return 0;
		}
		/* Printed when the event was written: copied as it is. */
		if (take_string(c, &str, &n) < 0)
			return -EINVAL;
		sb_put(out, str, n);
		return 0;
	}
}

int tb_bprint_format(const char *fmt, const uint8_t *args, uint32_t len,
		     const struct tb_print_env *env, struct tb_strbuf *out)
{
	struct cursor c = {args, len, 0};
	size_t i = 0;

	while (fmt[i]) {
		const char *pct = strchr(fmt + i, '%');
		size_t lit = pct ? (size_t)(pct - (fmt + i)) : strlen(fmt + i);
		struct kv_spec s;

		sb_put(out, fmt + i, lit);
		if (!pct)
			break;
		i += lit;
		i += kv_decode(fmt + i, &s);
		if (s.kind == KV_INVALID)
			break; /* bstr_printf stops here too */
		if (s.kind == KV_PERCENT) {
			sb_putc(out, '%');
			continue;
		}
		if (directive(&c, &s, env, out) < 0)
			return -EINVAL;
	}
	return 0;
}
