// SPDX-License-Identifier: MIT
/*
 * blob_store.c - saved blobs found again for the references that name them
 * (blob_store.h).
 *
 * The index is an array of entries sorted by (area, first, len), made by
 * one pass over the entry headers on the first lookup; the bytes are read
 * when a blob is printed and checked against the CRC-32 saved with them,
 * so a damaged copy is reported, never printed.  The first entry for a key
 * wins (a store never holds two; a damaged one could).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "blob_store.h"
#include "util/pread_full.h"
#include "tracebuf/blob.h"
#include "util/grow.h"

#define HEAD_BYTES 64 /* of a blob, escaped, on its report line */

struct entry {
	uint32_t area, len;
	uint64_t first;
	uint64_t at; /* file offset of the bytes */
	uint32_t crc;
};

struct blob_store {
	int fd;
	bool owns_fd;
	char *name;
	uint64_t base, len;
	blob_problem_fn *problem;
	void *problem_ctx;
	bool indexed;
	bool damaged; /* the index stopped at damage: a blob not found may lie past it */
	struct entry *e;
	size_t n, cap;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

struct blob_store *blob_store_new(int fd, bool owns_fd, const char *name, uint64_t base, uint64_t len)
{
	struct blob_store *bs = calloc(1, sizeof(*bs));

	if (!bs || !(bs->name = strdup(name ? name : ""))) {
		free(bs);
		return NULL;
	}
	bs->fd = fd;
	bs->owns_fd = owns_fd;
	bs->base = base;
	bs->len = len;
	return bs;
}

void blob_store_set_problem(struct blob_store *bs, blob_problem_fn *fn, void *ctx)
{
	bs->problem = fn;
	bs->problem_ctx = ctx;
}

void blob_store_free(struct blob_store *bs)
{
	if (!bs)
		return;
	if (bs->owns_fd && bs->fd >= 0)
		close(bs->fd);
	free(bs->name);
	free(bs->e);
	free(bs);
}

static void problem(struct blob_store *bs, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void problem(struct blob_store *bs, uint64_t offset, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	if (!bs->problem)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	bs->problem(bs->problem_ctx, bs->name, offset, reason);
}

/* pread exactly n bytes at file offset at: 0, or -EIO (the file ended) / -errno. */
static int read_at(struct blob_store *bs, void *buf, size_t n, uint64_t at)
{
	int error;

	if (tb__pread_full(bs->fd, buf, n, at, &error) == n)
		return 0;
	return error ? -error : -EIO;
}

static int by_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->area != y->area)
		return x->area < y->area ? -1 : 1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at; /* the first saved first */
}

static int add_entry(struct blob_store *bs, const uint8_t *h, uint64_t at)
{
	struct entry *e = tb__grow(bs->e, &bs->cap, bs->n + 1, sizeof(*e), 64);
	if (!e)
		return -ENOMEM;
	bs->e = e;
	bs->e[bs->n++] = (struct entry){le32(h + 16), le32(h + 4), le64(h + 8), at, le32(h + 20)};
	return 0;
}

/* One pass over the entry headers; damage ends it (told), the entries before it stay. */
static void build_index(struct blob_store *bs)
{
	uint8_t h[TB_BLOB_SAVED_HEADER];
	uint64_t pos = 0;

	bs->indexed = true;
	bs->damaged = true; /* until the walk reaches the end */
	while (pos < bs->len) {
		uint64_t at = bs->base + pos, room = bs->len - pos - TB_BLOB_SAVED_HEADER, size;
		int rc;

		if (bs->len - pos < TB_BLOB_SAVED_HEADER) {
			problem(bs, at, "blob store: %llu bytes at its end are no entry (truncated?)",
				(unsigned long long)(bs->len - pos));
			break;
		}
		if ((rc = read_at(bs, h, sizeof(h), at)) < 0) {
			problem(bs, at, "blob store: cannot read an entry: %s", strerror(-rc));
			break;
		}
		if (le32(h) != TB_BLOB_SAVED_MAGIC) {
			problem(bs, at, "blob store: no entry here (magic 0x%08x); the %llu bytes from here are not read",
				le32(h), (unsigned long long)(bs->len - pos));
			break;
		}
		if (le32(h + 4) > room) {
			problem(bs, at, "blob store: an entry of %u bytes, but %llu are left (truncated?)", le32(h + 4),
				(unsigned long long)room);
			break;
		}
		if (add_entry(bs, h, at + TB_BLOB_SAVED_HEADER) < 0) {
			problem(bs, at, "blob store: out of memory");
			break;
		}
		size = TB_BLOB_SAVED_HEADER + (uint64_t)le32(h + 4);
		pos += size + (size % 8 ? 8 - size % 8 : 0);
	}
	if (pos >= bs->len)
		bs->damaged = false;
	if (bs->n)
		qsort(bs->e, bs->n, sizeof(*bs->e), by_key);
}

