// SPDX-License-Identifier: MIT
/*
 * elfsyms.c - function symbols of an ELF object (see elfsyms.h).
 *
 * Everything is read with positioned reads checked against the input's
 * size, so a truncated, hostile or foreign file gives a message with the
 * byte offset instead of a crash; nothing is mapped (a file that shrinks
 * while it is read gives a short read, not a SIGBUS).
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsyms.h"
#include "pread_full.h"
#include "sorted_find.h"
#include "grow.h"

/*
 * The function tracer calls this code (tb_func_exclude): were the library
 * built with -finstrument-functions, it must still not trace itself.
 */
#define NOTRACE __attribute__((no_instrument_function))

/* Symbols are read this many at a time, so a huge table needs no huge buffer. */
#define SYM_CHUNK 1024
/* A string table larger than this is refused rather than allocated. */
#define STRTAB_MAX (256u << 20)

/* Describe a failure in *err (when there is one); -EINVAL. */
static NOTRACE int diag_fail(struct tb_problem *err, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static NOTRACE int diag_fail(struct tb_problem *err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->offset = offset;
		va_start(ap, fmt);
		vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

struct input {
	const uint8_t *mem; /* the object in memory, or NULL for fd */
	int fd;
	uint64_t size;
};

/* Read len bytes at off; -EINVAL with err when they are not all in the input. */
static NOTRACE int read_at(const struct input *in, uint64_t off, void *buf, size_t len, const char *what,
		   struct tb_problem *err)
{
	if (off > in->size || len > in->size - off)
		return diag_fail(err, off > in->size ? in->size : off,
				 "%s (%zu bytes at byte %llu) lies past the end of the %llu-byte file",
				 what, len, (unsigned long long)off, (unsigned long long)in->size);
	if (in->mem) {
		memcpy(buf, in->mem + off, len);
		return 0;
	}
	int error;
	size_t done = tb__pread_full(in->fd, buf, len, off, &error);

	if (done < len)
		return diag_fail(err, off + done, "cannot read %s: %s", what,
				 error ? strerror(error) : "the file ended early");
	return 0;
}

static NOTRACE int check_header(const Elf64_Ehdr *eh, struct tb_problem *err)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return diag_fail(err, 0, "not an ELF file (no \\177ELF magic)");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return diag_fail(err, EI_CLASS, "ELF class %u: only 64-bit objects are read",
				 eh->e_ident[EI_CLASS]);
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return diag_fail(err, EI_DATA, "ELF data encoding %u: only little-endian objects are read",
				 eh->e_ident[EI_DATA]);
	if (eh->e_shoff && eh->e_shentsize != sizeof(Elf64_Shdr))
		return diag_fail(err, offsetof(Elf64_Ehdr, e_shentsize),
				 "section header entries of %u bytes (ELF64 has %zu)", eh->e_shentsize,
				 sizeof(Elf64_Shdr));
	return 0;
}

/* The section headers (NULL count 0 when there are none).  Caller frees. */
static NOTRACE int read_sections(const struct input *in, const Elf64_Ehdr *eh, Elf64_Shdr **out,
			 size_t *count, struct tb_problem *err)
{
	uint64_t n = eh->e_shnum;
	Elf64_Shdr first;
	int rc;

	*out = NULL;
	*count = 0;
	if (!eh->e_shoff)
		return 0;
	/* More than 0xff00 sections: the real count is in section 0's size. */
	if (n == 0) {
		rc = read_at(in, eh->e_shoff, &first, sizeof(first), "section header 0", err);
		if (rc < 0)
			return rc;
		n = first.sh_size;
	}
	if (n > in->size / sizeof(Elf64_Shdr))
		return diag_fail(err, offsetof(Elf64_Ehdr, e_shnum),
				 "%llu section headers cannot fit in a %llu-byte file", (unsigned long long)n,
				 (unsigned long long)in->size);
	*out = malloc(n ? n * sizeof(Elf64_Shdr) : 1);
	if (!*out)
		return -ENOMEM;
	rc = read_at(in, eh->e_shoff, *out, n * sizeof(Elf64_Shdr), "the section header table", err);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		return rc;
	}
	*count = n;
	return 0;
}

