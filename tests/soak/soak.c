// SPDX-License-Identifier: MIT
/*
 * soak - the programs scripts/soak.sh runs against one shared-memory session
 * (tracebuf/shm.h) for as long as it is told, killing them with SIGKILL as
 * it goes.  Everything each of them must remember survives SIGKILL: it lives
 * in small files mapped MAP_SHARED, which the kernel keeps whatever instant
 * the process dies at.
 *
 *   soak write STATE INCARNATION
 *	A program joined to the session by its environment (TRACEBUF_SHM,
 *	src/source/session.c), with THREADS threads firing soak:tick as fast
 *	as they can until SIGTERM.  Each event carries (incarnation, thread,
 *	seq) and a check word of the three, so a torn or foreign record shows.
 *	STATE (made here) holds, per thread, `begun` (stored before the
 *	event's tb_write is called) and `done` (stored after it returned).
 *   soak read SHM LEDGER
 *	The session's consumer: drains the ring page by page with the same
 *	calls `tracebuf record` drains it with (tb_read_page_info under
 *	tb_shm_guard), checks every record, and commits what it has seen to
 *	LEDGER after every page.  Until SIGTERM; then it drains what is left.
 *	A restarted reader continues the LEDGER of the one killed before it.
 *   soak counters SHM     the ring's own counters, summed over CPUs
 *   soak ledger LEDGER    a reader ledger, as key=value lines
 *   soak wstate STATE     a writer's state, as key=value lines
 *
 * Exit status: 0, 1 when a check failed (read) or the state is not sound,
 * 2 for a usage error or a file that cannot be used.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/shm.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracepoint.h"

#define THREADS 4
#define MAX_CPUS 64
#define STATE_MAGIC 0x74627374617465ull  /* "tbstate" */
#define LEDGER_MAGIC 0x74626c6564676572ull /* "tbledger" */

TB_EVENT(soak, tick, TB_PROTO(uint64_t seq, uint32_t who, uint32_t check),
	 TB_FIELDS(tb_field(uint64_t, seq, seq), tb_field(uint32_t, who, who), tb_field(uint32_t, check, check)),
	 TB_PRINTK("seq=%llu who=%u check=%u", (unsigned long long)REC->seq, REC->who, REC->check))

/* who: the writer's incarnation above its thread's index */
static uint32_t who_of(uint32_t incarnation, unsigned thread)
{
	return incarnation << 8 | thread;
}

/* A word that no torn, shifted or foreign record matches by chance (a 64-bit mix of both). */
static uint32_t check_of(uint64_t seq, uint32_t who)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull ^ ((uint64_t)who << 32 | who);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (uint32_t)x;
}

/* A file of size bytes mapped shared: created zeroed when new.  NULL (said) on failure. */
static void *map_file(const char *path, size_t size, bool *created)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "soak: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*created = st.st_size == 0;
	if (*created && ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "soak: %s: %s\n", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!*created && (size_t)st.st_size != size) {
		fprintf(stderr, "soak: %s: %lld bytes, not the %zu of this build's layout\n", path,
			(long long)st.st_size, size);
		close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "soak: %s: mmap: %s\n", path, strerror(errno));
		return NULL;
	}
	return p;
}

static volatile sig_atomic_t stop_requested;

