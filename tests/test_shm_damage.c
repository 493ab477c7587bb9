// SPDX-License-Identifier: MIT
/*
 * test_shm_damage - a session's region whose page bytes were scribbled,
 * read by tb_shm_window and by the commands built on it (snapshot,
 * recover, hist --session).
 *
 * A finished `tracebuf record --flight-recorder` session of
 * examples/recorded is read once intact: the events of its window, and a
 * closed page of it whose sixth data record is then overwritten in the
 * region file with a long-record header of length 0 (no reader can walk
 * past it).  What a reader of that page prints is its first five records,
 * so the window must count the intact window's events less the page's
 * records from the sixth on, hand the page over cut there, and say where
 * (the region file's byte of the bad record) and why; snapshot and recover
 * must say it naming the region file and exit 1, their trace.dat must
 * read clean and hold that count; hist --session and report of the
 * region (an input kind of its own) must name the region file, never
 * their private copy.  Bugs: the window took the page's stored
 * count (the damaged records counted), and hist named its temporary copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/page.h"
#include "tracebuf/shm.h"

#define BAD_RECORD   5 /* the sixth data record of the page */
#define SHORT_RECORD 3 /* the fourth: made too short for its event, the walk still intact */

static char dir[] = "/tmp/tb-test-shm-damage-XXXXXX";
static const char *build;

/* The target: the first page of a CPU with two or more pages (so a closed one). */
struct target {
	int cpu_pages[256];
	int want_cpu; /* -1: counting pages; else the CPU to pick from */
	int found;
	uint64_t data_at;     /* the region's byte of its first data byte */
	uint64_t bad_at;      /* the region's byte of its sixth data record */
	uint64_t short_at;    /* the region's byte of its fourth data record */
	uint32_t short_size;  /* and its size */
	uint64_t records;     /* its data records */
	uint64_t cut_records; /* with damage: the data records of the page handed over */
	int cut_clean;	      /* and it walks to its end without an error */
	const struct tb_shm_window *w;
};

static int look(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct target *t = ctx;
	struct tb_page_cursor cur;
	struct tb_record rec;
	uint64_t n = 0;
	int rc;

	if (cpu < 256)
		t->cpu_pages[cpu]++;
	if (t->want_cpu != (int)cpu || t->found)
		return 0;
	t->found = 1;
	t->data_at = t->w->page_data_at;
	if (tb_page_cursor_init(&cur, page, size) < 0)
		return 0;
	while ((rc = tb_page_next_data(&cur, &rec)) == 1) {
		if (n == BAD_RECORD) /* rec.offset: its header's byte in the page */
			t->bad_at = t->data_at + rec.offset - TB_PAGE_HDR_SIZE;
		if (n == SHORT_RECORD) {
			t->short_at = t->data_at + rec.offset - TB_PAGE_HDR_SIZE;
			t->short_size = rec.size;
		}
		n++;
	}
	t->records = t->cut_records = n;
	t->cut_clean = rc == 0;
	return 0;
}

/* One window over the session at path (reader, or loaded): 0 with *w and t filled. */
static int window(const char *path, int load, struct target *t, struct tb_shm_window *w)
{
	struct tb_shm *s;
	int rc = load ? tb_shm_load(path, &s) : tb_shm_attach(path, TB_SHM_READER, &s);

	if (rc < 0)
		return rc;
	t->w = w;
	rc = tb_shm_window(tb_shm_ring(s), look, t, w);
	tb_shm_close(s);
	return rc;
}

/* Run cmd (a shell line); its exit status, -1 when it did not exit. */
static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int has(const char *file, const char *text)
{
	char *s = tap_slurp(file, NULL);
	int yes = s && strstr(s, text);

	free(s);
	return yes;
}

