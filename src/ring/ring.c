// SPDX-License-Identifier: MIT
/*
 * ring.c - creating a ring and the write path.
 *
 * A write computes, from one snapshot of its CPU's tail word, exactly the
 * bytes the record needs (header, time delta or extend or absolute stamp,
 * payload) and hands them to a publish section (publish.h) that stores them
 * and the new tail word as one indivisible step on that CPU.  If anything
 * changed since the snapshot -- another writer on the CPU, a migration, a
 * signal handler that wrote in between -- the section fails before its
 * final store and the write starts over from a fresh snapshot.  Invariants
 * kept here (docs/design.md has the full list):
 *
 *   I1  The bytes of the tail page below t_off(tail) are complete records
 *       and never change while the page is in the ring.
 *   I2  A record's time is >= the time of the record before it on the CPU
 *       (the clock is clamped to last_ts[phase]), so per-CPU time never
 *       goes back; the phase bit makes last_ts immune to abandoned sections.
 *   I3  Only a writer entering a page for a new lap changes what a slot
 *       holds, by compare-and-swap, and before any byte of it is written;
 *       the events it overwrites are counted exactly once: the swap marks
 *       the slot lapped, and the one section that enters the page adds them
 *       to the page's meta.overrun_cum with the entry itself (a writer dying
 *       between two steps can leave a claim without its entry, never an
 *       entry without its count).
 *   I4  meta[page].cum_before numbers the page's first event among all
 *       events committed on the CPU; a closed page's entries is final.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "blob.h"
#include "clock.h"
#include "crash_point.h" /* test builds only: empty otherwise */
#include "pagefmt.h"
#include "publish.h"
#include "ring_internal.h"

/* ------------------------------------------------------------ layout */

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

void tb_ring_opts_default(struct tb_ring_opts *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof(*o));
	o->size_kb = 1408;
	o->subbuf_size = 4096;
	o->overwrite = 1;
	o->clock = TB_CLOCK_TSC;
}

/*
 * Buffers needed so that every CPU id has its own: the highest possible id
 * plus one (ids can be sparse, "0-3,8-11"), from sysfs, else the count.
 */
static unsigned possible_cpus(void)
{
	char text[256], *p = text;
	unsigned max = 0;
	int found = 0;
	ssize_t n = -1;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = 0;
	while (*p >= '0' && *p <= '9') {
		unsigned long v = strtoul(p, &p, 10);
		if (*p == '-')
			v = strtoul(p + 1, &p, 10);
		max = v > max ? (unsigned)v : max;
		found = 1;
		if (*p != ',')
			break;
		p++;
	}
	if (found)
		return max + 1;
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	return conf > 0 ? (unsigned)conf : 1;
}

struct geometry {
	struct tb_sizing sz;
	unsigned ncpus;
	size_t ctl, slot_off, meta_off, pages_off, stride, thread_off, cpu_off, total;
	size_t blob_chunks, blob_words_off, blob_data_off;
};

/*
 * The blob area's chunk: the unit a writer claims, with one compare-and-swap
 * each (a 64 KiB blob costs 16 of them beside its 64 KiB copy, about a tenth
 * of it in bench_blob; 1 KiB chunks would cost 4x that).  A blob only needs
 * the area when it is larger than a record may be, so it takes a chunk or
 * more anyway.
 */
#define BLOB_CHUNK 4096u
#define BLOB_MAX_KB (1u << 20) /* 1 GiB per CPU: lengths stay 32-bit */

/* The blob area after the pages: chunk words, then the chunks, page aligned. */
static int blob_geometry(const struct tb_ring_opts *o, struct geometry *g)
{
	size_t end = g->stride;

	if (o->blob_kb > BLOB_MAX_KB)
		return -EINVAL;
	/* no area: offsets 0, not whatever the caller's stack held (the region stores them) */
	g->blob_words_off = g->blob_data_off = 0;
	g->blob_chunks = (o->blob_kb * 1024 + BLOB_CHUNK - 1) / BLOB_CHUNK;
	if (!g->blob_chunks)
		return 0;
	g->blob_words_off = round_up(end, TB_CACHELINE);
	g->blob_data_off = round_up(g->blob_words_off + g->blob_chunks * 8, 4096);
	g->stride = g->blob_data_off + g->blob_chunks * BLOB_CHUNK;
	return 0;
}

static int geometry(const struct tb_ring_opts *o, struct geometry *g)
{
	size_t subbuf = o->subbuf_size ? o->subbuf_size : 4096;
	int rc;

	if (!tb_page_size_valid(subbuf))
		return -EINVAL;
	rc = tb_sizing_compute(o->size_kb ? o->size_kb : 1408, (uint32_t)(subbuf >> 10), &g->sz);
	if (rc < 0)
		return rc;
	g->ncpus = o->ncpus ? o->ncpus : possible_cpus();
	if (g->ncpus == 0 || g->ncpus > 4096)
		return -EINVAL;
	uint32_t n = g->sz.subbufs_per_cpu;
	g->ctl = round_up(sizeof(struct tb_cpu_ctl), TB_CACHELINE);
	g->slot_off = g->ctl;
	g->meta_off = round_up(g->slot_off + (size_t)n * 8, TB_CACHELINE);
	g->pages_off = round_up(g->meta_off + (size_t)(n + 1) * sizeof(struct tb_page_meta), 4096);
	g->stride = g->pages_off + (size_t)(n + 1) * subbuf;
	rc = blob_geometry(o, g);
	if (rc < 0)
		return rc;
	/* the thread table on pages of its own: a reader's private copy of the header page leaves it shared */
	g->thread_off = round_up(sizeof(struct tb_region), 4096);
	g->cpu_off = round_up(g->thread_off + sizeof(struct tb_thread_table), 4096);
	g->total = g->cpu_off + (size_t)g->ncpus * g->stride;
	return 0;
}

