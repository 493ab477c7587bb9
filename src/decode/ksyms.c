// SPDX-License-Identifier: MIT
/*
 * ksyms.c - our own kallsyms table: parsed once, strictly, into an array
 * sorted by address, and looked up by binary search.
 *
 * The live /proc/kallsyms has some 120 000-200 000 lines (5-9 MB), and a
 * report wants its symbols before the first line, so parsing is one pass
 * over one copy of the text: names stay where they are in the copy (their
 * ends overwritten with NUL), and the kernel's own order is already sorted
 * by address for the kernel image, so the sort is skipped unless module
 * symbols (listed per module, in symbol-table order) break it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diag.h"
#include "ksyms.h"

#define KSYM_NAME_MAX 512   /* KSYM_NAME_LEN: the longest name, NUL included */
#define MODULE_NAME_MAX 56  /* MODULE_NAME_LEN */
#define NO_MODULE UINT32_MAX
#define TEXT_PAD 16 /* zero bytes after the copy: the end of the text, and room for word reads */

struct ksym_entry {
	uint64_t addr;
	uint32_t name;   /* offset of the name in text */
	uint32_t module; /* offset of the module name in text, NO_MODULE for the image */
	uint32_t order;  /* line number among the good lines: the tie-breaker */
	char type;
};

/* The kernel image's ranges that kallsyms_lookup() resolves (is_ksym_addr). */
struct image_bounds {
	uint64_t stext, etext, sinittext, einittext, end;
	bool have_stext, have_etext, have_sinittext, have_einittext, have_end;
};

struct tb_ksyms {
	char *buf;  /* what is freed: the text starts at some offset into it */
	char *text; /* the copy names point into */
	struct ksym_entry *v;
	size_t n;
	struct image_bounds image;
};

/*
 * Memory for the table's two big arrays.  Touching fresh pages is half the
 * cost of a parse (the kernel zeroes each 4 KiB page on its first fault),
 * so arrays of several MB ask for transparent huge pages: a handful of
 * faults instead of two thousand.  Freed with free().
 */
#define HUGE_PAGE (2u << 20)

