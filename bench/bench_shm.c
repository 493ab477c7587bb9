/*
 * bench_shm - rings in shared memory (tracebuf/shm.h), measured side by
 * side with what they must match:
 *
 *   1. tb_write of a u64 into a ring in a sealed memfd, beside the same
 *      write into a heap ring: batches of 1000 events alternate between the
 *      two and each keeps its fastest batch (load only ever slows a batch
 *      down).  The goal: within 5 %.
 *   2. The out-of-process consumer: a writer process attached by path
 *      writes u64 events at 10 M events/s (paced by the TSC) into a 64 MiB
 *      ring (32 MiB per CPU), while this process drains it as `tracebuf
 *      record` does (tb_read_page_info, each page appended to a file).  The
 *      goal: it keeps up, nothing lost.
 *   3. A snapshot of a full 64 MiB ring (tb_shm_window, into memory, and
 *      into a file in 2 MiB writes) while a writer keeps writing; the whole
 *      `tracebuf snapshot` command is timed by bench/bench_snapshot.sh.
 *      The goal: 100 ms or less.
 *
 * Writes results-shm.json beside the program (case, threads, tracebuf_ns,
 * peer, peer_ns, ratio = peer_ns / tracebuf_ns).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bench_util.h"

#include "tracebuf/reader.h"
#include "tracebuf/shm.h"
#include "tracebuf/stats.h"

#define BATCH 1000
#define BATCHES 20000
#define RATE 10000000.0      /* events per second */
#define RECORD_SECONDS 2.0
#define BIG_KB (32 * 1024)   /* per CPU: 64 MiB on 2 CPUs */

static double tsc_per_ns(void)
{
	double t0 = now_ns();
	uint64_t c0 = __rdtsc();
	struct timespec pause = {0, 50 * 1000 * 1000};

	nanosleep(&pause, NULL);
	return (double)(__rdtsc() - c0) / (now_ns() - t0);
}

static uint64_t batch(struct tb_ring *ring)
{
	uint64_t t0 = __rdtsc();
	for (long i = 0; i < BATCH; i++) {
		uint64_t payload = 0x1122334455667788ull + (uint64_t)i;
		tb_write(ring, &payload, sizeof(payload));
	}
	return __rdtsc() - t0;
}

static struct tb_shm *make_shm(size_t kb)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.ring = &ro};
	struct tb_shm *s;

	tb_ring_opts_default(&ro);
	ro.size_kb = kb;
	if (tb_shm_open(&so, &s) < 0) {
		fprintf(stderr, "bench_shm: %s\n", tb_shm_error());
		exit(1);
	}
	return s;
}

/* 1: the write path, heap ring and shared ring, alternating batches. */
static void bench_write(double tpn, double *heap_ns, double *shm_ns)
{
	struct tb_ring *heap;
	struct tb_shm *s = make_shm(1408);
	uint64_t best_heap = UINT64_MAX, best_shm = UINT64_MAX;

	tb_ring_new(&heap, NULL);
	pin(0);
	for (int b = 0; b < BATCHES; b++) {
		uint64_t h = batch(heap), m = batch(tb_shm_ring(s));
		best_heap = h < best_heap ? h : best_heap;
		best_shm = m < best_shm ? m : best_shm;
	}
	*heap_ns = (double)best_heap / BATCH / tpn;
	*shm_ns = (double)best_shm / BATCH / tpn;
	tb_ring_free(heap);
	tb_shm_close(s);
}

/* The writer process: attach by path, write n events at RATE, paced in bursts of 1000. */
static int paced_writer(const char *path, uint64_t n, double tpn, double *elapsed_ns)
{
	double t0;
	struct tb_shm *s;
	double per_event = tpn * 1e9 / RATE;
	uint64_t start;

	pin(0);
	if (tb_shm_attach(path, TB_SHM_WRITER, &s) < 0)
		return 1;
	t0 = now_ns();
	start = __rdtsc();
	for (uint64_t i = 0; i < n; i += BATCH) {
		while ((double)(__rdtsc() - start) < (double)i * per_event)
			;
		for (uint64_t k = i; k < i + BATCH; k++)
			tb_write(tb_shm_ring(s), &k, sizeof(k));
	}
	*elapsed_ns = now_ns() - t0;
	tb_shm_close(s);
	return 0;
}

