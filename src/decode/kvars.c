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
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "kvars.h"

#define START_KERNEL_MAP 0xffffffff80000000ull /* x86-64 __START_KERNEL_map */
#define PROBE_PAGES 64                          /* pages touched to make the kernel allocate */
#define MAX_PROBE_TEXT (16u << 20)
#define MAX_HZ 100000 /* far above any kernel's; a bigger CONFIG_HZ is a damaged file */

/* Indexes into known_names, and bits of tb_kvars.tried. */
enum { KV_HZ, KV_JIFFIES, KV_PHYS_BASE, KV_VMEMMAP_BASE, KV_COUNT };
static const char *const known_names[KV_COUNT] = {"HZ", "jiffies", "phys_base", "vmemmap_base"};

static int known_index(const char *name)
{
	for (int i = 0; i < KV_COUNT; i++)
		if (!strcmp(name, known_names[i]))
			return i;
	return -1;
}

bool tb_kvars_known(const char *name)
{
	return known_index(name) >= 0;
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

/* Store name (one of known_names, so a static string) = value. */
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

int tb_kvars_set(struct tb_kvars *vars, const char *name, uint64_t value)
{
	int i = known_index(name);

	if (i < 0)
		return -EINVAL;
	set_var(vars, known_names[i], value);
	vars->tried |= 1u << i;
	return 0;
}

/* A decimal number at *p; advances *p.  False if there are no digits or it overflows. */
static bool parse_dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;

	*v = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return false;
		*v = *v * 10 + d;
	}
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/*
 * The number after the first line of text that starts with prefix, if the
 * line goes on with suffix (may be "") and ends there.  False if no line
 * does.
 */
static bool line_number(const char *text, size_t len, const char *prefix, const char *suffix,
			uint64_t *v)
{
	const char *end = text + len, *line = text;
	size_t np = strlen(prefix), ns = strlen(suffix);

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end, *p = line + np;
		if ((size_t)(stop - line) > np && !memcmp(line, prefix, np) && parse_dec(&p, stop, v))
			return (size_t)(stop - p) == ns && !memcmp(p, suffix, ns);
		line = stop + 1;
	}
	return false;
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

/* ----------------------------------------------------- HZ and jiffies */

int tb_kvars_timer_list(const char *text, size_t len, struct tb_jiffies_sample *out)
{
	if (!text || !line_number(text, len, "now at ", " nsecs", &out->now_ns) ||
	    !line_number(text, len, "jiffies: ", "", &out->jiffies))
		return -ENOENT;
	return 0;
}

int tb_kvars_hz_config(const char *config, size_t len, struct tb_kvars *vars)
{
	uint64_t hz;

	if (!config || !line_number(config, len, "CONFIG_HZ=", "", &hz) || hz == 0 || hz > MAX_HZ)
		return -ENOENT;
	set_var(vars, "HZ", hz);
	return 0;
}

int tb_kvars_hz_measured(const struct tb_jiffies_sample *a, const struct tb_jiffies_sample *b,
			 struct tb_kvars *vars)
{
	static const unsigned offered[] = {100, 250, 300, 1000}; /* kernel/Kconfig.hz */
	double rate, best_err = 1e9;
	unsigned best = 0;