static const struct entry *find(struct blob_store *bs, uint32_t area, uint64_t first, uint32_t len)
{
	struct entry key = {area, len, first, 0, 0};
	size_t lo = 0, hi;

	if (!bs->indexed)
		build_index(bs);
	hi = bs->n;
	while (lo < hi) { /* the first entry not below the key */
		size_t mid = lo + (hi - lo) / 2;
		if (by_key(&bs->e[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < bs->n && bs->e[lo].area == area && bs->e[lo].first == first && bs->e[lo].len == len ? &bs->e[lo]
													  : NULL;
}

enum blob_fate blob_store_get(struct blob_store *bs, const void *ref, uint8_t **bytes, uint32_t *crc)
{
	const uint8_t *r = ref;
	const struct entry *e;
	uint8_t *buf;
	int rc;

	*bytes = NULL;
	if (!bs)
		return BLOB_NO_STORE;
	if (!(e = find(bs, le32(r + 16), le64(r + 8), le32(r + 4))))
		return bs->damaged ? BLOB_DAMAGED : BLOB_NOT_SAVED;
	if (!(buf = malloc(e->len ? e->len : 1))) {
		problem(bs, e->at, "blob store: no memory for a blob of %u bytes", e->len);
		return BLOB_DAMAGED;
	}
	if ((rc = read_at(bs, buf, e->len, e->at)) < 0) {
		problem(bs, e->at, "blob store: cannot read a blob of %u bytes: %s", e->len, strerror(-rc));
		free(buf);
		return BLOB_DAMAGED;
	}
	*crc = (uint32_t)crc32(0L, buf, e->len);
	if (*crc != e->crc) {
		problem(bs, e->at, "blob store: the blob of %u bytes (area %u, chunk %llu) fails its CRC-32 check "
				   "(saved %08x, read %08x)",
			e->len, e->area, (unsigned long long)e->first, e->crc, *crc);
		free(buf);
		return BLOB_DAMAGED;
	}
	*bytes = buf;
	return BLOB_FOUND;
}

/* The first HEAD_BYTES of b as a C string literal's inside: at most 4 characters a byte. */
static size_t escape_head(char *out, const uint8_t *b, uint32_t len)
{
	size_t n = 0;

	for (uint32_t i = 0; i < len && i < HEAD_BYTES; i++) {
		uint8_t c = b[i];
		if (c == '\n' || c == '\t' || c == '\r' || c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : (char)c;
		} else if (c >= 0x20 && c < 0x7f) {
			out[n++] = (char)c;
		} else {
			n += (size_t)sprintf(out + n, "\\x%02x", c);
		}
	}
	out[n] = '\0';
	return n;
}

size_t blob_store_line(struct blob_store *bs, int cpu, const void *ref, char *out, enum blob_fate *fate)
{
	static const char *const why[] = {
	    [BLOB_NO_STORE] = "not in the pages read",
	    [BLOB_NOT_SAVED] = "overwritten before it was saved",
	    [BLOB_DAMAGED] = "its saved copy is damaged",
	};
	uint32_t len = le32((const uint8_t *)ref + 4), crc = 0;
	char head[HEAD_BYTES * 4 + 1];
	uint8_t *bytes;
	int n;

	*fate = blob_store_get(bs, ref, &bytes, &crc);
	if (*fate != BLOB_FOUND)
		n = snprintf(out, BLOB_LINE_MAX, "CPU:%d [BLOB LOST: %u bytes, %s]\n", cpu, len, why[*fate]);
	else {
		escape_head(head, bytes, len);
		n = snprintf(out, BLOB_LINE_MAX, "CPU:%d [BLOB: %u bytes, crc32 %08x] \"%s\"%s\n", cpu, len, crc, head,
			     len > HEAD_BYTES ? "..." : "");
		free(bytes);
	}
	return n < 0 ? 0 : n >= BLOB_LINE_MAX ? BLOB_LINE_MAX - 1 : (size_t)n;
}
