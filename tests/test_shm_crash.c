/*
 * Crash recovery, exactly: a writer process is killed (SIGKILL) at each
 * named point of the write path (src/ring/crash_point.h, compiled into this
 * test's build of the library only), on the fast path, the general path
 * (large events, the MONO clock, a page switch, tb_reserve/tb_commit) and
 * the locked fallback; then the region is recovered as `tracebuf recover`
 * does (tb_shm_load: a private copy; tb_shm_window) and must hold every
 * committed event - the K written before, plus the one being written iff
 * the point is past its commit - with the right payloads, nothing torn,
 * and the in-flight count the point implies, exactly: 1 from the count of
 * writes begun (the first point) to the commit, 0 after it.  Then the cases
 * the region's table of writes begun per thread (src/ring/inflight.c) must
 * get right: several writes in flight on one CPU (nested in a signal
 * handler, two processes), several threads of one process, a slot reused
 * after its thread exited, a reservation held, refusals, a full table.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TB_CRASH_POINTS /* this test links the crash build of the library ($(B)/obj-crash) */
#include "ring/crash_point.h"
#include "lib/crash_events.h"
#include "lib/tap.h"
#include "ring/ring_layout.h"
#include "tracebuf/page.h"
#include "tracebuf/shm.h"
#include "tracebuf/stats.h"

#define SMALL 16
#define LARGE 200   /* above the fast path's 112 bytes */
#define PAGEFUL 1000 /* 4 per 4 KiB page: the 5th write enters a new page */

static const struct scenario scenarios[] = {
    {"tb_write: counted as begun, nothing else", TB_CP_COUNTED, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: entered, nothing stored", TB_CP_FAST_ENTERED, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: fill stored", TB_CP_FAST_FILL, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: header stored", TB_CP_FAST_HEADER, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: payload stored", TB_CP_FAST_PAYLOAD, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: time stored, tail word not", TB_CP_FAST_TIME, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: committed", TB_CP_FAST_COMMITTED, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 1, 0},
    {"general path, large event: checked", TB_CP_GEN_CHECKED, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"general path, large event: words stored", TB_CP_GEN_WORDS, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"general path, large event: payload stored", TB_CP_GEN_PAYLOAD, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"general path, large event: committed", TB_CP_GEN_COMMITTED, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 1, 0},
    {"general path, mono clock: words stored", TB_CP_GEN_WORDS, API_WRITE, TB_CLOCK_MONO, SMALL, 10, 0, 0, 1},
    {"general path, mono clock: payload stored", TB_CP_GEN_PAYLOAD, API_WRITE, TB_CLOCK_MONO, SMALL, 10, 0, 0, 1},
    {"page switch: checked", TB_CP_GEN_CHECKED, API_WRITE, TB_CLOCK_MONO, PAGEFUL, 4, 0, 0, 1},
    {"page switch: words stored (new page entered, tail not)", TB_CP_GEN_WORDS, API_WRITE, TB_CLOCK_MONO, PAGEFUL, 4, 0, 0, 1},
    {"page switch: payload stored", TB_CP_GEN_PAYLOAD, API_WRITE, TB_CLOCK_MONO, PAGEFUL, 4, 0, 0, 1},
    {"page switch: committed", TB_CP_GEN_COMMITTED, API_WRITE, TB_CLOCK_MONO, PAGEFUL, 4, 0, 1, 0},
    {"tb_reserve/tb_commit, small: header stored", TB_CP_FAST_HEADER, API_RESERVE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"tb_reserve/tb_commit, small: time stored", TB_CP_FAST_TIME, API_RESERVE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"tb_reserve/tb_commit, small: committed", TB_CP_FAST_COMMITTED, API_RESERVE, TB_CLOCK_TSC, SMALL, 10, 0, 1, 0},
    {"tb_reserve/tb_commit, large: checked", TB_CP_GEN_CHECKED, API_RESERVE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"tb_reserve/tb_commit, large: payload stored", TB_CP_GEN_PAYLOAD, API_RESERVE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"tb_reserve/tb_commit, large: committed", TB_CP_GEN_COMMITTED, API_RESERVE, TB_CLOCK_TSC, LARGE, 10, 0, 1, 0},
    {"locked fallback: everything but the tail word", TB_CP_LOCKED_STORES, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 1, 0, 1},
};

static int write_one(struct tb_ring *ring, const struct scenario *sc, uint32_t i)
{
	return crash_write(ring, sc->api, sc->len, i);
}

/*
 * The child: attach, write, arm the point, write once more.  Exit 3: the
 * point was not reached.  The locked fallback is a handle's choice (no
 * rseq), not the region's: that child writes through the creator's handle,
 * inherited with the mapping.
 */
