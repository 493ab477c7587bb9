// SPDX-License-Identifier: MIT
/*
 * filter_eval.c - run a compiled filter over one record.
 *
 * The string matches keep the kernel's semantics byte for byte, quirks
 * included, since the oracle for them is the kernel's own filter file: a
 * char array is compared within its whole size (a "*x" suffix match looks
 * at the array's last bytes before its final one, not at the text's end),
 * a dynamic string within the length its __data_loc word gives (its NUL
 * included), and a "*x*" search runs over those bytes without stopping at
 * a NUL.  Reads never leave rec[0..len).
 */
#include <string.h>

#include "filter_internal.h"

/* The kernel's TASK_COMM_LEN: COMM compares within that many bytes. */
#define COMM_LEN 16

/* a OP b, both already extended from the field's size by its signedness. */
static bool compare(unsigned op, uint64_t a, uint64_t b, bool is_signed)
{
	switch (op) {
	case OP_EQ:
		return a == b;
	case OP_NE:
		return a != b;
	case OP_BAND:
		return (a & b) != 0;
	case OP_LT:
		return is_signed ? (int64_t)a < (int64_t)b : a < b;
	case OP_LE:
		return is_signed ? (int64_t)a <= (int64_t)b : a <= b;
	case OP_GT:
		return is_signed ? (int64_t)a > (int64_t)b : a > b;
	case OP_GE:
		return is_signed ? (int64_t)a >= (int64_t)b : a >= b;
	}
	return false;
}

/* The kernel's CPU predicate knows the six comparisons only: & is always false. */
static bool match_cpu(const struct filter_pred *p, const struct tb_filter_env *env)
{
	int64_t cpu = env ? env->cpu : -1;

	if (p->op == OP_BAND)
		return false;
	return compare(p->op, (uint64_t)cpu, p->val, true);
}

/* strncmp(s, pat, n) == 0 where s holds n bytes: equal up to pat's NUL or n. */
static bool match_full(const struct filter_pred *p, const char *s, uint32_t n)
{
	uint32_t m = p->pat_len + 1 < n ? p->pat_len + 1 : n;

	return memcmp(s, p->pattern, m) == 0;
}

static bool match_text(const struct filter_pred *p, const char *s, uint32_t n)
{
	switch (p->match) {
	case MATCH_FULL:
		return match_full(p, s, n);
	case MATCH_FRONT:
		return n >= p->pat_len && memcmp(s, p->pattern, p->pat_len) == 0;
	case MATCH_MIDDLE:
		for (uint32_t i = 0; i + p->pat_len <= n; i++)
			if (memcmp(s + i, p->pattern, p->pat_len) == 0)
				return true;
		return false;
	case MATCH_END:
		/* n counts the NUL (dynamic) or is the array's size (static). */
		return n >= 1 && n - 1 >= p->pat_len &&
		       memcmp(s + (n - 1 - p->pat_len), p->pattern, p->pat_len) == 0;
	default:
		return filter_glob(p->pattern, s, n);
	}
}

/* The string a predicate reads, or false when the record cannot hold it. */
static bool locate(const struct filter_pred *p, const uint8_t *rec, uint32_t len, const char **s,
		   uint32_t *n)
{
	uint32_t word, loc;

	if (p->source == SRC_CHARS) {
		*s = (const char *)rec + p->offset;
		*n = p->field_size;
		return true;
	}
	memcpy(&word, rec + p->offset, 4);
	loc = word & 0xffff;
	if (p->source == SRC_REL_LOC)
		loc += p->offset + 4;
	*n = word >> 16;
	if (loc > len || *n > len - loc)
		return false;
	*s = (const char *)rec + loc;
	return true;
}

static bool match_string(const struct filter_pred *p, const uint8_t *rec, uint32_t len,
			 const struct tb_filter_env *env)
{
	char comm[COMM_LEN] = {0};
	const char *s;
	uint32_t n;

	if (p->source == SRC_COMM) {
		if (env && env->comm)
			strncpy(comm, env->comm, COMM_LEN - 1);
		s = comm;
		n = COMM_LEN;
	} else if (!locate(p, rec, len, &s, &n)) {
		return false;
	}
	return match_text(p, s, n) != p->invert;
}

