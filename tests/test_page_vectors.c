/*
 * The page codec against real kernel sub-buffers (tests/data/kernel).
 *
 * For every raw capture: every page decodes without error; the data records
 * are, in count and microsecond-rounded time, the lines of the kernel's own
 * per-CPU trace file; lost flags carry the overrun the stats file reports;
 * and re-encoding each decoded page with our encoder gives the kernel's
 * bytes back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tap.h"
#include "ring/pagefmt.h"
#include "tracebuf/page.h"

#define DATA "tests/data/kernel/"

/* Microsecond timestamps of the event lines of a kernel trace file. */
static long long *trace_times(const char *path, size_t *n)
{
	char *text = tap_slurp(path, NULL), *line, *save = NULL;
	long long *t = NULL;
	size_t cap = 0;

	*n = 0;
	if (!text)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *b = strstr(line, "] ");
		unsigned long long sec, usec;
		if (line[0] == '#' || !b || strncmp(line, "CPU:", 4) == 0)
			continue;
		if (sscanf(b + 8, " %llu.%llu:", &sec, &usec) != 2)
			continue;
		if (*n == cap)
			t = realloc(t, (cap = cap ? 2 * cap : 1024) * sizeof(*t));
		t[(*n)++] = (long long)(sec * 1000000 + usec);
	}
	free(text);
	return t;
}

static long long stat_value(const char *path, const char *key)
{
	char *text = tap_slurp(path, NULL), *p;
	long long v = -1;

	if (text && (p = strstr(text, key)))
		v = atoll(p + strlen(key));
	free(text);
	return v;
}

/* Re-encode a decoded page; 1 if the bytes match the original. */
static int reencode_matches(const uint8_t *page, size_t psize)
{
	struct tb_page_cursor c;
	struct tb_page_writer w;
	struct tb_record r;
	uint8_t *out = malloc(psize);
	int rc, same, abs_next = 0;

	tb_page_cursor_init(&c, page, psize);
	tb_page_writer_init(&w, out, psize, c.hdr.timestamp);
	while ((rc = tb_page_next(&c, &r)) == 1) {
		if (r.kind == TB_REC_TIME_STAMP)
			abs_next = 1;
		else if (r.kind == TB_REC_PADDING)
			tb_page_add_padding(&w, r.time_delta, r.size);
		else if (r.kind == TB_REC_DATA) {
			if (abs_next)
				tb_page_add_abs(&w, r.ts, r.data, r.len);
			else
				tb_page_add(&w, r.ts, r.data, r.len);
			abs_next = 0;
		}
	}
	tb_page_finish(&w, false, c.hdr.lost ? (c.hdr.lost_stored ? (int64_t)c.hdr.lost_count : -1) : 0);
	same = rc == 0 && memcmp(out, page, psize) == 0;
	free(out);
	return same;
}

struct raw_result {
	size_t pages, events, bad_pages, reencoded;
	long long *us;
	uint64_t first_lost; /* stored count on the first page, if any */
	int first_lost_flag, first_lost_stored;
};

static void decode_raw(const char *path, size_t psize, struct raw_result *res)
{
	size_t len, cap = 0;
	uint8_t *raw = (uint8_t *)tap_slurp(path, &len);

	memset(res, 0, sizeof(*res));
	if (!raw)
		return;
	for (size_t off = 0; off + psize <= len; off += psize) {
		struct tb_page_cursor c;
		struct tb_record r;
		int rc;

		res->pages++;
		if (tb_page_cursor_init(&c, raw + off, psize) < 0) {
			res->bad_pages++;
			continue;
		}
		if (off == 0) {
			res->first_lost_flag = c.hdr.lost;
			res->first_lost_stored = c.hdr.lost_stored;
			res->first_lost = c.hdr.lost_count;
		}
		while ((rc = tb_page_next_data(&c, &r)) == 1) {
			if (res->events == cap)
				res->us = realloc(res->us, (cap = cap ? 2 * cap : 1024) * sizeof(long long));
			res->us[res->events++] = (long long)((r.ts + 500) / 1000);
		}
		if (rc < 0)
			res->bad_pages++;
		res->reencoded += reencode_matches(raw + off, psize);
	}
	free(raw);
}

