// SPDX-License-Identifier: MIT
/*
 * demo - every source of tracebuf at once, into one ring small enough to
 * overrun, then every way of reading it.
 *
 *   build/examples/demo [DIR]         (DIR: where the capture goes; default a
 *                                      fresh /tmp/tracebuf-demo-XXXXXX)
 *   tracebuf report DIR               the same report, from the CLI
 *   tracebuf report --graph DIR       the same call graph
 *
 * The workload: WORKERS threads, pinned round-robin to the CPUs, each
 * serving REQUESTS requests through the instrumented functions of
 * examples/demo/app.c (function entry/exit records), each request a typed
 * tracepoint (demo:request), every fifth a printf event (ftrace:bprint),
 * every 100th its PMU counters (tracebuf:pmu_counters), every 500th a
 * marker (ftrace:print).  Meanwhile the main thread sends them SIGUSR1,
 * whose handler writes demo:signal in the middle of whatever its thread
 * was writing, and a PMU sampler (where the kernel allows it) samples
 * every thread.  Then the main thread spends 8 ms of CPU in crunch() for
 * the sampler, stops it (its tracebuf:pmu_sample events are written then),
 * serves one last request with a signal raised inside lookup(), writes a
 * blob of BLOB_BYTES (three sub-buffers' worth) with a signal raised while
 * the blob is open, its counters and a marker: a known call nesting at the
 * newest end of the trace, which overwrite mode keeps.
 *
 * The reading: the blob through the non-consuming iterator, byte for
 * byte; each CPU's stats with the derived lines; the ring saved as a
 * capture directory (tb_events_dump for the tracepoints' formats,
 * tb_func_save for the rest, which consumes the ring); the merged report
 * of that directory, its LOST lines and its per-event counts, checked
 * against the stats; and the call graph's newest end.  DIR keeps
 * report.txt, graph.txt and blob.out (the blob's bytes as read back).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "demo/demo.h"
#include "tracebuf/blob.h"
#include "tracebuf/capture.h"
#include "tracebuf/func.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/pmu.h"
#include "tracebuf/reader.h"
#include "tracebuf/report.h"
#include "tracebuf/stats.h"
#include "tracebuf/usyms.h"

#define WORKERS 4
#define REQUESTS 10000
#define FINAL_ID 1000     /* the main thread's request: a multiple of 5, so it prints a cache miss */
#define RING_KB 16        /* per CPU: 5 sub-buffers of 4 KiB */
#define BLOB_KB 32        /* per CPU */
#define BLOB_LINES 800    /* "blob line NNNN\n", 15 bytes each */
#define BLOB_BYTES (BLOB_LINES * 15)
#define REPORT_HEAD 24    /* report lines shown */

/*
 * A blob's reference record described as an event, so the function-graph
 * view prints it rather than an unknown ID (the report prints references
 * as BLOB lines, from the blob store saved with the capture): its first half-word, the low half of
 * TB_BLOB_REF_MAGIC, is where the common type is (the registry never hands
 * that ID out).  The rest of the magic and the blob's length sit where the
 * common header has its flags, preempt count and pid, so the line's task
 * and flag columns show those bytes (docs/design.md §9 has the layout).
 */
#define BLOB_REF_ID (TB_BLOB_REF_MAGIC & 0xffffu)
static const struct tb_evfield blob_ref_fields[] = {
	{"u64", "first", 8, 8, 0},
	{"u32", "area", 16, 4, 0},
	{"u32", "zero", 20, 4, 0},
};
static const struct tb_evdesc blob_ref_event = {
	.system = "tracebuf",
	.name = "blob_ref",
	.size = TB_BLOB_REF_SIZE,
	.nfields = sizeof(blob_ref_fields) / sizeof(blob_ref_fields[0]),
	.fields = blob_ref_fields,
	.print_fmt = "\"len=%u first=%llu area=%u\", (unsigned)REC->common_pid, REC->first, REC->area",
};

