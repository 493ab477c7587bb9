/* SPDX-License-Identifier: MIT */
/*
 * func_internal.h - what the function tracer's files share (func.c: the
 * hooks and their control; func_exclude.c: the run-time exclusion list).
 * Internal to libtracebuf-func.a.
 */
#ifndef TRACEBUF_FUNC_INTERNAL_H
#define TRACEBUF_FUNC_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

/* Linked into programs: keep the names out of theirs. */
#define excl_published tb__func_excl_published
#define excl_from_env tb__func_excl_from_env

/* Everything the tracer runs is built without instrumentation; this says so again. */
#define TB_NOTRACE __attribute__((no_instrument_function))

/* What the exclusion list says about one function. */
enum {
	EXCL_SELF = 1,     /* not recorded */
	EXCL_CHILDREN = 2, /* nothing it calls is recorded either */
};

/*
 * An immutable open-addressing set of function addresses: built whole,
 * published with one pointer store, never changed after, so the hooks read
 * it without a lock.
 */
struct excl_table {
	uint64_t mask; /* slots - 1 */
	struct excl_slot {
		uint64_t fn; /* 0: empty */
		uint32_t flags;
	} slot[];
};

/*
 * The published table, NULL when nothing is excluded.  Read by the hooks
 * inline (a call there cost a record 1-2 ns of saved registers).
 */
extern _Atomic(struct excl_table *) excl_published;

static inline TB_NOTRACE const struct excl_table *excl_current(void)
{
	/* acquire: pairs with publish()'s exchange (func_exclude.c), the table's slots before its pointer */
	return atomic_load_explicit(&excl_published, memory_order_acquire);
}

static inline TB_NOTRACE uint64_t excl_hash(uint64_t fn)
{
	return (fn >> 4) * 0x9e3779b97f4a7c15ull;
}

/* EXCL_* flags for fn, 0 when it is not excluded. */
static inline TB_NOTRACE unsigned excl_lookup(const struct excl_table *t, uint64_t fn)
{
	for (uint64_t i = excl_hash(fn) & t->mask;; i = (i + 1) & t->mask) {
		if (t->slot[i].fn == fn)
			return t->slot[i].flags;
		if (t->slot[i].fn == 0)
			return 0;
	}
}

/* Exclude the patterns of a TRACEBUF_FUNC_EXCLUDE value. 0 or -errno. */
int excl_from_env(const char *value);

#endif
