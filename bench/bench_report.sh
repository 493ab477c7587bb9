#!/bin/sh
# bench_report - `tracebuf report` beside `trace-cmd report`, on the same pages.
#
# Records a few seconds of sched, irq, timer and raw_syscalls events in a
# private tracefs instance (never the top-level buffer), saves its raw pages
# and its schema as a capture directory, and builds a trace.dat of the very
# same pages with `trace-cmd restore`.  Then both tools turn them into text
# (to /dev/null), five times each, alternating; the fastest run of each
# counts, because other load only ever slows a run down.  Both must print
# the same number of event lines, or the comparison means nothing.
#
# Usage: bench_report.sh [BUILD_DIR]   (root, tracefs, trace-cmd; else skipped)
# TB_BENCH_KEEP=1 keeps the capture and the trace.dat (the path is printed).
B=${1:-build}
TB="$B/tracebuf"
TOP=/sys/kernel/tracing
INST=tb-bench-report
T=$TOP/instances/$INST
W=$(mktemp -d /tmp/tb-bench-report.XXXXXX)

skip() {
	echo "bench_report: skipped: $1"
	rm -rf "$W"
	exit 0
}
[ -x "$TB" ] || skip "$TB not built"
command -v trace-cmd >/dev/null 2>&1 || skip "trace-cmd not installed"
[ "$(id -u)" = 0 ] || skip "not root"
[ -d "$TOP/instances" ] || mount -t tracefs nodev "$TOP" 2>/dev/null
[ -d "$TOP/instances" ] || skip "no tracefs at $TOP"
[ -d "$T" ] || mkdir "$T" 2>/dev/null || skip "cannot make the instance $T"
cleanup() {
	echo 0 > "$T/tracing_on" 2>/dev/null
	rmdir "$T" 2>/dev/null
	if [ -n "${TB_BENCH_KEEP:-}" ]; then
		echo "bench_report: kept $W (capture/, trace.dat)"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT INT TERM

# -- record: 16 MiB a CPU, nothing overwritten, a workload of processes and syscalls
echo 0 > "$T/tracing_on"
echo 0 > "$T/options/overwrite"
echo 16384 > "$T/buffer_size_kb"
echo > "$T/trace"
for s in sched irq timer raw_syscalls; do
	[ -d "$T/events/$s" ] && echo 1 > "$T/events/$s/enable"
done
echo 1 > "$T/tracing_on"
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt $end ]; do
	ls -la /usr/lib > /dev/null
	sleep 0.001
done
echo 0 > "$T/tracing_on"

# -- the capture directory: schema, clock, comms, then the raw pages (consumed)
C="$W/capture"
mkdir -p "$C/formats"
for d in "$T"/events/*/; do
	s=$(basename "$d")
	[ "$(cat "$d/enable" 2>/dev/null)" = 0 ] && [ "$s" != ftrace ] && continue
	mkdir -p "$C/formats/$s"
	for f in "$d"*/format; do
		[ -f "$f" ] && cat "$f" > "$C/formats/$s/$(basename "$(dirname "$f")").format"
	done
done
cat "$T/events/header_page" > "$C/header_page"
cat "$T/events/header_event" > "$C/header_event"
cat "$TOP/saved_cmdlines" > "$C/saved_cmdlines"
echo "trace_clock: $(cat "$T/trace_clock")" > "$C/meta.txt"
psize=$(($(cat "$T/buffer_subbuf_size_kb") * 1024))
raws=""
for p in "$T"/per_cpu/cpu*; do
	n=$(basename "$p")
	dd if="$p/trace_pipe_raw" of="$C/$n.raw" bs=$psize iflag=nonblock 2>/dev/null
	raws="$raws $C/$n.raw"
done

# -- the same pages as a trace.dat (headers from this kernel: the events are its own)
(cd "$W" && trace-cmd restore -c -o head.dat >/dev/null 2>&1 &&
	trace-cmd restore -i head.dat -o trace.dat $raws >/dev/null 2>&1) ||
	skip "trace-cmd restore could not build a trace.dat"

events_tb=$("$TB" report "$C" 2>/dev/null | grep -c '^ *[^#].*\[[0-9][0-9]*\] ')
events_tc=$(trace-cmd report -i "$W/trace.dat" 2>/dev/null | grep -c '^ *[^#].*\[[0-9][0-9]*\] ')
bytes=$(cat $raws | wc -c)

# -- time: the fastest of five runs each, alternating
now_ns() { date +%s%N; }
best_tb=0
best_tc=0
for i in 1 2 3 4 5; do
	t0=$(now_ns); "$TB" report "$C" > /dev/null 2>&1; t1=$(now_ns)
	trace-cmd report -i "$W/trace.dat" > /dev/null 2>&1; t2=$(now_ns)
	d_tb=$((t1 - t0)); d_tc=$((t2 - t1))
	[ $best_tb = 0 ] || [ $d_tb -lt $best_tb ] && best_tb=$d_tb
	[ $best_tc = 0 ] || [ $d_tc -lt $best_tc ] && best_tc=$d_tc
done

awk -v tb=$best_tb -v tc=$best_tc -v ntb=$events_tb -v ntc=$events_tc -v bytes=$bytes 'BEGIN {
	printf "bench_report: %d events in %.1f MiB of raw pages from this kernel, fastest of 5 runs each\n",
		ntb, bytes / 1048576
	printf "  tracebuf report            %8.1f ms (%.0f ns/event)\n", tb / 1e6, tb / ntb
	printf "  trace-cmd report           %8.1f ms (%.0f ns/event); tracebuf takes %.2fx its time\n",
		tc / 1e6, tc / ntc, tb / tc
	if (ntb != ntc)
		printf "  WARNING: event lines differ (%d here, %d from trace-cmd): the comparison is off\n", ntb, ntc
}'
