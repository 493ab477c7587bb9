/* SPDX-License-Identifier: MIT */
/*
 * btf.h - the few facts print fmts need from the kernel's BTF type
 * information (/sys/kernel/btf/vmlinux): the values of enum constants and
 * the sizes of named types.
 *
 * Print fmts name kernel constants the format file never resolves
 * (__print_symbolic(REC->mode, { HRTIMER_MODE_ABS, "ABS" }, ...)) and do
 * pointer arithmetic on kernel types ((struct page *)vmemmap_base + pfn),
 * so printing them needs HRTIMER_MODE_ABS and sizeof(struct page).  BTF
 * (include/uapi/linux/btf.h, Documentation/bpf/btf.rst) has both.
 *
 * The blob is input like any other: every offset and count is checked
 * before it is used, and a blob that is not exactly the documented layout
 * (little endian, version 1, every type record inside the type section,
 * every name inside the string section, kinds 1..19) is refused with the
 * byte offset of the problem.
 *
 * A name two enums give different values, or two types of the same kind
 * give different sizes, is ambiguous: lookups answer false for it rather
 * than guess.
 *
 * Ownership: tb_btf_parse() returns a handle the caller frees with
 * tb_btf_free(); it keeps its own copy of the blob.  Lookups do not
 * modify it and may run from several threads.
 */
#ifndef TRACEBUF_BTF_H
#define TRACEBUF_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/schema.h"

#define TB_BTF_VMLINUX "/sys/kernel/btf/vmlinux"

struct tb_btf;

/*
 * Parse a BTF blob.  0 with *out set, -EINVAL with *err filled (offset
 * into the blob), -ENOMEM.
 */
int tb_btf_parse(const void *data, size_t len, struct tb_btf **out, struct tb_problem *err);
/* Read and parse a file (err->file set to path); -errno if it cannot be read. */
int tb_btf_load(const char *path, struct tb_btf **out, struct tb_problem *err);
void tb_btf_free(struct tb_btf *b);

/* The value of enum constant name (ENUM or ENUM64); false if unknown or ambiguous. */
bool tb_btf_enum_value(const struct tb_btf *b, const char *name, int64_t *value);

/*
 * sizeof(type) for "struct NAME", "union NAME", "enum NAME", a typedef
 * name ("gfp_t"), a C base type ("unsigned long", "long unsigned int",
 * "u8" is a typedef) or any pointer ("struct page *").  False if unknown
 * or ambiguous.
 */
bool tb_btf_type_size(const struct tb_btf *b, const char *type, uint64_t *size);

/* Whether name is a typedef, struct, union or enum name BTF knows (for type names in casts). */
bool tb_btf_has_type(const struct tb_btf *b, const char *type);

/* Number of types and of distinct enum constant names, for tests and messages. */
size_t tb_btf_type_count(const struct tb_btf *b);
size_t tb_btf_enum_count(const struct tb_btf *b);

#endif
