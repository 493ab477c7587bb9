/*
 * recorded - a program with events and no tracing code of its own: run it
 * under `tracebuf record`, which hands it a ring in shared memory through
 * the environment (libtracebuf attaches before main).
 *
 *   tracebuf record -e 'app:*' -o app.dat -- build/examples/recorded 1000 2
 *   tracebuf report app.dat
 *
 * recorded [N [CHILDREN [--printf|--slow|--threads]]]: the parent and each
 * of CHILDREN forked processes fire app:tick N times (n = 0..N-1, worker = 0
 * for the parent, 1..CHILDREN for the children), then app:done once;
 * --printf adds a tb_printf line per process, --slow a 1 ms pause every 100
 * ticks (a program still running when a test stops it), --threads makes
 * the CHILDREN threads of the one process instead, named "tick-worker-N"
 * (a recording must carry their names).  The tests count exactly these.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracebuf/tracepoint.h"

TB_EVENT(app, tick, TB_PROTO(uint64_t n, int worker),
	 TB_FIELDS(tb_field(uint64_t, n, n), tb_field(int, worker, worker)),
	 TB_PRINTK("n=%llu worker=%d", (unsigned long long)REC->n, REC->worker))

TB_EVENT(app, done, TB_PROTO(int worker, uint64_t count),
	 TB_FIELDS(tb_field(int, worker, worker), tb_field(uint64_t, count, count)),
	 TB_PRINTK("worker=%d count=%llu", REC->worker, (unsigned long long)REC->count))

static void work(int worker, uint64_t n, int with_printf, int slow)
{
	for (uint64_t i = 0; i < n; i++) {
		tb_trace(app, tick, i, worker);
		if (slow && i % 100 == 99)
			usleep(1000);
	}
	if (with_printf)
		tb_printf("worker %d finished\n", worker);
	tb_trace(app, done, worker, n);
}

struct worker {
	pthread_t thread;
	int number;
	uint64_t n;
};

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	char name[16];

	snprintf(name, sizeof(name), "tick-worker-%d", w->number);
	pthread_setname_np(pthread_self(), name);
	work(w->number, w->n, 0, 0);
	return NULL;
}

/* The workers as threads: 0 or 1. */
static int run_threads(uint64_t n, int threads)
{
	struct worker *w = calloc((size_t)threads + 1, sizeof(*w));
	int rc = 0;

	if (!w)
		return 1;
	/*
	 * The main thread's ticks first: it keeps its slot of the ring's thread
	 * table, and the workers, one after the other or side by side, leave
	 * their names in theirs (each slot names its last two writers).
	 */
	work(0, n, 0, 0);
	for (int t = 1; t <= threads; t++) {
		w[t] = (struct worker){.number = t, .n = n};
		if (pthread_create(&w[t].thread, NULL, worker_thread, &w[t]) != 0) {
			fprintf(stderr, "recorded: pthread_create failed\n");
			threads = t - 1;
			rc = 1;
			break;
		}
	}
	for (int t = 1; t <= threads; t++)
		pthread_join(w[t].thread, NULL);
	free(w);
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
	int children = argc > 2 ? atoi(argv[2]) : 0;
	int with_printf = argc > 3 && !strcmp(argv[3], "--printf");
	int slow = argc > 3 && !strcmp(argv[3], "--slow");

	if (argc > 3 && !strcmp(argv[3], "--threads"))
		return run_threads(n, children);

	for (int c = 1; c <= children; c++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM); /* stopped with its parent */
			work(c, n, with_printf, slow);
			return 0;
		}
	}
	work(0, n, with_printf, slow);
	while (wait(NULL) > 0)
		;
	return 0;
}
