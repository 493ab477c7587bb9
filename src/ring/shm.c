// SPDX-License-Identifier: MIT
/*
 * shm.c - a ring's region in a shared-memory file: created by one process,
 * written by many, read by another (tracebuf/shm.h).
 *
 * Cross-process rules (docs/design.md §10):
 *
 *   The region is position independent (offsets only), so each process maps
 *   it wherever it likes.  Every word a writer stores is one the heap ring
 *   has it store: rseq sections are per real CPU whatever the process, so
 *   two processes on one CPU exclude each other exactly as two threads do.
 *
 *   The header is written once, by the creator, before the path is shown
 *   to anybody.  A reader copies it into a private page mapped over the
 *   shared one and checks that copy (tb__region_check): every offset and
 *   size the reader later derives comes from checked, private numbers, so
 *   a writer scribbling over the header cannot move the reader's view.
 *   The control blocks and pages stay shared; every index a reader takes
 *   from them is range-checked where it is used (shm_window.c, reader.c).
 *
 *   A memfd is sealed against shrinking and growing before its path is
 *   handed out, so the reader's mapping never loses its backing (no
 *   SIGBUS).  A named file cannot be sealed: recovery copies it into
 *   private memory with read(2), which a shrinking file cannot fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/pread_full.h"
#include "ring_internal.h"
#include "tracebuf/shm.h"

_Static_assert(sizeof(struct tb_region) <= 4096, "the header fits the private page a reader maps");

struct tb_shm {
	int fd;
	void *mem;
	size_t size;
	int named;    /* made here as a named file: tb_shm_unlink may remove it */
	int unsealed; /* a named file (ours or attached): it may shrink under the mapping */
	struct tb_ring *ring;
	char path[PATH_MAX];
};

/*
 * The thread's last message: allocated at its first error and freed at its
 * exit, not a TLS array, so that the library's TLS stays a few hundred
 * bytes (inflight.c says why).  No write path makes a message.  NULL: no
 * message yet (or no memory for one): tb_shm_error() says "".
 */
#define ERR_SIZE (PATH_MAX + 128)
static _Thread_local char *shm_err;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void err_free(void *buf)
{
	free(buf);
	shm_err = NULL; /* destructors run in the exiting thread: its own pointer */
}

static void err_key_make(void)
{
	pthread_key_create(&err_key, err_free);
}

static __attribute__((format(printf, 1, 2))) void set_err(const char *fmt, ...)
{
	va_list ap;

	if (!shm_err) {
		pthread_once(&err_once, err_key_make);
		if (!(shm_err = malloc(ERR_SIZE)))
			return;
		pthread_setspecific(err_key, shm_err);
	}
	va_start(ap, fmt);
	vsnprintf(shm_err, ERR_SIZE, fmt, ap);
	va_end(ap);
}

const char *tb_shm_error(void)
{
	return shm_err ? shm_err : "";
}

static int say(int rc, const char *path, const char *what)
{
	set_err("%s: %s", path ? path : "(memfd)", what);
	return rc;
}

int tb_shm_check(const void *mem, size_t size, const char **why)
{
	struct tb_region copy;

	*why = NULL;
	if (!mem || size < sizeof(copy)) {
		*why = "shorter than the region header";
		return -EINVAL;
	}
	memcpy(&copy, mem, sizeof(copy)); /* one read of the header; the checks see only this */
	return tb__region_check(&copy, size, why);
}

static struct tb_shm *shm_new(void)
{
	struct tb_shm *s = calloc(1, sizeof(*s));

	if (s)
		s->fd = -1;
	return s;
}

