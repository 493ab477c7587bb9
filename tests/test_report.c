/*
 * `tracebuf report` against the kernel's own text (tests/data/kernel).
 *
 * For every capture the event lines of our report must equal the event
 * lines of the kernel's trace.txt byte for byte.  The only lines allowed to
 * differ are listed in mismatch_rules below with their reason, and even
 * those must be equal once the named fields are masked.  The header must
 * equal the kernel's, LOST lines must carry the overrun of the stats files
 * and stand before the CPU's first event, and the format parser must read
 * every real format file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/capdir.h"
#include "lib/lines.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

#define DATA "tests/data/kernel/"
#define HEADER_LINES 12

/* ------------------------------------------------------------ helpers */

/* The event lines of a text, in order. */
static size_t event_lines(const struct lines *l, const char ***out)
{
	size_t n = 0;

	*out = malloc((l->n + 1) * sizeof(**out));
	for (size_t i = 0; i < l->n; i++)
		if (is_event_line(l->v[i]))
			(*out)[n++] = l->v[i];
	return n;
}

static struct diags {
	size_t n;
	char msg[64][300];
} diags;

static void collect(void *ctx, const struct tb_problem *d)
{
	struct diags *ds = ctx;

	if (ds->n < 64)
		snprintf(ds->msg[ds->n++], sizeof(ds->msg[0]), "%s: byte %llu: %s", d->file,
			 (unsigned long long)d->offset, d->reason);
}

/*
 * The report of dir through the library, laid out by trace_options words
 * (NULL: the saved ones); problems go to diags.
 */
static int library_report(const char *dir, const char *prefix, const char *options, struct lines *out,
			  struct tb_report_totals *t)
{
	struct tb_capture_opts o = {.prefix = prefix, .diag = collect, .diag_ctx = &diags};
	struct tb_report_opts ro = {.options = options};
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc = tb_capture_open(dir, &o, &c);

	diags.n = 0;
	if (rc == 0) {
		rc = tb_report_write(c, f, &ro, t);
		tb_capture_close(c);
	}
	fclose(f);
	split_lines(text, out);
	for (size_t i = 0; i < diags.n; i++)
		diag("problem: %s", diags.msg[i]);
	return rc;
}

static uint64_t stat_value(const char *path, const char *key)
{
	char *text = tap_slurp(path, NULL), *p;
	uint64_t v = 0;

	if (text && (p = strstr(text, key)))
		v = strtoull(p + strlen(key), NULL, 10);
	free(text);
	return v;
}

/* ------------------------------------------------ lines that cannot match */

/*
 * Every line allowed to differ from the kernel's, by event, with the
 * fields whose values differ and why.  Nothing else may differ.
 */
static const struct mismatch_rule {
	const char *event;
	const char *fields[3];
	const char *reason;
} mismatch_rules[] = {
	{"hrtimer_start", {"hrtimer", "function", "mode"},
	 "hrtimer=%p is hashed by the kernel (trace_options hash-ptr); function=%ps needs "
	 "kernel symbols the capture does not have; mode= is __print_symbolic over "
	 "HRTIMER_MODE_* enum names the format file never resolved to numbers"},
	{"hrtimer_expire_entry", {"hrtimer", "function"},
	 "hrtimer=%p hashed (hash-ptr); function=%ps needs kernel symbols"},
	{"hrtimer_expire_exit", {"hrtimer"}, "hrtimer=%p hashed (hash-ptr)"},
	{"hrtimer_cancel", {"hrtimer"}, "hrtimer=%p hashed (hash-ptr)"},
	{"hrtimer_init", {"hrtimer"}, "hrtimer=%p hashed (hash-ptr)"},
	{"timer_start", {"timer", "function"},
	 "timer=%p hashed (hash-ptr); function=%ps needs kernel symbols"},
	{"timer_init", {"timer"}, "timer=%p hashed (hash-ptr)"},
	{"timer_cancel", {"timer"}, "timer=%p hashed (hash-ptr)"},
	{"timer_expire_entry", {"timer", "function"},
	 "timer=%p hashed (hash-ptr); function=%ps needs kernel symbols"},
	{"timer_expire_exit", {"timer"}, "timer=%p hashed (hash-ptr)"},
};
#define N_RULES (sizeof(mismatch_rules) / sizeof(mismatch_rules[0]))

