#!/bin/sh
# bench_usdt - what one hit of a tracebuf tracepoint's USDT probe costs with
# bpftrace attached and counting it (usdt:...:usdt_t:hit { @ = count(); }),
# beside what tb_write costs the same event when tracebuf records it
# (issue 26: the goal is bpftrace's per hit >= 50x tracebuf's).
#
# tests/usdt/usdt_app fires the event N times with tracebuf's switch off and
# N times with it on (ns per hit, its loop included): first alone, then with
# bpftrace attached (it waits for the kernel's count in the semaphore).
# bpftrace's cost per hit = the "off" figure attached - the "off" figure
# alone (the disabled fast path); three runs each, the fastest counts.  The
# hits bpftrace counted must be every hit fired, or the figure means nothing.
#
# Usage: bench_usdt.sh [BUILD_DIR]   (root, bpftrace; else skipped)
B=${1:-build}
. "$(dirname "$0")/../scripts/stop_bpftrace.sh"
APP=$(cd "$B/tests/usdt" 2>/dev/null && pwd)/usdt_app
N=${TB_BENCH_USDT_HITS:-200000}
W=$(mktemp -d /tmp/tb-bench-usdt.XXXXXX)
bp=

skip() {
	echo "bench_usdt: skipped: $1"
	rm -rf "$W"
	exit 0
}
[ -x "$APP" ] || skip "$B/tests/usdt/usdt_app not built (make tests)"
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace not installed"
[ "$(id -u)" = 0 ] || skip "not root"
trap 'rm -rf "$W"' EXIT
trap '[ -n "$bp" ] && kill "$bp" 2>/dev/null; exit 130' INT
trap '[ -n "$bp" ] && kill "$bp" 2>/dev/null; exit 143' TERM

# The smallest value of KEY over the runs in FILE.
best() { awk -v k="$1" '$1 == k && (m == "" || $2 < m) {m = $2} END {print m}' "$2"; }

for i in 1 2 3; do "$APP" bench "$N"; done > "$W/alone" || skip "usdt_app bench failed"
bpftrace -e "usdt:$APP:usdt_t:hit { @hits = count(); }" > "$W/bt.out" 2> "$W/bt.err" &
bp=$!
for i in 1 2 3; do timeout 120 "$APP" bench "$N" wait; done > "$W/attached"
stop_bpftrace "$bp"; bp=
[ "$(grep -c '^usdt_attached 1' "$W/attached")" = 3 ] || skip "bpftrace did not attach: $(grep -v RLIMIT "$W/bt.err" | head -1)"
fired=$((3 * 2 * (N + N / 10 + 1)))
counted=$(sed -n 's/^@hits: //p' "$W/bt.out")
[ "$counted" = "$fired" ] || { echo "bench_usdt: bpftrace counted $counted hits of $fired fired"; exit 1; }

off=$(best off_ns "$W/alone") ring=$(best ring_ns "$W/alone") attached=$(best off_ns "$W/attached")
awk -v off="$off" -v ring="$ring" -v att="$attached" -v n="$N" -v json="$B/bench/results-usdt.json" 'BEGIN {
	hit = att - off
	printf "bench_usdt: %d hits of usdt_t:hit (7 fields), fastest of 3 runs\n", n
	printf "  disabled (nobody attached)         %8.2f ns\n", off
	printf "  tracebuf records it (tb_write)     %8.2f ns\n", ring
	printf "  bpftrace attached, counting        %8.2f ns   %.0fx tb_write (goal: >= 50x)\n", hit, hit / ring
	printf "[\n  {\"case\": \"usdt_t:hit recorded by tracebuf\", \"threads\": 1, \"tracebuf_ns\": %.3f, " \
	       "\"peer\": \"bpftrace count() on its USDT probe\", \"peer_ns\": %.3f, \"ratio\": %.4f}\n]\n",
	       ring, hit, hit / ring > json
}'
