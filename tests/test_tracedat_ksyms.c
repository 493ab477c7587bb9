/*
 * kallsyms of a trace.dat is parsed on a thread of its own while the rest
 * of the file is read (tdat_read.c, ksyms_job.c).  What a user sees must
 * not change for it: every problem in a damaged kallsyms is told once,
 * with the text the strict parser gives, before the problems of the
 * sections after it (printk formats, saved cmdlines) and after those
 * before it; and when the reading stops earlier (a broken formats
 * section), kallsyms is not spoken of at all, as when it was read in turn.
 *
 * The files are real vectors (v6, and v7 whose kallsyms is read ahead of
 * its turn) with bytes changed; the oracle for kallsyms's messages is the
 * parser itself run on the damaged text in this thread.  This test also
 * runs under TSan (TSAN_TESTS).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "decode/ksyms.h"
#include "lib/tap.h"
#include "tracebuf/tracedat.h"

#define DATA "tests/data/trace-dat/"
#define MAX_SEEN 64

struct seen {
	size_t n;
	struct tb_problem d[MAX_SEEN];
	char file[MAX_SEEN][512];
};

static void collect(void *ctx, const struct tb_problem *d)
{
	struct seen *s = ctx;

	if (s->n == MAX_SEEN)
		return;
	s->d[s->n] = *d;
	snprintf(s->file[s->n], sizeof(s->file[0]), "%s", d->file ? d->file : "");
	s->d[s->n].file = s->file[s->n];
	s->n++;
}

static char path[64];

static void write_file(const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

/* The part called what, as the file's own reader places it; false if none. */
static bool find_part(const char *src, const char *what, struct tb_tracedat_part *out)
{
	struct tb_tracedat *td;
	bool found = false;

	if (tb_tracedat_open(src, NULL, &td) < 0)
		return false;
	for (size_t i = 0; i < tb_tracedat_part_count(td); i++) {
		const struct tb_tracedat_part *p = tb_tracedat_part(td, i);
		if (!strcmp(p->what, what)) {
			*out = *p;
			found = true;
		}
	}
	tb_tracedat_close(td);
	return found;
}

/* Where a text lies: past its part's section header (v7) and its length field; stored plainly. */
static bool find_text(const char *src, const char *what, size_t len_bytes, uint64_t *at, uint64_t *len)
{
	struct tb_tracedat_part p;
	uint64_t header;

	if (!find_part(src, what, &p) || (p.flags & 1))
		return false;
	header = p.section_id >= 0 ? 16 : 0; /* v7: usize is the body's, size counts the header */
	*at = p.offset + header + len_bytes;
	*len = p.usize - len_bytes;
	return true;
}

/* The first byte of the line that holds byte at (at is inside a text starting at start). */
static uint64_t line_start(const uint8_t *data, uint64_t start, uint64_t at)
{
	while (at > start && data[at - 1] != '\n')
		at--;
	return at;
}

/* The kind of message d is, by the text it names: 0 kallsyms, 1 printk, 2 cmdlines, 3 other. */
static int kind(const struct tb_problem *d)
{
	if (strstr(d->file, ": kallsyms at byte"))
		return 0;
	if (strstr(d->file, ": printk formats at byte"))
		return 1;
	if (strstr(d->file, ": saved cmdlines at byte"))
		return 2;
	return 3;
}

struct layout {
	const char *src;
	const char *kallsyms, *printk, *cmdlines; /* the parts' names in this version */
};

/* Two bad kallsyms lines (a space after an address made an 'x', a type letter a digit), printk and cmdlines each a bad first line. */
static void damage_texts(uint8_t *k, size_t klen, uint8_t *printk, uint8_t *cmdlines)
{
	size_t bad1 = line_start(k, 0, klen / 3), bad2 = line_start(k, 0, 2 * klen / 3);

	k[bad1 + 16] = 'x';
	k[bad2 + 17] = '7';
	printk[0] = '#';  /* no address */
	cmdlines[0] = 'x'; /* no pid */
}