static const enum tb_pmu_counter counters[] = {TB_PMU_TASK_CLOCK, TB_PMU_CONTEXT_SWITCHES,
					       TB_PMU_PAGE_FAULTS};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static struct tb_ring *ring;
static unsigned online_cpus;

struct worker {
	pthread_t thread;
	int no;
	unsigned cpu;
	atomic_int writing; /* signalled only while it writes: a parked worker's signals would
			     * fill its CPU's buffer with signal events alone */
	unsigned signals;   /* handled by its thread */
};

/* Workers stay alive, parked, until the capture is saved: saved_cmdlines names live threads. */
static atomic_int flooding;
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static int released;

static void pin(unsigned cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void park(void)
{
	pthread_mutex_lock(&park_lock);
	while (!released)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
}

static void release_workers(void)
{
	pthread_mutex_lock(&park_lock);
	released = 1;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tb_pmu *pmu = NULL;
	char text[64];

	pin(w->cpu);
	snprintf(text, sizeof(text), "demo-w%d", w->no);
	pthread_setname_np(pthread_self(), text);
	demo_set_worker(w->no);
	tb_pmu_open(&pmu, counters, NCOUNTERS, 0); /* what the main thread's set could not count, neither can this */
	/*
	 * REQUESTS requests, and on until this thread has handled a signal (30 s
	 * at most): the main thread signals workers only while they write, and
	 * on a busy machine it may not run before a worker's REQUESTS are done
	 * (seen beside two CPU hogs: a worker that handled none).
	 */
	time_t give_up = time(NULL) + 30;
	for (int id = 1; id <= REQUESTS || (demo_signals_handled() == 0 && time(NULL) < give_up); id++) {
		handle_request(id);
		if (id % 100 == 0 && pmu)
			tb_pmu_write(ring, pmu, 0);
		if (id % 500 == 0) {
			int n = snprintf(text, sizeof(text), "worker %d: %d requests served", w->no, id);
			tb_marker_write(text, (size_t)n);
		}
	}
	atomic_store(&w->writing, 0);
	atomic_fetch_sub(&flooding, 1);
	park();
	w->signals = demo_signals_handled();
	tb_pmu_close(pmu);
	return NULL;
}

/* Signal every worker about every 300 us while they write: handlers land mid-write. */
static unsigned long signal_workers(struct worker *w)
{
	struct timespec gap = {0, 300 * 1000};
	unsigned long sent = 0;

	while (atomic_load(&flooding) > 0) {
		for (int i = 0; i < WORKERS; i++)
			if (atomic_load(&w[i].writing))
				sent += pthread_kill(w[i].thread, SIGUSR1) == 0;
		nanosleep(&gap, NULL);
	}
	return sent;
}

static void fill_blob(char *blob)
{
	for (int i = 0; i < BLOB_LINES; i++) {
		char line[32];
		snprintf(line, sizeof(line), "blob line %04d\n", i);
		memcpy(blob + i * 15, line, 15);
	}
}

/* ------------------------------------------------------------ reading */

struct blob_check {
	int found;       /* 1: TB_READ_BLOB of our length seen, 2: it was overwritten */
	int intact;
	unsigned cpu;
	uint64_t iter_events, iter_lost;
};

/* Walk the ring without consuming it; compare the blob with what was written; keep its bytes. */
static void check_blob(const char *expected, const char *out_path, struct blob_check *bc)
{
	struct tb_iter *it;
	struct tb_read_event ev;

	memset(bc, 0, sizeof(*bc));
	if (tb_iter_new(ring, &it) < 0)
		return;
	while (tb_iter_next(it, &ev) == 1) {
		if (ev.kind == TB_READ_LOST) {
			bc->iter_lost += ev.lost;
			continue;
		}
		bc->iter_events++;
		if (ev.kind == TB_READ_BLOB_LOST && ev.len == BLOB_BYTES)
			bc->found = 2;
		if (ev.kind != TB_READ_BLOB || ev.len != BLOB_BYTES)
			continue;
		bc->found = 1;
		bc->cpu = ev.cpu;
		bc->intact = !memcmp(ev.data, expected, BLOB_BYTES);
		FILE *f = fopen(out_path, "w");
		if (f) {
			fwrite(ev.data, 1, ev.len, f);
			fclose(f);
		}
	}
	tb_iter_free(it);
}

static void print_stats(const struct tb_cpu_stats *st, unsigned ncpus, struct tb_cpu_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		printf("\n-- per_cpu/cpu%u/stats\n", cpu);
		tb_stats_print(stdout, ring, &st[cpu], 1);
		sum->written += st[cpu].written;
		sum->lost += st[cpu].lost;
		sum->overrun += st[cpu].overrun;
		sum->entries += st[cpu].entries;
		sum->attempted += st[cpu].attempted;
	}
}

