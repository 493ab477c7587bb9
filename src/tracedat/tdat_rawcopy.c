// SPDX-License-Identifier: MIT
/*
 * tdat_rawcopy.c - a capture's cpuN.raw copied into a trace.dat as
 * `tracebuf report` reads it (tdat_internal.h: tdat_copy_raw).
 *
 * Every sub-buffer is walked as the page cursor walks it (tb_page_check)
 * before it is copied, and a damaged one is written as report reads it, so that
 * the trace.dat holds exactly the events report prints of the capture
 * and no reader of the file (trace-cmd included) meets the damage again:
 *   - all zeros (a short read of trace_pipe_raw leaves them): left out;
 *   - a header no reader can trust (commit past the data area, a stored
 *     lost count that does not fit): left out;
 *   - a record that goes wrong part-way: the records before it are kept,
 *     the commit cut to where it starts (flags and a stored lost count
 *     kept), the bytes after zeroed.
 * Each is said with the raw file, its byte and the reason in report's
 * words, as a problem (convert then exits 1).
 *
 * Clean runs of sub-buffers still go file to file (copy_file_range) when
 * the raw file is a regular file: it is read a block at a time only to be
 * checked, so memory stays one block however large the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "page_repair.h"
#include "ring/pagefmt.h"
#include "util/pread_full.h"
#include "tdat_internal.h"
#include "tracebuf/page.h"

#define COPY_BLOCK (1u << 20)

struct raw_copy {
	struct tb_tracedat_writer *w;
	const struct tb_tracedat_write_opts *o;
	const char *path;
	uint32_t page_size;
	uint8_t *repaired; /* one sub-buffer: a damaged one as report reads it */
	int fd;		   /* clean runs copied file to file from here; -1: written from memory */
};

/* A problem met copying: to the writer's diag, or stderr. */
static void say_verdict(void *ctx, const struct tb_problem *d)
{
	const struct raw_copy *c = ctx;

	(c->o->diag ? c->o->diag : tb_problem_print)(c->o->diag ? c->o->diag_ctx : NULL, d);
}

/* What report does with the sub-buffer at byte at of the file; said unless clean; *cut: data bytes kept. */
static enum page_verdict check_page(const struct raw_copy *c, const uint8_t *page, uint64_t at, uint32_t *cut)
{
	return page_verdict(page, c->page_size, c->path, at, say_verdict, (void *)c, cut);
}

enum page_verdict page_verdict(const uint8_t *page, uint32_t page_size, const char *file, uint64_t at,
			       tb_problem_fn *say, void *ctx, uint32_t *cut)
{
	struct tb_problem d = {.file = file, .offset = at};
	struct tb_page_header h;
	struct tb_page_error err;
	struct tb_page_check pc;

	if (tbf_all_zero(page, page_size)) {
		snprintf(d.reason, sizeof(d.reason),
			 "sub-buffer is all zeros (no time stamp, no data): not one the kernel wrote; skipped");
		say(ctx, &d);
		return PAGE_LEFT_OUT;
	}
	if (tb_page_read_header(page, page_size, &h, &err) < 0) {
		d.offset = at + err.offset;
		snprintf(d.reason, sizeof(d.reason), "%s; sub-buffer skipped", err.reason);
		say(ctx, &d);
		return PAGE_LEFT_OUT;
	}
	if (tb_page_check(page, page_size, h.data_len, &pc) == 0)
		return PAGE_CLEAN;
	d.offset = at + pc.offset;
	snprintf(d.reason, sizeof(d.reason), "%s; rest of the sub-buffer skipped", pc.reason);
	say(ctx, &d);
	*cut = pc.len; /* where the bad record starts */
	return PAGE_CUT;
}

void page_cut(uint8_t *page, uint32_t page_size, uint32_t len)
{
	struct tb_page_header h;
	uint64_t commit;

	tb_page_read_header(page, page_size, &h, NULL); /* checked by page_verdict */
	commit = (h.commit_raw & ~(uint64_t)TB_PAGE_COMMIT_LEN_MASK) | len;
	memset(page + TB_PAGE_HDR_SIZE + len, 0, page_size - TB_PAGE_HDR_SIZE - len);
	memcpy(page + 8, &commit, 8);
	if (h.lost_stored) /* the kernel keeps it right after the data: it moves with the end */
		memcpy(page + TB_PAGE_HDR_SIZE + len, &h.lost_count, 8);
}

/* Sub-buffers [from, to) of src, which holds the file's bytes from file offset at. */
static int copy_run(struct raw_copy *c, const uint8_t *src, size_t from, size_t to, uint64_t at)
{
	int rc;

	if (from == to)
		return 0;
	if (c->fd >= 0) {
		if (lseek(c->fd, (off_t)(at + from), SEEK_SET) < 0)
			return -errno;
		rc = tdat_writer_copy_file(c->w, c->fd, to - from);
		if (rc != -ENOTSUP)
			return rc;
		c->fd = -1; /* this pair of files cannot (or the file is compressed): from memory */
	}
	return tb_tracedat_write_pages(c->w, src + from, to - from);
}

