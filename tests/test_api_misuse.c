/*
 * Every public function, called with NULLs and bad values: a documented
 * error (-EINVAL, or the function's own), never a crash, and nothing
 * changed behind the caller's back.  Under ASan+UBSan a stray read or write
 * fails the test too.  The write path (tb_write, tb_reserve, tb_commit) is
 * left out on purpose: ring.h says a NULL ring there is the caller's duty,
 * so only its documented refusals are checked (a foreign commit pointer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/schema_internal.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/hist.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/report.h"
#include "tracebuf/ring.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"

#define E1 "tests/data/kernel/cap-e-partial-and-padding/"

static struct tb_ring *small_ring(void)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = NULL;

	tb_ring_opts_default(&o);
	o.size_kb = 8;
	o.ncpus = 1;
	if (tb_ring_new(&ring, &o) < 0) {
		printf("Bail out! cannot create a ring\n");
		exit(1);
	}
	return ring;
}

static void check_ring_setup(void)
{
	struct tb_ring_opts o;
	struct tb_ring *ring = (struct tb_ring *)0x1;
	struct tb_sizing sz;
	static _Alignas(64) unsigned char mem[64];

	tb_ring_opts_default(NULL);
	ok(tb_ring_region_size(NULL) > 0, "region size of NULL options: the defaults'");
	is_int(tb_ring_new(NULL, NULL), -EINVAL, "tb_ring_new(NULL, NULL)");
	tb_ring_opts_default(&o);
	o.subbuf_size = 5000;
	is_int(tb_ring_new(&ring, &o), -EINVAL, "sub-buffer of 5000 bytes");
	ok(ring == NULL, "... and *ring is NULL after a failure");
	is_int(tb_ring_region_size(&o), 0, "region size of bad options: 0");
	tb_ring_opts_default(&o);
	o.clock = (enum tb_clock)99;
	is_int(tb_ring_new(&ring, &o), -EINVAL, "unknown clock");
	tb_ring_opts_default(&o);
	o.ncpus = 5000;
	is_int(tb_ring_new(&ring, &o), -EINVAL, "5000 CPUs");
	tb_ring_opts_default(&o);
	o.size_kb = (size_t)1 << 50;
	is_int(tb_ring_new(&ring, &o), -EINVAL, "a 2^50 KiB buffer");
	tb_ring_opts_default(&o);
	o.mem = mem;
	o.mem_size = sizeof(mem);
	is_int(tb_ring_new(&ring, &o), -EINVAL, "caller memory too small");
	o.mem = mem + 1;
	o.mem_size = (size_t)1 << 30;
	is_int(tb_ring_new(&ring, &o), -EINVAL, "caller memory not aligned");
	tb_ring_free(NULL);
	is_int(tb_ring_reset(NULL), -EINVAL, "tb_ring_reset(NULL)");
	is_int(tb_ring_resize(NULL, 64), -EINVAL, "tb_ring_resize(NULL)");
	tb_ring_set_recording(NULL, 0);
	ok(tb_ring_ncpus(NULL) == 0 && tb_ring_subbuf_size(NULL) == 0 && tb_ring_max_payload(NULL) == 0 &&
		   tb_ring_clock(NULL) == TB_CLOCK_TSC && tb_ring_uses_rseq(NULL) == 0 &&
		   tb_ring_clock_now(NULL) == 0 && tb_ring_to_ns(NULL, 1234) == 1234,
	   "queries of a NULL ring: 0 (TSC clock; raw values unchanged)");
	ok(!strcmp(tb_clock_name((enum tb_clock)99), "unknown"), "tb_clock_name of a bad clock");
	memset(&sz, 0xff, sizeof(sz));
	tb_ring_sizing(NULL, &sz);
	ok(sz.subbufs_per_cpu == 0 && sz.requested_kb == 0, "tb_ring_sizing(NULL, out) zeroes out");
	tb_ring_sizing(NULL, NULL);
	is_int(tb_sizing_compute(8, 4, NULL), -EINVAL, "tb_sizing_compute(..., NULL)");
	is_int(tb_sizing_compute(0, 4, &sz), -EINVAL, "tb_sizing_compute of 0 KiB");
	is_int(tb_sizing_compute(8, 1024, &sz), -EINVAL, "tb_sizing_compute of 1 MiB sub-buffers");
}

static void check_ring_calls(void)
{
	struct tb_ring *ring = small_ring();
	struct tb_read_event ev;
	struct tb_iter *it = (struct tb_iter *)0x1;
	struct tb_cpu_stats st;
	struct tb_read_info info;
	uint8_t page[4096];
	void *r;

	is_int(tb_ring_resize(ring, 0), -EINVAL, "tb_ring_resize(ring, 0)");
	is_int(tb_consume(NULL, 0, &ev), -EINVAL, "tb_consume(NULL)");
	is_int(tb_consume(ring, 0, NULL), -EINVAL, "tb_consume(ring, 0, NULL)");
	is_int(tb_consume(ring, 7, &ev), -EINVAL, "tb_consume of CPU 7 of a 1-CPU ring");
	is_int(tb_consume_merged(NULL, &ev), -EINVAL, "tb_consume_merged(NULL)");
	is_int(tb_consume_merged(ring, NULL), -EINVAL, "tb_consume_merged(ring, NULL)");
	is_int(tb_read_page(NULL, 0, page, sizeof(page)), -EINVAL, "tb_read_page(NULL)");
	is_int(tb_read_page(ring, 0, NULL, sizeof(page)), -EINVAL, "tb_read_page(ring, 0, NULL)");
	is_int(tb_read_page(ring, 0, page, 100), -EINVAL, "tb_read_page into 100 bytes");
	is_int(tb_read_page(ring, 3, page, sizeof(page)), -EINVAL, "tb_read_page of CPU 3");
	is_int(tb_read_page_info(ring, 0, page, sizeof(page), NULL), 0,
	       "tb_read_page_info without info: fine (empty ring: 0)");
	is_int(tb_read_page_info(NULL, 0, page, sizeof(page), &info), -EINVAL, "tb_read_page_info(NULL)");
	is_int(tb_iter_new(NULL, &it), -EINVAL, "tb_iter_new(NULL)");
	is_int(tb_iter_new(ring, NULL), -EINVAL, "tb_iter_new(ring, NULL)");
	is_int(tb_iter_next(NULL, &ev), -EINVAL, "tb_iter_next(NULL)");
	if (tb_iter_new(ring, &it) == 0) {
		is_int(tb_iter_next(it, NULL), -EINVAL, "tb_iter_next(it, NULL)");
		tb_iter_free(it);
	}
	tb_iter_free(NULL);
	is_int(tb_stats_read(NULL, 0, &st), -EINVAL, "tb_stats_read(NULL)");
	is_int(tb_stats_read(ring, 0, NULL), -EINVAL, "tb_stats_read(ring, 0, NULL)");
	is_int(tb_stats_read(ring, 9, &st), -EINVAL, "tb_stats_read of CPU 9");
	tb_stats_derive(NULL);
	tb_stats_print(NULL, ring, &st, 1);
	tb_stats_print(stdout, ring, NULL, 1);
	is_int(tb_stats_parse_kernel(NULL, &st, NULL), -EINVAL, "tb_stats_parse_kernel(NULL)");
	is_int(tb_stats_parse_kernel("entries: 1\n", NULL, NULL), -EINVAL, "tb_stats_parse_kernel(text, NULL)");

	/* The write path's documented refusals (its ring is the caller's duty). */
	is_int(tb_commit(ring, NULL), -EINVAL, "tb_commit of NULL: refused, nothing published");
	r = tb_reserve(ring, 16);
	is_int(tb_commit(ring, page), -EINVAL, "tb_commit of a pointer tb_reserve did not give");
	tb_discard(ring, NULL);
	tb_discard(ring, page);
	is_int(r ? tb_commit(ring, r) : -1, 0, "... the real reservation still commits after those");
	tb_stats_read(ring, 0, &st);
	is_int(st.written, 1, "... and exactly one event was written");
	ok(tb_reserve(ring, TB_RESERVE_MAX + 1) == NULL, "tb_reserve too big: NULL");
	tb_ring_free(ring);
}

