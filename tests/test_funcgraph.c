// SPDX-License-Identifier: MIT
/*
 * test_funcgraph - the function_graph printer (tracebuf/funcgraph.h) on
 * records in the kernel's own funcgraph_entry / funcgraph_exit layouts
 * (tests/data/funcgraph: the running kernel's format files), put in
 * sub-buffers with the page codec, with the kernel's print event as a
 * comment, kernel symbols from a kallsyms file, two tasks on one CPU and a
 * lost flag on the other.
 *
 * The expected text is worked out by hand from
 * kernel/trace/trace_functions_graph.c: "%*d) " CPU column, the 14-column
 * duration (overhead mark, at most 7 digits, ns cut to fit), two spaces of
 * indent per depth, leaves on one line, "} /\* f *\/" when the entry was not
 * seen, comments indented at depth + 1, the "=>" banner with comm-pid
 * centred in 14 columns.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/tap.h"
#include "lib/tree.h"
#include "tracebuf/capture.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/page.h"

#define ENTRY_ID 11 /* as in the format files */
#define EXIT_ID 10
#define PRINT_ID 5

static char dir[] = "/tmp/tb-test-funcgraph-XXXXXX";

static void cleanup(void)
{
	tree_remove(dir);
}

static void put_file(const char *name, const void *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

static void copy_file(const char *from, const char *name)
{
	size_t len;
	char *text = tap_slurp(from, &len);

	if (!text)
		skip_all("test data missing (run from the source tree)");
	put_file(name, text, len);
	free(text);
}

/* ------------------------------------------------------------- records */

struct page {
	uint8_t mem[4096];
	struct tb_page_writer w;
};

static void common(uint8_t *r, uint16_t id, int32_t pid)
{
	memset(r, 0, 8);
	memcpy(r, &id, 2);
	memcpy(r + 4, &pid, 4);
}

static void entry(struct page *p, uint64_t ts, int32_t pid, uint64_t func, uint32_t depth)
{
	uint8_t r[24] = {0};

	common(r, ENTRY_ID, pid);
	memcpy(r + 8, &func, 8);
	memcpy(r + 16, &depth, 4);
	if (tb_page_add(&p->w, ts, r, sizeof(r)) < 0)
		abort();
}

static void exit_rec(struct page *p, int32_t pid, uint64_t func, uint32_t depth, uint64_t calltime,
		     uint64_t rettime)
{
	uint8_t r[40] = {0};

	common(r, EXIT_ID, pid);
	memcpy(r + 8, &func, 8);
	memcpy(r + 16, &depth, 4);
	memcpy(r + 24, &calltime, 8);
	memcpy(r + 32, &rettime, 8);
	if (tb_page_add(&p->w, rettime, r, sizeof(r)) < 0)
		abort();
}

static void print_rec(struct page *p, uint64_t ts, int32_t pid, const char *text)
{
	uint8_t r[64] = {0};

	common(r, PRINT_ID, pid);
	strcpy((char *)r + 16, text);
	if (tb_page_add(&p->w, ts, r, (uint32_t)(16 + strlen(text) + 1)) < 0)
		abort();
}

enum {
	DO_WORK = 0x1000,
	HELPER = 0x1100,
	SLOW = 0x1200,
	OTHER_FN = 0x1300,
	LOST_FN = 0x1400,
	LEAF_FN = 0x1500,
};
#define K(a) (0xffffffff81000000ull + (a))

static const char kallsyms[] = "ffffffff81001000 T do_work\n"
			       "ffffffff81001100 T helper\n"
			       "ffffffff81001200 T slow\n"
			       "ffffffff81001300 T other_fn\n"
			       "ffffffff81001400 T lost_fn\n"
			       "ffffffff81001500 T leaf_fn\n"
			       "ffffffff81001600 T zz_end\n";

static void build_capture(void)
{
	struct page cpu0, cpu1;
	char path[512];

	snprintf(path, sizeof(path), "%s/formats", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/formats/ftrace", dir);
	mkdir(path, 0755);
	copy_file("tests/data/kernel/header_page", "header_page");
	copy_file("tests/data/kernel/header_event", "header_event");
	copy_file("tests/data/funcgraph/funcgraph_entry.format", "formats/ftrace/funcgraph_entry.format");
	copy_file("tests/data/funcgraph/funcgraph_exit.format", "formats/ftrace/funcgraph_exit.format");
	copy_file("tests/data/kernel/formats/ftrace/print.format", "formats/ftrace/print.format");
	put_file("kallsyms", kallsyms, sizeof(kallsyms) - 1);
	put_file("saved_cmdlines", "100 worker\n200 other\n300 third\n", 31);
	put_file("meta.txt", "ncpus: 2\ntrace_clock: [local] global\n", 37);
	put_file("current_tracer", "function_graph\n", 15);

	tb_page_writer_init(&cpu0.w, cpu0.mem, sizeof(cpu0.mem), 1000);
	entry(&cpu0, 1000, 100, K(DO_WORK), 0);
	entry(&cpu0, 1100, 100, K(HELPER), 1);
	exit_rec(&cpu0, 100, K(HELPER), 1, 1100, 1223);        /* 123 ns: a leaf */
	entry(&cpu0, 1300, 100, K(SLOW), 1);
	print_rec(&cpu0, 1400, 100, "hello\n");                /* a comment inside slow */
	exit_rec(&cpu0, 100, K(SLOW), 1, 1300, 1300 + 12345);  /* + */
	exit_rec(&cpu0, 100, K(DO_WORK), 0, 1000, 1000 + 1234567); /* # */
	entry(&cpu0, 2000000, 200, K(OTHER_FN), 0);            /* another task: the banner */
	exit_rec(&cpu0, 200, K(LOST_FN), 0, 2000001, 2000001 + 123456789); /* entry not seen, @ */
	tb_page_finish(&cpu0.w, false, 0);
	put_file("cpu0.raw", cpu0.mem, sizeof(cpu0.mem));

	tb_page_writer_init(&cpu1.w, cpu1.mem, sizeof(cpu1.mem), 5000000000ull);
	entry(&cpu1, 5000000000ull, 300, K(LEAF_FN), 0);
	exit_rec(&cpu1, 300, K(LEAF_FN), 0, 5000000000ull, 5000000000ull + 12345678901ull); /* $ */
	entry(&cpu1, 20000000000ull, 300, K(LEAF_FN), 1000000);  /* a depth no stack has */
	tb_page_finish(&cpu1.w, false, 5);
	put_file("cpu1.raw", cpu1.mem, sizeof(cpu1.mem));
}

/* -------------------------------------------------------------- tests */

static const char expected[] = "# tracer: function_graph\n"
			       "#\n"
			       "# CPU  DURATION                  FUNCTION CALLS\n"
			       "# |     |   |                     |   |   |   |\n"
			       " 0)               |  do_work() {\n"
			       " 0)   0.123 us    |    helper();\n"
			       " 0)               |    slow() {\n"
			       " 0)               |      /* hello */\n"
			       " 0) + 12.345 us   |    }\n"
			       " 0) # 1234.567 us |  }\n"
			       " ------------------------------------------\n"
			       " 0)   worker-100   =>   other-200   \n"
			       " ------------------------------------------\n"
			       "\n"
			       " 0)               |  other_fn() {\n"
			       " 0) @ 123456.7 us |  } /* lost_fn */\n"
			       "CPU:1 [LOST 5 EVENTS]\n"
			       " 1) $ 12345678 us |  leaf_fn();\n";

static char *graph(const struct tb_graph_opts *o, struct tb_graph_totals *t, int *rc, unsigned long *problems)
{
	struct tb_capture_opts copts = {.diag = NULL};
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	FILE *devnull = fopen("/dev/null", "w");

	copts.diag = tb_problem_print;
	copts.diag_ctx = devnull;
	if (tb_capture_open(dir, &copts, &c) < 0) {
		fclose(devnull);
		return NULL;
	}
	f = open_memstream(&text, &len);
	*rc = tb_funcgraph_write(c, NULL, f, o, t);
	*problems = tb_capture_problems(c);
	fclose(f);
	tb_capture_close(c);
	fclose(devnull);
	return text;
}

static const char *line_of(const char *text, const char *prefix, const char *contains)
{
	static char line[256];

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t n = strcspn(p, "\n");
		if (!strncmp(p, prefix, strlen(prefix)) && n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = 0;
			if (strstr(line, contains))
				return line;
		}
	}
	return "";
}

int main(void)
{
	struct tb_graph_totals t;
	struct tb_graph_opts o = {0};
	unsigned long problems;
	char *text;
	int rc;

	if (!mkdtemp(dir))
		skip_all("cannot create a scratch directory");
	atexit(cleanup);
	build_capture();

	text = graph(NULL, &t, &rc, &problems);
	is_str(text, expected, "the kernel's function_graph text: leaves, nesting, comment, banner, "
			       "unmatched close, overhead marks, loss");
	is_int(rc, 1, "the damaged record makes the result 1");
	is_int(t.bad_records, 1, "one record left out: the entry with depth 1000000");
	is_int(problems, 1, "and reported once");
	ok(t.entries == 5 && t.exits == 5 && t.leaves == 2 && t.comments == 1 && t.lost_events == 5,
	   "totals: 5 entries, 5 exits, 2 leaves, 1 comment, 5 lost");
	free(text);

	o.tail = o.overrun = o.proc = o.abstime = true;
	text = graph(&o, &t, &rc, &problems);
	is_str(line_of(text, "#", "TIME"),
	       "#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS",
	       "funcgraph-abstime and -proc add their header columns");
	is_str(line_of(text, "    0.000001", "do_work"),
	       "    0.000001 |   0)   worker-100   |               |  do_work() {",
	       "an entry with the absolute time and the task");
	is_str(line_of(text, "    0.000013", "}"),
	       "    0.000013 |   0)   worker-100   | + 12.345 us   |    } /* slow */",
	       "funcgraph-tail names every close");
	ok(strstr(text, "} /* do_work */\n (Overruns: 0)\n") != NULL, "funcgraph-overrun adds its line");
	free(text);

	memset(&o, 0, sizeof(o));
	o.no_cpu = o.no_duration = o.no_header = true;
	text = graph(&o, &t, &rc, &problems);
	is_str(line_of(text, "", "helper"), "  helper();", "nofuncgraph-cpu and -duration: the calls alone");
	free(text);
	return done_testing();
}
