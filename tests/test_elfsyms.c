// SPDX-License-Identifier: MIT
/*
 * test_elfsyms - the ELF symbol reader (src/util/elfsyms.c) and the
 * objects file (tracebuf/usyms.h).
 *
 * Oracle: binutils' readelf, which prints every symbol table of an object;
 * our function symbols must be exactly its defined FUNC and IFUNC symbols
 * of .symtab (or of .dynsym for a stripped library), addresses and names.
 * Then damaged objects and objects files: each problem named with a byte
 * offset, nothing crashes, and a file rebuilt since recording is refused
 * by its build-id.
 */
#include <elf.h>
#include <errno.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/elfsyms.h"
#include "lib/tap.h"
#include "tracebuf/describe.h"
#include "tracebuf/usyms.h"

struct pair {
	uint64_t addr;
	char name[1024];
};

static int pair_order(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* readelf's defined functions of the table ours reads (.symtab, else .dynsym). */
static size_t readelf_functions(const char *path, struct pair **out)
{
	char cmd[600], line[2048], table[64] = "";
	struct pair *p = NULL;
	size_t n = 0, cap = 0;
	int has_symtab = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null | grep -q ' .symtab '", path);
	has_symtab = system(cmd) == 0;
	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char value[32], type[16], bind[16], vis[16], ndx[16], name[1024] = "";
		unsigned long long addr;
		unsigned size;
		int num;

		if (sscanf(line, "Symbol table '%63[^']'", table) == 1)
			continue;
		if (strcmp(table, has_symtab ? ".symtab" : ".dynsym"))
			continue;
		if (sscanf(line, "%d: %31s %u %15s %15s %15s %15s %1023s", &num, value, &size, type, bind,
			   vis, ndx, name) < 7)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) || !strcmp(ndx, "UND") || !name[0])
			continue;
		addr = strtoull(value, NULL, 16);
		if (!addr)
			continue;
		name[strcspn(name, "@")] = '\0'; /* dynamic symbols carry their version */
		if (n == cap)
			p = realloc(p, (cap = cap ? 2 * cap : 1024) * sizeof(*p));
		p[n].addr = addr;
		snprintf(p[n].name, sizeof(p[n].name), "%s", name);
		n++;
	}
	if (f)
		pclose(f);
	qsort(p, n, sizeof(*p), pair_order);
	*out = p;
	return n;
}

/*
 * The program's .plt, by readelf: its stubs belong to no function symbol.
 * _init has no size and ends .init, just before; unbounded, it named
 * every stub (a PLT call in a profile read "_init").
 */
static void plt_unnamed(const char *path)
{
	char cmd[4200], line[512];
	unsigned long long addr = 0, size = 0;
	struct elf_syms s;
	struct tb_problem err = {0};
	uint64_t off;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, " .plt ");
		if (at && sscanf(at, " .plt %*s %llx %*s %llx", &addr, &size) == 2)
			break;
	}
	if (f)
		pclose(f);
	if (!addr || !size || elf_syms_load(path, &s, &err) < 0) {
		skip(1, "no .plt in this program, or it was not read");
		return;
	}
	const struct elf_sym *in_plt = elf_syms_find(&s, addr + size / 2, &off);
	ok(!in_plt, "an address in .plt (0x%llx) is no function's: %s", addr + size / 2,
	   in_plt ? elf_sym_name(&s, in_plt) : "none found");
	elf_syms_free(&s);
}

static void compare_with_readelf(const char *path, const char *what)
{
	struct elf_syms s;
	struct tb_problem err = {0};
	struct pair *want, *got;
	size_t n, bad_find = 0;
	int rc = elf_syms_load(path, &s, &err);

	if (!ok(rc == 0, "%s: read (%s)", what, rc ? err.reason : path)) {
		skip(2, "not read");
		return;
	}
	n = readelf_functions(path, &want);
	got = calloc(s.n + 1, sizeof(*got));
	for (size_t i = 0; i < s.n; i++) {
		got[i].addr = s.syms[i].addr;
		snprintf(got[i].name, sizeof(got[i].name), "%s", elf_sym_name(&s, &s.syms[i]));
		/* Every address inside a sized function finds a name at that function's address. */
		uint64_t off;
		const struct elf_sym *f = elf_syms_find(&s, s.syms[i].addr + s.syms[i].size / 2, &off);
		if (!f || f->addr != s.syms[i].addr)
			bad_find++;
	}
	qsort(got, s.n, sizeof(*got), pair_order);
	size_t same = n == s.n;
	for (size_t i = 0; same && i < n; i++)
		same = got[i].addr == want[i].addr && !strcmp(got[i].name, want[i].name);
	ok(n > 0 && same, "%s: the %zu function symbols (%s) are readelf's %zu", what, s.n,
	   s.from_dynsym ? ".dynsym" : ".symtab", n);
	is_int(bad_find, 0, "%s: every function's middle is found in it", what);
	free(want);
	free(got);
	elf_syms_free(&s);
}

