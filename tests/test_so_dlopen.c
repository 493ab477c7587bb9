/*
 * libtracebuf.so loaded by dlopen into a program not linked with it: the
 * library reads tb_write's TLS word with the initial-exec model, which
 * needs the library's whole TLS in glibc's small static surplus, so this
 * fails if its TLS grows (tb_reserve's 20 KiB of scratch once was in it:
 * "cannot allocate memory in static TLS block").  Then it writes: tb_write
 * and tb_reserve/tb_commit from threads whose scratch is mapped on first
 * use and unmapped at exit, one thread leaving a reservation open, and the
 * window's counts and exact in-flight count are checked against what the
 * threads did.  Threads made one after another must not leave their
 * scratch mapped (20 KiB each).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tap.h"
#include "tracebuf/ring.h"
#include "tracebuf/shm.h"

static struct {
	void (*opts_default)(struct tb_ring_opts *);
	int (*shm_create)(const struct tb_shm_opts *, struct tb_shm **);
	struct tb_ring *(*shm_ring)(const struct tb_shm *);
	void (*shm_close)(struct tb_shm *);
	int (*window)(struct tb_ring *, tb_shm_page_fn *, void *, struct tb_shm_window *);
	int (*write)(struct tb_ring *, const void *, uint32_t);
	void *(*reserve)(struct tb_ring *, uint32_t);
	int (*commit)(struct tb_ring *, void *);
	void (*discard)(struct tb_ring *, void *);
	void (*thread_init)(void);
} tb;

static struct tb_ring *ring;

enum { MAIN_WRITES = 500, THREAD_WRITES = 300, THREAD_COMMITS = 200, SERIAL_THREADS = 200 };

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p)
		diag("dlsym %s: %s", name, dlerror());
	return p;
}

static int write_n(int n)
{
	int fails = 0;

	for (uint64_t i = 0; i < (uint64_t)n; i++)
		fails += tb.write(ring, &i, sizeof(i)) != 0;
	return fails;
}

/* THREAD_WRITES writes, THREAD_COMMITS reservations committed, one left open at exit. */
static void *writer(void *arg)
{
	long fails = write_n(THREAD_WRITES);

	(void)arg;
	for (int i = 0; i < THREAD_COMMITS; i++) {
		uint64_t *p = tb.reserve(ring, sizeof(*p));
		if (!p) {
			fails++;
			continue;
		}
		*p = (uint64_t)i;
		fails += tb.commit(ring, p) != 0;
	}
	fails += tb.reserve(ring, 8) == NULL; /* in flight: never committed */
	return (void *)fails;
}

/* tb_ring_thread_init, then a reservation dropped: nothing written, nothing in flight. */
static void *discarder(void *arg)
{
	void *p;

	(void)arg;
	tb.thread_init();
	p = tb.reserve(ring, 16);
	if (p)
		tb.discard(ring, p);
	return (void *)(long)(p == NULL);
}

/* One reservation committed: the thread's scratch is mapped, then unmapped at its exit. */
static void *one_commit(void *arg)
{
	uint32_t *p = tb.reserve(ring, sizeof(*p));

	(void)arg;
	if (!p)
		return (void *)1L;
	*p = 7;
	return (void *)(long)(tb.commit(ring, p) != 0);
}

static long run(void *(*fn)(void *))
{
	pthread_t t;
	void *rc = (void *)-1L;

	if (pthread_create(&t, NULL, fn, NULL) == 0)
		pthread_join(t, &rc);
	return (long)rc;
}

/* The process's mapped size, in KiB (VmSize of /proc/self/status). */
static long vm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int count_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	(void)ctx, (void)cpu, (void)page, (void)size;
	return 0;
}

int main(void)
{
	const char *build = getenv("TB_BUILD");
	char path[4096];
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {0};
	struct tb_shm *shm = NULL;
	struct tb_shm_window w;
	long fails, before, after;
	void *lib;

	snprintf(path, sizeof(path), "%s/libtracebuf.so", build ? build : "build");
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!ok(lib != NULL, "dlopen %s", path)) {
		diag("%s", dlerror());
		return done_testing();
	}
	tb.opts_default = sym(lib, "tb_ring_opts_default");
	tb.shm_create = sym(lib, "tb_shm_open");
	tb.shm_ring = sym(lib, "tb_shm_ring");
	tb.shm_close = sym(lib, "tb_shm_close");
	tb.window = sym(lib, "tb_shm_window");
	tb.write = sym(lib, "tb_write");
	tb.reserve = sym(lib, "tb_reserve");
	tb.commit = sym(lib, "tb_commit");
	tb.discard = sym(lib, "tb_discard");
	tb.thread_init = sym(lib, "tb_ring_thread_init");
	if (!ok(tb.opts_default && tb.shm_create && tb.shm_ring && tb.shm_close && tb.window && tb.write &&
			tb.reserve && tb.commit && tb.discard && tb.thread_init,
		"the API is there"))
		return done_testing();

	tb.opts_default(&ro);
	ro.size_kb = 256; /* room for every event: nothing overwritten */
	so.ring = &ro;
	if (!ok(tb.shm_create(&so, &shm) == 0, "a memfd ring"))
		return done_testing();
	ring = tb.shm_ring(shm);

	is_int(write_n(MAIN_WRITES), 0, "the main thread's %d writes through the dlopen'ed library", MAIN_WRITES);
	is_int(run(writer), 0, "a thread: %d writes, %d reservations committed, one left open", THREAD_WRITES,
	       THREAD_COMMITS);
	is_int(run(discarder), 0, "a thread: tb_ring_thread_init, a reservation discarded");

	fails = run(one_commit); /* the first thread's stack, cached by glibc from here on */
	before = vm_kb();
	for (int i = 0; i < SERIAL_THREADS; i++)
		fails += run(one_commit);
	after = vm_kb();
	is_int(fails, 0, "%d threads one after another: one reservation committed each", SERIAL_THREADS + 1);
	ok(before > 0 && after - before < SERIAL_THREADS * 20 / 4, "their scratch unmapped at exit: %ld KiB -> %ld KiB",
	   before, after);

	memset(&w, 0, sizeof(w));
	is_int(tb.window(ring, count_page, NULL, &w), 0, "the window read");
	is_int(w.events, MAIN_WRITES + THREAD_WRITES + THREAD_COMMITS + SERIAL_THREADS + 1, "every event in it");
	is_int(w.in_flight, 1, "one write in flight: the reservation left open");
	is_int(w.in_flight_exact, 1, "counted exactly");
	tb.shm_close(shm);
	return done_testing();
}
