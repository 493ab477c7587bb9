/* SPDX-License-Identifier: MIT */
/*
 * intern.h - byte strings (a comm, a stack of addresses, a composite key)
 * numbered densely in the order they were first seen, so an analysis keeps
 * small integers per task and per interval instead of copies.
 *
 * Open addressing with linear probing, grown at half full; the keys live
 * back to back in one arena.  Lookups cost one hash of the key and, on a
 * hit, one memcmp.
 *
 * Ownership: the table owns its arena; intern_key() pointers stay valid
 * until the next intern_add() (the arena may move) or intern_free().
 */
#ifndef TRACEBUF_ANALYZE_INTERN_H
#define TRACEBUF_ANALYZE_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intern {
	uint32_t *slots;  /* id + 1, 0 = empty */
	size_t nslots;    /* a power of two */
	uint64_t *hashes; /* by id */
	size_t *offsets;  /* by id: where the key starts in the arena */
	uint32_t *lens;   /* by id */
	size_t count, cap;
	uint8_t *arena;
	size_t used, arena_cap;
	bool oom; /* an allocation failed: intern_add() returns -1 from then on */
};

/* The id of key (len bytes), adding it if new (*added says which); -1 when out of memory. */
int64_t intern_add(struct intern *t, const void *key, uint32_t len, bool *added);
/* The key of id and its length. */
static inline const void *intern_key(const struct intern *t, uint32_t id, uint32_t *len)
{
	*len = t->lens[id];
	return t->arena + t->offsets[id];
}
void intern_free(struct intern *t);

/*
 * Room in arr (elements of elem bytes, *cap of them) for index: the arrays
 * kept beside a table, by id.  Doubles; returns the array (moved or not),
 * or NULL when out of memory (arr is then still valid and unchanged).
 */
void *intern_room(void *arr, size_t *cap, size_t index, size_t elem);

/*
 * Task ids numbered densely, as intern does, but without hashing the
 * common case: a pid below the kernel's PID_MAX_LIMIT is found in a table
 * indexed by pid; others (damaged or made-up input) go through an intern
 * table.  The direct table is in blocks of 4,096 pids, each allocated when
 * a pid of it is first seen: one flat array grown to the largest pid was
 * up to 16 MiB made and zeroed for a single high pid (pid_max is 4,194,304
 * on many systems), the largest part of an analysis of a small capture.
 */
#define PIDMAP_DIRECT (1u << 22)
#define PIDMAP_BLOCK_BITS 12
#define PIDMAP_BLOCK_PIDS (1u << PIDMAP_BLOCK_BITS)
#define PIDMAP_BLOCKS (PIDMAP_DIRECT / PIDMAP_BLOCK_PIDS)

struct pidmap {
	uint32_t **block;     /* PIDMAP_BLOCKS of them (NULL until a pid is added): by pid, dense id + 1, 0 = not seen */
	struct intern other;  /* pids outside the table */
	uint32_t *other_ids;  /* by intern id: dense id */
	size_t other_cap;
	int32_t *pids;	      /* by dense id: the pid */
	size_t count, pids_cap;
};

/* The dense id of pid, made if new (*added says); -1 when out of memory. */
int64_t pidmap_add(struct pidmap *m, int32_t pid, bool *added);

/* The dense id of a pid seen before and kept in the direct table, else -1: no call, for every record. */
static inline int64_t pidmap_known(const struct pidmap *m, int32_t pid)
{
	const uint32_t *b = pid >= 0 && (uint32_t)pid < PIDMAP_DIRECT && m->block ? m->block[pid >> PIDMAP_BLOCK_BITS] : NULL;
	uint32_t v = b ? b[pid & (PIDMAP_BLOCK_PIDS - 1)] : 0;

	return v ? (int64_t)v - 1 : -1;
}
void pidmap_free(struct pidmap *m);

#endif
