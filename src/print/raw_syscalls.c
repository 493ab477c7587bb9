// SPDX-License-Identifier: MIT
/*
 * raw_syscalls.c - the two raw_syscalls events' print fmts, written by hand
 * (raw_syscalls.h says when and why).
 *
 * The numbers follow the kernel's vsprintf for these directives: %ld is
 * the signed decimal with a '-' and no padding, %lx the unsigned hex in
 * lower case, no "0x", no padding.  A line without its name is at most
 * "NR -" + 19 + " (" + 6 * 16 + 5 * ", " + ")\n" (133 bytes), and a hex number's
 * 16 bytes written whole (put_hex) end before RAW_SYSCALLS_LINE_MAX: its
 * room is asked for once.
 */
#include <string.h>

#include "kvsprintf.h"
#include "raw_syscalls.h"

#define ENTER_FMT "\"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], REC->args[1], " \
		  "REC->args[2], REC->args[3], REC->args[4], REC->args[5]"
#define EXIT_FMT "\"NR %ld = %ld\", REC->id, REC->ret"

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The digits of v: out of line, so that the short numbers' path saves no registers. */
static __attribute__((noinline)) char *put_long_digits(char *p, uint64_t v)
{
	return kv_put_dec(p, v, kv_dec_len(v));
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The text of 0..999 as one word each: its one to three digits in memory
 * order in the low bytes, their count in the top byte (written too, and
 * written over by what follows).  Made by the compiler, so that a short
 * number costs one load.
 */
#define SHORT_DEC(n)                                                                                  \
	((n) < 10    ? (uint32_t)('0' + (n)) | 1u << 24                                               \
	 : (n) < 100 ? (uint32_t)('0' + (n) / 10) | (uint32_t)('0' + (n) % 10) << 8 | 2u << 24           \
		     : (uint32_t)('0' + (n) / 100) | (uint32_t)('0' + (n) / 10 % 10) << 8 |               \
			   (uint32_t)('0' + (n) % 10) << 16 | 3u << 24)
#define SHORT_DEC10(n) SHORT_DEC((n) + 0), SHORT_DEC((n) + 1), SHORT_DEC((n) + 2), SHORT_DEC((n) + 3), \
		       SHORT_DEC((n) + 4), SHORT_DEC((n) + 5), SHORT_DEC((n) + 6), SHORT_DEC((n) + 7),   \
		       SHORT_DEC((n) + 8), SHORT_DEC((n) + 9)
#define SHORT_DEC100(n) SHORT_DEC10((n) + 0), SHORT_DEC10((n) + 10), SHORT_DEC10((n) + 20),              \
			SHORT_DEC10((n) + 30), SHORT_DEC10((n) + 40), SHORT_DEC10((n) + 50),             \
			SHORT_DEC10((n) + 60), SHORT_DEC10((n) + 70), SHORT_DEC10((n) + 80), SHORT_DEC10((n) + 90)

static const uint32_t short_dec[1000] = {
	SHORT_DEC100(0),   SHORT_DEC100(100), SHORT_DEC100(200), SHORT_DEC100(300), SHORT_DEC100(400),
	SHORT_DEC100(500), SHORT_DEC100(600), SHORT_DEC100(700), SHORT_DEC100(800), SHORT_DEC100(900),
};
#endif

/*
 * %ld of v (4 bytes written at p at least: the room asked for covers
 * them).  Syscall numbers and most return values have one to three
 * digits: those are a word of the table above.
 */
static inline char *put_long(char *p, uint64_t v)
{
	if ((int64_t)v < 0) {
		*p++ = '-';
		v = 0 - v;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (v < 1000) {
		uint32_t word = short_dec[v];
		memcpy(p, &word, 4);
		return p + (word >> 24);
	}
#endif
	return put_long_digits(p, v);
}

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>

/*
 * The 16 lower-case hex digits of v at p, most significant first, in one
 * go: the bytes put most significant first, each split into its two
 * nibbles side by side (high, low), then 0-9 made ASCII and a-f made so
 * by the bytes of more than 9.  On every argument of every sys_enter.
 */
static void hex16(char *p, uint64_t v)
{
	__m128i bytes = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i nibble = _mm_set1_epi8(0x0f);
	__m128i digits = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), nibble),
					   _mm_and_si128(bytes, nibble));
	__m128i letters = _mm_and_si128(_mm_cmpgt_epi8(digits, _mm_set1_epi8(9)),
					_mm_set1_epi8('a' - '0' - 10));

	_mm_storeu_si128((__m128i *)(void *)p,
			 _mm_add_epi8(_mm_add_epi8(digits, _mm_set1_epi8('0')), letters));
}
#else
/*
 * The 8 lower-case hex digits of x, most significant first, as one 64-bit
 * word in memory order: every nibble spread to a byte of its own, then
 * 0-9 and a-f made ASCII in all eight bytes at once (a byte of 10 or more
 * carries into bit 4 when 6 is added: those get 'a' - '0' - 10 more).
 */
