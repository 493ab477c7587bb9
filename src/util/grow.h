/* SPDX-License-Identifier: MIT */
/*
 * grow.h - the one growable array: room for `need` elements, capacity
 * doubled (from `first` when there is none yet), every multiplication
 * checked, so a count from a damaged file can make the allocation fail
 * but never wrap it to a small one.  An inline, libc only, nothing
 * exported; usable from every stage.
 */
#ifndef TRACEBUF_UTIL_GROW_H
#define TRACEBUF_UTIL_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * The array `items` (capacity *cap elements of elem bytes) with room for at
 * least need elements: items itself when it already has it, else the
 * reallocated array with *cap updated.  NULL when the size would overflow
 * or realloc fails: items is then untouched and still the caller's.
 * Callers: `T *v = tb__grow(a->v, &a->cap, a->n + 1, sizeof(*v), 16);
 * if (!v) fail; a->v = v;`.  Not instrumented, like the other util helpers
 * (elfsyms.c grows with it, and must make no hook call).
 */
__attribute__((no_instrument_function)) static inline void *tb__grow(void *items, size_t *cap, size_t need,
								     size_t elem, size_t first)
{
	size_t n = *cap ? *cap : (first ? first : 1);
	void *grown;

	if (need <= *cap && items)
		return items; /* (an empty array is allocated all the same: NULL means failure only) */
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return NULL;
	if (!(grown = realloc(items, n * elem)))
		return NULL;
	*cap = n;
	return grown;
}

#endif
