// SPDX-License-Identifier: MIT
/*
 * test_func - function entry/exit records (tracebuf/func.h) of a call tree
 * whose shape is known (tests/func/: built with -finstrument-functions,
 * one function left out by the compiler by name, one file by path, two
 * functions in a shared library), saved as a capture directory and read
 * back: the records, their depths, call sites and times; the names the
 * ELF symbol tables give them; the kernel's function_graph text; run-time
 * exclusion (API and TRACEBUF_FUNC_EXCLUDE); max_depth; the stack's
 * overrun count; longjmp; two threads; fork; TRACEBUF_FUNC_SAVE.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "func/tree.h"
#include "lib/tap.h"
#include "lib/tree.h"
#include "tracebuf/capture.h"
#include "tracebuf/func.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/page.h"
#include "tracebuf/ring.h"
#include "tracebuf/usyms.h"

/* ------------------------------------------------------------ helpers */

/* Long texts: on a difference, show the first line that differs, not all of them. */
#define is_text(got, want, ...)                                                                  \
	do {                                                                                     \
		const char *g_ = (got), *w_ = (want);                                            \
		if (!ok(g_ && !strcmp(g_, w_), __VA_ARGS__) && g_)                               \
			first_difference(g_, w_);                                                \
	} while (0)

static void first_difference(const char *got, const char *want)
{
	const char *start = got;
	int line = 1;

	while (*got && *got == *want) {
		line += *got == '\n';
		got++;
		want++;
	}
	while (got > start && got[-1] != '\n') {
		got--;
		want--;
	}
	diag("line %d: got  '%.*s'", line, (int)strcspn(got, "\n"), got);
	diag("line %d: want '%.*s'", line, (int)strcspn(want, "\n"), want);
}

struct rec {
	int cpu;
	uint64_t ts; /* raw, the ring's clock */
	bool exit;
	int32_t pid;
	uint64_t func, parent;
	uint32_t depth, overrun;
	uint64_t calltime, rettime;
};

struct trace {
	struct rec *r;
	size_t n;
	struct tb_usyms *syms;
	unsigned long problems;
};

static char tmp_root[] = "/tmp/tb-test-func-XXXXXX";
static const char *last_objects_dir; /* the capture read_trace read last */

static void cleanup(void)
{
	tree_remove(tmp_root);
}

static char *dir_for(const char *name)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8];

	snprintf(p, 512, "%s/%s", tmp_root, name);
	return p;
}

static void count_problem(void *ctx, const struct tb_problem *d)
{
	diag("problem: %s: byte %llu: %s", d->file, (unsigned long long)d->offset, d->reason);
	(*(unsigned long *)ctx)++;
}

static int by_time(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->cpu - y->cpu;
}

/* Every funcgraph record of the capture in dir, by time, and its symbols. */
static bool read_trace(const char *dir, struct trace *t)
{
	struct tb_capture_opts o = {.diag = count_problem, .diag_ctx = &t->problems};
	struct tb_capture *c;
	struct tb_capture_page page;
	char path[600];
	size_t cap = 0, len;

	memset(t, 0, sizeof(*t));
	if (tb_capture_open(dir, &o, &c) < 0)
		return false;
	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++) {
		while (tb_capture_has_cpu(c, cpu) && tb_capture_next_page(c, cpu, &page) == 1) {
			struct tb_page_cursor cur;
			struct tb_record r;
			if (tb_page_cursor_init(&cur, page.data, page.size) < 0)
				continue;
			while (tb_page_next_data(&cur, &r) == 1) {
				const uint8_t *d = r.data;
				uint16_t id;
				memcpy(&id, d, 2);
				if (id != TB_FUNC_ENTRY_ID && id != TB_FUNC_EXIT_ID)
					continue;
				if (t->n == cap) {
					cap = cap ? 2 * cap : 256;
					t->r = realloc(t->r, cap * sizeof(*t->r));
				}
				struct rec *x = &t->r[t->n++];
				memset(x, 0, sizeof(*x));
				x->cpu = cpu;
				x->ts = r.ts;
				x->exit = id == TB_FUNC_EXIT_ID;
				memcpy(&x->pid, d + 4, 4);
				memcpy(&x->func, d + 8, 8);
				memcpy(&x->depth, d + 16, 4);
				if (x->exit) {
					memcpy(&x->overrun, d + 20, 4);
					memcpy(&x->calltime, d + 24, 8);
					memcpy(&x->rettime, d + 32, 8);
				} else {
					memcpy(&x->parent, d + 24, 8);
				}
			}
		}
	}
	tb_capture_close(c);
	qsort(t->r, t->n, sizeof(*t->r), by_time);
	snprintf(path, sizeof(path), "%s/objects", dir);
	last_objects_dir = dir;
	char *text = tap_slurp(path, &len);
	if (!text || tb_usyms_load(&t->syms, path, text, len, count_problem, &t->problems) < 0) {
		free(text);
		return false;
	}
	free(text);
	return true;
}

