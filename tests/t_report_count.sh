#!/bin/sh
# report --count (pagecount.c, report.c count_merge) against counts made
# without it, on capture directories, trace.dat v6 and v7 (none, zlib,
# zstd), a four-CPU capture (ties between CPUs, the many-CPU merge) and
# damaged copies of each kind:
#   - the events are the event lines the text report prints (kernel layout)
#     plus the records it reported and skipped; the LOST lines and their sum
#     are the text's; where the kernel's own `trace` text came with the
#     capture (trace.txt), its lines too; where trace-cmd is installed, the
#     event lines `trace-cmd report` prints for the trace.dat files;
#   - the problems are the text path's, in its order (the merge's: problems
#     of different CPUs interleave by time), less those about what a count
#     never decodes (event fields, format files);
#   - the exit status is the text path's; 0, 2 and 3 worker threads print
#     the same bytes.
B=${TB_BUILD:-build}
TB=$B/tracebuf
K=tests/data/kernel
V=tests/data/trace-dat
tmp=$(mktemp -d /tmp/tb-count-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# poke FILE OFFSET BYTES: overwrite bytes (printf escapes) in place
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# the file offset of CPU $2's data in trace.dat $1 (tracebuf dump)
cpu_data() { "$TB" dump "$1" | sed -n "s/^ *CPU $2: [0-9]* bytes at byte \([0-9]*\).*/\1/p" | head -1; }

# -- inputs
d=$K/cap-d-abs-timestamp
# four CPUs: cpu2 and cpu3 the copies of cpu0 and cpu1, so every stamp ties with another CPU's
mkdir "$tmp/four"
cp -r "$d"/* "$tmp/four/"
for c in 0 1; do
	cp "$d/cpu$c.raw" "$tmp/four/cpu$((c + 2)).raw"
	cp "$d/cpu$c.stats" "$tmp/four/cpu$((c + 2)).stats"
done
rm -f "$tmp/four/trace.txt"
# damaged: a bad record header, a commit beyond the page, a page of zeros, a page
# dated before its CPU's previous event, lost flags without a count - on every CPU
cp -r "$tmp/four" "$tmp/bad"
poke "$tmp/bad/cpu0.raw" $((4096 * 3 + 200)) '\377\377\377\377'
poke "$tmp/bad/cpu1.raw" $((4096 * 2 + 8)) '\377\377\000\000'
dd if=/dev/zero of="$tmp/bad/cpu2.raw" bs=4096 seek=4 count=1 conv=notrunc status=none
poke "$tmp/bad/cpu3.raw" $((4096 * 5)) '\001\000\000\000\000\000\000\000'
poke "$tmp/bad/cpu0.raw" $((4096 * 7 + 11)) '\200'
poke "$tmp/bad/cpu3.raw" $((4096 * 1 + 11)) '\200'
poke "$tmp/bad/cpu2.raw" $((4096 * 9 + 300)) '\000\000\000\000\000\000\000\000'
# ... and the copies damaged in the same sub-buffer, differently: the last events before it
# tie, so which problem is told first is the merge's tie rule (the lower CPU's first)
poke "$tmp/bad/cpu1.raw" $((4096 * 28 + 8)) '\377\377\000\000'
poke "$tmp/bad/cpu3.raw" $((4096 * 28 + 16)) '\000\000\000\000\000\000\000\000'
# two CPUs, one the copy of the other, damaged so in the same sub-buffer (the two-CPU merge's ties)
mkdir "$tmp/twin"
cp -r "$d"/* "$tmp/twin/"
cp "$d/cpu0.raw" "$tmp/twin/cpu1.raw"
cp "$d/cpu0.stats" "$tmp/twin/cpu1.stats"
rm -f "$tmp/twin/trace.txt"
poke "$tmp/twin/cpu0.raw" $((4096 * 5 + 8)) '\377\377\000\000'
poke "$tmp/twin/cpu1.raw" $((4096 * 5 + 16)) '\000\000\000\000\000\000\000\000'

"$TB" convert "$d" -o "$tmp/d-v6.dat" &&
	"$TB" convert "$d" --v7 --compress none -o "$tmp/d-v7.dat" &&
	"$TB" convert "$d" --v7 --compress zlib -o "$tmp/d-v7-zlib.dat" &&
	"$TB" convert "$d" --v7 --compress zstd -o "$tmp/d-v7-zstd.dat"
check $? "the capture as trace.dat v6, v7, v7+zlib, v7+zstd"
cp "$tmp/d-v6.dat" "$tmp/bad-v6.dat"
at=$(cpu_data "$tmp/bad-v6.dat" 0)
poke "$tmp/bad-v6.dat" $((at + 4096 * 2 + 8)) '\377\377\000\000'
poke "$tmp/bad-v6.dat" $((at + 4096 * 6 + 100)) '\377\377\377\377'
cp "$tmp/d-v7-zstd.dat" "$tmp/bad-v7-zstd.dat"
at=$(cpu_data "$tmp/bad-v7-zstd.dat" 1)
poke "$tmp/bad-v7-zstd.dat" $((at + 4 + 8 + 200)) '\377\377\377\377\377\377\377\377'

inputs="$K/cap-a-small-noloss $K/cap-b-overrun $K/cap-c-subbuf8k $d $K/cap-f-many-systems $K/cap-h-jiffies
	tests/data/bad/record-crossing tests/data/bad/zero-length tests/data/bad/record-short $tmp/four $tmp/bad $tmp/twin
	$V/sched-marker-v6.dat $V/sched-marker-v7-none.dat $V/sched-v7-zstd.dat $V/lost-events-v6.dat
	$tmp/d-v6.dat $tmp/d-v7.dat $tmp/d-v7-zlib.dat $tmp/d-v7-zstd.dat $tmp/bad-v6.dat $tmp/bad-v7-zstd.dat"

# field: the number after "WHAT " in a totals line
field() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" "$2"; }

for in in $inputs; do
	name=${in#"$tmp/"}
	layout=
	case $in in *.dat) layout=--like-kernel ;; esac
	TB_REPORT_THREADS=0 "$TB" report --count "$in" > "$tmp/c0" 2> "$tmp/e0"; rc0=$?
	same=0
	for t in 2 3; do
		TB_REPORT_THREADS=$t "$TB" report --count "$in" > "$tmp/c" 2> "$tmp/e"; rc=$?
		cmp -s "$tmp/c" "$tmp/c0" && cmp -s "$tmp/e" "$tmp/e0" && [ $rc = $rc0 ] || same=1
	done
	check $same "$name: --count by 0, 2 and 3 workers: the same totals, problems and exit status"

	"$TB" report $layout "$in" > "$tmp/text" 2> "$tmp/terr"; rct=$?
	lines=$(grep -v '^#' "$tmp/text" | grep -vc '^CPU:[0-9]* \[LOST')
	skipped=$(grep -c 'record skipped$' "$tmp/terr")
	lost=$(grep -c '^CPU:[0-9]* \[LOST' "$tmp/text")
	lost_sum=$(sed -n 's/^CPU:[0-9]* \[LOST \(at least \)*\([0-9]*\) EVENTS\]$/\2/p' "$tmp/text" | awk '{ s += $1 } END { print s + 0 }')
	events=$(field events "$tmp/c0")
	[ -n "$events" ] && [ "$events" = $((lines + skipped)) ]
	check $? "$name: events $events = the text's $lines event lines + $skipped records it skipped"
	[ "$(field 'LOST lines' "$tmp/c0")" = "$lost" ] && grep -q "LOST lines $lost ($lost_sum events)" "$tmp/c0"
	check $? "$name: $lost LOST lines of $lost_sum events, as the text prints them"
	grep -v -e 'record skipped$' -e '/formats/' -e 'has no format' "$tmp/terr" > "$tmp/twant"
	# the text's exit status, 0 when all it found wrong is what a count does not decode
	want=$rct; [ $rct = 1 ] && [ ! -s "$tmp/twant" ] && want=0
	cmp -s "$tmp/twant" "$tmp/e0" && [ $rc0 = $want ]
	check $? "$name: the text path's problems ($(wc -l < "$tmp/e0") of them), in its order; exit status $want"
	if [ -f "$in/trace.txt" ]; then
		[ "$events" = "$(grep -v '^#' "$in/trace.txt" | grep -vc 'LOST')" ]
		check $? "$name: the kernel's own trace text has the same $events events"
	fi
done

# the four-CPU capture holds every event of the two-CPU one twice
"$TB" report --count "$tmp/four" > "$tmp/c4"
"$TB" report --count "$d" > "$tmp/c2"
[ "$(field events "$tmp/c4")" = $((2 * $(field events "$tmp/c2"))) ]
check $? "four CPUs, two of them copies: twice the events of the two"

# trace-cmd as the oracle of a trace.dat's events (one buffer: --count counts the main buffer;
# Debian's trace-cmd 3.1.6 reads no zlib file: "error reading header")
if command -v trace-cmd >/dev/null 2>&1; then
	for dat in d-v6 d-v7 d-v7-zstd; do
		want=$(trace-cmd report "$tmp/$dat.dat" 2>/dev/null | grep -v -e '^cpus=' -e 'EVENTS DROPPED\]$' | wc -l)
		got=$("$TB" report --count "$tmp/$dat.dat" | sed -n 's/^events \([0-9]*\).*/\1/p')
		[ "$got" = "$want" ]
		check $? "$dat.dat: $got events, the lines trace-cmd report prints ($want)"
	done
else
	n=$((n + 1)); echo "ok $n # skip trace-cmd not installed"
fi

echo "1..$n"
exit $fail
