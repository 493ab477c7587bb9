// SPDX-License-Identifier: MIT
/*
 * bench_tracedat - how fast trace.dat files are written and read.
 *
 * The pages are real kernel sub-buffers (tests/data/kernel/cap-f-many-systems,
 * each CPU's raw pages repeated to SIZE_MB MiB per CPU, held in memory) with
 * that capture's metadata.  Measured, fastest of RUNS runs each:
 *
 *  - writing through the writer API (what a program with pages in memory,
 *    e.g. a tracebuf ring, does): v6, v7, v7+zstd, v7+zlib;
 *  - `tracebuf convert`'s path, tb_tracedat_write_capture(), on a capture
 *    directory of the same pages;
 *  - reading every sub-buffer back (tb_tracedat_capture + next_page), plain
 *    and zstd.
 *
 * Files go to /dev/shm (tmpfs), so the figures are the code's, not a disk's.
 * The peer, timed in the same run: write(2) of the same bytes to a file
 * there, in 1 MiB calls - what any writer of these bytes pays at least.
 * results-tracedat.json (beside the program) gets the uncompressed writers'
 * rows: ns per MB (10^6 bytes) against that peer, and their MB/s.
 * Each line gives MB/s (10^6 bytes of sub-buffers per second) of wall time
 * and of the process's CPU time: on a machine shared with other work the
 * wall figure drops while the CPU figure does not.  The goal for
 * uncompressed writing is 500 MB/s.
 *
 *   build/bench/bench_tracedat            (SIZE_MB=256 RUNS=3 in the environment)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracebuf/capture.h"
#include "tracebuf/tracedat.h"

#define SRC   "tests/data/kernel/cap-f-many-systems"
#define NCPUS 2

struct clocks {
	double wall, cpu;
};

static struct clocks now(void)
{
	struct timespec w, c;

	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	return (struct clocks){w.tv_sec + w.tv_nsec / 1e9, c.tv_sec + c.tv_nsec / 1e9};
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		fprintf(stderr, "bench_tracedat: %s: %s (run from the source tree)\n", path, strerror(errno));
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static struct {
	char *hp, *he, *kallsyms, *printk, *cmdlines;
	size_t hp_len, he_len, ks_len, pk_len, cl_len;
	uint8_t *pages[NCPUS];
	size_t bytes[NCPUS], total;
	char dir[64], out[96];
} d;

/* Each CPU's raw file repeated to size bytes (whole pages). */
static void load(size_t size)
{
	char path[128];

	d.hp = slurp(SRC "/header_page", &d.hp_len);
	d.he = slurp(SRC "/header_event", &d.he_len);
	d.kallsyms = slurp(SRC "/kallsyms", &d.ks_len);
	d.printk = slurp(SRC "/printk_formats", &d.pk_len);
	d.cmdlines = slurp(SRC "/saved_cmdlines", &d.cl_len);
	for (int cpu = 0; cpu < NCPUS; cpu++) {
		size_t len;
		char *raw;
		snprintf(path, sizeof(path), SRC "/cpu%d.raw", cpu);
		raw = slurp(path, &len);
		d.bytes[cpu] = size / len * len;
		d.pages[cpu] = malloc(d.bytes[cpu]);
		for (size_t at = 0; at < d.bytes[cpu]; at += len)
			memcpy(d.pages[cpu] + at, raw, len);
		d.total += d.bytes[cpu];
		free(raw);
	}
}

static void print_rate(const char *what, const struct clocks *best, uint64_t bytes, uint64_t file)
{
	printf("  %-30s %6.0f MB/s wall, %6.0f MB/s of CPU time  (%.0f MB in %.3f s; file %.0f MB)\n", what,
	       bytes / best->wall / 1e6, bytes / best->cpu / 1e6, bytes / 1e6, best->wall, file / 1e6);
}

static void keep_best(struct clocks *best, struct clocks t0, int run)
{
	struct clocks t1 = now(), t = {t1.wall - t0.wall, t1.cpu - t0.cpu};

	if (run == 0 || t.wall < best->wall)
		best->wall = t.wall;
	if (run == 0 || t.cpu < best->cpu)
		best->cpu = t.cpu > 1e-6 ? t.cpu : 1e-6;
}

