/*
 * Accounting torture: more writers than CPUs (so they are preempted and
 * migrate between computing a record and publishing it), signal handlers
 * writing nested reservations four deep on top of them, a consuming reader
 * running all the while.  Every event carries its writer, its sequence
 * number and a checksum.  Afterwards the ring is drained and the books must
 * balance exactly:
 *
 *   - every committed event is read exactly once or counted lost;
 *   - every refused write is counted, in the counter its error names;
 *   - no duplicates, no corrupt payloads;
 *   - each writer's sequence strictly increases in merged read order (while
 *     writers run, a merged read can only order what is already published,
 *     so there the check is per writer and CPU; the final drain, with the
 *     writers stopped, checks the merged order across CPUs);
 *   - per-CPU timestamps never decrease;
 *   - the LOST markers add up, per CPU, to the events the CPU never delivered;
 *   - overwrite mode refuses nothing, however many writers share a CPU
 *     (but blobs that would overwrite one still being filled);
 *   - with room for everything, nothing is lost or refused.
 *
 * Some events are blobs (tracebuf/blob.h), up to 12 KiB, written with
 * tb_blob_write or reserved, filled and committed (in signal handlers too,
 * with the next handler raised while the reservation is open).  Every
 * committed blob is read whole (the same checksum), reported overwritten
 * (TB_READ_BLOB_LOST), or inside a LOST count with its reference: the
 * committed events never read whole number exactly the LOST counts plus the
 * overwritten reports, and the blob counters agree with what the reader saw.
 * Producer/consumer mode never overwrites a blob.  A "blobs:" line sums up.
 *
 * TB_TORTURE_SECONDS scales each scenario; TB_TORTURE_SIGNALS=0 leaves the
 * signal writers out (the ThreadSanitizer build).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cpu.h"
#include "lib/tap.h"
#include "tracebuf/blob.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

#define MAX_THREADS 8
#define SIG_DEPTH 4                       /* nested signal writers per thread */
#define MAX_WRITERS (MAX_THREADS * (1 + SIG_DEPTH))
#define MAX_PAYLOAD 240
#define MAX_BLOB (12 * 1024)

enum pin { PIN_NONE, PIN_TWO_PER_CPU, PIN_MIGRATE };

struct scenario {
	const char *name;
	size_t kb;
	int overwrite;
	int threads;
	enum pin pin;
	int signals;
	double seconds;
	uint32_t max_per_writer; /* 0: until time runs out */
	int expect_no_loss;
	int no_rseq; /* the try-lock fallback */
	size_t blob_kb;     /* per CPU */
	uint32_t blob_every; /* about one event in blob_every is a blob */
	uint32_t blob_max;   /* bytes, at most MAX_BLOB */
};

struct payload {
	uint32_t writer;
	uint32_t seq;
	uint32_t len;
	uint32_t sum;
	uint8_t fill[MAX_BLOB - 16];
};

/* Per-writer truth kept by the writers themselves. */
struct writer_log {
	_Atomic uint32_t next_seq;
	uint8_t *committed; /* 1 per seq that was committed */
	uint32_t cap;
};

static struct tb_ring *ring;
static struct writer_log logs[MAX_WRITERS];
static _Atomic int stop_writers, stop_reader;
static _Atomic uint64_t refused_by_rc[5]; /* dropped, too_big, nested, busy, blob_full */
static int nthreads_cur, signals_on;
static uint32_t cap_per_writer, blob_every, blob_max;

/* Whether event seq of writer is a blob: a hash, so writers and readers agree. */
static int is_blob(uint32_t writer, uint32_t seq)
{
	uint32_t h = (writer + 1) * 0x9e3779b1u + seq * 0x85ebca6bu;

	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return blob_every && h % blob_every == 0;
}

static uint32_t checksum(uint32_t writer, uint32_t seq, uint32_t len, const uint8_t *fill)
{
	uint32_t h = 2166136261u ^ writer;
	h = (h ^ seq) * 16777619u;
	h = (h ^ len) * 16777619u;
	for (uint32_t i = 0; i + 16 < len; i++)
		h = (h ^ fill[i]) * 16777619u;
	return h;
}

static uint32_t make_payload(struct payload *p, uint32_t writer, uint32_t seq)
{
	uint32_t max = is_blob(writer, seq) ? blob_max : MAX_PAYLOAD;
	uint32_t len = 16 + (seq * 2654435761u >> 8) % (max - 16);

	p->writer = writer;
	p->seq = seq;
	p->len = len;
	for (uint32_t i = 0; i + 16 < len; i++)
		p->fill[i] = (uint8_t)(writer * 31 + seq + i);
	p->sum = checksum(writer, seq, len, p->fill);
	return len;
}

