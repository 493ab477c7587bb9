/*
 * tb_hist_attach: a hist updated at the source equals the library's hist
 * over the same events recorded (":record" keeps them), with 1, 2 and 8
 * threads, string keys and a filter; a signal handler firing the event
 * while its thread is inside an update loses nothing; a full map counts
 * the kernel's exact Dropped:; bad specs are refused with their message;
 * attaching twice and removing while writers run are defined.  Also run
 * under ThreadSanitizer.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/hist.h"
#include "tracebuf/hist.h"
#include "tracebuf/reader.h"
#include "tracebuf/schema.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(hat, request, TB_PROTO(uint64_t route, uint64_t bytes, const char *path),
	 TB_FIELDS(tb_field(uint64_t, route, route), tb_field(uint64_t, bytes, bytes), tb_string(path, path)),
	 TB_PRINTK("route=%llu bytes=%llu path=%s", REC->route, REC->bytes, __get_str(path)))

#define PER_THREAD 1500

static const char *const paths[] = {"/", "/index", "/api/v1/items", "/static/app.js", "/login"};

static void *fire_some(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < PER_THREAD; i++)
		tb_trace(hat, request, (i * 7 + t) % 37, i * 13 + t * 1000, paths[(i + t) % 5]);
	return NULL;
}

/* The text a hist prints, in a malloc'd string. */
static char *printed(struct tb_hist *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (h)
		tb_hist_print(h, f);
	else
		tb_hist_print_attached(f);
	fclose(f);
	return buf;
}

/* The library's hist of spec over every record of the ring (consumed). */
static char *recorded_hist(struct tb_ring *ring, const char *spec, uint64_t *records)
{
	struct tb_schema *s = tb_schema_new();
	const char *system;
	const struct tb_format *fmt;
	struct tb_hist *h = NULL;
	struct tb_hist_error err;
	struct tb_read_event ev;
	char *text;

	tb_schema_load_events(s, 4096);
	fmt = tb_schema_event(s, tb_event_hat_request.id, &system);
	if (!fmt || tb_hist_new(spec, fmt, system, s, &h, &err) < 0) {
		diag("cannot make the recorded hist of '%s'", spec);
		tb_schema_free(s);
		return strdup("");
	}
	*records = 0;
	while (tb_consume_merged(ring, &ev) == 1) {
		if (ev.kind != TB_READ_RECORD)
			continue;
		++*records;
		tb_hist_add_record(h, ev.data, ev.len, ev.ts, (int)ev.cpu);
	}
	text = printed(h);
	tb_hist_free(h);
	tb_schema_free(s);
	return text;
}

/*
 * What another process reads of pid's attached hists (tb_hist_print_processes,
 * as `tracebuf hist --attach PID`): a forked child reads them and sends the
 * text through a pipe.  *rc: the reader's return.
 */
static char *outside_text(pid_t pid, const char *event, int *rc)
{
	int fds[2];
	pid_t child;
	char *out = NULL, buf[4096];
	size_t len = 0;
	ssize_t n;
	FILE *f;
	int status = 0;

	if (pipe(fds) < 0)
		return strdup("");
	child = fork();
	if (child == 0) {
		FILE *w = fdopen(fds[1], "w");
		int r;
		close(fds[0]);
		r = tb_hist_print_processes(&pid, 1, event, w, NULL);
		fclose(w);
		_exit(r < 0 ? -r : 0);
	}
	close(fds[1]);
	f = open_memstream(&out, &len);
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f);
	close(fds[0]);
	fclose(f);
	waitpid(child, &status, 0);
	*rc = WIFEXITED(status) ? -WEXITSTATUS(status) : -EINTR;
	return out;
}

/* Attached with ":record", fired by nthreads: the attached text equals the recorded one. */
static void same_as_recorded(struct tb_ring *ring, int nthreads, const char *spec)
{
	char full[512], hits[64];
	pthread_t th[8];
	uint64_t records = 0;
	char *attached, *recorded;

	snprintf(full, sizeof(full), "%s:record", spec);
	tb_ring_reset(ring);
	is_int(tb_hist_attach("hat:request", full, NULL), 0, "attach '%s'", full);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, fire_some, (void *)(uintptr_t)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	attached = printed(NULL);
	{
		int rc;
		char *outside = outside_text(getpid(), NULL, &rc);
		is_int(rc, 0, "%d threads: another process reads the hist", nthreads);
		is_str(outside, attached, "%d threads: what it reads is what tb_hist_print_attached prints", nthreads);
		free(outside);
	}
	recorded = recorded_hist(ring, spec, &records);
	is_int(records, (uint64_t)nthreads * PER_THREAD, "%d threads: every event recorded too (:record)", nthreads);
	is_str(attached, recorded, "%d threads: the attached hist prints what the recorded one does (%s)", nthreads,
	       spec);
	if (!strstr(spec, " if ")) {
		snprintf(hits, sizeof(hits), "Hits: %d\n", nthreads * PER_THREAD);
		ok(strstr(attached, hits) != NULL, "%d threads: %s", nthreads, hits);
	}
	free(attached);
	free(recorded);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
}

