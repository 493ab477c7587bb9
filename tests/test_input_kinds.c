// SPDX-License-Identifier: MIT
/*
 * test_input_kinds.c - the input opener's table (src/input, tracebuf/input.h)
 * on real inputs: each kind sniffed as itself and opened as a capture with
 * its pages, a trace.dat recognised by its bytes under any name, a shm
 * session named with what reads it, and what is no input refused naming
 * the file and every kind tried - without hanging on a FIFO.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/instance.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/input.h"
#include "tracebuf/page.h"
#include "tracebuf/shm.h"
#include "tracebuf/tracedat.h"

#define CAP_A	  "tests/data/kernel/cap-a-small-noloss"
#define CAP_B	  "tests/data/kernel/cap-b-overrun"
#define DAT_V6	  "tests/data/trace-dat/sched-marker-v6.dat"
#define DAT_V7	  "tests/data/trace-dat/sched-v7-zstd.dat"
#define NOT_INPUT "tests/data/trace-dat/README.md"

static const enum tb_input_kind every_kind[] = {TB_INPUT_CAPTURE_DIR, TB_INPUT_LIVE_INSTANCE,
						TB_INPUT_TRACEDAT, TB_INPUT_SHM_SESSION};
#define N_KINDS (sizeof(every_kind) / sizeof(every_kind[0]))

/* What the opener said: how often, and its last problem. */
struct heard {
	int count;
	char file[512];
	uint64_t offset;
	char reason[TB_PROBLEM_REASON_MAX];
};

static void hear(void *ctx, const struct tb_problem *d)
{
	struct heard *h = ctx;

	h->count++;
	snprintf(h->file, sizeof(h->file), "%s", d->file);
	h->offset = d->offset;
	snprintf(h->reason, sizeof(h->reason), "%s", d->reason);
}

static enum tb_input_kind kind_of(const char *path, struct heard *h, int *rc)
{
	enum tb_input_kind kind = TB_INPUT_LIVE_INSTANCE; /* overwritten: checked below */

	memset(h, 0, sizeof(*h));
	*rc = tb_input_identify(path, hear, h, false, &kind);
	return kind;
}

/* Pages of every CPU of the capture at path, opened through the table; -errno if it does not open. */
static long pages_of(const char *path, struct heard *h, size_t *subbuf)
{
	struct tb_capture_opts o = {.diag = hear, .diag_ctx = h};
	struct tb_capture_page page;
	struct tb_capture *c;
	long pages = 0;
	int rc;

	memset(h, 0, sizeof(*h));
	if ((rc = tb_capture_open(path, &o, &c)) < 0)
		return rc;
	*subbuf = tb_capture_subbuf_size(c);
	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++)
		while ((rc = tb_capture_next_page(c, cpu, &page)) == 1)
			pages++;
	tb_capture_close(c);
	return rc < 0 ? rc : pages;
}

/* Whether the refusal names every kind the table tried. */
static bool names_every_kind(const char *reason)
{
	for (size_t i = 0; i < N_KINDS; i++)
		if (!strstr(reason, tb_input_kind_name(every_kind[i])))
			return false;
	return true;
}

static void test_capture_dir(void)
{
	struct heard h;
	size_t subbuf = 0;
	struct stat st0, st1;
	int rc;
	long pages;

	ok(kind_of(CAP_A, &h, &rc) == TB_INPUT_CAPTURE_DIR && rc == 0 && h.count == 0,
	   "a capture directory is sniffed as one, silently");
	pages = pages_of(CAP_A, &h, &subbuf);
	ok(stat(CAP_A "/cpu0.raw", &st0) == 0 && stat(CAP_A "/cpu1.raw", &st1) == 0 && subbuf &&
	       pages == (long)((st0.st_size + st1.st_size) / (off_t)subbuf),
	   "opened through the table: every sub-buffer of its two raw files (%ld pages)", pages);
}

static bool copy_file(const char *from, const char *to)
{
	size_t len;
	char *bytes = tap_slurp(from, &len);
	FILE *f = bytes ? fopen(to, "w") : NULL;
	bool copied = f && fwrite(bytes, 1, len, f) == len;

	if (f && fclose(f) != 0)
		copied = false;
	free(bytes);
	return copied;
}

