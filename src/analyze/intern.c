// SPDX-License-Identifier: MIT
/* intern.c - byte strings numbered densely (intern.h). */
#include <stdlib.h>
#include <string.h>

#include "intern.h"

/* 64-bit FNV-1a over words where possible: keys are comms, address lists and ids. */
static uint64_t hash_bytes(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 32);
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
	size_t n = t->arena_cap ? t->arena_cap : 4096;
	uint8_t *a;

	if (t->used + len <= t->arena_cap)
		return true;
	while (n < t->used + len)
		n *= 2;
	a = realloc(t->arena, n);
	if (!a)
		return false;
	t->arena = a;
	t->arena_cap = n;
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
		if (t->hashes[id] == h && t->lens[id] == len && !memcmp(t->arena + t->offsets[id], key, len))
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

const void *intern_key(const struct intern *t, uint32_t id, uint32_t *len)
{
	*len = t->lens[id];
	return t->arena + t->offsets[id];
}

void *intern_room(void *arr, size_t *cap, size_t index, size_t elem)
{
	size_t n = *cap ? *cap : 256;
	void *grown;

	if (index < *cap)
		return arr;
	while (n <= index)
		n *= 2;
	if (!(grown = realloc(arr, n * elem)))
		return NULL;
	*cap = n;
	return grown;
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
