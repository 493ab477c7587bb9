// SPDX-License-Identifier: MIT
/*
 * capture_dir.c - a capture directory: the tracefs files of one buffer
 * copied out (header_page, formats/, saved_cmdlines, kallsyms, ...), each
 * CPU's pages in PREFIXcpuN.raw with its stats in PREFIXcpuN.stats,
 * meta.txt for the clock and CPU count, blobs.bin for saved blobs.
 *
 * Raw files are plain files: read ahead, rewound, and checked against
 * header_page's sub-buffer size before they are read (the geometry check).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob_store.h"
#include "capture_internal.h"
#include "schema_internal.h"
#include "schema_kernel.h"
#include "tracebuf/blob.h"
#include "tracebuf/page.h"

static int load_capture_schema(struct tb_capture *c)
{
	static const struct {
		const char *name;
		int (*load)(struct tb_schema *, const char *, const char *, size_t);
	} optional[] = {
		{"header_event", tb_schema_load_header_event},
		{"saved_cmdlines", tb_schema_load_cmdlines},
		{"saved_tgids", tb_schema_load_tgids},
		{"printk_formats", tb_schema_load_printk_formats},
		{"kallsyms", NULL}, /* capture_load_kallsyms */
		{"constants", tb_schema_load_constants},
		{"proc_maps", tb_schema_load_proc_maps},
	};
	char *path = capture_path_join(c->dir, "header_page");
	int rc = path ? capture_load_file(c, path, true, tb_schema_load_header_page) : -ENOMEM;

	free(path);
	for (size_t i = 0; rc == 0 && i < sizeof(optional) / sizeof(optional[0]); i++) {
		if (c->no_symbols && !optional[i].load)
			continue;
		path = capture_path_join(c->dir, optional[i].name);
		if (!path)
			rc = -ENOMEM;
		else if (!optional[i].load)
			rc = capture_load_kallsyms(c, path);
		else
			rc = capture_load_file(c, path, false, optional[i].load);
		rc = rc == -ENOMEM ? rc : 0;
		free(path);
	}
	path = rc == 0 ? capture_path_join(c->dir, "formats") : NULL;
	if (path && capture_is_dir(path))
		rc = capture_load_formats(c, path);
	free(path);
	/* the formats indexed meanwhile: kallsyms's table taken, its problems told */
	if (capture_settle_kallsyms(c) < 0 || c->kallsyms_rc < 0)
		rc = -ENOMEM;
	return rc;
}

/* Capture dir: PREFIXcpuN.raw files, with PREFIXcpuN.stats next to them. */
static int raw_file_entry(struct tb_capture *c, const char *dir, const char *name, const char *unused)
{
	size_t plen = strlen(c->prefix);
	int cpu = strncmp(name, c->prefix, plen) ? -1 : capture_cpu_number(name + plen, ".raw"), rc;
	char *path, stats[PATH_MAX];

	(void)unused;
	if (cpu == CPU_TOO_HIGH) {
		path = capture_path_join(dir, name);
		tb_capture_problem(c, path ? path : name, 0, "CPU number above %d, the most this "
				  "reader takes; the file is ignored", MAX_CPUS - 1);
		free(path);
	}
	if (cpu < 0)
		return 0;
	path = capture_path_join(dir, name);
	rc = path ? capture_add_cpu(c, cpu, path) : -ENOMEM;
	snprintf(stats, sizeof(stats), "%s/%scpu%d.stats", dir, c->prefix, cpu);
	if (rc == 0)
		capture_read_stats(c, &c->cpus[cpu], stats);
	return rc;
}

/* blobs.bin, the blobs the pages' references name (tracebuf/blob.h), when the capture has one. */
static int open_blob_store(struct tb_capture *c)
{
	char *path = capture_path_join(c->dir, TB_BLOB_STORE_FILE);
	struct blob_store *bs;
	struct stat st;
	int fd;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0 || !capture_is_missing(errno))
			tb_capture_problem(c, path, 0, "cannot read the saved blobs: %s; they print as lost",
					  strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return 0;
	}
	bs = blob_store_new(fd, true, path, 0, (uint64_t)st.st_size);
	free(path);
	if (!bs) {
		close(fd);
		return -ENOMEM;
	}
	capture_set_blobs(c, bs);
	return 0;
}

