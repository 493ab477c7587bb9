// SPDX-License-Identifier: MIT
/*
 * capture.c - a struct tb_capture: where raw sub-buffers come from, and
 * what the reading side asks of them.
 *
 * Every capture gives the same thing: per CPU, a sequence of whole
 * sub-buffers in the order the kernel handed them out, plus the schema
 * (header_page, formats, comms, symbols) and the counters (stats) needed
 * to print them.  This file holds what all captures share - problems,
 * formats, clock and metadata, CPUs, queries, serving pages - and the two
 * ways a capture is filled: from files (struct capture_files: a capture
 * directory, capture_dir.c, or a live instance, capture_live.c) or from a
 * struct capture_source (a trace.dat's buffer, src/tracedat).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "blob_store.h"
#include "capture_internal.h"
#include "capture_source.h"
#include "fd_text.h"
#include "util/grow.h"
#include "util/pread_full.h"
#include "diag.h"
#include "diag_defer.h"
#include "ksyms.h"
#include "tsc2nsec.h"
#include "schema_internal.h"
#include "schema_kernel.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"

/* ------------------------------------------------------------ problems */

static void tell(struct tb_capture *c, const struct tb_problem *d)
{
	if (!d->warning)
		c->problems++;
	c->diag(c->diag_ctx, d);
}

/* Keep d for later; told at once (and counted) if there is no memory to keep it. */
static void hold_problem(struct tb_capture *c, const struct tb_problem *d)
{
	struct held_problem *h;

	if (c->nheld == c->held_cap) {
		size_t cap = c->held_cap ? 2 * c->held_cap : 16;
		h = realloc(c->held, cap * sizeof(*h));
		if (!h) {
			tell(c, d);
			return;
		}
		c->held = h;
		c->held_cap = cap;
	}
	h = &c->held[c->nheld];
	memset(h, 0, sizeof(*h));
	h->file = strdup(d->file ? d->file : "");
	if (!h->file) {
		tell(c, d);
		return;
	}
	h->id = c->holding_id;
	h->offset = d->offset;
	memcpy(h->reason, d->reason, sizeof(h->reason));
	c->nheld++;
}

static void forward_diag(void *ctx, const struct tb_problem *d)
{
	struct tb_capture *c = ctx;

	/* Met by a worker reading pages: the reading thread tells it (diag_defer.h). */
	if (diag_defer(forward_diag, ctx, d))
		return;

	if (c->holding) {
		hold_problem(c, d);
		return;
	}
	/* A quiet pass reads the same data again: its problems come later. */
	if (c->quiet)
		return;
	/* kallsyms's problems were met before this one: told first (a failure to keep them, at the end) */
	if (c->kallsyms_job && capture_settle_kallsyms(c) < 0)
		c->kallsyms_rc = -ENOMEM;
	tell(c, d);
}

static void tell_held(struct tb_capture *c, struct held_problem *h, bool warning)
{
	struct tb_problem d = {.file = h->file, .offset = h->offset, .warning = warning};

	h->told = true;
	if (warning)
		snprintf(d.reason, sizeof(d.reason), "%.120s (no record of this event was printed, "
			 "so the report does not need it)", h->reason);
	else
		memcpy(d.reason, h->reason, sizeof(d.reason));
	tell(c, &d);
}

void tb_capture_event_seen(struct tb_capture *c, uint32_t id)
{
	/* A file whose ID could not be read may be the one an unknown event needed. */
	bool unknown = !tb_schema_event(c->schema, id, NULL);

	if (c->quiet)
		return;
	for (size_t i = 0; i < c->nheld; i++)
		if (!c->held[i].told && (c->held[i].id == id || (unknown && c->held[i].id == 0)))
			tell_held(c, &c->held[i], false);
}

/*
 * lazy_formats: the files no record needed were never parsed into the
 * schema, but each was checked when it was read (on two threads, saying
 * nothing: read_found()); the ones not found clean are checked again now,
 * at the end of the report, in the index's order, so that what is wrong in
 * them is still said (as a warning) as it always was.  Not for a live
 * instance, whose thousands of events are not the capture's own.
 */
static int load_event_file(struct tb_capture *c, struct event_file *e, bool keep);

/*
 * fn(ctx, k) for every k below n, once each, on this thread and a helper
 * thread at once (this one alone if none can be had).  Each takes the
 * next k by the counter, relaxed: it only hands out distinct values; what
 * the helper wrote is read after pthread_join(), which orders it before.
 */
struct shared_work {
	void (*fn)(void *ctx, size_t k);
	void *ctx;
	size_t n;
	atomic_size_t next;
};

static void *work_some(void *arg)
{
	struct shared_work *w = arg;
	size_t k;

	while ((k = atomic_fetch_add_explicit(&w->next, 1, memory_order_relaxed)) < w->n)
		w->fn(w->ctx, k);
	return NULL;
}

static void share_work(size_t n, void (*fn)(void *ctx, size_t k), void *ctx)
{
	struct shared_work w = {.fn = fn, .ctx = ctx, .n = n};
	pthread_t helper;
	bool threaded;

	atomic_init(&w.next, 0);
	threaded = n > 1 && pthread_create(&helper, NULL, work_some, &w) == 0;
	work_some(&w);
	if (threaded)
		pthread_join(helper, NULL);
}

static void load_unused(struct tb_capture *c)
{
	for (size_t i = 0; !c->live && i < c->nindex; i++) {
		struct event_file *e = &c->index[i];
		if (!e->loaded && !e->clean && !tb_schema_event(c->schema, e->id, NULL))
			load_event_file(c, e, false);
		e->loaded = true;
	}
}

void tb_capture_warn_unused(struct tb_capture *c)
{
	if (c->quiet)
		return;
	load_unused(c);
	for (size_t i = 0; i < c->nheld; i++)
		if (!c->held[i].told)
			tell_held(c, &c->held[i], true);
}

void tb_capture_problem(struct tb_capture *c, const char *file, uint64_t offset, const char *fmt,
		       ...)
{
	struct tb_problem d = {.file = file ? file : ""};
	va_list ap;

	if (!c || !fmt)
		return;
	va_start(ap, fmt);
	diag_vset(&d, offset, fmt, ap);
	va_end(ap);
	forward_diag(c, &d);
}

