// SPDX-License-Identifier: MIT
/*
 * inflight.c - the count of writes begun, per writer thread, in the region:
 * what makes crash recovery's count of writes in flight exact
 * (docs/design.md §10).
 *
 * The region holds a table of TB_THREAD_SLOTS slots (ring_layout.h).  A
 * thread's first write on a ring claims one (compare-and-swap of its owner
 * word from 0 to the thread's pid << 32 | tid); from then on every write it
 * begins adds 1 to the slot's count before anything of the write can be
 * interrupted, and every write refused subtracts 1.  So, invariants kept
 * here and in the write path:
 *
 *   C1  Only the owner writes a slot's count, with single add instructions:
 *       a signal handler of the owner interrupts between two of them, never
 *       inside one, so no lock prefix is needed and no update is lost.
 *   C2  A write is counted exactly once, before its publish section can
 *       start (a restarted section does not count again), and uncounted
 *       exactly once if refused.  The sum over the table (plus the shared
 *       count) less the events committed is the number of writes begun and
 *       neither committed nor refused: in flight.
 *   C3  A slot keeps its count when its owner goes (released at thread exit,
 *       or taken over from a dead owner): the sum stays the sum of all
 *       writes ever counted in the region.
 *
 * The thread's cache, tb__wcache, is one word: the handle's count_key (its
 * number << 16) | the slot's byte offset in the table (index << 6).  One
 * word, so a signal handler that changes it (a write on another ring) never
 * leaves a ring's number beside another ring's slot; one load and an xor in the fast path tell whether it
 * is this ring's.  Handle numbers are never reused, so a cache left from a
 * destroyed ring matches no ring.  Everything else here is the slow path of
 * a thread's first write on a ring (a scan of the table, a CAS) or of a
 * thread that found the table full (an atomic add on the shared count).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ring_internal.h"

/*
 * The thread's last slot: count_key | offset (see above).  Initial-exec: an
 * offset from the thread pointer, also in libtracebuf.so, where it puts the
 * library's whole TLS in the static TLS block; dlopen finds room for it in
 * glibc's surplus only because the library keeps its TLS small (a few
 * hundred bytes: tb_reserve's scratch and shm.c's messages are not in it).
 */
__attribute__((visibility("hidden"), tls_model("initial-exec"))) __thread uint64_t tb__wcache;

/*
 * The thread's claims: one per handle it wrote with, for the count's slow
 * path and for releasing the slots at thread exit.  slot < 0: the table
 * was full, the thread counts in the shared word.  Entries are taken by
 * fetch-add on n, so a signal handler's claim never overwrites one.
 */
#define CLAIMS 16
struct claim {
	uint64_t key; /* the handle's count_key */
	int slot;     /* index, or -1: the shared count */
	_Atomic uint64_t *owner;
};
static __thread struct {
	struct claim c[CLAIMS];
	unsigned n;
	uint64_t me; /* pid << 32 | tid, 0 until first needed */
} tw;

/* The handles alive in this process: a thread's exit releases only their slots (the others may be unmapped). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tb_ring *live;
static uint64_t next_number = 1;
static pthread_key_t exit_key;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* One add instruction (C1): whole or not at all to this thread's signal handlers. */
static inline void slot_add(uint64_t *w, int64_t d)
{
#if defined(__x86_64__)
	__asm__ volatile("addq %1, %0" : "+m"(*w) : "er"(d));
#else
	__atomic_fetch_add(w, (uint64_t)d, __ATOMIC_RELAXED);
#endif
}

static uint64_t my_id(void)
{
	if (!tw.me)
		tw.me = (uint64_t)getpid() << 32 | (uint32_t)syscall(SYS_gettid);
	return tw.me;
}

/* A slot's owner that no longer runs: no such thread in that process (not EPERM: alive, not ours). */
static int owner_dead(uint64_t owner)
{
	int saved = errno, dead;

	dead = syscall(SYS_tgkill, (pid_t)(owner >> 32), (pid_t)(uint32_t)owner, 0) < 0 && errno == ESRCH;
	errno = saved;
	return dead;
}

