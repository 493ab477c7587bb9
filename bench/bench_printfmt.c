/*
 * bench_printfmt - the print-fmt compiler's programs beside libtraceevent.
 *
 * Every record of the bundled kernel captures (tests/data/kernel/cap-*) is
 * printed by (a) its event's compiled program (tb_printfmt_run) and (b)
 * libtraceevent's tep_print_event(TEP_PRINT_INFO), the event body only,
 * which is the part of a `trace` line the print fmt makes.  Both get the
 * same help: the capture's kallsyms and printk_formats when it has them,
 * and the hrtimer mode names of the kernel's enum hrtimer_mode (the format
 * files name them, no capture carries them yet).
 *
 * Timing: each event's records in a loop, and all records in capture order
 * (the mix a report meets), best of ROUNDS rounds; the minimum, because
 * other load on the machine only ever slows a round down.
 *
 * Correctness: the text of every record (and the return code) is hashed
 * per event and compared with bench/printfmt.ref, made from the compiler
 * before any speed work; a difference fails the run (exit 1).
 *
 *   bench_printfmt [--rounds N] [--all] [--only SYSTEM:EVENT] [--ref FILE] [--write-ref FILE]
 *                  [--dump FILE]
 *
 * --all lists the events of fewer than 10 records too; --only SYSTEM:EVENT
 * times that event alone, and longer (for perf record).
 * --dump FILE writes every output line instead (the captures' records, and
 * synthetic records of every format file under tests/data/kernel and of
 * the running kernel), for a diff between two versions of the compiler.
 * TB_DATA names the data directory (default tests/data/kernel).
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "bench_util.h"

#include "lib/records.h"
#include "print/printfmt.h"
#include "tracebuf/page.h"
#include "tracebuf/schema.h"

#define MAX_IDS 65536
#define MAX_EVENTS 1024

struct sym {
	uint64_t addr;
	const char *name, *module;
};

struct kstr {
	uint64_t addr;
	const char *text;
};

/* One capture directory: its formats, programs, symbols and libtraceevent handle. */
struct capture {
	char dir[512];
	struct tb_format *f[MAX_IDS];
	struct tb_printfmt *p[MAX_IDS];
	int event[MAX_IDS]; /* index into events[], -1 none */
	struct sym *syms;
	size_t nsyms;
	struct kstr *kstrs;
	size_t nkstrs;
	char *kallsyms_text, *printk_text;
	struct tb_print_env env;
	struct tep_handle *tep;
	char *raw[8];
	int nraw;
};

struct record {
	struct capture *cap;
	const uint8_t *data;
	uint32_t len;
	uint16_t id;
};

struct event {
	char name[2 * TB_NAME_MAX + 2]; /* system:name */
	struct record *recs;
	size_t n, cap;
	bool compiled;
	bool in_ref; /* named by the reference file */
	uint64_t hash;
	double ours_ns, tep_ns;
};

static struct event events[MAX_EVENTS];
static size_t nevents;
static struct record *all;
static size_t nall, all_cap;

/* The whole file, NUL-terminated; read in chunks, because tracefs files have no size. */
static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	size_t n = 0, cap = 0, got;
	char *buf = NULL;

	if (!fp)
		return NULL;
	do {
		if (n + 4097 > cap) {
			char *p = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!p) {
				free(buf);
				fclose(fp);
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, cap - n - 1, fp);
		n += got;
	} while (got > 0);
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return v;
	*cap = *cap ? *cap * 2 : 64;
	if (*cap < need)
		*cap = need;
	v = realloc(v, *cap * elem);
	if (!v) {
		perror("bench_printfmt");
		exit(2);
	}
	return v;
}

/* FNV-1a, 64 bits: a change in any byte of any line changes an event's hash. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* ------------------------------------------------------- environment */

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *env_symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size,
			      const char **module)
{
	struct capture *c = ctx;
	size_t lo = 0, hi = c->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	*start = c->syms[lo - 1].addr;
	*size = lo < c->nsyms ? c->syms[lo].addr - *start : 0;
	*module = c->syms[lo - 1].module;
	return c->syms[lo - 1].name;
}

