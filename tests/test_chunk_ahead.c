/*
 * One CPU's v7 zstd chunks through the read-ahead of the page stream
 * (src/tracedat/tdat_pages.c), wherever the read-ahead ends: inside the
 * chunk count, on a chunk header, inside one, on a chunk's first byte,
 * inside its bytes - and with a read-ahead smaller than a header, so that
 * every header and chunk is read again.  Both ways of reading (a sub-buffer
 * at a time, tdat_stream_next(); many at once into a caller's buffer,
 * tdat_stream_read(), whose chunks spill over the buffer's end) must give
 * the sub-buffers of the v6 file of the same capture, which holds them with
 * no compression at all.  A file cut inside a chunk header or inside a
 * chunk's bytes must say, both ways, after the same sub-buffers, that the
 * file ends there, at the offset of the cut; a damaged chunk, spilled or
 * not, must give the same sub-buffers and problems both ways, said at its
 * header - both computed here from the chunks found by walking the file's
 * bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/tap.h"
#include "lib/v7chunks.h"
#include "tracedat/tdat_internal.h"

#define CAPTURE "tests/data/kernel/cap-f-many-systems" /* CPU 0: 53 sub-buffers, 6 chunks of 10 */
#define PAGE 4096u
#define MAX_PAGES 64

struct pages {
	uint8_t *data; /* count sub-buffers */
	size_t count;
	char *problems; /* "offset: reason\n" each, in order */
	size_t problems_len;
	FILE *problems_out;
};

static void keep_problem(void *ctx, const struct tb_problem *d)
{
	struct pages *p = ctx;

	fprintf(p->problems_out, "%llu: %s\n", (unsigned long long)d->offset, d->reason);
}

static void take_page(struct pages *p, const uint8_t *data)
{
	if (p->count < MAX_PAGES)
		memcpy(p->data + p->count * PAGE, data, PAGE);
	p->count++;
}

static void got_page(void *ctx, const struct tb_capture_page *page)
{
	take_page(ctx, page->data);
}

/*
 * CPU 0's sub-buffers of the main buffer of path: one at a time (room 0),
 * or room sub-buffers per tdat_stream_read(); the read-ahead ahead bytes
 * (0: as the stream has it); the file cut to cut bytes once open (0: not).
 */
static struct pages cpu0_pages(const char *path, size_t room, size_t ahead, size_t cut)
{
	struct pages p = {.data = calloc(MAX_PAGES, PAGE)};
	struct tb_tracedat_opts opts = {.diag = keep_problem, .no_symbols = true};
	struct tb_tracedat *td;
	struct tdat_stream s;
	int rc;

	opts.diag_ctx = &p;
	p.problems_out = open_memstream(&p.problems, &p.problems_len);
	if (tb_tracedat_open(path, &opts, &td) < 0) {
		fclose(p.problems_out);
		return p;
	}
	if (cut && truncate(path, (off_t)cut) < 0)
		fprintf(p.problems_out, "the file could not be cut: %s\n", strerror(errno));
	tdat_stream_init(&s, td, &td->buffers[0], &td->buffers[0].cpus[0]);
	if (ahead)
		s.ahead = ahead;
	if (room == 0) {
		struct tb_capture_page page;
		while ((rc = tdat_stream_next(&s, &page)) == 1)
			take_page(&p, page.data);
	} else {
		uint8_t *buf = malloc(room * PAGE);
		while (buf && (rc = tdat_stream_read(&s, buf, room * PAGE, room, got_page, &p)) > 0)
			;
		free(buf);
	}
	tdat_stream_free(&s);
	tb_tracedat_close(td);
	fclose(p.problems_out);
	return p;
}

static bool same_pages(const struct pages *a, const struct pages *b)
{
	return a->count == b->count && a->count <= MAX_PAGES && !memcmp(a->data, b->data, a->count * PAGE) &&
	       a->problems_len == b->problems_len && !memcmp(a->problems, b->problems, a->problems_len);
}

