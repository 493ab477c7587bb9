#!/bin/sh
# tracebuf convert -o FILE.json: the Chrome/Perfetto export of a kernel
# capture, a trace.dat and the demo's tracebuf ring parses as JSON, and its
# slices, calls, counters and instants agree with `tracebuf report` and the
# function graph of the same input, parsed on their own by
# tests/lib/chrome_check.py.
B=${TB_BUILD:-build}
T=$B/tracebuf
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 is not installed (it checks the JSON)"
	exit 0
fi
W=$(mktemp -d /tmp/tb-t-json-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM HUP
fail=0
n=1
run_check() { # KIND JSON REPORT [GRAPH]
	out=$(TAP_FROM=$n python3 tests/lib/chrome_check.py "$@") || fail=1
	echo "$out" | grep -v '^# next'
	n=$(echo "$out" | sed -n 's/^# next //p')
	[ -n "$n" ] || { echo "not ok 999 - chrome_check.py $1 did not finish"; fail=1; n=1000; }
}
ok() { if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; n=$((n + 1)); }

for cap in cap-a-small-noloss cap-f-many-systems; do
	C=tests/data/kernel/$cap
	"$T" convert "$C" -o "$W/$cap.json" 2>"$W/err"; ok $? "$cap converts"
	"$T" report "$C" > "$W/$cap.txt" 2>/dev/null
	run_check sched "$W/$cap.json" "$W/$cap.txt"
done

D=tests/data/trace-dat/sched-marker-v7-zstd.dat
"$T" convert "$D" -o "$W/dat.json" 2>"$W/err"; ok $? "a trace.dat (v7, zstd) converts"
"$T" report --like-kernel "$D" > "$W/dat.txt" 2>/dev/null
run_check sched "$W/dat.json" "$W/dat.txt"

"$B/examples/demo" "$W/demo" > /dev/null 2>&1; ok $? "the demo's ring saved"
"$T" convert "$W/demo" -o "$W/demo.json" 2>"$W/err"; ok $? "the demo's capture converts"
"$T" report --no-graph "$W/demo" > "$W/demo.txt" 2>/dev/null
"$T" report --graph "$W/demo" > "$W/demo.graph" 2>/dev/null
run_check demo "$W/demo.json" "$W/demo.txt" "$W/demo.graph"

"$T" convert "$W/nothing-here" -o "$W/x.json" 2>"$W/err"; rc=$?
[ $rc = 3 ] && grep -q "nothing-here" "$W/err"; ok $? "a missing input: exit 3, named ($(head -c 80 "$W/err"))"
echo "1..$((n - 1))"
exit $fail