static int save_capture(const char *dir, struct tb_pmu *pmu)
{
	const struct tb_save_event extra[] = {
		{tb_pmu_event(pmu), TB_PMU_COUNTERS_ID},
		{&tb_pmu_sample_event, TB_PMU_SAMPLE_ID},
		{&tb_pmu_lost_event, TB_PMU_LOST_ID},
		{&blob_ref_event, BLOB_REF_ID},
	};
	struct tb_problem err = {0};
	int rc = tb_events_dump(dir, ring);

	if (rc < 0) {
		fprintf(stderr, "demo: %s: cannot write the events' formats: %s\n", dir, strerror(-rc));
		return rc;
	}
	rc = tb_func_save(ring, dir, extra, sizeof(extra) / sizeof(extra[0]), &err);
	if (rc < 0)
		fprintf(stderr, "demo: %s\n", err.reason);
	return rc;
}

/* Print the first n lines of path, and every LOST line of it to *lost_lines. */
static void show_head(const char *path, int n)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int shown = 0, total = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (shown < n) {
			fputs(line, stdout);
			shown++;
		}
		total++;
	}
	if (f)
		fclose(f);
	printf("  ... (%d lines in all: %s)\n", total, path);
}

static void show_lost_lines(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CPU:", 4) && strstr(line, "LOST"))
			fputs(line, stdout);
	if (f)
		fclose(f);
}

/* Print path from the last line that contains from to the end. */
static void show_from_last(const char *path, const char *from)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	long total = 0, start = -1, at = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, from))
			start = total;
		total++;
	}
	printf("  ... (%ld lines in all: %s; from the main thread's last request:)\n", total, path);
	if (f && start >= 0) {
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (at++ >= start)
				fputs(line, stdout);
	}
	if (f)
		fclose(f);
}

/* Symbols from the capture's own objects file, as `tracebuf report` reads them; NULL if none. */
static struct tb_usyms *saved_objects(const char *dir)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	struct tb_usyms *u = NULL;
	FILE *f, *mem;
	int c;

	snprintf(path, sizeof(path), "%s/objects", dir);
	f = fopen(path, "r");
	mem = open_memstream(&text, &len);
	while (f && mem && (c = getc(f)) != EOF)
		putc(c, mem);
	if (mem && fclose(mem) == 0 && f)
		tb_usyms_load(&u, path, text, len, NULL, NULL);
	if (f)
		fclose(f);
	free(text);
	return u;
}