static void pin_cpu0(void)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static int child(const char *path, const struct scenario *sc, struct tb_ring *creators)
{
	struct tb_shm *s = NULL;
	struct tb_ring *ring = creators;

	pin_cpu0(); /* the page-switch count assumes one CPU's buffer */
	if (!sc->no_rseq) {
		if (tb_shm_attach(path, TB_SHM_WRITER, &s) < 0)
			return 1;
		ring = tb_shm_ring(s);
	}
	for (uint32_t i = 0; i < sc->before; i++)
		if (write_one(ring, sc, i) < 0)
			return 2;
	tb__crash_at = sc->point;
	write_one(ring, sc, sc->before);
	return 3;
}

/*
 * What recovery handed over.  total 0: events numbered in order from 0
 * (one writer); else, where writers of several threads and CPUs
 * interleave, every number below total must come back exactly once.
 * Either way each payload must be its number's pattern.
 */
#define MAX_EVENTS 4096
struct seen {
	uint32_t len;
	uint32_t count, bad;
	uint32_t total;
	uint8_t got[MAX_EVENTS];
};

static void check_record(void *ctx, const struct tb_record *rec)
{
	struct seen *sn = ctx;
	uint8_t want[PAGEFUL];
	uint32_t i = sn->count;

	if (sn->total && rec->len >= 4)
		memcpy(&i, rec->data, 4);
	crash_fill(want, sn->len, i);
	if (rec->len < sn->len || memcmp(rec->data, want, sn->len) ||
	    (sn->total && (i >= sn->total || i >= MAX_EVENTS || sn->got[i]++)))
		sn->bad++;
	sn->count++;
}

static int check_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct seen *sn = ctx;

	(void)cpu;
	sn->bad += crash_page_records(page, size, check_record, sn);
	return 0;
}

static void run(const struct scenario *sc)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s, *rec;
	struct tb_shm_window w;
	struct seen sn = {.len = sc->len};
	uint32_t want = sc->before + (sc->committed ? 1 : 0);
	int status;
	pid_t pid;

	tb_ring_opts_default(&ro);
	ro.size_kb = 64;
	ro.clock = sc->clock;
	ro.no_rseq = sc->no_rseq;
	if (tb_shm_open(&so, &s) < 0) {
		ok(0, "%s: a session", sc->name);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(tb_shm_path(s), sc, tb_shm_ring(s)));
	waitpid(pid, &status, 0);
	if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
		ok(0, "%s: the writer died at the point (exit %d)", sc->name,
		   WIFEXITED(status) ? WEXITSTATUS(status) : 0);
		tb_shm_close(s);
		return;
	}
	if (tb_shm_load(tb_shm_path(s), &rec) < 0 || tb_shm_window(tb_shm_ring(rec), check_page, &sn, &w) < 0) {
		ok(0, "%s: recovered", sc->name);
	} else {
		ok(sn.count == want && sn.bad == 0 && w.events == want && w.bad == 0 && w.lost_before == 0,
		   "%s: exactly the %u committed events, intact (%u, %u bad)", sc->name, want, sn.count, sn.bad);
		ok(w.in_flight == (uint64_t)sc->in_flight && w.in_flight_exact, "%s: exactly %d write in flight reported (%llu)",
		   sc->name, sc->in_flight, (unsigned long long)w.in_flight);
		tb_shm_close(rec);
	}
	tb_shm_close(s);
}

/* ------------------------------------------ several writes in flight on one CPU */

#define NESTED_BEFORE 10u
static struct tb_ring *nested_ring;

/* The handler's write, nested in the one the signal interrupted: it dies at its own point. */
static void write_in_handler(int sig)
{
	(void)sig;
	tb__crash_sig = SIGKILL;
	tb__crash_at = TB_CP_FAST_TIME;
	write_one(nested_ring, &scenarios[0], 2 * NESTED_BEFORE);
}

/*
 * A writer on CPU 0: NESTED_BEFORE events numbered from first, then one
 * that raises sig (SIGSTOP: held there by the test; SIGKILL: dead) at
 * TB_CP_FAST_TIME - in its section, time stored, tail word not.
 */
static int point_writer(const char *path, uint32_t first, int sig, int with_handler)
{
	struct tb_shm *s;

	pin_cpu0();
	if (tb_shm_attach(path, TB_SHM_WRITER, &s) < 0)
		return 1;
	nested_ring = tb_shm_ring(s);
	if (with_handler)
		signal(SIGUSR1, write_in_handler);
	for (uint32_t i = first; i < first + NESTED_BEFORE; i++)
		if (write_one(nested_ring, &scenarios[0], i) < 0)
			return 2;
	tb__crash_sig = sig;
	tb__crash_at = TB_CP_FAST_TIME;
	write_one(nested_ring, &scenarios[0], first + NESTED_BEFORE);
	return 3;
}

