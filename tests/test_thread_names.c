/*
 * The thread names a ring in shared memory keeps for `tracebuf record`
 * (tb_ring_thread_names, docs/design.md section 10): each slot of the
 * thread table names its last two claimers, with the name each had at its
 * first write, also after they exited - threads of one handle reuse their
 * slot, so six threads one after the other leave exactly the last two.
 * Then a reader reads the names while short-lived threads claim and reuse
 * slots: every (tid, name) pair it gets must be one a thread really had
 * (never a tid with another thread's name, never a torn name).  Run under
 * TSan too (make test-tsan), which checks the protocol's orderings.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/ring.h"
#include "tracebuf/shm.h"

#define SEQUENTIAL 6
#define CHURN 400   /* threads made while the reader reads */
#define AT_ONCE 4   /* of them alive together */

static struct tb_ring *writer_ring;

/* What each thread was: its tid (0 until it stored it, before its first write) and name. */
static _Atomic int32_t tids[CHURN];

struct seen {
	int32_t tid[2 * SEQUENTIAL];
	char name[2 * SEQUENTIAL][17];
	int n;
};

static void collect(void *arg, int32_t tid, const char *name)
{
	struct seen *s = arg;

	if (s->n < 2 * SEQUENTIAL) {
		s->tid[s->n] = tid;
		snprintf(s->name[s->n], sizeof(s->name[s->n]), "%s", name);
	}
	s->n++;
}

/* A thread named "PREFIX-K" (K = its index) that stores its tid, writes one record and ends. */
struct named_thread {
	const char *prefix;
	int index;
};

static void *write_once(void *arg)
{
	const struct named_thread *t = arg;
	char name[16];
	uint64_t payload = (uint64_t)t->index;

	snprintf(name, sizeof(name), "%s-%d", t->prefix, t->index);
	pthread_setname_np(pthread_self(), name);
	/* release: the reader that finds this tid in the table (named at our first write, after this) sees it */
	atomic_store_explicit(&tids[t->index], (int32_t)syscall(SYS_gettid), memory_order_release);
	tb_write(writer_ring, &payload, sizeof(payload));
	return NULL;
}

static int run_thread(const char *prefix, int index, pthread_t *th, struct named_thread *t)
{
	*t = (struct named_thread){prefix, index};
	return pthread_create(th, NULL, write_once, t);
}

/* Six threads one after the other: the slot they share names the last two. */
static void test_last_two(void)
{
	struct seen s = {0};
	int ok_names = 1, found[2] = {0, 0};

	for (int i = 0; i < SEQUENTIAL; i++) {
		pthread_t th;
		struct named_thread t;
		if (run_thread("seq", i, &th, &t) != 0)
			ok_names = 0;
		else
			pthread_join(th, NULL);
	}
	int got = tb_ring_thread_names(writer_ring, collect, &s);

	ok(got == 2 && s.n == 2, "six threads in turn on one handle: the table names two (%d)", s.n);
	for (int k = 0; k < s.n && k < 2; k++)
		for (int want = SEQUENTIAL - 2; want < SEQUENTIAL; want++) {
			char name[17];
			snprintf(name, sizeof(name), "seq-%d", want);
			if (!strcmp(s.name[k], name) && s.tid[k] == atomic_load(&tids[want]))
				found[want - (SEQUENTIAL - 2)] = 1;
		}
	ok(ok_names && found[0] && found[1], "the last two, each with its own tid, after both exited (%s, %s)",
	   s.n > 0 ? s.name[0] : "-", s.n > 1 ? s.name[1] : "-");
}

/* ------------------------------------------------ names read while slots change */

static atomic_bool churning;
static atomic_long pairs_seen, pairs_wrong;

static void check_pair(void *arg, int32_t tid, const char *name)
{
	int index;

	(void)arg;
	atomic_fetch_add(&pairs_seen, 1);
	if (strncmp(name, "seq-", 4) == 0)
		return; /* the first test's threads: checked there */
	/* acquire: pairs with the thread's release store of its tid */
	if (sscanf(name, "churn-%d", &index) != 1 || index < 0 || index >= CHURN ||
	    atomic_load_explicit(&tids[index], memory_order_acquire) != tid) {
		atomic_fetch_add(&pairs_wrong, 1);
		fprintf(stderr, "# wrong pair: tid %d name '%s'\n", (int)tid, name);
	}
}

static void *reader(void *arg)
{
	long rounds = 0;

	(void)arg;
	while (atomic_load(&churning) || rounds == 0) {
		tb_ring_thread_names(writer_ring, check_pair, NULL);
		rounds++;
	}
	return (void *)rounds;
}

static void test_read_while_claimed(void)
{
	pthread_t r, th[AT_ONCE];
	struct named_thread t[AT_ONCE];
	void *rounds = NULL;

	for (int i = 0; i < CHURN; i++)
		atomic_store(&tids[i], 0);
	atomic_store(&churning, true);
	pthread_create(&r, NULL, reader, NULL);
	for (int i = 0; i < CHURN; i += AT_ONCE) {
		int started = 0;
		for (int k = 0; k < AT_ONCE && i + k < CHURN; k++)
			started += run_thread("churn", i + k, &th[k], &t[k]) == 0;
		for (int k = 0; k < started; k++)
			pthread_join(th[k], NULL);
	}
	atomic_store(&churning, false);
	pthread_join(r, &rounds);
	ok(atomic_load(&pairs_seen) > 0 && atomic_load(&pairs_wrong) == 0,
	   "%d threads claiming and reusing slots under a reader: %ld names read in %ld rounds, %ld wrong", CHURN,
	   atomic_load(&pairs_seen), (long)rounds, atomic_load(&pairs_wrong));
}

int main(void)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *creator = NULL, *writer = NULL;
	struct tb_ring *heap = NULL;
	int n;

	tb_ring_opts_default(&ro);
	ro.size_kb = 64;
	if (tb_shm_open(&so, &creator) < 0 || tb_shm_attach(tb_shm_path(creator), TB_SHM_WRITER, &writer) < 0) {
		skip_all("cannot make a ring in shared memory");
		return 0;
	}
	writer_ring = tb_shm_ring(writer);
	test_last_two();
	test_read_while_claimed();

	ok(tb_ring_thread_names(NULL, check_pair, NULL) == -EINVAL && tb_ring_thread_names(writer_ring, NULL, NULL) == -EINVAL,
	   "a NULL ring or function: -EINVAL");
	n = tb_ring_new(&heap, NULL) == 0 ? tb_ring_thread_names(heap, check_pair, NULL) : -1;
	ok(n == 0, "a ring no thread wrote to: no names (%d)", n);
	tb_ring_free(heap);
	tb_shm_close(writer);
	tb_shm_close(creator);
	return done_testing();
}
