/*
 * bench_blobsave - what saving a 64 KiB blob with its page costs
 * (tb_blob_save_page: check the chunk words, copy the bytes out, check
 * again, CRC-32 them, write header + bytes to the store), next to the peer
 * measured in the same run: a memcpy of the same 64 KiB into a buffer and
 * a write(2) of it to the same kind of file (the bytes saved with no check
 * and no CRC).  The store is a file on /dev/shm (tmpfs), rewound between
 * batches, so the disk is not what is measured.
 *
 * Like bench_blob: batches of BATCH saves timed with the TSC, the fastest
 * batch kept, cases interleaved twice.  Writes build/bench/results-blobsave.json
 * (case, threads, tracebuf_ns, peer, peer_ns, ratio = peer_ns / tracebuf_ns).
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bench_util.h"

#include "tracebuf/blob.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"

#define BLOB (64 * 1024)
#define BATCH 16
#define BATCHES 300

static struct tb_ring *ring;
static uint8_t *page, *src, *copy;
static size_t page_len;
static int fd;
static double tsc_per_ns;
static int failures;


static void loop_save(void)
{
	struct tb_blob_save_counts n = {0};

	for (int i = 0; i < BATCH; i++)
		failures += tb_blob_save_page(ring, page, page_len, fd, &n) != 0;
	failures += n.saved != BATCH;
}

static void loop_copy_write(void)
{
	for (int i = 0; i < BATCH; i++) {
		memcpy(copy, src, BLOB);
		failures += write(fd, copy, BLOB) != BLOB;
	}
}

/* ns per blob: the fastest of BATCHES batches, the store rewound before each. */
static double measure(void (*fn)(void))
{
	uint64_t best = UINT64_MAX;

	for (int b = 0; b < BATCHES; b++) {
		if (lseek(fd, 0, SEEK_SET) < 0)
			failures++;
		uint64_t t0 = __rdtsc();
		fn();
		uint64_t t = __rdtsc() - t0;
		if (t < best)
			best = t;
	}
	return (double)best / tsc_per_ns / BATCH;
}

int main(int argc, char **argv)
{
	struct tb_ring_opts o;
	char path[4096], store[] = "/dev/shm/tb-bench-blobsave-XXXXXX";
	FILE *f;

	(void)argc;
	tb_ring_opts_default(&o);
	o.blob_kb = 1024;
	src = aligned_alloc(4096, BLOB);
	copy = aligned_alloc(4096, BLOB);
	if (!src || !copy || tb_ring_new(&ring, &o) < 0 || (fd = mkstemp(store)) < 0) {
		fprintf(stderr, "bench_blobsave: cannot set up\n");
		return 1;
	}
	unlink(store);
	for (size_t i = 0; i < BLOB; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	pin(0);
	if (tb_blob_write(ring, src, BLOB) < 0 || !(page = malloc(tb_ring_subbuf_size(ring))) ||
	    (page_len = (size_t)tb_read_page(ring, 0, page, tb_ring_subbuf_size(ring))) == 0) {
		fprintf(stderr, "bench_blobsave: no page with a blob reference\n");
		return 1;
	}
	tsc_per_ns = tsc_ticks_per_ns();

	double s = 1e30, p = 1e30;
	for (int round = 0; round < 2; round++) {
		double v;
		if ((v = measure(loop_copy_write)) < p)
			p = v;
		if ((v = measure(loop_save)) < s)
			s = v;
	}
	printf("bench_blobsave: a %d-byte blob saved with its page into a file on tmpfs, fastest of %d batches of %d\n",
	       BLOB, BATCHES, BATCH);
	printf("  memcpy + write(2) of 64 KiB       %8.1f ns (%.2f GB/s)\n", p, BLOB / p);
	printf("  tb_blob_save_page                 %8.1f ns (%.2f GB/s): %.2fx the copy and write\n", s, BLOB / s,
	       s / p);
	if (failures)
		printf("  (%d saves or writes failed: the figures are not valid)\n", failures);

	snprintf(path, sizeof(path), "%s/results-blobsave.json", dirname(argv[0]));
	if ((f = fopen(path, "w"))) {
		fprintf(f, "[\n  {\"case\": \"blob 64 KiB saved with its page (tb_blob_save_page)\", \"threads\": 1, "
			   "\"tracebuf_ns\": %.1f, \"peer\": \"memcpy + write 64 KiB\", \"peer_ns\": %.1f, "
			   "\"ratio\": %.3f}\n]\n",
			s, p, p / s);
		fclose(f);
		printf("  wrote %s\n", path);
	}
	close(fd);
	tb_ring_free(ring);
	return failures != 0;
}
