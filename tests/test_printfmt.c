/*
 * The print-fmt compiler (src/print/pf_*.c) and the kernel's vsprintf
 * rules (src/print/kvsprintf.c) against their oracles:
 *
 *  1. the kernel's vsprintf facts, one directive at a time (each expected
 *     string is a rule of lib/vsprintf.c, written down as a specification);
 *  2. every construct of the print fmt language on a synthetic event;
 *  3. bprint (trace_printk) argument packing, as vbin_printf() lays it out;
 *  4. limits: a 200,000-deep nesting is refused fast, a 255-deep one runs
 *     on a small stack;
 *  5. libtraceevent as an oracle: every format file of the bundled captures
 *     and of the running kernel, compiled and run on synthetic records;
 *     each difference must be one libtraceevent is known to get wrong, by a
 *     named rule (the table of rules is printed);
 *  6. the kernel's own text: every sched/irq/timer/signal record of the
 *     bundled captures equals the kernel's trace.txt line (hashed %p masked);
 *  7. a live instance of the running kernel with hash-ptr off, compared
 *     line by line (skipped without root or tracefs);
 *  8. speed over the captures' records (reported, bounded loosely);
 *  9. the fused programs (pf_specialise.c) against the generic ones they
 *     are made from: every format file above and every construct of 2,
 *     on synthetic records (whole and cut short) and on the captures'
 *     records, print the same bytes and fail the same way; and the typical
 *     events' programs are fused to one op per directive.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "print/bprint.h"
#include "print/kvsprintf.h"
#include "lib/records.h"
#include "lib/tap.h"
#include "print/pf_internal.h"
#include "print/printfmt.h"
#include "tracebuf/page.h"
#include "tracebuf/schema.h"

#define DATA "tests/data/kernel/"

/* The stack a 255-deep expression is given: sanitizers make every frame several times larger. */
#if defined(__SANITIZE_ADDRESS__)
#define DEEP_STACK (4096 * 1024)
#else
#define DEEP_STACK (256 * 1024)
#endif

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}


/* ============================================================ 1. vsprintf */

/* One directive of the kernel's vsprintf applied to a number. */
static const char *knum(const char *fmt, uint64_t v)
{
	static char buf[256];
	struct tb_strbuf sb = {0};
	struct kv_spec s;
	size_t n = kv_decode(fmt, &s);

	if (s.kind == KV_INVALID)
		snprintf(buf, sizeof(buf), "<invalid>");
	else {
		if (s.kind == KV_NUMBER)
			kv_number(&sb, kv_number_value(&s, v), &s);
		else if (s.kind == KV_CHAR)
			kv_char(&sb, (uint8_t)v, &s);
		else if (s.kind == KV_POINTER)
			kv_pointer_value(&sb, v, &s, NULL);
		else if (s.kind == KV_STRING)
			kv_string_at(&sb, v, &s, NULL);
		snprintf(buf, sizeof(buf), "%.*s%s", (int)sb.len, sb.buf ? sb.buf : "", fmt + n);
	}
	sb_free(&sb);
	return buf;
}

static const char *kstr(const char *fmt, const char *str)
{
	static char buf[256];
	struct tb_strbuf sb = {0};
	struct kv_spec s;
	size_t n = kv_decode(fmt, &s);

	kv_string(&sb, str, strlen(str) + 1, &s);
	snprintf(buf, sizeof(buf), "%.*s%s", (int)sb.len, sb.buf ? sb.buf : "", fmt + n);
	sb_free(&sb);
	return buf;
}

