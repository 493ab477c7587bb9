/* SPDX-License-Identifier: MIT */
/*
 * ksyms.h - the kernel's symbol table (the text of /proc/kallsyms), and
 * addresses looked up in it the way the kernel's own printers do.
 *
 * The input is "ADDR TYPE NAME" lines, with "\t[MODULE]" after the name
 * for symbols of modules (and of the pseudo-modules bpf and
 * __builtin__ftrace).  It is parsed strictly: a line that is not exactly
 * that is reported with its file and byte offset and left out.
 *
 * A lookup answers what kallsyms_lookup() and %pS answer in the kernel:
 *  - the name is that of the symbol with the highest address not above the
 *    address, the first one listed when several share that address (the
 *    kernel takes the first alias of its sorted table; within a module, the
 *    first in its symbol table, which is the order /proc/kallsyms lists);
 *  - the size is the distance to the next higher address of the same group
 *    (the kernel image, or the same module): kallsyms_lookup_size_offset()
 *    ends a symbol where the next one starts, so "+0x5d/0x230" is computed
 *    from that.  0 when the next address is not known (the last symbol of
 *    a module: the kernel ends it at the module's text end, which kallsyms
 *    does not show);
 *  - an address of the kernel image resolves only inside the ranges the
 *    kernel resolves (is_ksym_addr): [_stext, _etext) and [_sinittext,
 *    _einittext), or [_stext, _end) when _end is listed (CONFIG_KALLSYMS_ALL).
 *    When those symbols are missing (a partial table), an address resolves
 *    only if a higher symbol of the kernel image follows it.
 *
 * A table whose addresses all read 0 (kptr_restrict hid them) holds nothing
 * to look up: tb_ksyms_parse() returns -ENOENT for it.
 *
 * Ownership: tb_ksyms_parse() returns a table the caller frees with
 * tb_ksyms_free(); it keeps its own copy of the text.  Names and module
 * names returned by lookups point into the table and live as long as it.
 * A table is immutable once parsed: lookups may run from several threads.
 */
#ifndef TRACEBUF_KSYMS_H
#define TRACEBUF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/schema.h"

struct tb_ksyms;

/* One symbol as a lookup found it. */
struct tb_ksym {
	const char *name;
	const char *module; /* NULL for the kernel image */
	uint64_t start;
	uint64_t size;      /* 0 if unknown */
	char type;          /* the kallsyms type letter: T, t, D, ... */
};

/*
 * Parse kallsyms text (need not end in NUL).  Each bad line is reported to
 * diag (file, byte offset, reason; diag may be NULL) and left out.  Returns
 * 0 with *out set, -EINVAL with *out set when some lines were bad (the
 * good ones are in the table), -ENOENT with *out NULL when the file holds
 * no usable address, or -ENOMEM.
 */
int tb_ksyms_parse(const char *file, const char *text, size_t len, tb_problem_fn *diag,
		   void *diag_ctx, struct tb_ksyms **out);
void tb_ksyms_free(struct tb_ksyms *k);

/*
 * The same parse without the copy: the text is read (or decompressed)
 * straight into a buffer from tb_ksyms_text_buffer(size) (room for size
 * bytes and the parser's padding; NULL without memory or for size >= 4
 * GiB), where it lies at buf + skip, skip + len <= size;
 * tb_ksyms_parse_buffer() takes the buffer over whatever it returns - kept
 * by the table, or freed - and may write the bytes after the text.  Saves
 * copying (and faulting in) megabytes at start-up.
 */
char *tb_ksyms_text_buffer(size_t size);
int tb_ksyms_parse_buffer(const char *file, char *buf, size_t skip, size_t len, tb_problem_fn *diag,
			  void *diag_ctx, struct tb_ksyms **out);

/*
 * Problems kept, in order, to be told later by another thread:
 * tb_ksyms_keep_problem is a tb_problem_fn whose ctx is the list (lost is set
 * when one could not be kept).  The d->file pointers are kept as they
 * are.  The owner frees v.
 */
struct tb_ksyms_problems {
	struct tb_problem *v;
	size_t n, cap;
	bool lost;
};
void tb_ksyms_keep_problem(void *ctx, const struct tb_problem *d);

/*
 * Texts of at least min_len bytes are parsed in two halves at once, the
 * second on a thread of its own (default 1 MiB; SIZE_MAX: never) - the
 * same table and problems, in the same order.  For tests; not to be
 * changed while a parse runs.
 */
void tb_ksyms_set_split(size_t min_len);

/* Number of symbols in the table. */
size_t tb_ksyms_count(const struct tb_ksyms *k);

/* The symbol addr falls in, as the kernel would name it; false if none. */
/* Entry i (0 <= i < count) in address order, size left 0: for handing the table on. */
void tb_ksyms_at(const struct tb_ksyms *k, size_t i, struct tb_ksym *out);

bool tb_ksyms_lookup(const struct tb_ksyms *k, uint64_t addr, struct tb_ksym *out);

/* The address of the first symbol of the kernel image called name; false if none. */
bool tb_ksyms_address(const struct tb_ksyms *k, const char *name, uint64_t *addr);

#endif