/* ------------------------------------------------------------ geometry */

/*
 * header_page gives the sub-buffer size, and a raw file copied from another
 * buffer (or with another instance's header_page) has pages of another
 * size.  Read at the wrong size the pages mostly still decode: a smaller
 * size shows each page's first part and drops the rest, a larger one glues
 * pages together and hides every other one behind the first one's commit.
 * So before reading a capture file, look at its first pages' headers at the
 * size given and at every other size: a size at which the headers are what
 * the kernel writes (commit inside the data area, flags that exist, stamps
 * that do not go back) and the first pages decode, where the size given
 * says otherwise, is reported and the file refused.
 */
#define GEOMETRY_PAGES 64 /* headers looked at per size */
#define GEOMETRY_DECODE 4 /* of which decoded whole */

enum header_look { HDR_ZERO, HDR_PLAUSIBLE, HDR_WRONG };

/* A sub-buffer header (16 bytes) as a page of size x would have it (its stamp aside). */
static enum header_look look_at_header(const uint8_t *h, size_t x)
{
	uint64_t stamp, commit;
	uint32_t len, d = tb_page_data_size(x);

	memcpy(&stamp, h, 8);
	memcpy(&commit, h + 8, 8);
	if (stamp == 0 && commit == 0)
		return HDR_ZERO;
	len = (uint32_t)commit & TB_PAGE_COMMIT_LEN_MASK;
	/* the kernel adds the lost flag as an int: the high half is all zeros or all ones */
	if ((commit >> 32 != 0 && commit >> 32 != 0xffffffffu) || (commit & 0x38000000u) || len > d ||
	    ((commit & TB_PAGE_COMMIT_LOST_STORED) && (!(commit & TB_PAGE_COMMIT_LOST) || d - len < 8)))
		return HDR_WRONG;
	return HDR_PLAUSIBLE;
}

/* What the first pages of a file look like when read as sub-buffers of x bytes. */
struct size_look {
	bool fits;             /* every header looked at is plausible, stamps do not go back,
				* the first pages decode */
	uint64_t wrong_at;     /* else: file offset of the first thing that is not */
	const char *why;
	unsigned real;         /* plausible headers that are not all zeros (stamps aside) */
	unsigned inner_real;   /* of which at offsets that are not multiples of align */
	uint64_t inner_at;     /* the first of those */
	uint32_t max_len;      /* longest commit length among the plausible headers */
};

static bool read_at(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	do
		r = pread(fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)n;
}

static void look_wrong(struct size_look *l, uint64_t at, const char *why)
{
	if (l->fits) {
		l->fits = false;
		l->wrong_at = at;
		l->why = why;
	}
}

/* Whether the whole page in buf decodes; *at = where it does not. */
static bool page_decodes(const uint8_t *buf, size_t x, uint64_t *at)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (tb_page_cursor_init(&cur, buf, x) < 0) {
		*at = cur.err.offset;
		return false;
	}
	while ((rc = tb_page_next(&cur, &rec)) == 1)
		;
	*at = cur.err.offset;
	return rc == 0;
}

/* Read the file's first pages as x-byte sub-buffers; buf holds at least x bytes. */
static struct size_look look_at_size(int fd, uint64_t fsize, size_t x, size_t align, uint8_t *buf)
{
	struct size_look l = {.fits = true};
	uint64_t prev = 0, stamp, at, commit;

	if (fsize % x)
		look_wrong(&l, fsize - fsize % x, "the file ends inside a sub-buffer");
	for (uint64_t off = 0; off + x <= fsize && off / x < GEOMETRY_PAGES; off += x) {
		bool whole = off / x < GEOMETRY_DECODE;
		if (!read_at(fd, buf, whole ? x : TB_PAGE_HDR_SIZE, off)) {
			look_wrong(&l, off, "the file cannot be read");
			break;
		}
		switch (look_at_header(buf, x)) {
		case HDR_ZERO:
			continue;
		case HDR_WRONG:
			look_wrong(&l, off + 8, "is a header the kernel does not write");
			continue;
		case HDR_PLAUSIBLE:
			break;
		}
		memcpy(&stamp, buf, 8);
		if (stamp < prev)
			look_wrong(&l, off, "the time stamp goes back");
		prev = stamp;
		memcpy(&commit, buf + 8, 8);
		if (((uint32_t)commit & TB_PAGE_COMMIT_LEN_MASK) > l.max_len)
			l.max_len = (uint32_t)commit & TB_PAGE_COMMIT_LEN_MASK;
		l.real++;
		if (off % align && l.inner_real++ == 0)
			l.inner_at = off;
		if (whole && !page_decodes(buf, x, &at))
			look_wrong(&l, off + at, "a sub-buffer does not decode");
	}
	return l;
}