/* Check one CPU of one capture; skip = trace lines consumed before the raw read. */
static void check_cpu(const char *dir, const char *prefix, int cpu, size_t psize, size_t skip)
{
	char raw[256], txt[256], stats[256];
	struct raw_result res;
	size_t nt, i, mismatch = 0;
	long long *t;

	snprintf(raw, sizeof(raw), DATA "%s/%scpu%d.raw", dir, prefix, cpu);
	snprintf(txt, sizeof(txt), DATA "%s/%scpu%d.trace.txt", dir, prefix, cpu);
	snprintf(stats, sizeof(stats), DATA "%s/%scpu%d.stats", dir, prefix, cpu);
	decode_raw(raw, psize, &res);
	t = trace_times(txt, &nt);
	ok(res.pages > 0 && res.bad_pages == 0, "%s %scpu%d: %zu pages decode cleanly", dir, prefix, cpu,
	   res.pages);
	is_int(res.events + skip, nt, "%s %scpu%d: event count equals the kernel's trace lines", dir,
	       prefix, cpu);
	for (i = 0; i < res.events && i + skip < nt; i++)
		mismatch += res.us[i] != t[i + skip];
	is_int(mismatch, 0, "%s %scpu%d: every timestamp equals the kernel's (usec)", dir, prefix, cpu);
	is_int(res.reencoded, res.pages, "%s %scpu%d: our encoder reproduces every page byte for byte",
	       dir, prefix, cpu);
	if (res.first_lost_flag && res.first_lost_stored)
		is_int(res.first_lost, stat_value(stats, "overrun: "),
		       "%s %scpu%d: stored lost count equals the stats overrun", dir, prefix, cpu);
	free(res.us);
	free(t);
}

static const uint8_t *page_at(const char *path, size_t psize, size_t index, uint8_t **keep)
{
	size_t len;
	*keep = (uint8_t *)tap_slurp(path, &len);
	return *keep && (index + 1) * psize <= len ? *keep + index * psize : NULL;
}

/* A record of the given kind at a data offset (offset excludes the header). */
static int find_record(const uint8_t *page, size_t psize, uint32_t data_off, struct tb_record *out)
{
	struct tb_page_cursor c;
	struct tb_record r;

	tb_page_cursor_init(&c, page, psize);
	while (tb_page_next(&c, &r) == 1)
		if (r.offset == data_off + TB_PAGE_HDR_SIZE) {
			*out = r;
			return 1;
		}
	return 0;
}

