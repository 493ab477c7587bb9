/*
 * Our kallsyms table (src/decode/ksyms.c).
 *
 * - Strict parsing: every kind of bad line is reported with the byte
 *   offset of the bad byte and left out; the good lines around it stay.
 * - Lookups on a small table whose answers follow from the kernel's rules
 *   (first alias, size to the next higher address of the same group,
 *   image ranges, modules).
 * - The live /proc/kallsyms: every symbol of the text (checked by a plain
 *   scan written here) resolves to the first alias at its address; load
 *   time is measured.
 * - The kernel's own "+offset/size": a private instance prints kernel
 *   stacks with the sym-offset option (name+0xOFF/0xSIZE, from the kernel's
 *   kallsyms_lookup_size_offset); our lookup of name's start + OFF must
 *   give that name and SIZE.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decode/ksyms.h"
#include "lib/instance.h"
#include "lib/tap.h"
#include "decode/schema_kernel.h"

#define TRACEFS "/sys/kernel/tracing"

struct diags {
	size_t n;
	uint64_t offset[16];
	char reason[16][TB_PROBLEM_REASON_MAX];
};

static void collect(void *ctx, const struct tb_problem *d)
{
	struct diags *ds = ctx;

	if (ds->n < 16) {
		ds->offset[ds->n] = d->offset;
		snprintf(ds->reason[ds->n], sizeof(ds->reason[0]), "%s", d->reason);
		ds->n++;
	}
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---------------------------------------------------------- bad lines */

static void bad_lines(void)
{
	static const struct {
		const char *line;
		size_t bad_at; /* offset of the bad byte inside the line */
		const char *reason_has;
	} cases[] = {
		{"ffffffff81000000  T two_spaces", 17, "type letter"},
		{"zzzz T not_hex", 0, "hex address"},
		{"ffffffff81000000 T", 18, "one space"},
		{"ffffffff81000000 TT name", 18, "one space"},
		{"ffffffff81000000 T ", 19, "no symbol name"},
		{"1ffffffff81000000 T too_long", 16, "longer than 16"},
		{"ffffffff81000000 T name\t[mod", 28, "not closed"},
		{"ffffffff81000000 T name\t[]", 25, "not closed"},
		{"ffffffff81000000 T name\t[mod] x", 29, "after the module"},
		{"ffffffff81000000 T name junk", 24, "not a [module]"},
		{"ffffffff81000000 T na\rme", 21, "carriage return"},
		{"", 0, "no hex address"},
	};
	struct tb_ksyms *k;
	struct tb_ksym s;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[256];
		struct diags ds = {0};
		size_t prefix = strlen("ffffffff81000010 T good_before\n");
		int n = snprintf(text, sizeof(text), "ffffffff81000010 T good_before\n%s\n"
			     "ffffffff81000020 T good_after\n", cases[i].line);
		int rc = tb_ksyms_parse("k", text, (size_t)n, collect, &ds, &k);

		is_int(rc, -EINVAL, "bad line '%s' is refused", cases[i].line);
		ok(ds.n == 1 && ds.offset[0] == prefix + cases[i].bad_at &&
			   strstr(ds.reason[0], cases[i].reason_has),
		   "  one report at byte %zu (%s)", prefix + cases[i].bad_at, cases[i].reason_has);
		if (ds.n)
			diag("  said: byte %llu: %s", (unsigned long long)ds.offset[0], ds.reason[0]);
		ok(k && tb_ksyms_count(k) == 2 && tb_ksyms_lookup(k, 0xffffffff81000010ull, &s) &&
			   !strcmp(s.name, "good_before"),
		   "  the good lines around it are kept");
		tb_ksyms_free(k);
	}
	{
		static const char nul[] = "ffffffff81000010 T good\nffffffff81000000 T a\0b\n";
		struct diags ds = {0};
		int rc = tb_ksyms_parse("k", nul, sizeof(nul) - 1, collect, &ds, &k);
		ok(rc == -EINVAL && ds.n == 1 && ds.offset[0] == 24 + 20 && strstr(ds.reason[0], "NUL"),
		   "a NUL byte is reported at its offset");
		tb_ksyms_free(k);
	}
	{
		static const char hidden[] = "0000000000000000 T a\n0000000000000000 t b\n";
		int rc = tb_ksyms_parse("k", hidden, sizeof(hidden) - 1, NULL, NULL, &k);
		ok(rc == -ENOENT && !k, "addresses hidden by kptr_restrict (all 0): -ENOENT, no table");
	}
}

