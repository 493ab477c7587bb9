#!/bin/sh
# make run: the main job.  Reports a bundled real kernel capture, shows the
# kernel's sizing arithmetic, then fills a tracebuf ring far past its size
# and lets every read path say what happened; then the demo of every source
# at once (examples/demo.c).
set -e
B=${B:-build}
CAP=tests/data/kernel/cap-b-overrun

echo "=== tracebuf report $CAP   (a real 6.18 kernel capture: 8 KiB buffer, heavy overrun)"
"$B/tracebuf" report "$CAP" > "$B/report-cap-b.txt"
head -n 16 "$B/report-cap-b.txt"
echo "  ... ($(wc -l < "$B/report-cap-b.txt") lines in all, full text in $B/report-cap-b.txt)"
echo "  LOST lines: $(grep -c 'LOST' "$B/report-cap-b.txt" || true)"
grep 'LOST' "$B/report-cap-b.txt" || true
echo
echo "=== tracebuf size 8   (the kernel's buffer_size_kb arithmetic)"
"$B/tracebuf" size 8
echo
echo "=== tracebuf demo   (an 8 KiB tracebuf ring, 5000 events)"
"$B/tracebuf" demo
echo
echo "=== build/examples/demo $B/demo   (every source at once: 4 threads, signals mid-write, functions,"
echo "    PMU counters and samples, a 12000-byte blob; a 16 KiB ring overrun, then read back every way)"
rm -rf "$B/demo"
"$B/examples/demo" "$B/demo"
echo "  (the capture stays in $B/demo: tracebuf report --no-graph $B/demo, tracebuf report $B/demo)"