static uint64_t hex8(uint32_t x)
{
	uint64_t v = x, over;

	v = (v | v << 16) & 0x0000ffff0000ffffull;
	v = (v | v << 8) & 0x00ff00ff00ff00ffull;
	v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full; /* byte i: nibble i, the least significant first */
	over = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
	v += 0x3030303030303030ull + over * ('a' - '0' - 10);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v); /* the most significant digit at the lowest address */
#endif
	return v;
}

/* The 16 lower-case hex digits of v at p, most significant first. */
static void hex16(char *p, uint64_t v)
{
	uint64_t hi = hex8((uint32_t)(v >> 32)), lo = hex8((uint32_t)v);

	memcpy(p, &hi, 8);
	memcpy(p + 8, &lo, 8);
}
#endif

/*
 * %lx of v, 16 bytes written at p (the room asked for covers them) and the
 * digits' end returned: v shifted so its first significant digit leads,
 * the zeros after the digits are written over by what follows.  From the
 * highest set bit top (0 for 0): top / 4 + 1 digits, so a shift of
 * 60 - 4 * (top / 4), which is ~top & 60 as top is below 64.
 */
static char *put_hex(char *p, uint64_t v)
{
	unsigned top = 63u ^ (unsigned)__builtin_clzll(v | 1);

	hex16(p, v << (~top & 60u));
	return p + top / 4 + 1;
}

/*
 * "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\n" at p (room: RAW_SYSCALLS_LINE_MAX):
 * id at 8, args[6] at 16; returns the end.
 */
static char *enter_line(char *p, const uint8_t *rec)
{
	memcpy(p, "NR ", 3);
	p = put_long(p + 3, load64(rec + 8));
	memcpy(p, " (", 2);
	p += 2;
	/* unrolled: the loop's own counting was a sixth of each argument's cost */
#pragma GCC unroll 6
	for (int i = 0; i < 6; i++) {
		p = put_hex(p, load64(rec + 16 + 8 * i));
		memcpy(p, ", ", 2); /* the last one is written over */
		p += 2;
	}
	memcpy(p - 2, ")\n", 2);
	return p;
}

/* "NR %ld = %ld\n" at p (room: RAW_SYSCALLS_LINE_MAX): id at 8, ret at 16; returns the end. */
static char *exit_line(char *p, const uint8_t *rec)
{
	memcpy(p, "NR ", 3);
	p = put_long(p + 3, load64(rec + 8));
	memcpy(p, " = ", 3);
	p = put_long(p + 3, load64(rec + 16));
	*p++ = '\n';
	return p;
}

/* "NAME: " (n bytes) when named, then line's text. */
static void print_line(const uint8_t *rec, bool named, const char *name, size_t n, raw_syscalls_line_fn *line,
		       struct tb_strbuf *out)
{
	char *start = sb_room(out, n + RAW_SYSCALLS_LINE_MAX), *p = start;

	if (!start)
		return;
	if (named) {
		memcpy(p, name, n);
		p += n;
	}
	sb_added(out, (size_t)(line(p, rec) - start));
}

/* "sys_enter: " when named, then enter_line(). */
static void print_enter(const uint8_t *rec, bool named, struct tb_strbuf *out)
{
	print_line(rec, named, "sys_enter: ", 11, enter_line, out);
}

/* "sys_exit: " when named, then exit_line(). */
static void print_exit(const uint8_t *rec, bool named, struct tb_strbuf *out)
{
	print_line(rec, named, "sys_exit: ", 10, exit_line, out);
}

raw_syscalls_line_fn *raw_syscalls_line(raw_syscalls_fn *printer)
{
	return printer == print_enter ? enter_line : printer == print_exit ? exit_line : NULL;
}

/* The field name as declared: at offset, size bytes, signed or not. */
static bool field_is(const struct tb_format *f, const char *name, uint32_t offset, uint32_t size,
		     bool is_signed)
{
	const struct tb_schema_field *fl = tb_format_field(f, name);

	return fl && fl->kind == TB_SCHEMA_FIELD_STATIC && fl->offset == offset && fl->size == size &&
	       fl->is_signed == is_signed;
}

/* The print fmt is exactly text (the format file may end its line with blanks). */
static bool print_fmt_is(const struct tb_format *f, const char *text)
{
	size_t n = strlen(text);

	if (!f->print_fmt || f->print_fmt_len < n || memcmp(f->print_fmt, text, n) != 0)
		return false;
	for (size_t i = n; i < f->print_fmt_len; i++)
		if (f->print_fmt[i] != ' ' && f->print_fmt[i] != '\t' && f->print_fmt[i] != '\n')
			return false;
	return true;
}

raw_syscalls_fn *raw_syscalls_printer(const char *system, const struct tb_format *f)
{
	if (!system || strcmp(system, "raw_syscalls") != 0 || !field_is(f, "id", 8, 8, true))
		return NULL;
	if (!strcmp(f->name, "sys_enter") && field_is(f, "args", 16, 48, false) &&
	    print_fmt_is(f, ENTER_FMT))
		return print_enter;
	if (!strcmp(f->name, "sys_exit") && field_is(f, "ret", 16, 8, true) && print_fmt_is(f, EXIT_FMT))
		return print_exit;
	return NULL;
}
