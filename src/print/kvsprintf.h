/* SPDX-License-Identifier: MIT */
/*
 * kvsprintf.h - the Linux kernel's vsprintf rules (lib/vsprintf.c, v6.18),
 * written anew for user space: how one printf directive is decoded and how
 * a number, a character, a string or a pointer is printed under it.
 *
 * The kernel differs from the C library in many small ways that show in the
 * trace text, and these are the rules followed here (each is a fact of
 * vsprintf.c, checked by tests/test_printfmt.c):
 *
 *  - %#x / %#o of 0 print "0x0" / "0"; a precision never hides a zero
 *    ("%.0d" of 0 is "0"); "%.d" means no precision at all.
 *  - length modifiers are hh, h, H, l, ll, L, z and t; anything else
 *    (j, q, %n, an unknown conversion) is invalid, and the kernel stops
 *    the whole output at an invalid directive.
 *  - a '*' width taken from an argument turns negative into left
 *    justification; a negative '*' precision becomes 0.
 *  - plain %p prints the address as 16 zero-padded hex digits (what the
 *    trace file prints with the hash-ptr option off, and for NULL always);
 *    with an explicit width it is space-padded instead.
 *  - %pS/%pB print "sym+0xoff/0xsize [module]", %ps "sym [module]", and
 *    "0x<hex>" when no symbol contains the address.
 *  - %s of a NULL pointer prints "(null)", of an address below 4096 or in
 *    the top 4095 bytes "(efault)".
 *
 * Everything appends to a tb_strbuf; nothing here allocates except the
 * buffer's own growth, and nothing calls the C library's printf.
 */
#ifndef TRACEBUF_KVSPRINTF_H
#define TRACEBUF_KVSPRINTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "printfmt.h"
#include "strbuf.h"


/* Flags, as the kernel's number() understands them. */
#define KV_SIGN 0x01    /* signed conversion (d, i) */
#define KV_LEFT 0x02    /* '-' */
#define KV_PLUS 0x04    /* '+' */
#define KV_SPACE 0x08   /* ' ' */
#define KV_ZEROPAD 0x10 /* '0' */
#define KV_SMALL 0x20   /* lower-case hex */
#define KV_SPECIAL 0x40 /* '#' */

/* The kernel's limits on a width and a precision (printf_spec). */
#define KV_WIDTH_MAX ((1 << 23) - 1)
#define KV_PRECISION_MAX ((1 << 15) - 1)
/*
 * We also stop padding at this many bytes: the kernel's trace_seq holds a
 * few pages at most, so a longer field never reaches the trace file, and a
 * width taken from record data must not make us write megabytes.
 */
#define KV_PAD_MAX 8192

enum kv_kind {
	KV_NUMBER,  /* d i u o x X, with size and signedness */
	KV_CHAR,    /* c */
	KV_STRING,  /* s */
	KV_POINTER, /* p and its extension letters */
	KV_PERCENT, /* %% (and %5%: the kernel prints one '%') */
	KV_INVALID, /* the kernel stops printing here */
};

struct kv_spec {
	uint8_t kind;  /* enum kv_kind */
	uint8_t flags; /* KV_* */
	uint8_t base;  /* 8, 10 or 16 */
	uint8_t size;  /* bytes of a number argument: 1, 2, 4 or 8 */
	bool width_arg;     /* '*': the width is the argument before */
	bool precision_arg; /* '.*': the precision is the argument before */
	uint8_t ext_len;    /* pointer extension letters kept in ext[] */
	char ext[15];       /* the alphanumerics after %p (NUL-terminated, truncated) */
	int32_t width;      /* -1: none */
	int32_t precision;  /* -1: none */
};

/*
 * Decode the directive at fmt[0] == '%' (fmt is NUL-terminated).  Returns
 * the number of bytes it spans, the pointer extension included; for
 * KV_INVALID the bytes up to the offending character.
 */
size_t kv_decode(const char *fmt, struct kv_spec *spec);