static void free_trace(struct trace *t)
{
	free(t->r);
	tb_usyms_free(t->syms);
}

static const char *name_of(struct trace *t, uint64_t addr)
{
	struct tb_usym s;

	return tb_usyms_lookup(t->syms, addr, &s) ? s.name : "?";
}

/* "E name depth" / "X name depth" for the records of pid, one per line. */
static char *shape(struct trace *t, int32_t pid)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].pid == pid)
			fprintf(f, "%c %s %u\n", t->r[i].exit ? 'X' : 'E', name_of(t, t->r[i].func),
				t->r[i].depth);
	fclose(f);
	return text;
}

static struct tb_ring *new_ring(void)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = NULL;

	tb_ring_opts_default(&o);
	o.size_kb = 256;
	if (tb_ring_new(&ring, &o) < 0)
		abort();
	return ring;
}

static int run_tree(int x)
{
	return tree_main(x);
}

/* Trace fn(arg) on this thread, pinned to its CPU, and save the ring to dir. */
static void trace_call(const struct tb_func_opts *o, int (*fn)(int), int arg, const char *dir)
{
	struct tb_ring *ring = new_ring();
	struct tb_problem err = {0};
	cpu_set_t old, one;

	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	if (tb_func_start(ring, o) != 0)
		diag("tb_func_start failed");
	fn(arg);
	tb_func_stop();
	sched_setaffinity(0, sizeof(old), &old);
	if (tb_func_save(ring, dir, NULL, 0, &err) < 0)
		diag("tb_func_save: %s", err.reason);
	tb_ring_free(ring);
}

/* --------------------------------------------------------- the tree */

static const char tree_shape[] = "E tree_main 0\n"
				 "E leaf_a 1\n"
				 "X leaf_a 1\n"
				 "E mid_b 1\n"
				 "E leaf_a 2\n"
				 "X leaf_a 2\n"
				 "E lib_c 2\n"
				 "E lib_leaf 3\n"
				 "X lib_leaf 3\n"
				 "X lib_c 2\n"
				 "X mid_b 1\n"
				 "E under_compiler_excl 1\n"
				 "X under_compiler_excl 1\n"
				 "E under_file_excl 1\n"
				 "X under_file_excl 1\n"
				 "E under_runtime_skip 1\n"
				 "X under_runtime_skip 1\n"
				 "E recurse 1\n"
				 "E recurse 2\n"
				 "E recurse 3\n"
				 "X recurse 3\n"
				 "X recurse 2\n"
				 "X recurse 1\n"
				 "X tree_main 0\n";

/* Who calls each function in the tree: the call site's symbol. */
static const char *caller_of(const char *fn)
{
	static const char *const pairs[][2] = {
		{"leaf_a", "tree_main|mid_b"},
		{"mid_b", "tree_main"},
		{"lib_c", "mid_b"},
		{"lib_leaf", "lib_c"},
		{"under_compiler_excl", "excluded_by_compiler"},
		{"under_file_excl", "nt_file_func"},
		{"under_runtime_skip", "runtime_skip_me"},
		{"recurse", "tree_main|recurse"},
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (!strcmp(pairs[i][0], fn))
			return pairs[i][1];
	return NULL;
}

static bool caller_ok(const char *fn, const char *caller)
{
	const char *want = caller_of(fn);
	size_t n = strlen(caller);

	for (const char *p = want; p && *p;) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, caller, n))
			return true;
		p += k + (p[k] == '|');
	}
	return false;
}