static const char *env_kernel_string(void *ctx, uint64_t addr)
{
	struct capture *c = ctx;

	for (size_t i = 0; i < c->nkstrs; i++)
		if (c->kstrs[i].addr == addr)
			return c->kstrs[i].text;
	return NULL;
}

/* enum hrtimer_mode (include/linux/hrtimer.h): ABS 0, REL 1, PINNED 2, SOFT 4, HARD 8. */
static bool env_constant(void *ctx, const char *name, int64_t *v)
{
	static const struct {
		const char *name;
		int64_t v;
	} k[] = {
		{"HRTIMER_MODE_ABS", 0},       {"HRTIMER_MODE_REL", 1},
		{"HRTIMER_MODE_ABS_PINNED", 2}, {"HRTIMER_MODE_REL_PINNED", 3},
		{"HRTIMER_MODE_ABS_SOFT", 4},  {"HRTIMER_MODE_REL_SOFT", 5},
		{"HRTIMER_MODE_ABS_PINNED_SOFT", 6}, {"HRTIMER_MODE_REL_PINNED_SOFT", 7},
		{"HRTIMER_MODE_ABS_HARD", 8},  {"HRTIMER_MODE_REL_HARD", 9},
		{"HRTIMER_MODE_ABS_PINNED_HARD", 10}, {"HRTIMER_MODE_REL_PINNED_HARD", 11},
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!strcmp(k[i].name, name)) {
			*v = k[i].v;
			return true;
		}
	return false;
}

