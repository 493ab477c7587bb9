/*
 * Blobs, single-threaded (the torture test has them concurrent): payloads
 * bigger than a record go through the blob area and come back whole through
 * every read path; a blob overwritten before it is read is reported as such
 * and counted, never returned; a full area refuses and counts; bad handles,
 * sizes and references are refused without harm; a raw page carries the
 * reference record in the kernel's format, which libtraceevent's kbuffer
 * reads as an ordinary 24-byte event.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kbuffer.h>

#include "lib/cpu.h"
#include "lib/tap.h"
#include "tracebuf/blob.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

static struct tb_ring *ring_new(size_t kb, size_t blob_kb, int overwrite)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = NULL;

	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.blob_kb = blob_kb;
	o.overwrite = overwrite;
	if (tb_ring_new(&ring, &o) < 0)
		abort();
	return ring;
}

/* Bytes that differ with the seed and the position, so a shifted or foreign copy shows. */
static void pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t h = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		h = h * 1103515245u + 12345u;
		buf[i] = (uint8_t)(h >> 16);
	}
}

static int same_pattern(const void *data, size_t len, uint32_t seed)
{
	uint8_t *want = malloc(len ? len : 1);
	int same;

	pattern(want, len, seed);
	same = data && memcmp(data, want, len) == 0;
	free(want);
	return same;
}

static struct tb_cpu_stats stats0(struct tb_ring *ring)
{
	struct tb_cpu_stats st;

	tb_stats_read(ring, 0, &st);
	return st;
}

static void test_roundtrip(void)
{
	struct tb_ring *ring = ring_new(16, 256, 1);
	size_t big = 64 * 1024 + 3, mid = 20000;
	uint8_t *buf = malloc(big);
	struct tb_blob b;
	struct tb_read_event ev;
	uint64_t word = 0x1122334455667788ull;
	struct tb_cpu_stats st;

	ok(tb_ring_blob_size(ring) == 256 * 1024, "the blob area is 256 KiB per CPU (%zu)", tb_ring_blob_size(ring));
	ok(big > tb_ring_subbuf_size(ring), "a %zu-byte blob, larger than a %zu-byte sub-buffer", big,
	   tb_ring_subbuf_size(ring));
	pattern(buf, big, 1);
	is_int(tb_blob_write(ring, buf, big), 0, "tb_blob_write takes it");
	is_int(tb_write(ring, &word, sizeof(word)), 0, "a record after it");
	void *p = tb_blob_reserve(ring, mid, &b);
	ok(p && b.error == 0 && b.len == mid && b.data == p, "tb_blob_reserve gives %zu bytes to fill", mid);
	if (p)
		pattern(p, mid, 2);
	is_int(tb_blob_commit(ring, &b), 0, "tb_blob_commit publishes them");

	is_int(tb_consume(ring, 0, &ev), 1, "consume: the first event");
	ok(ev.kind == TB_READ_BLOB && ev.seqno == 0 && ev.len == big && same_pattern(ev.data, big, 1),
	   "it is the blob, exactly its %zu bytes (kind %d, len %u)", big, ev.kind, ev.len);
	is_int(tb_consume(ring, 0, &ev), 1, "consume: the record");
	ok(ev.kind == TB_READ_RECORD && ev.seqno == 1 && ev.len >= 8 && !memcmp(ev.data, &word, 8),
	   "a record between blobs is a record");
	is_int(tb_consume_merged(ring, &ev), 1, "merged consume: the reserved blob");
	ok(ev.kind == TB_READ_BLOB && ev.seqno == 2 && ev.len == mid && same_pattern(ev.data, mid, 2),
	   "filled in place, read back whole");
	is_int(tb_consume(ring, 0, &ev), 0, "nothing more");
	st = stats0(ring);
	ok(st.blob_written == 2 && st.blob_read == 2 && st.blob_lost == 0 && st.read == 3 && st.entries == 0,
	   "stats: blobs written 2, read 2, lost 0; the events read 3 (written %llu read %llu lost %llu)",
	   (unsigned long long)st.blob_written, (unsigned long long)st.blob_read, (unsigned long long)st.blob_lost);

	/* The iterator resolves without consuming; a consumer still gets the same bytes after it. */
	tb_blob_write(ring, buf, big);
	struct tb_iter *it;
	int got = 0;
	tb_iter_new(ring, &it);
	while (tb_iter_next(it, &ev) == 1)
		got += ev.kind == TB_READ_BLOB && ev.len == big && same_pattern(ev.data, big, 1);
	tb_iter_free(it);
	ok(got == 1, "the iterator returns the blob whole");
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && same_pattern(ev.data, big, 1),
	   "and leaves it for the consumer");

	/* An empty blob is an event with no bytes. */
	is_int(tb_blob_write(ring, NULL, 0), 0, "an empty blob is written");
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && ev.len == 0, "and read back, empty");
	free(buf);
	tb_ring_free(ring);
}

