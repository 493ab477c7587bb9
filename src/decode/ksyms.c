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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diag.h"
#include "ksyms.h"
#include "util/sorted_find.h"

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

/*
 * The kernel image's ranges that kallsyms_lookup() resolves (is_ksym_addr).
 * One text may list more than one image: a trace.dat that joins a tracebuf
 * program's capture to the kernel's holds the program's table of keys
 * (tb_events_kallsyms: its own _stext and _etext) and then the kernel's
 * kallsyms, in one section.  So each _stext and _etext is kept in the order
 * listed, the n-th _stext pairing with the n-th _etext (each table lists
 * its _stext before its _etext), and an address in any pair's range
 * resolves.  The other bounds are the kernel's alone: the first listed wins.
 */
#define MAX_IMAGES 4
struct image_bounds {
	uint64_t stext[MAX_IMAGES], etext[MAX_IMAGES];
	unsigned nstext, netext;
	uint64_t sinittext, einittext, end;
	bool have_sinittext, have_einittext, have_end;
};

/*
 * Look-ups come in runs of one address (every trace_marker record has the
 * same ip), so each address hashes to a hint: the index a look-up of some
 * address found last.  A hint is only ever a guess, checked against the
 * table (hint_covers) before it is used, so any value read is safe: the
 * hints are relaxed atomics, shared by the report's worker threads, and
 * pair with nothing.  The table itself is not written after loading.
 */
#define HINT_SLOTS 256

struct tb_ksyms {
	char *buf;  /* what is freed: the text starts at some offset into it */
	char *text; /* the copy names point into */
	struct ksym_entry *v;
	size_t n;
	struct image_bounds image;
	_Atomic uint32_t hint[HINT_SLOTS];
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
	tb_problem_fn *diag;
	void *diag_ctx;
	unsigned long bad;
};

