// SPDX-License-Identifier: MIT
/*
 * test_tp_filter - filters at the source (tb_events_set_filter): a
 * TB_EVENT fired with known arguments writes exactly the records whose
 * arguments satisfy the expression (the same condition, written in C here),
 * in order; the others are counted as filtered, never as lost; events
 * without a filter are untouched; COMM and common_pid see the writing
 * thread; bad expressions and names are refused with the kernel's
 * messages; "0" removes the filter.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/ring_sums.h"
#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/filter.h"
#include "tracebuf/reader.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(tpflt, req, TB_PROTO(int id, uint64_t bytes, const char *path, const char *who),
	 TB_FIELDS(tb_field(int, id, id), tb_field(uint64_t, bytes, bytes), tb_string(path, path),
		   tb_chars(who, 16, who)),
	 TB_PRINTK("id=%d bytes=%llu path=%s who=%s", REC->id, REC->bytes, __get_str(path), REC->who))
TB_EVENT(tpflt, tick, TB_PROTO(int n), TB_FIELDS(tb_field(int, n, n)), TB_PRINTK("n=%d", REC->n))

struct rec_req {
	struct tb_event_common common;
	int id;
	uint64_t bytes;
};

static const char *const paths[] = {"/api/v1", "/index", "/api", "/static/x.css", "/ap"};
static const char *const whos[] = {"alice", "bob", "carol"};

#define N 3000

static uint64_t bytes_of(int i)
{
	return (uint64_t)i * 2654435761u % 100000;
}

static bool want(int i)
{
	return (i > 1010 && (bytes_of(i) & 1)) || !strncmp(paths[i % 5], "/api/", 5) ||
	       (!strcmp(whos[i % 3], "carol") && i < 1100);
}

/*
 * The req records in the ring, consumed (at most limit records of any
 * kind): their ids into ids[], the tick records counted.  The limit is for
 * a ring that writers keep filling: draining it "until empty" would last as
 * long as they outpace the reader, which under TSan they can for minutes.
 */
static size_t drain_some(struct tb_ring *ring, int *ids, size_t max, size_t limit, size_t *ticks, int32_t *pid)
{
	struct tb_read_event ev;
	size_t n = 0;

	*ticks = 0;
	while (limit-- > 0 && tb_consume_merged(ring, &ev) == 1) {
		struct rec_req r;
		if (ev.kind != TB_READ_RECORD || ev.len < 8)
			continue;
		memcpy(&r, ev.data, ev.len < sizeof(r) ? ev.len : sizeof(r));
		if (r.common.common_type == tb_event_tpflt_tick.id)
			(*ticks)++;
		else if (r.common.common_type == tb_event_tpflt_req.id && n < max) {
			ids[n++] = r.id;
			*pid = r.common.common_pid;
		}
	}
	return n;
}

/* Every record in the ring, consumed (no writer runs meanwhile). */
static size_t drain(struct tb_ring *ring, int *ids, size_t max, size_t *ticks, int32_t *pid)
{
	return drain_some(ring, ids, max, SIZE_MAX, ticks, pid);
}

static void filtered_writes(struct tb_ring *ring)
{
	static int got[N], expect[N];
	struct tb_filter_error e = {0};
	size_t nexp = 0, ngot, ticks;
	struct ring_sums sums;
	int32_t pid = 0;
	int rc;

	rc = tb_events_set_filter("tpflt:req",
				  "id > 1010 && bytes & 1 || path ~ \"/api/*\" || (who == \"carol\" && id < 1100)", &e);
	if (!ok(rc == 0, "a filter on tpflt:req is set"))
		diag("%d: %s at %zu", rc, e.reason, e.pos);
	for (int i = 0; i < N; i++) {
		tb_trace(tpflt, req, i, bytes_of(i), paths[i % 5], whos[i % 3]);
		tb_trace(tpflt, tick, i);
		if (want(i))
			expect[nexp++] = i;
	}
	ngot = drain(ring, got, N, &ticks, &pid);
	sums = ring_sums(ring);
	ok(ngot == nexp && !memcmp(got, expect, nexp * sizeof(int)),
	   "the records written are exactly those the condition keeps, in order (%zu of %d)", ngot, N);
	is_int((long long)sums.filtered, (long long)(N - nexp), "the others are counted as filtered");
	is_int((long long)sums.lost, 0, "... and nothing as lost");
	is_int((long long)ticks, N, "an event without a filter writes every record");
	is_int(pid, (int32_t)gettid(), "common_pid is the writing thread");
}

static void comm_and_pid(struct tb_ring *ring)
{
	static int got[16];
	size_t ticks;
	int32_t pid;
	char expr[64];

	prctl(PR_SET_NAME, "tpf-main", 0, 0, 0);
	snprintf(expr, sizeof(expr), "COMM == \"tpf-main\" && common_pid == %d", (int)gettid());
	ok(tb_events_set_filter("tpflt:req", expr, NULL) == 0, "a COMM filter is set");
	for (int i = 0; i < 5; i++)
		tb_trace(tpflt, req, i, 0, "/", "x");
	prctl(PR_SET_NAME, "other", 0, 0, 0);
	for (int i = 0; i < 5; i++)
		tb_trace(tpflt, req, i, 0, "/", "x");
	is_int((long long)drain(ring, got, 16, &ticks, &pid), 5, "COMM is the writing thread's name");
	ok(tb_events_set_filter("tpflt:req", "0", NULL) == 0, "\"0\" removes the filter");
	for (int i = 0; i < 7; i++)
		tb_trace(tpflt, req, i, 0, "/", "x");
	is_int((long long)drain(ring, got, 16, &ticks, &pid), 7, "... and every record is written again");
}