static void free_pages(struct pages *p)
{
	free(p->data);
	free(p->problems);
}

/* CPU 0's data offset and chunks in the v7 file, walked from its bytes. */
static int cpu0_chunks(const char *path, const char *bytes, size_t len, size_t *cpu_at, struct v7_chunk *out,
		       int max)
{
	struct tb_tracedat *td;

	if (tb_tracedat_open(path, NULL, &td) < 0)
		return -1;
	*cpu_at = (size_t)td->buffers[0].cpus[0].offset;
	tb_tracedat_close(td);
	return v7_chunks(bytes, len, *cpu_at, out, max);
}

/* Both ways, through a read-ahead of ahead bytes, CPU 0 of the v7 file reads as the v6 file's. */
static void reads_as_v6(const char *v7, const struct pages *plain, size_t ahead, const char *where)
{
	struct pages one = cpu0_pages(v7, 0, ahead, 0), many = cpu0_pages(v7, 32, ahead, 0),
		     few = cpu0_pages(v7, 7, ahead, 0);

	ok(same_pages(&one, plain), "read-ahead of %zu bytes (%s), a sub-buffer at a time: the v6 file's %zu",
	   ahead, where, plain->count);
	ok(same_pages(&many, plain), "read-ahead of %zu bytes (%s), 32 sub-buffers at a time: the same", ahead,
	   where);
	ok(same_pages(&few, plain), "read-ahead of %zu bytes (%s), 7 at a time (chunks spilled): the same", ahead,
	   where);
	free_pages(&one);
	free_pages(&many);
	free_pages(&few);
}

/*
 * The v7 file (len bytes) cut at byte cut once open: both ways, the same
 * sub-buffers, then "reading WHAT: the file ends here" at cut.
 */
static void cut_at(const char *bad, const char *good, size_t len, size_t cut, const char *what,
		   size_t pages_before, size_t ahead)
{
	struct pages one, many;
	char said[128];

	ok(v7_write_file(bad, good, len), "cut at byte %zu: written whole", cut);
	one = cpu0_pages(bad, 0, ahead, cut);
	ok(v7_write_file(bad, good, len), "cut at byte %zu: written whole again", cut);
	many = cpu0_pages(bad, 7, ahead, cut);
	snprintf(said, sizeof(said), "%zu: reading %s: the file ends here\n", cut, what);
	ok(one.count == pages_before && one.problems && strstr(one.problems, said),
	   "cut at byte %zu (read-ahead %zu): %zu sub-buffers, then at the cut: reading %s: the file ends here",
	   cut, ahead, pages_before, what);
	if (!(one.problems && strstr(one.problems, said)))
		diag("%zu sub-buffers; problems:\n%s", one.count, one.problems ? one.problems : "");
	ok(same_pages(&many, &one), "cut at byte %zu (read-ahead %zu): 7 at a time, the same pages and problems",
	   cut, ahead);
	free_pages(&one);
	free_pages(&many);
}

/*
 * The v7 file with the chunk at c damaged (a byte set to value at byte at,
 * or its declared size changed by delta): 32 and 7 sub-buffers at a time
 * (the chunk spilled), the same pages and problems as one at a time, and
 * the problem said at the chunk's header, after the chunks before it.
 */