size_t tb_ring_region_size(const struct tb_ring_opts *opts)
{
	struct tb_ring_opts d;
	struct geometry g;

	if (!opts) {
		tb_ring_opts_default(&d);
		opts = &d;
	}
	return geometry(opts, &g) < 0 ? 0 : g.total;
}

/* ------------------------------------------------------------ clock */

static struct {
	pthread_once_t once;
	uint64_t raw0, ns0, raw1, ns1;
} tsc_cal = {PTHREAD_ONCE_INIT, 0, 0, 0, 0};

/* Measure the TSC against CLOCK_MONOTONIC once per process (10 ms). */
static void calibrate_tsc(void)
{
	struct timespec pause = {0, 10 * 1000 * 1000};

	tsc_cal.ns0 = clock_ns(CLOCK_MONOTONIC);
	tsc_cal.raw0 = clock_read(TB_CLOCK_TSC, NULL);
	nanosleep(&pause, NULL);
	tsc_cal.ns1 = clock_ns(CLOCK_MONOTONIC);
	tsc_cal.raw1 = clock_read(TB_CLOCK_TSC, NULL);
}

static void region_calibrate(struct tb_region *r)
{
	if (r->clock != TB_CLOCK_TSC)
		return;
	pthread_once(&tsc_cal.once, calibrate_tsc);
	r->cal_raw0 = tsc_cal.raw0;
	r->cal_ns0 = tsc_cal.ns0;
	r->cal_raw1 = tsc_cal.raw1;
	r->cal_ns1 = tsc_cal.ns1;
}

uint64_t tb_ring_to_ns(const struct tb_ring *ring, uint64_t raw)
{
	const struct tb_region *r = ring ? ring->r : NULL;
	__int128 d;

	if (!r || r->clock != TB_CLOCK_TSC || r->cal_raw1 == r->cal_raw0)
		return raw;
	d = (__int128)((int64_t)(raw - r->cal_raw0)) * (int64_t)(r->cal_ns1 - r->cal_ns0) /
	    (int64_t)(r->cal_raw1 - r->cal_raw0);
	return (uint64_t)((__int128)r->cal_ns0 + d);
}

uint64_t tb_ring_clock_now(const struct tb_ring *ring)
{
	return ring ? clock_read(ring->r->clock, &ring->r->counter) : 0;
}

const char *tb_clock_name(enum tb_clock clock)
{
	static const char *const names[] = {"x86-tsc", "mono", "boot", "counter"};
	return (unsigned)clock < 4 ? names[clock] : "unknown";
}

/* ------------------------------------------------------------ creation */

/* Record words a page holds: what fast_words is while recording. */
static uint32_t page_words(const struct tb_region *r)
{
	return tb_page_data_size(r->subbuf_size) / 4;
}

static void cpu_init(struct tb_region *r, struct tb_cpu_ctl *c)
{
	uint32_t n = r->nr_pages;
	_Atomic uint64_t *slot = cpu_slots(r, c);
	struct tb_page_meta *meta = cpu_meta(r, c);

	memset(c, 0, r->pages_offset);
	/* Lap 0 of every slot counts as consumed; the tail starts at seq n. */
	for (uint32_t i = 1; i < n; i++)
		atomic_init(&slot[i], s_make(i, i, 1));
	atomic_init(&slot[0], s_make(0, n, 0));
	atomic_init(&c->tail_hist[n & 1], h_make(n, 0));
	atomic_init(&c->tail_hist[(n + 1) & 1], h_make(n - 1, 0));
	atomic_init(&c->tail, t_initial(n, 0));
	atomic_init(&c->last_ts[0], 0);
	atomic_init(&c->last_ts[1], 0);
	atomic_init(&c->fast_words, page_words(r)); /* recording */
	for (uint32_t i = 0; i <= n; i++)
		meta[i] = (struct tb_page_meta){0};
	memset(cpu_page(r, c, 0), 0, r->subbuf_size);
	c->rd.held_phys = n; /* the reader's spare */
	c->rd.next_seq = n;
	blob_area_init(r, c);
}

static void region_init(struct tb_region *r, const struct tb_ring_opts *o, const struct geometry *g,
			int keep_owners)
{
	memset(r, 0, sizeof(*r));
	r->magic = TB_MAGIC;
	r->version = TB_LAYOUT_VERSION;
	r->ncpus = g->ncpus;
	r->subbuf_size = g->sz.subbuf_bytes;
	r->nr_pages = g->sz.subbufs_per_cpu;
	r->overwrite = o->overwrite ? 1 : 0;
	r->clock = o->clock;
	r->size = g->total;
	r->cpu_stride = g->stride;
	r->cpu_offset = g->cpu_off;
	r->slot_offset = g->slot_off;
	r->meta_offset = g->meta_off;
	r->pages_offset = g->pages_off;
	r->requested_kb = g->sz.requested_kb;
	r->blob_chunk = g->blob_chunks ? BLOB_CHUNK : 0;
	r->blob_chunks = (uint32_t)g->blob_chunks;
	r->blob_words_offset = g->blob_words_off;
	r->blob_data_offset = g->blob_data_off;
	r->thread_slots = TB_THREAD_SLOTS;
	r->thread_offset = g->thread_off;
	tb__thread_table_init(r, keep_owners);
	region_calibrate(r);
	for (unsigned cpu = 0; cpu < r->ncpus; cpu++)
		cpu_init(r, region_cpu(r, cpu));
}

