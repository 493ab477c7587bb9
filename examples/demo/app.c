// SPDX-License-Identifier: MIT
/*
 * app.c - the demo's "application": the functions whose entries and exits
 * are traced.  This file alone is built with -finstrument-functions (the
 * Makefile); the driver, examples/demo.c, and the library are not.
 * Every function is noipa so the compiler keeps each call under its name.
 */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "tracebuf/blob.h"

#define TRACED __attribute__((noipa))

static __thread int worker_no;
static __thread unsigned signals_handled;
static __thread int raise_next;

static const char *const paths[] = {"/index.html", "/api/users", "/static/app.js", "/img/logo.png",
				    "/api/orders"};

void demo_set_worker(int worker)
{
	worker_no = worker;
}

unsigned demo_signals_handled(void)
{
	return signals_handled;
}

void demo_raise_in_lookup(void)
{
	raise_next = 1;
}

/* The SIGUSR1 handler: one event, written wherever its thread was. */
TRACED static void on_signal(int signo)
{
	tb_trace(demo, signal, worker_no, signo, ++signals_handled);
}

int demo_install_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGUSR1, &sa, NULL);
}

/* FNV-1a: any hash would do; this one is a loop worth timing. */
TRACED static uint32_t hash_path(const char *path)
{
	uint32_t h = 2166136261u;

	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 16777619u;
	return h;
}

TRACED static const char *parse_path(int id)
{
	return paths[(unsigned)id % (sizeof(paths) / sizeof(paths[0]))];
}

TRACED static uint32_t lookup(int id, const char *path)
{
	uint32_t h = hash_path(path);

	if (raise_next) {
		raise_next = 0;
		raise(SIGUSR1); /* handled before raise returns: on_signal nests inside lookup */
	}
	if (id % 5 == 0)
		tb_printf("cache miss: worker %d id %d path %s\n", worker_no, id, path);
	return h;
}

TRACED uint32_t handle_request(int id)
{
	const char *path = parse_path(id);
	uint32_t h = lookup(id, path);

	tb_trace(demo, request, worker_no, id, path, h);
	return h;
}

TRACED int send_blob(struct tb_ring *ring, const void *bytes, size_t len)
{
	struct tb_blob blob;
	uint8_t *space = tb_blob_reserve(ring, len, &blob);

	if (!space)
		return blob.error;
	memcpy(space, bytes, len / 2);
	raise(SIGUSR1); /* the handler writes while the blob is open, and is not held up by it */
	memcpy(space + len / 2, (const uint8_t *)bytes + len / 2, len - len / 2);
	return tb_blob_commit(ring, &blob);
}

/* Called thousands of times by crunch: not traced, or its records would push the samples out. */
__attribute__((no_instrument_function)) static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

TRACED uint64_t crunch(unsigned ms)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)ms * 1000000u, acc = 1;

	/*
	 * The clock (a system call: a thread's CPU clock has no vDSO path) read
	 * once per 50000 rounds, some 50 us: read every 1000, half the time
	 * went to it, and a sampler period that ends in the kernel gives no
	 * sample (seen beside two CPU hogs: 16 samples, none in crunch).
	 */
	while (thread_cpu_ns() < end)
		for (int i = 0; i < 50000; i++)
			acc = acc * 6364136223846793005u + 1442695040888963407u;
	return acc;
}
