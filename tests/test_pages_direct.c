/*
 * Sub-buffers written straight into a worker's unit (capture_read_pages(),
 * src/print/pagework.c): with workers a unit takes up to 32 sub-buffers at
 * once - a capture file's with one pread, a v7 zstd chunk decompressed in
 * one call (a unit ends before a chunk that does not fit in what is left of
 * it) - while one thread takes them one at a time.  Both must give the
 * same report: the same text, totals and problems (said at the same file
 * and offset, in the same order), on v7 zstd chunks that a unit of 32 ends
 * before, on zlib chunks (streamed into the unit, across units), on zstd
 * chunks damaged in every way the one call refuses (which then goes
 * through the chunk again as one thread does), on a chunk holding a frame
 * plus bytes no frame claims, and on a capture file cut inside a
 * sub-buffer.  The expectations
 * come from elsewhere: the undamaged v7 files read as the v6 file of the
 * same capture (no compression at all), and each damage is said at the
 * header of the chunk it was made in, found here by walking the chunks
 * independently.  (test_chunk_ahead.c: the read-ahead of the chunks.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "lib/tap.h"
#include "lib/v7chunks.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"

#define CAPTURE "tests/data/kernel/cap-f-many-systems" /* CPU 0: 53 sub-buffers, 6 chunks of 10 */
#define PAGE 4096u

struct outcome {
	int rc;
	char *text;
	size_t len;
	struct tb_report_totals totals;
	char *problems; /* "file@offset: reason\n" each, in order */
	size_t problems_len;
	FILE *problems_out;
};

static void keep_problem(void *ctx, const struct tb_problem *d)
{
	struct outcome *o = ctx;

	fprintf(o->problems_out, "%s@%llu: %s\n", d->file, (unsigned long long)d->offset, d->reason);
}

static struct outcome report(const char *path, const char *threads)
{
	struct outcome o = {0};
	struct tb_capture_opts opts = {.diag = keep_problem, .diag_ctx = &o};
	struct tb_capture *c;
	FILE *f;

	o.problems_out = open_memstream(&o.problems, &o.problems_len);
	setenv("TB_REPORT_THREADS", threads, 1);
	o.rc = tb_capture_open(path, &opts, &c);
	if (o.rc >= 0) {
		f = open_memstream(&o.text, &o.len);
		o.rc = f ? tb_report_write(c, f, NULL, &o.totals) : -1;
		if (f)
			fclose(f);
		tb_capture_close(c);
	}
	fclose(o.problems_out);
	return o;
}

static void free_outcome(struct outcome *o)
{
	free(o->text);
	free(o->problems);
}

/* The report by 2 workers is the report by one thread; the latter returned for more checks. */
static struct outcome same_both_ways(const char *path, const char *what)
{
	struct outcome one = report(path, "0"), many = report(path, "2");

	is_int(many.rc, one.rc, "%s: 2 workers: the same result as one thread (%d)", what, one.rc);
	ok(many.len == one.len && (!one.len || !memcmp(many.text, one.text, one.len)),
	   "%s: 2 workers: the same %zu bytes of text", what, one.len);
	ok(!memcmp(&many.totals, &one.totals, sizeof(one.totals)),
	   "%s: 2 workers: the same totals (%llu events, %llu sub-buffers)", what,
	   (unsigned long long)one.totals.events, (unsigned long long)one.totals.pages);
	ok(many.problems_len == one.problems_len && !memcmp(many.problems, one.problems, one.problems_len),
	   "%s: 2 workers: the same problems at the same places", what);
	if (many.problems_len != one.problems_len || memcmp(many.problems, one.problems, one.problems_len))
		diag("one thread:\n%s2 workers:\n%s", one.problems, many.problems);
	free_outcome(&many);
	return one;
}

static void put_le32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i));
}