/*
 * Refuse the file when another size x explains it and the size given does
 * not: for a smaller x, page headers inside the given sub-buffers where no
 * commit reaches; for a larger x, headers that fail at the given size and
 * none plausible between x's pages.
 */
static void check_geometry(struct tb_capture *c, struct cpu_source *s)
{
	size_t given = c->subbuf;
	uint8_t *buf = s->size ? malloc(TB_PAGE_MAX_SIZE) : NULL;
	struct size_look g, at;

	if (!buf)
		return; /* empty, or no memory to look: read it as header_page says */
	g = look_at_size(s->fd, s->size, given, given, buf);
	for (size_t x = TB_PAGE_MIN_SIZE; x <= TB_PAGE_MAX_SIZE && x <= s->size; x <<= 1) {
		if (x == given)
			continue;
		at = look_at_size(s->fd, s->size, x, given, buf);
		if (!at.fits || at.real == 0)
			continue;
		if (x < given && at.inner_real > 0 && (!g.fits || g.max_len <= tb_page_data_size(x))) {
			capture_refuse(s, at.inner_at, "header_page says %zu-byte sub-buffers, but the file "
			       "holds %zu-byte ones (here a sub-buffer header starts); not read",
			       given, x);
			break;
		}
		if (x > given && !g.fits && look_at_size(s->fd, s->size, given, x, buf).inner_real == 0) {
			capture_refuse(s, g.wrong_at, "header_page says %zu-byte sub-buffers, but the file "
			       "holds %zu-byte ones (at %zu bytes, here %s); not read", given, x,
			       given, g.why);
			break;
		}
	}
	free(buf);
}

/*
 * Bytes of a raw file read at once: whole sub-buffers, 64 KiB of them (a
 * sixteenth of the system calls of one pread per 4 KiB sub-buffer), or one
 * when that many for every CPU would pass MAX_PAGE_MEMORY.
 */
static size_t read_ahead(const struct tb_capture *c)
{
	size_t n = c->subbuf < READ_AHEAD ? READ_AHEAD / c->subbuf * c->subbuf : c->subbuf;

	return (uint64_t)c->ncpu_files * n <= MAX_PAGE_MEMORY ? n : c->subbuf;
}

/*
 * The next read_ahead() bytes of whole sub-buffers at s->offset into
 * s->page; false when they could not all be read (the caller then reads
 * one sub-buffer, which reports what went wrong where).
 */
static bool read_ahead_file(struct tb_capture *c, struct cpu_source *s, uint64_t left)
{
	size_t n = read_ahead(c);

	if (left / c->subbuf * c->subbuf < n)
		n = (size_t)(left / c->subbuf * c->subbuf);
	s->page_off = s->offset;
	s->page_len = n > c->subbuf && capture_pread_whole(s->fd, s->page, n, s->offset) ? n : 0;
	s->lent = 0;
	return s->page_len > 0;
}

/* The file ends left bytes (not 0) into the sub-buffer at s->offset. */
static void report_partial(struct tb_capture *c, const struct cpu_source *s, uint64_t left)
{
	tb_capture_problem(c, s->path, s->offset, "file ends %llu bytes into a sub-buffer: its "
			  "size %llu is not a multiple of the %zu-byte sub-buffer; the "
			  "partial sub-buffer is skipped", (unsigned long long)left,
			  (unsigned long long)s->size, c->subbuf);
}

