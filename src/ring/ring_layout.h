/* SPDX-License-Identifier: MIT */
/*
 * ring_layout.h - the memory layout of a ring and the encodings of its
 * control words.  Internal; docs/design.md explains the protocol.
 *
 * A ring is one contiguous, position-independent region: a header, then per
 * CPU a control block, the slot table, per-page metadata and N + 1 pages
 * (N in the ring, one held by the reader).  Everything is found by offset,
 * never by pointer, so the region can live in shared memory.
 *
 * Who writes what (the rule every other comment relies on):
 *
 *   cpu->tail, cpu->tail_hist[], cpu->last_ts[], meta[], page bytes of the
 *   tail page and of the page being claimed:
 *       only inside a publish section (publish.h) of a writer running on
 *       that CPU.  A section either completes as a whole or its final store
 *       never happens; a migrated or preempted writer is restarted.  These
 *       words are never written by another CPU, so the section's plain
 *       stores cannot race with anything.
 *   cpu->fast_words:
 *       tb_ring_set_recording (and creation, reset).
 *   cpu->slot[]:
 *       compare-and-swap only, by writers (claiming a page for a new lap)
 *       and by the consuming reader (taking a page out, putting its spare in).
 *   counters:
 *       atomic fetch-add, by anyone.
 *   reader state:
 *       the consuming reader, under cpu->reader_lock.
 *   thread table (writes begun, docs/design.md §10):
 *       a slot's owner word by compare-and-swap (claim and reclaim of a
 *       dead owner, under the slot's file lock; release); a slot's begun
 *       count only by the thread that owns the slot, with single add
 *       instructions; the shared count and the writer numbers by atomic add.
 *   cpu->blob_next, blob chunk words:
 *       compare-and-swap by blob writers on any CPU; a chunk word is also
 *       stored by the writer that owns the chunk (commit, discard) and
 *       swapped by consuming readers (release).  Blob bytes: only by the
 *       writer whose claim of the chunk succeeded (blob.c).
 */
#ifndef TRACEBUF_RING_LAYOUT_H
#define TRACEBUF_RING_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/ring.h"

#define TB_MAGIC 0x3152554254524254ull /* "TBRTBUR1" */
#define TB_LAYOUT_VERSION 6u /* 6: the thread table's owners are writer numbers, with a lock each;
					slots have a lapped flag and pages an overrun_cum (ring.c I3) */
#define TB_CACHELINE 64

/*
 * The tail word: everything a writer must see atomically to append.
 *   bits  0..16  off    data offset of the next record, in 4-byte units
 *   bits 17..32  count  data records on the tail page
 *   bits 33..48  phys   physical page the tail is on
 *   bits 49..62  gen    low 14 bits of the tail page's sequence number
 *   bit  63      phase  which last_ts[] holds the time of the last record
 *
 * Every publish flips the phase and writes the other last_ts[] entry, so a
 * section abandoned after that store (but before the tail word) wrote an
 * entry nobody reads: the published phase still names the right one.
 *
 * A writer's snapshot could be mistaken for the current tail word after
 * 16384 page switches that end on the same page at the same offset, count
 * and phase (ABA); so every publish also checks that last_ts[phase] still
 * holds the time the writer saw, and time does not come back.
 */
#define T_OFF_BITS 17
#define T_COUNT_BITS 16
#define T_PHYS_BITS 16
#define T_GEN_BITS 14
#define T_COUNT_SHIFT T_OFF_BITS
#define T_PHYS_SHIFT (T_COUNT_SHIFT + T_COUNT_BITS)
#define T_GEN_SHIFT (T_PHYS_SHIFT + T_PHYS_BITS)
#define T_PHASE_SHIFT 63
#define T_MASK(bits) ((1ull << (bits)) - 1)

static inline uint32_t t_off(uint64_t t) { return (uint32_t)(t & T_MASK(T_OFF_BITS)) * 4; }
static inline uint32_t t_count(uint64_t t) { return (uint32_t)((t >> T_COUNT_SHIFT) & T_MASK(T_COUNT_BITS)); }
static inline uint32_t t_phys(uint64_t t) { return (uint32_t)((t >> T_PHYS_SHIFT) & T_MASK(T_PHYS_BITS)); }
static inline uint32_t t_gen(uint64_t t) { return (uint32_t)((t >> T_GEN_SHIFT) & T_MASK(T_GEN_BITS)); }
static inline unsigned t_phase(uint64_t t) { return (unsigned)(t >> T_PHASE_SHIFT); }

