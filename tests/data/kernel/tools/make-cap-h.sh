#!/bin/sh
# make-cap-h.sh - how cap-h-jiffies was made.  As root, from the repository
# root, after `make all`:
#
#   sh tests/data/kernel/tools/make-cap-h.sh [OUT]
#
# The events whose text depends on the kernel's clock tick: writeback's
# writeback_single_inode(_start) print age=(jiffies - dirtied_when) / HZ with
# the jiffies of the moment the `trace` file is read, and jbd2's
# jbd2_run_stats and jbd2_checkpoint_stats print jiffies_to_msecs() of their
# fields.  jbd2 needs a journal, so the workload writes to a fresh 32 MiB
# ext4 image mounted on a loop device (removed afterwards): three files a
# little over a second apart, then sync, so that the inodes written back
# have different ages and a transaction commits.  writeback and jbd2 are
# traced machine-wide (their events run in kernel threads), so the capture
# also holds other writers' writeback.  `tracebuf capture --with-trace`
# saves trace.txt, and jiffies right before and after reading it (meta.txt)
# and HZ and jiffies in the constants file.  OUT must not exist (default:
# the bundled directory).
set -eu
OUT=${1:-tests/data/kernel/cap-h-jiffies}
B=${TB_BUILD:-build}
W=$(mktemp -d /tmp/tb-cap-h-XXXXXX)
trap 'umount "$W/mnt" 2>/dev/null; rm -rf "$W"' EXIT
dd if=/dev/zero of="$W/img" bs=1M count=32 status=none
mkfs.ext4 -q -F "$W/img"
mkdir "$W/mnt"
mount -o loop "$W/img" "$W/mnt"
# One line: meta.txt keeps the command as it is given.
"$B/tracebuf" capture -e jbd2,writeback -b 2048 --no-hash-ptr --with-trace --kallsyms used -o "$OUT" \
	-- sh -c "cd '$W/mnt'; for i in 1 2 3; do dd if=/dev/urandom of=f\$i bs=64k count=4 status=none; sleep 1.2; done; sync; sleep 0.3; rm f1 f2 f3; sync"
