// SPDX-License-Identifier: MIT
/*
 * blobsave.c - the blobs a saved page refers to, copied into a blob store
 * (tracebuf/blob.h: tb_blob_save_page) when the page is taken.
 *
 * Pages leave the ring (tb_read_page, a shared-memory window, a recovered
 * copy) carrying blob references; the blob area stays behind.  A saver
 * resolves each reference at that moment with tb_blob_resolve, whose
 * copy-then-recheck gives the bytes intact or not at all, and appends an
 * entry (header, bytes, padding) to the store.  An overwritten blob gets no
 * entry: the reader then says it was lost before it was saved.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracebuf/blob.h"
#include "util/write_all.h"

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/*
 * CRC-32 eight bytes at a time ("slicing by 8"): table[k][b] is the CRC of
 * byte b followed by k zero bytes, so eight table lookups, independent of
 * each other, replace eight dependent byte steps (about 5x faster here;
 * bench_blobsave).  The tables of the reflected polynomial 0xedb88320 are
 * made once.
 */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_make(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc_table[k][i] = crc_table[0][crc_table[k - 1][i] & 0xff] ^ (crc_table[k - 1][i] >> 8);
}

static uint32_t load32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t tb_crc32(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;

	pthread_once(&crc_once, crc_table_make); /* its return orders the tables' stores before our loads */
	crc = ~crc;
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = load32(p) ^ crc, hi = load32(p + 4);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
		      crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
	while (n--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* One entry: header, the bytes, zeros to a multiple of 8. */
static int put_entry(int fd, const struct tb_blob_ref *ref, const void *bytes)
{
	static const uint8_t zeros[8];
	uint8_t h[TB_BLOB_SAVED_HEADER];
	int rc;

	put32(h, TB_BLOB_SAVED_MAGIC);
	put32(h + 4, ref->len);
	put64(h + 8, ref->first);
	put32(h + 16, ref->area);
	put32(h + 20, tb_crc32(0, bytes, ref->len));
	rc = tb__write_all(fd, h, sizeof(h));
	if (rc == 0)
		rc = tb__write_all(fd, bytes, ref->len);
	if (rc == 0 && ref->len % 8)
		rc = tb__write_all(fd, zeros, 8 - ref->len % 8);
	return rc;
}

/* Resolve ref now and save it: 0 (saved or counted lost) or -errno. */
static int save_one(struct tb_ring *ring, const struct tb_blob_ref *ref, int fd, struct tb_blob_save_counts *counts)
{
	void *buf = malloc(ref->len ? ref->len : 1);
	long n;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	n = tb_blob_resolve(ring, ref, buf, ref->len);
	if (n == (long)ref->len) {
		rc = put_entry(fd, ref, buf);
		if (rc == 0) {
			counts->saved++;
			counts->bytes += ref->len;
		}
	} else {
		counts->lost++; /* -ESTALE: overwritten, or a reference this ring never made */
	}
	free(buf);
	return rc;
}

int tb_blob_save_page(struct tb_ring *ring, const void *page, size_t size, int fd,
		      struct tb_blob_save_counts *counts)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	struct tb_blob_ref ref;
	int rc = 0;

	if (!ring || !page || !counts)
		return -EINVAL;
	if (!tb_ring_blob_size(ring) || tb_page_cursor_init(&cur, page, size) < 0)
		return 0; /* no blob area: no reference; a page that does not decode holds none we can find */
	while (rc == 0 && tb_page_next_data(&cur, &rec) == 1)
		if (tb_blob_ref_decode(&rec, &ref))
			rc = save_one(ring, &ref, fd, counts);
	return rc;
}