/* A point_writer run to its point: stopped (its pid) or -1; a killed one is reaped, its status in *status. */
static pid_t run_writer(const char *path, uint32_t first, int sig, int with_handler, int *status)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(point_writer(path, first, sig, with_handler));
	if (waitpid(pid, status, WUNTRACED) != pid)
		return -1;
	if (sig == SIGSTOP && !WIFSTOPPED(*status)) {
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		return -1;
	}
	return pid;
}

/* Recovered: events numbered 0..want-1 in order, none torn; the in-flight count in *in_flight, if exact. */
static int recovered(const char *path, uint32_t want, uint64_t *in_flight)
{
	struct seen sn = {.len = SMALL};
	struct tb_shm_window w;
	struct tb_shm *rec;
	int good;

	if (tb_shm_load(path, &rec) < 0)
		return 0;
	good = tb_shm_window(tb_shm_ring(rec), check_page, &sn, &w) == 0 && sn.count == want && sn.bad == 0 &&
	       w.events == want && w.bad == 0;
	*in_flight = w.in_flight_exact ? w.in_flight : UINT64_MAX;
	tb_shm_close(rec);
	return good;
}

static struct tb_shm *small_session(void)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s;

	tb_ring_opts_default(&ro);
	ro.size_kb = 64;
	return tb_shm_open(&so, &s) < 0 ? NULL : s;
}

/* Two processes on CPU 0, each stopped in its own section: both die, two writes in flight. */
static void test_two_processes_one_cpu(void)
{
	struct tb_shm *s = small_session();
	uint64_t in_flight = 0;
	int status = 0, killed = 0;
	pid_t a = s ? run_writer(tb_shm_path(s), 0, SIGSTOP, 0, &status) : -1;

	if (a > 0) {
		killed = run_writer(tb_shm_path(s), NESTED_BEFORE, SIGKILL, 0, &status) > 0 && WIFSIGNALED(status) &&
			 WTERMSIG(status) == SIGKILL;
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
	}
	ok(a > 0 && killed, "two processes on CPU 0: one held in its section, the other killed in its own");
	ok(s && recovered(tb_shm_path(s), 2 * NESTED_BEFORE, &in_flight),
	   "both processes' committed events recovered, in order, none torn");
	ok(in_flight == 2, "two writes in flight counted, exactly (%llu)", (unsigned long long)in_flight);
	tb_shm_close(s);
}

/* A write stopped in its section, a signal handler's write nested in it and killed in its own. */
static void test_signal_nested(void)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan runs a handler only at its next intercepted call, and the stopped write has none left */
	skip(3, "ThreadSanitizer defers signal handlers");
	return;
#endif
	struct tb_shm *s = small_session();
	uint64_t in_flight = 0;
	int status = 0;
	pid_t a = s ? run_writer(tb_shm_path(s), 0, SIGSTOP, 1, &status) : -1;

	if (a > 0) {
		kill(a, SIGUSR1);
		kill(a, SIGCONT);
		waitpid(a, &status, 0);
	}
	ok(a > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "a write held in its section, then a signal handler's write killed in its own");
	ok(s && recovered(tb_shm_path(s), NESTED_BEFORE, &in_flight),
	   "the committed events recovered, in order, none torn");
	ok(in_flight == 2, "two writes in flight counted exactly, the interrupted one and the handler's (%llu)",
	   (unsigned long long)in_flight);
	tb_shm_close(s);
}

/* ------------------------------------------ the table of writes begun */

/* The recovered window of path: events numbered 0..total-1, each once, intact; the window's counts in *w. */
static int recovered_all(const char *path, uint32_t total, struct tb_shm_window *w)
{
	static struct seen ss;
	struct tb_shm *rec;
	int good;

	memset(&ss, 0, sizeof(ss));
	ss.len = SMALL;
	ss.total = total;
	if (tb_shm_load(path, &rec) < 0)
		return 0;
	good = tb_shm_window(tb_shm_ring(rec), check_page, &ss, w) == 0 && ss.count == total && ss.bad == 0 &&
	       w->events == total && w->bad == 0;
	tb_shm_close(rec);
	return good;
}

/* An owner word of a handle with a file (inflight.c): writer number, tid. */
static uint64_t owner_of(uint32_t number, pid_t tid)
{
	return TB_OWNER_LOCKED | (uint64_t)number << 32 | (uint32_t)tid;
}

/* Every slot's lock taken through the table's description (m's process holds them): 1, or 0. */
static int lock_every_slot(const struct table_map *m)
{
	for (unsigned i = 0; i < TB_THREAD_SLOTS; i++)
		if (crash_lock_slot(m, i) < 0)
			return 0;
	return 1;
}

/* A child process: fn(path), which ends with the process killing itself; its exit status. */
static int run_child(int (*fn)(const char *), const char *path)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn(path));
	waitpid(pid, &status, 0);
	return status;
}

