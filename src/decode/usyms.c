// SPDX-License-Identifier: MIT
/*
 * usyms.c - user-space addresses to names (tracebuf/usyms.h).
 *
 * The objects file is parsed strictly (four hex columns and a path) into a
 * table sorted by start address; a lookup finds the object by binary
 * search and then the symbol in its ELF tables, loaded on first use.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "util/elfsyms.h"
#include "schema_kernel.h"
#include "util/sorted_find.h"
#include "tracebuf/describe.h"
#include "tracebuf/usyms.h"
#include "util/grow.h"

struct uobject {
	uint64_t start, end, bias;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	char *path;
	int state; /* 0 not loaded, 1 symbols usable, -1 unusable (reported) */
	struct elf_syms syms;
};

struct tb_usyms {
	struct uobject *obj;
	size_t n, cap;
	bool self;   /* the running process: dladdr may answer */
	tb_problem_fn *diag;
	void *diag_ctx;
	unsigned long problems;
};

static void report(struct tb_usyms *u, const char *file, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(struct tb_usyms *u, const char *file, uint64_t offset, const char *fmt, ...)
{
	struct tb_problem d = {.file = file ? file : "", .offset = offset};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d.reason, sizeof(d.reason), fmt, ap);
	va_end(ap);
	u->problems++;
	if (u->diag)
		u->diag(u->diag_ctx, &d);
	else
		tb_problem_print(NULL, &d);
}

/* ------------------------------------------------------------ parsing */

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Hex digits up to a space: at least one, at most 16. */
static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (; *p < end && **p != ' '; (*p)++, n++) {
		int d = hex_value(**p);
		if (d < 0 || n == 16)
			return false;
		*v = *v << 4 | (unsigned)d;
	}
	return n > 0;
}

/* "-", or the build-id's bytes as pairs of hex digits. */
static bool parse_build_id(const char **p, const char *end, struct uobject *o)
{
	const char *q = *p;

	o->build_id_len = 0;
	if (q < end && *q == '-') {
		*p = q + 1;
		return true;
	}
	while (q < end && *q != ' ') {
		int hi = hex_value(q[0]), lo = q + 1 < end ? hex_value(q[1]) : -1;
		if (hi < 0 || lo < 0 || o->build_id_len == ELF_BUILD_ID_MAX)
			return false;
		o->build_id[o->build_id_len++] = (uint8_t)(hi << 4 | lo);
		q += 2;
	}
	*p = q;
	return o->build_id_len > 0;
}

static int add_object(struct tb_usyms *u, const struct uobject *o, const char *path, size_t plen)
{
	struct uobject *slot;

	struct uobject *grown = tb__grow(u->obj, &u->cap, u->n + 1, sizeof(*grown), 16);
	if (!grown)
		return -ENOMEM;
	u->obj = grown;
	slot = &u->obj[u->n];
	*slot = *o;
	slot->path = strndup(path, plen);
	if (!slot->path)
		return -ENOMEM;
	u->n++;
	return 0;
}

static bool is_vdso_path(const char *p, const char *end)
{
	return (size_t)(end - p) == strlen(TB_OBJECTS_VDSO) && !memcmp(p, TB_OBJECTS_VDSO, (size_t)(end - p));
}

/* One line: "START END BIAS BUILD-ID PATH".  A reason on failure, NULL on success. */
static const char *parse_line(const char *p, const char *end, struct uobject *o, const char **path)
{
	if (!parse_hex(&p, end, &o->start) || p == end || *p++ != ' ')
		return "the start address is not hex";
	if (!parse_hex(&p, end, &o->end) || p == end || *p++ != ' ')
		return "the end address is not hex";
	if (!parse_hex(&p, end, &o->bias) || p == end || *p++ != ' ')
		return "the load bias is not hex";
	if (!parse_build_id(&p, end, o) || p == end || *p++ != ' ')
		return "the build-id is neither hex nor '-'";
	if (p == end || (*p != '/' && !is_vdso_path(p, end)))
		return "the path is not absolute";
	if (o->start >= o->end)
		return "the end address is not above the start";
	*path = p;
	return NULL;
}

static int by_start(const void *a, const void *b)
{
	const struct uobject *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int tb_usyms_load(struct tb_usyms **out, const char *file, const char *text, size_t len,
		  tb_problem_fn *diag, void *diag_ctx)
{
	struct tb_usyms *u = calloc(1, sizeof(*u));
	const char *p = text, *end = text + len;
	int rc = 0;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->diag = diag;
	u->diag_ctx = diag_ctx;
	while (p < end && rc == 0) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *path = NULL, *why;
		struct uobject o = {0};

		if (!eol)
			eol = end;
		if (eol > p && *p != '#') {
			why = parse_line(p, eol, &o, &path);
			if (why)
				report(u, file, (uint64_t)(p - text), "objects line: %s; line skipped", why);
			else
				rc = add_object(u, &o, path, (size_t)(eol - path));
		}
		p = eol + 1;
	}
	if (rc < 0) {
		tb_usyms_free(u);
		return rc;
	}
	if (u->n > 1)
		qsort(u->obj, u->n, sizeof(*u->obj), by_start);
	*out = u;
	return 0;
}