static void check_page_codec(void)
{
	uint8_t page[4096] = {0};
	struct tb_page_header h;
	struct tb_page_error err = {0};
	struct tb_page_cursor c;
	struct tb_page_writer w;
	struct tb_record rec;

	is_int(tb_page_read_header(NULL, sizeof(page), &h, &err), -EINVAL, "tb_page_read_header(NULL page)");
	ok(err.reason != NULL, "... with a reason");
	is_int(tb_page_read_header(page, sizeof(page), NULL, NULL), -EINVAL, "tb_page_read_header(..., NULL)");
	is_int(tb_page_cursor_init(NULL, page, sizeof(page)), -EINVAL, "tb_page_cursor_init(NULL)");
	is_int(tb_page_cursor_init(&c, NULL, sizeof(page)), -EINVAL, "tb_page_cursor_init(c, NULL)");
	is_int(tb_page_next(&c, &rec), -EINVAL, "... the failed cursor stays failed");
	is_int(tb_page_cursor_init_range(NULL, page, sizeof(page), 0, 0, 0), -EINVAL,
	       "tb_page_cursor_init_range(NULL)");
	is_int(tb_page_cursor_init_range(&c, NULL, sizeof(page), 0, 0, 0), -EINVAL,
	       "tb_page_cursor_init_range(c, NULL)");
	is_int(tb_page_cursor_init_range(&c, page, sizeof(page), 8, 4, 0), -EINVAL, "a range ending before it starts");
	is_int(tb_page_next(NULL, &rec), -EINVAL, "tb_page_next(NULL)");
	tb_page_cursor_init(&c, page, sizeof(page));
	is_int(tb_page_next(&c, NULL), -EINVAL, "tb_page_next(c, NULL)");
	is_int(tb_page_next_data(NULL, &rec), -EINVAL, "tb_page_next_data(NULL)");
	is_int(tb_page_writer_init(NULL, page, sizeof(page), 0), -EINVAL, "tb_page_writer_init(NULL)");
	is_int(tb_page_writer_init(&w, NULL, sizeof(page), 0), -EINVAL, "tb_page_writer_init(w, NULL)");
	is_int(tb_page_add(&w, 1, "abcd", 4), -EINVAL, "... then tb_page_add refuses");
	is_int(tb_page_add_padding(&w, 1, 8), -EINVAL, "... tb_page_add_padding refuses");
	is_int(tb_page_finish(&w, true, 0), -EINVAL, "... tb_page_finish refuses");
	is_int(tb_page_writer_init(&w, page, 1000, 0), -EINVAL, "tb_page_writer_init of a 1000-byte page");
	is_int(tb_page_writer_init(&w, page, sizeof(page), 0), 0, "a good writer");
	is_int(tb_page_add(&w, 1, NULL, 4), -EINVAL, "tb_page_add of NULL data, 4 bytes");
	is_int(tb_page_add(&w, 1, NULL, 0), 0, "tb_page_add of no data: an empty event");
	is_int(tb_page_add(NULL, 1, "abcd", 4), -EINVAL, "tb_page_add(NULL)");
	is_int(tb_page_add_abs(NULL, 1, "abcd", 4), -EINVAL, "tb_page_add_abs(NULL)");
	is_int(tb_page_add_padding(NULL, 1, 8), -EINVAL, "tb_page_add_padding(NULL)");
	is_int(tb_page_finish(NULL, true, 0), -EINVAL, "tb_page_finish(NULL)");
	ok(tb_page_writer_used(NULL) == 0 && tb_page_writer_entries(NULL) == 0, "writer counters of NULL: 0");
	is_int(tb_page_writer_entries(&w), 1, "the good writer holds its one event");
}