static int killed(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static struct tb_ring *child_ring(const char *path)
{
	struct tb_shm *s;

	return tb_shm_attach(path, TB_SHM_WRITER, &s) < 0 ? NULL : tb_shm_ring(s);
}

/* Events first.. first+n-1 of len bytes (at most PAGEFUL), each its number's pattern. */
static int write_sized(struct tb_ring *ring, uint32_t first, uint32_t n, uint32_t len)
{
	uint8_t buf[PAGEFUL];

	for (uint32_t i = first; i < first + n; i++) {
		crash_fill(buf, len, i);
		if (tb_write(ring, buf, len) < 0)
			return -1;
	}
	return 0;
}

static int write_n(struct tb_ring *ring, uint32_t first, uint32_t n)
{
	return write_sized(ring, first, n, SMALL);
}

/* -- several threads of one process, killed mid-write */

#define THREADS 4
#define PER_THREAD 50
static struct tb_ring *threads_ring;
static pthread_barrier_t threads_ready;

/* Thread k: its events, then a reservation held (filled, never committed) until the process dies. */
static void *thread_writer(void *arg)
{
	uint32_t k = (uint32_t)(uintptr_t)arg;
	void *p;

	write_n(threads_ring, k * PER_THREAD, PER_THREAD);
	p = tb_reserve(threads_ring, SMALL);
	if (p)
		crash_fill(p, SMALL, 9999);
	pthread_barrier_wait(&threads_ready);
	for (;;)
		pause();
	return NULL;
}

/* THREADS threads each hold a write begun; the main thread dies at a point of its own write's section. */
static int threads_child(const char *path)
{
	pthread_t th[THREADS];

	if (!(threads_ring = child_ring(path)))
		return 1;
	pthread_barrier_init(&threads_ready, NULL, THREADS + 1);
	for (uintptr_t k = 0; k < THREADS; k++)
		pthread_create(&th[k], NULL, thread_writer, (void *)k);
	pthread_barrier_wait(&threads_ready);
	write_n(threads_ring, THREADS * PER_THREAD, PER_THREAD);
	tb__crash_sig = SIGKILL;
	tb__crash_at = TB_CP_FAST_PAYLOAD;
	write_n(threads_ring, THREADS * PER_THREAD + PER_THREAD, 1);
	return 3;
}

static void test_threads_killed(void)
{
	struct tb_shm *s = small_session();
	struct tb_shm_window w = {0};
	int status = s ? run_child(threads_child, tb_shm_path(s)) : 0;

	ok(s && killed(status), "%d threads holding writes begun, the main thread killed in its own", THREADS);
	int good = s && recovered_all(tb_shm_path(s), (THREADS + 1) * PER_THREAD, &w);

	ok(good, "every thread's committed events recovered, each once, intact (%llu)", (unsigned long long)w.events);
	ok(w.in_flight_exact && w.in_flight == THREADS + 1, "exactly %d writes in flight (%llu)", THREADS + 1,
	   (unsigned long long)w.in_flight);
	tb_shm_close(s);
}

/* -- a slot reused after its thread exited */

static struct tb_ring *reuse_ring;
static void *write_ten(void *arg)
{
	(void)arg;
	write_n(reuse_ring, 0, 10);
	return NULL;
}

/* A thread writes 10 and exits; the next thread must get its slot back, count and all. Exit 0..: what failed. */
static int reuse_child(const char *path)
{
	struct table_map m;
	pthread_t th;
	uint64_t before = 0;
	int slot = -1;

	if (!(reuse_ring = child_ring(path)) || !crash_map_table(path, &m))
		return 1;
	pthread_create(&th, NULL, write_ten, NULL);
	pthread_join(th, NULL);
	for (int i = 0; i < TB_THREAD_SLOTS; i++)
		if (m.t->slot[i].begun == 10 && slot < 0)
			slot = i;
	if (slot < 0 || atomic_load(&m.t->slot[slot].owner) != 0)
		return 4; /* the exited thread's slot: its 10, and given back */
	before = m.t->slot[slot].begun;
	write_n(reuse_ring, 10, 5);
	uint64_t o = atomic_load(&m.t->slot[slot].owner);
	if ((uint32_t)o != (uint32_t)syscall(SYS_gettid) || !(o & TB_OWNER_LOCKED) || m.t->slot[slot].begun != before + 5)
		return 5; /* this thread took the same slot and went on counting */
	tb__crash_sig = SIGKILL;
	tb__crash_at = TB_CP_FAST_TIME;
	write_n(reuse_ring, 15, 1);
	return 3;
}

static void test_slot_reused(void)
{
	struct tb_shm *s = small_session();
	struct tb_shm_window w = {0};
	int status = s ? run_child(reuse_child, tb_shm_path(s)) : 0;

	ok(s && killed(status), "a thread's slot, given back at its exit, taken by the next thread with its count (status %d)",
	   WIFEXITED(status) ? WEXITSTATUS(status) : 0);
	int good = s && recovered_all(tb_shm_path(s), 15, &w);

	ok(good && w.in_flight_exact && w.in_flight == 1, "both threads' events recovered, exactly 1 write in flight (%llu)",
	   (unsigned long long)w.in_flight);
	tb_shm_close(s);
}

/* -- reservations: held, discarded, refused */

static int reserve_child(const char *path)
{
	struct tb_ring *ring = child_ring(path);
	void *held[TB_MAX_NEST], *p;

	if (!ring)
		return 1;
	write_n(ring, 0, 10);
	/* discarded: not in flight */
	if (!(p = tb_reserve(ring, SMALL)))
		return 2;
	tb_discard(ring, p);
	/* too big, and nested too deep: refused, not in flight */
	if (tb_reserve(ring, TB_RESERVE_MAX + 1))
		return 2;
	for (int i = 0; i < TB_MAX_NEST; i++)
		if (!(held[i] = tb_reserve(ring, SMALL)))
			return 2;
	if (tb_reserve(ring, SMALL))
		return 2;
	/* one committed, TB_MAX_NEST - 1 held when the process dies */
	crash_fill(held[TB_MAX_NEST - 1], SMALL, 10);
	if (tb_commit(ring, held[TB_MAX_NEST - 1]) < 0)
		return 2;
	kill(getpid(), SIGKILL);
	return 3;
}

static void test_reservations(void)
{
	struct tb_shm *s = small_session();
	struct tb_shm_window w = {0};
	int status = s ? run_child(reserve_child, tb_shm_path(s)) : 0;

	ok(s && killed(status), "reservations discarded, refused, committed and held, then killed");
	int good = s && recovered_all(tb_shm_path(s), 11, &w);

	ok(good, "the committed events recovered");
	ok(w.in_flight_exact && w.in_flight == TB_MAX_NEST - 1,
	   "the %d reservations held are in flight, exactly; the discarded and refused ones are not (%llu)",
	   TB_MAX_NEST - 1, (unsigned long long)w.in_flight);
	tb_shm_close(s);
}

/* -- refused writes */

static int refused_child(const char *path)
{
	struct tb_ring *ring = child_ring(path);
	static uint8_t big[8192];

	if (!ring)
		return 1;
	write_n(ring, 0, 10);
	if (tb_write(ring, big, sizeof(big)) != -E2BIG)
		return 2;
	tb_ring_set_recording(ring, 0);
	if (write_n(ring, 10, 1) == 0) /* -EAGAIN */
		return 2;
	tb_ring_set_recording(ring, 1);
	kill(getpid(), SIGKILL);
	return 3;
}

/* Producer/consumer and full: the writes refused with -ENOSPC. */
static int full_child(const char *path)
{
	struct tb_ring *ring = child_ring(path);
	uint32_t i = 0;
	uint8_t buf[SMALL];
	int rc = 0;

	pin_cpu0(); /* one CPU's buffer fills */
	if (!ring)
		return 1;
	for (; i < MAX_EVENTS && rc == 0; i++) {
		crash_fill(buf, SMALL, i);
		rc = tb_write(ring, buf, SMALL);
	}
	if (rc != -ENOSPC)
		return 2;
	for (int k = 0; k < 100; k++)
		if (tb_write(ring, buf, SMALL) != -ENOSPC)
			return 2;
	kill(getpid(), SIGKILL);
	return 3;
}

static void test_refused(void)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s = small_session(), *p = NULL;
	struct tb_shm_window w = {0};
	int status = s ? run_child(refused_child, tb_shm_path(s)) : 0;

	ok(s && killed(status), "writes refused: too big, recording off; then killed");
	int good = s && recovered_all(tb_shm_path(s), 10, &w);

	ok(good && w.in_flight_exact && w.in_flight == 0, "refused writes are not in flight (%llu)",
	   (unsigned long long)w.in_flight);
	tb_shm_close(s);

	tb_ring_opts_default(&ro);
	ro.size_kb = 8;
	ro.overwrite = 0;
	if (tb_shm_open(&so, &p) == 0)
		status = run_child(full_child, tb_shm_path(p));
	ok(p && killed(status), "a producer/consumer ring written until full, then refused 100 times, then killed");
	memset(&w, 0, sizeof(w));
	if (p) {
		struct tb_shm *rec;
		static struct seen ss;
		memset(&ss, 0, sizeof(ss));
		ss.len = SMALL;
		ss.total = MAX_EVENTS;
		if (tb_shm_load(tb_shm_path(p), &rec) == 0) {
			tb_shm_window(tb_shm_ring(rec), check_page, &ss, &w);
			tb_shm_close(rec);
		}
		ok(ss.bad == 0 && w.events > 0 && w.in_flight_exact && w.in_flight == 0,
		   "%llu events recovered, none of the writes refused as full in flight (%llu)",
		   (unsigned long long)w.events, (unsigned long long)w.in_flight);
	} else {
		ok(0, "a producer/consumer session");
	}
	tb_shm_close(p);
}

/* -- a table with no free slot: the shared count; a dead owner's slot taken over */

static int table_child(const char *path)
{
	struct tb_ring *ring = child_ring(path);

	if (!ring)
		return 1;
	write_n(ring, 0, 10);
	tb__crash_sig = SIGKILL;
	tb__crash_at = TB_CP_FAST_HEADER;
	write_n(ring, 10, 1);
	return 3;
}

/* Every slot preset to owner, its count 0: as if it had written nothing. */
static void preset_table(struct table_map *m, uint64_t owner)
{
	for (int i = 0; i < TB_THREAD_SLOTS; i++) {
		atomic_store(&m->t->slot[i].owner, owner);
		m->t->slot[i].begun = 0;
	}
}

enum holder { HOLDER_LIVE, HOLDER_DEAD, HOLDER_NO_FILE };

/*
 * Every slot's lock taken by another process (this one: live; a child that
 * then exited: dead) and every owner word preset to it, or, for a holder
 * with no file, no lock and words without TB_OWNER_LOCKED.  *fd: the live
 * holder's description, to close afterwards.
 */
static int hold_table(const char *path, struct table_map *m, enum holder h)
{
	int status = 0;
	pid_t pid;

	if (!crash_map_table(path, m))
		return 0;
	preset_table(m, h == HOLDER_NO_FILE ? (uint64_t)7 << 32 | 7 : owner_of(0x7ffffff0u, 7));
	if (h == HOLDER_LIVE)
		return lock_every_slot(m);
	if (h == HOLDER_NO_FILE)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* a description of its own: the one it inherited is ours, and would keep the locks */
		close(m->fd);
		m->fd = open(path, O_RDWR | O_CLOEXEC);
		_exit(m->fd < 0 || !lock_every_slot(m));
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A session whose table is all h's; the child's status, the table mapped in *m (its locks held, if live). */
static struct tb_shm *table_run(enum holder h, struct table_map *m, int *status)
{
	struct tb_shm *s = small_session();

	*status = 0;
	if (s && hold_table(tb_shm_path(s), m, h))
		*status = run_child(table_child, tb_shm_path(s));
	return s;
}

static void table_recovered(struct tb_shm *s, struct table_map *m)
{
	struct tb_shm_window w = {0};
	int good = s && recovered_all(tb_shm_path(s), 10, &w);

	ok(good && w.in_flight_exact && w.in_flight == 1, "recovered, exactly 1 write in flight (%llu)",
	   (unsigned long long)w.in_flight);
	crash_unmap_table(m);
	tb_shm_close(s);
}

/* Slots whose owner word is no longer what hold_table preset. */
static int slots_taken(const struct table_map *m, uint64_t preset)
{
	int taken = 0;

	for (int i = 0; m->t && i < TB_THREAD_SLOTS; i++)
		taken += atomic_load(&m->t->slot[i].owner) != preset;
	return taken;
}

static void test_table_full(void)
{
	struct table_map m;
	struct tb_shm *s;
	int status;

	/* every slot held by a live process (its locks held): the child finds none */
	s = table_run(HOLDER_LIVE, &m, &status);
	ok(s && killed(status) && m.t && atomic_load(&m.t->shared_begun) == 11 && slots_taken(&m, owner_of(0x7ffffff0u, 7)) == 0,
	   "a full table: the writer counts its 11 writes begun in the shared word (%llu)",
	   m.t ? (unsigned long long)atomic_load(&m.t->shared_begun) : 0ull);
	table_recovered(s, &m);

	/* every slot held by a process that is gone (its locks went with it): the child takes one over */
	s = table_run(HOLDER_DEAD, &m, &status);
	ok(s && killed(status) && slots_taken(&m, owner_of(0x7ffffff0u, 7)) == 1 && m.t &&
	       atomic_load(&m.t->shared_begun) == 0,
	   "a table of dead owners: the writer took over one slot (%d), nothing shared",
	   slots_taken(&m, owner_of(0x7ffffff0u, 7)));
	table_recovered(s, &m);

	/* owners with no file cannot be judged from another process: never taken, the shared word */
	s = table_run(HOLDER_NO_FILE, &m, &status);
	ok(s && killed(status) && slots_taken(&m, (uint64_t)7 << 32 | 7) == 0 && m.t &&
	       atomic_load(&m.t->shared_begun) == 11,
	   "a table of owners without a file lock: none taken, the 11 writes counted in the shared word");
	table_recovered(s, &m);
}

/* -- a writer killed between its claim of a page holding unread data and the section entering it */

#define LAPPING_EVENTS 400u /* PAGEFUL events: 100 pages, the 64 KiB ring lapped several times */

/* Lap the ring on CPU 0, then die right after the next claim's CAS: event LAPPING_EVENTS's page switch. */
static int lapping_child(const char *path)
{
	struct tb_ring *ring = child_ring(path);

	pin_cpu0();
	if (!ring || write_sized(ring, 0, LAPPING_EVENTS, PAGEFUL) < 0)
		return 1;
	tb__crash_sig = SIGKILL;
	tb__crash_at = TB_CP_CLAIMED;
	write_sized(ring, LAPPING_EVENTS, 8, PAGEFUL);
	return 3;
}

/* A writer after the crash: its page switch enters the page the dead one claimed. */
static int entering_child(const char *path)
{
	struct tb_ring *ring = child_ring(path);

	pin_cpu0();
	return ring && write_sized(ring, LAPPING_EVENTS + 100, 4, PAGEFUL) == 0 ? 0 : 1;
}

static int count_nothing(void *ctx, unsigned cpu, const void *page, size_t size)
{
	(void)ctx, (void)cpu, (void)page, (void)size;
	return 0;
}

/*
 * The stats of the region at path against its window: every committed
 * event is in the window or overwritten (the window's numbering gap), and
 * the counters must say so: entries what the window holds, overrun the gap.
 */
static int stats_balance(const char *path, uint64_t committed, const char *when)
{
	struct tb_cpu_stats st, sum = {0};
	struct tb_shm_window w = {0};
	struct tb_shm *rec;
	int good;

	if (tb_shm_load(path, &rec) < 0 || tb_shm_window(tb_shm_ring(rec), count_nothing, NULL, &w) < 0)
		return 0;
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(rec)); cpu++)
		if (tb_stats_read(tb_shm_ring(rec), cpu, &st) == 0)
			sum.written += st.written, sum.entries += st.entries, sum.overrun += st.overrun;
	good = sum.written == committed && sum.entries == w.events && sum.overrun == w.lost_before;
	ok(good, "%s: written %llu = entries %llu + overrun %llu; the window holds %llu after %llu lost", when,
	   (unsigned long long)sum.written, (unsigned long long)sum.entries, (unsigned long long)sum.overrun,
	   (unsigned long long)w.events, (unsigned long long)w.lost_before);
	tb_shm_close(rec);
	return good;
}

static void test_lapping_claim_killed(void)
{
	struct tb_shm *s = small_session();
	int status = s ? run_child(lapping_child, tb_shm_path(s)) : 0;

	ok(s && killed(status), "a writer killed between the claim of a page holding unread data and its section");
	if (!s)
		return;
	/* 4 PAGEFUL events a page: event LAPPING_EVENTS was the first of a page, the one that died */
	stats_balance(tb_shm_path(s), LAPPING_EVENTS, "claimed, no section entered it");
	status = run_child(entering_child, tb_shm_path(s));
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a second writer enters the claimed page");
	stats_balance(tb_shm_path(s), LAPPING_EVENTS + 4, "the page entered by another writer");
	tb_shm_close(s);
}

/* ------------------------------------------ a consumer killed in its commit */

/*
 * A consuming reader's commit (reader.c, R1-R3): the consumer dies at each
 * of its points, consuming a record (tb_consume), a closed page handed over
 * whole (tb_read_page) or the written part of the page a writer is on (a
 * copy).  Every point is past R1, so the consumption stands whole: the read
 * count, the window, the stats and the next consumer must all agree that
 * exactly those events were consumed - none counted twice, none lost.
 * Before the journal, a consumer killed between its position and its
 * count (TB_CP_READ_MOVED) left `read` short by what it had consumed.
 */
