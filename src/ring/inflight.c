// SPDX-License-Identifier: MIT
/*
 * inflight.c - the count of writes begun, per writer thread, in the region:
 * what makes crash recovery's count of writes in flight exact
 * (docs/design.md §10).
 *
 * The region holds a table of TB_THREAD_SLOTS slots (ring_layout.h).  A
 * thread's first write on a ring claims one (compare-and-swap of its owner
 * word from 0, or from a dead owner, to the thread's own word, below); from
 * then on every write it begins adds 1 to the slot's count before anything
 * of the write can be interrupted, and every write refused subtracts 1.
 * So, invariants kept here and in the write path:
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
 * C1 needs one more thing: a slot has one owner at a time, so a live owner
 * must never be taken for a dead one.  Its name and its test of life must
 * hold across processes in different pid namespaces (containers sharing one
 * region), where a pid or tid means nothing: two writers may both be pid 2,
 * tid 2, and tgkill from one cannot see the other (ESRCH: "dead").  So:
 *
 *   - An owner word is the writer number the region gave the thread's handle
 *     in its process (table->writers, fetch-add: unique in the region;
 *     TB_OWNER_LOCKED set when the handle holds locks, below) << 32 | the
 *     thread's id in its own process.
 *   - Life is the kernel's word, not a pid's: a writer's handle on the
 *     region's file opens a file description of its own for locks alone
 *     (lock_description; a forked child gets a new one, forget_in_child)
 *     and holds an OFD write lock (fcntl F_OFD_SETLK) on one byte per slot
 *     it took (tb_thread_slot_lock_offset).  The kernel drops a
 *     description's locks when its last reference goes: when the process
 *     ends, however it ends, or closes the handle.
 *
 *   L1  A claimer with a file takes the slot's lock before it stores its
 *       owner word (a free slot or a dead owner's alike), and its handle
 *       keeps the lock until it is closed or its process ends: a thread's
 *       exit gives the slot back (owner 0) but not the lock, so that no
 *       unlock ever races a claim by another thread of the same handle,
 *       which would hold the same lock.  Hence while another handle's owner
 *       word stands, that handle holds the lock; a lock that this handle
 *       can take means the owner's handle is gone, and its threads can
 *       never add to the slot again.  One it cannot take is live, whatever
 *       the word's tid says, and is never taken.  (The price: a slot given
 *       back stays with its handle's threads until the handle goes.)
 *   L2  A word with this handle's number names a thread of this process:
 *       tgkill in our own namespace is exact for it (it can be gone only by
 *       a raw exit that skipped the key destructor).
 *   L3  A word without TB_OWNER_LOCKED (a handle with no file: a heap ring,
 *       or a forked child that could not reopen the file) cannot be judged
 *       by another handle and is never taken: a leak at worst, never a
 *       miscount (a thread that finds no slot counts in the shared word).
 *
 * Every step is async-signal-safe (fcntl, tgkill, atomics): a claim may
 * run in a signal handler that interrupted the thread's own claim.
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
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crash_point.h"
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
	uint64_t me;  /* the owner word stored there */
	_Atomic uint64_t *owner;
};
static __thread struct {
	struct claim c[CLAIMS];
	unsigned n;
	uint32_t tid; /* 0 until first needed */
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

static uint32_t thread_id(void)
{
	if (!tw.tid)
		tw.tid = (uint32_t)syscall(SYS_gettid);
	return tw.tid;
}

#define WRITER_NUMBER_MASK 0x7fffffffu
#define OWNER_HI(o) ((uint32_t)((o) >> 32))

/*
 * The upper half of this handle's owner words: a writer number from the
 * region, taken at the handle's first claim in this process (L1-L3).
 */
static uint32_t writer_hi(struct tb_ring *ring)
{
	uint32_t hi = atomic_load_explicit(&ring->writer_hi, memory_order_relaxed), n;

	if (hi)
		return hi;
	do /* relaxed: a number only has to be unique, which the fetch-adds' single order gives */
		n = (atomic_fetch_add_explicit(&region_threads(ring->r)->writers, 1, memory_order_relaxed) + 1) &
		    WRITER_NUMBER_MASK;
	while (!n);
	n |= ring->lock_fd >= 0 ? (uint32_t)(TB_OWNER_LOCKED >> 32) : 0;
	/* relaxed: a signal handler's or another thread's claim may have numbered the handle first: theirs stands */
	if (!atomic_compare_exchange_strong_explicit(&ring->writer_hi, &hi, n, memory_order_relaxed,
						     memory_order_relaxed))
		return hi;
	return n;
}

/* A thread of this process (L2) that no longer runs. */
static int thread_gone(uint32_t tid)
{
	int saved = errno, gone;

	gone = syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) < 0 && errno == ESRCH;
	errno = saved;
	return gone;
}