static int choose_publish_mode(struct tb_ring *ring)
{
	/* rseq sections are exclusive per real CPU: every CPU id needs its own buffer. */
	return !ring->opts.no_rseq && pub_rseq_available() && ring->r->ncpus >= possible_cpus();
}

/*
 * Heap memory for a region, faulted in now: the write path must not take a
 * page fault (a kernel allocation) the first time it reaches a page.  Large
 * regions are aligned for, and asked to get, transparent huge pages, so the
 * page switches of the write path do not walk the TLB.
 */
static void *region_alloc(size_t size)
{
	size_t align = size >= (2u << 20) ? (2u << 20) : 4096;
	void *mem;

	if (posix_memalign(&mem, align, size))
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align > 4096)
		madvise(mem, size, MADV_HUGEPAGE); /* a hint; failure changes nothing */
#endif
	memset(mem, 0, size);
	return mem;
}

/* The fast path shifts with shrx (BMI2: every x86-64 since 2013); without it, the general path. */
static int fast_path_cpu(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_BMI2);
#else
	return 0;
#endif
}

/* What the write path needs of the region, in the handle. */
static void handle_cache(struct tb_ring *ring)
{
	struct tb_region *r = ring->r;

	ring->ctl0 = (uint8_t *)region_cpu(r, 0);
	ring->cpu_stride = r->cpu_stride;
	ring->data_offset = r->pages_offset + TB_PAGE_HDR_SIZE;
	/* Sub-buffers are 4 KiB << order (sizing.c), so phys * subbuf_size is a shift. */
	unsigned log2_subbuf = (unsigned)__builtin_ctz(r->subbuf_size);
	ring->page_mask = T_MASK(T_PHYS_BITS) << log2_subbuf;
	ring->phys_shift = T_PHYS_SHIFT - log2_subbuf;
	ring->begun0 = &region_threads(r)->slot[0].begun;
	ring->fast_ncpus = ring->use_rseq && r->clock == TB_CLOCK_TSC && fast_path_cpu() ? r->ncpus : 0;
#if defined(__x86_64__)
	/* Valid with or without a registered area: the fast path stores to it before it checks. */
	ring->rseq_offset = __rseq_offset;
#endif
}

int tb_ring_new(struct tb_ring **out, const struct tb_ring_opts *opts)
{
	struct tb_ring_opts d;
	struct geometry g;
	struct tb_ring *ring;
	void *mem;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!opts) {
		tb_ring_opts_default(&d);
		opts = &d;
	}
	if ((unsigned)opts->clock > TB_CLOCK_COUNTER)
		return -EINVAL;
	rc = geometry(opts, &g);
	if (rc < 0)
		return rc;
	if (opts->mem && (opts->mem_size < g.total || ((uintptr_t)opts->mem & 63)))
		return -EINVAL;
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	mem = opts->mem;
	if (!mem && !(mem = region_alloc(g.total))) {
		free(ring);
		return -ENOMEM;
	}
	if (g.blob_chunks && !(ring->blob_copies = calloc(g.ncpus, sizeof(*ring->blob_copies)))) {
		if (!opts->mem)
			free(mem);
		free(ring);
		return -ENOMEM;
	}
	ring->owns_mem = !opts->mem;
	ring->opts = *opts;
	ring->r = mem;
	region_init(ring->r, opts, &g, 0);
	ring->use_rseq = choose_publish_mode(ring);
	handle_cache(ring);
	tb__count_ring_born(ring);
	*out = ring;
	return 0;
}

/*
 * A region made by another process (tracebuf/shm.h), already copied where
 * the caller trusts it: its geometry is computed again from the few numbers
 * that define it, and every stored offset and size must be exactly what
 * that computation gives, and fit in the mapping.  So no offset derived
 * from the header can point outside the mapped bytes.  0, or -EINVAL with
 * the first field that disagrees in why.
 */
int tb__region_check(const struct tb_region *r, size_t mapped, const char **why)
{
	struct tb_ring_opts o;
	struct geometry g;

	*why = NULL;
	if (mapped < sizeof(*r))
		*why = "shorter than the region header";
	else if (r->magic != TB_MAGIC)
		*why = "bad magic";
	else if (r->version != TB_LAYOUT_VERSION)
		*why = "unknown layout version";
	else if (r->overwrite > 1 || r->clock > TB_CLOCK_COUNTER)
		*why = "bad mode or clock";
	else if (r->ncpus == 0 || r->ncpus > 4096 || !tb_page_size_valid(r->subbuf_size))
		*why = "bad CPU count or sub-buffer size";
	else if (r->blob_chunks && r->blob_chunk != BLOB_CHUNK)
		*why = "bad blob chunk size";
	if (*why)
		return -EINVAL;
	tb_ring_opts_default(&o);
	o.size_kb = r->requested_kb;
	o.subbuf_size = r->subbuf_size;
	o.ncpus = r->ncpus;
	o.blob_kb = (size_t)r->blob_chunks * BLOB_CHUNK / 1024;
	if (r->requested_kb == 0 || r->requested_kb > ((uint64_t)1 << 32) || geometry(&o, &g) < 0)
		*why = "sizes out of range";
	else if (g.sz.subbufs_per_cpu != r->nr_pages || g.total != r->size || g.stride != r->cpu_stride ||
		 g.cpu_off != r->cpu_offset || g.slot_off != r->slot_offset || g.meta_off != r->meta_offset ||
		 g.pages_off != r->pages_offset || g.blob_chunks != r->blob_chunks ||
		 r->thread_slots != TB_THREAD_SLOTS || g.thread_off != r->thread_offset ||
		 (g.blob_chunks && (g.blob_words_off != r->blob_words_offset ||
				    g.blob_data_off != r->blob_data_offset)))
		*why = "offsets disagree with the geometry";
	else if (r->size > mapped)
		*why = "region larger than the file";
	return *why ? -EINVAL : 0;
}