/* ------------------------------------------------------ read from outside */

/* This process's region of the attached hist (a copy of its memfd), or NULL. */
static uint8_t *region_copy(size_t *size)
{
	char path[64], link[256];
	uint8_t *copy = NULL;

	for (int fd = 0; fd < 1024 && !copy; fd++) {
		ssize_t n;
		int rfd;
		off_t end;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (!strstr(link, "memfd:tracebuf-hist:hat:request") || (rfd = open(path, O_RDONLY)) < 0)
			continue;
		end = lseek(rfd, 0, SEEK_END);
		copy = malloc((size_t)end);
		if (copy && pread(rfd, copy, (size_t)end, 0) != end) {
			free(copy);
			copy = NULL;
		}
		*size = (size_t)end;
		close(rfd);
	}
	return copy;
}

static char *region_text(const uint8_t *mem, size_t size, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*rc = tb_hist_print_region(mem, size, f);
	fclose(f);
	return buf;
}

/*
 * A region's image, damaged: every byte of its header and texts changed in
 * turn, then scribbles over the tables: each is refused with a message
 * naming a byte, or read as (wrong) numbers; never a crash (ASan build).
 */
static void damaged_regions(void)
{
	size_t size = 0;
	uint8_t *good, *bad;
	char *want, *got;
	int rc, refused = 0, messages = 0;
	unsigned seed = 26;

	is_int(tb_hist_attach("hat:request", "keys=path,route:vals=bytes:size=256", NULL), 0, "attach for the image");
	for (int i = 0; i < 100; i++)
		tb_trace(hat, request, (uint64_t)i % 9, 3, paths[i % 5]);
	want = printed(NULL);
	good = region_copy(&size);
	ok(good != NULL, "the region is a memfd among the process's files (%zu bytes)", size);
	if (!good) {
		free(want);
		tb_hist_remove("hat:request");
		return;
	}
	got = region_text(good, size, &rc);
	is_int(rc, 0, "its image reads");
	is_str(got, want, "and prints what tb_hist_print_attached does");
	free(got);
	bad = malloc(size);
	memcpy(bad, good, size);
	for (size_t at = 0; at < 4096 && at < size; at++) {
		bad[at] ^= (uint8_t)(1u << (at % 8));
		got = region_text(bad, size, &rc);
		refused += rc < 0;
		messages += rc < 0 && strstr(tb_hist_region_error(), "byte ") != NULL;
		free(got);
		bad[at] ^= (uint8_t)(1u << (at % 8));
	}
	ok(refused > 100, "%d of the first 4096 bytes changed are refused", refused);
	is_int(messages, refused, "each refusal names the byte");
	got = region_text(good, 50, &rc);
	ok(rc == -EINVAL && strstr(tb_hist_region_error(), "shorter"), "a short image: %s", tb_hist_region_error());
	free(got);
	for (int round = 0; round < 200; round++) {
		memcpy(bad, good, size);
		for (int k = 0; k < 64; k++) {
			size_t at = 4096 + (size_t)rand_r(&seed) % (size - 4096);
			bad[at] = (uint8_t)rand_r(&seed);
		}
		got = region_text(bad, size, &rc);
		free(got);
	}
	ok(1, "200 images with their tables scribbled: read, no crash");
	free(bad);
	free(good);
	free(want);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
}

/*
 * A forked child's hists are its own copy: the parent's region is not
 * written by it, and the child has none readable from outside.  A process
 * without hists, and one that does not exist, are said.
 */
