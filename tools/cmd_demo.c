// SPDX-License-Identifier: MIT
/*
 * tracebuf demo [--kb KB] [--events N] [--no-overwrite]
 *
 * The kernel's lost-events example, on a tracebuf ring: one writer fills a
 * small buffer (8 KiB per CPU) far past its size.  Then every way of looking
 * at it speaks: the sizing truth, the stats with the arithmetic the kernel
 * leaves out, the non-consuming iterator (where the kernel's `trace` file
 * would print no LOST line at all), a raw page read, and a consuming read.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "cli_opts.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

#define SHOW 3 /* event lines printed at each end of a listing */

static void print_event(const struct tb_read_event *ev, int pid)
{
	uint64_t us = (ev->ns + 500) / 1000;

	if (ev->kind == TB_READ_LOST) {
		printf("CPU:%u [LOST %llu EVENTS]\n", ev->cpu, (unsigned long long)ev->lost);
		return;
	}
	printf("%16s-%-7d [%03u] %5llu.%06llu: demo: %.*s\n", "tracebuf-demo", pid, ev->cpu,
	       (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000), (int)ev->len,
	       (const char *)ev->data);
}

/* Print LOST lines always, and the first and last SHOW events. */
struct listing {
	uint64_t events, lost, lost_lines;
	struct tb_read_event tail[SHOW];
	char tail_text[SHOW][64]; /* the held-back events' text: their data goes away */
	int pid;
};

static void listing_add(struct listing *l, const struct tb_read_event *ev)
{
	if (ev->kind == TB_READ_LOST) {
		l->lost += ev->lost;
		l->lost_lines++;
		print_event(ev, l->pid);
		return;
	}
	if (l->events < SHOW)
		print_event(ev, l->pid);
	else {
		size_t n = ev->len < 63 ? ev->len : 63;
		l->tail[l->events % SHOW] = *ev;
		memcpy(l->tail_text[l->events % SHOW], ev->data, n);
		l->tail_text[l->events % SHOW][n] = 0;
	}
	l->events++;
}

static void listing_end(struct listing *l)
{
	uint64_t shown = l->events < SHOW ? l->events : SHOW;
	if (l->events > 2 * SHOW)
		printf("  ... %llu more events ...\n", (unsigned long long)(l->events - 2 * SHOW));
	for (uint64_t i = l->events > 2 * SHOW ? l->events - SHOW : shown; i < l->events; i++) {
		struct tb_read_event ev = l->tail[i % SHOW];
		ev.data = l->tail_text[i % SHOW];
		print_event(&ev, l->pid);
	}
}