/* len bytes of whole sub-buffers in src, from file offset at: clean runs as they are, damaged ones repaired.
 */
static int copy_checked(struct raw_copy *c, const uint8_t *src, size_t len, uint64_t at)
{
	size_t run = 0; /* where the current run of clean sub-buffers starts */
	int rc = 0;

	for (size_t off = 0; rc == 0 && off < len; off += c->page_size) {
		uint32_t cut = 0;
		enum page_verdict v = check_page(c, src + off, at + off, &cut);
		if (v == PAGE_CLEAN)
			continue;
		rc = copy_run(c, src, run, off, at);
		if (rc == 0 && v == PAGE_CUT) {
			memcpy(c->repaired, src + off, c->page_size);
			page_cut(c->repaired, c->page_size, cut);
			rc = tb_tracedat_write_pages(c->w, c->repaired, c->page_size);
		}
		run = off + c->page_size;
	}
	return rc ? rc : copy_run(c, src, run, len, at);
}

/*
 * A regular file's whole sub-buffers (whole bytes), read a block at a time
 * to be checked, clean runs then copied file to file: memory is one block
 * whatever the file's size, and a file cut short meanwhile (a capture still
 * being written) ends the copy where it now ends - never a SIGBUS, as a
 * mapping of it would.  0 or -errno; *copied: the bytes taken, *have: the
 * bytes of a partial sub-buffer after them.
 */
static int copy_regular(struct raw_copy *c, int fd, uint64_t whole, uint64_t *copied, size_t *have)
{
	size_t block = COPY_BLOCK / c->page_size * c->page_size;
	uint8_t *buf = whole ? malloc(block) : NULL;
	int rc = buf || !whole ? 0 : -ENOMEM;

	c->fd = fd;
	while (rc == 0 && *copied < whole) {
		size_t want = whole - *copied < block ? (size_t)(whole - *copied) : block, n;
		int error;
		size_t r = tb__pread_full(fd, buf, want, *copied, &error);
		if (error) {
			rc = -error;
			break;
		}
		n = r / c->page_size * c->page_size;
		if (n)
			rc = copy_checked(c, buf, n, *copied);
		*copied += n;
		if (r < want) { /* cut short since it was measured */
			*have = r - n;
			break;
		}
	}
	free(buf);
	return rc;
}

/* Any other file (a pipe, a device), read in blocks: 0 or -errno; *have: bytes of a partial sub-buffer left.
 */
static int copy_read(struct raw_copy *c, int fd, size_t *have, uint64_t *copied)
{
	size_t block = COPY_BLOCK / c->page_size * c->page_size;
	uint8_t *buf = malloc(block);
	ssize_t r = 1;
	int rc = buf ? 0 : -ENOMEM;

	c->fd = -1;
	*have = 0;
	while (rc == 0 && r > 0) {
		r = read(fd, buf + *have, block - *have);
		if (r < 0 && errno == EINTR) {
			r = 1;
			continue;
		}
		if (r < 0) {
			rc = -errno;
			break;
		}
		*have += (size_t)r;
		if (*have == block || (r == 0 && *have >= c->page_size)) {
			size_t whole = *have / c->page_size * c->page_size;
			rc = copy_checked(c, buf, whole, *copied);
			*copied += whole;
			memmove(buf, buf + whole, *have - whole);
			*have -= whole;
		}
	}
	free(buf);
	return rc;
}

int tdat_copy_raw(struct tb_tracedat_writer *w, const char *path, uint32_t page_size,
		  const struct tb_tracedat_write_opts *o)
{
	struct raw_copy c = {.w = w, .o = o, .path = path, .page_size = page_size, .fd = -1};
	uint64_t copied = 0; /* whole sub-buffers taken: where a partial one starts */
	size_t have = 0;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;

	if (fd < 0)
		return -errno;
	if (!(c.repaired = malloc(page_size))) {
		close(fd);
		return -ENOMEM;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		uint64_t whole = (uint64_t)st.st_size / page_size * page_size;
		have = (size_t)((uint64_t)st.st_size - whole);
		rc = copy_regular(&c, fd, whole, &copied, &have);
	}
	if (rc == 1) { /* not a regular file */
		copied = 0;
		rc = lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE ? -errno : 0;
		if (rc == 0)
			rc = copy_read(&c, fd, &have, &copied);
	}
	close(fd);
	free(c.repaired);
	if (rc == 0 && have) {
		/* the file was cut short: the events of that sub-buffer are lost, so it is damage (counted) */
		struct tb_problem d = {.file = path, .offset = copied};
		snprintf(d.reason, sizeof(d.reason),
			 "ends %zu bytes into a %u-byte sub-buffer; the partial sub-buffer is left out", have,
			 page_size);
		(o->diag ? o->diag : tb_problem_print)(o->diag ? o->diag_ctx : NULL, &d);
	}
	return rc;
}