static void outside_errors(void)
{
	int rc, fds[2];
	char *before, *after, *text, c;
	pid_t child;

	text = outside_text(getpid(), NULL, &rc);
	is_int(rc, -ENOENT, "a process with no hist attached: -ENOENT");
	free(text);
	is_int(tb_hist_attach("hat:request", "keys=route", NULL), 0, "attach");
	for (int i = 0; i < 10; i++)
		tb_trace(hat, request, 11, 1, "/");
	before = outside_text(getpid(), NULL, &rc);
	if (pipe(fds) < 0)
		return;
	child = fork();
	if (child == 0) {
		for (int i = 0; i < 1000; i++)
			tb_trace(hat, request, 12, 1, "/child");
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ok(read(fds[0], &c, 1) == 1, "the forked child fired 1000 times");
	after = outside_text(getpid(), NULL, &rc);
	is_str(after, before, "the parent's hist, read from outside, is unchanged by the child");
	free(text = outside_text(child, NULL, &rc));
	is_int(rc, -ENOENT, "the child's copy is private: none readable from outside");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(text = outside_text(child, NULL, &rc));
	is_int(rc, -ESRCH, "a process that is gone: -ESRCH");
	free(text = outside_text(getpid(), "hat:other", &rc));
	is_int(rc, -ENOENT, "an event with no hist attached: -ENOENT");
	text = outside_text(getpid(), "request", &rc);
	is_str(text, before, "the event by its name alone");
	free(text);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
	free(text = outside_text(getpid(), NULL, &rc));
	is_int(rc, -ENOENT, "a removed hist is not read from outside");
	free(before);
	free(after);
	close(fds[0]);
	close(fds[1]);
}

/* ------------------------------------------------------------ signals */

static atomic_ulong handler_fires;

static void on_alarm(int sig)
{
	(void)sig;
	tb_trace(hat, request, 2, 5, "/signal");
	atomic_fetch_add_explicit(&handler_fires, 1, memory_order_relaxed);
}

/*
 * A timer signal every 20 us while the thread fires event after event
 * (most of its time is inside an update): the handler's hits and the
 * thread's both count, each exactly.
 */
static void signal_nesting(void)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval every = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
	struct timespec start, now;
	unsigned long loops = 0, fires;
	char *text, want[128];

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	is_int(tb_hist_attach("hat:request", "keys=route:vals=bytes:sort=route", NULL), 0, "attach for signals");
	clock_gettime(CLOCK_MONOTONIC, &start);
	setitimer(ITIMER_REAL, &every, NULL);
	do {
		for (int i = 0; i < 1000; i++, loops++)
			tb_trace(hat, request, 1, 3, "/loop");
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (atomic_load(&handler_fires) < 2000 && now.tv_sec - start.tv_sec < 3);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	fires = atomic_load(&handler_fires);
	ok(fires > 0, "the handler fired %lu times during %lu loop hits", fires, loops);
	text = printed(NULL);
	snprintf(want, sizeof(want), "{ route:          1 } hitcount:    %7lu  bytes:    %7lu\n", loops, 3 * loops);
	ok(strstr(text, want) != NULL, "the thread's hits all counted: %s", want);
	snprintf(want, sizeof(want), "{ route:          2 } hitcount:    %7lu  bytes:    %7lu\n", fires, 5 * fires);
	ok(strstr(text, want) != NULL, "the handler's hits all counted: %s", want);
	if (!strstr(text, want))
		diag("%s", text);
	free(text);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
}

/* ------------------------------------------------------------ full map */

/*
 * The hist attached to hat:request (with ":record") against the recorded
 * events' hist of spec: its totals are the ones wanted, its text the
 * recorded one's.  Then removed.
 */
static void totals_as_recorded(struct tb_ring *ring, const char *spec, const char *totals, const char *totals_msg,
			       const char *same_msg)
{
	uint64_t records;
	char *attached = printed(NULL), *recorded = recorded_hist(ring, spec, &records);

	ok(strstr(attached, totals) != NULL, "%s", totals_msg);
	is_str(attached, recorded, "%s", same_msg);
	free(attached);
	free(recorded);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
}

static void map_full(struct tb_ring *ring)
{
	tb_ring_reset(ring);
	is_int(tb_hist_attach("hat:request", "keys=route:vals=bytes:size=128:record", NULL), 0, "attach size=128");
	for (int round = 0; round < 2; round++)
		for (uint64_t r = 0; r < 200; r++)
			tb_trace(hat, request, r, 1, "/");
	totals_as_recorded(ring, "keys=route:vals=bytes:size=128", "Hits: 256\n    Entries: 128\n    Dropped: 144\n",
			   "200 keys twice into 128 entries: Hits 256, Dropped 144 (72 keys x 2), as the kernel counts",
			   "the full map prints what the recorded hist does");
}

/*
 * A hist keyed by one string compares a slot's key only up to the word of
 * its NUL (hist_attach.c): strings that share whole words, end on a word's
 * edge, are empty, or are cut to the 255 bytes of their room must still be
 * told apart - or not - exactly as the recorded hist tells them.
 */
static void string_key_edges(struct tb_ring *ring)
{
	static const char *const edges[] = {"", "/static/", "/static/a", "/static/app.js", "/static/app.jsx",
					    "1234567", "12345678", "123456789abcdef0", "123456789abcdef"};
	char long_a[301], long_b[302];

	memset(long_a, 'x', 300), long_a[300] = '\0';
	memset(long_b, 'x', 301), long_b[301] = '\0'; /* the same 255 bytes once cut to the room */
	tb_ring_reset(ring);
	is_int(tb_hist_attach("hat:request", "keys=path:vals=bytes:sort=path:record", NULL), 0, "attach keys=path");
	for (int round = 1; round <= 3; round++) {
		for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
			tb_trace(hat, request, 1, (uint64_t)(round * 10 + i), edges[i]);
		tb_trace(hat, request, 1, 1, long_a);
		tb_trace(hat, request, 1, 2, long_b);
	}
	totals_as_recorded(ring, "keys=path:vals=bytes:sort=path", "Hits: 33\n    Entries: 10\n    Dropped: 0\n",
			   "9 edge strings and 2 long ones cut to one key, 3 rounds: Hits 33, Entries 10",
			   "a string key's edges print what the recorded hist does");
}

/* ------------------------------------------------------------ refusals */

static void refused(const char *spec, const char *words)
{
	struct tb_hist_error err = {0};

	is_int(tb_hist_attach("hat:request", spec, &err), -EINVAL, "refused: %s", spec);
	ok(strstr(err.reason, words) != NULL, "its message says '%s': %s", words, err.reason);
}

static void bad_input(void)
{
	refused("keys=nope", "Couldn't find field 'nope'");
	refused("keys=path.log2", "needs a number");
	refused("keys=route:vals=path", "vals= sums numbers");
	refused("keys=bytes.execname", ".execname applies to common_pid only");
	is_int(tb_hist_attach("hat:nosuch", "keys=route", NULL), -ENOENT, "an unknown event is -ENOENT");
	is_int(tb_hist_remove("hat:request"), -ENOENT, "removing what is not attached is -ENOENT");
	is_int(tb_hist_attach("hat:request", "keys=route", NULL), 0, "attach");
	is_int(tb_hist_attach("hat:request", "keys=bytes", NULL), -EBUSY, "attaching twice is -EBUSY");
	is_int(tb_hist_remove("hat:request"), 0, "remove");
}

/* Without :record the event writes no record, though it is enabled. */
static void no_record(struct tb_ring *ring)
{
	struct tb_read_event ev;
	int records = 0;
	char *text;

	tb_ring_reset(ring);
	is_int(tb_hist_attach("hat:request", "keys=route", NULL), 0, "attach without :record");
	for (int i = 0; i < 100; i++)
		tb_trace(hat, request, 4, 1, "/");
	while (tb_consume_merged(ring, &ev) == 1)
		records += ev.kind == TB_READ_RECORD;
	is_int(records, 0, "no record written");
	text = printed(NULL);
	ok(strstr(text, "{ route:          4 } hitcount:        100\n") != NULL, "100 hits counted");
	free(text);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
	tb_trace(hat, request, 4, 1, "/");
	ok(tb_consume_merged(ring, &ev) == 1, "detached: the event records again");
}

/* The event disabled: the hist alone; a record too big for any ring is not counted, and nothing breaks. */
static void hist_alone(void)
{
	static char huge[5000];
	char *text;

	memset(huge, 'x', sizeof(huge) - 1);
	tb_events_disable("hat:request", NULL, 0);
	is_int(tb_hist_attach("hat:request", "keys=route", NULL), 0, "attach with the event disabled");
	tb_trace(hat, request, 8, 1, huge);
	for (int i = 0; i < 3; i++)
		tb_trace(hat, request, 8, 1, "/");
	text = printed(NULL);
	ok(strstr(text, "{ route:          8 } hitcount:          3\n") != NULL,
	   "the hist counts with the event disabled; the record above TB_EVENT_MAX is not counted");
	free(text);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
	tb_events_enable("hat:request", NULL, 0);
}

/* -------------------------------------------------- detach while firing */

static atomic_int stop;
static atomic_ulong fired;

static void *fire_until_stopped(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		tb_trace(hat, request, 7, 1, "/busy");
		atomic_fetch_add_explicit(&fired, 1, memory_order_relaxed);
	}
	return NULL;
}

