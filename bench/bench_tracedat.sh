#!/bin/sh
# Writing speed of trace.dat files: `tracebuf convert` of a capture
# directory whose raw files hold SIZE_MB MiB of real kernel sub-buffers per
# CPU (cap-f-many-systems' pages, repeated), as version 6, version 7 and
# version 7 with zstd and zlib, into tmpfs (so the figure is the writer's,
# not the disk's).  The fastest of RUNS runs is printed as MB/s of
# sub-buffers written (1 MB = 10^6 bytes).  The goal for uncompressed
# writing is 500 MB/s.
#
#   sh bench/bench_tracedat.sh [BUILD_DIR]     (SIZE_MB=256 RUNS=3 by default)
set -e
B=${1:-build}
SIZE_MB=${SIZE_MB:-256}
RUNS=${RUNS:-3}
SRC=tests/data/kernel/cap-f-many-systems
TB="$B/tracebuf"
[ -x "$TB" ] || { echo "bench_tracedat: $TB is not built"; exit 1; }
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
dir=$(mktemp -d "$base/tb-bench-tdat-XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# The capture: the real metadata, and each CPU's raw pages repeated to SIZE_MB.
cap=$dir/cap
mkdir "$cap"
cp -r "$SRC/header_page" "$SRC/header_event" "$SRC/formats" "$SRC/meta.txt" \
	"$SRC/saved_cmdlines" "$SRC/kallsyms" "$SRC/printk_formats" "$cap/"
for cpu in 0 1; do
	raw="$SRC/cpu$cpu.raw"
	one=$(stat -c %s "$raw")
	reps=$(( SIZE_MB * 1048576 / one ))
	i=0
	while [ $i -lt $reps ]; do cat "$raw"; i=$((i + 1)); done > "$cap/cpu$cpu.raw"
done
bytes=$(( $(stat -c %s "$cap/cpu0.raw") + $(stat -c %s "$cap/cpu1.raw") ))

now_ns() { date +%s%N; }

run() { # name, convert options
	name=$1; shift
	best=0
	r=0
	while [ $r -lt "$RUNS" ]; do
		rm -f "$dir/out.dat"
		t0=$(now_ns)
		"$TB" convert "$@" "$cap" -o "$dir/out.dat"
		t1=$(now_ns)
		ns=$((t1 - t0))
		if [ $best = 0 ] || [ $ns -lt $best ]; then best=$ns; fi
		r=$((r + 1))
	done
	size=$(stat -c %s "$dir/out.dat")
	mbs=$(awk -v b="$bytes" -v ns="$best" 'BEGIN { printf "%.0f", b / (ns / 1e9) / 1e6 }')
	printf '  %-22s %6s MB/s  (%d MB of sub-buffers in %.3f s; file %d MB)\n' "$name" "$mbs" \
		$((bytes / 1000000)) "$(awk -v ns="$best" 'BEGIN { print ns / 1e9 }')" \
		$((size / 1000000))
	if [ "$name" = "v6" ]; then v6_mbs=$mbs; fi
}

echo "bench_tracedat: tracebuf convert of $((bytes / 1048576)) MiB of kernel sub-buffers (2 CPUs) into $base, fastest of $RUNS"
run "v6" 
run "v7" --v7
run "v7 zstd" --v7 --compress zstd
run "v7 zlib" --v7 --compress zlib
if [ "$v6_mbs" -ge 500 ]; then
	echo "  uncompressed writing: $v6_mbs MB/s, at or above the 500 MB/s goal"
else
	echo "  uncompressed writing: $v6_mbs MB/s, BELOW the 500 MB/s goal"
fi
