// SPDX-License-Identifier: MIT
/*
 * shm_session.c - a shared-memory session as a capture directory, and as
 * a capture (shm_session.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/capture_kinds.h"
#include "decode/capture_source.h"
#include "decode/fd_text.h"
#include "diag.h"
#include "shm_session.h"
#include "tracebuf/events.h"
#include "tracebuf/page.h"
#include "util/files.h"
#include "util/grow.h"
#include "util/write_all.h"

#define MAX_DESC_TEXT (64u << 20) /* kallsyms is ~5 MiB; far more is not a description */

void shm_session_desc_dir(const char *region, char *out, size_t size)
{
	int pid, fd;
	char tail;

	/* a memfd's path lives as long as its creator: its descriptions go next to the other temporaries */
	if (sscanf(region, "/proc/%d/fd/%d%c", &pid, &fd, &tail) == 2) {
		const char *tmp = getenv("TMPDIR");
		snprintf(out, size, "%s/tracebuf-session.%d.%d", tmp && *tmp ? tmp : "/tmp", pid, fd);
	} else {
		snprintf(out, size, "%s.formats", region);
	}
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

/* The whole file dir/name, NUL-terminated (the caller frees); NULL, *len 0, when it cannot be read. */
static char *read_whole(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX];
	char *text = NULL;
	int fd;

	path_fmt(path, sizeof(path), "%s/%s", dir, name);
	*len = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	text = fd_read_text(fd, MAX_DESC_TEXT, len);
	close(fd);
	if (!text)
		*len = 0;
	return text;
}