/* For a failed look-up: what the trace said was mapped, and what is. */
static void diag_objects(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "cat '%s/objects' >&2; grep -e libtree -e ' r-xp ' /proc/%d/maps >&2",
		 last_objects_dir ? last_objects_dir : "/nonexistent", (int)getpid());
	if (system(cmd) != 0)
		diag("(could not show them)");
}

static void check_calls_and_times(struct trace *t, int32_t pid)
{
	size_t bad_site = 0, bad_time = 0, bad_nest = 0, sites = 0;
	struct tb_usym lib = {0}; /* read on a failed look-up too, by the message */

	for (size_t i = 0; i < t->n; i++) {
		struct rec *r = &t->r[i];
		if (r->pid != pid)
			continue;
		if (!r->exit) {
			const char *fn = name_of(t, r->func), *caller = name_of(t, r->parent);
			sites++;
			if (r->depth > 0 && !caller_ok(fn, caller)) {
				bad_site++;
				diag("%s called from %s?", fn, caller);
			}
			continue;
		}
		if (r->rettime <= r->calltime)
			bad_time++;
		/* A parent's interval holds its children's (its exit comes later). */
		for (size_t j = i + 1; j < t->n; j++) {
			struct rec *p = &t->r[j];
			if (p->pid == pid && p->exit && p->depth + 1 == r->depth) {
				if (p->calltime > r->calltime || p->rettime < r->rettime)
					bad_nest++;
				break;
			}
		}
	}
	ok(sites > 0 && bad_site == 0, "every entry's call site is in its caller (%zu entries)", sites);
	is_int(bad_time, 0, "every call took time: rettime > calltime");
	is_int(bad_nest, 0, "every call lies inside its parent's [calltime, rettime]");
	if (!ok(tb_usyms_lookup(t->syms, (uint64_t)(uintptr_t)lib_c, &lib) && strstr(lib.object, "libtree.so"),
		"lib_c is named from libtree.so's symbol table (%s)", lib.object ? lib.object : "?"))
		diag("lib_c at %p: name %s, object %s; the objects file and this process's maps:", (void *)lib_c,
		     lib.name ? lib.name : "?", lib.object ? lib.object : "?"),
		    diag_objects();
}

/*
 * Record stamps and call times agree: an exit is written after its
 * rettime.  ns_ring converts the stamps: TSC calibration is per process, so
 * any ring of this process converts as the recording one did.
 */
static void check_stamps(struct trace *t, struct tb_ring *ns_ring, int32_t pid)
{
	size_t bad = 0, n = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct rec *r = &t->r[i];
		uint64_t ns = tb_ring_to_ns(ns_ring, r->ts);
		if (r->pid != pid || !r->exit)
			continue;
		n++;
		if (ns + 1 < r->rettime)
			bad++;
	}
	ok(n > 0 && bad == 0, "each exit record is stamped at or after its rettime (%zu exits)", n);
}

/* ------------------------------------------------------- graph text */

/* The duration column: 14 characters, blank or "M N.NNN us" as the kernel prints it. */
static bool duration_ok(const char *col)
{
	char c[15];
	const char *p;

	memcpy(c, col, 14);
	c[14] = 0;
	if (strspn(c, " ") == 14)
		return true;
	if (!strchr(" +!#*@$", c[0]) || c[1] != ' ')
		return false;
	p = c + 2;
	while (*p == ' ')
		p++;
	p += strspn(p, "0123456789");
	if (*p == '.')
		p += 1 + strspn(p + 1, "0123456789");
	return !strncmp(p, " us ", 4) && strspn(p + 4, " ") == strlen(p + 4);
}

/*
 * The graph of the tree on one CPU, durations replaced by D (blank stays
 * blank): what trace_functions_graph.c prints for this sequence.
 */
static const char graph_shape[] = "C)               |  tree_main() {\n"
				  "C)   D           |    leaf_a();\n"
				  "C)               |    mid_b() {\n"
				  "C)   D           |      leaf_a();\n"
				  "C)               |      lib_c() {\n"
				  "C)   D           |        lib_leaf();\n"
				  "C)   D           |      }\n"
				  "C)   D           |    }\n"
				  "C)   D           |    under_compiler_excl();\n"
				  "C)   D           |    under_file_excl();\n"
				  "C)   D           |    under_runtime_skip();\n"
				  "C)               |    recurse() {\n"
				  "C)               |      recurse() {\n"
				  "C)   D           |        recurse();\n"
				  "C)   D           |      }\n"
				  "C)   D           |    }\n"
				  "C)   D           |  }\n";