static const char *kmem(const char *fmt, const void *p, size_t n, int width)
{
	static char buf[512];
	struct tb_strbuf sb = {0};
	struct kv_spec s;
	bool ok;

	kv_decode(fmt, &s);
	if (width != -2)
		kv_set_width(&s, width);
	ok = kv_pointer_memory(&sb, p, n, &s);
	snprintf(buf, sizeof(buf), "%s%.*s", ok ? "" : "<short>", (int)sb.len, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return buf;
}

static void test_vsprintf(void)
{
	static const struct {
		const char *fmt;
		uint64_t v;
		const char *want;
	} cases[] = {
	/* plain conversions */
	{"%d", (uint64_t)-5, "-5"}, {"%u", 5, "5"}, {"%x", 255, "ff"}, {"%X", 255, "FF"},
	{"%o", 8, "10"}, {"%i", 7, "7"}, {"%c", 'A', "A"},
	/* the argument is read at the directive's size (va_arg of that type) */
	{"%d", 0xffffffffull, "-1"}, {"%u", (uint64_t)-1, "4294967295"}, {"%hhu", 0x1ff, "255"},
	{"%hhd", 0xff, "-1"}, {"%hd", 0xffff, "-1"}, {"%hu", 0x12345, "9029"},
	{"%ld", (uint64_t)-1, "-1"}, {"%lu", (uint64_t)-1, "18446744073709551615"},
	{"%lld", (uint64_t)INT64_MIN, "-9223372036854775808"}, {"%Lu", 12, "12"},
	{"%zu", 1ull << 40, "1099511627776"}, {"%zd", (uint64_t)-2, "-2"}, {"%td", (uint64_t)-3, "-3"},
	{"%Hu", 0x1ff, "255"}, /* H alone is the char size too */
	/* '#': 0x prefix even for zero (glibc prints "0"); octal 0 stays "0" */
	{"%#x", 0, "0x0"}, {"%#x", 255, "0xff"}, {"%#X", 255, "0XFF"}, {"%#o", 8, "010"},
	{"%#o", 0, "0"}, {"%#lx", 0, "0x0"},
	/* width and zero padding count the prefix */
	{"%#08x", 255, "0x0000ff"}, {"%#016llx", 0, "0x00000000000000"}, {"%08x", 255, "000000ff"},
	{"%5d", 42, "   42"}, {"%-5d|", 42, "42   |"}, {"%05d", (uint64_t)-42, "-0042"},
	{"%+d", 5, "+5"}, {"% d", 5, " 5"}, {"%+d", (uint64_t)-5, "-5"}, {"%-05d", 3, "3    "},
	{"%3u", 0, "  0"}, {"%03d", 7, "007"}, {"%2d", 100, "100"},
	/* precision: minimum digits; a zero is never hidden; "%.d" is no precision */
	{"%.3d", 7, "007"}, {"%.0d", 0, "0"}, {"%.d", 0, "0"}, {"%8.3d", 7, "     007"},
	{"%-8.3x|", 10, "00a     |"}, {"%05.3d", 7, "00007"}, /* a precision does not cancel '0' */
	/* %c pads with spaces only */
	{"%3c", 'x', "  x"}, {"%-3c|", 'x', "x  |"}, {"%03c", 'x', "  x"},
	/* %p: 16 zero-padded hex digits; an explicit width pads with spaces */
	{"%p", 0, "0000000000000000"}, {"%p", 0xffff8881025e5180ull, "ffff8881025e5180"},
	{"%px", 0x1234, "0000000000001234"}, {"%20p", 0x1234, "                1234"},
	{"%pK", 0xffffffff81000000ull, "ffffffff81000000"},
	/* no symbol: sprint_symbol's "0x%lx" */
	{"%pS", 0xffffffff81000010ull, "0xffffffff81000010"}, {"%ps", 0, "0x0"},
	/* %s of a kernel address nobody can read */
	{"%s", 0, "(null)"}, {"%s", 12, "(efault)"}, {"%s", (uint64_t)-2, "(efault)"},
	{"%.3s", 0, "(nu"}, {"%10s|", 0, "    (null)|"},
	/* %% and a width on it */
	{"%%", 0, ""},
};
for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
	if (!strcmp(cases[i].fmt, "%%")) {
		struct kv_spec s;
		ok(kv_decode("%%", &s) == 2 && s.kind == KV_PERCENT, "vsprintf: %%%% decodes as a percent");
		ok(kv_decode("%5%", &s) == 3 && s.kind == KV_PERCENT, "vsprintf: %%5%% decodes as a percent");
		continue;
	}
	is_str(knum(cases[i].fmt, cases[i].v), cases[i].want, "vsprintf: '%s' of %#llx", cases[i].fmt,
	       (unsigned long long)cases[i].v);
}
/* invalid directives: the kernel stops printing there */
static const char *const invalid[] = {"%jd", "%n", "%qd", "%llld", "%hhhd", "%", "%5"};
for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
	is_str(knum(invalid[i], 1), "<invalid>", "vsprintf: '%s' is invalid in the kernel", invalid[i]);
/* pointer extensions consume every alphanumeric after %p */
{
	struct kv_spec s;
	ok(kv_decode("%pISpcxyz!", &s) == 9 && !strcmp(s.ext, "ISpcxyz"),
	   "vsprintf: %%p extension letters are all consumed");
}
/* strings */
is_str(kstr("%s", "abc"), "abc", "vsprintf: %%s");
is_str(kstr("%5s|", "abc"), "  abc|", "vsprintf: %%5s right-justifies");
is_str(kstr("%-5s|", "abc"), "abc  |", "vsprintf: %%-5s");
is_str(kstr("%.2s", "abc"), "ab", "vsprintf: %%.2s");
is_str(kstr("%05s", "ab"), "   ab", "vsprintf: %%05s pads with spaces");
/* '*' arguments */
{
	struct kv_spec s;
	kv_decode("%*d", &s);
	kv_set_width(&s, -4);
	ok(s.width == 4 && (s.flags & KV_LEFT), "vsprintf: a negative '*' width left-justifies");
	kv_decode("%.*d", &s);
	kv_set_precision(&s, -4);
	is_int(s.precision, 0, "vsprintf: a negative '*' precision becomes 0");
}
/* memory-reading pointer extensions */
static const uint8_t ip4[4] = {192, 168, 1, 10}, mac[6] = {0, 0x1b, 0x21, 0xa, 0xb, 0xc};
static const uint8_t ip6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
static const uint8_t one_zero[16] = {0, 1, 0, 0, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7};
static const uint8_t uuid[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
				 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
static const uint8_t sin[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
static const uint8_t sin6[28] = {10, 0, 0, 80, 0x01, 0x23, 0x45, 0x67, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 0, 0, 1, 5, 0, 0, 0};
is_str(kmem("%pI4", ip4, 4, -2), "192.168.1.10", "vsprintf: %%pI4");
is_str(kmem("%pi4", ip4, 4, -2), "192.168.001.010", "vsprintf: %%pi4 pads to 3 digits");
is_str(kmem("%pI4h", ip4, 4, -2), "10.1.168.192", "vsprintf: %%pI4h takes host (little endian) order");
is_str(kmem("%pI6", ip6, 16, -2), "2001:0db8:0000:0000:0000:0000:0000:0001", "vsprintf: %%pI6");
is_str(kmem("%pi6", ip6, 16, -2), "20010db8000000000000000000000001", "vsprintf: %%pi6");
is_str(kmem("%pI6c", ip6, 16, -2), "2001:db8::1", "vsprintf: %%pI6c compresses the longest zero run");
is_str(kmem("%pI6c", mapped, 16, -2), "::ffff:10.0.0.1", "vsprintf: %%pI6c of a v4-mapped address");
is_str(kmem("%pI6c", one_zero, 16, -2), "1:0:2:3:4:5:6:7", "vsprintf: %%pI6c leaves a single zero group");
is_str(kmem("%pISpc", sin, 16, -2), "127.0.0.1:8080", "vsprintf: %%pISpc of an AF_INET sockaddr");
is_str(kmem("%pISpc", sin6, 28, -2), "[fe80::1]:80", "vsprintf: %%pISpc of an AF_INET6 sockaddr");
is_str(kmem("%pISpfsc", sin6, 28, -2), "[fe80::1]:80/19088743%5", "vsprintf: %%pIS flow label and scope");
is_str(kmem("%pM", mac, 6, -2), "00:1b:21:0a:0b:0c", "vsprintf: %%pM");
is_str(kmem("%pMF", mac, 6, -2), "00-1b-21-0a-0b-0c", "vsprintf: %%pMF");
is_str(kmem("%pMR", mac, 6, -2), "0c:0b:0a:21:1b:00", "vsprintf: %%pMR reverses");
is_str(kmem("%pm", mac, 6, -2), "001b210a0b0c", "vsprintf: %%pm");
is_str(kmem("%pU", uuid, 16, -2), "12345678-9abc-def0-0123-456789abcdef", "vsprintf: %%pU is %%pUb");
is_str(kmem("%pUL", uuid, 16, -2), "78563412-BC9A-F0DE-0123-456789ABCDEF", "vsprintf: %%pUL");
is_str(kmem("%ph", mac, 6, -2), "00", "vsprintf: %%ph without a width is one byte");
is_str(kmem("%*ph", mac, 6, 3), "00 1b 21", "vsprintf: %%*ph");
is_str(kmem("%*phC", mac, 6, 3), "00:1b:21", "vsprintf: %%*phC");
is_str(kmem("%*phD", mac, 6, 3), "00-1b-21", "vsprintf: %%*phD");
is_str(kmem("%*phN", mac, 6, 3), "001b21", "vsprintf: %%*phN");
is_str(kmem("%*ph", mac, 6, 7), "<short>", "vsprintf: %%*ph refuses bytes it does not have");
{
	uint8_t bits[8] = {0x0f, 0x01, 0, 0, 0x01};
	is_str(kmem("%*pb", bits, 8, 40), "01,0000010f", "vsprintf: %%*pb in 32-bit chunks, the top one short");
	is_str(kmem("%*pbl", bits, 8, 40), "0-3,8,32", "vsprintf: %%*pbl as ranges");
}
{
	uint64_t pa = 0x1000;
	is_str(kmem("%pa", &pa, 8, -2), "0x0000000000001000", "vsprintf: %%pa");
}
}

/* ======================================================= 2. constructs */

/* The environment of the tests: a few symbols, constants and types. */
static const char *env_symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size, const char **module)
{
(void)ctx;
if (addr >= 0xffffffff81000000ull && addr < 0xffffffff81000100ull) {
	*start = 0xffffffff81000000ull, *size = 0x100, *module = NULL;
	return "do_work";
}
if (addr >= 0xffffffffc0000000ull && addr < 0xffffffffc0000040ull) {
	*start = 0xffffffffc0000000ull, *size = 0x40, *module = "mymod";
	return "mod_fn";
}
return NULL;
}

static const char *env_string(void *ctx, uint64_t addr)
{
(void)ctx;
return addr == 0xffffffff82000000ull ? "kernel text" : NULL;
}

static bool env_constant(void *ctx, const char *name, int64_t *v)
{
(void)ctx;
if (!strcmp(name, "MY_ENUM_B"))
	return *v = 2, true;
if (!strcmp(name, "HZ"))
	return *v = 250, true;
if (!strcmp(name, "vmemmap_base"))
	return *v = (int64_t)0xffffea0000000000ull, true;
return false;
}

static bool env_type_size(void *ctx, const char *type, uint64_t *size)
{
(void)ctx;
if (!strcmp(type, "struct page"))
	return *size = 64, true;
return false;
}

static const struct tb_print_env test_env = {
	.symbol = env_symbol, .kernel_string = env_string, .constant = env_constant, .type_size = env_type_size};

#define FIELD(decl, off, size, sgn) "\tfield:" decl ";\toffset:" #off ";\tsize:" #size ";\tsigned:" #sgn ";\n"
static const char test_fields[] =
FIELD("int i", 8, 4, 1) FIELD("unsigned int u", 12, 4, 0) FIELD("long l", 16, 8, 1)
FIELD("unsigned long ul", 24, 8, 0) FIELD("char comm[16]", 32, 16, 1)
FIELD("__data_loc char[] name", 48, 4, 1) FIELD("u8 mac[6]", 52, 6, 0)
FIELD("unsigned char c", 58, 1, 0) FIELD("short s", 60, 2, 1) FIELD("void * ptr", 64, 8, 0)
FIELD("u8 addr6[16]", 72, 16, 0) FIELD("__data_loc u8[] blob", 88, 4, 0)
FIELD("u8 v4[4]", 92, 4, 0) FIELD("unsigned long arr[4]", 96, 32, 0)
FIELD("__rel_loc char[] rname", 128, 4, 1) FIELD("__data_loc unsigned long[] mask", 132, 4, 0)
FIELD("signed char sc", 136, 1, 1);

static uint8_t test_rec[256];
static uint32_t test_len;

static void build_test_record(void)
{
uint8_t *r = test_rec;
int32_t i = -5;
uint32_t u = 3000000000u, loc;
int64_t l = -1234567890123ll;
uint64_t ul = 0xdeadbeefcafef00dull, ptr = 0xffff8881025e5180ull;
int16_t s = -300;
uint64_t arr[4] = {1, 2, 0xff, 0xffffffffffffffffull}, mask = 0x1f0;
static const uint8_t ip6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

memset(r, 0, sizeof(test_rec));
r[0] = 1;
memcpy(r + 8, &i, 4);
memcpy(r + 12, &u, 4);
memcpy(r + 16, &l, 8);
memcpy(r + 24, &ul, 8);
memcpy(r + 32, "bash", 5);
memcpy(r + 52, "\x00\x1b\x21\x0a\x0b\x0c", 6);
r[58] = 200;
memcpy(r + 60, &s, 2);
memcpy(r + 64, &ptr, 8);
memcpy(r + 72, ip6, 16);
memcpy(r + 92, "\x0a\x00\x00\x01", 4);
memcpy(r + 96, arr, 32);
r[136] = 0xfe;
/* dynamic data from 140: name "kworker/0:1", blob 5 bytes, rname "rel", mask 8 bytes */
memcpy(r + 140, "kworker/0:1", 12);
loc = 12u << 16 | 140;
memcpy(r + 48, &loc, 4);
memcpy(r + 152, "\x01\x02\x03\x04\x05", 5);
loc = 5u << 16 | 152;
memcpy(r + 88, &loc, 4);
memcpy(r + 157, "rel", 4);
loc = 4u << 16 | (157 - 132);
memcpy(r + 128, &loc, 4);
memcpy(r + 164, &mask, 8);
loc = 8u << 16 | 164;
memcpy(r + 132, &loc, 4);
test_len = 172;
}

/* Compile print_fmt over the test fields and run it on the test record: the text, or "<rc>". */
static const char *pf_env(const char *print_fmt, const struct tb_print_env *env)
{
static char out[2048];
char text[4096];
struct tb_format f;
struct tb_problem d = {0};
struct tb_printfmt *p;
struct tb_strbuf sb = {0};
int rc;

snprintf(text, sizeof(text),
	 "name: t\nID: 1\nformat:\n" FIELD("unsigned short common_type", 0, 2, 0)
	 FIELD("unsigned char common_flags", 2, 1, 0) FIELD("unsigned char common_preempt_count", 3, 1, 0)
	 FIELD("int common_pid", 4, 4, 1) "\n%s\nprint fmt: %s\n", test_fields, print_fmt);
if (tb_format_parse(text, strlen(text), &f, &d) < 0) {
	snprintf(out, sizeof(out), "<format: %s>", d.reason);
	return out;
}
rc = tb_printfmt_compile(&f, env, &p, &d);
if (rc < 0) {
	snprintf(out, sizeof(out), "<%s: %s>", rc == -ENOTSUP ? "ENOTSUP" : rc == -EINVAL ? "EINVAL" : "ERR",
		 d.reason);
} else {
	rc = tb_printfmt_run(p, test_rec, test_len, &sb);
	if (rc < 0)
		snprintf(out, sizeof(out), "<run %d>", rc);
	else
		snprintf(out, sizeof(out), "%.*s", (int)sb.len, sb.buf ? sb.buf : "");
	tb_printfmt_free(p);
}
sb_free(&sb);
tb_format_free(&f);
return out;
}

static const char *pf(const char *print_fmt)
{
return pf_env(print_fmt, &test_env);
}

/* Print fmts over the test fields, with the text the kernel's rules give for the test record. */
static const struct {
const char *fmt, *want;
} cases[] = {
	/* fields with their C types */
	{"\"%d %u %ld %lu\", REC->i, REC->u, REC->l, REC->ul", "-5 3000000000 -1234567890123 16045690984503111693"},
	{"\"%s|%-6s|%6s\", REC->comm, REC->comm, REC->comm", "bash|bash  |  bash"},
	{"\"%u %d %hd %c\", REC->c, REC->s, REC->s, REC->c + 0", "200 -300 -300 \xc8"},
	{"\"%d\", REC->sc", "-2"},
	{"\"%x %#x %08lx\", REC->u, REC->c, REC->ul >> 40", "b2d05e00 0xc8 00deadbe"},
	/* dynamic fields */
	{"\"%s %s\", __get_str(name), __get_rel_str(rname)", "kworker/0:1 rel"},
	{"\"%u %u\", __get_dynamic_array_len(name), __get_dynamic_array_len(blob)", "12 5"},
	{"\"%c%c\", __get_str(name)[0], __get_str(name)[7]", "k/"},
	{"\"%s\", __print_hex(__get_dynamic_array(blob), __get_dynamic_array_len(blob))", "01 02 03 04 05"},
	{"\"%s\", __print_hex_str(__get_dynamic_array(blob), 3)", "010203"},
	{"\"%s\", __get_bitmask(mask)", "00000000,000001f0"},
	{"\"%s\", __get_cpumask(mask)", "00000000,000001f0"},
	/* arithmetic in C's types */
	{"\"%d\", 7 / 2 * 2 + 7 % 2 - (1 << 3)", "-1"},
	{"\"%u\", -1 < 1U", "0"},
	{"\"%d\", -1 < 1", "1"},
	{"\"%u\", (unsigned int)-1 / 2", "2147483647"},
	{"\"%lu\", (unsigned long)-1 / 2", "9223372036854775807"},
	{"\"%d %d %d\", REC->i >> 1, REC->i / 2, REC->i % 2", "-3 -2 -1"},
	{"\"%u\", REC->u >> 31", "1"},
	{"\"%d\", (u8)REC->s", "212"},
	{"\"%d %d\", (bool)REC->u, (bool)0", "1 0"},
	{"\"%d %d %d\", !REC->i, ~0, -REC->c", "0 -1 -200"},
	{"\"%d %d\", REC->i && REC->c, REC->i || 0", "1 1"},
	{"\"%d\", 0 && REC->arr[9]", "0"}, /* not evaluated: no out-of-range read */
	{"\"%lu %lu\", sizeof(u64), sizeof(REC->s)", "8 2"},
	{"\"%d %d\", is_signed_type(int), is_signed_type(unsigned long)", "1 0"},
	{"\"%d %d\", __builtin_expect(REC->i, 0), __builtin_constant_p(REC->i) + __builtin_constant_p(3)", "-5 1"},
	{"\"%lu %lu\", REC->arr[2], REC->arr[3]", "255 18446744073709551615"},
	{"\"%x\", 'A' + '\\n'", "4b"},
	{"\"%s\", \"ab\" \"cd\"", "abcd"},
	/* ?: with mixed types follows C's conversions */
	{"\"%lu\", REC->i ? -1 : REC->ul", "18446744073709551615"},
	{"\"%s\", REC->c > 100 ? \"big\" : \"small\"", "big"},
	{"\"%s\", REC->c > 250 ? \"big\" : REC->c > 150 ? \"mid\" : \"small\"", "mid"},
	{"\"%s\", REC->i ? __get_str(name) : \"none\"", "kworker/0:1"},
	/* ({ }) blocks: the kernel's min() */
	{"\"%d\", ({ int __x = (REC->i); int __y = (3); ((__x) < (__y) ? (__x) : (__y)); })", "-5"},
	/* print helpers */
	{"\"%s\", __print_flags(REC->c, \"|\", { 0x80, \"A\" }, { 0x40, \"B\" }, { 0x08, \"C\" })", "A|B|C"},
	{"\"%s\", __print_flags(0x13, \"|\", { 1, \"A\" }, { 2, \"B\" })", "A|B|0x10"},
	{"\"%s\", __print_flags(0, \"|\", { 1, \"A\" })", ""},
	{"\"%s\", __print_flags(REC->i, \"|\", { 1, \"A\" })", "A|0xfffffffffffffffa"},
	{"\"%s\", __print_flags(3, \"|\", { 1, \"A\" }, { 0, ((void *)0) }, { 2, \"B\" })", "A|0x2"},
	{"\"%s\", __print_symbolic(REC->c, { 1, \"ONE\" }, { 200, \"TWO_HUNDRED\" })", "TWO_HUNDRED"},
	{"\"%s\", __print_symbolic(REC->i, { 1, \"ONE\" })", "0xfffffffffffffffb"},
	{"\"%s\", __print_symbolic(7, { -1, \"M\" }, { })", "0x7"},
	{"\"[%-8s]\", __print_symbolic(1, { 1, \"ONE\" })", "[ONE     ]"},
	{"\"[%8.2s]\", __print_symbolic(1, { 1, \"ONE\" })", "[      ON]"},
	{"\"%s\", __print_symbolic_u64(REC->ul, { 0xdeadbeefcafef00dULL, \"X\" })", "X"},
	{"\"%s\", __print_array(REC->arr, 3, sizeof(unsigned long))", "{0x1,0x2,0xff}"},
	{"\"%s\", __print_array(REC->mac, 6, 1)", "{0x0,0x1b,0x21,0xa,0xb,0xc}"},
	{"\"%s\", __print_array(REC->mac, 2, 3)", "{BAD SIZE:3 0x0,0x1b,0x21,0xa,0xb,0xc}"},
	{"\"%s\", __print_dynamic_array(blob, 1)", "{0x1,0x2,0x3,0x4,0x5}"},
	{"\"%llu.%09u\", __print_ns_to_secs(REC->ul), __print_ns_without_secs(REC->ul)",
	 "16045690984.503111693"},
	{"\"%u\", jiffies_to_msecs(25)", "100"},
	/* pointers */
	{"\"%p %px\", REC->ptr, REC->ptr", "ffff8881025e5180 ffff8881025e5180"},
	{"\"%p\", (void *)0", "0000000000000000"},
	{"\"%pS|%ps|%pS\", (void *)0xffffffff81000010UL, 0xffffffffc0000004UL, 0xffffffff81000000UL",
	 "do_work+0x10/0x100|mod_fn [mymod]|do_work+0x0/0x100"},
	{"\"%pB\", 0xffffffff81000100UL", "do_work+0x100/0x100"},
	{"\"%pM %pI4 %pI6c\", REC->mac, REC->v4, REC->addr6", "00:1b:21:0a:0b:0c 10.0.0.1 2001:db8::1"},
	{"\"%*ph\", 4, REC->mac", "00 1b 21 0a"},
	{"\"%p\", ((struct page *)vmemmap_base) + (REC->c)", "ffffea0000003200"},
	{"\"%s\", (char *)0xffffffff82000000UL", "kernel text"},
	{"\"%s|%s\", (char *)0, (char *)0x1234567890", "(null)|0x1234567890"},
	/* constants from the environment */
	{"\"%d\", MY_ENUM_B", "2"},
	{"\"%s\", __print_symbolic(2, { MY_ENUM_B, \"B\" })", "B"},
	/* format string corners */
	{"\"100%% %d\", 1", "100% 1"},
	{"\"a %jd b %d\", 1, 2", "a "}, /* the kernel stops at an invalid directive */
	{"\"%*d|%-*d|%.*d\", 5, 1, 3, 2, 3, 4", "    1|2  |004"},
	{"\"%d\", 1, 2, 3", "1"}, /* extra arguments are ignored */
	{"\"tab\\there\\x21\\101\"", "tab\there!A"},
	{"\"(%d)\", (REC)->i", "(-5)"},
	/*
	 * The shapes the specialiser fuses (pf_specialise.c), each
	 * expected string what C's printf prints for the same C
	 * expressions (the kernel's rules agree on these directives).
	 */
	{"\"[%03d|%03d|%05x|%-4d|%4d|%08lx]\", REC->c, REC->i, REC->u & 0xfff, REC->i, REC->i, REC->ul >> 40",
	 "[200|-05|00e00|-5  |  -5|00deadbe]"},
	{"\"[%hx %x %hhd %d %u]\", REC->ul & 0xffff0000, REC->ul & 0xffff0000, REC->s & 0xff, REC->i & -16, "
	 "REC->i & -16", "[0 cafe0000 -44 -16 4294967280]"},
	{"\"[%lx %ld %lu %02lx]\", REC->arr[3] & 0xff00, REC->l & -256, REC->arr[1] & 3, REC->arr[2]",
	 "[ff00 -1234567890176 2 ff]"},
	{"\"[%s%s|%s]\", REC->c & 0x80 ? \"hi\" : \"lo\", REC->c & 0x01 ? \"odd\" : \"\", "
	 "REC->c & 0x30 ? \"some\" : \"none\"", "[hi|none]"},
	{"\"[%u %d %x]\", REC->sc & 0xff, REC->sc & 0x7f, (REC->u >> 24) & 0xff", "[254 126 b2]"},
	{"\"[%lld %llu]\", REC->l - REC->i, REC->ul - 1", "[-1234567890118 16045690984503111692]"},
	{"\"%s|%s\", REC->c & 0x0f ? __print_flags(REC->c & 0x0f, \"|\", { 8, \"E\" }, { 4, \"F\" }) : \"none\", "
	 "REC->c & 0x30 ? __print_flags(REC->c & 0x30, \"|\", { 0x10, \"G\" }) : \"none\"", "E|none"},
	{"\"%s\", __print_symbolic(REC->c & 0x0f, { 8, \"EIGHT\" }, { 9, \"NINE\" })", "EIGHT"},
	/*
	 * Tables with names the trace does not give print as libtraceevent
	 * does (its value -1 for them), as the event printed before it was
	 * compiled: the pieces of a value not all zero...
	 */
	{"\"%s\", __print_flags(REC->u, \"|\", { UNKNOWN_A, \"A\" }, { 0x200, \"TWO\" })", "TWO|0xb2d05c00"},
	{"\"%s\", __print_flags(REC->u, \"|\", { 0xb2d05e00, \"ALL\" }, { UNKNOWN_A, \"A\" }, { 8, \"E\" })", "ALLA"},
	{"\"%s\", __print_flags(REC->u, \"|\", { MY_ENUM_B, \"B\" }, { UNKNOWN_A, \"A\" }, { 0x200, \"S\" })",
	 "S|0xb2d05c00"},
	/* ... a zero value: the first unknown entry's name */
	{"\"%s\", __print_flags(REC->u & 0, \"|\", { 8, \"E\" }, { UNKNOWN_A, \"A\" }, { UNKNOWN_B, \"B\" })", "A"},
	/* ... symbols: an unknown one matches all ones, an empty name prints empty */
	{"\"%s\", __print_symbolic(REC->u, { UNKNOWN_A, \"A\" }, { 3000000000, \"BIG\" })", "BIG"},
	{"\"%s\", __print_symbolic(REC->ul | ~0UL, { 1, \"one\" }, { UNKNOWN_A, \"A\" })", "A"},
	{"\"%s\", __print_symbolic(REC->u, { UNKNOWN_A, \"A\" }, { 1, \"one\" })", "0xb2d05e00"},
	{"\"[%s]\", __print_symbolic(REC->u, { UNKNOWN_A, \"A\" }, { 3000000000, \"\" })", "[]"},
	/*
	 * ... and of a signed type too when the value is an unsigned field
	 * shifted and masked (an int by C's promotion, never negative: block's
	 * ioprio class), as libtraceevent computes it: 200 >> 6 & 3 is 3.
	 */
	{"\"%s\", __print_symbolic(((REC->c) >> 6) & (4 - 1), { UNKNOWN_A, \"A\" }, { 3, \"three\" })", "three"},
	{"\"%s,%u\", __print_symbolic((((REC->c) >> 4) & (8 - 1)), { UNKNOWN_A, \"A\" }, { 1, \"one\" }), REC->c & 7",
	 "0x4,0"},
	{"\"%s\", __print_flags(REC->c & 0xc0, \"|\", { UNKNOWN_A, \"A\" }, { 0x80, \"HI\" })", "HI|0x40"},
};

/* A symbol table that counts the look-ups it answers, and answers differently once reloaded. */
static int counted_lookups;
static uint64_t counted_version = 1;

static const char *counted_symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size, const char **module)
{
	(void)ctx;
	counted_lookups++;
	*start = addr & ~0xffull, *size = 0x100, *module = NULL;
	return counted_version == 1 ? "first_table" : "second_table";
}