/* A handle on a region that tb__region_check accepted; the caller keeps the memory. */
int tb__ring_attach(struct tb_ring **out, void *mem)
{
	struct tb_region *r = mem;
	struct tb_ring *ring = calloc(1, sizeof(*ring));

	if (!ring)
		return -ENOMEM;
	if (r->blob_chunks && !(ring->blob_copies = calloc(r->ncpus, sizeof(*ring->blob_copies)))) {
		free(ring);
		return -ENOMEM;
	}
	tb_ring_opts_default(&ring->opts);
	ring->opts.size_kb = r->requested_kb;
	ring->opts.subbuf_size = r->subbuf_size;
	ring->opts.ncpus = r->ncpus;
	ring->opts.overwrite = (int)r->overwrite;
	ring->opts.clock = (enum tb_clock)r->clock;
	ring->opts.mem = mem;
	ring->opts.mem_size = r->size;
	ring->opts.blob_kb = (size_t)r->blob_chunks * BLOB_CHUNK / 1024;
	ring->r = r;
	ring->owns_mem = 0;
	ring->use_rseq = choose_publish_mode(ring);
	handle_cache(ring);
	tb__count_ring_born(ring);
	*out = ring;
	return 0;
}

void tb_ring_free(struct tb_ring *ring)
{
	if (!ring)
		return;
	tb__count_ring_gone(ring);
	if (ring->blob_copies)
		for (unsigned cpu = 0; cpu < ring->r->ncpus; cpu++)
			free(ring->blob_copies[cpu].buf);
	free(ring->blob_copies);
	if (ring->owns_mem)
		free(ring->r);
	free(ring);
}

/* The ring's options for rebuilding its region with size_kb per CPU: the same CPUs, the rest as created. */
static struct tb_ring_opts rebuild_opts(const struct tb_ring *ring, size_t size_kb)
{
	struct tb_ring_opts o = ring->opts;

	o.size_kb = size_kb;
	o.ncpus = ring->r->ncpus;
	return o;
}

/*
 * The flag is the truth; each CPU's fast_words mirrors it for the fast path.
 * A rebuilt region (reset, resize) gets the flag of the old one: the
 * kernel's tracing_on survives a reset too.  A pass copies the flag to
 * every CPU and is repeated if the flag changed meanwhile.  All seq_cst, one
 * total order: a pass that read a stale flag is followed by its own
 * re-check failing, and the caller that changed the flag makes a pass after
 * it, so once calls stop every CPU agrees with the flag.
 */
static void set_recording(struct tb_region *r, uint32_t off)
{
	uint32_t words = page_words(r);

	atomic_store(&r->record_disabled, off);
	do {
		off = atomic_load(&r->record_disabled);
		for (unsigned cpu = 0; cpu < r->ncpus; cpu++)
			atomic_store(&region_cpu(r, cpu)->fast_words, off ? 0 : words);
	} while (atomic_load(&r->record_disabled) != off);
}

int tb_ring_reset(struct tb_ring *ring)
{
	struct tb_ring_opts o;
	uint32_t off;
	struct geometry g;

	if (!ring)
		return -EINVAL;
	o = rebuild_opts(ring, ring->r->requested_kb);
	off = atomic_load(&ring->r->record_disabled);
	if (geometry(&o, &g) < 0)
		return -EINVAL;
	region_init(ring->r, &o, &g, 1); /* the threads keep their slots; no writer is active (ring.h) */
	set_recording(ring->r, off);
	return 0;
}

int tb_ring_resize(struct tb_ring *ring, size_t size_kb)
{
	struct tb_ring_opts o;
	struct geometry g;
	uint32_t off;
	void *mem;

	if (!ring || size_kb == 0)
		return -EINVAL;
	if (!ring->owns_mem)
		return -EPERM;
	o = rebuild_opts(ring, size_kb);
	if (geometry(&o, &g) < 0)
		return -EINVAL;
	if (!(mem = region_alloc(g.total)))
		return -ENOMEM;
	off = atomic_load(&ring->r->record_disabled);
	free(ring->r);
	ring->r = mem;
	ring->opts = o;
	region_init(ring->r, &o, &g, 0);
	set_recording(ring->r, off);
	handle_cache(ring);
	tb__count_ring_renew(ring); /* the threads' slots were the old region's */
	return 0;
}

void tb_ring_set_recording(struct tb_ring *ring, int on)
{
	if (ring)
		set_recording(ring->r, on ? 0 : 1);
}

