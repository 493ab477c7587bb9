/*
 * What a capture directory must say, and which of its problems count.
 *
 * Clock: the time stamps mean nothing without the trace clock, so a capture
 * that names none (no trace_clock line in meta.txt, no trace_clock file) or
 * names one whose unit tracebuf does not know cannot be opened, with a
 * message naming the file; the caller may name the clock instead.  A
 * counting clock prints raw values, as the kernel does.
 *
 * Formats: a capture holds the format files of whole systems; a problem in
 * one whose event no record uses is a warning (said, not counted: exit 0),
 * while one the data needs is a problem (exit 1).
 *
 * Each case is a copy of tests/data/kernel/cap-a-small-noloss made of
 * symlinks, with meta.txt, trace_clock or one format file varied.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/lines.h"
#include "lib/problems.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

#define CAP_A "tests/data/kernel/cap-a-small-noloss"

/* ------------------------------------------------------------ helpers */

static void link_to(const char *from, const char *to)
{
	char real[PATH_MAX];

	if (!realpath(from, real) || symlink(real, to) < 0)
		diag("symlink %s -> %s: %s", to, from, strerror(errno));
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * A copy of cap-a in dir (a mkdtemp template): every file a symlink, the
 * sched formats one symlink each (so one can be replaced), no meta.txt and
 * no trace_clock.
 */
static bool make_copy(char *dir)
{
	static const char *const files[] = {"header_page",    "header_event",	"cpu0.raw",
					    "cpu1.raw",	      "cpu0.stats",	"cpu1.stats",
					    "saved_cmdlines", "formats/ftrace", "formats/irq",
					    "formats/signal", "formats/timer",	"formats/raw_syscalls"};
	char from[PATH_MAX], to[PATH_MAX + 300];
	FILE *ls;

	if (!mkdtemp(dir))
		return false;
	snprintf(to, sizeof(to), "%s/formats", dir);
	mkdir(to, 0755);
	snprintf(to, sizeof(to), "%s/formats/sched", dir);
	mkdir(to, 0755);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(from, sizeof(from), CAP_A "/%s", files[i]);
		snprintf(to, sizeof(to), "%s/%s", dir, files[i]);
		link_to(from, to);
	}
	ls = popen("ls " CAP_A "/formats/sched", "r");
	while (ls && fgets(from, sizeof(from), ls)) {
		char src[PATH_MAX + 64];
		from[strcspn(from, "\n")] = '\0';
		snprintf(src, sizeof(src), CAP_A "/formats/sched/%s", from);
		snprintf(to, sizeof(to), "%s/formats/sched/%s", dir, from);
		link_to(src, to);
	}
	if (ls)
		pclose(ls);
	return true;
}

static void remove_copy(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

/* dir/name := text */
static void put_in(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 300];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	put(path, text);
}

/* Open dir (clock: opts.clock) and report it; the open's or the report's rc. */
static int report(const char *dir, const char *clock, struct lines *out, struct tb_capture **keep)
{
	struct tb_capture_opts o = {.diag = problems_collect, .diag_ctx = &problems, .clock = clock};
	struct tb_capture *c = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	problems.n = 0;
	rc = tb_capture_open(dir, &o, &c);
	if (rc == 0)
		rc = tb_report_write(c, f, NULL, NULL);
	fclose(f);
	split_lines(text, out);
	if (keep)
		*keep = c;
	else
		tb_capture_close(c);
	return rc;
}

/* The report of the real cap-a: what every case that opens must print. */
static struct lines reference;

static bool same_as_reference(const struct lines *l)
{
	if (l->n != reference.n)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], reference.v[i]))
			return false;
	return true;
}

