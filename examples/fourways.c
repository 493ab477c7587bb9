// SPDX-License-Identifier: MIT
/*
 * fourways - one event, app:request, consumed four ways in one run
 * (scripts/fourways.sh runs it so, `make run` shows it):
 *
 *   1. tracebuf's ring: the program's own ring, read back at the end;
 *   2. a hist attached at the source (tb_hist_attach, ":record" keeps the
 *      records), printed at the end, and read from outside while it runs
 *      (`tracebuf hist --attach PID`);
 *   3. bpftrace on the event's USDT probe (usdt:PATH:app:request);
 *   4. `tracebuf record` around it: the same records in a trace.dat that
 *      trace-cmd reads (a program with its own ring writes a copy to the
 *      session's).
 *
 *   fourways [THREADS [REQUESTS]] [--usdt-wait SECS] [--hold FILE]
 *
 * THREADS threads (default 4) each serve REQUESTS (default 2500) requests,
 * route = i % 5, bytes = 100 * (route + 1).  --usdt-wait: fire only once a
 * USDT consumer is attached (up to SECS).  --hold FILE: once the threads are
 * done, write the attached hist's text (tb_hist_print_attached) to FILE and
 * wait for SIGTERM or SIGINT, so that another process can read the maps of
 * a program whose writers are stopped (tests/t_hist_attach.sh).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracebuf/events.h"
#include "tracebuf/hist.h"
#include "tracebuf/reader.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(app, request, TB_PROTO(uint64_t route, uint64_t bytes),
	 TB_FIELDS(tb_field(uint64_t, route, route), tb_field(uint64_t, bytes, bytes)),
	 TB_PRINTK("route=%llu bytes=%llu", (unsigned long long)REC->route, (unsigned long long)REC->bytes))

#define SPEC "keys=route:vals=bytes:sort=route:record"

static unsigned long requests = 2500;

static void *serve(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < requests; i++)
		tb_trace(app, request, i % 5, 100 * (i % 5 + 1));
	return NULL;
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* The attached hist's text into path (whole: written aside, then renamed), then wait to be stopped. */
static int hold(const char *path)
{
	char tmp[4096];
	struct sigaction sa = {.sa_handler = on_stop};
	sigset_t none;
	FILE *f;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")) || tb_hist_print_attached(f) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
		perror(path);
		return 1;
	}
	sigemptyset(&none);
	while (!stop)
		sigsuspend(&none);
	return 0;
}

/* A USDT consumer counted in the probe's semaphore, within secs. */
static void usdt_wait(double secs)
{
	struct timespec nap = {0, 10000000};

	for (int i = 0; i < secs * 100 && !tb_usdt_attached(app, request); i++)
		nanosleep(&nap, NULL);
	if (!tb_usdt_attached(app, request))
		fprintf(stderr, "fourways: no USDT consumer after %.0f s: firing anyway\n", secs);
}

/* Way 1: the program's own ring, consumed: its records counted per route. */
static void read_ring(struct tb_ring *ring)
{
	unsigned long per_route[5] = {0}, total = 0;
	struct tb_read_event ev;

	while (tb_consume_merged(ring, &ev) == 1) {
		uint64_t route;
		if (ev.kind != TB_READ_RECORD || ev.len < 24)
			continue;
		memcpy(&route, (const uint8_t *)ev.data + 8, sizeof(route)); /* after the 8-byte common header */
		per_route[route % 5]++;
		total++;
	}
	printf("1. tracebuf's ring: %lu records; route 0..4:", total);
	for (int r = 0; r < 5; r++)
		printf(" %lu", per_route[r]);
	printf("\n");
}

int main(int argc, char **argv)
{
	int threads = 4;
	const char *hold_file = NULL;
	struct tb_hist_error err = {0};
	struct tb_ring_opts o;
	struct tb_ring *ring;
	pthread_t th[64];
	double wait = 0;
	int pos = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold_file = argv[++i];
		else if (!strcmp(argv[i], "--usdt-wait") && i + 1 < argc)
			wait = atof(argv[++i]);
		else if (pos++ == 0)
			threads = atoi(argv[i]);
		else
			requests = strtoul(argv[i], NULL, 10);
	}
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "usage: fourways [THREADS (1..64) [REQUESTS]] [--usdt-wait SECS] [--hold FILE]\n");
		return 2;
	}
	tb_ring_opts_default(&o);
	o.size_kb = 4096;
	o.overwrite = 0;
	if ((rc = tb_ring_new(&ring, &o)) < 0) {
		fprintf(stderr, "fourways: tb_ring_new: %s\n", strerror(-rc));
		return 1;
	}
	tb_events_attach(ring);
	tb_events_enable("app:request", NULL, 0);
	if ((rc = tb_hist_attach("app:request", SPEC, &err)) < 0) {
		fprintf(stderr, "fourways: tb_hist_attach: %s %s\n", strerror(-rc), err.reason);
		return 1;
	}
	if (wait > 0)
		usdt_wait(wait);
	for (int t = 0; t < threads; t++)
		pthread_create(&th[t], NULL, serve, NULL);
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	if (hold_file)
		rc = hold(hold_file);
	read_ring(ring);
	printf("2. the attached hist (%s):\n", SPEC);
	tb_hist_print_attached(stdout);
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return rc;
}