/* The queries answer 0 (TB_CLOCK_TSC for the clock) for a NULL ring. */
unsigned tb_ring_ncpus(const struct tb_ring *ring) { return ring ? ring->r->ncpus : 0; }
size_t tb_ring_subbuf_size(const struct tb_ring *ring) { return ring ? ring->r->subbuf_size : 0; }
uint32_t tb_ring_max_payload(const struct tb_ring *ring) { return ring ? tb_page_max_payload(ring->r->subbuf_size) : 0; }
enum tb_clock tb_ring_clock(const struct tb_ring *ring) { return ring ? (enum tb_clock)ring->r->clock : TB_CLOCK_TSC; }
int tb_ring_uses_rseq(const struct tb_ring *ring) { return ring ? ring->use_rseq : 0; }
size_t tb_ring_blob_size(const struct tb_ring *ring) { return ring ? (size_t)ring->r->blob_chunks * ring->r->blob_chunk : 0; }

void tb_ring_sizing(const struct tb_ring *ring, struct tb_sizing *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (ring)
		tb_sizing_compute(ring->r->requested_kb, ring->r->subbuf_size >> 10, out);
}

/* ------------------------------------------------------------ write path */

/* Count a refused event on the current CPU's buffer.  relaxed: a statistic. */
#define COUNT_REFUSED(ring, field)                                                                 \
	atomic_fetch_add_explicit(&region_cpu((ring)->r, pub_current_cpu() % (ring)->r->ncpus)->cnt.field, \
				  1, memory_order_relaxed)

/* A record to append: its payload, and the form of its header. */
struct rec_src {
	const void *data;
	uint32_t len;
	uint32_t size;     /* bytes the record occupies */
	uint32_t type_len; /* 0: the long form, array[0] = size - 4 */
};

/* The form the kernel chooses: compact up to 112 bytes, long above. */
static struct rec_src rec_src_data(const void *data, uint32_t len)
{
	uint32_t size = tbf_record_size(len);

	return (struct rec_src){data, len, size, len > TBF_MAX_SMALL_DATA ? 0 : (size - 4) / 4};
}

/* Queue the stores of a data record at rec; the payload goes in the copy. */
static void put_record(struct publish *p, uint8_t *rec, uint32_t delta, const struct rec_src *src)
{
	uint32_t hb = src->type_len ? 4 : 8, whole = src->len & ~3u;
	uint8_t *body = rec + hb;

	pub32(p, rec, tb_rec_header(src->type_len, delta));
	if (hb == 8)
		pub32(p, rec + 4, src->size - 4);
	p->dst = body;
	p->src = src->data;
	p->len = whole;
	/* The last partial word and the alignment fill: zero-padded, never stale. */
	for (uint32_t o = whole; o < src->size - hb; o += 4) {
		uint32_t w = 0;
		if (o < src->len)
			memcpy(&w, (const uint8_t *)src->data + o, src->len - o);
		pub32(p, body + o, w);
	}
}

struct snapshot {
	unsigned cpu; /* the CPU the section must run on */
	struct tb_cpu_ctl *c;
	struct tail_view v;
	uint64_t last; /* last_ts[phase]: the time of the last record */
	uint64_t ts;   /* the event's time: the clock, never below last (I2) */
};

/* An event that fits on the tail page: a delta, or a time extend before it. */
static int build_append(struct tb_region *r, struct snapshot *s, const struct rec_src *src,
			struct publish *p)
{
	uint32_t off = t_off(s->v.t), d = tb_page_data_size(r->subbuf_size), stamp = 0;
	uint8_t *page = cpu_page(r, s->c, s->v.phys), *rec = page + TB_PAGE_HDR_SIZE + off;
	uint64_t delta = 0, ts = s->ts;

	if (off) {
		delta = ts - s->last;
		stamp = delta > TB_DELTA_MAX ? 8 : 0;
	}
	if (off + src->size + stamp > d)
		return 0;
	pub_init(p, &s->c->tail, s->v.t, &s->c->last_ts[t_phase(s->v.t)], s->last);
	if (stamp) {
		pub64(p, rec, tbf_time_extend(delta));
		rec += 8;
		delta = 0;
	}
	put_record(p, rec, (uint32_t)delta, src);
	pub64(p, &s->c->last_ts[t_phase(s->v.t) ^ 1], ts);
	if (off == 0) /* the first record of a fresh ring: it dates the page */
		pub64(p, page, ts);
	p->update = t_append(s->v.t, src->size + stamp);
	return 1;
}

/*
 * Claim the slot of the page after the tail for the next lap (I3).
 * Returns its physical page, -ENOSPC when producer/consumer mode refuses,
 * or -EAGAIN when the snapshot is stale and the write must start over.
 * *lapped: the unread events the claim overwrote (this writer's or an
 * earlier one's), for the entering section to count.
 */