/* The tail word after a publish from t onto page phys of sequence seq: the phase flips. */
static inline uint64_t t_next(uint64_t t, uint32_t off_bytes, uint32_t count, uint64_t seq, uint32_t phys)
{
	return (uint64_t)(off_bytes / 4) | ((uint64_t)count << T_COUNT_SHIFT) |
	       ((uint64_t)phys << T_PHYS_SHIFT) | ((seq & T_MASK(T_GEN_BITS)) << T_GEN_SHIFT) |
	       ((uint64_t)(t_phase(t) ^ 1) << T_PHASE_SHIFT);
}

/*
 * The same tail word with one more record of size bytes on the same page:
 * only off, count and phase change, so it is two additions and an xor.
 */
static inline uint64_t t_append(uint64_t t, uint32_t size)
{
	return (t + size / 4 + (1ull << T_COUNT_SHIFT)) ^ (1ull << T_PHASE_SHIFT);
}

static inline uint64_t t_initial(uint64_t seq, uint32_t phys)
{
	return ((seq & T_MASK(T_GEN_BITS)) << T_GEN_SHIFT) | ((uint64_t)phys << T_PHYS_SHIFT);
}

/*
 * A slot word: which physical page sits in ring slot i and for which lap.
 *   bits  0..15  phys     physical page index (0..N)
 *   bit  16      free     the data of lap seq was consumed (or never existed):
 *                         a writer may claim the slot without counting loss
 *   bit  17      lapped   the claim of lap seq overwrote unread data: the
 *                         section that enters the page counts the old lap's
 *                         meta.entries in its meta.overrun_cum (I3)
 *   bits 18..63  seq      sequence number of the page the slot holds
 * Page sequence numbers grow by one per page entered; page seq lives in
 * slot seq % N.
 */
#define S_PHYS_BITS 16
#define S_FREE (1ull << 16)
#define S_LAPPED (1ull << 17)
#define S_SEQ_SHIFT 18

static inline uint32_t s_phys(uint64_t s) { return (uint32_t)(s & T_MASK(S_PHYS_BITS)); }
static inline int s_free(uint64_t s) { return (s & S_FREE) != 0; }
static inline int s_lapped(uint64_t s) { return (s & S_LAPPED) != 0; }
static inline uint64_t s_seq(uint64_t s) { return s >> S_SEQ_SHIFT; }
static inline uint64_t s_make(uint32_t phys, uint64_t seq, int free_)
{
	return phys | (free_ ? S_FREE : 0) | (seq << S_SEQ_SHIFT);
}

/* tail_hist entry: {seq:48, phys:16} of the page the tail entered. */
static inline uint64_t h_make(uint64_t seq, uint32_t phys) { return (seq << 16) | phys; }
static inline uint64_t h_seq(uint64_t h) { return h >> 16; }
static inline uint32_t h_phys(uint64_t h) { return (uint32_t)(h & 0xffff); }

/*
 * Per physical page metadata, written by the section that enters or closes
 * the page.  cum_before numbers events: the first record on this page is
 * event number cum_before of its CPU.  Because every page knows where it
 * starts in that numbering, any reader computes exactly how many events a
 * gap swallowed, without asking the writers.
 */
struct tb_page_meta {
	uint64_t cum_before; /* events committed on this CPU before this page */
	uint32_t entries;    /* data records, final once the page is closed */
	uint32_t len;        /* real end of data, final once closed */
	/*
	 * Events overwritten on this CPU (the kernel's overrun) when the tail
	 * entered this page, that entry's own lap included: stored by the
	 * section that enters the page, from the previous page's and the
	 * claim's count (S_LAPPED), so it is all-or-nothing with the entry
	 * itself and a section that restarts stores it again, not twice.  An
	 * atomic add after the claim's CAS, as it was, is lost when the writer
	 * dies between the two; a claim no section entered is counted from its
	 * slot by the stats (I3).
	 */
	uint64_t overrun_cum;
};