/* A copy of text with the first from replaced by to (a copy of text if there is none). */
static char *edited_text(const char *text, const char *from, const char *to)
{
	const char *at = text ? strstr(text, from) : NULL;
	char *out;

	if (!at)
		return text ? strdup(text) : NULL;
	out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

/* The file at path, edited. */
static char *edited(const char *path, const char *from, const char *to)
{
	char *text = tap_slurp(path, NULL), *out = edited_text(text, from, to);

	free(text);
	return out;
}

/* -------------------------------------------------------------- clock */

static void check_no_clock(void)
{
	char dir[] = "/tmp/tb-capdir-XXXXXX";
	struct lines l;
	int rc;

	if (!make_copy(dir))
		return (void)ok(0, "temporary copy");
	rc = report(dir, NULL, &l, NULL);
	is_int(rc, -EINVAL, "no meta.txt, no trace_clock: the capture cannot be opened");
	ok(problems.n == 1 && !strcmp(problems.p[0].file, dir) &&
	       strstr(problems.p[0].reason, "no trace clock") && !problems.p[0].warning,
	   "one problem, naming the directory: no trace clock");
	is_int(l.n, 0, "nothing printed");
	free_lines(&l);

	rc = report(dir, "local", &l, NULL);
	is_int(rc, 0, "the same capture with the clock named by the caller (local) opens cleanly");
	ok(same_as_reference(&l), "and prints what the capture with its meta.txt prints");
	free_lines(&l);

	put_in(dir, "trace_clock", "local global counter [mono] uptime\n");
	rc = report(dir, NULL, &l, NULL);
	is_int(rc, 0, "a trace_clock file alone is enough");
	ok(same_as_reference(&l), "mono counts nanoseconds: the same text");
	free_lines(&l);
	remove_copy(dir);
}

static void check_unknown_clock(void)
{
	static const char meta[] = "kernel: 6.18.44-fc-v782\nncpus: 2\ntrace_clock: local [frob] boot\n";
	char dir[] = "/tmp/tb-capdir-XXXXXX";
	struct lines l;
	int rc;

	if (!make_copy(dir))
		return (void)ok(0, "temporary copy");
	put_in(dir, "meta.txt", meta);
	put_in(dir, "trace_clock", "[local] global\n"); /* meta.txt wins */
	rc = report(dir, NULL, &l, NULL);
	is_int(rc, -EINVAL, "a clock tracebuf does not know: the capture cannot be opened");
	ok(problems.n == 1 && ends_with(problems.p[0].file, "/meta.txt") &&
	       problems.p[0].offset == (unsigned long long)(strstr(meta, "local [frob]") - meta) &&
	       strstr(problems.p[0].reason, "'frob' is not one tracebuf knows"),
	   "one problem, naming meta.txt at the value's offset and the clock");
	free_lines(&l);
	rc = report(dir, "bogus", &l, NULL);
	ok(rc == -EINVAL && problems.n == 1 && strstr(problems.p[0].reason, "'bogus'"),
	   "a clock named by the caller is checked the same way");
	free_lines(&l);
	put_in(dir, "meta.txt", "ncpus: 2\n");
	put_in(dir, "trace_clock", "local [jiffies64]\n");
	rc = report(dir, NULL, &l, NULL);
	ok(rc == -EINVAL && problems.n == 1 && ends_with(problems.p[0].file, "/trace_clock") &&
	       strstr(problems.p[0].reason, "'jiffies64'"),
	   "so is one from a trace_clock file, which is named");
	free_lines(&l);
	remove_copy(dir);
}

/* A counting clock prints each time stamp as the raw value: here ns, so us = (raw + 500) / 1000. */
static void check_counting_clock(void)
{
	char dir[] = "/tmp/tb-capdir-XXXXXX";
	struct tb_capture *c = NULL;
	struct lines l;
	size_t lines = 0, agree = 0;
	int rc;

	if (!make_copy(dir))
		return (void)ok(0, "temporary copy");
	put_in(dir, "meta.txt", "ncpus: 2\ntrace_clock: counter\n");
	rc = report(dir, NULL, &l, &c);
	is_int(rc, 0, "clock counter (a bare name in meta.txt): opens and reports");
	ok(c && !strcmp(tb_capture_clock(c), "counter") && !tb_capture_clock_is_ns(c),
	   "the clock is counter, which does not count nanoseconds");
	tb_capture_close(c);
	keep_event_lines(&l);
	for (size_t i = 0, k = 0; i < l.n && k < reference.n; i++, k++) {
		unsigned long long raw, sec, usec;
		while (k < reference.n && !is_event_line(reference.v[k]))
			k++;
		if (k == reference.n)
			break;
		lines++;
		/* "COMM-PID [CPU] FLAGS %12llu: " against "%5llu.%06llu: " */
		if (sscanf(strchr(l.v[i], ']') + 8, "%llu:", &raw) == 1 &&
		    sscanf(strchr(reference.v[k], ']') + 8, "%llu.%llu:", &sec, &usec) == 2)
			agree += (raw + 500) / 1000 == sec * 1000000 + usec;
	}
	ok(lines > 900 && agree == lines,
	   "every time stamp printed raw (%zu of %zu lines agree with "
	   "the microseconds of the nanosecond print)",
	   agree, lines);
	free_lines(&l);
	remove_copy(dir);
}

/* ------------------------------------------------------------ formats */

/* A format file no record uses, broken: a warning, not a problem. */
static void check_unused_bad_format(void)
{
	char dir[] = "/tmp/tb-capdir-XXXXXX", path[PATH_MAX + 64], *bad, *unused;
	struct lines l;
	int rc;

	if (!make_copy(dir))
		return (void)ok(0, "temporary copy");
	snprintf(path, sizeof(path), "%s/trace_clock", dir);
	put(path, "[local]\n");
	bad = edited(CAP_A "/formats/sched/sched_switch.format", "offset:8;", "offset:x;");
	unused = edited_text(bad, "ID: 372", "ID: 65000");
	snprintf(path, sizeof(path), "%s/formats/zzz", dir);
	mkdir(path, 0755);
	put_in(dir, "formats/zzz/broken.format", unused);
	free(unused);
	rc = report(dir, NULL, &l, NULL);
	is_int(rc, 0, "a broken format of an event (ID 65000) the data never uses: exit status 0");
	ok(problems.n == 1 && problems.p[0].warning && ends_with(problems.p[0].file, "zzz/broken.format") &&
	       strstr(problems.p[0].reason, "no record of this event was printed"),
	   "one warning, naming the file");
	free_lines(&l);

	/* Now sched_switch itself, which the data uses, is the broken one. */
	snprintf(path, sizeof(path), "%s/formats/zzz/broken.format", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/formats/sched/sched_switch.format", dir);
	unlink(path);
	put(path, bad);
	rc = report(dir, NULL, &l, NULL);
	is_int(rc, 1, "the same damage in a format the data uses: exit status 1");
	ok(problems.n == 2 && !problems.p[0].warning &&
	       ends_with(problems.p[0].file, "sched_switch.format") &&
	       strstr(problems.p[1].reason, "has no format"),
	   "its problem is told (and counted) before its first record, which is unknown");
	free_lines(&l);

	/* The same without an ID line: the file cannot say it is sched_switch's. */
	free(bad);
	bad = edited(CAP_A "/formats/sched/sched_switch.format", "ID: ", "XX: ");
	unlink(path);
	put(path, bad);
	rc = report(dir, NULL, &l, NULL);
	is_int(rc, 1, "a format without an ID line, and records of an unknown ID: exit status 1");
	ok(problems.n == 2 && !problems.p[0].warning &&
	       ends_with(problems.p[0].file, "sched_switch.format") &&
	       strstr(problems.p[1].reason, "has no format"),
	   "the file that may have been the unknown event's is told as a problem");
	free_lines(&l);
	free(bad);
	remove_copy(dir);
}

/* ---------------------------------------------------------------- CLI */

static void check_cli(void)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char dir[] = "/tmp/tb-capdir-XXXXXX", cmd[PATH_MAX + 128], *out, *bad, *unused;
	int status;

	if (!make_copy(dir))
		return (void)ok(0, "temporary copy");
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s 2>&1 >/dev/null", b, dir);
	out = tap_command_output(cmd, &status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 3 && out && strstr(out, "no trace clock") &&
	       strstr(out, "--clock local"),
	   "CLI: no clock: exit status 3 (the input cannot be read as it is), and the message says how to name one");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --clock local %s", b, dir);
	out = tap_command_output(cmd, &status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && out && strstr(out, "sched_switch: "),
	   "CLI: --clock local: exit status 0, events printed");
	free(out);

	put_in(dir, "trace_clock", "[local]\n");
	bad = edited(CAP_A "/formats/sched/sched_switch.format", "offset:8;", "offset:x;");
	unused = edited_text(bad, "ID: 372", "ID: 65000");
	snprintf(cmd, sizeof(cmd), "%s/formats/zzz", dir);
	mkdir(cmd, 0755);
	put_in(dir, "formats/zzz/broken.format", unused);
	free(bad);
	free(unused);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report %s 2>&1 >/dev/null", b, dir);
	out = tap_command_output(cmd, &status);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && out && strstr(out, "tracebuf: warning: ") &&
	       strstr(out, "zzz/broken.format"),
	   "CLI: a broken format nothing uses: exit status 0, a warning naming it");
	free(out);
	remove_copy(dir);
}

int main(void)
{
	struct tb_capture_opts o = {.diag = problems_collect, .diag_ctx = &problems};
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (tb_capture_open(CAP_A, &o, &c) == 0) {
		ok(!strcmp(tb_capture_clock(c), "local") && tb_capture_clock_is_ns(c),
		   "cap-a: meta.txt's trace_clock is local, in nanoseconds");
		tb_report_write(c, f, NULL, NULL);
		tb_capture_close(c);
	} else {
		ok(0, "cap-a opens");
	}
	fclose(f);
	split_lines(text, &reference);
	check_no_clock();
	check_unknown_clock();
	check_counting_clock();
	check_unused_bad_format();
	check_cli();
	free_lines(&reference);
	return done_testing();
}