static int pin_cpu0(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void show_iterator(struct tb_ring *ring, int pid)
{
	struct listing l = {.pid = pid};
	struct tb_iter *it;
	struct tb_read_event ev;

	printf("\n== non-consuming iterator (the kernel's `trace` file prints no LOST line here)\n");
	if (tb_iter_new(ring, &it) < 0)
		return;
	while (tb_iter_next(it, &ev) == 1)
		listing_add(&l, &ev);
	tb_iter_free(it);
	listing_end(&l);
	printf("iterator: %llu events shown, %llu reported lost in %llu LOST line(s)\n",
	       (unsigned long long)l.events, (unsigned long long)l.lost, (unsigned long long)l.lost_lines);
}

static void show_pages(struct tb_ring *ring)
{
	size_t size = tb_ring_subbuf_size(ring);
	uint8_t *page = malloc(size);
	struct tb_page_cursor c;
	unsigned index = 0;

	printf("\n== raw page reads (trace_pipe_raw's format), after the same writes again\n");
	while (page && tb_read_page(ring, 0, page, size) > 0 && tb_page_cursor_init(&c, page, size) == 0) {
		const struct tb_page_header h = c.hdr;
		struct tb_record r;
		unsigned n = 0;
		while (tb_page_next_data(&c, &r) == 1)
			n++;
		printf("sub-buffer %u: commit word 0x%016llx: %4u data bytes, %3u events", index++,
		       (unsigned long long)h.commit_raw, h.data_len, n);
		if (h.lost && h.lost_stored)
			printf(", lost flag + stored count %llu", (unsigned long long)h.lost_count);
		else if (h.lost)
			printf(", lost flag (no room for the count)");
		printf("\n");
	}
	free(page);
}

static void show_consume(struct tb_ring *ring, int pid)
{
	struct listing l = {.pid = pid};
	struct tb_read_event ev;

	printf("\n== consuming read (the kernel's trace_pipe)\n");
	while (tb_consume_merged(ring, &ev) == 1)
		listing_add(&l, &ev);
	listing_end(&l);
	printf("consume: %llu events read, %llu reported lost\n", (unsigned long long)l.events,
	       (unsigned long long)l.lost);
}

static void show_stats(struct tb_ring *ring, const char *when)
{
	struct tb_cpu_stats st;

	printf("\n== per_cpu/cpu0/stats %s\n", when);
	tb_stats_read(ring, 0, &st);
	tb_stats_print(stdout, ring, &st, 1);
}

static unsigned long write_events(struct tb_ring *ring, unsigned long events)
{
	unsigned long refused = 0;

	for (unsigned long i = 0; i < events; i++) {
		char text[24] = {0};
		snprintf(text, sizeof(text), "tb demo %06lu", i % 1000000);
		refused += tb_write(ring, text, sizeof(text)) != 0;
	}
	return refused;
}

enum { O_SIZE, O_WRITES, O_NO_OVERWRITE, O_N };
static const struct cli_opt opts[] = {
    [O_SIZE] = {"buffer-size", 'b', CLI_SIZE, "KB", "ring size per CPU in KiB (default 8)", "-b", .min = 1,
		.max = 1 << 20, .old = "kb"},
    [O_WRITES] = {"writes", 'n', CLI_INT, "N", "events to write (default 5000)", .min = 0, .max = 1000000000,
		  .old = "events"},
    [O_NO_OVERWRITE] = {"no-overwrite", 0, CLI_FLAG, NULL, "refuse the newest events instead of dropping the oldest"},
};

static int run(int argc, char **argv);

const struct cli_command cli_demo = {
    "demo", "fill a small ring far past its size and show every read path", "[OPTIONS]",
    "Fill a small tracebuf ring far past its size, then show every way of reading it: the sizing, the stats "
    "with written, lost and the time window, the non-consuming iterator's LOST line, a raw page and a "
    "consuming read.",
    opts, O_N, .run = run,
};

static int run(int argc, char **argv)
{
	unsigned long kb = 8, events = 5000;
	int overwrite = 1, pid = (int)getpid();
	struct tb_ring_opts o;
	struct tb_ring *ring;
	struct tb_sizing s;
	unsigned long refused = 0;
	struct cli_args a;
	int rc = cli_parse(&cli_demo, argc, argv, &a);

	if (rc != CLI_PARSED)
		return rc;
	if (cli_given(&a, O_SIZE))
		kb = (unsigned long)cli_num(&a, O_SIZE);
	if (cli_given(&a, O_WRITES))
		events = (unsigned long)cli_num(&a, O_WRITES);
	overwrite = !cli_given(&a, O_NO_OVERWRITE);
	rc = a.noperands ? cli_usage_error(&cli_demo, "no operand is taken ('%s')", a.operands[0]) : 0;
	cli_free(&a);
	if (rc)
		return rc;
	if (tb_sizing_compute(kb, 4, &s) < 0) {
		fprintf(stderr, "tracebuf demo: bad size %lu KiB\n", kb);
		return 2;
	}
	pin_cpu0();
	tb_ring_opts_default(&o);
	o.size_kb = kb;
	o.overwrite = overwrite;
	if (tb_ring_new(&ring, &o) < 0) {
		fprintf(stderr, "tracebuf demo: cannot create the ring\n");
		return 1;
	}
	printf("== sizing: buffer_size_kb %lu -> %u sub-buffers of %u bytes (%u for records), "
	       "reads back %llu, %llu bytes allocated per CPU with the reader page\n",
	       kb, s.subbufs_per_cpu, s.subbuf_bytes, s.data_bytes, (unsigned long long)s.readback_kb,
	       (unsigned long long)s.allocated_bytes_per_cpu);
	printf("== writing %lu events of 24 bytes from CPU 0, %s mode (publish: %s, clock: %s)\n", events,
	       overwrite ? "overwrite" : "producer/consumer", tb_ring_uses_rseq(ring) ? "rseq" : "try-lock",
	       tb_clock_name(tb_ring_clock(ring)));
	refused = write_events(ring, events);
	if (refused)
		printf("   %lu writes were refused (each counted in the stats below)\n", refused);
	show_stats(ring, "after writing");
	show_iterator(ring, pid);
	show_consume(ring, pid);
	show_stats(ring, "after the consuming read");
	write_events(ring, events);
	show_pages(ring);
	tb_ring_free(ring);
	return 0;
}