static void note_refusal(int rc)
{
	int idx = rc == -ENOSPC ? 0 : rc == -E2BIG ? 1 : rc == -EBUSY ? 3 : rc == -ENOBUFS ? 4 : -1;
	if (idx >= 0)
		atomic_fetch_add(&refused_by_rc[idx], 1);
	else if (rc < 0)
		abort(); /* an error the ring does not document */
}

/* Take the next sequence number of a writer; UINT32_MAX when it is full. */
static uint32_t next_seq(uint32_t writer)
{
	uint32_t s = atomic_load_explicit(&logs[writer].next_seq, memory_order_relaxed);
	if (s >= logs[writer].cap)
		return UINT32_MAX;
	atomic_store_explicit(&logs[writer].next_seq, s + 1, memory_order_relaxed);
	return s;
}

/* One blob: tb_blob_write, or reserve + fill + commit.  0 or the refusal. */
static int write_blob(const struct payload *p, uint32_t len, int use_reserve)
{
	struct tb_blob b;
	void *slot;

	if (!use_reserve)
		return tb_blob_write(ring, p, len);
	slot = tb_blob_reserve(ring, len, &b);
	if (!slot)
		return b.error;
	memcpy(slot, p, len);
	return tb_blob_commit(ring, &b);
}

/* One event: tb_write, or reserve + fill + commit; a blob either way. */
static void write_event(uint32_t writer, int use_reserve)
{
	struct payload p;
	uint32_t seq = next_seq(writer), len;
	int rc;

	if (seq == UINT32_MAX)
		return;
	len = make_payload(&p, writer, seq);
	if (is_blob(writer, seq))
		rc = write_blob(&p, len, use_reserve);
	else if (use_reserve) {
		void *slot = tb_reserve(ring, len);
		if (!slot) {
			atomic_fetch_add(&refused_by_rc[2], 1);
			return;
		}
		memcpy(slot, &p, len);
		rc = tb_commit(ring, slot);
	} else
		rc = tb_write(ring, &p, len);
	if (rc == 0)
		logs[writer].committed[seq] = 1;
	else
		note_refusal(rc);
}

/* ------------------------------------------------------------ signal writers */

static __thread int thread_index = -1;
static __thread int sig_depth;

/* Reserve at each level, raise the next level before committing: nesting SIG_DEPTH deep. */
static void on_signal(int sig)
{
	int saved = errno, d = sig_depth++;

	(void)sig;
	if (thread_index >= 0 && d < SIG_DEPTH && !atomic_load(&stop_writers)) {
		uint32_t writer = (uint32_t)(nthreads_cur + thread_index * SIG_DEPTH + d);
		uint32_t seq = next_seq(writer);
		if (seq != UINT32_MAX && is_blob(writer, seq)) {
			/* a blob reservation stays open while the next handler writes */
			struct payload p;
			struct tb_blob b;
			uint32_t len = make_payload(&p, writer, seq);
			if (tb_blob_reserve(ring, len, &b)) {
				memcpy(b.data, &p, len);
				if (d + 1 < SIG_DEPTH)
					raise(SIGUSR1);
				int rc = tb_blob_commit(ring, &b);
				if (rc == 0)
					logs[writer].committed[seq] = 1;
				else
					note_refusal(rc);
			} else
				note_refusal(b.error);
		} else if (seq != UINT32_MAX) {
			struct payload p;
			uint32_t len = make_payload(&p, writer, seq);
			void *slot = tb_reserve(ring, len);
			if (slot) {
				memcpy(slot, &p, len);
				if (d + 1 < SIG_DEPTH)
					raise(SIGUSR1);
				int rc = tb_commit(ring, slot);
				if (rc == 0)
					logs[writer].committed[seq] = 1;
				else
					note_refusal(rc);
			} else
				atomic_fetch_add(&refused_by_rc[2], 1);
		}
	}
	sig_depth--;
	errno = saved;
}

static void setup_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NODEFER | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
}

/* ------------------------------------------------------------ writer threads */

/* CPU cpu, counted round the online ones. */
static void pin_to(int cpu)
{
	pin_cpu(cpu % (int)sysconf(_SC_NPROCESSORS_ONLN));
}

struct writer_arg {
	int index;
	enum pin pin;
};