static const char graph_header[] = "# tracer: function_graph\n"
				   "#\n"
				   "# CPU  DURATION                  FUNCTION CALLS\n"
				   "# |     |   |                     |   |   |   |\n";

static char *graph_text(const char *dir, const struct tb_graph_opts *o, struct tb_usyms *syms)
{
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (tb_capture_open(dir, NULL, &c) == 0) {
		tb_funcgraph_write(c, syms, f, o, NULL);
		tb_capture_close(c);
	}
	fclose(f);
	return text;
}

/* Replace " N) " by "C)" and a filled duration column by "  D           ". */
static char *masked(const char *graph, int *bad_duration)
{
	char *out = malloc(strlen(graph) + 1), *q = out;

	*bad_duration = 0;
	for (const char *p = graph; *p;) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		if (n > 4 + 14 && p[0] == ' ' && p[2] == ')' && p[3] == ' ') {
			const char *col = p + 4;
			*q++ = 'C';
			*q++ = ')';
			*q++ = ' ';
			if (!duration_ok(col))
				(*bad_duration)++;
			memcpy(q, strspn(col, " ") >= 14 ? "              " : "  D           ", 14);
			q += 14;
			memcpy(q, p + 18, n - 18);
			q += n - 18;
		} else {
			memcpy(q, p, n);
			q += n;
		}
		if (eol)
			*q++ = '\n';
		p += n + (eol != NULL);
	}
	*q = 0;
	return out;
}

