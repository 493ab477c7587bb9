#!/bin/sh
# make-cap-f.sh - how cap-f-many-systems was made.  As root, from the
# repository root, after `make all tests`:
#
#   sh tests/data/kernel/tools/make-cap-f.sh [OUT]
#
# A private instance with many systems enabled traces the workload of
# tests/test_live_identical.c (file writes with fsync, a loopback TCP
# connection, a few processes, timers, markers); set_event_pid limits the
# events to the workload and its children, the idle tasks (pid 0) and the
# kernel threads, because the other users of a shared machine would
# otherwise flood the capture (markers are never filtered).  Then
# `tracebuf capture INSTANCE` saves it, trace.txt and the used kallsyms
# symbols included.  OUT must not exist (default: the bundled directory).
set -eu
OUT=${1:-tests/data/kernel/cap-f-many-systems}
B=${TB_BUILD:-build}
T=/sys/kernel/tracing
I=$T/instances/tb-cap-f-$$
W=$(mktemp -d /tmp/tb-cap-f-XXXXXX)
trap 'rmdir $I 2>/dev/null; rm -rf "$W"' EXIT
mkdir $I
echo 0 > $I/tracing_on
echo 4096 > $I/buffer_size_kb
echo 0 > $I/options/hash-ptr
echo 1 > $I/options/event-fork
echo 0 > $I/set_event_pid
for p in $(ps -e -o pid=,ppid= | awk '$1 == 2 || $2 == 2 {print $1}'); do echo $p >> $I/set_event_pid; done
fs=$(findmnt -no FSTYPE -T "$W")
for s in syscalls sched irq timer workqueue block writeback kmem net sock skb tcp signal $fs; do
	echo 1 > $I/events/$s/enable
done
sh -c "echo \$\$ >> $I/set_event_pid; echo 1 > $I/tracing_on;
       TRACEBUF_INSTANCE=$I TB_WORKDIR=$W exec $B/tests/test_live_identical --workload"
echo 0 > $I/tracing_on
"$B/tracebuf" capture --with-trace --kallsyms used -o "$OUT" $I
