/*
 * Kernel constants: the BTF reader (src/decode/btf.c), the constants file
 * (src/decode/constants.c) and the layout variables (src/decode/kvars.c).
 *
 * - A small BTF blob built here (its values are what we put in), then the
 *   same blob broken in every way the format can be broken, and the real
 *   blob cut at many lengths: every refusal names an offset inside the blob,
 *   nothing crashes (ASan) and nothing hangs (a typedef cycle).
 * - The running kernel's BTF against the kernel's own text, in a private
 *   instance on one CPU: timer:hrtimer_start prints mode= by name
 *   (__print_symbolic over HRTIMER_MODE_*), and the raw records hold the
 *   number: BTF must map each printed name to that number.  kmem:
 *   mm_page_alloc prints page= (vmemmap_base + pfn * sizeof(struct page))
 *   next to pfn=: every line must agree with BTF's sizeof(struct page) (64)
 *   and the probed vmemmap_base.
 * - The constants file: written for real print fmts, read back, and bad
 *   lines reported with their offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decode/btf.h"
#include "decode/constants.h"
#include "decode/kvars.h"
#include "lib/capdir.h"
#include "lib/instance.h"
#include "lib/tap.h"
#include "decode/schema_kernel.h"
#include "tracebuf/capture.h"
#include "tracebuf/page.h"

#define TRACEFS "/sys/kernel/tracing"

/* ---------------------------------------------------- a blob by hand */

struct blob {
	uint8_t types[1024], strs[256];
	size_t ntypes_len, nstrs;
};

static uint32_t str(struct blob *b, const char *s)
{
	uint32_t off = (uint32_t)b->nstrs;

	if (b->nstrs == 0) { /* offset 0 is the empty name */
		b->strs[0] = 0;
		off = (uint32_t)(b->nstrs = 1);
	}
	memcpy(b->strs + b->nstrs, s, strlen(s) + 1);
	b->nstrs += strlen(s) + 1;
	return off;
}

static void u32(struct blob *b, uint32_t v)
{
	memcpy(b->types + b->ntypes_len, &v, 4);
	b->ntypes_len += 4;
}

static void type(struct blob *b, const char *name, unsigned kind, unsigned vlen, bool kflag,
		 uint32_t size_or_type)
{
	u32(b, name ? str(b, name) : 0);
	u32(b, (uint32_t)kind << 24 | vlen | (kflag ? 1u << 31 : 0));
	u32(b, size_or_type);
}

/* Header + sections into out; returns the length. */
static size_t assemble(const struct blob *b, uint8_t *out)
{
	uint32_t h[6] = {0, 24, 0, (uint32_t)b->ntypes_len, (uint32_t)b->ntypes_len, (uint32_t)b->nstrs};

	h[0] = 0xeB9F | 1u << 16; /* magic, version 1, flags 0 */
	memcpy(out, h, 24);
	memcpy(out + 24, b->types, b->ntypes_len);
	memcpy(out + 24 + b->ntypes_len, b->strs, b->nstrs);
	return 24 + b->ntypes_len + b->nstrs;
}

/*
 * IDs: 1 int, 2 enum color {RED 0, GREEN -1 (signed)}, 3 typedef color_t,
 * 4 struct pair (8 bytes, 2 members), 5 enum64 big {HUGE 0x123456789},
 * 6/7 typedefs loop_a/loop_b naming each other, 8 int[3], 9 typedef three,
 * 10 enum other {DUP 1, SAME 5}, 11 enum more {DUP 2, SAME 5},
 * 12 long unsigned int (8), 13 struct pair again but 16 bytes.
 */