static void *writer_main(void *argp)
{
	struct writer_arg *a = argp;
	uint32_t writer = (uint32_t)a->index, n = 0;

	thread_index = a->index;
	tb_ring_thread_init();
	if (a->pin == PIN_TWO_PER_CPU)
		pin_to(a->index / 2);
	while (!atomic_load_explicit(&stop_writers, memory_order_relaxed)) {
		if (a->pin == PIN_MIGRATE && (n & 1023) == 0)
			pin_to((int)(n >> 10) + a->index);
		write_event(writer, n % 3 == 0);
		if (atomic_load_explicit(&logs[writer].next_seq, memory_order_relaxed) >= logs[writer].cap)
			break;
		n++;
	}
	return NULL;
}

/* Signals arrive from here, at random points of the writers' fast paths. */
struct kicker_arg {
	pthread_t *threads;
	int n;
};

static void *kicker_main(void *argp)
{
	struct kicker_arg *k = argp;
	struct timespec gap = {0, 20000};
	unsigned i = 0;

	while (!atomic_load(&stop_writers)) {
		pthread_kill(k->threads[i++ % (unsigned)k->n], SIGUSR1);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/* ------------------------------------------------------------ the reader */

struct tally {
	uint8_t *seen[MAX_WRITERS];
	uint32_t last_seq[MAX_WRITERS];          /* final drain: merged order */
	uint32_t last_seq_cpu[MAX_WRITERS][64]; /* while writers run: per CPU */
	int draining;
	uint64_t last_ts[512];
	uint64_t lost_by_cpu[512], read_by_cpu[512];
	uint64_t read, lost, duplicates, corrupt, order_violations, ts_back, unknown_writer;
	uint64_t blob_intact, blob_overwritten, blob_torn;
};

static struct tally tl;
static uint64_t total_committed, total_read, total_lost, total_refused, total_unaccounted,
	total_duplicates, total_corrupt;
static uint64_t total_blobs, total_blob_intact, total_blob_overwritten, total_blob_with_page, total_blob_full,
	total_blob_torn;

static void account(const struct tb_read_event *ev)
{
	const struct payload *p = ev->data;

	if (ev->kind == TB_READ_LOST) {
		tl.lost += ev->lost;
		tl.lost_by_cpu[ev->cpu] += ev->lost;
		return;
	}
	tl.read++;
	tl.read_by_cpu[ev->cpu]++;
	if (ev->ts < tl.last_ts[ev->cpu])
		tl.ts_back++;
	tl.last_ts[ev->cpu] = ev->ts;
	if (ev->kind == TB_READ_BLOB_LOST) {
		tl.blob_overwritten++; /* who wrote it is in the bytes that are gone */
		return;
	}
	int blob = ev->kind == TB_READ_BLOB;
	if (ev->len < 16 || p->writer >= MAX_WRITERS || !tl.seen[p->writer] || p->seq >= logs[p->writer].cap) {
		tl.unknown_writer++;
		tl.blob_torn += blob;
		return;
	}
	/* a blob comes back with its exact length, a record rounded up to 4 */
	if (p->len > ev->len || p->len < 16 || (blob ? p->len : (p->len + 3) / 4 * 4) != ev->len ||
	    is_blob(p->writer, p->seq) != blob || checksum(p->writer, p->seq, p->len, p->fill) != p->sum) {
		if (tl.corrupt++ < 3)
			diag("corrupt: cpu %u seqno %llu kind %d len %u: writer %u seq %u len %u", ev->cpu,
			     (unsigned long long)ev->seqno, ev->kind, ev->len, p->writer, p->seq, p->len);
		tl.blob_torn += blob;
		return;
	}
	tl.blob_intact += blob;
	if (tl.seen[p->writer][p->seq]++)
		tl.duplicates++;
	uint32_t *last = tl.draining ? &tl.last_seq[p->writer] : &tl.last_seq_cpu[p->writer][ev->cpu % 64];
	if (*last != UINT32_MAX && p->seq <= *last)
		tl.order_violations++;
	*last = p->seq;
}

static void *reader_main(void *arg)
{
	struct tb_read_event ev;
	(void)arg;

	while (!atomic_load(&stop_reader)) {
		int rc = tb_consume_merged(ring, &ev);
		if (rc == 1)
			account(&ev);
		else if (rc == 0)
			sched_yield();
		else
			abort();
	}
	tl.draining = 1; /* writers have stopped: the merged order is now exact */
	while (tb_consume_merged(ring, &ev) == 1)
		account(&ev);
	return NULL;
}

/* ------------------------------------------------------------ a scenario */

static double env_seconds(void)
{
	const char *s = getenv("TB_TORTURE_SECONDS");
	return s ? atof(s) : 0;
}

/*
 * A watchdog: a scenario that overruns its time many times over has a
 * writer or the reader stuck (a livelock is how a broken section shows),
 * and must fail with a message rather than hang make test.
 */
static const char *running_scenario = "";

static void watchdog(int sig)
{
	static const char msg[] = "Bail out! a scenario is stuck: ";
	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0 ||
	    write(1, running_scenario, strlen(running_scenario)) < 0 || write(1, "\n", 1) < 0)
		_exit(2);
	_exit(1);
}

static void run(const struct scenario *sc)
{
	pthread_t threads[MAX_THREADS], reader, kicker;
	struct writer_arg args[MAX_THREADS];
	struct kicker_arg kick = {threads, sc->threads};
	struct tb_ring_opts o;
	double secs = env_seconds() > 0 ? env_seconds() : sc->seconds;

	running_scenario = sc->name;
	signal(SIGALRM, watchdog);
	alarm((unsigned)(secs * 10) + 120);
	int nwriters = sc->threads * (1 + SIG_DEPTH);
	uint64_t committed = 0, unaccounted = 0, refused_counters = 0, overrun = 0, written = 0;
	uint64_t blobs = 0, unseen = 0, unseen_blobs = 0, blob_written = 0, blob_read = 0, blob_lost = 0, blob_full = 0;
	uint64_t per_cpu_mismatch = 0, refused_rc;
	unsigned ncpus;

	memset(&tl, 0, sizeof(tl));
	memset(refused_by_rc, 0, sizeof(refused_by_rc));
	atomic_store(&stop_writers, 0);
	atomic_store(&stop_reader, 0);
	nthreads_cur = sc->threads;
	signals_on = sc->signals;
	cap_per_writer = sc->max_per_writer ? sc->max_per_writer : 1u << 24;
	for (int w = 0; w < nwriters; w++) {
		logs[w].cap = cap_per_writer;
		atomic_store(&logs[w].next_seq, 0);
		logs[w].committed = calloc(cap_per_writer, 1);
		tl.seen[w] = calloc(cap_per_writer, 1);
		tl.last_seq[w] = UINT32_MAX;
		for (int c = 0; c < 64; c++)
			tl.last_seq_cpu[w][c] = UINT32_MAX;
	}
	blob_every = sc->blob_every;
	blob_max = sc->blob_max;
	tb_ring_opts_default(&o);
	o.size_kb = sc->kb;
	o.overwrite = sc->overwrite;
	o.no_rseq = sc->no_rseq;
	o.blob_kb = sc->blob_kb;
	if (tb_ring_new(&ring, &o) < 0)
		abort();
	ncpus = tb_ring_ncpus(ring);

	pthread_create(&reader, NULL, reader_main, NULL);
	for (int i = 0; i < sc->threads; i++) {
		args[i] = (struct writer_arg){i, sc->pin};
		pthread_create(&threads[i], NULL, writer_main, &args[i]);
	}
	if (sc->signals)
		pthread_create(&kicker, NULL, kicker_main, &kick);
	struct timespec dur = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
	nanosleep(&dur, NULL);
	atomic_store(&stop_writers, 1);
	if (sc->signals)
		pthread_join(kicker, NULL);
	for (int i = 0; i < sc->threads; i++)
		pthread_join(threads[i], NULL);
	atomic_store(&stop_reader, 1);
	pthread_join(reader, NULL);

	for (int w = 0; w < nwriters; w++) {
		uint32_t n = atomic_load(&logs[w].next_seq);
		for (uint32_t s = 0; s < n; s++) {
			committed += logs[w].committed[s];
			if (tl.seen[w][s] && !logs[w].committed[s])
				unaccounted++; /* read but its writer saw it refused */
			if (!logs[w].committed[s])
				continue;
			blobs += is_blob((uint32_t)w, s);
			unseen += !tl.seen[w][s];
			unseen_blobs += !tl.seen[w][s] && is_blob((uint32_t)w, s);
		}
	}
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		struct tb_cpu_stats st;
		tb_stats_read(ring, cpu, &st);
		refused_counters += st.refused;
		overrun += st.overrun;
		written += st.written;
		/* per CPU: what it committed was read or reported lost by the reader */
		per_cpu_mismatch += st.written != tl.read_by_cpu[cpu] + tl.lost_by_cpu[cpu];
		per_cpu_mismatch += st.overrun != tl.lost_by_cpu[cpu];
		per_cpu_mismatch += st.entries != 0;
		blob_written += st.blob_written;
		blob_read += st.blob_read;
		blob_lost += st.blob_lost;
		blob_full += st.blob_full;
	}
	refused_rc = refused_by_rc[0] + refused_by_rc[1] + refused_by_rc[2] + refused_by_rc[3] + refused_by_rc[4];
	/* read + lost must cover committed exactly: anything else is unaccounted */
	unaccounted += committed > tl.read + tl.lost ? committed - (tl.read + tl.lost)
						     : (tl.read + tl.lost) - committed;

	diag("%s: %s, %d threads, %zu KiB/CPU, %s, %.1f s", sc->name, tb_ring_uses_rseq(ring) ? "rseq" : "try-lock",
	     sc->threads, sc->kb, sc->overwrite ? "overwrite" : "producer/consumer", secs);
	is_int(written, committed, "%s: the CPUs' written counts equal the writers' commits", sc->name);
	is_int(unaccounted, 0, "%s: every committed event read exactly once or reported lost", sc->name);
	is_int(tl.duplicates, 0, "%s: no duplicates", sc->name);
	is_int(tl.corrupt + tl.unknown_writer, 0, "%s: no corrupt payload", sc->name);
	is_int(tl.order_violations, 0, "%s: each writer's sequence increases in merged order", sc->name);
	is_int(tl.ts_back, 0, "%s: per-CPU timestamps never decrease", sc->name);
	is_int(per_cpu_mismatch, 0, "%s: per CPU, written = read + LOST markers, markers = overrun", sc->name);
	is_int(refused_counters, refused_rc, "%s: each refused write in exactly one counter", sc->name);
	is_int(tl.lost, overrun, "%s: LOST markers add up to the overrun", sc->name);
	if (sc->overwrite && !sc->no_rseq)
		is_int(refused_rc - refused_by_rc[4], 0,
		       "%s: overwrite mode refuses nothing (but %llu blobs that would overwrite one being filled)",
		       sc->name, (unsigned long long)refused_by_rc[4]);
	if (sc->no_rseq) /* the fallback may refuse when every buffer's holder is preempted */
		is_int(refused_rc, refused_by_rc[3] + refused_by_rc[0] + refused_by_rc[4],
		       "%s: fallback refuses only busy/full", sc->name);
	if (sc->expect_no_loss)
		ok(tl.lost == 0 && refused_rc == 0 && tl.blob_overwritten == 0 && committed > 0,
		   "%s: room for everything: lost=0 refused=0 overwritten=0", sc->name);
	/* blobs: each committed one read whole, reported overwritten, or lost with its reference */
	is_int(blob_written, blobs, "%s: blob_written counts the %llu blobs committed", sc->name, (unsigned long long)blobs);
	is_int(unseen, tl.lost + tl.blob_overwritten,
	       "%s: committed events not read whole = LOST counts + blobs reported overwritten", sc->name);
	ok(unseen_blobs >= tl.blob_overwritten, "%s: every overwritten report is a committed blob not read", sc->name);
	ok(blob_read == tl.blob_intact && blob_lost == tl.blob_overwritten,
	   "%s: blob_read %llu and blob_lost %llu are what the reader saw", sc->name, (unsigned long long)blob_read,
	   (unsigned long long)blob_lost);
	is_int(blob_full, refused_by_rc[4], "%s: every -ENOBUFS counted in blob_full", sc->name);
	if (!sc->overwrite)
		is_int(tl.blob_overwritten, 0, "%s: producer/consumer never overwrites a blob", sc->name);
	ok(tl.blob_intact > 0, "%s: %llu blobs read whole", sc->name, (unsigned long long)tl.blob_intact);
	printf("blobs: committed=%llu intact=%llu overwritten=%llu lost-with-page=%llu refused=%llu torn=%llu\n",
	       (unsigned long long)blobs, (unsigned long long)tl.blob_intact, (unsigned long long)tl.blob_overwritten,
	       (unsigned long long)(unseen_blobs - tl.blob_overwritten), (unsigned long long)blob_full,
	       (unsigned long long)tl.blob_torn);
	printf("accounting: committed=%llu read=%llu lost=%llu refused=%llu unaccounted=%llu "
	       "duplicates=%llu corrupt=%llu\n",
	       (unsigned long long)committed, (unsigned long long)tl.read, (unsigned long long)tl.lost,
	       (unsigned long long)refused_rc, (unsigned long long)unaccounted,
	       (unsigned long long)tl.duplicates, (unsigned long long)(tl.corrupt + tl.unknown_writer));
	fflush(stdout);
	if (sc->signals) {
		uint64_t deepest = 0, from_handlers = 0;
		for (int w = sc->threads; w < nwriters; w++) {
			uint32_t n = atomic_load(&logs[w].next_seq);
			for (uint32_t s = 0; s < n; s++) {
				from_handlers += logs[w].committed[s];
				if ((w - sc->threads) % SIG_DEPTH == SIG_DEPTH - 1)
					deepest += logs[w].committed[s];
			}
		}
		ok(deepest > 0, "%s: %llu events from signal handlers, %llu of them %d handlers deep",
		   sc->name, (unsigned long long)from_handlers, (unsigned long long)deepest, SIG_DEPTH);
	}
	total_committed += committed;
	total_read += tl.read;
	total_lost += tl.lost;
	total_refused += refused_rc;
	total_unaccounted += unaccounted;
	total_duplicates += tl.duplicates;
	total_corrupt += tl.corrupt + tl.unknown_writer;
	total_blobs += blobs;
	total_blob_intact += tl.blob_intact;
	total_blob_overwritten += tl.blob_overwritten;
	total_blob_with_page += unseen_blobs - tl.blob_overwritten;
	total_blob_full += blob_full;
	total_blob_torn += tl.blob_torn;
	for (int w = 0; w < nwriters; w++) {
		free(logs[w].committed);
		free(tl.seen[w]);
	}
	tb_ring_free(ring);
	alarm(0);
}