/* `tracebuf ARGS 2>&1`: its output (malloc'ed) and exit status in *rc (-1 if it did not exit). */
static char *cli(const char *args, int *rc)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char cmd[2048];
	int status;
	char *out;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf %s 2>&1", b, args);
	out = tap_command_output(cmd, &status);
	*rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return out;
}

/* The CLI's report of path and of the same bytes at renamed: the same text, exit 0 both. */
static void same_report(const char *path, const char *renamed)
{
	char args[1100], *by_name, *by_bytes;
	int rc_name, rc_bytes;

	snprintf(args, sizeof(args), "report %s", path);
	by_name = cli(args, &rc_name);
	snprintf(args, sizeof(args), "report %s", renamed);
	by_bytes = cli(args, &rc_bytes);
	ok(by_name && by_bytes && rc_name == 0 && rc_bytes == 0 && strlen(by_name) > 1000 &&
		   !strcmp(by_name, by_bytes),
	   "the CLI's report prints it as it prints the .dat (%zu bytes)", by_name ? strlen(by_name) : 0);
	free(by_name);
	free(by_bytes);
}

/* `tracebuf ARGS` with stderr dropped: its output (malloc'ed), exit status in *rc. */
static char *cli_stdout(const char *args, int *rc)
{
	char quiet[2100];

	snprintf(quiet, sizeof(quiet), "%s 2>/dev/null", args);
	return cli(quiet, rc);
}

/*
 * `tracebuf COMMAND OPTS SESSION` and the old path's `tracebuf COMMAND
 * DAT_OPTS SNAPSHOT`: the same output and exit status.  Lines starting
 * with one of skip[] (NULL-terminated; NULL: none) are left out of both
 * (what names the input, or the time it was read).
 */
static bool skipped(const char *line, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (!strncmp(line, *skip, strlen(*skip)))
			return true;
	return false;
}

static void same_as_snapshot(const char *command, const char *opts, const char *dat_opts, const char *session,
			     const char *snapshot, const char *const *skip)
{
	char args[2048], *a, *b;
	int rc_a, rc_b;

	snprintf(args, sizeof(args), "%s %s %s", command, opts, session);
	a = cli_stdout(args, &rc_a);
	snprintf(args, sizeof(args), "%s %s %s", command, dat_opts, snapshot);
	b = cli_stdout(args, &rc_b);
	for (char **text = (char *[]){a, b, NULL}; skip && *text; text++) {
		char *keep = *text, *line = *text;
		while (line && *line) {
			char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line + 1) : strlen(line);
			if (!skipped(line, skip)) {
				memmove(keep, line, len);
				keep += len;
			}
			line += len;
		}
		if (keep)
			*keep = '\0';
	}
	ok(a && b && rc_a == 0 && rc_b == 0 && strlen(a) > 20 && !strcmp(a, b),
	   "%s %s of the session: as %s %s of its snapshot (%zu bytes, exit %d and %d)", command, opts, command,
	   dat_opts, a ? strlen(a) : 0, rc_a, rc_b);
	free(a);
	free(b);
}