void tb_shm_close(struct tb_shm *s)
{
	if (!s)
		return;
	tb_ring_free(s->ring);
	if (s->mem && s->mem != MAP_FAILED)
		munmap(s->mem, s->size);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

struct tb_ring *tb_shm_ring(const struct tb_shm *s)
{
	return s ? s->ring : NULL;
}

const char *tb_shm_path(const struct tb_shm *s)
{
	return s ? s->path : NULL;
}

int tb_shm_unlink(const struct tb_shm *s)
{
	if (!s || !s->named)
		return -EINVAL;
	return unlink(s->path) < 0 ? -errno : 0;
}

/* The creator's file: memfd, or a new named file; 0600, or 0660 for a group. */
static int create_file(struct tb_shm *s, const struct tb_shm_opts *o)
{
	mode_t mode = o->has_group ? 0660 : 0600;

	if (o->path) {
		s->fd = open(o->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		s->named = s->unsealed = 1;
		snprintf(s->path, sizeof(s->path), "%s", o->path);
	} else {
		s->fd = memfd_create("tracebuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		snprintf(s->path, sizeof(s->path), "/proc/%d/fd/%d", (int)getpid(), s->fd);
	}
	if (s->fd < 0)
		return say(-errno, o->path, strerror(errno));
	/* umask may have taken bits away; a memfd starts 0777: say exactly what we mean */
	if (fchmod(s->fd, mode) < 0 || (o->has_group && fchown(s->fd, (uid_t)-1, o->group) < 0))
		return say(-errno, s->path, strerror(errno));
	return 0;
}

/*
 * Map the whole file shared.  A writer's page tables are filled now (the
 * write path must not fault); a reader's fill as it reads: a snapshot
 * touches each page once, and filling 64 MiB of tables up front was a
 * sixth of its time.
 */
static int map_shared(struct tb_shm *s, size_t size, int populate)
{
	s->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), s->fd, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		return say(-errno, s->path, strerror(errno));
	}
	s->size = size;
	return 0;
}

int tb_shm_open(const struct tb_shm_opts *o, struct tb_shm **out)
{
	struct tb_ring_opts ro;
	struct tb_shm *s;
	size_t size;
	int rc;

	if (!o || !out)
		return -EINVAL;
	*out = NULL;
	if (o->ring)
		ro = *o->ring;
	else
		tb_ring_opts_default(&ro);
	ro.mem = NULL;
	size = tb_ring_region_size(&ro);
	if (!size)
		return say(-EINVAL, o->path, "invalid ring options");
	if (!(s = shm_new()))
		return -ENOMEM;
	rc = create_file(s, o);
	/* allocate the memory now: the write path must not be the one to allocate it */
	if (rc == 0 && (ftruncate(s->fd, (off_t)size) < 0 || fallocate(s->fd, 0, 0, (off_t)size) < 0))
		rc = say(-errno, s->path, strerror(errno));
	if (rc == 0)
		rc = map_shared(s, size, 1);
	if (rc == 0) {
		ro.mem = s->mem;
		ro.mem_size = size;
		rc = tb_ring_new(&s->ring, &ro);
	}
	if (rc == 0)
		tb__count_ring_file(s->ring, s->fd); /* its writers' slots are locked through a description of s->fd's file */
	if (rc == 0 && !s->named &&
	    fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		rc = say(-errno, s->path, "cannot seal");
	if (rc < 0) {
		if (s->named && s->fd >= 0)
			unlink(s->path);
		tb_shm_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The file's size and its header, read with pread: nothing mapped yet. */
static int read_header(struct tb_shm *s, struct tb_region *hdr, size_t *file_size)
{
	struct stat st;
	const char *why;
	ssize_t n;

	if (fstat(s->fd, &st) < 0)
		return say(-errno, s->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return say(-EINVAL, s->path, "not a regular file");
	*file_size = (size_t)st.st_size;
	n = pread(s->fd, hdr, sizeof(*hdr), 0);
	if (n < 0)
		return say(-errno, s->path, strerror(errno));
	if ((size_t)n < sizeof(*hdr))
		return say(-EINVAL, s->path, "offset 0: shorter than the region header");
	if (tb__region_check(hdr, *file_size, &why) < 0) {
		set_err("%s: offset 0: not a usable tracebuf region: %s", s->path, why);
		return -EINVAL;
	}
	return 0;
}

/*
 * A memfd (a file with no name: nlink 0) handed to a reader must be sealed
 * against shrinking; a named file cannot be sealed, and is read knowing it.
 */
static int check_seals(struct tb_shm *s)
{
	struct stat st;
	int seals;

	if (fstat(s->fd, &st) < 0)
		return say(-errno, s->path, strerror(errno));
	s->unsealed = st.st_nlink > 0;
	if (s->unsealed)
		return 0;
	seals = fcntl(s->fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return say(-EPERM, s->path, "unnamed shared memory not sealed against shrinking");
	return 0;
}

/*
 * The reader's header: a private page over the shared one, holding the
 * copy that was checked.  Nothing the reader derives can change after.
 */
static int privatise_header(struct tb_shm *s, const struct tb_region *hdr)
{
	void *p = mmap(s->mem, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED)
		return say(-errno, s->path, strerror(errno));
	memcpy(p, hdr, sizeof(*hdr));
	return 0;
}

/* A handle on path opened with flags, its header read and checked: 0 or -errno (s freed). */
static int open_checked(const char *path, int flags, struct tb_shm **out, struct tb_region *hdr)
{
	struct tb_shm *s;
	size_t file_size;
	int rc;

	if (shm_err)
		shm_err[0] = '\0';
	if (!(s = shm_new()))
		return -ENOMEM;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->fd = open(path, flags | O_CLOEXEC);
	rc = s->fd < 0 ? say(-errno, path, strerror(errno)) : read_header(s, hdr, &file_size);
	if (rc < 0) {
		tb_shm_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The ring handle over s's memory, and s handed out; on an earlier error (rc) s is freed. */
static int finish_open(struct tb_shm *s, int rc, struct tb_shm **out)
{
	if (rc == 0)
		rc = tb__ring_attach(&s->ring, s->mem);
	if (rc < 0) {
		tb_shm_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int tb__shm_shrank(struct tb_shm *s)
{
	struct stat st;

	if (fstat(s->fd, &st) < 0)
		return say(-EFAULT, s->path, "the mapping lost its backing while it was read");
	set_err("%s: the file shrank to %lld bytes while it was read (the region needs %zu): "
		"another process truncated it",
		s->path, (long long)st.st_size, s->size);
	return -EFAULT;
}

int tb__shm_read(struct tb_shm *s, void *dst, size_t len, uint64_t off)
{
	int error;

	if (tb__pread_full(s->fd, dst, len, off, &error) == len)
		return 0;
	return error ? -error : -EFAULT;
}

struct guarded_call {
	int (*fn)(void *ctx);
	void *ctx;
};

static int call_it(void *arg)
{
	struct guarded_call *c = arg;

	return c->fn(c->ctx);
}

int tb_shm_guard(struct tb_shm *s, int (*fn)(void *ctx), void *ctx)
{
	struct guarded_call c = {fn, ctx};
	int rc, faulted;

	if (!s || !fn)
		return -EINVAL;
	if (!s->unsealed)
		return fn(ctx); /* sealed: it cannot shrink */
	rc = tb__sigbus_guarded(s->mem, s->size, call_it, &c, &faulted);
	return faulted ? tb__shm_shrank(s) : rc;
}

int tb_shm_attach(const char *path, enum tb_shm_mode mode, struct tb_shm **out)
{
	struct tb_region hdr;
	struct tb_shm *s;
	int rc;

	if (!path || !out || (mode != TB_SHM_WRITER && mode != TB_SHM_READER))
		return -EINVAL;
	*out = NULL;
	if ((rc = open_checked(path, O_RDWR, &s, &hdr)) < 0)
		return rc;
	if (mode == TB_SHM_READER)
		rc = check_seals(s);
	if (rc == 0)
		rc = map_shared(s, (size_t)hdr.size, mode == TB_SHM_WRITER);
	if (rc == 0 && mode == TB_SHM_READER)
		rc = privatise_header(s, &hdr);
	rc = finish_open(s, rc, out);
	if (rc == 0 && mode == TB_SHM_WRITER)
		tb__count_ring_file((*out)->ring, (*out)->fd); /* as tb_shm_open's */
	/* a named file is not sealed (st_nlink counts its names; a memfd has none) */
	if (rc == 0 && mode == TB_SHM_READER && (*out)->unsealed)
		(*out)->ring->guard_shm = *out;
	if (rc == 0 && mode == TB_SHM_READER)
		(*out)->ring->page_file = *out; /* its window reads pages with pread, not through the mapping */
	return rc;
}

/* Read the whole region into private memory: a shrinking file gives a short read, not SIGBUS. */
static int copy_private(struct tb_shm *s, size_t size)
{
	int error;

	s->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		return say(-ENOMEM, s->path, "cannot allocate a private copy");
	}
	s->size = size;
	if (tb__pread_full(s->fd, s->mem, size, 0, &error) < size)
		return say(error ? -error : -EINVAL, s->path, error ? strerror(error) : "file shrank while read");
	return 0;
}

int tb_shm_load(const char *path, struct tb_shm **out)
{
	struct tb_region hdr;
	struct tb_shm *s;
	const char *why;
	int rc;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	if ((rc = open_checked(path, O_RDONLY, &s, &hdr)) < 0)
		return rc;
	rc = copy_private(s, (size_t)hdr.size);
	/* the copy's header is what counts from here on (the file may have changed since) */
	if (rc == 0 && tb__region_check(s->mem, s->size, &why) < 0) {
		set_err("%s: offset 0: not a usable tracebuf region: %s", path, why);
		rc = -EINVAL;
	}
	return finish_open(s, rc, out);
}