/* The events `tracebuf list -c` counts in a trace.dat (summed over its lines); -1 when it fails. */
static long listed(const char *dat)
{
	char cmd[1024];
	int st;
	long total = 0, n;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf list -c %s 2>/dev/null", build, dat);
	char *out = tap_command_output(cmd, &st);
	for (char *p = out; p && *p;) {
		if (sscanf(p, "%ld", &n) == 1)
			total += n;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	free(out);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? total : -1;
}

int main(void)
{
	char ring[256], cmd[2048], expect[512], file[300];
	struct target t = {.want_cpu = -1};
	struct tb_shm_window w, wd;
	int cpu = -1, fd;

	build = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	if (!mkdtemp(dir))
		skip_all("no temporary directory");
	snprintf(ring, sizeof(ring), "%s/ring", dir);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf record --flight-recorder --shm %s -b 256 -e 'app:*' -o %s/f.dat -- "
		 "%s/examples/recorded 3000 1 2> %s/record.err",
		 build, ring, dir, build, dir);
	if (!ok(run(cmd) == 0,
		"record --flight-recorder of two processes, 3000 ticks each, into 256 KiB per CPU"))
		goto out;

	/* The intact window: its events, and a CPU with two pages or more. */
	ok(window(ring, 0, &t, &w) == 0 && w.damaged == 0 && w.damage == NULL,
	   "the intact window: no damage");
	for (int c = 0; c < 256; c++)
		if (t.cpu_pages[c] >= 2 && cpu < 0)
			cpu = c;
	if (!ok(cpu >= 0, "a CPU holds two pages or more (a closed page to damage)"))
		goto out;
	memset(&t, 0, sizeof(t));
	t.want_cpu = cpu;
	window(ring, 0, &t, &w);
	if (!ok(t.found && t.records > BAD_RECORD + 1 && t.cut_clean,
		"CPU %d's first page: %llu records, the sixth at region byte %llu", cpu,
		(unsigned long long)t.records, (unsigned long long)t.bad_at))
		goto out;
	uint64_t events = w.events, records = t.records, bad_at = t.bad_at;

	/* The sixth record's header: a long record (type_len 0) of length 0. */
	static const uint8_t zero[8];
	fd = open(ring, O_RDWR);
	ok(fd >= 0 && pwrite(fd, zero, 8, (off_t)bad_at) == 8, "its header overwritten in the region file");
	if (fd >= 0)
		close(fd);

	for (int load = 0; load < 2; load++) {
		struct target d = {.want_cpu = cpu};
		int rc = window(ring, load, &d, &wd);
		uint64_t want = events - (records - BAD_RECORD);
		ok(rc == 0 && wd.events == want,
		   "%s window: %llu events (want %llu: %llu less the page's %llu from the sixth)",
		   load ? "loaded" : "attached", (unsigned long long)wd.events, (unsigned long long)want,
		   (unsigned long long)events, (unsigned long long)(records - BAD_RECORD));
		ok(wd.damaged == 1 && wd.damage_at == bad_at && wd.damage &&
		       !strcmp(wd.damage, "bad length in long data record"),
		   "one damaged page, at byte %llu (want %llu): %s", (unsigned long long)wd.damage_at,
		   (unsigned long long)bad_at, wd.damage ? wd.damage : "none");
		ok(d.found && d.cut_records == BAD_RECORD && d.cut_clean,
		   "the page handed over holds its first five records (%llu) and walks clean",
		   (unsigned long long)d.cut_records);
		ok(wd.lost_inside == w.lost_inside,
		   "the records cut off are not counted as overwritten (%llu)",
		   (unsigned long long)wd.lost_inside);
	}

	snprintf(expect, sizeof(expect),
		 "%s: byte %llu: bad length in long data record; rest of the sub-buffer skipped", ring,
		 (unsigned long long)bad_at);
	static const char *const cmds[] = {"snapshot", "recover"};
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd), "%s/tracebuf %s %s -o %s/%s.dat 2> %s/%s.err", build, cmds[k],
			 ring, dir, cmds[k], dir, cmds[k]);
		int rc = run(cmd);
		snprintf(file, sizeof(file), "%s/%s.err", dir, cmds[k]);
		ok(rc == 1 && has(file, expect),
		   "%s: exit 1 (got %d), names the region file, byte and damage", cmds[k], rc);
		char count[64];
		snprintf(count, sizeof(count), ": %llu events in ",
			 (unsigned long long)(events - (records - BAD_RECORD)));
		ok(has(file, count), "%s says the %llu events a reader prints", cmds[k],
		   (unsigned long long)(events - (records - BAD_RECORD)));
		snprintf(file, sizeof(file), "%s/%s.dat", dir, cmds[k]);
		long n = listed(file);
		ok(n == (long)(events - (records - BAD_RECORD)),
		   "its trace.dat reads clean and holds them (%ld)", n);
	}

	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf hist --session -e app:tick keys=common_pid %s > %s/hist.out 2> %s/hist.err",
		 build, ring, dir, dir);
	int rc = run(cmd);
	snprintf(file, sizeof(file), "%s/hist.err", dir);
	ok(rc == 1 && has(file, expect) && !has(file, "/copy0/"),
	   "hist --session: exit 1 (got %d), names the region file, byte and damage, not its private copy",
	   rc);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf hist -e app:tick keys=common_pid:sort=common_pid %s/snapshot.dat 2>/dev/null > "
		 "%s/hist.snap; "
		 "%s/tracebuf hist --session -e app:tick keys=common_pid:sort=common_pid %s 2>/dev/null | "
		 "cmp -s - %s/hist.snap",
		 build, dir, dir, build, ring, dir);
	ok(run(cmd) == 0, "hist --session counts what the snapshot's trace.dat holds");

	/* The region as an input of its own (src/input/shm_session.c): report reads it as snapshot did. */
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --no-header %s > %s/report.out 2> %s/report.err", build, ring,
		 dir, dir);
	rc = run(cmd);
	snprintf(file, sizeof(file), "%s/report.err", dir);
	ok(rc == 1 && has(file, expect) && !has(file, "tracebuf-session."),
	   "report of the session: exit 1 (got %d), names the region file, byte and damage, not its private copy", rc);
	/*
	 * The events: the header's entries-written are the ring's counters
	 * (the damaged page's records were written), a trace.dat's the data
	 * it holds.
	 */
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf report --like-kernel --no-header %s/snapshot.dat 2>/dev/null | cmp -s - %s/report.out",
		 build, dir, dir);
	ok(run(cmd) == 0, "and prints the events report prints of the snapshot's trace.dat");

	/*
	 * A problem hist's reader meets in a record (not in the walk): the
	 * fourth record made 12 bytes (its event ID kept, 8 bytes of payload:
	 * shorter than app:tick's worker field needs), a discarded record (padding with a
	 * time delta) filling the rest of its place.  hist names the byte in
	 * the region, inside that record's place, never the private copy.
	 */
	uint64_t short_at = t.short_at;
	uint32_t size = t.short_size, hdr, pad[2];
	fd = open(ring, O_RDWR);
	int wrote = fd >= 0 && size >= 20 && pread(fd, &hdr, 4, (off_t)short_at) == 4;
	hdr = (hdr & ~31u) | 2u;  /* type_len 2: 8 bytes of payload */
	pad[0] = (1u << 5) | 29u; /* padding, time delta 1: a discarded record */
	pad[1] = size - 12 - 4;	  /* array[0]: its length less the header */
	wrote = wrote && pwrite(fd, &hdr, 4, (off_t)short_at) == 4 &&
		pwrite(fd, pad, 8, (off_t)(short_at + 12)) == 8;
	if (fd >= 0)
		close(fd);
	ok(wrote, "the fourth record (%u bytes at region byte %llu) made 12 bytes and a discarded record",
	   size, (unsigned long long)short_at);
	snprintf(cmd, sizeof(cmd),
		 "%s/tracebuf hist --session -e app:tick keys=worker %s > %s/hist.out 2> %s/hist2.err", build,
		 ring, dir, dir);
	rc = run(cmd);
	snprintf(file, sizeof(file), "%s/hist2.err", dir);
	char *err = tap_slurp(file, NULL), *at = NULL;
	char prefix[300];
	unsigned long long byte = 0;
	snprintf(prefix, sizeof(prefix), "%s: byte ", ring);
	for (char *p = err; p && (p = strstr(p, prefix)); p += strlen(prefix))
		if (strstr(p, "record of 8 bytes") &&
		    (!strchr(p, '\n') || strstr(p, "record of 8 bytes") < strchr(p, '\n')))
			at = p + strlen(prefix);
	if (at)
		byte = strtoull(at, NULL, 10);
	ok(rc == 1 && at && byte >= short_at && byte <= short_at + size && !strstr(err, "/copy0/"),
	   "hist --session: the short record named at region byte %llu (its place: %llu..%llu), exit %d",
	   byte, (unsigned long long)short_at, (unsigned long long)(short_at + size), rc);
	if (!at && err)
		diag("hist said: %s", err);
	free(err);
out:
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