/*
 * Readers' view of meta and of a page's time stamp.  relaxed: the writer's
 * stores are ordered before the tail word that published them, which the
 * reader loaded with acquire; for a page that may be re-entered meanwhile
 * (the iterator) the slot re-check decides whether the value is used.
 */
static inline uint32_t meta_len(const struct tb_page_meta *m) { return __atomic_load_n(&m->len, __ATOMIC_RELAXED); }
static inline uint32_t meta_entries(const struct tb_page_meta *m) { return __atomic_load_n(&m->entries, __ATOMIC_RELAXED); }
static inline uint64_t meta_cum(const struct tb_page_meta *m) { return __atomic_load_n(&m->cum_before, __ATOMIC_RELAXED); }
static inline uint64_t meta_overrun(const struct tb_page_meta *m) { return __atomic_load_n(&m->overrun_cum, __ATOMIC_RELAXED); }
static inline uint64_t page_ts(const uint8_t *page) { return __atomic_load_n((const uint64_t *)page, __ATOMIC_RELAXED); }

/*
 * Counters: each refused or lost event lands in exactly one (filtered ones
 * are neither); events overwritten with their page are counted by the
 * sections, in tb_page_meta.overrun_cum.
 */
struct tb_counters {
	_Atomic uint64_t dropped;        /* refused: ring full, producer/consumer */
	_Atomic uint64_t commit_overrun; /* refused: lapped an uncommitted page */
	_Atomic uint64_t too_big;        /* refused: larger than a record can be */
	_Atomic uint64_t nested;         /* refused: reservations nested too deep */
	_Atomic uint64_t busy;           /* refused: no rseq and every buffer locked */
	_Atomic uint64_t read;           /* consumed by a reader */
	_Atomic uint64_t blob_full;      /* refused: no room in this CPU's blob area */
	_Atomic uint64_t blob_written;   /* blobs committed into this CPU's blob area */
	_Atomic uint64_t blob_read;      /* references consumed here, blob intact */
	_Atomic uint64_t blob_lost;      /* references consumed here, blob overwritten */
	_Atomic uint64_t filtered;       /* not written: a filter at the source said no (not lost) */
};

struct tb_reader_state {
	uint32_t held_phys; /* page the reader holds (its spare when !held) */
	uint32_t held;      /* 1: held_phys holds page held_seq being read */
	uint64_t held_seq;
	uint32_t read_off;  /* bytes of the held page consumed */
	/*
	 * 1 once the tail has left the held page: its end (held_end) is then
	 * final (I4) and the reader stops asking the tail, whose cache line
	 * the writers of this CPU keep hot.
	 */
	uint32_t held_closed;
	uint32_t held_end;
	uint64_t time;      /* running time of the held page */
	uint64_t next_seq;  /* next page to take */
	uint64_t next_cum;  /* number of the next event the reader expects */
	uint64_t pending_lost; /* gap found but not yet reported */
};

/*
 * The reader's commit journal: the state one consumption (a record of
 * tb_consume, a page of tb_read_page) leaves the reader at, stored before
 * any of it (reader.c, R1-R3).  The reader's position and its read count
 * are words apart, so without it a consumer killed between their stores
 * left a count that did not add up: `read` short by the page's events, and
 * entries (written - overrun - read) counting events no longer in the ring.
 *   word  bit 63: RJ_PENDING, a commit is under way and the fields below
 *         are its targets; bit 32: held; bits 0..31: read_off.  0: none.
 * It sits in the padding after rd, before blob_next's line: a region of
 * layout version 6 has the same size and offsets with or without it, and
 * one made before it has zeros there (no commit pending), so regions of
 * either build are read by the other.
 */
#define RJ_PENDING (1ull << 63)
#define RJ_HELD (1ull << 32)
struct tb_reader_journal {
	_Atomic uint64_t word;
	uint64_t time, next_cum, pending_lost;
	uint64_t read; /* cnt.read after the commit */
};