static void *alloc_big(size_t size)
{
	void *p;

	if (size < HUGE_PAGE)
		return malloc(size);
	p = aligned_alloc(HUGE_PAGE, (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
	if (p)
		madvise(p, size, MADV_HUGEPAGE); /* a hint: without it the pages are only smaller */
	return p;
}

/* ------------------------------------------------------------- parsing */

struct parser {
	const char *file;
	tb_diag_fn *diag;
	void *diag_ctx;
	unsigned long bad;
};

static void bad_line(struct parser *p, size_t offset, const char *reason)
{
	struct tb_diag d = {.file = p->file};

	p->bad++;
	if (!p->diag)
		return;
	diag_fail(&d, offset, "kallsyms line: %s", reason);
	p->diag(p->diag_ctx, &d);
}

/* 1 + the value of a hex digit, 0 for any other byte. */
static const unsigned char hex_plus_one[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int hex_digit(char c)
{
	return (int)hex_plus_one[(unsigned char)c] - 1;
}

static bool is_type_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '?';
}

/* A byte that may appear in a symbol or module name: printable, no blank. */
static bool is_name_byte(char c)
{
	return (unsigned char)c > ' ' && c != 0x7f;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/*
 * The first byte at or after p that cannot be in a name.  Names are most
 * of the file, so they are checked eight bytes at a time: a word holds
 * such a byte iff some byte is below 0x21 (the classic "has less than"
 * test, exact for a yes/no answer) or equals 0x7f (a zero after XOR).  The
 * text is padded with zeros, so the word read past its end is harmless.
 */
static char *name_end(char *p)
{
	for (;;) {
		uint64_t w, del, stop;
		memcpy(&w, p, sizeof(w));
		del = w ^ (0x7f * ONES);
		stop = (((w - 0x21 * ONES) & ~w) | ((del - ONES) & ~del)) & HIGHS;
		if (stop) /* the lowest flag is exact (little endian: the first byte) */
			return p + __builtin_ctzll(stop) / 8;
		p += sizeof(w);
	}
}

/* High bit of each byte of w (all below 0x80) set where that byte is in [lo, hi]. */
static uint64_t bytes_in(uint64_t w, unsigned lo, unsigned hi)
{
	uint64_t at_least = w + (0x80 - lo) * ONES; /* no carry out of a byte: each is below 0x80 */
	uint64_t above = w + (0x7f - hi) * ONES;

	return at_least & ~above & HIGHS;
}

/*
 * Eight hex digits in the eight bytes of w (the first digit in the lowest
 * byte) as a number, or false if any byte is not one: the bytes checked
 * and turned into nibbles all at once, the nibbles then packed pairwise.
 */
static bool eight_hex_digits(uint64_t w, uint32_t *v)
{
	uint64_t n;

	if ((w & HIGHS) || (bytes_in(w, '0', '9') | bytes_in(w | 0x20 * ONES, 'a', 'f')) != HIGHS)
		return false;
	/* '0'-'9' have bit 6 clear, 'a'-'f' and 'A'-'F' set and 1-6 in the low nibble: +9 makes 10-15. */
	n = (w & 0x0f * ONES) + ((w >> 6) & ONES) * 9;
	n = __builtin_bswap64(n); /* the last digit in the lowest byte */
	n = (n | n >> 4) & 0x00ff00ff00ff00ffull;
	n = (n | n >> 8) & 0x0000ffff0000ffffull;
	*v = (uint32_t)(n | n >> 16);
	return true;
}

/*
 * The kernel prints every address as 16 hex digits and a space: read those
 * eight at a time.  False (nothing read) for anything else.
 */
static bool sixteen_hex_digits(const char *p, uint64_t *addr)
{
	uint64_t hi_w, lo_w;
	uint32_t hi, lo;

	memcpy(&hi_w, p, sizeof(hi_w));
	memcpy(&lo_w, p + 8, sizeof(lo_w));
	if (!eight_hex_digits(hi_w, &hi) || !eight_hex_digits(lo_w, &lo) || p[16] != ' ')
		return false;
	*addr = (uint64_t)hi << 32 | lo;
	return true;
}

/* Why the byte at s (before end) ends a field where it does. */
static const char *bad_byte(const char *s, const char *end, const char *reason)
{
	if (s < end && *s == '\0')
		return "NUL byte in the line";
	return s < end && *s == '\r' ? "carriage return in the line" : reason;
}

/*
 * One line starting at s (text ends at end, where a NUL follows): fills
 * *e, NUL-terminating the name (and module) in place, and sets *eol to the
 * line's newline (or end).  Returns NULL, or the reason the line is bad
 * with *eol set to the offending byte.
 */
static const char *parse_line(char *s, const char *end, const char *text, struct ksym_entry *e,
			      char **eol)
{
	char *p = s, *name, *mod;
	uint64_t addr = 0;
	int d;

	if (end - p > 16 && sixteen_hex_digits(p, &addr)) {
		p += 16;
	} else {
		for (; p < end && (d = hex_digit(*p)) >= 0; p++) {
			if (p - s == 16)
				return *eol = p, "address longer than 16 hex digits";
			addr = addr << 4 | (uint64_t)d;
		}
	}
	if (p == s)
		return *eol = p, bad_byte(p, end, "no hex address at the start");
	if (*p != ' ')
		return *eol = p, bad_byte(p, end, "address not followed by one space");
	if (!is_type_letter(*++p))
		return *eol = p, bad_byte(p, end, "no symbol type letter");
	e->type = *p++;
	if (*p != ' ')
		return *eol = p, bad_byte(p, end, "type not followed by one space");
	name = ++p;
	p = name_end(p);
	if (p == name)
		return *eol = p, bad_byte(p, end, "no symbol name");
	if (p - name >= KSYM_NAME_MAX)
		return *eol = name, "symbol name longer than the kernel's 511 bytes";
	e->addr = addr;
	e->name = (uint32_t)(name - text);
	e->module = NO_MODULE;
	if (*p == '\n' || p == end) {
		*eol = p;
		*p = '\0';
		return NULL;
	}
	if (*p != '\t' && *p != ' ')
		return *eol = p, bad_byte(p, end, "bad byte in the symbol name");
	*p++ = '\0';
	while (*p == '\t' || *p == ' ')
		p++;
	if (*p != '[')
		return *eol = p, bad_byte(p, end, "text after the name is not a [module]");
	mod = ++p;
	while (is_name_byte(*p) && *p != ']' && *p != '[')
		p++;
	if (p == mod || *p != ']')
		return *eol = p, bad_byte(p, end, "module name not closed by ']'");
	if (p - mod >= MODULE_NAME_MAX)
		return *eol = mod, "module name longer than the kernel's 55 bytes";
	if (p[1] != '\n' && p + 1 != end)
		return *eol = p + 1, bad_byte(p + 1, end, "text after the module name");
	*p = '\0';
	*eol = p + 1;
	e->module = (uint32_t)(mod - text);
	return NULL;
}

/* Remember where the image's resolvable ranges begin and end. */
static void note_bound(struct image_bounds *b, const char *name, uint64_t addr)
{
	static const struct {
		const char *name;
		size_t value, have;
	} bounds[] = {
		{"_stext", offsetof(struct image_bounds, stext), offsetof(struct image_bounds, have_stext)},
		{"_etext", offsetof(struct image_bounds, etext), offsetof(struct image_bounds, have_etext)},
		{"_sinittext", offsetof(struct image_bounds, sinittext),
		 offsetof(struct image_bounds, have_sinittext)},
		{"_einittext", offsetof(struct image_bounds, einittext),
		 offsetof(struct image_bounds, have_einittext)},
		{"_end", offsetof(struct image_bounds, end), offsetof(struct image_bounds, have_end)},
	};

	if (name[0] != '_' || name[1] == '_')
		return; /* the bounds are "_" and a letter; most names are not */
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		bool *have = (bool *)((char *)b + bounds[i].have);
		if (!*have && !strcmp(name, bounds[i].name)) {
			*(uint64_t *)((char *)b + bounds[i].value) = addr;
			*have = true;
		}
	}
}

static int by_address(const void *a, const void *b)
{
	const struct ksym_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Module names seen so far, so that a module is one offset however often it is named. */
struct module_list {
	uint32_t *v;
	size_t n, cap;
};

/*
 * The offset of the first spelling of module name at offset at.  Modules
 * are listed one after the other, so the last one is checked first.
 */
static uint32_t intern_module(const struct tb_ksyms *k, struct module_list *m, uint32_t at)
{
	const char *name = k->text + at;

	for (size_t i = m->n; i-- > 0;)
		if (!strcmp(k->text + m->v[i], name))
			return m->v[i];
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		uint32_t *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return at; /* still correct, only slower to compare */
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = at;
	return at;
}

static int parse_all(struct tb_ksyms *k, size_t len, size_t cap, struct parser *p)
{
	struct module_list modules = {0};
	char *pos = k->text, *end = k->text + len, *eol;
	bool sorted = true, any_address = false;

	while (pos < end) {
		struct ksym_entry *e;
		const char *why;

		if (k->n == cap) {
			struct ksym_entry *v = realloc(k->v, 2 * cap * sizeof(*v));
			if (!v) {
				free(modules.v);
				return -ENOMEM;
			}
			k->v = v;
			cap *= 2;
		}
		e = &k->v[k->n];
		why = parse_line(pos, end, k->text, e, &eol);
		if (why) {
			bad_line(p, (size_t)(eol - k->text), why);
			eol = memchr(eol, '\n', (size_t)(end - eol));
			if (!eol)
				break;
		} else {
			e->order = (uint32_t)k->n;
			if (e->module == NO_MODULE)
				note_bound(&k->image, k->text + e->name, e->addr);
			else
				e->module = intern_module(k, &modules, e->module);
			sorted = sorted && (k->n == 0 || k->v[k->n - 1].addr <= e->addr);
			any_address = any_address || e->addr != 0;
			k->n++;
		}
		pos = eol + 1;
	}
	free(modules.v);
	if (!any_address)
		return -ENOENT;
	if (!sorted)
		qsort(k->v, k->n, sizeof(*k->v), by_address);
	return p->bad ? -EINVAL : 0;
}

char *tb_ksyms_text_buffer(size_t len)
{
	return len < UINT32_MAX ? alloc_big(len + TEXT_PAD) : NULL;
}

int tb_ksyms_parse_buffer(const char *file, char *buf, size_t skip, size_t len, tb_diag_fn *diag,
			  void *diag_ctx, struct tb_ksyms **out)
{
	struct parser p = {.file = file, .diag = diag, .diag_ctx = diag_ctx};
	size_t cap = len / 32 + 16; /* real lines are 30-40 bytes; grown if not enough */
	struct tb_ksyms *k;
	int rc;

	*out = NULL;
	if (len >= UINT32_MAX) {
		free(buf);
		return -EFBIG; /* name offsets are 32-bit; kallsyms is a few MB */
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(buf);
		return -ENOMEM;
	}
	k->buf = buf;
	k->text = buf + skip;
	k->v = alloc_big(cap * sizeof(*k->v));
	if (!k->v) {
		tb_ksyms_free(k);
		return -ENOMEM;
	}
	memset(k->text + len, 0, TEXT_PAD);
	rc = parse_all(k, len, cap, &p);
	if (rc == -ENOENT || rc == -ENOMEM) {
		tb_ksyms_free(k);
		return rc;
	}
	*out = k;
	return rc;
}

int tb_ksyms_parse(const char *file, const char *text, size_t len, tb_diag_fn *diag,
		   void *diag_ctx, struct tb_ksyms **out)
{
	char *buf;

	*out = NULL;
	if (len >= UINT32_MAX)
		return -EFBIG;
	if (!(buf = tb_ksyms_text_buffer(len)))
		return -ENOMEM;
	memcpy(buf, text, len);
	return tb_ksyms_parse_buffer(file, buf, 0, len, diag, diag_ctx, out);
}

void tb_ksyms_free(struct tb_ksyms *k)
{
	if (!k)
		return;
	free(k->buf);
	free(k->v);
	free(k);
}

size_t tb_ksyms_count(const struct tb_ksyms *k)
{
	return k ? k->n : 0;
}

void tb_ksyms_at(const struct tb_ksyms *k, size_t i, struct tb_ksym *out)
{
	const struct ksym_entry *e = &k->v[i];

	out->name = k->text + e->name;
	out->module = e->module == NO_MODULE ? NULL : k->text + e->module;
	out->start = e->addr;
	out->size = 0;
	out->type = e->type;
}

/* ------------------------------------------------------------- lookups */

/* Index of the last entry whose address is <= addr; -1 if none. */
static ptrdiff_t last_not_above(const struct tb_ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* Whether addr lies where the kernel resolves image symbols. */
static bool in_image_ranges(const struct image_bounds *b, uint64_t addr, bool *known)
{
	*known = b->have_stext && (b->have_end || b->have_etext);
	if (!*known)
		return false;
	if (b->have_end)
		return addr >= b->stext && addr < b->end;
	if (addr >= b->stext && addr < b->etext)
		return true;
	return b->have_sinittext && b->have_einittext && addr >= b->sinittext &&
	       addr < b->einittext;
}

/* The next higher address in e's group (image or same module); 0 if none. */
static uint64_t next_address(const struct tb_ksyms *k, size_t i)
{
	const struct ksym_entry *e = &k->v[i];

	for (size_t j = i + 1; j < k->n; j++) {
		const struct ksym_entry *x = &k->v[j];
		if (x->addr > e->addr && x->module == e->module)
			return x->addr;
		if (e->module == NO_MODULE && x->module != NO_MODULE)
			return 0; /* module space starts above the image */
	}
	return 0;
}

bool tb_ksyms_lookup(const struct tb_ksyms *k, uint64_t addr, struct tb_ksym *out)
{
	ptrdiff_t i = k ? last_not_above(k, addr) : -1;
	const struct ksym_entry *e;
	uint64_t next;
	bool known;

	if (i < 0)
		return false;
	while (i > 0 && k->v[i - 1].addr == k->v[i].addr)
		i--; /* the first alias */
	e = &k->v[i];
	next = next_address(k, (size_t)i);
	if (e->module == NO_MODULE) {
		bool inside = in_image_ranges(&k->image, addr, &known);
		if (known ? !inside : next == 0)
			return false;
	}
	out->name = k->text + e->name;
	out->module = e->module == NO_MODULE ? NULL : k->text + e->module;
	out->start = e->addr;
	out->size = next ? next - e->addr : 0;
	out->type = e->type;
	return true;
}

bool tb_ksyms_address(const struct tb_ksyms *k, const char *name, uint64_t *addr)
{
	const struct ksym_entry *best = NULL;

	for (size_t i = 0; k && i < k->n; i++) {
		const struct ksym_entry *e = &k->v[i];
		if (e->module == NO_MODULE && !strcmp(k->text + e->name, name) &&
		    (!best || e->order < best->order))
			best = e;
	}
	if (best)
		*addr = best->addr;
	return best != NULL;
}
