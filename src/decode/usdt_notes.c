// SPDX-License-Identifier: MIT
/*
 * usdt_notes.c - an ELF object's SDT notes (usdt_notes.h).  The file is
 * mapped read-only and walked with every offset checked against its size.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "usdt_notes.h"
#include "util/grow.h"

#define NT_STAPSDT 3
#define SDT_ADDRS (3 * sizeof(uint64_t)) /* the site, _.stapsdt.base, the semaphore */

struct image {
	const unsigned char *data;
	size_t size;
	struct tb_problem *err;
};

static int bad(struct image *im, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct image *im, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	im->err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(im->err->reason, sizeof(im->err->reason), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Whether [off, off + len) lies in the file. */
static bool inside(const struct image *im, uint64_t off, uint64_t len)
{
	return off <= im->size && len <= im->size - off;
}

/* The string at desc[*at..end), NUL-terminated within it; *at moves past it.  NULL: unterminated. */
static const char *take_string(const unsigned char *desc, size_t *at, size_t end)
{
	const unsigned char *nul = memchr(desc + *at, 0, end - *at);
	const char *s = (const char *)desc + *at;

	if (!nul)
		return NULL;
	*at = (size_t)(nul - desc) + 1;
	return s;
}

static unsigned count_args(const char *text)
{
	unsigned n = 0;

	for (const char *p = text; *p; p++)
		n += (p == text || p[-1] == ' ') && *p != ' ';
	return n;
}

static int add_site(struct usdt_notes *out, size_t *cap, const char *provider, const char *name,
		    uint64_t semaphore, const char *args)
{
	struct usdt_probe *p = (struct usdt_probe *)usdt_notes_find(out, provider, name);

	if (!p) {
		void *grown = tb__grow(out->probes, cap, out->n + 1, sizeof(*out->probes), 8);
		if (!grown)
			return -ENOMEM;
		out->probes = grown;
		p = &out->probes[out->n];
		*p = (struct usdt_probe){strdup(provider), strdup(name), 0, true, count_args(args)};
		if (!p->provider || !p->name) {
			free(p->provider);
			free(p->name);
			return -ENOMEM;
		}
		out->n++;
	}
	p->sites++;
	p->semaphore &= semaphore != 0;
	return 0;
}

/* The notes of one SHT_NOTE section at [off, off + size). */
static int read_section(struct image *im, uint64_t off, uint64_t size, struct usdt_notes *out, size_t *cap)
{
	uint64_t at = off, end = off + size;

	while (end - at >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr h;
		uint64_t name_at = at + sizeof(h), desc_at, next;
		memcpy(&h, im->data + at, sizeof(h));
		desc_at = name_at + (((uint64_t)h.n_namesz + 3) & ~3ull);
		next = desc_at + (((uint64_t)h.n_descsz + 3) & ~3ull);
		if (desc_at > end || next > end)
			return bad(im, at, "a note (name %u bytes, description %u) runs past its section's end at byte %llu",
				   h.n_namesz, h.n_descsz, (unsigned long long)end);
		if (h.n_type == NT_STAPSDT && h.n_namesz == 8 && !memcmp(im->data + name_at, "stapsdt", 8)) {
			const unsigned char *desc = im->data + desc_at;
			size_t pos = SDT_ADDRS;
			const char *provider, *name, *args;
			uint64_t semaphore;
			int rc;
			if (h.n_descsz < SDT_ADDRS)
				return bad(im, desc_at, "an SDT note of %u bytes, shorter than its 3 addresses", h.n_descsz);
			provider = take_string(desc, &pos, h.n_descsz);
			name = provider ? take_string(desc, &pos, h.n_descsz) : NULL;
			args = name ? take_string(desc, &pos, h.n_descsz) : NULL;
			if (!args)
				return bad(im, desc_at, "an SDT note whose provider, name or arguments lack their NUL");
			memcpy(&semaphore, desc + 2 * sizeof(uint64_t), sizeof(semaphore));
			if ((rc = add_site(out, cap, provider, name, semaphore, args)) < 0)
				return rc;
		}
		at = next;
	}
	return 0;
}

static int read_image(struct image *im, struct usdt_notes *out)
{
	Elf64_Ehdr eh;
	size_t cap = 0;

	if (im->size < sizeof(eh) || memcmp(im->data, ELFMAG, SELFMAG))
		return bad(im, 0, "not an ELF object");
	memcpy(&eh, im->data, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return bad(im, EI_CLASS, "not a 64-bit little-endian ELF object (the only kind read)");
	if (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr))
		return bad(im, offsetof(Elf64_Ehdr, e_shentsize), "section headers of %u bytes, not %zu",
			   eh.e_shentsize, sizeof(Elf64_Shdr));
	if (!inside(im, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
		return bad(im, offsetof(Elf64_Ehdr, e_shoff), "%u section headers at byte %llu run past the end (%zu bytes)",
			   eh.e_shnum, (unsigned long long)eh.e_shoff, im->size);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		uint64_t at = eh.e_shoff + (uint64_t)i * sizeof(sh);
		int rc;
		memcpy(&sh, im->data + at, sizeof(sh));
		if (sh.sh_type != SHT_NOTE)
			continue;
		if (!inside(im, sh.sh_offset, sh.sh_size))
			return bad(im, at, "note section %u (bytes %llu + %llu) runs past the end (%zu bytes)", i,
				   (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size, im->size);
		if ((rc = read_section(im, sh.sh_offset, sh.sh_size, out, &cap)) < 0)
			return rc;
	}
	return 0;
}

int usdt_notes_load(const char *path, struct usdt_notes *out, struct tb_problem *err)
{
	struct image im = {NULL, 0, err};
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	*out = (struct usdt_notes){0};
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err->reason, sizeof(err->reason), "%s", strerror(-rc));
		return rc;
	}
	im.size = (size_t)st.st_size;
	map = im.size ? mmap(NULL, im.size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err->reason, sizeof(err->reason), "mmap: %s", strerror(errno));
		return -errno;
	}
	im.data = map;
	rc = read_image(&im, out);
	if (map)
		munmap(map, im.size);
	if (rc < 0)
		usdt_notes_free(out);
	return rc;
}

void usdt_notes_free(struct usdt_notes *n)
{
	for (size_t i = 0; i < n->n; i++) {
		free(n->probes[i].provider);
		free(n->probes[i].name);
	}
	free(n->probes);
	*n = (struct usdt_notes){0};
}

const struct usdt_probe *usdt_notes_find(const struct usdt_notes *n, const char *provider, const char *name)
{
	for (size_t i = 0; i < n->n; i++)
		if (!strcmp(n->probes[i].provider, provider) && !strcmp(n->probes[i].name, name))
			return &n->probes[i];
	return NULL;
}