/*
 * A slot for this thread in r's table: one it holds already (another
 * handle on the region), a free one, or one whose owner died.  -1: none.
 */
static int claim_slot(struct tb_region *r)
{
	struct tb_thread_table *t = region_threads(r);
	uint64_t me = my_id();
	int first_free = -1;

	for (int i = 0; i < TB_THREAD_SLOTS; i++) {
		/* acquire: pairs with the release of the last owner; its counts are visible to our adds */
		uint64_t o = atomic_load_explicit(&t->slot[i].owner, memory_order_acquire);
		if (o == me)
			return i;
		if (!o && first_free < 0)
			first_free = i;
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = pass ? 0 : (first_free < 0 ? TB_THREAD_SLOTS : first_free); i < TB_THREAD_SLOTS; i++) {
			uint64_t o = atomic_load_explicit(&t->slot[i].owner, memory_order_relaxed);
			if (pass ? !(o && owner_dead(o)) : o != 0)
				continue;
			/* acq_rel: acquire as above; one claimer wins a slot (or a dead owner's slot, C3) */
			if (atomic_compare_exchange_strong_explicit(&t->slot[i].owner, &o, me, memory_order_acq_rel,
								    memory_order_relaxed))
				return i;
		}
	return -1;
}

static struct claim *find_claim(uint64_t key)
{
	for (unsigned i = 0; i < tw.n && i < CLAIMS; i++)
		if (tw.c[i].key == key)
			return &tw.c[i];
	return NULL;
}

/* The thread's claim for ring: found, or made now (NULL: the thread holds CLAIMS handles' already). */
static struct claim *thread_claim(struct tb_ring *ring)
{
	struct claim *c = find_claim(ring->count_key);
	unsigned i;
	int slot;

	if (c)
		return c;
	if (tw.n >= CLAIMS)
		return NULL; /* no entry to file a slot under: the shared count, without a scan per write */
	slot = claim_slot(ring->r);
	i = __atomic_fetch_add(&tw.n, 1, __ATOMIC_RELAXED); /* a handler's claim takes the next entry */
	if (i >= CLAIMS) {
		tw.n = CLAIMS;
		if (slot >= 0) /* no entry to release it from: give it back now */
			atomic_store_explicit(&region_threads(ring->r)->slot[slot].owner, 0, memory_order_release);
		return NULL;
	}
	c = &tw.c[i];
	c->slot = slot;
	c->owner = slot >= 0 ? &region_threads(ring->r)->slot[slot].owner : NULL;
	atomic_signal_fence(memory_order_seq_cst); /* the entry is whole before a handler can find it */
	c->key = ring->count_key;
	tb__thread_exit_arm();
	return c;
}

/* Add d to this thread's count on ring, the slow way (C2): the cache missed. */
static void count_slow(struct tb_ring *ring, int64_t d)
{
	struct claim *c = thread_claim(ring);

	if (!c || c->slot < 0) {
		/* relaxed: a count; the commit's store orders it for recovery like the slots' adds */
		atomic_fetch_add_explicit(&region_threads(ring->r)->shared_begun, (uint64_t)d, memory_order_relaxed);
		return;
	}
	slot_add(&ring->begun0[(size_t)c->slot << (TB_THREAD_SLOT_SHIFT - 3)], d);
	/* one store: a handler sees the old or the new */
	tb__wcache = ring->count_key | (uint64_t)c->slot << TB_THREAD_SLOT_SHIFT;
}

/* The index of the slot the cache holds for ring, or -1. */
static inline long cached_slot(const struct tb_ring *ring)
{
	uint64_t k = tb__wcache ^ ring->count_key;

	return k < (TB_THREAD_SLOTS << TB_THREAD_SLOT_SHIFT) ? (long)(k >> TB_THREAD_SLOT_SHIFT) : -1;
}