/* ------------------------------------------------------ rules, by hand */

/*
 * A table shaped like the kernel's: aliases at one address, the image's
 * bounds, init text, a data symbol above _etext (listed, but outside the
 * ranges the kernel resolves without KALLSYMS_ALL), and two modules whose
 * symbols come in their own order.
 */
static const char table[] =
	"ffffffff81000000 T first_alias\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T func_a\n"
	"ffffffff81000230 t func_b\n"
	"ffffffff81000400 T _etext\n"
	"ffffffff81200000 D some_data\n"
	"ffffffff83000000 T _sinittext\n"
	"ffffffff83000000 t init_func\n"
	"ffffffff83000080 T _einittext\n"
	"ffffffffc0002000 t mod_late\t[mod_x]\n"
	"ffffffffc0001000 t mod_early\t[mod_x]\n"
	"ffffffffc0001000 t mod_early_alias\t[mod_x]\n"
	"ffffffffc0001800 T mod_y_func\t[mod_y]\n";

static void check(const struct tb_ksyms *k, uint64_t addr, const char *name, uint64_t start,
		  uint64_t size, const char *module, const char *why)
{
	struct tb_ksym s;
	bool found = tb_ksyms_lookup(k, addr, &s);

	if (!name) {
		ok(!found, "0x%llx resolves to nothing: %s", (unsigned long long)addr, why);
		return;
	}
	ok(found && !strcmp(s.name, name) && s.start == start && s.size == size &&
		   (module ? s.module && !strcmp(s.module, module) : !s.module),
	   "0x%llx is %s+0x%llx/0x%llx%s%s: %s", (unsigned long long)addr, name,
	   (unsigned long long)(addr - start), (unsigned long long)size, module ? " " : "",
	   module ? module : "", why);
	if (found)
		diag("  got %s start 0x%llx size 0x%llx module %s", s.name, (unsigned long long)s.start,
		     (unsigned long long)s.size, s.module ? s.module : "-");
}

static void lookup_rules(void)
{
	struct tb_ksyms *k;
	uint64_t a;

	if (!ok(tb_ksyms_parse("table", table, sizeof(table) - 1, NULL, NULL, &k) == 0, "table parses"))
		return;
	is_int(tb_ksyms_count(k), 14, "14 symbols");
	check(k, 0xffffffff81000000ull, "first_alias", 0xffffffff81000000ull, 0x100, NULL,
	      "the first of three aliases, as the kernel picks");
	check(k, 0xffffffff810000ffull, "first_alias", 0xffffffff81000000ull, 0x100, NULL,
	      "up to the next address");
	check(k, 0xffffffff81000123ull, "func_a", 0xffffffff81000100ull, 0x130, NULL,
	      "size is the distance to the next symbol");
	check(k, 0xffffffff810003ffull, "func_b", 0xffffffff81000230ull, 0x1d0, NULL,
	      "the last text symbol ends at _etext");
	check(k, 0xffffffff81000400ull, NULL, 0, 0, NULL, "_etext is outside [_stext, _etext)");
	check(k, 0xffffffff81200010ull, NULL, 0, 0, NULL,
	      "data above _etext is not resolved without _end (CONFIG_KALLSYMS_ALL)");
	check(k, 0xffffffff80ffffffull, NULL, 0, 0, NULL, "below _stext");
	check(k, 0xffffffff83000040ull, "_sinittext", 0xffffffff83000000ull, 0x80, NULL,
	      "init text resolves; _sinittext is listed before init_func at that address");
	check(k, 0xffffffffc0001004ull, "mod_early", 0xffffffffc0001000ull, 0x1000, "mod_x",
	      "module symbols: the first listed of an address, size to the module's next");
	check(k, 0xffffffffc0001900ull, "mod_y_func", 0xffffffffc0001800ull, 0, "mod_y",
	      "the last symbol of a module has no known end (size 0)");
	check(k, 0xffffffffc0002010ull, "mod_late", 0xffffffffc0002000ull, 0, "mod_x",
	      "module symbols listed out of address order are sorted");
	ok(tb_ksyms_address(k, "func_b", &a) && a == 0xffffffff81000230ull, "address of func_b");
	ok(!tb_ksyms_address(k, "mod_early", &a), "tb_ksyms_address names image symbols only");
	tb_ksyms_free(k);
}

