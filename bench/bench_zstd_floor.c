// SPDX-License-Identifier: MIT
/*
 * bench_zstd_floor FILE.dat [EVENTS] - what decompressing a v7+zstd
 * trace.dat's pages costs by itself: the floor under `report --count` on
 * such a file, whatever the decoding and merging above it do.
 *
 * Every compressed chunk of the main buffer's CPUs is read into memory
 * first (no I/O is timed), then decompressed three ways, the fastest of
 * five runs each:
 *   one-shot, 1 thread   ZSTD_decompressDCtx() of each chunk into a buffer
 *                        of its declared size, every CPU in turn;
 *   one-shot, 2 threads  the same, CPUs shared out between two threads
 *                        (as report's workers read CPUs in parallel);
 *   streamed, 1 thread   ZSTD_decompressStream() into one 4 KiB sub-buffer
 *                        at a time, as the reader hands pages out.
 * With EVENTS (the file's event count) it prints the events per second no
 * count can beat on this machine.  Output, one line for bench_report.sh:
 *   zstd_floor BYTES_OUT NS_1T NS_2T NS_STREAM
 * after the human-readable lines.  Run without a file, it says so and
 * exits 0 (scripts/bench.sh runs every bench without arguments).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "bench_util.h"
#include "tracebuf/tracedat.h"

struct chunk {
	const uint8_t *in;
	uint32_t clen, ulen;
};

struct cpu_chunks {
	uint8_t *data; /* the CPU's bytes: count, then {clen, ulen, bytes} */
	struct chunk *v;
	size_t n;
	uint64_t out; /* decompressed bytes */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The CPU's chunks, read whole from fd; false (said why) when they do not parse. */
static bool load_cpu(int fd, const struct tb_tracedat_cpu *cpu, struct cpu_chunks *cc)
{
	size_t size = (size_t)cpu->size + 4, at = 4;
	uint32_t count;

	cc->data = malloc(size);
	if (!cc->data || pread(fd, cc->data, size, (off_t)cpu->offset) != (ssize_t)size)
		return false;
	count = le32(cc->data);
	cc->v = calloc(count ? count : 1, sizeof(*cc->v));
	if (!cc->v)
		return false;
	for (uint32_t i = 0; i < count; i++) {
		if (size - at < 8 || le32(cc->data + at) > size - at - 8)
			return false;
		cc->v[i] = (struct chunk){cc->data + at + 8, le32(cc->data + at), le32(cc->data + at + 4)};
		cc->out += cc->v[i].ulen;
		at += 8 + cc->v[i].clen;
		cc->n++;
	}
	return true;
}

struct job {
	struct cpu_chunks *cpus;
	int ncpus, first, step;
	bool stream;
	uint32_t page_size;
	bool failed;
};

/* The job's CPUs (first, first + step, ...), every chunk decompressed. */
static void *run_job(void *arg)
{
	struct job *j = arg;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	uint8_t *out = malloc(1u << 20), *page = malloc(j->page_size);

	for (int c = j->first; dctx && out && page && c < j->ncpus; c += j->step) {
		for (size_t k = 0; k < j->cpus[c].n; k++) {
			const struct chunk *ch = &j->cpus[c].v[k];
			if (!j->stream) {
				size_t rc = ch->ulen <= (1u << 20) ? ZSTD_decompressDCtx(dctx, out, ch->ulen, ch->in, ch->clen)
								  : (size_t)-1;
				j->failed |= ZSTD_isError(rc) || rc != ch->ulen;
				continue;
			}
			ZSTD_inBuffer in = {ch->in, ch->clen, 0};
			size_t left = ch->ulen;
			ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
			while (left > 0 && !j->failed) {
				ZSTD_outBuffer o = {page, left < j->page_size ? left : j->page_size, 0};
				while (o.pos < o.size && !j->failed) {
					size_t rc = ZSTD_decompressStream(dctx, &o, &in);
					j->failed |= ZSTD_isError(rc) || (rc == 0 && o.pos < o.size);
				}
				left -= o.size;
			}
		}
	}
	j->failed |= !dctx || !out || !page;
	ZSTD_freeDCtx(dctx);
	free(out);
	free(page);
	return NULL;
}