void tb_capture_quiet(struct tb_capture *c, bool quiet)
{
	if (c)
		c->quiet = quiet;
}

unsigned long tb_capture_problems(const struct tb_capture *c)
{
	if (!c)
		return 0;
	return c->problems + (c->has_src && c->src.problems ? c->src.problems(c->src.ctx) : 0);
}

/* ---------------------------------------------------------------- files */

char *capture_path_join(const char *a, const char *b)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		return NULL;
	return p;
}

bool capture_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The file is not there (or a part of its path is not a directory). */
bool capture_is_missing(int e)
{
	return e == ENOENT || e == ENOTDIR;
}

const char *capture_file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/*
 * Open an input file for reading.  Every input (tracefs files included) is
 * a regular file: a FIFO would block and a device never end, so anything
 * else is refused and reported (O_NONBLOCK: opening a FIFO must not wait
 * for a writer either).  fd, or -1 with errno set; a missing file is not
 * reported.
 */
static int open_input(struct tb_capture *c, const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e;

	if (fd < 0) {
		e = errno;
		if (!capture_is_missing(e))
			tb_capture_problem(c, path, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, st) < 0) {
		e = errno;
		tb_capture_problem(c, path, 0, "cannot stat: %s", strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		tb_capture_problem(c, path, 0, "this is %s; refused: only regular files are read",
				  capture_file_kind(st->st_mode));
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/*
 * The whole file, NUL-terminated (tracefs files report size 0, so read to
 * EOF).  NULL with errno set; every failure but a missing file is reported
 * here.
 */
static char *slurp(struct tb_capture *c, const char *path, size_t *len)
{
	struct stat st = {0};
	int fd, e;
	char *buf;

	fd = open_input(c, path, &st);
	if (fd < 0)
		return NULL;
	buf = fd_read_text(fd, MAX_TEXT_FILE, len);
	e = errno;
	if (!buf)
		tb_capture_problem(c, path, *len, "cannot read: %s", strerror(e));
	close(fd);
	errno = e;
	return buf;
}

/* Read path and hand it to load(); a missing optional file is no problem. */
int capture_load_file(struct tb_capture *c, const char *path, bool required,
		     int (*load)(struct tb_schema *, const char *, const char *, size_t))
{
	size_t len;
	char *text = slurp(c, path, &len);
	int rc;

	if (!text) {
		if (capture_is_missing(errno) && !required)
			return 0;
		if (capture_is_missing(errno))
			tb_capture_problem(c, path, 0, "cannot read: %s", strerror(errno));
		return -errno;
	}
	rc = load(c->schema, path, text, len);
	free(text);
	return rc;
}

/*
 * Read fd, a regular file of size bytes (fstat's word; -1 when unknown),
 * into buf's room bytes, *n of them read: 0 at the end of the file, 1
 * when room is full and there may be more, or -errno.  A read that
 * returns fewer bytes than asked, having read size, met the end: a
 * regular file of known size takes one read(), not two.
 */
static int read_whole(int fd, char *buf, size_t room, off_t size, size_t *n)
{
	ssize_t r;

	*n = 0;
	while (*n < room) {
		r = read(fd, buf + *n, room - *n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		*n += (size_t)r;
		if (*n < room && (off_t)*n == size)
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ kallsyms */

/* ksyms_fill_fn: the text read already, handed to the job's thread. */
static int hand_over_text(void *ctx, char **buf, size_t *skip, size_t *len)
{
	struct capture_kallsyms *k = ctx;

	*buf = k->buf;
	*skip = 0;
	*len = k->len;
	k->buf = NULL;
	return 0;
}

/*
 * A capture directory's kallsyms (~5 MB): read here, in its turn, straight
 * into the table's buffer (no copy), and parsed on a thread of its own
 * (ksyms_job.h) while the formats are indexed; capture_settle_kallsyms()
 * takes the table and tells the parse's problems before any later problem
 * is told, so they come in the order they always came.  A file of unknown
 * size (or one that grows) is loaded as any text is.  0 or -ENOMEM.
 */
int capture_load_kallsyms(struct tb_capture *c, const char *path)
{
	struct capture_kallsyms k = {0};
	struct stat st;
	int fd = open_input(c, path, &st), rc = 0;
	size_t len;

	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (st.st_size > 0 && (uint64_t)st.st_size < MAX_TEXT_FILE && !(k.buf = tb_ksyms_text_buffer((size_t)st.st_size)))
		rc = -ENOMEM;
	if (k.buf) /* the buffer holds the text and a padding: room for a byte more shows a file that grew */
		rc = read_whole(fd, k.buf, (size_t)st.st_size + 1, st.st_size, &k.len);
	close(fd);
	if (rc < 0 && rc != -ENOMEM)
		tb_capture_problem(c, path, k.len, "cannot read: %s", strerror(-rc));
	if (rc != 0 || !k.buf) {
		free(k.buf);
		if (rc == 0 || rc == 1)
			rc = capture_load_file(c, path, false, tb_schema_load_kallsyms);
		return rc == -ENOMEM ? rc : 0;
	}
	if ((rc = schema_kallsyms_start(c->schema, path, hand_over_text, &k)) < 0) {
		free(k.buf);
		return rc;
	}
	schema_kallsyms_filled(c->schema, &len); /* k is the thread's until then */
	c->kallsyms_job = true;
	return 0;
}

int capture_settle_kallsyms(struct tb_capture *c)
{
	int rc;

	if (!c->kallsyms_job)
		return 0;
	c->kallsyms_job = false;
	rc = schema_kallsyms_settle(c->schema);
	return rc == -ENOMEM ? rc : 0;
}

/* ------------------------------------------------------------- formats */

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int capture_each_entry(struct tb_capture *c, const char *dir, entry_fn *fn, const char *arg)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name), rc = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		if (rc == 0 && strcmp(name, ".") && strcmp(name, ".."))
			rc = fn(c, dir, name, arg);
		free(names[i]);
	}
	free(names);
	return rc;
}

/*
 * Hand one format file's text to the schema (keep) or only check it as
 * the schema would (problems said alike, nothing kept): its problems held
 * under the ID it declares.  Only running out of memory is an error.
 */
static int load_format_text(struct tb_capture *c, const char *path, const char *system, const char *text,
			    size_t len, bool keep)
{
	int rc;

	/* A live format is loaded because a record needs it: its problems count at once. */
	c->holding = !c->live;
	c->holding_id = format_text_id(text, len);
	rc = keep ? tb_schema_load_format(c->schema, path, system, text, len)
		  : schema_check_format(c->schema, path, system, text, len);
	c->holding = false;
	return rc == -ENOMEM ? rc : 0;
}

/* A format file read and handed to the schema (keep), or only checked; as load_format_text(). */
static int load_format_file(struct tb_capture *c, const char *path, const char *system, bool keep)
{
	size_t len;
	char *text;
	int rc;

	c->holding = !c->live; /* what reading it meets is the file's problem too */
	c->holding_id = 0;
	text = slurp(c, path, &len);
	if (!text) {
		if (capture_is_missing(errno))
			tb_capture_problem(c, path, 0, "cannot read: %s", strerror(errno));
		c->holding = false;
		return errno == ENOMEM ? -ENOMEM : 0; /* the event is just unknown; go on */
	}
	rc = load_format_text(c, path, system, text, len, keep);
	free(text);
	return rc;
}

/* An indexed file, read again (its text is not kept: a report meets a few of thousands). */
static int load_event_file(struct tb_capture *c, struct event_file *e, bool keep)
{
	return load_format_file(c, e->path, e->system, keep);
}

static int add_to_index(struct tb_capture *c, uint32_t id, const char *system, char *path);


/*
 * The ID of a format file from its first bytes (the "ID:" line is the
 * second), 0 if they do not show it.  What was read may end inside a
 * line: only whole lines are looked at.
 */
static uint32_t head_id(int fd)
{
	char head[512];
	ssize_t n = read(fd, head, sizeof(head));

	if ((size_t)n == sizeof(head))
		while (n > 0 && head[n - 1] != '\n')
			n--;
	return n > 0 ? format_text_id(head, (size_t)n) : 0;
}

/*
 * The k-th file found, if it is a regular file: its text read whole, its
 * ID taken and the format checked as the schema would (schema_format_clean:
 * saying nothing, the schema untouched - nobody changes it while the two
 * threads read), then dropped; a capture that prints no text (no_symbols:
 * report --count) checks no unused format at its end, so only the first
 * bytes are read, for the ID.  Whatever goes wrong is left to the
 * indexing (f->id 0), which says it.
 */
static void read_found(void *ctx, size_t k)
{
	const struct tb_capture *c = ctx;
	struct format_found *f = &c->found[k];
	struct stat st;
	char *text;
	size_t len;
	/* by its name in its directory: a path looked up once a system, not once a file */
	int fd = f->dirfd >= 0 ? openat(f->dirfd, f->path + f->name_at, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
			       : open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (c->no_symbols)
			f->id = head_id(fd);
		else if ((text = fd_read_text_sized(fd, MAX_TEXT_FILE, st.st_size, &len))) {
			f->id = format_text_id(text, len);
			f->clean = f->id && schema_format_clean(c->schema, f->system, text, len);
			free(text);
		}
	}
	close(fd);
}

/*
 * lazy_formats: a file found, read once (by read_found(), or here, where
 * what is wrong in reading it is said), and indexed by the ID it
 * declares; the format is parsed when a record of the ID is met, or
 * checked again at the end (tb_capture_warn_unused) if it was not found
 * clean.  A file whose ID cannot be read so is loaded now, for the parser
 * to say why.  f's path is taken.
 */
static int index_format_file(struct tb_capture *c, struct format_found *f)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int fd, rc = 0;

	if (!f->id) {
		if ((fd = open_input(c, f->path, &st)) >= 0) {
			text = fd_read_text_sized(fd, MAX_TEXT_FILE, st.st_size, &len);
			rc = text ? 0 : -errno;
			close(fd);
		}
		if (rc == -ENOMEM)
			return rc;
		f->id = text ? format_text_id(text, len) : 0;
		free(text);
	}
	if (!f->id)
		return load_format_file(c, f->path, f->system, true);
	if ((rc = add_to_index(c, f->id, f->system, f->path)) < 0)
		return rc;
	f->path = NULL;
	c->index[c->nindex - 1].clean = f->clean;
	return 0;
}

static void close_found_dirs(struct tb_capture *c)
{
	for (size_t i = 0; i < c->nfound_dirs; i++)
		close(c->found_dirs[i]);
	free(c->found_dirs);
	c->found_dirs = NULL;
	c->nfound_dirs = c->found_dirs_cap = 0;
}

/* lazy_formats: a system's directory, open for reading its files by name; -1 if it cannot be. */
static int open_found_dir(struct tb_capture *c, const char *sysdir)
{
	int *v = tb__grow(c->found_dirs, &c->found_dirs_cap, c->nfound_dirs + 1, sizeof(*v), 64);
	int fd;

	if (!v)
		return -1;
	c->found_dirs = v;
	fd = open(sysdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		c->found_dirs[c->nfound_dirs++] = fd;
	return fd;
}

/*
 * The files the walk found, read and checked on two threads at once
 * (opening, reading and checking thousands of small files is most of a
 * start-up), then indexed here in the walk's order, so that every problem
 * is said as and where it was.  0 or -ENOMEM.
 */
static int index_found(struct tb_capture *c)
{
	int rc = 0;

	share_work(c->nfound, read_found, c);
	for (size_t i = 0; i < c->nfound; i++) {
		if (rc == 0)
			rc = index_format_file(c, &c->found[i]);
		free(c->found[i].path);
		free(c->found[i].system);
	}
	free(c->found);
	c->found = NULL;
	c->nfound = c->found_cap = 0;
	close_found_dirs(c);
	return rc;
}

/* lazy_formats: path (taken), name_at bytes into it the file's name, kept for index_found(). */
static int add_found(struct tb_capture *c, char *path, size_t name_at, const char *system)
{
	struct format_found *f = tb__grow(c->found, &c->found_cap, c->nfound + 1, sizeof(*f), 256);

	if (!f) {
		free(path);
		return -ENOMEM;
	}
	c->found = f;
	f = &c->found[c->nfound];
	*f = (struct format_found){.path = path, .name_at = name_at, .dirfd = c->walk_dirfd, .system = strdup(system)};
	if (!f->system) {
		free(path);
		return -ENOMEM;
	}
	c->nfound++;
	return 0;
}

/* A capture dir holds SYSTEM/EVENT.format files. */
static int load_format_entry(struct tb_capture *c, const char *sysdir, const char *name, const char *system)
{
	size_t len = strlen(name);
	char *path;
	int rc;

	if (name[0] == '.' || len <= 7 || strcmp(name + len - 7, ".format"))
		return 0;
	if (!(path = capture_path_join(sysdir, name)))
		return -ENOMEM;
	if (c->lazy_formats)
		return add_found(c, path, strlen(sysdir) + 1, system);
	rc = load_format_file(c, path, system, true);
	free(path);
	return rc;
}

/* The number in a small tracefs file such as events/SYSTEM/EVENT/id. */
static bool read_number_file(struct tb_capture *c, const char *path, uint32_t *out)
{
	char buf[32], *end;
	struct stat st;
	int fd = open_input(c, path, &st);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	unsigned long v;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int add_to_index(struct tb_capture *c, uint32_t id, const char *system, char *path)
{
	struct event_file *e;

	if (c->nindex == c->index_cap) {
		size_t cap = c->index_cap ? 2 * c->index_cap : 256;
		e = realloc(c->index, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->index = e;
		c->index_cap = cap;
	}
	e = &c->index[c->nindex];
	e->id = id;
	e->system = strdup(system);
	if (!e->system)
		return -ENOMEM;
	e->path = path;
	e->seq = c->nindex;
	e->loaded = false;
	e->clean = false;
	c->nindex++;
	return 0;
}

/*
 * The ID in a format file itself, for the events that have no id file:
 * ftrace's bprint, bputs and raw_data (the ones trace_printk and
 * trace_marker_raw write) among them.
 */
static bool read_format_id(struct tb_capture *c, const char *path, uint32_t *out)
{
	size_t len;
	char *text = slurp(c, path, &len);

	*out = text ? format_text_id(text, len) : 0;
	free(text);
	return *out != 0;
}

/*
 * tracefs holds SYSTEM/EVENT/{id,format}.  A kernel has thousands of events
 * and a trace uses a few, so only the IDs are read now; a format is loaded
 * (and its problems reported) when a record of its ID shows up.
 */
static int index_entry(struct tb_capture *c, const char *sysdir, const char *event, const char *system)
{
	char id_file[PATH_MAX], file[PATH_MAX], *path;
	uint32_t id;
	int rc;

	if (event[0] == '.')
		return 0;
	snprintf(id_file, sizeof(id_file), "%s/%s/id", sysdir, event);
	snprintf(file, sizeof(file), "%s/%s/format", sysdir, event);
	if (!read_number_file(c, id_file, &id) && !read_format_id(c, file, &id))
		return 0;
	if (!(path = strdup(file)))
		return -ENOMEM;
	rc = add_to_index(c, id, system, path);
	if (rc < 0)
		free(path);
	return rc;
}

static int by_id(const void *a, const void *b)
{
	const struct event_file *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The index's order: by ID, then in the order the files were found. */
static int by_id_then_found(const void *a, const void *b)
{
	const struct event_file *x = a, *y = b;

	return by_id(a, b) ? by_id(a, b) : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* tb_format_loader_fn for a live instance. */
static void load_by_id(void *ctx, struct tb_schema *s, uint32_t id)
{
	struct tb_capture *c = ctx;
	struct event_file key = {.id = id};
	struct event_file *e = c->nindex ? bsearch(&key, c->index, c->nindex, sizeof(key), by_id) : NULL;

	(void)s;
	if (e && !e->loaded) {
		load_event_file(c, e, true);
		e->loaded = true;
	}
}

/*
 * Files that claim one ID are loaded now, in the order they were found, so
 * that the schema says which two clash whether or not a record needs them
 * (the first one stays the event).
 */
static int load_claimed_twice(struct tb_capture *c)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i + 1 < c->nindex; i++) {
		size_t j = i;
		while (j + 1 < c->nindex && c->index[j + 1].id == c->index[i].id)
			j++;
		for (size_t k = i; j > i && k <= j && rc == 0; k++) {
			rc = load_event_file(c, &c->index[k], true);
			c->index[k].loaded = true;
		}
		i = j;
	}
	return rc;
}

/* Only running out of memory stops the loading; an unreadable file or directory is an unknown event. */
static int load_system_entry(struct tb_capture *c, const char *dir, const char *system, const char *unused)
{
	char *sysdir;
	int rc = 0;

	(void)unused;
	if (system[0] == '.')
		return 0;
	if (!(sysdir = capture_path_join(dir, system)))
		return -ENOMEM;
	c->walk_dirfd = c->lazy_formats && !c->live ? open_found_dir(c, sysdir) : -1;
	if (capture_is_dir(sysdir))
		rc = capture_each_entry(c, sysdir, c->live ? index_entry : load_format_entry, system);
	c->walk_dirfd = -1;
	free(sysdir);
	return rc == -ENOMEM ? rc : 0;
}

int capture_load_formats(struct tb_capture *c, const char *dir)
{
	int rc = capture_each_entry(c, dir, load_system_entry, NULL);

	if (rc != -ENOMEM)
		rc = 0;
	if (index_found(c) < 0)
		rc = -ENOMEM;
	if (c->nindex) {
		qsort(c->index, c->nindex, sizeof(*c->index), by_id_then_found);
		tb_schema_set_loader(c->schema, load_by_id, c);
	}
	if (rc == 0 && !c->live)
		rc = load_claimed_twice(c);
	return rc;
}

/* ------------------------------------------------------------ metadata */

/*
 * "[local] global counter": the bracketed word; a bare "local" names
 * itself.  "" if there is neither.
 */
static void clock_from_list(const char *text, char *out, size_t size)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
	const char *word = open ? open + 1 : text + strspn(text, " \t");
	size_t n = close ? (size_t)(close - word) : open ? 0 : strcspn(word, " \t\n");

	if (n >= size)
		n = 0;
	memcpy(out, word, n);
	out[n] = '\0';
}

/*
 * What the kernel prints a clock's values as (trace_clocks[].in_ns): most
 * count nanoseconds and print as seconds.microseconds; counter, uptime
 * (jiffies) and the CPU cycle counters print as plain numbers.  A clock not
 * listed could be either, and a wrong guess prints every time stamp wrong.
 */
enum clock_unit { CLOCK_UNKNOWN, CLOCK_NS, CLOCK_COUNT };

static enum clock_unit clock_unit(const char *clock)
{
	static const char *const ns[] = {"local", "global", "perf", "mono", "mono_raw", "boot", "tai"};
	static const char *const counts[] = {"counter", "uptime", "x86-tsc", "ppc-tb"};

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		if (!strcmp(clock, ns[i]))
			return CLOCK_NS;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (!strcmp(clock, counts[i]))
			return CLOCK_COUNT;
	return CLOCK_UNKNOWN;
}

/* The value of "KEY: value" in text, copied to out, *at its offset; false if absent. */
static bool meta_value(const char *text, const char *key, char *out, size_t size, size_t *at)
{
	size_t klen = strlen(key), n;
	const char *p = text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1;
			p += strspn(p, " \t");
			n = strcspn(p, "\n");
			n = n < size ? n : size - 1;
			memcpy(out, p, n);
			out[n] = '\0';
			if (at)
				*at = (size_t)(p - text);
			return true;
		}
	return false;
}

static void read_tracer(struct tb_capture *c, const char *base)
{
	char *path = capture_path_join(base, "current_tracer"), *text;
	size_t len;

	strcpy(c->tracer, "nop");
	text = path ? slurp(c, path, &len) : NULL;
	if (text && text[0] && strcspn(text, "\n") < sizeof(c->tracer)) {
		memcpy(c->tracer, text, strcspn(text, "\n"));
		c->tracer[strcspn(text, "\n")] = '\0';
	}
	free(text);
	free(path);
}

/*
 * The instance's trace_options, as TB_TOPT_* bits (none: the defaults).
 * Words this tracebuf does not know are options that do not change the
 * text, or a newer kernel's: skipped.
 */
static void read_trace_options(struct tb_capture *c, const char *base)
{
	char *path = capture_path_join(base, "trace_options"), *text;
	size_t len;

	c->trace_options = 0;
	text = path ? slurp(c, path, &len) : NULL;
	if (text)
		tb_topt_apply(text, false, &c->trace_options, NULL, NULL);
	free(text);
	free(path);
}

/*
 * The trace clock: the caller's (tb_capture_opts.clock), else meta.txt's
 * trace_clock line, else the trace_clock file (a live instance has one).
 * Without a clock whose unit is known the time stamps cannot be printed,
 * so that is an error rather than a guess.
 */
static int read_clock(struct tb_capture *c, const char *meta_text, const char *meta_path)
{
	char *path = capture_path_join(c->dir, "trace_clock"), *text = NULL, value[256];
	const char *from = c->clock_given ? c->dir : meta_path;
	size_t len, at = 0;
	int rc = 0;

	if (!path)
		return -ENOMEM;
	if (c->clock_given)
		snprintf(c->clock, sizeof(c->clock), "%s", c->clock_given);
	else if (meta_text && meta_value(meta_text, "trace_clock", value, sizeof(value), &at))
		clock_from_list(value, c->clock, sizeof(c->clock));
	if (!c->clock[0] && !c->clock_given && (text = slurp(c, path, &len))) {
		clock_from_list(text, c->clock, sizeof(c->clock));
		from = path;
		at = 0;
	}
	if (!c->clock[0]) {
		tb_capture_problem(c, c->dir, 0, "no trace clock: neither a trace_clock line in meta.txt "
				  "nor a trace_clock file says which clock stamped the events, so their "
				  "times cannot be printed (name it, e.g. report --clock local)");
		rc = -EINVAL;
	} else if (clock_unit(c->clock) == CLOCK_UNKNOWN) {
		tb_capture_problem(c, from, at, "trace clock '%s' is not one tracebuf knows: whether its "
				  "values are nanoseconds or counts is unknown, so times cannot be printed",
				  c->clock);
		rc = -EINVAL;
	}
	c->clock_ns = clock_unit(c->clock) == CLOCK_NS;
	free(text);
	free(path);
	return rc;
}

/* Clock and #P: meta.txt of a capture, or the instance's own files. */
static int read_meta(struct tb_capture *c)
{
	char *meta = c->live ? NULL : capture_path_join(c->dir, "meta.txt");
	char *text = meta ? slurp(c, meta, &(size_t){0}) : NULL, value[256] = "";
	struct utsname uts;
	int rc;

	if (text && meta_value(text, "ncpus", value, sizeof(value), NULL) && atoi(value) > 0)
		c->online_cpus = atoi(value);
	if (text && meta_value(text, "kernel", c->release, sizeof(c->release), NULL))
		tb_schema_trust_running_btf(c->schema, c->release); /* a capture without constants */
	else if (c->live && uname(&uts) == 0)
		snprintf(c->release, sizeof(c->release), "%s", uts.release);
	rc = read_clock(c, text, meta);
	free(text);
	free(meta);
	if (c->live)
		c->online_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (c->online_cpus <= 0)
		c->online_cpus = c->slots;
	read_tracer(c, c->dir);
	read_trace_options(c, c->dir);
	return rc;
}

/* --------------------------------------------------------------- stats */

/* A kernel per_cpu/cpuN/stats file, or its copy in a capture directory. */
void capture_read_stats(struct tb_capture *c, struct cpu_source *cpu, const char *path)
{
	struct tb_problem d = {.file = path};
	size_t len;
	char *text = slurp(c, path, &len);

	if (!text)
		return;
	cpu->have_stats = tb_stats_parse_kernel(text, &cpu->stats, &d) == 0;
	if (!cpu->have_stats)
		tb_capture_problem(c, path, d.offset, "%s", d.reason);
	free(text);
}

/* ---------------------------------------------------------------- CPUs */

int capture_add_cpu(struct tb_capture *c, int cpu, char *path)
{
	if (cpu >= c->slots) {
		struct cpu_source *grown = realloc(c->cpus, (size_t)(cpu + 1) * sizeof(*grown));
		if (!grown) {
			free(path);
			return -ENOMEM;
		}
		memset(grown + c->slots, 0, (size_t)(cpu + 1 - c->slots) * sizeof(*grown));
		for (int i = c->slots; i <= cpu; i++)
			grown[i].fd = -1;
		c->cpus = grown;
		c->slots = cpu + 1;
	}
	c->cpus[cpu].path = path;
	c->ncpu_files++;
	return 0;
}

/*
 * "cpuN" + suffix exactly, N a plain decimal: N, CPU_TOO_HIGH when N is
 * MAX_CPUS or more, else -1.
 */
int capture_cpu_number(const char *name, const char *suffix)
{
	size_t digits = strspn(name + 3, "0123456789");
	char *end;
	long n;

	if (strncmp(name, "cpu", 3) || digits == 0 || (name[3] == '0' && digits > 1) ||
	    strcmp(name + 3 + digits, suffix))
		return -1;
	if (digits > 6)
		return CPU_TOO_HIGH;
	n = strtol(name + 3, &end, 10);
	return n < MAX_CPUS ? (int)n : CPU_TOO_HIGH;
}

/*
 * A report holds one sub-buffer per CPU at once; refuse a capture whose
 * CPUs would need more than MAX_PAGE_MEMORY for them (thousands of raw
 * files of big sub-buffers) rather than run out of memory half-way.
 */
static int check_page_memory(struct tb_capture *c)
{
	uint64_t need = (uint64_t)c->ncpu_files * c->subbuf;

	if (need <= MAX_PAGE_MEMORY)
		return 0;
	tb_capture_problem(c, c->dir, 0, "%d CPUs with %zu-byte sub-buffers need %llu MiB of page "
			  "buffers, more than the %u MiB this reader allows; refused", c->ncpu_files,
			  c->subbuf, (unsigned long long)(need >> 20), MAX_PAGE_MEMORY >> 20);
	return -E2BIG;
}

static int find_cpus(struct tb_capture *c)
{
	int rc = c->files->find_cpus(c);

	return rc < 0 ? rc : check_page_memory(c);
}

/* ---------------------------------------------------------------- open */

static int capture_init(struct tb_capture *c, const char *dir, const struct capture_files *files,
			const struct tb_capture_opts *o)
{
	c->diag = o && o->diag ? o->diag : tb_problem_print;
	c->diag_ctx = o && o->diag ? o->diag_ctx : NULL;
	c->dir = strdup(dir);
	/* "dir/" would make every message say "dir//file". */
	for (size_t n = c->dir ? strlen(c->dir) : 0; n > 1 && c->dir[n - 1] == '/'; n--)
		c->dir[n - 1] = '\0';
	c->prefix = strdup(o && o->prefix ? o->prefix : "");
	c->clock_given = o && o->clock ? strdup(o->clock) : NULL;
	c->lazy_formats = o && o->lazy_formats;
	c->no_symbols = o && o->no_symbols;
	c->schema = tb_schema_new();
	if (!c->dir || !c->prefix || !c->schema || (o && o->clock && !c->clock_given))
		return -ENOMEM;
	c->files = files;
	c->live = files->live;
	c->walk_dirfd = -1;
	tb_schema_set_problem_fn(c->schema, forward_diag, c);
	return 0;
}

/* Each slot's CPU and buffer, for a capture over several buffers. */
static int name_slots(struct tb_capture *c, const struct capture_desc *desc)
{
	int n = desc->slots > 0 ? desc->slots : 1;

	c->slot_cpu = calloc((size_t)n, sizeof(*c->slot_cpu));
	c->slot_buffer = calloc((size_t)n, sizeof(*c->slot_buffer));
	if (!c->slot_cpu || !c->slot_buffer)
		return -ENOMEM;
	for (int i = 0; i < desc->slots; i++, c->nslot_names++) {
		c->slot_cpu[i] = desc->slot_cpu[i];
		if (!(c->slot_buffer[i] = strdup(desc->slot_buffer[i] ? desc->slot_buffer[i] : "")))
			return -ENOMEM;
	}
	return 0;
}

int capture_open_source(const struct capture_desc *desc, const struct capture_source *src,
			const struct tb_capture_opts *opts, struct tb_capture **out)
{
	struct tb_capture *c = calloc(1, sizeof(*c));
	const char *clock = desc->clock ? desc->clock : opts ? opts->clock : NULL;
	int rc = 0;

	*out = NULL;
	if (!c) {
		src->close(src->ctx);
		return -ENOMEM;
	}
	c->has_src = true;
	c->src = *src;
	c->schema = desc->schema;
	c->diag = opts && opts->diag ? opts->diag : tb_problem_print;
	c->diag_ctx = opts && opts->diag ? opts->diag_ctx : NULL;
	c->dir = strdup(desc->name);
	c->prefix = strdup("");
	c->subbuf = tb_schema_subbuf_size(desc->schema);
	c->online_cpus = desc->online_cpus > 0 ? desc->online_cpus : desc->slots;
	snprintf(c->tracer, sizeof(c->tracer), "%s", desc->tracer ? desc->tracer : "nop");
	snprintf(c->clock, sizeof(c->clock), "%s", clock ? clock : "");
	c->clock_ns = clock_unit(c->clock) == CLOCK_NS;
	if (desc->tsc2nsec_mult && desc->tsc2nsec_shift < 64) {
		c->tsc_mult = desc->tsc2nsec_mult;
		c->tsc_shift = desc->tsc2nsec_shift;
	}
	if (!c->dir || !c->prefix)
		rc = -ENOMEM;
	if (rc == 0 && desc->slot_cpu)
		rc = name_slots(c, desc);
	for (int i = 0; rc == 0 && i < desc->slots; i++) {
		if (!desc->has_cpu[i])
			continue;
		if ((rc = capture_add_cpu(c, i, strdup(desc->name))) < 0)
			break;
		free(c->cpus[i].page); /* the source lends its own pages */
		c->cpus[i].page = NULL;
		if (desc->stats && desc->stats[i]) {
			c->cpus[i].stats = *desc->stats[i];
			c->cpus[i].have_stats = true;
		}
	}
	if (rc == 0 && clock_unit(c->clock) == CLOCK_UNKNOWN) {
		tb_capture_problem(c, c->dir, 0, "trace clock '%s' is not one tracebuf knows: whether "
				  "its values are nanoseconds or counts is unknown, so times cannot be "
				  "printed (name it, e.g. report --clock local)", c->clock);
		rc = -EINVAL;
	}
	if (rc < 0) {
		tb_capture_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int capture_open_files(const char *dir, const struct capture_files *files, const struct tb_capture_opts *opts,
		       struct tb_capture **out)
{
	struct tb_capture *c;
	int rc;

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	rc = capture_init(c, dir, files, opts);
	if (rc == 0)
		rc = files->load_schema(c);
	if (rc == 0 && !(c->subbuf = tb_schema_subbuf_size(c->schema)))
		rc = -EINVAL;
	if (rc == 0)
		rc = find_cpus(c);
	if (rc == 0)
		rc = read_meta(c);
	if (rc == 0 && files->finish_open)
		rc = files->finish_open(c);
	if (rc < 0) {
		tb_capture_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

static void blob_problem(void *ctx, const char *file, uint64_t offset, const char *reason)
{
	tb_capture_problem(ctx, file, offset, "%s", reason);
}

void capture_set_blobs(struct tb_capture *c, struct blob_store *bs)
{
	blob_store_free(c->blobs);
	c->blobs = bs;
	if (bs)
		blob_store_set_problem(bs, blob_problem, c);
}

struct blob_store *capture_blobs(const struct tb_capture *c)
{
	return c ? c->blobs : NULL;
}

void capture_set_tsc2nsec(struct tb_capture *c, uint32_t mult, uint32_t shift)
{
	c->tsc_mult = shift < 64 ? mult : 0;
	c->tsc_shift = shift < 64 ? shift : 0;
}

void capture_on_close(struct tb_capture *c, void (*fn)(void *ctx), void *ctx)
{
	c->on_close = fn;
	c->on_close_ctx = ctx;
}

void tb_capture_close(struct tb_capture *c)
{
	if (!c)
		return;
	if (c->has_src) {
		c->src.close(c->src.ctx);
		c->schema = NULL; /* the source's */
	}
	for (int i = 0; i < c->slots; i++) {
		if (c->cpus[i].fd >= 0)
			close(c->cpus[i].fd);
		free(c->cpus[i].path);
		free(c->cpus[i].page);
		free(c->cpus[i].refusal);
	}
	free(c->cpus);
	for (size_t i = 0; i < c->nindex; i++) {
		free(c->index[i].system);
		free(c->index[i].path);
	}
	free(c->index);
	for (size_t i = 0; i < c->nheld; i++)
		free(c->held[i].file);
	free(c->held);
	free(c->clock_given);
	for (int i = 0; i < c->nslot_names; i++)
		free(c->slot_buffer[i]);
	free(c->slot_buffer);
	free(c->slot_cpu);
	blob_store_free(c->blobs);
	tb_schema_free(c->schema);
	free(c->dir);
	free(c->root);
	free(c->prefix);
	if (c->on_close)
		c->on_close(c->on_close_ctx);
	free(c);
}

/* ------------------------------------------------------------- queries */

/* The queries answer 0, false, NULL or "nop" for a NULL capture. */
bool tb_capture_is_live(const struct tb_capture *c)
{
	return c && c->live;
}

uint64_t tb_capture_data_bytes(const struct tb_capture *c)
{
	uint64_t total = 0;
	struct stat st;

	for (int i = 0; c && !c->live && i < c->slots; i++)
		if (c->cpus[i].path && stat(c->cpus[i].path, &st) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	return total;
}

int tb_capture_cpu_slots(const struct tb_capture *c)
{
	return c ? c->slots : 0;
}

bool tb_capture_has_cpu(const struct tb_capture *c, int cpu)
{
	return c && cpu >= 0 && cpu < c->slots && c->cpus[cpu].path;
}

int tb_capture_slot_cpu(const struct tb_capture *c, int slot)
{
	if (!c || slot < 0)
		return -EINVAL;
	return slot < c->nslot_names ? c->slot_cpu[slot] : slot;
}

const char *tb_capture_slot_buffer(const struct tb_capture *c, int slot)
{
	if (!c || slot < 0)
		return NULL;
	return slot < c->nslot_names ? c->slot_buffer[slot] : "";
}

bool tb_capture_has_buffers(const struct tb_capture *c)
{
	for (int i = 0; c && i < c->nslot_names; i++)
		if (c->slot_buffer[i][0])
			return true;
	return false;
}

int tb_capture_online_cpus(const struct tb_capture *c)
{
	return c ? c->online_cpus : 0;
}

size_t tb_capture_subbuf_size(const struct tb_capture *c)
{
	return c ? c->subbuf : 0;
}

const char *tb_capture_kernel_version(const struct tb_capture *c)
{
	return c ? c->release : "";
}

unsigned tb_capture_trace_options(const struct tb_capture *c)
{
	return c ? c->trace_options : 0;
}

const char *tb_capture_tracer(const struct tb_capture *c)
{
	return c ? c->tracer : "nop";
}

bool tb_capture_clock_is_ns(const struct tb_capture *c)
{
	return c && c->clock_ns;
}

bool tb_capture_tsc2nsec(const struct tb_capture *c, uint32_t *mult, uint32_t *shift)
{
	if (!c || !c->tsc_mult)
		return false;
	*mult = c->tsc_mult;
	*shift = c->tsc_shift;
	return true;
}

uint64_t tb_capture_ts_ns(const struct tb_capture *c, uint64_t ts)
{
	return c ? tsc2nsec(ts, c->tsc_mult, c->tsc_shift) : ts;
}

const char *tb_capture_clock(const struct tb_capture *c)
{
	return c->clock;
}

struct tb_schema *tb_capture_schema(struct tb_capture *c)
{
	return c ? c->schema : NULL;
}

int tb_capture_cpu_stats(const struct tb_capture *c, int cpu, struct tb_cpu_stats *out)
{
	if (!c || !out)
		return -EINVAL;
	if (!tb_capture_has_cpu(c, cpu) || !c->cpus[cpu].have_stats)
		return -ENOENT;
	*out = c->cpus[cpu].stats;
	return 0;
}

/* --------------------------------------------------------------- pages */

void capture_refuse(struct cpu_source *s, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s->refusal, fmt, ap) < 0)
		s->refusal = NULL;
	va_end(ap);
	if (!s->refusal)
		s->refusal = strdup("refused");
	s->refusal_offset = offset;
}

/*
 * Open a CPU's page source.  A capture with more raw files than the process
 * may hold open closes another CPU's file (pread at a kept offset, so it is
 * simply opened again when needed); a live buffer's files stay open.
 */
static int open_raw(struct tb_capture *c, const char *path)
{
	int victim = 0, fd;

	while ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 &&
	       (errno == EMFILE || errno == ENFILE) && !c->live) {
		while (victim < c->slots && c->cpus[victim].fd < 0)
			victim++;
		if (victim == c->slots)
			break;
		close(c->cpus[victim].fd);
		c->cpus[victim].fd = -1;
	}
	return fd;
}

/* The first open: only a regular file is read, and a capture file must fit the sub-buffer size. */
static void check_source(struct tb_capture *c, struct cpu_source *s)
{
	struct stat st;

	s->checked = true;
	if (fstat(s->fd, &st) < 0) {
		capture_refuse(s, 0, "cannot stat: %s", strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		capture_refuse(s, 0, "this is %s; refused: only regular files are read",
			       capture_file_kind(st.st_mode));
		return;
	}
	if (c->files->first_open)
		c->files->first_open(c, s, &st);
}

static int open_source(struct tb_capture *c, struct cpu_source *s)
{
	s->fd = open_raw(c, s->path);
	if (s->fd < 0) {
		int e = errno;
		s->done = true;
		if (c->live && e == ENODEV)
			return 0; /* a possible but offline CPU has no buffer */
		tb_capture_problem(c, s->path, 0, "cannot open: %s", strerror(e));
		return -e;
	}
	if (!s->checked)
		check_source(c, s);
	return 0;
}

bool capture_pread_whole(int fd, void *buf, size_t n, uint64_t off)
{
	int error;

	return tb__pread_full(fd, buf, n, off, &error) == n;
}

/*
 * Before reading a CPU's file: open it (again), say why it is refused.  1
 * when it may be read, else what tb_capture_next_page() returns.
 */
static int ready_to_read(struct tb_capture *c, struct cpu_source *s)
{
	int rc;

	if (s->done)
		return 0;
	if (s->fd < 0 && (rc = open_source(c, s)) < 0)
		return rc;
	if (s->done)
		return 0;
	if (s->refusal) {
		s->done = true;
		close(s->fd);
		s->fd = -1;
		tb_capture_problem(c, s->path, s->refusal_offset, "%s", s->refusal);
		return -EINVAL;
	}
	return 1;
}

int tb_capture_next_page(struct tb_capture *c, int cpu, struct tb_capture_page *page)
{
	struct cpu_source *s;
	int rc;

	if (!c || !page)
		return -EINVAL;
	if (!tb_capture_has_cpu(c, cpu))
		return 0;
	if (c->has_src)
		return c->src.next_page(c->src.ctx, cpu, page);
	s = &c->cpus[cpu];
	if ((rc = ready_to_read(c, s)) <= 0)
		return rc;
	if (!s->page && !(s->page = malloc(c->files->page_room ? c->files->page_room(c) : c->subbuf)))
		return -ENOMEM;
	rc = c->files->next_page(c, s);
	if (rc <= 0) {
		s->done = true;
		s->dry = c->live && rc == 0;
		return rc;
	}
	page->data = s->page + s->lent;
	page->size = c->subbuf;
	page->file = s->path;
	page->file_offset = s->offset;
	s->offset += c->subbuf;
	return 1;
}

/* Any other source: its pages one at a time, each copied into buf. */
static int copy_pages(struct tb_capture *c, int cpu, uint8_t *buf, size_t room, size_t max_pages,
		      capture_page_fn *got, void *got_ctx)
{
	size_t n = 0, bytes = 0;
	struct tb_capture_page p;
	int rc = 0;

	while (n < max_pages && (rc = tb_capture_next_page(c, cpu, &p)) == 1) {
		if (p.size > room - bytes)
			return n ? (int)n : -ENOSPC; /* never: the capture's pages are all subbuf bytes */
		memcpy(buf + bytes, p.data, p.size);
		p.data = buf + bytes;
		got(got_ctx, &p);
		bytes += p.size;
		n++;
		if (room - bytes < c->subbuf)
			break;
	}
	return n ? (int)n : rc;
}

int capture_read_pages(struct tb_capture *c, int cpu, uint8_t *buf, size_t room, size_t max_pages,
		       capture_page_fn *got, void *got_ctx)
{
	struct cpu_source *s;
	int rc;

	if (!c || !buf || !got)
		return -EINVAL;
	if (!tb_capture_has_cpu(c, cpu) || max_pages == 0)
		return 0;
	if (room < c->subbuf || c->subbuf == 0)
		return -ENOSPC;
	if (c->has_src && c->src.read_pages)
		return c->src.read_pages(c->src.ctx, cpu, buf, room, max_pages, got, got_ctx);
	if (c->has_src || !c->files->read_run)
		return copy_pages(c, cpu, buf, room, max_pages, got, got_ctx);
	s = &c->cpus[cpu];
	if ((rc = ready_to_read(c, s)) <= 0)
		return rc;
	return c->files->read_run(c, s, buf, room, max_pages, got, got_ctx);
}

int tb_capture_resume(struct tb_capture *c)
{
	if (!c)
		return -EINVAL;
	if (!c->live || c->has_src)
		return -ESPIPE;
	for (int i = 0; i < c->slots; i++)
		if (c->cpus[i].dry)
			c->cpus[i].done = c->cpus[i].dry = false;
	return 0;
}

int tb_capture_rewind(struct tb_capture *c)
{
	if (!c)
		return -EINVAL;
	if (c->live)
		return -ESPIPE;
	if (c->has_src)
		return c->src.rewind(c->src.ctx);
	for (int i = 0; i < c->slots; i++) {
		c->cpus[i].offset = 0;
		c->cpus[i].page_len = 0; /* read again: the file may have changed */
		c->cpus[i].done = false;
	}
	return 0;
}
