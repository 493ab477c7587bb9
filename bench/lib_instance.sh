# lib_instance.sh - what the benches on live kernel events share (sourced):
# a private tracefs instance (never the top-level buffer) removed at exit,
# and a trace.dat of the very same pages a `tracebuf capture` saved.
#
#   NAME=bench_x; B=...; . "$(dirname "$0")/lib_instance.sh"
#   bench_instance        sets TB, T (the instance), W (scratch, removed at exit
#                         unless TB_BENCH_KEEP is set), or skips the bench
#   bench_tracedat C      $W/trace.dat from capture C's raw pages ($raws)
#   bench_capture_tracedat  the instance saved by `tracebuf capture` and made
#                         $DAT (= $W/trace.dat), the raw copies removed
#   bench_sched_pipe_tracedat LOOPS  sched_switch/waking/wakeup of `perf bench
#                         sched pipe -l LOOPS`, every event kept, as $DAT

skip() {
	echo "$NAME: skipped: $1"
	rm -rf "$W"
	exit 0
}

bench_cleanup() {
	echo 0 > "$T/tracing_on" 2>/dev/null
	rmdir "$T" 2>/dev/null
	if [ -n "${TB_BENCH_KEEP:-}" ]; then
		echo "$NAME: kept $W"
	else
		rm -rf "$W"
	fi
}

bench_instance() {
	TB="$B/tracebuf"
	TOP=/sys/kernel/tracing
	T=$TOP/instances/tb-$(echo "$NAME" | tr _ -)-$$
	W=$(mktemp -d "/tmp/tb-$NAME.XXXXXX")
	[ -x "$TB" ] || skip "$TB not built"
	command -v trace-cmd >/dev/null 2>&1 || skip "trace-cmd not installed"
	[ "$(id -u)" = 0 ] || skip "not root"
	[ -d "$TOP/instances" ] || mount -t tracefs nodev "$TOP" 2>/dev/null
	[ -d "$TOP/instances" ] || skip "no tracefs at $TOP"
	[ -e "$T" ] && skip "$T exists already; not ours to use"
	mkdir "$T" 2>/dev/null || skip "cannot make the instance $T"
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# The capture's pages, one raw file per CPU of the instance in CPU order
# (trace-cmd restore numbers CPUs by position), with this kernel's headers.
bench_tracedat() {
	raws=""
	ncpu=$(ls -d "$T"/per_cpu/cpu* | wc -l)
	i=0
	while [ $i -lt "$ncpu" ]; do
		[ -f "$1/cpu$i.raw" ] || : > "$1/cpu$i.raw"
		raws="$raws $1/cpu$i.raw"
		i=$((i + 1))
	done
	(cd "$W" && trace-cmd restore -c -o head.dat >/dev/null 2>&1 &&
		trace-cmd restore -i head.dat -o trace.dat $raws >/dev/null 2>&1) ||
		skip "trace-cmd restore could not build a trace.dat"
}

# The instance's pages saved (tracebuf capture) and made a trace.dat: $DAT.
bench_capture_tracedat() {
	"$TB" capture -o "$W/capture" "$T" >/dev/null 2>&1 || skip "tracebuf capture could not save $T"
	bench_tracedat "$W/capture"
	rm -f $raws
	DAT="$W/trace.dat"
}

# A scheduler ping-pong's sched_switch, sched_waking and sched_wakeup, room for
# every event (no overwrite: about 8 events a round trip), as $DAT.
bench_sched_pipe_tracedat() {
	command -v perf >/dev/null 2>&1 || skip "perf not installed (perf bench sched pipe makes the trace)"
	[ -d "$TOP/events/sched/sched_waking" ] || skip "no sched_waking event"
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/options/overwrite"
	echo $(($1 / 2 + 8192)) > "$T/buffer_size_kb" || skip "cannot size the buffer"
	for e in sched_switch sched_waking sched_wakeup; do echo 1 > "$T/events/sched/$e/enable"; done
	echo 1 > "$T/tracing_on"
	perf bench sched pipe -l "$1" > /dev/null 2>&1
	echo 0 > "$T/tracing_on"
	bench_capture_tracedat
}
