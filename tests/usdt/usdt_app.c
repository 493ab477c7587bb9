// SPDX-License-Identifier: MIT
/*
 * usdt_app - the program t_usdt.sh and bench_usdt.sh run under bpftrace.
 *
 *   usdt_app run LIBRARY N   fire usdt_t:hit N times with tracebuf's own
 *	switch on (phase 1) and N times with it off (phase 2), a tb_printf and a
 *	marker, then dlopen LIBRARY and fire its usdt_lib:fire 5 times.  Prints
 *	what the ring recorded ("ring phase=P records=R") and the arguments the
 *	first three hits of each phase must arrive with ("want ..."), in the
 *	layout of the bpftrace script's printf.
 *   usdt_app bench N [wait]  ns per hit of usdt_t:hit, tracebuf's switch off
 *	(the gate is open only when a USDT consumer is attached) and on; with
 *	"wait", once a consumer is attached (bench/bench_usdt.sh).
 *
 * Every probe is fired only once a consumer is attached: the program waits
 * (60 s at most) for the kernel's count in the probe's semaphore; without
 * one ("usdt_app run" alone) it says so and exits 3.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "usdt/usdt_events.h"

#define WAIT_NS (60ull * 1000000000ull)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Poll attached() every millisecond until it holds or 60 s pass. */
static bool wait_for(bool (*attached)(void))
{
	uint64_t start = now_ns();
	struct timespec ms = {0, 1000000};

	while (!attached()) {
		if (now_ns() - start > WAIT_NS)
			return false;
		nanosleep(&ms, NULL);
	}
	return true;
}

static bool hit_attached(void)
{
	return tb_usdt_attached(usdt_t, hit);
}

/* The marker's descriptor, in libtracebuf (linked in statically: its probe is in this program). */
extern struct tb_event_desc tb__print_event;

/* Every probe of this program a consumer attached to: bpftrace attaches them one by one. */
static bool all_attached(void)
{
	return hit_attached() && __atomic_load_n(&tb__printf_gate.part.usdt, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&tb__print_event.gate.part.usdt, __ATOMIC_RELAXED);
}

static const char *const strings[] = {"alpha", "be ta", "a longer string than the tag"};

static void fire_phase(int phase, int n)
{
	for (int i = 0; i < n; i++)
		tb_trace(usdt_t, hit, phase, i, strings[i % 3], (1ull << 40) + (uint64_t)i, i & 1);
	for (int i = 0; i < n && i < 3; i++)
		printf("want hit phase=%d i=%d neg=%d s=%s big=%" PRIu64 " b=%d\n", phase, i, -i - 1,
		       strings[i % 3], (uint64_t)((1ull << 40) + (uint64_t)i), i & 1);
}

/* Records of usdt_t:hit of this phase in ring, consumed. */
static int ring_records(struct tb_ring *ring, int phase)
{
	struct tb_read_event ev;
	int n = 0;

	while (tb_consume_merged(ring, &ev) == 1) {
		struct tb_record_usdt_t_hit rec; /* copied: payloads are 4-byte aligned, the record has a u64 */
		if (ev.kind != TB_READ_RECORD || ev.len < sizeof(rec))
			continue;
		memcpy(&rec, ev.data, sizeof(rec));
		n += rec.common.common_type == tb_event_usdt_t_hit.id && rec.phase == phase;
	}
	return n;
}

static int run_library(const char *path)
{
	bool (*attached)(void);
	void (*fire)(int);
	void *lib = dlopen(path, RTLD_NOW);

	if (!lib) {
		fprintf(stderr, "usdt_app: %s\n", dlerror());
		return 1;
	}
	*(void **)&attached = dlsym(lib, "usdt_lib_attached");
	*(void **)&fire = dlsym(lib, "usdt_lib_fire");
	if (!attached || !fire || !wait_for(attached)) {
		fprintf(stderr, "usdt_app: %s: no consumer attached to usdt_lib:fire within 60 s\n", path);
		dlclose(lib);
		return 1;
	}
	fire(5);
	for (int k = 0; k < 5; k++)
		printf("want lib n=%d who=lib\n", k);
	dlclose(lib);
	return 0;
}

static int run(const char *library, int n)
{
	struct tb_ring *ring;

	if (tb_ring_new(&ring, NULL) < 0)
		return 1;
	tb_events_attach(ring);
	if (tb_events_enable("usdt_t:hit,ftrace:bprint,ftrace:print", NULL, 0) < 0)
		return 1;
	if (!wait_for(all_attached)) {
		fprintf(stderr, "usdt_app: no consumer attached to usdt_t:hit, ftrace:bprint and ftrace:print within 60 s\n");
		return 3;
	}
	fire_phase(1, n);
	printf("ring phase=1 records=%d\n", ring_records(ring, 1));
	tb_events_disable("usdt_t:hit", NULL, 0);
	fire_phase(2, n);
	printf("ring phase=2 records=%d\n", ring_records(ring, 2));
	tb_printf("usdt printf x=%d s=%s", -42, "pf");
	tb_marker_puts("usdt marker");
	printf("want bprint usdt printf x=%%d s=%%s -42 pf\nwant print usdt marker 11\n");
	fflush(stdout);
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return run_library(library);
}

/* ns per hit of n hits (the loop's own cost included; the bench subtracts the disabled figure). */
static double per_hit(int phase, int n)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++)
		tb_trace(usdt_t, hit, phase, i, "bench", (uint64_t)i, 0);
	return (double)(now_ns() - t0) / n;
}

static int bench(int n, bool wait)
{
	struct tb_ring *ring;
	double off, on;
	bool attached = wait ? wait_for(hit_attached) : hit_attached();

	if (tb_ring_new(&ring, NULL) < 0) /* overwrite mode: never full */
		return 1;
	tb_events_attach(ring);
	per_hit(0, n / 10 + 1); /* warm */
	off = per_hit(0, n);
	tb_events_enable("usdt_t:hit", NULL, 0);
	per_hit(0, n / 10 + 1);
	on = per_hit(0, n);
	tb_events_disable("usdt_t:hit", NULL, 0);
	printf("usdt_attached %d\noff_ns %.3f\nring_ns %.3f\n", attached, off, on);
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "run"))
		return run(argv[2], atoi(argv[3]));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "bench"))
		return bench(atoi(argv[2]), argc == 4 && !strcmp(argv[3], "wait"));
	fprintf(stderr, "usage: usdt_app run LIBRARY N | bench N [wait]\n");
	return 2;
}
