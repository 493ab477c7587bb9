/*
 * blobs - a program that writes big payloads (blobs) from several threads,
 * for `tracebuf record --blob-kb KB`, which hands it a ring in shared
 * memory through the environment (libtracebuf attaches before main).
 *
 *   tracebuf record --blob-kb 8192 -o blobs.dat -- build/examples/blobs DIR 4 8
 *   tracebuf report blobs.dat
 *
 * blobs DIR [THREADS [PER_THREAD [--slow|--kill]]]: each thread t writes
 * PER_THREAD blobs; blob k of thread t is "blob t=T k=K\n" then bytes of a
 * generator seeded by (t, k), its size from just above a sub-buffer's
 * payload (4073 bytes) up to 256 KiB (blob 0 of thread 0 is exactly 256
 * KiB).  Before writing a blob, the thread keeps a copy in DIR/T-K.bin, so
 * a test can compute what the report must show on its own.  --slow pauses
 * 20 ms after each blob; --kill ends the process by SIGKILL once every
 * thread is done (a crash, for `tracebuf recover`).  Exit 0 when every
 * blob was written, 1 if the ring refused one (the reason on stderr).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracebuf/blob.h"
#include "tracebuf/events.h"

#define MIN_BLOB 4073u
#define MAX_BLOB (256u * 1024)

static const char *dir;
static int per_thread, slow;
static _Atomic int refused;

static size_t blob_size(int t, int k)
{
	if (t == 0 && k == 0)
		return MAX_BLOB;
	return MIN_BLOB + ((size_t)k * 37717u + (size_t)t * 91813u) % (MAX_BLOB - MIN_BLOB);
}

static void fill(uint8_t *b, size_t len, int t, int k)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(t * 1000 + k + 1);
	int n = snprintf((char *)b, len, "blob t=%d k=%d\n", t, k);

	for (size_t i = (size_t)n; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)x;
	}
}

static int keep_copy(const uint8_t *b, size_t len, int t, int k)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%d-%d.bin", dir, t, k);
	if (!(f = fopen(path, "w")))
		return -errno;
	ok = fwrite(b, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

static void *writer(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint8_t *b = malloc(MAX_BLOB);

	for (int k = 0; b && k < per_thread; k++) {
		size_t len = blob_size(t, k);
		int rc;

		fill(b, len, t, k);
		if ((rc = keep_copy(b, len, t, k)) < 0 ||
		    (rc = tb_blob_write(tb_events_ring(), b, len)) < 0) {
			fprintf(stderr, "blobs: thread %d blob %d (%zu bytes): %s\n", t, k, len, strerror(-rc));
			refused++;
		}
		if (slow)
			usleep(20000);
	}
	free(b);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t tid[64];

	if (argc < 2 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: blobs DIR [THREADS [PER_THREAD [--slow|--kill]]]\n");
		return 2;
	}
	dir = argv[1];
	per_thread = argc > 3 ? atoi(argv[3]) : 8;
	slow = argc > 4 && !strcmp(argv[4], "--slow");
	if (!tb_events_ring()) {
		fprintf(stderr, "blobs: no ring (run me under tracebuf record --blob-kb KB)\n");
		return 2;
	}
	for (int t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, writer, (void *)(intptr_t)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	if (argc > 4 && !strcmp(argv[4], "--kill"))
		raise(SIGKILL);
	return refused ? 1 : 0;
}