/* A '*' argument: width (negative: left-justified) or precision (negative: 0). */
void kv_set_width(struct kv_spec *spec, int64_t width);
void kv_set_precision(struct kv_spec *spec, int64_t precision);

/*
 * The value a number directive prints: v (the C value of the argument,
 * sign- or zero-extended to 64 bits) cut to spec->size bytes and extended
 * again by the directive's signedness, as va_arg of that type would read it.
 */
uint64_t kv_number_value(const struct kv_spec *spec, uint64_t v);
/* The kernel's number(): v already cut by kv_number_value(). */
void kv_number(struct tb_strbuf *out, uint64_t v, const struct kv_spec *spec);
/* %u / %d / %x with no flags, width or precision: the common case, fast. */
void kv_decimal(struct tb_strbuf *out, uint64_t v, bool is_signed);
void kv_hex(struct tb_strbuf *out, uint64_t v, bool upper);

/*
 * Digits written straight into a buffer with room for them: the fast
 * paths of the compiled print fmts build whole directives this way.
 */
extern const char kv_digit_pairs[201]; /* "00" .. "99" */
extern const char kv_hex_lower[17], kv_hex_upper[17];
extern const char kv_hex_pairs_lower[513], kv_hex_pairs_upper[513]; /* "00" .. "ff" */

