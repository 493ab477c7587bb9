// SPDX-License-Identifier: MIT
/*
 * hist_feed.c - records into the hist: the compiled keys and values are
 * read straight from each record (no text, no name lookups), the compound
 * key is built the way the kernel's event_hist_trigger() builds it
 * (numbers as sign-extended u64 slots, strings copied into zeroed slots
 * and cut one byte short of the slot), and the entry's hitcount and sums
 * are updated.  tb_hist_add_capture() walks every CPU's sub-buffers with
 * the page cursor (tracebuf/page.h) straight from the capture's pages.
 *
 * Not through pagework (src/print/pagework.c): its walk writes down a
 * step for every record so a merge by time can replay them, and a hist
 * needs no order across CPUs - measured with bench/bench_hist.sh, that
 * record-and-replay cost 13-40% more CPU time than this walk, and a
 * worker thread decoding pages beside the table did not make up for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hist_internal.h"
#include "load_int.h"
#include "tracebuf/filter.h"
#include "tracebuf/page.h"
#include "decode/tsc2nsec.h"

#define BAD_RECORDS_TOLD 10 /* damaged records reported one by one, then only counted (totals) */

int tb_hist_new(const char *spec, const struct tb_format *fmt, const char *system, struct tb_schema *schema,
		struct tb_hist **out, struct tb_hist_error *err)
{
	struct tb_hist *h;
	int rc;