/* The event name of a `trace` line: the word after "TIMESTAMP: ". */
static void event_name(const char *line, char *out, size_t size)
{
	const char *p = strstr(line, "] ");
	size_t n;

	out[0] = '\0';
	if (!p || !(p = strstr(p, ": ")))
		return;
	p += 2;
	n = strcspn(p, ":");
	if (n < size) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

static const struct mismatch_rule *rule_for(const char *line)
{
	char name[64];

	event_name(line, name, sizeof(name));
	for (size_t i = 0; i < N_RULES; i++)
		if (!strcmp(mismatch_rules[i].event, name))
			return &mismatch_rules[i];
	return NULL;
}

/* line with the values of the rule's fields replaced by '*'. */
static void mask(const char *line, const struct mismatch_rule *r, char *out, size_t size)
{
	snprintf(out, size, "%s", line);
	for (int f = 0; f < 3 && r->fields[f]; f++) {
		char key[64], *p, *end;
		snprintf(key, sizeof(key), " %s=", r->fields[f]);
		if (!(p = strstr(out, key)))
			continue;
		p += strlen(key);
		end = p + strcspn(p, " ");
		memmove(p + 1, end, strlen(end) + 1);
		*p = '*';
	}
}

/* ---------------------------------------------------------- comparisons */

struct match_counts {
	size_t same, excused, wrong, rule_lines;
	size_t by_rule[N_RULES];
};

/* Compare ours[i] with theirs[i + skip] for every line of ours. */
static struct match_counts compare_events(const char **ours, size_t n_ours, const char **theirs,
					  size_t n_theirs, size_t skip)
{
	struct match_counts m = {0};
	char a[8192], b[8192];

	for (size_t i = skip; i < n_theirs; i++)
		m.rule_lines += rule_for(theirs[i]) != NULL;
	for (size_t i = 0; i < n_ours && i + skip < n_theirs; i++) {
		const char *want = theirs[i + skip];
		const struct mismatch_rule *r;
		if (!strcmp(ours[i], want)) {
			m.same++;
			continue;
		}
		r = rule_for(want);
		if (r) {
			mask(ours[i], r, a, sizeof(a));
			mask(want, r, b, sizeof(b));
		}
		if (r && !strcmp(a, b)) {
			m.excused++;
			m.by_rule[r - mismatch_rules]++;
			diag("event line %zu differs only in its masked %s fields", i + 1, r->event);
		} else if (m.wrong++ < 10) {
			diag("event line %zu:\n#   ours:   %s\n#   kernel: %s", i + 1, ours[i], want);
		}
	}
	for (size_t r = 0; r < N_RULES; r++)
		if (m.by_rule[r])
			diag("%zu %s lines differ: %s", m.by_rule[r], mismatch_rules[r].event,
			     mismatch_rules[r].reason);
	return m;
}

/* The line of a LOST message for cpu, -1 if none; *count gets its number. */
static long lost_line(const struct lines *l, int cpu, long long *count)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "CPU:%d [LOST ", cpu);
	for (size_t i = 0; i < l->n; i++)
		if (!strncmp(l->v[i], prefix, strlen(prefix))) {
			*count = !strcmp(l->v[i] + strlen(prefix), "EVENTS]")
					 ? -1
					 : strtoll(l->v[i] + strlen(prefix), NULL, 10);
			return (long)i;
		}
	return -1;
}

static long first_event_of_cpu(const struct lines *l, int cpu)
{
	char tag[16];

	snprintf(tag, sizeof(tag), " [%03d] ", cpu);
	for (size_t i = 0; i < l->n; i++)
		if (is_event_line(l->v[i]) && strstr(l->v[i], tag))
			return (long)i;
	return -1;
}

static size_t count_prefix(const struct lines *l, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += !strncmp(l->v[i], prefix, strlen(prefix));
	return n;
}