/*
 * A tracebuf program's table of keys (tb_events_kallsyms: its own _stext and
 * _etext around small numbers) before a kernel's kallsyms, in one text, as a
 * trace.dat joining `record`'s two buffers holds them: the kernel's symbols
 * resolve (the program's bounds used to shut them out, so `offcpu` printed
 * the stacks of `record --offcpu` as bare addresses), and so do the keys;
 * what lies outside both images does not.  In one pass and in two halves.
 */
static void joined_images(void)
{
	static const char keys[] = "0000000000000001 t tracing_mark_write\n"
				   "0000000000000001 T _stext\n"
				   "0000000000000002 t serve\n"
				   "0000000000000003 T _etext\n";
	char text[sizeof(keys) + sizeof(table)];
	struct tb_ksyms *k;

	snprintf(text, sizeof(text), "%s%s", keys, table);
	for (int halves = 1; halves <= 2; halves++) {
		tb_ksyms_set_split(halves == 1 ? SIZE_MAX : 0);
		if (!ok(tb_ksyms_parse("joined", text, strlen(text), NULL, NULL, &k) == 0,
			"a program's keys and a kernel's kallsyms in one text parse (%d part%s)", halves,
			halves == 1 ? "" : "s"))
			continue;
		check(k, 0xffffffff81000123ull, "func_a", 0xffffffff81000100ull, 0x130, NULL,
		      "the kernel's image resolves after the program's table");
		check(k, 0x2, "serve", 0x2, 0x1, NULL, "the program's key resolves");
		check(k, 0x10, NULL, 0, 0, NULL, "between the two images");
		check(k, 0xffffffff81200010ull, NULL, 0, 0, NULL, "above the kernel's _etext");
		tb_ksyms_free(k);
	}
	tb_ksyms_set_split(1u << 20);
}

/* ---------------------------------------------------------- live table */

/* The first name listed at each address, by a plain scan of the text. */
static void live_table(const char *text, size_t len, struct tb_ksyms *k)
{
	size_t checked = 0, wrong = 0;
	uint64_t prev_addr = 0;
	const char *p = text, *end = text + len;
	struct tb_ksym s;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long long addr;
		char type, name[600];

		if (!nl)
			break;
		if (sscanf(p, "%llx %c %599s", &addr, &type, name) == 3 && !memchr(p, '[', (size_t)(nl - p)) &&
		    addr != prev_addr && (type == 'T' || type == 't') && checked < 2000000) {
			/* Every 50th new address of the text, and its last byte before the next. */
			static unsigned every;
			if (every++ % 50 == 0 && tb_ksyms_lookup(k, addr, &s)) {
				checked++;
				if (strcmp(s.name, name) || s.start != addr) {
					if (wrong++ < 5)
						diag("0x%llx: ours %s, first listed %s", addr, s.name, name);
				}
			}
		}
		prev_addr = addr;
		p = nl + 1;
	}
	ok(checked > 1000, "live: %zu text symbols looked up", checked);
	is_int(wrong, 0, "live: each resolves to the first name listed at its address");
}

static char *slurp_fd(int fd, size_t *len)
{
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	ssize_t n;

	*len = 0;
	while (buf && (n = read(fd, buf + *len, cap - *len)) > 0) {
		*len += (size_t)n;
		if (*len == cap)
			buf = realloc(buf, cap *= 2);
	}
	return buf;
}

static struct tb_ksyms *live_kallsyms(void)
{
	int fd = open("/proc/kallsyms", O_RDONLY);
	struct tb_ksyms *k = NULL;
	double t0, t1, t2;
	size_t len;
	char *text;
	int rc;

	if (fd < 0) {
		skip(3, "no /proc/kallsyms");
		return NULL;
	}
	t0 = now_ms();
	text = slurp_fd(fd, &len);
	close(fd);
	t1 = now_ms();
	rc = tb_ksyms_parse("/proc/kallsyms", text, len, NULL, NULL, &k);
	t2 = now_ms();
	if (rc == -ENOENT) {
		skip(3, "kallsyms addresses are hidden here");
		free(text);
		return NULL;
	}
	is_int(rc, 0, "live /proc/kallsyms (%zu bytes, %zu symbols) parses without a bad line", len,
	       tb_ksyms_count(k));
	diag("reading /proc/kallsyms took %.1f ms (the kernel writing it); parsing it %.1f ms",
	     t1 - t0, t2 - t1);
	live_table(text, len, k);
	free(text);
	return k;
}

/* ------------------------------------------- the kernel's +offset/size */