/* kv_symbol_at(): the same address again is answered by the thread's memo, not asked, unless told otherwise. */
static void test_symbol_memo(void)
{
	struct tb_print_env a = {.symbol = counted_symbol, .memo_id = tb_print_env_number(),
				 .symbols_version = &counted_version};
	struct tb_print_env b = a, plain = {.symbol = counted_symbol};
	uint64_t start = 0;
	const char *name;

	b.memo_id = tb_print_env_number();
	ok(a.memo_id && b.memo_id && a.memo_id != b.memo_id, "every environment has its own number");
	counted_lookups = 0;
	name = kv_symbol_at(&a, 0xffffffff81000010ull, &start, NULL, NULL);
	name = kv_symbol_at(&a, 0xffffffff81000010ull, &start, NULL, NULL);
	ok(counted_lookups == 1 && !strcmp(name, "first_table") && start == 0xffffffff81000000ull,
	   "the same address twice: asked once, the same answer (%d look-ups)", counted_lookups);
	kv_symbol_at(&a, 0xffffffff81000020ull, NULL, NULL, NULL);
	kv_symbol_at(&b, 0xffffffff81000020ull, NULL, NULL, NULL);
	ok(counted_lookups == 3, "another address, another environment: asked again (%d look-ups)", counted_lookups);
	counted_version = 2;
	name = kv_symbol_at(&b, 0xffffffff81000020ull, NULL, NULL, NULL);
	ok(counted_lookups == 4 && !strcmp(name, "second_table"), "a table loaded since: asked again, its answer");
	kv_symbol_at(&plain, 0xffffffff81000020ull, NULL, NULL, NULL);
	kv_symbol_at(&plain, 0xffffffff81000020ull, NULL, NULL, NULL);
	ok(counted_lookups == 6, "an environment without a number is asked every time");
}

