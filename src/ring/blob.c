// SPDX-License-Identifier: MIT
/*
 * blob.c - payloads too big for a record: the blob area of each CPU block.
 *
 * An area is a circle of chunks (BLOB_CHUNK bytes each, ring.c) with one
 * 64-bit chunk word per chunk.  A writer takes the next numbers from the
 * area's allocation cursor (compare-and-swap), claims each chunk those
 * numbers name by a compare-and-swap of its word to WRITING, fills the
 * chunks outside any publish section, marks them COMMITTED, and only then
 * publishes the reference record through the ring's normal write path.
 * A reader that finds the reference checks the words, copies the bytes and
 * checks the words again (a seqlock read): the same words mean no writer
 * claimed a chunk meanwhile, because a chunk is claimed before a byte of it
 * is written and its word never takes a value twice (ring_layout.h).
 *
 * Invariants (docs/design.md §9):
 *   B1  A chunk's bytes are written only by the writer whose claim of it
 *       succeeded, and only while its word says WRITING for that writer's
 *       blob; so a blob being filled is never overwritten.
 *   B2  A reference is published only after every chunk of its blob says
 *       COMMITTED for it; the reader sees the bytes complete.
 *   B3  Chunk words only move forward: a claim needs a larger allocation
 *       number than the word holds.  No ABA: a reader's re-check is exact.
 *   B4  Producer/consumer mode never claims a COMMITTED chunk: a blob is
 *       overwritten only once its reference has been consumed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "pagefmt.h"
#include "publish.h"

/* Blobs still being filled an overwrite-mode writer goes past before it refuses. */
#define SKIPS_MAX 4

static uint64_t chunks_for(const struct tb_region *r, uint64_t len)
{
	return (len + r->blob_chunk - 1) / r->blob_chunk;
}

static _Atomic uint64_t *chunk_word(struct tb_region *r, struct tb_cpu_ctl *c, uint64_t number)
{
	return &cpu_blob_words(r, c)[number % r->blob_chunks];
}

static uint8_t *chunk_bytes(struct tb_region *r, struct tb_cpu_ctl *c, uint64_t number)
{
	return cpu_blob_data(r, c) + number % r->blob_chunks * r->blob_chunk;
}

void blob_area_init(struct tb_region *r, struct tb_cpu_ctl *c)
{
	_Atomic uint64_t *words = cpu_blob_words(r, c);

	if (!r->blob_chunks)
		return;
	/* Numbers start at one lap, so 0 in a word is older than any claim. */
	for (uint32_t i = 0; i < r->blob_chunks; i++)
		atomic_init(&words[i], b_make(0, B_FREE));
	atomic_init(&c->blob_next, r->blob_chunks);
}

/* ------------------------------------------------------------ writers */

enum verdict { CLAIM_OK, CLAIM_STALE, CLAIM_BUSY };

/* What a writer that wants a chunk for the blob starting at number first finds in its word w. */
static enum verdict claim_verdict(const struct tb_region *r, uint64_t w, uint64_t first)
{
	if (b_first(w) >= first)
		return CLAIM_STALE; /* claimed for first or later: the cursor moved on (B3) */
	if (b_state(w) == B_WRITING || (b_state(w) == B_COMMITTED && !r->overwrite))
		return CLAIM_BUSY; /* being filled (B1), or unread in producer/consumer mode (B4) */
	return CLAIM_OK;
}

/* Set the words of the chunks first..first+k-1 to state for the blob starting at first. */
static void set_chunks(struct tb_region *r, struct tb_cpu_ctl *c, uint64_t first, uint64_t k, unsigned state)
{
	for (uint64_t j = 0; j < k; j++)
		/*
		 * release: pairs with the acquire of a reader's check (COMMITTED:
		 * the bytes are complete, B2) and of the next claim (our stores to
		 * the chunk are done before its writer's).
		 */
		atomic_store_explicit(chunk_word(r, c, first + j), b_make(first, state), memory_order_release);
}

