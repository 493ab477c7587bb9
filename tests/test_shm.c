/*
 * Rings in shared memory (tracebuf/shm.h): made, sealed and permissioned as
 * promised; written by several processes at once and consumed by another
 * with nothing lost or reordered; and read by a consumer that trusts
 * nothing - hostile headers refused with the field named, a header
 * scribbled after attach ignored, control blocks scribbled (in a file, and
 * concurrently under a live reader) costing data but never a stray read;
 * a named file truncated under a reader is an error naming it, not SIGBUS.
 * Run under ASan too, which is what makes "never a stray read" a check.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/tap.h"
#include "lib/xorshift.h"
#include "ring/ring_layout.h"
#include "tracebuf/reader.h"
#include "tracebuf/shm.h"
#include "tracebuf/stats.h"

#define WRITERS 3
#define PER_WRITER 200000u

struct rec {
	uint32_t writer;
	uint32_t n;
};

static char dir[] = "/tmp/tb-test-shm-XXXXXX";

static void path_in_dir(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

static struct tb_ring_opts small_opts(size_t kb, int overwrite)
{
	struct tb_ring_opts o;

	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.overwrite = overwrite;
	return o;
}

/* ---------------------------------------------------------- creation */

static void test_memfd_sealed_private(void)
{
	struct tb_ring_opts ro = small_opts(64, 1);
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s;
	struct stat st;
	int pid, fd, seals;
	char tail;

	ok(tb_shm_open(&so, &s) == 0, "a memfd session is made");
	ok(sscanf(tb_shm_path(s), "/proc/%d/fd/%d%c", &pid, &fd, &tail) == 2 && pid == getpid(),
	   "its path is /proc/PID/fd/N of the creator (%s)", tb_shm_path(s));
	seals = fcntl(fd, F_GET_SEALS);
	ok(seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW) && (seals & F_SEAL_SEAL),
	   "sealed against shrinking, growing and new seals");
	ok(ftruncate(fd, 4096) < 0 && errno == EPERM, "so nobody can shrink it under a reader");
	ok(stat(tb_shm_path(s), &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600");
	tb_shm_close(s);

	so.has_group = 1;
	so.group = getgid();
	ok(tb_shm_open(&so, &s) == 0 && stat(tb_shm_path(s), &st) == 0 && (st.st_mode & 0777) == 0660 &&
		   st.st_gid == getgid(),
	   "with a group: mode 0660 and that group");
	tb_shm_close(s);
}

/* An unsealed memfd holding a valid region: readers refuse it, writers may use it. */
static void test_unsealed_refused(void)
{
	struct tb_ring_opts ro = small_opts(16, 1);
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s, *r;
	char path[64];
	size_t size = tb_ring_region_size(&ro);
	int fd = memfd_create("plain", MFD_CLOEXEC);
	void *mem;

	ok(tb_shm_open(&so, &s) == 0, "a session to copy");
	mem = mmap(NULL, size, PROT_READ, MAP_SHARED, open(tb_shm_path(s), O_RDONLY | O_CLOEXEC), 0);
	ok(fd >= 0 && mem != MAP_FAILED && write(fd, mem, size) == (ssize_t)size, "its bytes in an unsealed memfd");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ok(tb_shm_attach(path, TB_SHM_READER, &r) == -EPERM && strstr(tb_shm_error(), "not sealed"),
	   "a reader refuses an unsealed memfd and says why (%s)", tb_shm_error());
	ok(tb_shm_attach(path, TB_SHM_WRITER, &r) == 0, "a writer may attach to it");
	tb_shm_close(r);
	munmap(mem, size);
	close(fd);
	tb_shm_close(s);
}

/* ---------------------------------------------------- many processes */

static int child_writes(const char *path, uint32_t writer)
{
	struct tb_shm *s;

	if (tb_shm_attach(path, TB_SHM_WRITER, &s) < 0)
		return 1;
	for (uint32_t n = 0; n < PER_WRITER; n++) {
		struct rec r = {writer, n};
		while (tb_write(tb_shm_ring(s), &r, sizeof(r)) == -ENOSPC)
			sched_yield(); /* producer/consumer: wait for the consumer */
	}
	tb_shm_close(s);
	return 0;
}

/*
 * What the reader has seen of each writer.  A writer process migrates
 * between CPUs, and the reader drains one CPU's buffer after the other, so
 * only the records a writer left in one CPU's buffer come in its order;
 * across CPUs, every record must come exactly once.
 */
#define MAX_TEST_CPUS 256
struct seen {
	uint8_t once[WRITERS][PER_WRITER / 8];
	int64_t last[WRITERS][MAX_TEST_CPUS]; /* the last n read from that CPU's buffer, -1: none */
	uint64_t got, bad;
};

static void seen_init(struct seen *sn)
{
	memset(sn, 0, sizeof(*sn));
	for (int w = 0; w < WRITERS; w++)
		for (int c = 0; c < MAX_TEST_CPUS; c++)
			sn->last[w][c] = -1;
}

/* A record of writer w, n, read from cpu's buffer: 0 if it is the next it could be. */
static int seen_record(struct seen *sn, unsigned cpu, const struct tb_read_event *ev)
{
	const struct rec *r = ev->data;

	if (ev->kind != TB_READ_RECORD || ev->len < sizeof(*r) || r->writer >= WRITERS ||
	    r->n >= PER_WRITER || cpu >= MAX_TEST_CPUS || (int64_t)r->n <= sn->last[r->writer][cpu] ||
	    (sn->once[r->writer][r->n / 8] & (1u << (r->n % 8))))
		return -1;
	sn->once[r->writer][r->n / 8] |= (uint8_t)(1u << (r->n % 8));
	sn->last[r->writer][cpu] = r->n;
	return 0;
}

/* Everything the children write, consumed as it comes: 1 when something was read. */
static int consume_some(struct tb_ring *ring, struct seen *sn)
{
	struct tb_read_event ev;
	int any = 0;

	for (unsigned cpu = 0; cpu < tb_ring_ncpus(ring); cpu++)
		while (tb_consume(ring, cpu, &ev) == 1) {
			const struct rec *r = ev.data;
			any = 1;
			if (seen_record(sn, cpu, &ev) < 0) {
				if (!sn->bad)
					diag("first bad: cpu %u kind %d len %u writer %u n %u", cpu, ev.kind, ev.len,
					     ev.len >= sizeof(*r) ? r->writer : 0, ev.len >= sizeof(*r) ? r->n : 0);
				sn->bad++;
				continue;
			}
			sn->got++;
		}
	return any;
}

static void test_processes_one_ring(void)
{
	struct tb_ring_opts ro = small_opts(256, 0); /* producer/consumer: writers wait, none lost */
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s, *reader;
	static struct seen sn;
	uint64_t dropped = 0;
	pid_t pids[WRITERS];
	int running = WRITERS, status, all_ok = 1;

	seen_init(&sn);
	ok(tb_shm_open(&so, &s) == 0 && tb_shm_attach(tb_shm_path(s), TB_SHM_READER, &reader) == 0,
	   "a session and a reader");
	for (uint32_t w = 0; w < WRITERS; w++)
		if ((pids[w] = fork()) == 0)
			_exit(child_writes(tb_shm_path(s), w));
	while (running > 0) {
		if (!consume_some(tb_shm_ring(reader), &sn))
			sched_yield();
		for (int w = 0; w < WRITERS; w++)
			if (pids[w] > 0 && waitpid(pids[w], &status, WNOHANG) == pids[w]) {
				all_ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
				pids[w] = 0;
				running--;
			}
	}
	consume_some(tb_shm_ring(reader), &sn);
	ok(all_ok, "%d writer processes attached by path and finished", WRITERS);
	ok(sn.got == (uint64_t)WRITERS * PER_WRITER && sn.bad == 0,
	   "the reader process got all %u records once each, each CPU's in its writer's order (%llu, %llu bad)",
	   WRITERS * PER_WRITER, (unsigned long long)sn.got, (unsigned long long)sn.bad);
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(reader)); cpu++) {
		struct tb_cpu_stats st;
		tb_stats_read(tb_shm_ring(reader), cpu, &st);
		dropped += st.dropped;
	}
	diag("the writers found the ring full %llu times and retried", (unsigned long long)dropped);
	tb_shm_close(reader);
	tb_shm_close(s);
}

