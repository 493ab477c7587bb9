/*
 * bench_blob - cost of a 64 KiB blob (tracebuf/blob.h) next to a plain
 * memcpy of the same 64 KiB, in the same run.
 *
 * A blob write is: take chunks from the area's cursor, claim each (one
 * compare-and-swap per 4 KiB chunk), copy, mark the chunks committed, and
 * publish a 24-byte reference record through the ring.  The peer is the copy
 * alone, twice: into one 64 KiB buffer (always hot in the cache), and into
 * successive 64 KiB slices of a buffer as large as the blob area (the same
 * memory the blob writes walk through).  The ratio the goal is about
 * (<= 1.3x) is against the first, the stricter; both are printed.
 *
 * Like bench_write: each case times batches of BATCH writes with the TSC and
 * keeps the fastest batch (interference only ever slows a batch down).
 * Writes build/bench/results-blob.json (next to this program) in the shape
 * of results.json: case, threads, tracebuf_ns, peer, peer_ns, ratio =
 * peer_ns / tracebuf_ns.
 */
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "bench_util.h"

#include "tracebuf/blob.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"

#define BLOB (64 * 1024)
#define AREA_KB 1024 /* per CPU: 16 blobs */
#define BATCH 16
#define BATCHES 4000

static struct tb_ring *ring;
static uint8_t *src, *hot, *slices;
static double tsc_per_ns;

static void calibrate(void)
{
	tsc_per_ns = tsc_ticks_per_ns();
}

static int failures;

static void loop_blob_write(long n)
{
	for (long i = 0; i < n; i++)
		failures += tb_blob_write(ring, src, BLOB) != 0;
}

static void loop_blob_reserve(long n)
{
	for (long i = 0; i < n; i++) {
		struct tb_blob b;
		void *p = tb_blob_reserve(ring, BLOB, &b);
		if (!p) {
			failures++;
			continue;
		}
		memcpy(p, src, BLOB);
		failures += tb_blob_commit(ring, &b) != 0;
	}
}

static void loop_memcpy_hot(long n)
{
	for (long i = 0; i < n; i++) {
		memcpy(hot, src, BLOB);
		__asm__ volatile("" : : "r"(hot) : "memory"); /* the copy is not dead */
	}
}

static size_t slice;

static void loop_memcpy_slices(long n)
{
	for (long i = 0; i < n; i++) {
		memcpy(slices + slice * BLOB, src, BLOB);
		__asm__ volatile("" : : "r"(slices) : "memory");
		slice = (slice + 1) % (AREA_KB * 1024 / BLOB);
	}
}

/* ns per call of fn: the fastest of BATCHES batches of BATCH calls. */
static double measure(void (*fn)(long))
{
	uint64_t best = UINT64_MAX;

	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = __rdtsc();
		fn(BATCH);
		uint64_t t = __rdtsc() - t0;
		if (t < best)
			best = t;
	}
	return (double)best / tsc_per_ns / BATCH;
}

/* The reading side, for the record: a consumer copying 64 KiB blobs out. */
static double measure_consume(void)
{
	uint64_t best = UINT64_MAX;
	struct tb_read_event ev;

	while (tb_consume(ring, 0, &ev) == 1) /* what the write cases left, mostly overwritten */
		;
	for (int b = 0; b < 200; b++) {
		loop_blob_write(BATCH);
		uint64_t t0 = __rdtsc();
		for (int i = 0; i < BATCH; i++)
			if (tb_consume(ring, 0, &ev) != 1 || ev.kind != TB_READ_BLOB)
				failures++;
		uint64_t t = __rdtsc() - t0;
		if (t < best)
			best = t;
	}
	return (double)best / tsc_per_ns / BATCH;
}

static void json_entry(FILE *f, const char *name, double tb_ns, const char *peer, double peer_ns, int last)
{
	fprintf(f,
		"  {\"case\": \"%s\", \"threads\": 1, \"tracebuf_ns\": %.1f, \"peer\": \"%s\", \"peer_ns\": %.1f, "
		"\"ratio\": %.3f}%s\n",
		name, tb_ns, peer, peer_ns, peer_ns / tb_ns, last ? "" : ",");
}

int main(int argc, char **argv)
{
	struct tb_ring_opts o;
	char path[4096];
	FILE *f;

	(void)argc;
	tb_ring_opts_default(&o);
	o.size_kb = 1024;
	o.blob_kb = AREA_KB;
	src = aligned_alloc(4096, BLOB);
	hot = aligned_alloc(4096, BLOB);
	slices = aligned_alloc(4096, AREA_KB * 1024);
	if (!src || !hot || !slices || tb_ring_new(&ring, &o) < 0) {
		fprintf(stderr, "bench_blob: cannot set up\n");
		return 1;
	}
	for (size_t i = 0; i < BLOB; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(hot, 0, BLOB);
	memset(slices, 0, AREA_KB * 1024);
	pin(0);
	calibrate();

	/* interleaved, twice, so drift on a shared machine hits every case alike */
	double w = 1e30, r = 1e30, mh = 1e30, ms = 1e30;
	for (int round = 0; round < 2; round++) {
		double v;
		if ((v = measure(loop_memcpy_hot)) < mh)
			mh = v;
		if ((v = measure(loop_blob_write)) < w)
			w = v;
		if ((v = measure(loop_memcpy_slices)) < ms)
			ms = v;
		if ((v = measure(loop_blob_reserve)) < r)
			r = v;
	}
	double c = measure_consume();

	printf("bench_blob: %d-byte blob, %d KiB blob area per CPU, fastest of %d batches of %d, publish=%s\n", BLOB,
	       AREA_KB, BATCHES, BATCH, tb_ring_uses_rseq(ring) ? "rseq" : "try-lock");
	printf("  memcpy 64 KiB, one hot buffer    %8.1f ns\n", mh);
	printf("  memcpy 64 KiB, through 1 MiB     %8.1f ns\n", ms);
	printf("  tb_blob_write                    %8.1f ns: %.2fx the hot memcpy, %.2fx the walking one\n", w, w / mh,
	       w / ms);
	printf("  tb_blob_reserve+memcpy+commit    %8.1f ns: %.2fx the hot memcpy\n", r, r / mh);
	printf("  tb_consume of a 64 KiB blob      %8.1f ns: %.2fx the hot memcpy (a copy out, checked)\n", c, c / mh);
	if (failures)
		printf("  (%d writes or reads failed: the figures are not valid)\n", failures);

	snprintf(path, sizeof(path), "%s/results-blob.json", dirname(argv[0]));
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "[\n");
		json_entry(f, "blob 64 KiB (tb_blob_write)", w, "memcpy 64 KiB", mh, 0);
		json_entry(f, "blob 64 KiB (tb_blob_reserve+commit)", r, "memcpy 64 KiB", mh, 1);
		fprintf(f, "]\n");
		fclose(f);
		printf("  wrote %s\n", path);
	}
	tb_ring_free(ring);
	free(src);
	free(hot);
	free(slices);
	return failures != 0;
}