/* ------------------------------------------------------------ captures */

static void check_capture(const char *dir, int cpus)
{
	char path[256], *kernel_text;
	struct lines ours, theirs;
	struct tb_report_totals t;
	const char **ov, **tv;
	size_t no, nt;
	uint64_t overrun_sum = 0;
	size_t cpus_losing = 0;
	struct match_counts m;
	int rc;

	snprintf(path, sizeof(path), DATA "%s", dir);
	rc = library_report(path, NULL, NULL, &ours, &t);
	is_int(rc, 0, "%s: report written, no problem reported", dir);
	snprintf(path, sizeof(path), DATA "%s/trace.txt", dir);
	kernel_text = tap_slurp(path, NULL);
	split_lines(kernel_text, &theirs);

	no = event_lines(&ours, &ov);
	nt = event_lines(&theirs, &tv);
	is_int(no, nt, "%s: as many event lines as the kernel's trace.txt", dir);
	is_int(t.events, no, "%s: totals count the event lines", dir);
	m = compare_events(ov, no, tv, nt, 0);
	is_int(m.wrong, 0, "%s: %zu of %zu event lines equal byte for byte, the rest excused", dir,
	       m.same, nt);
	is_int(m.excused, m.rule_lines, "%s: only the %zu lines of the listed events differ", dir,
	       m.rule_lines);
	if (m.excused) {
		snprintf(path, sizeof(path), DATA "%s/trace_options", dir);
		char *opts = tap_slurp(path, NULL);
		ok(opts && strstr(opts, "\nhash-ptr\n"), "%s: hash-ptr is on, as the excuse says", dir);
		free(opts);
	}

	ok(ours.n >= HEADER_LINES && theirs.n >= HEADER_LINES, "%s: both have a header", dir);
	for (int i = 0; i < HEADER_LINES && i < (int)ours.n && i < (int)theirs.n; i++)
		is_str(ours.v[i], theirs.v[i], "%s: header line %d equals the kernel's", dir, i + 1);

	for (int cpu = 0; cpu < cpus; cpu++) {
		long long count = 0;
		long at;
		uint64_t overrun;
		snprintf(path, sizeof(path), DATA "%s/cpu%d.stats", dir, cpu);
		overrun = stat_value(path, "overrun: ");
		overrun_sum += overrun;
		cpus_losing += overrun > 0;
		at = lost_line(&ours, cpu, &count);
		if (overrun == 0) {
			is_int(at, -1, "%s cpu%d: nothing lost, no LOST line", dir, cpu);
			continue;
		}
		is_int(count, overrun, "%s cpu%d: LOST count equals the stats overrun", dir, cpu);
		ok(at >= 0 && at < first_event_of_cpu(&ours, cpu),
		   "%s cpu%d: the LOST line comes before the CPU's first event", dir, cpu);
	}
	is_int(t.lost_events, overrun_sum, "%s: totals count the lost events", dir);
	is_int(count_prefix(&ours, "CPU:"), cpus_losing, "%s: one LOST line per CPU that lost "
	       "events (each lost them before its first sub-buffer)", dir);
	free(ov);
	free(tv);
	free_lines(&ours);
	free_lines(&theirs);
}

/*
 * cap-e: one CPU, files named eN.cpu0.*, and the kernel's text is the
 * per-CPU trace file.  skip = events consumed before the raw read.
 */