/* " => name+0xOFF/0xSIZE" lines of the kernel's stacks, against our lookups. */
static void kernel_offsets(const struct tb_ksyms *k)
{
	char *text, *p;
	size_t checked = 0, wrong = 0;

	if (!k || geteuid() != 0 || instance_create("tb-ksyms") < 0) {
		skip(2, "kernel +offset/size: needs root, tracefs and kallsyms");
		return;
	}
	ok(instance_set("options/sym-offset", "1") == 0 && instance_set("events/syscalls/sys_enter_getppid/enable", "1") == 0 &&
		   instance_set("events/syscalls/sys_enter_getppid/trigger", "stacktrace") == 0 &&
		   instance_set("tracing_on", "1") == 0,
	   "instance with kernel stacks printed with sym-offset");
	for (int i = 0; i < 3; i++)
		getppid();
	instance_set("tracing_on", "0");
	text = instance_read("trace");
	for (p = text; p && (p = strstr(p, "\n => ")) != NULL; p++) {
		char name[600];
		unsigned long long off, size;
		uint64_t start;
		struct tb_ksym s;

		if (sscanf(p + 5, "%599[^+\n]+0x%llx/0x%llx", name, &off, &size) != 3)
			continue;
		checked++;
		if (!tb_ksyms_address(k, name, &start) || !tb_ksyms_lookup(k, start + off, &s)) {
			if (wrong++ < 5)
				diag("kernel: %s+0x%llx/0x%llx, ours: not found", name, off, size);
		} else if (strcmp(s.name, name) || s.size != size) {
			if (wrong++ < 5)
				diag("kernel: %s+0x%llx/0x%llx, ours: %s/0x%llx", name, off, size, s.name,
				     (unsigned long long)s.size);
		}
	}
	free(text);
	instance_close();
	ok(checked >= 4 && wrong == 0, "%zu stack entries: our name and size equal the kernel's "
	   "name+off/size (%zu differ)", checked, wrong);
}

/*
 * The 16-digit address, read eight bytes at a time: every byte value at
 * every position of an address, against strtoull (the oracle): a hex
 * digit (either case) gives strtoull's number, anything else refuses the
 * line.
 */
static void address_bytes(void)
{
	static const char base[] = "ffffffffA1b2C3d4";
	size_t wrong = 0, tried = 0;

	for (int pos = 0; pos < 16; pos++) {
		for (int b = 0; b < 256; b++) {
			char line[64], digits[17];
			struct tb_ksyms *k = NULL;
			struct tb_ksym sym;
			bool hex = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
			int rc;
			if (b == '\n')
				continue; /* it would make two lines */
			memcpy(digits, base, 16);
			digits[pos] = (char)b;
			digits[16] = '\0';
			memcpy(line, digits, 16);
			memcpy(line + 16, " T some_symbol\n", 15);
			rc = tb_ksyms_parse("k", line, 31, NULL, NULL, &k);
			tried++;
			if (hex) {
				uint64_t want = strtoull(digits, NULL, 16);
				tb_ksyms_at(k, 0, &sym);
				wrong += rc != 0 || tb_ksyms_count(k) != 1 || sym.start != want;
			} else {
				wrong += rc == 0 || tb_ksyms_count(k) != 0;
			}
			tb_ksyms_free(k);
		}
	}
	ok(wrong == 0, "every byte at every place of a 16-digit address: %zu lines read as strtoull reads them (%zu "
		       "wrong)",
	   tried, wrong);
}

/* Every problem a parse tells, in order, as "offset: reason" lines. */
struct told {
	char *text;
	size_t len, cap;
};

static void tell_into(void *ctx, const struct tb_problem *d)
{
	struct told *t = ctx;
	char line[TB_PROBLEM_REASON_MAX + 32];
	int n = snprintf(line, sizeof(line), "%llu: %s\n", (unsigned long long)d->offset, d->reason);

	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = 2 * (t->len + (size_t)n + 1);
		t->text = realloc(t->text, t->cap);
	}
	memcpy(t->text + t->len, line, (size_t)n + 1);
	t->len += (size_t)n;
}

/*
 * A kallsyms of ~3 MB as the kernel lists one: the image sorted, aliases,
 * the bounds, then modules in runs (one of them across the middle, and out
 * of address order), bad lines here and there (both halves).
 */