/* The OFD write lock on slot i's byte for this handle (L1): 1 held now (taken, or ours already), 0 not. */
static int slot_lock(struct tb_ring *ring, int i)
{
	struct flock fl = {.l_type = F_WRLCK,
			   .l_whence = SEEK_SET,
			   .l_start = (off_t)tb_thread_slot_lock_offset(ring->r, (unsigned)i),
			   .l_len = 1};
	int saved = errno, taken;

	/* EAGAIN: another description holds it; any other error: no lock to be had, so not taken either */
	taken = fcntl(ring->lock_fd, F_OFD_SETLK, &fl) == 0;
	errno = saved;
	return taken;
}

/*
 * Whether this handle may take slot i, whose owner word read o: a free slot
 * or a gone owner's.  For a handle with a file, yes means it now holds the
 * slot's lock (L1), taken before the owner word is stored.
 */
static int slot_takeable(struct tb_ring *ring, int i, uint64_t o, uint32_t hi)
{
	if (o && OWNER_HI(o) == hi)
		return thread_gone((uint32_t)o); /* L2: the lock is this handle's already */
	if (ring->lock_fd < 0 || (o && !(o & TB_OWNER_LOCKED)))
		return !o; /* L3 */
	return slot_lock(ring, i);
}

/* fd's file, as st_dev and st_ino, in id: 0, or -1. */
static int file_identity(int fd, uint64_t id[2])
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	id[0] = (uint64_t)st.st_dev;
	id[1] = (uint64_t)st.st_ino;
	return 0;
}

/*
 * Whether the handle's locks can be trusted: lock_fd still names the
 * region's file.  A program may close every descriptor (a daemon does)
 * and open another file under the same number, whose locks say nothing of
 * the slots (L1); its claims then count in the shared word.
 */
static int locks_trusted(const struct tb_ring *ring)
{
	uint64_t id[2];

	return ring->lock_fd < 0 || (file_identity(ring->lock_fd, id) == 0 && id[0] == ring->lock_file[0] &&
				     id[1] == ring->lock_file[1]);
}

/* Store one name entry (ring_layout.h: tid 0, the name, then the tid with release). */
static void store_name(struct tb_slot_name *e, uint32_t tid, uint64_t w0, uint64_t w1)
{
	atomic_store_explicit(&e->tid, 0, memory_order_relaxed);
	/* release: a reader that loads this word (acquire) sees the 0 above on its second load of the tid */
	atomic_store_explicit(&e->name[0], w0, memory_order_release);
	atomic_store_explicit(&e->name[1], w1, memory_order_release);
	/* release: the name is stored before the tid it belongs to (pairs with the reader's first acquire load) */
	atomic_store_explicit(&e->tid, tid, memory_order_release);
}

/*
 * Name slot s after its new owner, this thread (tid), the last owner's
 * name moved to the slot's second entry.  Async-signal-safe (a claim may
 * run in a handler): one prctl and atomic stores.
 */
static void name_slot(struct tb_thread_slot *s, uint32_t tid)
{
	uint64_t words[2] = {0, 0};
	char comm[17] = "";

	/* only a claimer that won the owner word stores here: the entries' only writer */
	store_name(&s->named[1], atomic_load_explicit(&s->named[0].tid, memory_order_relaxed),
		   atomic_load_explicit(&s->named[0].name[0], memory_order_relaxed),
		   atomic_load_explicit(&s->named[0].name[1], memory_order_relaxed));
	prctl(PR_GET_NAME, comm);
	memcpy(words, comm, 16);
	store_name(&s->named[0], tid, words[0], words[1]);
}

/*
 * A slot for this thread in ring's table, its owner word now *me: one it
 * holds already through this handle, a free one, or one whose owner is
 * gone.  -1: none.
 */