static void check_cap_e(const char *which, size_t skip, const char *lost)
{
	char prefix[16], path[256];
	struct lines ours, theirs;
	struct tb_report_totals t;
	const char **ov, **tv;
	size_t no, nt;
	struct match_counts m;
	long long count = 0;
	long at;

	snprintf(prefix, sizeof(prefix), "%s.", which);
	is_int(library_report(DATA "cap-e-partial-and-padding", prefix, NULL, &ours, &t), 0,
	       "cap-e %s: report written, no problem reported", which);
	snprintf(path, sizeof(path), DATA "cap-e-partial-and-padding/%s.cpu0.trace.txt", which);
	split_lines(tap_slurp(path, NULL), &theirs);
	no = event_lines(&ours, &ov);
	nt = event_lines(&theirs, &tv);
	is_int(no + skip, nt, "cap-e %s: event lines + %zu consumed before the raw read = the "
	       "kernel's", which, skip);
	m = compare_events(ov, no, tv, nt, skip);
	is_int(m.same, no, "cap-e %s: all %zu event lines equal byte for byte", which, no);

	/* Header: the same but #P, which a capture without meta.txt cannot know. */
	for (int i = 0; i < HEADER_LINES && i < (int)ours.n && i < (int)theirs.n; i++) {
		char *p = strstr(ours.v[i], "   #P:"), *q = strstr(theirs.v[i], "   #P:");
		if (p && q) {
			ok(p - ours.v[i] == q - theirs.v[i] && !strncmp(ours.v[i], theirs.v[i],
									(size_t)(p - ours.v[i])),
			   "cap-e %s: entries-in-buffer/entries-written equal the kernel's", which);
			is_str(p, "   #P:1", "cap-e %s: #P counts the one CPU present (kernel: %s)",
			       which, q + 3);
		} else {
			is_str(ours.v[i], theirs.v[i], "cap-e %s: header line %d", which, i + 1);
		}
	}
	at = lost_line(&ours, 0, &count);
	if (lost) {
		is_str(at >= 0 ? ours.v[at] : "(none)", lost, "cap-e %s: %s", which, lost);
		ok(at >= 0 && at < first_event_of_cpu(&ours, 0),
		   "cap-e %s: the LOST line comes before the first event", which);
	} else {
		is_int(at, -1, "cap-e %s: no LOST line", which);
	}
	free(ov);
	free(tv);
	free_lines(&ours);
	free_lines(&theirs);
}

/*
 * Without stats files the header comes from the data alone: E = events
 * decoded, W = E + the lost counts the sub-buffers stored.  For cap-b that
 * is exactly the kernel's header, since its overrun is what the pages say.
 */
/*
 * annotate, on by default: a buffer that overran marks where each CPU's
 * records start ("##### CPU N buffer started ####", but not at the text's
 * first two records), at the kernel's places: before the event the kernel's
 * mark stands before (its context columns; the text after may hold hashed
 * pointers).  noannotate: no mark.
 */
static void check_annotate(const char *cap)
{
	char dir[256], path[300];
	struct lines ours, kernel;
	size_t marks = 0, placed = 0;

	snprintf(dir, sizeof(dir), DATA "%s", cap);
	snprintf(path, sizeof(path), "%s/trace.txt", dir);
	split_lines(tap_slurp(path, NULL), &kernel);
	ok(library_report(dir, NULL, NULL, &ours, NULL) == 0, "%s: report", cap);
	for (size_t i = 0; i + 1 < kernel.n; i++) {
		if (strncmp(kernel.v[i], "##### CPU ", 10))
			continue;
		marks++;
		for (size_t j = 0; j + 1 < ours.n; j++)
			if (!strcmp(ours.v[j], kernel.v[i]) && !strncmp(ours.v[j + 1], kernel.v[i + 1], 45))
				placed++;
	}
	ok(marks > 0 && placed == marks && count_prefix(&ours, "##### CPU ") == marks,
	   "%s: annotate: the kernel's %zu buffer-started marks, each before the same event (%zu placed)", cap,
	   marks, placed);
	free_lines(&ours);
	ok(library_report(dir, NULL, "noannotate", &ours, NULL) == 0 && count_prefix(&ours, "##### ") == 0,
	   "%s: noannotate: no mark", cap);
	free_lines(&ours);
	free_lines(&kernel);
}