static int report(const char *dir, struct tb_report_totals *rt, struct tb_graph_totals *gt)
{
	char path[4096];
	struct tb_capture *c;
	struct tb_usyms *u = NULL;
	FILE *out;
	int rc;

	/* The flat report, every event a line (what `tracebuf report --no-graph DIR` prints). */
	if ((rc = tb_capture_open(dir, NULL, &c)) < 0)
		return rc;
	u = saved_objects(dir);
	if (u)
		tb_usyms_register(u, tb_capture_schema(c));
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	out = fopen(path, "w");
	rc = out ? tb_report_write(c, out, NULL, rt) : -errno;
	if (out)
		fclose(out);
	if (rc >= 0) {
		printf("\n== the merged report (CPUs merged by time; `tracebuf report --no-graph %s`)\n", dir);
		show_head(path, REPORT_HEAD);
		printf("\n== its LOST lines\n");
		show_lost_lines(path);
		printf("\n== events by kind in the report\n");
		tb_report_write_printers(c, stdout);
	}
	tb_capture_close(c);

	/* The call graph (the capture's tracer is function_graph: `tracebuf report DIR`). */
	if (rc >= 0 && (rc = tb_capture_open(dir, NULL, &c)) == 0) {
		if (u)
			tb_usyms_register(u, tb_capture_schema(c));
		snprintf(path, sizeof(path), "%s/graph.txt", dir);
		out = fopen(path, "w");
		rc = out ? tb_funcgraph_write(c, u, out, NULL, gt) : -errno;
		if (out)
			fclose(out);
		tb_capture_close(c);
		if (rc >= 0) {
			printf("\n== the function graph (`tracebuf report --graph %s`)\n", dir);
			show_from_last(path, "handle_request() {");
			printf("(the blob's reference record holds the blob's length where records have "
			       "their pid: hence the task <...>-%d around it)\n", BLOB_BYTES);
		}
	}
	tb_usyms_free(u);
	return rc;
}

/* ------------------------------------------------------------ main */

static int setup(struct tb_pmu **pmu, struct tb_pmu_sampler **smp)
{
	struct tb_pmu_sampler_opts so = {.counter = TB_PMU_TASK_CLOCK, .period = 1000000};
	struct tb_ring_opts o;
	char why[256];
	int rc;

	tb_ring_opts_default(&o);
	o.size_kb = RING_KB;
	o.blob_kb = BLOB_KB;
	o.clock = TB_CLOCK_MONO; /* nanoseconds: the report prints seconds.microseconds */
	if ((rc = tb_ring_new(&ring, &o)) < 0) {
		fprintf(stderr, "demo: cannot create the ring: %s\n", strerror(-rc));
		return rc;
	}
	tb_events_attach(ring);
	if ((rc = tb_events_enable("demo:*,ftrace:*", NULL, 0)) < 0) {
		fprintf(stderr, "demo: cannot enable the events: %s\n", strerror(-rc));
		return rc;
	}
	if (demo_install_handler() < 0) {
		perror("demo: sigaction");
		return -errno;
	}
	demo_set_worker(0);
	rc = tb_pmu_open(pmu, counters, NCOUNTERS, 0);
	if (rc < 0) {
		fprintf(stderr, "demo: tb_pmu_open: %s\n", strerror(-rc));
		return rc;
	}
	printf("== ring: %d KiB per CPU (%u CPUs, %zu-byte sub-buffers), blob area %d KiB per CPU, "
	       "overwrite mode, clock %s, publish %s\n",
	       RING_KB, tb_ring_ncpus(ring), tb_ring_subbuf_size(ring), BLOB_KB,
	       tb_clock_name(tb_ring_clock(ring)), tb_ring_uses_rseq(ring) ? "rseq" : "try-lock");
	for (unsigned i = 0; i < tb_pmu_count(*pmu); i++)
		printf("   PMU counter %-17s %s\n", tb_pmu_counter_name(tb_pmu_counter_at(*pmu, i)),
		       tb_pmu_problem(*pmu, i) ? tb_pmu_problem(*pmu, i) : "counted");
	/* Started before the workers, so they inherit the sampling counter. */
	if (tb_pmu_sampler_open(smp, ring, &so, why, sizeof(why)) < 0) {
		printf("   PMU sampler: not started: %s\n", why);
		*smp = NULL;
	} else {
		printf("   PMU sampler: task_clock, one sample per ms of CPU time\n");
	}
	if ((rc = tb_func_start(ring, NULL)) < 0)
		fprintf(stderr, "demo: tb_func_start: %s\n", strerror(-rc));
	return rc;
}

static int make_dir(char *dir, size_t size, const char *arg)
{
	if (arg) {
		if (strlen(arg) >= size) {
			fprintf(stderr, "demo: %s: the path is too long\n", arg);
			return -1;
		}
		snprintf(dir, size, "%s", arg);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "demo: %s: %s\n", dir, strerror(errno));
			return -1;
		}
		return 0;
	}
	snprintf(dir, size, "/tmp/tracebuf-demo-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("demo: mkdtemp");
		return -1;
	}
	return 0;
}

