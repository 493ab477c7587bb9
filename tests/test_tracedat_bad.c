/*
 * Damaged and hostile trace.dat files: every one gets a clear message that
 * names the file and a byte offset, and nothing crashes, hangs or
 * allocates what the file asks for (this test runs under ASan+UBSan in
 * `make test`).
 *
 * The files are real vectors with one field changed: wrong magic, unknown
 * version, big endian, counts and sizes far beyond the file, CPU data past
 * its end (read as a file cut short), v7 options chains that loop or point nowhere, sections of the
 * wrong kind, compressed sections and chunks that lie about their size, a
 * real decompression bomb (64 MiB of zeros in a 2 KiB zstd frame), corrupt
 * compressed bytes; plus every truncation of the small vectors.  Offsets
 * are the ones the layout in tests/data/trace-dat (and `tracebuf dump`)
 * gives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"

#define DATA  "tests/data/trace-dat/"
#define MIN6  DATA "minimal-handmade-v6.dat"
#define MIN7  DATA "minimal-handmade-v7.dat"
#define ZSTD7 DATA "sched-marker-v7-zstd.dat"

static struct {
	unsigned long n, counted;
	char first[400];
	uint64_t first_offset;
	bool named_file;
} seen;
static char path[64];

static void collect(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	if (!d->warning)
		seen.counted++;
	if (seen.n++ == 0) {
		snprintf(seen.first, sizeof(seen.first), "%s: byte %llu: %s", d->file,
			 (unsigned long long)d->offset, d->reason);
		seen.first_offset = d->offset;
		seen.named_file = d->file && strstr(d->file, path);
	}
}

static void write_file(const char *p, const uint8_t *data, size_t len)
{
	FILE *f = fopen(p, "wb");

	if (!f || fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}


enum outcome { REFUSED, DAMAGE_REPORTED };

/*
 * Open path and print it both ways.  The outcome: refused at open, or read
 * with the damage reported; in both cases at least one message naming the
 * file.  Returns the open's result.
 */
static int try_file(enum outcome *got)
{
	struct tb_tracedat_opts o = {.diag = collect};
	struct tb_capture_opts co = {.diag = collect};
	struct tb_tracedat *td = NULL;
	struct tb_capture *c = NULL;
	FILE *null = fopen("/dev/null", "w");
	int rc;

	memset(&seen, 0, sizeof(seen));
	rc = tb_tracedat_open(path, &o, &td);
	if (rc == 0) {
		struct tb_tracedat_dump_opts dopts = {.records = true, .cpu = -1};
		tb_tcmd_print_tracedat(td, null, NULL, NULL);
		tb_tracedat_dump(td, null, &dopts);
		tb_tracedat_close(td);
		if (tb_capture_open(path, &co, &c) == 0) {
			tb_report_write(c, null, NULL, NULL);
			tb_capture_close(c);
		}
	}
	fclose(null);
	*got = rc < 0 ? REFUSED : DAMAGE_REPORTED;
	return rc;
}

struct edit {
	uint64_t at;
	int width; /* 1, 2, 4, 8 (little endian); 0 ends the list */
	uint64_t value;
};

struct bad_case {
	const char *src;
	const char *what;
	struct edit edits[3];
	const char *says; /* part of the first message */
	enum outcome outcome;
};

#define U64MAX 0xffffffffffffffffull