static void test_constructs(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_str(pf(cases[i].fmt), cases[i].want, "construct: %s", cases[i].fmt);

	/* What cannot be known is refused, naming the construct. */
	static const struct {
		const char *fmt, *reason;
	} refused[] = {
		{"\"%d\", UNKNOWN_ENUM", "unknown name UNKNOWN_ENUM"},
		{"\"%d\", some_function(REC->i)", "function some_function"},
		{"\"%p\", REC->mac", "address"},
		{"\"%pI4\", REC->ptr", "kernel address"},
		{"\"%pd\", REC->ptr", "%pd"},
		{"\"%d\", REC->comm", "array"},
		{"\"%d\", ({ x = 1; 2; })", "x"},
		/* unknown names in tables where libtraceevent's text is not known here */
		{"\"%10s\", __print_flags(REC->u, \"|\", { UNKNOWN_A, \"A\" })", "plain %s"},
		{"\"%s\", REC->u ? __print_flags(REC->u, \"|\", { UNKNOWN_A, \"A\" }) : \"none\"", "plain %s"},
		{"\"%s %lu\", __print_flags(REC->u, \"|\", { UNKNOWN_A, \"A\" }), jiffies", "kernel variable"},
		{"\"%s\", __print_symbolic(REC->u, { HI_SOFTIRQ, \"HI\" })", "unknown name HI_SOFTIRQ"},
		{"\"%s\", __print_symbolic(REC->u, { UNKNOWN_A + 1, \"A\" })", "unknown name UNKNOWN_A"},
		/* a signed value: libtraceevent reads a negative field unsigned */
		{"\"%s\", __print_symbolic(REC->i, { UNKNOWN_A, \"A\" })", "unknown name UNKNOWN_A"},
		{"\"%s\", __print_symbolic((REC->s >> 13) & 7, { UNKNOWN_A, \"A\" })", "unknown name UNKNOWN_A"},
		/* an unsigned field's value that C may compute negative */
		{"\"%s\", __print_symbolic(REC->c - 1, { UNKNOWN_A, \"A\" })", "unknown name UNKNOWN_A"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *got = pf(refused[i].fmt);
		ok(!strncmp(got, "<ENOTSUP", 8) && strstr(got, refused[i].reason), "refused: %s (%s)", refused[i].fmt,
		   got);
	}
	static const char *const malformed[] = {
		"\"%d\"", "\"%d\", ", "\"%d\", (1", "\"%d\", 1 +", "\"%d\", REC->nosuch", "\"%d\", 1/0",
		"\"%d\", 0x", "\"%d\", 99999999999999999999", "\"abc", "\"%d\" 1", "\"%d\", 1 @ 2",
		"\"%s\", __get_str(i)",
	};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		ok(!strncmp(pf(malformed[i]), "<EINVAL", 7), "malformed: %s (%s)", malformed[i], pf(malformed[i]));
	/* the environment decides what unknown names mean */
	ok(!strncmp(pf_env("\"%d\", MY_ENUM_B", NULL), "<ENOTSUP", 8), "without an environment a name is refused");
	ok(!strncmp(pf_env("\"%u\", jiffies_to_msecs(25)", NULL), "<ENOTSUP", 8), "jiffies_to_msecs needs HZ");
	/* a value outside the record is -EINVAL at run time */
	is_str(pf("\"%lu\", REC->arr[REC->c]"), "<run -22>", "an index past the array fails the run");
	is_str(pf("\"%s\", __print_hex(REC->mac, 7)"), "<run -22>", "__print_hex past the array fails the run");
}

/* ============================================================ 3. bprint */

struct packer {
	uint8_t buf[256];
	uint32_t len;
};

static void pack(struct packer *p, const void *v, uint32_t size, uint32_t align)
{
	p->len = (p->len + align - 1) & ~(align - 1);
	memcpy(p->buf + p->len, v, size);
	p->len += size;
}

static const char *bprint(const char *fmt, const struct packer *p)
{
	static char out[512];
	struct tb_strbuf sb = {0};
	int rc = tb_bprint_format(fmt, p->buf, p->len, &test_env, &sb);

	snprintf(out, sizeof(out), "%s%.*s", rc < 0 ? "<EINVAL>" : "", (int)sb.len, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return out;
}

static void test_bprint(void)
{
	struct packer p = {0};
	int32_t i = -7, w = 6;
	uint64_t ul = 0x123456789ull, ptr = 0xffffffff81000020ull;
	uint16_t h = 0xfffe;
	uint8_t c = 'Z';

	/* vbin_printf: int at 4, char at 1, short at 2, 8-byte values at 4 (not 8), strings inline */
	pack(&p, &c, 1, 1);
	pack(&p, &i, 4, 4);
	pack(&p, "hi", 3, 1);
	pack(&p, &h, 2, 2);
	pack(&p, &ul, 8, 4);
	pack(&p, &w, 4, 4);
	pack(&p, &i, 4, 4);
	pack(&p, &ptr, 8, 4);
	pack(&p, "1.2.3.4", 8, 1);
	is_str(bprint("%c %d %s %hd %llx [%*d] %pS %pI4 %%", &p),
	       "Z -7 hi -2 123456789 [    -7] do_work+0x20/0x100 1.2.3.4 %", "bprint: every kind of argument");
	is_int(p.len, 48, "bprint: the packing used 48 bytes (8-byte values aligned to 4)");
	{
		struct packer q = p;
		q.len = 30;
		is_str(bprint("%c %d %s %hd %llx [%*d] %pS", &q), "<EINVAL>Z -7 hi -2 123456789 [",
		       "bprint: an argument past the end is -EINVAL");
	}
	{
		struct packer q = {0};
		pack(&q, &i, 4, 4);
		is_str(bprint("a %d %jd %d", &q), "a -7 ", "bprint: stops at an invalid directive as the kernel does");
	}
}

/* ============================================================ 4. limits */

struct deep {
	const char *text;
	int rc;
	char out[64];
};

static void *compile_deep(void *arg)
{
	struct deep *d = arg;
	struct tb_format f = {0};
	struct tb_schema_field fields[1] = {{.name = "common_type", .type = "unsigned short", .size = 2}};
	struct tb_problem err = {0};
	struct tb_printfmt *p;

	f.fields = fields;
	f.nfields = 1;
	f.print_fmt = (char *)d->text;
	f.print_fmt_len = strlen(d->text);
	d->rc = tb_printfmt_compile(&f, NULL, &p, &err);
	if (d->rc == 0) {
		struct tb_strbuf sb = {0};
		uint8_t rec[8] = {0};
		d->rc = tb_printfmt_run(p, rec, sizeof(rec), &sb);
		snprintf(d->out, sizeof(d->out), "%.*s", (int)sb.len, sb.buf ? sb.buf : "");
		sb_free(&sb);
		tb_printfmt_free(p);
	}
	return NULL;
}

/* "%d", then open x deep, then the core, then close x deep */
static char *nested(const char *open, const char *core, const char *close, int deep)
{
	size_t lo = strlen(open), lc = strlen(close), n = 6 + deep * (lo + lc) + strlen(core) + 1;
	char *s = malloc(n), *q = s;

	q += sprintf(q, "\"%%d\", ");
	for (int i = 0; i < deep; i++)
		q += sprintf(q, "%s", open);
	q += sprintf(q, "%s", core);
	for (int i = 0; i < deep; i++)
		q += sprintf(q, "%s", close);
	return s;
}

static void test_limits(void)
{
	struct deep d = {0};
	pthread_attr_t attr;
	pthread_t t;
	double t0;
	char *s;

	s = nested("(", "1", ")", 200000);
	d.text = s;
	t0 = tap_cpu_seconds();
	compile_deep(&d);
	is_int(d.rc, -EINVAL, "a print fmt nested 200000 deep is refused");
	ok(tap_cpu_seconds() - t0 < 0.1, "... in %.2f ms of CPU", (tap_cpu_seconds() - t0) * 1e3);
	free(s);
	s = nested("-", "1", "", 200000);
	d.text = s;
	compile_deep(&d);
	is_int(d.rc, -EINVAL, "200000 unary minus signs are refused");
	free(s);
	/* 1+1+...+1 is long but flat: no nesting, constant folded */
	s = malloc(200010);
	strcpy(s, "\"%d\", 1");
	for (char *q = s + strlen(s), *end = q + 200000; q < end; q += 2)
		memcpy(q, "+1", 3);
	d.text = s;
	t0 = now_ns();
	compile_deep(&d);
	ok(d.rc == 0 && !strcmp(d.out, "100001"), "a flat chain of 100000 additions compiles (%s) in %.1f ms", d.out,
	   (now_ns() - t0) / 1e6);
	free(s);
	/* 86 x 3 nestings (a parenthesis, a cast, a parenthesis) is past the limit of 256 */
	s = nested("((int)(", "REC->common_type + 1", "))", 86);
	d.text = s;
	compile_deep(&d);
	is_int(d.rc, -EINVAL, "258 nested parentheses and casts are refused");
	free(s);
	/* 255 of them compile and run on a small thread stack */
	s = nested("((int)(", "REC->common_type + 1", "))", 85);
	d.text = s;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, DEEP_STACK);
	d.rc = -1;
	d.out[0] = '\0';
	int created = pthread_create(&t, &attr, compile_deep, &d);
	if (created == 0)
		pthread_join(t, NULL);
	ok(created == 0 && d.rc == 0 && !strcmp(d.out, "1"),
	   "a 255-deep expression compiles and runs on a %d KiB thread stack (create %d, rc %d, %s)", DEEP_STACK / 1024, created, d.rc,
	   d.out);
	pthread_attr_destroy(&attr);
	free(s);
}


/* ================================================== 5. libtraceevent */

/*
 * Where libtraceevent's text is known to differ from the kernel's.  Both
 * texts are cut into values (at blanks and the punctuation print fmts put
 * between values); each value that differs must be explained by a rule:
 * what the kernel prints there (ours) against what libtraceevent prints.
 */
struct rule {
	const char *name;
	bool (*explains)(const char *ours, const char *theirs, const char *fmt);
};

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return n > 0;
}

