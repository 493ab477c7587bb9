/*
 * comms.c, the pid -> comm table behind every `trace` line's first column:
 * the column it makes by hand must be what printf's "%16.*s-%-7d" makes
 * (the kernel's format; libc is the oracle), for short, 16-byte and long
 * names and every width of pid; and names stay right across the table's
 * growth and its many name chunks.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decode/comms.h"
#include "lib/tap.h"

static void test_columns(void)
{
	static const int32_t pids[] = {1, 7, 42, 999, 1234567, 12345678, 4194304, 2147483647, -1, -2147483647 - 1};
	static const char name[] = "kworker/u16:3-events_unbound";
	struct comms t = {0};
	size_t bad = 0, tried = 0;

	for (size_t p = 0; p < sizeof(pids) / sizeof(pids[0]); p++) {
		for (size_t len = 0; len < sizeof(name); len++) {
			char want[128];
			size_t got_len;
			const char *got;
			comms_free(&t);
			if (comms_add(&t, pids[p], name, len) < 0)
				break;
			snprintf(want, sizeof(want), "%16.*s-%-7d", (int)len, name, (int)pids[p]);
			got = comms_column(&t, pids[p], &got_len);
			tried++;
			if (!got || got_len != strlen(want) || strcmp(got, want)) {
				if (bad++ < 3)
					diag("pid %d name '%.*s': got '%s', want '%s'", (int)pids[p], (int)len, name,
					     got ? got : "(null)", want);
			}
		}
	}
	comms_free(&t);
	ok(bad == 0 && tried == sizeof(pids) / sizeof(pids[0]) * sizeof(name),
	   "%zu columns equal printf's \"%%16.*s-%%-7d\"", tried);
}

static void test_many(void)
{
	struct comms t = {0};
	size_t bad = 0, n = 70000;
	char name[32], want[64];

	ok(comms_reserve(&t, 100) == 0, "room reserved");
	for (size_t i = 1; i <= n; i++) {
		int len = snprintf(name, sizeof(name), "task-%zu", i * 7);
		if (comms_add(&t, (int32_t)i, name, (size_t)len) < 0)
			bad++;
	}
	/* The first name given for a pid wins. */
	comms_add(&t, 5, "other", 5);
	for (size_t i = 1; i <= n; i++) {
		size_t len, clen;
		const char *got = comms_lookup(&t, (int32_t)i, &len), *col = comms_column(&t, (int32_t)i, &clen);
		snprintf(name, sizeof(name), "task-%zu", i * 7);
		snprintf(want, sizeof(want), "%16s-%-7d", name, (int)i);
		if (len != strlen(name) || strcmp(got, name) || !col || strcmp(col, want))
			bad++;
	}
	ok(bad == 0 && t.used == n, "%zu pids added past many resizes and name chunks, each found with its first name",
	   n);
	size_t len;
	is_str(comms_lookup(&t, (int32_t)n + 1, &len), "<...>", "an unknown pid is <...>");
	is_str(comms_lookup(&t, 0, &len), "<idle>", "pid 0 is <idle>");
	comms_free(&t);
	ok(t.used == 0 && !t.slots && !t.names.chunk, "freed and empty");
}

int main(void)
{
	test_columns();
	test_many();
	return done_testing();
}
