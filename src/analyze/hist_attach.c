// SPDX-License-Identifier: MIT
/*
 * hist_attach.c - hists attached at the source (tracebuf/hist.h).
 *
 * Write side (hit): the event's gate has its hist byte set (registry.c),
 * so its emitter builds the record and calls tb_event_hist_hit, which lands in
 * attached_hit here.  The thread's own table is found through a
 * thread-local cache; the table is a fixed open-addressing array of
 * 2^(bits+1) slots for at most 2^bits entries, made at attach time.
 *
 * Invariants:
 *  - a table has one writer at a time: the thread that claimed it (busy,
 *    taken with an acquire exchange, given back with a release store that
 *    the next claimer's exchange pairs with), so the writer's updates
 *    are plain load + store of relaxed atomics, never a locked RMW;
 *  - a slot's key words and first time stamp are written before its state
 *    is set with a release store; the reader (print) loads state with
 *    acquire before reading the key, which then never changes;
 *  - counters (hitcount, sums, dropped) are relaxed: the reader takes a
 *    snapshot of each, and may miss updates that are in flight;
 *  - a signal handler nesting on a thread inside an update (in_update) never
 *    touches the interrupted table: it claims a free one for its one hit.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <time.h>

#include "hist_internal.h"
#include "hist_region.h"
#include "load_int.h"
#include "source/registry.h"
#include "tracebuf/events.h"
#include "tracebuf/filter.h"
#include "tracebuf/hist.h"

/* A table: its header and slots in the hist's region (hist_region.h). */
struct hit_table {
	struct hist_region_table *rt; /* busy, used, dropped */
	_Atomic uint64_t *slots;      /* nslots * slot_words */
};

struct attached {
	char event[2 * TB_NAME_MAX];
	uint16_t id;
	bool wants_cpu;		  /* common_cpu is a key or value */
	bool wants_time;	  /* common_timestamp is */
	bool plain_keys, plain_vals; /* every key / value a number read as it is (the inline path) */
	struct tb_hist *h;	  /* the spec (read only on the write side); print merges into its table */
	struct tb_schema *schema; /* for names at print time */
	size_t slot_words, nslots, max_entries; /* the geometry, private: the region's copy is for readers */
	struct hist_region_header *hdr;	/* the region: header, then texts, tables, slots */
	size_t region_size;
	int fd;				/* the memfd readers find in /proc/PID/fd (-1: none) */
	struct hit_table tables[TB_HIST_ATTACH_TABLES];
	struct attached *retired_next; /* removed ones, kept (see tb_hist_remove) */
};

/* The attached hists, published with release, read with acquire (attached_hit). */
static struct attached *_Atomic attached[TB_HIST_ATTACH_MAX];
/* Attach, remove and print: one at a time (never taken on the write side). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Detached hists (under lock): a writer may still be inside one, so they stay, and stay reachable. */
static struct attached *retired;