static size_t tiny_blob(uint8_t *out)
{
	struct blob b = {0};

	type(&b, "int", 1, 0, false, 4);
	u32(&b, 1u << 24 | 32); /* signed, 32 bits */
	type(&b, "color", 6, 2, true, 4);
	u32(&b, str(&b, "RED")), u32(&b, 0);
	u32(&b, str(&b, "GREEN")), u32(&b, (uint32_t)-1);
	type(&b, "color_t", 8, 0, false, 2);
	type(&b, "pair", 4, 2, false, 8);
	u32(&b, str(&b, "a")), u32(&b, 1), u32(&b, 0);
	u32(&b, str(&b, "b")), u32(&b, 1), u32(&b, 32);
	type(&b, "big", 19, 1, false, 8);
	u32(&b, str(&b, "HUGE")), u32(&b, 0x23456789), u32(&b, 0x1);
	type(&b, "loop_a", 8, 0, false, 7);
	type(&b, "loop_b", 8, 0, false, 6);
	type(&b, NULL, 3, 0, false, 0);
	u32(&b, 1), u32(&b, 1), u32(&b, 3);
	type(&b, "three", 8, 0, false, 8);
	type(&b, "other", 6, 2, false, 4);
	u32(&b, str(&b, "DUP")), u32(&b, 1);
	u32(&b, str(&b, "SAME")), u32(&b, 5);
	type(&b, "more", 6, 2, false, 4);
	u32(&b, str(&b, "DUP")), u32(&b, 2);
	u32(&b, str(&b, "SAME")), u32(&b, 5);
	type(&b, "long unsigned int", 1, 0, false, 8);
	u32(&b, 64);
	type(&b, "pair", 4, 0, false, 16);
	return assemble(&b, out);
}

static void hand_made(void)
{
	uint8_t blob[2048];
	size_t len = tiny_blob(blob);
	struct tb_btf *b;
	struct tb_problem err = {0};
	int64_t v;
	uint64_t size;

	if (!ok(tb_btf_parse(blob, len, &b, &err) == 0, "hand-made blob parses (%s)", err.reason))
		return;
	is_int(tb_btf_type_count(b), 13, "13 types");
	ok(tb_btf_enum_value(b, "RED", &v) && v == 0, "RED = 0");
	ok(tb_btf_enum_value(b, "GREEN", &v) && v == -1, "GREEN = -1 (a signed enum)");
	ok(tb_btf_enum_value(b, "HUGE", &v) && v == 0x123456789ll, "HUGE = 0x123456789 (ENUM64)");
	ok(!tb_btf_enum_value(b, "DUP", &v), "DUP, 1 in one enum and 2 in another, is ambiguous");
	ok(tb_btf_enum_value(b, "SAME", &v) && v == 5, "SAME, 5 in two enums, is 5");
	ok(!tb_btf_enum_value(b, "BLUE", &v), "an unknown name is unknown");
	ok(tb_btf_type_size(b, "int", &size) && size == 4, "sizeof(int) 4");
	ok(tb_btf_type_size(b, "enum color", &size) && size == 4, "sizeof(enum color) 4");
	ok(tb_btf_type_size(b, "color_t", &size) && size == 4, "sizeof(color_t) 4 through the typedef");
	ok(tb_btf_type_size(b, "three", &size) && size == 12, "sizeof(three) 12: int[3]");
	ok(tb_btf_type_size(b, "unsigned long", &size) && size == 8 &&
		   tb_btf_type_size(b, "long  unsigned", &size) && size == 8,
	   "unsigned long / long unsigned are BTF's 'long unsigned int'");
	ok(tb_btf_type_size(b, "struct pair *", &size) && size == 8, "a pointer is 8 bytes");
	ok(!tb_btf_type_size(b, "struct pair", &size),
	   "struct pair, 8 bytes once and 16 bytes once, is ambiguous");
	ok(!tb_btf_type_size(b, "loop_a", &size), "a typedef cycle has no size (and ends)");
	ok(!tb_btf_type_size(b, "struct missing", &size) && !tb_btf_type_size(b, "", &size),
	   "unknown and empty type names have no size");
	tb_btf_free(b);
}