static const struct bad_case cases[] = {
    {MIN6, "wrong magic", {{0, 1, 0x18}}, "not a trace.dat", REFUSED},
    {MIN6, "version 8", {{10, 1, '8'}}, "version '8'", REFUSED},
    {MIN6, "version text without its NUL", {{11, 1, 'x'}, {12, 1, 'x'}}, "version", REFUSED},
    {MIN6, "big endian", {{12, 1, 1}}, "big endian", REFUSED},
    {MIN6, "long size 3", {{13, 1, 3}}, "long size 3", REFUSED},
    {MIN6, "page size 1000", {{14, 4, 1000}}, "page size 1000", REFUSED},
    {MIN6, "page size 8192 against a 4096-byte header_page", {{14, 4, 8192}}, "8192", REFUSED},
    {MIN6, "header_page of 2^64-1 bytes", {{0x1e, 8, U64MAX}}, "header_page", REFUSED},
    {MIN6, "header_page shorter than its text", {{0x1e, 8, 100}}, "header_page", REFUSED},
    {MIN6, "4 billion ftrace formats", {{0x1d5, 4, 0xffffffff}}, "ftrace formats", REFUSED},
    {MIN6, "4 billion event systems", {{0x1d9, 4, 0xffffffff}}, "event systems", REFUSED},
    {MIN6, "2 billion events in a system", {{0x1e1, 4, 0x7fffffff}}, "app formats", REFUSED},
    {MIN6, "a 1 TiB format file", {{0x1e5, 8, 1ull << 40}}, "app format", REFUSED},
    {MIN6, "kallsyms of 4 GiB", {{0x3a8, 4, 0xffffffff}}, "kallsyms", REFUSED},
    {MIN6, "cmdlines of 2^63 bytes", {{0x3b0, 8, 1ull << 63}}, "cmdlines", REFUSED},
    {MIN6, "0 CPUs", {{0x3c3, 4, 0}}, "0 CPUs", REFUSED},
    {MIN6, "4 billion CPUs", {{0x3c3, 4, 0xffffffff}}, "CPUs", REFUSED},
    {MIN6, "no flyrecord tag", {{0x3c7, 4, 0x74736167}}, "flyrecord", REFUSED},
    /* CPU data past the end is a file cut short: what lies in the file is read, the cut said */
    {MIN6, "CPU data offset that wraps", {{0x3d1, 8, U64MAX - 100}}, "cut short", DAMAGE_REPORTED},
    {MIN6, "CPU data far past the end", {{0x3d9, 8, 1ull << 62}}, "cut short", DAMAGE_REPORTED},
    {MIN6, "a commit word beyond the page", {{0x1008, 4, 0x0fffffff}}, "", DAMAGE_REPORTED},
    {MIN6,
     "a record claiming 2 GiB",
     {{0x1010 + 0x4c, 4, 0}, {0x1010 + 0x50, 4, 0x7ffffff0}},
     "",
     DAMAGE_REPORTED},
    {MIN6, "a format whose ID is out of range", {{0x1ed + 12, 4, 0x39393939}}, "ID", DAMAGE_REPORTED},
    {MIN7, "no options section", {{24, 8, 0}}, "no headers section", REFUSED},
    {MIN7, "options past the end", {{24, 8, 1ull << 40}}, "past the end", REFUSED},
    {MIN7, "an options chain that loops", {{8393, 8, 8270}}, "loop", REFUSED},
    {MIN7, "a section of the wrong kind", {{8270, 2, 5}}, "found id 5", REFUSED},
    {MIN7, "a section larger than the file", {{8278, 8, 1ull << 62}}, "claims", REFUSED},
    {MIN7, "the headers option pointing into a section", {{8292, 8, 33}}, "headers section", REFUSED},
    {MIN7, "a compressed flag in an uncompressed file", {{0x20 + 2, 2, 1}}, "compressed", REFUSED},
    /* The BUFFER payload at 8344: offset, "", "local", page size @+15, CPUs @+19, CPU @+23... */
    {MIN7, "a BUFFER with 2^31 CPUs", {{8344 + 19, 4, 0x80000000}}, "CPUs", REFUSED},
    {MIN7, "a BUFFER naming CPU 5000", {{8344 + 23, 4, 5000}}, "CPU 5000", REFUSED},
    {MIN7, "a BUFFER with 8192-byte pages", {{8344 + 15, 4, 8192}}, "8192", REFUSED},
    {MIN7, "a BUFFER whose CPU data is past the end", {{8344 + 27, 8, 1ull << 40}}, "cut short", DAMAGE_REPORTED},
    {MIN7, "a BUFFER without its clock", {{8344 + 9, 8, 0x6161616161616161ull}}, "sub-buffers", REFUSED},
    {ZSTD7, "a compressed section claiming 4 GiB", {{0x25 + 20, 4, 0xfffffff0}}, "bomb", REFUSED},
    {ZSTD7, "a compressed section declaring too little", {{0x25 + 20, 4, 100}}, "more bytes", REFUSED},
    {ZSTD7, "a compressed section declaring too much", {{0x25 + 20, 4, 500}}, "fewer bytes", REFUSED},
    {ZSTD7, "corrupt zstd bytes in kallsyms", {{0xe36 + 40, 8, 0x1122334455667788ull}}, "zstd", REFUSED},
    {ZSTD7, "unknown compression", {{18, 4, 0x34367a6c}}, "compression", REFUSED},
    {ZSTD7, "4 billion chunks", {{20480, 4, 0xffffffff}}, "chunks", DAMAGE_REPORTED},
    {ZSTD7, "a chunk larger than its CPU's data", {{20484, 4, 0x7fffffff}}, "runs past", DAMAGE_REPORTED},
    {ZSTD7, "a chunk of 1000 bytes", {{20488, 4, 1000}}, "whole number", DAMAGE_REPORTED},
    {ZSTD7, "a chunk claiming 4 GiB", {{20488, 4, 0xfffff000}}, "bomb", DAMAGE_REPORTED},
    {ZSTD7, "a chunk declaring less than it holds", {{20488, 4, 4096}}, "more bytes", DAMAGE_REPORTED},
    {ZSTD7, "corrupt zstd bytes in a chunk", {{20492 + 30, 8, 0x1122334455667788ull}}, "", DAMAGE_REPORTED},
};