int tb_usyms_self(struct tb_usyms **out, tb_problem_fn *diag, void *diag_ctx)
{
	char *text;
	size_t len;
	int rc = tb_objects_text(&text, &len);

	if (rc < 0)
		return rc;
	rc = tb_usyms_load(out, "objects of this process", text, len, diag, diag_ctx);
	free(text);
	if (rc == 0)
		(*out)->self = true;
	return rc;
}

void tb_usyms_free(struct tb_usyms *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		elf_syms_free(&u->obj[i].syms);
		free(u->obj[i].path);
	}
	free(u->obj);
	free(u);
}

/* ------------------------------------------------------------- lookup */

/*
 * The bytes of this process's vDSO image: from its ELF header (the kernel
 * maps it whole) to the end of its section headers or of its segments,
 * whichever is further.  NULL when there is none.
 */
static const void *own_vdso(size_t *len)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
	size_t end;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	end = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (int i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff) + i;
		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end)
			end = (size_t)(ph->p_offset + ph->p_filesz);
	}
	*len = end;
	return eh;
}

/* The symbols of the object at path; for the vDSO, of this process's own (its build-id is checked after). */
static int elf_syms_of(const char *path, struct elf_syms *syms, struct tb_problem *err)
{
	const void *image;
	size_t len;

	if (strcmp(path, TB_OBJECTS_VDSO) != 0)
		return elf_syms_load(path, syms, err);
	image = own_vdso(&len);
	if (!image) {
		snprintf(err->reason, sizeof(err->reason), "this process has no vDSO to read");
		return -ENOENT;
	}
	return elf_syms_parse_mem(image, len, syms, err);
}

/* Read the object's symbols once; false when they cannot be used. */
static bool load_symbols(struct tb_usyms *u, struct uobject *o)
{
	struct tb_problem err = {0};
	char want[2 * ELF_BUILD_ID_MAX + 1], got[2 * ELF_BUILD_ID_MAX + 1];

	if (o->state)
		return o->state > 0;
	o->state = -1;
	if (elf_syms_of(o->path, &o->syms, &err) < 0) {
		report(u, o->path, err.offset, "%s; its addresses stay unnamed", err.reason);
		return false;
	}
	if (o->build_id_len && (o->syms.build_id_len != o->build_id_len ||
				memcmp(o->syms.build_id, o->build_id, o->build_id_len))) {
		elf_build_id_hex(o->build_id, o->build_id_len, want);
		elf_build_id_hex(o->syms.build_id, o->syms.build_id_len, got);
		report(u, o->path, 0,
		       "build-id %s, but the trace was recorded with %s: the file changed since; "
		       "its addresses stay unnamed", got, want);
		elf_syms_free(&o->syms);
		return false;
	}
	o->state = 1;
	return true;
}

static struct uobject *object_of(struct tb_usyms *u, uint64_t addr)
{
	size_t lo = TB_SORTED_COUNT_AT_OR_BELOW(u->obj, u->n, start, addr);

	return lo && addr < u->obj[lo - 1].end ? &u->obj[lo - 1] : NULL;
}

static bool lookup_dladdr(uint64_t addr, struct tb_usym *sym)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_sname || !info.dli_saddr)
		return false;
	sym->name = info.dli_sname;
	sym->offset = addr - (uint64_t)(uintptr_t)info.dli_saddr;
	sym->size = 0;
	sym->object = info.dli_fname ? info.dli_fname : "";
	return true;
}

bool tb_usyms_lookup(struct tb_usyms *u, uint64_t addr, struct tb_usym *sym)
{
	struct uobject *o = u ? object_of(u, addr) : NULL;
	const struct elf_sym *s;
	uint64_t off;

	if (o && load_symbols(u, o) && (s = elf_syms_find(&o->syms, addr - o->bias, &off))) {
		sym->name = elf_sym_name(&o->syms, s);
		sym->offset = off;
		sym->size = s->size;
		sym->object = o->path;
		return true;
	}
	return u && u->self && lookup_dladdr(addr, sym);
}

size_t tb_usyms_objects(const struct tb_usyms *u)
{
	return u->n;
}

unsigned long tb_usyms_problems(const struct tb_usyms *u)
{
	return u->problems;
}

int tb_usyms_register(struct tb_usyms *u, struct tb_schema *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < u->n; i++) {
		struct uobject *o = &u->obj[i];
		if (!load_symbols(u, o))
			continue;
		for (size_t k = 0; k < o->syms.n; k++) {
			const struct elf_sym *sym = &o->syms.syms[k];
			/* One name per address: the preferred alias comes first. */
			if (k && sym->addr == o->syms.syms[k - 1].addr)
				continue;
			fprintf(f, "%016llx t %s\n", (unsigned long long)(o->bias + sym->addr),
				elf_sym_name(&o->syms, sym));
		}
	}
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	rc = len ? tb_schema_load_user_symbols(s, "objects (user symbols)", text, len) : 0;
	free(text);
	return rc;
}