/* Plain texts damaged where they lie; *ktext is the damaged kallsyms (in data). */
static bool damage_plain(const struct layout *l, uint8_t *data, const uint8_t **ktext, uint64_t *klen)
{
	uint64_t kat, pat, plen, cat, clen;

	if (!find_text(l->src, l->kallsyms, 4, &kat, klen) || !find_text(l->src, l->printk, 4, &pat, &plen) ||
	    !find_text(l->src, l->cmdlines, 8, &cat, &clen) || *klen < 1000 || !plen || !clen)
		return false;
	damage_texts(data + kat, *klen, data + pat, data + cat);
	*ktext = data + kat;
	return true;
}

/* A v7 zstd section's body decompressed (NULL if it is not one), *n its bytes. */
static uint8_t *unzstd_section(const uint8_t *data, const struct tb_tracedat_part *p, size_t *n)
{
	uint32_t clen, ulen;
	uint8_t *out;

	if (!(p->flags & 1))
		return NULL;
	memcpy(&clen, data + p->offset + 16, 4);
	memcpy(&ulen, data + p->offset + 20, 4);
	out = malloc(ulen);
	*n = ZSTD_decompress(out, ulen, data + p->offset + 24, clen);
	if (ZSTD_isError(*n) || *n != ulen) {
		free(out);
		return NULL;
	}
	return out;
}

/* The body put back, compressed harder, in the section's room (false if it does not fit). */
static bool rezstd_section(uint8_t *data, const struct tb_tracedat_part *p, const uint8_t *body, size_t n)
{
	uint32_t clen, newlen;
	size_t bound = ZSTD_compressBound(n), got;
	uint8_t *z = malloc(bound);

	memcpy(&clen, data + p->offset + 16, 4);
	got = ZSTD_compress(z, bound, body, n, 19);
	if (ZSTD_isError(got) || got > clen) {
		free(z);
		return false;
	}
	newlen = (uint32_t)got;
	memcpy(data + p->offset + 16, &newlen, 4);
	memcpy(data + p->offset + 24, z, got);
	free(z);
	return true;
}

/* v7+zstd: the three sections decompressed, damaged, compressed again; *ktext a copy of the damaged kallsyms. */
static bool damage_zstd(const struct layout *l, uint8_t *data, const uint8_t **ktext, uint64_t *klen)
{
	struct tb_tracedat_part kp, pp, cp;
	uint8_t *k = NULL, *pr = NULL, *c = NULL;
	size_t kn = 0, pn = 0, cn = 0;
	bool done = false;

	if (find_part(l->src, l->kallsyms, &kp) && find_part(l->src, l->printk, &pp) &&
	    find_part(l->src, l->cmdlines, &cp) && (k = unzstd_section(data, &kp, &kn)) &&
	    (pr = unzstd_section(data, &pp, &pn)) && (c = unzstd_section(data, &cp, &cn)) && kn > 1000 && pn > 4 &&
	    cn > 8) {
		damage_texts(k + 4, kn - 4, pr + 4, c + 8);
		done = rezstd_section(data, &kp, k, kn) && rezstd_section(data, &pp, pr, pn) &&
		       rezstd_section(data, &cp, c, cn);
	}
	free(pr);
	free(c);
	if (!done) {
		free(k);
		return false;
	}
	memmove(k, k + 4, kn - 4);
	*ktext = k;
	*klen = kn - 4;
	return true;
}

/*
 * Two bad kallsyms lines, a bad printk line and a bad cmdline: the
 * messages come kallsyms first (exactly the parser's own, once each), then
 * printk, then cmdlines.
 */
