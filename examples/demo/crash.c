/*
 * demo --crash [SHMFILE]: the demo's workers write into a ring in shared
 * memory (a named file, so it outlives the process) and the process kills
 * itself with SIGKILL while they are in the middle of their writes.  What
 * is left is for `tracebuf recover SHMFILE -o FILE.dat`: every committed
 * event, the LOST count of what the small ring overwrote, and the writes
 * that were in flight.  Just before the kill the main thread writes a blob
 * (CRASH_BLOB_LINES lines "crash blob line NNNN\n"), which recover saves
 * from the dead process's blob area with the pages.  scripts/run.sh does
 * exactly that.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"
#include "tracebuf/blob.h"
#include "tracebuf/shm.h"

#define CRASH_WORKERS 2
#define CRASH_RING_KB 16
#define CRASH_BLOB_KB 32
#define CRASH_BLOB_LINES 600 /* "crash blob line NNNN\n", 21 bytes each: 12600 bytes */

static void *crash_worker(void *arg)
{
	int no = (int)(long)arg;
	char name[16];

	cpu_set_t one;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&one);
	CPU_SET((no - 1) % (ncpus > 0 ? ncpus : 1), &one);
	sched_setaffinity(0, sizeof(one), &one); /* one worker per CPU: every CPU's buffer shows */
	snprintf(name, sizeof(name), "demo-w%d", no);
	pthread_setname_np(pthread_self(), name);
	demo_set_worker(no);
	for (int id = 1;; id++)
		handle_request(id);
	return NULL;
}

int demo_crash(const char *path)
{
	struct tb_ring_opts ro;
	struct tb_shm_opts so = {.path = path, .ring = &ro};
	struct timespec pause = {0, 10 * 1000 * 1000};
	struct tb_shm *shm;
	pthread_t t[CRASH_WORKERS];
	char desc[4096];
	int rc;

	tb_ring_opts_default(&ro);
	ro.size_kb = CRASH_RING_KB;
	ro.blob_kb = CRASH_BLOB_KB;
	ro.clock = TB_CLOCK_MONO; /* nanoseconds: the report prints seconds.microseconds */
	unlink(path);
	if ((rc = tb_shm_open(&so, &shm)) < 0) {
		fprintf(stderr, "demo: %s\n", tb_shm_error());
		return 1;
	}
	tb_events_attach(tb_shm_ring(shm));
	if (tb_events_enable("demo:*,ftrace:*", NULL, 0) < 0)
		return 1;
	printf("demo --crash: %d workers writing into %s (%d KiB per CPU); SIGKILL in 20 ms\n", CRASH_WORKERS, path,
	       CRASH_RING_KB);
	fflush(stdout);
	for (long i = 0; i < CRASH_WORKERS; i++)
		pthread_create(&t[i], NULL, crash_worker, (void *)(i + 1));
	nanosleep(&pause, NULL);
	/* where `tracebuf recover` looks for the descriptions (SHMFILE.formats/PID); the threads are named by now */
	snprintf(desc, sizeof(desc), "%s.formats", path);
	mkdir(desc, 0700);
	snprintf(desc, sizeof(desc), "%s.formats/%d", path, (int)getpid());
	if ((rc = tb_events_dump(desc, tb_shm_ring(shm))) < 0)
		fprintf(stderr, "demo: %s: %s\n", desc, strerror(-rc));
	nanosleep(&pause, NULL);
	static char blob[CRASH_BLOB_LINES * 21 + 1];
	for (int i = 0; i < CRASH_BLOB_LINES; i++)
		snprintf(blob + i * 21, 22, "crash blob line %04u\n", (unsigned)i % 10000u);
	if ((rc = tb_blob_write(tb_shm_ring(shm), blob, CRASH_BLOB_LINES * 21)) < 0)
		fprintf(stderr, "demo: the blob: %s\n", strerror(-rc));
	kill(getpid(), SIGKILL);
	return 1;
}