struct tb_cpu_ctl {
	/* tail, tail_hist, last_ts: written only by publish sections on this CPU. */
	_Alignas(TB_CACHELINE) _Atomic uint64_t tail;
	_Atomic uint64_t tail_hist[2]; /* indexed by seq & 1 */
	_Atomic uint64_t last_ts[2]; /* indexed by the tail word's phase */
	/*
	 * Not a section's word: the words of a page the fast path may fill,
	 * the page's data words while recording and 0 while not, so a stopped
	 * ring sends every write to the general path, which refuses it.
	 * Written by tb_ring_set_recording from any CPU (and at creation and
	 * reset); read by the fast path beside the tail word, in its line.
	 */
	_Atomic uint32_t fast_words;
	/* Writers' and the reader's compare-and-swap target lives in slot[]. */
	_Alignas(TB_CACHELINE) struct tb_counters cnt;
	_Alignas(TB_CACHELINE) _Atomic uint32_t reader_lock;
	_Atomic uint32_t fallback_lock; /* only without rseq */
	struct tb_reader_state rd;
	struct tb_reader_journal rj; /* in rd's second line, before blob_next's: see above */
	/*
	 * The blob area's allocation cursor: the allocation number of the
	 * next chunk to hand out (chunk n % blob_chunks).  Swapped by writers
	 * of any CPU, so on a line of its own, away from the tail's.
	 */
	_Alignas(TB_CACHELINE) _Atomic uint64_t blob_next;
};
/* The journal took padding: layout version 6's offsets and size stand. */
_Static_assert(offsetof(struct tb_cpu_ctl, rj) + sizeof(struct tb_reader_journal) <=
		   offsetof(struct tb_cpu_ctl, blob_next),
	       "the reader's journal fits before blob_next's line");
_Static_assert(offsetof(struct tb_cpu_ctl, blob_next) == 5 * TB_CACHELINE && sizeof(struct tb_cpu_ctl) == 6 * TB_CACHELINE,
	       "a CPU control block of layout version 6");

/*
 * rd as the commit its journal holds would leave it: the targets in place
 * of the fields while RJ_PENDING is set in word (rj.word, loaded acquire),
 * else rd unchanged.  For readers of the state that do not finish commits
 * (tb_shm_window's copy); the lock holder finishes them (reader.c).
 */
static inline void rj_overlay(const struct tb_reader_journal *rj, uint64_t word, struct tb_reader_state *rd)
{
	if (!(word & RJ_PENDING))
		return;
	rd->read_off = (uint32_t)word;
	rd->held = (word & RJ_HELD) != 0;
	rd->time = rj->time;
	rd->next_cum = rj->next_cum;
	rd->pending_lost = rj->pending_lost;
}

struct tb_region {
	uint64_t magic;
	uint32_t version;
	uint32_t ncpus;
	uint32_t subbuf_size;
	uint32_t nr_pages; /* N: pages in the ring per CPU */
	uint32_t overwrite;
	uint32_t clock;
	uint64_t size;       /* whole region */
	uint64_t cpu_stride; /* bytes per CPU block */
	uint64_t cpu_offset; /* offset of CPU 0's block */
	uint64_t slot_offset;  /* inside a CPU block */
	uint64_t meta_offset;  /* inside a CPU block */
	uint64_t pages_offset; /* inside a CPU block, page aligned */
	uint64_t requested_kb;
	_Atomic uint32_t record_disabled;
	uint32_t pad_;
	_Atomic uint64_t counter; /* TB_CLOCK_COUNTER */
	/* Clock calibration for the TSC clock, taken at creation. */
	uint64_t cal_raw0, cal_ns0, cal_raw1, cal_ns1;
	/* The blob area of each CPU block (0 chunks: none); docs/design.md §9. */
	uint32_t blob_chunk;         /* bytes per chunk, a power of two */
	uint32_t blob_chunks;        /* chunks per CPU */
	uint64_t blob_words_offset;  /* inside a CPU block: one chunk word per chunk */
	uint64_t blob_data_offset;   /* inside a CPU block, page aligned */
	/* The thread table (struct tb_thread_table) between the header and CPU 0's block. */
	uint32_t thread_slots;  /* TB_THREAD_SLOTS */
	uint32_t pad2_;
	uint64_t thread_offset; /* page aligned, after the header's page */
};