/* One corruption of the hand-made blob: refused, with an offset inside it. */
static void refused(const uint8_t *good, size_t len, size_t at, const void *bytes, size_t n,
		    size_t new_len, const char *what)
{
	uint8_t bad[2048];
	struct tb_btf *b = NULL;
	struct tb_problem err = {0};
	int rc;

	memcpy(bad, good, len);
	if (n)
		memcpy(bad + at, bytes, n);
	rc = tb_btf_parse(bad, new_len, &b, &err);
	ok(rc == -EINVAL && !b && err.reason[0] && err.offset <= new_len,
	   "%s: refused at byte %llu (%s)", what, (unsigned long long)err.offset, err.reason);
	tb_btf_free(b);
}

static void broken_blobs(void)
{
	uint8_t blob[2048];
	size_t len = tiny_blob(blob);
	uint32_t v;

	refused(blob, len, 0, "\xeb\x9f", 2, len, "big-endian magic");
	refused(blob, len, 0, "XX", 2, len, "not BTF");
	refused(blob, len, 2, "\x02", 1, len, "version 2");
	v = 12, refused(blob, len, 4, &v, 4, len, "header length below 24");
	v = 100000, refused(blob, len, 4, &v, 4, len, "header length past the end");
	v = 2, refused(blob, len, 8, &v, 4, len, "type section not 4-byte aligned");
	v = 100000, refused(blob, len, 12, &v, 4, len, "type section past the end");
	v = 0, refused(blob, len, 20, &v, 4, len, "empty string section");
	v = 100000, refused(blob, len, 20, &v, 4, len, "string section past the end");
	refused(blob, len, len - 1, "x", 1, len, "string section not NUL-terminated");
	v = 20u << 24, refused(blob, len, 24 + 4, &v, 4, len, "unknown kind 20");
	v = 0, refused(blob, len, 24 + 4, &v, 4, len, "kind 0 (UNKN)");
	v = 9999, refused(blob, len, 24, &v, 4, len, "type name outside the strings");
	v = 6u << 24 | 0xffff, refused(blob, len, 24 + 16 + 4, &v, 4, len,
				       "enum with 65535 members running past the types");
	v = 9999, refused(blob, len, 24 + 16 + 12, &v, 4, len, "enumerator name outside the strings");
	for (size_t cut = 0; cut < 24; cut++)
		refused(blob, len, 0, NULL, 0, cut, "header cut short");
}