static bool all_char(const char *s, char c)
{
	for (; *s; s++)
		if (*s != c)
			return false;
	return true;
}

static bool is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (s[0] == '0' && s[1] == 'x')
		return all_hex(s + 2, strlen(s + 2));
	return *s && strspn(s, "0123456789") == strlen(s);
}

static bool r_pointer(const char *o, const char *t, const char *fmt)
{
	char want[24];
	unsigned long long v;

	if (!strstr(fmt, "%p") || strlen(o) != 16 || !all_hex(o, 16))
		return false;
	v = strtoull(o, NULL, 16);
	if (v)
		snprintf(want, sizeof(want), "0x%llx", v);
	else
		strcpy(want, "nil");
	return !strcmp(want, t);
}

static bool r_sharp_zero(const char *o, const char *t, const char *fmt)
{
	size_t n = strlen(o);

	return strstr(fmt, "%#") && n >= 3 && o[0] == '0' && o[1] == 'x' && all_char(o + 2, '0') &&
	       all_char(t, '0') && (strlen(t) == n || strlen(t) == 1);
}

static bool r_null(const char *o, const char *t, const char *fmt)
{
	(void)fmt;
	return !strcmp(o, "null") && (!strcmp(t, "0") || !strcmp(t, "nil"));
}

static bool r_efault(const char *o, const char *t, const char *fmt)
{
	(void)fmt;
	return !strcmp(o, "efault") && (all_hex(t, strlen(t)) || is_number(t));
}

static bool r_kernel_string(const char *o, const char *t, const char *fmt)
{
	(void)fmt;
	return o[0] == '0' && o[1] == 'x' && all_hex(o + 2, strlen(o + 2)) && !strcmp(o + 2, t);
}

static bool r_ulong(const char *o, const char *t, const char *fmt)
{
	return strstr(fmt, "__print_") && strlen(o) == 18 && !strncmp(o, "0xffffffff", 10) &&
	       !strncmp(t, "0x", 2) && !strcmp(o + 10, t + 2);
}

/* A negative value where libtraceevent prints the same bits unsigned. */
static bool r_signed(const char *o, const char *t, const char *fmt)
{
	long long v;
	unsigned long long u;

	(void)fmt;
	if (o[0] != '-' || !is_number(o) || !is_number(t) || t[0] == '-')
		return false;
	v = strtoll(o, NULL, 10);
	u = strtoull(t, NULL, t[1] == 'x' ? 16 : 10);
	return u == (uint8_t)v || u == (uint16_t)v || u == (uint32_t)v;
}

static bool r_symbol_table(const char *o, const char *t, const char *fmt)
{
	/* a negative or 64-bit table value the kernel matches: libtraceevent prints the hex */
	return (strstr(fmt, "__print_symbolic") || strstr(fmt, "__print_flags")) && !is_number(o) &&
	       t[0] == '0' && t[1] == 'x';
}

/* A value that needs a kernel variable the trace does not give: '?' (libtraceevent takes it as 0). */
static bool r_unknown_variable(const char *o, const char *t, const char *fmt)
{
	(void)t;
	return !strcmp(o, "?") &&
	       (strstr(fmt, "vmemmap_base") || strstr(fmt, "page_offset_base") || strstr(fmt, "phys_base"));
}