/* The chunks of CPU 0 of a v7 file, from the offset the file's CPU table gives. */
static int cpu0_chunks(const char *path, const char *bytes, size_t len, struct v7_chunk *out, int max)
{
	struct tb_tracedat *td;
	const struct tb_tracedat_buffer *b;
	size_t at;

	if (tb_tracedat_open(path, NULL, &td) < 0)
		return -1;
	b = tb_tracedat_buffer(td, tb_tracedat_main_buffer(td));
	at = b && b->compressed ? (size_t)b->cpus[0].offset : len;
	tb_tracedat_close(td);
	return v7_chunks(bytes, len, at, out, max);
}

/* A copy of the v7 file with a chunk changed by damage, reported on both ways. */
struct damage {
	const char *what;
	int chunk;
	void (*make)(char *file, const struct v7_chunk *c, const char *good);
	const char *said; /* part of the reason the problem gives at the chunk's header */
};

static void bad_magic(char *file, const struct v7_chunk *c, const char *good)
{
	(void)good;
	file[c->at + 8] ^= 0x5a; /* the first byte of the zstd frame's magic number */
}

static void claims_less(char *file, const struct v7_chunk *c, const char *good)
{
	(void)good;
	put_le32(file + c->at + 4, c->ulen - PAGE);
}

static void claims_more(char *file, const struct v7_chunk *c, const char *good)
{
	(void)good;
	put_le32(file + c->at + 4, c->ulen + PAGE);
}

static bool recompress(char *file, const struct v7_chunk *c, const char *good, int window_log)
{
	size_t ulen = c->ulen, n;
	char *plain = malloc(ulen), *frame = malloc(ZSTD_compressBound(ulen));
	ZSTD_CCtx *z = ZSTD_createCCtx();
	bool fits = false;

	if (plain && frame && z &&
	    ZSTD_decompress(plain, ulen, good + c->at + 8, c->clen) == ulen &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 19)) &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0)) &&
	    (!window_log || !ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, window_log)))) {
		/* streamed with its size untold (continue, then end): the frame keeps the window asked for */
		ZSTD_inBuffer in = {plain, ulen, 0}, none = {plain, 0, 0};
		ZSTD_outBuffer o = {frame, ZSTD_compressBound(ulen), 0};
		n = ZSTD_compressStream2(z, &o, &in, ZSTD_e_continue);
		if (!ZSTD_isError(n) && in.pos == ulen)
			n = ZSTD_compressStream2(z, &o, &none, ZSTD_e_end);
		if (n == 0 && o.pos < c->clen) {
			memcpy(file + c->at + 8, frame, o.pos);
			memset(file + c->at + 8 + o.pos, 0xee, c->clen - o.pos); /* bytes no frame claims */
			fits = true;
		}
	}
	ZSTD_freeCCtx(z);
	free(plain);
	free(frame);
	return fits;
}

static void frame_then_junk(char *file, const struct v7_chunk *c, const char *good)
{
	ok(recompress(file, c, good, 0), "chunk at byte %zu made again smaller, and junk after its frame", c->at);
}

static void huge_window(char *file, const struct v7_chunk *c, const char *good)
{
	ok(recompress(file, c, good, 25), "chunk at byte %zu made again asking for a 32 MiB window", c->at);
}