static int claim_next(struct tb_region *r, struct snapshot *s, uint32_t *lapped)
{
	uint64_t next = s->v.seq + 1;
	_Atomic uint64_t *slot = &cpu_slots(r, s->c)[next % r->nr_pages];
	/* acquire: pairs with the reader's and other writers' CAS on the slot */
	uint64_t cur = atomic_load_explicit(slot, memory_order_acquire);
	uint32_t phys = s_phys(cur);
	/*
	 * The old lap's count stays in meta until the tail leaves the page
	 * again: only the section that closes a page stores its entries.
	 */
	uint32_t old_entries = meta_entries(&cpu_meta(r, s->c)[phys]);

	*lapped = 0;
	if (s_seq(cur) == next) {
		/* another writer on this CPU claimed it already (and may have died since) */
		*lapped = s_lapped(cur) ? old_entries : 0;
		return (int)phys;
	}
	if (s_seq(cur) != next - r->nr_pages)
		return -EAGAIN;
	if (s_free(cur)) {
		/* seq_cst: one total order with the reader's take of the same slot */
		return atomic_compare_exchange_strong(slot, &cur, s_make(phys, next, 0)) ? (int)phys : -EAGAIN;
	}
	if (!r->overwrite) {
		/* relaxed: a statistic, read in stats snapshots */
		atomic_fetch_add_explicit(&s->c->cnt.dropped, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	/* seq_cst: the reader's take and this overwrite cannot both succeed */
	if (!atomic_compare_exchange_strong(slot, &cur, s_make(phys, next, 0) | S_LAPPED))
		return -EAGAIN;
	TB_CRASH_C(TB_CP_CLAIMED);
	*lapped = old_entries; /* final: the page was closed (I4) */
	return (int)phys;
}

/* Close the tail page and put the event first on the next one. */
static int build_switch(struct tb_region *r, struct snapshot *s, const struct rec_src *src,
			struct publish *p)
{
	uint32_t d = tb_page_data_size(r->subbuf_size), off = t_off(s->v.t), cnt = t_count(s->v.t);
	struct tb_page_meta *meta = cpu_meta(r, s->c);
	uint8_t *old = cpu_page(r, s->c, s->v.phys), *page;
	uint64_t next = s->v.seq + 1, ts = s->ts;
	uint32_t lapped;
	int phys = claim_next(r, s, &lapped);

	if (phys < 0)
		return phys;
	page = cpu_page(r, s->c, (uint32_t)phys);
	pub_init(p, &s->c->tail, s->v.t, &s->c->last_ts[t_phase(s->v.t)], s->last);
	if (d - off >= 8)
		pub64(p, old + TB_PAGE_HDR_SIZE + off, tbf_padding(1, d - off));
	else if (d - off == 4)
		pub32(p, old + TB_PAGE_HDR_SIZE + off, (uint32_t)tbf_padding(1, d - off));
	pub64(p, old + 8, off);
	pub32(p, &meta[s->v.phys].entries, cnt);
	pub32(p, &meta[s->v.phys].len, off);
	pub64(p, &meta[phys].cum_before, meta_cum(&meta[s->v.phys]) + cnt);
	pub64(p, page, ts);
	pub64(p, page + 8, 0);
	pub64(p, &s->c->tail_hist[next & 1], h_make(next, (uint32_t)phys));
	pub64(p, &s->c->last_ts[t_phase(s->v.t) ^ 1], ts);
	/* the eighth 64-bit store at most (PUB_MAX_ST64); the tail page's meta is final since its entry */
	pub64(p, &meta[phys].overrun_cum, meta_overrun(&meta[s->v.phys]) + lapped);
	put_record(p, page + TB_PAGE_HDR_SIZE, 0, src);
	p->update = t_next(s->v.t, src->size, 1, next, (uint32_t)phys);
	return 1;
}

static int take_snapshot(struct tb_ring *ring, unsigned cpu, unsigned buf, struct snapshot *s)
{
	struct tb_region *r = ring->r;
	uint64_t t;

	s->cpu = cpu;
	s->c = region_cpu(r, buf);
	/* acquire: pairs with the publish's final store; tail_hist, last_ts, meta and page bytes it covered are visible */
	t = atomic_load_explicit(&s->c->tail, memory_order_acquire);
	if (!tail_resolve(s->c, t, &s->v))
		return 0;
	/* relaxed: ordered after the tail word's acquire load above; the phase names the entry it published */
	s->last = atomic_load_explicit(&s->c->last_ts[t_phase(t)], memory_order_relaxed);
	s->ts = clock_read(r->clock, &r->counter);
	if (s->ts < s->last)
		s->ts = s->last; /* the clock stepped back: time never does in the buffer (I2) */
	return 1;
}

static int publish(struct tb_ring *ring, struct snapshot *s, struct publish *p)
{
	if (ring->use_rseq)
		return pub_section(s->cpu, p);
	return pub_locked(&s->c->fallback_lock, p);
}

/*
 * One attempt on one buffer: 1 published, 0 retry, <0 refused.  A PUB_BUSY
 * from the fallback lock becomes -EBUSY so the caller can try another buffer.
 */
static int append_once(struct tb_ring *ring, unsigned cpu, unsigned buf, const struct rec_src *src)
{
	struct snapshot s;
	struct publish p;
	int rc;

	if (!take_snapshot(ring, cpu, buf, &s))
		return 0;
	rc = build_append(ring->r, &s, src, &p);
	if (rc == 0)
		rc = build_switch(ring->r, &s, src, &p);
	if (rc == -EAGAIN)
		return 0;
	if (rc < 0)
		return rc;
	rc = publish(ring, &s, &p);
	if (rc == PUB_BUSY)
		return -EBUSY;
	return rc == PUB_OK;
}

#if defined(__x86_64__)
/*
 * tb_write is write_x86_64.S: the common case by hand, the rest here.  The
 * assembler sees the handle through write_fast.h; these keep the two in step.
 */
#include "write_fast.h"
_Static_assert(offsetof(struct tb_ring, r) == WF_RING_REGION, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, ctl0) == WF_RING_CTL0, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, cpu_stride) == WF_RING_CPU_STRIDE, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, data_offset) == WF_RING_DATA_OFFSET, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, fast_ncpus) == WF_RING_FAST_NCPUS, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, phys_shift) == WF_RING_PHYS_SHIFT, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, page_mask) == WF_RING_PAGE_MASK, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, rseq_offset) == WF_RING_RSEQ_OFFSET, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, count_key) == WF_RING_COUNT_KEY, "write_fast.h");
_Static_assert(offsetof(struct tb_ring, begun0) == WF_RING_BEGUN0, "write_fast.h");
_Static_assert(TB_THREAD_SLOTS == WF_THREAD_SLOTS && sizeof(struct tb_thread_slot) == 1u << WF_THREAD_SLOT_SHIFT &&
		       TB_THREAD_SLOT_SHIFT == WF_THREAD_SLOT_SHIFT,
	       "write_fast.h: the thread table");