static void wait_fired(unsigned long more)
{
	unsigned long until = atomic_load(&fired) + more;
	struct timespec nap = {0, 1000000};

	for (int i = 0; i < 10000 && atomic_load(&fired) < until; i++)
		nanosleep(&nap, NULL);
}

static void detach_while_firing(void)
{
	pthread_t th[4];
	char *text;

	is_int(tb_hist_attach("hat:request", "keys=route", NULL), 0, "attach before the writers");
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, fire_until_stopped, NULL);
	wait_fired(2000);
	is_int(tb_hist_remove("hat:request"), 0, "removed while 4 threads fire");
	wait_fired(2000);
	is_int(tb_hist_attach("hat:request", "keys=route,path", NULL), 0, "attached again while they fire");
	wait_fired(2000);
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 50; i++)
		tb_trace(hat, request, 999, 1, "/after");
	text = printed(NULL);
	ok(strstr(text, "{ route:        999, path: /after") != NULL && strstr(text, "} hitcount:         50\n"),
	   "the new hist counts the hits after it exactly");
	ok(strstr(text, "path: /busy") != NULL, "and the writers' hits made after it");
	free(text);
	is_int(tb_hist_remove("hat:request"), 0, "removed");
}

/*
 * A reader outside while 2 threads hit one key with bytes = 1: in every
 * read that settled, each entry's bytes sum equals its hitcount (a pair
 * read torn, one counter before an update and the other after, would
 * differ), and the counts only grow.  The writers never wait for the
 * reader: a slot that kept changing under every one of the reader's tries
 * is merged as it was last copied and counted as unsettled, which the
 * reader is told (tb_hist_print_processes) -- such a read may be torn,
 * and says so.  How often that happens is the scheduler's.
 */