/* ---------------------------------------------------- hostile headers */

static int make_named(const char *path, size_t kb, unsigned nwrites)
{
	struct tb_ring_opts ro = small_opts(kb, 1);
	struct tb_shm_opts so = {.path = path, .ring = &ro};
	struct tb_shm *s;
	int rc;

	unlink(path);
	if ((rc = tb_shm_open(&so, &s)) < 0)
		return rc;
	for (uint32_t n = 0; n < nwrites; n++) {
		struct rec r = {0, n};
		tb_write(tb_shm_ring(s), &r, sizeof(r));
	}
	tb_shm_close(s);
	return 0;
}

static void *map_file(const char *path, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	void *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		abort();
	*size = (size_t)st.st_size;
	p = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		abort();
	return p;
}

struct mutation {
	const char *what, *why;
	void (*apply)(struct tb_region *r);
};

static void m_magic(struct tb_region *r) { r->magic ^= 1; }
static void m_version(struct tb_region *r) { r->version++; }
static void m_ncpus0(struct tb_region *r) { r->ncpus = 0; }
static void m_ncpus_big(struct tb_region *r) { r->ncpus = 5000; }
static void m_ncpus_more(struct tb_region *r) { r->ncpus++; }
static void m_subbuf(struct tb_region *r) { r->subbuf_size = 1000; }
static void m_pages(struct tb_region *r) { r->nr_pages++; }
static void m_cpu_off(struct tb_region *r) { r->cpu_offset += 64; }
static void m_stride(struct tb_region *r) { r->cpu_stride -= 4096; }
static void m_slot(struct tb_region *r) { r->slot_offset = 1ull << 40; }
static void m_meta(struct tb_region *r) { r->meta_offset += 8; }
static void m_pages_off(struct tb_region *r) { r->pages_offset += 4096; }
static void m_size(struct tb_region *r) { r->size += 4096; }
static void m_kb(struct tb_region *r) { r->requested_kb = ~0ull; }
static void m_mode(struct tb_region *r) { r->overwrite = 7; }
static void m_clock(struct tb_region *r) { r->clock = 9; }
static void m_blob(struct tb_region *r) { r->blob_chunks = 1; r->blob_chunk = 4096; }
static void m_threads(struct tb_region *r) { r->thread_slots = 1u << 20; }
static void m_thread_off(struct tb_region *r) { r->thread_offset = r->size - 64; }