/* Where section i's header sits, for messages. */
static NOTRACE uint64_t shdr_offset(const Elf64_Ehdr *eh, size_t i)
{
	return eh->e_shoff + i * sizeof(Elf64_Shdr);
}

/* Section sh lies inside the input and holds bytes (not SHT_NOBITS). */
static NOTRACE int check_section_bytes(const struct input *in, const Elf64_Ehdr *eh, size_t i,
			       const Elf64_Shdr *sh, struct tb_problem *err)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_offset > in->size ||
	    sh->sh_size > in->size - sh->sh_offset)
		return diag_fail(err, shdr_offset(eh, i) + offsetof(Elf64_Shdr, sh_offset),
				 "section %zu (%llu bytes at byte %llu) lies outside the %llu-byte file", i,
				 (unsigned long long)sh->sh_size, (unsigned long long)sh->sh_offset,
				 (unsigned long long)in->size);
	return 0;
}

/* ------------------------------------------------------------ build-id */

static NOTRACE uint64_t align4(uint64_t v)
{
	return (v + 3) & ~(uint64_t)3;
}

/* The GNU build-id from one SHT_NOTE section, if it holds one. */
static NOTRACE int note_build_id(const struct input *in, const Elf64_Shdr *sh, struct elf_syms *out,
			 struct tb_problem *err)
{
	uint64_t pos = sh->sh_offset, end = sh->sh_offset + sh->sh_size;
	Elf64_Nhdr nh;
	char name[4];
	int rc;

	while (end - pos >= sizeof(nh)) {
		rc = read_at(in, pos, &nh, sizeof(nh), "a note header", err);
		if (rc < 0)
			return rc;
		uint64_t name_at = pos + sizeof(nh), desc_at = name_at + align4(nh.n_namesz);
		uint64_t next = desc_at + align4(nh.n_descsz);
		if (align4(nh.n_namesz) > end - name_at || align4(nh.n_descsz) > end - desc_at)
			return diag_fail(err, pos, "note of %u + %u bytes runs past its section's end",
					 nh.n_namesz, nh.n_descsz);
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
		    nh.n_descsz <= ELF_BUILD_ID_MAX) {
			rc = read_at(in, name_at, name, 4, "a note name", err);
			if (rc == 0 && !memcmp(name, "GNU", 4)) {
				rc = read_at(in, desc_at, out->build_id, nh.n_descsz, "the build-id", err);
				if (rc == 0)
					out->build_id_len = nh.n_descsz;
				return rc;
			}
			if (rc < 0)
				return rc;
		}
		pos = next;
	}
	return 0;
}

/* ------------------------------------------------------------- symbols */

static NOTRACE bool is_function(const Elf64_Sym *s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	       s->st_value != 0;
}

/*
 * Where a symbol of no size ends at the latest: its section's end (the
 * next symbol may end it first: elf_syms_find takes the last one at or
 * below an address).  Unbounded, _init (no size, in .init) named every
 * address up to the next function, .plt's stubs included: a PLT call in a
 * profile read "_init" (test_pmu's samples).  0 (no bound) for a sized
 * symbol, or when the section index is not a real section or the value
 * lies outside it.
 */
static NOTRACE uint64_t section_end(const Elf64_Sym *s, const Elf64_Shdr *sh, size_t count)
{
	const Elf64_Shdr *in;

	if (s->st_size || s->st_shndx >= count || s->st_shndx >= SHN_LORESERVE)
		return 0;
	in = &sh[s->st_shndx];
	if (!(in->sh_flags & SHF_ALLOC) || s->st_value < in->sh_addr || s->st_value - in->sh_addr >= in->sh_size)
		return 0;
	/* A section running past the top of the address space (a damaged header) bounds
	 * nothing: its end would wrap below its own symbols (found by fuzz_elfsyms). */
	if (in->sh_size > UINT64_MAX - in->sh_addr)
		return 0;
	return in->sh_addr + in->sh_size;
}

