/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/usyms.h - names for user-space addresses (functions, call
 * sites, sampled instruction pointers), read from the symbol tables of the
 * objects the traced process had mapped.
 *
 * The list of objects is what tb_objects_text() (tracebuf/describe.h)
 * wrote at record time - the "objects" file of a saved ring - or the
 * running process itself.  Each object's ELF file is read the first time
 * an address inside it is looked up (.symtab, else .dynsym); a file that
 * cannot be read, or whose build-id is not the one recorded (rebuilt since
 * the trace was taken), is reported once through the diag callback and
 * its addresses stay unnamed.  For the running process, dladdr() names
 * what the files do not.
 *
 * Ownership: tb_usyms_free() releases the handle and every name it lent.
 * Not thread-safe: one thread at a time.
 */
#ifndef TRACEBUF_USYMS_H
#define TRACEBUF_USYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_usyms;

/*
 * Parse the text of an objects file (file names it in messages; diag NULL:
 * tb_problem_print to stderr).  Lines that do not parse are reported with
 * their byte offset and skipped.  0 with *out, or -ENOMEM.
 */
int tb_usyms_load(struct tb_usyms **out, const char *file, const char *text, size_t len,
		  tb_problem_fn *diag, void *diag_ctx);

/* The objects mapped in this process now, with dladdr() as a fallback. */
int tb_usyms_self(struct tb_usyms **out, tb_problem_fn *diag, void *diag_ctx);

void tb_usyms_free(struct tb_usyms *u);

/* A name for an address; the strings stay valid until tb_usyms_free(). */
struct tb_usym {
	const char *name;   /* the function's symbol */
	uint64_t offset;    /* addr - the symbol's address */
	uint64_t size;      /* the symbol's size, 0 if unknown */
	const char *object; /* path of the object it is in */
};

/* true with *sym filled when addr lies in a known function. */
bool tb_usyms_lookup(struct tb_usyms *u, uint64_t addr, struct tb_usym *sym);

/* Objects listed, and problems reported so far. */
size_t tb_usyms_objects(const struct tb_usyms *u);
unsigned long tb_usyms_problems(const struct tb_usyms *u);

/*
 * Give the schema every function symbol of every listed object (as
 * kallsyms lines, in a table beside the capture's own kallsyms, which
 * keeps answering for its addresses), so that %ps / %pS in print fmts
 * name user addresses in the ordinary report too.  0 or -errno.
 */
int tb_usyms_register(struct tb_usyms *u, struct tb_schema *s);

#ifdef __cplusplus
}
#endif
#endif