static const struct rule rules[] = {
	{"%p: libtraceevent prints glibc's (nil) / 0x<hex>, the kernel 16 hex digits", r_pointer},
	{"%#x of 0: the kernel prints 0x0, glibc 0", r_sharp_zero},
	{"%s of NULL: the kernel prints (null)", r_null},
	{"%s of an address below 4096 or in the error range: the kernel prints (efault)", r_efault},
	{"%s of a kernel string the trace does not carry: 0x<address> (libtraceevent: bare hex)", r_kernel_string},
	{"__print_flags/__print_symbolic take an unsigned long: a negative int sign-extends", r_ulong},
	{"a negative value of a signed field: libtraceevent prints it unsigned", r_signed},
	{"negative or 64-bit table values in __print_symbolic/flags: libtraceevent misses them", r_symbol_table},
	{"a kernel variable the trace does not give (vmemmap_base): '?', libtraceevent makes up 0", r_unknown_variable},
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

/*
 * Differences of value libtraceevent makes on these constructs, each
 * checked by hand against the print fmt and C's rules (the kernel is C).
 */
static const struct known_event {
	const char *trigger; /* in the print fmt */
	const char *rule;
} known[] = {
	{"(bool)", "(bool)x is x != 0: libtraceevent keeps the low byte"},
	{"<< REC->", "a shift count past the width: x86 (the kernel) masks it, libtraceevent shifts in 64 bits"},
	{"<< (REC->", "a shift count past the width: x86 (the kernel) masks it, libtraceevent shifts in 64 bits"},
	{"ULL, \"", "negative ULL constants in a table: libtraceevent matches them wrongly"},
	{"%*pbl", "%*pbl: libtraceevent does not know it"},
	{"%.*s", "%.*s: libtraceevent does not know it"},
	{"/ 1000L", "signed division: libtraceevent divides as unsigned"},
	{"< 0", "a signed field compared: libtraceevent reads it as unsigned"},
	{"== -1", "a signed field compared: libtraceevent reads it as unsigned"},
	{"!REC->", "!x ? a : b ? c : d: libtraceevent binds the ! and ?: differently"},
	{"__get_cpumask", "bitmasks: the kernel prints %*pb hex chunks, libtraceevent a CPU list"},
	{"__get_bitmask", "bitmasks: the kernel prints %*pb hex chunks, libtraceevent a CPU list"},
	{"__print_hex", "__print_hex over bytes the record lacks: libtraceevent reads past them"},
	{"REC->nr_data + 1", "a - b + c: libtraceevent groups it as a - (b + c)"},
	{"__print_flags(REC->flags & (", "__print_flags of a masked value: libtraceevent prints flags the mask removed"},
	{"REC->fallback_order < (((unsigned int)", "x < (a < b ? a : b): libtraceevent prints the ?: value, not the comparison"},
};

static bool is_word(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Cut s (modified) into values; a '-' separates only after a value (a range), not as a sign. */
static size_t cut_values(char *s, char **v, size_t max)
{
	static const char seps[] = " ,=[]{}:|\t()<>";
	size_t n = 0;

	for (size_t i = 0; s[i]; i++)
		if (s[i] == '-' && i && is_word(s[i - 1]) && s[i + 1] != '>')
			s[i] = ' ';
		else if (s[i] == '-' && s[i + 1] == '>')
			s[i] = ' ';
	for (char *save = NULL, *tok = strtok_r(s, seps, &save); tok && n < max; tok = strtok_r(NULL, seps, &save))
		v[n++] = tok;
	return n;
}

/* Which rules explain ours != theirs (bits in *mask), "" if they do, else a known rule or NULL. */
static const char *classify(const char *fmt, const char *ours, const char *theirs, int our_rc, unsigned *mask_out)
{
	static char a[16384], b[16384];
	char *va[1024], *vb[1024];
	size_t na, nb;
	unsigned mask = 0;
	bool explained = true;

	*mask_out = 0;
	if (!strncmp(theirs, "[FAILED TO PARSE]", 17))
		return "libtraceevent cannot parse the print fmt";
	if (our_rc < 0)
		return "the record lacks bytes the kernel would read past a field (we refuse: -EINVAL)";
	snprintf(a, sizeof(a), "%s", ours);
	snprintf(b, sizeof(b), "%s", theirs);
	na = cut_values(a, va, 1024);
	nb = cut_values(b, vb, 1024);
	if (na == nb) {
		for (size_t i = 0; i < na && explained; i++) {
			bool found = false;
			if (!strcmp(va[i], vb[i]))
				continue;
			for (unsigned r = 0; r < NRULES && !found; r++)
				if (rules[r].explains(va[i], vb[i], fmt)) {
					mask |= 1u << r;
					found = true;
				}
			explained = found;
		}
		if (explained) {
			*mask_out = mask;
			return "";
		}
	} else if (na > nb && strstr(fmt, "%pIS") && strstr(ours, "(einval)")) {
		return "%pIS of a sockaddr of another family: the kernel prints (einval), libtraceevent nothing";
	}
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (strstr(fmt, known[k].trigger))
			return known[k].rule;
	return NULL;
}

struct oracle_totals {
	int formats, compiled, notsup, invalid, tep_failed, crashed, records, same;
	int rule_count[NRULES + 32];
	const char *extra_rule[32];
	int nextra, unclassified;
};

static int extra_index(struct oracle_totals *t, const char *rule)
{
	for (int i = 0; i < t->nextra; i++)
		if (!strcmp(t->extra_rule[i], rule))
			return i;
	if (t->nextra == 32)
		return 31;
	t->extra_rule[t->nextra] = strdup(rule);
	return t->nextra++;
}

static void oracle_record(const struct tb_format *f, const struct tb_printfmt *p, struct tep_handle *tep, int v,
			  FILE *out);

/* One format against libtraceevent, in the oracles' child: lines to out describe each record. */
static void oracle_one(const char *path, FILE *out)
{
	size_t len = 0;
	char *text = tap_slurp(path, &len);
	struct tb_format f;
	struct tb_problem d = {0};
	struct tb_printfmt *p;
	struct tep_handle *tep;
	int rc;

	/*
	 * A dynamic event (a uprobe of a test running beside this one) may be
	 * removed between the glob and the read: gone, not malformed.
	 */
	if ((!text || !len) && access(path, F_OK) != 0) {
		fprintf(out, "GONE\t%s\n", path);
		free(text);
		return;
	}
	if (!text || tb_format_parse(text, len, &f, &d) < 0) {
		fprintf(out, "PARSE\t%s\n", text ? d.reason : "cannot read");
		free(text);
		return;
	}
	rc = tb_printfmt_compile(&f, NULL, &p, &d);
	if (rc < 0) {
		fprintf(out, "%s\t%s\t%s\n", rc == -ENOTSUP ? "NOTSUP" : "INVALID", f.name, d.reason);
		tb_format_free(&f);
		free(text);
		return;
	}
	fprintf(out, "COMPILED\n");
	fflush(out);
	tep = tep_alloc();
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	if (tep_parse_event(tep, text, len, "sys") != 0) {
		fprintf(out, "TEPFAIL\n");
	} else {
		for (int v = 0; v < 6; v++)
			oracle_record(&f, p, tep, v, out);
	}
	tep_free(tep);
	tb_printfmt_free(p);
	tb_format_free(&f);
	free(text);
}

/* One record of variant v through both printers: SAME, RULE, MASK or UNCLASSIFIED. */
static void oracle_record(const struct tb_format *f, const struct tb_printfmt *p, struct tep_handle *tep, int v,
			  FILE *out)
{
	static uint8_t rec[65536];
	uint32_t n = make_record(f, v < 2 ? v : REC_RANDOM, (uint64_t)v, rec, sizeof(rec));
	struct tb_strbuf sb = {0};
	struct tep_record tr = {.data = rec, .size = (int)n, .record_size = (int)n};
	struct trace_seq s;
	unsigned mask;
	const char *rule;
	int rc;

	if (!n)
		return;
	rc = tb_printfmt_run(p, rec, n, &sb);
	sb_putc(&sb, '\0');
	trace_seq_init(&s);
	tep_print_event(tep, &s, &tr, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	if (rc == 0 && !strcmp(sb.buf, s.buffer))
		fprintf(out, "SAME\n");
	else if ((rule = classify(f->print_fmt, rc == 0 ? sb.buf : "", s.buffer, rc, &mask)) != NULL)
		*rule ? fprintf(out, "RULE\t%s\n", rule) : fprintf(out, "MASK\t%u\n", mask);
	else
		fprintf(out, "UNCLASSIFIED\t%s\t%d\t%s\t%s\n", f->name, rc, sb.buf, s.buffer);
	trace_seq_destroy(&s);
	sb_free(&sb);
	fflush(out);
}

/*
 * In a child: the formats from the first on, each announced by "FILE\tI"
 * before its lines.  libtraceevent crashes on some formats, so the parent
 * starts a new child after the one that crashed; one child for all the rest
 * otherwise (a fork per format cost minutes under ASan, whose shadow
 * mappings every fork copies).
 */
static _Noreturn void oracle_child(char **paths, size_t first, size_t count, int fd)
{
	FILE *out = fdopen(fd, "w");

	for (size_t i = first; i < count; i++) {
		fprintf(out, "FILE\t%zu\n", i);
		fflush(out);
		alarm(20);
		oracle_one(paths[i], out);
		fflush(out);
	}
	_exit(0);
}

static void oracle_line(struct oracle_totals *t, char *line, const char *path, FILE *report)
{
	char *tab = strchr(line, '\t');

	if (tab)
		*tab++ = '\0';
	if (!strcmp(line, "COMPILED")) {
		t->compiled++;
	} else if (!strcmp(line, "NOTSUP")) {
		t->notsup++;
		fprintf(report, "# ENOTSUP %s\n", tab ? tab : "");
	} else if (!strcmp(line, "INVALID") || !strcmp(line, "PARSE")) {
		t->invalid++;
		diag("refused as malformed: %s: %s", path, tab ? tab : "");
	} else if (!strcmp(line, "GONE")) {
		t->formats--; /* counted when announced: no longer there to be a format */
		fprintf(report, "# removed while read: %s\n", tab ? tab : "");
	} else if (!strcmp(line, "TEPFAIL")) {
		t->tep_failed++;
	} else if (!strcmp(line, "SAME")) {
		t->records++, t->same++;
	} else if (!strcmp(line, "MASK")) {
		unsigned m = (unsigned)atoi(tab);
		t->records++;
		for (unsigned r = 0; r < NRULES; r++)
			if (m & (1u << r))
				t->rule_count[r]++;
	} else if (!strcmp(line, "RULE")) {
		t->records++;
		t->rule_count[NRULES + extra_index(t, tab)]++;
	} else if (!strcmp(line, "UNCLASSIFIED")) {
		t->records++;
		t->unclassified++;
		fprintf(report, "# UNCLASSIFIED %s\n", tab);
		if (t->unclassified <= 10)
			diag("unclassified difference: %s", tab);
	}
}

static void oracle_glob(const char *pattern, struct oracle_totals *t, FILE *report)
{
	glob_t g;
	size_t next = 0;

	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	while (next < g.gl_pathc) {
		int fds[2], status;
		pid_t pid;
		FILE *in;
		char line[16384];
		size_t cur = next;
		bool started = false;
		if (pipe(fds) < 0)
			break;
		fflush(stdout);
		fflush(report);
		pid = fork();
		if (pid == 0) {
			/* libtraceevent crashes on some formats: the crash report is noise here. */
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0)
				dup2(null, STDERR_FILENO);
			close(fds[0]);
			oracle_child(g.gl_pathv, next, g.gl_pathc, fds[1]);
		}
		close(fds[1]);
		in = fdopen(fds[0], "r");
		while (fgets(line, sizeof(line), in)) {
			line[strcspn(line, "\n")] = '\0';
			if (!strncmp(line, "FILE\t", 5)) {
				cur = strtoul(line + 5, NULL, 10);
				started = true;
				t->formats++;
				continue;
			}
			oracle_line(t, line, g.gl_pathv[cur], report);
		}
		fclose(in);
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			next = g.gl_pathc;
			continue;
		}
		if (!started) /* the child died before its first format: no progress to make */
			break;
		t->crashed++;
		fprintf(report, "# libtraceevent crashed (signal %d) on %s\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0,
			g.gl_pathv[cur]);
		next = cur + 1;
	}
	globfree(&g);
}

static void report_oracle(const char *what, struct oracle_totals *t)
{
	diag("%s: %d formats, %d compile, %d need the environment or are not supported (ENOTSUP), %d refused as "
	     "malformed; libtraceevent failed to parse %d and crashed on %d", what, t->formats, t->compiled, t->notsup,
	     t->invalid, t->tep_failed, t->crashed);
	diag("%s: %d records compared, %d identical; differences by rule:", what, t->records, t->same);
	for (unsigned r = 0; r < NRULES; r++)
		if (t->rule_count[r])
			diag("  %6d  %s", t->rule_count[r], rules[r].name);
	for (int i = 0; i < t->nextra; i++)
		diag("  %6d  %s", t->rule_count[NRULES + i], t->extra_rule[i]);
	diag("  %6d  unclassified", t->unclassified);
	for (int i = 0; i < t->nextra; i++)
		free((char *)t->extra_rule[i]);
}

static void test_oracle(void)
{
	struct oracle_totals bundled = {0}, live = {0};
	FILE *report = fopen(getenv("TB_PRINTFMT_REPORT") ? getenv("TB_PRINTFMT_REPORT") : "/dev/null", "w");

	oracle_glob(DATA "formats/*/*.format", &bundled, report);
	oracle_glob(DATA "cap-*/formats/*/*.format", &bundled, report);
	report_oracle("bundled formats", &bundled);
	ok(bundled.formats > 100 && bundled.invalid == 0, "every bundled format parses and none is refused as malformed");
	ok(bundled.compiled + bundled.notsup == bundled.formats && bundled.compiled * 10 >= bundled.formats * 9,
	   "%d of %d bundled formats compile; the others need enum names from the environment", bundled.compiled,
	   bundled.formats);
	ok(bundled.unclassified == 0, "bundled formats: no unclassified difference from libtraceevent");
	if (access("/sys/kernel/tracing/events/sched/sched_switch/format", R_OK) != 0) {
		skip(3, "the running kernel's formats are not readable (no tracefs or not root)");
	} else {
		oracle_glob("/sys/kernel/tracing/events/*/*/format", &live, report);
		report_oracle("running kernel", &live);
		ok(live.invalid == 0, "no format of the running kernel is refused as malformed");
		ok(live.compiled + live.notsup == live.formats && live.compiled * 10 >= live.formats * 9,
		   "%d of the running kernel's %d formats compile with no environment (the rest need enum names, "
		   "HZ or vmemmap_base, or do what no printer can: see TB_PRINTFMT_REPORT)", live.compiled, live.formats);
		ok(live.unclassified == 0, "running kernel: no unclassified difference from libtraceevent");
	}
	fclose(report);
}

/* ====================================================== 6. captures */

#define MAX_IDS 65536

struct capture_formats {
	struct tb_format *f[MAX_IDS];
	struct tb_printfmt *p[MAX_IDS];
	bool compare[MAX_IDS]; /* a system whose text is compared */
};

static void load_capture_formats(const char *dir, struct capture_formats *cf)
{
	char pattern[512];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/formats/*/*.format", dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		char *text = tap_slurp(g.gl_pathv[i], &len);
		struct tb_format *f = calloc(1, sizeof(*f));
		struct tb_problem d = {0};
		if (text && tb_format_parse(text, len, f, &d) == 0 && !cf->f[f->id]) {
			cf->f[f->id] = f;
			tb_printfmt_compile(f, NULL, &cf->p[f->id], &d);
			cf->compare[f->id] = strstr(g.gl_pathv[i], "/sched/") || strstr(g.gl_pathv[i], "/irq/") ||
					     strstr(g.gl_pathv[i], "/timer/") || strstr(g.gl_pathv[i], "/signal/");
		} else {
			free(f);
		}
		free(text);
	}
	globfree(&g);
}

static void free_capture_formats(struct capture_formats *cf)
{
	for (size_t i = 0; i < MAX_IDS; i++) {
		tb_printfmt_free(cf->p[i]);
		if (cf->f[i]) {
			tb_format_free(cf->f[i]);
			free(cf->f[i]);
		}
	}
}

/* Every run of 16 hex digits becomes "<ptr>": the kernel hashed %p in these captures. */
static void mask_pointers(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		size_t n = 0;
		while (all_hex(r + n, 1))
			n++;
		if (n == 16 && (r == s || !is_word(r[-1])) && !is_word(r[16])) {
			memcpy(w, "<ptr>", 5);
			w += 5;
			r += 16;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/*
 * Equal but where we print 0x<kernel text address> and the kernel a symbol:
 * the captures carry no kallsyms, so %ps cannot be resolved here.
 */
static bool same_but_symbols(const char *ours, const char *theirs)
{
	static char a[8192], b[8192];
	char *va[512], *vb[512];
	size_t na, nb;

	snprintf(a, sizeof(a), "%s", ours);
	snprintf(b, sizeof(b), "%s", theirs);
	na = cut_values(a, va, 512);
	nb = cut_values(b, vb, 512);
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(va[i], vb[i]) &&
		    !(!strncmp(va[i], "0xffffffff", 10) && strlen(va[i]) == 18 &&
		      (vb[i][0] == '_' || (vb[i][0] >= 'a' && vb[i][0] <= 'z'))))
			return false;
	return true;
}

struct capture_stats {
	long compared, equal, skipped;
	double ns;
	long timed;
};

/* The event lines of a per-CPU trace file: the text after "TIMESTAMP: ". */
static char *event_text(char *line)
{
	char *p;

	if (line[0] == '#' || !(p = strstr(line, ": ")))
		return NULL;
	return p + 2;
}

static void compare_cpu(const char *dir, int cpu, struct capture_formats *cf, size_t page_size,
			struct capture_stats *st)
{
	char path[512], *raw, *text, *save = NULL, *line;
	size_t raw_len = 0, text_len = 0;
	struct tb_strbuf sb = {0};

	snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
	raw = tap_slurp(path, &raw_len);
	snprintf(path, sizeof(path), "%s/cpu%d.trace.txt", dir, cpu);
	text = tap_slurp(path, &text_len);
	if (!raw || !text) {
		free(raw);
		free(text);
		return;
	}
	line = strtok_r(text, "\n", &save);
	for (size_t off = 0; off + page_size <= raw_len; off += page_size) {
		struct tb_page_cursor c;
		struct tb_record r;
		if (tb_page_cursor_init(&c, raw + off, page_size) < 0)
			continue;
		while (tb_page_next_data(&c, &r) == 1) {
			const uint8_t *d = r.data;
			uint16_t id;
			char *body = NULL, want[8192], got[8192];
			while (line && !(body = event_text(line)))
				line = strtok_r(NULL, "\n", &save);
			if (!line)
				break;
			line = strtok_r(NULL, "\n", &save);
			memcpy(&id, d, 2);
			/* a table of names the trace does not give prints as libtraceevent does, not as the kernel */
			if (!cf->compare[id] || !cf->p[id] || tb_printfmt_guesses(cf->p[id])) {
				st->skipped++;
				continue;
			}
			sb_reset(&sb);
			sb_puts(&sb, cf->f[id]->name);
			sb_put(&sb, ": ", 2);
			double t0 = now_ns();
			int rc = tb_printfmt_run(cf->p[id], d, r.len, &sb);
			st->ns += now_ns() - t0;
			st->timed++;
			snprintf(got, sizeof(got), "%.*s", rc == 0 ? (int)sb.len : 0, sb.buf);
			snprintf(want, sizeof(want), "%s", body);
			mask_pointers(got);
			mask_pointers(want);
			st->compared++;
			if (!strcmp(got, want) || same_but_symbols(got, want))
				st->equal++;
			else if (st->compared - st->equal <= 5)
				diag("%s cpu%d: ours '%s'\n#   kernel '%s'", dir, cpu, got, want);
		}
	}
	sb_free(&sb);
	free(raw);
	free(text);
}

static size_t header_page_size(const char *dir)
{
	char path[512], *text, *p;
	size_t len;
	unsigned off = 0, size = 0;

	snprintf(path, sizeof(path), "%s/header_page", dir);
	text = tap_slurp(path, &len);
	if (!text)
		return 0;
	p = strstr(text, "char data;");
	if (p)
		sscanf(p, "char data;\toffset:%u;\tsize:%u;", &off, &size);
	free(text);
	return off + size;
}

static void test_captures(void)
{
	static const char *const caps[] = {"cap-a-small-noloss", "cap-b-overrun", "cap-c-subbuf8k", "cap-d-abs-timestamp"};
	struct capture_stats total = {0};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		char dir[256];
		struct capture_formats *cf = calloc(1, sizeof(*cf));
		struct capture_stats st = {0};
		size_t page_size;
		snprintf(dir, sizeof(dir), DATA "%s", caps[i]);
		page_size = header_page_size(dir);
		load_capture_formats(dir, cf);
		for (int cpu = 0; cpu < 2; cpu++)
			compare_cpu(dir, cpu, cf, page_size, &st);
		ok(st.compared > 0 && st.equal == st.compared,
		   "%s: %ld of %ld sched/irq/timer/signal records print as the kernel's trace.txt (hashed %%p masked, "
		   "%%ps unresolved without kallsyms; %ld others skipped)",
		   caps[i], st.equal, st.compared, st.skipped);
		total.compared += st.compared;
		total.ns += st.ns;
		total.timed += st.timed;
		free_capture_formats(cf);
		free(cf);
	}
	diag("captures: %ld records compared, %.0f ns per record (one pass, cold)", total.compared,
	     total.timed ? total.ns / (double)total.timed : 0);
}

/* ========================================================= 8. speed */

static void test_speed(void)
{
	static const char dir[] = DATA "cap-d-abs-timestamp";
	struct capture_formats *cf = calloc(1, sizeof(*cf));
	size_t raw_len = 0, page_size = header_page_size(dir);
	char *raw = tap_slurp(DATA "cap-d-abs-timestamp/cpu0.raw", &raw_len);
	struct {
		const uint8_t *d;
		uint32_t len;
		uint16_t id;
	} *recs = malloc(100000 * sizeof(*recs));
	size_t n = 0;
	struct tb_strbuf sb = {0};
	double best = 1e30;

	load_capture_formats(dir, cf);
	for (size_t off = 0; raw && off + page_size <= raw_len && n < 100000; off += page_size) {
		struct tb_page_cursor c;
		struct tb_record r;
		if (tb_page_cursor_init(&c, raw + off, page_size) < 0)
			continue;
		while (tb_page_next_data(&c, &r) == 1 && n < 100000) {
			uint16_t id;
			memcpy(&id, r.data, 2);
			if (cf->p[id]) {
				recs[n].d = r.data;
				recs[n].len = r.len;
				recs[n++].id = id;
			}
		}
	}
	for (int round = 0; round < 5 && n; round++) {
		double t0 = now_ns();
		for (int rep = 0; rep < 20; rep++)
			for (size_t i = 0; i < n; i++) {
				sb_reset(&sb);
				tb_printfmt_run(cf->p[recs[i].id], recs[i].d, recs[i].len, &sb);
			}
		double per = (now_ns() - t0) / (20.0 * (double)n);
		if (per < best)
			best = per;
	}
	diag("speed: %zu records of cap-d (sys_enter/exit, sched, irq, timer), best of 5 rounds: %.1f ns per record", n,
	     best);
	ok(n > 1000 && best < 1000, "running a compiled print fmt costs %.1f ns per record (loose bound: 1000)", best);
	sb_free(&sb);
	free(recs);
	free(raw);
	free_capture_formats(cf);
	free(cf);
}

/* ================================================== 9. fused programs */

struct fused_totals {
	long programs, records, differ, refused_differ;
};

/* One record through both programs: the same return code, and the same text when it succeeds. */
static void compare_fused(const struct tb_printfmt *generic, const struct tb_printfmt *fused, const uint8_t *rec,
			  uint32_t len, const char *what, struct fused_totals *t)
{
	struct tb_strbuf a = {0}, b = {0};
	int ra = tb_printfmt_run(generic, rec, len, &a), rb = tb_printfmt_run(fused, rec, len, &b);

	t->records++;
	if (ra != rb || (ra == 0 && (a.len != b.len || (a.len && memcmp(a.buf, b.buf, a.len))))) {
		if (++t->differ <= 5)
			diag("%s (%u bytes): generic %d '%.*s', fused %d '%.*s'", what, len, ra, ra ? 0 : (int)a.len,
			     a.buf ? a.buf : "", rb, rb ? 0 : (int)b.len, b.buf ? b.buf : "");
	}
	sb_free(&a);
	sb_free(&b);
}

/* f compiled both ways; false (counted) when they do not compile alike. */
static bool compile_both(const struct tb_format *f, const struct tb_print_env *env, struct tb_printfmt **generic,
			 struct tb_printfmt **fused, struct fused_totals *t)
{
	struct tb_problem d = {0};
	int rg = pf_compile(f, env, false, generic, &d), rf = pf_compile(f, env, true, fused, &d);

	if (rg != rf) {
		t->refused_differ++;
		diag("%s: generic compile %d, fused %d", f->name, rg, rf);
	}
	if (rg == 0 && rf == 0) {
		t->programs++;
		return true;
	}
	tb_printfmt_free(rg == 0 ? *generic : NULL);
	tb_printfmt_free(rf == 0 ? *fused : NULL);
	return false;
}

/* Synthetic records of f, whole and cut short, through both programs. */
static void fused_format(const struct tb_format *f, const struct tb_print_env *env, const char *what,
			 struct fused_totals *t)
{
	static uint8_t rec[70000];
	struct tb_printfmt *g, *u;

	if (!compile_both(f, env, &g, &u, t))
		return;
	for (int v = 0; v < 24; v++) {
		uint32_t n = make_record(f, v < 2 ? v : REC_RANDOM, (uint64_t)v, rec, sizeof(rec));
		if (!n)
			continue;
		compare_fused(g, u, rec, n, what, t);
		/* cut short: the bounds checks must refuse alike */
		compare_fused(g, u, rec, n * (uint32_t)(v % 8) / 8, what, t);
	}
	tb_printfmt_free(g);
	tb_printfmt_free(u);
}

static void fused_glob(const char *pattern, const struct tb_print_env *env, struct fused_totals *t)
{
	glob_t g;

	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		char *text = tap_slurp(g.gl_pathv[i], &len);
		struct tb_format f;
		struct tb_problem d = {0};
		if (text && tb_format_parse(text, len, &f, &d) == 0) {
			fused_format(&f, env, g.gl_pathv[i], t);
			tb_format_free(&f);
		}
		free(text);
	}
	globfree(&g);
}

/* Every record of a capture through both programs of its event. */
static void fused_capture(const char *dir, struct fused_totals *t)
{
	struct capture_formats *cf = calloc(1, sizeof(*cf));
	struct tb_printfmt **generic = calloc(MAX_IDS, sizeof(*generic));
	size_t page_size = header_page_size(dir);
	char pattern[512];
	glob_t g;

	load_capture_formats(dir, cf);
	for (size_t id = 0; id < MAX_IDS; id++)
		if (cf->p[id]) {
			struct tb_problem d = {0};
			if (pf_compile(cf->f[id], NULL, false, &generic[id], &d) < 0)
				generic[id] = NULL;
		}
	snprintf(pattern, sizeof(pattern), "%s/*.raw", dir);
	if (page_size && glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			size_t raw_len = 0;
			char *raw = tap_slurp(g.gl_pathv[i], &raw_len);
			for (size_t off = 0; raw && off + page_size <= raw_len; off += page_size) {
				struct tb_page_cursor c;
				struct tb_record r;
				uint16_t id;
				if (tb_page_cursor_init(&c, raw + off, page_size) < 0)
					continue;
				while (tb_page_next_data(&c, &r) == 1)
					if (r.len >= 2 && (memcpy(&id, r.data, 2), generic[id] && cf->p[id]))
						compare_fused(generic[id], cf->p[id], r.data, r.len, cf->f[id]->name, t);
			}
			free(raw);
		}
		globfree(&g);
	}
	for (size_t id = 0; id < MAX_IDS; id++)
		tb_printfmt_free(generic[id]);
	free(generic);
	free_capture_formats(cf);
	free(cf);
}

