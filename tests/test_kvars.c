/*
 * The kernel's clock tick in print fmts: HZ and jiffies (src/decode/kvars.c),
 * how the print fmt compiler uses them (jiffies_to_msecs, the writeback
 * events' age=, a jiffies it cannot know), and the constants file lines.
 *
 * 1. Parsing: /proc/timer_list as this machine's kernel printed it
 *    (tests/data/kernel/timer_list.txt), the HZ lines of its config, HZ
 *    measured from two samples, pinning a value.
 * 2. Printing with the real print fmts of writeback_single_inode and
 *    jbd2_run_stats (tests/data/kernel/cap-h-jiffies/formats) on records made
 *    here; the expected text is computed here from the kernel's own
 *    definitions (jiffies_to_msecs' three cases, unsigned long arithmetic).
 *    The kernel's text of real records is the oracle of test_identical
 *    (cap-h-jiffies).
 * 3. The constants file: HZ and jiffies written when a print fmt needs them.
 * 4. The running kernel (root, /proc/timer_list): jiffies advances, HZ as
 *    the probe finds it equals CONFIG_HZ of the kernel's own config
 *    (/proc/config.gz through zcat, or /boot/config-RELEASE), and a live
 *    schema answers jiffies of the moment it was first asked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "decode/constants.h"
#include "decode/kvars.h"
#include "lib/tap.h"
#include "print/printfmt.h"
#include "decode/schema_kernel.h"
#include "tracebuf/schema.h"

#define DATA  "tests/data/kernel/"
#define CAP_H DATA "cap-h-jiffies/"

/* ============================================================ 1. parsing */

static void timer_list(void)
{
	size_t len;
	char *text = tap_slurp(DATA "timer_list.txt", &len);
	struct tb_jiffies_sample s = {0};
	static const char only_members[] = "now at 5 nsecs\n  .last_jiffies   : 4295713874\n";
	static const char no_now[] = "jiffies: 4295742826\n";
	static const char bad[] = "now at 5 nsecs\njiffies: 42x\n";

	ok(text && tb_kvars_timer_list(text, len, &s) == 0 && s.now_ns == 3402217756736ull &&
		   s.jiffies == 4295742826ull,
	   "timer_list.txt: now at 3402217756736 ns, jiffies 4295742826 (not .idle_jiffies or .last_jiffies)");
	is_int(tb_kvars_timer_list(only_members, sizeof(only_members) - 1, &s), -ENOENT,
	       "only the per-CPU .last_jiffies member: no jiffies");
	is_int(tb_kvars_timer_list(no_now, sizeof(no_now) - 1, &s), -ENOENT, "no \"now at\" line: refused");
	is_int(tb_kvars_timer_list(bad, sizeof(bad) - 1, &s), -ENOENT, "jiffies: 42x is not a number");
	is_int(tb_kvars_timer_list(NULL, 0, &s), -ENOENT, "no text");
	free(text);
}

static void hz_config(void)
{
	/* The HZ lines of this kernel's /proc/config.gz, as they are there. */
	static const char config[] = "CONFIG_NO_HZ_COMMON=y\n# CONFIG_HZ_PERIODIC is not set\n"
				     "CONFIG_NO_HZ=y\n# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\n"
				     "# CONFIG_HZ_300 is not set\n# CONFIG_HZ_1000 is not set\nCONFIG_HZ=250\n";
	static const char *const refused[] = {"# CONFIG_HZ is not set\n", "CONFIG_HZ=0\n", "CONFIG_HZ=250x\n",
					       "CONFIG_HZ=\n", "CONFIG_HZ=99999999999\n", ""};
	struct tb_kvars vars = {0};
	uint64_t hz = 0;

	ok(tb_kvars_hz_config(config, sizeof(config) - 1, &vars) == 0 && tb_kvars_get(&vars, "HZ", &hz) &&
		   hz == 250,
	   "CONFIG_HZ=250 among the other HZ lines of a config: HZ 250");
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct tb_kvars none = {0};
		ok(tb_kvars_hz_config(refused[i], strlen(refused[i]), &none) == -ENOENT && none.n == 0,
		   "no HZ from \"%.*s\"", (int)strcspn(refused[i], "\n"), refused[i]);
	}
}