/*
 * Integer predicates are all one test, without calls or indirect jumps
 * (which cost the most on a filtered event's path): the field, extended to
 * 64 bits as its type is (its value was cut and extended the same way by
 * the parser), has its sign bit flipped for signed fields so that unsigned
 * order is the field's order; then ==, !=, <, <=, > and >= are "inside
 * [lo, lo + span]", possibly inverted, and & is a test of bits.
 */
#define SIGN_BIT (UINT64_C(1) << 63)

__attribute__((always_inline)) static inline bool int_test(const struct filter_pred *p, const uint8_t *rec)
{
	uint64_t raw, key;

	/*
	 * Exactly the field's bytes (the emitter has just stored the record,
	 * and a wider load across its fields would wait for store forwarding),
	 * extended to 64 bits as its type is.
	 */
	switch (p->size) {
	case 1:
		raw = p->is_signed ? (uint64_t)(int64_t)(int8_t)rec[p->offset] : rec[p->offset];
		break;
	case 2: {
		uint16_t x;
		memcpy(&x, rec + p->offset, 2);
		raw = p->is_signed ? (uint64_t)(int64_t)(int16_t)x : x;
		break;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, rec + p->offset, 4);
		raw = p->is_signed ? (uint64_t)(int64_t)(int32_t)x : x;
		break;
	}
	default:
		memcpy(&raw, rec + p->offset, 8);
	}
	key = raw ^ p->flip;
	if (p->op == OP_BAND)
		return (raw & p->val) != 0;
	return ((key - p->lo) <= p->span) != p->invert;
}

static bool test_cpu(const struct filter_pred *p, const uint8_t *rec, uint32_t len,
		     const struct tb_filter_env *env)
{
	(void)rec, (void)len;
	return match_cpu(p, env);
}

static bool test_string(const struct filter_pred *p, const uint8_t *rec, uint32_t len,
			const struct tb_filter_env *env)
{
	return match_string(p, rec, len, env);
}

static bool test_false(const struct filter_pred *p, const uint8_t *rec, uint32_t len,
		       const struct tb_filter_env *env)
{
	(void)p, (void)rec, (void)len, (void)env;
	return false;
}

/* lo and span for an integer predicate: the values, in key order, that make it true. */
static void bind_range(struct filter_pred *p)
{
	uint64_t k = p->val ^ p->flip;

	p->lo = 0;
	p->span = UINT64_MAX;
	switch (p->op) {
	case OP_EQ:
	case OP_NE:
		p->lo = k;
		p->span = 0;
		p->invert = p->op == OP_NE;
		break;
	case OP_LT:
		p->invert = k == 0; /* nothing is below the least value: the full range, inverted */
		p->span = k ? k - 1 : UINT64_MAX;
		break;
	case OP_LE:
		p->span = k;
		break;
	case OP_GT:
		p->invert = k == UINT64_MAX;
		p->lo = k + 1;
		p->span = UINT64_MAX - p->lo;
		break;
	case OP_GE:
		p->lo = k;
		p->span = UINT64_MAX - k;
		break;
	}
}

void filter_bind(struct filter_pred *p)
{
	switch (p->kind) {
	case PRED_INT:
		p->fn = NULL; /* run inline by tb_filter_match */
		p->flip = p->is_signed ? SIGN_BIT : 0;
		bind_range(p);
		break;
	case PRED_CPU:
		p->fn = test_cpu;
		break;
	case PRED_STR:
		p->fn = test_string;
		break;
	default:
		p->fn = test_false;
		break;
	}
}

