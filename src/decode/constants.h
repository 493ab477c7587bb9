/* SPDX-License-Identifier: MIT */
/*
 * constants.h - the kernel constants a capture's print fmts need, as a
 * small text file a capture saves instead of the kernel's 5 MB BTF.
 *
 * The file has one constant per line:
 *
 *     # comment
 *     HRTIMER_MODE_ABS 0
 *     vmemmap_base 0xffffea0000000000
 *     jiffies 4295235792
 *     sizeof(struct page) 64
 *
 * NAME is a C identifier (an enum constant or a kernel variable), VALUE a
 * decimal number (a leading '-' allowed) or 0x and up to 16 hex digits (the
 * 64-bit pattern).  "sizeof(TYPE) VALUE" gives the size of a type named as
 * in a print fmt.  Blank lines and lines starting with '#' are ignored.
 * Anything else is an error reported with its byte offset; so is a name
 * given two different values.
 *
 * tb_constants_write() produces the file: it reads the print fmts of the
 * events a capture holds, takes every identifier outside string literals
 * that is not a field access (REC->x, ->x, .x), and writes those its
 * source resolves (the schema's: BTF enum constants, and the kernel
 * variables of kvars.h) and sizeof lines for the struct, union, enum and
 * typedef names the print fmts mention.  HZ, which print fmts never spell
 * (the kernel expanded the macro), is written when one uses jiffies or
 * jiffies_to_msecs().  A capture's jiffies is the kernel's when its
 * trace.txt was read: the value that `trace` computed with.
 *
 * Ownership: a tb_constants set is created by tb_constants_new() and freed
 * with tb_constants_free(); it copies the names it keeps.
 */
#ifndef TRACEBUF_CONSTANTS_H
#define TRACEBUF_CONSTANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/schema.h"

struct tb_constants;

struct tb_constants *tb_constants_new(void);

/* A few enum constants whose values the kernel has kept for years (hrtimer modes): true with *value. */
bool tb_constants_builtin(const char *name, int64_t *value);
void tb_constants_free(struct tb_constants *c);

/*
 * Add the constants of a file's text to c.  Each bad line is reported to
 * diag (file, byte offset, reason) and skipped.  0, -EINVAL if some line
 * was bad, -ENOMEM.
 */
int tb_constants_parse(struct tb_constants *c, const char *file, const char *text, size_t len,
		       tb_problem_fn *diag, void *diag_ctx);

/* A constant's value; false if c does not have it. */
bool tb_constants_value(const struct tb_constants *c, const char *name, int64_t *value);
/* sizeof(type) as the file gave it (type spelled as in the print fmt); false if absent. */
bool tb_constants_type_size(const struct tb_constants *c, const char *type, uint64_t *size);
/* Number of entries (values and sizes). */
size_t tb_constants_count(const struct tb_constants *c);

/* Where the values written come from: the signatures of tb_print_env's callbacks. */
struct tb_constants_source {
	void *ctx;
	bool (*constant)(void *ctx, const char *name, int64_t *value);
	bool (*type_size)(void *ctx, const char *type, uint64_t *size);
};

/*
 * Write the constants file for the print fmts of formats[0..n): every
 * identifier src resolves as a constant, and a sizeof line for every type
 * name it resolves, sorted by name, each once.  Returns the number of
 * lines written, or -EIO if out failed, -ENOMEM.
 */
int tb_constants_write(FILE *out, const struct tb_format *const *formats, size_t n,
		       const struct tb_constants_source *src);

/*
 * Call fn for each identifier of a print fmt that may name a kernel
 * constant or type: outside string and character literals, not after "->"
 * or ".", not a C keyword, not REC; "struct x", "union x" and "enum x" come
 * as one name with their keyword.  Used by tb_constants_write(); exposed
 * for tests.
 */
void tb_print_fmt_identifiers(const char *print_fmt, size_t len,
			      void (*fn)(void *ctx, const char *name), void *ctx);

#endif