static void on_term(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void catch_term(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* ------------------------------------------------------------ the writer */

/* One thread's counts, a cache line each: the threads never share a line. */
struct writer_slot {
	_Atomic uint64_t begun; /* events whose tb_write may have been entered */
	_Atomic uint64_t done;  /* events whose tb_write returned */
	char pad[48];
};

struct writer_state {
	uint64_t magic;
	uint32_t incarnation;
	int32_t pid;
	char pad[48];
	struct writer_slot slot[THREADS];
};

struct writer_thread {
	struct writer_slot *slot;
	uint32_t who;
};

static atomic_bool writers_stop;

/*
 * What a SIGKILL leaves: for each thread, done <= begun <= done + 1.  When
 * they differ, event `done` was somewhere between the two stores: not yet
 * counted by tracebuf, in flight (counted in the region's thread table and
 * not committed), committed, or refused.  The kill happens at one instant
 * and the stores of one thread become visible in program order (x86-64's
 * store order, which the rseq write path needs anyway), so begun is in
 * memory before tb_write's own count is, and done only after tb_write's
 * commit or refusal.  The signal fences keep the compiler from moving the
 * stores across the call.  The record is built before begun is stored (what
 * soak:tick's emitter would build: its common word, then the fields), so
 * that "not yet counted" is only the call and tb_write's first instructions.
 */
static void *writer_run(void *arg)
{
	struct writer_thread *w = arg;
	/* acquire: the ring was set up before the event's pointer to it was published */
	struct tb_ring *ring = __atomic_load_n(&tb_event_soak_tick.ring, __ATOMIC_ACQUIRE);
	struct tb_record_soak_tick rec;
	uint64_t common = tb__common_word(tb_event_soak_tick.id);

	memcpy(&rec.common, &common, sizeof(common));
	rec.who = w->who;
	for (uint64_t seq = 0; !atomic_load_explicit(&writers_stop, memory_order_relaxed); seq++) {
		rec.seq = seq;
		rec.check = check_of(seq, w->who);
		atomic_store_explicit(&w->slot->begun, seq + 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		tb_write(ring, &rec, sizeof(rec));
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&w->slot->done, seq + 1, memory_order_relaxed);
	}
	return NULL;
}

static int cmd_write(const char *path, const char *incarnation_arg)
{
	struct writer_thread w[THREADS];
	pthread_t tid[THREADS];
	struct writer_state *st;
	unsigned long inc = strtoul(incarnation_arg, NULL, 10);
	bool created;

	if (inc == 0 || inc >= 1u << 24) {
		fprintf(stderr, "soak write: incarnation '%s' is not in 1..16777215\n", incarnation_arg);
		return 2;
	}
	if (!tb_trace_soak_tick_enabled()) {
		fprintf(stderr, "soak write: soak:tick is not enabled: run it with TRACEBUF_SHM and "
				"TRACEBUF_EVENTS='soak:*' (a `tracebuf record --shm` session)\n");
		return 2;
	}
	st = map_file(path, sizeof(*st), &created);
	if (!st)
		return 2;
	if (!created) {
		fprintf(stderr, "soak write: %s exists: one state file per incarnation\n", path);
		return 2;
	}
	st->magic = STATE_MAGIC;
	st->incarnation = (uint32_t)inc;
	st->pid = (int32_t)getpid();
	catch_term();
	for (unsigned t = 0; t < THREADS; t++) {
		w[t] = (struct writer_thread){.slot = &st->slot[t], .who = who_of((uint32_t)inc, t)};
		if (pthread_create(&tid[t], NULL, writer_run, &w[t]) != 0) {
			fprintf(stderr, "soak write: pthread_create failed\n");
			return 2;
		}
	}
	while (!stop_requested)
		pause();
	atomic_store_explicit(&writers_stop, true, memory_order_relaxed);
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(tid[t], NULL);
	return 0;
}

static int cmd_wstate(const char *path)
{
	struct writer_state *st;
	uint64_t begun = 0, done = 0, pending = 0;
	bool created;
	int sound = 1;

	st = map_file(path, sizeof(*st), &created);
	if (!st || created || st->magic != STATE_MAGIC) {
		fprintf(stderr, "soak wstate: %s is not a writer's state\n", path);
		return 2;
	}
	for (unsigned t = 0; t < THREADS; t++) {
		uint64_t b = atomic_load(&st->slot[t].begun), d = atomic_load(&st->slot[t].done);

		if (d > b || b > d + 1)
			sound = 0;
		begun += b, done += d, pending += b - d;
		printf("thread%u_begun=%llu\nthread%u_done=%llu\n", t, (unsigned long long)b, t,
		       (unsigned long long)d);
	}
	printf("incarnation=%u\npid=%d\nbegun=%llu\ndone=%llu\npending=%llu\nsound=%d\n", st->incarnation,
	       st->pid, (unsigned long long)begun, (unsigned long long)done, (unsigned long long)pending, sound);
	return sound ? 0 : 1;
}

/* ------------------------------------------------------------ the reader */

/* The last event seen of one writer thread on one CPU. */
struct last_seen {
	uint32_t incarnation; /* 0: none yet */
	uint32_t pad;
	uint64_t seq;
};

struct ledger {
	uint64_t next_seqno[MAX_CPUS]; /* per CPU: the number of the next event expected */
	struct last_seen last[MAX_CPUS][THREADS];
	uint64_t read;          /* soak:tick records read and checked */
	uint64_t pages;
	uint64_t page_lost;     /* LOST counts the ring handed over (gaps it counted) */
	uint64_t crash_lost;    /* numbers skipped after a restart: a killed reader's page */
	uint64_t crash_lost_max;/* the most one restart skipped */
	uint64_t starts;        /* reader incarnations */
	uint64_t torn;          /* records failing the check word or the layout */
	uint64_t disorder;      /* a thread's (incarnation, seq) not above its last on that CPU */
	uint64_t numbering;     /* pages not starting where the last one ended (outside restarts) */
	uint64_t miscount;      /* pages whose records are not the count the read said */
	uint64_t first_problem_seqno; /* where the first of the above was seen */
	uint32_t first_problem_cpu;
	uint32_t ncpus;
};

/*
 * Two copies and the index of the good one: a reader commits by filling
 * the other copy and then storing its index, so a SIGKILL at any instant
 * leaves `current` naming a whole copy.  (Only the next reader, after this
 * one is dead, reads it: the release store matters for the compiler's
 * order only, which the file's readers see after the process is gone.)
 */
struct ledger_file {
	uint64_t magic;
	_Atomic uint32_t current;
	uint32_t pad;
	struct ledger copy[2];
};

struct reader {
	struct ledger_file *file;
	struct ledger l;         /* the working copy */
	struct tb_shm *shm;
	struct tb_ring *ring;
	uint8_t *page;
	size_t subbuf;
	uint32_t page_capacity;  /* the most soak:tick records one page holds */
	bool fresh[MAX_CPUS];    /* no page taken yet on this CPU by this incarnation */
	uint64_t restart_gap;    /* numbers skipped since this incarnation started */
};

static void ledger_commit(struct reader *r)
{
	uint32_t next = atomic_load_explicit(&r->file->current, memory_order_relaxed) ^ 1;

	r->file->copy[next] = r->l;
	atomic_store_explicit(&r->file->current, next, memory_order_release);
}

static void problem(struct reader *r, uint64_t *counter, unsigned cpu, uint64_t seqno, const char *what)
{
	if (!r->l.torn && !r->l.disorder && !r->l.numbering && !r->l.miscount) {
		r->l.first_problem_cpu = cpu;
		r->l.first_problem_seqno = seqno;
		fprintf(stderr, "soak read: CPU %u, event %llu: %s\n", cpu, (unsigned long long)seqno, what);
	}
	(*counter)++;
}

/* One record: a whole soak:tick whose check holds, above its thread's last on this CPU. */
static void check_record(struct reader *r, unsigned cpu, uint64_t seqno, const struct tb_record *rec)
{
	struct tb_record_soak_tick e;
	struct last_seen *last;
	unsigned thread;

	if (rec->len < sizeof(e)) {
		problem(r, &r->l.torn, cpu, seqno, "a record too short for soak:tick");
		return;
	}
	memcpy(&e, rec->data, sizeof(e));
	thread = e.who & 0xff;
	if (thread >= THREADS || e.check != check_of(e.seq, e.who)) {
		problem(r, &r->l.torn, cpu, seqno, "a record whose check word does not match (torn)");
		return;
	}
	last = &r->l.last[cpu][thread];
	if (last->incarnation > e.who >> 8 || (last->incarnation == e.who >> 8 && last->seq >= e.seq))
		problem(r, &r->l.disorder, cpu, seqno, "a thread's sequence number not above its last");
	last->incarnation = e.who >> 8;
	last->seq = e.seq;
	r->l.read++;
}

/*
 * Where the page's numbers start against where the last page ended.  Only
 * the first page of a restarted reader may start later: the numbers
 * between are the page its killed predecessor took and never committed,
 * one page at most (it commits after each).
 */
static void check_numbering(struct reader *r, unsigned cpu, const struct tb_read_info *info)
{
	uint64_t start = info->first_seqno - info->lost, expected = r->l.next_seqno[cpu];

	r->l.page_lost += info->lost;
	if (start == expected)
		return;
	if (r->fresh[cpu] && r->l.starts > 1 && start > expected) {
		r->restart_gap += start - expected;
		r->l.crash_lost += start - expected;
		if (r->restart_gap > r->l.crash_lost_max)
			r->l.crash_lost_max = r->restart_gap;
		if (r->restart_gap > r->page_capacity)
			problem(r, &r->l.numbering, cpu, start, "a restart skipped more than one page's events");
		return;
	}
	problem(r, &r->l.numbering, cpu, start,
		start > expected ? "events skipped and not counted as lost" : "events handed over twice");
}

static void check_page(struct reader *r, unsigned cpu, const struct tb_read_info *info)
{
	struct tb_page_cursor c;
	struct tb_record rec;
	uint64_t seqno = info->first_seqno, n = 0;
	int rc;

	check_numbering(r, cpu, info);
	r->fresh[cpu] = false;
	if (tb_page_cursor_init(&c, r->page, r->subbuf) < 0) {
		problem(r, &r->l.torn, cpu, seqno, "a page whose header does not decode");
		return;
	}
	while ((rc = tb_page_next_data(&c, &rec)) == 1) {
		check_record(r, cpu, seqno + n, &rec);
		n++;
	}
	if (rc < 0)
		problem(r, &r->l.torn, cpu, seqno + n, c.err.reason ? c.err.reason : "a record that does not decode");
	if (n != info->events)
		problem(r, &r->l.miscount, cpu, seqno, "a page whose records are not the count read said");
	r->l.next_seqno[cpu] = info->first_seqno + info->events;
	r->l.pages++;
}

struct take {
	struct reader *r;
	unsigned cpu;
	struct tb_read_info info;
	long n;
};

static int take_page(void *arg)
{
	struct take *t = arg;

	t->n = tb_read_page_info(t->r->ring, t->cpu, t->r->page, t->r->subbuf, &t->info);
	return 0;
}

/* Every page there is now: how many, or -errno. */
static long drain_once(struct reader *r)
{
	long pages = 0;

	for (unsigned cpu = 0; cpu < r->l.ncpus; cpu++) {
		struct take t = {.r = r, .cpu = cpu};
		int rc;

		while ((rc = tb_shm_guard(r->shm, take_page, &t)) == 0 && t.n > 0) {
			check_page(r, cpu, &t.info);
			ledger_commit(r);
			pages++;
		}
		if (rc < 0 || t.n < 0) {
			fprintf(stderr, "soak read: CPU %u: %s\n", cpu, rc < 0 ? tb_shm_error() : strerror((int)-t.n));
			return rc < 0 ? rc : t.n;
		}
	}
	return pages;
}

static int reader_open(struct reader *r, const char *shm_path, const char *ledger_path)
{
	bool created;
	int rc = tb_shm_attach(shm_path, TB_SHM_READER, &r->shm);

	if (rc < 0) {
		fprintf(stderr, "soak read: %s\n", tb_shm_error());
		return 2;
	}
	r->ring = tb_shm_ring(r->shm);
	r->subbuf = tb_ring_subbuf_size(r->ring);
	r->page = malloc(r->subbuf);
	r->page_capacity = tb_page_data_size(r->subbuf) / tb_record_size(sizeof(struct tb_record_soak_tick), 0);
	r->file = map_file(ledger_path, sizeof(*r->file), &created);
	if (!r->page || !r->file)
		return 2;
	if (created)
		r->file->magic = LEDGER_MAGIC;
	else if (r->file->magic != LEDGER_MAGIC) {
		fprintf(stderr, "soak read: %s is not a reader's ledger\n", ledger_path);
		return 2;
	}
	r->l = r->file->copy[atomic_load(&r->file->current) & 1];
	if (created)
		r->l.ncpus = tb_ring_ncpus(r->ring);
	if (r->l.ncpus != tb_ring_ncpus(r->ring) || r->l.ncpus > MAX_CPUS) {
		fprintf(stderr, "soak read: %s is for %u CPUs, the ring has %u (at most %d)\n", ledger_path,
			r->l.ncpus, tb_ring_ncpus(r->ring), MAX_CPUS);
		return 2;
	}
	for (unsigned cpu = 0; cpu < r->l.ncpus; cpu++)
		r->fresh[cpu] = true;
	r->l.starts++;
	ledger_commit(r);
	return 0;
}

static int cmd_read(const char *shm_path, const char *ledger_path)
{
	struct timespec idle = {0, 1000 * 1000};
	struct reader r = {0};
	long n;
	int rc = reader_open(&r, shm_path, ledger_path);

	if (rc)
		return rc;
	catch_term();
	/* after SIGTERM (the writers are stopped first), until one whole pass finds nothing */
	while ((n = drain_once(&r)) >= 0 && !(stop_requested && n == 0))
		if (n == 0)
			nanosleep(&idle, NULL);
	tb_shm_close(r.shm);
	free(r.page);
	if (n < 0)
		return 2;
	return r.l.torn || r.l.disorder || r.l.numbering || r.l.miscount ? 1 : 0;
}

static int cmd_ledger(const char *path)
{
	bool created;
	struct ledger_file *f = map_file(path, sizeof(*f), &created);
	const struct ledger *l;

	if (!f || created || f->magic != LEDGER_MAGIC) {
		fprintf(stderr, "soak ledger: %s is not a reader's ledger\n", path);
		return 2;
	}
	l = &f->copy[atomic_load(&f->current) & 1];
	printf("read=%llu\npages=%llu\npage_lost=%llu\ncrash_lost=%llu\ncrash_lost_max=%llu\nstarts=%llu\n"
	       "torn=%llu\ndisorder=%llu\nnumbering=%llu\nmiscount=%llu\n",
	       (unsigned long long)l->read, (unsigned long long)l->pages, (unsigned long long)l->page_lost,
	       (unsigned long long)l->crash_lost, (unsigned long long)l->crash_lost_max,
	       (unsigned long long)l->starts, (unsigned long long)l->torn, (unsigned long long)l->disorder,
	       (unsigned long long)l->numbering, (unsigned long long)l->miscount);
	return 0;
}

/* ------------------------------------------------------------ counters */

static int cmd_counters(const char *shm_path)
{
	struct tb_cpu_stats st;
	struct tb_shm *shm;
	uint64_t written = 0, refused = 0, entries = 0, read = 0, overrun = 0, dropped = 0;

	if (tb_shm_attach(shm_path, TB_SHM_READER, &shm) < 0) {
		fprintf(stderr, "soak counters: %s\n", tb_shm_error());
		return 2;
	}
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(shm)); cpu++) {
		if (tb_stats_read(tb_shm_ring(shm), cpu, &st) < 0)
			return 2;
		written += st.written, refused += st.refused, entries += st.entries;
		read += st.read, overrun += st.overrun, dropped += st.dropped;
	}
	tb_shm_close(shm);
	printf("written=%llu\nrefused=%llu\nentries=%llu\nread=%llu\noverrun=%llu\ndropped=%llu\n",
	       (unsigned long long)written, (unsigned long long)refused, (unsigned long long)entries,
	       (unsigned long long)read, (unsigned long long)overrun, (unsigned long long)dropped);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "write"))
		return cmd_write(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "read"))
		return cmd_read(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "counters"))
		return cmd_counters(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "ledger"))
		return cmd_ledger(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "wstate"))
		return cmd_wstate(argv[2]);
	fprintf(stderr, "usage: soak write STATE INCARNATION | read SHM LEDGER | counters SHM | ledger LEDGER |"
			" wstate STATE\n");
	return 2;
}