/* d's offset and reason from a printf format (the reason cut to its room). */
static void set_reason(struct tb_problem *d, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_reason(struct tb_problem *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vset(d, offset, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------ descriptions */

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
	const char *desc_dir;
	const char *cap;
	tb_problem_fn *diag;
	void *diag_ctx;
	unsigned conflicts;
};

/* Two processes described one event differently: said once per merge, as a warning. */
static void say_conflict(struct merge *m, const char *system, const char *file)
{
	struct tb_problem d = {.file = m->desc_dir, .warning = true};

	if (m->conflicts++)
		return;
	set_reason(&d, 0, "processes disagree on %s:%s (one could not use the session's ID table); kept the first",
		   system, file);
	(m->diag ? m->diag : tb_problem_print)(m->diag ? m->diag_ctx : NULL, &d);
}

/* Copy one format file unless the same name is there: identical, fine; different, said. */
static int merge_format(struct merge *m, const char *pdir, const char *system, const char *file)
{
	char from[PATH_MAX], to[PATH_MAX];
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
		say_conflict(m, system, file);
	}
	free(a);
	free(b);
	return rc;
}

static int merge_formats(struct merge *m, const char *pdir)
{
	char fdir[PATH_MAX];
	struct dirent **systems = NULL;
	int n, rc = 0;

	path_fmt(fdir, sizeof(fdir), "%s/formats", pdir);
	n = scandir(fdir, &systems, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char sdir[PATH_MAX];
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
	char path[PATH_MAX];
	int rc;

	path_fmt(path, sizeof(path), "%s/%s", cap, name);
	rc = write_file(path, text ? text : "", text ? len : 0);
	free(text);
	return rc;
}

/* Header texts and trace_clock from this library, as the ring is: whether or not a process described itself. */
static int own_headers(const char *cap, const struct tb_ring *ring)
{
	char path[PATH_MAX], clock[64];
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

/* The saved_cmdlines lines a writer's name is added to: those of the processes' own lists. */
struct writer_names {
	FILE *acc;	  /* the saved_cmdlines being joined */
	const char *listed; /* its text so far: "TID COMM" lines */
};

static bool tid_listed(const char *text, int32_t tid)
{
	char key[24];
	int n = snprintf(key, sizeof(key), "%d ", (int)tid);

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, (size_t)n))
			return true;
	return false;
}

static void add_writer(void *arg, int32_t tid, const char *name)
{
	struct writer_names *w = arg;

	if (tid > 0 && *name && !tid_listed(w->listed, tid))
		fprintf(w->acc, "%d %s\n", (int)tid, name);
}

/*
 * The ring's writers' names (its thread table keeps each slot's last two,
 * tb_ring_thread_names) added to the joined saved_cmdlines where the
 * processes' own lists - their live threads when they last described
 * themselves - lack them: threads that ended before are named too.
 */
static int name_writers(FILE *acc, char **text, const struct tb_ring *ring)
{
	struct writer_names w = {acc, NULL};
	char *copy;

	if (fflush(acc) != 0)
		return -errno;
	/* A copy: the stream's buffer moves as the names are added. */
	if (!(copy = strdup(*text ? *text : "")))
		return -ENOMEM;
	w.listed = copy;
	tb_ring_thread_names(ring, add_writer, &w);
	free(copy);
	return 0;
}

int shm_session_merge_desc(const char *desc_dir, const char *cap, const struct tb_ring *ring, tb_problem_fn *diag,
			   void *diag_ctx)
{
	static const char *const joined[] = {"printk_formats", "kallsyms", "saved_cmdlines"};
	struct merge m = {desc_dir, cap, diag, diag_ctx, 0};
	struct dirent **procs = NULL;
	char *text[3] = {NULL};
	size_t len[3] = {0};
	FILE *acc[3] = {NULL};
	int n, found = 0, rc;
	char fdir[PATH_MAX];

	path_fmt(fdir, sizeof(fdir), "%s/formats", cap);
	if ((rc = make_dirs(fdir)) < 0 || (rc = own_headers(cap, ring)) < 0)
		return rc;
	for (int i = 0; i < 3 && rc == 0; i++)
		if (!(acc[i] = open_memstream(&text[i], &len[i])))
			rc = -ENOMEM;
	n = rc == 0 ? scandir(desc_dir, &procs, NULL, alphasort) : 0;
	for (int i = 0; i < n; i++) {
		char pdir[PATH_MAX];

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
	if (rc == 0)
		rc = name_writers(acc[2], &text[2], ring);
	for (int i = 0; i < 3; i++) {
		if (acc[i])
			fclose(acc[i]);
		if (rc == 0)
			rc = write_joined(cap, joined[i], text[i], len[i]);
		else
			free(text[i]);
	}
	return rc < 0 ? rc : found;
}

/* ------------------------------------------------------- meta, stats */

int shm_session_stats_text(const struct tb_ring *ring, const struct tb_cpu_stats *st, char **text, size_t *len)
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

int shm_session_meta(const char *producer, const char *cap, struct tb_ring *ring)
{
	char path[PATH_MAX], text[512];
	int n, rc;

	n = snprintf(text, sizeof(text), "producer: tracebuf %s\nncpus: %u\ntrace_clock: [%s]\nsubbuf_bytes: %zu\n",
		     producer, tb_ring_ncpus(ring), tb_clock_name(tb_ring_clock(ring)), tb_ring_subbuf_size(ring));
	path_fmt(path, sizeof(path), "%s/meta.txt", cap);
	rc = write_file(path, text, (size_t)n);
	for (unsigned cpu = 0; rc == 0 && cpu < tb_ring_ncpus(ring); cpu++) {
		struct tb_cpu_stats st;
		char *stats = NULL;
		size_t len;

		if ((rc = tb_stats_read(ring, cpu, &st)) == 0 && (rc = shm_session_stats_text(ring, &st, &stats, &len)) == 0) {
			path_fmt(path, sizeof(path), "%s/cpu%u.stats", cap, cpu);
			rc = write_file(path, stats, len);
		}
		free(stats);
	}
	return rc;
}

/* ------------------------------------------------------------ window */

void shm_origins_free(struct shm_origins *o)
{
	for (unsigned i = 0; o->at && i < o->ncpus; i++)
		free(o->at[i]);
	free(o->at);
	free(o->n);
	free(o->cap);
	memset(o, 0, sizeof(*o));
}

static int origins_init(struct shm_origins *o, unsigned ncpus)
{
	shm_origins_free(o);
	o->ncpus = ncpus;
	o->at = calloc(ncpus, sizeof(*o->at));
	o->n = calloc(ncpus, sizeof(*o->n));
	o->cap = calloc(ncpus, sizeof(*o->cap));
	return o->at && o->n && o->cap ? 0 : -ENOMEM;
}

static int origins_add(struct shm_origins *o, unsigned cpu, uint64_t at)
{
	uint64_t *grown = tb__grow(o->at[cpu], &o->cap[cpu], o->n[cpu] + 1, sizeof(*grown), 256);

	if (!grown)
		return -ENOMEM;
	o->at[cpu] = grown;
	o->at[cpu][o->n[cpu]++] = at;
	return 0;
}

bool shm_origin(const struct shm_origins *o, unsigned cpu, uint64_t offset, size_t subbuf, uint64_t *at)
{
	uint64_t k = offset / subbuf, in = offset % subbuf;

	if (!o || cpu >= o->ncpus || k >= o->n[cpu] || in < TB_PAGE_HDR_SIZE)
		return false; /* the header of a copied page is the window's own, not the region's */
	*at = o->at[cpu][k] + (in - TB_PAGE_HDR_SIZE);
	return true;
}

struct raw_files {
	const char *cap;
	int *fd;
	unsigned ncpus;
	struct tb_ring *ring;
	int blobs_fd; /* cap's blobs.bin, or -1: blobs are not saved */
	struct tb_blob_save_counts *blobs;
	const struct tb_shm_window *w; /* page_data_at of the page being put */
	struct shm_origins *origins;   /* NULL: not kept */
};

static int raw_fd(struct raw_files *rf, unsigned cpu)
{
	char path[PATH_MAX];

	if (rf->fd[cpu] >= 0)
		return rf->fd[cpu];
	path_fmt(path, sizeof(path), "%s/cpu%u.raw", rf->cap, cpu);
	rf->fd[cpu] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	return rf->fd[cpu] < 0 ? -errno : rf->fd[cpu];
}

static int put_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct raw_files *rf = ctx;
	int fd = cpu < rf->ncpus ? raw_fd(rf, cpu) : -EINVAL, rc;

	rc = fd < 0 ? fd : tb__write_all(fd, page, size);
	if (rc == 0 && rf->origins)
		rc = origins_add(rf->origins, cpu, rf->w->page_data_at);
	/* the page's blobs as the area holds them now, like the page itself */
	if (rc == 0 && rf->blobs_fd >= 0)
		rc = tb_blob_save_page(rf->ring, page, size, rf->blobs_fd, rf->blobs);
	return rc;
}

int shm_session_blob_store(const char *cap, const struct tb_ring *ring, const struct tb_blob_save_counts *blobs)
{
	char path[PATH_MAX];
	int fd;

	if (!blobs || !tb_ring_blob_size(ring))
		return -1;
	path_fmt(path, sizeof(path), "%s/%s", cap, TB_BLOB_STORE_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

int shm_session_window(const char *cap, struct tb_ring *ring, struct tb_shm_window *w,
		       struct tb_blob_save_counts *blobs, struct shm_origins *origins)
{
	unsigned ncpus = tb_ring_ncpus(ring);
	struct raw_files rf = {cap,   calloc(ncpus, sizeof(int)), ncpus, ring, shm_session_blob_store(cap, ring, blobs),
			       blobs, w, origins};
	int rc = origins ? origins_init(origins, ncpus) : 0;

	if (!rf.fd || rf.blobs_fd < -1 || rc < 0) {
		rc = rc < 0 ? rc : rf.fd ? rf.blobs_fd : -ENOMEM;
		if (rf.blobs_fd >= 0)
			close(rf.blobs_fd);
		free(rf.fd);
		return rc;
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
	return rc;
}

/*
 * tb_ring_to_ns() is linear, so the ns of 2^32 cycles anywhere on it give
 * the rate, which mult keeps with 24 bits of fraction (a 1 GHz TSC is mult
 * 2^24, a 5 GHz one about 3.4e6).
 */
void shm_session_tsc2nsec(const struct tb_ring *ring, uint32_t *mult, uint32_t *shift)
{
	const uint64_t base = 1ull << 40, span = 1ull << 32;
	uint64_t per_span;

	*mult = *shift = 0;
	if (tb_ring_clock(ring) != TB_CLOCK_TSC)
		return;
	per_span = tb_ring_to_ns(ring, base + span) - tb_ring_to_ns(ring, base);
	if (per_span == span) /* uncalibrated: to_ns is the identity */
		return;
	*shift = 24;
	*mult = (uint32_t)((per_span + 128) >> 8); /* ns per cycle << 24 */
}

/* ----------------------------------------------------------- capture */

/*
 * A session's window opened as a capture: the private copy it reads, and
 * what messages about that copy are turned back into.  Owned by the
 * capture (capture_on_close), or freed by the failed open.
 */
struct session_copy {
	struct tb_shm *shm; /* closed with the copy when owned */
	bool owns_shm;
	char region[PATH_MAX]; /* the session's file: what messages name */
	char dir[PATH_MAX];    /* the private copy; removed with it */
	size_t dir_len;
	size_t subbuf;
	struct shm_origins origins; /* where each copied page was read in the region */
	tb_problem_fn *diag;           /* the caller's */
	void *diag_ctx;
};

static void session_copy_free(void *ctx)
{
	struct session_copy *s = ctx;

	if (!s)
		return;
	if (s->dir[0])
		remove_tree(s->dir);
	shm_origins_free(&s->origins);
	if (s->owns_shm)
		tb_shm_close(s->shm);
	free(s);
}

/* The part of file below the private copy ("" for the copy itself), or NULL when file is not in it. */
static const char *in_copy(const struct session_copy *s, const char *file)
{
	if (!file || strncmp(file, s->dir, s->dir_len))
		return NULL;
	file += s->dir_len;
	return *file == '/' ? file + 1 : *file == '\0' ? file : NULL;
}

/*
 * A problem met in the copy, named where it lies in the session (the file
 * the user named): a byte of cpuN.raw is a byte of one of the region's
 * pages; anything else of the copy (a merged description, the copied
 * header of a page) is named as the region, with what of the copy it was.
 */
static void region_diag(void *ctx, const struct tb_problem *d)
{
	const struct session_copy *s = ctx;
	const char *rel = in_copy(s, d->file);
	struct tb_problem moved = *d;
	unsigned cpu;
	char end;
	uint64_t at;

	if (rel) {
		moved.file = s->region;
		moved.offset = 0;
		if (sscanf(rel, "cpu%u.ra%c", &cpu, &end) == 2 && end == 'w' &&
		    shm_origin(&s->origins, cpu, d->offset, s->subbuf, &at))
			moved.offset = at;
		else if (*rel)
			set_reason(&moved, 0, "%s (in its copy's %s, byte %llu)", d->reason, rel,
				   (unsigned long long)d->offset);
	}
	s->diag(s->diag_ctx, &moved);
}

static int say(const struct session_copy *s, int rc, bool warning, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A problem (or a warning) of the session itself, named with its file: rc. */
static int say(const struct session_copy *s, int rc, bool warning, const char *fmt, ...)
{
	struct tb_problem d = {.file = s->region, .warning = warning};
	va_list ap;

	va_start(ap, fmt);
	diag_vset(&d, 0, fmt, ap);
	va_end(ap);
	s->diag(s->diag_ctx, &d);
	return rc;
}

/*
 * An empty cpuN.raw for each of the ring's CPUs whose window had no page:
 * the capture then has every CPU of the ring, as the trace.dat `snapshot`
 * writes of it does (an empty CPU is a CPU that wrote nothing, not none).
 */
static int every_cpu_file(const char *cap, unsigned ncpus)
{
	char path[PATH_MAX];

	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		int fd;
		path_fmt(path, sizeof(path), "%s/cpu%u.raw", cap, cpu);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

/* The window, the descriptions and the counters into s->dir: 0 or a negative errno (said). */
static int write_copy(struct session_copy *s, const char *desc, struct tb_shm_window *w)
{
	struct tb_ring *ring = tb_shm_ring(s->shm);
	struct tb_blob_save_counts blobs = {0};
	int rc, found;

	if ((rc = make_private_dir("session", false, s->dir, sizeof(s->dir))) < 0) {
		s->dir[0] = '\0';
		return say(s, rc, false, "cannot make a private copy of the session: %s", strerror(-rc));
	}
	s->dir_len = strlen(s->dir);
	if ((rc = shm_session_window(s->dir, ring, w, &blobs, &s->origins)) < 0)
		return rc == -EFAULT && *tb_shm_error() ? say(s, rc, false, "%s", tb_shm_error())
							: say(s, rc, false, "cannot copy its pages to %s: %s", s->dir,
							      strerror(-rc));
	if ((rc = every_cpu_file(s->dir, tb_ring_ncpus(ring))) < 0)
		return say(s, rc, false, "cannot copy its pages to %s: %s", s->dir, strerror(-rc));
	if ((found = shm_session_merge_desc(desc, s->dir, ring, s->diag, s->diag_ctx)) < 0)
		return say(s, found, false, "cannot copy its descriptions to %s: %s", s->dir, strerror(-found));
	if (found == 0)
		say(s, 0, true, "no event descriptions in %s: events print without names", desc);
	if ((rc = shm_session_meta("session", s->dir, ring)) < 0)
		return say(s, rc, false, "cannot copy its counters to %s: %s", s->dir, strerror(-rc));
	return 0;
}

/* What the window met that a reader of the region would have met: problems of the capture. */
static void report_window_damage(struct tb_capture *c, const struct session_copy *s, const struct tb_shm_window *w)
{
	if (w->damaged)
		tb_capture_problem(c, s->region, w->damage_at, "%s; rest of the sub-buffer skipped", w->damage);
	if (w->damaged > 1)
		tb_capture_problem(c, s->region, w->damage_at, "%llu more sub-buffers cut short the same way",
				  (unsigned long long)(w->damaged - 1));
	if (w->bad)
		tb_capture_problem(c, s->region, 0, "%llu control words out of range: their data was skipped",
				  (unsigned long long)w->bad);
}

int shm_session_capture(struct tb_shm *shm, bool owns_shm, const char *desc_dir, const struct tb_capture_opts *opts,
			struct tb_capture **out, struct tb_shm_window *w)
{
	struct session_copy *s = calloc(1, sizeof(*s));
	struct tb_capture_opts o = opts ? *opts : (struct tb_capture_opts){0};
	struct tb_shm_window own;
	char desc[PATH_MAX];
	uint32_t mult, shift;
	int rc;

	*out = NULL;
	if (!s) {
		if (owns_shm)
			tb_shm_close(shm);
		return -ENOMEM;
	}
	s->shm = shm;
	s->owns_shm = owns_shm;
	s->diag = o.diag ? o.diag : tb_problem_print;
	s->diag_ctx = o.diag ? o.diag_ctx : NULL;
	s->subbuf = tb_ring_subbuf_size(tb_shm_ring(shm));
	snprintf(s->region, sizeof(s->region), "%s", tb_shm_path(shm));
	if (desc_dir)
		snprintf(desc, sizeof(desc), "%s", desc_dir);
	else
		shm_session_desc_dir(s->region, desc, sizeof(desc));
	if ((rc = write_copy(s, desc, w ? w : &own)) < 0) {
		session_copy_free(s);
		return rc;
	}
	o.diag = region_diag;
	o.diag_ctx = s;
	if ((rc = capture_open_dir(s->dir, &o, out)) < 0) {
		session_copy_free(s);
		return rc;
	}
	capture_on_close(*out, session_copy_free, s);
	shm_session_tsc2nsec(tb_shm_ring(shm), &mult, &shift);
	capture_set_tsc2nsec(*out, mult, shift);
	report_window_damage(*out, s, w ? w : &own);
	return 0;
}
