// SPDX-License-Identifier: MIT
/*
 * kallsyms_cut.c - keep the kallsyms lines a capture's addresses need.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms_cut.h"
#include "util/grow.h"

#define KERNEL_HALF 0xffff800000000000ull /* per-CPU symbols sit at small offsets below */

struct sym_line {
	uint64_t addr;
	size_t start, len; /* the line in the text, newline included */
	size_t order;	   /* its index in the file */
	bool keep;
};

/* The leading hex address of the line at p (len bytes); false if it has none. */
static bool line_address(const char *p, size_t len, uint64_t *addr)
{
	size_t i = 0;

	*addr = 0;
	for (; i < len && i < 16; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
						    : 16;
		if (d == 16)
			break;
		*addr = *addr << 4 | d;
	}
	return i > 0 && i < len && p[i] == ' ';
}

/* Every line with an address, in file order; the count, or -ENOMEM. */
static long parse_lines(const char *text, size_t len, struct sym_line **out)
{
	size_t cap = 0, n = 0;
	struct sym_line *v = NULL;

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		uint64_t addr;

		if (line_address(text + pos, end - pos, &addr)) {
			struct sym_line *grown = tb__grow(v, &cap, n + 1, sizeof(*v), 4096);
			if (!grown) {
				free(v);
				return -ENOMEM;
			}
			v = grown;
			v[n] = (struct sym_line){addr, pos, end - pos, n, false};
			n++;
		}
		pos = end;
	}
	*out = v;
	return (long)n;
}

bool kallsyms_range(const char *text, size_t len, uint64_t *lo, uint64_t *hi)
{
	struct sym_line *v = NULL;
	long n = parse_lines(text, len, &v);

	*lo = UINT64_MAX;
	*hi = 0;
	for (long i = 0; i < n; i++)
		if (v[i].addr >= KERNEL_HALF) {
			*lo = v[i].addr < *lo ? v[i].addr : *lo;
			*hi = v[i].addr > *hi ? v[i].addr : *hi;
		}
	free(v);
	return *lo <= *hi;
}

static int by_address(const void *a, const void *b)
{
	const struct sym_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b)
{
	const struct sym_line *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* Mark every line at v[i]'s address; the index after that group. */
static long keep_group(struct sym_line *v, long n, long i)
{
	long j = i;

	while (j > 0 && v[j - 1].addr == v[i].addr)
		j--;
	for (; j < n && v[j].addr == v[i].addr; j++)
		v[j].keep = true;
	return j;
}

/* The last line whose address is at or below a, or -1. */
static long containing(const struct sym_line *v, long n, uint64_t a)
{
	long lo = 0, hi = n - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		if (v[mid].addr <= a) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

int kallsyms_cut(const char *text, size_t len, const uint64_t *addrs, size_t naddrs, char **out,
		 size_t *out_len)
{
	struct sym_line *v = NULL;
	long n = parse_lines(text, len, &v);
	size_t total = 0;
	char *buf, *p;

	if (n < 0)
		return (int)n;
	qsort(v, (size_t)n, sizeof(*v), by_address);
	for (size_t k = 0; k < naddrs; k++) {
		long i = containing(v, n, addrs[k]);
		if (i < 0 || v[i].addr < KERNEL_HALF)
			continue;
		long next = keep_group(v, n, i);
		if (next < n)
			keep_group(v, n, next);
	}
	qsort(v, (size_t)n, sizeof(*v), by_order);
	/* +1 per line: the last line of a file may lack its newline. */
	for (long i = 0; i < n; i++)
		total += v[i].keep ? v[i].len + 1 : 0;
	buf = p = malloc(total + 1);
	if (!buf) {
		free(v);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++)
		if (v[i].keep) {
			memcpy(p, text + v[i].start, v[i].len);
			p += v[i].len;
			if (p[-1] != '\n')
				*p++ = '\n';
		}
	*p = '\0';
	free(v);
	*out = buf;
	*out_len = (size_t)(p - buf);
	return 0;
}