/* ------------------------------------------------------------ real BTF */

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	size_t cap = 1 << 20;
	uint8_t *buf = fd < 0 ? NULL : malloc(cap);
	ssize_t n;

	*len = 0;
	while (buf && (n = read(fd, buf + *len, cap - *len)) > 0) {
		*len += (size_t)n;
		if (*len == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

/* The real blob cut at many lengths: each refused with an offset inside the cut blob. */
static void cut_real_blob(const uint8_t *blob, size_t len)
{
	size_t tried = 0, bad = 0;

	for (size_t i = 1; i < 200; i++) {
		size_t cut = len / 200 * i + i % 7;
		struct tb_btf *b = NULL;
		struct tb_problem err = {0};
		int rc = tb_btf_parse(blob, cut, &b, &err);

		tried++;
		if (rc != -EINVAL || b || err.offset > cut || !err.reason[0])
			bad++;
		tb_btf_free(b);
	}
	is_int(bad, 0, "the real blob cut at %zu lengths: each refused with an offset inside", tried);
}

static struct tb_btf *real_btf(void)
{
	size_t len;
	uint8_t *blob = read_all(TB_BTF_VMLINUX, &len);
	struct tb_btf *b = NULL;
	struct tb_problem err = {0};
	double t0, t1;
	uint64_t size;

	if (!blob || len == 0) {
		free(blob);
		skip(4, "no " TB_BTF_VMLINUX);
		return NULL;
	}
	cut_real_blob(blob, len);
	free(blob);
	t0 = now_ms();
	ok(tb_btf_load(TB_BTF_VMLINUX, &b, &err) == 0, "the running kernel's BTF loads (%s)", err.reason);
	t1 = now_ms();
	if (!b)
		return NULL;
	diag("%zu types, %zu enum constants, read and indexed in %.1f ms", tb_btf_type_count(b),
	     tb_btf_enum_count(b), t1 - t0);
	ok(tb_btf_type_size(b, "struct page", &size) && size == 64, "sizeof(struct page) is 64");
	ok(tb_btf_type_size(b, "gfp_t", &size) && size == 4, "sizeof(gfp_t) is 4");
	return b;
}

/* -------------------------------------------- against the kernel's text */

/* The mode field of every hrtimer_start record of CPU 0, in order. */
static size_t raw_modes(int64_t *modes, size_t max)
{
	struct tb_capture *c = NULL;
	struct tb_capture_page page;
	size_t n = 0;

	if (tb_capture_open(instance, NULL, &c) < 0)
		return 0;
	while (n < max && tb_capture_next_page(c, 0, &page) == 1) {
		struct tb_page_cursor cur;
		struct tb_record rec;
		if (tb_page_cursor_init(&cur, page.data, page.size) < 0)
			break;
		while (n < max && tb_page_next_data(&cur, &rec) == 1) {
			uint16_t id;
			const char *system;
			const struct tb_format *f;
			const struct tb_schema_field *mode;
			int32_t v;

			memcpy(&id, rec.data, 2);
			f = tb_schema_find_event(tb_capture_schema(c), id, &system);
			if (!f || strcmp(f->name, "hrtimer_start"))
				continue;
			mode = tb_format_field(f, "mode");
			if (!mode || mode->size != 4 || mode->offset + 4 > rec.len)
				continue;
			memcpy(&v, (const uint8_t *)rec.data + mode->offset, 4);
			modes[n++] = v;
		}
	}
	tb_capture_close(c);
	return n;
}

/* "mode=ABS|PINNED" is HRTIMER_MODE_ABS_PINNED. */
static bool mode_constant(const char *line, char *name, size_t size)
{
	const char *p = strstr(line, " mode=");
	size_t o = (size_t)snprintf(name, size, "HRTIMER_MODE_");

	if (!p)
		return false;
	for (p += 6; *p && *p != ' ' && o + 1 < size; p++)
		name[o++] = *p == '|' ? '_' : *p;
	name[o] = '\0';
	return strncmp(p - 1, "0x", 2) != 0;
}

static void hrtimer_modes(const struct tb_btf *b)
{
	int64_t modes[512];
	char path[300], *text, *line, name[64];
	size_t n, i = 0, checked = 0, wrong = 0;
	int distinct = 0;
	int64_t seen[16];

	ok(instance_set("tracing_cpumask", "1") == 0 && instance_set("options/hash-ptr", "0") == 0 &&
		   instance_set("events/timer/hrtimer_start/enable", "1") == 0 && instance_set("tracing_on", "1") == 0,
	   "instance on CPU 0 with timer:hrtimer_start");
	/*
	 * Sleeps arm hrtimers (relative mode), on CPU 0, the one traced: this
	 * thread is moved there for them, so that the records checked do not
	 * depend on the kernel's own timers happening to fire on CPU 0.
	 */
	cpu_set_t was, cpu0;
	bool pinned = sched_getaffinity(0, sizeof(was), &was) == 0;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	pinned = pinned && sched_setaffinity(0, sizeof(cpu0), &cpu0) == 0;
	for (int k = 0; k < 20; k++) {
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	usleep(100000); /* and the kernel's own timers run meanwhile: more modes */
	if (pinned)
		sched_setaffinity(0, sizeof(was), &was);
	instance_set("tracing_on", "0");
	snprintf(path, sizeof(path), "%s/trace", instance);
	text = tap_slurp(path, NULL);
	n = raw_modes(modes, 512);
	for (line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		int64_t v;
		if (!strstr(line, " hrtimer_start: "))
			continue;
		if (i >= n)
			break;
		if (mode_constant(line, name, sizeof(name))) {
			checked++;
			if (!tb_btf_enum_value(b, name, &v) || v != modes[i]) {
				if (wrong++ < 5)
					diag("kernel printed %s for mode %lld", name, (long long)modes[i]);
			} else {
				bool dup = false;
				for (int d = 0; d < distinct; d++)
					dup = dup || seen[d] == v;
				if (!dup && distinct < 16)
					seen[distinct++] = v;
			}
		}
		i++;
	}
	free(text);
	ok(checked > 0 && wrong == 0, "%zu hrtimer_start events: BTF gives each printed mode name the "
	   "record's number (%d distinct modes, %zu wrong)", checked, distinct, wrong);
}

/* Every mm_page_alloc line: page = vmemmap_base + pfn * sizeof(struct page). */
static void page_addresses(struct tb_schema *s)
{
	char path[300], *text, *p;
	size_t checked = 0, wrong = 0;
	int64_t base = 0;
	uint64_t size = 0;

	bool known = tb_schema_constant(s, "vmemmap_base", &base) &&
		     tb_schema_type_size(s, "struct page", &size);

	ok(known, "the schema knows vmemmap_base (0x%llx, probed) and sizeof(struct page) (%llu, BTF)",
	   (unsigned long long)base, (unsigned long long)size);
	ok(instance_set("events/timer/hrtimer_start/enable", "0") == 0 &&
		   instance_set("events/kmem/mm_page_alloc/enable", "1") == 0 && instance_set("tracing_on", "1") == 0,
	   "instance with kmem:mm_page_alloc");
	{
		size_t len = 32 * 4096;
		volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (size_t i = 0; m != MAP_FAILED && i < len; i += 4096)
			m[i] = 1;
		if (m != MAP_FAILED)
			munmap((void *)m, len);
	}
	instance_set("tracing_on", "0");
	snprintf(path, sizeof(path), "%s/trace", instance);
	text = tap_slurp(path, NULL);
	for (p = text; p && (p = strstr(p, "mm_page_alloc: page=")) != NULL; p++) {
		unsigned long long page, pfn;
		if (sscanf(p, "mm_page_alloc: page=%llx pfn=0x%llx", &page, &pfn) != 2 || page == 0)
			continue;
		checked++;
		if (page != (uint64_t)base + pfn * size && wrong++ < 5)
			diag("kernel: page=%llx pfn=0x%llx", page, pfn);
	}
	free(text);
	ok(checked > 0 && wrong == 0, "%zu mm_page_alloc lines of the kernel agree with them "
	   "(%zu do not)", checked, wrong);
}

/* A schema of the running kernel with the formats given (system/event). */
static struct tb_schema *running_schema(const char *const *events, size_t n)
{
	struct tb_schema *s = tb_schema_new();
	size_t len;
	char *kallsyms = tap_slurp("/proc/kallsyms", &len);

	tb_schema_use_running_kernel(s, TRACEFS);
	if (kallsyms) /* _text, for phys_base */
		tb_schema_load_kallsyms(s, "/proc/kallsyms", kallsyms, len);
	free(kallsyms);
	for (size_t i = 0; i < n; i++) {
		char path[300], system[64];
		size_t len;
		char *text;
		snprintf(path, sizeof(path), TRACEFS "/events/%s/format", events[i]);
		snprintf(system, sizeof(system), "%.*s", (int)strcspn(events[i], "/"), events[i]);
		text = tap_slurp(path, &len);
		if (text)
			tb_schema_load_format(s, path, system, text, len);
		free(text);
	}
	return s;
}

static void constants_file(struct tb_schema *live)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int n = tb_schema_write_constants(live, NULL, 0, f);
	struct tb_schema *back = tb_schema_new();
	int64_t a, b;
	uint64_t sa, sb;
	bool found;
	const char *names[] = {"HRTIMER_MODE_ABS", "HRTIMER_MODE_REL_PINNED_HARD", "vmemmap_base"};

	fclose(f);
	ok(n > 10, "constants written for hrtimer_start and mm_page_alloc: %d", n);
	diag("the file:\n%.600s", text ? text : "");
	ok(text && strstr(text, "\nHRTIMER_MODE_ABS 0\n") && strstr(text, "\nsizeof(struct page) 64\n") &&
		   strstr(text, "\nvmemmap_base 0x") && strstr(text, "\nsizeof(gfp_t) 4\n"),
	   "it has HRTIMER_MODE_ABS 0, vmemmap_base, sizeof(struct page) 64, sizeof(gfp_t) 4");
	ok(text && !strstr(text, "\nREC ") && !strstr(text, "\nhrtimer ") && !strstr(text, "ABS|"),
	   "and no field names or string contents");
	is_int(tb_schema_load_constants(back, "constants", text, len), 0, "it reads back");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ok(tb_schema_constant(live, names[i], &a) && tb_schema_constant(back, names[i], &b) && a == b,
		   "%s is the same read back", names[i]);
	ok(tb_schema_type_size(back, "struct page", &sb) && tb_schema_type_size(live, "struct page", &sa) &&
		   sa == sb, "sizeof(struct page) is the same read back");
	a = -1;
	found = tb_schema_constant(live, "phys_base", &a);
	ok(found && (a & 0x1fffff) == 0,
	   "phys_base of the running kernel (0x%llx) is found and 2 MiB aligned (CONFIG_PHYSICAL_ALIGN)",
	   (unsigned long long)a);
	free(text);
	tb_schema_free(back);
}

static void live_kernel(const struct tb_btf *b)
{
	static const char *const events[] = {"timer/hrtimer_start", "kmem/mm_page_alloc"};
	struct tb_schema *s;
	cpu_set_t cpu0, was;
	bool pinned;

	if (!b || geteuid() != 0 || instance_create("tb-btf") < 0) {
		skip(1, "against the kernel's text: needs root, tracefs and BTF");
		return;
	}
	/* The instance records CPU 0 only (one CPU: records and lines in the same order). */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	pinned = sched_getaffinity(0, sizeof(was), &was) == 0 &&
		 sched_setaffinity(0, sizeof(cpu0), &cpu0) == 0;
	ok(pinned, "the test runs on CPU 0 while it traces");
	hrtimer_modes(b);
	s = running_schema(events, 2);
	page_addresses(s);
	if (pinned)
		sched_setaffinity(0, sizeof(was), &was);
	instance_close();
	constants_file(s);
	tb_schema_free(s);
}

/* ------------------------------------------------- constants by hand */

struct diags {
	size_t n;
	uint64_t offset[8];
};

static void collect(void *ctx, const struct tb_problem *d)
{
	struct diags *ds = ctx;

	if (ds->n < 8)
		ds->offset[ds->n] = d->offset;
	ds->n++;
	diag("  reported: byte %llu: %s", (unsigned long long)d->offset, d->reason);
}

static void constants_by_hand(void)
{
	static const char text[] = "# comment\n"
				   "A 1\n"
				   "B -5\n"
				   "C 0xffffea0000000000\n"
				   "sizeof(struct  page) 64\n"
				   "\n"
				   "1BAD 3\n"          /* 65: a name cannot start with a digit */
				   "D 12x\n"           /* 72+2: not a number */
				   "A 2\n"             /* 78+2: A again, another value */
				   "A 1\n"             /* the same value again is fine */
				   "E  1\n"            /* 86+2: two spaces */
				   "sizeof(x 4\n";     /* 91+7: no ')' */
	struct tb_constants *c = tb_constants_new();
	struct diags ds = {0};
	int64_t v;
	uint64_t size;
	static const uint64_t want[] = {65, 74, 80, 88, 98};

	is_int(tb_constants_parse(c, "k", text, sizeof(text) - 1, collect, &ds), -EINVAL,
	       "constants with bad lines: -EINVAL");
	ok(ds.n == 5 && !memcmp(ds.offset, want, sizeof(want)),
	   "five bad lines reported at their bad bytes");
	ok(tb_constants_value(c, "A", &v) && v == 1 && tb_constants_value(c, "B", &v) && v == -5 &&
		   tb_constants_value(c, "C", &v) && (uint64_t)v == 0xffffea0000000000ull,
	   "the good values are kept (decimal, negative, 64-bit hex)");
	ok(tb_constants_type_size(c, "struct page", &size) && size == 64,
	   "sizeof(struct page) found whatever the blanks");
	tb_constants_free(c);
}

/* A capture directory's "constants" file reaches its schema; a bad line names the file. */
static void constants_in_capture(void)
{
	static const char *const links[][2] = {
		{"header_page", "header_page"}, {"cpu0.raw", "cpu0.raw"}, {"meta.txt", "meta.txt"}};
	static const char text[] = "HRTIMER_MODE_REL 1\nsizeof(struct page) 64\nbad line\n";
	char dir[] = "/tmp/tb-test-btf-XXXXXX", path[PATH_MAX];
	struct diags ds = {0};
	struct tb_capture_opts o = {.diag = collect, .diag_ctx = &ds};
	struct tb_capture *c = NULL;
	int64_t v;
	uint64_t size;
	FILE *f;

	if (!ok(capdir_make(dir, "tests/data/kernel/cap-g-kernel-printers", links, 3) == 0,
		"a capture directory with a constants file"))
		return;
	snprintf(path, sizeof(path), "%s/constants", dir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	ok(tb_capture_open(dir, &o, &c) == 0, "it opens");
	ok(c && tb_schema_constant(tb_capture_schema(c), "HRTIMER_MODE_REL", &v) && v == 1 &&
		   tb_schema_type_size(tb_capture_schema(c), "struct page", &size) && size == 64,
	   "its schema has the file's constants");
	ok(ds.n == 1 && ds.offset[0] == 46, "the bad line is reported at byte 46 of the file (its value)");
	tb_capture_close(c);
	unlink(path);
	capdir_remove(dir, links, 2);
}

/* phys_base = __pa(_text) - (_text - __START_KERNEL_map), from /proc/iomem and kallsyms. */
static void phys_base(void)
{
	static const char syms[] = "ffffffff81000000 T _stext\nffffffff81200000 T _text\n";
	static const char iomem[] = "00001000-0009fbff : System RAM\n"
				    "00100000-bfffffff : System RAM\n"
				    "  05200000-062099ff : Kernel code\n"
				    "  06400000-06e09fff : Kernel rodata\n";
	static const char hidden[] = "00000000-00000000 : System RAM\n"
				     "  00000000-00000000 : Kernel code\n";
	struct tb_ksyms *k = NULL;
	struct tb_kvars vars = {0};
	uint64_t v;

	tb_ksyms_parse("k", syms, sizeof(syms) - 1, NULL, NULL, &k);
	ok(tb_kvars_phys_base(iomem, sizeof(iomem) - 1, k, &vars) == 0 &&
		   tb_kvars_get(&vars, "phys_base", &v) && v == 0x5200000 - 0x1200000,
	   "phys_base: Kernel code at 0x5200000, _text 0xffffffff81200000: 0x4000000");
	ok(tb_kvars_phys_base(hidden, sizeof(hidden) - 1, k, &vars) == -ENOENT,
	   "addresses hidden in /proc/iomem: not found");
	tb_ksyms_free(k);
}

static void identifiers_cb(void *ctx, const char *name)
{
	char *out = ctx;

	strcat(out, name);
	strcat(out, ",");
}

static void identifiers(void)
{
	static const char fmt[] =
		"\"page=%p mode=%s ABS\", ((struct page *)vmemmap_base) + (REC->pfn), "
		"__print_symbolic(REC->mode, { HRTIMER_MODE_ABS, \"ABS\" }), (gfp_t)0x10u, x.y, p->q, "
		"sizeof(union u), 'c'";
	char out[512] = "";

	tb_print_fmt_identifiers(fmt, sizeof(fmt) - 1, identifiers_cb, out);
	is_str(out, "struct page,vmemmap_base,__print_symbolic,HRTIMER_MODE_ABS,gfp_t,x,p,union u,",
	       "identifiers of a print fmt: no string contents, fields, members or keywords");
}

int main(void)
{
	struct tb_btf *b;

	instance_remove_on_exit();
	alarm(120);
	hand_made();
	broken_blobs();
	constants_by_hand();
	constants_in_capture();
	phys_base();
	identifiers();
	b = real_btf();
	live_kernel(b);
	tb_btf_free(b);
	return done_testing();
}