static void bad_line(struct parser *p, size_t offset, const char *reason)
{
	struct tb_problem d = {.file = p->file};

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
 * The first byte at or after p that cannot be in a name, or end.  Names
 * are most of the file, so they are checked eight bytes at a time: a word
 * holds such a byte iff some byte is below 0x21 (the classic "has less
 * than" test, exact for a yes/no answer) or equals 0x7f (a zero after
 * XOR).  Words are read only up to end (another thread may be writing
 * past it, parse_split()); the last few bytes one at a time.
 */
static char *name_end(char *p, const char *end)
{
	for (; end - p >= 8; p += 8) {
		uint64_t w, del, stop;
		memcpy(&w, p, sizeof(w));
		del = w ^ (0x7f * ONES);
		stop = (((w - 0x21 * ONES) & ~w) | ((del - ONES) & ~del)) & HIGHS;
		if (stop) /* the lowest flag is exact (little endian: the first byte) */
			return p + __builtin_ctzll(stop) / 8;
	}
	while (p < end && is_name_byte(*p))
		p++;
	return p;
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
	p = name_end(p, end);
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

/* Append n addresses to an image's list of _stext or _etext, as far as there is room. */
static void add_bound(uint64_t *list, unsigned *have, const uint64_t *addr, unsigned n)
{
	for (unsigned i = 0; i < n && *have < MAX_IMAGES; i++)
		list[(*have)++] = addr[i];
}

/* Remember where the image's resolvable ranges begin and end. */
static void note_bound(struct image_bounds *b, const char *name, uint64_t addr)
{
	static const struct {
		const char *name;
		size_t value, have;
	} bounds[] = {
		{"_sinittext", offsetof(struct image_bounds, sinittext),
		 offsetof(struct image_bounds, have_sinittext)},
		{"_einittext", offsetof(struct image_bounds, einittext),
		 offsetof(struct image_bounds, have_einittext)},
		{"_end", offsetof(struct image_bounds, end), offsetof(struct image_bounds, have_end)},
	};

	if (name[0] != '_' || name[1] == '_')
		return; /* the bounds are "_" and a letter; most names are not */
	if (!strcmp(name, "_stext")) {
		add_bound(b->stext, &b->nstext, &addr, 1);
		return;
	}
	if (!strcmp(name, "_etext")) {
		add_bound(b->etext, &b->netext, &addr, 1);
		return;
	}
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

/*
 * Lines [from, to) of the text (whole lines: to is the text's end or just
 * after a newline), parsed into a part of the table of their own.  A part
 * writes only its own lines' bytes (the NULs after names), so two parts of
 * one text may be parsed at once.
 */
struct part {
	const struct tb_ksyms *k;
	size_t from, to;
	struct ksym_entry *v;
	size_t n, cap;
	struct image_bounds image;
	struct module_list modules;
	bool sorted, any_address;
	struct parser p;
	int rc; /* 0 or -ENOMEM */
	/* A part parsed on another thread keeps its problems for the caller to tell after the first part's. */
	struct tb_ksyms_problems kept;
};

static int parse_part(struct part *pt)
{
	char *pos = pt->k->text + pt->from, *end = pt->k->text + pt->to, *eol;

	pt->sorted = true;
	while (pos < end) {
		struct ksym_entry *e;
		const char *why;

		if (pt->n == pt->cap) {
			struct ksym_entry *v = realloc(pt->v, 2 * pt->cap * sizeof(*v));
			if (!v)
				return pt->rc = -ENOMEM;
			pt->v = v;
			pt->cap *= 2;
		}
		e = &pt->v[pt->n];
		why = parse_line(pos, end, pt->k->text, e, &eol);
		if (why) {
			bad_line(&pt->p, (size_t)(eol - pt->k->text), why);
			eol = memchr(eol, '\n', (size_t)(end - eol));
			if (!eol)
				break;
		} else {
			e->order = (uint32_t)pt->n;
			if (e->module == NO_MODULE)
				note_bound(&pt->image, pt->k->text + e->name, e->addr);
			else
				e->module = intern_module(pt->k, &pt->modules, e->module);
			pt->sorted = pt->sorted && (pt->n == 0 || pt->v[pt->n - 1].addr <= e->addr);
			pt->any_address = pt->any_address || e->addr != 0;
			pt->n++;
		}
		pos = eol + 1;
	}
	return 0;
}

static void part_init(struct part *pt, const struct tb_ksyms *k, size_t from, size_t to, const struct parser *p)
{
	*pt = (struct part){.k = k, .from = from, .to = to, .p = *p, .cap = (to - from) / 32 + 16};
	pt->p.bad = 0;
}

static void part_free(struct part *pt)
{
	free(pt->v);
	free(pt->modules.v);
	free(pt->kept.v);
}

void tb_ksyms_keep_problem(void *ctx, const struct tb_problem *d)
{
	struct tb_ksyms_problems *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct tb_problem *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->lost = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *d;
}

static void *parse_part_thread(void *arg)
{
	parse_part(arg);
	return NULL;
}

/* The offset of module name at (of part b) as part a spells it first, if a names it. */
static uint32_t as_named_in(const struct tb_ksyms *k, const struct module_list *a, uint32_t at)
{
	for (size_t i = a->n; i-- > 0;)
		if (!strcmp(k->text + a->v[i], k->text + at))
			return a->v[i];
	return at;
}

/*
 * Part b's bounds after part a's: the images' _stext and _etext listed in
 * order, as if one part had read both; of the other bounds, the first listed wins.
 */
static void merge_bounds(struct image_bounds *a, const struct image_bounds *b)
{
	add_bound(a->stext, &a->nstext, b->stext, b->nstext);
	add_bound(a->etext, &a->netext, b->etext, b->netext);
	if (!a->have_sinittext && b->have_sinittext)
		a->sinittext = b->sinittext, a->have_sinittext = true;
	if (!a->have_einittext && b->have_einittext)
		a->einittext = b->einittext, a->have_einittext = true;
	if (!a->have_end && b->have_end)
		a->end = b->end, a->have_end = true;
}

/*
 * Part b appended to part a, as if one part had read both: b's line
 * numbers after a's, its modules spelled as a first spelled them.
 */
static int merge_parts(struct part *a, const struct part *b)
{
	uint32_t last_b = NO_MODULE, last_a = NO_MODULE;

	if (a->cap < a->n + b->n) {
		struct ksym_entry *v = realloc(a->v, (a->n + b->n) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = a->n + b->n;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct ksym_entry e = b->v[i];
		e.order += (uint32_t)a->n;
		if (e.module != NO_MODULE) {
			if (e.module != last_b) /* modules come in runs: one look-up per run */
				last_b = e.module, last_a = as_named_in(a->k, &a->modules, e.module);
			e.module = last_a;
		}
		a->v[a->n + i] = e;
	}
	a->sorted = a->sorted && b->sorted && (a->n == 0 || b->n == 0 || a->v[a->n - 1].addr <= b->v[0].addr);
	a->any_address = a->any_address || b->any_address;
	a->p.bad += b->p.bad;
	merge_bounds(&a->image, &b->image);
	a->n += b->n;
	return 0;
}

static size_t split_min = 1u << 20;

void tb_ksyms_set_split(size_t min_len)
{
	split_min = min_len;
}

/*
 * Where to cut len bytes of text in two for two threads: just after the
 * newline nearest past the middle; 0 (no cut) for a short text or one
 * without such a newline.
 */
static size_t split_point(const char *text, size_t len)
{
	const char *nl;

	if (len < split_min || len < 2)
		return 0;
	nl = memchr(text + len / 2, '\n', len - len / 2);
	return nl && (size_t)(nl + 1 - text) < len ? (size_t)(nl + 1 - text) : 0;
}

/*
 * Every line, into k: a long text in two halves at once, the second on a
 * thread of its own (its problems told after the first half's, so the
 * order is the text's), then joined as one pass would have made them.
 */
static int parse_all(struct tb_ksyms *k, size_t len, struct parser *p)
{
	size_t cut = split_point(k->text, len);
	struct part a, b;
	pthread_t helper;
	bool threaded = false;
	int rc = 0;

	part_init(&a, k, 0, cut ? cut : len, p);
	part_init(&b, k, cut, len, p);
	a.cap = len / 32 + 16; /* room for b's entries too: the join copies them in, the table stays in huge pages */
	a.v = alloc_big(a.cap * sizeof(*a.v));
	if (cut) {
		b.v = alloc_big(b.cap * sizeof(*b.v));
		b.p.diag = p->diag ? tb_ksyms_keep_problem : NULL;
		b.p.diag_ctx = &b.kept;
		threaded = a.v && b.v && pthread_create(&helper, NULL, parse_part_thread, &b) == 0;
	}
	if (!a.v || (cut && !b.v))
		rc = -ENOMEM;
	else
		parse_part(&a);
	if (threaded)
		pthread_join(helper, NULL); /* b is read only after this */
	else if (cut && rc == 0)
		parse_part(&b);
	if (rc == 0 && (a.rc || b.rc || b.kept.lost))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < b.kept.n; i++)
		p->diag(p->diag_ctx, &b.kept.v[i]);
	if (rc == 0 && cut)
		rc = merge_parts(&a, &b);
	p->bad = a.p.bad;
	if (rc == 0 && !a.any_address)
		rc = -ENOENT;
	if (rc == 0) {
		if (!a.sorted)
			qsort(a.v, a.n, sizeof(*a.v), by_address);
		k->v = a.v;
		k->n = a.n;
		k->image = a.image;
		a.v = NULL;
	}
	part_free(&a);
	part_free(&b);
	return rc < 0 ? rc : p->bad ? -EINVAL : 0;
}

char *tb_ksyms_text_buffer(size_t len)
{
	return len < UINT32_MAX ? alloc_big(len + TEXT_PAD) : NULL;
}

int tb_ksyms_parse_buffer(const char *file, char *buf, size_t skip, size_t len, tb_problem_fn *diag,
			  void *diag_ctx, struct tb_ksyms **out)
{
	struct parser p = {.file = file, .diag = diag, .diag_ctx = diag_ctx};
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
	memset(k->text + len, 0, TEXT_PAD);
	rc = parse_all(k, len, &p);
	if (rc == -ENOENT || rc == -ENOMEM) {
		tb_ksyms_free(k);
		return rc;
	}
	*out = k;
	return rc;
}

int tb_ksyms_parse(const char *file, const char *text, size_t len, tb_problem_fn *diag,
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
	return (ptrdiff_t)TB_SORTED_COUNT_AT_OR_BELOW(k->v, k->n, addr, addr) - 1;
}

/* Whether addr lies where the kernel resolves image symbols. */
static bool in_image_ranges(const struct image_bounds *b, uint64_t addr, bool *known)
{
	*known = b->nstext > 0 && (b->have_end || b->netext > 0);
	if (!*known)
		return false;
	if (b->have_end)
		return addr >= b->stext[0] && addr < b->end;
	for (unsigned i = 0; i < b->nstext && i < b->netext; i++)
		if (addr >= b->stext[i] && addr < b->etext[i])
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

/*
 * Whether entry i is what the search below finds for addr: the first of the
 * entries at the highest address not above addr (its aliases follow it).
 */
static bool hint_covers(const struct tb_ksyms *k, size_t i, uint64_t addr)
{
	size_t j = i + 1;

	if (i >= k->n || k->v[i].addr > addr || (i > 0 && k->v[i - 1].addr == k->v[i].addr))
		return false;
	while (j < k->n && k->v[j].addr == k->v[i].addr)
		j++;
	return j == k->n || addr < k->v[j].addr;
}

/* The first entry at the highest address not above addr, or -1. */
static ptrdiff_t find_entry(struct tb_ksyms *k, uint64_t addr)
{
	_Atomic uint32_t *hint = &k->hint[(addr >> 4) % HINT_SLOTS];
	ptrdiff_t i = (ptrdiff_t)atomic_load_explicit(hint, memory_order_relaxed);

	if (hint_covers(k, (size_t)i, addr))
		return i;
	i = last_not_above(k, addr);
	if (i < 0)
		return -1;
	while (i > 0 && k->v[i - 1].addr == k->v[i].addr)
		i--; /* the first alias */
	if (i <= (ptrdiff_t)UINT32_MAX)
		atomic_store_explicit(hint, (uint32_t)i, memory_order_relaxed);
	return i;
}

bool tb_ksyms_lookup(const struct tb_ksyms *k, uint64_t addr, struct tb_ksym *out)
{
	/* the hints are the only thing written: a cache, not the table (above) */
	ptrdiff_t i = k ? find_entry((struct tb_ksyms *)k, addr) : -1;
	const struct ksym_entry *e;
	uint64_t next;
	bool known;

	if (i < 0)
		return false;
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