static char *big_kallsyms(size_t *len)
{
	size_t cap = 4u << 20, n = 0;
	char *t = malloc(cap);
	uint64_t a = 0xffffffff81000000ull;

	n += (size_t)sprintf(t + n, "%016llx T _stext\n", (unsigned long long)a);
	for (int i = 0; i < 40000; i++, a += 0x40) {
		n += (size_t)sprintf(t + n, "%016llx %c fn_%d\n", (unsigned long long)a, i % 3 ? 'T' : 't', i);
		if (i % 977 == 0)
			n += (size_t)sprintf(t + n, "%016llx T alias_%d\n", (unsigned long long)a, i);
		if (i % 7919 == 5)
			n += (size_t)sprintf(t + n, "%016llx T bad name_%d\n", (unsigned long long)a, i);
	}
	n += (size_t)sprintf(t + n, "%016llx T _etext\n", (unsigned long long)a);
	a = 0xffffffffc0000000ull;
	for (int m = 0; m < 6; m++) {
		int count = m == 2 ? 40000 : 2000; /* module 2 spans the middle of the text */
		for (int i = 0; i < count; i++) {
			uint64_t at = a + (uint64_t)(m == 3 ? count - i : i) * 0x20; /* module 3 backwards */
			n += (size_t)sprintf(t + n, "%016llx t m%d_fn_%d\t[mod_%d]\n", (unsigned long long)at, m, i, m);
			if (i % 9001 == 17)
				n += (size_t)sprintf(t + n, "%016llx t m%d_bad\t[mod_%d\n", (unsigned long long)at, m, m);
		}
		a += 0x100000;
	}
	/* mod_1 named again at the end: one module, however often it is listed */
	n += (size_t)sprintf(t + n, "%016llx t late_fn\t[mod_1]\n", (unsigned long long)a);
	*len = n;
	return t;
}

static bool same_symbol(const struct tb_ksym *x, const struct tb_ksym *y)
{
	return x->start == y->start && x->type == y->type && !strcmp(x->name, y->name) && !x->module == !y->module &&
	       (!x->module || !strcmp(x->module, y->module));
}

/* The same text parsed in one pass and in two halves at once: the same table, problems and answers. */
static void split_parse(void)
{
	size_t len, differ = 0, looked = 0;
	char *text = big_kallsyms(&len);
	struct told one = {0}, two = {0};
	struct tb_ksyms *k1, *k2;
	int rc1, rc2;

	tb_ksyms_set_split(SIZE_MAX);
	rc1 = tb_ksyms_parse("k", text, len, tell_into, &one, &k1);
	tb_ksyms_set_split(0);
	rc2 = tb_ksyms_parse("k", text, len, tell_into, &two, &k2);
	tb_ksyms_set_split(1u << 20);
	ok(rc1 == -EINVAL && rc2 == rc1 && k1 && k2 && tb_ksyms_count(k1) == tb_ksyms_count(k2) &&
	       tb_ksyms_count(k1) > 50000,
	   "a %zu-byte kallsyms in one pass and in two halves: %d and %d, %zu and %zu symbols", len, rc1, rc2,
	   tb_ksyms_count(k1), tb_ksyms_count(k2));
	ok(one.len && two.len == one.len && !memcmp(one.text, two.text, one.len),
	   "the same problems, in the same order (%zu bytes of them)", one.len);
	for (size_t i = 0; k1 && k2 && i < tb_ksyms_count(k1) && i < tb_ksyms_count(k2); i++) {
		struct tb_ksym x, y;
		tb_ksyms_at(k1, i, &x);
		tb_ksyms_at(k2, i, &y);
		differ += !same_symbol(&x, &y);
	}
	for (uint64_t addr = 0xffffffff80fffff0ull; k1 && k2 && addr < 0xffffffffc0700000ull;
	     addr += addr < 0xffffffff82000000ull ? 0x1f : 0x3fff1) {
		struct tb_ksym x = {0}, y = {0};
		bool f1 = tb_ksyms_lookup(k1, addr, &x), f2 = tb_ksyms_lookup(k2, addr, &y);
		looked++;
		differ += f1 != f2 || (f1 && (!same_symbol(&x, &y) || x.size != y.size));
	}
	ok(differ == 0, "every entry and %zu look-ups (sizes to the next symbol of the module included) agree", looked);
	tb_ksyms_free(k1);
	tb_ksyms_free(k2);
	free(one.text);
	free(two.text);
	free(text);
}

int main(void)
{
	struct tb_ksyms *k;

	instance_remove_on_exit();
	alarm(120);
	bad_lines();
	address_bytes();
	split_parse();
	lookup_rules();
	joined_images();
	k = live_kallsyms();
	kernel_offsets(k);
	tb_ksyms_free(k);
	return done_testing();
}