int main(void)
{
	char dir[] = "/tmp/tb_pages_direct.XXXXXX", v6[64], v7[64], v7z[64], bad[64];
	struct tb_tracedat_write_opts o7z = {.version = 7, .compression = "zlib"};
	static const struct damage damages[] = {
		{"a frame whose magic is damaged (one call)", 1, bad_magic, "chunk here"},
		{"a chunk declaring a sub-buffer less (one call)", 1, claims_less, "more bytes than it declares"},
		{"a chunk declaring a sub-buffer more (streamed)", 1, claims_more, "before the size it declares"},
		{"a chunk asking for a 32 MiB window (one call)", 0, huge_window, "window above 16 MiB"},
		{"a frame then junk (one call, as streamed: the junk is skipped)", 2, frame_then_junk, NULL},
		/* the 4th chunk: sub-buffers 30-39, which the first unit of 32 ends before */
		{"a damaged frame in the chunk the first unit ends before", 3, bad_magic, "chunk here"},
		{"the chunk the first unit ends before declaring a sub-buffer less", 3, claims_less,
		 "more bytes than it declares"},
		{"the chunk the first unit ends before declaring a sub-buffer more", 3, claims_more,
		 "before the size it declares"},
		{"the chunk the first unit ends before asking for a 32 MiB window", 3, huge_window,
		 "window above 16 MiB"},
		{"the chunk the first unit ends before: a frame then junk (the junk skipped)", 3, frame_then_junk,
		 NULL},
		{"a damaged frame in the chunk after it", 4, bad_magic, "chunk here"},
		{"the chunk after it declaring a sub-buffer less", 4, claims_less, "more bytes than it declares"},
	};
	struct outcome plain, packed, cut;
	struct v7_chunk chunks[16];
	size_t len;
	char *good;
	int n;

	if (!mkdtemp(dir))
		skip_all("no temporary directory");
	v7_write_pair(CAPTURE, dir, v6, v7, bad);
	snprintf(v7z, sizeof(v7z), "%s/v7zlib.dat", dir);
	is_int(tb_tracedat_write_capture(CAPTURE, NULL, v7z, &o7z), 0, "the capture written as v7 with zlib");

	/* Undamaged: v7 by workers (chunks whole in one call, one across units) reads as plain v6. */
	plain = same_both_ways(v6, "v6");
	packed = same_both_ways(v7, "v7 zstd");
	ok(plain.len > 0 && packed.len == plain.len && !memcmp(packed.text, plain.text, plain.len),
	   "v7 zstd: the text of the v6 file (%zu bytes)", plain.len);
	ok(plain.problems_len == 0 && packed.problems_len == 0, "v6, v7: no problem");
	free_outcome(&packed);
	/* zlib is streamed into the unit (inflate writes straight into it), never in one call. */
	packed = same_both_ways(v7z, "v7 zlib");
	ok(packed.len == plain.len && !memcmp(packed.text, plain.text, plain.len) && packed.problems_len == 0,
	   "v7 zlib: the text of the v6 file, no problem");

	good = tap_slurp(v7, &len);
	n = good ? cpu0_chunks(v7, good, len, chunks, 16) : -1;
	ok(n >= 5 && chunks[3].ulen == 10 * PAGE,
	   "CPU 0 has %d chunks; the 4th (sub-buffers 30-39) does not fit in the first unit of 32", n);
	for (size_t i = 0; n >= 5 && i < sizeof(damages) / sizeof(damages[0]); i++) {
		const struct damage *d = &damages[i];
		const struct v7_chunk *c = &chunks[d->chunk];
		char *file = malloc(len), at[32];
		struct outcome one;
		if (!file)
			break;
		memcpy(file, good, len);
		d->make(file, c, good);
		ok(v7_write_file(bad, file, len), "%s: written", d->what);
		one = same_both_ways(bad, d->what);
		snprintf(at, sizeof(at), "@%zu: ", c->at);
		if (d->said)
			ok(one.problems && strstr(one.problems, at) && strstr(one.problems, d->said),
			   "%s: said at the chunk's header (byte %zu): ...%s...", d->what, c->at, d->said);
		else
			ok(one.problems_len == 0 && one.len == plain.len && !memcmp(one.text, plain.text, plain.len),
			   "%s: no problem, and the text of the v6 file", d->what);
		if (d->said && !(one.problems && strstr(one.problems, at)))
			diag("problems:\n%s", one.problems ? one.problems : "");
		free_outcome(&one);
		free(file);
	}

	/* A capture file cut inside a sub-buffer: said after the sub-buffers before it, once. */
	cut = same_both_ways("tests/data/bad/raw-partial", "a capture file ending inside a sub-buffer");
	ok(cut.problems && strstr(cut.problems, "partial sub-buffer is skipped"), "the partial sub-buffer is said");
	free_outcome(&cut);

	free_outcome(&plain);
	free_outcome(&packed);
	free(good);
	unlink(v6);
	unlink(v7);
	unlink(v7z);
	unlink(bad);
	rmdir(dir);
	return done_testing();
}