static const struct mutation mutations[] = {
    {"magic", "bad magic", m_magic},
    {"version", "unknown layout version", m_version},
    {"ncpus 0", "bad CPU count", m_ncpus0},
    {"ncpus 5000", "bad CPU count", m_ncpus_big},
    {"ncpus + 1 (the file is too short for it)", "offsets disagree", m_ncpus_more},
    {"sub-buffer size", "sub-buffer size", m_subbuf},
    {"nr_pages + 1", "offsets disagree", m_pages},
    {"cpu_offset + 64", "offsets disagree", m_cpu_off},
    {"cpu_stride - 4096", "offsets disagree", m_stride},
    {"slot_offset 2^40", "offsets disagree", m_slot},
    {"meta_offset + 8", "offsets disagree", m_meta},
    {"pages_offset + 4096", "offsets disagree", m_pages_off},
    {"size + 4096", "offsets disagree", m_size},
    {"requested_kb huge", "out of range", m_kb},
    {"overwrite 7", "bad mode or clock", m_mode},
    {"clock 9", "bad mode or clock", m_clock},
    {"a blob area the geometry has no room for", "offsets disagree", m_blob},
    {"thread table of 2^20 slots", "offsets disagree", m_threads},
    {"thread table at the region's end", "offsets disagree", m_thread_off},
};

static void test_hostile_headers(void)
{
	char good[256], bad[256];
	struct tb_shm *s;
	size_t size;

	path_in_dir(good, sizeof(good), "good");
	path_in_dir(bad, sizeof(bad), "bad");
	ok(make_named(good, 16, 100) == 0, "a named session with 100 events");
	for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		char cmd[600];
		void *mem;
		int ra, rl;

		snprintf(cmd, sizeof(cmd), "cp %s %s", good, bad);
		if (system(cmd) != 0)
			abort();
		mem = map_file(bad, &size);
		mutations[i].apply(mem);
		munmap(mem, size);
		ra = tb_shm_attach(bad, TB_SHM_READER, &s);
		ok(ra == -EINVAL && strstr(tb_shm_error(), bad) && strstr(tb_shm_error(), "offset 0") &&
			   strstr(tb_shm_error(), mutations[i].why),
		   "%s: a reader refuses it, naming file, offset and field (%s)", mutations[i].what, tb_shm_error());
		rl = tb_shm_load(bad, &s);
		ok(rl == -EINVAL && strstr(tb_shm_error(), mutations[i].why), "%s: recovery refuses it too",
		   mutations[i].what);
	}
	/* files cut short */
	ok(truncate(bad, 0) == 0 && tb_shm_load(bad, &s) == -EINVAL &&
		   strstr(tb_shm_error(), "shorter than the region header"),
	   "an empty file: refused (%s)", tb_shm_error());
	{
		char cmd[600];
		struct stat st;

		snprintf(cmd, sizeof(cmd), "cp %s %s", good, bad);
		ok(system(cmd) == 0 && stat(bad, &st) == 0 && truncate(bad, st.st_size - 4096) == 0 &&
			   tb_shm_attach(bad, TB_SHM_READER, &s) == -EINVAL && strstr(tb_shm_error(), "larger than the file"),
		   "a file shorter than its region: refused (%s)", tb_shm_error());
	}
}