/* Everything the run found, printed after the workers are gone. */
struct demo {
	char dir[2048];
	struct worker w[WORKERS];
	struct tb_pmu *pmu;
	struct tb_pmu_sampler *smp;
	struct tb_pmu_sampler_stats sampled;
	struct tb_func_thread_stats main_calls;
	unsigned long signals_sent;
	int blob_rc;
	struct blob_check blob;
	unsigned ncpus;
	struct tb_cpu_stats *stats, sum;
	struct tb_report_totals report;
	struct tb_graph_totals graph;
};

/* WORKERS threads writing every kind of event, signalled as they go; parked when done. */
static int run_workers(struct demo *d)
{
	atomic_store(&flooding, WORKERS);
	for (int i = 0; i < WORKERS; i++) {
		d->w[i] = (struct worker){.no = i + 1, .cpu = (unsigned)i % online_cpus, .writing = 1};
		if (pthread_create(&d->w[i].thread, NULL, worker_main, &d->w[i]) != 0) {
			fprintf(stderr, "demo: cannot create a thread\n");
			exit(1); /* the threads made so far are parked: exit ends them */
		}
	}
	d->signals_sent = signal_workers(d->w);
	return 0;
}

/* The newest end of the trace: a known nesting on CPU 0, the blob, the counters, a marker. */
static void run_newest_end(struct demo *d, const char *blob)
{
	/*
	 * Samples written during the flood went with it; these few ms of the
	 * main thread's own time give the sampler some that stay.
	 */
	pin(0);
	crunch(8);
	if (d->smp)
		tb_pmu_sampler_close(d->smp, &d->sampled);
	demo_raise_in_lookup();
	handle_request(FINAL_ID);
	d->blob_rc = send_blob(ring, blob, BLOB_BYTES);
	tb_pmu_write(ring, d->pmu, 0);
	tb_marker_puts("demo: all work done");
	tb_func_stop();
	tb_func_thread_stats(&d->main_calls);
}

/* The blob and the stats (not consuming), then the capture (consuming); then the workers may go. */
static int read_ring(struct demo *d, const char *blob)
{
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/blob.out", d->dir);
	check_blob(blob, path, &d->blob);
	d->ncpus = tb_ring_ncpus(ring);
	d->stats = calloc(d->ncpus, sizeof(*d->stats));
	for (unsigned cpu = 0; d->stats && cpu < d->ncpus; cpu++)
		tb_stats_read(ring, cpu, &d->stats[cpu]);
	rc = d->stats ? save_capture(d->dir, d->pmu) : -ENOMEM;
	release_workers();
	for (int i = 0; i < WORKERS; i++)
		pthread_join(d->w[i].thread, NULL);
	return rc;
}

static void print_workload(const struct demo *d)
{
	unsigned cpus = online_cpus < WORKERS ? online_cpus : WORKERS;

	printf("\n== workload: %d worker threads x %d requests (demo-w1..demo-w%d on CPUs 0..%u), "
	       "then the main thread\n", WORKERS, REQUESTS, WORKERS, cpus - 1);
	printf("signals: %lu sent to the workers while they wrote, handled:", d->signals_sent);
	for (int i = 0; i < WORKERS; i++)
		printf(" %s%u", i ? "+" : "", d->w[i].signals);
	printf(" (pending ones merge), +%u raised by the main thread\n", demo_signals_handled());
	if (d->smp)
		printf("PMU sampler: %llu samples, %llu written to the ring, %llu lost by the kernel\n",
		       (unsigned long long)d->sampled.samples, (unsigned long long)d->sampled.written,
		       (unsigned long long)d->sampled.lost);
	printf("main thread's function records: %llu entries, %llu exits\n",
	       (unsigned long long)d->main_calls.entries, (unsigned long long)d->main_calls.exits);
}