struct drained {
	uint64_t events, lost, pages;
	double seconds;        /* the drain, from fork to the last page */
	double writer_seconds; /* the writer's, from its first event to its last */
};

/* 2: what `tracebuf record` does, against a paced writer in another process. */
static void bench_record(double tpn, struct drained *d)
{
	struct tb_shm *s = make_shm(BIG_KB), *r;
	uint64_t n = (uint64_t)(RATE * RECORD_SECONDS);
	char out[] = "/tmp/tb-bench-shm-XXXXXX";
	int fd = mkstemp(out), status;
	uint8_t page[4096];
	double t0;
	pid_t pid;

	memset(d, 0, sizeof(*d));
	if (fd < 0 || tb_shm_attach(tb_shm_path(s), TB_SHM_READER, &r) < 0)
		exit(1);
	unlink(out);
	double *elapsed = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (elapsed == MAP_FAILED)
		exit(1);
	pid = fork();
	if (pid == 0)
		_exit(paced_writer(tb_shm_path(s), n, tpn, elapsed));
	pin(1);
	t0 = now_ns();
	for (int running = 1; running;) {
		long got = 0;
		running = waitpid(pid, &status, WNOHANG) == 0;
		for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(r)); cpu++) {
			struct tb_read_info info;
			long k;
			while ((k = tb_read_page_info(tb_shm_ring(r), cpu, page, sizeof(page), &info)) > 0) {
				if (write(fd, page, (size_t)k) != k)
					exit(1);
				d->events += info.events;
				d->lost += info.lost;
				d->pages++;
				got++;
			}
		}
		if (!got && running) {
			struct timespec pause = {0, 1000 * 1000};
			nanosleep(&pause, NULL);
		}
	}
	d->seconds = (now_ns() - t0) / 1e9;
	d->writer_seconds = *elapsed / 1e9;
	munmap(elapsed, 4096);
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(r)); cpu++) {
		struct tb_cpu_stats st;
		tb_stats_read(tb_shm_ring(r), cpu, &st);
		d->lost += st.dropped; /* refusals, if the ring was ever full (overwrite mode: none) */
	}
	if (d->events + d->lost != n)
		fprintf(stderr, "bench_shm: record: %llu events + %llu lost != %llu written\n",
			(unsigned long long)d->events, (unsigned long long)d->lost, (unsigned long long)n);
	close(fd);
	tb_shm_close(r);
	tb_shm_close(s);
}

struct membuf {
	uint8_t *p;
	size_t used, cap;
};

/* Into a file in 2 MiB writes, as `tracebuf snapshot` writes its trace.dat (tools/shm_stream.c). */
struct filebuf {
	int fd;
	struct membuf m;
};

static int flush_file(struct filebuf *f)
{
	ssize_t n = f->m.used ? write(f->fd, f->m.p, f->m.used) : 0;

	if (n != (ssize_t)f->m.used)
		return -EIO;
	f->m.used = 0;
	return 0;
}

static int to_file(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct filebuf *f = ctx;

	(void)cpu;
	if (f->m.used + size > f->m.cap && flush_file(f) < 0)
		return -EIO;
	memcpy(f->m.p + f->m.used, page, size);
	f->m.used += size;
	return 0;
}

static int to_memory(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct membuf *m = ctx;

	(void)cpu;
	if (m->used + size > m->cap)
		return -ENOSPC;
	memcpy(m->p + m->used, page, size);
	m->used += size;
	return 0;
}

/*
 * 3: a snapshot of a full 64 MiB ring while a writer keeps going on the
 * other CPU: the window copied into memory (what the snapshot costs), and
 * into a file on /tmp (what the disk adds).
 */