/* Entries of dir whose names start with prefix. */
static int entries_named(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static void test_tracedat(const char *tmp)
{
	char renamed[512];
	struct heard h;
	size_t subbuf = 0;
	long named, bare;
	int rc;

	ok(kind_of(DAT_V6, &h, &rc) == TB_INPUT_TRACEDAT && rc == 0,
	   "a version 6 trace.dat is sniffed as one");
	ok(kind_of(DAT_V7, &h, &rc) == TB_INPUT_TRACEDAT && rc == 0,
	   "a version 7 (zstd) trace.dat is sniffed as one");
	ok(pages_of(DAT_V7, &h, &subbuf) > 0, "the v7 file opens through the table, with pages");

	snprintf(renamed, sizeof(renamed), "%s/recording", tmp);
	ok(copy_file(DAT_V6, renamed), "the v6 file copied without its extension");
	ok(kind_of(renamed, &h, &rc) == TB_INPUT_TRACEDAT && rc == 0, "is still sniffed as a trace.dat");
	named = pages_of(DAT_V6, &h, &subbuf);
	bare = pages_of(renamed, &h, &subbuf);
	ok(named > 0 && bare == named, "and opens with the same pages as under its name (%ld, %ld)", named,
	   bare);
	same_report(DAT_V6, renamed);
	unlink(renamed);
}

/* Every record of every slot of c: counted, and the slots of buffer name counted apart. */
static long records_of(struct tb_capture *c, const char *name, long *of_name)
{
	struct tb_capture_page page;
	long n = 0;

	*of_name = 0;
	for (int slot = 0; slot < tb_capture_cpu_slots(c); slot++)
		while (tb_capture_next_page(c, slot, &page) == 1) {
			struct tb_page_cursor cur;
			struct tb_record rec;
			long here = 0;
			if (tb_page_cursor_init(&cur, page.data, page.size) == 0)
				while (tb_page_next_data(&cur, &rec) == 1)
					here++;
			n += here;
			if (!strcmp(tb_capture_slot_buffer(c, slot), name))
				*of_name += here;
		}
	return n;
}

/* One buffer of path alone (name), its records; -1 when it does not open. */
static long buffer_records(const char *path, const char *name, struct heard *h)
{
	struct tb_capture_opts o = {.diag = hear, .diag_ctx = h, .buffer = name};
	struct tb_capture *c;
	long n, unused;

	if (tb_capture_open(path, &o, &c) < 0)
		return -1;
	n = records_of(c, "", &unused);
	ok(!tb_capture_has_buffers(c), "buffer '%s' alone: one buffer, its slots numbered as its CPUs", name);
	tb_capture_close(c);
	return n;
}

/* A trace.dat of two buffers with data opens as one capture of both; tb_capture_opts.buffer picks one. */
static void test_buffers(const char *tmp)
{
	const struct tb_tracedat_input in[] = {{.dir = CAP_A, .name = ""}, {.dir = CAP_B, .name = "other"}};
	struct tb_capture_opts o = {.diag = hear};
	struct tb_capture *c;
	struct heard h;
	char path[512];
	long all, of_other, top, other;
	int first_other = -1;

	snprintf(path, sizeof(path), "%s/two.dat", tmp);
	o.diag_ctx = &h;
	memset(&h, 0, sizeof(h));
	ok(tb_tracedat_write_captures(in, 2, path, NULL) == 0, "two captures written as two buffers");
	ok(tb_capture_open(path, &o, &c) == 0, "the file opens as one capture");
	all = records_of(c, "other", &of_other);
	for (int slot = 0; slot < tb_capture_cpu_slots(c) && first_other < 0; slot++)
		if (!strcmp(tb_capture_slot_buffer(c, slot), "other"))
			first_other = slot;
	ok(tb_capture_has_buffers(c) && first_other > 0 && tb_capture_slot_cpu(c, first_other) == 0 &&
		   tb_capture_slot_cpu(c, 0) == 0 && !strcmp(tb_capture_slot_buffer(c, 0), ""),
	   "its slots: the top buffer's CPUs, then other's from CPU 0 (slot %d)", first_other);
	tb_capture_close(c);
	top = buffer_records(path, "", &h);
	other = buffer_records(path, "other", &h);
	ok(top > 0 && other > 0 && all == top + other && of_other == other,
	   "every record of both buffers (%ld = %ld + %ld), each buffer's in its own slots", all, top, other);
	memset(&h, 0, sizeof(h));
	o.buffer = "nosuch";
	ok(tb_capture_open(path, &o, &c) == -ENOENT && !c && h.count == 1 && strstr(h.reason, "'nosuch'") &&
		   strstr(h.reason, "\"other\""),
	   "a buffer the file lacks: -ENOENT, the buffers named (%s)", h.reason);
	memset(&h, 0, sizeof(h));
	ok(tb_capture_open(CAP_A, &o, &c) == -ENOENT && !c && h.count == 1,
	   "a capture directory has no buffer but \"\" (%s)", h.reason);
	unlink(path);
}


/*
 * A session with no writer yet: no descriptions beside it.  It opens, with
 * no pages, and a warning (not a problem) naming where the descriptions
 * would be.
 */
static void test_shm_empty_session(const char *tmp)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_capture_opts o = {.diag = hear};
	struct tb_capture *c = NULL;
	struct tb_shm *shm;
	struct heard h;
	char path[512], formats[600];
	size_t subbuf;
	int rc;

	tb_ring_opts_default(&ro);
	ro.size_kb = 16;
	ro.ncpus = 1;
	snprintf(path, sizeof(path), "%s/session", tmp);
	snprintf(formats, sizeof(formats), "%s.formats", path);
	so.path = path;
	if (!ok(tb_shm_open(&so, &shm) == 0, "an empty shm session's region at %s", path))
		return;
	ok(kind_of(path, &h, &rc) == TB_INPUT_SHM_SESSION && rc == 0, "is sniffed as a shm session");
	ok(pages_of(path, &h, &subbuf) == 0 && h.count == 1 && !strcmp(h.file, path) &&
	       strstr(h.reason, "no event descriptions") && strstr(h.reason, formats),
	   "opens with no pages, saying it has no descriptions in %s (%s)", formats, h.reason);
	memset(&h, 0, sizeof(h));
	o.diag_ctx = &h;
	ok(tb_capture_open(path, &o, &c) == 0 && tb_capture_problems(c) == 0 && tb_capture_cpu_slots(c) == 1,
	   "a warning, not a problem; its one CPU is there");
	tb_capture_close(c);
	tb_shm_close(shm);
	unlink(path);
}