static void hz_measured(void)
{
	static const struct {
		uint64_t ms, ticks;
		int rc;
		uint64_t hz;
	} cases[] = {
		{100, 25, 0, 250},   {100, 24, 0, 250},  {100, 26, 0, 250},   {100, 30, 0, 300},
		{100, 29, 0, 300},   {100, 10, 0, 100},  {100, 11, 0, 100},   {100, 9, 0, 100},
		{100, 100, 0, 1000}, {100, 99, 0, 1000}, {1000, 250, 0, 250}, {100, 20, -ERANGE, 0},
		{100, 60, -ERANGE, 0}, {100, 0, -ERANGE, 0}, {40, 10, -EINVAL, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_jiffies_sample a = {5000000000ull, 4295000000ull};
		struct tb_jiffies_sample b = {a.now_ns + cases[i].ms * 1000000, a.jiffies + cases[i].ticks};
		struct tb_kvars vars = {0};
		uint64_t hz = 0;
		int rc = tb_kvars_hz_measured(&a, &b, &vars);
		ok(rc == cases[i].rc && (rc < 0 ? vars.n == 0 : tb_kvars_get(&vars, "HZ", &hz) && hz == cases[i].hz),
		   "%" PRIu64 " ticks in %" PRIu64 " ms: %s %" PRIu64 " (rc %d)", cases[i].ticks, cases[i].ms,
		   cases[i].rc ? "refused" : "HZ", cases[i].hz, rc);
	}
	{
		struct tb_jiffies_sample a = {5000000000ull, 4295000000ull}, b = {4900000000ull, 4295000025ull};
		struct tb_kvars vars = {0};
		is_int(tb_kvars_hz_measured(&a, &b, &vars), -EINVAL, "samples out of order: refused");
	}
}

static void pinning(void)
{
	struct tb_kvars vars = {0};
	uint64_t v = 0;

	ok(tb_kvars_known("jiffies") && tb_kvars_known("HZ") && tb_kvars_known("vmemmap_base") &&
		   !tb_kvars_known("hz") && !tb_kvars_known("jiffies_64"),
	   "known: jiffies, HZ, vmemmap_base; not hz or jiffies_64");
	is_int(tb_kvars_set(&vars, "nosuch", 1), -EINVAL, "pinning an unknown name is refused");
	ok(tb_kvars_set(&vars, "jiffies", 4295000123ull) == 0 && tb_kvars_get(&vars, "jiffies", &v) &&
		   v == 4295000123ull,
	   "a pinned jiffies reads back");
	/* The probe does not look again: the pinned value stays (whatever the running kernel's). */
	ok(tb_kvars_probe("jiffies", "/nonexistent", NULL, NULL, &vars, NULL, NULL) == 0 &&
		   tb_kvars_get(&vars, "jiffies", &v) && v == 4295000123ull,
	   "the probe answers a pinned variable from the pin");
	is_int(tb_kvars_probe("nosuch", "/nonexistent", NULL, NULL, &vars, NULL, NULL), -EINVAL,
	       "probing an unknown name is refused");
}

/* ================================================ 2. print fmts with HZ */

/* The environment: cap-h's constants (the I_* flags), HZ and jiffies as the test sets them. */
static struct tb_constants *cap_h_constants;
static int64_t env_hz = 250;
static uint64_t env_jiffies;
static bool env_has_jiffies;

static bool env_constant(void *ctx, const char *name, int64_t *v)
{
	(void)ctx;
	if (!strcmp(name, "HZ"))
		return env_hz ? (*v = env_hz, true) : false;
	if (!strcmp(name, "jiffies"))
		return env_has_jiffies ? (*v = (int64_t)env_jiffies, true) : false;
	return tb_constants_value(cap_h_constants, name, v);
}

static const struct tb_print_env env = {.constant = env_constant};

static bool load_format(const char *path, struct tb_format *f)
{
	size_t len;
	char *text = tap_slurp(path, &len);
	struct tb_problem d = {0};
	bool good = text && tb_format_parse(text, len, f, &d) == 0;

	free(text);
	return good;
}

static const struct tb_schema_field *field(const struct tb_format *f, const char *name)
{
	for (size_t i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

static void put_u64(uint8_t *rec, const struct tb_format *f, const char *name, uint64_t v)
{
	const struct tb_schema_field *fl = field(f, name);

	if (fl)
		memcpy(rec + fl->offset, &v, fl->size < 8 ? fl->size : 8); /* little endian */
}

/* Compile f's print fmt with the test environment and run it on rec: the text, or "<rc: reason>". */
static const char *print(const struct tb_format *f, const uint8_t *rec, uint32_t len)
{
	static char out[1024];
	struct tb_printfmt *p;
	struct tb_problem d = {0};
	struct tb_strbuf sb = {0};
	int rc = tb_printfmt_compile(f, &env, &p, &d);

	if (rc < 0) {
		snprintf(out, sizeof(out), "<%d: %s>", rc, d.reason);
		return out;
	}
	rc = tb_printfmt_run(p, rec, len, &sb);
	snprintf(out, sizeof(out), "%.*s", rc < 0 ? 0 : (int)sb.len, sb.buf ? sb.buf : "");
	if (rc < 0)
		snprintf(out, sizeof(out), "<run %d>", rc);
	sb_free(&sb);
	tb_printfmt_free(p);
	return out;
}

/* A writeback_single_inode record: bdi "254:0", ino 77, state, dirtied_when, index 3, to_write 5, wrote 2. */
static uint32_t writeback_record(const struct tb_format *f, uint8_t *rec, uint64_t state, uint64_t dirtied)
{
	memset(rec, 0, 128);
	memcpy(rec + field(f, "name")->offset, "254:0", 6);
	put_u64(rec, f, "ino", 77);
	put_u64(rec, f, "state", state);
	put_u64(rec, f, "dirtied_when", dirtied);
	put_u64(rec, f, "writeback_index", 3);
	put_u64(rec, f, "nr_to_write", 5);
	put_u64(rec, f, "wrote", 2);
	put_u64(rec, f, "cgroup_ino", 1);
	return 96;
}

static void writeback_age(void)
{
	struct tb_format f = {0};
	uint8_t rec[128];
	char want[512];
	uint64_t jiffies = 4295736389ull, dirtied = 4295735000ull;
	/* I_DIRTY_SYNC | I_DIRTY_PAGES | I_SYNC, as cap-h's constants have them */
	uint64_t state = 16 | 64 | 2;
	uint32_t len;

	if (!ok(load_format(CAP_H "formats/writeback/writeback_single_inode.format", &f) &&
		    field(&f, "name") && field(&f, "dirtied_when"),
		"writeback_single_inode's format (cap-h) parses"))
		return;
	len = writeback_record(&f, rec, state, dirtied);
	env_has_jiffies = true;
	env_jiffies = jiffies;
	snprintf(want, sizeof(want),
		 "bdi 254:0: ino=77 state=I_DIRTY_SYNC|I_DIRTY_PAGES|I_SYNC dirtied_when=%" PRIu64 " age=%" PRIu64
		 " index=3 to_write=5 wrote=2 cgroup_ino=1",
		 dirtied, (jiffies - dirtied) / 250);
	is_str(print(&f, rec, len), want, "age= is (jiffies - dirtied_when) / 250: %" PRIu64,
	       (jiffies - dirtied) / 250);

	/* dirtied_when after jiffies: unsigned long arithmetic wraps, as the kernel's does */
	len = writeback_record(&f, rec, state, jiffies + 10);
	snprintf(want, sizeof(want),
		 "bdi 254:0: ino=77 state=I_DIRTY_SYNC|I_DIRTY_PAGES|I_SYNC dirtied_when=%" PRIu64 " age=%" PRIu64
		 " index=3 to_write=5 wrote=2 cgroup_ino=1",
		 jiffies + 10, (uint64_t)(jiffies - (jiffies + 10)) / 250);
	is_str(print(&f, rec, len), want, "a dirtied_when after jiffies wraps in unsigned long");

	/* A trace that did not keep jiffies: age=?, the rest as the kernel prints it */
	env_has_jiffies = false;
	len = writeback_record(&f, rec, state, dirtied);
	snprintf(want, sizeof(want),
		 "bdi 254:0: ino=77 state=I_DIRTY_SYNC|I_DIRTY_PAGES|I_SYNC dirtied_when=%" PRIu64
		 " age=? index=3 to_write=5 wrote=2 cgroup_ino=1",
		 dirtied);
	is_str(print(&f, rec, len), want, "jiffies unknown: age=? and the state names still resolved");
	tb_format_free(&f);
}

/* A format of one unsigned long field j at offset 8, with print_fmt. */
static bool small_format(struct tb_format *f, const char *print_fmt)
{
	char text[1024];
	struct tb_problem d = {0};

	snprintf(text, sizeof(text),
		 "name: t\nID: 1\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:unsigned long j;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: %s\n",
		 print_fmt);
	return tb_format_parse(text, strlen(text), f, &d) == 0;
}

static const char *print_small(const char *print_fmt, uint64_t j)
{
	static char out[1024];
	struct tb_format f = {0};
	uint8_t rec[16] = {0};

	if (!small_format(&f, print_fmt))
		return "<format>";
	memcpy(rec + 8, &j, 8);
	snprintf(out, sizeof(out), "%s", print(&f, rec, sizeof(rec)));
	tb_format_free(&f);
	return out;
}

static void jiffies_typing(void)
{
	env_has_jiffies = true;
	env_jiffies = 5;
	/* jiffies is unsigned long: -1 converts to ULONG_MAX, so jiffies > -1 is false */
	is_str(print_small("\"%d %lu\", jiffies > -1, jiffies / -2", 0), "0 0",
	       "jiffies is unsigned long: jiffies > -1 is 0 and jiffies / -2 is 0, as in C");
	env_has_jiffies = false;
	is_str(print_small("\"a=%lu b=%d c=%s\", jiffies - REC->j, jiffies ? 1 : 2, \"x\"", 7), "a=? b=? c=x",
	       "jiffies unknown: each directive whose argument uses it prints ?, the others print");
	is_str(print_small("\"[%*d]\", (int)jiffies, 5", 0), "[?]", "a '*' width from jiffies: the directive prints ?");
	is_str(print_small("\"%lu\", sizeof(jiffies)", 0), "8", "sizeof(jiffies) is known without its value");
	/* mm_page_alloc's page= without vmemmap_base: '?', not the pfn dressed as an address */
	is_str(print_small("\"page=%p pfn=0x%lx\", REC->j != -1UL ? (((struct page *)vmemmap_base) + (REC->j)) : ((void *)0), REC->j",
			   0x2d3afc),
	       "page=? pfn=0x2d3afc", "vmemmap_base unknown: page=? and the pfn the record holds");
	ok(!strncmp(print_small("\"%d\", nosuch_variable", 0), "<-95", 4),
	   "another unknown name is still refused (ENOTSUP, libtraceevent's turn)");
}

/* jiffies_to_msecs of a 64-bit kernel, written as kernel/time/time.c's three cases. */
static uint32_t kernel_jiffies_to_msecs(uint64_t j, uint64_t hz)
{
	uint64_t g = 1000, h = hz;

	if (hz <= 1000 && 1000 % hz == 0)
		return (uint32_t)(1000 / hz * j);
	if (hz > 1000 && hz % 1000 == 0)
		return (uint32_t)((j + hz / 1000 - 1) / (hz / 1000));
	while (h) { /* HZ_TO_MSEC_NUM / HZ_TO_MSEC_DEN: 1000 / HZ in lowest terms */
		uint64_t r = g % h;
		g = h;
		h = r;
	}
	return (uint32_t)((j * (1000 / g) + hz / g - 1) / (hz / g));
}

static void jbd2_msecs(void)
{
	static const uint64_t hzs[] = {100, 250, 300, 1000, 1024, 2000, 24};
	static const uint64_t js[] = {0, 1, 2, 3, 7, 906, 1000, 0x100000001ull, 0x123456789abull};
	struct tb_format f = {0};
	uint8_t rec[128];
	char want[512];
	int bad = 0, runs = 0;

	if (!ok(load_format(CAP_H "formats/jbd2/jbd2_run_stats.format", &f), "jbd2_run_stats' format (cap-h) parses"))
		return;
	for (size_t h = 0; h < sizeof(hzs) / sizeof(hzs[0]); h++)
		for (size_t i = 0; i < sizeof(js) / sizeof(js[0]); i++) {
			uint64_t j = js[i];
			const char *got;
			memset(rec, 0, sizeof(rec));
			put_u64(rec, &f, "dev", 7u << 20);
			put_u64(rec, &f, "tid", 2);
			put_u64(rec, &f, "wait", j);
			put_u64(rec, &f, "request_delay", j + 1);
			put_u64(rec, &f, "running", j * 3);
			put_u64(rec, &f, "locked", 0);
			put_u64(rec, &f, "flushing", 1);
			put_u64(rec, &f, "logging", j / 2);
			put_u64(rec, &f, "handle_count", 11);
			put_u64(rec, &f, "blocks", 8);
			put_u64(rec, &f, "blocks_logged", 10);
			env_hz = (int64_t)hzs[h];
			snprintf(want, sizeof(want),
				 "dev 7,0 tid 2 wait %u request_delay %u running %u locked 0 flushing %u logging %u "
				 "handle_count 11 blocks 8 blocks_logged 10",
				 kernel_jiffies_to_msecs(j, hzs[h]), kernel_jiffies_to_msecs(j + 1, hzs[h]),
				 kernel_jiffies_to_msecs(j * 3, hzs[h]), kernel_jiffies_to_msecs(1, hzs[h]),
				 kernel_jiffies_to_msecs(j / 2, hzs[h]));
			got = print(&f, rec, 76);
			runs++;
			if (strcmp(got, want) && bad++ < 5)
				diag("HZ %" PRIu64 " j %" PRIu64 ":\n  got  %s\n  want %s", hzs[h], j, got, want);
		}
	ok(bad == 0, "jiffies_to_msecs in jbd2_run_stats for HZ 100, 250, 300, 1000, 1024, 2000, 24 and "
	   "%d values each, 32-bit truncation included: %d of %d differ from the kernel's formula",
	   (int)(sizeof(js) / sizeof(js[0])), bad, runs);
	env_hz = 0;
	ok(!strncmp(print(&f, rec, 76), "<-95", 4), "without HZ jiffies_to_msecs is refused (ENOTSUP)");
	env_hz = 250;
	tb_format_free(&f);
}

/* ======================================================= 3. constants file */

static bool src_constant(void *ctx, const char *name, int64_t *v)
{
	(void)ctx;
	return env_constant(NULL, name, v);
}

static char *write_constants(const char *path)
{
	struct tb_format f = {0};
	const struct tb_format *fs[1] = {&f};
	struct tb_constants_source src = {NULL, src_constant, NULL};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (load_format(path, &f))
		tb_constants_write(out, fs, 1, &src);
	fclose(out);
	tb_format_free(&f);
	return text;
}

static void constants_lines(void)
{
	char *wb, *jbd2, *other;
	struct tb_constants *back = tb_constants_new();
	int64_t v = 0;

	env_hz = 250;
	env_has_jiffies = true;
	env_jiffies = 4295736389ull;
	wb = write_constants(CAP_H "formats/writeback/writeback_single_inode.format");
	jbd2 = write_constants(CAP_H "formats/jbd2/jbd2_run_stats.format");
	other = write_constants(CAP_H "formats/writeback/writeback_dirty_folio.format");
	ok(wb && strstr(wb, "\nHZ 250\n") && strstr(wb, "\njiffies 4295736389\n") && strstr(wb, "\nI_SYNC 2\n"),
	   "writeback_single_inode: HZ 250, jiffies in decimal, the I_* flags");
	ok(jbd2 && strstr(jbd2, "\nHZ 250\n") && !strstr(jbd2, "jiffies "),
	   "jbd2_run_stats (jiffies_to_msecs): HZ, no jiffies");
	ok(other && !strstr(other, "HZ") && !strstr(other, "jiffies"), "writeback_dirty_folio: neither");
	ok(wb && tb_constants_parse(back, "constants", wb, strlen(wb), NULL, NULL) == 0 &&
		   tb_constants_value(back, "jiffies", &v) && v == 4295736389ll,
	   "the file reads back: jiffies 4295736389");
	env_has_jiffies = false;
	free(wb), free(jbd2), free(other);
	tb_constants_free(back);
}

/* ============================================== 4. the running kernel */

/* CONFIG_HZ of the running kernel's own config, or 0 if it cannot be read. */
static uint64_t config_hz(void)
{
	struct utsname u;
	char cmd[400];
	uint64_t hz = 0;
	FILE *p;

	if (uname(&u) != 0)
		return 0;
	snprintf(cmd, sizeof(cmd),
		 "{ zcat /proc/config.gz || cat /boot/config-%s; } 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'",
		 u.release);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%" SCNu64, &hz) != 1)
			hz = 0;
		pclose(p);
	}
	return hz;
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, ms % 1000 * 1000000L};

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static void running_kernel(void)
{
	struct tb_jiffies_sample a, b;
	struct tb_kvars vars = {0};
	struct tb_schema *s;
	uint64_t hz = 0, want_hz;
	int64_t first = 0, again = 0;
	bool found;
	int rc;

	if (tb_kvars_jiffies_now(&a) != 0) {
		skip(6, "/proc/timer_list is not readable (not root)");
		return;
	}
	sleep_ms(60);
	rc = tb_kvars_jiffies_now(&b);
	ok(rc == 0 && b.now_ns > a.now_ns && b.jiffies > a.jiffies,
	   "jiffies advances: %" PRIu64 " then %" PRIu64 " %.0f ms later", a.jiffies, b.jiffies,
	   (double)(b.now_ns - a.now_ns) / 1e6);
	rc = tb_kvars_probe("HZ", "/sys/kernel/tracing", NULL, NULL, &vars, NULL, NULL);
	tb_kvars_get(&vars, "HZ", &hz);
	ok(rc == 0 && (hz == 100 || hz == 250 || hz == 300 || hz == 1000),
	   "the probe finds HZ: %" PRIu64, hz);
	want_hz = config_hz();
	if (want_hz) {
		struct tb_kvars measured = {0};
		uint64_t m = 0;
		is_int(hz, want_hz, "it is the kernel's CONFIG_HZ (its own config)");
		/* Whatever source the probe took, the measurement alone must agree too. */
		tb_kvars_jiffies_now(&a);
		sleep_ms(TB_HZ_PROBE_MS);
		tb_kvars_jiffies_now(&b);
		rc = tb_kvars_hz_measured(&a, &b, &measured);
		tb_kvars_get(&measured, "HZ", &m);
		ok(rc == 0 && m == want_hz,
		   "jiffies timed over %d ms gives the same HZ (%" PRIu64 ")", TB_HZ_PROBE_MS, m);
	} else {
		skip(2, "the kernel's config is not readable (no /proc/config.gz or /boot/config-RELEASE)");
	}

	/* A live schema: jiffies of the moment it is first asked, the same after. */
	s = tb_schema_new();
	tb_schema_use_running_kernel(s, "/sys/kernel/tracing");
	tb_kvars_jiffies_now(&a);
	ok(tb_schema_constant(s, "jiffies", &first), "a live schema knows jiffies");
	tb_kvars_jiffies_now(&b);
	sleep_ms(30);
	found = tb_schema_constant(s, "jiffies", &again);
	ok(found && (uint64_t)first >= a.jiffies &&
		   (uint64_t)first <= b.jiffies && again == first,
	   "it is the value of the first question (%" PRIu64 " <= %" PRId64 " <= %" PRIu64 "), and stays",
	   a.jiffies, first, b.jiffies);
	tb_schema_free(s);
}

int main(void)
{
	size_t len;
	char *text = tap_slurp(CAP_H "constants", &len);

	cap_h_constants = tb_constants_new();
	if (text)
		tb_constants_parse(cap_h_constants, CAP_H "constants", text, len, NULL, NULL);
	free(text);

	timer_list();
	hz_config();
	hz_measured();
	pinning();
	writeback_age();
	jiffies_typing();
	jbd2_msecs();
	constants_lines();
	running_kernel();
	tb_constants_free(cap_h_constants);
	return done_testing();
}
