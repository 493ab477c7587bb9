#!/bin/sh
# The order `report FILE.dat` merges CPUs in, where it writes a run of one
# CPU's lines at once (tdat_report.c emit_run): a run must end exactly where
# the record-at-a-time merge would have turned to another CPU.
#   - against trace-cmd: on files where every stamp ties with another CPU's
#     (each CPU a copy of the first), the CPU column of every event line, in
#     order, is trace-cmd's own (a tie goes to the lower CPU);
#   - against the record-at-a-time path: `--cpu` naming every CPU prints the
#     same lines one record at a time (a selection turns runs off), so its
#     text must be byte for byte the default's - on the tie files, on real
#     kernel captures of two and more CPUs, with and without -l and -t, and
#     with 0 and 2 worker threads.
B=${TB_BUILD:-build}
TB=$B/tracebuf
K=tests/data/kernel
V=tests/data/trace-dat
tmp=$(mktemp -d /tmp/tb-merge-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# copies NAME N: a capture of N CPUs, each a copy of cap-d's CPU 0 (every stamp ties N ways)
copies() {
	mkdir "$tmp/$1"
	cp -r "$K/cap-d-abs-timestamp"/* "$tmp/$1/"
	rm -f "$tmp/$1/trace.txt" "$tmp/$1"/cpu*.raw "$tmp/$1"/cpu*.stats
	c=0
	while [ $c -lt "$2" ]; do
		cp "$K/cap-d-abs-timestamp/cpu0.raw" "$tmp/$1/cpu$c.raw"
		cp "$K/cap-d-abs-timestamp/cpu0.stats" "$tmp/$1/cpu$c.stats"
		c=$((c + 1))
	done
	"$TB" convert "$tmp/$1" -o "$tmp/$1.dat" >/dev/null 2>&1
}
copies twin 2; check $? "two CPUs of the same records, as trace.dat"
copies four 4; check $? "four CPUs of the same records, as trace.dat"
for c in a-small-noloss b-overrun d-abs-timestamp f-many-systems g-kernel-printers; do
	"$TB" convert "$K/cap-$c" -o "$tmp/$c.dat" >/dev/null 2>&1 || check 1 "convert cap-$c"
done
for c in b-overrun d-abs-timestamp; do
	"$TB" convert "$K/cap-$c" --v7 --compress zstd -o "$tmp/$c-zstd.dat" >/dev/null 2>&1 || check 1 "convert cap-$c, v7+zstd"
done

# the CPU column of each event line, in order ("[000]" in either tool's default layout)
cpu_column() { grep -o '^ *[^ ].*-[0-9]* *\[[0-9][0-9][0-9]\]' "$1" | grep -o '\[[0-9]*\]$'; }

if command -v trace-cmd >/dev/null 2>&1; then
	for f in twin four; do
		"$TB" report "$tmp/$f.dat" > "$tmp/$f.tb" 2>/dev/null
		trace-cmd report "$tmp/$f.dat" > "$tmp/$f.tc" 2>/dev/null
		cpu_column "$tmp/$f.tb" > "$tmp/$f.tb.cpus"
		cpu_column "$tmp/$f.tc" > "$tmp/$f.tc.cpus"
		[ -s "$tmp/$f.tc.cpus" ] && cmp -s "$tmp/$f.tb.cpus" "$tmp/$f.tc.cpus"
		check $? "$f: every tie goes as trace-cmd's does ($(wc -l < "$tmp/$f.tc.cpus") event lines)"
	done
else
	echo "# trace-cmd not installed: the tie order is checked against the record-at-a-time path only"
fi

# how many CPU slots trace-cmd's merged order has: every buffer's "CPUs A..B"
all_cpus() { "$TB" dump "$1" | sed -n 's/.*CPUs \([0-9]*\)\.\.\([0-9]*\) in .*/\1 \2/p' | awk '{ n += $2 - $1 + 1 } END { print n }'; }

for f in twin four a-small-noloss b-overrun d-abs-timestamp f-many-systems g-kernel-printers \
	b-overrun-zstd d-abs-timestamp-zstd; do
	dat="$tmp/$f.dat"
	[ -f "$dat" ] || continue
	last=$(($(all_cpus "$dat") - 1))
	for opt in "" "-l" "-t"; do
		for threads in 2 0; do
			TB_REPORT_THREADS=$threads "$TB" report $opt "$dat" > "$tmp/runs" 2>&1
			TB_REPORT_THREADS=$threads "$TB" report $opt --cpu "0-$last" "$dat" > "$tmp/one" 2>&1
			[ -s "$tmp/one" ] && cmp -s "$tmp/runs" "$tmp/one"
			check $? "$f ${opt:-default} ($threads threads): runs print what one record at a time prints"
		done
	done
done
for f in "$V/sched-marker-v6.dat" "$V/sched-v7-zstd.dat" "$V/lost-events-v6.dat"; do
	last=$(($(all_cpus "$f") - 1))
	"$TB" report "$f" > "$tmp/runs" 2>&1
	"$TB" report --cpu "0-$last" "$f" > "$tmp/one" 2>&1
	[ -s "$tmp/one" ] && cmp -s "$tmp/runs" "$tmp/one"
	check $? "$(basename "$f"): runs print what one record at a time prints"
done
echo "1..$n"
exit $fail
