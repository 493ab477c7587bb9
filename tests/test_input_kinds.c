// SPDX-License-Identifier: MIT
/*
 * test_input_kinds.c - the input opener's table (src/input, tracebuf/input.h)
 * on real inputs: each kind sniffed as itself and opened as a capture with
 * its pages, a trace.dat recognised by its bytes under any name, a shm
 * session named with what reads it, and what is no input refused naming
 * the file and every kind tried - without hanging on a FIFO.
 */
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
	char reason[TB_DIAG_REASON_MAX];
};

static void hear(void *ctx, const struct tb_diag *d)
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
	struct tb_raw_page page;
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

/* The CLI's COMMAND of a shm session: exit 2, and its message holds want. */
static void cli_refuses(const char *command, const char *path, const char *want)
{
	char args[1100], *out;
	int rc;

	snprintf(args, sizeof(args), "%s %s", command, path);
	out = cli(args, &rc);
	ok(rc == 2 && out && strstr(out, want), "the CLI's %s refuses it, saying \"%s\", exit 2 (%d)", command, want,
	   rc);
	free(out);
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
	struct tb_raw_page page;
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

static void test_shm_session(const char *tmp)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_capture_opts o;
	struct tb_capture *c = (struct tb_capture *)&o; /* overwritten: checked below */
	struct tb_shm *shm;
	struct heard h;
	char path[512];
	int rc;

	tb_ring_opts_default(&ro);
	ro.size_kb = 16;
	ro.ncpus = 1;
	snprintf(path, sizeof(path), "%s/session", tmp);
	so.path = path;
	if (!ok(tb_shm_create(&so, &shm) == 0, "a shm session's region at %s", path))
		return;
	ok(kind_of(path, &h, &rc) == TB_INPUT_SHM_SESSION && rc == 0, "is sniffed as a shm session");
	memset(&h, 0, sizeof(h));
	o = (struct tb_capture_opts){.diag = hear, .diag_ctx = &h};
	rc = tb_capture_open(path, &o, &c);
	ok(rc == -EOPNOTSUPP && !c && h.count == 1 && !strcmp(h.file, path) &&
	       strstr(h.reason, "shm session") && strstr(h.reason, "tracebuf snapshot") &&
	       strstr(h.reason, "hist --session"),
	   "is not opened as a capture: named, with what reads it (%s)", h.reason);
	cli_refuses("report", path, "shm session, not a capture");
	cli_refuses("stats", path, "is a shm session");
	tb_shm_close(shm);
	unlink(path);
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
	test_buffers(tmp);
	test_shm_session(tmp);
	test_live_instance();
	test_refused(tmp);
	test_names();
	rmdir(tmp);
	return done_testing();
}
