// SPDX-License-Identifier: MIT
/*
 * kvars.c - kernel variables of the x86-64 memory layout, found from what
 * root can read (see kvars.h for how, and for what cannot be found).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "kvars.h"

#define START_KERNEL_MAP 0xffffffff80000000ull /* x86-64 __START_KERNEL_map */
#define PROBE_PAGES 64                          /* pages touched to make the kernel allocate */
#define MAX_PROBE_TEXT (16u << 20)

static const char *const known_names[] = {"phys_base", "vmemmap_base"};

bool tb_kvars_known(const char *name)
{
	for (size_t i = 0; i < sizeof(known_names) / sizeof(known_names[0]); i++)
		if (!strcmp(name, known_names[i]))
			return true;
	return false;
}

bool tb_kvars_get(const struct tb_kvars *vars, const char *name, uint64_t *value)
{
	for (size_t i = 0; vars && i < vars->n; i++)
		if (!strcmp(vars->v[i].name, name)) {
			*value = vars->v[i].value;
			return true;
		}
	return false;
}

static void set_var(struct tb_kvars *vars, const char *name, uint64_t value)
{
	for (size_t i = 0; i < vars->n; i++)
		if (!strcmp(vars->v[i].name, name)) {
			vars->v[i].value = value;
			return;
		}
	if (vars->n < TB_KVARS_MAX)
		vars->v[vars->n++] = (struct tb_kvar){name, value};
}

/* A hex number at *p (an optional 0x first); advances *p.  False if there are no digits. */
static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	for (; s < end && digits < 17; s++, digits++) {
		char c = *s;
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			     : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (unsigned)((c | 0x20) - 'a' + 10)
			     : 16u;
		if (d == 16)
			break;
		*v = *v << 4 | d;
	}
	if (digits == 0 || digits > 16)
		return false;
	*p = s;
	return true;
}

/* ------------------------------------------------------------ phys_base */

/* Whether p..stop is "LO-HI : NAME", with LO and HI. */
static bool is_range_named(const char *p, const char *stop, const char *name, uint64_t *lo,
			   uint64_t *hi)
{
	size_t n = strlen(name);

	if (!parse_hex(&p, stop, lo) || p >= stop || *p++ != '-' || !parse_hex(&p, stop, hi))
		return false;
	return stop - p == (ptrdiff_t)(3 + n) && !memcmp(p, " : ", 3) && !memcmp(p + 3, name, n);
}

/* The start of the "Kernel code" range of /proc/iomem; false if absent or hidden. */
static bool kernel_code_start(const char *text, size_t len, uint64_t *start)
{
	const char *end = text + len, *line = text;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end, *p = line;
		uint64_t lo, hi;

		while (p < stop && *p == ' ')
			p++;
		if (is_range_named(p, stop, "Kernel code", &lo, &hi)) {
			if (lo == 0 && hi == 0)
				return false; /* addresses hidden from this reader */
			*start = lo;
			return true;
		}
		line = stop + 1;
	}
	return false;
}

int tb_kvars_phys_base(const char *iomem, size_t len, const struct tb_ksyms *ksyms,
		       struct tb_kvars *vars)
{
	uint64_t code, text;

	if (!iomem || !ksyms || !kernel_code_start(iomem, len, &code) ||
	    !tb_ksyms_address(ksyms, "_text", &text) || text < START_KERNEL_MAP)
		return -ENOENT;
	set_var(vars, "phys_base", code - (text - START_KERNEL_MAP));
	return 0;
}

/* --------------------------------------------------------- vmemmap_base */

int tb_kvars_vmemmap_base(const char *trace, size_t len, uint64_t page_size,
			  struct tb_kvars *vars)
{
	static const char tag[] = "mm_page_alloc: page=";
	const char *end = trace + len, *p = trace;
	uint64_t base = 0;
	int seen = 0;