/* The writer API: metadata, then every CPU's pages from memory. */
static uint64_t write_api(int version, const char *compression)
{
	struct tb_tracedat_write_opts o = {
	    .version = version, .compression = compression, .cpus = NCPUS, .clock = "local"};
	struct tb_tracedat_writer *w;
	uint64_t size;

	if (tb_tracedat_writer_open(d.out, &o, &w) < 0)
		exit(1);
	tb_tracedat_write_headers(w, d.hp, d.hp_len, d.he, d.he_len);
	tb_tracedat_write_kallsyms(w, d.kallsyms, d.ks_len);
	tb_tracedat_write_printk(w, d.printk, d.pk_len);
	tb_tracedat_write_cmdlines(w, d.cmdlines, d.cl_len);
	tb_tracedat_write_begin_buffer(w, "", NULL);
	for (int cpu = 0; cpu < NCPUS; cpu++) {
		tb_tracedat_write_begin_cpu(w, cpu);
		tb_tracedat_write_pages(w, d.pages[cpu], d.bytes[cpu]);
		tb_tracedat_write_end_cpu(w);
	}
	size = tb_tracedat_writer_bytes(w);
	if (tb_tracedat_writer_close(w) < 0)
		exit(1);
	return size;
}

static struct clocks bench_write(const char *what, int version, const char *compression, int runs)
{
	struct clocks best = {0};
	uint64_t size = 0;

	for (int r = 0; r < runs; r++) {
		struct clocks t0 = now();
		size = write_api(version, compression);
		keep_best(&best, t0, r);
	}
	print_rate(what, &best, d.total, size);
	return best;
}

/* The peer: the same bytes with write(2), 1 MiB a call, into a new file beside out. */
static struct clocks bench_plain_write(int runs)
{
	struct clocks best = {0};

