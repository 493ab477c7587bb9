// SPDX-License-Identifier: MIT
/*
 * test_pmu - performance counters as a source (tracebuf/pmu.h), on this
 * machine as it is: software counters must count what the test does
 * (context switches across sleeps, page faults on fresh pages, task-clock
 * across a busy loop); hardware counters count where there is a PMU and
 * otherwise say why not; counter values travel as events described in the
 * kernel's format syntax; the sampler's samples name the thread and the
 * function that ran, at times inside the run on the ring's clock; a
 * process without privileges gets the documented refusal texts, worked
 * out from perf_event_paranoid.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/describe.h"
#include "tracebuf/pmu.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/schema.h"
#include "tracebuf/usyms.h"

/* The thread's voluntary + involuntary context switches, as the kernel counts them. */
static long long thread_switches(void)
{
	char line[256];
	long long n = 0, v;
	FILE *f = fopen("/proc/thread-self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if ((sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1) ||
		    (sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1))
			n += v;
	if (f)
		fclose(f);
	return n;
}

static volatile uint64_t sink;

/*
 * The thread's CPU clock read through libc's clock_gettime itself, as
 * dlsym finds it: a call by name, or through &clock_gettime (the PIE's
 * canonical PLT entry), goes through a PLT stub of this executable, which
 * has no symbol of its own; tracebuf names it after _init, the zero-sized
 * symbol before .plt (3 samples in 4 runs beside hogs).  Set in main().
 */
static int (*read_clock)(clockid_t, struct timespec *);