_Static_assert(offsetof(struct tb_cpu_ctl, tail) == WF_CTL_TAIL, "write_fast.h");
_Static_assert(offsetof(struct tb_cpu_ctl, last_ts) == WF_CTL_LAST_TS, "write_fast.h");
_Static_assert(offsetof(struct tb_cpu_ctl, fast_words) == WF_CTL_FAST_WORDS, "write_fast.h");
_Static_assert(T_MASK(T_OFF_BITS) == WF_T_OFF_MASK && (1ull << T_COUNT_SHIFT) == WF_T_COUNT_ONE &&
		       T_PHYS_SHIFT == WF_T_PHYS_SHIFT && T_PHYS_BITS == 16 && T_PHASE_SHIFT == WF_T_PHASE_BIT,
	       "write_fast.h: the tail word");
_Static_assert(offsetof(struct rseq, cpu_id) == WF_RSEQ_CPU_ID && offsetof(struct rseq, rseq_cs) == WF_RSEQ_CS &&
		       RSEQ_SIG == WF_RSEQ_SIG,
	       "write_fast.h: struct rseq");
_Static_assert(TBF_MAX_SMALL_DATA == WF_MAX_SMALL_DATA && TB_DELTA_MAX == WF_DELTA_MAX,
	       "write_fast.h: the page format");

/*
 * The header's type_len (record size / 4 - 1) of every compact payload
 * length, 0..112, for the fast path: tbf_record_size() as a constant
 * expression (test_ring_paths checks every length against the C encoder).
 */
#define SMALL_WORDS_(n) ((((n) ? (n) : 1) + 7) / 4)
#define SMALL_TYPE_LEN(n) (SMALL_WORDS_(n) == 3 ? 3 : SMALL_WORDS_(n) - 1)
#define TL4(n) SMALL_TYPE_LEN(n), SMALL_TYPE_LEN((n) + 1), SMALL_TYPE_LEN((n) + 2), SMALL_TYPE_LEN((n) + 3)
#define TL16(n) TL4(n), TL4((n) + 4), TL4((n) + 8), TL4((n) + 12)
const uint8_t tb__small_type_len[TBF_MAX_SMALL_DATA + 1] = {
	TL16(0), TL16(16), TL16(32), TL16(48), TL16(64), TL16(80), TL16(96), SMALL_TYPE_LEN(112),
};
_Static_assert(TBF_MAX_SMALL_DATA == 112, "the table above has 113 entries");
#endif

/* Publish src on the current CPU: 0, or the refusal (counted, except -EAGAIN). */
static int append(struct tb_ring *ring, const struct rec_src *src)
{
	struct tb_region *r = ring->r;
	unsigned busy = 0;

	for (;;) {
		unsigned cpu = pub_current_cpu();
		unsigned buf = (cpu + busy) % r->ncpus;
		int rc;

		if (ring->use_rseq && (cpu >= r->ncpus || !pub_rseq_available())) {
			/*
			 * A CPU that was not possible at creation has no buffer of
			 * its own; a thread without an rseq registration (it
			 * unregistered) could never complete a section.  Neither
			 * may take the try-lock: its stores would race with the
			 * sections of the writers on that CPU.
			 */
			COUNT_REFUSED(ring, busy);
			return -EBUSY;
		}
		rc = append_once(ring, cpu, buf, src);

		if (rc == 1)
			return 0;
		if (rc == -EBUSY) {
			/* fallback only: the holder may be preempted; never wait for it */
			if (++busy < r->ncpus)
				continue;
			COUNT_REFUSED(ring, busy);
			return -EBUSY;
		}
		if (rc < 0)
			return rc;
	}
}

/*
 * A record the filter at the source rejected (never reserved): counted as
 * filtered, as a write of it would count a refusal - nothing while
 * recording is off, too_big for a record no sub-buffer holds.
 */
void tb__ring_filtered(struct tb_ring *ring, uint32_t len)
{
	/* relaxed: as in tb__append_slow; a stopped ring counts nothing */
	if (atomic_load_explicit(&ring->r->record_disabled, memory_order_relaxed))
		return;
	if (len > tb_page_max_payload(ring->r->subbuf_size))
		COUNT_REFUSED(ring, too_big);
	else
		COUNT_REFUSED(ring, filtered);
}

static int append_data(struct tb_ring *ring, const void *data, uint32_t len)
{
	struct tb_region *r = ring->r;
	struct rec_src src;

	/* relaxed: writers may see recording switched off a little late, like the kernel's */
	if (atomic_load_explicit(&r->record_disabled, memory_order_relaxed))
		return -EAGAIN;
	if (len > tb_page_max_payload(r->subbuf_size)) {
		COUNT_REFUSED(ring, too_big);
		return -E2BIG;
	}
	src = rec_src_data(data, len);
	return append(ring, &src);
}

