/* SPDX-License-Identifier: MIT */
/*
 * schema_kernel.h - what a schema knows about the kernel beyond its format
 * files, for the printers (internal to the reading side).
 *
 * A schema owns: the kallsyms table (tb_schema_load_kallsyms), a table of
 * user-space symbols beside it (tb_schema_load_user_symbols), the
 * printk_formats strings (tb_schema_load_printk_formats), the constants
 * file of a capture (tb_schema_load_constants) and, once it is told it
 * reads the running kernel, the kernel's BTF (/sys/kernel/btf/vmlinux,
 * read on the first question that needs it) and the kernel variables the
 * kvars probe finds (each on its first need: jiffies is the value of the
 * moment it was first asked for).
 *
 * The four lookups below have the signatures of struct tb_print_env's
 * callbacks (printfmt.h), with the schema as ctx, so a printer can point
 * an environment at them directly.  They may load BTF or probe the kernel
 * on first use (live schemas only), so like the rest of the schema they
 * must not be called from two threads at once.
 */
#ifndef TRACEBUF_SCHEMA_KERNEL_H
#define TRACEBUF_SCHEMA_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ksyms.h"
#include "tracebuf/schema.h"

/* The symbol containing addr (tb_print_env.symbol); NULL if none. */
const char *tb_schema_symbol(void *schema, uint64_t addr, uint64_t *start, uint64_t *size,
			     const char **module);
/*
 * A number that changes when a symbol table is loaded (tb_print_env.symbols_
 * version): an answer of tb_schema_symbol() holds while it stays the same.
 */
const uint64_t *tb_schema_symbols_version(const struct tb_schema *s);
/* The printk_formats string at addr (tb_print_env.kernel_string); NULL if none. */
const char *tb_schema_kernel_string(void *schema, uint64_t addr);
/* An enum constant or kernel variable (tb_print_env.constant): the constants file, then BTF, then the probe. */
bool tb_schema_constant(void *schema, const char *name, int64_t *value);
/* sizeof(type) (tb_print_env.type_size): the constants file, then BTF. */
bool tb_schema_type_size(void *schema, const char *type, uint64_t *size);

/* The kallsyms table, or NULL if none was loaded. */
const struct tb_ksyms *tb_schema_ksyms(const struct tb_schema *s);

/*
 * User-space symbols as kallsyms lines (tb_usyms_register): a table of
 * their own, beside the kernel's and looked up after it, so a capture with
 * both (a tracebuf ring's printf call sites and its program's functions)
 * names both.  Returns as tb_schema_load_kallsyms.
 */
int tb_schema_load_user_symbols(struct tb_schema *s, const char *file, const char *text, size_t len);

/*
 * The memory maps of user processes, for the sym-userobj option's names
 * of user stack addresses (usermaps.h): a capture's proc_maps file (loaded
 * like the files above), or, for a live source, /proc/TGID/maps read when
 * a process is first asked about.  tb_schema_user_vma() answers as
 * tb_usermaps_find(): 1 with the mapping's start and file (NULL: none),
 * 0 none above ip, -ESRCH process unknown (also when nothing was loaded).
 */
int tb_schema_load_proc_maps(struct tb_schema *s, const char *file, const char *text, size_t len);
void tb_schema_use_live_proc_maps(struct tb_schema *s);
int tb_schema_user_vma(void *schema, uint32_t tgid, uint64_t ip, uint64_t *start, const char **path);

/*
 * Mark the schema as describing the running kernel, whose tracefs is
 * mounted at tracefs: BTF and the kvars probe become available to the
 * lookups above, loaded when first needed.
 */
void tb_schema_use_running_kernel(struct tb_schema *s, const char *tracefs);

/*
 * The trace was made on kernel release (uname -r): when that is the release
 * running here, the enum values and type sizes the trace does not carry
 * (trace-cmd's files have no constants) are taken from the running
 * kernel's BTF, and the first one so taken is said once, as a warning.
 * Kernel variables (vmemmap_base, jiffies) are not: they change with every
 * boot.  Nothing happens for another release, an empty one or NULL.
 */
void tb_schema_trust_running_btf(struct tb_schema *s, const char *release);

/*
 * Pin a kernel variable of kvars.h (jiffies, HZ, ...) to a value the caller
 * found: tb_schema_constant answers it from then on, and the running
 * kernel is not asked.  A capture pins jiffies to its value when the
 * kernel's trace.txt was read, so the constants file has that one.  0, or
 * -EINVAL if name is not a variable kvars.h knows.
 */
int tb_schema_set_kernel_var(struct tb_schema *s, const char *name, uint64_t value);

/*
 * Write the constants file (constants.h) for the print fmts of
 * formats[0..n), or of every event loaded so far when formats is NULL,
 * from this schema's BTF and probed variables (running kernel only; a
 * schema that read a capture writes the constants it loaded).  Returns
 * the number of constants written or -errno.
 */
int tb_schema_write_constants(struct tb_schema *s, const struct tb_format *const *formats,
			      size_t n, FILE *out);

#endif
