/* SPDX-License-Identifier: MIT */
/*
 * elfsyms.h - the function symbols of one ELF object (an executable or a
 * shared library), for naming user-space addresses.
 *
 * The parser reads what it needs - the ELF header, the section headers,
 * one symbol table and its string table, the GNU build-id note - through
 * positioned reads, from a file or from memory, and checks every offset,
 * size and count against the input before using it.  A problem gives
 * -EINVAL with the byte offset and the reason in a struct tb_problem.
 *
 * .symtab is used when the object has one (it names static functions
 * too); a stripped object falls back to .dynsym.  Only defined function
 * symbols are kept (STT_FUNC, STT_GNU_IFUNC), sorted by address, aliases
 * included; of several names at one address the global one comes first,
 * then a weak one, then a local one, then fewer leading underscores, and
 * that first one is what a lookup answers.
 *
 * It depends on libc alone: the function tracer links it too, to turn
 * run-time exclusion patterns into addresses.
 *
 * Ownership: elf_syms_free() releases what a successful parse filled in.
 */
#ifndef TRACEBUF_ELFSYMS_H
#define TRACEBUF_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/schema.h" /* struct tb_problem */

/* Linked into programs (libtracebuf-func.a): keep the names out of theirs. */
#define elf_syms_parse_mem tb__elf_syms_parse_mem
#define elf_syms_load tb__elf_syms_load
#define elf_syms_free tb__elf_syms_free
#define elf_syms_find tb__elf_syms_find
#define elf_build_id_hex tb__elf_build_id_hex

struct elf_sym {
	uint64_t addr; /* st_value: a link-time virtual address */
	uint64_t size; /* st_size, 0 when unknown */
	uint64_t end;  /* size 0: its section's end, where it ends at the latest (0: no bound) */
	uint32_t name; /* offset of the NUL-terminated name in elf_syms.names */
	uint8_t bind;  /* STB_* */
};

#define ELF_BUILD_ID_MAX 64

struct elf_syms {
	struct elf_sym *syms; /* sorted by addr, the preferred alias first */
	size_t n;
	char *names;
	size_t names_len;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len; /* 0: the object has no GNU build-id note */
	int from_dynsym;     /* 1: no .symtab, the dynamic symbols were used */
};

/* Parse an ELF object held in memory.  0, -EINVAL (*err filled) or -ENOMEM. */
int elf_syms_parse_mem(const void *data, size_t len, struct elf_syms *out, struct tb_problem *err);

/*
 * Parse the ELF object at path.  0, -EINVAL (*err filled, err->file left
 * to the caller), -ENOMEM, or the -errno of open/read (err filled too).
 */
int elf_syms_load(const char *path, struct elf_syms *out, struct tb_problem *err);

void elf_syms_free(struct elf_syms *s);

/*
 * The symbol covering link-time address addr (its size, or up to the next
 * symbol when its size is 0), with *offset = addr - symbol address; NULL
 * when addr lies before the first symbol or past a sized symbol's end.
 */
const struct elf_sym *elf_syms_find(const struct elf_syms *s, uint64_t addr, uint64_t *offset);

static inline __attribute__((no_instrument_function)) const char *elf_sym_name(const struct elf_syms *s, const struct elf_sym *sym)
{
	return s->names + sym->name;
}

/* Lower-case hex of the build-id into buf (2 * len + 1 bytes); "-" when there is none. */
void elf_build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif
