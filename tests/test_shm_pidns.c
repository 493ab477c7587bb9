/*
 * Writers in containers: processes in different pid namespaces writing one
 * shared-memory ring are told apart, so the count of writes in flight that
 * crash recovery gives stays exact (src/ring/inflight.c, L1-L3;
 * docs/design.md §10).
 *
 * Each case runs three writers, each pid 2 and tid 2 of a pid namespace of
 * its own (unshare(CLONE_NEWPID) then fork, what `unshare -p -f` does; as
 * root, skipped without): the same pid and tid, the hard case.  A is live
 * and holds a reservation; B dies at one named point of the write path
 * (src/ring/crash_point.h) - each point in turn; C comes after B and
 * must take B's slot, never A's.  The table's other slots are held by this
 * process (their file locks taken), so B's and A's are the only two C can
 * choose from.  Recovery must give exactly the committed events and the
 * writes in flight: A's reservation and B's dying write if the point lies
 * between its count and its commit.
 *
 * Then a writer's forked child: alive, it must keep none of its dead
 * parent's slots (its inherited handle gets a number and a lock
 * description of its own).
 *
 * Then a signal handler's write forced into a thread's first write on a
 * ring, at each point of the slot claim and of tb_reserve's first mapping
 * of its scratch (the points raise the signal and go on): the records and
 * the count must be exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* In struct scenario (lib/crash_events.h), len, before, no_rseq, committed and in_flight are B's. */

#define SMALL 16
#define LARGE 200 /* above the fast path's 112 bytes */

static const struct scenario scenarios[] = {
    {"count stored", TB_CP_COUNTED, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: entered", TB_CP_FAST_ENTERED, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: fill stored", TB_CP_FAST_FILL, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: header stored", TB_CP_FAST_HEADER, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: payload stored", TB_CP_FAST_PAYLOAD, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: time stored", TB_CP_FAST_TIME, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 0, 1},
    {"fast path: committed", TB_CP_FAST_COMMITTED, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 0, 1, 0},
    {"general path: checked", TB_CP_GEN_CHECKED, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"general path: words stored", TB_CP_GEN_WORDS, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"general path: payload stored", TB_CP_GEN_PAYLOAD, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 0, 1},
    {"general path: committed", TB_CP_GEN_COMMITTED, API_WRITE, TB_CLOCK_TSC, LARGE, 10, 0, 1, 0},
    {"locked fallback: all but the tail word", TB_CP_LOCKED_STORES, API_WRITE, TB_CLOCK_TSC, SMALL, 10, 1, 0, 1},
    {"first write: slot locked, owner not stored", TB_CP_CLAIM_LOCKED, API_WRITE, TB_CLOCK_TSC, SMALL, 0, 0, 0, 0},
    {"first write: owner stored", TB_CP_CLAIM_OWNED, API_WRITE, TB_CLOCK_TSC, SMALL, 0, 0, 0, 0},
    {"first write: claim filed, not counted", TB_CP_CLAIM_FILED, API_WRITE, TB_CLOCK_TSC, SMALL, 0, 0, 0, 0},
    {"first reserve: scratch mapped", TB_CP_SCRATCH_MAPPED, API_RESERVE, TB_CLOCK_TSC, SMALL, 0, 0, 0, 0},
};

/* Event numbers: A's from 0, B's from B_FIRST, C's from C_FIRST; a signal handler's is HANDLER_EVENT. */
#define A_EVENTS 10u
#define B_FIRST 100u
#define C_FIRST 200u
#define C_EVENTS 5u
#define HANDLER_EVENT 50u
#define MAX_EVENT 256u

static int write_range(struct tb_ring *ring, uint32_t len, uint32_t first, uint32_t n)
{
	for (uint32_t i = first; i < first + n; i++)
		if (crash_write(ring, API_WRITE, len, i) < 0)
			return -1;
	return 0;
}

static void pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one); /* a machine with one CPU keeps them all on it */
}

static struct tb_ring *attach(const char *path)
{
	struct tb_shm *s;

	return tb_shm_attach(path, TB_SHM_WRITER, &s) < 0 ? NULL : tb_shm_ring(s);
}

/* ------------------------------------------------ writers in pid namespaces */

struct job {
	const char *path;
	const struct scenario *sc;
	struct tb_ring *creators; /* inherited: the locked fallback is a handle's choice */
	int ready;                /* write end: the writer's pid and tid, once it has written */
	int go;                   /* read end: A commits its reservation when a byte comes */
};

/* How a namespace's writer ended, as its namespace's maker exits. */
#define NS_KILLED 100    /* SIGKILL: died at its point */
#define NS_NO_UNSHARE 101 /* no new pid namespace here */
#define NS_FAILED 102

static void say_ready(const struct job *j)
{
	uint32_t id[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};

	if (j->ready >= 0 && write(j->ready, id, sizeof(id)) != (ssize_t)sizeof(id))
		_exit(NS_FAILED);
}

static int writer_a(const struct job *j)
{
	struct tb_ring *ring = attach(j->path);
	char go;
	void *held;

	pin_to(1); /* B's page-switch points count on CPU 0's buffer being B's alone */
	if (!ring || write_range(ring, SMALL, 0, A_EVENTS) < 0 || !(held = tb_reserve(ring, SMALL)))
		return 1;
	crash_fill(held, SMALL, A_EVENTS);
	say_ready(j);
	if (read(j->go, &go, 1) != 1)
		return 2;
	return tb_commit(ring, held) < 0 ? 3 : 0;
}

static int writer_b(const struct job *j)
{
	const struct scenario *sc = j->sc;
	struct tb_ring *ring = sc->no_rseq ? j->creators : attach(j->path);

	pin_to(0);
	if (!ring)
		return 1;
	for (uint32_t i = 0; i < sc->before; i++)
		if (crash_write(ring, sc->api, sc->len, B_FIRST + i) < 0)
			return 2;
	say_ready(j);
	tb__crash_sig = SIGKILL;
	tb__crash_at = sc->point;
	crash_write(ring, sc->api, sc->len, B_FIRST + sc->before);
	return 3; /* the point was not reached */
}

static int writer_c(const struct job *j)
{
	struct tb_ring *ring = attach(j->path);

	if (!ring || write_range(ring, SMALL, C_FIRST, C_EVENTS) < 0)
		return 1;
	say_ready(j);
	return 0;
}

/*
 * fn(j) as pid 2 of a new pid namespace, whose pid 1 waits for it: what
 * `unshare -p -f` does, and a container's first process after its init.
 * Returns the pid of the namespace's maker (our child), which exits with
 * the writer's exit code, NS_KILLED, or NS_NO_UNSHARE.
 */
static pid_t in_new_pidns(int (*fn)(const struct job *), const struct job *j)
{
	pid_t maker, init, w;
	int st;

	fflush(stdout);
	if ((maker = fork()) != 0)
		return maker;
	if (unshare(CLONE_NEWPID) < 0)
		_exit(NS_NO_UNSHARE);
	if ((init = fork()) < 0)
		_exit(NS_FAILED);
	if (init == 0) {
		if ((w = fork()) == 0)
			_exit(fn(j));
		if (w < 0 || waitpid(w, &st, 0) != w)
			_exit(NS_FAILED);
		_exit(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? NS_KILLED : WIFEXITED(st) ? WEXITSTATUS(st) : NS_FAILED);
	}
	if (waitpid(init, &st, 0) != init)
		_exit(NS_FAILED);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : NS_FAILED);
}

static int ns_exit(pid_t maker)
{
	int st;

	if (maker < 0 || waitpid(maker, &st, 0) != maker)
		return NS_FAILED;
	return WIFEXITED(st) ? WEXITSTATUS(st) : NS_FAILED;
}

/* A writer started in its namespace; its pid and tid there, once it said it is ready (0, 0 if it never did). */
struct started {
	pid_t maker;
	uint32_t id[2];
};

static struct started start(int (*fn)(const struct job *), struct job *j)
{
	struct started w = {-1, {0, 0}};
	int p[2];

	if (pipe(p) < 0)
		return w;
	j->ready = p[1];
	w.maker = in_new_pidns(fn, j);
	close(p[1]); /* ours closed: a writer that dies before it is ready gives end of file, not a hang */
	if (read(p[0], w.id, sizeof(w.id)) != (ssize_t)sizeof(w.id))
		w.id[0] = w.id[1] = 0;
	close(p[0]);
	return w;
}

/* ------------------------------------------------ the region's table, as this process sees it */

/* A live owner from this process, as a writer with a file would store it (inflight.c). */
#define HOLDER_OWNER (TB_OWNER_LOCKED | (uint64_t)0x7ffffff0u << 32 | 7u)

/* Slots from..TB_THREAD_SLOTS-1 held by this (live) process: their locks taken, their owners preset. */
static int hold_slots_from(struct table_map *m, unsigned from)
{
	for (unsigned i = from; i < TB_THREAD_SLOTS; i++) {
		if (crash_lock_slot(m, i) < 0)
			return 0;
		atomic_store(&m->t->slot[i].owner, HOLDER_OWNER);
	}
	return 1;
}

static int held_slots_intact(const struct table_map *m, unsigned from)
{
	for (unsigned i = from; i < TB_THREAD_SLOTS; i++)
		if (atomic_load(&m->t->slot[i].owner) != HOLDER_OWNER || m->t->slot[i].begun)
			return 0;
	return 1;
}

static uint64_t table_sum(const struct table_map *m)
{
	uint64_t sum = atomic_load(&m->t->shared_begun);

	for (unsigned i = 0; i < TB_THREAD_SLOTS; i++)
		sum += m->t->slot[i].begun;
	return sum;
}

/* ------------------------------------------------ recovery */

/* The events recovery must hand over: want[i] = payload length of event i, 0 for none. */
struct seen {
	uint32_t want[MAX_EVENT];
	uint32_t got[MAX_EVENT];
	uint32_t count, bad;
};

static void check_record(void *ctx, const struct tb_record *rec)
{
	struct seen *sn = ctx;
	uint8_t want[LARGE];
	uint32_t i;

	sn->count++;
	if (rec->len < 4 || (memcpy(&i, rec->data, 4), i >= MAX_EVENT) || !sn->want[i] || rec->len < sn->want[i]) {
		sn->bad++;
		return;
	}
	crash_fill(want, sn->want[i], i);
	sn->bad += memcmp(rec->data, want, sn->want[i]) != 0 || sn->got[i]++;
}

static int check_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct seen *sn = ctx;

	(void)cpu;
	sn->bad += crash_page_records(page, size, check_record, sn);
	return 0;
}

static void want_range(struct seen *sn, uint32_t first, uint32_t n, uint32_t len)
{
	for (uint32_t i = first; i < first + n; i++)
		sn->want[i] = len;
}

/*
 * Recovered as `tracebuf recover` does: every wanted event once, intact,
 * nothing else; *in_flight the exact count (UINT64_MAX if not exact).
 */
static int recovered(const char *path, struct seen *sn, uint64_t *in_flight)
{
	struct tb_shm_window w;
	struct tb_shm *rec;
	uint32_t wanted = 0;
	int good;

	memset(sn->got, 0, sizeof(sn->got));
	sn->count = sn->bad = 0;
	*in_flight = UINT64_MAX;
	if (tb_shm_load(path, &rec) < 0)
		return 0;
	good = tb_shm_window(tb_shm_ring(rec), check_page, sn, &w) == 0 && w.bad == 0 && w.lost_before == 0;
	tb_shm_close(rec);
	for (uint32_t i = 0; i < MAX_EVENT; i++) {
		wanted += sn->want[i] != 0;
		good &= sn->got[i] == (sn->want[i] != 0);
	}
	if (w.in_flight_exact)
		*in_flight = w.in_flight;
	return good && sn->bad == 0 && sn->count == wanted && w.events == wanted;
}

/* ------------------------------------------------ one crash point, three namespaces */

static struct tb_shm *session(const struct scenario *sc)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s;

	tb_ring_opts_default(&ro);
	ro.size_kb = 64;
	ro.clock = sc->clock;
	ro.no_rseq = sc->no_rseq;
	return tb_shm_open(&so, &s) < 0 ? NULL : s;
}

static int same_ids(const struct started *w)
{
	return w->id[0] == 2 && w->id[1] == 2;
}

static void run(const struct scenario *sc)
{
	struct tb_shm *s = session(sc);
	struct table_map m = {.fd = -1};
	struct job j = {.sc = sc};
	struct started a, b, c;
	static struct seen sn;
	uint64_t owner_a, owner_b, owner_c, in_flight;
	uint64_t begun_b = sc->before + (uint64_t)sc->in_flight + (uint64_t)sc->committed;
	int go[2] = {-1, -1}, b_end, c_end, a_end, good;

	if (!s || !crash_map_table(tb_shm_path(s), &m) || !hold_slots_from(&m, 2) || pipe(go) < 0) {
		ok(0, "%s: a session, its slots 2.. held by this process", sc->name);
		crash_unmap_table(&m);
		tb_shm_close(s);
		return;
	}
	j.path = tb_shm_path(s);
	j.creators = tb_shm_ring(s);
	j.go = go[0];
	a = start(writer_a, &j);
	owner_a = atomic_load(&m.t->slot[0].owner);
	b = start(writer_b, &j);
	b_end = ns_exit(b.maker);
	owner_b = atomic_load(&m.t->slot[1].owner);
	c = start(writer_c, &j);
	c_end = ns_exit(c.maker);
	owner_c = atomic_load(&m.t->slot[1].owner);

	ok(same_ids(&a) && same_ids(&b) && same_ids(&c) && b_end == NS_KILLED && c_end == 0,
	   "%s: A, B, C all pid 2, tid 2 (%u/%u, %u/%u, %u/%u); B died at its point (%d), C wrote (%d)", sc->name,
	   a.id[0], a.id[1], b.id[0], b.id[1], c.id[0], c.id[1], b_end, c_end);
	ok(owner_a && (uint32_t)owner_a == 2 && atomic_load(&m.t->slot[0].owner) == owner_a &&
	       m.t->slot[0].begun == A_EVENTS + 1 && held_slots_intact(&m, 2),
	   "%s: live A's slot never taken (its %llu writes begun), nor this process's", sc->name,
	   (unsigned long long)m.t->slot[0].begun);
	ok(owner_c != owner_b && owner_c != owner_a && (uint32_t)owner_c == 2 && (owner_c & TB_OWNER_LOCKED) &&
	       m.t->slot[1].begun == begun_b + C_EVENTS && atomic_load(&m.t->shared_begun) == 0,
	   "%s: dead B's slot found and taken by C, B's %llu writes begun kept (%llu)", sc->name,
	   (unsigned long long)begun_b, (unsigned long long)m.t->slot[1].begun);

	memset(&sn, 0, sizeof(sn));
	want_range(&sn, 0, A_EVENTS, SMALL);
	want_range(&sn, B_FIRST, sc->before + (uint32_t)sc->committed, sc->len);
	want_range(&sn, C_FIRST, C_EVENTS, SMALL);
	good = recovered(tb_shm_path(s), &sn, &in_flight);
	ok(good && in_flight == 1 + (uint64_t)sc->in_flight,
	   "%s: with A live, the committed events recovered, exactly %d in flight (%llu)", sc->name,
	   1 + sc->in_flight, (unsigned long long)in_flight);

	if (write(go[1], "g", 1) != 1)
		diag("could not tell A to go on");
	a_end = ns_exit(a.maker);
	want_range(&sn, A_EVENTS, 1, SMALL);
	good = recovered(tb_shm_path(s), &sn, &in_flight);
	ok(a_end == 0 && good && in_flight == (uint64_t)sc->in_flight &&
	       table_sum(&m) == A_EVENTS + 1 + begun_b + C_EVENTS,
	   "%s: A committed its reservation (%d): exactly %d in flight (%llu)", sc->name, a_end, sc->in_flight,
	   (unsigned long long)in_flight);
	close(go[0]);
	close(go[1]);
	crash_unmap_table(&m);
	tb_shm_close(s);
}

/* ------------------------------------------------ a signal handler's write in a thread's first */

struct race {
	const char *name;
	int point;
	enum api api; /* the thread's first write */
};

static const struct race races[] = {
    {"tb_write: slot locked, owner not stored", TB_CP_CLAIM_LOCKED, API_WRITE},
    {"tb_write: owner stored, claim not filed", TB_CP_CLAIM_OWNED, API_WRITE},
    {"tb_write: claim filed, not counted", TB_CP_CLAIM_FILED, API_WRITE},
    {"tb_reserve: slot locked, owner not stored", TB_CP_CLAIM_LOCKED, API_RESERVE},
    {"tb_reserve: owner stored, claim not filed", TB_CP_CLAIM_OWNED, API_RESERVE},
    {"tb_reserve: claim filed, not counted", TB_CP_CLAIM_FILED, API_RESERVE},
    {"tb_reserve: scratch mapped, not installed", TB_CP_SCRATCH_MAPPED, API_RESERVE},
};

/* TSan runs a handler only at its next intercepted call, not where the point raised it. */
#if defined(__SANITIZE_THREAD__)
#define SIGNALS_DEFERRED 1
#else
#define SIGNALS_DEFERRED 0
#endif

#define RACE_EVENTS 10u
static struct tb_ring *race_ring;
static volatile sig_atomic_t handler_wrote;

/* The handler's write: a reservation, its own first on the ring, nested in the thread's. */
static void write_in_handler(int sig)
{
	(void)sig;
	handler_wrote = crash_write(race_ring, API_RESERVE, SMALL, HANDLER_EVENT) == 0 ? 1 : -1;
}

/*
 * The thread's first write meets the point, which raises SIGUSR1: the
 * handler writes there.  Then RACE_EVENTS - 1 more, a reservation held,
 * and the process dies.  Exit codes: what went wrong.
 */
static int race_child(const char *path, const struct race *rc)
{
	struct sigaction sa = {.sa_handler = write_in_handler};
	void *held;

	if (!(race_ring = attach(path)))
		return 1;
	sigaction(SIGUSR1, &sa, NULL);
	tb__point_signal = SIGUSR1;
	tb__crash_at = rc->point;
	if (crash_write(race_ring, rc->api, SMALL, 0) < 0)
		return 2;
	if (handler_wrote != 1)
		return handler_wrote ? 3 : 4; /* 4: the point was not reached */
	if (write_range(race_ring, SMALL, 1, RACE_EVENTS - 1) < 0 || !(held = tb_reserve(race_ring, SMALL)))
		return 5;
	crash_fill(held, SMALL, 9999);
	kill(getpid(), SIGKILL);
	return 6;
}

static void run_race(const struct race *rc)
{
	struct tb_shm *s = session(&scenarios[0]);
	struct table_map m = {.fd = -1};
	static struct seen sn;
	uint64_t in_flight;
	int st = 0, good;
	pid_t pid;

	if (!s || !crash_map_table(tb_shm_path(s), &m)) {
		ok(0, "%s: a session", rc->name);
		tb_shm_close(s);
		return;
	}
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(race_child(tb_shm_path(s), rc));
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: the handler wrote at the point, the writer then died (exit %d)",
	   rc->name, WIFEXITED(st) ? WEXITSTATUS(st) : 0);
	memset(&sn, 0, sizeof(sn));
	want_range(&sn, 0, RACE_EVENTS, SMALL);
	want_range(&sn, HANDLER_EVENT, 1, SMALL);
	good = recovered(tb_shm_path(s), &sn, &in_flight);
	ok(good && in_flight == 1,
	   "%s: the thread's %u events and the handler's recovered, exactly 1 in flight (%llu)", rc->name,
	   RACE_EVENTS, (unsigned long long)in_flight);
	ok(table_sum(&m) == RACE_EVENTS + 2 && atomic_load(&m.t->shared_begun) == 0,
	   "%s: the table counts every write begun once, in the thread's slots (%llu)", rc->name,
	   (unsigned long long)table_sum(&m));
	crash_unmap_table(&m);
	tb_shm_close(s);
}

/* ------------------------------------------------ a forked child keeps none of its parent's slots */

/*
 * P writes (its slot), forks Q, which writes through the handle it
 * inherited (a slot, a number and a file description of its own) and
 * waits.  The test kills P: with Q alive, P's slot must be found dead.
 */
static int forked_q(struct tb_ring *ring, int ready, int go)
{
	char c;

	if (write_range(ring, SMALL, B_FIRST, C_EVENTS) < 0 || write(ready, "q", 1) != 1)
		return 1;
	return read(go, &c, 1) == 1 ? 0 : 2;
}

static int forking_p(const char *path, int ready, int go)
{
	struct tb_ring *ring = attach(path);

	if (!ring || write_range(ring, SMALL, 0, A_EVENTS) < 0)
		return 1;
	fflush(stdout);
	if (fork() == 0)
		_exit(forked_q(ring, ready, go));
	for (;;)
		pause(); /* until the test kills it; Q, reparented, goes on */
}

/* fn(j) in a child process (no new namespace): its exit code. */
static int run_plain(int (*fn)(const struct job *), const struct job *j)
{
	int st;
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(fn(j));
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_fork_child(void)
{
	struct tb_shm *s = session(&scenarios[0]);
	struct table_map m = {.fd = -1};
	struct job j = {0};
	static struct seen sn;
	uint64_t owner_p, owner_q, in_flight;
	int ready[2] = {-1, -1}, go[2] = {-1, -1}, good, r_end;
	char c = 0;
	pid_t p = -1;

	if (!s || !crash_map_table(tb_shm_path(s), &m) || !hold_slots_from(&m, 2) || pipe(ready) < 0 || pipe(go) < 0) {
		ok(0, "a session, its slots 2.. held by this process");
		goto out;
	}
	fflush(stdout);
	if ((p = fork()) == 0)
		_exit(forking_p(tb_shm_path(s), ready[1], go[0]));
	close(ready[1]);
	ready[1] = -1;
	good = read(ready[0], &c, 1) == 1;
	owner_p = atomic_load(&m.t->slot[0].owner);
	owner_q = atomic_load(&m.t->slot[1].owner);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	j.path = tb_shm_path(s);
	j.ready = -1;
	r_end = run_plain(writer_c, &j);
	ok(good && owner_p && owner_q && owner_p >> 32 != owner_q >> 32 && r_end == 0,
	   "P wrote, its forked child Q wrote through the inherited handle with a number of its own; P killed, R wrote");
	ok(atomic_load(&m.t->slot[0].owner) != owner_p && m.t->slot[0].begun == A_EVENTS + C_EVENTS &&
	       atomic_load(&m.t->slot[1].owner) == owner_q && m.t->slot[1].begun == C_EVENTS &&
	       atomic_load(&m.t->shared_begun) == 0 && held_slots_intact(&m, 2),
	   "with Q alive, dead P's slot was found and taken by R; live Q's was not (%llu, %llu)",
	   (unsigned long long)m.t->slot[0].begun, (unsigned long long)m.t->slot[1].begun);
	if (write(go[1], "g", 1) != 1)
		diag("could not tell Q to go on");
	memset(&sn, 0, sizeof(sn));
	want_range(&sn, 0, A_EVENTS, SMALL);
	want_range(&sn, B_FIRST, C_EVENTS, SMALL);
	want_range(&sn, C_FIRST, C_EVENTS, SMALL);
	good = recovered(tb_shm_path(s), &sn, &in_flight);
	ok(good && in_flight == 0, "every event of P, Q and R recovered, none in flight (%llu)", (unsigned long long)in_flight);
out:
	for (int k = 0; k < 2; k++) {
		if (ready[k] >= 0)
			close(ready[k]);
		if (go[k] >= 0)
			close(go[k]);
	}
	crash_unmap_table(&m);
	tb_shm_close(s);
}

/* ------------------------------------------------ a writer whose descriptors were all closed */

/*
 * Attached, then every descriptor from 3 on closed and its number taken by
 * another file (as a daemon may do), then its first write: locks taken on
 * that file would say nothing of the slots.
 */
static int descriptors_replaced(const struct job *j)
{
	struct tb_ring *ring = attach(j->path);
	int other = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (!ring || other < 0)
		return 1;
	for (int fd = 3; fd < 256; fd++)
		if (fd != other)
			dup2(other, fd); /* closes whatever fd was */
	return write_range(ring, SMALL, 0, C_EVENTS) < 0 ? 2 : 0;
}

static void test_descriptors_replaced(void)
{
	struct tb_shm *s = session(&scenarios[0]);
	struct table_map m = {.fd = -1};
	struct job j = {0};
	static struct seen sn;
	uint64_t in_flight;
	int end, good;

	if (!s || !crash_map_table(tb_shm_path(s), &m) || !hold_slots_from(&m, 0)) {
		ok(0, "a session, every slot held by this process");
		crash_unmap_table(&m);
		tb_shm_close(s);
		return;
	}
	j.path = tb_shm_path(s);
	j.ready = -1;
	end = run_plain(descriptors_replaced, &j);
	ok(end == 0 && held_slots_intact(&m, 0) && atomic_load(&m.t->shared_begun) == C_EVENTS,
	   "a writer whose lock descriptor became another file takes no live slot: its %u writes in the shared word (%llu)",
	   C_EVENTS, (unsigned long long)atomic_load(&m.t->shared_begun));
	memset(&sn, 0, sizeof(sn));
	want_range(&sn, 0, C_EVENTS, SMALL);
	good = recovered(tb_shm_path(s), &sn, &in_flight);
	ok(good && in_flight == 0, "its events recovered, none in flight (%llu)", (unsigned long long)in_flight);
	crash_unmap_table(&m);
	tb_shm_close(s);
}

/* ------------------------------------------------ */

static int is_pid_2(const struct job *j)
{
	(void)j;
	return getpid() == 2 ? 0 : 1;
}

/* Whether a new pid namespace can be made here, its second process pid 2. */
static int pidns_available(void)
{
	struct job j = {0};

	return ns_exit(in_new_pidns(is_pid_2, &j)) == 0;
}

int main(void)
{
	struct tb_shm *probe = session(&scenarios[0]);

	if (!probe)
		skip_all("no shared memory");
	if (!tb_ring_uses_rseq(tb_shm_ring(probe))) {
		tb_shm_close(probe);
		skip_all("no rseq here: the fast path and the sections are not in use");
	}
	tb_shm_close(probe);
	alarm(300); /* a writer that never says it is ready must fail the test, not hang it */
	if (!pidns_available()) {
		skip(5 * (int)(sizeof(scenarios) / sizeof(scenarios[0])),
		     "no new pid namespace here (unshare(CLONE_NEWPID) needs root)");
	} else {
		for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
			run(&scenarios[i]);
	}
	test_fork_child();
	test_descriptors_replaced();
	if (SIGNALS_DEFERRED)
		skip(3 * (int)(sizeof(races) / sizeof(races[0])), "ThreadSanitizer defers signal handlers");
	else
		for (size_t i = 0; i < sizeof(races) / sizeof(races[0]); i++)
			run_race(&races[i]);
	return done_testing();
}
