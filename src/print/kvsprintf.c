// SPDX-License-Identifier: MIT
/*
 * kvsprintf.c - the kernel's vsprintf rules (see kvsprintf.h), by hand.
 *
 * Written from the facts of the kernel's lib/vsprintf.c and kallsyms.c
 * (what is printed for which directive and value), not from its code.
 */
#include <stdatomic.h>
#include <string.h>

#include "kvsprintf.h"
#include "printfmt.h"

const char kv_hex_lower[17] = "0123456789abcdef";
const char kv_hex_upper[17] = "0123456789ABCDEF";
const char kv_hex_pairs_lower[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
const char kv_hex_pairs_upper[513] =
	"000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
	"202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F"
	"404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F"
	"606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F"
	"808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9F"
	"A0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF"
	"C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF"
	"E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF";

/* ------------------------------------------------------------ decoding */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Decimal digits at *p, clamped to max (the kernel's fields cannot hold more). */
static int32_t read_count(const char **p, int32_t max)
{
	int64_t v = 0;

	while (is_digit(**p)) {
		if (v <= max)
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	return v > max ? max : (int32_t)v;
}

static uint8_t flag_of(char c)
{
	switch (c) {
	case '-':
		return KV_LEFT;
	case '+':
		return KV_PLUS;
	case ' ':
		return KV_SPACE;
	case '#':
		return KV_SPECIAL;
	case '0':
		return KV_ZEROPAD;
	default:
		return 0;
	}
}

/* A length modifier at *p: its size in bytes (0 if none), consuming it. */
static uint8_t read_length(const char **p)
{
	char c = **p;
	uint8_t size = 0, doubled = 0;

	switch (c) {
	case 'l':
		size = 8, doubled = 8;
		break;
	case 'h':
		size = 2, doubled = 1;
		break;
	case 'L':
		size = 8;
		break;
	case 'H':
		size = 1;
		break;
	case 'z':
	case 't':
		size = 8;
		break;
	default:
		return 0;
	}
	(*p)++;
	if (doubled && **p == c) {
		size = doubled;
		(*p)++;
	}
	return size;
}

size_t kv_decode(const char *fmt, struct kv_spec *s)
{
	const char *p = fmt + 1;
	uint8_t flag, size;

	memset(s, 0, sizeof(*s));
	s->width = -1;
	s->precision = -1;
	s->base = 10;
	while ((flag = flag_of(*p)) != 0) {
		s->flags |= flag;
		p++;
	}
	if (is_digit(*p))
		s->width = read_count(&p, KV_WIDTH_MAX);
	else if (*p == '*') {
		s->width_arg = true;
		p++;
	}
	if (*p == '.') {
		p++;
		if (is_digit(*p))
			s->precision = read_count(&p, KV_PRECISION_MAX);
		else if (*p == '*') {
			s->precision_arg = true;
			p++;
		}
	}
	size = read_length(&p);
	s->size = size ? size : 4;
	s->kind = KV_NUMBER;
	switch (*p) {
	case 'c':
		s->kind = KV_CHAR;
		break;
	case 's':
		s->kind = KV_STRING;
		break;
	case '%':
		s->kind = KV_PERCENT;
		break;
	case 'p': {
		size_t n = 0;
		s->kind = KV_POINTER;
		while (is_alnum(p[1 + n]))
			n++;
		s->ext_len = n < sizeof(s->ext) - 1 ? (uint8_t)n : (uint8_t)(sizeof(s->ext) - 1);
		memcpy(s->ext, p + 1, s->ext_len);
		p += n;
		break;
	}
	case 'o':
		s->base = 8;
		break;
	case 'x':
		s->flags |= KV_SMALL;
		s->base = 16;
		break;
	case 'X':
		s->base = 16;
		break;
	case 'd':
	case 'i':
		s->flags |= KV_SIGN;
		break;
	case 'u':
		break;
	default:
		s->kind = KV_INVALID;
		return (size_t)(p - fmt);
	}
	return (size_t)(p + 1 - fmt);
}

void kv_set_width(struct kv_spec *spec, int64_t width)
{
	if (width < -KV_WIDTH_MAX)
		width = -KV_WIDTH_MAX;
	if (width > KV_WIDTH_MAX)
		width = KV_WIDTH_MAX;
	if (width < 0) {
		spec->flags |= KV_LEFT;
		width = -width;
	}
	spec->width = (int32_t)width;
}

void kv_set_precision(struct kv_spec *spec, int64_t precision)
{
	if (precision > KV_PRECISION_MAX)
		precision = KV_PRECISION_MAX;
	spec->precision = precision < 0 ? 0 : (int32_t)precision;
}

/* ------------------------------------------------------------ numbers */

uint64_t kv_number_value(const struct kv_spec *spec, uint64_t v)
{
	unsigned shift;

	if (spec->size >= 8)
		return v;
	shift = 64 - 8u * spec->size;
	v <<= shift;
	if (spec->flags & KV_SIGN)
		return (uint64_t)((int64_t)v >> shift);
	return v >> shift;
}

/* n bytes of c at the end of out (n clamped to KV_PAD_MAX). */
static void put_fill(struct tb_strbuf *out, char c, int64_t n)
{
	char *dst;

	if (n <= 0)
		return;
	if (n > KV_PAD_MAX)
		n = KV_PAD_MAX;
	dst = sb_room(out, (size_t)n);
	if (dst) {
		memset(dst, c, (size_t)n);
		sb_added(out, (size_t)n);
	}
}

/* Digits of v in base 8, 10 or 16, least significant first; returns their count. */
static int reversed_digits(char *d, uint64_t v, unsigned base, bool small)
{
	const char *set = small ? kv_hex_lower : kv_hex_upper;
	int n = 0;

	if (base == 10) {
		do
			d[n++] = (char)('0' + v % 10);
		while ((v /= 10) != 0);
	} else {
		unsigned shift = base == 16 ? 4 : 3;
		do {
			d[n++] = set[v & (base - 1)];
			v >>= shift;
		} while (v);
	}
	return n;
}

void kv_number(struct tb_strbuf *out, uint64_t num, const struct kv_spec *spec)
{
	char digits[24], sign = 0;
	uint8_t flags = spec->flags;
	unsigned base = spec->base;
	int64_t width = spec->width, precision = spec->precision;
	bool zero = num == 0, prefix = (flags & KV_SPECIAL) && base != 10;
	int n;

	if (flags & KV_LEFT)
		flags &= (uint8_t)~KV_ZEROPAD;
	if (flags & KV_SIGN) {
		if ((int64_t)num < 0) {
			sign = '-';
			num = 0 - num;
			width--;
		} else if (flags & KV_PLUS) {
			sign = '+';
			width--;
		} else if (flags & KV_SPACE) {
			sign = ' ';
			width--;
		}
	}
	if (prefix)
		width -= base == 16 ? 2 : !zero;
	n = reversed_digits(digits, num, base, flags & KV_SMALL);
	if (n > precision)
		precision = n;
	width -= precision;
	if (!(flags & (KV_ZEROPAD | KV_LEFT))) {
		put_fill(out, ' ', width);
		width = 0; /* the padding is spent */
	}
	if (sign)
		sb_putc(out, sign);
	if (prefix && (base == 16 || !zero))
		sb_putc(out, '0');
	if (prefix && base == 16)
		sb_putc(out, (flags & KV_SMALL) ? 'x' : 'X');
	if (!(flags & KV_LEFT))
		put_fill(out, (flags & KV_ZEROPAD) ? '0' : ' ', width);
	put_fill(out, '0', precision - n);
	if (sb_grow(out, (size_t)n)) {
		char *dst = out->buf + out->len;
		for (int i = 0; i < n; i++)
			dst[i] = digits[n - 1 - i];
		out->len += (size_t)n;
	}
	if (flags & KV_LEFT)
		put_fill(out, ' ', width);
}

/* "00".."99", two bytes each: decimal output two digits per division. */
const char kv_digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				 "25262728293031323334353637383940414243444546474849"
				 "50515253545556575859606162636465666768697071727374"
				 "75767778798081828384858687888990919293949596979899";

void kv_decimal(struct tb_strbuf *out, uint64_t v, bool is_signed)
{
	bool negative = is_signed && (int64_t)v < 0;
	unsigned n;
	char *d;

	if (negative)
		v = 0 - v;
	n = kv_dec_len(v);
	d = sb_room(out, n + 1);
	if (!d)
		return;
	if (negative)
		*d++ = '-';
	kv_put_dec(d, v, n);
	sb_added(out, n + negative);
}

void kv_hex(struct tb_strbuf *out, uint64_t v, bool upper)
{
	unsigned n = kv_hex_len(v);
	char *d = sb_room(out, n);

	if (d) {
		kv_put_hex(d, v, n, upper);
		sb_added(out, n);
	}
}

/* -------------------------------------------------- characters, strings */

void kv_char(struct tb_strbuf *out, uint8_t c, const struct kv_spec *spec)
{
	int64_t pad = spec->width > 1 ? spec->width - 1 : 0;

	if (!(spec->flags & KV_LEFT))
		put_fill(out, ' ', pad);
	sb_putc(out, (char)c);
	if (spec->flags & KV_LEFT)
		put_fill(out, ' ', pad);
}

void kv_string(struct tb_strbuf *out, const char *s, size_t max, const struct kv_spec *spec)
{
	size_t lim = max, n;
	const char *nul;

	if (spec->precision >= 0 && (size_t)spec->precision < lim)
		lim = (size_t)spec->precision;
	nul = memchr(s, '\0', lim);
	n = nul ? (size_t)(nul - s) : lim;
	if (spec->width > 0 && (size_t)spec->width > n && !(spec->flags & KV_LEFT))
		put_fill(out, ' ', spec->width - (int64_t)n);
	sb_put(out, s, n);
	if (spec->width > 0 && (size_t)spec->width > n && (spec->flags & KV_LEFT))
		put_fill(out, ' ', spec->width - (int64_t)n);
}

void kv_string_in_place(struct tb_strbuf *out, size_t start, const struct kv_spec *spec)
{
	size_t len, pad;
	const char *nul;

	if (out->oom || start > out->len)
		return;
	len = out->len - start;
	nul = len ? memchr(out->buf + start, '\0', len) : NULL;
	if (nul)
		len = (size_t)(nul - (out->buf + start));
	if (spec->precision >= 0 && (size_t)spec->precision < len)
		len = (size_t)spec->precision;
	out->len = start + len;
	if (spec->width <= 0 || (size_t)spec->width <= len)
		return;
	pad = (size_t)spec->width - len;
	if (pad > KV_PAD_MAX)
		pad = KV_PAD_MAX;
	if (spec->flags & KV_LEFT) {
		put_fill(out, ' ', (int64_t)pad);
		return;
	}
	if (!sb_grow(out, pad))
		return;
	memmove(out->buf + start + pad, out->buf + start, len);
	memset(out->buf + start, ' ', pad);
	out->len += pad;
}

void kv_error_string(struct tb_strbuf *out, const char *s, const struct kv_spec *spec)
{
	struct kv_spec es = *spec;

	if (es.precision == -1)
		es.precision = 16; /* 2 * sizeof(void *) */
	kv_string(out, s, strlen(s), &es);
}

/* The kernel's IS_ERR_VALUE: the top MAX_ERRNO (4095) addresses. */
static bool is_err_value(uint64_t v)
{
	return v >= (uint64_t)-4095;
}

void kv_string_at(struct tb_strbuf *out, uint64_t addr, const struct kv_spec *spec,
		  const struct tb_print_env *env)
{
	const char *s;

	if (addr == 0) {
		kv_error_string(out, "(null)", spec);
		return;
	}
	if (addr < 4096 || is_err_value(addr)) {
		kv_error_string(out, "(efault)", spec);
		return;
	}
	s = env && env->kernel_string ? env->kernel_string(env->ctx, addr) : NULL;
	if (s) {
		kv_string(out, s, strlen(s), spec);
		return;
	}
	/*
	 * A string in kernel memory the trace does not carry: the address,
	 * as 0x<hex> inside the field, so it is visibly not the text.
	 */
	size_t start = out->len;
	sb_put(out, "0x", 2);
	kv_hex(out, addr, false);
	kv_string_in_place(out, start, spec);
}

/* ------------------------------------------------------------ pointers */

enum kv_ptr_use kv_pointer_use(const struct kv_spec *spec)
{
	switch (spec->ext[0]) {
	case '\0':
	case 'x':
	case 'K':
	case 'S':
	case 's':
	case 'B':
	case 'F': /* no longer a symbol directive: a plain pointer since 5.x */
		return KV_PTR_VALUE;
	case 'h':
	case 'b':
	case 'M':
	case 'm':
	case 'I':
	case 'i':
	case 'U':
	case 'N':
	case 'a':
		return KV_PTR_MEMORY;
	default:
		/* %pe wants errno names; the rest dereference kernel objects. */
		return KV_PTR_UNKNOWN;
	}
}

size_t kv_pointer_bytes(const struct kv_spec *spec)
{
	const char *e = spec->ext;

	switch (e[0]) {
	case 'h':
		if (spec->width == 0)
			return 0;
		return spec->width > 0 ? (size_t)(spec->width < 64 ? spec->width : 64) : 1;
	case 'b':
		return spec->width > 0 ? ((size_t)spec->width + 7) / 8 : 0;
	case 'M':
	case 'm':
		return 6;
	case 'I':
	case 'i':
		return e[1] == '4' ? 4 : e[1] == '6' ? 16 : e[1] == 'S' ? 2 : 0;
	case 'U':
		return 16;
	case 'N':
		return e[1] == 'F' ? 8 : 0;
	case 'a':
		return 8;
	default:
		return 0;
	}
}

static uint64_t load_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static char *hex_byte(char *d, uint8_t b, bool upper)
{
	const char *set = upper ? kv_hex_upper : kv_hex_lower;

	*d++ = set[b >> 4];
	*d++ = set[b & 15];
	return d;
}

/* %ph, %phC, %phD, %phN: width bytes (1 without a width, 64 at most). */
static void hex_string(struct tb_strbuf *out, const uint8_t *p, const struct kv_spec *spec)
{
	char sep = spec->ext[1] == 'C' ? ':' : spec->ext[1] == 'D' ? '-' : spec->ext[1] == 'N' ? 0 : ' ';
	size_t n = kv_pointer_bytes(spec);
	char *d = sb_room(out, 3 * n + 1), *start = d;

	if (!d)
		return;
	for (size_t i = 0; i < n; i++) {
		d = hex_byte(d, p[i], false);
		if (sep && i + 1 != n)
			*d++ = sep;
	}
	sb_added(out, (size_t)(d - start));
}

/* One byte in decimal, optionally padded to 3 digits with zeros. */
static char *dec_byte(char *d, uint8_t b, bool zeros)
{
	if (zeros || b >= 100)
		*d++ = (char)('0' + b / 100);
	if (zeros || b >= 10)
		*d++ = (char)('0' + b / 10 % 10);
	*d++ = (char)('0' + b % 10);
	return d;
}

/* a.b.c.d; 'h' and 'l' take the bytes in reverse (host order on this LE machine). */
static char *ip4_text(char *d, const uint8_t *a, bool zeros, char order)
{
	bool reverse = order == 'h' || order == 'l';

	for (int i = 0; i < 4; i++) {
		d = dec_byte(d, a[reverse ? 3 - i : i], zeros);
		if (i < 3)
			*d++ = '.';
	}
	return d;
}

/* Eight 16-bit groups in full, with colons ('I') or without ('i'). */
static char *ip6_full(char *d, const uint8_t *a, bool colons)
{
	for (int i = 0; i < 16; i++) {
		d = hex_byte(d, a[i], false);
		if (colons && (i & 1) && i != 15)
			*d++ = ':';
	}
	return d;
}

/* A 16-bit group in hex without leading zeros. */
static char *hex_group(char *d, unsigned w)
{
	bool started = false;

	for (int shift = 12; shift >= 0; shift -= 4) {
		unsigned nib = (w >> shift) & 15;
		if (nib || started || shift == 0) {
			*d++ = kv_hex_lower[nib];
			started = true;
		}
	}
	return d;
}

/*
 * RFC 5952 as the kernel writes it: the longest run of two or more zero
 * groups becomes "::" (the first of equal runs), and a v4-mapped or ISATAP
 * address ends in dotted decimal.
 */
static char *ip6_compressed(char *d, const uint8_t *a)
{
	unsigned w[8];
	int groups = 8, best = -1, best_len = 1;
	bool v4mapped, isatap, need_colon = false;

	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	v4mapped = !w[0] && !w[1] && !w[2] && !w[3] && !w[4] && w[5] == 0xffff;
	isatap = ((w[4] | 0x0200) == 0x0200) && w[5] == 0x5efe;
	if (v4mapped || isatap)
		groups = 6;
	for (int i = 0; i < groups; i++) {
		int run = 0;
		while (i + run < groups && w[i + run] == 0)
			run++;
		if (run > best_len) {
			best_len = run;
			best = i;
		}
	}
	for (int i = 0; i < groups; i++) {
		if (i == best) {
			if (need_colon || i == 0)
				*d++ = ':';
			*d++ = ':';
			need_colon = false;
			i += best_len - 1;
			continue;
		}
		if (need_colon)
			*d++ = ':';
		d = hex_group(d, w[i]);
		need_colon = true;
	}
	if (groups == 6) {
		if (need_colon)
			*d++ = ':';
		d = ip4_text(d, a + 12, false, 0);
	}
	return d;
}

/* The text of d[0..n) through %s rules (the kernel's string_nocheck of a buffer it built). */
static void put_built(struct tb_strbuf *out, const char *d, size_t n, const struct kv_spec *spec)
{
	kv_string(out, d, n, spec);
}

/* Number n appended to text d through the directive's own spec (as the kernel's sockaddr code does). */
static char *spec_number(char *d, char *end, uint64_t v, const struct kv_spec *spec)
{
	struct tb_strbuf tmp = {0};
	size_t n;

	kv_number(&tmp, v, spec);
	n = tmp.len < (size_t)(end - d) ? tmp.len : (size_t)(end - d);
	if (n)
		memcpy(d, tmp.buf, n);
	sb_free(&tmp);
	return d + n;
}

static bool ip_sockaddr(struct tb_strbuf *out, const uint8_t *p, size_t n, const struct kv_spec *spec)
{
	char text[160], *d = text, *end = text + sizeof(text) - 24;
	bool has_p = false, has_s = false, has_f = false, has_c = false, v6;
	char order = 0;
	uint16_t family;
	struct kv_spec num = *spec;

	if (n < 2)
		return false;
	memcpy(&family, p, 2);
	if (family != 2 && family != 10) {
		kv_error_string(out, "(einval)", spec);
		return true;
	}
	v6 = family == 10;
	if (n < (v6 ? 28u : 8u))
		return false;
	for (const char *e = spec->ext + 2; is_alpha(*e); e++) {
		has_p |= *e == 'p';
		has_s |= *e == 's' && v6;
		has_f |= *e == 'f' && v6;
		has_c |= *e == 'c' && v6;
		if (!v6 && (*e == 'h' || *e == 'l' || *e == 'n' || *e == 'b'))
			order = *e;
	}
	num.base = 10;
	if (!v6) {
		d = ip4_text(d, p + 4, spec->ext[0] == 'i', order);
	} else {
		if (has_p || has_s || has_f)
			*d++ = '[';
		if (spec->ext[0] == 'I' && has_c)
			d = ip6_compressed(d, p + 8);
		else
			d = ip6_full(d, p + 8, spec->ext[0] == 'I');
		if (has_p || has_s || has_f)
			*d++ = ']';
	}
	if (has_p) {
		*d++ = ':';
		d = spec_number(d, end, (uint64_t)p[2] << 8 | p[3], &num);
	}
	if (has_f) {
		*d++ = '/';
		/* network order, the flow label bits only (IPV6_FLOWINFO_MASK) */
		d = spec_number(d, end,
				((uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | p[7]) &
					0x0fffffff,
				&num);
	}
	if (has_s) {
		*d++ = '%';
		d = spec_number(d, end, load_le(p + 24, 4), &num);
	}
	put_built(out, text, (size_t)(d - text), spec);
	return true;
}

static bool ip_address(struct tb_strbuf *out, const uint8_t *p, size_t n, const struct kv_spec *spec)
{
	char text[64], *d = text;
	const char *e = spec->ext;

	switch (e[1]) {
	case '4':
		if (n < 4)
			return false;
		d = ip4_text(d, p, e[0] == 'i', e[2]);
		break;
	case '6':
		if (n < 16)
			return false;
		d = e[0] == 'I' && e[2] == 'c' ? ip6_compressed(d, p) : ip6_full(d, p, e[0] == 'I');
		break;
	case 'S':
		return ip_sockaddr(out, p, n, spec);
	default:
		kv_error_string(out, e[0] == 'i' ? "(%pi?)" : "(%pI?)", spec);
		return true;
	}
	put_built(out, text, (size_t)(d - text), spec);
	return true;
}

static void mac_address(struct tb_strbuf *out, const uint8_t *p, const struct kv_spec *spec)
{
	char text[18], *d = text;
	bool reverse = spec->ext[1] == 'R', colons = spec->ext[0] == 'M';
	char sep = spec->ext[1] == 'F' ? '-' : ':';

	for (int i = 0; i < 6; i++) {
		d = hex_byte(d, p[reverse ? 5 - i : i], false);
		if (colons && i != 5)
			*d++ = sep;
	}
	put_built(out, text, (size_t)(d - text), spec);
}

static void uuid(struct tb_strbuf *out, const uint8_t *p, const struct kv_spec *spec)
{
	static const uint8_t guid_order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
	char v = spec->ext[1], text[36], *d = text;
	bool upper = v == 'B' || v == 'L', guid = v == 'l' || v == 'L';

	for (int i = 0; i < 16; i++) {
		d = hex_byte(d, p[guid ? guid_order[i] : i], upper);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*d++ = '-';
	}
	put_built(out, text, (size_t)(d - text), spec);
}

/* "0x" and 2 * size zero-padded digits: the kernel's special_hex_number(). */
static void special_hex(struct tb_strbuf *out, uint64_t v, int size)
{
	struct kv_spec s = {.kind = KV_NUMBER, .flags = KV_SPECIAL | KV_SMALL | KV_ZEROPAD,
			    .base = 16, .size = 8, .width = 2 + 2 * size, .precision = -1};

	kv_number(out, v, &s);
}

static bool bit_at(const uint8_t *p, size_t bit)
{
	return (p[bit / 8] >> (bit % 8)) & 1;
}

void kv_bitmap(struct tb_strbuf *out, const uint8_t *p, size_t nbits, bool as_list)
{
	if (as_list) {
		bool first = true;
		for (size_t i = 0; i < nbits;) {
			size_t lo, hi;
			if (!bit_at(p, i)) {
				i++;
				continue;
			}
			lo = hi = i;
			while (hi + 1 < nbits && bit_at(p, hi + 1))
				hi++;
			if (!first)
				sb_putc(out, ',');
			first = false;
			kv_decimal(out, lo, false);
			if (hi > lo) {
				sb_putc(out, '-');
				kv_decimal(out, hi, false);
			}
			i = hi + 1;
		}
		return;
	}
	/* 32-bit chunks from the top, the first one only as wide as the bits above the last full chunk. */
	size_t chunk = nbits % 32 ? nbits % 32 : 32;
	for (int64_t lo = (int64_t)((nbits + 31) / 32 * 32) - 32; lo >= 0; lo -= 32) {
		uint32_t v = 0;
		struct kv_spec s = {.kind = KV_NUMBER, .flags = KV_SMALL | KV_ZEROPAD, .base = 16,
				    .size = 8, .precision = -1};
		for (size_t b = 0; b < chunk; b++)
			v |= (uint32_t)bit_at(p, (size_t)lo + b) << b;
		if (lo != (int64_t)((nbits + 31) / 32 * 32) - 32)
			sb_putc(out, ',');
		s.width = (int32_t)((chunk + 3) / 4);
		kv_number(out, v, &s);
		chunk = 32;
	}
}

bool kv_pointer_memory(struct tb_strbuf *out, const uint8_t *p, size_t n, const struct kv_spec *spec)
{
	const char *e = spec->ext;

	if (e[0] != 'I' && e[0] != 'i' && n < kv_pointer_bytes(spec))
		return false;
	switch (e[0]) {
	case 'h':
		hex_string(out, p, spec);
		return true;
	case 'b':
		kv_bitmap(out, p, spec->width > 0 ? (size_t)spec->width : 0, e[1] == 'l');
		return true;
	case 'M':
	case 'm':
		mac_address(out, p, spec);
		return true;
	case 'I':
	case 'i':
		return ip_address(out, p, n, spec);
	case 'U':
		uuid(out, p, spec);
		return true;
	case 'N':
		if (e[1] == 'F')
			special_hex(out, load_le(p, 8), 8);
		else
			kv_error_string(out, "(%pN?)", spec);
		return true;
	case 'a':
		special_hex(out, load_le(p, 8), 8);
		return true;
	default:
		return false;
	}
}

/* "0x" and v in hex at d (room for 18 + 8 bytes); returns the end. */
static char *put_0x(char *d, uint64_t v)
{
	*d++ = '0';
	*d++ = 'x';
	return kv_put_hex(d, v, kv_hex_len(v), false);
}

uint64_t tb_print_env_number(void)
{
	/* Only uniqueness matters: relaxed, pairs with nothing. */
	static _Atomic uint64_t last;

	return atomic_fetch_add_explicit(&last, 1, memory_order_relaxed) + 1;
}

_Thread_local struct kv_symbol_memo kv_symbol_memo;

const char *kv_symbol_lookup(const struct tb_print_env *env, uint64_t addr, uint64_t *start, uint64_t *size,
			     const char **module)
{
	struct kv_symbol_memo got = {.memo_id = env->memo_id, .addr = addr,
				     .version = env->memo_id ? *env->symbols_version : 0};

	got.name = env->symbol(env->ctx, addr, &got.start, &got.size, &got.module);
	if (got.name && env->memo_id) /* an address without a symbol is not kept: rare */
		kv_symbol_memo = got;
	if (start)
		*start = got.start;
	if (size)
		*size = got.size;
	if (module)
		*module = got.module;
	return got.name;
}

void kv_symbol(struct tb_strbuf *out, uint64_t addr, bool with_offset, bool backtrace,
	       const struct tb_print_env *env)
{
	uint64_t look = backtrace ? addr - 1 : addr, start = 0, size = 0;
	const char *module = NULL, *name = NULL;
	size_t name_len, module_len;
	char *d, *begin;

	if (env && env->symbol)
		name = kv_symbol_at(env, look, &start, &size, &module);
	if (!name) {
		if ((d = sb_room(out, 26)) != NULL)
			sb_added(out, (size_t)(put_0x(d, addr) - d));
		return;
	}
	/* One piece of room for it all: name, "+0xOFF/0xSIZE", " [module]". */
	name_len = strlen(name);
	module_len = module ? strlen(module) : 0;
	d = begin = sb_room(out, name_len + module_len + 64);
	if (!d)
		return;
	memcpy(d, name, name_len);
	d += name_len;
	if (with_offset) {
		/* "%#lx": the kernel's # prints 0x0 for a zero offset. */
		*d++ = '+';
		d = put_0x(d, addr - start);
		if (size) {
			*d++ = '/';
			d = put_0x(d, size);
		}
	}
	if (module) {
		*d++ = ' ';
		*d++ = '[';
		memcpy(d, module, module_len);
		d += module_len;
		*d++ = ']';
	}
	sb_added(out, (size_t)(d - begin));
}

void kv_pointer_value(struct tb_strbuf *out, uint64_t v, const struct kv_spec *spec,
		      const struct tb_print_env *env)
{
	char c = spec->ext[0];

	if (c == 'S' || c == 's' || c == 'B') {
		size_t start = out->len;
		kv_symbol(out, v, c != 's', c == 'B', env);
		/* Without a width or precision the text stays as it is: C strings and digits hold no NUL. */
		if (spec->width > 0 || spec->precision >= 0)
			kv_string_in_place(out, start, spec);
		return;
	}
	/* The kernel's pointer_string(): hex, 16 zero-padded digits unless a width says otherwise. */
	struct kv_spec s = *spec;
	s.base = 16;
	s.flags |= KV_SMALL;
	s.flags &= (uint8_t)~KV_SIGN;
	if (s.width == -1) {
		s.width = 16;
		s.flags |= KV_ZEROPAD;
	}
	kv_number(out, v, &s);
}
