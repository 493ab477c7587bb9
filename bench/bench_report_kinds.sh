#!/bin/sh
# bench_report_kinds - `tracebuf report` beside `trace-cmd report` on
# recordings of different kinds, each a trace.dat of real kernel pages made
# in a private instance (never the top-level buffer):
#
#   markers   trace_marker lines from two threads pinned to CPU 0 and 1
#             (bench/marker_app), with sched_switch: one print record per
#             line, every one with the same ip (TB_BENCH_MARKERS a thread,
#             default 1 M)
#   sched     sched_switch, sched_waking and sched_wakeup of a pipe
#             ping-pong (`perf bench sched pipe`, TB_BENCH_LOOPS round
#             trips, default 300 k: about 8 events each)
#   io        block, ext4 and writeback events of files written and synced
#             (TB_BENCH_IO_MB, default 64)
#   mixed     every event of the kernel (`-e all`) while the machine is busy
#             with files written and synced, a pipe ping-pong and a walk of
#             /usr (TB_BENCH_MIXED_SECONDS, default 10, or until the buffer
#             of 64 MiB a CPU is full)
#
# The pages are saved by `tracebuf capture` and made a trace.dat by
# `trace-cmd restore` (this VM kind refuses `trace-cmd record`'s write to
# /proc/sys/kernel/ftrace_enabled), then converted to v6 and v7+zstd with
# `trace-cmd convert`.  Both tools print each file to /dev/null, taking
# turns, three rounds; the fastest wall time and the least CPU time (user +
# sys) of each count.  Both must print as many event lines.  Results:
# results-report_kinds.json, one entry per kind and version.  Then
# bench_count.sh times `report --count` of each kind's files, the v7+zstd
# one beside zstd alone on its chunks (results-count-KIND.json).
#
# TB_BENCH_KINDS picks kinds (default "markers sched io mixed");
# TB_BENCH_SAVE=DIR keeps each recording there (KIND-v6.dat, KIND-v7z.dat),
# for profiling one report at a time.
#
# Usage: bench_report_kinds.sh [BUILD_DIR]   (root, tracefs, trace-cmd, perf)
B=${1:-build}
NAME=bench_report_kinds
. "$(dirname "$0")/lib_instance.sh"
bench_instance
command -v trace-cmd > /dev/null 2>&1 || skip "trace-cmd not installed (the peer)"
[ -x /usr/bin/time ] || skip "GNU time not installed"
[ -x "$B/bench/marker_app" ] || skip "$B/bench/marker_app not built"

now_ns() { date +%s%N; }
# run CMD...: "WALL CPU" in ns of one run to /dev/null
run() {
	t0=$(now_ns)
	/usr/bin/time -f "%U %S" -o "$W/cpu" "$@" > /dev/null 2>&1
	t1=$(now_ns)
	echo "$((t1 - t0)) $(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$W/cpu")"
}
least() {
	echo "$1 $2" | awk '{ w = ($1 == 0 || $3 < $1) ? $3 : $1; c = ($2 == 0 || $4 < $2) ? $4 : $2; print w, c }'
}
event_line='^[^#].* [0-9]+\.[0-9]{6}: '

# record KIND: the instance emptied, the kind's workload traced, saved as $W/KIND.dat
record() {
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/enable"
	echo 0 > "$T/options/overwrite"
	echo > "$T/trace"
	case $1 in
	markers)
		echo $((${TB_BENCH_MARKERS:-1000000} / 12 + 8192)) > "$T/buffer_size_kb" # ~70 bytes a marker record
		echo 1 > "$T/events/sched/sched_switch/enable"
		echo 1 > "$T/tracing_on"
		"$B/bench/marker_app" "$T/trace_marker" "${TB_BENCH_MARKERS:-1000000}" ;;
	sched)
		command -v perf > /dev/null 2>&1 || return 1
		echo $((${TB_BENCH_LOOPS:-300000} / 2 + 8192)) > "$T/buffer_size_kb"
		for e in sched_switch sched_waking sched_wakeup; do echo 1 > "$T/events/sched/$e/enable"; done
		echo 1 > "$T/tracing_on"
		perf bench sched pipe -l "${TB_BENCH_LOOPS:-300000}" > /dev/null 2>&1 ;;
	io)
		echo 65536 > "$T/buffer_size_kb"
		for s in block ext4 writeback; do [ -d "$T/events/$s" ] && echo 1 > "$T/events/$s/enable"; done
		echo 1 > "$T/tracing_on"
		mb=${TB_BENCH_IO_MB:-64}
		i=0
		while [ $i -lt 16 ]; do
			dd if=/dev/zero of="$B/bench/io-$$-$i" bs=64k count=$((mb / 16 * 16)) conv=fsync 2> /dev/null
			i=$((i + 1))
		done
		rm -f "$B"/bench/io-$$-* ;;
	mixed)
		echo 65536 > "$T/buffer_size_kb"
		echo 1 > "$T/events/enable"
		echo 1 > "$T/tracing_on"
		mixed_load "${TB_BENCH_MIXED_SECONDS:-10}" ;;
	esac
	echo 0 > "$T/tracing_on"
	rm -rf "$W/cap" "$W/trace.dat"
	"$TB" capture -o "$W/cap" "$T" > /dev/null 2>&1 || return 1
	bench_tracedat "$W/cap"
	rm -f $raws
	(cd "$W" && trace-cmd convert --file-version 6 -i trace.dat -o "$1-v6.dat" > /dev/null 2>&1 &&
		trace-cmd convert --file-version 7 --compression zstd -i trace.dat -o "$1-v7z.dat" > /dev/null 2>&1)
}