/* kallsyms: "ADDR TYPE NAME [MODULE]" lines; tep gets them too. */
static void load_kallsyms(struct capture *c)
{
	char path[600], *save = NULL;
	size_t len, cap = 0;

	snprintf(path, sizeof(path), "%s/kallsyms", c->dir);
	c->kallsyms_text = slurp(path, &len);
	if (!c->kallsyms_text)
		return;
	for (char *line = strtok_r(c->kallsyms_text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name, *mod, *end;
		uint64_t addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		name = end + 3;
		mod = strchr(name, '\t');
		if (!mod)
			mod = strchr(name, ' ');
		if (mod) {
			*mod++ = '\0';
			while (*mod == ' ' || *mod == '\t' || *mod == '[')
				mod++;
			mod[strcspn(mod, "]")] = '\0';
		}
		c->syms = grow(c->syms, &cap, c->nsyms + 1, sizeof(*c->syms));
		c->syms[c->nsyms++] = (struct sym){addr, name, mod && *mod ? mod : NULL};
		tep_register_function(c->tep, name, addr, mod && *mod ? mod : NULL);
	}
	qsort(c->syms, c->nsyms, sizeof(*c->syms), sym_cmp);
}

/* printk_formats: 0xADDR : "text" */
static void load_printk_formats(struct capture *c)
{
	char path[600], *save = NULL;
	size_t len, cap = 0;

	snprintf(path, sizeof(path), "%s/printk_formats", c->dir);
	c->printk_text = slurp(path, &len);
	if (!c->printk_text)
		return;
	for (char *line = strtok_r(c->printk_text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, *q;
		uint64_t addr = strtoull(line, &end, 16);
		if (end == line || !(q = strstr(end, " : \"")))
			continue;
		tep_register_print_string(c->tep, q + 3, addr);
		q += 4;
		if (*q && q[strlen(q) - 1] == '"')
			q[strlen(q) - 1] = '\0';
		c->kstrs = grow(c->kstrs, &cap, c->nkstrs + 1, sizeof(*c->kstrs));
		c->kstrs[c->nkstrs++] = (struct kstr){addr, q};
	}
}

/* ------------------------------------------------------------ loading */

static int event_index(const char *system, const char *name)
{
	char key[sizeof(events[0].name)];

	snprintf(key, sizeof(key), "%s:%s", system, name);
	for (size_t i = 0; i < nevents; i++)
		if (!strcmp(events[i].name, key))
			return (int)i;
	if (nevents == MAX_EVENTS)
		return -1;
	snprintf(events[nevents].name, sizeof(events[nevents].name), "%s", key);
	return (int)nevents++;
}

static void load_formats(struct capture *c)
{
	char pattern[600];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/formats/*/*.format", c->dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char system[TB_NAME_MAX], *slash;
		size_t len;
		char *text = slurp(g.gl_pathv[i], &len);
		struct tb_format *f = calloc(1, sizeof(*f));
		struct tb_problem d = {0};
		const char *s = g.gl_pathv[i] + strlen(c->dir) + strlen("/formats/");

		snprintf(system, sizeof(system), "%s", s);
		slash = strchr(system, '/');
		if (slash)
			*slash = '\0';
		if (text && tb_format_parse(text, len, f, &d) == 0 && !c->f[f->id]) {
			c->f[f->id] = f;
			c->event[f->id] = event_index(system, f->name);
			if (tb_printfmt_compile(f, &c->env, &c->p[f->id], &d) == 0 && c->event[f->id] >= 0)
				events[c->event[f->id]].compiled = true;
			tep_parse_event(c->tep, text, len, system);
		} else {
			free(f);
		}
		free(text);
	}
	globfree(&g);
}

static size_t header_page_size(const char *dir)
{
	char path[600], *text, *p;
	size_t len;
	unsigned off = 0, size = 0;

	snprintf(path, sizeof(path), "%s/header_page", dir);
	text = slurp(path, &len);
	if (!text)
		return 4096;
	p = strstr(text, "char data;");
	if (p)
		sscanf(p, "char data;\toffset:%u;\tsize:%u;", &off, &size);
	free(text);
	return off + size ? off + size : 4096;
}

static void add_record(struct capture *c, const struct tb_record *r)
{
	struct event *e;
	uint16_t id;
	int ev;

	memcpy(&id, r->data, 2);
	ev = c->event[id];
	if (!c->f[id] || ev < 0)
		return;
	e = &events[ev];
	e->recs = grow(e->recs, &e->cap, e->n + 1, sizeof(*e->recs));
	e->recs[e->n++] = (struct record){c, r->data, r->len, id};
	all = grow(all, &all_cap, nall + 1, sizeof(*all));
	all[nall++] = (struct record){c, r->data, r->len, id};
}

static void load_records(struct capture *c)
{
	char pattern[600];
	size_t page_size = header_page_size(c->dir);
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/*.raw", c->dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc && c->nraw < 8; i++) {
		size_t len = 0;
		char *raw = slurp(g.gl_pathv[i], &len);
		if (!raw)
			continue;
		c->raw[c->nraw++] = raw;
		for (size_t off = 0; off + page_size <= len; off += page_size) {
			struct tb_page_cursor cur;
			struct tb_record r;
			if (tb_page_cursor_init(&cur, raw + off, page_size) < 0)
				continue;
			while (tb_page_next_data(&cur, &r) == 1)
				if (r.len >= 8)
					add_record(c, &r);
		}
	}
	globfree(&g);
}

static struct capture *open_capture(const char *dir)
{
	struct capture *c = calloc(1, sizeof(*c));

	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	for (size_t i = 0; i < MAX_IDS; i++)
		c->event[i] = -1;
	c->tep = tep_alloc();
	tep_set_long_size(c->tep, 8);
	tep_set_page_size(c->tep, 4096);
	c->env = (struct tb_print_env){c, env_symbol, env_kernel_string, env_constant, NULL, 0, NULL};
	load_kallsyms(c);
	load_printk_formats(c);
	load_formats(c);
	load_records(c);
	return c;
}

static void close_capture(struct capture *c)
{
	for (size_t i = 0; i < MAX_IDS; i++) {
		tb_printfmt_free(c->p[i]);
		if (c->f[i]) {
			tb_format_free(c->f[i]);
			free(c->f[i]);
		}
	}
	for (int i = 0; i < c->nraw; i++)
		free(c->raw[i]);
	tep_free(c->tep);
	free(c->syms);
	free(c->kstrs);
	free(c->kallsyms_text);
	free(c->printk_text);
	free(c);
}

/* ------------------------------------------------------------ running */

static int run_ours(const struct record *r, struct tb_strbuf *sb)
{
	sb_reset(sb);
	return tb_printfmt_run(r->cap->p[r->id], r->data, r->len, sb);
}

static void run_tep(const struct record *r, struct trace_seq *s)
{
	struct tep_record tr = {.data = (void *)r->data, .size = (int)r->len, .record_size = (int)r->len};

	trace_seq_reset(s);
	tep_print_event(r->cap->tep, s, &tr, "%s", TEP_PRINT_INFO);
}

/* Best ns per record over rounds, each round ~2,000 records: short rounds, so that many run whole between two preemptions on a busy machine. */
static double time_ours(const struct record *recs, size_t n, int rounds, struct tb_strbuf *sb)
{
	size_t reps = n ? (2000 + n - 1) / n : 0;
	double best = 1e30;

	for (int round = 0; round < rounds && n; round++) {
		double t0 = now_ns();
		for (size_t rep = 0; rep < reps; rep++)
			for (size_t i = 0; i < n; i++)
				run_ours(&recs[i], sb);
		double per = (now_ns() - t0) / (double)(reps * n);
		if (per < best)
			best = per;
	}
	return best;
}

/* libtraceevent is ~50 times slower: a tenth of the repetitions. */
static double time_tep(const struct record *recs, size_t n, int rounds, struct trace_seq *s)
{
	size_t reps = n ? (300 + n - 1) / n : 0;
	double best = 1e30;

	for (int round = 0; round < rounds && n; round++) {
		double t0 = now_ns();
		for (size_t rep = 0; rep < reps; rep++)
			for (size_t i = 0; i < n; i++)
				run_tep(&recs[i], s);
		double per = (now_ns() - t0) / (double)(reps * n);
		if (per < best)
			best = per;
	}
	return best;
}

static uint64_t hash_event(struct event *e, struct tb_strbuf *sb)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < e->n; i++) {
		int rc = run_ours(&e->recs[i], sb);
		h = fnv(h, &rc, sizeof(rc));
		if (rc == 0) /* a failed run's partial text is the caller's to discard */
			h = fnv(h, sb->buf, sb->len);
		h = fnv(h, "\n", 1);
	}
	return h;
}

/* ----------------------------------------------------------- reference */

static int check_reference(const char *path, struct tb_strbuf *sb)
{
	char line[512], name[sizeof(events[0].name)], hash[32];
	FILE *fp = fopen(path, "r");
	size_t count;
	int bad = 0;

	if (!fp) {
		fprintf(stderr, "bench_printfmt: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), fp)) {
		size_t i;
		if (line[0] == '#' || sscanf(line, "%271s %zu %31s", name, &count, hash) != 3)
			continue;
		for (i = 0; i < nevents && strcmp(events[i].name, name); i++)
			;
		if (i == nevents) {
			fprintf(stderr, "bench_printfmt: %s is in the reference but has no records\n", name);
			bad = 1;
			continue;
		}
		events[i].in_ref = true;
		if (!events[i].compiled) {
			if (strcmp(hash, "notsup")) {
				fprintf(stderr, "bench_printfmt: %s no longer compiles\n", name);
				bad = 1;
			}
			continue;
		}
		char mine[32];
		snprintf(mine, sizeof(mine), "%016llx", (unsigned long long)hash_event(&events[i], sb));
		if (count != events[i].n || strcmp(mine, hash)) {
			fprintf(stderr, "bench_printfmt: %s: output differs from the reference (%zu records, hash %s, want %zu, %s)\n",
				name, events[i].n, mine, count, hash);
			bad = 1;
		}
	}
	fclose(fp);
	for (size_t i = 0; i < nevents; i++)
		if (events[i].n && !events[i].in_ref) {
			fprintf(stderr, "bench_printfmt: %s has records but is not in the reference\n", events[i].name);
			bad = 1;
		}
	return bad;
}

static int write_reference(const char *path, struct tb_strbuf *sb)
{
	FILE *fp = fopen(path, "w");

	if (!fp) {
		fprintf(stderr, "bench_printfmt: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(fp, "# bench_printfmt reference: event, records, FNV-1a of every record's return code and text\n");
	for (size_t i = 0; i < nevents; i++) {
		if (!events[i].n)
			continue;
		if (events[i].compiled)
			fprintf(fp, "%s %zu %016llx\n", events[i].name, events[i].n,
				(unsigned long long)hash_event(&events[i], sb));
		else
			fprintf(fp, "%s %zu notsup\n", events[i].name, events[i].n);
	}
	return fclose(fp) ? 1 : 0;
}

/* --------------------------------------------------------------- dump */

static const char *dump_symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size, const char **module)
{
	(void)ctx;
	if (addr >> 32 != 0xffffffffu)
		return NULL;
	*start = addr & ~0xfffull;
	*size = (addr & 0x200) ? 0 : 0x1000;
	*module = (addr & 0x100) ? "mod" : NULL;
	return "sym";
}

static const char *dump_string(void *ctx, uint64_t addr)
{
	(void)ctx;
	return (addr & 0x10) ? "kstr" : NULL;
}

/* Every name a value: more formats compile, so more of the compiler is compared. */
static bool dump_constant(void *ctx, const char *name, int64_t *v)
{
	(void)ctx;
	*v = (int64_t)(strlen(name) % 7) - 1;
	return true;
}

static bool dump_type_size(void *ctx, const char *type, uint64_t *size)
{
	(void)ctx;
	*size = strlen(type) % 3 ? 8 : 64;
	return true;
}

static void dump_format(FILE *out, const char *path)
{
	static const struct tb_print_env env = {NULL, dump_symbol, dump_string, dump_constant, dump_type_size, 0, NULL};
	static uint8_t rec[70000];
	size_t len;
	char *text = slurp(path, &len);
	struct tb_format f;
	struct tb_problem d = {0};
	struct tb_printfmt *p;
	struct tb_strbuf sb = {0};
	int rc;

	if (!text || tb_format_parse(text, len, &f, &d) < 0) {
		free(text);
		return;
	}
	rc = tb_printfmt_compile(&f, &env, &p, &d);
	if (rc < 0) {
		fprintf(out, "%s\tcompile %d @%zu %s\n", path, rc, (size_t)d.offset, d.reason);
	} else {
		for (int v = 0; v < 40; v++) {
			uint32_t n = make_record(&f, v < 2 ? v : REC_RANDOM, (uint64_t)v, rec, sizeof(rec));
			if (!n)
				continue;
			/* Cut records too: the bounds checks must refuse the same ones. */
			if (v >= 30)
				n = n * (uint32_t)(v - 29) / 11;
			sb_reset(&sb);
			rc = tb_printfmt_run(p, rec, n, &sb);
			fprintf(out, "%s\t%d\t%d\t%.*s\n", path, v, rc, rc == 0 ? (int)sb.len : 0, sb.buf);
		}
		tb_printfmt_free(p);
	}
	sb_free(&sb);
	tb_format_free(&f);
	free(text);
}

static void dump_glob(FILE *out, const char *pattern)
{
	glob_t g;

	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		dump_format(out, g.gl_pathv[i]);
	globfree(&g);
}

static int dump(const char *path, const char *data, struct tb_strbuf *sb)
{
	FILE *out = fopen(path, "w");
	char pattern[600];

	if (!out)
		return 1;
	for (size_t i = 0; i < nall; i++) {
		if (!all[i].cap->p[all[i].id])
			continue;
		int rc = run_ours(&all[i], sb);
		fprintf(out, "%s\t%d\t%.*s\n", events[all[i].cap->event[all[i].id]].name, rc, rc == 0 ? (int)sb->len : 0,
			sb->buf);
	}
	snprintf(pattern, sizeof(pattern), "%s/cap-*/formats/*/*.format", data);
	dump_glob(out, pattern);
	snprintf(pattern, sizeof(pattern), "%s/formats/*/*.format", data);
	dump_glob(out, pattern);
	dump_glob(out, "/sys/kernel/tracing/events/*/*/format");
	return fclose(out) ? 1 : 0;
}

/* --------------------------------------------------------------- main */

static int by_count(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
	const char *data = getenv("TB_DATA") ? getenv("TB_DATA") : "tests/data/kernel";
	const char *ref = "bench/printfmt.ref", *write_ref = NULL, *dump_to = NULL, *only = NULL;
	struct capture *caps[16];
	int ncaps = 0, rounds = 100, bad = 0;
	bool all_events = false;
	size_t rare = 0;
	struct tb_strbuf sb = {0};
	struct trace_seq s;
	char pattern[600];
	glob_t g;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ref") && i + 1 < argc)
			ref = argv[++i];
		else if (!strcmp(argv[i], "--write-ref") && i + 1 < argc)
			write_ref = argv[++i];
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
			dump_to = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--all"))
			all_events = true;
		else {
			fprintf(stderr, "usage: bench_printfmt [--rounds N] [--all] [--only SYSTEM:EVENT] [--ref FILE] "
				"[--write-ref FILE] [--dump FILE]\n");
			return 2;
		}
	}
	snprintf(pattern, sizeof(pattern), "%s/cap-*", data);
	if (glob(pattern, GLOB_ONLYDIR, NULL, &g) != 0) {
		fprintf(stderr, "bench_printfmt: no captures under %s (run from the source tree or set TB_DATA)\n", data);
		return 2;
	}
	for (size_t i = 0; i < g.gl_pathc && ncaps < 16; i++)
		caps[ncaps++] = open_capture(g.gl_pathv[i]);
	globfree(&g);

	if (dump_to)
		bad = dump(dump_to, data, &sb);
	else if (write_ref)
		bad = write_reference(write_ref, &sb);
	else
		bad = check_reference(ref, &sb);
	if (dump_to || write_ref || bad)
		goto out;

	trace_seq_init(&s);
	size_t timed = 0;
	double ours_sum = 0, tep_sum = 0;
	for (size_t i = 0; i < nevents; i++) {
		struct event *e = &events[i];
		if (!e->n || !e->compiled || (only && strcmp(e->name, only)))
			continue;
		e->ours_ns = time_ours(e->recs, e->n, rounds, &sb);
		if (only) /* for a profiler: this event's program alone, for a while */
			for (int k = 0; k < 20; k++)
				time_ours(e->recs, e->n, rounds, &sb);
		e->tep_ns = time_tep(e->recs, e->n, rounds > 30 ? 30 : rounds, &s);
	}
	/* The mix in capture order, compiled events only. */
	struct record *mix = malloc((nall ? nall : 1) * sizeof(*mix));
	size_t nmix = 0;
	for (size_t i = 0; i < nall && !only; i++)
		if (all[i].cap->p[all[i].id])
			mix[nmix++] = all[i];
	double mix_ours = time_ours(mix, nmix, rounds, &sb);
	double mix_tep = time_tep(mix, nmix, rounds > 30 ? 30 : rounds, &s);
	free(mix);

	qsort(events, nevents, sizeof(events[0]), by_count);
	printf("bench_printfmt: event bodies of %zu records of %d captures; best of %d rounds\n", nall, ncaps, rounds);
	printf("%-40s %7s %10s %10s %7s\n", "event", "records", "ours ns", "tep ns", "ratio");
	for (size_t i = 0; i < nevents; i++) {
		const struct event *e = &events[i];
		if (!e->n)
			continue;
		if (only && strcmp(e->name, only))
			continue;
		if (!e->compiled) {
			if (e->n >= 10 || all_events || only)
				printf("%-40s %7zu %10s %10s %7s\n", e->name, e->n, "notsup", "-", "-");
			continue;
		}
		if (e->n >= 10 || all_events || only)
			printf("%-40s %7zu %10.1f %10.1f %6.1fx\n", e->name, e->n, e->ours_ns, e->tep_ns,
			       e->tep_ns / e->ours_ns);
		else
			rare++;
		timed += e->n;
		ours_sum += e->ours_ns * (double)e->n;
		tep_sum += e->tep_ns * (double)e->n;
	}
	if (rare)
		printf("(%zu events of fewer than 10 records not shown: --all shows them; the totals count them)\n", rare);
	printf("%-40s %7zu %10.1f %10.1f %6.1fx\n", "total (per-event loops, weighted)", timed,
	       timed ? ours_sum / (double)timed : 0, timed ? tep_sum / (double)timed : 0,
	       ours_sum > 0 ? tep_sum / ours_sum : 0);
	if (nmix)
		printf("%-40s %7zu %10.1f %10.1f %6.1fx\n", "total (all records in capture order)", nmix, mix_ours,
		       mix_tep, mix_tep / mix_ours);
	printf("outputs: identical to %s\n", ref);
	trace_seq_destroy(&s);
out:
	for (int i = 0; i < ncaps; i++)
		close_capture(caps[i]);
	for (size_t i = 0; i < nevents; i++)
		free(events[i].recs);
	free(all);
	sb_free(&sb);
	return bad;
}
