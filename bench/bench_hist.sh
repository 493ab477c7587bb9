#!/bin/sh
# bench_hist - `tracebuf hist` beside `trace-cmd report | awk` counting the
# same keys, on the same trace.dat of a few million real events.
#
# Records raw_syscalls (sys_enter and sys_exit) of a dd making one-byte
# reads and writes, in a private tracefs instance (never the top-level
# buffer), saves its raw pages with `tracebuf capture` and builds a trace.dat
# of the very same pages with `trace-cmd restore`.  Then the histogram of
# sys_enter by (common_pid, id) is made both ways, alternating, the fastest
# of several runs counting (other load only slows a run down).  Both must
# count the same number of sys_enter events, or the comparison means
# nothing.  Figures: records walked per second (every record of the file is
# looked at, sys_exit included) and the ratio against the peer.
#
# Usage: bench_hist.sh [BUILD_DIR]   (root, tracefs, trace-cmd; else skipped)
# TB_BENCH_HIST_CALLS=N sets dd's count (default 1000000: 4 M events);
# TB_BENCH_KEEP=1 keeps the trace.dat (its path is printed).
B=${1:-build}
CALLS=${TB_BENCH_HIST_CALLS:-1000000}
NAME=bench_hist
. "$(dirname "$0")/lib_instance.sh"
bench_instance
[ -d "$TOP/events/raw_syscalls" ] || skip "no raw_syscalls events"
# -- record: room for every event (no overwrite), dd's calls and whatever else runs
kb=$((CALLS / 5 + 4096))
echo 0 > "$T/tracing_on"
echo 0 > "$T/options/overwrite"
echo "$kb" > "$T/buffer_size_kb" || skip "cannot size the buffer to $kb KiB a CPU"
echo 1 > "$T/events/raw_syscalls/enable"
echo 1 > "$T/tracing_on"
dd if=/dev/zero of=/dev/null bs=1 count="$CALLS" status=none
echo 0 > "$T/tracing_on"

bench_capture_tracedat

SPEC='keys=common_pid,id:sort=common_pid,id'
export TB DAT SPEC
TB_CMD='"$TB" hist -e raw_syscalls:sys_enter "$SPEC" "$DAT"'
# The peer: trace-cmd's text, the task column's pid and the NR counted per pair.
TC_CMD=$(command -v trace-cmd)' report -i "$DAT" | awk '\''/ sys_enter: / {
	t = $1; sub(/.*-/, "", t); for (i = 2; i <= NF; i++) if ($i == "NR") { c[t " " $(i + 1)]++; break } }
	END { for (k in c) print k, c[k] }'\'
# Hits + Dropped: every sys_enter counted (past size=, a new key's events are
# counted as Dropped, as the kernel does; a busy machine has many pids).
hits_tb=$(sh -c "$TB_CMD" 2>"$W/tb.err" | awk '/^    (Hits|Dropped):/ { n += $2 } END { print n + 0 }')
hits_tc=$(sh -c "$TC_CMD" 2>/dev/null | awk '{ n += $3 } END { print n + 0 }')
[ "${hits_tb:-0}" -gt 0 ] || skip "tracebuf hist counted nothing"
[ "${hits_tc:-0}" -gt 0 ] || skip "trace-cmd report | awk counted nothing"
exits=$("$TB" hist -e raw_syscalls:sys_exit 'keys=id' "$DAT" 2>/dev/null | awk '/^    Hits:/ { print $2 }')
records=$((hits_tb + exits)) # only raw_syscalls were recorded

# Each run timed by GNU time: wall clock, and CPU (user + system, of every
# process of the pipeline).  The machine is shared: the CPU figure is the
# work done, the wall figure what a person waits on an idle machine at best.
[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) not installed"
timed() { /usr/bin/time -f '%e %U %S' -o "$W/t" sh -c "$1" > /dev/null 2>&1; awk '{ printf "%.0f %.0f\n", $1 * 1e9, ($2 + $3) * 1e9 }' "$W/t"; }
best() { # keep the smaller of each column: $1 "wall cpu" so far, $2 new
	echo "$1 $2" | awk '{ if ($1 == 0 || $3 < $1) $1 = $3; if ($2 == 0 || $4 < $2) $2 = $4; print $1, $2 }'
}
b_tb="0 0"
b_tc="0 0"
for i in 1 2 3; do
	b_tb=$(best "$b_tb" "$(timed "$TB_CMD")")
	b_tc=$(best "$b_tc" "$(timed "$TC_CMD")")
done
set -- $b_tb $b_tc
best_tb=$1 cpu_tb=$2 best_tc=$3 cpu_tc=$4
bytes=$(wc -c < "$DAT")

awk -v tb=$best_tb -v tc=$best_tc -v ctb=$cpu_tb -v ctc=$cpu_tc -v n=$records -v htb=$hits_tb -v htc=$hits_tc -v bytes=$bytes \
	-v load="$(cut -d' ' -f1 /proc/loadavg)" -v json="$B/bench/results-hist.json" -v err="$W/tb.err" 'BEGIN {
	printf "bench_hist: %d raw_syscalls records (%d sys_enter) in a %.1f MiB trace.dat, fastest of 3 runs each\n",
		n, htb, bytes / 1048576
	printf "  CPU time (user + system):\n"
	printf "    tracebuf hist            %8.1f ms (%.1f ns/record, %.1f M records/s)\n", ctb / 1e6, ctb / n, n / ctb * 1e3
	printf "    trace-cmd report | awk   %8.1f ms (%.1f ns/record); tracebuf does it in %.0fx less\n", ctc / 1e6, ctc / n, ctc / ctb
	printf "  wall clock (load average %s):\n", load
	printf "    tracebuf hist            %8.1f ms (%.1f M records/s)\n", tb / 1e6, n / tb * 1e3
	printf "    trace-cmd report | awk   %8.1f ms; tracebuf is %.1fx as fast\n", tc / 1e6, tc / tb
	if (htb != htc)
		printf "  WARNING: sys_enter counted differ (%d here, %d by trace-cmd and awk): the comparison is off\n", htb, htc
	while (htb != htc && (getline line < err) > 0)
		printf "  tracebuf said: %s\n", line
	printf "[\n  {\"case\": \"hist keys=common_pid,id (CPU time)\", \"threads\": 1, \"tracebuf_ns\": %.2f, \"peer\": \"trace-cmd report | awk\", \"peer_ns\": %.2f, \"ratio\": %.2f},\n",
		ctb / n, ctc / n, ctc / ctb > json
	printf "  {\"case\": \"hist keys=common_pid,id (wall clock)\", \"threads\": 1, \"tracebuf_ns\": %.2f, \"peer\": \"trace-cmd report | awk\", \"peer_ns\": %.2f, \"ratio\": %.2f}\n]\n",
		tb / n, tc / n, tc / tb > json
}'