/* Decimal digits of v, 1..20: an estimate from its bit length, corrected once. */
static inline unsigned kv_dec_len(uint64_t v)
{
	static const uint64_t floor10[20] = {
		0, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned n = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;

	return n + (v >= floor10[n]);
}

/*
 * v in n decimal digits at d, n >= kv_dec_len(v) and at most 20 (more than
 * that length gives leading zeros, as %0Nd pads); returns d + n.  Eight
 * digits at a time off the end of a long number, in 32-bit arithmetic and
 * as four independent pairs, then two at a time.  The loops count the
 * digits left to write, not the value left, so zero padding costs nothing
 * beyond its digits (a separate fill was a memset call a padded number).
 */
static inline char *kv_put_dec(char *d, uint64_t v, unsigned n)
{
	char *p = d + n;
	uint32_t x;

	while (p - d > 8) {
		uint64_t q = v / 100000000;
		uint32_t r = (uint32_t)(v - q * 100000000), hi = r / 10000, lo = r % 10000;
		p -= 8;
		memcpy(p, kv_digit_pairs + 2 * (hi / 100), 2);
		memcpy(p + 2, kv_digit_pairs + 2 * (hi % 100), 2);
		memcpy(p + 4, kv_digit_pairs + 2 * (lo / 100), 2);
		memcpy(p + 6, kv_digit_pairs + 2 * (lo % 100), 2);
		v = q;
	}
	for (x = (uint32_t)v; p - d > 2; x /= 100) {
		p -= 2;
		memcpy(p, kv_digit_pairs + 2 * (x % 100), 2);
	}
	if (p - d == 2)
		memcpy(d, kv_digit_pairs + 2 * x, 2);
	else
		d[0] = (char)('0' + x);
	return d + n;
}

/* Hex digits of v, 1..16. */
static inline unsigned kv_hex_len(uint64_t v)
{
	return (67u - (unsigned)__builtin_clzll(v | 1)) / 4;
}

/*
 * The n hex digits of v at d (n >= kv_hex_len(v), at most 16; more than
 * that length gives leading zeros), two at a time from a table of the 256
 * byte values; returns d + n.
 */
static inline char *kv_put_hex(char *d, uint64_t v, unsigned n, bool upper)
{
	const char *pairs = upper ? kv_hex_pairs_upper : kv_hex_pairs_lower;
	char *p = d + n;

	for (; p - d >= 2; v >>= 8) {
		p -= 2;
		memcpy(p, pairs + 2 * (v & 0xff), 2);
	}
	if (p > d)
		p[-1] = pairs[2 * (v & 15) + 1];
	return d + n;
}

/* %c of the argument's low byte. */
void kv_char(struct tb_strbuf *out, uint8_t c, const struct kv_spec *spec);
/* %s of s[0..max): up to the first NUL, the precision or max. */
void kv_string(struct tb_strbuf *out, const char *s, size_t max, const struct kv_spec *spec);
/*
 * %s applied to text already appended at out->buf[start..out->len): cut to
 * the precision and padded to the width in place.
 */
void kv_string_in_place(struct tb_strbuf *out, size_t start, const struct kv_spec *spec);
/* %s of a kernel address: (null), (efault) or the env's string for it. */
void kv_string_at(struct tb_strbuf *out, uint64_t addr, const struct kv_spec *spec,
		  const struct tb_print_env *env);
/* The kernel's error_string(): s cut at 16 bytes unless a precision says otherwise. */
void kv_error_string(struct tb_strbuf *out, const char *s, const struct kv_spec *spec);

/* How a %p extension takes its argument. */
enum kv_ptr_use {
	KV_PTR_VALUE,   /* prints the address itself (%p, %px, %pK, %pS, %ps, %pB) */
	KV_PTR_MEMORY,  /* prints the bytes it points at (%pI4, %pM, %pU, %ph, ...) */
	KV_PTR_UNKNOWN, /* dereferences a kernel object we do not have (%pd, %pV...) */
};
enum kv_ptr_use kv_pointer_use(const struct kv_spec *spec);
/* Bytes a KV_PTR_MEMORY directive reads (for %pIS: the largest sockaddr it may read). */
size_t kv_pointer_bytes(const struct kv_spec *spec);

/* A KV_PTR_VALUE directive of address v. */
void kv_pointer_value(struct tb_strbuf *out, uint64_t v, const struct kv_spec *spec,
		      const struct tb_print_env *env);
/*
 * A KV_PTR_MEMORY directive over the n bytes at p (n >= kv_pointer_bytes()
 * except for %pIS, which checks the family first).  Returns false, printing
 * nothing, when the bytes are too few.
 */
bool kv_pointer_memory(struct tb_strbuf *out, const uint8_t *p, size_t n,
		       const struct kv_spec *spec);

/* A thread's last answer of kv_symbol_at(), for the environment numbered memo_id. */
struct kv_symbol_memo {
	uint64_t memo_id, version, addr, start, size;
	const char *name, *module;
};

extern _Thread_local struct kv_symbol_memo kv_symbol_memo;

/* kv_symbol_at() when this thread's memo holds another address: asked, and kept. */
const char *kv_symbol_lookup(const struct tb_print_env *env, uint64_t addr, uint64_t *start, uint64_t *size,
			     const char **module);

/*
 * env->symbol(env->ctx, addr, ...), but a thread asking again for the
 * address it asked last (every trace_marker record has the same ip, a
 * caller's %pS the same few) gets the answer it got then, when env has a
 * memo_id.  start, size, module may be NULL.  The symbol tables are loaded
 * before any thread prints (schema_internal.h): *symbols_version is read
 * plainly.
 */
static inline const char *kv_symbol_at(const struct tb_print_env *env, uint64_t addr, uint64_t *start,
				       uint64_t *size, const char **module)
{
	const struct kv_symbol_memo *m = &kv_symbol_memo;

	if (!env->memo_id || m->memo_id != env->memo_id || m->addr != addr || m->version != *env->symbols_version)
		return kv_symbol_lookup(env, addr, start, size, module);
	if (start)
		*start = m->start;
	if (size)
		*size = m->size;
	if (module)
		*module = m->module;
	return m->name;
}

/* The kernel's sprint_symbol() family: "sym+0xoff/0xsize [mod]" or "0xaddr". */
void kv_symbol(struct tb_strbuf *out, uint64_t addr, bool with_offset, bool backtrace,
	       const struct tb_print_env *env);

/* The bitmap of nbits bits at p (unsigned long words, little endian) as %*pb prints it. */
void kv_bitmap(struct tb_strbuf *out, const uint8_t *p, size_t nbits, bool as_list);

#endif
