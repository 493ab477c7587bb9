// SPDX-License-Identifier: MIT
/*
 * shm_capture.c - a shared-memory session as a capture directory and a
 * trace.dat (shm_capture.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_pages.h"
#include "shm_capture.h"
#include "tracebuf/blob.h"
#include "tracebuf/events.h"
#include "tracebuf/page.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracedat.h"
#include "lib_internal.h"

int shmcap_say(const char *cmd, int rc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tracebuf %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

void shmcap_desc_dir(const char *shm_path, char *out, size_t size)
{
	int pid, fd;
	char tail;

	/* a memfd's path lives as long as its creator: its descriptions go next to the other temporaries */
	if (sscanf(shm_path, "/proc/%d/fd/%d%c", &pid, &fd, &tail) == 2) {
		const char *tmp = getenv("TMPDIR");
		snprintf(out, size, "%s/tracebuf-session.%d.%d", tmp && *tmp ? tmp : "/tmp", pid, fd);
	} else {
		snprintf(out, size, "%s.formats", shm_path);
	}
}

int shmcap_tmpdir(const char *what, int small, char *out, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	struct stat st;

	if (!tmp || !*tmp)
		/* a few KiB of descriptions: made and removed in memory, where ext4's journal costs nothing */
		tmp = small && stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
			      ? "/dev/shm"
			      : "/tmp";
	snprintf(out, size, "%s/tracebuf-%s.XXXXXX", tmp, what);
	return mkdtemp(out) ? 0 : -errno;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

void shmcap_rmtree(const char *dir)
{
	if (dir && *dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A path made from parts; a path too long for buf is cut (and then not found or not created). */
static void path_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void path_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static char *read_whole(const char *dir, const char *name, size_t *len)
{
	char *text = tracefs_read(dir, name, len);

	if (!text)
		*len = 0;
	return text;
}

/* Append dir/name to the text being joined (missing: nothing). */
static void join(FILE *acc, const char *dir, const char *name)
{
	size_t len;
	char *text = read_whole(dir, name, &len);

	if (text)
		fwrite(text, 1, len, acc);
	free(text);
}

struct merge {
	const char *cmd;
	char *cap;
	unsigned conflicts;
};

/* Copy one format file unless the same name is there: identical, fine; different, reported. */
static int merge_format(struct merge *m, const char *pdir, const char *system, const char *file)
{
	char from[4096], to[4096];
	size_t a_len, b_len;
	char *a, *b;
	int rc = 0;

	path_fmt(from, sizeof(from), "%s/formats/%s", pdir, system);
	path_fmt(to, sizeof(to), "%s/formats/%s", m->cap, system);
	if ((rc = make_dirs(to)) < 0)
		return rc;
	a = read_whole(from, file, &a_len);
	if (!a)
		return 0;
	b = read_whole(to, file, &b_len);
	if (!b) {
		path_fmt(to, sizeof(to), "%s/formats/%s/%s", m->cap, system, file);
		rc = write_file(to, a, a_len);
	} else if (a_len != b_len || memcmp(a, b, a_len)) {
		if (m->conflicts++ == 0)
			shmcap_say(m->cmd, 0, "processes disagree on %s:%s (one could not use the session's ID table); kept the first",
				   system, file);
	}
	free(a);
	free(b);
	return rc;
}

static int merge_formats(struct merge *m, const char *pdir)
{
	char fdir[4096];
	struct dirent **systems = NULL;
	int n, rc = 0;

	path_fmt(fdir, sizeof(fdir), "%s/formats", pdir);
	n = scandir(fdir, &systems, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char sdir[4096];
		struct dirent **files = NULL;
		int k;

		if (systems[i]->d_name[0] == '.' || rc < 0) {
			free(systems[i]);
			continue;
		}
		path_fmt(sdir, sizeof(sdir), "%s/%s", fdir, systems[i]->d_name);
		k = scandir(sdir, &files, NULL, alphasort);
		for (int j = 0; j < k; j++) {
			if (files[j]->d_name[0] != '.' && rc == 0)
				rc = merge_format(m, pdir, systems[i]->d_name, files[j]->d_name);
			free(files[j]);
		}
		free(files);
		free(systems[i]);
	}
	free(systems);
	return rc;
}

static int write_joined(const char *cap, const char *name, char *text, size_t len)
{
	char path[4096];
	int rc;

	path_fmt(path, sizeof(path), "%s/%s", cap, name);
	rc = write_file(path, text ? text : "", text ? len : 0);
	free(text);
	return rc;
}

/* Header texts and trace_clock from this program's library when no process described itself. */
static int own_headers(const char *cap, const struct tb_ring *ring)
{
	char path[4096], clock[64];
	char *hp = tb_events_header_page(tb_ring_subbuf_size(ring)), *he = tb_events_header_event();
	int rc;

	path_fmt(path, sizeof(path), "%s/header_page", cap);
	rc = write_file(path, hp ? hp : "", hp ? strlen(hp) : 0);
	path_fmt(path, sizeof(path), "%s/header_event", cap);
	if (rc == 0)
		rc = write_file(path, he ? he : "", he ? strlen(he) : 0);
	free(hp);
	free(he);
	path_fmt(path, sizeof(path), "%s/trace_clock", cap);
	snprintf(clock, sizeof(clock), "[%s]\n", tb_clock_name(tb_ring_clock(ring)));
	return rc ? rc : write_file(path, clock, strlen(clock));
}

static void give_name(void *arg, int32_t tid, const char *name)
{
	thread_names_give(arg, tid, name); /* out of memory: that thread stays unnamed */
}

/*
 * The ring's writers' names (its thread table keeps each slot's last two,
 * tb_ring_thread_names) added to cap's saved_cmdlines where the processes'
 * own lists - their live threads when they last described themselves - lack
 * them: threads that ended before are named too.  0 or -errno.
 */
static int name_writers(const char *cap, const struct tb_ring *ring)
{
	struct thread_names names = {0};
	int rc;

	tb_ring_thread_names(ring, give_name, &names);
	rc = thread_names_save(&names, cap);
	thread_names_free(&names);
	return rc;
}

int shmcap_merge_desc(const char *cmd, const char *desc_dir, const char *cap, const struct tb_ring *ring)
{
	static const char *const joined[] = {"printk_formats", "kallsyms", "saved_cmdlines"};
	struct merge m = {cmd, (char *)cap, 0};
	struct dirent **procs = NULL;
	char *text[3] = {NULL};
	size_t len[3] = {0};
	FILE *acc[3];
	int n, found = 0, rc;
	char fdir[4096];

	path_fmt(fdir, sizeof(fdir), "%s/formats", cap);
	if ((rc = make_dirs(fdir)) < 0 || (rc = own_headers(cap, ring)) < 0)
		return rc;
	for (int i = 0; i < 3; i++)
		if (!(acc[i] = open_memstream(&text[i], &len[i])))
			return -ENOMEM;
	n = scandir(desc_dir, &procs, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char pdir[4096];

		path_fmt(pdir, sizeof(pdir), "%s/%s", desc_dir, procs[i]->d_name);
		if (procs[i]->d_name[0] != '.' && is_directory(pdir) && rc == 0) {
			found++;
			rc = merge_formats(&m, pdir);
			for (int j = 0; j < 3; j++)
				join(acc[j], pdir, joined[j]);
		}
		free(procs[i]);
	}
	free(procs);
	for (int i = 0; i < 3; i++) {
		fclose(acc[i]);
		if (rc == 0)
			rc = write_joined(cap, joined[i], text[i], len[i]);
		else
			free(text[i]);
	}
	if (rc == 0)
		rc = name_writers(cap, ring);
	return rc < 0 ? rc : found;
}

int shmcap_stats_text(const struct tb_ring *ring, const struct tb_cpu_stats *st, char **text, size_t *len)
{
	enum tb_clock clock = tb_ring_clock(ring);
	FILE *f;
	int rc;

	*text = NULL;
	*len = 0;
	if (!(f = open_memstream(text, len)))
		return -errno;
	/* raw values, as the capture's clock says: ns for mono/boot, counts otherwise */
	tb_stats_print(f, NULL, st, clock == TB_CLOCK_MONO || clock == TB_CLOCK_BOOT);
	rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int shmcap_meta(const char *cmd, const char *cap, struct tb_ring *ring)
{
	char path[4096], text[512];
	int n, rc;

	n = snprintf(text, sizeof(text), "producer: tracebuf %s\nncpus: %u\ntrace_clock: [%s]\nsubbuf_bytes: %zu\n",
		     cmd, tb_ring_ncpus(ring), tb_clock_name(tb_ring_clock(ring)), tb_ring_subbuf_size(ring));
	path_fmt(path, sizeof(path), "%s/meta.txt", cap);
	rc = write_file(path, text, (size_t)n);
	for (unsigned cpu = 0; rc == 0 && cpu < tb_ring_ncpus(ring); cpu++) {
		struct tb_cpu_stats st;
		char *stats = NULL;
		size_t len;

		if ((rc = tb_ring_stats(ring, cpu, &st)) == 0 && (rc = shmcap_stats_text(ring, &st, &stats, &len)) == 0) {
			path_fmt(path, sizeof(path), "%s/cpu%u.stats", cap, cpu);
			rc = write_file(path, stats, len);
		}
		free(stats);
	}
	return rc;
}

struct raw_files {
	const char *cap;
	int *fd;
	unsigned ncpus;
	struct tb_ring *ring;
	int blobs_fd; /* cap's blobs.bin, or -1: blobs are not saved */
	struct tb_blob_save_counts *blobs;
	const struct tb_shm_window *w; /* page_data_at of the page being put */
	struct shmcap_origins *origins; /* NULL: not kept */
};

static int raw_fd(struct raw_files *rf, unsigned cpu)
{
	char path[4096];

	if (rf->fd[cpu] >= 0)
		return rf->fd[cpu];
	path_fmt(path, sizeof(path), "%s/cpu%u.raw", rf->cap, cpu);
	rf->fd[cpu] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	return rf->fd[cpu] < 0 ? -errno : rf->fd[cpu];
}

void shmcap_origins_free(struct shmcap_origins *o)
{
	for (unsigned i = 0; o->at && i < o->ncpus; i++)
		free(o->at[i]);
	free(o->at);
	free(o->n);
	free(o->cap);
	memset(o, 0, sizeof(*o));
}

static int origins_init(struct shmcap_origins *o, unsigned ncpus)
{
	shmcap_origins_free(o);
	o->ncpus = ncpus;
	o->at = calloc(ncpus, sizeof(*o->at));
	o->n = calloc(ncpus, sizeof(*o->n));
	o->cap = calloc(ncpus, sizeof(*o->cap));
	return o->at && o->n && o->cap ? 0 : -ENOMEM;
}

static int origins_add(struct shmcap_origins *o, unsigned cpu, uint64_t at)
{
	if (o->n[cpu] == o->cap[cpu]) {
		size_t cap = o->cap[cpu] ? 2 * o->cap[cpu] : 256;
		uint64_t *p = realloc(o->at[cpu], cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		o->at[cpu] = p;
		o->cap[cpu] = cap;
	}
	o->at[cpu][o->n[cpu]++] = at;
	return 0;
}

bool shmcap_origin(const struct shmcap_origins *o, unsigned cpu, uint64_t offset, size_t subbuf, uint64_t *at)
{
	uint64_t k = offset / subbuf, in = offset % subbuf;

	if (!o || cpu >= o->ncpus || k >= o->n[cpu] || in < TB_PAGE_HDR_SIZE)
		return false; /* the header of a copied page is the window's own, not the region's */
	*at = o->at[cpu][k] + (in - TB_PAGE_HDR_SIZE);
	return true;
}

bool shmcap_say_damage(const char *cmd, const char *region, const struct tb_shm_window *w)
{
	if (!w->damaged)
		return false;
	fprintf(stderr, "tracebuf %s: %s: byte %llu: %s; rest of the sub-buffer skipped\n", cmd, region,
		(unsigned long long)w->damage_at, w->damage);
	if (w->damaged > 1)
		fprintf(stderr, "tracebuf %s: %s: %llu more sub-buffers cut short the same way\n", cmd, region,
			(unsigned long long)(w->damaged - 1));
	return true;
}

static int put_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct raw_files *rf = ctx;
	int fd = cpu < rf->ncpus ? raw_fd(rf, cpu) : -EINVAL, rc;

	rc = fd < 0 ? fd : write_all(fd, page, size);
	if (rc == 0 && rf->origins)
		rc = origins_add(rf->origins, cpu, rf->w->page_data_at);
	/* the page's blobs as the area holds them now, like the page itself */
	if (rc == 0 && rf->blobs_fd >= 0)
		rc = tb_blob_save_page(rf->ring, page, size, rf->blobs_fd, rf->blobs);
	return rc;
}

/* cap's blobs.bin, when ring has a blob area and the caller counts blobs: an fd, -1, or -errno. */
int shmcap_blob_store(const char *cap, const struct tb_ring *ring, const struct tb_blob_save_counts *blobs)
{
	char path[4096];
	int fd;

	if (!blobs || !tb_ring_blob_size(ring))
		return -1;
	path_fmt(path, sizeof(path), "%s/%s", cap, TB_BLOB_STORE_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

void shmcap_say_blobs(const char *cmd, const struct tb_blob_save_counts *blobs)
{
	if (blobs->saved || blobs->lost)
		shmcap_say(cmd, 0, "blobs: %llu saved (%llu bytes), %llu overwritten before they were saved",
			   (unsigned long long)blobs->saved, (unsigned long long)blobs->bytes,
			   (unsigned long long)blobs->lost);
}

int shmcap_window(const char *cmd, const char *cap, struct tb_ring *ring, struct tb_shm_window *w,
		  struct tb_blob_save_counts *blobs, struct shmcap_origins *origins)
{
	unsigned ncpus = tb_ring_ncpus(ring);
	struct raw_files rf = {cap,   calloc(ncpus, sizeof(int)), ncpus, ring, shmcap_blob_store(cap, ring, blobs),
			       blobs, w, origins};
	int rc = origins ? origins_init(origins, ncpus) : 0;

	if (!rf.fd || rf.blobs_fd < -1 || rc < 0) {
		rc = rc < 0 ? rc : rf.fd ? rf.blobs_fd : -ENOMEM;
		if (rf.blobs_fd >= 0)
			close(rf.blobs_fd);
		free(rf.fd);
		return shmcap_say(cmd, rc, "cannot write the pages to %s: %s", cap, strerror(-rc));
	}
	for (unsigned i = 0; i < ncpus; i++)
		rf.fd[i] = -1;
	rc = tb_shm_window(ring, put_page, &rf, w);
	for (unsigned i = 0; i < ncpus; i++)
		if (rf.fd[i] >= 0 && close(rf.fd[i]) < 0 && rc == 0)
			rc = -errno;
	free(rf.fd);
	if (rf.blobs_fd >= 0 && close(rf.blobs_fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == -EFAULT && *tb_shm_error())
		shmcap_say(cmd, rc, "%s", tb_shm_error()); /* a --shm file shrunk under us */
	else if (rc < 0)
		shmcap_say(cmd, rc, "cannot write the pages to %s: %s", cap, strerror(-rc));
	return rc;
}

/*
 * The ring's cycles-to-ns conversion as trace.dat's TSC2NSEC (mult, shift),
 * taken from the ring's own calibration: tb_ring_to_ns() is linear, so the
 * ns of 2^32 cycles anywhere on it give the rate, which mult keeps with 24
 * bits of fraction (a 1 GHz TSC is mult 2^24, a 5 GHz one about 3.4e6).
 */
void shmcap_write_opts(const struct tb_ring *ring, struct tb_tracedat_write_opts *o)
{
	const uint64_t base = 1ull << 40, span = 1ull << 32;
	uint64_t per_span;

	*o = (struct tb_tracedat_write_opts){.version = 6};
	if (tb_ring_clock(ring) != TB_CLOCK_TSC)
		return;
	per_span = tb_ring_to_ns(ring, base + span) - tb_ring_to_ns(ring, base);
	if (per_span == span) /* uncalibrated: to_ns is the identity */
		return;
	o->tsc2nsec_shift = 24;
	o->tsc2nsec_mult = (uint32_t)((per_span + 128) >> 8); /* ns per cycle << 24 */
}

int shmcap_tracedat(const char *cmd, const char *cap, const char *out, const struct tb_ring *ring)
{
	struct tb_tracedat_write_opts o;
	int rc;

	shmcap_write_opts(ring, &o);
	rc = tb_tracedat_write_capture(cap, NULL, out, &o);

	if (rc < 0)
		shmcap_say(cmd, rc, "cannot write %s: %s", out, strerror(-rc));
	return rc;
}