	if (b->now_ns < a->now_ns + TB_HZ_PROBE_MS * 500000ull || b->jiffies < a->jiffies)
		return -EINVAL;
	rate = (double)(b->jiffies - a->jiffies) * 1e9 / (double)(b->now_ns - a->now_ns);
	for (size_t i = 0; i < sizeof(offered) / sizeof(offered[0]); i++) {
		double err = rate > offered[i] ? rate / offered[i] - 1 : 1 - rate / offered[i];
		if (err < best_err)
			best_err = err, best = offered[i];
	}
	if (best_err > 0.12)
		return -ERANGE;
	set_var(vars, "HZ", best);
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

static void tell(tb_problem_fn *diag, void *ctx, const char *file, const char *reason)
{
	struct tb_problem d = {.file = file};

	if (!diag)
		return;
	diag_fail(&d, 0, "%s", reason);
	diag(ctx, &d);
}

int tb_kvars_jiffies_now(struct tb_jiffies_sample *out)
{
	size_t len;
	char *text;
	int rc;

	errno = 0;
	text = read_text("/proc/timer_list", &len);
	if (!text)
		return errno ? -errno : -ENOMEM;
	rc = tb_kvars_timer_list(text, len, out);
	free(text);
	return rc;
}

/* What each probe is given. */
struct probe {
	const char *tracefs;
	const struct tb_btf *btf;
	const struct tb_ksyms *ksyms;
	tb_problem_fn *diag;
	void *diag_ctx;
};

static int probe_jiffies(const struct probe *pr, struct tb_kvars *vars)
{
	struct tb_jiffies_sample now;

	if (tb_kvars_jiffies_now(&now) < 0) {
		tell(pr->diag, pr->diag_ctx, "/proc/timer_list",
		     "jiffies not found (the file needs root and a \"jiffies:\" line)");
		return -ENOENT;
	}
	set_var(vars, "jiffies", now.jiffies);
	return 0;
}

/* HZ from the kernel's config when there is one as text, else measured. */
static int probe_hz(const struct probe *pr, struct tb_kvars *vars)
{
	const struct timespec pause = {TB_HZ_PROBE_MS / 1000, TB_HZ_PROBE_MS % 1000 * 1000000L};
	struct tb_jiffies_sample a, b;
	char path[300];
	struct utsname u;
	size_t len;
	char *text = NULL;
	int rc = -ENOENT;

	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		text = read_text(path, &len);
		rc = tb_kvars_hz_config(text, len, vars);
		free(text);
	}
	if (rc == 0)
		return 0;
	if (tb_kvars_jiffies_now(&a) == 0) {
		struct timespec left = pause;
		while (nanosleep(&left, &left) < 0 && errno == EINTR)
			;
		if (tb_kvars_jiffies_now(&b) == 0 && tb_kvars_hz_measured(&a, &b, vars) == 0)
			return 0;
	}
	tell(pr->diag, pr->diag_ctx, "/proc/timer_list",
	     "HZ not found: no CONFIG_HZ in /boot/config-RELEASE, and jiffies could not be timed");
	return -ENOENT;
}

static int probe_phys_base(const struct probe *pr, struct tb_kvars *vars)
{
	size_t len;
	char *text = read_text("/proc/iomem", &len);
	int rc = tb_kvars_phys_base(text, len, pr->ksyms, vars);

	free(text);
	if (rc < 0)
		tell(pr->diag, pr->diag_ctx, "/proc/iomem", "phys_base not found (no Kernel code range, "
		     "addresses hidden, or no _text symbol)");
	return rc < 0 ? -ENOENT : 0;
}

static int probe_vmemmap_base(const struct probe *pr, struct tb_kvars *vars)
{
	uint64_t page_size;
	size_t len;
	char *text;
	int rc = -ENOENT;

	if (pr->btf && pr->tracefs && tb_btf_type_size(pr->btf, "struct page", &page_size)) {
		text = page_alloc_text(pr->tracefs, &len);
		rc = text ? tb_kvars_vmemmap_base(text, len, page_size, vars) : -ENOENT;
		free(text);
	}
	if (rc < 0)
		tell(pr->diag, pr->diag_ctx, pr->tracefs ? pr->tracefs : "",
		     "vmemmap_base not found: no BTF size of struct page, or no mm_page_alloc events "
		     "with unhashed pointers in a private instance");
	return rc < 0 ? -ENOENT : 0;
}

int tb_kvars_probe(const char *name, const char *tracefs, const struct tb_btf *btf,
		   const struct tb_ksyms *ksyms, struct tb_kvars *vars, tb_problem_fn *diag,
		   void *diag_ctx)
{
	static int (*const probes[KV_COUNT])(const struct probe *, struct tb_kvars *) = {
		[KV_HZ] = probe_hz,
		[KV_JIFFIES] = probe_jiffies,
		[KV_PHYS_BASE] = probe_phys_base,
		[KV_VMEMMAP_BASE] = probe_vmemmap_base,
	};
	const struct probe pr = {tracefs, btf, ksyms, diag, diag_ctx};
	int i = known_index(name);
	uint64_t v;

	if (i < 0)
		return -EINVAL;
	if (!(vars->tried & (1u << i))) {
		vars->tried |= 1u << i;
#if defined(__x86_64__)
		probes[i](&pr, vars);
#else
		/* The layout variables are x86-64's; the clock tick is every kernel's. */
		if (i == KV_HZ || i == KV_JIFFIES)
			probes[i](&pr, vars);
		else
			tell(diag, diag_ctx, "", "kernel layout variables are only probed on x86-64");
#endif
	}
	return tb_kvars_get(vars, name, &v) ? 0 : -ENOENT;
}