/* The constructs of section 2 over the test record and its variants. */
static void fused_constructs(struct fused_totals *t)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[4096];
		struct tb_format f;
		struct tb_problem d = {0};
		struct tb_printfmt *g, *u;
		uint8_t rec[sizeof(test_rec)];
		snprintf(text, sizeof(text),
			 "name: t\nID: 1\nformat:\n" FIELD("unsigned short common_type", 0, 2, 0)
			 FIELD("unsigned char common_flags", 2, 1, 0) FIELD("unsigned char common_preempt_count", 3, 1, 0)
			 FIELD("int common_pid", 4, 4, 1) "\n%s\nprint fmt: %s\n", test_fields, cases[i].fmt);
		if (tb_format_parse(text, strlen(text), &f, &d) < 0)
			continue;
		if (compile_both(&f, &test_env, &g, &u, t)) {
			compare_fused(g, u, test_rec, test_len, cases[i].fmt, t);
			for (uint32_t k = 0; k < test_len; k++)
				rec[k] = (uint8_t)(test_rec[k] ^ (k >= 8 && k < 48 ? 0x80 : 0)); /* other signs */
			compare_fused(g, u, rec, test_len, cases[i].fmt, t);
			compare_fused(g, u, test_rec, test_len / 2, cases[i].fmt, t);
			tb_printfmt_free(g);
			tb_printfmt_free(u);
		}
		tb_format_free(&f);
	}
}