static void test_tree(void)
{
	const char *dir = dir_for("tree");
	struct tb_ring *ns_ring = new_ring();
	struct trace t;
	char *s, *graph, *m, *header_end;
	int bad;

	is_int(tb_func_exclude("runtime_skip_me", 0), 1, "tb_func_exclude finds runtime_skip_me");
	is_int(tb_func_exclude("runtime_prune_*", TB_FUNC_EXCLUDE_CHILDREN), 1,
	       "tb_func_exclude finds runtime_prune_me by a glob");
	is_int(tb_func_exclude("no_such_function_anywhere", 0), 0, "a pattern that matches nothing: 0");
	trace_call(NULL, run_tree, 5, dir);
	tb_func_exclude_clear();
	if (!ok(read_trace(dir, &t), "the saved capture and its objects file read back"))
		return;
	is_int(t.problems, 0, "no problem reported reading it");
	s = shape(&t, (int32_t)gettid());
	is_str(s, tree_shape, "entries and exits, names and depths are the tree's "
			      "(compiler, file and run-time exclusions left out)");
	free(s);
	check_calls_and_times(&t, (int32_t)gettid());
	check_stamps(&t, ns_ring, (int32_t)gettid());

	graph = graph_text(dir, NULL, t.syms);
	header_end = strstr(graph, "|   |   |   |\n");
	ok(!strncmp(graph, graph_header, strlen(graph_header)),
	   "the graph starts with the kernel's function_graph header");
	m = masked(header_end ? header_end + 14 : graph, &bad);
	is_str(m, graph_shape, "the call graph has the kernel's shape, nesting and leaves");
	is_int(bad, 0, "every duration is printed as the kernel prints it");
	free(m);
	free(graph);

	/* The CLI prints the same graph from the same directory. */
	char cmd[1024], *cli = NULL;
	size_t cli_len = 0, got;
	char buf[4096];
	FILE *out, *p;
	const char *b = getenv("TB_BUILD");
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s", b ? b : "build", dir);
	graph = graph_text(dir, NULL, t.syms);
	out = open_memstream(&cli, &cli_len);
	p = popen(cmd, "r");
	while (p && (got = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, got, out);
	int status = p ? pclose(p) : -1;
	fclose(out);
	is_str(cli, graph, "`tracebuf report DIR` prints the call graph (tracer function_graph)");
	is_int(status, 0, "and exits 0");
	free(cli);
	free(graph);
	free_trace(&t);
	tb_ring_free(ns_ring);
}

static void test_env_exclude(void)
{
	const char *dir = dir_for("env");
	struct trace t;
	char *s;

	setenv("TRACEBUF_FUNC_EXCLUDE", "leaf_*,mid_b:children,runtime_*", 1);
	trace_call(NULL, run_tree, 1, dir);
	unsetenv("TRACEBUF_FUNC_EXCLUDE");
	tb_func_exclude_clear();
	if (!ok(read_trace(dir, &t), "TRACEBUF_FUNC_EXCLUDE run read back"))
		return;
	s = shape(&t, (int32_t)gettid());
	is_str(s,
	       "E tree_main 0\n"
	       "E under_compiler_excl 1\nX under_compiler_excl 1\n"
	       "E under_file_excl 1\nX under_file_excl 1\n"
	       "E under_runtime_skip 1\nX under_runtime_skip 1\n"
	       "E under_runtime_prune 1\nX under_runtime_prune 1\n"
	       "E recurse 1\nE recurse 2\nE recurse 3\nX recurse 3\nX recurse 2\nX recurse 1\n"
	       "X tree_main 0\n",
	       "TRACEBUF_FUNC_EXCLUDE: leaf_* gone, mid_b and all beneath it gone, "
	       "runtime_* gone but not what they call");
	free(s);
	free_trace(&t);
}

static void test_max_depth(void)
{
	const char *dir = dir_for("depth");
	struct tb_func_opts o = {.max_depth = 2};
	struct trace t;
	size_t deep = 0, n = 0;

	trace_call(&o, run_tree, 1, dir);
	if (!ok(read_trace(dir, &t), "max_depth run read back"))
		return;
	for (size_t i = 0; i < t.n; i++) {
		n++;
		deep += t.r[i].depth >= 2;
	}
	ok(n == 2 * 8 && deep == 0, "max_depth 2: the 8 calls at depths 0 and 1 recorded, none deeper "
				    "(%zu records, %zu deeper)", n, deep);
	free_trace(&t);
}

static int run_deep(int n)
{
	return recurse(n);
}

static void test_overrun(void)
{
	const char *dir = dir_for("overrun");
	struct tb_func_thread_stats before, after;
	struct trace t;
	size_t entries = 0, exits = 0, bad_overrun = 0;
	const int n = TB_FUNC_STACK + 72; /* n + 1 calls: 73 past the stack */

	tb_func_thread_stats(&before);
	trace_call(NULL, run_deep, n, dir);
	tb_func_thread_stats(&after);
	if (!ok(read_trace(dir, &t), "overrun run read back"))
		return;
	for (size_t i = 0; i < t.n; i++) {
		entries += !t.r[i].exit;
		exits += t.r[i].exit;
		bad_overrun += t.r[i].exit && t.r[i].overrun != 73;
	}
	is_int(entries, TB_FUNC_STACK, "a recursion of %d calls records the %d the stack holds", n + 1,
	       TB_FUNC_STACK);
	is_int(exits, TB_FUNC_STACK, "and as many exits");
	is_int(bad_overrun, 0, "every exit record carries overrun = 73, the calls not recorded");
	is_int(after.overrun - before.overrun, 73, "the thread's overrun count says 73 too");
	free_trace(&t);
}

static int run_jumper(int unused)
{
	(void)unused;
	return jumper();
}

static void test_longjmp(void)
{
	const char *dir = dir_for("jump");
	struct tb_func_thread_stats before, after;
	struct trace t;
	char *s;

	tb_func_thread_stats(&before);
	trace_call(NULL, run_jumper, 0, dir);
	tb_func_thread_stats(&after);
	if (!ok(read_trace(dir, &t), "longjmp run read back"))
		return;
	s = shape(&t, (int32_t)gettid());
	is_str(s, "E jumper 0\nE deep_one 1\nE deep_two 2\nX jumper 0\n",
	       "a longjmp out of two calls: their exits never come, the caller's does");
	is_int(after.abandoned - before.abandoned, 2, "the thread counts the two abandoned calls");
	free(s);
	free_trace(&t);
}

/* ---------------------------------------------------------- threads */

struct worker {
	pthread_barrier_t *go;
	int32_t tid;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = (int32_t)gettid();
	pthread_barrier_wait(w->go);
	for (int i = 0; i < 50; i++)
		tree_main(i);
	return NULL;
}

static void test_threads(void)
{
	const char *dir = dir_for("threads");
	struct tb_ring *ring = new_ring();
	pthread_barrier_t go;
	struct worker w[2] = {{&go, 0}, {&go, 0}};
	pthread_t th[2];
	struct trace t;
	char *one = NULL, *want = NULL;
	size_t len = 0;

	/* The tree 50 times over is what each thread must show. */
	FILE *f = open_memstream(&want, &len);
	for (int i = 0; i < 50; i++)
		fputs(tree_shape, f);
	fclose(f);
	pthread_barrier_init(&go, NULL, 3);
	tb_func_exclude("runtime_skip_me", 0);
	tb_func_exclude("runtime_prune_me", TB_FUNC_EXCLUDE_CHILDREN);
	tb_func_start(ring, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	pthread_barrier_wait(&go);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	tb_func_stop();
	tb_func_exclude_clear();
	tb_func_save(ring, dir, NULL, 0, NULL);
	tb_ring_free(ring);
	pthread_barrier_destroy(&go);
	if (!ok(read_trace(dir, &t), "two-thread run read back"))
		return;
	for (int i = 0; i < 2; i++) {
		one = shape(&t, w[i].tid);
		is_text(one, want, "thread %d: 50 whole trees, depths counted per thread", i + 1);
		free(one);
	}
	free(want);
	free_trace(&t);
}

/*
 * A child forked while tracing records under its own thread id: the hooks
 * keep each thread's records' common header ready, and the child's copy of
 * the parent's must be made again before its first record.
 */
static void test_fork(void)
{
	const char *dir = dir_for("fork");
	struct tb_ring *ring = new_ring();
	struct trace t;
	int status = -1;
	pid_t pid;
	char *s;

	tb_func_exclude("runtime_skip_me", 0);
	tb_func_exclude("runtime_prune_me", TB_FUNC_EXCLUDE_CHILDREN);
	tb_func_start(ring, NULL);
	tree_main(1); /* the parent's records, before the fork */
	pid = fork();
	if (pid == 0) {
		tree_main(1);
		tb_func_stop();
		_exit(tb_func_save(ring, dir, NULL, 0, NULL) == 0 ? 0 : 1);
	}
	tb_func_stop();
	tb_func_exclude_clear();
	waitpid(pid, &status, 0);
	tb_ring_free(ring);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child forked while tracing traced and saved its ring");
	if (!ok(read_trace(dir, &t), "the child's capture read back"))
		return;
	s = shape(&t, pid);
	is_str(s, tree_shape, "the child's calls carry the child's thread id");
	free(s);
	s = shape(&t, (int32_t)gettid());
	is_str(s, tree_shape, "the parent's calls before the fork, the parent's");
	free(s);
	free_trace(&t);
}

/* ------------------------------------------------ TRACEBUF_FUNC_SAVE */

static void test_auto_save(const char *self)
{
	const char *dir = dir_for("auto");
	struct trace t;
	pid_t pid = fork();
	int status = -1;
	char *s, want[sizeof(tree_shape) + 64];

	if (pid == 0) {
		setenv("TRACEBUF_FUNC_SAVE", dir, 1);
		setenv("TRACEBUF_FUNC_EXCLUDE", "runtime_skip_me,runtime_prune_me:children", 1);
		execl(self, self, "child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child started with TRACEBUF_FUNC_SAVE ran");
	if (!ok(read_trace(dir, &t), "and saved its trace at exit, read back"))
		return;
	s = shape(&t, pid);
	snprintf(want, sizeof(want), "%s", tree_shape);
	is_str(s, want, "the child traced itself from before main with no code of its own");
	free(s);
	free_trace(&t);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return tree_main(3) > 0 ? 0 : 1;
	if (!mkdtemp(tmp_root))
		skip_all("cannot create a scratch directory");
	atexit(cleanup);
	test_tree();
	test_env_exclude();
	test_max_depth();
	test_overrun();
	test_longjmp();
	test_threads();
	test_fork();
	test_auto_save(argv[0]);
	ok(!tb_func_active(), "tracing is off at the end");
	return done_testing();
}