int main(void)
{
	const char *sig_env = getenv("TB_TORTURE_SIGNALS");
	int sigs = !(sig_env && !strcmp(sig_env, "0"));
	const struct scenario scenarios[] = {
		/* name, KiB, overwrite, threads, pinning, signals, s, cap, no loss, no rseq, blob KiB, 1 in, max */
		{"overwrite-small", 16, 1, 6, PIN_NONE, sigs, 1.5, 0, 0, 0, 64, 16, MAX_BLOB},
		{"overwrite-2-per-cpu", 64, 1, 4, PIN_TWO_PER_CPU, sigs, 1.0, 0, 0, 0, 128, 16, 8192},
		{"overwrite-migrating", 32, 1, 4, PIN_MIGRATE, sigs, 1.0, 0, 0, 0, 64, 16, MAX_BLOB},
		{"producer-consumer", 16, 0, 6, PIN_NONE, sigs, 1.0, 0, 0, 0, 64, 16, MAX_BLOB},
		/* at most about 3000 blobs of one chunk: 32 MiB never laps */
		{"room-for-everything", 65536, 1, 4, PIN_TWO_PER_CPU, sigs, 1.0, 40000, 1, 0, 32768, 128, 4096},
		{"fallback-overwrite", 16, 1, 6, PIN_NONE, sigs, 1.0, 0, 0, 1, 64, 16, MAX_BLOB},
		{"fallback-producer-consumer", 16, 0, 4, PIN_MIGRATE, sigs, 1.0, 0, 0, 1, 64, 16, MAX_BLOB},
	};

	if (sigs)
		setup_signals();
	const char *only = getenv("TB_TORTURE_ONLY");
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!only || strstr(scenarios[i].name, only))
			run(&scenarios[i]);
	int rc = done_testing();
	/* the closing lines, on stderr too so that prove shows them in make test */
	for (int i = 0; i < 2; i++) {
		fprintf(i ? stderr : stdout,
			"accounting: committed=%llu read=%llu lost=%llu refused=%llu unaccounted=%llu "
			"duplicates=%llu corrupt=%llu\n",
			(unsigned long long)total_committed, (unsigned long long)total_read,
			(unsigned long long)total_lost, (unsigned long long)total_refused,
			(unsigned long long)total_unaccounted, (unsigned long long)total_duplicates,
			(unsigned long long)total_corrupt);
		fprintf(i ? stderr : stdout,
			"blobs: committed=%llu intact=%llu overwritten=%llu lost-with-page=%llu refused=%llu torn=%llu\n",
			(unsigned long long)total_blobs, (unsigned long long)total_blob_intact,
			(unsigned long long)total_blob_overwritten, (unsigned long long)total_blob_with_page,
			(unsigned long long)total_blob_full, (unsigned long long)total_blob_torn);
	}
	return rc;
}
