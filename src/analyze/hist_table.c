// SPDX-License-Identifier: MIT
/*
 * hist_table.c - the hist's hash table: fixed-size keys to entries of
 * (first time stamp, hitcount, sums).  Entries live in one growing array
 * in the order they were made; an open-addressing index (linear probing,
 * at most half full, so a probe always ends at an empty slot) maps a key's
 * hash to them.  Unlike the kernel's tracing_map it never refuses a key:
 * the size= limit is applied when printing, by first time stamp.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist_internal.h"
#include "util/grow.h"

int hist_table_init(struct hist_table *t, uint32_t key_size, uint32_t nvals)
{
	memset(t, 0, sizeof(*t));
	t->key_size = key_size;
	t->nvals = nvals;
	t->entry_words = HIST_E_SUMS + nvals + key_size / 8;
	t->mask = 1023;
	t->slots = calloc(t->mask + 1, sizeof(*t->slots));
	return t->slots ? 0 : -ENOMEM;
}

void hist_table_free(struct hist_table *t)
{
	free(t->entries);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Keys are whole u64 words: compared word by word, inline (a memcmp call costs more than the compare). */
static inline bool same_key(const uint8_t *a, const uint8_t *b, uint32_t size)
{
	for (uint32_t i = 0; i < size; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	return true;
}

static int grow_index(struct hist_table *t)
{
	size_t n = (t->mask + 1) * 2;
	struct hist_slot *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++) {
		size_t j = t->slots[i].hash & (n - 1);
		if (!t->slots[i].entry)
			continue;
		while (slots[j].entry)
			j = (j + 1) & (n - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->mask = n - 1;
	return 0;
}

static uint64_t *new_entry(struct hist_table *t, const void *key, uint64_t ts)
{
	uint64_t *e;

	if (t->count == t->cap) {
		uint64_t *grown = tb__grow(t->entries, &t->cap, t->count + 1, t->entry_words * sizeof(uint64_t), 256);
		if (!grown)
			return NULL;
		t->entries = grown;
	}
	e = hist_table_entry(t, t->count++);
	memset(e, 0, t->entry_words * sizeof(uint64_t));
	e[HIST_E_FIRST_TS] = ts;
	memcpy((uint8_t *)hist_entry_key(t, e), key, t->key_size);
	return e;
}

uint64_t *hist_table_get(struct hist_table *t, const void *key, uint64_t ts)
{
	uint32_t hash = hist_hash_key(key, t->key_size);
	size_t i = hash & t->mask;
	uint64_t *e;

	for (; t->slots[i].entry; i = (i + 1) & t->mask) {
		if (t->slots[i].hash != hash)
			continue;
		e = hist_table_entry(t, t->slots[i].entry - 1);
		if (same_key(hist_entry_key(t, e), key, t->key_size)) {
			/* CPUs are read one after the other: keep the earliest first sighting. */
			if (ts < e[HIST_E_FIRST_TS])
				e[HIST_E_FIRST_TS] = ts;
			return e;
		}
	}
	if (t->count >= UINT32_MAX - 1 || !(e = new_entry(t, key, ts)))
		return NULL;
	t->slots[i] = (struct hist_slot){.hash = hash, .entry = (uint32_t)t->count};
	/* Keep the index at most half full, so every probe meets an empty slot. */
	if (t->count * 2 > t->mask && grow_index(t) < 0) {
		t->count--; /* undo: the entry is not reachable */
		t->slots[i].entry = 0;
		return NULL;
	}
	return e;
}