static int claim_slot(struct tb_ring *ring, uint64_t *mep)
{
	struct tb_thread_table *t = region_threads(ring->r);
	uint32_t hi = writer_hi(ring);
	uint64_t me = *mep = (uint64_t)hi << 32 | thread_id();
	int first_free = -1;

	if (!locks_trusted(ring))
		return -1;
	for (int i = 0; i < TB_THREAD_SLOTS; i++) {
		/* acquire: pairs with the release of the last owner; its counts are visible to our adds */
		uint64_t o = atomic_load_explicit(&t->slot[i].owner, memory_order_acquire);
		if (o == me)
			return i;
		if (!o && first_free < 0)
			first_free = i;
	}
	/* first the free slots from the first one seen, then every slot whose owner may be gone */
	for (int pass = 0; pass < 2; pass++)
		for (int i = pass ? 0 : (first_free < 0 ? TB_THREAD_SLOTS : first_free); i < TB_THREAD_SLOTS; i++) {
			uint64_t o = atomic_load_explicit(&t->slot[i].owner, memory_order_relaxed);
			if ((pass ? !o : o != 0) || !slot_takeable(ring, i, o, hi))
				continue;
			TB_CRASH_C(TB_CP_CLAIM_LOCKED);
			/*
			 * acq_rel: acquire as above; one claimer wins a slot (or a dead
			 * owner's, C3).  Lost to me: a signal handler of this thread
			 * claimed it in between, for this handle.
			 */
			if (atomic_compare_exchange_strong_explicit(&t->slot[i].owner, &o, me, memory_order_acq_rel,
								    memory_order_relaxed)) {
				name_slot(&t->slot[i], (uint32_t)me);
				return i;
			}
			if (o == me)
				return i; /* named by the handler's claim */
		}
	return -1;
}

/* One name entry read: 1 with name filled when it holds a name read whole, else 0. */
static int load_name(struct tb_slot_name *e, uint32_t *tid, char name[17])
{
	uint64_t words[2];

	/* acquire: pairs with store_name's release store of the tid: the name before it is visible */
	*tid = atomic_load_explicit(&e->tid, memory_order_acquire);
	if (!*tid)
		return 0;
	/* acquire: pairs with store_name's release stores of the words (a newer name's word seen here brings its tid 0) */
	words[0] = atomic_load_explicit(&e->name[0], memory_order_acquire);
	words[1] = atomic_load_explicit(&e->name[1], memory_order_acquire);
	if (atomic_load_explicit(&e->tid, memory_order_relaxed) != *tid)
		return 0; /* renamed while read: the next call sees the new one */
	memcpy(name, words, 16);
	name[16] = '\0';
	return name[0] != '\0';
}

int tb_ring_thread_names(const struct tb_ring *ring, void (*fn)(void *arg, int32_t tid, const char *name), void *arg)
{
	struct tb_thread_table *t;
	int n = 0;

	if (!ring || !fn)
		return -EINVAL;
	t = region_threads(ring->r);
	for (int i = 0; i < TB_THREAD_SLOTS; i++)
		for (int k = 0; k < 2; k++) {
			uint32_t tid;
			char name[17];
			if (load_name(&t->slot[i].named[k], &tid, name)) {
				fn(arg, (int32_t)tid, name);
				n++;
			}
		}
	return n;
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
	uint64_t me;
	unsigned i;
	int slot;

	if (c)
		return c;
	if (tw.n >= CLAIMS)
		return NULL; /* no entry to file a slot under: the shared count, without a scan per write */
	slot = claim_slot(ring, &me);
	TB_CRASH_C(TB_CP_CLAIM_OWNED);
	i = __atomic_fetch_add(&tw.n, 1, __ATOMIC_RELAXED); /* a handler's claim takes the next entry */
	if (i >= CLAIMS) {
		tw.n = CLAIMS;
		if (slot >= 0) /* no entry to release it from: give it back now */
			atomic_store_explicit(&region_threads(ring->r)->slot[slot].owner, 0, memory_order_release);
		return NULL;
	}
	c = &tw.c[i];
	c->slot = slot;
	c->me = me;
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
	TB_CRASH_C(TB_CP_CLAIM_FILED);
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

/* No fast path to take ts: the general path stamps the record itself. */
int tb_write_at(struct tb_ring *ring, const void *data, uint32_t len, uint64_t ts)
{
	(void)ts;
	return tb_write(ring, data, len);
}
#endif

/* ------------------------------------------------------------ threads and handles */

static void init_once(void);

void tb__count_thread_init(void)
{
	pthread_once(&once, init_once); /* the exit key, before any ring may have made it */
	thread_id();
}

/* exit_release runs at this thread's exit (the key exists: a ring or tb_ring_thread_init made it). */
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
	(void)unused;
	tb__scratch_release();
	tb__wcache = 0;
	pthread_mutex_lock(&live_lock);
	for (unsigned i = 0; i < tw.n && i < CLAIMS; i++) {
		uint64_t expect = tw.c[i].me;
		if (tw.c[i].owner && key_alive(tw.c[i].key))
			/* release: pairs with the next claimer's acquire; our adds come before its */
			atomic_compare_exchange_strong_explicit(tw.c[i].owner, &expect, 0, memory_order_release,
								memory_order_relaxed);
	}
	tw.n = 0;
	pthread_mutex_unlock(&live_lock);
}

