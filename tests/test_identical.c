/*
 * `tracebuf report` of the bundled many-systems capture against the
 * kernel's own `trace` text of it, line by line (tests/lib/identical.h:
 * pairing, masking rules, tables).
 *
 * tests/data/kernel/cap-f-many-systems was made by `tracebuf capture
 * --with-trace --no-hash-ptr` with syscalls, sched, irq, timer, workqueue,
 * block, ext4, writeback, kmem, net, sock, skb, tcp, signal and markers
 * enabled (tests/data/kernel/README.md).  At least 99.5 % of the lines must
 * be identical.  TB_IDENTICAL_DIR=DIR compares another capture directory
 * that holds a trace.txt instead (scripts/live-compare.sh does);
 * TB_DIFF_LIMIT=N prints only the first N differing pairs.
 */
#include <stdlib.h>

#include "lib/identical.h"
#include "lib/tap.h"

#define BUNDLED	    "tests/data/kernel/cap-f-many-systems"
#define MIN_PERCENT 99.5

int main(void)
{
	const char *dir = getenv("TB_IDENTICAL_DIR") ? getenv("TB_IDENTICAL_DIR") : BUNDLED;
	struct identical id;

	identical_check_capture(dir, MIN_PERCENT, &id);
	identical_free(&id);
	return done_testing();
}