static void check_schema(void)
{
	struct tb_schema *s = tb_schema_new();
	struct tb_header_page hp;
	struct tb_format f;
	struct tb_problem d = {0};
	struct tb_render_record ev = {0, 0, NULL, 8};
	size_t len = 0;
	char *fmt = tap_slurp(E1 "formats/ftrace/print.format", &len);
	char *out = NULL;
	size_t outlen = 0;
	FILE *sink = open_memstream(&out, &outlen);

	tb_problem_print(NULL, NULL);
	is_int(tb_header_page_parse(NULL, 10, &hp, &d), -EINVAL, "tb_header_page_parse(NULL, 10)");
	is_int(tb_header_page_parse("x", 1, NULL, NULL), -EINVAL, "tb_header_page_parse(..., NULL)");
	is_int(tb_header_event_parse(NULL, 10, NULL), -EINVAL, "tb_header_event_parse(NULL, 10)");
	is_int(tb_format_parse(NULL, 10, &f, NULL), -EINVAL, "tb_format_parse(NULL, 10)");
	is_int(tb_format_parse(fmt, len, NULL, NULL), -EINVAL, "tb_format_parse(..., NULL)");
	tb_format_free(NULL);
	ok(tb_format_field(NULL, "ip") == NULL, "tb_format_field(NULL)");
	if (fmt && tb_format_parse(fmt, len, &f, NULL) == 0) {
		ok(tb_format_field(&f, NULL) == NULL, "tb_format_field(f, NULL)");
		is_int(tb_schema_check_record(&f, NULL, 16, &d), -EINVAL, "tb_schema_check_record of NULL data");
		tb_format_free(&f);
	}
	is_int(tb_schema_check_record(NULL, "x", 1, NULL), -EINVAL, "tb_schema_check_record(NULL)");
	tb_schema_free(NULL);
	tb_schema_set_problem_fn(NULL, NULL, NULL);
	is_int(tb_schema_problems(NULL), 0, "tb_schema_problems(NULL)");
	is_int(tb_schema_load_header_page(NULL, "f", "x", 1), -EINVAL, "tb_schema_load_header_page(NULL)");
	is_int(tb_schema_load_header_page(s, "f", NULL, 5), -EINVAL, "tb_schema_load_header_page(s, f, NULL, 5)");
	is_int(tb_schema_load_header_event(NULL, "f", "x", 1), -EINVAL, "tb_schema_load_header_event(NULL)");
	is_int(tb_schema_load_format(NULL, "f", "ftrace", fmt, len), -EINVAL, "tb_schema_load_format(NULL)");
	is_int(tb_schema_load_format(s, NULL, NULL, fmt, len), -EINVAL,
	       "tb_schema_load_format with no file name and no system: refused, reported");
	is_int(tb_schema_load_format(s, "f", "ftrace", NULL, 9), -EINVAL, "tb_schema_load_format of NULL text");
	is_int(tb_schema_load_cmdlines(NULL, "f", "1 a\n", 4), -EINVAL, "tb_schema_load_cmdlines(NULL)");
	is_int(tb_schema_load_cmdlines(s, NULL, NULL, 0), 0, "tb_schema_load_cmdlines of nothing: fine");
	is_int(tb_schema_load_kallsyms(NULL, "f", "x", 1), -EINVAL, "tb_schema_load_kallsyms(NULL)");
	is_int(tb_schema_load_kallsyms(s, "f", NULL, 3), -EINVAL, "tb_schema_load_kallsyms of NULL text");
	is_int(tb_schema_load_printk_formats(NULL, "f", "x", 1), -EINVAL, "tb_schema_load_printk_formats(NULL)");
	is_int(tb_schema_load_printk_formats(s, "f", NULL, 3), -EINVAL,
	       "tb_schema_load_printk_formats of NULL text");
	ok(tb_schema_subbuf_size(NULL) == 0 && tb_schema_event_count(NULL) == 0 &&
		   !tb_schema_has_symbols(NULL) && tb_schema_event(NULL, 5, NULL) == NULL &&
		   tb_schema_find_event(NULL, 5, NULL) == NULL && schema_tep(NULL) == NULL,
	   "schema queries of NULL: 0, false, NULL");
	tb_schema_set_loader(NULL, NULL, NULL);
	ok(tb_schema_event(s, 70000, NULL) == NULL, "tb_schema_event of id 70000: NULL");
	is_int(tb_render_event(NULL, &ev, NULL, sink, &d), -EINVAL, "tb_render_event(NULL schema)");
	is_int(tb_render_event(s, NULL, NULL, sink, NULL), -EINVAL, "tb_render_event(s, NULL event)");
	is_int(tb_render_event(s, &ev, NULL, NULL, NULL), -EINVAL, "tb_render_event(..., NULL out)");
	is_int(tb_render_event(s, &ev, NULL, sink, NULL), -EINVAL, "tb_render_event of a NULL payload");
	tb_render_header(NULL, "nop", 0, 0, 1);
	tb_render_header(sink, NULL, 0, 0, 1);
	fclose(sink);
	ok(out && !strncmp(out, "# tracer: nop\n", 14), "tb_render_header with no tracer says nop");
	free(out);
	free(fmt);
	tb_schema_free(s);
}