static void check_known_layouts(void)
{
	struct tb_page_header h;
	struct tb_record r;
	uint8_t *keep;
	const uint8_t *p;

	/* cap-a cpu0 sub-buffer 8: the 300-char marker in long form. */
	p = page_at(DATA "cap-a-small-noloss/cpu0.raw", 4096, 8, &keep);
	ok(p && find_record(p, 4096, 1384, &r) && r.type_len == 0 && r.size == 336 && r.len == 328,
	   "cap-a: long-form record at data offset 1384 (array[0] 332)");
	ok(p && find_record(p, 4096, 3628, &r) && r.kind == TB_REC_TIME_EXTEND,
	   "cap-a: time extend at data offset 3628");
	free(keep);

	/* cap-b: lost flag + stored flag, sign-extended commit word. */
	p = page_at(DATA "cap-b-overrun/cpu0.raw", 4096, 0, &keep);
	ok(p && tb_page_read_header(p, 4096, &h, NULL) == 0 && h.commit_raw == 0xffffffffc0000fe4ull &&
		   h.data_len == 4068 && h.lost && h.lost_stored && h.lost_count == 4504,
	   "cap-b: commit 0xffffffffc0000fe4 -> 4068 bytes, lost 4504 stored");
	free(keep);

	/* cap-d cpu1 sub-buffer 30: an absolute TIME_STAMP in delta mode. */
	p = page_at(DATA "cap-d-abs-timestamp/cpu1.raw", 4096, 30, &keep);
	ok(p && find_record(p, 4096, 2512, &r) && r.kind == TB_REC_TIME_STAMP,
	   "cap-d: absolute time stamp record at data offset 2512");
	free(keep);

	/* cap-e e1: copied page ending in a 12-byte padding record, commit 4044. */
	p = page_at(DATA "cap-e-partial-and-padding/e1.cpu0.raw", 4096, 0, &keep);
	ok(p && tb_page_read_header(p, 4096, &h, NULL) == 0 && h.data_len == 4044 &&
		   find_record(p, 4096, 4032, &r) && r.kind == TB_REC_PADDING && r.size == 12,
	   "cap-e e1: padding record (array[0] 8) at 4032, commit 4044");
	free(keep);

	/* cap-e e3: lost flag without room for the count. */
	p = page_at(DATA "cap-e-partial-and-padding/e3.cpu0.raw", 4096, 0, &keep);
	ok(p && tb_page_read_header(p, 4096, &h, NULL) == 0 && h.commit_raw == 0xffffffff80000ff0ull &&
		   h.lost && !h.lost_stored && h.data_len == 4080,
	   "cap-e e3: lost flag without stored count, data length 4080");
	free(keep);

	/* cap-e e2: a page holding only padding. */
	p = page_at(DATA "cap-e-partial-and-padding/e2.cpu0.raw", 4096, 0, &keep);
	{
		struct tb_page_cursor c;
		int data = 0, pad = 0, rc;
		tb_page_cursor_init(&c, p, 4096);
		while ((rc = tb_page_next(&c, &r)) == 1)
			data += r.kind == TB_REC_DATA, pad += r.kind == TB_REC_PADDING;
		ok(p && rc == 0 && data == 0 && pad == 1 && c.hdr.data_len == 12,
		   "cap-e e2: commit 12, one padding record, no events");
	}
	free(keep);
}

static void check_sizes(void)
{
	static const uint32_t sizes[] = {12, 13, 16, 24, 109, 112, 120, 121, 124, 4072};
	static const uint32_t want[] = {16, 20, 20, 28, 116, 116, 128, 132, 132, 4080};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		is_int(tb_record_size(sizes[i], 0), want[i], "record size of a %u-byte payload", sizes[i]);
	for (int k = 0; k <= 7; k++) {
		size_t ps = 4096u << k;
		ok(tb_page_size_valid(ps) && tb_page_max_payload(ps) == ps - 24,
		   "sub-buffer %zu KiB: max payload %u", ps >> 10, tb_page_max_payload(ps));
	}
	ok(!tb_page_size_valid(2048) && !tb_page_size_valid(6144) && !tb_page_size_valid(1 << 20),
	   "sizes other than 4 KiB << 0..7 are refused");
}

int main(void)
{
	static const struct {
		const char *dir;
		int cpus;
		size_t psize;
	} caps[] = {
		{"cap-a-small-noloss", 2, 4096},
		{"cap-b-overrun", 2, 4096},
		{"cap-c-subbuf8k", 2, 8192},
		{"cap-d-abs-timestamp", 2, 4096},
	};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		for (int cpu = 0; cpu < caps[i].cpus; cpu++)
			check_cpu(caps[i].dir, "", cpu, caps[i].psize, 0);
	check_cpu("cap-e-partial-and-padding", "e1.", 0, 4096, 1); /* one consumed first */
	check_cpu("cap-e-partial-and-padding", "e3.", 0, 4096, 0);
	check_known_layouts();
	check_sizes();
	return done_testing();
}