/*
 * Everything but the fast case: stamps, page switches, refusals, the
 * fallback.  The write was counted as begun (ring_internal.h): a refusal
 * undoes that, so it is not taken for a write in flight (C2, inflight.c).
 */
int tb__append_slow(struct tb_ring *ring, const void *data, uint32_t len)
{
	int rc = append_data(ring, data, len);

	if (rc)
		tb__count_undo(ring);
	return rc;
}

int tb__append_long(struct tb_ring *ring, const void *data, uint32_t len)
{
	struct rec_src src = {data, len, tbf_long_record_size(len), 0};
	int rc = -EAGAIN;

	tb__count_begun(ring);
	/* relaxed: as in append_data */
	if (!atomic_load_explicit(&ring->r->record_disabled, memory_order_relaxed))
		rc = append(ring, &src);
	if (rc)
		tb__count_undo(ring);
	return rc;
}

/* ------------------------------------------------------------ reserve/commit */

/*
 * A thread's reservation scratch: TB_MAX_NEST levels of TB_RESERVE_MAX
 * bytes, 20 KiB.  Not in TLS: a library whose TLS is that big cannot be
 * read with the initial-exec model (tb_write's count, inflight.c) and
 * still be loaded by dlopen, which has only a small surplus of static TLS.
 * So it is anonymous memory mapped by the thread's first tb_reserve (or by
 * tb_ring_thread_init) and unmapped at the thread's exit (inflight.c's key
 * destructor); the TLS keeps a pointer.  mmap and munmap are
 * async-signal-safe.  A signal handler's first reserve may interrupt the
 * thread's own between its mmap and the install: both map, one installs
 * with a compare-and-swap on the pointer and the other unmaps its copy.
 * Fresh anonymous memory is zero: depth 0.
 */
struct tb_scratch {
	unsigned depth;
	uint32_t len[TB_MAX_NEST];
	_Alignas(8) uint8_t scratch[TB_MAX_NEST][TB_RESERVE_MAX];
};

static __thread __attribute__((tls_model("initial-exec"))) struct tb_scratch *tls;

/* The thread's scratch, mapped now if it is not yet; NULL: mmap failed. */
static struct tb_scratch *thread_scratch(void)
{
	struct tb_scratch *s = __atomic_load_n(&tls, __ATOMIC_RELAXED), *expect = NULL;
	void *m;

	if (s)
		return s;
	m = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	TB_CRASH_C(TB_CP_SCRATCH_MAPPED);
	/*
	 * relaxed: only this thread and its signal handlers read the pointer,
	 * in program order; the CAS is one instruction, so a handler that
	 * installed its own in between makes ours the loser.
	 */
	if (!__atomic_compare_exchange_n(&tls, &expect, m, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		munmap(m, sizeof(*s));
		return expect;
	}
	tb__thread_exit_arm(); /* unmapped at this thread's exit */
	return m;
}

void tb__scratch_release(void)
{
	struct tb_scratch *s = __atomic_exchange_n(&tls, NULL, __ATOMIC_RELAXED); /* this thread only */

	if (s)
		munmap(s, sizeof(*s));
}

void tb_ring_thread_init(void)
{
	tb__count_thread_init(); /* first: makes the key whose destructor unmaps the scratch */
	(void)thread_scratch();
}

void *tb_reserve(struct tb_ring *ring, uint32_t len)
{
	struct tb_scratch *s = thread_scratch();
	unsigned depth;

	if (!s) {
		COUNT_REFUSED(ring, nested); /* no scratch to give: as if no level were free */
		return NULL;
	}
	depth = s->depth;
	if (depth >= TB_MAX_NEST) {
		COUNT_REFUSED(ring, nested);
		return NULL;
	}
	if (len > TB_RESERVE_MAX || len > tb_page_max_payload(ring->r->subbuf_size)) {
		COUNT_REFUSED(ring, too_big);
		return NULL;
	}
	/*
	 * Claim the level before touching its slot: a signal handler that
	 * reserves from here on takes depth + 1 (and restores the count), so
	 * it can never overwrite this level's length or scratch.
	 */
	/* a reservation is a write begun: in flight until tb_commit publishes it or tb_discard drops it */
	tb__count_begun(ring);
	s->depth = depth + 1;
	atomic_signal_fence(memory_order_seq_cst);
	s->len[depth] = len;
	return s->scratch[depth];
}

int tb_commit(struct tb_ring *ring, void *event)
{
	struct tb_scratch *s = __atomic_load_n(&tls, __ATOMIC_RELAXED); /* this thread's: see thread_scratch */
	unsigned depth = s ? s->depth : 0;
	int rc;

	if (depth == 0 || event != s->scratch[depth - 1])
		return -EINVAL;
	rc = tb__write_counted(ring, event, s->len[depth - 1]); /* counted by tb_reserve */
	/* The scratch stays ours until the copy is published. */
	atomic_signal_fence(memory_order_seq_cst);
	s->depth = depth - 1;
	return rc;
}

void tb_discard(struct tb_ring *ring, void *event)
{
	struct tb_scratch *s = __atomic_load_n(&tls, __ATOMIC_RELAXED); /* this thread's: see thread_scratch */

	if (event && s && s->depth && event == s->scratch[s->depth - 1]) {
		tb__count_undo(ring);
		s->depth--;
	}
}