bool tb_filter_match(const struct tb_filter *f, const void *rec, uint32_t len,
		     const struct tb_filter_env *env)
{
	const struct filter_pred *preds;
	int32_t i = 0;

	if (!f)
		return true;
	if (len < f->min_len || !rec)
		return false; /* every predicate reads a field the record does not hold */
	preds = f->preds;
	if (f->table) {
		/*
		 * Up to six integer predicates: all run, each independent of the
		 * others' verdicts (so the CPU overlaps them), and the verdict is
		 * looked up in the table the program was run into at compile time.
		 */
		unsigned bits = 0;
		for (uint32_t k = 0; k < f->npreds; k++)
			bits |= (unsigned)int_test(&preds[k], rec) << k;
		return (f->truth >> bits) & 1;
	}
	/* Targets only point forward (filter_parse.c), so this ends. */
	do {
		const struct filter_pred *p = &preds[i];
		bool r = p->kind == PRED_INT ? int_test(p, rec) : p->fn(p, rec, len, env);
		/*
		 * A branch, not a conditional move: predicted, it lets the next
		 * predicate's loads start before this one's verdict is known
		 * (a cmov would chain every predicate's latency to the next).
		 */
		if (r) {
			__asm__ volatile("");
			i = p->on_true;
		} else {
			i = p->on_false;
		}
	} while (i >= 0);
	return i == FILTER_ACCEPT;
}

/* The program's verdict when predicate k answers bit k of bits. */
static bool verdict_of(const struct tb_filter *f, unsigned bits)
{
	int32_t i = 0;

	do
		i = (bits >> i) & 1 ? f->preds[i].on_true : f->preds[i].on_false;
	while (i >= 0);
	return i == FILTER_ACCEPT;
}

void filter_tabulate(struct tb_filter *f)
{
	f->table = f->npreds <= MAX_TABLE_PREDS;
	/* Integer predicates only: inside min_len, without side effects, cheap to run needlessly. */
	for (uint32_t k = 0; k < f->npreds && f->table; k++)
		f->table = f->preds[k].kind == PRED_INT;
	f->truth = 0;
	for (unsigned bits = 0; f->table && bits < (1u << f->npreds); bits++)
		f->truth |= (uint64_t)verdict_of(f, bits) << bits;
}

unsigned tb_filter_uses(const struct tb_filter *f)
{
	return f ? f->uses : 0;
}

/* ---------------------------------------------------------------- glob */

/*
 * One character class at pat (just past '['): whether c is in it, and
 * where the pattern goes on (*next).  An unclosed class is no class: false
 * with *next NULL, and '[' is then an ordinary character.
 */
static bool in_class(const char *pat, unsigned char c, const char **next)
{
	bool inverted = *pat == '!', hit = false;
	const char *q = pat + inverted;
	unsigned char lo = (unsigned char)*q++;

	*next = NULL;
	do {
		unsigned char hi = lo;
		if (lo == '\0')
			return false;
		if (q[0] == '-' && q[1] != ']') {
			hi = (unsigned char)q[1];
			if (hi == '\0')
				return false;
			q += 2;
		}
		hit |= lo <= c && c <= hi;
		lo = (unsigned char)*q++;
	} while (lo != ']');
	*next = q;
	return hit != inverted;
}

/*
 * The whole of str[0..len) (up to its first NUL) against pat.  A '*'
 * remembers where it stood; on a mismatch the star takes one more
 * character and matching resumes there (one backtrack point suffices for
 * globs without '**' semantics, as in lib/glob.c).
 */
bool filter_glob(const char *pat, const char *str, uint32_t len)
{
	const char *star_pat = NULL;
	uint32_t star_at = 0, i = 0;

	for (;;) {
		unsigned char c = i < len ? (unsigned char)str[i] : '\0';
		unsigned char d = (unsigned char)*pat;
		const char *next;

		if (d == '*') {
			star_pat = ++pat;
			star_at = i;
			continue;
		}
		if (d == '?' && c != '\0') {
			pat++, i++;
			continue;
		}
		if (d == '[' && c != '\0') {
			bool hit = in_class(pat + 1, c, &next);
			if (next) {
				if (!hit)
					goto backtrack;
				pat = next, i++;
				continue;
			}
		}
		if (d == '\\') /* the next character as itself; a final '\' matches the end */
			d = (unsigned char)*++pat;
		if (c == d) {
			if (d == '\0')
				return true;
			pat++, i++;
			continue;
		}
	backtrack:
		if (!star_pat || c == '\0')
			return false;
		pat = star_pat;
		i = ++star_at;
	}
}
