// SPDX-License-Identifier: MIT
/*
 * ringsave.c - a ring saved as a capture directory (tracebuf/describe.h),
 * the same files a capture of a kernel instance has, so one reader serves
 * both.
 *
 * The stats are taken before the pages are read (reading consumes them),
 * as a kernel capture takes per_cpu/cpuN/stats before trace_pipe_raw.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracebuf/blob.h"
#include "tracebuf/describe.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"
#include "util/write_all.h"

struct saver {
	const char *dir;
	struct tb_problem *err;
	char path[4096];
	int blobs_fd; /* blobs.bin, or -1: the ring has no blob area */
	struct tb_blob_save_counts blobs;
};

static void set_reason(struct tb_problem *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A long path is cut short in the message; the message is still made. */
static void set_reason(struct tb_problem *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
}

static int fail(struct saver *s, int rc, const char *what)
{
	if (s->err) {
		s->err->file = s->dir;
		s->err->offset = 0;
		set_reason(s->err, "%s: %s: %s", s->path, what, strerror(-rc));
	}
	return rc;
}

static const char *path_of(struct saver *s, const char *name)
{
	snprintf(s->path, sizeof(s->path), "%s/%s", s->dir, name);
	return s->path;
}

static int make_dir(struct saver *s, const char *name)
{
	struct stat st;

	if (mkdir(name ? path_of(s, name) : s->dir, 0755) == 0)
		return 0;
	if (!name)
		snprintf(s->path, sizeof(s->path), "%s", s->dir);
	if (errno != EEXIST)
		return fail(s, -errno, "cannot create the directory");
	if (stat(s->path, &st) < 0 || !S_ISDIR(st.st_mode))
		return fail(s, -ENOTDIR, "exists");
	return 0;
}

static int create_file(struct saver *s, const char *name)
{
	int fd = open(path_of(s, name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	return fd < 0 ? fail(s, -errno, "cannot create") : fd;
}

static int write_file(struct saver *s, const char *name, const void *text, size_t len)
{
	int fd = create_file(s, name), rc;

	if (fd < 0)
		return fd;
	rc = tb__write_all(fd, text, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc < 0 ? fail(s, rc, "cannot write") : 0;
}

static int write_formats(struct saver *s, const struct tb_save_opts *o)
{
	char name[512], text[16384];
	int rc = make_dir(s, "formats");

	for (size_t i = 0; rc == 0 && i < o->nevents; i++) {
		const struct tb_evdesc *d = o->events[i].desc;
		int n = tb_evdesc_format(d, o->events[i].id, text, sizeof(text));

		snprintf(name, sizeof(name), "formats/%s", d->system);
		rc = make_dir(s, name);
		if (rc < 0)
			break;
		snprintf(name, sizeof(name), "formats/%s/%s.format", d->system, d->name);
		if (n < 0 || (size_t)n >= sizeof(text))
			return fail(s, -E2BIG, "format text too long");
		rc = write_file(s, name, text, (size_t)n);
	}
	return rc;
}

static int write_stats(struct saver *s, struct tb_ring *ring, unsigned cpu)
{
	enum tb_clock clock = tb_ring_clock(ring);
	struct tb_cpu_stats st;
	char name[64];
	FILE *f;
	int rc = tb_stats_read(ring, cpu, &st);

	if (rc < 0)
		return fail(s, rc, "cannot read the ring's stats");
	snprintf(name, sizeof(name), "cpu%u.stats", cpu);
	f = fopen(path_of(s, name), "w");
	if (!f)
		return fail(s, -errno, "cannot create");
	/* Raw values, as the capture's clock says: ns for mono/boot, counts otherwise. */
	tb_stats_print(f, NULL, &st, clock == TB_CLOCK_MONO || clock == TB_CLOCK_BOOT);
	rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc < 0 ? fail(s, rc, "cannot write") : 0;
}

static int write_pages(struct saver *s, struct tb_ring *ring, unsigned cpu)
{
	size_t size = tb_ring_subbuf_size(ring);
	void *page = malloc(size);
	struct tb_sizing sz;
	char name[64];
	long n = 0;
	int fd, rc = 0;

	/* Writers left running could refill the ring for ever: take one ring's worth and a little. */
	tb_ring_sizing(ring, &sz);
	uint64_t budget = sz.subbufs_per_cpu + 2;

	if (!page)
		return -ENOMEM;
	snprintf(name, sizeof(name), "cpu%u.raw", cpu);
	fd = create_file(s, name);
	if (fd < 0) {
		free(page);
		return fd;
	}
	/* each page's blobs are copied as it is taken: the blob area may reuse them once it is */
	while (rc == 0 && budget-- > 0 && (n = tb_read_page(ring, cpu, page, size)) > 0) {
		rc = tb__write_all(fd, page, (size_t)n);
		if (rc == 0 && s->blobs_fd >= 0)
			rc = tb_blob_save_page(ring, page, (size_t)n, s->blobs_fd, &s->blobs);
	}
	if (rc == 0 && n < 0)
		rc = (int)n;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	free(page);
	return rc < 0 ? fail(s, rc, "cannot write the sub-buffers") : 0;
}

/* saved_cmdlines: "TID COMM" for every thread of this process now. */
static int write_cmdlines(struct saver *s)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char *text = NULL, comm[64], cpath[300];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rc;

	if (!out) {
		if (d)
			closedir(d);
		return fail(s, -ENOMEM, "saved_cmdlines");
	}
	while (d && (e = readdir(d))) {
		FILE *f;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(cpath, "r");
		if (!f)
			continue; /* the thread just ended */
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			fprintf(out, "%s %s\n", e->d_name, comm);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	if (fclose(out) != 0) {
		free(text);
		return fail(s, -ENOMEM, "saved_cmdlines");
	}
	rc = write_file(s, "saved_cmdlines", text, len);
	free(text);
	return rc;
}

/* header_page and header_event come from format_text.c, as tracebuf dump writes them. */
static int write_owned_text(struct saver *s, const char *name, char *text)
{
	int rc;

	if (!text) {
		path_of(s, name);
		return fail(s, -ENOMEM, "cannot make the text");
	}
	rc = write_file(s, name, text, strlen(text));
	free(text);
	return rc;
}

static int write_meta(struct saver *s, struct tb_ring *ring, const struct tb_save_opts *o)
{
	char text[512];
	struct tb_sizing sz;
	int n, rc;

	/* buffer_size_kb as a kernel capture's meta.txt has it: the ring's size, for pictures of it. */
	tb_ring_sizing(ring, &sz);
	n = snprintf(text, sizeof(text),
		     "producer: tracebuf\nncpus: %u\ntrace_clock: [%s]\nsubbuf_bytes: %zu\nbuffer_size_kb: %llu\n",
		     tb_ring_ncpus(ring), tb_clock_name(tb_ring_clock(ring)), tb_ring_subbuf_size(ring),
		     (unsigned long long)sz.requested_kb);
	rc = write_file(s, "meta.txt", text, (size_t)n);
	if (rc == 0) {
		n = snprintf(text, sizeof(text), "%s\n", o->tracer ? o->tracer : "nop");
		rc = write_file(s, "current_tracer", text, (size_t)n);
	}
	if (rc == 0)
		rc = write_owned_text(s, "header_page", tb_events_header_page(tb_ring_subbuf_size(ring)));
	if (rc == 0)
		rc = write_owned_text(s, "header_event", tb_events_header_event());
	return rc;
}

static int write_objects(struct saver *s)
{
	char *text;
	size_t len;
	int rc = tb_objects_text(&text, &len);

	if (rc < 0)
		return fail(s, rc, "objects");
	rc = write_file(s, "objects", text, len);
	free(text);
	return rc;
}

int tb_save_ring(struct tb_ring *ring, const char *dir, const struct tb_save_opts *opts,
		     struct tb_problem *err)
{
	static const struct tb_save_opts none;
	struct saver s = {.dir = dir, .err = err, .blobs_fd = -1};
	unsigned ncpus = tb_ring_ncpus(ring);
	int rc;

	if (!opts)
		opts = &none;
	rc = make_dir(&s, NULL);
	if (rc == 0)
		rc = write_meta(&s, ring, opts);
	if (rc == 0)
		rc = write_formats(&s, opts);
	for (unsigned cpu = 0; rc == 0 && cpu < ncpus; cpu++)
		rc = write_stats(&s, ring, cpu);
	if (rc == 0 && tb_ring_blob_size(ring) && (s.blobs_fd = create_file(&s, TB_BLOB_STORE_FILE)) < 0)
		rc = s.blobs_fd;
	for (unsigned cpu = 0; rc == 0 && cpu < ncpus; cpu++)
		rc = write_pages(&s, ring, cpu);
	if (s.blobs_fd >= 0 && close(s.blobs_fd) < 0 && rc == 0)
		rc = fail(&s, -errno, "cannot write the blobs");
	if (rc == 0)
		rc = write_cmdlines(&s);
	if (rc == 0)
		rc = write_objects(&s);
	return rc;
}