/*
 * The thread table: the count of writes begun, per writer thread, so that
 * recovery can tell exactly how many writes a crash left in flight (written
 * but never committed nor refused): the sum of the counts less the events
 * committed (docs/design.md §10, src/ring/inflight.c).
 *
 * A slot is one cache line: its owner increments it on every write, and a
 * line shared between threads of different CPUs would bounce.  A slot
 * keeps its count across owners (released at thread exit, or taken from a
 * dead one), so the table's sum is all writes ever begun and not undone.
 */
#define TB_THREAD_SLOTS 256
#define TB_THREAD_SLOT_SHIFT 6 /* log2(sizeof(struct tb_thread_slot)) */

/*
 * A thread's name in the table: tid 0, the name's words (release), then
 * tid (release); a reader loads tid (acquire), the words (acquire), tid
 * again, and keeps the name only when both tids agree: a word of a newer
 * name carries that name's tid 0 with it (a seqlock whose count is the
 * tid, without fences, which TSan cannot check: the same tid twice is the
 * same thread, named by itself).  A region made before these words has zeros there: no
 * names.
 */
struct tb_slot_name {
	_Atomic uint32_t tid;
	_Atomic uint64_t name[2]; /* 16 bytes of comm, NUL-padded */
};

struct tb_thread_slot {
	/*
	 * The thread that holds the slot, 0: free.  Not a pid: pids mean
	 * nothing across pid namespaces (inflight.c): the writer number the
	 * region gave the thread's handle in its process (bit 31 of it set:
	 * the handle holds the slot's lock, TB_OWNER_LOCKED) << 32 | the
	 * thread's id in its own process.
	 */
	_Alignas(TB_CACHELINE) _Atomic uint64_t owner;
	uint64_t begun; /* writes begun less writes refused, by its owners; only the owner writes it */
	/*
	 * The names of the slot's last two claimers, [0] the newest: each
	 * thread's id in its process and its name at the claim (PR_GET_NAME),
	 * kept after the slot is given back, so that a recording names the
	 * threads that wrote and ended between two of its drains, also when
	 * the next thread of the handle took the slot (the slot stays with its
	 * handle's threads: they reuse it) - up to two claims of one slot
	 * between reads (tb_ring_thread_names).  Stored only by a claimer that
	 * won the owner word (so holding the slot's lock).
	 */
	struct tb_slot_name named[2];
};

#define TB_OWNER_LOCKED (1ull << 63)

struct tb_thread_table {
	/* Threads that found every slot taken count here, by atomic add (slower, as exact). */
	_Alignas(TB_CACHELINE) _Atomic uint64_t shared_begun;
	/* The last writer number handed out (fetch-add by a handle's first claim in a process). */
	_Atomic uint32_t writers;
	struct tb_thread_slot slot[TB_THREAD_SLOTS];
};

static inline struct tb_thread_table *region_threads(struct tb_region *r)
{
	return (struct tb_thread_table *)((char *)r + r->thread_offset);
}

/*
 * The byte of the region's file whose OFD lock (fcntl F_OFD_SETLK) stands
 * for "slot i's owner lives": the first byte of the slot's owner word.
 * Advisory: it changes nothing of what the byte holds or who may map it.
 */
static inline uint64_t tb_thread_slot_lock_offset(const struct tb_region *r, unsigned i)
{
	return r->thread_offset + offsetof(struct tb_thread_table, slot) + (uint64_t)i * sizeof(struct tb_thread_slot);
}

static inline struct tb_cpu_ctl *region_cpu(struct tb_region *r, unsigned cpu)
{
	return (struct tb_cpu_ctl *)((char *)r + r->cpu_offset + (uint64_t)cpu * r->cpu_stride);
}

static inline _Atomic uint64_t *cpu_slots(struct tb_region *r, struct tb_cpu_ctl *c)
{
	return (_Atomic uint64_t *)((char *)c + r->slot_offset);
}

static inline struct tb_page_meta *cpu_meta(struct tb_region *r, struct tb_cpu_ctl *c)
{
	return (struct tb_page_meta *)((char *)c + r->meta_offset);
}

static inline uint8_t *cpu_page(struct tb_region *r, struct tb_cpu_ctl *c, uint32_t phys)
{
	return (uint8_t *)c + r->pages_offset + (uint64_t)phys * r->subbuf_size;
}