/* Reserved on one CPU, committed on another: the reference says which area holds the bytes. */
static void test_migration(void)
{
	struct tb_ring *ring = ring_new(16, 64, 1);
	struct tb_blob b;
	struct tb_read_event ev;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || tb_ring_ncpus(ring) < 2) {
		skip(2, "needs two CPUs");
		tb_ring_free(ring);
		return;
	}
	pin_cpu(0);
	void *p = tb_blob_reserve(ring, 9000, &b);
	if (p)
		pattern(p, 9000, 3);
	pin_cpu(1);
	is_int(tb_blob_commit(ring, &b), 0, "reserved on CPU 0, committed on CPU 1");
	pin_cpu(0);
	ok(tb_consume(ring, 1, &ev) == 1 && ev.kind == TB_READ_BLOB && ev.cpu == 1 && ev.len == 9000 &&
		   same_pattern(ev.data, 9000, 3),
	   "the event is CPU 1's, the bytes come from CPU 0's area");
	tb_ring_free(ring);
}

static void test_overwritten(void)
{
	struct tb_ring *ring = ring_new(16, 16, 1); /* 4 chunks of 4 KiB */
	uint8_t a[16384], bb[4096];
	struct tb_read_event ev;
	struct tb_iter *it;
	struct tb_cpu_stats st;
	struct tb_page_cursor cur;
	struct tb_record rec;
	struct tb_blob_ref ref = {0};
	uint8_t page[4096], copy[16384];
	int lost_seen = 0, ok_seen = 0;

	pattern(a, sizeof(a), 4);
	pattern(bb, sizeof(bb), 5);
	is_int(tb_blob_write(ring, a, sizeof(a)), 0, "blob A fills the whole area");
	is_int(tb_blob_write(ring, bb, sizeof(bb)), 0, "blob B takes A's first chunk");
	tb_iter_new(ring, &it);
	while (tb_iter_next(it, &ev) == 1) {
		lost_seen += ev.kind == TB_READ_BLOB_LOST && ev.len == sizeof(a) && ev.data == NULL;
		ok_seen += ev.kind == TB_READ_BLOB && ev.len == sizeof(bb) && same_pattern(ev.data, sizeof(bb), 5);
	}
	tb_iter_free(it);
	ok(lost_seen == 1 && ok_seen == 1, "iterator: A reported overwritten (with its length), B whole");

	st = stats0(ring);
	ok(st.blob_lost == 0, "the iterator counts nothing");
	is_int(tb_consume(ring, 0, &ev), 1, "consume A's reference");
	ok(ev.kind == TB_READ_BLOB_LOST && ev.len == sizeof(a) && ev.data == NULL && ev.seqno == 0,
	   "A: TB_READ_BLOB_LOST, no bytes");
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && same_pattern(ev.data, sizeof(bb), 5),
	   "B: whole");
	st = stats0(ring);
	ok(st.blob_written == 2 && st.blob_lost == 1 && st.blob_read == 1 && st.lost == 0,
	   "stats: written 2, overwritten 1, read 1; no event lost");

	/* tb_blob_resolve on a reference from a raw page says the same. */
	tb_blob_write(ring, a, sizeof(a));
	tb_blob_write(ring, bb, sizeof(bb));
	ok(tb_read_page(ring, 0, page, sizeof(page)) == 4096, "a raw page with both references");
	int refs = 0, stale = 0, whole = 0;
	tb_page_cursor_init(&cur, page, sizeof(page));
	while (tb_page_next_data(&cur, &rec) == 1)
		if (tb_blob_ref_decode(&rec, &ref)) {
			long n = tb_blob_resolve(ring, &ref, copy, sizeof(copy));
			refs++;
			stale += n == -ESTALE && ref.len == sizeof(a);
			whole += n == (long)sizeof(bb) && !memcmp(copy, bb, sizeof(bb));
		}
	ok(refs == 2 && stale == 1 && whole == 1, "tb_blob_resolve: A -ESTALE, B's bytes");
	tb_ring_free(ring);
}

