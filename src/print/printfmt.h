/* SPDX-License-Identifier: MIT */
/*
 * printfmt.h - an event's print fmt, compiled once into a small program
 * and run for each record (the printer's core; internal to the reading
 * side).
 *
 * The print fmt is the kernel's TP_printk: a format string and C argument
 * expressions over REC->field.  It is parsed once, when the first record of
 * the event is met, into a program of literal runs, field loads,
 * arithmetic, conditionals and conversions; running it formats one record
 * with the rules of the kernel's vsprintf (not the C library's), and the
 * kernel's print helpers (__print_flags, __print_symbolic, __print_hex,
 * __print_array, __get_str, ...).
 *
 * What the data alone cannot give comes from the environment: symbols for
 * %pS/%ps, printk_formats strings, enum constants and sizeof() of kernel
 * types (from BTF or a capture's saved constants).
 *
 * Ownership: tb_printfmt_compile() returns a program the caller frees with
 * tb_printfmt_free(); it keeps a pointer to the format (f) and to env, which
 * must outlive it.  Running appends to the caller's strbuf.  A program is
 * immutable once compiled and may be run from several threads at once if
 * the environment's callbacks allow it.
 */
#ifndef TRACEBUF_PRINTFMT_H
#define TRACEBUF_PRINTFMT_H

#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"
#include "tracebuf/schema.h"

/* What a compiled print fmt may ask of the trace it prints.  Any callback may be NULL. */
struct tb_print_env {
	void *ctx;
	/*
	 * The symbol containing addr: its name, start address and size (0 if
	 * unknown), and its module (NULL for the kernel image).  NULL if none.
	 */
	const char *(*symbol)(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size,
			      const char **module);
	/* The string a kernel address points to (printk_formats), or NULL. */
	const char *(*kernel_string)(void *ctx, uint64_t addr);
	/* The value of an enum constant or kernel variable by name; false if unknown. */
	bool (*constant)(void *ctx, const char *name, int64_t *value);
	/* sizeof(type) for a kernel type such as "struct page"; false if unknown. */
	bool (*type_size)(void *ctx, const char *type, uint64_t *size);
	/*
	 * Non-zero: no other environment of the process has this number
	 * (tb_print_env_number()), and symbol's answers hold while
	 * *symbols_version stays the same (not NULL then), so a thread may
	 * keep its last answer (kv_symbol_at()).  0: ask symbol every time.
	 */
	uint64_t memo_id;
	const uint64_t *symbols_version;
};

/* A memo_id no environment of this process had before. */
uint64_t tb_print_env_number(void);

struct tb_printfmt;

/*
 * Compile f's print fmt (f->print_fmt).  Returns 0 with *out set;
 * -ENOTSUP when the print fmt uses something this compiler does not do
 * (err->reason names it; the caller may fall back to libtraceevent);
 * -EINVAL when it is malformed (err->offset counts from print_fmt[0]);
 * -ENOMEM.  Never recurses without bound or takes more than linear time in
 * the text's length.
 */
int tb_printfmt_compile(const struct tb_format *f, const struct tb_print_env *env,
			struct tb_printfmt **out, struct tb_problem *err);
void tb_printfmt_free(struct tb_printfmt *p);

/*
 * Print one record (len bytes, common header first) as the kernel's text
 * after "NAME: " - without a trailing newline.  The record has been checked
 * against the format (tb_schema_check_record).  Returns 0, or -EINVAL if a
 * value the program needs lies outside the record (nothing sensible could
 * be printed; out may hold a partial line the caller discards).
 */
int tb_printfmt_run(const struct tb_printfmt *p, const uint8_t *rec, uint32_t len,
		    struct tb_strbuf *out);

/*
 * Whether p prints a __print_flags / __print_symbolic table with names the
 * environment does not know as libtraceevent prints it (not the kernel's
 * text, which needs the names' values: what trace-cmd shows).
 */
bool tb_printfmt_guesses(const struct tb_printfmt *p);

#endif
