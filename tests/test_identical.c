/*
 * `tracebuf report` of the bundled captures against the kernel's own
 * `trace` text of them, line by line (tests/lib/identical.h: pairing,
 * masking rules, tables).
 *
 * tests/data/kernel/cap-f-many-systems was made by `tracebuf capture
 * --with-trace --no-hash-ptr` with syscalls, sched, irq, timer, workqueue,
 * block, ext4, writeback, kmem, net, sock, skb, tcp, signal and markers
 * enabled (tests/data/kernel/README.md).  At least 99.5 % of the lines must
 * be identical.  It was made before captures kept jiffies, so the writeback
 * events' age= must print as '?' (the jiffies-age rule).
 *
 * tests/data/kernel/cap-h-jiffies holds writeback and jbd2 events, whose
 * text depends on the kernel's jiffies and HZ, with the jiffies of its
 * trace.txt kept: every line must be identical, age= by the window rule.
 *
 * TB_IDENTICAL_DIR=DIR compares another capture directory that holds a
 * trace.txt instead (scripts/live-compare.sh does); TB_DIFF_LIMIT=N prints
 * only the first N differing pairs.
 */
#include <stdlib.h>

#include "lib/identical.h"
#include "lib/tap.h"

#define CAP_F	    "tests/data/kernel/cap-f-many-systems"
#define CAP_H	    "tests/data/kernel/cap-h-jiffies"
#define MIN_PERCENT 99.5

int main(void)
{
	const char *dir = getenv("TB_IDENTICAL_DIR");
	struct identical id;

	if (dir) {
		identical_check_capture(dir, MIN_PERCENT, &id);
		identical_free(&id);
		return done_testing();
	}
	identical_check_capture(CAP_F, MIN_PERCENT, &id);
	identical_check_writeback(&id, false);
	identical_free(&id);

	identical_check_capture(CAP_H, 100.0, &id);
	identical_check_writeback(&id, true);
	ok(identical_system_lines(&id, "jbd2") > 0 && identical_system_same(&id, "jbd2") == identical_system_lines(&id, "jbd2"),
	   "jbd2 (jiffies_to_msecs with HZ %" PRIu64 "): %zu of %zu lines identical", id.jw.hz,
	   identical_system_same(&id, "jbd2"), identical_system_lines(&id, "jbd2"));
	identical_free(&id);
	return done_testing();
}