struct consume_case {
	const char *name;
	int by_page;      /* tb_read_page; else tb_consume */
	uint32_t len;     /* of each event */
	uint32_t total;   /* events written before the consumer starts */
	uint32_t before;  /* calls that complete before the one that dies */
	uint32_t consumed; /* events consumed once the dying call's commit stands */
};

static const struct consume_case consume_cases[] = {
    {"tb_consume, a record", 0, SMALL, 30, 5, 6},
    {"tb_read_page, a closed page whole", 1, PAGEFUL, 10, 1, 8},
    {"tb_read_page, the writer's page copied", 1, PAGEFUL, 10, 2, 10},
};
static const struct {
	int point;
	const char *name;
} consume_points[] = {
    {TB_CP_READ_JOURNALED, "journal stored, nothing moved"},
    {TB_CP_READ_MOVED, "position moved, count not stored"},
    {TB_CP_READ_COUNTED, "count stored, journal not cleared"},
};
static const struct consume_case *consume_now; /* the child's case and point, set before the fork */
static int consume_point;

/* One consuming call of the case's kind: 1 when it consumed something. */
static int consume_one(struct tb_ring *ring, const struct consume_case *cc)
{
	static uint8_t page[4096];
	struct tb_read_event ev;

	return cc->by_page ? tb_read_page(ring, 0, page, sizeof(page)) > 0 : tb_consume(ring, 0, &ev) == 1;
}