static void damaged(const char *bad, const char *good, size_t len, const struct v7_chunk *c, size_t pages_before,
		    size_t byte, int delta, const char *said, const char *what)
{
	char *file = malloc(len), at[32];
	struct pages one, many, few;

	if (!file)
		return;
	memcpy(file, good, len);
	if (byte)
		file[byte] ^= 0x5a;
	for (int i = 0; delta && i < 4; i++)
		file[c->at + 4 + i] = (char)((c->ulen + (uint32_t)delta) >> (8 * i));
	ok(v7_write_file(bad, file, len), "%s: written", what);
	one = cpu0_pages(bad, 0, 0, 0);
	many = cpu0_pages(bad, 32, 0, 0);
	few = cpu0_pages(bad, 7, 0, 0);
	snprintf(at, sizeof(at), "%zu: ", c->at);
	ok(one.count >= pages_before && one.problems && strstr(one.problems, at) && strstr(one.problems, said),
	   "%s: %zu sub-buffers or more, then at the chunk's header (byte %zu): ...%s...", what, pages_before,
	   c->at, said);
	if (!(one.problems && strstr(one.problems, at)))
		diag("%zu sub-buffers; problems:\n%s", one.count, one.problems ? one.problems : "");
	ok(same_pages(&many, &one), "%s: 32 at a time, the same pages and problems", what);
	ok(same_pages(&few, &one), "%s: 7 at a time (spilled), the same pages and problems", what);
	free_pages(&one);
	free_pages(&many);
	free_pages(&few);
	free(file);
}

int main(void)
{
	char dir[] = "/tmp/tb_chunk_ahead.XXXXXX", v6[64], v7[64], bad[64];
	struct v7_chunk c[16];
	struct pages plain;
	size_t len, cpu_at, pages;
	char *good;
	int n;

	if (!mkdtemp(dir))
		skip_all("no temporary directory");
	v7_write_pair(CAPTURE, dir, v6, v7, bad);

	plain = cpu0_pages(v6, 0, 0, 0);
	ok(plain.count == 53 && plain.problems_len == 0, "v6: CPU 0 has 53 sub-buffers, no problem (%zu)",
	   plain.count);
	good = tap_slurp(v7, &len);
	n = good ? cpu0_chunks(v7, good, len, &cpu_at, c, 16) : -1;
	ok(n == 6, "v7: CPU 0 has 6 chunks (%d)", n);
	if (n != 6)
		return done_testing();

	reads_as_v6(v7, &plain, 0, "64 KiB: all of the CPU's data at once");
	reads_as_v6(v7, &plain, 2, "inside the chunk count; then less than a header: every read again");
	reads_as_v6(v7, &plain, 7, "less than a header: every header and chunk read again");
	reads_as_v6(v7, &plain, c[2].at - cpu_at, "on the 3rd chunk's header");
	reads_as_v6(v7, &plain, c[2].at + 3 - cpu_at, "inside the 3rd chunk's header");
	reads_as_v6(v7, &plain, c[2].at + 8 - cpu_at, "on the 3rd chunk's first byte");
	reads_as_v6(v7, &plain, c[2].at + 8 + c[2].clen / 2 - cpu_at, "inside the 3rd chunk's bytes");
	reads_as_v6(v7, &plain, c[3].at + 5 - cpu_at, "inside the header of the chunk spilled at 7 a time");

	/* Cut inside the 4th chunk's header, and inside its bytes: 30 sub-buffers before, either way. */
	pages = c[3].at > c[0].at ? 30 : 0;
	cut_at(bad, good, len, c[3].at + 3, "a chunk header", pages, 0);
	cut_at(bad, good, len, c[3].at + 3, "a chunk header", pages, c[3].at + 1 - cpu_at);
	cut_at(bad, good, len, c[3].at + 8 + c[3].clen / 2, "compressed data", pages, 0);
	cut_at(bad, good, len, c[3].at + 8 + c[3].clen / 2, "compressed data", pages, 100);

	damaged(bad, good, len, &c[3], 30, c[3].at + 8, 0, "chunk here", "the 4th chunk's frame magic damaged");
	damaged(bad, good, len, &c[3], 30, 0, -(int)PAGE, "more bytes than it declares",
		"the 4th chunk declaring a sub-buffer less");
	damaged(bad, good, len, &c[3], 30, 0, (int)PAGE, "before the size it declares",
		"the 4th chunk declaring a sub-buffer more");

	free_pages(&plain);
	free(good);
	unlink(v6);
	unlink(v7);
	unlink(bad);
	rmdir(dir);
	return done_testing();
}