	if (!spec || !fmt || !system || !out || !err)
		return -EINVAL;
	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->system, sizeof(h->system), "%s", system);
	snprintf(h->event, sizeof(h->event), "%s", fmt->name);
	h->id = fmt->id;
	h->schema = schema;
	h->ns_clock = true;
	rc = hist_parse(h, spec, fmt, err);
	if (rc == 0)
		rc = hist_table_init(&h->table, h->key_size, h->nvals);
	if (rc == 0 && !(h->key_buf = calloc(1, h->key_size)))
		rc = -ENOMEM;
	if (rc < 0) {
		tb_hist_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void tb_hist_free(struct tb_hist *h)
{
	if (!h)
		return;
	hist_table_free(&h->table);
	tb_filter_free(h->filter);
	free(h->filter_text);
	free(h->key_buf);
	free(h->marks);
	free(h);
}

void tb_hist_skip_seen(struct tb_hist *h, int skip)
{
	if (h)
		h->skip_seen = skip != 0;
}

void tb_hist_count_until(struct tb_hist *h, uint64_t ts)
{
	if (h)
		h->until = ts;
}

void tb_hist_set_schema(struct tb_hist *h, struct tb_schema *schema)
{
	if (h && schema)
		h->schema = schema;
}

void tb_hist_set_tsc2nsec(struct tb_hist *h, uint32_t mult, uint32_t shift)
{
	if (!h || shift > 63)
		return;
	h->tsc_mult = mult;
	h->tsc_shift = shift;
	if (mult)
		h->ns_clock = true;
}

void tb_hist_set_ns_clock(struct tb_hist *h, int ns_clock)
{
	if (h)
		h->ns_clock = ns_clock != 0;
}

/* ilog2(roundup_pow_of_two(v)) as the kernel computes it on x86_64: 0 for 0, 1 and above 2^63. */
static inline uint64_t kernel_log2(uint64_t v)
{
	unsigned bits;

	if (v <= 1)
		return 0;
	bits = 64u - (unsigned)__builtin_clzll(v - 1);
	return bits == 64 ? 0 : bits;
}

static inline uint64_t field_number(const struct tb_hist *h, const struct hist_field *f, const uint8_t *rec,
				    uint64_t ts, int cpu)
{
	uint64_t v;

	switch (f->src) {
	case HIST_SRC_TIMESTAMP:
		ts = tsc2nsec(ts, h->tsc_mult, h->tsc_shift); /* as the trace's TSC2NSEC says, if any */
		/* ns2usecs() rounds to the nearest microsecond; only for a nanosecond clock. */
		v = h->ts_usecs && h->ns_clock ? (ts + 500) / 1000 : ts;
		break;
	case HIST_SRC_CPU:
		v = (uint64_t)cpu;
		break;
	default:
		v = load_int(rec + f->offset, f->size, f->is_signed);
	}
	if (f->mod == HIST_MOD_LOG2)
		v = kernel_log2(v);
	else if (f->mod == HIST_MOD_BUCKETS)
		v = v / f->buckets * f->buckets;
	return v;
}

/* The string key f into its slot (zeroed first); false when the record's locator points outside it. */
static inline bool put_string(const struct hist_field *f, uint8_t *slot, const uint8_t *rec, uint32_t len)
{
	uint32_t start = f->offset, n = f->size;

	if (f->str != HIST_STR_STATIC) {
		uint32_t loc;
		memcpy(&loc, rec + f->offset, 4);
		start = (loc & 0xffff) + (f->str == HIST_STR_REL ? f->offset + 4 : 0);
		n = loc >> 16;
		if (start > len || n > len - start)
			return false;
	}
	memset(slot, 0, f->key_size);
	if (n > f->key_size - 1)
		n = f->key_size - 1; /* always NUL-terminated, as the kernel keeps it */
	for (uint32_t i = 0; i < n && rec[start + i]; i++)
		slot[i] = rec[start + i];
	return true;
}

/* Whether the filter keeps the record; the comm it may ask for is the writer's, from saved_cmdlines. */
static bool filter_keeps(const struct tb_hist *h, const uint8_t *rec, uint32_t len, int cpu)
{
	struct tb_filter_env env = {.cpu = cpu, .comm = NULL};
	char comm[TB_NAME_MAX];

	if (h->filter_uses & TB_FILTER_USES_COMM) {
		int32_t pid = 0;
		size_t n;
		const char *name;
		if (len >= 8)
			memcpy(&pid, rec + 4, 4);
		name = tb_schema_comm(h->schema, pid, &n);
		snprintf(comm, sizeof(comm), "%.*s", (int)n, name);
		env.comm = comm;
	}
	return tb_filter_match(h->filter, rec, len, &env);
}

bool hist_build_key(const struct tb_hist *h, uint8_t *key, const uint8_t *rec, uint32_t len, uint64_t ts, int cpu)
{
	for (unsigned i = 0; i < h->nkeys; i++) {
		const struct hist_field *f = &h->keys[i];
		if (f->str == HIST_STR_NONE) {
			uint64_t v = field_number(h, f, rec, ts, cpu);
			memcpy(key + f->key_offset, &v, 8);
		} else if (!put_string(f, key + f->key_offset, rec, len)) {
			return false;
		}
	}
	return true;
}

uint64_t hist_value(const struct tb_hist *h, unsigned i, const uint8_t *rec, uint64_t ts, int cpu)
{
	return field_number(h, &h->vals[i], rec, ts, cpu);
}

int tb_hist_add_record(struct tb_hist *h, const void *data, uint32_t len, uint64_t ts, int cpu)
{
	const uint8_t *rec = data;
	uint64_t *e;

	if (!h || !data)
		return -EINVAL;
	if (len < h->min_size)
		return -EINVAL;
	if (h->filter && !filter_keeps(h, rec, len, cpu)) {
		h->filtered++;
		return 0;
	}
	if (!hist_build_key(h, h->key_buf, rec, len, ts, cpu))
		return -EINVAL;
	e = hist_table_get(&h->table, h->key_buf, ts);
	if (!e)
		return -ENOMEM;
	e[HIST_E_HITCOUNT]++;
	for (unsigned i = 0; i < h->nvals; i++)
		e[HIST_E_SUMS + i] += hist_value(h, i, rec, ts, cpu);
	return 0;
}

struct feed {
	struct tb_hist *h;	  /* the table this feed adds to */
	struct tb_capture *c;
	struct tb_hist_totals *t; /* this feed's own counts */
	int cpu;
	struct hist_mark *mark;	  /* the CPU's, when h->skip_seen */
	pthread_mutex_t *lock;	  /* threads: held for the capture, problems and *bad */
	uint64_t *bad;		  /* damaged records of the event so far, all feeds together */
};

/* A problem through the capture, one thread at a time when there are several. */
static void feed_problem(struct feed *f, const char *file, uint64_t offset, const char *what, const char *why)
{
	if (f->lock)
		pthread_mutex_lock(f->lock);
	tb_capture_problem(f->c, file, offset, "%s%s", what, why);
	if (f->lock)
		pthread_mutex_unlock(f->lock);
}

/* A record of the event the hist could not read: counted, and the first BAD_RECORDS_TOLD reported. */
static void feed_bad_record(struct feed *f, const struct tb_capture_page *pg, const struct tb_record *rec)
{
	const struct tb_hist *h = f->h;

	if (f->lock)
		pthread_mutex_lock(f->lock);
	if ((*f->bad)++ < BAD_RECORDS_TOLD)
		tb_capture_problem(f->c, pg->file, pg->file_offset + rec->offset,
				  "%s:%s record of %u bytes does not hold the fields the hist reads "
				  "(needs %u, or a string points outside it); left out",
				  h->system, h->event, rec->len, h->min_size);
	if (f->lock)
		pthread_mutex_unlock(f->lock);
}

/* The CPU's next page (tb_capture_next_page), one thread at a time in the capture. */
static int feed_next_page(struct feed *f, struct tb_capture_page *pg)
{
	int rc;

	if (f->lock)
		pthread_mutex_lock(f->lock);
	rc = tb_capture_next_page(f->c, f->cpu, pg);
	if (f->lock)
		pthread_mutex_unlock(f->lock);
	return rc;
}

/*
 * Whether a record at ts was counted by an earlier pass over the same
 * CPU's pages (skip_seen): a CPU's records come in time order, so the
 * mark is the time of the last one counted and how many counted at that
 * very time; the first that many at it are the ones seen.
 */
static bool seen_before(struct hist_mark *m, uint64_t ts)
{
	if (!m->valid || ts > m->ts) {
		*m = (struct hist_mark){.valid = true, .ts = ts, .at_ts = 0, .skip = 0};
	} else if (ts < m->ts) {
		return true;
	} else if (m->skip) {
		m->skip--;
		return true;
	}
	m->at_ts++;
	return false;
}

/* A new pass: the marks of the CPUs' last records say which are seen (skip_seen). */
static int start_marks(struct tb_hist *h, int slots)
{
	if ((size_t)slots > h->nmarks) {
		struct hist_mark *grown = realloc(h->marks, (size_t)slots * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + h->nmarks, 0, ((size_t)slots - h->nmarks) * sizeof(*grown));
		h->marks = grown;
		h->nmarks = (size_t)slots;
	}
	for (size_t i = 0; i < h->nmarks; i++)
		h->marks[i].skip = h->marks[i].at_ts;
	return 0;
}

/* One sub-buffer: every record of the hist's event added. */
static int add_page(struct feed *f, const struct tb_capture_page *pg)
{
	struct tb_hist *h = f->h;
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (tb_page_cursor_init(&cur, pg->data, pg->size) < 0) {
		feed_problem(f, pg->file, pg->file_offset + cur.err.offset, "bad sub-buffer: ", cur.err.reason);
		f->t->bad_pages++;
		return 0;
	}
	f->t->lost_pages += cur.hdr.lost;
	while ((rc = tb_page_next_data(&cur, &rec)) > 0) {
		uint16_t type;

		/*
		 * Past the cut: neither counted nor marked seen, so that the next
		 * pass, whose cut is later, counts it (a CPU's records come in
		 * time order: the rest of the CPU's pages are past it too).
		 */
		if (f->mark && h->until && rec.ts > h->until)
			continue;
		if (f->mark && seen_before(f->mark, rec.ts))
			continue;
		f->t->records++;
		if (rec.len < 2)
			continue;
		memcpy(&type, rec.data, 2);
		if (type != h->id)
			continue;
		f->t->matched++;
		rc = tb_hist_add_record(h, rec.data, rec.len, rec.ts, tb_capture_slot_cpu(f->c, f->cpu));
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			feed_bad_record(f, pg, &rec);
	}
	if (rc < 0) {
		feed_problem(f, pg->file, pg->file_offset + cur.err.offset, "bad record: ", cur.err.reason);
		f->t->bad_pages++;
	}
	return 0;
}

/* CPU cpu's pages into f->h. */
static int feed_cpu(struct feed *f)
{
	struct tb_capture_page pg;
	int rc;

	while ((rc = feed_next_page(f, &pg)) > 0)
		if ((rc = add_page(f, &pg)) < 0)
			return rc;
	return 0;
}

/* Every CPU's pages, CPU after CPU, in this thread. */
static int feed_cpus(struct tb_hist *h, struct tb_capture *c, int slots, struct tb_hist_totals *t)
{
	uint64_t bad = t->bad_records;
	int rc = 0;

	for (int cpu = 0; rc == 0 && cpu < slots; cpu++) {
		struct feed f = {h, c, t, cpu, h->skip_seen ? &h->marks[cpu] : NULL, NULL, &bad};
		if (tb_capture_has_cpu(c, cpu))
			rc = feed_cpu(&f);
	}
	t->bad_records = bad;
	return rc;
}

/* ---------------------------------------------------------- threads */

/*
 * With threads, each takes whole CPUs (the next not taken) and counts
 * them into a table of its own, merged into the hist's at the end: the
 * CPUs' records need no order among them, and a table with one writer
 * needs no lock.  What the threads share - the capture (its page sources,
 * its problem count and diag callback) and the count of damaged records -
 * is used under one mutex; a page a thread got stays its own until it
 * asks for the next page of the same CPU (capture.h), which no other
 * thread does.
 */
struct feed_pool {
	struct tb_hist *h;
	struct tb_capture *c;
	int slots;
	atomic_int next_cpu; /* the next CPU slot to take */
	pthread_mutex_t lock;
	uint64_t bad;	     /* under lock */
};

struct feed_part {
	struct feed_pool *pool;
	struct tb_hist *part; /* this thread's table (and key buffer); the rest is the hist's */
	struct tb_hist_totals t;
	int rc;
	pthread_t thread;
};

static void *feed_thread(void *arg)
{
	struct feed_part *w = arg;
	struct feed_pool *p = w->pool;
	int cpu;

	/* relaxed: the counter only hands out distinct slots; the capture is shared under the lock */
	while (w->rc == 0 && (cpu = atomic_fetch_add_explicit(&p->next_cpu, 1, memory_order_relaxed)) < p->slots) {
		struct feed f = {w->part, p->c, &w->t, cpu, NULL, &p->lock, &p->bad};
		if (tb_capture_has_cpu(p->c, cpu))
			w->rc = feed_cpu(&f);
	}
	return NULL;
}

/* A table of h's shape for one thread: the spec, filter and schema stay h's (read only). */
static struct tb_hist *new_part(const struct tb_hist *h)
{
	struct tb_hist *part = malloc(sizeof(*part));

	if (!part)
		return NULL;
	*part = *h;
	part->marks = NULL;
	part->nmarks = 0;
	part->filtered = 0;
	part->key_buf = calloc(1, h->key_size);
	if (!part->key_buf || hist_table_init(&part->table, h->key_size, h->nvals) < 0) {
		free(part->key_buf);
		free(part);
		return NULL;
	}
	return part;
}

static void free_part(struct tb_hist *part)
{
	if (!part)
		return;
	hist_table_free(&part->table);
	free(part->key_buf);
	free(part);
}

/* A thread's table added into h's: hitcounts and sums added, the earliest first sighting kept. */
static int merge_part(struct tb_hist *h, const struct tb_hist *part)
{
	const struct hist_table *from = &part->table;

	for (size_t i = 0; i < from->count; i++) {
		const uint64_t *e = hist_table_entry(from, i);
		uint64_t *to = hist_table_get(&h->table, hist_entry_key(from, e), e[HIST_E_FIRST_TS]);
		if (!to)
			return -ENOMEM;
		to[HIST_E_HITCOUNT] += e[HIST_E_HITCOUNT];
		for (uint32_t v = 0; v < from->nvals; v++)
			to[HIST_E_SUMS + v] += e[HIST_E_SUMS + v];
	}
	h->filtered += part->filtered;
	return 0;
}

static void add_totals(struct tb_hist_totals *t, const struct tb_hist_totals *x)
{
	t->records += x->records;
	t->matched += x->matched;
	t->bad_pages += x->bad_pages;
	t->lost_pages += x->lost_pages;
}

/* The CPUs' pages counted by nthreads threads (this one waits): 0, -ENOMEM, or -EAGAIN when none started. */
static int feed_threaded(struct tb_hist *h, struct tb_capture *c, int slots, int nthreads,
			 struct tb_hist_totals *t)
{
	struct feed_pool pool = {.h = h, .c = c, .slots = slots, .bad = t->bad_records};
	struct feed_part *w = calloc((size_t)nthreads, sizeof(*w));
	int started = 0, rc = 0;

	if (!w)
		return -ENOMEM;
	atomic_init(&pool.next_cpu, 0);
	pthread_mutex_init(&pool.lock, NULL);
	for (; started < nthreads; started++) {
		w[started].pool = &pool;
		if (!(w[started].part = new_part(h))) {
			rc = -ENOMEM;
			break;
		}
		if (pthread_create(&w[started].thread, NULL, feed_thread, &w[started]) != 0) {
			free_part(w[started].part);
			break;
		}
	}
	for (int i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		if (rc == 0 && (rc = w[i].rc) == 0)
			rc = merge_part(h, w[i].part);
		add_totals(t, &w[i].t);
		free_part(w[i].part);
	}
	t->bad_records = pool.bad;
	pthread_mutex_destroy(&pool.lock);
	free(w);
	return rc == 0 && started == 0 ? -EAGAIN : rc;
}

/*
 * Threads to count with: TB_HIST_THREADS when set, else one per online
 * CPU up to 4, never more than the CPUs with pages; 1 (this thread alone)
 * for a live instance (read as it runs dry), skip_seen (its marks follow
 * one pass) and a filter that asks for comms (the schema's comm lookup is
 * not made for threads).
 */
static int feed_threads(const struct tb_hist *h, struct tb_capture *c, int slots)
{
	const char *env = getenv("TB_HIST_THREADS");
	long n = env && *env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
	int with_pages = 0;

	if (tb_capture_is_live(c) || h->skip_seen || (h->filter_uses & TB_FILTER_USES_COMM))
		return 1;
	for (int cpu = 0; cpu < slots; cpu++)
		with_pages += tb_capture_has_cpu(c, cpu);
	if (n > 4 && !(env && *env))
		n = 4;
	if (n > with_pages)
		n = with_pages;
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

int tb_hist_add_capture(struct tb_hist *h, struct tb_capture *c, struct tb_hist_totals *totals)
{
	struct tb_hist_totals local = {0}, *t = totals ? totals : &local;
	uint64_t bad_before = t->bad_records;
	int slots, nthreads, rc;

	if (!h || !c)
		return -EINVAL;
	if (!h->tsc_mult) { /* the capture's own TSC2NSEC, where the caller named none */
		uint32_t mult, shift;
		if (tb_capture_tsc2nsec(c, &mult, &shift))
			tb_hist_set_tsc2nsec(h, mult, shift);
	}
	slots = tb_capture_cpu_slots(c);
	if (h->skip_seen && (rc = start_marks(h, slots)) < 0)
		return rc;
	nthreads = feed_threads(h, c, slots);
	rc = nthreads > 1 ? feed_threaded(h, c, slots, nthreads, t) : -EAGAIN;
	if (rc == -EAGAIN) /* one thread wanted, or none could be started */
		rc = feed_cpus(h, c, slots, t);
	h->bad_records += t->bad_records - bad_before;
	return rc;
}