	for (int r = 0; r < runs; r++) {
		struct clocks t0 = now();
		int fd = open(d.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			exit(1);
		for (int cpu = 0; cpu < NCPUS; cpu++)
			for (size_t at = 0; at < d.bytes[cpu];) {
				size_t n = d.bytes[cpu] - at < (1u << 20) ? d.bytes[cpu] - at : (1u << 20);
				ssize_t w = write(fd, d.pages[cpu] + at, n);
				if (w <= 0)
					exit(1);
				at += (size_t)w;
			}
		close(fd);
		keep_best(&best, t0, r);
	}
	print_rate("peer: write(2) of the bytes", &best, d.total, d.total);
	return best;
}

/* One results.json row: ns per MB of wall time against the peer's, and the MB/s. */
static void json_row(FILE *f, const char *what, struct clocks t, struct clocks peer, bool last)
{
	double ns = t.wall * 1e9 / (d.total / 1e6), peer_ns = peer.wall * 1e9 / (d.total / 1e6);

	fprintf(f,
		"  {\"case\": \"%s (ns per MB)\", \"threads\": 1, \"tracebuf_ns\": %.1f, \"peer\": "
		"\"write(2) of the same bytes\", \"peer_ns\": %.1f, \"ratio\": %.3f, \"mb_per_s\": %.0f, "
		"\"cpu_mb_per_s\": %.0f, \"goal_mb_per_s\": 500}%s\n",
		what, ns, peer_ns, peer_ns / ns, d.total / t.wall / 1e6, d.total / t.cpu / 1e6, last ? "" : ",");
}

/* The same pages as a capture directory, converted as `tracebuf convert` does. */
static void bench_convert(int runs)
{
	static const char *const copy[] = {"header_page",    "header_event", "meta.txt",
					   "saved_cmdlines", "kallsyms",     "printk_formats"};
	struct tb_tracedat_write_opts o = {.version = 6};
	struct clocks best = {0};
	char cap[128], path[256], cmd[512];

	snprintf(cap, sizeof(cap), "%s/cap", d.dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp -r " SRC "/formats %s/", cap, cap);
	if (system(cmd) != 0)
		exit(1);
	for (size_t i = 0; i < sizeof(copy) / sizeof(copy[0]); i++) {
		snprintf(cmd, sizeof(cmd), "cp " SRC "/%s %s/", copy[i], cap);
		if (system(cmd) != 0)
			exit(1);
	}
	for (int cpu = 0; cpu < NCPUS; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", cap, cpu);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(d.pages[cpu], 1, d.bytes[cpu], f) != d.bytes[cpu])
			exit(1);
		fclose(f);
	}
	for (int r = 0; r < runs; r++) {
		struct clocks t0 = now();
		if (tb_tracedat_write_capture(cap, NULL, d.out, &o) < 0)
			exit(1);
		keep_best(&best, t0, r);
	}
	print_rate("convert (capture dir -> v6)", &best, d.total, d.total);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cap);
	if (system(cmd) != 0)
		exit(1);
}

/* Every sub-buffer of the file just written, read back through a capture. */
static void bench_read(const char *what, int version, const char *compression, int runs)
{
	struct clocks best = {0};
	uint64_t bytes = 0;

	write_api(version, compression);
	for (int r = 0; r < runs; r++) {
		struct tb_capture *c;
		struct tb_capture_page p;
		struct clocks t0 = now();
		bytes = 0;
		if (tb_capture_open(d.out, NULL, &c) < 0)
			exit(1);
		for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++)
			while (tb_capture_next_page(c, cpu, &p) == 1)
				bytes += p.size;
		tb_capture_close(c);
		keep_best(&best, t0, r);
	}
	if (bytes != d.total)
		fprintf(stderr, "bench_tracedat: read %llu bytes back, wrote %zu\n",
			(unsigned long long)bytes, d.total);
	print_rate(what, &best, bytes, bytes);
}

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');
	char json[512];
	struct clocks v6, v7, peer;
	const char *e = getenv("SIZE_MB"), *r = getenv("RUNS");
	size_t size_mb = e ? strtoul(e, NULL, 10) : 256;
	int runs = r ? atoi(r) : 3;
	double loadavg = 0;
	FILE *f;

	snprintf(d.dir, sizeof(d.dir), "/dev/shm/tb-bench-tdat-XXXXXX");
	if (access("/dev/shm", W_OK) != 0 || !mkdtemp(d.dir)) {
		snprintf(d.dir, sizeof(d.dir), "/tmp/tb-bench-tdat-XXXXXX");
		if (!mkdtemp(d.dir))
			return 1;
	}
	snprintf(d.out, sizeof(d.out), "%s/out.dat", d.dir);
	load(size_mb << 20);
	if ((f = fopen("/proc/loadavg", "r"))) {
		if (fscanf(f, "%lf", &loadavg) != 1)
			loadavg = 0;
		fclose(f);
	}
	printf("bench_tracedat: %.0f MB of real kernel sub-buffers (%d CPUs), files in %s, fastest of "
	       "%d (load average %.1f on %ld CPUs)\n",
	       d.total / 1e6, NCPUS, d.dir, runs, loadavg, sysconf(_SC_NPROCESSORS_ONLN));
	(void)argc;
	peer = bench_plain_write(runs);
	v6 = bench_write("write v6", 6, NULL, runs);
	v7 = bench_write("write v7", 7, NULL, runs);
	snprintf(json, sizeof(json), "%.*sresults-tracedat.json", slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	if ((f = fopen(json, "w"))) {
		fputs("[\n", f);
		json_row(f, "trace.dat write v6, uncompressed", v6, peer, false);
		json_row(f, "trace.dat write v7, uncompressed", v7, peer, true);
		fputs("]\n", f);
		fclose(f);
	}
	bench_write("write v7 zstd", 7, "zstd", runs);
	bench_write("write v7 zlib", 7, "zlib", 1);
	bench_convert(runs);
	bench_read("read v6 (every sub-buffer)", 6, NULL, runs);
	bench_read("read v7 zstd (every sub-buffer)", 7, "zstd", runs);
	unlink(d.out);
	rmdir(d.dir);
	for (int cpu = 0; cpu < NCPUS; cpu++)
		free(d.pages[cpu]);
	free(d.hp), free(d.he), free(d.kallsyms), free(d.printk), free(d.cmdlines);
	return 0;
}