static int consuming_child(const char *path)
{
	struct tb_shm *s;

	if (tb_shm_attach(path, TB_SHM_READER, &s) < 0)
		return 1;
	for (uint32_t i = 0; i < consume_now->before; i++)
		if (!consume_one(tb_shm_ring(s), consume_now))
			return 2;
	tb__crash_sig = SIGKILL;
	tb__crash_at = consume_point;
	consume_one(tb_shm_ring(s), consume_now);
	return 3;
}

/* A consumer after the crash: every event left, each once, in order from first. */
static uint32_t consume_rest(const char *path, uint32_t first, uint32_t len, uint32_t *bad)
{
	uint8_t want[PAGEFUL];
	struct tb_read_event ev;
	struct tb_shm *s;
	uint32_t n = 0;

	if (tb_shm_attach(path, TB_SHM_READER, &s) < 0)
		return 0;
	while (tb_consume(tb_shm_ring(s), 0, &ev) == 1) {
		crash_fill(want, len, first + n);
		*bad += ev.kind != TB_READ_RECORD || ev.len < len || memcmp(ev.data, want, len);
		n++;
	}
	tb_shm_close(s);
	return n;
}

/* The region's copy (as recover takes it): its window, then its stats (the lock taken over from the dead). */
static void consumed_recovered(const char *path, const struct consume_case *cc, const char *when)
{
	struct tb_shm_window w = {0};
	struct tb_cpu_stats st = {0};
	struct tb_shm *rec;
	uint32_t left = cc->total - cc->consumed;

	if (tb_shm_load(path, &rec) < 0 || tb_shm_window(tb_shm_ring(rec), count_nothing, NULL, &w) < 0 ||
	    tb_stats_read(tb_shm_ring(rec), 0, &st) < 0) {
		ok(0, "%s: recovered", when);
		return;
	}
	ok(w.events == left && w.lost_before == 0,
	   "%s: the window holds the %u events not consumed (%llu, %llu lost before it)", when, left,
	   (unsigned long long)w.events, (unsigned long long)w.lost_before);
	ok(st.read == cc->consumed && st.entries == left && st.written == cc->total && st.overrun == 0,
	   "%s: read %llu (want %u), entries %llu (want %u), written %llu = entries + read", when,
	   (unsigned long long)st.read, cc->consumed, (unsigned long long)st.entries, left,
	   (unsigned long long)st.written);
	tb_shm_close(rec);
}

static void test_consumer_killed(const struct consume_case *cc, int point, const char *point_name)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_cpu_stats st = {0};
	struct tb_shm *s;
	char when[160];
	uint32_t bad = 0, rest;
	int status;

	snprintf(when, sizeof(when), "%s, killed at %s", cc->name, point_name);
	tb_ring_opts_default(&ro);
	ro.size_kb = 64;
	ro.ncpus = 1;
	if (tb_shm_open(&so, &s) < 0 || write_sized(tb_shm_ring(s), 0, cc->total, cc->len) < 0) {
		ok(0, "%s: a session written", when);
		return;
	}
	consume_now = cc;
	consume_point = point;
	status = run_child(consuming_child, tb_shm_path(s));
	ok(killed(status), "%s: the consumer died there", when);
	consumed_recovered(tb_shm_path(s), cc, when);
	rest = consume_rest(tb_shm_path(s), cc->consumed, cc->len, &bad);
	ok(rest == cc->total - cc->consumed && bad == 0,
	   "%s: the next consumer gets the %u others, from event %u on, each once (%u, %u wrong)", when,
	   cc->total - cc->consumed, cc->consumed, rest, bad);
	status = tb_stats_read(tb_shm_ring(s), 0, &st);
	ok(status == 0 && st.read == cc->total && st.entries == 0, "%s: then read %llu = written, entries 0", when,
	   (unsigned long long)st.read);
	tb_shm_close(s);
}

int main(void)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *probe;

	tb_ring_opts_default(&ro);
	ro.size_kb = 64;
	if (tb_shm_open(&so, &probe) < 0)
		skip_all("no shared memory");
	if (!tb_ring_uses_rseq(tb_shm_ring(probe))) {
		tb_shm_close(probe);
		skip_all("no rseq here: the fast path and the sections are not in use");
	}
	tb_shm_close(probe);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run(&scenarios[i]);
	test_two_processes_one_cpu();
	test_signal_nested();
	test_threads_killed();
	test_slot_reused();
	test_reservations();
	test_refused();
	test_table_full();
	test_lapping_claim_killed();
	for (size_t i = 0; i < sizeof(consume_cases) / sizeof(consume_cases[0]); i++)
		for (size_t k = 0; k < sizeof(consume_points) / sizeof(consume_points[0]); k++)
			test_consumer_killed(&consume_cases[i], consume_points[k].point, consume_points[k].name);
	return done_testing();
}