	if (page_size == 0)
		return -EINVAL;
	while ((p = memmem(p, (size_t)(end - p), tag, sizeof(tag) - 1)) != NULL) {
		uint64_t page, pfn;
		p += sizeof(tag) - 1;
		if (!parse_hex(&p, end, &page) || end - p < 6 || memcmp(p, " pfn=", 5))
			continue;
		p += 5;
		if (!parse_hex(&p, end, &pfn) || page == 0)
			continue; /* page=(null): no page */
		if (seen++ && page - pfn * page_size != base)
			return -EINVAL;
		base = page - pfn * page_size;
	}
	if (!seen)
		return -ENOENT;
	set_var(vars, "vmemmap_base", base);
	return 0;
}

/* ---------------------------------------------------------------- probe */

static char *read_text(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16;
	char *buf = NULL;
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || *len == cap) {
			char *p = cap > MAX_PROBE_TEXT ? NULL : realloc(buf, buf ? (cap *= 2) : cap);
			if (!p)
				break;
			buf = p;
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	return buf;
}

static int write_text(const char *dir, const char *name, const char *value)
{
	char path[512];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok ? 0 : -EIO;
}

/* Page faults on fresh anonymous memory: each one is a kmem:mm_page_alloc event. */
static void allocate_some_pages(void)
{
	size_t size = PROBE_PAGES * (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < size; i += (size_t)sysconf(_SC_PAGESIZE))
		p[i] = 1;
	munmap((void *)p, size);
}

/* The kernel's text of a few mm_page_alloc events, from a private instance. */
static char *page_alloc_text(const char *tracefs, size_t *len)
{
	char inst[300], *text = NULL;

	snprintf(inst, sizeof(inst), "%s/instances/tb-kvars-%d", tracefs, (int)getpid());
	if (mkdir(inst, 0755) < 0)
		return NULL;
	if (write_text(inst, "options/hash-ptr", "0") == 0 &&
	    write_text(inst, "buffer_size_kb", "64") == 0 &&
	    write_text(inst, "events/kmem/mm_page_alloc/enable", "1") == 0 &&
	    write_text(inst, "tracing_on", "1") == 0) {
		char path[320];
		allocate_some_pages();
		write_text(inst, "tracing_on", "0");
		snprintf(path, sizeof(path), "%s/trace", inst);
		text = read_text(path, len);
	}
	write_text(inst, "events/kmem/mm_page_alloc/enable", "0");
	rmdir(inst);
	return text;
}

static void tell(tb_diag_fn *diag, void *ctx, const char *file, const char *reason)
{
	struct tb_diag d = {.file = file};

	if (!diag)
		return;
	diag_fail(&d, 0, "%s", reason);
	diag(ctx, &d);
}

int tb_kvars_probe(const char *tracefs, const struct tb_btf *btf, const struct tb_ksyms *ksyms,
		   struct tb_kvars *vars, tb_diag_fn *diag, void *diag_ctx)
{
	uint64_t page_size;
	size_t len;
	char *text;
	int found = 0;

#if defined(__x86_64__)
	text = read_text("/proc/iomem", &len);
	if (tb_kvars_phys_base(text, len, ksyms, vars) == 0)
		found++;
	else
		tell(diag, diag_ctx, "/proc/iomem", "phys_base not found (no Kernel code range, "
		     "addresses hidden, or no _text symbol)");
	free(text);
	if (btf && tb_btf_type_size(btf, "struct page", &page_size)) {
		text = page_alloc_text(tracefs, &len);
		if (text && tb_kvars_vmemmap_base(text, len, page_size, vars) == 0)
			found++;
		else
			tell(diag, diag_ctx, tracefs, "vmemmap_base not found: no mm_page_alloc events "
			     "with unhashed pointers in a private instance");
		free(text);
	}
#else
	(void)tracefs, (void)btf, (void)ksyms, (void)vars, (void)page_size, (void)len, (void)text;
	tell(diag, diag_ctx, "", "kernel layout variables are only probed on x86-64");
#endif
	return found;
}