static void test_order(const struct layout *l, bool zstd)
{
	size_t len;
	uint8_t *data = (uint8_t *)tap_slurp(l->src, &len);
	const uint8_t *ktext = NULL;
	uint64_t klen = 0;
	struct seen got = {0}, want = {0};
	struct tb_tracedat_opts o = {.diag = collect, .diag_ctx = &got, .lazy_formats = true};
	struct tb_tracedat *td = NULL;
	struct tb_ksyms *k = NULL;
	int rc, last = 0;
	bool in_order = true, same = true;

	if (!ok(data && (zstd ? damage_zstd(l, data, &ktext, &klen) : damage_plain(l, data, &ktext, &klen)),
		"%s: kallsyms, printk formats and cmdlines found and damaged", l->src)) {
		free(data);
		return;
	}
	write_file(data, len);
	rc = tb_tracedat_open(path, &o, &td);
	ok(rc == 0, "%s damaged in kallsyms, printk and cmdlines: opened, the damage told", l->src);
	is_int(td ? tb_tracedat_problems(td) : 0, got.n, "%s: each message counted once", l->src);
	tb_tracedat_close(td);

	/* The oracle: the parser on the damaged text, here and now. */
	rc = tb_ksyms_parse("k", (const char *)ktext, klen, collect, &want, &k);
	tb_ksyms_free(k);
	ok(rc == -EINVAL && want.n == 2, "%s: the parser itself finds the 2 bad lines (%zu)", l->src, want.n);
	size_t nk = 0;
	for (size_t i = 0; i < got.n; i++) {
		int kd = kind(&got.d[i]);
		in_order = in_order && kd >= last && kd != 3;
		last = kd;
		if (kd == 0) {
			same = same && nk < want.n && got.d[i].offset == want.d[nk].offset &&
			       !strcmp(got.d[i].reason, want.d[nk].reason);
			nk++;
		}
	}
	ok(same && nk == want.n, "%s: kallsyms's messages are the parser's, once each (%zu of %zu)", l->src, nk,
	   want.n);
	ok(in_order && got.n >= 4 && kind(&got.d[got.n - 1]) == 2,
	   "%s: kallsyms's problems come before printk's, and those before cmdlines' (%zu messages)", l->src,
	   got.n);
	if (!in_order || !same)
		for (size_t i = 0; i < got.n; i++)
			diag("%s: byte %llu: %s", got.d[i].file, (unsigned long long)got.d[i].offset,
			     got.d[i].reason);
	if (zstd)
		free((void *)ktext);
	free(data);
}

/*
 * The formats section broken (fatal) and kallsyms damaged too: the file is
 * refused with the formats' message, and kallsyms - never reached when it
 * was read in its turn - is not spoken of.
 */
static void test_stop_before(const struct layout *l, const char *formats, size_t skip, uint64_t value,
			     int width, const char *says)
{
	struct tb_tracedat_part fp;
	uint64_t kat, klen;
	size_t len;
	uint8_t *data = (uint8_t *)tap_slurp(l->src, &len);
	struct seen got = {0};
	struct tb_tracedat_opts o = {.diag = collect, .diag_ctx = &got, .lazy_formats = true};
	struct tb_tracedat *td = NULL;
	bool kallsyms_told = false;
	int rc;

	if (!ok(data && find_text(l->src, l->kallsyms, 4, &kat, &klen) && find_part(l->src, formats, &fp),
		"%s: kallsyms and %s found", l->src, formats)) {
		free(data);
		return;
	}
	data[line_start(data, kat, kat + klen / 2) + 16] = 'x';
	for (int i = 0; i < width; i++)
		data[fp.offset + skip + (uint64_t)i] = (uint8_t)(value >> (8 * i));
	write_file(data, len);
	rc = tb_tracedat_open(path, &o, &td);
	tb_tracedat_close(td);
	for (size_t i = 0; i < got.n; i++)
		kallsyms_told = kallsyms_told || kind(&got.d[i]) == 0;
	ok(rc == -EINVAL && got.n >= 1 && !kallsyms_told && strstr(got.d[0].reason, says),
	   "%s: %s broken: refused with '%s', kallsyms not spoken of", l->src, formats,
	   got.n ? got.d[0].reason : "(no message)");
	free(data);
}