/* A reader's header is its own: scribbling over the shared one after attach changes nothing it uses. */
static void test_private_header(void)
{
	char good[256];
	struct tb_shm *reader, *again;
	struct tb_iter *it;
	struct tb_read_event ev;
	struct tb_region *shared;
	unsigned ncpus, count = 0;
	size_t size;

	path_in_dir(good, sizeof(good), "hdr");
	ok(make_named(good, 16, 50) == 0 && tb_shm_attach(good, TB_SHM_READER, &reader) == 0, "a reader attached");
	ncpus = tb_ring_ncpus(tb_shm_ring(reader));
	shared = map_file(good, &size);
	shared->ncpus = 4000;
	shared->nr_pages = 1;
	shared->pages_offset = 1ull << 45;
	shared->cpu_offset = 1ull << 45;
	ok(tb_ring_ncpus(tb_shm_ring(reader)) == ncpus, "the scribbled header does not reach the reader's view");
	ok(tb_iter_new(tb_shm_ring(reader), &it) == 0, "the reader still reads");
	while (tb_iter_next(it, &ev) == 1)
		count += ev.kind == TB_READ_RECORD;
	tb_iter_free(it);
	ok(count == 50, "every event, read through the private header (%u)", count);
	ok(tb_shm_attach(good, TB_SHM_READER, &again) == -EINVAL, "a new reader refuses the scribbled file");
	munmap(shared, size);
	tb_shm_close(reader);
}

/* ---------------------------------------------- scribbled control blocks */

/* A random word somewhere in a CPU's control block, slot table or page metadata. */
static void scribble(uint8_t *base, const struct tb_region *h)
{
	uint64_t cpu = rnd() % h->ncpus;
	uint64_t span = h->pages_offset; /* control block, slots, meta */
	uint64_t off = h->cpu_offset + cpu * h->cpu_stride + (rnd() % (span / 8)) * 8;
	uint64_t v = rnd();

	switch (rnd() % 4) { /* small values hit the range checks' edges */
	case 0: v &= 0xffff; break;
	case 1: v = (v & ~0xffffull) | (h->nr_pages + (v & 3)); break;
	default: break;
	}
	__atomic_store_n((uint64_t *)(base + off), v, __ATOMIC_RELAXED);
}

static int count_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	(void)cpu;
	(void)page;
	*(size_t *)ctx += size;
	return 0;
}

static void test_scribbled_file(void)
{
	char good[256], bad[256];
	struct tb_region h;
	uint64_t with_bad = 0, max_events = 0;
	size_t size;
	int refused = 0, ran = 0;

	path_in_dir(good, sizeof(good), "ctl");
	path_in_dir(bad, sizeof(bad), "ctl-bad");
	ok(make_named(good, 32, 5000) == 0, "a named session that wrapped (5000 events into 32 KiB)");
	for (int round = 0; round < 300; round++) {
		char cmd[600];
		struct tb_shm *s;
		struct tb_shm_window w;
		size_t bytes = 0;
		uint8_t *mem;

		snprintf(cmd, sizeof(cmd), "cp %s %s", good, bad);
		if (system(cmd) != 0)
			abort();
		mem = map_file(bad, &size);
		memcpy(&h, mem, sizeof(h));
		for (int k = 0; k < 1 + round % 8; k++)
			scribble(mem, &h);
		munmap(mem, size);
		if (tb_shm_load(bad, &s) < 0) {
			refused++;
			continue;
		}
		ran += tb_shm_window(tb_shm_ring(s), count_page, &bytes, &w) == 0;
		with_bad += w.bad > 0;
		if (w.events > w.pages * (4080 / 8))
			max_events = UINT64_MAX; /* more than the pages can hold: a broken count */
		tb_shm_close(s);
	}
	ok(ran + refused == 300, "300 scribbled files: every window ran to its end (%d), no crash, no hang", ran);
	ok(with_bad > 0, "out-of-range words were caught and counted (%llu files)", (unsigned long long)with_bad);
	ok(max_events == 0, "never more events counted than the pages handed over can hold");
}

