#!/bin/sh
# bench_count - `tracebuf report --count` (decoded and merged, no text)
# beside its floor, in turns, on trace.dat files made elsewhere
# (bench_report_kinds.sh hands it each kind's recording):
#
#   a v7+zstd file   beside bench_zstd_floor on the same file: its chunks
#                    decompressed by zstd alone from memory, on 2 threads
#                    (a CPU's chunks a thread, as the workers share them
#                    out) - no count of the file can beat it here;
#   a v6 file        its events per second (goal: 50 M), the count's CPU.
#
# Each round runs the floor (the fastest of its own 5 runs) and then the
# count 3 times, so both meet the same moments of a shared machine; the
# ratio is taken in each round and the best and the median round are said.
# Wall times are the fastest of a round; CPU (user + sys, all threads) the
# least.  TB_BENCH_ROUNDS rounds (default 5).  Results: results-count.json
# in BUILD_DIR/bench, or the file TB_BENCH_COUNT_JSON names.
#
# Usage: bench_count.sh [BUILD_DIR] FILE.dat...   (without files: skipped)
B=${1:-build}
[ $# -gt 0 ] && shift
NAME=bench_count
TB="$B/tracebuf"
if [ $# -eq 0 ]; then
	echo "$NAME: skipped: no trace.dat given (bench_report_kinds.sh gives its recordings)"
	exit 0
fi
[ -x /usr/bin/time ] || { echo "$NAME: skipped: GNU time not installed"; exit 0; }
W=$(mktemp -d /tmp/tb-bench-count-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT

now_ns() { date +%s%N; }
# count FILE: "WALL CPU" in ns of one --count
count() {
	t0=$(now_ns)
	/usr/bin/time -f "%U %S" -o "$W/cpu" "$TB" report --count "$1" > /dev/null 2>&1
	t1=$(now_ns)
	echo "$((t1 - t0)) $(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$W/cpu")"
}

rows=""
for f in "$@"; do
	[ -s "$f" ] || continue
	n=$("$TB" report --count "$f" 2> /dev/null | sed -n 's/^events \([0-9]*\).*/\1/p')
	[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "$NAME: $f: no events counted, left out"; continue; }
	zstd=0
	"$TB" dump "$f" 2> /dev/null | head -1 | grep -q "compression zstd" && zstd=1
	r=0
	while [ $r -lt "${TB_BENCH_ROUNDS:-5}" ]; do
		floor="0 0"
		if [ $zstd = 1 ] && [ -x "$B/bench/bench_zstd_floor" ]; then
			floor=$("$B/bench/bench_zstd_floor" "$f" 2> /dev/null | sed -n 's/^zstd_floor [0-9]* \([0-9]*\) \([0-9]*\) .*/\2 \1/p')
		fi
		floor="${floor:-0 0} $(cut -d' ' -f1 /proc/loadavg)"
		best="0 0"
		for _ in 1 2 3; do
			best=$(echo "$best $(count "$f")" | awk '{ w = ($1 == 0 || $3 < $1) ? $3 : $1; c = ($2 == 0 || $4 < $2) ? $4 : $2; print w, c }')
		done
		rows="$rows $(basename "$f") $n $zstd $best $floor"
		r=$((r + 1))
	done
done
[ -n "$rows" ] || { echo "$NAME: skipped: nothing counted"; exit 0; }

echo "$rows" | awk -v json="${TB_BENCH_COUNT_JSON:-$B/bench/results-count.json}" -v rounds="${TB_BENCH_ROUNDS:-5}" '
function median(list, k,    v, m, i, j, t) {
	m = split(list, v, " ")
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return m ? v[int((m + 1) / 2)] : 0
}
{
	printf "bench_count: report --count beside zstd alone on the same chunks, %d rounds in turns\n", rounds
	printf "  %-16s %9s %9s %9s %7s %9s %9s %10s %10s\n", "file", "events", "count ms", "cpu ms", "M ev/s",
		"floor ms", "1 thr ms", "x floor", "(median)"
	n = 0; nf = 0
	for (i = 1; i + 7 <= NF; i += 8) {
		f = $i
		if (!(f in events)) order[nf++] = f
		events[f] = $(i + 1); z[f] = $(i + 2)
		w = $(i + 3); c = $(i + 4); fl = $(i + 5); f1 = $(i + 6); load[f] = load[f] " " $(i + 7)
		if (!(f in bw) || w < bw[f]) bw[f] = w
		if (!(f in bc) || c < bc[f]) bc[f] = c
		if (fl > 0) {
			if (!(f in bf) || fl < bf[f]) bf[f] = fl
			if (!(f in b1) || f1 < b1[f]) b1[f] = f1
			ratio = w / fl
			if (!(f in br) || ratio < br[f]) br[f] = ratio
			ratios[f] = ratios[f] " " ratio
		}
	}
	for (k = 0; k < nf; k++) {
		f = order[k]
		if (z[f] && (f in bf)) {
			printf "  %-16s %9d %9.1f %9.1f %7.1f %9.1f %9.1f %9.2fx %9.2fx\n", f, events[f], bw[f] / 1e6,
				bc[f] / 1e6, events[f] / bw[f] * 1e3, bf[f] / 1e6, b1[f] / 1e6, br[f], median(ratios[f])
			entry[n++] = sprintf("  {\"case\": \"report --count of %s beside zstd alone on its chunks (2 threads), best round\", " \
				"\"threads\": 2, \"tracebuf_ns\": %.0f, \"peer\": \"bench_zstd_floor\", \"peer_ns\": %.0f, " \
				"\"ratio\": %.3f, \"events\": %d}", f, bw[f], bf[f], 1 / br[f], events[f])
		} else {
			printf "  %-16s %9d %9.1f %9.1f %7.1f\n", f, events[f], bw[f] / 1e6, bc[f] / 1e6,
				events[f] / bw[f] * 1e3
		}
	}
	for (k = 0; k < nf; k++)
		printf "  %s: load average in each round:%s\n", order[k], load[order[k]]
	printf "[\n" > json
	for (k = 0; k < n; k++)
		printf "%s%s\n", entry[k], k + 1 < n ? "," : "" > json
	printf "]\n" > json
}'