# mixed_load SECONDS: files written and synced, a pipe ping-pong and a walk
# of /usr at once, each repeated until SECONDS have passed or the buffer of
# CPU 0 is full (its per_cpu stats say events overrun or dropped).
mixed_load() {
	end=$(($(date +%s) + $1))
	full() { grep -q -E '^(dropped events|overrun): [1-9]' "$T/per_cpu/cpu0/stats"; }
	(while [ "$(date +%s)" -lt $end ] && ! full; do
		dd if=/dev/zero of="$B/bench/mixed-$$" bs=64k count=256 conv=fsync 2> /dev/null
	done; rm -f "$B/bench/mixed-$$") &
	(while [ "$(date +%s)" -lt $end ] && ! full; do
		perf bench sched pipe -l 20000 > /dev/null 2>&1 || break
	done) &
	while [ "$(date +%s)" -lt $end ] && ! full; do
		find /usr -name '*.h' -newer /etc/hostname > /dev/null 2>&1
	done
	wait
}

rows=""
for kind in ${TB_BENCH_KINDS:-markers sched io mixed}; do
	record $kind || { echo "$NAME: $kind: could not be recorded, left out"; continue; }
	for v in v6 v7z; do
		f="$W/$kind-$v.dat"
		[ -s "$f" ] || continue
		n_tb=$("$TB" report "$f" 2> /dev/null | grep -c -E "$event_line")
		n_tc=$(trace-cmd report "$f" 2> /dev/null | grep -c -E "$event_line")
		t_tb="0 0"; t_tc="0 0"
		for _ in 1 2 3; do
			t_tc=$(least "$t_tc" "$(run trace-cmd report "$f")")
			t_tb=$(least "$t_tb" "$(run "$TB" report "$f")")
		done
		rows="$rows $kind $v $(wc -c < "$f") $n_tb $n_tc $t_tb $t_tc"
	done
	# --count of each file, the v7+zstd one beside zstd alone on its chunks (bench_count.sh)
	TB_BENCH_COUNT_JSON="$B/bench/results-count-$kind.json" sh "$(dirname "$0")/bench_count.sh" "$B" \
		"$W/$kind-v6.dat" "$W/$kind-v7z.dat"
	if [ -n "${TB_BENCH_SAVE:-}" ]; then
		mkdir -p "$TB_BENCH_SAVE" && mv "$W/$kind"-*.dat "$TB_BENCH_SAVE"/
	else
		rm -f "$W/$kind"-*.dat
	fi
done
[ -n "$rows" ] || skip "no recording could be made"

echo "$rows" | awk -v json="$B/bench/results-report_kinds.json" '{
	printf "bench_report_kinds: tracebuf report against trace-cmd report, fastest of 3 turns each\n"
	printf "  %-8s %-4s %9s %10s %9s %9s %8s %8s %8s\n", "kind", "file", "MiB", "events", "tb ms", "tc ms",
		"wall x", "cpu x", "tb ns/ev"
	n = 0
	for (i = 1; i + 8 <= NF; i += 9) {
		kind = $i; v = $(i + 1); size = $(i + 2); ntb = $(i + 3); ntc = $(i + 4)
		tbw = $(i + 5); tbc = $(i + 6); tcw = $(i + 7); tcc = $(i + 8)
		printf "  %-8s %-4s %9.1f %10d %9.1f %9.1f %7.1fx %7.1fx %8.0f%s\n", kind, v, size / 1048576, ntb,
			tbw / 1e6, tcw / 1e6, tcw / tbw, tcc / (tbc ? tbc : 1), tbc / ntb,
			ntb == ntc ? "" : sprintf("  WARNING: trace-cmd printed %d events", ntc)
		entry[n++] = sprintf("  {\"case\": \"report of a %s recording, trace.dat %s (wall clock, per event)\", " \
			"\"threads\": 2, \"tracebuf_ns\": %.2f, \"peer\": \"trace-cmd report\", \"peer_ns\": %.2f, " \
			"\"ratio\": %.2f}", kind, v, tbw / ntb, tcw / ntc, (tcw / ntc) / (tbw / ntb))
	}
	printf "[\n" > json
	for (k = 0; k < n; k++)
		printf "%s%s\n", entry[k], k + 1 < n ? "," : "" > json
	printf "]\n" > json
}'
