/* SPDX-License-Identifier: MIT */
/*
 * hist_internal.h - what the parts of tb_hist share: the compiled spec
 * (hist_parse.c), the table (hist_table.c), the feeding loop (hist_feed.c)
 * and the printer (hist_print.c).
 */
#ifndef TB_HIST_INTERNAL_H
#define TB_HIST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebuf/hist.h"
#include "tracebuf/schema.h"

/* The kernel's limits (tracing_map.h, trace_events_hist.c). */
#define HIST_KEYS_MAX 3
#define HIST_VALS_MAX 2 /* besides hitcount */
#define HIST_SORT_MAX 2
#define HIST_STR_MAX 256 /* MAX_FILTER_STR_VAL: a dynamic string key's slot */
#define HIST_BITS_MIN 7
#define HIST_BITS_MAX 17
#define HIST_BITS_DEFAULT 11

enum hist_source {
	HIST_SRC_FIELD,	    /* a field of the record */
	HIST_SRC_TIMESTAMP, /* common_timestamp: the record's time stamp */
	HIST_SRC_CPU,	    /* common_cpu: the CPU whose buffer held it */
};

enum hist_mod {
	HIST_MOD_NONE,
	HIST_MOD_HEX,
	HIST_MOD_SYM,
	HIST_MOD_SYM_OFFSET,
	HIST_MOD_EXECNAME,
	HIST_MOD_SYSCALL,
	HIST_MOD_LOG2,
	HIST_MOD_BUCKETS,
	HIST_MOD_USECS,
};

enum hist_str {
	HIST_STR_NONE,
	HIST_STR_STATIC, /* char name[N] */
	HIST_STR_DYN,	 /* __data_loc char[]: offset from the record start */
	HIST_STR_REL,	 /* __rel_loc char[]: offset from the end of the u32 */
};

/* One key or value, compiled: where it is in a record and how it is shown. */
struct hist_field {
	char name[TB_NAME_MAX]; /* as the kernel prints it (no modifier) */
	enum hist_source src;
	enum hist_mod mod;
	enum hist_str str;
	uint64_t buckets;    /* .buckets=N */
	uint32_t offset;     /* in the record */
	uint32_t size;	     /* of the field in the record */
	bool is_signed;	     /* numbers are sign-extended to 64 bits, as the kernel does */
	uint32_t key_offset; /* keys: the slot in the compound key */
	uint32_t key_size;   /* keys: 8 for a number, the string's room rounded up to 8 */
};

/* A sort key: hitcount, a value (1..nvals) or a key. */
struct hist_sort {
	bool is_key;
	unsigned index; /* is_key: into keys[]; else 0 = hitcount, i = vals[i - 1] */
	bool descending;
};

/*
 * The table: entries laid out as u64 first_ts, u64 hitcount, u64
 * sums[nvals], then the key bytes; an open-addressing index of 2^k slots
 * (always at most half full) points at them.
 */
struct hist_slot {
	uint32_t hash;
	uint32_t entry; /* index + 1; 0 = empty */
};

struct hist_table {
	uint32_t key_size;
	uint32_t nvals;
	size_t entry_words; /* entry size in u64 words */
	uint64_t *entries;
	size_t count, cap;
	struct hist_slot *slots;
	size_t mask; /* slots - 1 */
};

#define HIST_E_FIRST_TS 0
#define HIST_E_HITCOUNT 1
#define HIST_E_SUMS 2

/* skip_seen: where the last pass over a CPU's pages stopped counting. */
struct hist_mark {
	bool valid;
	uint64_t ts;	/* the time of the last record counted */
	uint64_t at_ts; /* records counted at exactly that time */
	uint64_t skip;	/* in this pass: those at ts still to be passed over */
};