/* This thread's tables (cached per attached hist), and whether it is inside an update. */
struct mine {
	struct attached *a;
	struct hit_table *t;
};
static __thread struct mine mine[TB_HIST_ATTACH_MAX];
static __thread volatile sig_atomic_t in_update;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A free table of a, claimed (acquire: pairs with release_table's store), or NULL. */
static struct hit_table *claim_table(struct attached *a)
{
	for (size_t i = 0; i < TB_HIST_ATTACH_TABLES; i++) {
		struct hit_table *t = &a->tables[i];
		if (!atomic_load_explicit(&t->rt->busy, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&t->rt->busy, 1, memory_order_acquire))
			return t;
	}
	return NULL;
}

/* release: the next claimer's acquire exchange sees every update made in it */
static void release_table(struct hit_table *t)
{
	atomic_store_explicit(&t->rt->busy, 0, memory_order_release);
}

/* At thread exit: its tables back to their pools (their counts stay). */
static void thread_exit(void *unused)
{
	(void)unused;
	for (size_t i = 0; i < TB_HIST_ATTACH_MAX; i++)
		if (mine[i].t)
			release_table(mine[i].t);
	memset(mine, 0, sizeof(mine));
}

/*
 * fork: the child's writers must not share the parent's tables (each has
 * one writer), so the child's regions become private copies, as calloc'ed
 * tables were: memory copied, mapped over the shared one at the same
 * address (mremap is atomic), and the memfd closed: the child's hists are
 * read in the child only.  Attach, remove and print are held off meanwhile.
 */
static void privatize(struct attached *a)
{
	void *copy;

	if (!a || a->fd < 0)
		return;
	copy = mmap(NULL, a->region_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy != MAP_FAILED) {
		memcpy(copy, a->hdr, a->region_size);
		if (mremap(copy, a->region_size, a->region_size, MREMAP_MAYMOVE | MREMAP_FIXED, a->hdr) == MAP_FAILED)
			munmap(copy, a->region_size); /* left shared: counts the parent also writes */
	}
	close(a->fd);
	a->fd = -1;
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static int signal_pipe[2];

static void fork_child(void)
{
	signal_pipe[1] = -1; /* the printing thread is the parent's: the child's signal prints nothing */
	for (size_t i = 0; i < TB_HIST_ATTACH_MAX; i++)
		privatize(atomic_load_explicit(&attached[i], memory_order_relaxed)); /* one thread: the child's */
	for (struct attached *a = retired; a; a = a->retired_next)
		privatize(a);
	pthread_mutex_unlock(&lock);
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static inline void add_relaxed(_Atomic uint64_t *w, uint64_t v)
{
	/* one writer per table: a load and a store, no locked RMW */
	atomic_store_explicit(w, atomic_load_explicit(w, memory_order_relaxed) + v, memory_order_relaxed);
}

/*
 * The words of key a slot must match to hold it.  A hist keyed by one
 * string: its room after the NUL is zero in every key hist_build_key builds
 * (the probe and each key stored before it alike), so keys that agree up
 * to the word holding the NUL agree in the rest - a hit on a route compares
 * a word or two of its 256-byte room, not 32.  Other keys: every word.
 */
static size_t one_string_key_words(const struct attached *a, const uint64_t *key, size_t words)
{
	const struct tb_hist *h = a->h;

	if (a->plain_keys || h->nkeys != 1 || h->keys[0].str == HIST_STR_NONE)
		return words;
	return strnlen((const char *)key, h->keys[0].key_size - 1) / 8 + 1;
}

/*
 * The slot of key in t, made if new (its state then odd: the update under
 * way, see update); NULL when t is full (counted).  The probe is bounded by
 * the slots: a region scribbled from outside cannot make it spin.
 */
static _Atomic uint64_t *find_slot(struct attached *a, struct hit_table *t, const uint64_t *key, size_t words)
{
	/* the rest is zero: the hash hist_hash_key gives, without looking for where the zeros start */
	size_t cmp_words = one_string_key_words(a, key, words);
	size_t mask = a->nslots - 1, i = hist_hash_key_upto(key, (uint32_t)(words * 8), (uint32_t)(cmp_words * 8)) & mask;

	for (size_t probes = 0; probes < a->nslots; probes++, i = (i + 1) & mask) {
		_Atomic uint64_t *s = t->slots + i * a->slot_words, *k = s + SLOT_SUMS + a->h->nvals;
		size_t w = 0;
		if (!atomic_load_explicit(&s[SLOT_STATE], memory_order_relaxed)) { /* our own writes */
			uint64_t used = atomic_load_explicit(&t->rt->used, memory_order_relaxed);
			if (used >= a->max_entries) /* at most half the slots: a probe always ends */
				break;
			for (w = 0; w < words; w++)
				atomic_store_explicit(&k[w], key[w], memory_order_relaxed);
			atomic_store_explicit(&s[SLOT_FIRST_TS], now_ns(), memory_order_relaxed);
			/* release: pairs with a reader's acquire load of the state; key and time first */
			atomic_store_explicit(&s[SLOT_STATE], 1, memory_order_release);
			atomic_store_explicit(&t->rt->used, used + 1, memory_order_relaxed);
			return s;
		}
		while (w < cmp_words && atomic_load_explicit(&k[w], memory_order_relaxed) == key[w])
			w++;
		if (w == cmp_words)
			return s;
	}
	add_relaxed(&t->rt->dropped, 1);
	return NULL;
}

static bool filter_keeps(const struct attached *a, const void *rec, uint32_t len)
{
	struct tb_filter_env env = {.cpu = -1, .comm = NULL};
	char comm[17] = "";

	if (a->h->filter_uses & TB_FILTER_USES_CPU)
		env.cpu = sched_getcpu();
	if (a->h->filter_uses & TB_FILTER_USES_COMM) {
		prctl(PR_GET_NAME, comm); /* the thread's own name, as the kernel's filter sees it */
		env.comm = comm;
	}
	return tb_filter_match(a->h->filter, rec, len, &env);
}

/* One hit of a into t. */
static void update(struct attached *a, struct hit_table *t, const uint8_t *rec, uint32_t len)
{
	const struct tb_hist *h = a->h;
	uint64_t key[(HIST_KEYS_MAX * HIST_STR_MAX) / 8 + HIST_KEYS_MAX];
	uint64_t ts = a->wants_time ? now_ns() : 0;
	int cpu = a->wants_cpu ? sched_getcpu() : 0;
	_Atomic uint64_t *s;
	uint64_t seq;

	if (len < h->min_size)
		return; /* the emitter builds whole records: cannot happen */
	if (a->plain_keys) {
		for (unsigned i = 0; i < h->nkeys; i++)
			key[i] = load_int(rec + h->keys[i].offset, h->keys[i].size, h->keys[i].is_signed);
	} else if (!hist_build_key(h, (uint8_t *)key, rec, len, ts, cpu)) {
		return;
	}
	s = find_slot(a, t, key, h->key_size / 8);
	if (!s)
		return;
	/* The seqlock (hist_region.h): odd while the counters change (a new slot is odd already). */
	seq = atomic_load_explicit(&s[SLOT_STATE], memory_order_relaxed);
	if (!(seq & 1)) {
		atomic_store_explicit(&s[SLOT_STATE], seq + 1, memory_order_relaxed);
		/* release fence: the odd state is seen before any counter changed below, by a
		 * reader whose acquire fence follows its copy of them (hist_region_merge) */
		atomic_thread_fence(memory_order_release);
	}
	add_relaxed(&s[SLOT_HITCOUNT], 1);
	for (unsigned i = 0; i < h->nvals; i++) {
		const struct hist_field *f = &h->vals[i];
		uint64_t v = a->plain_vals ? load_int(rec + f->offset, f->size, f->is_signed)
					   : hist_value(h, i, rec, ts, cpu);
		add_relaxed(&s[SLOT_SUMS + i], v);
	}
	/* release: pairs with the reader's acquire load of the state; the counters are whole */
	atomic_store_explicit(&s[SLOT_STATE], (seq | 1) + 1, memory_order_release);
}

static struct attached *attached_for(uint16_t id, size_t *at)
{
	for (size_t i = 0; i < TB_HIST_ATTACH_MAX; i++) {
		/* acquire: pairs with attach's release store; the hist and tables were made before */
		struct attached *a = atomic_load_explicit(&attached[i], memory_order_acquire);
		if (a && a->id == id) {
			*at = i;
			return a;
		}
	}
	return NULL;
}

/* A hit nesting in a signal handler (or finding the pool empty): a table of its own for one hit. */
static void hit_borrowed(struct attached *a, const uint8_t *rec, uint32_t len)
{
	struct hit_table *t = claim_table(a);

	if (!t) {
		atomic_fetch_add_explicit(&a->hdr->no_table, 1, memory_order_relaxed);
		return;
	}
	update(a, t, rec, len);
	release_table(t);
}

static void attached_hit(const struct tb_event_desc *ev, const void *rec, uint32_t len)
{
	size_t at;
	struct attached *a = attached_for(ev->id, &at);
	struct mine *m;

	if (!a)
		return;
	if (a->h->filter && !filter_keeps(a, rec, len)) {
		atomic_fetch_add_explicit(&a->hdr->filtered, 1, memory_order_relaxed);
		return;
	}
	if (in_update) {
		hit_borrowed(a, rec, len);
		return;
	}
	in_update = 1;
	atomic_signal_fence(memory_order_seq_cst); /* the flag is set before the table is touched */
	m = &mine[at];
	if (m->a != a) {
		m->a = a;
		m->t = claim_table(a);
		if (m->t)
			pthread_setspecific(exit_key, mine); /* any non-NULL value: the destructor runs */
	}
	if (m->t)
		update(a, m->t, rec, len);
	else
		hit_borrowed(a, rec, len);
	atomic_signal_fence(memory_order_seq_cst);
	in_update = 0;
}

/* ---------------------------------------------------------------- attach */

struct find_format {
	const char *system, *name;
	char *text;
	size_t len;
};

static int find_format(void *ctx, const struct tb_events_info *ev)
{
	struct find_format *f = ctx;

	if (strcmp(ev->system, f->system) || strcmp(ev->name, f->name))
		return 0;
	f->text = malloc(ev->format_len + 1);
	if (f->text) {
		memcpy(f->text, ev->format, ev->format_len);
		f->len = ev->format_len;
	}
	return 1;
}

/* ":record" taken out of spec (into out); whether it was there. */
static bool take_record(const char *spec, char *out, size_t size)
{
	const char *p = strstr(spec, ":record");
	bool found = false;

	snprintf(out, size, "%s", spec);
	while ((p = strstr(out, ":record")) && (p[7] == '\0' || p[7] == ':')) {
		memmove((char *)p, p + 7, strlen(p + 7) + 1);
		found = true;
	}
	return found;
}

/* A field read from the record as it is: a number, no modifier (8 bytes of the key each, in order). */
static bool plain(const struct hist_field *f)
{
	return f->src == HIST_SRC_FIELD && f->str == HIST_STR_NONE && f->mod == HIST_MOD_NONE;
}

static bool all_plain(const struct hist_field *f, unsigned n, bool keys)
{
	for (unsigned i = 0; i < n; i++)
		if (!plain(&f[i]) || (keys && f[i].key_offset != 8 * i))
			return false;
	return true;
}

static bool uses_source(const struct tb_hist *h, enum hist_source src)
{
	for (unsigned i = 0; i < h->nkeys; i++)
		if (h->keys[i].src == src)
			return true;
	for (unsigned i = 0; i < h->nvals; i++)
		if (h->vals[i].src == src)
			return true;
	return false;
}

static void free_attached(struct attached *a)
{
	if (!a)
		return;
	if (a->hdr)
		munmap(a->hdr, a->region_size);
	if (a->fd >= 0)
		close(a->fd);
	tb_hist_free(a->h);
	tb_schema_free(a->schema);
	free(a);
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/*
 * Shared memory of size bytes readers in other processes find: a memfd
 * named after the event, sealed against shrinking and growing (a reader's
 * mapping can never lose its pages).  Where memfds are refused, private
 * memory: the hist works, only not from outside.  MAP_FAILED or the mapping.
 */
static void *region_map(const char *event, size_t size, int *fd)
{
	char name[250]; /* memfd_create's limit (249 bytes): a long name is cut; readers match the prefix */
	void *p;

	if (snprintf(name, sizeof(name), "%s%s", HIST_REGION_NAME, event) >= (int)sizeof(name))
		name[sizeof(name) - 1] = '\0'; /* cut, as said */
	*fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0)
		return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ftruncate(*fd, (off_t)size) < 0 ||
	    fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
	    (p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
		close(*fd);
		*fd = -1;
		return MAP_FAILED;
	}
	return p;
}

/* a's region: the header and texts a reader needs (hist_region.h), and the tables in it. */
static int make_region(struct attached *a, const char *spec, const char *format, size_t format_len)
{
	size_t elen = strlen(a->event), slen = strlen(spec), table_bytes = a->nslots * a->slot_words * 8;
	size_t tables_off = round_up(sizeof(struct hist_region_header) + elen + slen + format_len, 64);
	size_t slots_off = round_up(tables_off + TB_HIST_ATTACH_TABLES * sizeof(struct hist_region_table), 4096);
	struct hist_region_header *r;
	char *text;

	if (elen + slen + format_len > HIST_REGION_TEXT_MAX)
		return -E2BIG;
	a->region_size = slots_off + TB_HIST_ATTACH_TABLES * table_bytes;
	r = region_map(a->event, a->region_size, &a->fd);
	if (r == MAP_FAILED)
		return -ENOMEM;
	a->hdr = r;
	memcpy(r->magic, HIST_REGION_MAGIC, sizeof(r->magic));
	r->version = HIST_REGION_VERSION;
	r->header_size = sizeof(*r);
	r->region_size = a->region_size;
	r->pid = (uint32_t)getpid();
	r->ntables = TB_HIST_ATTACH_TABLES;
	r->nslots = (uint32_t)a->nslots;
	r->slot_words = (uint32_t)a->slot_words;
	r->max_entries = (uint32_t)a->max_entries;
	r->event_len = (uint32_t)elen;
	r->spec_len = (uint32_t)slen;
	r->format_len = (uint32_t)format_len;
	r->tables_off = tables_off;
	r->slots_off = slots_off;
	text = (char *)(r + 1);
	memcpy(text, a->event, elen);
	memcpy(text + elen, spec, slen);
	memcpy(text + elen + slen, format, format_len);
	for (size_t i = 0; i < TB_HIST_ATTACH_TABLES; i++) {
		a->tables[i].rt = (struct hist_region_table *)((uint8_t *)r + tables_off) + i;
		a->tables[i].slots = (_Atomic uint64_t *)((uint8_t *)r + slots_off + i * table_bytes);
	}
	return 0;
}

/* The hist of spec for event, its schema and tables made. */
static int new_attached(const char *event, const char *spec, struct tb_hist_error *err, struct attached **out)
{
	char system[TB_NAME_MAX], *colon = strchr(event, ':');
	struct find_format ff = {0};
	struct tb_format fmt;
	struct tb_problem perr;
	struct attached *a;
	int rc;

	if (!colon || (size_t)(colon - event) >= sizeof(system))
		return -EINVAL;
	snprintf(system, sizeof(system), "%.*s", (int)(colon - event), event);
	ff.system = system;
	ff.name = colon + 1;
	tb_events_foreach(find_format, &ff);
	if (!ff.text)
		return -ENOENT;
	rc = tb_format_parse(ff.text, ff.len, &fmt, &perr);
	if (rc < 0) {
		free(ff.text);
		return rc;
	}
	a = calloc(1, sizeof(*a));
	if (a)
		a->fd = -1;
	if (!a || !(a->schema = tb_schema_new())) {
		free(a);
		free(ff.text);
		tb_format_free(&fmt);
		return -ENOMEM;
	}
	rc = tb_hist_new(spec, &fmt, system, a->schema, &a->h, err);
	tb_format_free(&fmt);
	if (rc < 0) {
		free(ff.text);
		free_attached(a);
		return rc;
	}
	snprintf(a->event, sizeof(a->event), "%s", event);
	a->id = (uint16_t)a->h->id;
	a->wants_cpu = uses_source(a->h, HIST_SRC_CPU);
	a->wants_time = uses_source(a->h, HIST_SRC_TIMESTAMP);
	a->plain_keys = all_plain(a->h->keys, a->h->nkeys, true);
	a->plain_vals = all_plain(a->h->vals, a->h->nvals, false);
	a->max_entries = (size_t)1 << a->h->map_bits;
	a->nslots = a->max_entries * 2;
	a->slot_words = SLOT_SUMS + a->h->nvals + a->h->key_size / 8;
	rc = make_region(a, spec, ff.text, ff.len);
	free(ff.text);
	if (rc < 0) {
		free_attached(a);
		return rc;
	}
	*out = a;
	return 0;
}

static int slot_of(const char *event)
{
	for (int i = 0; i < TB_HIST_ATTACH_MAX; i++) {
		struct attached *a = atomic_load_explicit(&attached[i], memory_order_relaxed); /* under lock */
		if (a && !strcmp(a->event, event))
			return i;
	}
	return -1;
}

int tb_hist_attach(const char *event, const char *spec, struct tb_hist_error *err)
{
	struct tb_hist_error local;
	char clean[4096];
	struct attached *a = NULL;
	uint16_t id;
	bool record;
	int rc, free_at = -1;

	if (!event || !spec)
		return -EINVAL;
	if (strlen(spec) >= sizeof(clean))
		return -E2BIG;
	record = take_record(spec, clean, sizeof(clean));
	pthread_once(&exit_once, make_exit_key);
	pthread_mutex_lock(&lock);
	for (int i = TB_HIST_ATTACH_MAX - 1; i >= 0; i--)
		if (!atomic_load_explicit(&attached[i], memory_order_relaxed))
			free_at = i;
	if (slot_of(event) >= 0)
		rc = -EBUSY;
	else if (free_at < 0)
		rc = -ENOSPC;
	else
		rc = new_attached(event, clean, err ? err : &local, &a);
	if (rc == 0) {
		a->hdr->ordinal = (uint32_t)free_at;
		atomic_store_explicit(&a->hdr->state, HIST_REGION_LIVE, memory_order_relaxed); /* before the fd is found: made above */
		tb_events_set_hist_hook(attached_hit);
		/* release: pairs with attached_for's acquire; the hist and tables are made */
		atomic_store_explicit(&attached[free_at], a, memory_order_release);
		rc = tb_events_set_hist_gate(event, record ? TB__HIST_GATE_RECORD : TB__HIST_GATE_ONLY, &id);
		if (rc < 0)
			atomic_store_explicit(&attached[free_at], NULL, memory_order_relaxed);
	}
	pthread_mutex_unlock(&lock);
	if (rc < 0)
		free_attached(a); /* never published to an emitter: its gate was not opened */
	return rc;
}

int tb_hist_remove(const char *event)
{
	uint16_t id;
	int at, rc = -ENOENT;

	if (!event)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	at = slot_of(event);
	if (at >= 0) {
		struct attached *a = atomic_load_explicit(&attached[at], memory_order_relaxed); /* under lock */
		tb_events_set_hist_gate(event, 0, &id);
		atomic_store_explicit(&attached[at], NULL, memory_order_relaxed);
		/* kept mapped: a writer may be inside it (tracebuf/hist.h); readers outside stop finding it */
		atomic_store_explicit(&a->hdr->state, HIST_REGION_REMOVED, memory_order_relaxed);
		if (a->fd >= 0)
			close(a->fd);
		a->fd = -1;
		a->retired_next = retired;
		retired = a;
		rc = 0;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* --------------------------------------------------------------- print */

/* Every table's entries into a->h's table (made afresh), read as a reader outside reads them. */
static int merge_tables(struct attached *a)
{
	struct tb_hist *h = a->h;
	uint64_t unsettled = 0;
	int rc;

	hist_table_free(&h->table);
	if ((rc = hist_table_init(&h->table, h->key_size, h->nvals)) < 0)
		return rc;
	h->dropped = 0;
	return hist_region_merge(h, a->hdr, a->hdr, a->fd, HIST_REGION_TRIES, &unsettled);
}

/* Names as they are now: every event's format and the process's threads' comms. */
static void refresh_schema(struct attached *a)
{
	struct tb_schema *s = tb_schema_new();

	if (!s || tb_schema_load_events(s, 4096) < 0) {
		tb_schema_free(s);
		return;
	}
	tb_hist_set_schema(a->h, s);
	tb_schema_free(a->schema);
	a->schema = s;
}

int tb_hist_print_attached(FILE *out)
{
	int rc = 0;

	if (!out)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < TB_HIST_ATTACH_MAX && rc == 0; i++) {
		struct attached *a = atomic_load_explicit(&attached[i], memory_order_relaxed); /* under lock */
		if (!a)
			continue;
		refresh_schema(a);
		rc = merge_tables(a);
		if (rc == 0)
			rc = tb_hist_print(a->h, out);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* ------------------------------------------------------- environment */

static void print_at_exit(void)
{
	tb_hist_print_attached(stderr);
}

/*
 * TRACEBUF_HIST_SIGNAL=USR2 (USR1, or a number): the hists printed to
 * stderr on that signal too.  Printing takes a lock and allocates, which a
 * handler may not: the handler writes a byte into a pipe, and a thread of
 * the library's, blocked reading it, prints.  The signal is taken only
 * when the program left it at its default (it is the program's otherwise).
 */
static int signal_pipe[2] = {-1, -1};

static void on_print_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (signal_pipe[1] >= 0 && write(signal_pipe[1], "p", 1) < 0) {
		/* full: a print is pending anyway */
	}
	errno = saved;
}

static void *print_on_signal(void *unused)
{
	char c;
	sigset_t all;

	(void)unused;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* the program's signals go to its own threads */
	prctl(PR_SET_NAME, "tb-hist-print");
	while (read(signal_pipe[0], &c, 1) == 1 || errno == EINTR)
		tb_hist_print_attached(stderr);
	return NULL;
}

static int signal_number(const char *name)
{
	char *end;
	long n;

	if (!strncmp(name, "SIG", 3))
		name += 3;
	if (!strcmp(name, "USR1"))
		return SIGUSR1;
	if (!strcmp(name, "USR2"))
		return SIGUSR2;
	n = strtol(name, &end, 10);
	return *name && !*end && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP ? (int)n : -1;
}

static void print_on_signal_from_env(void)
{
	const char *env = getenv("TRACEBUF_HIST_SIGNAL");
	struct sigaction sa = {.sa_handler = on_print_signal, .sa_flags = SA_RESTART}, old;
	pthread_t thread;
	int sig;

	if (!env || !*env)
		return;
	if ((sig = signal_number(env)) < 0) {
		fprintf(stderr, "tracebuf: TRACEBUF_HIST_SIGNAL: '%s' is not USR1, USR2 or a signal number\n", env);
		return;
	}
	if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_DFL) {
		fprintf(stderr, "tracebuf: TRACEBUF_HIST_SIGNAL: the program handles %s itself: left to it\n",
			strsignal(sig));
		return;
	}
	if (pipe2(signal_pipe, O_CLOEXEC) < 0 || fcntl(signal_pipe[1], F_SETFL, O_NONBLOCK) < 0 ||
	    pthread_create(&thread, NULL, print_on_signal, NULL) != 0) {
		fprintf(stderr, "tracebuf: TRACEBUF_HIST_SIGNAL: %s\n", strerror(errno));
		return;
	}
	pthread_detach(thread);
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* TRACEBUF_HIST="sys:name:SPEC[;sys:name:SPEC...]" once the program's events are registered. */
static void attach_from_env(void)
{
	const char *env = getenv("TRACEBUF_HIST");
	char *copy, *save = NULL;
	bool any = false;

	if (!env || !*env || !(copy = strdup(env)))
		return;
	for (char *item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		struct tb_hist_error err = {0};
		int rc;
		if (!c2) {
			fprintf(stderr, "tracebuf: TRACEBUF_HIST: '%s' is not SYSTEM:EVENT:SPEC\n", item);
			continue;
		}
		*c2 = '\0';
		rc = tb_hist_attach(item, c2 + 1, &err);
		if (rc == -EINVAL)
			fprintf(stderr, "tracebuf: TRACEBUF_HIST: %s: at byte %zu of '%s': %s\n", item, err.pos, c2 + 1,
				err.reason);
		else if (rc < 0)
			fprintf(stderr, "tracebuf: TRACEBUF_HIST: %s: %s\n", item, strerror(-rc));
		any |= rc == 0;
	}
	free(copy);
	if (any) {
		atexit(print_at_exit);
		print_on_signal_from_env();
	}
}

__attribute__((constructor)) static void hist_attach_init(void)
{
	if (getenv("TRACEBUF_HIST"))
		tb_events_on_startup(attach_from_env);
}
