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
CAPF=tests/data/kernel/cap-f-many-systems
echo "=== tracebuf report $CAPF   (15 trace systems of a 6.18 kernel, as its own trace file prints them)"
"$B/tracebuf" report "$CAPF" > "$B/report-cap-f.txt"
for ev in 'sys_openat(' 'sys_openat ->' 'mm_page_alloc:' 'hrtimer_start:' 'tcp_probe:' 'block_rq_issue:' \
	'writeback_dirty_inode:' 'tracing_mark_write:'; do
	grep -m1 -F "$ev" "$B/report-cap-f.txt" || true
done
grep -v '^#' "$B/report-cap-f.txt" > "$B/report-cap-f.events"
grep -v '^#' "$CAPF/trace.txt" > "$B/report-cap-f.kernel"
echo "  $(awk 'NR == FNR { k[FNR] = $0; n = FNR; next } $0 == k[FNR] { same++ } END { printf "%d of %d", same, n }' \
	"$B/report-cap-f.kernel" "$B/report-cap-f.events") event lines identical to the kernel's own text ($CAPF/trace.txt);" \
	"the printers used: tracebuf report --stat $CAPF"
awk 'NR == FNR { k[FNR] = $0; next } $0 != k[FNR] && !shown++ {
	print "  the first that differs, kernel then tracebuf (writeback age= needs the jiffies of the moment"
	print "  the kernel printed it, which this capture did not save; tracebuf capture saves it now):"
	print "  " k[FNR]; print "  " $0 }' "$B/report-cap-f.kernel" "$B/report-cap-f.events"
echo
echo "=== tracebuf size 8   (the kernel's buffer_size_kb arithmetic)"
"$B/tracebuf" size 8
echo
echo "=== scripts/fourways.sh   (one event, app:request, consumed four ways in one run: examples/fourways.c)"
B="$B" scripts/fourways.sh
echo
echo "=== tracebuf demo   (an 8 KiB tracebuf ring, 5000 events)"
"$B/tracebuf" demo
echo
echo "=== build/examples/demo $B/demo   (every source at once: 4 threads, signals mid-write, functions,"
echo "    PMU counters and samples, a 12000-byte blob; a 16 KiB ring overrun, then read back every way)"
rm -rf "$B/demo"
"$B/examples/demo" "$B/demo"
echo "  (the capture stays in $B/demo: tracebuf report --no-graph $B/demo, tracebuf report $B/demo)"
echo
SHM=/dev/shm/tracebuf-demo-crash-$$
echo "=== build/examples/demo --crash $SHM   (workers write into a ring in shared memory; SIGKILL mid-write)"
rm -rf "$SHM" "$SHM.formats"
"$B/examples/demo" --crash "$SHM" || echo "  (the demo died: status $?, as planned)"
echo "=== tracebuf recover $SHM -o $B/crash.dat   (every committed event; the writes in flight counted)"
"$B/tracebuf" recover "$SHM" -o "$B/crash.dat"
"$B/tracebuf" report --like-kernel "$B/crash.dat" > "$B/crash.txt"
grep 'LOST' "$B/crash.txt" || true
grep '\[BLOB' "$B/crash.txt" || true  # the blob written just before the kill, saved by recover
grep -v "^#" "$B/crash.txt" | grep -v "LOST\|\[BLOB" | tail -n 6
echo "  ($(grep -vc '^#' "$B/crash.txt") lines in $B/crash.txt; trace-cmd report $B/crash.dat reads it too)"
rm -rf "$SHM" "$SHM.formats"