/* Directives of a print fmt's format string (%% and invalid ones aside). */
static unsigned count_directives(const char *print_fmt)
{
	unsigned n = 0;

	for (const char *q = strchr(print_fmt + 1, '"') ? print_fmt + 1 : ""; *q && *q != '"'; q++)
		if (*q == '%') {
			if (q[1] == '%')
				q++;
			else
				n++;
		}
	return n;
}

static void test_fused(void)
{
	static const char *const typical[] = {
		"sched/sched_switch", "sched/sched_wakeup", "sched/sched_waking", "irq/irq_handler_entry",
		"irq/irq_handler_exit", "irq/softirq_entry", "irq/softirq_exit", "raw_syscalls/sys_enter",
		"raw_syscalls/sys_exit", "kmem/kmalloc", "kmem/kfree", "timer/hrtimer_cancel",
	};
	struct fused_totals t = {0};
	static const char *const caps[] = {"cap-a-small-noloss", "cap-b-overrun", "cap-c-subbuf8k",
					   "cap-d-abs-timestamp", "cap-e-partial-and-padding", "cap-f-many-systems"};

	fused_glob(DATA "cap-*/formats/*/*.format", &test_env, &t);
	fused_glob(DATA "formats/*/*.format", &test_env, &t);
	fused_glob(DATA "formats/*/*.format", NULL, &t);
	fused_constructs(&t);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		char dir[256];
		snprintf(dir, sizeof(dir), DATA "%s", caps[i]);
		fused_capture(dir, &t);
	}
	ok(t.programs > 1000 && t.records > 50000 && t.differ == 0 && t.refused_differ == 0,
	   "fused programs print what the generic ones print: %ld programs, %ld records (bundled formats, "
	   "constructs, captures), %ld differ, %ld compile differently",
	   t.programs, t.records, t.differ, t.refused_differ);

	if (access("/sys/kernel/tracing/events", R_OK) == 0) {
		struct fused_totals live = {0};
		fused_glob("/sys/kernel/tracing/events/*/*/format", &test_env, &live);
		ok(live.differ == 0 && live.refused_differ == 0,
		   "running kernel: %ld fused programs print what the generic ones print over %ld records", live.programs,
		   live.records);
	} else {
		skip(1, "no tracefs: the running kernel's formats are not compared");
	}

	/* The specialiser fires on the typical events: one op per directive, and the end. */
	for (size_t i = 0; i < sizeof(typical) / sizeof(typical[0]); i++) {
		char path[256];
		size_t len;
		char *text;
		struct tb_format f;
		struct tb_problem d = {0};
		struct tb_printfmt *p = NULL;
		snprintf(path, sizeof(path), DATA "cap-f-many-systems/formats/%s.format", typical[i]);
		text = tap_slurp(path, &len);
		if (!text) { /* cap-f traced no raw_syscalls */
			snprintf(path, sizeof(path), DATA "cap-d-abs-timestamp/formats/%s.format", typical[i]);
			text = tap_slurp(path, &len);
		}
		if (!text || tb_format_parse(text, len, &f, &d) < 0) {
			ok(0, "%s: format", typical[i]);
			free(text);
			continue;
		}
		if (tb_printfmt_compile(&f, &test_env, &p, &d) == 0)
			ok(p->nops <= count_directives(f.print_fmt) + 1, "%s: %u ops for %u directives", typical[i],
			   p->nops, count_directives(f.print_fmt));
		else
			ok(0, "%s: compiles (%s)", typical[i], d.reason);
		tb_printfmt_free(p);
		tb_format_free(&f);
		free(text);
	}
}

/* ================================================== 10. print fmts written in C (pf_known.c) */

/* A bundled format file parsed into *f, and p compiled both ways; false (said) when not. */
static bool known_compile(const char *path, const char *edit_from, const char *edit_to, struct tb_format *f,
			  struct tb_printfmt **g, struct tb_printfmt **u)
{
	struct tb_problem d = {0};
	size_t len;
	char *text = tap_slurp(path, &len), *at;
	bool parsed;

	if (text && edit_from && (at = strstr(text, edit_from)) != NULL) /* same length: the format's layout */
		memcpy(at, edit_to, strlen(edit_to));
	parsed = text && tb_format_parse(text, len, f, &d) == 0;
	free(text);
	if (!parsed) {
		ok(0, "%s: format", path);
		return false;
	}
	if (pf_compile(f, &test_env, false, g, &d) < 0 || pf_compile(f, &test_env, true, u, &d) < 0) {
		ok(0, "%s: compiles (%s)", path, d.reason);
		tb_format_free(f);
		return false;
	}
	return true;
}

static void put_field(uint8_t *rec, const struct tb_format *f, const char *name, const void *v, size_t n)
{
	for (size_t i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			memcpy(rec + f->fields[i].offset, v, n);
}

/*
 * sched_switch and the wake-ups take their C versions, which print what
 * their programs print on the values at the edges: every prev_state bit
 * and the preemption bit, negative and extreme ints, a target_cpu wider
 * than its %03d, comms of 0 and 16 bytes; a text one byte different, or
 * a field of another size, keeps the program.
 */
static void test_known(void)
{
	static const char *const names[] = {"sched_switch", "sched_waking", "sched_wakeup"};
	static const int64_t states[] = {0, 1, 2, 4, 0x80, 0x100, 0x101, 0x103, 0xff, 0x1ff, 0x200, 0x281, -1,
					 INT64_MIN, INT64_MAX, 0x12345678abcdull};
	static const int32_t ints[] = {0, 1, 7, 42, 99, 100, 120, 999, 1000, 32768, 4194304, -1, -100,
				       INT32_MIN, INT32_MAX};
	static const char *const comms[] = {"", "sh", "kworker/u8:3", "0123456789abcdef"};
	struct fused_totals t = {0};
	static uint8_t rec[4096];

	for (size_t e = 0; e < sizeof(names) / sizeof(names[0]); e++) {
		char path[256];
		struct tb_format f;
		struct tb_printfmt *g, *u;
		bool sw = e == 0;
		snprintf(path, sizeof(path), DATA "cap-f-many-systems/formats/sched/%s.format", names[e]);
		if (!known_compile(path, NULL, NULL, &f, &g, &u))
			continue;
		ok(u->known != NULL && g->known == NULL, "%s: the fused program is the C version", names[e]);
		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
			for (size_t j = 0; j < sizeof(states) / sizeof(states[0]); j++)
				for (size_t k = 0; k < sizeof(comms) / sizeof(comms[0]); k++) {
					int32_t other = ints[(i + j + 1) % (sizeof(ints) / sizeof(ints[0]))];
					size_t n = strlen(comms[k]);
					memset(rec, 0, f.min_size + 64);
					put_field(rec, &f, sw ? "prev_comm" : "comm", comms[k], n);
					put_field(rec, &f, "next_comm", comms[(k + 1) % 4], strlen(comms[(k + 1) % 4]));
					put_field(rec, &f, sw ? "prev_pid" : "pid", &ints[i], 4);
					put_field(rec, &f, sw ? "prev_prio" : "prio", &other, 4);
					put_field(rec, &f, "next_pid", &other, 4);
					put_field(rec, &f, "next_prio", &ints[i], 4);
					put_field(rec, &f, "prev_state", &states[j], 8);
					put_field(rec, &f, "target_cpu", &ints[(i + j) % (sizeof(ints) / sizeof(ints[0]))], 4);
					compare_fused(g, u, rec, f.min_size, names[e], &t);
					compare_fused(g, u, rec, f.min_size - 1, names[e], &t); /* too short: refused alike */
				}
		tb_printfmt_free(g);
		tb_printfmt_free(u);
		tb_format_free(&f);
	}
	ok(t.records > 1000 && t.differ == 0, "the C versions print what the programs print: %ld records, %ld differ",
	   t.records, t.differ);

	/* Not the known text, or not its fields: the program runs. */
	static const char *const edits[][3] = {
		{"sched_switch", "prev_state=%s%s", "prev_state=%s%S"},
		{"sched_switch", "\"S\" }", "\"s\" }"},
		{"sched_waking", "target_cpu=%03d", "target_cpu=%04d"},
		{"sched_waking", "int prio;\toffset:28;\tsize:4;\tsigned:1;", "int prio;\toffset:28;\tsize:4;\tsigned:0;"},
		{"sched_switch", "long prev_state;\toffset:32;\tsize:8;", "long prev_state;\toffset:32;\tsize:4;"},
	};
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		char path[256];
		struct tb_format f;
		struct tb_printfmt *g, *u;
		snprintf(path, sizeof(path), DATA "cap-f-many-systems/formats/sched/%s.format", edits[i][0]);
		if (!known_compile(path, edits[i][1], edits[i][2], &f, &g, &u))
			continue;
		ok(u->known == NULL, "%s with %s: the program, not the C version", edits[i][0], edits[i][2]);
		tb_printfmt_free(g);
		tb_printfmt_free(u);
		tb_format_free(&f);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	build_test_record();
	test_vsprintf();
	test_constructs();
	test_symbol_memo();
	test_bprint();
	test_limits();
	test_oracle();
	test_captures();
	test_speed();
	test_fused();
	test_known();
	return done_testing();
}
