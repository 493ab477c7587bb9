/*
 * tracebuf stats --svg on a ring whose state is known from its geometry:
 * one CPU, 8 KiB (3 sub-buffers of 4096 bytes: ceil(8192 / 4080)), 300
 * events of 100 bytes each.  A record is 4 + 100 bytes, so a sub-buffer
 * holds 39 (4056 of its 4080 data bytes); the ring keeps what fits and
 * overwrites the rest, and the picture must say so: 3 ring cells beside
 * the reader page, full cells at 4056/4080, the events the cells hold plus
 * those overwritten adding up to the 300 written, and the first cell's
 * LOST mark carrying that overwritten count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/describe.h"
#include "tracebuf/ring.h"
#include "tracebuf/ringsvg.h"
#include "tracebuf/schema.h"

#define WRITTEN 300
#define PAYLOAD 100
#define PER_PAGE 39 /* floor(4080 / (4 + 100)) */
#define ID 600

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int main(void)
{
	static const struct tb_evfield fields[] = {{"unsigned int", "seq", 8, 4, 0}};
	static const struct tb_evdesc desc = {"test", "filler", PAYLOAD, 1, fields, "\"seq=%u\", REC->seq"};
	struct tb_save_event events[] = {{&desc, ID}};
	struct tb_save_opts save = {.events = events, .nevents = 1};
	struct tb_ring_opts ro;
	struct tb_ring *ring;
	struct tb_problem err = {0};
	char dir[] = "/tmp/tb-ringsvg-XXXXXX", *svg = NULL, cmd[128];
	size_t len = 0;

	tb_ring_opts_default(&ro);
	ro.size_kb = 8;
	ro.ncpus = 1;
	ro.clock = TB_CLOCK_MONO;
	ro.no_rseq = 1;
	if (!ok(tb_ring_new(&ring, &ro) == 0 && mkdtemp(dir), "a ring of 8 KiB, one CPU"))
		return done_testing();
	for (uint32_t i = 0; i < WRITTEN; i++) {
		uint8_t rec[PAYLOAD] = {0};
		uint16_t id = ID;
		memcpy(rec, &id, 2);
		memcpy(rec + 8, &i, 4);
		tb_write(ring, rec, sizeof(rec));
	}
	ok(tb_save_ring(ring, dir, &save, &err) == 0, "saved (%s)", err.reason);
	tb_ring_free(ring);

	struct tb_capture *c;
	if (!ok(tb_capture_open(dir, NULL, &c) == 0, "the saved ring opens"))
		return done_testing();
	FILE *f = open_memstream(&svg, &len);
	struct tb_ringsvg_opts o = {.title = "test ring", .subbufs_per_cpu = 3};
	ok(tb_ringsvg_write(c, &o, f) == 0, "drawn");
	fclose(f);
	tb_capture_close(c);

	is_int(count(svg, "class=\"reader\""), 1, "one reader page");
	is_int(count(svg, "class=\"cell\"") + count(svg, "class=\"empty\""), 3, "three ring cells");
	size_t full = count(svg, ": 4056 of 4080 bytes (99.4%), 39 events");
	ok(full >= 1, "full cells hold 39 events in 4056 of 4080 bytes (%zu of them)", full);
	ok(strstr(svg, "height=\"69.59\" class=\"") != NULL, "a full cell is filled 70 * 4056 / 4080 = 69.59 px");
	/* Events the cells hold, from their titles, plus those overwritten: all that was written. */
	unsigned held = 0, n;
	for (const char *p = svg; (p = strstr(p, " bytes (")); p++)
		if (sscanf(strstr(p, "%), ") + 4, "%u events", &n) == 1)
			held += n;
	char want[64];
	snprintf(want, sizeof(want), "%u overwritten", WRITTEN - held);
	ok(held > 0 && held < WRITTEN && strstr(svg, want), "%u held + '%s' = %d written", held, want, WRITTEN);
	snprintf(want, sizeof(want), ">LOST %u<", WRITTEN - held);
	ok(strstr(svg, want) != NULL, "the head cell's mark: %s", want);
	snprintf(want, sizeof(want), "written %d = entries %u + overrun %u + read 0", WRITTEN, held, WRITTEN - held);
	ok(strstr(svg, want) != NULL, "the stats line: %s", want);
	ok(strstr(svg, "head (oldest)") && strstr(svg, "tail: commit page (newest)"), "head and tail marked");
	free(svg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
	return done_testing();
}