struct scribbler {
	uint8_t *mem;
	struct tb_region h;
	_Atomic int stop;
};

static void *scribble_thread(void *arg)
{
	struct scribbler *sc = arg;

	while (!sc->stop)
		scribble(sc->mem, &sc->h);
	return NULL;
}

/* A live reader while another thread (standing for a hostile writer) scribbles the shared control blocks. */
static void test_scribbled_live(void)
{
	char good[256];
	struct scribbler sc = {0};
	struct tb_shm *reader;
	pthread_t t;
	size_t size;
	int runs = 0;

	path_in_dir(good, sizeof(good), "live");
	ok(make_named(good, 32, 5000) == 0 && tb_shm_attach(good, TB_SHM_READER, &reader) == 0, "a reader attached");
	sc.mem = map_file(good, &size);
	memcpy(&sc.h, sc.mem, sizeof(sc.h));
	pthread_create(&t, NULL, scribble_thread, &sc);
	for (int i = 0; i < 300; i++) {
		struct tb_shm_window w;
		size_t bytes = 0;
		runs += tb_shm_window(tb_shm_ring(reader), count_page, &bytes, &w) == 0;
	}
	sc.stop = 1;
	pthread_join(t, NULL);
	ok(runs == 300, "300 snapshots under a concurrent scribbler: each ended, no crash, no stray read");
	munmap(sc.mem, size);
	tb_shm_close(reader);
}

/* ------------------------------------------- a named file shrunk under a reader */

struct shrink {
	const char *path;
	off_t to;
	int calls;
};

/* The first page handed over shrinks the file: the window's next read is past its end. */
static int shrink_at_first_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct shrink *sh = ctx;

	(void)cpu;
	(void)page;
	(void)size;
	if (sh->calls++ == 0 && truncate(sh->path, sh->to) < 0)
		return -errno;
	return 0;
}

