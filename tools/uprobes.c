// SPDX-License-Identifier: MIT
/*
 * uprobes.c - uprobes on a traced program's functions (see uprobes.h).
 *
 * uprobe_events takes PATH:OFFSET, a file offset: the symbol's link-time
 * address minus the virtual address of the PT_LOAD segment holding it, plus
 * that segment's file offset.  The program headers are read with bounded
 * positioned reads (a foreign or damaged file gives a message, never a
 * crash); the symbols come from elfsyms.c, which checks its own input.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib_internal.h"
#include "uprobes.h"

#define MAX_PHDRS 4096

/* program, found as execvp would: as given when it has a '/', else in PATH; NULL if nowhere. */
static char *find_program(const char *program)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];

	if (strchr(program, '/'))
		return realpath(program, NULL);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)n, n ? p : ".", program);
		if (access(candidate, X_OK) == 0)
			return realpath(candidate, NULL);
		p += n + (p[n] == ':');
	}
	return NULL;
}

/* The file offset of link-time address addr in the ELF object at fd; 0 with *off set, or -EINVAL. */
static int file_offset(int fd, uint64_t addr, uint64_t *off, char *err, size_t err_size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct stat st;

	if (fstat(fd, &st) < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		snprintf(err, err_size, "not a 64-bit ELF object");
		return -EINVAL;
	}
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum > MAX_PHDRS ||
	    eh.e_phoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_phnum * sizeof(ph) > (uint64_t)st.st_size - eh.e_phoff) {
		snprintf(err, err_size, "its program headers (offset %llu, %u of %u bytes) lie outside the file",
			 (unsigned long long)eh.e_phoff, eh.e_phnum, eh.e_phentsize);
		return -EINVAL;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	snprintf(err, err_size, "address 0x%llx is in no loaded segment", (unsigned long long)addr);
	return -EINVAL;
}

/* The address of function func in syms; 0 with *addr, or -ENOENT. */
static int symbol_address(const struct elf_syms *syms, const char *func, uint64_t *addr)
{
	for (size_t i = 0; i < syms->n; i++)
		if (!strcmp(elf_sym_name(syms, &syms->syms[i]), func)) {
			*addr = syms->syms[i].addr;
			return 0;
		}
	return -ENOENT;
}

/* An event name the kernel takes: letters, digits and '_', not starting with a digit. */
static void event_name(const char *func, bool ret, char *out, size_t cap)
{
	size_t n = 0;

	if (*func >= '0' && *func <= '9')
		out[n++] = '_';
	for (; *func && n + 1 < cap; func++)
		out[n++] = (*func >= 'a' && *func <= 'z') || (*func >= 'A' && *func <= 'Z') ||
				   (*func >= '0' && *func <= '9')
			       ? *func
			       : '_';
	out[n] = '\0';
	if (ret && n + sizeof("__return") <= cap)
		strcat(out, "__return");
}

/* Where func is: 0 with p->path and p->offset, or -errno with err. */
static int locate(struct uprobe *p, const char *object, const char *func, char *err, size_t err_size)
{
	struct elf_syms syms;
	struct tb_problem d = {.file = object};
	uint64_t addr;
	char why[256];
	int rc, fd;

	rc = elf_syms_load(object, &syms, &d);
	if (rc < 0) {
		snprintf(err, err_size, "%s: %s", object, d.reason[0] ? d.reason : strerror(-rc));
		return rc;
	}
	rc = symbol_address(&syms, func, &addr);
	elf_syms_free(&syms);
	if (rc < 0) {
		snprintf(err, err_size, "%s has no function '%s' in its symbol table", object, func);
		return rc;
	}
	fd = open(object, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "%s: %s", object, strerror(errno));
		return -errno;
	}
	rc = file_offset(fd, addr, &p->offset, why, sizeof(why));
	close(fd);
	if (rc < 0)
		snprintf(err, err_size, "%s: %s: %s", object, func, why);
	return rc;
}

int uprobe_add(struct uprobe_set *set, const char *spec, const char *program, char *err, size_t err_size)
{
	char *copy = strdup(spec), *func, *colon, *ret, *object = NULL;
	struct uprobe p = {0}, *grown;
	int rc;

	if (!copy)
		return -ENOMEM;
	if ((ret = strstr(copy, "%return")) && !ret[7]) {
		*ret = '\0';
		p.ret = true;
	}
	colon = strrchr(copy, ':');
	func = colon ? colon + 1 : copy;
	if (colon)
		*colon = '\0';
	object = colon ? realpath(copy, NULL) : find_program(program);
	if (!*func) {
		snprintf(err, err_size, "--uprobe '%s': no function named", spec);
		rc = -EINVAL;
	} else if (!object) {
		snprintf(err, err_size, "--uprobe '%s': cannot find %s", spec, colon ? copy : program);
		rc = -ENOENT;
	} else {
		rc = locate(&p, object, func, err, err_size);
	}
	if (rc == 0) {
		event_name(func, p.ret, p.name, sizeof(p.name));
		grown = realloc(set->v, (set->n + 1) * sizeof(*grown));
		rc = grown ? 0 : -ENOMEM;
		if (grown) {
			p.path = object;
			object = NULL;
			set->v = grown;
			set->v[set->n++] = p;
		}
	}
	if (!set->group[0])
		snprintf(set->group, sizeof(set->group), "tb_%d", (int)getpid());
	free(object);
	free(copy);
	return rc;
}

int uprobes_define(const char *root, struct uprobe_set *set, char *err, size_t err_size)
{
	char line[PATH_MAX + 160];

	for (size_t i = 0; i < set->n; i++) {
		struct uprobe *p = &set->v[i];
		snprintf(line, sizeof(line), "%c:%s/%s %s:0x%llx", p->ret ? 'r' : 'p', set->group, p->name, p->path,
			 (unsigned long long)p->offset);
		int rc = tracefs_append(root, "uprobe_events", line);
		if (rc < 0) {
			snprintf(err, err_size, "%s/uprobe_events: cannot add '%s': %s%s", root, line, strerror(-rc),
				 rc == -ENOENT ? " (this kernel has no uprobes: CONFIG_UPROBE_EVENTS)" : "");
			return rc;
		}
		p->defined = true;
	}
	return 0;
}

void uprobes_remove(const char *root, struct uprobe_set *set)
{
	char line[160];

	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].defined) {
			snprintf(line, sizeof(line), "-:%s/%s", set->group, set->v[i].name);
			int rc = tracefs_append(root, "uprobe_events", line);
			if (rc < 0)
				fprintf(stderr, "tracebuf: cannot remove the uprobe %s/%s: %s\n", set->group,
					set->v[i].name, strerror(-rc));
		}
		free(set->v[i].path);
	}
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

const char *uprobes_system(const struct uprobe_set *set)
{
	return set->n ? set->group : "";
}
