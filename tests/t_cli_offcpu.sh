#!/bin/sh
# tracebuf offcpu and stats --svg from the command line: what a trace lacks
# is said with the flags that record it, and bad input gets a named error.
B=${TB_BUILD:-build}
T=$B/tracebuf
W=$(mktemp -d /tmp/tb-t-offcpu-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM HUP
n=0; fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

"$T" offcpu tests/data/kernel/cap-g-kernel-printers > "$W/out" 2> "$W/err"; rc=$?
[ $rc = 1 ] && grep -q "has no sched:sched_switch events" "$W/err" &&
	grep -q "tracebuf capture --offcpu -o DIR -- CMD ARGS" "$W/err" && [ ! -s "$W/out" ]
ok $? "no sched_switch: exit 1 (nothing measured), says to record with capture --offcpu ($(head -c 90 "$W/err"))"

"$T" offcpu tests/data/kernel/cap-a-small-noloss > "$W/out" 2> "$W/err"; rc=$?
[ $rc = 0 ] && grep -q "has no kernel stacks" "$W/err" && grep -q -- "--offcpu" "$W/err" && [ -s "$W/out" ]
ok $? "sched_switch without stacks: folded comms, and a warning naming --offcpu"
awk 'NF < 2 || $NF !~ /^[0-9]+$/ || $NF == 0 { bad = 1 } END { exit bad }' "$W/out"
ok $? "every folded line ends in a positive count of microseconds"

"$T" offcpu --blocked tests/data/kernel/cap-g-kernel-printers 2> "$W/err" > /dev/null; rc=$?
[ $rc = 1 ] && grep -q "sched_switch" "$W/err"
ok $? "--blocked on a trace without the events: exit 1 (nothing measured), named"

"$T" offcpu "$W/missing" 2> "$W/err" > /dev/null; rc=$?
[ $rc = 3 ] && grep -q "$W/missing" "$W/err"
ok $? "a missing input: exit 3, its name said"

"$T" offcpu --svg "$W/no/such/dir/x.svg" tests/data/kernel/cap-a-small-noloss 2> "$W/err" > /dev/null; rc=$?
[ $rc = 4 ] && grep -q "x.svg" "$W/err"
ok $? "an SVG that cannot be written: exit 4, named"

"$T" stats --svg "$W/ring.svg" "$W/missing" 2> "$W/err"; rc=$?
[ $rc = 3 ] && grep -q "$W/missing" "$W/err"
ok $? "stats --svg of a missing capture: exit 3, named"

"$T" stats --svg "$W/ring.svg" tests/data/kernel/cap-b-overrun 2> "$W/err"; rc=$?
[ $rc = 0 ] && grep -q "3 sub-buffers read of 3 in the ring" "$W/ring.svg" && grep -q "LOST 4504" "$W/ring.svg"
ok $? "stats --svg of cap-b: 3 of 3 sub-buffers (8 KiB: reads back 11), its head page marked LOST 4504, the overrun the kernel's own cpu0.stats says"
echo "1..$n"
exit $fail
