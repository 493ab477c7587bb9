// SPDX-License-Identifier: MIT
/*
 * raw_scan.c - walk saved sub-buffers with the page codec and note what
 * their records refer to.
 *
 * Addresses are found without knowing the events' layouts: every 8-byte
 * value at a 4-byte step of a payload is a candidate (records are 4-byte
 * aligned, and a u64 field sits at a multiple of 4 from the payload start).
 * A value that only looks like a kernel address costs one extra kallsyms
 * line, never a wrong one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw_scan.h"
#include "tracebuf/page.h"
#include "util/grow.h"

static int add_addr(struct raw_refs *r, uint64_t v)
{
	uint64_t *grown = tb__grow(r->addrs, &r->cap, r->naddrs + 1, sizeof(*grown), 1024);
	if (!grown)
		return -ENOMEM;
	r->addrs = grown;
	r->addrs[r->naddrs++] = v;
	return 0;
}

static int scan_record(struct raw_refs *r, const struct tb_record *rec)
{
	const uint8_t *p = rec->data;
	uint16_t id;

	if (rec->len < sizeof(id))
		return 0;
	memcpy(&id, p, sizeof(id));
	r->ids[id / 8] |= (uint8_t)(1u << (id % 8));
	r->records++;
	for (uint32_t at = 8; r->lo <= r->hi && at + 8 <= rec->len; at += 4) {
		uint64_t v;
		memcpy(&v, p + at, sizeof(v));
		if (v >= r->lo && v <= r->hi && add_addr(r, v) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int scan_page(struct raw_refs *r, const uint8_t *page, size_t size)
{
	struct tb_page_cursor c;
	struct tb_record rec;
	int rc;

	r->pages++;
	if (tb_page_cursor_init(&c, page, size) < 0) {
		r->bad_pages++;
		return 0;
	}
	while ((rc = tb_page_next_data(&c, &rec)) == 1)
		if (scan_record(r, &rec) < 0)
			return -ENOMEM;
	if (rc < 0)
		r->bad_pages++;
	return 0;
}

int raw_scan_file(struct raw_refs *r, const char *path, size_t subbuf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	uint8_t *page = malloc(subbuf);
	ssize_t got;

	if (fd < 0 || !page) {
		rc = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	while (rc == 0 && (got = read(fd, page, subbuf)) == (ssize_t)subbuf)
		rc = scan_page(r, page, subbuf);
out:
	if (fd >= 0)
		close(fd);
	free(page);
	return rc;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void raw_refs_finish(struct raw_refs *r)
{
	size_t n = 0;

	if (r->naddrs)
		qsort(r->addrs, r->naddrs, sizeof(*r->addrs), by_value);
	for (size_t i = 0; i < r->naddrs; i++)
		if (n == 0 || r->addrs[i] != r->addrs[n - 1])
			r->addrs[n++] = r->addrs[i];
	r->naddrs = n;
}

void raw_refs_free(struct raw_refs *r)
{
	free(r->addrs);
	r->addrs = NULL;
	r->naddrs = r->cap = 0;
}