/*
 * A session in a memfd, named as record prints it (/proc/PID/fd/N): sniffed
 * through the link, opened with the pages of the events written, its
 * descriptions looked for where a memfd session keeps them ($TMPDIR).
 */
static void test_shm_memfd_session(void)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *shm;
	struct heard h;
	uint64_t payload[2] = {1, 2};
	size_t subbuf;
	long pages;
	int rc, written = 0;

	tb_ring_opts_default(&ro);
	ro.size_kb = 16;
	ro.ncpus = 1;
	rc = tb_shm_open(&so, &shm);
	if (!ok(rc == 0, "a memfd session at %s", rc == 0 ? tb_shm_path(shm) : "(none)"))
		return;
	for (int i = 0; i < 100; i++)
		written += tb_write(tb_shm_ring(shm), payload, sizeof(payload)) == 0;
	ok(kind_of(tb_shm_path(shm), &h, &rc) == TB_INPUT_SHM_SESSION && rc == 0, "is sniffed as a shm session");
	pages = pages_of(tb_shm_path(shm), &h, &subbuf);
	ok(written == 100 && pages > 0 && (size_t)pages * (subbuf - 16) >= 100 * (8 + sizeof(payload)) &&
		   strstr(h.reason, "tracebuf-session."),
	   "opens with the pages of its %d events (%ld), descriptions looked for under $TMPDIR (%s)", written, pages,
	   h.reason);
	tb_shm_close(shm);
}

/*
 * A real session: `tracebuf record --flight-recorder --shm` of
 * examples/recorded (two processes, N ticks each), its ring kept.  The
 * session is sniffed and opened as a capture through the table with the
 * pages and records its snapshot holds, its private copy removed at
 * close; and every command that reads captures prints of the session what
 * it prints of the session's snapshot (the old path: `tracebuf snapshot`
 * into a trace.dat, then the command).
 */