static void test_full(void)
{
	struct tb_ring *ring = ring_new(16, 16, 0); /* producer/consumer, 4 chunks */
	uint8_t buf[4096];
	struct tb_read_event ev;
	struct tb_cpu_stats st;
	struct tb_blob b;
	int rc[5];

	pattern(buf, sizeof(buf), 6);
	for (int i = 0; i < 5; i++)
		rc[i] = tb_blob_write(ring, buf, sizeof(buf));
	ok(rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && rc[3] == 0, "producer/consumer: four 4 KiB blobs fill the area");
	is_int(rc[4], -ENOBUFS, "the fifth is refused: -ENOBUFS");
	st = stats0(ring);
	ok(st.blob_full == 1 && st.refused == 1 && st.lost == 1 && st.attempted == 5,
	   "counted: blob_full 1, in refused and lost (refused %llu lost %llu attempted %llu)",
	   (unsigned long long)st.refused, (unsigned long long)st.lost, (unsigned long long)st.attempted);
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && same_pattern(ev.data, sizeof(buf), 6),
	   "the oldest blob is read");
	is_int(tb_blob_write(ring, buf, sizeof(buf)), 0, "its space is reused once it was consumed");
	is_int(tb_blob_write(ring, buf, sizeof(buf)), -ENOBUFS, "and no more");
	int intact = 0;
	while (tb_consume(ring, 0, &ev) == 1)
		intact += ev.kind == TB_READ_BLOB && same_pattern(ev.data, sizeof(buf), 6);
	is_int(intact, 4, "producer/consumer: every blob committed is read whole");
	st = stats0(ring);
	ok(st.blob_lost == 0 && st.blob_full == 2 && st.blob_written == 5 && st.blob_read == 5,
	   "never overwritten: written 5, read 5, refused 2");

	/* A page reader takes references over: their space is reused too. */
	for (int i = 0; i < 4; i++)
		tb_blob_write(ring, buf, sizeof(buf));
	uint8_t page[4096];
	ok(tb_read_page(ring, 0, page, sizeof(page)) > 0, "tb_read_page hands the references over");
	is_int(tb_blob_write(ring, buf, sizeof(buf)), 0, "and their space is free again");
	tb_ring_free(ring);

	/* Overwrite mode never overwrites a blob being filled. */
	ring = ring_new(16, 16, 1);
	void *p = tb_blob_reserve(ring, 16384, &b);
	ok(p != NULL, "overwrite mode: a reservation of the whole area");
	is_int(tb_blob_write(ring, buf, sizeof(buf)), -ENOBUFS, "a blob that would overwrite it is refused");
	st = stats0(ring);
	is_int(st.blob_full, 1, "and counted in blob_full");
	tb_blob_discard(ring, &b);
	is_int(tb_blob_write(ring, buf, sizeof(buf)), 0, "after the discard there is room");
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && ev.seqno == 0,
	   "the discarded reservation left no event");
	tb_ring_free(ring);
}

