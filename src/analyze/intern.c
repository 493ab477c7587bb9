// SPDX-License-Identifier: MIT
/* intern.c - byte strings numbered densely (intern.h). */
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "util/grow.h"

/*
 * A multiply-xor hash over 8-byte words, in two lanes so that the
 * multiplications of a long key (a stack of addresses) overlap; the tail
 * byte by byte.  Keys are comms, address lists and small ids.
 */
static uint64_t hash_bytes(const uint8_t *p, uint32_t len)
{
	uint64_t a = 0xcbf29ce484222325ull ^ len, b = 0x9e3779b97f4a7c15ull;
	uint32_t i = 0;

	for (; i + 16 <= len; i += 16) {
		uint64_t w, v;
		memcpy(&w, p + i, 8);
		memcpy(&v, p + i + 8, 8);
		a = (a ^ w) * 0x100000001b3ull;
		b = (b ^ v) * 0xff51afd7ed558ccdull;
		a ^= a >> 29;
		b ^= b >> 31;
	}
	if (i + 8 <= len) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		a = (a ^ w) * 0x100000001b3ull;
		a ^= a >> 29;
		i += 8;
	}
	if (i + 4 <= len) {
		uint32_t w;
		memcpy(&w, p + i, 4);
		b = (b ^ w) * 0xff51afd7ed558ccdull;
		i += 4;
	}
	for (; i < len; i++)
		a = (a ^ p[i]) * 0x100000001b3ull;
	a ^= b * 0xc4ceb9fe1a85ec53ull;
	return a ^ (a >> 32);
}

/* Equal keys of len bytes: short keys (ids, pids, comms) without a call. */
static bool same_key(const uint8_t *x, const uint8_t *y, uint32_t len)
{
	if (len <= 16) {
		uint64_t a[2] = {0}, b[2] = {0};
		memcpy(a, x, len);
		memcpy(b, y, len);
		return a[0] == b[0] && a[1] == b[1];
	}
	return !memcmp(x, y, len);
}

static bool grow_slots(struct intern *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t id = 0; id < t->count; id++) {
		size_t i = t->hashes[id] & (n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return true;
}

static bool grow_ids(struct intern *t)
{
	size_t n = t->cap ? t->cap * 2 : 256;
	uint64_t *h = realloc(t->hashes, n * sizeof(*h));
	if (h)
		t->hashes = h;
	size_t *o = realloc(t->offsets, n * sizeof(*o));
	if (o)
		t->offsets = o;
	uint32_t *l = realloc(t->lens, n * sizeof(*l));
	if (l)
		t->lens = l;
	if (!h || !o || !l || n > UINT32_MAX)
		return false;
	t->cap = n;
	return true;
}

static bool arena_room(struct intern *t, uint32_t len)
{
	uint8_t *a = tb__grow(t->arena, &t->arena_cap, t->used + len, 1, 4096);

	if (!a)
		return false;
	t->arena = a;
	return true;
}

int64_t intern_add(struct intern *t, const void *key, uint32_t len, bool *added)
{
	uint64_t h = hash_bytes(key, len);
	size_t i;

	*added = false;
	if (t->oom)
		return -1;
	if ((t->count + 1) * 2 > t->nslots && !grow_slots(t))
		return t->oom = true, -1;
	for (i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t id = t->slots[i] - 1;
		if (t->hashes[id] == h && t->lens[id] == len && same_key(t->arena + t->offsets[id], key, len))
			return id;
	}
	if ((t->count == t->cap && !grow_ids(t)) || !arena_room(t, len))
		return t->oom = true, -1;
	if (len)
		memcpy(t->arena + t->used, key, len);
	t->hashes[t->count] = h;
	t->offsets[t->count] = t->used;
	t->lens[t->count] = len;
	t->used += len;
	t->slots[i] = (uint32_t)t->count + 1;
	*added = true;
	return (int64_t)t->count++;
}

void *intern_room(void *arr, size_t *cap, size_t index, size_t elem)
{
	return tb__grow(arr, cap, index + 1, elem, 256);
}

void intern_free(struct intern *t)
{
	free(t->slots);
	free(t->hashes);
	free(t->offsets);
	free(t->lens);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

/* A new dense id for pid; -1 when out of memory. */
static int64_t pidmap_new(struct pidmap *m, int32_t pid)
{
	int32_t *pids = intern_room(m->pids, &m->pids_cap, m->count, sizeof(*pids));

	if (!pids || m->count >= UINT32_MAX - 1)
		return -1;
	m->pids = pids;
	pids[m->count] = pid;
	return (int64_t)m->count++;
}

/* pid's slot in the direct table, its block (and the table of blocks) allocated zeroed on first use; NULL: no memory. */
static uint32_t *pidmap_slot(struct pidmap *m, uint32_t pid)
{
	uint32_t **b;

	if (!m->block && !(m->block = calloc(PIDMAP_BLOCKS, sizeof(*m->block))))
		return NULL;
	b = &m->block[pid >> PIDMAP_BLOCK_BITS];
	if (!*b && !(*b = calloc(PIDMAP_BLOCK_PIDS, sizeof(**b))))
		return NULL;
	return &(*b)[pid & (PIDMAP_BLOCK_PIDS - 1)];
}

int64_t pidmap_add(struct pidmap *m, int32_t pid, bool *added)
{
	*added = false;
	if (pid >= 0 && (uint32_t)pid < PIDMAP_DIRECT) {
		uint32_t *slot = pidmap_slot(m, (uint32_t)pid);
		if (!slot)
			return -1;
		if (*slot)
			return *slot - 1;
		int64_t id = pidmap_new(m, pid);
		if (id >= 0) {
			*slot = (uint32_t)id + 1;
			*added = true;
		}
		return id;
	}
	bool fresh;
	int64_t k = intern_add(&m->other, &pid, sizeof(pid), &fresh);
	if (k < 0)
		return -1;
	if (!fresh)
		return m->other_ids[k];
	uint32_t *ids = intern_room(m->other_ids, &m->other_cap, (size_t)k, sizeof(*ids));
	int64_t id = ids ? pidmap_new(m, pid) : -1;
	if (id < 0)
		return -1;
	m->other_ids = ids;
	ids[k] = (uint32_t)id;
	*added = true;
	return id;
}

void pidmap_free(struct pidmap *m)
{
	for (size_t i = 0; m->block && i < PIDMAP_BLOCKS; i++)
		free(m->block[i]);
	free(m->block);
	intern_free(&m->other);
	free(m->other_ids);
	free(m->pids);
	memset(m, 0, sizeof(*m));
}