/* make_named from a child pinned to CPU 0: every event on CPU 0's pages. */
static int make_named_on_cpu0(const char *path, size_t kb, unsigned nwrites)
{
	cpu_set_t one;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		_exit(sched_setaffinity(0, sizeof(one), &one) == 0 && make_named(path, kb, nwrites) == 0 ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Where CPU 0's pages begin in a region's file (its header, as written). */
static off_t cpu0_pages_at(const char *path)
{
	struct tb_region h;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, &h, sizeof(h), 0) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(h) ? (off_t)(h.cpu_offset + h.pages_offset) : -1;
}

/* In a child: touch a shrunk file's mapping outside any guard, after a guarded window installed the handler. */
static int unguarded_touch(const char *path)
{
	struct tb_shm *reader;
	struct tb_shm_window w;
	size_t size, bytes = 0;
	volatile uint8_t *p;

	if (tb_shm_attach(path, TB_SHM_READER, &reader) < 0 ||
	    tb_shm_window(tb_shm_ring(reader), count_page, &bytes, &w) < 0)
		return 100;
	p = map_file(path, &size);
	if (truncate(path, 4096) < 0)
		return 101;
	dup2(open("/dev/null", O_WRONLY), 2); /* a sanitizer's report of it is expected: not in the test's log */
	return p[size - 1]; /* SIGBUS: not a guarded read, so what was there before the guard's handler */
}

static void test_shrunk_under_reader(void)
{
	char path[256], want[64];
	struct tb_shm *reader;
	struct tb_shm_window w;
	struct shrink sh;
	int rc, status;
	off_t cut = -1;
	pid_t pid;

	path_in_dir(path, sizeof(path), "shrunk");
	ok(make_named(path, 64, 20000) == 0 && tb_shm_attach(path, TB_SHM_READER, &reader) == 0,
	   "a reader of a named file (not sealable)");
	sh = (struct shrink){path, 8192, 0};
	rc = tb_shm_window(tb_shm_ring(reader), shrink_at_first_page, &sh, &w);
	snprintf(want, sizeof(want), "shrank to %d bytes", 8192);
	ok(rc == -EFAULT && sh.calls == 1 && strstr(tb_shm_error(), path) && strstr(tb_shm_error(), want),
	   "truncated under the window: -EFAULT naming the file and its new size, no SIGBUS (%d: %s)", rc,
	   tb_shm_error());
	tb_shm_close(reader);

	ok(make_named(path, 64, 20000) == 0 && tb_shm_attach(path, TB_SHM_READER, &reader) == 0 &&
	   truncate(path, 0) == 0, "a reader attached, then the file emptied");
	rc = tb_shm_window(tb_shm_ring(reader), count_page, &(size_t){0}, &w);
	ok(rc == -EFAULT && strstr(tb_shm_error(), "shrank to 0 bytes"), "a window of it: -EFAULT (%s)",
	   tb_shm_error());
	tb_shm_close(reader);

	/*
	 * Cut where CPU 0's pages begin, with every event there: the control
	 * blocks are still in the file, so the first read past its end is of
	 * a page, which the window makes with pread - a short read, no SIGBUS.
	 */
	ok(make_named_on_cpu0(path, 64, 20000) == 0 && tb_shm_attach(path, TB_SHM_READER, &reader) == 0 &&
	       (cut = cpu0_pages_at(path)) > 0 && truncate(path, cut) == 0,
	   "a reader attached, then the file cut where CPU 0's pages begin");
	rc = tb_shm_window(tb_shm_ring(reader), count_page, &(size_t){0}, &w);
	snprintf(want, sizeof(want), "shrank to %lld bytes", (long long)cut);
	ok(rc == -EFAULT && strstr(tb_shm_error(), path) && strstr(tb_shm_error(), want),
	   "a window of it: the page read comes up short, -EFAULT naming the new size (%s)", tb_shm_error());
	tb_shm_close(reader);

	ok(make_named(path, 64, 20000) == 0, "the file again");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(unguarded_touch(path));
	waitpid(pid, &status, 0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* the sanitizer's SIGBUS handler was there first: it reports and ends the process (abort, exit 1 or 66) */
	ok((WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) ||
	       (WIFEXITED(status) && (WEXITSTATUS(status) == 1 || WEXITSTATUS(status) == 66)),
	   "a SIGBUS outside any guarded read goes to the handler installed before (the sanitizer's; status %#x)",
	   status);
#else
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS,
	   "a SIGBUS outside any guarded read still has its default action (status %#x)", status);
#endif
	unlink(path);
}

/*
 * A reader that died holding each CPU's lock, in an earlier process that had
 * the pid this one has now (pid reuse: a restarted container's pid 1): the
 * word names this process, which holds nothing.  Its readers must take the
 * lock over, not wait for themselves.  Run in a child (whose pid the word
 * is then made to name) under an alarm: a hang ends it with SIGALRM.
 */
static void test_lock_left_by_an_earlier_self(void)
{
	char path[256];
	int status = 0;
	pid_t pid;

	path_in_dir(path, sizeof(path), "earlier-self");
	ok(make_named(path, 32, 5000) == 0, "a named session that wrapped (5000 events into 32 KiB)");
	pid = fork();
	if (pid == 0) {
		struct tb_shm *s;
		uint8_t page[4096], *mem;
		size_t size;
		int pages = 0;

		alarm(60); /* a page read is microseconds; a minute means it waits for itself */
		mem = map_file(path, &size);
		for (unsigned cpu = 0; cpu < ((struct tb_region *)mem)->ncpus; cpu++)
			atomic_store(&region_cpu((struct tb_region *)mem, cpu)->reader_lock, (uint32_t)getpid());
		munmap(mem, size);
		if (tb_shm_attach(path, TB_SHM_READER, &s) < 0)
			_exit(2);
		for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(s)); cpu++)
			while (tb_read_page(tb_shm_ring(s), cpu, page, sizeof(page)) > 0)
				pages++;
		tb_shm_close(s);
		_exit(pages > 0 ? 0 : 3);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid, "the reader ran in a child");
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a lock word naming this process, held by none of its threads, is taken over: pages read (status %#x)",
	   status);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir))
		skip_all("no temporary directory");
	test_memfd_sealed_private();
	test_unsealed_refused();
	test_processes_one_ring();
	test_hostile_headers();
	test_private_header();
	test_scribbled_file();
	test_scribbled_live();
	test_shrunk_under_reader();
	test_lock_left_by_an_earlier_self();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