/* Threads firing while the filter is replaced and removed: every record passed the filter then in force. */
static atomic_bool stop_firing;

/* Writers that fired a whole lap of ids 0..99: each lap has ids both filters keep. */
static atomic_int lapped;

static void *fire(void *arg)
{
	(void)arg;
	for (int i = 0; !atomic_load_explicit(&stop_firing, memory_order_relaxed); i++) {
		tb_trace(tpflt, req, i % 100, (uint64_t)i, "/api/x", "t");
		if (i == 99)
			atomic_fetch_add(&lapped, 1);
	}
	return NULL;
}

/* Both writers through their first lap (a generous bound: a busy machine may start them late). */
static bool writers_lapped(void)
{
	for (int ms = 0; ms < 60000 && atomic_load(&lapped) < 2; ms++)
		usleep(1000);
	return atomic_load(&lapped) == 2;
}

static void replaced_under_load(struct tb_ring *ring)
{
	static int got[1 << 16];
	pthread_t t[2];
	size_t ticks, n, bad = 0, read = 0;
	int32_t pid;
	bool all_set = tb_events_set_filter("tpflt:req", "id >= 90", NULL) == 0;

	drain(ring, got, sizeof(got) / sizeof(got[0]), &ticks, &pid);
	for (int k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, fire, NULL);
	/* each lap fired ids a filter in force keeps: records to read, whenever the scheduler ran the writers */
	all_set &= writers_lapped();
	for (int round = 0; round < 200; round++) {
		all_set &= tb_events_set_filter("tpflt:req", round % 2 ? "id < 10" : "id >= 90", NULL) == 0;
		/* a round reads what it can of the two writers' stream: no round waits for them to pause */
		n = drain_some(ring, got, sizeof(got) / sizeof(got[0]), 512, &ticks, &pid);
		read += n;
		for (size_t k = 0; k < n; k++)
			bad += got[k] >= 10 && got[k] < 90; /* neither filter keeps these */
	}
	atomic_store(&stop_firing, true);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	n = drain(ring, got, sizeof(got) / sizeof(got[0]), &ticks, &pid); /* what the last round left */
	read += n;
	for (size_t k = 0; k < n; k++)
		bad += got[k] >= 10 && got[k] < 90;
	tb_events_set_filter("tpflt:req", NULL, NULL);
	ok(all_set && bad == 0 && read > 0,
	   "filters replaced 200 times under two writing threads: no record either refused (%zu of %zu read)", bad, read);
}

/*
 * A descriptor of the layout before the filter pointer (TB_EVENT_ABI 1,
 * from a library built against an older tracepoint.h) is refused and
 * counted, and the registry writes nothing into it - neither a ring nor a
 * filter, which that layout has no room for.  (Its abi member sits where
 * it always did; only that is read.)
 */
static void older_abi_refused(void)
{
	static const struct tb_event_field fields[] = {{"int", "n", 8, 4, 0, 1, TB_EVF_SCALAR}, {0, 0, 0, 0, 0, 0, 0}};
	static struct tb_event_desc old = {.abi = 1, .size = 12, .system = "tpold", .name = "ev", .fields = fields,
					   .print_fmt = "\"n=%d\", REC->n", .file = __FILE__, .line = __LINE__};
	static struct tb_event_desc *const list[] = {&old};
	static const struct tb_object_sections sections = {list, list + 1, NULL, NULL, NULL, NULL, NULL};
	unsigned long problems = tb_events_problems();

	ok(TB_EVENT_ABI == 3, "the descriptor layout with a USDT gate is version 3");
	tb_registry_add_object(&sections);
	is_int((long long)(tb_events_problems() - problems), 1, "a version-1 descriptor is refused, and said so");
	is_int(tb_events_enable("tpold:ev", NULL, 0), -ENOENT, "... and its event does not exist");
	ok(old.ring == NULL && old.filter == NULL && old.id == 0 && old.gate.word == 0,
	   "... and nothing was written into it");
	tb_registry_remove_object(&sections);
}

static void refusals(void)
{
	struct tb_filter_error e = {0};

	is_int(tb_events_set_filter("tpflt:req", "size > 3", &e), -EINVAL, "a missing field is refused");
	ok(!strncmp(e.reason, "Field not found", 15) && e.pos == 0, "... with the kernel's message: %s", e.reason);
	is_int(tb_events_set_filter("tpflt:req", "path < \"x\"", &e), -EINVAL, "< on a string is refused");
	ok(!strncmp(e.reason, "Illegal operation for field type", 32) && e.pos == 7, "... %s at %zu", e.reason, e.pos);
	is_int(tb_events_set_filter("tpflt:nope", "n == 1", NULL), -ENOENT, "an unknown event: -ENOENT");
	is_int(tb_events_set_filter("tpflt", "n == 1", NULL), -EINVAL, "a name without a system: -EINVAL");
	is_int(tb_events_set_filter("ftrace:print", "ip == 1", NULL), -EOPNOTSUPP,
	       "the built-in events take no filter");
}

int main(void)
{
	struct tb_ring *ring;
	struct tb_ring_opts o = {.size_kb = 1024};

	if (tb_ring_new(&ring, &o) < 0)
		skip_all("no ring");
	tb_events_attach(ring);
	ok(tb_events_enable("tpflt:*", NULL, 0) == 2, "the test's events are enabled");
	refusals();
	older_abi_refused();
	filtered_writes(ring);
	comm_and_pid(ring);
	replaced_under_load(ring);
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return done_testing();
}