/*
 * A blob chunk word: who holds the chunk and in which state.
 *   bits 0..1   state  FREE      claimable (never committed, or given back)
 *                      WRITING   its writer fills it; nobody else may touch it
 *                      COMMITTED the blob is complete and may be read
 *                      READ      its reference was consumed; still readable,
 *                                and claimable
 *   bits 2..63  first  allocation number of the first chunk of the blob
 *                      that holds (or last held) the chunk
 * Allocation numbers only grow and a chunk is only ever claimed for a
 * larger one, so a word never comes back to a value it had: a reader that
 * finds the same word after copying knows no writer touched the bytes.
 */
enum { B_FREE = 0, B_WRITING = 1, B_COMMITTED = 2, B_READ = 3 };

static inline uint64_t b_make(uint64_t first, unsigned state) { return first << 2 | state; }
static inline uint64_t b_first(uint64_t w) { return w >> 2; }
static inline unsigned b_state(uint64_t w) { return (unsigned)(w & 3); }

static inline _Atomic uint64_t *cpu_blob_words(struct tb_region *r, struct tb_cpu_ctl *c)
{
	return (_Atomic uint64_t *)((char *)c + r->blob_words_offset);
}

static inline uint8_t *cpu_blob_data(struct tb_region *r, struct tb_cpu_ctl *c)
{
	return (uint8_t *)c + r->blob_data_offset;
}

/* Record bytes of a sub-buffer: its size less the kernel's 16-byte page header (time stamp, commit). */
static inline uint32_t region_data_size(const struct tb_region *r)
{
	return r->subbuf_size - 16;
}

/*
 * Whether the consuming reader's state, which lives in the region, names
 * only pages and offsets the region has (a writer of another process
 * could have scribbled it: shm.c).
 */
static inline int reader_state_sane(const struct tb_region *r, const struct tb_reader_state *rd)
{
	return rd->held_phys <= r->nr_pages && rd->read_off <= region_data_size(r) &&
	       rd->held_end <= region_data_size(r);
}

/* The tail as seen through one tail word: its sequence number and page. */
struct tail_view {
	uint64_t t;
	uint64_t seq;
	uint32_t phys;
};

/*
 * Resolve the tail word's generation against tail_hist.  A section that
 * was abandoned after writing tail_hist[(seq+1)&1] leaves the other entry
 * intact, so one of the two always matches the published tail.  The tail
 * word is read again afterwards: if it did not change, no page switch
 * completed in between, so the entry read belongs to it (a reader that
 * slept through 16384 switches would otherwise pair an old offset with a
 * new page).  Returns 0 if the snapshot raced; retry.
 */
static inline int tail_resolve(struct tb_cpu_ctl *c, uint64_t t, struct tail_view *v)
{
	/*
	 * acquire: pairs with the section's stores, which precede the tail
	 * store; it also keeps the re-check of the tail word below after it.
	 */
	uint64_t h = atomic_load_explicit(&c->tail_hist[t_gen(t) & 1], memory_order_acquire);

	if ((h_seq(h) & T_MASK(T_GEN_BITS)) != t_gen(t))
		return 0;
	/* relaxed would do; acquire matches the first load of the tail word */
	if (atomic_load_explicit(&c->tail, memory_order_acquire) != t)
		return 0;
	v->t = t;
	v->seq = h_seq(h);
	v->phys = h_phys(h);
	return 1;
}

/* The oldest page the ring can still hold while the tail is on tail_seq. */
static inline uint64_t oldest_seq(const struct tb_region *r, uint64_t tail_seq)
{
	return tail_seq - (r->nr_pages - 1);
}

/*
 * Where the readable records of page seq (on physical page phys) end, as
 * seen from the tail view v: the tail's offset while it is the tail page,
 * the page's final length once the tail has left it (I1, I4).
 */
static inline uint32_t page_end(struct tb_region *r, struct tb_cpu_ctl *c, const struct tail_view *v,
				uint64_t seq, uint32_t phys)
{
	uint32_t end = seq == v->seq ? t_off(v->t) : meta_len(&cpu_meta(r, c)[phys]);

	/* never past the page's data: a region shared with other processes is not trusted (shm.c) */
	return end <= region_data_size(r) ? end : region_data_size(r);
}

#endif