/* ------------------------------------------------------- damaged input */

static uint8_t *read_file(const char *path, size_t *len)
{
	return (uint8_t *)tap_slurp(path, len);
}

static void expect_error(const uint8_t *data, size_t len, const char *what, const char *reason_part)
{
	struct elf_syms s;
	struct tb_problem err = {0};
	int rc = elf_syms_parse_mem(data, len, &s, &err);

	ok(rc == -EINVAL && strstr(err.reason, reason_part) && err.offset <= len,
	   "%s: refused at byte %llu: %s", what, (unsigned long long)err.offset, err.reason);
}

static void test_damage(const char *path)
{
	size_t len;
	uint8_t *elf = read_file(path, &len), *copy;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	if (!elf) {
		skip(6, "no ELF file to damage");
		return;
	}
	copy = malloc(len);
	expect_error((const uint8_t *)"#!/bin/sh\n", 10, "a script", "ELF header");
	memcpy(copy, "#!/bin/sh\necho hi\n" "................................................................", 80);
	expect_error(copy, 80, "80 bytes of text", "not an ELF file");
	memcpy(copy, elf, len);
	copy[EI_CLASS] = ELFCLASS32;
	expect_error(copy, len, "a 32-bit class", "64-bit");
	expect_error(elf, len / 2, "the object cut in half", "past the end");
	/* The symbol table's link pointing at itself: not a string table. */
	memcpy(copy, elf, len);
	eh = (Elf64_Ehdr *)copy;
	sh = (Elf64_Shdr *)(copy + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			sh[i].sh_link = (uint32_t)i;
	expect_error(copy, len, "a symbol table linked to itself", "not a string table");
	/* Every symbol's name beyond the string table. */
	memcpy(copy, elf, len);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
				((Elf64_Sym *)(copy + sh[i].sh_offset))[k].st_name = 0x7fffffff;
	expect_error(copy, len, "names past the string table", "string table");
	free(copy);
	free(elf);
}

/* ------------------------------------------------------- objects files */

static unsigned long problems;
static char last_reason[256];
static uint64_t last_offset;

static void note(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	problems++;
	last_offset = d->offset;
	snprintf(last_reason, sizeof(last_reason), "%s", d->reason);
}

__attribute__((noinline)) int known_function_for_lookup(int x);
__attribute__((noinline)) int known_function_for_lookup(int x)
{
	return x * 7 + 1;
}

static void test_objects(void)
{
	struct tb_usyms *u;
	struct tb_usym sym;
	char *text, bad[4096];
	size_t len;
	int n;

	ok(tb_objects_text(&text, &len) == 0 && !strncmp(text, "# start end bias build-id path\n", 31),
	   "tb_objects_text: a header line, then one line per object");
	ok(tb_usyms_load(&u, "objects", text, len, note, NULL) == 0, "our own objects file parses");
	is_int(problems, 0, "without a problem");
	ok(tb_usyms_lookup(u, (uint64_t)(uintptr_t)known_function_for_lookup + 3, &sym) &&
		   !strcmp(sym.name, "known_function_for_lookup") && sym.offset == 3,
	   "an address 3 bytes into a function of this program: its name, offset 3");
	/*
	 * lldiv has one name and no sanitizer wraps it (strlen would not do: its
	 * address is an IFUNC's choice, named only in .symtab; qsort is ASan's).
	 */
	ok(tb_usyms_lookup(u, (uint64_t)(uintptr_t)lldiv + 1, &sym) && !strcmp(sym.name, "lldiv") &&
		   strstr(sym.object, "libc.so"),
	   "lldiv is named from libc's dynamic symbols");
	ok(!tb_usyms_lookup(u, 0x1000, &sym), "an address in no object has no name");
	tb_usyms_free(u);

	/* Two good lines around three bad ones. */
	const char *first_nl = strchr(text, '\n') + 1, *second_nl = strchr(first_nl, '\n') + 1;
	n = snprintf(bad, sizeof(bad), "%.*sxyz 1 2 - /bin/true\n1000 2000 0 zz /bin/true\n2000 1000 0 - /bin/true\n%s",
		     (int)(second_nl - text), text, second_nl);
	problems = 0;
	int rc = tb_usyms_load(&u, "objects", bad, (size_t)n, note, NULL);
	ok(rc == 0 && problems == 3, "three damaged lines: three problems, the rest kept (%lu)", problems);
	ok(last_offset > (uint64_t)(second_nl - text) && strstr(last_reason, "end address is not above"),
	   "each names its byte offset and reason (%llu: %s)", (unsigned long long)last_offset, last_reason);
	ok(tb_usyms_objects(u) == 0 || tb_usyms_lookup(u, (uint64_t)(uintptr_t)known_function_for_lookup, &sym),
	   "the good lines still name addresses");
	tb_usyms_free(u);

	/* The executable's line with another build-id: rebuilt since recording. */
	strcpy(bad, text);
	char *line = strchr(bad, '\n') + 1, *id = line;
	for (int spaces = 0; spaces < 3; id++)
		spaces += *id == ' ';
	if (*id != '-') {
		*id = *id == '0' ? '1' : '0';
		problems = 0;
		tb_usyms_load(&u, "objects", bad, strlen(bad), note, NULL);
		ok(!tb_usyms_lookup(u, (uint64_t)(uintptr_t)known_function_for_lookup, &sym) && problems == 1 &&
			   strstr(last_reason, "changed since"),
		   "another build-id than the file's: refused, reported once (%s)", last_reason);
		tb_usyms_free(u);
	} else {
		skip(1, "this executable has no build-id");
	}
	free(text);
}

/*
 * The vDSO has no file: it is listed as [vdso] and named from the reader's
 * own (the same kernel, the build-id says).  The oracle for the address is
 * the C library's dynamic linker, which knows the vDSO as linux-vdso.so.1.
 */
static void test_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct tb_usyms *u;
	struct tb_usym sym = {0};
	char *text;
	size_t len;
	bool named;

	if (!f) {
		skip(3, "no vDSO with __vdso_clock_gettime here");
		return;
	}
	ok(tb_objects_text(&text, &len) == 0 && strstr(text, " " TB_OBJECTS_VDSO "\n"),
	   "tb_objects_text lists the vDSO as " TB_OBJECTS_VDSO);
	problems = 0;
	ok(tb_usyms_load(&u, "objects", text, len, note, NULL) == 0 && problems == 0, "and the list parses");
	named = tb_usyms_lookup(u, (uint64_t)(uintptr_t)f + 1, &sym);
	ok(named && strstr(sym.name, "clock_gettime") && sym.offset == 1 && !strcmp(sym.object, TB_OBJECTS_VDSO),
	   "an address 1 byte into the vDSO's clock_gettime is named from it (%s+%llu in %s)",
	   sym.name ? sym.name : "?", (unsigned long long)sym.offset, sym.object ? sym.object : "?");
	tb_usyms_free(u);
	free(text);
	dlclose(h);
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *b = getenv("TB_BUILD");
	char lib[4096];

	(void)argc;
	(void)argv;
	if (system("readelf --version >/dev/null 2>&1") != 0)
		skip_all("binutils' readelf is missing (the oracle)");
	self[k > 0 ? k : 0] = '\0';
	compare_with_readelf(self, "this test program");
	plt_unnamed(self);
	snprintf(lib, sizeof(lib), "%s/tests/func/libtree.so", b ? b : "build");
	if (access(lib, R_OK) == 0)
		compare_with_readelf(lib, "libtree.so");
	else
		skip(3, "libtree.so not built");
	compare_with_readelf("/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6");
	test_damage(self);
	test_objects();
	test_vdso();
	return done_testing();
}