static int check_reads(pid_t pid, int reads)
{
	uint64_t last = 0;
	int bad = 0, unsettled_reads = 0;

	for (int r = 0; r < reads; r++) {
		char *buf = NULL, *p;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		unsigned long long hits = 0, bytes = 0;
		uint64_t unsettled = 0;
		int rc = tb_hist_print_processes(&pid, 1, NULL, f, &unsettled);
		fclose(f);
		p = strstr(buf, "route:          7 } hitcount:");
		bool found = p && sscanf(p, "route:          7 } hitcount: %llu bytes: %llu", &hits, &bytes) == 2;
		if (unsettled) {
			unsettled_reads++;
		} else if (rc < 0 || (found ? hits != bytes || hits < last : r > 0)) {
			if (!bad)
				fail_diag("read %d: rc %d, %s, hitcount %llu, bytes %llu, last %llu", r, rc,
					  found ? "the entry" : "no entry", hits, bytes, (unsigned long long)last);
			bad++;
		}
		if (found && !unsettled)
			last = hits;
		free(buf);
	}
	if (unsettled_reads)
		diag("(%d of %d reads said a slot did not settle; not checked)", unsettled_reads, reads);
	return bad;
}

static void torn_pairs(void)
{
	pthread_t th[2];
	pid_t child;
	int status = 0;
	unsigned long before;

	atomic_store(&stop, 0);
	is_int(tb_hist_attach("hat:request", "keys=route:vals=bytes", NULL), 0, "attach for the reader under writers");
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, fire_until_stopped, NULL);
	wait_fired(1000);
	before = atomic_load(&fired);
	child = fork();
	if (child == 0)
		_exit(check_reads(getppid(), 300) ? 1 : 0);
	waitpid(child, &status, 0);
	ok(atomic_load(&fired) > before, "the writers went on while another process read (%lu hits meanwhile)",
	   atomic_load(&fired) - before);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "300 reads from another process under 2 writers: bytes == hitcount in each that settled, never a torn "
	   "pair unsaid");
	is_int(tb_hist_remove("hat:request"), 0, "removed");
}

/* ------------------------------------------------------- environment */

/*
 * This program again, with TRACEBUF_HIST set and "fire": the hist is
 * attached at start and printed to stderr at exit.  A bad spec in the
 * environment is said, naming it.
 */
static char *run_child(const char *env)
{
	char cmd[512], *out = NULL;
	size_t len = 0, n;
	char buf[4096];
	FILE *p, *f = open_memstream(&out, &len);

	snprintf(cmd, sizeof(cmd), "TRACEBUF_HIST='%s' /proc/%d/exe fire 2>&1", env, (int)getpid());
	p = popen(cmd, "r");
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, f);
	if (p)
		pclose(p);
	fclose(f);
	return out;
}

