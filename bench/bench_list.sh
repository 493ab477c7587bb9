#!/bin/sh
# bench_list - `tracebuf list -c` (records per event of a trace.dat) beside
# `trace-cmd report` piped into a counter, on the same file.
#
# The file is recorded with `tracebuf record -a --kernel` (every task: sched, irq, timer and
# raw_syscalls of a workload of processes and syscalls, in a private
# instance; never the top-level buffer), so the recording path is measured at
# scale too: what it lost is printed.  Both sides count the records of each
# event; the counts must be equal, or the comparison means nothing.  Each
# side runs three times, alternating; the fastest run counts, because other
# load only ever slows a run down.
#
# Usage: bench_list.sh [BUILD_DIR]   (root, tracefs, trace-cmd; else skipped)
B=${1:-build}
TB="$B/tracebuf"
W=$(mktemp -d /tmp/tb-bench-list.XXXXXX)

skip() {
	echo "bench_list: skipped: $1"
	rm -rf "$W"
	exit 0
}
[ -x "$TB" ] || skip "$TB not built"
command -v trace-cmd >/dev/null 2>&1 || skip "trace-cmd not installed"
[ "$(id -u)" = 0 ] || skip "not root"
[ -d /sys/kernel/tracing/instances ] || skip "no tracefs"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

secs=${TB_BENCH_SECONDS:-3}
"$TB" record -a --kernel sched,irq,timer,raw_syscalls --kernel-kb 40960 -o "$W/k.dat" -- \
	sh -c "end=\$((\$(date +%s) + $secs)); while [ \$(date +%s) -lt \$end ]; do ls -la /usr/lib > /dev/null; sleep 0.001; done" \
	2> "$W/record.err" || { cat "$W/record.err"; skip "record failed"; }
grep 'kernel:' "$W/record.err" | sed 's/^/bench_list: /'

now_ns() { date +%s%N; }
best_tb=0 best_tc=0
for i in 1 2 3; do
	t0=$(now_ns); "$TB" list -c "$W/k.dat" > "$W/tb.txt"; t1=$(now_ns)
	d=$((t1 - t0)); { [ $best_tb = 0 ] || [ $d -lt $best_tb ]; } && best_tb=$d
	t0=$(now_ns)
	trace-cmd report "$W/k.dat" 2>/dev/null |
		awk '{for (i = 1; i < NF; i++) if ($i ~ /^(\[[0-9]+\])?[0-9]+(\.[0-9]+)?:$/) {e = $(i+1); sub(/:$/, "", e); c[e]++; break}}
		     END {for (e in c) print c[e], e}' > "$W/tc.txt"
	t1=$(now_ns)
	d=$((t1 - t0)); { [ $best_tc = 0 ] || [ $d -lt $best_tc ]; } && best_tc=$d
done
sed 's/ [^:]*:/ /' "$W/tb.txt" | LC_ALL=C sort -k2 > "$W/tb.sorted"
LC_ALL=C sort -k2 "$W/tc.txt" > "$W/tc.sorted"
if ! cmp -s "$W/tb.sorted" "$W/tc.sorted"; then
	echo "bench_list: the counts differ; no figures:"
	diff "$W/tb.sorted" "$W/tc.sorted" | head -20
	exit 1
fi
events=$(awk '{n += $1} END {print n}' "$W/tb.sorted")
awk -v tb=$best_tb -v tc=$best_tc -v n=$events -v json="$B/bench/results-list.json" 'BEGIN {
	printf "bench_list: %d events of %s\n", n, "sched, irq, timer, raw_syscalls"
	printf "  tracebuf list -c            %8.1f ms  %6.1f M events/s\n", tb / 1e6, n / (tb / 1e9) / 1e6
	printf "  trace-cmd report | awk      %8.1f ms  %6.1f M events/s\n", tc / 1e6, n / (tc / 1e9) / 1e6
	printf "  ratio                       %8.1fx\n", tc / tb
	printf "[\n  {\"case\": \"list -c (records per event)\", \"threads\": 1, \"tracebuf_ns\": %.1f, \"peer\": \"trace-cmd report | awk\", \"peer_ns\": %.1f, \"ratio\": %.2f, \"events\": %d}\n]\n", tb / n, tc / n, tc / tb, n > json
}'
