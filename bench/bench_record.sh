#!/bin/sh
# bench_record - the real `tracebuf record` keeping up with one writer: a
# program linked with libtracebuf (bench/paced_app.c) fires one u64 event at
# 10 M events/s for TB_BENCH_SECONDS (default 2) into a 64 MiB ring (32 MiB
# a CPU on this 2-CPU machine, -b), while record drains it from its own
# process and writes the trace.dat.  Checked: the events the writer says it
# wrote, the events `tracebuf report --count` finds in the file, and what
# record says was lost; the goal is all of them in the file, 0 lost.
# Also shown: record's CPU time and peak memory (GNU time), and the rate of
# the trace.dat it wrote (MB of sub-buffers per second of the program's run).
#
# Usage: bench_record.sh [BUILD_DIR]
B=${1:-build}
TB="$B/tracebuf"
APP="$B/bench/paced_app"
RATE=10000000
SECS=${TB_BENCH_SECONDS:-2}
W=$(mktemp -d /tmp/tb-bench-record.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
skip() { echo "bench_record: skipped: $1"; exit 0; }
[ -x "$TB" ] && [ -x "$APP" ] || skip "$TB or $APP not built"
ncpu=$(getconf _NPROCESSORS_ONLN)
kb=$((65536 / ncpu))

/usr/bin/time -f "%e %U %S %M" -o "$W/time" "$TB" record -e 'paced:*' -b $kb -o "$W/paced.dat" -- \
	"$APP" $RATE "$SECS" > "$W/app.out" 2> "$W/record.err" || skip "tracebuf record failed: $(tail -1 "$W/record.err")"
written=$(sed -n 's/^paced_app: wrote \([0-9]*\) events in \([0-9.]*\) s$/\1/p' "$W/app.out")
app_s=$(sed -n 's/^paced_app: wrote \([0-9]*\) events in \([0-9.]*\) s$/\2/p' "$W/app.out")
lost=$(sed -n 's/.* events in [0-9]* pages; lost \([0-9]*\) .*/\1/p' "$W/record.err")
in_file=$("$TB" report --count "$W/paced.dat" 2>/dev/null | sed -n 's/^events \([0-9]*\) .*/\1/p')
bytes=$(stat -c %s "$W/paced.dat")
[ -n "$written" ] && [ -n "$lost" ] && [ -n "$in_file" ] || skip "could not read the counts: $(cat "$W/app.out" "$W/record.err")"
read -r wall user sys rss < "$W/time"

awk -v n=$written -v s=$app_s -v lost=$lost -v inf=$in_file -v wall=$wall -v user=$user -v sys=$sys \
	-v rss=$rss -v bytes=$bytes -v rate=$RATE -v kb=$kb -v ncpu=$ncpu -v json="$B/bench/results-record.json" 'BEGIN {
	printf "bench_record: tracebuf record -b %d (%d MiB ring), one writer paced at %.0f M events/s for %.2f s\n",
		kb, kb * ncpu / 1024, rate / 1e6, s
	printf "  the writer wrote %d events (%.2f M/s); the trace.dat holds %d; record says %d lost\n",
		n, n / s / 1e6, inf, lost
	printf "  record: %.2f s wall, %.2f s CPU (user %.2f, sys %.2f), %.1f MiB resident; the file %.0f MB (%.0f MB/s of the run)\n",
		wall, user + sys, user, sys, rss / 1024, bytes / 1e6, bytes / 1e6 / s
	if (inf != n || lost != 0)
		printf "  NOT KEPT UP: %d of %d events in the file, %d lost\n", inf, n, lost
	ns = s * 1e9 / n
	printf "[\n  {\"case\": \"tracebuf record, one writer at 10 M events/s, 64 MiB ring (writer ns per event)\", \"threads\": 1, \"tracebuf_ns\": %.2f, \"peer\": \"the pace asked: 10 M events/s\", \"peer_ns\": %.2f, \"ratio\": %.3f, \"written\": %d, \"in_file\": %d, \"lost\": %d, \"record_cpu_s\": %.2f}\n]\n",
		ns, 1e9 / rate, (1e9 / rate) / ns, n, inf, lost, user + sys > json
}'