static void check_capture(void)
{
	struct tb_capture *c = (struct tb_capture *)0x1;
	struct tb_capture_page page;
	struct tb_cpu_stats st;
	FILE *null = fopen("/dev/null", "w");
	struct tb_capture_opts quiet = {.prefix = "e1.", .diag = NULL};

	is_int(tb_capture_open(NULL, NULL, &c), -EINVAL, "tb_capture_open(NULL)");
	ok(c == NULL, "... *out is NULL after it");
	is_int(tb_capture_open("", NULL, &c), -EINVAL, "tb_capture_open(\"\")");
	is_int(tb_capture_open(E1, NULL, NULL), -EINVAL, "tb_capture_open(dir, opts, NULL)");
	is_int(tb_capture_open("/nonexistent-tb-dir", NULL, &c), -ENOENT, "tb_capture_open of no directory");
	tb_capture_close(NULL);
	ok(!tb_capture_is_live(NULL) && tb_capture_cpu_slots(NULL) == 0 && !tb_capture_has_cpu(NULL, 0) &&
		   tb_capture_online_cpus(NULL) == 0 && tb_capture_subbuf_size(NULL) == 0 &&
		   !strcmp(tb_capture_tracer(NULL), "nop") && !tb_capture_clock_is_ns(NULL) &&
		   tb_capture_schema(NULL) == NULL && tb_capture_problems(NULL) == 0,
	   "capture queries of NULL: 0, false, NULL, nop");
	ok(tb_capture_slot_cpu(NULL, 0) == -EINVAL && tb_capture_slot_buffer(NULL, 0) == NULL &&
		   !tb_capture_has_buffers(NULL),
	   "slot queries of NULL: -EINVAL, NULL, false");
	is_int(tb_capture_cpu_stats(NULL, 0, &st), -EINVAL, "tb_capture_cpu_stats(NULL)");
	is_int(tb_capture_next_page(NULL, 0, &page), -EINVAL, "tb_capture_next_page(NULL)");
	is_int(tb_capture_rewind(NULL), -EINVAL, "tb_capture_rewind(NULL)");
	is_int(tb_capture_resume(NULL), -EINVAL, "tb_capture_resume(NULL)");
	tb_hist_skip_seen(NULL, 1);
	tb_hist_count_until(NULL, 1);
	tb_hist_set_schema(NULL, NULL);
	tb_hist_set_tsc2nsec(NULL, 1, 1);
	is_int(tb_hist_add_capture(NULL, NULL, NULL), -EINVAL, "tb_hist setters of NULL do nothing; tb_hist_add_capture(NULL)");
	tb_capture_problem(NULL, "f", 0, "%s", "x");
	tb_capture_quiet(NULL, true);
	is_int(tb_report_write(NULL, null, NULL, NULL), -EINVAL, "tb_report_write(NULL)");
	if (tb_capture_open(E1, &quiet, &c) == 0) {
		is_int(tb_capture_cpu_stats(c, 0, NULL), -EINVAL, "tb_capture_cpu_stats(c, 0, NULL)");
		is_int(tb_capture_cpu_stats(c, -1, &st), -ENOENT, "tb_capture_cpu_stats of CPU -1");
		is_int(tb_capture_next_page(c, 0, NULL), -EINVAL, "tb_capture_next_page(c, 0, NULL)");
		is_int(tb_capture_next_page(c, -5, &page), 0, "tb_capture_next_page of CPU -5: none");
		is_int(tb_capture_resume(c), -ESPIPE, "tb_capture_resume of a capture directory: -ESPIPE");
		is_int(tb_capture_next_page(c, 1 << 20, &page), 0, "tb_capture_next_page of CPU 2^20: none");
		is_int(tb_report_write(c, NULL, NULL, NULL), -EINVAL, "tb_report_write(c, NULL)");
		tb_capture_problem(c, NULL, 0, "a report without a file");
		tb_capture_problem(c, "f", 0, NULL);
		is_int(tb_capture_problems(c), 1, "tb_capture_problem: NULL file taken as \"\", NULL format ignored");
		tb_capture_close(c);
	} else {
		ok(0, "cap-e opens");
	}
	if (null)
		fclose(null);
}

int main(void)
{
	check_ring_setup();
	check_ring_calls();
	check_page_codec();
	check_schema();
	check_capture();
	return done_testing();
}
