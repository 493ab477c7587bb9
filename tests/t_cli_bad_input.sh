#!/bin/sh
# Bad input, bad arguments and output that cannot be written, as a new user
# meets them: each case here was a bug, found by running every subcommand on
# real files mutated (truncations, flipped bytes, hostile sizes and counts)
# under ASan, with hostile option values and with stdout on /dev/full.
#
# Damaged input met by the subcommands that do not print text: each must say
# what it skipped, naming the file and byte, and exit non-zero, never count or
# draw short in silence.
#
# tests/data/bad/record-crossing (tests/data/bad/README.md): 149 trace_marker
# events, sub-buffer 0 holding 112 of them, whose record 111 is a long record
# running past the commit at cpu0.raw byte 4012: 148 events can be read.
B=${TB_BUILD:-build}
T="$B/tracebuf"
bad=tests/data/bad
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
# run NAME CMD...: stdout in $tmp/NAME.out, stderr in $tmp/NAME.err, status in $rc
run() { name=$1; shift; timeout 20 "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; rc=$?; }

crossing="$bad/record-crossing/cpu0.raw: byte 4012: record crosses the end of data; rest of the sub-buffer skipped"

# list -c counted the records of a damaged sub-buffer's readable part and said nothing.
run list "$T" list -c "$bad/record-crossing"
[ $rc = 1 ]; check $? "list -c on a damaged capture exits 1 (got $rc)"
grep -qF "$crossing" "$tmp/list.err"; check $? "list -c names the file, byte and damage"
[ "$(cat "$tmp/list.out")" = "148 ftrace:print" ]; check $? "list -c counts the 148 readable events"

# convert copied the damaged sub-buffer into the trace.dat whole and exited 0.  It now
# writes what report reads (the records before the damage, the commit cut there), says
# so as report does and exits 1; the trace.dat then reads clean.
run convert "$T" convert "$bad/record-crossing" -o "$tmp/crossing.dat"
[ $rc = 1 ]; check $? "convert of a damaged capture exits 1 (got $rc)"
grep -qF "$crossing" "$tmp/convert.err"; check $? "convert names the file, byte and damage as report does"
for v in "" "--v7 --compress zstd"; do
	"$T" convert $v "$bad/record-crossing" -o "$tmp/cut.dat" 2> /dev/null
	run listcut "$T" list -c "$tmp/cut.dat"
	[ $rc = 0 ] && [ "$(cat "$tmp/listcut.out")" = "148 ftrace:print" ] && [ ! -s "$tmp/listcut.err" ]
	check $? "convert ${v:-(v6)}: the trace.dat holds the 148 readable events, no damage (got $rc)"
done
if command -v trace-cmd > /dev/null; then
	[ "$(trace-cmd report "$tmp/crossing.dat" 2> /dev/null | grep -c " print: ")" = 148 ]
	check $? "trace-cmd report reads the 148 events of the converted trace.dat"
fi
# A header no reader can trust (commit past the data area): left out, as report skips it.
run convert "$T" convert "$bad/commit-beyond" -o "$tmp/beyond.dat"
[ $rc = 1 ] && grep -qF "$bad/commit-beyond/cpu0.raw: byte 8: commit length beyond the data area; sub-buffer skipped" "$tmp/convert.err"
check $? "convert of a sub-buffer with a bad commit: said, exit 1 (got $rc)"
[ "$("$T" list -c "$tmp/beyond.dat" 2>&1)" = "37 ftrace:print" ]; check $? "and the trace.dat holds sub-buffer 1's 37 events"
# A sub-buffer of zeros (a short read of trace_pipe_raw), from a pipe (read, not mapped).
mkdir "$tmp/zeros" && cp -r "$bad/record-crossing/formats" "$bad/record-crossing/header_page" "$tmp/zeros/" &&
	head -c 4096 /dev/zero > "$tmp/zeros/raw" && tail -c +4097 "$bad/record-crossing/cpu0.raw" >> "$tmp/zeros/raw" &&
	mkfifo "$tmp/zeros/cpu0.raw"
# (bounded: a convert that never opens the pipe must not leave the writer holding the test's output)
timeout 20 sh -c 'cat "$1" > "$2"' _ "$tmp/zeros/raw" "$tmp/zeros/cpu0.raw" > /dev/null 2>&1 &
run convert "$T" convert "$tmp/zeros" -o "$tmp/zeros.dat"
[ $rc = 1 ] && grep -qF "$tmp/zeros/cpu0.raw: byte 0: sub-buffer is all zeros" "$tmp/convert.err"
check $? "convert of a sub-buffer of zeros read from a pipe: said, exit 1 (got $rc)"
[ "$("$T" list -c "$tmp/zeros.dat" 2>&1)" = "37 ftrace:print" ]; check $? "and the trace.dat holds sub-buffer 1's 37 events"

# list -c of a trace.dat with a damaged sub-buffer: sub-buffer 0 of cpu0.raw put back
# whole over its cut copy in crossing.dat (found by its time stamp, at a 4096-byte boundary).
stamp=$(head -c 8 "$bad/record-crossing/cpu0.raw" | od -An -tx1 | tr -d ' \n' | sed 's/../\\x&/g')
at=$(LC_ALL=C grep -obUaP "$stamp" "$tmp/crossing.dat" | cut -d: -f1 | while read -r o; do
	[ $((o % 4096)) = 0 ] && echo "$o" && break; done)
[ -n "$at" ] && dd if="$bad/record-crossing/cpu0.raw" of="$tmp/crossing.dat" bs=4096 count=1 \
	seek=$((at / 4096)) conv=notrunc 2> /dev/null
check $? "sub-buffer 0 found in the trace.dat (at byte ${at:-none}) and put back damaged"
run listdat "$T" list -c "$tmp/crossing.dat"
[ $rc = 1 ]; check $? "list -c on a damaged trace.dat exits 1 (got $rc)"
grep -q "crossing.dat: byte [0-9]*: record crosses the end of data" "$tmp/listdat.err"
check $? "list -c names the trace.dat, byte and damage"
[ "$(cat "$tmp/listdat.out")" = "148 ftrace:print" ]; check $? "list -c counts the 148 readable events of the trace.dat"

# stats --svg drew the sub-buffer as damaged and exited 0 without a word.
run svg "$T" stats --svg "$tmp/ring.svg" "$bad/record-crossing"
[ $rc = 1 ]; check $? "stats --svg on a damaged capture exits 1 (got $rc)"
grep -qF "$crossing" "$tmp/svg.err"; check $? "stats --svg names the file, byte and damage"
grep -q 'damaged' "$tmp/ring.svg"; check $? "the SVG still marks the sub-buffer damaged"

# A report with no CPU to read leaked its page-work units (LeakSanitizer, under ASan:
# make test runs this with detect_leaks=1).  The top buffer of sched-v7-zstd.dat has no
# pages (trace-cmd report --cpu 0,1 prints none of its events either).
run empty "$T" report --like-kernel --buffer '' tests/data/trace-dat/sched-v7-zstd.dat
[ $rc = 0 ] && [ ! -s "$tmp/empty.err" ]; check $? "report of a buffer without pages: exit 0, nothing on stderr (got $rc)"
! grep -qv '^#' "$tmp/empty.out"; check $? "report of a buffer without pages prints no event"
grep -q 'entries-in-buffer/entries-written: 0/0 ' "$tmp/empty.out"; check $? "and says 0 entries"

# demo --events -1 was read by strtoul as 2^64 - 1 events and ran for ever.
for arg in "--events -1" "--events 1x" "--events 99999999999999999999" "--kb -8" "--kb ''"; do
	eval "run demo \"\$T\" demo $arg"
	[ $rc = 2 ] && grep -q '^usage: tracebuf demo' "$tmp/demo.err"; check $? "demo $arg: usage, exit 2 (got $rc)"
done
run size "$T" size 99999999999999999999
[ $rc = 2 ]; check $? "size of a number beyond 64 bits: usage, exit 2 (got $rc)"

# list of a damaged trace.dat (its magic gone) tried to run it as a program: "cannot run".
head -c 4096 tests/data/trace-dat/minimal-handmade-v6.dat | tr '\027' 'x' > "$tmp/nomagic.dat"
run nomagic "$T" list -c "$tmp/nomagic.dat"
[ $rc = 3 ] && grep -q "nomagic.dat: byte 0: not a trace.dat file" "$tmp/nomagic.err" && ! grep -q 'cannot run' "$tmp/nomagic.err"
check $? "list of a non-executable file without the magic: the trace.dat reader's message, exit 3 (got $rc)"

# record of a command that cannot be run wrote an empty trace.dat and exited 0.
run record "$T" record -o "$tmp/none.dat" -- "$tmp/no-such-program"
[ $rc = 3 ] && grep -q "cannot run $tmp/no-such-program: No such file or directory" "$tmp/record.err" &&
	[ ! -e "$tmp/none.dat" ]
check $? "record of a command that cannot run: said, no trace.dat, exit 3 (got $rc)"

# record's own failures follow the exit table, never the program's status: a trace.dat
# that cannot be written is 4 although the program exited 0.
run record "$T" record -o "$tmp/no-such-dir/x.dat" -- true
[ $rc = 4 ] && grep -q "cannot write $tmp/no-such-dir/x.dat" "$tmp/record.err"
check $? "record to an output it cannot write: said, exit 4 (got $rc)"

# convert named the partial sub-buffer at byte 0 of the raw file; it starts at 8192
# (tests/data/bad/README.md: cpu0.raw ends 1000 bytes into a third sub-buffer).
run convert "$T" convert "$bad/raw-partial" -o "$tmp/partial.dat"
grep -q "raw-partial/cpu0.raw: byte 8192: ends 1000 bytes into a 4096-byte sub-buffer" "$tmp/convert.err"
check $? "convert names the partial sub-buffer's byte"

# report --prefix naming no raw file printed an empty trace and exited 0 (a typo went unnoticed).
run prefix "$T" report --prefix zz tests/data/kernel/cap-b-overrun
[ $rc = 1 ] && grep -q "cap-b-overrun: byte 0: no zzcpuN.raw file" "$tmp/prefix.err"
check $? "report --prefix naming no raw file: said, exit 1 (got $rc)"
run prefix "$T" report --prefix e1. tests/data/kernel/cap-e-partial-and-padding
[ $rc = 0 ] && [ "$(grep -vc '^#' "$tmp/prefix.out")" = 149 ]
check $? "report --prefix e1. prints the 149 events of e1.cpu0.raw (got $rc)"

# dump --buffer with a name the file lacks left every page out and exited 0.
run dump "$T" dump --buffer nope tests/data/trace-dat/sched-v7-zstd.dat
[ $rc = 2 ] && grep -q "sched-v7-zstd.dat has no buffer 'nope'" "$tmp/dump.err"; check $? "dump --buffer of no buffer: said, exit 2 (got $rc)"
run dump "$T" dump --cpu 99 tests/data/trace-dat/sched-v7-zstd.dat
[ $rc = 2 ] && grep -q "sched-v7-zstd.dat has no CPU 99" "$tmp/dump.err"; check $? "dump --cpu of no CPU: said, exit 2 (got $rc)"
run dump "$T" dump --buffer dat tests/data/trace-dat/sched-v7-zstd.dat
[ $rc = 0 ] && grep -q '^buffer "dat" CPU 1:' "$tmp/dump.out"; check $? "dump --buffer dat: that buffer's pages (got $rc)"

# Output that cannot be written is an error: list, stats, size, hist... printed
# into a full disk and exited 0.
if [ -w /dev/full ]; then
	for c in "list -c $bad/record-crossing" "stats tests/data/kernel/cap-b-overrun" "size 8" \
		 "report --count tests/data/kernel/cap-b-overrun" "hist -e ftrace:print keys=common_pid $bad/raw-partial"; do
		name=${c%% *}
		$T $c > /dev/full 2> "$tmp/full.err"; rc=$?
		[ $rc -ne 0 ] && grep -q "^tracebuf $name: writing standard output: No space left on device" "$tmp/full.err"
		check $? "$c > /dev/full: said, exit non-zero (got $rc)"
	done
else
	echo "# skipped: no writable /dev/full"
fi

echo "1..$n"
exit $fail
