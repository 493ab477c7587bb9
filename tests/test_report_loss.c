/*
 * LOST lines with numbers: a sub-buffer whose lost flag has no room for the
 * count gets it from the CPU's stats file when the numbers allow it, a sound
 * lower bound when they allow only that, and the count-less line otherwise
 * (the rule: docs/man/report.roff, report.c's derive_count).
 *
 * The oracle is the kernel's capture cap-e e3: 1000 markers into a 4 KiB
 * overwrite buffer, stats "overrun: 816", "read events: 0", and a first
 * sub-buffer of 102 records that fill its 4080 bytes, so its commit word is
 * 0x...80000ff0 (lost, no count).  trace_pipe would have printed
 * "CPU:0 [LOST 816 EVENTS]".  The variations edit one number of that
 * capture (a commit word, a stats line) and check what the rule promises.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/capdir.h"
#include "lib/lines.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"

#define E "tests/data/kernel/cap-e-partial-and-padding/"
#define PAGE 4096
#define E3_PAGE1_LEN 0xcd0u /* 82 records of 40 bytes */
#define E1_PAGE0_LEN 0xfccu /* 112 records of 36 bytes + end padding */

static const char *const links[][2] = {
	{"header_page", "header_page"}, {"formats", "formats"}, {"trace_clock", "trace_clock"}};
#define NLINKS (sizeof(links) / sizeof(links[0]))

/* The LOST lines of a report, and its totals. */
struct outcome {
	int rc;
	struct lines lost;
	size_t events;
	struct tb_report_totals t;
};

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v)); /* the captures and this machine are little endian */
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len)
		diag("cannot write %s", path);
	if (f)
		fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* Report a capture made of raw (len bytes) and stats (NULL: no stats file). */
static struct outcome report_of(const char *src, const uint8_t *raw, size_t len, const char *stats)
{
	char dir[] = "/tmp/tb-test-loss-XXXXXX";
	struct outcome o = {.rc = -1};
	struct tb_capture *c;
	struct lines all;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f;

	if (capdir_make(dir, src, links, NLINKS) < 0)
		return o;
	write_file(dir, "cpu0.raw", raw, len);
	if (stats)
		write_file(dir, "cpu0.stats", stats, strlen(stats));
	f = open_memstream(&text, &tlen);
	o.rc = tb_capture_open(dir, NULL, &c);
	if (o.rc == 0) {
		o.rc = tb_report_write(c, f, NULL, &o.t);
		tb_capture_close(c);
	}
	fclose(f);
	split_lines(text, &all);
	o.lost.n = 0;
	o.lost.v = calloc(all.n + 1, sizeof(char *));
	for (size_t i = 0; i < all.n; i++) {
		if (!strncmp(all.v[i], "CPU:", 4))
			o.lost.v[o.lost.n++] = strdup(all.v[i]);
		else if (all.v[i][0] && all.v[i][0] != '#')
			o.events++;
	}
	free_lines(&all);
	remove_file(dir, "cpu0.raw");
	remove_file(dir, "cpu0.stats");
	capdir_remove(dir, links, NLINKS);
	return o;
}

static void free_outcome(struct outcome *o)
{
	for (size_t i = 0; i < o->lost.n; i++)
		free(o->lost.v[i]);
	free(o->lost.v);
}

/* The report's LOST lines are exactly want[0..n), and it printed every event, cleanly. */
static void expect_lost(const char *name, struct outcome o, size_t events, const char *const *want,
			size_t n)
{
	bool same = o.lost.n == n;

	for (size_t i = 0; same && i < n; i++)
		same = !strcmp(o.lost.v[i], want[i]);
	is_int(o.rc, 0, "%s: report written, nothing reported as damaged", name);
	is_int(o.events, events, "%s: all %zu events printed", name, events);
	if (!ok(same, "%s: LOST lines: %s%s", name, n ? want[0] : "(none)", n > 1 ? " ..." : ""))
		for (size_t i = 0; i < o.lost.n; i++)
			diag("got: %s", o.lost.v[i]);
	free_outcome(&o);
}