static void print_blob(const struct demo *d)
{
	const struct blob_check *bc = &d->blob;

	printf("\n== blob: %d bytes (%.1f sub-buffers), a signal handled between its reserve and commit\n",
	       BLOB_BYTES, (double)BLOB_BYTES / (double)tb_ring_subbuf_size(ring));
	if (d->blob_rc < 0)
		printf("blob: the write failed: %s\n", strerror(-d->blob_rc));
	else if (bc->found == 1)
		printf("blob: read back by the iterator on CPU %u: %s (bytes in %s/blob.out)\n", bc->cpu,
		       bc->intact ? "intact, every byte as written" : "DIFFERENT from what was written", d->dir);
	else
		printf("blob: %s\n", bc->found == 2 ? "overwritten before it was read" : "not found by the iterator");
	printf("iterator: %llu events, %llu reported lost\n", (unsigned long long)bc->iter_events,
	       (unsigned long long)bc->iter_lost);
}

static void print_totals(struct demo *d)
{
	const struct tb_cpu_stats *sum = &d->sum;
	const struct tb_report_totals *rt = &d->report;
	const struct tb_graph_totals *gt = &d->graph;
	uint64_t accounted = rt->events + rt->lost_events;

	printf("\nreport: %llu events + %llu in %llu LOST lines = %llu; the stats' written: %llu (%s)\n",
	       (unsigned long long)rt->events, (unsigned long long)rt->lost_events,
	       (unsigned long long)rt->lost_lines, (unsigned long long)accounted,
	       (unsigned long long)sum->written, accounted == sum->written ? "equal" : "DIFFERENT");
	printf("report: %llu unknown events, %llu records skipped, %lu problems\n",
	       (unsigned long long)rt->unknown_events, (unsigned long long)rt->bad_records, rt->problems);
	printf("graph: %llu entries, %llu exits (%llu leaves), %llu other events as comments, %llu LOST lines\n",
	       (unsigned long long)gt->entries, (unsigned long long)gt->exits, (unsigned long long)gt->leaves,
	       (unsigned long long)gt->comments, (unsigned long long)gt->lost_lines);
}

int main(int argc, char **argv)
{
	static char blob[BLOB_BYTES];
	static struct demo d;
	int rc;

	if (argc >= 2 && !strcmp(argv[1], "--crash"))
		return demo_crash(argc > 2 ? argv[2] : "/dev/shm/tracebuf-demo-crash");
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [DIR]\n       %s --crash [SHMFILE]\n", argv[0], argv[0]);
		return 2;
	}
	if (make_dir(d.dir, sizeof(d.dir), argc == 2 ? argv[1] : NULL) < 0)
		return 1;
	online_cpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (setup(&d.pmu, &d.smp) < 0)
		return 1;
	fill_blob(blob);
	run_workers(&d);
	run_newest_end(&d, blob);
	if (read_ring(&d, blob) < 0)
		return 1;

	print_workload(&d);
	print_blob(&d);
	printf("\n== stats (each CPU's, with the lines the kernel's stats file leaves out)");
	print_stats(d.stats, d.ncpus, &d.sum);
	printf("\nall CPUs: written %llu, entries %llu, overrun %llu, lost %llu (%.2f%% of %llu attempted)\n",
	       (unsigned long long)d.sum.written, (unsigned long long)d.sum.entries,
	       (unsigned long long)d.sum.overrun, (unsigned long long)d.sum.lost,
	       d.sum.attempted ? 100.0 * (double)d.sum.lost / (double)d.sum.attempted : 0.0,
	       (unsigned long long)d.sum.attempted);
	printf("\n== saved: %s (tb_events_dump + tb_func_save)\n", d.dir);
	rc = report(d.dir, &d.report, &d.graph);
	if (rc < 0) {
		fprintf(stderr, "demo: %s: cannot report: %s\n", d.dir, strerror(-rc));
		return 1;
	}
	print_totals(&d);

	tb_events_attach(NULL);
	tb_pmu_close(d.pmu);
	tb_ring_free(ring);
	free(d.stats);
	return rc == 0 && d.blob.found == 1 && d.blob.intact ? 0 : 1;
}