static void check_header_without_stats(void)
{
	static const char *const links[][2] = {{"header_page", "header_page"}, {"header_event", "header_event"},
					       {"formats", "formats"}, {"cpu0.raw", "cpu0.raw"},
					       {"cpu1.raw", "cpu1.raw"}, {"saved_cmdlines", "saved_cmdlines"},
					       {"meta.txt", "meta.txt"}};
	const size_t n = sizeof(links) / sizeof(links[0]);
	char tmp[] = "/tmp/tb-test-report-XXXXXX";
	struct lines ours, theirs;
	struct tb_report_totals t;

	if (capdir_make(tmp, DATA "cap-b-overrun", links, n) < 0) {
		ok(0, "temporary directory");
		return;
	}
	is_int(library_report(tmp, NULL, NULL, &ours, &t), 0, "cap-b without stats: report written");
	split_lines(tap_slurp(DATA "cap-b-overrun/trace.txt", NULL), &theirs);
	ok(ours.n > 3 && theirs.n > 3, "cap-b without stats: both have a header");
	if (ours.n > 3 && theirs.n > 3)
		is_str(ours.v[2], theirs.v[2], "cap-b without stats: E/W from the data equal the kernel's");
	capdir_remove(tmp, links, n);
	free_lines(&ours);
	free_lines(&theirs);
}

/* ------------------------------------------------------------- the CLI */

/* Raw files whose prefix starts with a dot are found like any other (--prefix .x-). */
static void check_dot_prefix(void)
{
	static const char *const links[][2] = {{"header_page", "header_page"}, {"header_event", "header_event"},
					       {"formats", "formats"}, {"cpu0.raw", ".x-cpu0.raw"},
					       {"cpu1.raw", ".x-cpu1.raw"}, {"saved_cmdlines", "saved_cmdlines"},
					       {"meta.txt", "meta.txt"}};
	const size_t n = sizeof(links) / sizeof(links[0]);
	char tmp[] = "/tmp/tb-test-report-XXXXXX";
	struct lines dotted, plain;
	struct tb_report_totals t;
	const char **dv, **pv;

	if (capdir_make(tmp, DATA "cap-b-overrun", links, n) < 0) {
		ok(0, "temporary directory");
		return;
	}
	library_report(tmp, ".x-", NULL, &dotted, &t);
	library_report(DATA "cap-b-overrun", NULL, NULL, &plain, &t);
	size_t nd = event_lines(&dotted, &dv), np = event_lines(&plain, &pv);
	ok(nd > 0 && nd == np, "a '.x-' prefix: the same %zu event lines as the plain names (%zu)", np, nd);
	capdir_remove(tmp, links, n);
	free(dv);
	free(pv);
	free_lines(&dotted);
	free_lines(&plain);
}

static void check_cli(void)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char cmd[512], *out, *lib = NULL, *body;
	struct lines ours;
	struct tb_report_totals t;
	size_t len = 0;
	int status;
	FILE *m;

	library_report(DATA "cap-b-overrun", NULL, NULL, &ours, &t);
	m = open_memstream(&lib, &len);
	for (size_t i = 0; i < ours.n; i++)
		fprintf(m, "%s\n", ours.v[i]);
	fclose(m);
	body = lib;
	for (int i = 0; i < HEADER_LINES && body; i++)
		body = strchr(body, '\n') ? strchr(body, '\n') + 1 : NULL;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report " DATA "cap-b-overrun", b);
	out = tap_command_output(cmd, &status);
	ok(out && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "CLI: exit status 0 on a clean capture");
	ok(out && !strcmp(out, lib), "CLI: prints what the library prints");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --no-header " DATA "cap-b-overrun", b);
	out = tap_command_output(cmd, &status);
	ok(out && body && !strcmp(out, body), "CLI: --no-header prints all but the header");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report 2>/dev/null", b);
	out = tap_command_output(cmd, &status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 2, "CLI: no DIR is a usage error (2)");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report /nonexistent-tb-dir 2>&1", b);
	out = tap_command_output(cmd, &status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 3 && out &&
		   strstr(out, "/nonexistent-tb-dir: byte 0: no such file"),
	   "CLI: a path that does not exist cannot be opened (3: the input), and is said to be missing");
	free(out);
	free(lib);
	free_lines(&ours);
}

/* ------------------------------------------------------------- formats */

static size_t count_substr(const char *text, const char *s)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