struct tb_hist {
	char system[TB_NAME_MAX];
	char event[TB_NAME_MAX];
	uint32_t id;
	uint32_t min_size; /* bytes a record needs for the fixed fields used */
	struct hist_field keys[HIST_KEYS_MAX];
	unsigned nkeys;
	struct hist_field vals[HIST_VALS_MAX];
	unsigned nvals;
	struct hist_sort sort[HIST_SORT_MAX];
	unsigned nsort;
	unsigned map_bits;
	bool timestamps; /* common_timestamp used: the trigger info names the clock */
	bool ts_usecs;	 /* some field says .usecs: every time stamp is in microseconds */
	char clock[32];
	bool ns_clock;
	uint32_t tsc_mult, tsc_shift; /* tb_hist_set_tsc2nsec(): mult 0 = none */
	uint32_t key_size;
	struct hist_table table;
	struct tb_schema *schema;
	struct tb_filter *filter; /* "if EXPR": only records it keeps count (NULL: all) */
	char *filter_text;	  /* EXPR as the trigger info prints it */
	unsigned filter_uses;	  /* tb_filter_uses(): whether it reads the CPU or the comm */
	uint64_t filtered;	  /* records of the event the filter left out */
	uint64_t bad_records;
	uint8_t *key_buf; /* key_size bytes, for building one key */
	bool skip_seen;	  /* tb_hist_skip_seen(): each pass reads its source from the start */
	uint64_t until;	  /* tb_hist_count_until(): later records wait for a later pass (0: none) */
	struct hist_mark *marks; /* [nmarks]: per CPU slot, with skip_seen */
	size_t nmarks;
	uint64_t dropped; /* events counted as Dropped before the table (hist_attach.c's full maps) */
};

/* hist_parse.c */
int hist_parse(struct tb_hist *h, const char *spec, const struct tb_format *fmt,
	       struct tb_hist_error *err);
/* The modifier's name as the kernel prints it, NULL for none. */
const char *hist_mod_name(enum hist_mod m);

/* hist_feed.c: the compound key of rec into key (key_size bytes); false when a string points outside it. */
bool hist_build_key(const struct tb_hist *h, uint8_t *key, const uint8_t *rec, uint32_t len, uint64_t ts, int cpu);
/* Value i of rec, as it is added to the sums. */
uint64_t hist_value(const struct tb_hist *h, unsigned i, const uint8_t *rec, uint64_t ts, int cpu);

/* hist_table.c */
int hist_table_init(struct hist_table *t, uint32_t key_size, uint32_t nvals);
void hist_table_free(struct hist_table *t);
/* The entry of key (created with first_ts = ts if new); NULL when out of memory. */
/* A 64-bit mix per word (keys are whole u64 words, zero-padded). */
/*
 * The hash of a key of size bytes whose words from end on are zero (end a
 * multiple of 8): hist_hash_key() without its search for end.
 */
static inline uint32_t hist_hash_key_upto(const void *key, uint32_t size, uint32_t end)
{
	const uint8_t *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ size, w = 0;

	while (end >= 8 && (memcpy(&w, p + end - 8, 8), w == 0))
		end -= 8;
	for (uint32_t i = 0; i < end; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 29));
}

/*
 * Trailing zero words are left out: a string key is mostly its NUL
 * padding (256 bytes for "/index"), and equal keys have equal padding, so
 * the hash stays a function of the key.  A look-up of an attached hist
 * hashed 32 words a hit for a short route (6.9x tb_write).
 */
static inline uint32_t hist_hash_key(const void *key, uint32_t size)
{
	const uint8_t *p = key;
	uint32_t end = size;

	for (uint64_t four[4]; end >= 32 && (memcpy(four, p + end - 32, 32), !(four[0] | four[1] | four[2] | four[3]));)
		end -= 32;
	return hist_hash_key_upto(key, size, end);
}

uint64_t *hist_table_get(struct hist_table *t, const void *key, uint64_t ts);
static inline const uint8_t *hist_entry_key(const struct hist_table *t, const uint64_t *e)
{
	return (const uint8_t *)(e + HIST_E_SUMS + t->nvals);
}
static inline uint64_t *hist_table_entry(const struct hist_table *t, size_t i)
{
	return t->entries + i * t->entry_words;
}

/* syscall_names.c: the kernel's name of system call nr, NULL if it has none. */
const char *hist_syscall_name(uint64_t nr);

#endif
