/* SPDX-License-Identifier: MIT */
/*
 * sorted_find.h - the one binary search of a table sorted by a uint64_t key
 * (symbol tables by address: ksyms.c, usyms.c, elfsyms.c; printk strings:
 * kstrings.c).  The table is an array of structs; the key is the uint64_t
 * at key_at bytes into each (offsetof).  Inlines, so nothing is exported;
 * called with constant stride and key_at, the compiler reads the field
 * directly.  Never instrumented: elfsyms.c, which the function tracer's own
 * exclusion list calls, must make no hook call (t_func_notrace.sh), and
 * -finstrument-functions instruments inlined bodies too.
 */
#ifndef TRACEBUF_UTIL_SORTED_FIND_H
#define TRACEBUF_UTIL_SORTED_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The split point of the table: the count of leading entries whose key is
 * below key (or at or below it when `or_equal`).  Keys ascend, so the
 * entries that qualify are exactly the first ones. */
__attribute__((no_instrument_function)) static inline size_t tb__sorted_split(const void *table, size_t n,
									       size_t stride, size_t key_at,
									       uint64_t key, bool or_equal)
{
	const unsigned char *base = table;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at;
		memcpy(&at, base + mid * stride + key_at, sizeof(at));
		if (at < key || (or_equal && at == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How many entries have a key <= key: the last such is at the count - 1
 * (the symbol an address falls in); 0 when the first is already above. */
#define TB_SORTED_COUNT_AT_OR_BELOW(arr, n, field, key) \
	tb__sorted_split((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), (key), true)

/* How many entries have a key < key: the first entry whose key is key, if
 * any, is at the count. */
#define TB_SORTED_COUNT_BELOW(arr, n, field, key) \
	tb__sorted_split((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), (key), false)

#endif