/* The real stats file with one edit (from = NULL: as it is). */
static char *stats_edit(const char *file, const char *from, const char *to)
{
	size_t len;
	char *text = tap_slurp(file, &len), *at, *out;

	if (!text || !from)
		return text;
	at = strstr(text, from);
	if (!at) {
		diag("'%s' is not in %s", from, file);
		return text;
	}
	out = malloc(len - strlen(from) + strlen(to) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	free(text);
	return out;
}

/* ------------------------------------------------------- e3 variations */

static uint8_t *e3_raw(size_t *len)
{
	return (uint8_t *)tap_slurp(E "e3.cpu0.raw", len);
}

static void check_e3(void)
{
	size_t len;
	uint8_t *raw = e3_raw(&len);
	char *stats = stats_edit(E "e3.cpu0.stats", NULL, NULL);
	static const char *const exact[] = {"CPU:0 [LOST 816 EVENTS]"};
	static const char *const none[] = {"CPU:0 [LOST EVENTS]"};
	static const char *const bound[] = {"CPU:0 [LOST at least 816 EVENTS]"};
	/* One stats line edited, and the LOST line the rule then allows. */
	const struct {
		const char *from, *to, *name;
		const char *const *want;
	} edits[] = {
		/* A consuming reader took counts before: the pages' losses start from an unknown point. */
		{"read events: 0", "read events: 5", "e3, stats 'read events: 5'", none},
		/* The pages hold fewer events than the stats counted: some are missing, maybe with counts. */
		{"entries: 184", "entries: 200", "e3, stats 'entries: 200' (pages missing)", none},
		/* More events than the stats counted: writers ran after the stats: a lower bound only. */
		{"entries: 184", "entries: 150", "e3, stats 'entries: 150' (written after)", bound},
		/* Events newer than the stats' "now": written after them, however many there are. */
		{"now ts:  1742.064963", "now ts:  1742.047500", "e3, stats 'now ts' before the last events", bound},
		/* Overrun no larger than what other pages stored: nothing is known. */
		{"overrun: 816", "overrun: 0", "e3, stats 'overrun: 0'", none},
	};
	struct outcome o;

	if (!raw || !stats || len != 2 * PAGE) {
		ok(0, "cap-e e3 is there");
		return;
	}
	o = report_of(E, raw, len, stats);
	is_int(o.t.lost_lines == 1 ? o.t.lost_events : 0, 816, "e3: totals count 816 lost events");
	expect_lost("e3 with its stats (overrun 816, read 0, 184 entries = the pages')", o, 184, exact, 1);
	expect_lost("e3 without a stats file", report_of(E, raw, len, NULL), 184, none, 1);

	free(stats);
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		stats = stats_edit(E "e3.cpu0.stats", edits[i].from, edits[i].to);
		expect_lost(edits[i].name, report_of(E, raw, len, stats), 184, edits[i].want, 1);
		free(stats);
	}
	free(raw);
}

/* Two count-less flags: the first is at least the overrun, the second unknown. */
static void check_e3_two_gaps(void)
{
	size_t len;
	uint8_t *raw = e3_raw(&len);
	char *stats = stats_edit(E "e3.cpu0.stats", NULL, NULL);
	static const char *const want[] = {"CPU:0 [LOST at least 816 EVENTS]", "CPU:0 [LOST EVENTS]"};
	static const char *const stored[] = {"CPU:0 [LOST at least 816 EVENTS]", "CPU:0 [LOST 16 EVENTS]"};

	if (!raw || !stats || len != 2 * PAGE) {
		ok(0, "cap-e e3 is there");
		return;
	}
	put64(raw + PAGE + 8, (uint64_t)(int64_t)(int32_t)(E3_PAGE1_LEN | 0x80000000u));
	expect_lost("e3, page 1 flagged too (two count-less flags)", report_of(E, raw, len, stats), 184,
		    want, 2);

	/* A stored count after the flag: losses went on after the stats, so a bound only. */
	put64(raw + PAGE + 8, (uint64_t)(int64_t)(int32_t)(E3_PAGE1_LEN | 0xc0000000u));
	put64(raw + PAGE + 16 + E3_PAGE1_LEN, 16);
	expect_lost("e3, page 1 with a stored count of 16", report_of(E, raw, len, stats), 184, stored, 2);
	free(stats);
	free(raw);
}

/*
 * A stored count before the count-less flag is subtracted: e1's pages,
 * page 0 storing 100 and page 1 flagged without a count, with stats that
 * say 300 were overwritten and the pages hold all 149 events.
 */
static void check_stored_before(void)
{
	size_t len;
	uint8_t *raw = (uint8_t *)tap_slurp(E "e1.cpu0.raw", &len);
	char *stats = stats_edit(E "e1.cpu0.stats", "entries: 150\noverrun: 0", "entries: 149\noverrun: 300");
	static const char *const want[] = {"CPU:0 [LOST 100 EVENTS]", "CPU:0 [LOST 200 EVENTS]"};
	static const char *const none[] = {"CPU:0 [LOST 100 EVENTS]", "CPU:0 [LOST EVENTS]"};

	if (!raw || !stats || len != 2 * PAGE) {
		ok(0, "cap-e e1 is there");
		return;
	}
	put64(raw + 8, (uint64_t)(int64_t)(int32_t)(E1_PAGE0_LEN | 0xc0000000u));
	put64(raw + 16 + E1_PAGE0_LEN, 100);
	put64(raw + PAGE + 8, (uint64_t)(int64_t)(int32_t)(0x534u | 0x80000000u));
	expect_lost("e1, 100 stored then a count-less flag, overrun 300", report_of(E, raw, len, stats),
		    149, want, 2);
	free(stats);
	stats = stats_edit(E "e1.cpu0.stats", "entries: 150", "entries: 149");
	expect_lost("e1, 100 stored then a count-less flag, overrun 0", report_of(E, raw, len, stats),
		    149, none, 2);
	free(stats);
	free(raw);
}

/* The CLI prints the exact line for e3 and exits 0. */
static void check_cli(void)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char cmd[512], buf[4096];
	bool said = false;
	int status;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/tracebuf report --prefix e3. " E " 2>&1", b);
	p = popen(cmd, "r");
	while (p && fgets(buf, sizeof(buf), p))
		said |= !strcmp(buf, "CPU:0 [LOST 816 EVENTS]\n");
	status = p ? pclose(p) : -1;
	ok(said && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "CLI: tracebuf report of e3 prints CPU:0 [LOST 816 EVENTS] and exits 0");
}

int main(void)
{
	check_e3();
	check_e3_two_gaps();
	check_stored_before();
	check_cli();
	return done_testing();
}