/*
 * The child of on_signal: 10 hits, SIGUSR2, then (once the print is in
 * file: the library's thread printed) 5 more hits and exit.
 */
static int fire_signal(const char *file)
{
	struct timespec nap = {0, 10000000};
	char buf[8192];

	for (int i = 0; i < 10; i++)
		tb_trace(hat, request, 6, 3, "/env");
	raise(SIGUSR2);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(file, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		if (strstr(buf, "Dropped:"))
			break;
		nanosleep(&nap, NULL);
	}
	for (int i = 0; i < 5; i++)
		tb_trace(hat, request, 6, 3, "/env");
	return 0;
}

/* TRACEBUF_HIST_SIGNAL=USR2: printed on the signal (by the library's thread), and at exit. */
static void on_signal(void)
{
	char cmd[600], file[64], *text = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(file, sizeof(file), "/tmp/tb-hist-signal-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "TRACEBUF_HIST='hat:request:keys=route' TRACEBUF_HIST_SIGNAL=USR2 /proc/%d/exe signal %s 2> %s",
		 (int)getpid(), file, file);
	is_int(system(cmd), 0, "a program with TRACEBUF_HIST_SIGNAL=USR2 raises SIGUSR2 and exits 0");
	if ((f = fopen(file, "r"))) {
		text = malloc(65536);
		len = fread(text, 1, 65535, f);
		text[len] = '\0';
		fclose(f);
	}
	unlink(file);
	ok(text && strstr(text, "hitcount:         10\n") && strstr(text, "hitcount:         15\n") &&
		   strstr(text, "hitcount:         10\n") < strstr(text, "hitcount:         15\n"),
	   "printed on the signal (10 hits), then at exit (15)");
	if (text && !strstr(text, "hitcount:         15\n"))
		diag("%s", text);
	free(text);
	snprintf(cmd, sizeof(cmd),
		 "TRACEBUF_HIST='hat:request:keys=route' TRACEBUF_HIST_SIGNAL=NOPE /proc/%d/exe fire 2>&1 | "
		 "grep -q \"TRACEBUF_HIST_SIGNAL: 'NOPE' is not\"",
		 (int)getpid());
	is_int(system(cmd), 0, "a signal that is none is said");
}

static void from_environment(void)
{
	char *text = run_child("hat:request:keys=route:vals=bytes");

	ok(strstr(text, "# trigger info: hist:keys=route:vals=hitcount,bytes:sort=hitcount:size=2048 [active]") &&
		   strstr(text, "{ route:          6 } hitcount:         10  bytes:         30\n"),
	   "TRACEBUF_HIST attaches at start and prints at exit");
	if (!strstr(text, "route:          6"))
		diag("%s", text);
	free(text);
	text = run_child("hat:request:keys=nope");
	ok(strstr(text, "TRACEBUF_HIST: hat:request:") && strstr(text, "Couldn't find field 'nope'"),
	   "a bad TRACEBUF_HIST spec is said with its message");
	free(text);
}

int main(int argc, char **argv)
{
	struct tb_ring_opts o;
	struct tb_ring *ring;

	if (argc > 2 && !strcmp(argv[1], "signal"))
		return fire_signal(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "fire")) {
		for (int i = 0; i < 10; i++)
			tb_trace(hat, request, 6, 3, "/env");
		return 0;
	}

	tb_ring_opts_default(&o);
	o.size_kb = 1024;
	o.overwrite = 0;
	if (tb_ring_new(&ring, &o) < 0)
		skip_all("cannot create the ring");
	tb_events_attach(ring);
	tb_events_enable("hat:request", NULL, 0);

	bad_input();
	same_as_recorded(ring, 1, "keys=route:vals=bytes:sort=route");
	same_as_recorded(ring, 2, "keys=path:vals=bytes,route:sort=path");
	same_as_recorded(ring, 8, "keys=route.log2,path:vals=bytes:sort=route,path if bytes > 3000");
	map_full(ring);
	string_key_edges(ring);
	damaged_regions();
	outside_errors();
	no_record(ring);
	hist_alone();
	signal_nesting();
	detach_while_firing();
	torn_pairs();
	from_environment();
	on_signal();

	tb_events_attach(NULL);
	tb_ring_free(ring);
	return done_testing();
}