static double thread_cpu_s(void)
{
	struct timespec ts;

	read_clock(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Busy until this thread has run for s seconds of CPU time (not wall time:
 * the machine is shared); noinline so samples land in it by name.  The
 * clock (a system call: the thread's CPU clock has no vDSO path) is read
 * once per 100000 rounds, some 100 us, so that nearly all of the time is
 * spent in spin_for itself; where the others land is checked by name too
 * (on_spin_path()).
 */
__attribute__((noinline)) void spin_for(double s);
__attribute__((noinline)) void spin_for(double s)
{
	double end = thread_cpu_s() + s;

	while (thread_cpu_s() < end)
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i * 7;
}

/*
 * A sample of a thread running worker_main() -> spin_for() is named
 * after one of the functions that path runs: spin_for, the clock read
 * (thread_cpu_s, libc's clock_gettime and the vDSO's, which names its
 * own __vdso_clock_gettime) and worker_main itself.  Under ASan the
 * clock read passes through the sanitizer's interceptor, which checks
 * the timespec it writes (__asan::QuickCheckForUnpoisonedRegion and
 * friends): those frames are on the path too.
 */
static bool in_sanitizer_runtime(const char *name)
{
	return !strncmp(name, "_ZN6__asan", 10) || !strncmp(name, "_ZN11__sanitizer", 16) ||
	       !strncmp(name, "__asan_", 7) || strstr(name, "__interceptor_");
}

static bool on_spin_path(const char *name)
{
	return !strcmp(name, "spin_for") || !strcmp(name, "thread_cpu_s") || !strcmp(name, "worker_main") ||
	       strstr(name, "clock_gettime") || in_sanitizer_runtime(name);
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = -100;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

/* ------------------------------------------------------------ counters */

static void test_counters(void)
{
	static const enum tb_pmu_counter list[] = {TB_PMU_TASK_CLOCK, TB_PMU_CONTEXT_SWITCHES,
						   TB_PMU_PAGE_FAULTS, TB_PMU_MINOR_FAULTS,
						   TB_PMU_CYCLES, TB_PMU_INSTRUCTIONS};
	enum { TASK, CSW, PF, MINF, CYC, INS, N };
	struct tb_pmu *p;
	uint64_t a[N], b[N];
	size_t pages = 256, psz = (size_t)sysconf(_SC_PAGESIZE);
	int missing = tb_pmu_open(&p, list, N, 0);
	long long cs_a0, cs_a1, cs_b0, cs_b1;
	double t0, t1;

	if (!ok(missing >= 0 && p, "tb_pmu_open: a set of 4 software and 2 hardware counters")) {
		skip(9, "no set");
		return;
	}
	for (int i = 0; i < CYC; i++)
		ok(!tb_pmu_problem(p, (unsigned)i), "software counter %s counts%s%s", tb_pmu_counter_name(list[i]),
		   tb_pmu_problem(p, (unsigned)i) ? ": " : "", tb_pmu_problem(p, (unsigned)i) ? tb_pmu_problem(p, (unsigned)i) : "");
	/*
	 * The kernel's count read on both sides of each counter read: the
	 * switches between the two reads are at least those between the
	 * inner readings and at most those between the outer ones (reading
	 * /proc can itself be switched out, on a busy machine more than once).
	 * perf's count may still come out one below the kernel's: seen in 4 of
	 * 20 runs beside CPU hogs with no switch during any read (the test
	 * always allowed one; why perf misses that switch is not known here).
	 */
	cs_a0 = thread_switches();
	is_int(tb_pmu_read(p, a), 0, "tb_pmu_read");
	cs_a1 = thread_switches();

	/*
	 * Context switches: sleeps, against the kernel's own count for the
	 * thread (a sleep whose timer fires before the thread is switched out,
	 * as on a busy VM, switches nothing, so "one per sleep" is no oracle).
	 */
	for (int i = 0; i < 20; i++)
		usleep(500);
	/* Page faults: first touches of fresh anonymous pages. */
	uint8_t *mem = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(mem, pages * psz, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		mem[i * psz] = 1;
	/* Task clock: a busy loop, against the thread's CPU time as the kernel tells it. */
	t0 = thread_cpu_s();
	spin_for(0.03);
	t1 = thread_cpu_s();
	cs_b0 = thread_switches();
	tb_pmu_read(p, b);
	cs_b1 = thread_switches();
	munmap(mem, pages * psz);

	long long csw = (long long)(b[CSW] - a[CSW]);
	ok(csw >= 5 && csw + 1 >= cs_b0 - cs_a1 && csw <= cs_b1 - cs_a0,
	   "20 sleeps: %lld context switches counted, the kernel's own count says %lld..%lld", csw, cs_b0 - cs_a1,
	   cs_b1 - cs_a0);
	ok(b[PF] - a[PF] >= pages, "%zu fresh pages touched: %llu page faults", pages,
	   (unsigned long long)(b[PF] - a[PF]));
	ok(b[MINF] - a[MINF] >= pages, "and %llu minor faults", (unsigned long long)(b[MINF] - a[MINF]));
	double tc = (double)(b[TASK] - a[TASK]) / 1e9;
	ok(tc >= (t1 - t0) * 0.9, "a busy loop of %.1f ms of thread CPU time: task-clock advanced %.1f ms",
	   (t1 - t0) * 1e3, tc * 1e3);

	/* Hardware: counted here, or a reason from the list in pmu.h. */
	for (int i = CYC; i <= INS; i++) {
		const char *why = tb_pmu_problem(p, (unsigned)i);
		if (!why)
			ok(b[i] > a[i], "hardware counter %s counts (%llu)", tb_pmu_counter_name(list[i]),
			   (unsigned long long)(b[i] - a[i]));
		else
			ok(strstr(why, tb_pmu_counter_name(list[i])) == why &&
				   (strstr(why, "no hardware PMU") || strstr(why, "refused by the kernel")),
			   "hardware counter missing, with its reason: %s", why);
	}
	if (tb_pmu_problem(p, CYC))
		diag("this machine has no usable PMU: hardware counting is not tested here");
	diag("rdpmc used for %u counters", tb_pmu_rdpmc_count(p));
	tb_pmu_close(p);
}

/* ------------------------------------------------- counters as events */

static void test_events(void)
{
	static const enum tb_pmu_counter list[] = {TB_PMU_TASK_CLOCK, TB_PMU_PAGE_FAULTS};
	struct tb_pmu *p;
	struct tb_ring *ring;
	struct tb_read_event ev;
	struct tb_schema *s = tb_schema_new();
	char text[4096];
	int n, records = 0;
	uint64_t first[2] = {0}, last[2] = {0};

	if (tb_pmu_open(&p, list, 2, 0) != 0 || tb_ring_new(&ring, NULL) != 0) {
		skip(6, "no counters or no ring");
		return;
	}
	n = tb_evdesc_format(tb_pmu_event(p), TB_PMU_COUNTERS_ID, text, sizeof(text));
	ok(n > 0 && strstr(text, "\tfield:u64 task_clock;\toffset:8;\tsize:8;\tsigned:0;\n") &&
		   strstr(text, "\tfield:u64 page_faults;\toffset:16;\tsize:8;\tsigned:0;\n") &&
		   strstr(text, "print fmt: \"task_clock=%llu page_faults=%llu\", REC->task_clock, REC->page_faults\n"),
	   "pmu_counters is described in the kernel's format syntax");
	ok(tb_schema_load_format(s, "pmu_counters", "tracebuf", text, (size_t)n) == 0,
	   "and the reader's format parser (with libtraceevent) accepts it");

	/* Attached to an event of one's own: fields after its own. */
	struct tb_evfield fields[3] = {{"unsigned int", "request", 8, 4, 0}};
	is_int(tb_pmu_fields(p, 16, fields + 1, 2), 2, "tb_pmu_fields: two fields to attach");
	struct tb_evdesc mine = {"app", "request_done", 32, 3, fields, "\"req=%u tc=%llu pf=%llu\", REC->request, REC->task_clock, REC->page_faults"};
	n = tb_evdesc_format(&mine, 700, text, sizeof(text));
	ok(tb_schema_load_format(s, "request_done", "app", text, (size_t)n) == 0 &&
		   tb_schema_event(s, 700, NULL) && tb_format_field(tb_schema_event(s, 700, NULL), "page_faults")->offset == 24,
	   "an event of one's own with the counters attached parses, page_faults at offset 24");

	for (int i = 0; i < 3; i++) {
		spin_for(0.005);
		tb_pmu_write(ring, p, 0);
	}
	while (tb_consume_merged(ring, &ev) == 1) {
		uint16_t id;
		memcpy(&id, ev.data, 2);
		if (ev.kind != TB_READ_RECORD || id != TB_PMU_COUNTERS_ID || ev.len < 24)
			continue;
		memcpy(records ? last : first, (const uint8_t *)ev.data + 8, 16);
		records++;
	}
	is_int(records, 3, "tb_pmu_write: three pmu_counters events in the ring");
	ok(last[0] > first[0], "task_clock grows from the first to the last (%llu -> %llu)",
	   (unsigned long long)first[0], (unsigned long long)last[0]);
	tb_schema_free(s);
	tb_ring_free(ring);
	tb_pmu_close(p);
}

/* ------------------------------------------------------------ sampling */

struct worker {
	pid_t tid;
	double seconds; /* CPU time to spin */
	size_t pages;   /* fresh pages to touch (the page-fault sampler) */
	long faults;    /* the kernel's count of the thread's page faults (getrusage) */
	struct tb_ring *ring;       /* whose clock stamps the spin (when set) */
	uint64_t spin_from, spin_to; /* spin_for's run on that clock (raw) */
};

/* Each page's first byte written once: one page fault each, at this function's store. */
__attribute__((noinline, no_sanitize("address"))) void touch_pages(uint8_t *mem, size_t pages, size_t psz);
__attribute__((noinline, no_sanitize("address"))) void touch_pages(uint8_t *mem, size_t pages, size_t psz)
{
	/*
	 * Not instrumented under ASan: its check reads the shadow of each
	 * fresh page, which faults in shadow pages from this very function.
	 */
	for (size_t i = 0; i < pages; i++)
		((volatile uint8_t *)mem)[i * psz] = 1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	struct rusage ru;

	w->tid = gettid();
	if (w->seconds > 0) {
		w->spin_from = w->ring ? tb_ring_clock_now(w->ring) : 0;
		spin_for(w->seconds);
		w->spin_to = w->ring ? tb_ring_clock_now(w->ring) : 0;
	}
	if (w->pages) {
		uint8_t *mem = mmap(NULL, w->pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem != MAP_FAILED) {
			madvise(mem, w->pages * psz, MADV_NOHUGEPAGE); /* a 2 MB page would be one fault */
			touch_pages(mem, w->pages, psz);
			munmap(mem, w->pages * psz);
		}
	}
	getrusage(RUSAGE_THREAD, &ru);
	w->faults = ru.ru_minflt + ru.ru_majflt;
	return NULL;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Which mapping of this process holds ip (/proc/self/maps), for a failure's explanation. */
static void say_mapping(uint64_t ip)
{
	char line[512];
	unsigned long long lo, hi;
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && ip >= lo && ip < hi) {
			line[strcspn(line, "\n")] = 0;
			fail_diag("  unnamed ip 0x%llx lies in: %s", (unsigned long long)ip, line);
			found = true;
		}
	if (f)
		fclose(f);
	if (!found)
		fail_diag("  unnamed ip 0x%llx lies in no mapping of this process", (unsigned long long)ip);
}

/* The sampler's records in the ring, and those of one thread. */
struct sample_tally {
	size_t records, lost; /* pmu_sample records of any thread; the pmu_lost records' counts */
	size_t mine, outside, bad_cpu, bad_tgid, unnamed;
	size_t in_spin, on_path, in_touch;
	uint64_t unnamed_ip; /* the first of the worker's samples no symbol names */
	/* Taken while the worker was inside spin_for (100 us clear of its ends), and of them on its path. */
	size_t in_window, window_on_path;
};

#define WINDOW_MARGIN_NS 100000 /* for the TSC ring's conversion of perf's times */

/* Whether a sample taken at t (raw, the ring's clock) lies inside w's spin, the margin clear of its ends. */
static bool in_spin_window(struct tb_ring *ring, const struct worker *w, uint64_t t)
{
	if (!w->spin_to)
		return false;
	uint64_t ns = tb_ring_to_ns(ring, t), from = tb_ring_to_ns(ring, w->spin_from), to = tb_ring_to_ns(ring, w->spin_to);
	return ns > from + WINDOW_MARGIN_NS && ns + WINDOW_MARGIN_NS < to;
}

static void tally_samples(struct tb_ring *ring, const struct worker *w, uint64_t t0, uint64_t t1,
			  struct sample_tally *t)
{
	struct tb_usyms *syms;
	struct tb_usym sym;
	struct tb_read_event ev;

	memset(t, 0, sizeof(*t));
	tb_usyms_self(&syms, NULL, NULL);
	while (tb_consume_merged(ring, &ev) == 1) {
		struct tb_pmu_sample s;
		struct tb_pmu_lost l;
		if (ev.kind != TB_READ_RECORD || ev.len < sizeof(l))
			continue;
		memcpy(&l, ev.data, sizeof(l));
		if (l.hdr.type == TB_PMU_LOST_ID)
			t->lost += l.lost;
		if (ev.len < sizeof(s))
			continue;
		memcpy(&s, ev.data, sizeof(s));
		if (s.hdr.type != TB_PMU_SAMPLE_ID)
			continue;
		t->records++;
		if (s.tid != w->tid)
			continue;
		t->mine++;
		t->outside += s.time < t0 || s.time > t1;
		t->bad_cpu += s.cpu >= (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
		t->bad_tgid += s.tgid != getpid() || s.hdr.pid != w->tid;
		bool named = tb_usyms_lookup(syms, s.ip, &sym) && sym.name;
		if (in_spin_window(ring, w, s.time)) {
			t->in_window++;
			if (named && on_spin_path(sym.name))
				t->window_on_path++;
			else
				fail_diag("  inside spin_for's run (%.3f ms into it, %.3f ms before its end): a sample in %s",
					  (double)(tb_ring_to_ns(ring, s.time) - tb_ring_to_ns(ring, w->spin_from)) / 1e6,
					  (double)(tb_ring_to_ns(ring, w->spin_to) - tb_ring_to_ns(ring, s.time)) / 1e6,
					  named ? sym.name : "(no symbol)");
		}
		if (!named) {
			if (!t->unnamed++)
				t->unnamed_ip = s.ip;
			continue;
		}
		t->in_spin += !strcmp(sym.name, "spin_for");
		t->on_path += on_spin_path(sym.name);
		t->in_touch += !strcmp(sym.name, "touch_pages");
	}
	tb_usyms_free(syms);
}

/*
 * The worker run from start to end under the sampler, which is then
 * stopped (its stats in *st) and its records tallied; the worker's wall
 * time in seconds.
 */
static double sample_worker(struct tb_ring *ring, struct tb_pmu_sampler *smp, struct worker *w,
			    struct tb_pmu_sampler_stats *st, struct sample_tally *t)
{
	uint64_t t0 = tb_ring_clock_now(ring), t1;
	double wall = mono_s();
	pthread_t th;

	pthread_create(&th, NULL, worker_main, w);
	pthread_join(th, NULL);
	wall = mono_s() - wall;
	t1 = tb_ring_clock_now(ring);
	tb_pmu_sampler_close(smp, st);
	tally_samples(ring, w, t0, t1, t);
	return wall;
}

/*
 * Sampling the task clock: what the kernel delivered is all in the ring,
 * each sample named (thread, process, CPU, time, function).  How many
 * the kernel takes is its own business on a shared machine: the timer of
 * a task-clock sample runs while the thread is on a CPU, and a period that
 * ends while the thread is in the kernel (this test samples user space
 * only) or that a late timer skipped yields none; seen beside two CPU
 * hogs, 153 samples of a worker that ran 300 ms.  So the count is held to
 * what must be true: at least one, and no more than one per period of the
 * worker's wall time (the timers ran only while it ran) and one per CPU.
 */
static void test_sampler(enum tb_clock clock, const char *clock_name)
{
	struct tb_ring_opts ro;
	struct tb_ring *ring;
	struct tb_pmu_sampler *smp;
	struct tb_pmu_sampler_opts so = {.counter = TB_PMU_TASK_CLOCK, .period = 1000000};
	struct tb_pmu_sampler_stats st;
	struct worker w = {.seconds = 0.3};
	struct sample_tally t;
	char why[512];
	double wall;
	int rc;

	tb_ring_opts_default(&ro);
	ro.clock = clock;
	ro.size_kb = 512;
	tb_ring_new(&ring, &ro);
	rc = tb_pmu_sampler_open(&smp, ring, &so, why, sizeof(why));
	if (!ok(rc == 0, "%s ring: the sampler starts (%s)", clock_name, rc ? why : "task-clock, every 1 ms")) {
		skip(6, "no sampler");
		tb_ring_free(ring);
		return;
	}
	w.ring = ring;
	wall = sample_worker(ring, smp, &w, &st, &t);
	ok(t.mine >= 1 && t.mine <= (size_t)(wall * 1e3) + st.cpus,
	   "%s: %zu samples of a worker thread that spun 300 ms of CPU in %.0f ms (created after the start: inherited)",
	   clock_name, t.mine, wall * 1e3);
	is_int(t.outside, 0, "%s: every sample's time lies inside the run's window on the ring's clock", clock_name);
	ok(t.bad_cpu == 0 && t.bad_tgid == 0, "%s: each names this process, the worker thread and a real CPU", clock_name);
	/*
	 * While the worker was inside spin_for, it ran spin_for and the clock
	 * read alone: every sample taken then is named, on that path.  Its
	 * start and exit (libc's thread code, partly in no symbol table a
	 * stripped libc keeps) are left out, by time: counting them by a bound
	 * failed 2 in 200 runs beside hogs (three samples there).
	 */
	if (!ok(t.in_spin >= 1 && t.in_window >= 1 && t.window_on_path == t.in_window,
		"%s: the %zu samples taken inside spin_for's run are named on its path (%zu in spin_for, %zu in the "
		"clock read); of all %zu, %zu elsewhere, %zu unnamed", clock_name, t.in_window, t.in_spin,
		t.on_path - t.in_spin, t.mine, t.mine - t.on_path - t.unnamed, t.unnamed) && t.unnamed)
		say_mapping(t.unnamed_ip);
	ok(st.samples == t.records && st.written == st.samples && st.lost == t.lost,
	   "%s: stats: %llu samples read, %llu written, %zu in the ring; %llu lost, as the pmu_lost events say; %u CPUs",
	   clock_name, (unsigned long long)st.samples, (unsigned long long)st.written, t.records,
	   (unsigned long long)st.lost, st.cpus);
	tb_ring_free(ring);
}

/*
 * Sampling page faults, every one (period 1): an exact count.  Each
 * first write to a fresh anonymous page is one fault, taken in user space
 * at touch_pages()'s store, so that function's samples are the pages it
 * touched, neither more nor fewer; and the thread's samples are no more
 * than the faults the kernel counted for it (getrusage, kernel-mode faults
 * included).  The one exception the kernel announces: throttling.
 */
static void test_sampler_faults(void)
{
	struct tb_ring *ring;
	struct tb_pmu_sampler *smp;
	struct tb_pmu_sampler_opts so = {.counter = TB_PMU_PAGE_FAULTS, .period = 1};
	struct tb_pmu_sampler_stats st;
	struct worker w = {.pages = 200};
	struct sample_tally t;
	char why[512];

	tb_ring_new(&ring, NULL);
	if (!ok(tb_pmu_sampler_open(&smp, ring, &so, why, sizeof(why)) == 0, "the page-fault sampler starts (%s)",
		why)) {
		skip(3, "no sampler");
		tb_ring_free(ring);
		return;
	}
	sample_worker(ring, smp, &w, &st, &t);
	if (st.throttled)
		ok(t.in_touch < w.pages, "page faults: the kernel throttled the sampler %llu times: %zu of %zu pages sampled",
		   (unsigned long long)st.throttled, t.in_touch, w.pages);
	else
		is_int(t.in_touch, w.pages, "page faults: one sample in touch_pages per fresh page touched");
	ok(t.mine >= t.in_touch && t.mine <= (size_t)w.faults && t.outside == 0 && t.bad_tgid == 0,
	   "page faults: the worker's %zu samples, all inside the run, no more than the %ld faults the kernel "
	   "counted for it", t.mine, w.faults);
	ok(st.samples == t.records && st.written == st.samples && st.lost == 0,
	   "page faults: stats: %llu samples read, %llu written, %zu in the ring, %llu lost",
	   (unsigned long long)st.samples, (unsigned long long)st.written, t.records, (unsigned long long)st.lost);
	tb_ring_free(ring);
}

/* Samples saved with their descriptions read back as text, ips named. */
static void test_sampler_report(void)
{
	struct tb_ring *ring;
	struct tb_pmu_sampler *smp;
	struct tb_pmu_sampler_opts so = {.counter = TB_PMU_TASK_CLOCK, .period = 1000000};
	struct tb_save_event events[] = {{&tb_pmu_sample_event, TB_PMU_SAMPLE_ID},
					 {&tb_pmu_lost_event, TB_PMU_LOST_ID}};
	struct tb_save_opts save = {events, 2, NULL};
	struct tb_problem err = {0};
	struct worker w = {.seconds = 0.1};
	struct tb_pmu_sampler_stats st;
	char dir[] = "/tmp/tb-test-pmu-XXXXXX", cmd[512], line[1024], name[256];
	const char *b = getenv("TB_BUILD");
	size_t lines = 0, mine = 0, named = 0, in_window = 0, window_on_path = 0;
	pthread_t th;
	FILE *p;

	if (!mkdtemp(dir) || tb_ring_new(&ring, NULL) < 0 ||
	    tb_pmu_sampler_open(&smp, ring, &so, NULL, 0) < 0) {
		skip(2, "no sampler");
		return;
	}
	w.ring = ring;
	pthread_create(&th, NULL, worker_main, &w);
	pthread_join(th, NULL);
	tb_pmu_sampler_close(smp, &st);
	ok(tb_save_ring(ring, dir, &save, &err) == 0, "the ring saved with the sample events described (%s)",
	   err.reason);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --no-header %s", b ? b : "build", dir);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		const char *at = strstr(line, " pmu_sample: ip=");
		unsigned long long time;
		int tid;
		if (!at)
			continue;
		lines++;
		if (sscanf(at, " pmu_sample: ip=%255s tid=%d cpu=%*u time=%llu", name, &tid, &time) != 3 || tid != w.tid)
			continue;
		mine++;
		named += !strcmp(name, "spin_for");
		if (in_spin_window(ring, &w, time)) {
			in_window++;
			if (on_spin_path(name))
				window_on_path++;
			else
				fail_diag("  inside spin_for's run, `report` names a sample %s", name);
		}
	}
	if (p)
		pclose(p);
	/* As test_sampler: the samples taken inside spin_for's run, named on its path. */
	ok(lines == st.written && named >= 1 && in_window >= 1 && window_on_path == in_window,
	   "`tracebuf report` prints all %zu of %llu samples written; the worker's %zu: %zu with ip=spin_for, %zu of the %zu "
	   "inside its run on its path (names from DIR/objects)", lines, (unsigned long long)st.written, mine, named,
	   window_on_path, in_window);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	tb_ring_free(ring);
}

static void test_sampler_refusals(void)
{
	struct tb_ring_opts ro;
	struct tb_ring *ring;
	struct tb_pmu_sampler *smp;
	struct tb_pmu_sampler_opts so = {.counter = TB_PMU_TASK_CLOCK};
	char why[512];
	int rc;

	tb_ring_opts_default(&ro);
	ro.clock = TB_CLOCK_COUNTER;
	tb_ring_new(&ring, &ro);
	rc = tb_pmu_sampler_open(&smp, ring, &so, why, sizeof(why));
	ok(rc == -EINVAL && strstr(why, "counter, not a time"), "a counter-clock ring: refused: %s", why);
	tb_ring_free(ring);
	tb_ring_new(&ring, NULL);
	so.counter = TB_PMU_CYCLES;
	rc = tb_pmu_sampler_open(&smp, ring, &so, why, sizeof(why));
	if (rc == 0) {
		tb_pmu_sampler_close(smp, NULL);
		ok(1, "sampling cycles works on this machine");
	} else {
		ok(strstr(why, "cycles: ") == why && strstr(why, "no hardware PMU"),
		   "sampling cycles without a PMU: %s", why);
	}
	tb_ring_free(ring);
}

/* ------------------------------------------------------------ refusals */

/*
 * In a child that gave up root: what perf_event_paranoid lets it do, and
 * the words of each refusal.  The child writes "ok|not ok<TAB>name" lines.
 */
static void unprivileged_child(int out)
{
	static const enum tb_pmu_counter tc[] = {TB_PMU_TASK_CLOCK};
	int level = paranoid();
	struct tb_pmu *p;
	struct tb_ring *ring;
	struct tb_pmu_sampler *smp;
	struct tb_pmu_sampler_opts so = {.counter = TB_PMU_TASK_CLOCK, .flags = TB_PMU_KERNEL};
	char why[512], line[1024], want[128];
	FILE *f = fdopen(out, "w");
	int missing;

	/* User-space counting of one's own thread: allowed below 3. */
	missing = tb_pmu_open(&p, tc, 1, 0);
	if (level >= 3)
		snprintf(want, sizeof(want), "%d >= 3 forbids perf_event_open", level);
	fprintf(f, "%s\tunprivileged, paranoid %d: user-space task_clock %s\n",
		(level >= 3 ? missing == 1 && strstr(tb_pmu_problem(p, 0), want) : missing == 0) ? "ok" : "not ok",
		level, level >= 3 ? "refused with the reason" : "counts");
	tb_pmu_close(p);

	/* Kernel counting: allowed only at 1 or below. */
	missing = tb_pmu_open(&p, tc, 1, TB_PMU_KERNEL);
	snprintf(want, sizeof(want), "perf_event_paranoid is %d and this process lacks CAP_PERFMON", level);
	snprintf(line, sizeof(line), "%s", missing ? tb_pmu_problem(p, 0) : "(counted)");
	fprintf(f, "%s\tunprivileged, paranoid %d, TB_PMU_KERNEL: %s\n",
		(level <= 1 ? missing == 0
			    : missing == 1 && strstr(line, "task_clock: refused by the kernel (perf_event_open: E") == line &&
				      strstr(line, want) &&
				      strstr(line, level == 2 ? "2 = 2 allows user-space counting only" : ">= 3 forbids"))
			? "ok"
			: "not ok",
		level, line);
	tb_pmu_close(p);

	/* Context switches are counted in kernel mode: they need 1 or below. */
	static const enum tb_pmu_counter cs[] = {TB_PMU_CONTEXT_SWITCHES};
	missing = tb_pmu_open(&p, cs, 1, 0);
	snprintf(line, sizeof(line), "%s", missing ? tb_pmu_problem(p, 0) : "(counted)");
	fprintf(f, "%s\tunprivileged, paranoid %d, context_switches: %s\n",
		(level <= 1 ? missing == 0
			    : missing == 1 && strstr(line, want) &&
				      strstr(line, level == 2 ? "context_switches happen in the kernel: lower it to 1"
							      : ">= 3 forbids"))
			? "ok"
			: "not ok",
		level, line);
	tb_pmu_close(p);

	/* The sampler says the same. */
	tb_ring_new(&ring, NULL);
	int rc = tb_pmu_sampler_open(&smp, ring, &so, why, sizeof(why));
	if (rc == 0)
		tb_pmu_sampler_close(smp, NULL);
	fprintf(f, "%s\tunprivileged sampler with TB_PMU_KERNEL: %s\n",
		(level <= 1 ? rc == 0 : rc < 0 && strstr(why, want)) ? "ok" : "not ok", rc ? why : "(started)");
	tb_ring_free(ring);
	fclose(f);
}

static void test_unprivileged(void)
{
	int fds[2];
	pid_t pid;
	char line[1200];
	FILE *in;
	int n = 0, status;

	if (geteuid() != 0) {
		skip(5, "not root: cannot switch to an unprivileged user for the refusal texts");
		return;
	}
	if (pipe(fds) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(3);
		unprivileged_child(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	while (fgets(line, sizeof(line), in)) {
		char *tab = strchr(line, '\t');
		line[strcspn(line, "\n")] = 0;
		if (!tab)
			continue;
		*tab = 0;
		ok(!strcmp(line, "ok"), "%s", tab + 1);
		n++;
	}
	fclose(in);
	waitpid(pid, &status, 0);
	is_int(n, 4, "the unprivileged child ran its four checks (exit %d)", WEXITSTATUS(status));
}

int main(void)
{
	read_clock = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_DEFAULT, "clock_gettime");
	if (!read_clock)
		read_clock = clock_gettime;
	test_counters();
	test_events();
	test_sampler(TB_CLOCK_TSC, "TSC");
	test_sampler(TB_CLOCK_MONO, "mono");
	test_sampler_faults();
	test_sampler_report();
	test_sampler_refusals();
	test_unprivileged();
	return done_testing();
}