/* Claim the chunks first..first+k-1 (B1): true, or false with none of them held. */
static bool claim_chunks(struct tb_region *r, struct tb_cpu_ctl *c, uint64_t first, uint64_t k)
{
	for (uint64_t j = 0; j < k; j++) {
		_Atomic uint64_t *w = chunk_word(r, c, first + j);
		/* relaxed: the compare-and-swap below decides */
		uint64_t old = atomic_load_explicit(w, memory_order_relaxed);

		do {
			if (claim_verdict(r, old, first) != CLAIM_OK) {
				set_chunks(r, c, first, j, B_FREE);
				return false;
			}
			/*
			 * acq_rel: acquire pairs with the release that last set the
			 * word (commit, discard, a reader's release after its copy);
			 * and no store of our fill moves above the claim, which a
			 * reader's re-check after its copy relies on (seqlock).
			 */
		} while (!atomic_compare_exchange_weak_explicit(w, &old, b_make(first, B_WRITING), memory_order_acq_rel,
							       memory_order_relaxed));
	}
	return true;
}

/*
 * Take k >= 1 contiguous chunks of c's area at its cursor: 0 with *first,
 * or -ENOBUFS.  Lock-free: a retry means another writer moved the cursor.
 */
static int area_take(struct tb_region *r, struct tb_cpu_ctl *c, uint64_t k, uint64_t *first)
{
	uint64_t n = r->blob_chunks;
	unsigned skips = 0;

	for (;;) {
		/* relaxed: the cursor only hands out numbers; the chunk words say who owns a chunk */
		uint64_t cur = atomic_load_explicit(&c->blob_next, memory_order_relaxed);
		/* a blob never wraps: one that would starts the next lap */
		uint64_t start = cur % n + k > n ? cur - cur % n + n : cur, j;
		enum verdict v = CLAIM_OK;

		for (j = 0; j < k; j++) {
			/* relaxed: a look before moving the cursor; the claim decides */
			v = claim_verdict(r, atomic_load_explicit(chunk_word(r, c, start + j), memory_order_relaxed), start);
			if (v != CLAIM_OK)
				break;
		}
		if (v == CLAIM_STALE)
			continue;
		if (v == CLAIM_BUSY) {
			if (!r->overwrite || ++skips > SKIPS_MAX)
				return -ENOBUFS;
			/*
			 * overwrite mode: the newest blobs go on past one still being
			 * filled.  relaxed: as the load above.
			 */
			atomic_compare_exchange_strong_explicit(&c->blob_next, &cur, start + j + 1, memory_order_relaxed,
								memory_order_relaxed);
			continue;
		}
		/* relaxed: as the load above */
		if (!atomic_compare_exchange_strong_explicit(&c->blob_next, &cur, start + k, memory_order_relaxed,
							     memory_order_relaxed))
			continue;
		if (!claim_chunks(r, c, start, k))
			return -ENOBUFS; /* a claim raced ours: its chunks are newer */
		*first = start;
		return 0;
	}
}