static void check_format_file(const char *path)
{
	size_t len;
	char *text = tap_slurp(path, &len);
	struct tb_format f;
	struct tb_problem err = {0};
	unsigned id = 0;
	char *idline = text ? strstr(text, "\nID: ") : NULL;
	int rc = text ? tb_format_parse(text, len, &f, &err) : -1;

	if (idline)
		sscanf(idline, "\nID: %u", &id);
	if (!ok(rc == 0 && f.id == id && f.nfields == count_substr(text, "\tfield:") &&
			!strncmp(text + f.print_fmt_offset, "print fmt: ", 11),
		"format %s: ID %u, %zu fields, print fmt found", path + strlen(DATA), id,
		rc == 0 ? f.nfields : 0))
		diag("byte %llu: %s", (unsigned long long)err.offset, err.reason);
	if (rc == 0)
		tb_format_free(&f);
	free(text);
}

static void check_formats(void)
{
	static const char *files[] = {
		"formats/ftrace/print.format",       "formats/ftrace/bprint.format",
		"formats/ftrace/bputs.format",       "formats/ftrace/raw_data.format",
		"formats/ftrace/function.format",    "formats/sched/sched_switch.format",
		"formats/sched/sched_wakeup.format", "formats/sched/sched_process_exec.format",
		"formats/sched/sched_process_fork.format", "formats/irq/irq_handler_entry.format",
		"formats/timer/hrtimer_start.format", "formats/kmem/kmalloc.format",
		"formats/raw_syscalls/sys_enter.format", "formats/signal/signal_generate.format",
		"formats/block/block_rq_issue.format",
	};
	char path[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), DATA "%s", files[i]);
		check_format_file(path);
	}
	/* __data_loc and its string-ness, as the irq_handler_entry file declares. */
	{
		size_t len;
		char *text = tap_slurp(DATA "formats/irq/irq_handler_entry.format", &len);
		struct tb_format f;
		const struct tb_schema_field *name;
		tb_format_parse(text, len, &f, NULL);
		name = tb_format_field(&f, "name");
		ok(name && name->kind == TB_SCHEMA_FIELD_DATA_LOC && name->is_string &&
			   strstr(text, "__data_loc char[] name;\toffset:12;\tsize:4;"),
		   "irq_handler_entry: name is a __data_loc string at 12, size 4");
		tb_format_free(&f);
		free(text);
	}
}

static void check_headers(const char *dir)
{
	char path[256], *text;
	size_t len;
	struct tb_header_page hp;
	struct tb_problem err = {0};
	unsigned off = 0, size = 0;

	snprintf(path, sizeof(path), DATA "%s/header_page", dir);
	text = tap_slurp(path, &len);
	if (text && strstr(text, "char data;"))
		sscanf(strstr(text, "char data;"), "char data;\toffset:%u;\tsize:%u;", &off, &size);
	ok(text && tb_header_page_parse(text, len, &hp, &err) == 0 && hp.data_offset == off &&
		   hp.data_size == size && hp.commit_size == 8,
	   "%s: header_page gives data at %u, %u bytes (sub-buffer %u)", dir, off, size, off + size);
	free(text);
	snprintf(path, sizeof(path), DATA "%s/header_event", dir);
	text = tap_slurp(path, &len);
	ok(text && tb_header_event_parse(text, len, &err) == 0, "%s: header_event accepted", dir);
	free(text);
}

int main(void)
{
	static const struct {
		const char *dir;
		int cpus;
	} caps[] = {
		{"cap-a-small-noloss", 2},
		{"cap-b-overrun", 2},
		{"cap-c-subbuf8k", 2},
		{"cap-d-abs-timestamp", 2},
	};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		check_headers(caps[i].dir);
		check_capture(caps[i].dir, caps[i].cpus);
	}
	check_cap_e("e1", 1, NULL);       /* one event consumed by trace_pipe first */
	check_cap_e("e2", 226, NULL);     /* all 226 consumed by trace_pipe first */
	check_cap_e("e3", 0, "CPU:0 [LOST 816 EVENTS]"); /* no room for the count: the stats give it */
	check_annotate("cap-b-overrun");
	check_annotate("cap-d-abs-timestamp");
	check_header_without_stats();
	check_dot_prefix();
	check_formats();
	check_cli();
	return done_testing();
}