/* Capture file: the page at s->offset, from what was read ahead or read now. */
static int next_file_page(struct tb_capture *c, struct cpu_source *s)
{
	uint64_t left = s->size - s->offset;
	ssize_t r;

	if (s->offset >= s->page_off && s->offset - s->page_off + c->subbuf <= s->page_len) {
		s->lent = (size_t)(s->offset - s->page_off);
		return 1;
	}
	if (left == 0)
		return 0;
	if (left < c->subbuf) {
		report_partial(c, s, left);
		return 0;
	}
	if (read_ahead_file(c, s, left))
		return 1;
	do
		r = pread(s->fd, s->page, c->subbuf, (off_t)s->offset);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)c->subbuf) {
		int e = r < 0 ? errno : EIO;
		tb_capture_problem(c, s->path, s->offset, "read failed: %s", strerror(e));
		return -e;
	}
	return 1;
}

/*
 * A capture file's next whole sub-buffers straight into buf, with one
 * pread; when it fails they are read one at a time, so the one that cannot
 * be read is reported at its own offset after those before it were handed
 * over.  The pages read, or a negative errno when the first could not be.
 */
static int read_file_pages(struct tb_capture *c, struct cpu_source *s, uint8_t *buf, size_t pages,
			   capture_page_fn *got, void *got_ctx)
{
	uint64_t left = s->size - s->offset;
	size_t n = left / c->subbuf < pages ? (size_t)(left / c->subbuf) : pages;
	bool whole = n > 1 && capture_pread_whole(s->fd, buf, n * c->subbuf, s->offset);

	for (size_t i = 0; i < n; i++) {
		uint8_t *at = buf + i * c->subbuf;
		struct tb_capture_page p = {at, c->subbuf, s->path, s->offset};
		ssize_t r;
		if (!whole) {
			do
				r = pread(s->fd, at, c->subbuf, (off_t)s->offset);
			while (r < 0 && errno == EINTR);
			if (r != (ssize_t)c->subbuf) {
				int e = r < 0 ? errno : EIO;
				tb_capture_problem(c, s->path, s->offset, "read failed: %s", strerror(e));
				s->done = true;
				return i ? (int)i : -e;
			}
		}
		got(got_ctx, &p);
		s->offset += c->subbuf;
	}
	return (int)n;
}

/* A capture file's pages for capture_read_pages(): what next_file_page() gives, without its copy. */
static int read_file_run(struct tb_capture *c, struct cpu_source *s, uint8_t *buf, size_t room, size_t max_pages,
			 capture_page_fn *got, void *got_ctx)
{
	size_t pages = room / c->subbuf < max_pages ? room / c->subbuf : max_pages;
	int n = read_file_pages(c, s, buf, pages, got, got_ctx);
	uint64_t left = s->size - s->offset;

	if (n < 0 || (size_t)n == pages || s->done)
		return n;
	/* The file ended with room to spare: said here, where next_file_page() would say it. */
	if (left)
		report_partial(c, s, left);
	s->done = true;
	return n;
}

/* Capture dir: the PREFIXcpuN.raw files, with PREFIXcpuN.stats next to them. */
static int find_raw_files(struct tb_capture *c)
{
	int rc = capture_each_entry(c, c->dir, raw_file_entry, NULL);

	/* A directory without raw files is a program's description; one asked for by prefix is not. */
	if (rc >= 0 && !c->ncpu_files && c->prefix[0])
		tb_capture_problem(c, c->dir, 0, "no %scpuN.raw file: the prefix '%s' names no CPU's pages",
				  c->prefix, c->prefix);
	return rc;
}

/* A raw file's size, and whether its pages are the size header_page says. */
static void first_open(struct tb_capture *c, struct cpu_source *s, const struct stat *st)
{
	s->size = (uint64_t)st->st_size;
	check_geometry(c, s);
}

static const struct capture_files capture_dir_files = {
	.live = false,
	.load_schema = load_capture_schema,
	.find_cpus = find_raw_files,
	.finish_open = open_blob_store,
	.page_room = read_ahead,
	.first_open = first_open,
	.next_page = next_file_page,
	.read_run = read_file_run,
};

int capture_open_dir(const char *dir, const struct tb_capture_opts *opts, struct tb_capture **out)
{
	return capture_open_files(dir, &capture_dir_files, opts, out);
}