static void apply(uint8_t *data, size_t len, const struct edit *e)
{
	for (; e->width; e++)
		for (int i = 0; i < e->width && e->at + (uint64_t)i < len; i++)
			data[e->at + (uint64_t)i] = (uint8_t)(e->value >> (8 * i));
}

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		size_t len;
		uint8_t *data = (uint8_t *)tap_slurp(c->src, &len);
		enum outcome got;
		double t0 = now();

		if (!data) {
			ok(0, "%s: cannot read %s", c->what, c->src);
			continue;
		}
		apply(data, len, c->edits);
		write_file(path, data, len);
		free(data);
		try_file(&got);
		ok(got == c->outcome && seen.counted > 0 && seen.named_file && strstr(seen.first, c->says) &&
		       now() - t0 < 10,
		   "%s: %s, said with the file and byte %llu", c->what,
		   c->outcome == REFUSED ? "refused" : "read, the damage reported",
		   (unsigned long long)seen.first_offset);
		if (got != c->outcome || !seen.counted || !strstr(seen.first, c->says))
			diag("got: %s (%lu problems)", seen.n ? seen.first : "(no message)", seen.counted);
	}
}

/* Every length of a small file, and a spread of lengths of a larger one. */
static void test_truncations(const char *src, size_t step_after, size_t step)
{
	size_t len, silent = 0, tried = 0;
	uint8_t *data = (uint8_t *)tap_slurp(src, &len);
	double t0 = now();

	for (size_t n = 0; data && n < len; n += n < step_after ? 1 : step) {
		enum outcome got;
		write_file(path, data, n);
		try_file(&got);
		tried++;
		if (!seen.counted || !seen.named_file) {
			if (silent++ < 3)
				diag("%s cut to %zu bytes: %s", src, n, seen.n ? seen.first : "no message");
		}
	}
	ok(data && silent == 0, "%s: each of %zu truncations is reported with the file named (%.1f s)", src,
	   tried, now() - t0);
	free(data);
}

/*
 * A decompression bomb: a chunk whose zstd frame holds 64 MiB of zeros in
 * about 2 KiB, put in place of the first chunk, declaring first a size the
 * ratio check refuses, then an honest-looking 40 KiB it overruns.
 */
static void test_bomb(void)
{
	size_t len, zeros = 64u << 20, bound = ZSTD_compressBound(zeros), n;
	uint8_t *data = (uint8_t *)tap_slurp(ZSTD7, &len), *big = calloc(1, zeros), *z = malloc(bound);
	const size_t chunk = 20484; /* CPU 0's first chunk header (its count is at 20480) */

	n = big && z ? ZSTD_compress(z, bound, big, zeros, 3) : 0;
	ok(data && n > 0 && !ZSTD_isError(n) && n < 7000, "a 64 MiB zstd bomb of %zu bytes is made", n);
	if (!data || !n || ZSTD_isError(n) || n >= 7000)
		goto out;
	for (int declared = 0; declared < 2; declared++) {
		uint32_t ulen = declared ? 40960 : (uint32_t)zeros;
		enum outcome got;
		double t0 = tap_cpu_seconds();
		memcpy(data + chunk, &(uint32_t){(uint32_t)n}, 4);
		memcpy(data + chunk + 4, &ulen, 4);
		memcpy(data + chunk + 8, z, n);
		write_file(path, data, len);
		try_file(&got);
		double took = tap_cpu_seconds() - t0;
		ok(got == DAMAGE_REPORTED && seen.counted && seen.named_file &&
		       strstr(seen.first, declared ? "more bytes than it declares" : "bomb") && took < 5,
		   "the bomb declaring %u bytes is stopped (%.2f s of CPU): %s", ulen, took, seen.first);
	}
out:
	free(data);
	free(big);
	free(z);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/tb-tdbad-%d.dat", (int)getpid());
	test_cases();
	test_bomb();
	test_truncations(MIN6, 1200, 61);
	test_truncations(MIN7, 1100, 67);
	test_truncations(ZSTD7, 0, 397);
	unlink(path);
	return done_testing();
}
