/* SPDX-License-Identifier: MIT */
/*
 * kallsyms_cut.h - the few lines of /proc/kallsyms a capture needs.
 *
 * A report names an address by the symbol at the highest address at or
 * below it, and prints "+offset/size" with the size running to the next
 * symbol's address (the kernel's kallsyms lookup).  So for each address a
 * capture refers to, two groups of lines are enough: every symbol at that
 * symbol's address (aliases: the kernel takes the first in file order) and
 * every symbol at the next higher address.  Lines keep their file order.
 *
 * Ownership: kallsyms_cut() returns a buffer the caller frees.
 */
#ifndef TRACEBUF_EXPORT_KALLSYMS_CUT_H
#define TRACEBUF_EXPORT_KALLSYMS_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The range [lo, hi] of the kernel-half symbol addresses in a kallsyms
 * text; false when there are none (kptr_restrict shows every address as 0).
 */
bool kallsyms_range(const char *text, size_t len, uint64_t *lo, uint64_t *hi);

/*
 * The lines of text that the n sorted addresses need, NUL-terminated in
 * *out (its length in *out_len).  0 or -ENOMEM.
 */
int kallsyms_cut(const char *text, size_t len, const uint64_t *addrs, size_t n, char **out, size_t *out_len);

#endif