/* The same file read with and without symbols, and twice: the same problems, the same table. */
static void test_undamaged(const struct layout *l)
{
	struct seen got = {0};
	struct tb_tracedat_opts o = {.diag = collect, .diag_ctx = &got, .lazy_formats = true};
	struct tb_tracedat *td = NULL;
	int rc = tb_tracedat_open(l->src, &o, &td);

	ok(rc == 0 && got.n == 0 && td && tb_schema_has_symbols(tb_tracedat_schema(td)) &&
	       tb_tracedat_info(td)->kallsyms_len > 0,
	   "%s: undamaged: no problem, the symbols are there when open returns", l->src);
	tb_tracedat_close(td);
}

/*
 * A reader that wants no symbols (report --count) leaves a compressed
 * kallsyms section compressed, as it leaves a v6 file's text unread: the
 * zstd block made garbage in its middle is said by a reading with symbols,
 * and not met by one without; a plain section's length is still read.
 */
static void test_no_symbols(const struct layout *l, bool zstd)
{
	struct seen with = {0}, without = {0};
	struct tb_tracedat_opts o = {.diag = collect, .diag_ctx = &with, .lazy_formats = true};
	struct tb_tracedat_opts n = {.diag = collect, .diag_ctx = &without, .lazy_formats = true, .no_symbols = true};
	struct tb_tracedat_part p;
	struct tb_tracedat *td = NULL;
	size_t len;
	uint8_t *data = (uint8_t *)tap_slurp(l->src, &len);
	int rc;

	if (!data || !find_part(l->src, l->kallsyms, &p) || (bool)(p.flags & 1) != zstd || p.size < 4096) {
		ok(0, "%s: its kallsyms section found (compressed: %d)", l->src, zstd);
		free(data);
		return;
	}
	if (zstd) /* past the header (16) and sizes (8), amid the block */
		memset(data + p.offset + 24 + (p.size - 24) / 2, 0xff, 256);
	write_file(data, len);
	rc = tb_tracedat_open(path, &n, &td);
	ok(rc == 0 && without.n == 0 && (tb_tracedat_info(td)->kallsyms_len > 0) == !zstd,
	   "%s%s, no symbols: opened with no problem, kallsyms's length %s", l->src, zstd ? " (block damaged)" : "",
	   zstd ? "not read (left compressed)" : "read");
	tb_tracedat_close(td);
	td = NULL;
	if (zstd) {
		rc = tb_tracedat_open(path, &o, &td);
		ok(with.n > 0 && strstr(with.d[0].reason, "kallsyms"),
		   "%s (block damaged), with symbols: the damage is said (%s)", l->src,
		   with.n ? with.d[0].reason : "nothing");
		tb_tracedat_close(td);
	}
	free(data);
}

int main(void)
{
	static const struct layout v6 = {DATA "sched-marker-v6.dat", "kallsyms", "printk formats",
					 "saved cmdlines"};
	static const struct layout v7 = {DATA "sched-marker-v7-none.dat", "kallsyms", "printk",
					 "command lines"};
	static const struct layout v7z = {DATA "sched-marker-v7-zstd.dat", "kallsyms", "printk",
					  "command lines"};

	snprintf(path, sizeof(path), "/tmp/tb-tdksyms-%d.dat", (int)getpid());
	test_undamaged(&v6);
	test_undamaged(&v7);
	test_undamaged(&v7z); /* kallsyms decompressed on its thread */
	test_no_symbols(&v7, false);
	test_no_symbols(&v7z, true);
	test_order(&v6, false);
	test_order(&v7, false);
	test_order(&v7z, true);
	/* v6: 4 billion event systems; v7: the events format section's id made 99. */
	test_stop_before(&v6, "event formats", 0, 0xffffffff, 4, "event systems cannot fit");
	test_stop_before(&v7, "events format", 0, 99, 2, "found id 99");
	unlink(path);
	return done_testing();
}