static void test_hostile(void)
{
	struct tb_ring *ring = ring_new(16, 16, 1), *plain = ring_new(16, 0, 1);
	uint8_t buf[64] = {0};
	struct tb_blob b, copy;
	struct tb_cpu_stats st;
	struct tb_read_event ev;

	is_int(tb_blob_write(ring, NULL, 10), -EINVAL, "NULL data: -EINVAL");
	is_int(tb_blob_write(NULL, buf, 10), -EINVAL, "NULL ring: -EINVAL");
	is_int(tb_blob_write(ring, buf, SIZE_MAX), -E2BIG, "SIZE_MAX bytes: -E2BIG");
	is_int(tb_blob_write(ring, buf, 16384 + 1), -E2BIG, "one byte more than the area: -E2BIG");
	ok(tb_blob_reserve(ring, (size_t)1 << 40, &b) == NULL && b.error == -E2BIG, "reserve 1 TiB: NULL, -E2BIG");
	st = stats0(ring);
	ok(st.too_big == 3 && st.blob_full == 0, "the three refused sizes counted in too_big");
	ok(tb_blob_reserve(plain, 10, &b) == NULL && b.error == -EOPNOTSUPP, "a ring without a blob area: -EOPNOTSUPP");
	is_int(tb_blob_write(plain, buf, 10), -EOPNOTSUPP, "tb_blob_write there too");
	ok(tb_blob_reserve(ring, 10, NULL) == NULL, "reserve with a NULL handle: NULL");

	is_int(tb_blob_commit(ring, NULL), -EINVAL, "commit of NULL: -EINVAL");
	memset(&b, 0, sizeof(b));
	is_int(tb_blob_commit(ring, &b), -EINVAL, "commit of a zeroed handle: -EINVAL");
	tb_blob_reserve(ring, 100, &b);
	copy = b;
	copy.first += 1;
	is_int(tb_blob_commit(ring, &copy), -EINVAL, "commit of a handle with another chunk: -EINVAL");
	copy = b;
	copy.area = 4096;
	is_int(tb_blob_commit(ring, &copy), -EINVAL, "commit of a handle with an area out of range: -EINVAL");
	copy = b;
	copy.len = 8000;
	is_int(tb_blob_commit(ring, &copy), -EINVAL, "commit of a handle grown past its chunks: -EINVAL");
	is_int(tb_blob_commit(plain, &b), -EINVAL, "commit on another ring: -EINVAL");
	copy = b;
	is_int(tb_blob_commit(ring, &b), 0, "the real handle commits");
	is_int(tb_blob_commit(ring, &b), -EINVAL, "twice: -EINVAL");
	is_int(tb_blob_commit(ring, &copy), -EINVAL, "a copy of it afterwards: -EINVAL");
	tb_blob_discard(ring, &copy); /* nothing: not open */
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && ev.len == 100, "one event, one blob");
	is_int(tb_consume(ring, 0, &ev), 0, "and only one");

	tb_ring_set_recording(ring, 0);
	st = stats0(ring);
	is_int(tb_blob_write(ring, buf, 10), -EAGAIN, "recording off: -EAGAIN");
	struct tb_cpu_stats st2 = stats0(ring);
	ok(st2.refused == st.refused && st2.blob_written == st.blob_written, "uncounted, like tb_write's");
	tb_ring_set_recording(ring, 1);

	/* Forged references: never a crash, never bytes unless they name a real blob. */
	struct tb_blob_ref ref = {100, 0, 0};
	uint8_t out[16384];
	is_int(tb_blob_resolve(ring, &ref, out, sizeof(out)), -ESTALE, "first 0 (before any lap): -ESTALE");
	ref = (struct tb_blob_ref){UINT32_MAX, 0, 4};
	is_int(tb_blob_resolve(ring, &ref, out, sizeof(out)), -ESTALE, "a length beyond the area: -ESTALE");
	ref = (struct tb_blob_ref){100, 7777, 4};
	is_int(tb_blob_resolve(ring, &ref, out, sizeof(out)), -ESTALE, "an area that does not exist: -ESTALE");
	ref = (struct tb_blob_ref){8192, 0, 7};
	is_int(tb_blob_resolve(ring, &ref, out, sizeof(out)), -ESTALE, "chunks past the area's end: -ESTALE");
	is_int(tb_blob_resolve(ring, NULL, out, sizeof(out)), -EINVAL, "NULL reference: -EINVAL");
	unsigned resolved = 0;
	srand(7);
	for (int i = 0; i < 100000; i++) {
		struct tb_blob_ref f = {(uint32_t)rand() % 20000, (uint32_t)rand() % 3, (uint64_t)rand() % 64};
		long n = tb_blob_resolve(ring, &f, out, sizeof(out));
		resolved += n >= 0;
		if (n >= 0 && f.len != 0 && !(f.first == 4 && f.area == 0)) {
			diag("forged reference resolved: len %u area %u first %llu", f.len, f.area,
			     (unsigned long long)f.first);
			break;
		}
	}
	ok(resolved > 0, "100000 random references: no harm; only the real blob's chunk resolved (%u times, or empty)",
	   resolved);
	tb_ring_free(ring);
	tb_ring_free(plain);
}