/* The fastest of five runs over nthreads threads, in ns; negative when decompression failed. */
static double best_of_five(struct cpu_chunks *cpus, int ncpus, int nthreads, bool stream, uint32_t page_size)
{
	double best = 0;

	for (int run = 0; run < 5; run++) {
		struct job jobs[2];
		pthread_t t[2];
		double t0 = now_ns(), d;
		bool failed = false;
		for (int i = 0; i < nthreads; i++) {
			jobs[i] = (struct job){cpus, ncpus, i, nthreads, stream, page_size, false};
			if (nthreads == 1)
				run_job(&jobs[i]);
			else if (pthread_create(&t[i], NULL, run_job, &jobs[i]) != 0)
				return -1;
		}
		for (int i = 0; nthreads > 1 && i < nthreads; i++)
			pthread_join(t[i], NULL);
		d = now_ns() - t0;
		for (int i = 0; i < nthreads; i++)
			failed |= jobs[i].failed;
		if (failed)
			return -1;
		if (best == 0 || d < best)
			best = d;
	}
	return best;
}

int main(int argc, char **argv)
{
	struct tb_tracedat_opts opts = {.no_symbols = true, .lazy_formats = true};
	const struct tb_tracedat_buffer *b;
	struct tb_tracedat *td;
	struct cpu_chunks *cpus;
	double events = argc > 2 ? atof(argv[2]) : 0, one, two, streamed;
	uint64_t out = 0, in = 0;
	int fd;

	if (argc < 2) {
		printf("bench_zstd_floor: skipped: bench_report.sh runs it on its v7+zstd trace.dat\n");
		return 0;
	}
	if (tb_tracedat_open(argv[1], &opts, &td) < 0)
		return 1;
	b = tb_tracedat_buffer(td, tb_tracedat_main_buffer(td));
	if (!b || !b->compressed || strcmp(tb_tracedat_info(td)->compression, "zstd")) {
		fprintf(stderr, "bench_zstd_floor: %s: not a zstd-compressed trace.dat\n", argv[1]);
		tb_tracedat_close(td);
		return 1;
	}
	cpus = calloc((size_t)b->ncpus + 1, sizeof(*cpus));
	fd = open(argv[1], O_RDONLY);
	for (int c = 0; cpus && c < b->ncpus; c++) {
		if (fd < 0 || !load_cpu(fd, &b->cpus[c], &cpus[c])) {
			fprintf(stderr, "bench_zstd_floor: %s: CPU %d's chunks do not parse\n", argv[1], b->cpus[c].cpu);
			return 1;
		}
		out += cpus[c].out;
		in += b->cpus[c].size;
	}
	close(fd);
	one = best_of_five(cpus, b->ncpus, 1, false, b->page_size);
	two = best_of_five(cpus, b->ncpus, 2, false, b->page_size);
	streamed = best_of_five(cpus, b->ncpus, 1, true, b->page_size);
	if (one < 0 || two < 0 || streamed < 0) {
		fprintf(stderr, "bench_zstd_floor: %s: a chunk failed to decompress\n", argv[1]);
		return 1;
	}
	printf("bench_zstd_floor: %.1f MiB of zstd chunks -> %.1f MiB of sub-buffers, fastest of 5 runs each\n",
	       (double)in / 1048576, (double)out / 1048576);
	printf("  one-shot, 1 thread   %8.1f ms (%.0f MB/s)\n", one / 1e6, (double)out / one * 1e3);
	printf("  one-shot, 2 threads  %8.1f ms (%.0f MB/s)\n", two / 1e6, (double)out / two * 1e3);
	printf("  streamed 4 KiB, 1 t. %8.1f ms (%.0f MB/s)\n", streamed / 1e6, (double)out / streamed * 1e3);
	if (events > 0) /* the faster of the two: under load a second thread may find no free core */
		printf("  => no count of these %.0f events beats %.1f M events/s here\n", events,
		       events / (two < one ? two : one) * 1e3);
	printf("zstd_floor %llu %.0f %.0f %.0f\n", (unsigned long long)out, one, two, streamed);
	for (int c = 0; c < b->ncpus; c++) {
		free(cpus[c].data);
		free(cpus[c].v);
	}
	free(cpus);
	tb_tracedat_close(td);
	return 0;
}