/* One more in a counter of the ring.  relaxed: a statistic. */
static void count(_Atomic uint64_t *counter)
{
	atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

void *tb_blob_reserve(struct tb_ring *ring, size_t len, struct tb_blob *blob)
{
	struct tb_region *r;
	struct tb_cpu_ctl *c;
	uint64_t k, first;

	if (!blob)
		return NULL;
	memset(blob, 0, sizeof(*blob));
	blob->error = -EINVAL;
	if (!ring)
		return NULL;
	r = ring->r;
	blob->error = -EOPNOTSUPP;
	if (!r->blob_chunks)
		return NULL;
	blob->error = -EAGAIN;
	/* relaxed: writers may see recording switched off a little late, like tb_write */
	if (atomic_load_explicit(&r->record_disabled, memory_order_relaxed))
		return NULL;
	blob->area = pub_current_cpu() % r->ncpus; /* a hint: any area works from any CPU */
	c = region_cpu(r, blob->area);
	if (len > tb_ring_blob_size(ring)) {
		count(&c->cnt.too_big);
		blob->error = -E2BIG;
		return NULL;
	}
	k = chunks_for(r, len);
	/* An empty blob names no chunk: any number of a lap past the first will do. */
	first = r->blob_chunks;
	if (k && area_take(r, c, k, &first) < 0) {
		count(&c->cnt.blob_full);
		blob->error = -ENOBUFS;
		return NULL;
	}
	blob->data = chunk_bytes(r, c, first);
	blob->len = (uint32_t)len;
	blob->chunks = (uint32_t)k;
	blob->first = first;
	blob->error = 0;
	return blob->data;
}

/* Whether blob is an open reservation of ring: what tb_blob_reserve made, not yet committed nor discarded. */
static bool reservation_open(struct tb_ring *ring, const struct tb_blob *blob)
{
	struct tb_region *r;
	struct tb_cpu_ctl *c;

	if (!ring || !blob || !blob->data || !ring->r->blob_chunks || blob->area >= ring->r->ncpus)
		return false;
	r = ring->r;
	c = region_cpu(r, blob->area);
	if (blob->len > tb_ring_blob_size(ring) || blob->chunks != chunks_for(r, blob->len) ||
	    blob->first < r->blob_chunks || blob->first % r->blob_chunks + blob->chunks > r->blob_chunks ||
	    blob->data != chunk_bytes(r, c, blob->first))
		return false;
	for (uint32_t j = 0; j < blob->chunks; j++)
		/* relaxed: only this reservation's writer stores WRITING for it */
		if (atomic_load_explicit(chunk_word(r, c, blob->first + j), memory_order_relaxed) !=
		    b_make(blob->first, B_WRITING))
			return false;
	return true;
}

int tb_blob_commit(struct tb_ring *ring, struct tb_blob *blob)
{
	uint8_t ref[TB_BLOB_REF_SIZE] = {0};
	struct tb_region *r;
	struct tb_cpu_ctl *c;
	int rc;

	if (!reservation_open(ring, blob))
		return -EINVAL;
	r = ring->r;
	c = region_cpu(r, blob->area);
	tbf_put32(ref, TB_BLOB_REF_MAGIC);
	tbf_put32(ref + 4, blob->len);
	tbf_put64(ref + 8, blob->first);
	tbf_put32(ref + 16, blob->area);
	set_chunks(r, c, blob->first, blob->chunks, B_COMMITTED); /* B2: before the reference */
	blob->data = NULL;
	rc = tb__append_long(ring, ref, sizeof(ref));
	if (rc < 0) {
		/* No reference: the space goes back, unless a writer already took it (overwrite mode). */
		for (uint32_t j = 0; j < blob->chunks; j++) {
			uint64_t w = b_make(blob->first, B_COMMITTED);
			/* release: as set_chunks */
			atomic_compare_exchange_strong_explicit(chunk_word(r, c, blob->first + j), &w,
								b_make(blob->first, B_FREE), memory_order_release,
								memory_order_relaxed);
		}
		return rc;
	}
	count(&c->cnt.blob_written);
	return 0;
}

void tb_blob_discard(struct tb_ring *ring, struct tb_blob *blob)
{
	if (!reservation_open(ring, blob))
		return;
	set_chunks(ring->r, region_cpu(ring->r, blob->area), blob->first, blob->chunks, B_FREE);
	blob->data = NULL;
}

int tb_blob_write(struct tb_ring *ring, const void *data, size_t len)
{
	struct tb_blob blob;

	if (!data && len)
		return -EINVAL;
	if (!tb_blob_reserve(ring, len, &blob))
		return blob.error;
	if (len)
		memcpy(blob.data, data, len);
	return tb_blob_commit(ring, &blob);
}

/* ------------------------------------------------------------ readers */

int blob_ref_parse(uint32_t type_len, const void *data, uint32_t len, struct tb_blob_ref *ref)
{
	if (type_len != 0 || len != TB_BLOB_REF_SIZE || tbf_get32(data) != TB_BLOB_REF_MAGIC ||
	    tbf_get32((const uint8_t *)data + 20) != 0)
		return 0;
	ref->len = tbf_get32((const uint8_t *)data + 4);
	ref->first = tbf_get64((const uint8_t *)data + 8);
	ref->area = tbf_get32((const uint8_t *)data + 16);
	return 1;
}

int tb_blob_ref_decode(const struct tb_record *rec, struct tb_blob_ref *ref)
{
	if (!rec || !ref || rec->kind != TB_REC_DATA || !rec->data)
		return 0;
	return blob_ref_parse(rec->type_len, rec->data, rec->len, ref);
}

/* A reference that names chunks of this region at all (a forged or corrupt one may not). */
static bool ref_in_region(const struct tb_region *r, const struct tb_blob_ref *ref)
{
	uint64_t n = r->blob_chunks;

	return n && ref->area < r->ncpus && ref->first >= n && ref->len <= n * r->blob_chunk &&
	       ref->first % n + chunks_for(r, ref->len) <= n;
}

/* The chunk still holds, complete, the blob that starts at number first. */
static bool readable(uint64_t w, uint64_t first)
{
	return b_first(w) == first && (b_state(w) == B_COMMITTED || b_state(w) == B_READ);
}

#if defined(__SANITIZE_THREAD__)
#define TB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TB_TSAN 1
#endif
#endif

#ifdef TB_TSAN
/*
 * The seqlock read's copy races, by design, with a writer that claims the
 * chunks meanwhile; the re-check after it throws such a copy away.
 * ThreadSanitizer cannot see that, so under it the copy is a loop it does
 * not instrument (memcpy would be intercepted).
 */
__attribute__((no_sanitize("thread"), noinline)) static void copy_racy(void *dst, const void *src, size_t n)
{
	const volatile uint8_t *s = src;
	volatile uint8_t *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}
#else
#define copy_racy memcpy
#endif

/* Whether every chunk of the blob that starts at first still holds it, complete. */
static bool chunks_hold(struct tb_region *r, struct tb_cpu_ctl *c, uint64_t first, uint64_t k,
			memory_order order)
{
	for (uint64_t j = 0; j < k; j++)
		if (!readable(atomic_load_explicit(chunk_word(r, c, first + j), order), first))
			return false;
	return true;
}

/* Copy the blob into dst (room for ref->len): true if intact, false if overwritten. */
static bool blob_copy(struct tb_region *r, const struct tb_blob_ref *ref, void *dst)
{
	struct tb_cpu_ctl *c;
	uint64_t k;

	if (!ref_in_region(r, ref))
		return false;
	c = region_cpu(r, ref->area);
	k = chunks_for(r, ref->len);
	/* acquire: pairs with the commit's release (B2): the bytes are complete */
	if (!chunks_hold(r, c, ref->first, k, memory_order_acquire))
		return false;
	if (ref->len)
		copy_racy(dst, chunk_bytes(r, c, ref->first), ref->len);
	/*
	 * acquire fence: the copy's loads are done before the re-check; pairs
	 * with a claim, which no store of its writer's fill precedes.  The same
	 * words (B3) mean nobody claimed a chunk while we copied.
	 */
	atomic_thread_fence(memory_order_acquire);
	return chunks_hold(r, c, ref->first, k, memory_order_relaxed);
}

int blob_fetch(struct tb_region *r, const struct tb_blob_ref *ref, struct blob_copy *buf)
{
	if (!ref_in_region(r, ref))
		return 0;
	if (!buf->buf || ref->len > buf->cap) {
		size_t cap = ref->len > 2 * buf->cap ? ref->len : 2 * buf->cap;
		void *p = malloc(cap ? cap : 64);

		if (!p)
			return -ENOMEM;
		free(buf->buf);
		buf->buf = p;
		buf->cap = cap ? cap : 64;
	}
	return blob_copy(r, ref, buf->buf);
}

void blob_release(struct tb_region *r, const struct tb_blob_ref *ref)
{
	struct tb_cpu_ctl *c;

	if (!ref_in_region(r, ref))
		return;
	c = region_cpu(r, ref->area);
	for (uint64_t j = 0; j < chunks_for(r, ref->len); j++) {
		uint64_t w = b_make(ref->first, B_COMMITTED);
		/*
		 * release: pairs with the next claim's acquire, so our copy is
		 * done before its writer's fill.  A failure means the chunk was
		 * claimed already (overwrite mode) or released: nothing to do.
		 */
		atomic_compare_exchange_strong_explicit(chunk_word(r, c, ref->first + j), &w, b_make(ref->first, B_READ),
							memory_order_release, memory_order_relaxed);
	}
}

int blob_consume(struct tb_ring *ring, unsigned cpu, const struct tb_blob_ref *ref, struct tb_read_event *ev)
{
	struct tb_cpu_ctl *c = region_cpu(ring->r, cpu);
	int rc = blob_fetch(ring->r, ref, &ring->blob_copies[cpu]);

	if (rc < 0)
		return rc;
	blob_release(ring->r, ref);
	ev->kind = rc ? TB_READ_BLOB : TB_READ_BLOB_LOST;
	ev->data = rc ? ring->blob_copies[cpu].buf : NULL;
	ev->len = ref->len;
	count(rc ? &c->cnt.blob_read : &c->cnt.blob_lost);
	return 0;
}

long tb_blob_resolve(struct tb_ring *ring, const struct tb_blob_ref *ref, void *buf, size_t size)
{
	if (!ring || !ref || (!buf && ref->len))
		return -EINVAL;
	if (!ref_in_region(ring->r, ref))
		return -ESTALE;
	if (size < ref->len)
		return -ENOSPC;
	return blob_copy(ring->r, ref, buf) ? (long)ref->len : -ESTALE;
}
