/*
 * pool - two worker threads serving requests: one typed tracepoint
 * (pool:request) and one printf event per request, and nothing else.  Run
 * it under `tracebuf record`, which hands it a ring in shared memory
 * (libtracebuf attaches before main):
 *
 *   tracebuf record -o pool.dat -- build/examples/pool 200
 *   tracebuf record --offcpu -o pool.dat -- build/examples/pool 200
 *
 * pool [N]: each worker serves N requests (default 100), sleeping 200 us
 * after every tenth so that the kernel sees it block.  At exit it prints to
 * stderr, one line, how many of each event it emitted:
 *
 *   pool: emitted pool:request=200 printf=200
 *
 * so a test can hold every view of the recording to the program's own count.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracebuf/tracepoint.h"

TB_EVENT(pool, request, TB_PROTO(int worker, uint64_t id, uint32_t bytes),
	 TB_FIELDS(tb_field(int, worker, worker), tb_field(uint64_t, id, id), tb_field(uint32_t, bytes, bytes)),
	 TB_PRINTK("worker=%d id=%llu bytes=%u", REC->worker, (unsigned long long)REC->id, REC->bytes))

struct worker {
	pthread_t thread;
	int number;
	uint64_t requests;
};

static atomic_ulong emitted_requests, emitted_printfs;

/*
 * Every call is counted: `record` without -e enables every event before
 * main runs, so each call is an event written (a ring that overflowed
 * would say so in its lost counts, which the test checks are zero).
 */
static void *serve(void *arg)
{
	struct worker *w = arg;

	for (uint64_t i = 0; i < w->requests; i++) {
		uint32_t bytes = (uint32_t)(512 + 64 * (i % 8));
		tb_trace(pool, request, w->number, i, bytes);
		atomic_fetch_add_explicit(&emitted_requests, 1, memory_order_relaxed);
		tb_printf("worker %d served request %llu\n", w->number, (unsigned long long)i);
		atomic_fetch_add_explicit(&emitted_printfs, 1, memory_order_relaxed);
		if (i % 10 == 9)
			usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
	struct worker workers[2];

	for (int i = 0; i < 2; i++) {
		workers[i] = (struct worker){.number = i + 1, .requests = n};
		if (pthread_create(&workers[i].thread, NULL, serve, &workers[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(workers[i].thread, NULL);
	/* relaxed: the joins above ordered every worker's increments before these loads */
	fprintf(stderr, "pool: emitted pool:request=%lu printf=%lu\n",
		atomic_load_explicit(&emitted_requests, memory_order_relaxed),
		atomic_load_explicit(&emitted_printfs, memory_order_relaxed));
	return 0;
}
