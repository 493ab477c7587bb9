#!/bin/sh
# Damaged input met by the subcommands that do not print text: each must say
# what it skipped, naming the file and byte, and exit non-zero, never count or
# draw short in silence.  Found by mutating real files (truncations, flipped
# bytes, hostile sizes) under ASan; each case here was a bug.
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
run() { name=$1; shift; "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; rc=$?; }

crossing="$bad/record-crossing/cpu0.raw: byte 4012: record crosses the end of data; rest of the sub-buffer skipped"

# list -c counted the records of a damaged sub-buffer's readable part and said nothing.
run list "$T" list -c "$bad/record-crossing"
[ $rc = 1 ]; check $? "list -c on a damaged capture exits 1 (got $rc)"
grep -qF "$crossing" "$tmp/list.err"; check $? "list -c names the file, byte and damage"
[ "$(cat "$tmp/list.out")" = "148 ftrace:print" ]; check $? "list -c counts the 148 readable events"

"$T" convert "$bad/record-crossing" -o "$tmp/crossing.dat" 2> /dev/null
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

echo "1..$n"
exit $fail