static void count(struct tb_ring *ring, int64_t d)
{
	long k = cached_slot(ring);

	if (k >= 0)
		slot_add(&ring->begun0[(size_t)k << (TB_THREAD_SLOT_SHIFT - 3)], d);
	else
		count_slow(ring, d);
}

void tb__count_begun(struct tb_ring *ring)
{
	count(ring, 1);
}

void tb__count_undo(struct tb_ring *ring)
{
	count(ring, -1); /* any place of this thread's on the region will do: recovery sums them (C2) */
}

int tb__write_miss(struct tb_ring *ring, const void *data, uint32_t len)
{
	count_slow(ring, 1);
	return tb__write_counted(ring, data, len);
}

#if !defined(__x86_64__)
int tb_write(struct tb_ring *ring, const void *data, uint32_t len)
{
	tb__count_begun(ring);
	return tb__append_slow(ring, data, len);
}
#endif

/* ------------------------------------------------------------ threads and handles */

static void init_once(void);

void tb__count_thread_init(void)
{
	pthread_once(&once, init_once); /* the exit key, before any ring may have made it */
	my_id();
}

/* exit_release runs at this thread's exit (the key exists: a ring or tb_thread_init made it). */
void tb__thread_exit_arm(void)
{
	pthread_setspecific(exit_key, (void *)1);
}

static int key_alive(uint64_t key)
{
	for (struct tb_ring *r = live; r; r = r->live_next)
		if (r->count_key == key)
			return 1;
	return 0;
}

/* Thread exit: give back the slots of the handles still alive, counts kept (C3); unmap the reservation scratch. */
static void exit_release(void *unused)
{
	uint64_t me = tw.me;

	(void)unused;
	tb__scratch_release();
	tb__wcache = 0;
	pthread_mutex_lock(&live_lock);
	for (unsigned i = 0; i < tw.n && i < CLAIMS; i++) {
		uint64_t expect = me;
		if (tw.c[i].owner && key_alive(tw.c[i].key))
			/* release: pairs with the next claimer's acquire; our adds come before its */
			atomic_compare_exchange_strong_explicit(tw.c[i].owner, &expect, 0, memory_order_release,
								memory_order_relaxed);
	}
	tw.n = 0;
	pthread_mutex_unlock(&live_lock);
}

/*
 * A forked child is another process: the slots the parent's thread holds
 * stay the parent's, and the child claims its own (two processes adding to
 * one slot would lose counts).  Handles are the parent's numbers, so only
 * the thread's cache and claims are forgotten.
 */
static void forget_in_child(void)
{
	tb__wcache = 0;
	tw.n = 0;
	tw.me = 0;
	pthread_mutex_init(&live_lock, NULL);
}

static void init_once(void)
{
	pthread_key_create(&exit_key, exit_release);
	pthread_atfork(NULL, NULL, forget_in_child);
}

void tb__count_ring_born(struct tb_ring *ring)
{
	pthread_once(&once, init_once);
	pthread_mutex_lock(&live_lock);
	ring->count_key = next_number++ << 16;
	ring->live_next = live;
	live = ring;
	pthread_mutex_unlock(&live_lock);
}

void tb__count_ring_renew(struct tb_ring *ring)
{
	/* a new region: caches and claims of the old number must not reach it */
	pthread_mutex_lock(&live_lock);
	ring->count_key = next_number++ << 16;
	pthread_mutex_unlock(&live_lock);
}

void tb__count_ring_gone(struct tb_ring *ring)
{
	pthread_mutex_lock(&live_lock);
	for (struct tb_ring **p = &live; *p; p = &(*p)->live_next)
		if (*p == ring) {
			*p = ring->live_next;
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

void tb__thread_table_init(struct tb_region *r, int keep_owners)
{
	struct tb_thread_table *t = region_threads(r);

	atomic_store_explicit(&t->shared_begun, 0, memory_order_relaxed);
	for (int i = 0; i < TB_THREAD_SLOTS; i++) {
		if (!keep_owners)
			atomic_store_explicit(&t->slot[i].owner, 0, memory_order_relaxed);
		t->slot[i].begun = 0;
	}
}
