// SPDX-License-Identifier: MIT
/*
 * objects.c - the objects mapped in this process, so that the addresses a
 * trace holds (functions, call sites, sampled instruction pointers) can be
 * named when the trace is read, maybe elsewhere and later.
 *
 * dl_iterate_phdr gives each object's load bias and program headers; the
 * build-id comes from its PT_NOTE segments in memory, so a reader can tell
 * whether the file it opens is still the one that ran.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "tracebuf/describe.h"
#include "util/grow.h"

#define BUILD_ID_MAX 64

struct snapshot {
	char *text;
	size_t len, cap;
	int oom;
	int index; /* objects seen: the first is the executable */
};

static void append(struct snapshot *s, const char *p, size_t n)
{
	if (s->oom)
		return;
	char *grown = tb__grow(s->text, &s->cap, s->len + n + 1, 1, 4096);
	if (!grown) {
		s->oom = 1;
		return;
	}
	s->text = grown;
	memcpy(s->text + s->len, p, n);
	s->len += n;
	s->text[s->len] = '\0';
}

/* The GNU build-id of a loaded object, from its note segments in memory. */
static size_t build_id(const struct dl_phdr_info *info, uint8_t *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name_len = (nh->n_namesz + 3u) & ~3u, desc_len = (nh->n_descsz + 3u) & ~3u;
			const uint8_t *name = p + sizeof(*nh), *desc = name + name_len;

			if (name_len > (size_t)(end - name) || desc_len > (size_t)(end - desc))
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh->n_descsz > 0 && nh->n_descsz <= BUILD_ID_MAX) {
				memcpy(out, desc, nh->n_descsz);
				return nh->n_descsz;
			}
			p = desc + desc_len;
		}
	}
	return 0;
}

/* Whether the object is the vDSO the kernel mapped (its ELF header is AT_SYSINFO_EHDR). */
static bool is_vdso(const struct dl_phdr_info *info)
{
	uintptr_t ehdr = (uintptr_t)getauxval(AT_SYSINFO_EHDR);

	for (int i = 0; ehdr && i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_offset == 0)
			return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == ehdr;
	return false;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct snapshot *s = ctx;
	char path[PATH_MAX], line[PATH_MAX + 256], hex[2 * BUILD_ID_MAX + 1] = "-";
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	uint8_t id[BUILD_ID_MAX];
	size_t id_len;
	int n;

	(void)size;
	/* The executable comes first, with an empty name. */
	if (s->index++ == 0 && !info->dlpi_name[0]) {
		ssize_t k = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (k <= 0)
			return 0;
		path[k] = '\0';
	} else if (info->dlpi_name[0] == '/') {
		snprintf(path, sizeof(path), "%s", info->dlpi_name);
	} else if ((uintptr_t)info->dlpi_addr != 0 && is_vdso(info)) {
		/* no file: readers take their own vDSO's symbols if its build-id is this one (usyms.c) */
		snprintf(path, sizeof(path), "%s", TB_OBJECTS_VDSO);
	} else if (!strchr(info->dlpi_name, '/') || !realpath(info->dlpi_name, path)) {
		return 0; /* a relative path that no longer leads to the file */
	}
	if (strchr(path, '\n'))
		return 0; /* would break the line format */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	id_len = build_id(info, id);
	for (size_t i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(line, sizeof(line), "%lx %lx %lx %s %s\n", (unsigned long)lo, (unsigned long)hi,
		     (unsigned long)info->dlpi_addr, hex, path);
	if (n > 0 && (size_t)n < sizeof(line))
		append(s, line, (size_t)n);
	return 0;
}

int tb_objects_text(char **text, size_t *len)
{
	static const char header[] = "# start end bias build-id path\n";
	struct snapshot s = {0};

	append(&s, header, sizeof(header) - 1);
	dl_iterate_phdr(add_object, &s);
	if (s.oom) {
		free(s.text);
		return -ENOMEM;
	}
	*text = s.text;
	*len = s.len;
	return 0;
}