static void test_shm_session(const char *tmp)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char cmd[4096], shm[512], snap[512], json_a[600], json_b[600];
	struct heard h;
	size_t subbuf = 0;
	long pages, snap_pages;
	int rc;

	snprintf(shm, sizeof(shm), "/dev/shm/tb-input-kinds-%d", (int)getpid());
	snprintf(snap, sizeof(snap), "%s/snapshot.dat", tmp);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf record --flight-recorder --shm %s -b 4096 -e 'app:*' -o %s/rec.dat -- "
		 "%s/examples/recorded 500 1 >/dev/null 2>&1 && %s/tracebuf snapshot %s -o %s 2>/dev/null",
		 b, shm, tmp, b, b, shm, snap);
	if (!ok(system(cmd) == 0, "a recorded session kept at %s, and its snapshot", shm))
		goto out;
	ok(kind_of(shm, &h, &rc) == TB_INPUT_SHM_SESSION && rc == 0 && h.count == 0,
	   "is sniffed as a shm session, silently");

	/* The copy goes under $TMPDIR: here, to see it removed. */
	setenv("TMPDIR", tmp, 1);
	pages = pages_of(shm, &h, &subbuf);
	snap_pages = pages_of(snap, &(struct heard){0}, &subbuf);
	ok(pages > 0 && pages == snap_pages && h.count == 0,
	   "opened through the table, silently: the pages of its snapshot (%ld and %ld)", pages, snap_pages);
	ok(entries_named(tmp, "tracebuf-session.") == 0, "its private copy is gone once the capture is closed");
	unsetenv("TMPDIR");

	same_as_snapshot("report", "", "--like-kernel", shm, snap, NULL);
	same_as_snapshot("report", "--like-trace-cmd", "", shm, snap, NULL);
	same_as_snapshot("report", "--count", "--count", shm, snap, NULL);
	same_as_snapshot("hist", "-e app:tick keys=worker:vals=n:sort=worker", "-e app:tick keys=worker:vals=n:sort=worker",
			 shm, snap, NULL);
	same_as_snapshot("list", "-c", "-c", shm, snap, NULL);
	/* stats: each CPU's counters; the heading names the input, "now" and the window are when it was read */
	same_as_snapshot("stats", "", "", shm, snap, (const char *const[]){"==", "now ts:", "window:", NULL});
	snprintf(json_a, sizeof(json_a), "%s/a.json", tmp);
	snprintf(json_b, sizeof(json_b), "%s/b.json", tmp);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf convert %s -o %s 2>/dev/null && %s/tracebuf convert %s -o %s 2>/dev/null && "
		 "cmp -s %s %s", b, shm, json_a, b, snap, json_b, json_a, json_b);
	ok(system(cmd) == 0, "convert -o FILE.json of the session: the file its snapshot converts to");
	snprintf(cmd, sizeof(cmd), "%s/tracebuf convert %s -o %s/no.dat 2>&1 | grep -q 'tracebuf snapshot'", b, shm, tmp);
	ok(system(cmd) == 0, "convert -o FILE.dat of the session names snapshot, which writes it");
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s.formats %s/rec.dat %s %s/*.json", shm, shm, tmp, snap, tmp);
	ok(system(cmd) == 0, "the session removed");
}

static void test_live_instance(void)
{
	struct heard h;
	struct tb_capture_opts o = {.diag = hear, .diag_ctx = &h};
	struct tb_capture *c = NULL;
	int rc;

	if (geteuid() != 0 || !instance_have_tracefs() || instance_create("tb-input-kinds") < 0) {
		skip(3, "no tracefs instance (not root, or tracefs cannot be mounted)");
		return;
	}
	ok(kind_of(instance, &h, &rc) == TB_INPUT_LIVE_INSTANCE && rc == 0,
	   "a tracefs instance is sniffed as live");
	memset(&h, 0, sizeof(h));
	rc = tb_capture_open(instance, &o, &c);
	ok(rc == 0 && tb_capture_is_live(c) && tb_capture_cpu_slots(c) > 0,
	   "and opened as a live capture with its CPUs (rc %d, %d slots)", rc,
	   c ? tb_capture_cpu_slots(c) : 0);
	tb_capture_close(c);
	ok(instance_close() == 0, "the instance is removed");
}

static void test_refused(const char *tmp)
{
	struct heard h;
	struct tb_capture_opts o = {.diag = hear, .diag_ctx = &h};
	struct tb_capture *c = NULL;
	char fifo[512], empty[512], missing[512];
	enum tb_input_kind kind;
	int rc;

	kind = kind_of(NOT_INPUT, &h, &rc);
	ok(kind == TB_INPUT_UNKNOWN && rc == -EINVAL && h.count == 1 && !strcmp(h.file, NOT_INPUT) &&
	       h.offset == 0 && names_every_kind(h.reason),
	   "a text file is refused, naming it and every kind tried (%s)", h.reason);
	memset(&h, 0, sizeof(h));
	ok(tb_capture_open(NOT_INPUT, &o, &c) == -EINVAL && !c && h.count == 1 && names_every_kind(h.reason),
	   "tb_capture_open() refuses it the same way");
	memset(&h, 0, sizeof(h));
	ok(tb_input_identify(NOT_INPUT, hear, &h, true, &kind) == -EINVAL && h.count == 0,
	   "quiet: refused without a word");

	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	ok(mkfifo(fifo, 0600) == 0, "a FIFO");
	kind = kind_of(fifo, &h, &rc);
	ok(kind == TB_INPUT_UNKNOWN && rc == -EINVAL && strstr(h.reason, "a FIFO") &&
	       names_every_kind(h.reason),
	   "is refused without waiting for a writer, said to be a FIFO (%s)", h.reason);
	unlink(fifo);

	snprintf(missing, sizeof(missing), "%s/missing", tmp);
	kind = kind_of(missing, &h, &rc);
	ok(kind == TB_INPUT_UNKNOWN && rc == -ENOENT && h.count == 1 && !strcmp(h.file, missing),
	   "a missing path: -ENOENT, said (%s)", h.reason);
	memset(&h, 0, sizeof(h));
	ok(tb_capture_open(missing, &o, &c) == -ENOENT && !c && h.count == 1 && !strcmp(h.file, missing) &&
	       !strcmp(h.reason, "no such file"),
	   "opened: the path itself is said to be missing, once, not a file inside it (%s: %s)", h.file,
	   h.reason);

	/* A directory is meant as a capture; the capture's reader names what it lacks. */
	snprintf(empty, sizeof(empty), "%s/empty", tmp);
	ok(mkdir(empty, 0700) == 0 && kind_of(empty, &h, &rc) == TB_INPUT_CAPTURE_DIR && rc == 0,
	   "an empty directory is taken for a capture directory");
	memset(&h, 0, sizeof(h));
	ok(tb_capture_open(empty, &o, &c) == -ENOENT && !c && strstr(h.file, "header_page"),
	   "whose reader names the header_page it lacks (%s: %s)", h.file, h.reason);
	rmdir(empty);

	ok(tb_input_identify(NULL, NULL, NULL, true, &kind) == -EINVAL && kind == TB_INPUT_UNKNOWN &&
	       tb_input_identify("", NULL, NULL, true, &kind) == -EINVAL &&
	       tb_input_identify(CAP_A, NULL, NULL, true, NULL) == -EINVAL,
	   "a NULL or empty path, or no kind to fill: -EINVAL");
}

static void test_names(void)
{
	bool distinct = true;

	for (size_t i = 0; i < N_KINDS; i++)
		for (size_t j = 0; j < i; j++)
			distinct &=
			    strcmp(tb_input_kind_name(every_kind[i]), tb_input_kind_name(every_kind[j])) != 0;
	ok(distinct && !strcmp(tb_input_kind_name(TB_INPUT_UNKNOWN), "unknown input"),
	   "every kind has a name of its own; no kind is \"unknown input\"");
}

int main(void)
{
	char tmp[] = "/tmp/tb-input-kinds-XXXXXX";

	instance_remove_on_exit();
	if (!mkdtemp(tmp)) {
		fail_diag("mkdtemp: %s", strerror(errno));
		return 1;
	}
	test_capture_dir();
	test_tracedat(tmp);
	test_shm_empty_session(tmp);
	test_shm_memfd_session();
	test_buffers(tmp);
	test_shm_session(tmp);
	test_live_instance();
	test_refused(tmp);
	test_names();
	rmdir(tmp);
	return done_testing();
}