/* The reference record in a raw page: our decoder and libtraceevent's kbuffer agree on it. */
static void test_raw_page(void)
{
	struct tb_ring *ring = ring_new(16, 64, 1);
	uint8_t page[4096], blob[10000], out[10000];
	uint64_t word = 42;
	struct tb_page_cursor cur;
	struct tb_record rec;
	struct tb_blob_ref ref;
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	unsigned long long ts;
	int n = 0, sizes_ok = 1, refs = 0;

	pattern(blob, sizeof(blob), 8);
	tb_write(ring, &word, 8);
	tb_blob_write(ring, blob, sizeof(blob));
	tb_write(ring, &word, 8);
	ok(tb_read_page(ring, 0, page, sizeof(page)) == 4096, "the page with the reference");
	tb_page_cursor_init(&cur, page, sizeof(page));
	while (tb_page_next_data(&cur, &rec) == 1) {
		if (tb_blob_ref_decode(&rec, &ref)) {
			refs++;
			ok(rec.type_len == 0 && rec.len == TB_BLOB_REF_SIZE && rec.size == 32,
			   "a long-form data record of 24 bytes (type_len %u len %u size %u)", rec.type_len, rec.len,
			   rec.size);
			ok(ref.len == sizeof(blob) && ref.area == 0, "it names %u bytes in area %u", ref.len, ref.area);
			ok(tb_blob_resolve(ring, &ref, out, sizeof(out)) == (long)sizeof(blob) && !memcmp(out, blob, sizeof(blob)),
			   "tb_blob_resolve copies the blob");
			is_int(tb_blob_resolve(ring, &ref, out, 100), -ENOSPC, "into too small a buffer: -ENOSPC");
		}
	}
	is_int(refs, 1, "exactly one reference; the 8-byte records are not");
	kbuffer_load_subbuffer(kb, page);
	for (void *d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
		int want = n == 1 ? 24 : 12; /* 8 bytes are stored in 12 (no 12-byte records) */
		if (kbuffer_event_size(kb) != want || (n == 1 && *(uint32_t *)d != TB_BLOB_REF_MAGIC)) {
			diag("kbuffer event %d: %d bytes, want %d", n, kbuffer_event_size(kb), want);
			sizes_ok = 0;
		}
		n++;
	}
	ok(n == 3 && sizes_ok, "kbuffer reads three events, the reference as 24 bytes starting with the magic");
	kbuffer_free(kb);
	tb_ring_free(ring);
}

static void test_stats_and_reset(void)
{
	struct tb_ring *ring = ring_new(16, 16, 1), *plain = ring_new(16, 0, 1);
	struct tb_ring_opts o;
	struct tb_cpu_stats st;
	struct tb_read_event ev;
	uint8_t buf[5000];
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	pattern(buf, sizeof(buf), 9);
	tb_blob_write(ring, buf, sizeof(buf));
	st = stats0(ring);
	f = open_memstream(&text, &size);
	tb_stats_print(f, ring, &st, 1);
	fclose(f);
	ok(strstr(text, "blobs: written 1, read 0, overwritten 0, refused (area full) 0\n") != NULL,
	   "the stats text has a blobs line");
	free(text);
	text = NULL;
	st = stats0(plain);
	f = open_memstream(&text, &size);
	tb_stats_print(f, plain, &st, 1);
	fclose(f);
	ok(strstr(text, "blobs:") == NULL, "a ring without a blob area has none");
	free(text);

	tb_ring_reset(ring);
	is_int(tb_consume(ring, 0, &ev), 0, "reset: the reference is gone");
	st = stats0(ring);
	ok(st.blob_written == 0 && st.blob_read == 0, "and the blob counters are 0");
	for (int i = 0; i < 3; i++)
		tb_blob_write(ring, buf, sizeof(buf)); /* 2 chunks each: the third laps */
	ok(tb_consume(ring, 0, &ev) == 1 && ev.kind == TB_READ_BLOB_LOST, "after reset the area laps as new");

	tb_ring_opts_default(&o);
	o.size_kb = 16;
	size_t without = tb_ring_region_size(&o);
	o.blob_kb = 64;
	size_t with = tb_ring_region_size(&o);
	ok(with >= without + tb_ring_ncpus(ring) * 64 * 1024, "the region grows by the blob areas (%zu -> %zu)",
	   without, with);
	o.blob_kb = (size_t)1 << 21;
	is_int(tb_ring_region_size(&o), 0, "a 2 GiB blob area per CPU is refused");
	o.blob_kb = 64;
	o.mem = aligned_alloc(4096, with);
	o.mem_size = with;
	struct tb_ring *mine = NULL;
	is_int(tb_ring_new(&mine, &o), 0, "a blob ring in caller memory");
	if (mine) {
		tb_blob_write(mine, buf, sizeof(buf));
		ok(tb_consume(mine, 0, &ev) == 1 && ev.kind == TB_READ_BLOB && same_pattern(ev.data, sizeof(buf), 9),
		   "round trip in caller memory");
		tb_ring_free(mine);
	}
	free(o.mem);
	tb_ring_free(ring);
	tb_ring_free(plain);
}

int main(void)
{
	pin_cpu(0);
	test_roundtrip();
	test_migration();
	test_overwritten();
	test_full();
	test_hostile();
	test_raw_page();
	test_stats_and_reset();
	return done_testing();
}