static NOTRACE int add_symbol(struct elf_syms *out, size_t *cap, const Elf64_Sym *s, uint64_t end)
{
	if (out->n == *cap) {
		struct elf_sym *grown = tb__grow(out->syms, cap, out->n + 1, sizeof(*grown), 256);
		if (!grown)
			return -ENOMEM;
		out->syms = grown;
	}
	out->syms[out->n++] = (struct elf_sym){
		.addr = s->st_value,
		.size = s->st_size,
		.end = end,
		.name = s->st_name,
		.bind = (uint8_t)ELF64_ST_BIND(s->st_info),
	};
	return 0;
}

/* Read the symbol table in section sym_index and its string table. */
static NOTRACE int read_symbols(const struct input *in, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
			size_t count, size_t sym_index, struct elf_syms *out, struct tb_problem *err)
{
	const Elf64_Shdr *st = &sh[sym_index], *str;
	Elf64_Sym chunk[SYM_CHUNK];
	size_t cap = 0, nsyms;
	int rc = check_section_bytes(in, eh, sym_index, st, err);

	if (rc < 0)
		return rc;
	if (st->sh_entsize != sizeof(Elf64_Sym))
		return diag_fail(err, shdr_offset(eh, sym_index) + offsetof(Elf64_Shdr, sh_entsize),
				 "symbol table entries of %llu bytes (ELF64 has %zu)",
				 (unsigned long long)st->sh_entsize, sizeof(Elf64_Sym));
	if (st->sh_link == 0 || st->sh_link >= count || sh[st->sh_link].sh_type != SHT_STRTAB)
		return diag_fail(err, shdr_offset(eh, sym_index) + offsetof(Elf64_Shdr, sh_link),
				 "the symbol table's string table (section %u) is not a string table",
				 st->sh_link);
	str = &sh[st->sh_link];
	rc = check_section_bytes(in, eh, st->sh_link, str, err);
	if (rc < 0)
		return rc;
	if (str->sh_size == 0 || str->sh_size > STRTAB_MAX)
		return diag_fail(err, shdr_offset(eh, st->sh_link) + offsetof(Elf64_Shdr, sh_size),
				 "string table of %llu bytes", (unsigned long long)str->sh_size);
	out->names = malloc(str->sh_size + 1);
	if (!out->names)
		return -ENOMEM;
	rc = read_at(in, str->sh_offset, out->names, str->sh_size, "the string table", err);
	if (rc < 0)
		return rc;
	/* A name that runs to the table's end still ends: a NUL past it. */
	out->names[str->sh_size] = '\0';
	out->names_len = str->sh_size;

	nsyms = st->sh_size / sizeof(Elf64_Sym);
	for (size_t first = 0; first < nsyms; first += SYM_CHUNK) {
		size_t k = nsyms - first < SYM_CHUNK ? nsyms - first : SYM_CHUNK;
		uint64_t at = st->sh_offset + first * sizeof(Elf64_Sym);

		rc = read_at(in, at, chunk, k * sizeof(Elf64_Sym), "symbols", err);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < k; i++) {
			if (!is_function(&chunk[i]))
				continue;
			if (chunk[i].st_name == 0 || chunk[i].st_name >= str->sh_size)
				return diag_fail(err, at + i * sizeof(Elf64_Sym),
						 "symbol %zu names byte %u of a %llu-byte string table",
						 first + i, chunk[i].st_name,
						 (unsigned long long)str->sh_size);
			rc = add_symbol(out, &cap, &chunk[i], section_end(&chunk[i], sh, count));
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* ------------------------------------------------------- sort, aliases */

static NOTRACE int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static NOTRACE size_t underscores(const char *name)
{
	return strspn(name, "_");
}

static const char *sort_names; /* qsort has no context argument */

/* By address, then the preferred name first. */
static NOTRACE int sym_order(const void *pa, const void *pb)
{
	const struct elf_sym *a = pa, *b = pb;
	size_t ua, ub;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) - bind_rank(b->bind);
	ua = underscores(sort_names + a->name);
	ub = underscores(sort_names + b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/*
 * Sort by address, preferred name first.  Aliases stay (a pattern may name
 * any of them); the first of each address carries the group's largest size.
 */
static NOTRACE void sort_symbols(struct elf_syms *s)
{
	size_t first = 0;

	sort_names = s->names;
	qsort(s->syms, s->n, sizeof(*s->syms), sym_order);
	for (size_t i = 1; i < s->n; i++) {
		if (s->syms[i].addr != s->syms[first].addr) {
			first = i;
			continue;
		}
		if (s->syms[i].size > s->syms[first].size)
			s->syms[first].size = s->syms[i].size;
	}
}

/* ---------------------------------------------------------------- API */

static NOTRACE int parse(const struct input *in, struct elf_syms *out, struct tb_problem *err)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	size_t count = 0, symtab = 0, dynsym = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_at(in, 0, &eh, sizeof(eh), "the ELF header", err);
	if (rc == 0)
		rc = check_header(&eh, err);
	if (rc == 0)
		rc = read_sections(in, &eh, &sh, &count, err);
	for (size_t i = 1; rc == 0 && i < count; i++) {
		if (sh[i].sh_type == SHT_SYMTAB && !symtab)
			symtab = i;
		else if (sh[i].sh_type == SHT_DYNSYM && !dynsym)
			dynsym = i;
		else if (sh[i].sh_type == SHT_NOTE && !out->build_id_len) {
			rc = check_section_bytes(in, &eh, i, &sh[i], err);
			if (rc == 0)
				rc = note_build_id(in, &sh[i], out, err);
		}
	}
	if (rc == 0 && (symtab || dynsym)) {
		out->from_dynsym = !symtab;
		rc = read_symbols(in, &eh, sh, count, symtab ? symtab : dynsym, out, err);
	}
	free(sh);
	if (rc < 0) {
		elf_syms_free(out);
		return rc;
	}
	if (out->n)
		sort_symbols(out);
	return 0;
}

NOTRACE int elf_syms_parse_mem(const void *data, size_t len, struct elf_syms *out, struct tb_problem *err)
{
	struct input in = {.mem = data, .fd = -1, .size = len};

	return parse(&in, out, err);
}

NOTRACE int elf_syms_load(const char *path, struct elf_syms *out, struct tb_problem *err)
{
	struct input in = {.fd = open(path, O_RDONLY | O_CLOEXEC)};
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (in.fd < 0) {
		rc = -errno;
		diag_fail(err, 0, "cannot open: %s", strerror(errno));
		return rc;
	}
	if (fstat(in.fd, &st) < 0) {
		rc = -errno;
		diag_fail(err, 0, "cannot stat: %s", strerror(errno));
		close(in.fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(in.fd);
		return diag_fail(err, 0, "not a regular file");
	}
	in.size = (uint64_t)st.st_size;
	rc = parse(&in, out, err);
	close(in.fd);
	return rc;
}

NOTRACE void elf_syms_free(struct elf_syms *s)
{
	free(s->syms);
	free(s->names);
	memset(s, 0, sizeof(*s));
}

NOTRACE const struct elf_sym *elf_syms_find(const struct elf_syms *s, uint64_t addr, uint64_t *offset)
{
	/* The last symbol at or below addr is at lo - 1. */
	size_t lo = TB_SORTED_COUNT_AT_OR_BELOW(s->syms, s->n, addr, addr);
	const struct elf_sym *sym;

	if (lo == 0)
		return NULL;
	sym = &s->syms[lo - 1];
	while (sym > s->syms && sym[-1].addr == sym->addr)
		sym--; /* the preferred name of that address */
	if (sym->size ? addr - sym->addr >= sym->size : sym->end && addr >= sym->end)
		return NULL;
	if (offset)
		*offset = addr - sym->addr;
	return sym;
}

NOTRACE void elf_build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	if (len == 0) {
		strcpy(buf, "-");
		return;
	}
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = '\0';
}
