/* SPDX-License-Identifier: MIT */
/*
 * pf_out.h - how a compiled print fmt writes its output: through a cursor
 * into the output buffer's spare room, with one check per op that the room
 * is there (internal to pf_run.c).
 *
 * The cursor lives in the run's local variables, not in the tb_strbuf:
 * bytes stored through a char pointer may alias anything, so with the
 * buffer's own len the compiler would reload it after every byte.  The
 * buffer is brought up to date (pf_cur_sync) before anything else looks at
 * it - the kv_* functions, a helper's text read back - and the cursor
 * reloaded from it afterwards (pf_cur_load).
 *
 * Text is copied in 16-byte pieces: the program's pool ends with
 * PF_POOL_PAD spare bytes, and every room asked for here adds as many, so
 * a piece may run past the end of its text on both sides.
 */
#ifndef TRACEBUF_PF_OUT_H
#define TRACEBUF_PF_OUT_H

#include "pf_internal.h"

/* The cursor: small enough to live in two registers, passed and returned by value. */
struct pf_cur {
	char *w;   /* where the next byte goes */
	char *end; /* the end of the room */
};

/*
 * The cursor at b's end; b must have memory (pf_cur_start).  cap is read
 * on its own (volatile): the compiler would otherwise read len and cap
 * with one 16-byte load, which the 8-byte len a kv_* function has just
 * stored cannot be forwarded to - a stall of a dozen cycles after every
 * call (8% of a kfree line).
 */
static inline struct pf_cur pf_cur_load(const struct tb_strbuf *b)
{
	size_t cap = *(const volatile size_t *)&b->cap;

	return (struct pf_cur){b->buf + b->len, b->buf + cap};
}

/* b's length where the cursor is. */
static inline void pf_cur_sync(struct tb_strbuf *b, struct pf_cur c)
{
	b->len = (size_t)(c.w - b->buf);
}

/* b given memory if it has none; false when it cannot be (oom). */
static inline bool pf_cur_start(struct tb_strbuf *b)
{
	return b->buf || sb_grow(b, 1);
}

/* The slow side of pf_room(): the buffer grown; the cursor's w NULL on oom. */
struct pf_cur pf_cur_grow(struct tb_strbuf *b, struct pf_cur c, size_t n);

/* Room for n bytes at the cursor; false if the buffer cannot grow (it says oom). */
static inline bool pf_room(struct tb_strbuf *b, struct pf_cur *c, size_t n)
{
	if (__builtin_expect((size_t)(c->end - c->w) >= n, 1))
		return true;
	*c = pf_cur_grow(b, *c, n);
	return c->w != NULL;
}

/* n bytes of text from the pool (room: n + PF_POOL_PAD); returns the end. */
static inline char *pf_put_text(char *d, const char *s, uint32_t n)
{
	memcpy(d, s, 16); /* most text is this short */
	for (uint32_t i = 16; i < n; i += 16)
		memcpy(d + i, s + i, 16);
	return d + n;
}

/*
 * n bytes c (room: n + PF_POOL_PAD); returns the end.  In 16-byte pieces
 * like the text: padding is a few bytes, and a byte loop became a memset
 * call that cost more than the bytes.
 */
static inline char *pf_put_fill(char *d, char c, unsigned n)
{
	char run[16];

	memset(run, c, sizeof(run));
	for (unsigned i = 0; i < n; i += 16)
		memcpy(d + i, run, 16);
	return d + n;
}

/*
 * v in decimal (signed: a '-' first when negative), zeros after the sign up
 * to width <= 20 bytes in all, as the kernel's %0Nd and %d print it (room:
 * 21 + PF_POOL_PAD); returns the end.
 */
static inline char *pf_put_dec_width(char *d, uint64_t v, bool sign, unsigned width)
{
	bool negative = sign && (int64_t)v < 0;
	unsigned digits;

	if (negative) {
		*d++ = '-';
		v = 0 - v;
	}
	digits = kv_dec_len(v);
	if (width > digits + negative)
		digits = width - negative;
	return kv_put_dec(d, v, digits);
}

/* Bytes the widest fast number takes: 20 digits, a sign, the widest padding. */
#define PF_NUMBER_ROOM (21 + PF_FAST_WIDTH)

/*
 * v as the kernel's number() prints it when the directive has no
 * precision and no flags but '-' and '0' (fmt: KV_SIGN | KV_LEFT |
 * KV_ZEROPAD | width << 8, width <= PF_FAST_WIDTH; mode PF_NUM_DEC,
 * PF_NUM_HEX or PF_NUM_HEXU).  Room: PF_NUMBER_ROOM; returns the end.
 */
static inline char *pf_put_number(char *d, uint64_t v, unsigned mode, uint32_t fmt)
{
	unsigned width = fmt >> 8, n, pad;
	bool negative = (fmt & KV_SIGN) && (int64_t)v < 0;

	if (negative)
		v = 0 - v;
	n = mode == PF_NUM_DEC ? kv_dec_len(v) : kv_hex_len(v);
	pad = width > n + negative ? width - n - negative : 0;
	if (pad && !(fmt & (KV_LEFT | KV_ZEROPAD)))
		d = pf_put_fill(d, ' ', pad);
	if (negative)
		*d++ = '-';
	if (pad && (fmt & (KV_LEFT | KV_ZEROPAD)) == KV_ZEROPAD)
		d = pf_put_fill(d, '0', pad);
	d = mode == PF_NUM_DEC ? kv_put_dec(d, v, n) : kv_put_hex(d, v, n, mode == PF_NUM_HEXU);
	if (pad && (fmt & KV_LEFT))
		d = pf_put_fill(d, ' ', pad);
	return d;
}

/* Where the first zero byte of the 8 at s is (8: none); the lowest flag is exact. */
static inline unsigned pf_zero_byte(const char *s)
{
	uint64_t x, z;

	memcpy(&x, s, 8);
	z = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
	return z ? (unsigned)__builtin_ctzll(z) / 8 : 8;
}

/* The length of the C string in s[0..lim), 8 bytes at a time; reads nothing past lim. */
static inline size_t pf_strnlen(const char *s, size_t lim)
{
	size_t i = 0;
	unsigned z;

	for (; i + 8 <= lim; i += 8)
		if ((z = pf_zero_byte(s + i)) < 8)
			return i + z;
	while (i < lim && s[i])
		i++;
	return i;
}

/*
 * The same where s[0 .. lim rounded up to 16) may be read: 16 bytes at a
 * time, and no tail.
 */
static inline size_t pf_strnlen_wide(const char *s, size_t lim)
{
	size_t i = 0;
	unsigned z;

	do {
		if ((z = pf_zero_byte(s + i)) < 8 || (z = 8 + pf_zero_byte(s + i + 8)) < 16)
			return i + z < lim ? i + z : lim;
		i += 16;
	} while (i < lim);
	return lim;
}

/* n bytes from s to d, reading and writing none past them (small ones without a call). */
static inline char *pf_copy(char *d, const char *s, size_t n)
{
	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) {
		uint64_t x, y;
		memcpy(&x, s, 8);
		memcpy(&y, s + n - 8, 8);
		memcpy(d, &x, 8);
		memcpy(d + n - 8, &y, 8);
	} else if (n >= 4) {
		uint32_t x, y;
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
	return d + n;
}

#endif