/*
 * A new open file description of the file fd names, opened for the slots'
 * locks alone, or -1 (no /proc: the handle then claims without locks, L3).
 * Never the description the region is mapped through: a mapping holds a
 * reference to its description, and a forked child inherits the mapping,
 * so a mapped description's locks would outlive their process for as long
 * as any child of it lives.  open is async-signal-safe, as a fork child
 * needs; so is the path, made without printf.
 */
static int lock_description(int fd)
{
	char path[32] = "/proc/self/fd/", digits[12];
	unsigned v = (unsigned)fd;
	int n = 0, len = 14;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		path[len++] = digits[--n];
	path[len] = '\0';
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * A forked child is another process: the slots the parent's thread holds
 * stay the parent's, and the child claims its own (two processes adding to
 * one slot would lose counts).  Handles are the parent's, so the thread's
 * cache and claims are forgotten, and every handle gets a writer number
 * (at its next claim) and a file description of the child's own.  The
 * list of handles is whole: the forking thread holds its lock across the
 * fork (hold_live), and gives it back on both sides.
 */
static void forget_in_child(void)
{
	tb__wcache = 0;
	tw.n = 0;
	tw.tid = 0;
	for (struct tb_ring *r = live; r; r = r->live_next) {
		atomic_store_explicit(&r->writer_hi, 0, memory_order_relaxed);
		if (r->lock_fd >= 0) {
			/* the inherited descriptor is the parent's locks: ours closes, theirs stays */
			int mine = lock_description(r->lock_fd);
			close(r->lock_fd);
			r->lock_fd = mine;
		}
	}
	pthread_mutex_unlock(&live_lock); /* held by this thread since hold_live */
}

static void hold_live(void)
{
	pthread_mutex_lock(&live_lock);
}

static void release_live(void)
{
	pthread_mutex_unlock(&live_lock);
}

static void init_once(void)
{
	pthread_key_create(&exit_key, exit_release);
	pthread_atfork(hold_live, release_live, forget_in_child);
}

void tb__count_ring_born(struct tb_ring *ring)
{
	pthread_once(&once, init_once);
	ring->lock_fd = -1; /* until shm.c gives it the region's file (tb__count_ring_file) */
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
	atomic_store_explicit(&ring->writer_hi, 0, memory_order_relaxed); /* numbers are the old region's too */
	pthread_mutex_unlock(&live_lock);
}

void tb__count_ring_file(struct tb_ring *ring, int fd)
{
	ring->lock_fd = lock_description(fd);
	if (ring->lock_fd >= 0 && file_identity(ring->lock_fd, ring->lock_file) < 0) {
		close(ring->lock_fd);
		ring->lock_fd = -1;
	}
}

void tb__count_ring_gone(struct tb_ring *ring)
{
	if (ring->lock_fd >= 0)
		close(ring->lock_fd); /* the handle's slots' locks go (L1) */
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
	if (!keep_owners) /* kept with the owners: their handles' numbers must stay unique */
		atomic_store_explicit(&t->writers, 0, memory_order_relaxed);
	for (int i = 0; i < TB_THREAD_SLOTS; i++) {
		if (!keep_owners)
			atomic_store_explicit(&t->slot[i].owner, 0, memory_order_relaxed);
		t->slot[i].begun = 0;
	}
}