static double bench_snapshot(struct tb_shm_window *w, double *file_ms)
{
	struct tb_shm *s = make_shm(BIG_KB), *r;
	char out[] = "/tmp/tb-bench-snap-XXXXXX";
	struct membuf m = {NULL, 0, (size_t)BIG_KB * 1024 * 2 + (1u << 20)};
	struct filebuf file = {-1, {NULL, 0, 2u << 20}};
	int fd = mkstemp(out), status;
	double best = 1e30;
	pid_t pid;

	*file_ms = 1e30;
	if (fd < 0 || tb_shm_attach(tb_shm_path(s), TB_SHM_READER, &r) < 0 || !(m.p = malloc(m.cap)) ||
	    !(file.m.p = malloc(file.m.cap)))
		exit(1);
	memset(m.p, 0, m.cap); /* faulted in: the copy is measured, not the allocation */
	file.fd = fd;
	memset(file.m.p, 0, file.m.cap);
	unlink(out);
	for (int cpu = 0; cpu < 2; cpu++) { /* fill both CPUs' buffers past their size */
		pin(cpu);
		for (uint64_t i = 0; i < 6000000; i++)
			tb_write(tb_shm_ring(s), &i, sizeof(i));
	}
	pid = fork();
	if (pid == 0) { /* a writer that does not stop */
		pin(0);
		for (uint64_t i = 0;; i++)
			tb_write(tb_shm_ring(s), &i, sizeof(i));
	}
	pin(1);
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns(), ms;
		m.used = 0;
		tb_shm_window(tb_shm_ring(r), to_memory, &m, w);
		ms = (now_ns() - t0) / 1e6;
		best = ms < best ? ms : best;
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
			exit(1);
		t0 = now_ns();
		tb_shm_window(tb_shm_ring(r), to_file, &file, w);
		flush_file(&file);
		ms = (now_ns() - t0) / 1e6;
		*file_ms = ms < *file_ms ? ms : *file_ms;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fd);
	free(m.p);
	free(file.m.p);
	tb_shm_close(r);
	tb_shm_close(s);
	return best;
}

static void json_entry(FILE *f, int *n, const char *name, double tb_ns, const char *peer, double peer_ns)
{
	if (f && tb_ns > 0 && peer_ns > 0)
		fprintf(f, "%s  {\"case\": \"%s\", \"threads\": 1, \"tracebuf_ns\": %.3f, \"peer\": \"%s\", "
			"\"peer_ns\": %.3f, \"ratio\": %.4f}", (*n)++ ? ",\n" : "", name, tb_ns, peer, peer_ns,
			peer_ns / tb_ns);
}

int main(int argc, char **argv)
{
	double tpn = tsc_per_ns(), heap_ns, shm_ns, snap_ms, file_ms;
	struct drained d;
	struct tb_shm_window w;
	char path[4096];
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
	FILE *json;
	int n = 0;

	bench_write(tpn, &heap_ns, &shm_ns);
	printf("bench_shm: tb_write u64: heap ring %.2f ns, ring in shared memory %.2f ns (shm/heap %.3f)\n", heap_ns,
	       shm_ns, shm_ns / heap_ns);
	bench_record(tpn, &d);
	printf("bench_shm: record drain, a writer process paced at 10 M events/s, 64 MiB ring: the writer wrote %.0f M "
	       "in %.2f s (%.2f M/s); drained %llu events, %llu lost, %llu pages\n",
	       RATE * RECORD_SECONDS / 1e6, d.writer_seconds, RATE * RECORD_SECONDS / d.writer_seconds / 1e6,
	       (unsigned long long)d.events, (unsigned long long)d.lost, (unsigned long long)d.pages);
	snap_ms = bench_snapshot(&w, &file_ms);
	printf("bench_shm: snapshot of a full 64 MiB ring, writer running: %.1f ms into memory, %.1f ms into a file "
	       "on /tmp (best of 5); %llu events in %llu pages, %llu overwritten while copied\n",
	       snap_ms, file_ms, (unsigned long long)w.events, (unsigned long long)w.pages,
	       (unsigned long long)w.lost_inside);

	snprintf(path, sizeof(path), "%.*sresults-shm.json", slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	json = fopen(path, "w");
	if (!json)
		return 1;
	fputs("[\n", json);
	json_entry(json, &n, "tb_write 8 bytes, ring in shared memory", shm_ns, "tb_write 8 bytes, heap ring", heap_ns);
	if (d.lost == 0 && d.events)
		json_entry(json, &n, "record drain, nothing lost: the writer's ns per event, 64 MiB shm ring",
			   d.writer_seconds * 1e9 / (double)d.events, "the 10 M events/s goal", 1e9 / RATE);
	json_entry(json, &n, "snapshot of a full 64 MiB shm ring into memory, writer running", snap_ms * 1e6,
		   "100 ms goal", 1e8);
	json_entry(json, &n, "snapshot of a full 64 MiB shm ring into a file on /tmp, writer running", file_ms * 1e6,
		   "100 ms goal", 1e8);
	fputs("\n]\n", json);
	fclose(json);
	return 0;
}
