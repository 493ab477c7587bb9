/* SPDX-License-Identifier: MIT */
/*
 * id_table.h - a table of fixed-size slots indexed by a 16-bit event ID,
 * allocated a block of 256 IDs at a time, when an ID of the block is first
 * stored.
 *
 * Why not one flat array of 65,536 slots: a format may carry any ID up to
 * 65535, but a trace uses tens to a few thousand IDs, nearly all below a few
 * thousand.  Flat tables were megabytes per open file (11 MiB for one
 * report's name columns, 2 MiB of printed counts, 512 KiB twice per schema),
 * zeroed and given back every time: most of the cost of opening a small file,
 * which a user reading many small traces pays (and a fuzzer, on every input).
 * Blocks cost what the IDs in use need; a look-up stays O(1): two loads.
 *
 * Addresses stay put: a block is neither moved nor freed before
 * id_table_free(), so a slot's address may be kept and handed to other
 * threads.  Threads: one thread stores (id_table_slot()); another may read a
 * slot, and the block pointer in front of it, only after an acquire that
 * pairs with a release the storing thread made after it filled the slot
 * (the reports' per-ID "ready" bits): the block pointer is written before
 * the slot, so both are visible then.  A reader never reads a block pointer
 * the storing thread may be writing: it reads only IDs it was told of.
 */
#ifndef TRACEBUF_ID_TABLE_H
#define TRACEBUF_ID_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define ID_TABLE_IDS 65536u
#define ID_BLOCK_BITS 8
#define ID_BLOCK_IDS (1u << ID_BLOCK_BITS)
#define ID_BLOCKS (ID_TABLE_IDS / ID_BLOCK_IDS)

struct id_table {
	char *block[ID_BLOCKS]; /* NULL: no ID of the block stored yet (its slots read as zero) */
	size_t slot_size;
};

static inline void id_table_init(struct id_table *t, size_t slot_size)
{
	*t = (struct id_table){.slot_size = slot_size};
}

/* id's slot, or NULL when no ID of its block was stored (then the slot would be all zero). */
static inline void *id_table_find(const struct id_table *t, uint32_t id)
{
	char *b = id < ID_TABLE_IDS ? t->block[id >> ID_BLOCK_BITS] : NULL;

	return b ? b + (size_t)(id & (ID_BLOCK_IDS - 1)) * t->slot_size : NULL;
}

/* id's slot for storing into, its block allocated (zeroed) on first use; NULL: no memory, or id > 65535. */
static inline void *id_table_slot(struct id_table *t, uint32_t id)
{
	char **b = id < ID_TABLE_IDS ? &t->block[id >> ID_BLOCK_BITS] : NULL;

	if (b && !*b)
		*b = calloc(ID_BLOCK_IDS, t->slot_size);
	return b && *b ? *b + (size_t)(id & (ID_BLOCK_IDS - 1)) * t->slot_size : NULL;
}

/*
 * The first slot at or after *id whose block exists, *id set to its ID;
 * NULL after the last.  Walks every stored ID (and the unused slots of
 * their blocks, which read as zero): for (id = 0; (p = id_table_next(t, &id)); id++).
 */
static inline void *id_table_next(const struct id_table *t, uint32_t *id)
{
	for (uint32_t i = *id; i < ID_TABLE_IDS; i = (i | (ID_BLOCK_IDS - 1)) + 1)
		if (t->block[i >> ID_BLOCK_BITS]) {
			*id = i;
			return id_table_find(t, i);
		}
	return NULL;
}

static inline void id_table_free(struct id_table *t)
{
	for (size_t i = 0; i < ID_BLOCKS; i++) {
		free(t->block[i]);
		t->block[i] = NULL;
	}
}

#endif
