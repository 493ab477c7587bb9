#!/bin/sh
# tracebuf record / snapshot / recover: a program linked with libtracebuf
# (examples/recorded.c: N app:tick per process, n = 0..N-1, then app:done)
# traced from outside through a ring in shared memory.  Expectations come
# from the program's contract and the real trace-cmd reads every file.
B=${TB_BUILD:-build}
TB=$B/tracebuf
P=$B/examples/recorded
tmp=$(mktemp -d /tmp/tb-record-XXXXXX)
shm=/dev/shm/tb-t-record-$$
trap 'rm -rf "$tmp" "$shm" "$shm.formats"' EXIT INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
have_tcmd=0; command -v trace-cmd >/dev/null 2>&1 && have_tcmd=1

# Every worker's n values: "worker count first last" lines, sorted by worker.
ticks() { sed -n 's/.*tick: *n=\([0-9]*\) worker=\([0-9]*\).*/\2 \1/p' "$1" |
	awk '{c[$1]++; if (!($1 in lo) || $2 < lo[$1]) lo[$1] = $2; if ($2 > hi[$1]) hi[$1] = $2}
	     END {for (w in c) print w, c[w], lo[w], hi[w]}' | sort -n; }
# Whether each worker's n values only grow (a window that lost pages may skip some: a worker that
# migrated has its older events on a CPU whose window reaches further back; never a repeat, never back).
increasing() { sed -n 's/.*tick: *n=\([0-9]*\) worker=\([0-9]*\).*/\2 \1/p' "$1" |
	awk '($1 in last) && $2 <= last[$1] {bad = 1} {last[$1] = $2} END {exit bad}'; }
# Whether each worker's n values rise by one from line to line (nothing lost).
contiguous() { sed -n 's/.*tick: *n=\([0-9]*\) worker=\([0-9]*\).*/\2 \1/p' "$1" |
	awk '($1 in last) && $2 != last[$1] + 1 {bad = 1} {last[$1] = $2} END {exit bad}'; }

# 1. drained: three processes, every event, both readers agree
$TB record -e 'app:*,ftrace:*' -o "$tmp/a.dat" -- $P 2000 2 --printf > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc = 0 ] && grep -q '^tracebuf record: session /proc/[0-9]*/fd/[0-9]* (drained' "$tmp/err"
check $? "record exits 0 and prints the session's path (a memfd)"
$TB report "$tmp/a.dat" > "$tmp/a.txt" 2>&1
printf '0 2000 0 1999\n1 2000 0 1999\n2 2000 0 1999\n' | cmp -s - "$(ticks "$tmp/a.txt" > "$tmp/t"; echo "$tmp/t")"
check $? "tracebuf report: every tick of the parent and both children, n = 0..1999 each"
[ "$(grep -c 'done: *worker=[0-2] count=2000' "$tmp/a.txt")" = 3 ] &&
	[ "$(grep -c 'worker [0-2] finished' "$tmp/a.txt")" = 3 ] && contiguous "$tmp/a.txt"
check $? "the three app:done and three tb_printf lines; each worker's ticks in order"
[ "$(sed -n 's/^ *recorded-\([0-9]*\) .*/\1/p' "$tmp/a.txt" | sort -u | wc -l)" = 3 ]
check $? "three processes wrote into the one ring"
grep -q 'lost 0 ' "$tmp/err" && ! grep -q 'LOST\|DROPPED' "$tmp/a.txt"
check $? "nothing lost, and the summary says so"
if [ $have_tcmd = 1 ]; then
	trace-cmd report "$tmp/a.dat" > "$tmp/a.tcmd" 2>/dev/null
	check $? "trace-cmd report reads the file"
	grep -v '^cpus=' "$tmp/a.tcmd" | grep -v '^ *$' > "$tmp/x"; grep -v '^cpus=' "$tmp/a.txt" | grep -v '^ *$' > "$tmp/y"
	cmp -s "$tmp/x" "$tmp/y"
	check $? "trace-cmd report prints the same event lines as tracebuf report"
else
	n=$((n+2)); echo "ok $((n-1)) # skip trace-cmd not installed"; echo "ok $n # skip trace-cmd not installed"
fi
# Two unrelated programs in one session: each declares its own events, so
# IDs handed out per process would collide (both start at the same number);
# the session's shared ID table keeps every record its own event's.
$TB record -o "$tmp/both.dat" -- sh -c "$B/examples/recorded_peer 700 & $P 600; wait" > /dev/null 2> "$tmp/both.err" &&
	$TB report "$tmp/both.dat" > "$tmp/both.txt" 2>&1 && ! grep -q disagree "$tmp/both.err" &&
	[ "$(grep -c ' send: *seq=[0-9]* bytes=' "$tmp/both.txt")" = 700 ] &&
	[ "$(grep -c ' tick: *n=[0-9]* worker=0' "$tmp/both.txt")" = 600 ] &&
	grep -q ' closed: *sent=700$' "$tmp/both.txt" && grep -q ' done: *worker=0 count=600$' "$tmp/both.txt"
check $? "two unrelated programs in one session: every record read as its own event (700 send, 600 tick)"
# x86-tsc (the default clock) counts cycles: the file's TSC2NSEC option makes
# seconds of them for every reader.  --slow pauses 1 ms after every 100th of
# 1000 ticks, so the first and last tick lie 9 ms to a few seconds apart;
# raw cycle counts printed as time would put them millions of units apart.
$TB record -e 'app:tick' -o "$tmp/slow.dat" -- $P 1000 0 --slow > /dev/null 2>&1 &&
	$TB report "$tmp/slow.dat" > "$tmp/slow.txt" 2>&1 &&
	sed -n 's/.*\] *\([0-9.]*\): tick:.*/\1/p' "$tmp/slow.txt" |
	awk 'NR == 1 {first = $1} {last = $1} END {exit !(NR == 1000 && last - first >= 0.009 && last - first < 5)}'
check $? "x86-tsc: the ticks' times are seconds (TSC2NSEC): 1000 ticks, 9 ms to 5 s apart"
if [ $have_tcmd = 1 ]; then
	trace-cmd report "$tmp/slow.dat" 2>/dev/null | grep -v '^cpus=' | grep -v '^ *$' > "$tmp/x"
	grep -v '^cpus=' "$tmp/slow.txt" | grep -v '^ *$' | cmp -s "$tmp/x" -
	check $? "x86-tsc: trace-cmd report prints the same times"
else
	n=$((n+1)); echo "ok $n # skip trace-cmd not installed"
fi

# 2. permissions: 0600, or 0660 with the group named
$TB record -o "$tmp/p.dat" -- sh -c 'stat -L -c "%a %g" "$TRACEBUF_SHM"' > "$tmp/perm" 2>/dev/null
grep -qx "600 $(id -g)" "$tmp/perm"; check $? "the shared memory is mode 0600 for the creator"
$TB record --group "$(id -gn)" -o "$tmp/p.dat" -- sh -c 'stat -L -c "%a %g" "$TRACEBUF_SHM"' > "$tmp/perm" 2>/dev/null
grep -qx "660 $(id -g)" "$tmp/perm"; check $? "--group G: mode 0660, group G"
$TB record --group no-such-group-tb -o "$tmp/p.dat" -- true 2> "$tmp/err"
[ $? = 2 ] && grep -q "no group 'no-such-group-tb'" "$tmp/err"; check $? "--group with an unknown group: exit 2, says why"

# 3. a program without libtracebuf: a valid, empty file and a warning
$TB record -o "$tmp/e.dat" -- true 2> "$tmp/err"; rc=$?
[ $rc = 0 ] && grep -q 'described no events' "$tmp/err" && $TB report "$tmp/e.dat" > /dev/null 2>&1
check $? "record of a program without libtracebuf: warns, writes a valid file"

# 4. SIGTERM in the middle: a valid file, and the books balance exactly
$TB record -e 'app:tick' -o "$tmp/s.dat" -- $P 4000000000 1 --slow > /dev/null 2> "$tmp/err" &
rpid=$!
# Until the forked worker (a child of the program, so its counts start at its fork) has
# paused once: --slow sleeps after each 100 ticks, so it fired some; 30 s at most.
paused() { prog=$(pgrep -x -P $rpid recorded | head -n 1); [ -n "$prog" ] || return 1
	kid=$(pgrep -P "$prog" | head -n 1); [ -n "$kid" ] || return 1
	v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$kid/status 2>/dev/null); [ "${v:-0}" -gt 0 ]; }
i=0; until paused || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
kill -TERM $rpid; wait $rpid; rc=$?
$TB report "$tmp/s.dat" > "$tmp/s.txt" 2>&1; rrc=$?
# record's status is the program's: 128 + 15 when SIGTERM ended it, its own exit status otherwise
want=$(sed -n 's/.*killed by signal \([0-9]*\)$/\1/p; s/.*exited with status \([0-9]*\)$/\1/p' "$tmp/err")
grep -q 'killed by signal' "$tmp/err" && want=$((128 + want))
[ -n "$want" ] && [ $rc = "$want" ] && [ $rrc = 0 ]
check $? "SIGTERM: record stops the program, writes a file that reads back, exits with the program's status"
lost=$(sed -n 's/.*; lost \([0-9]*\) .*/\1/p' "$tmp/err")
ticks "$tmp/s.txt" | awk -v lost="$lost" '{have += $2; want += $4 + 1} END {exit !(have > 0 && have + lost == want)}'
check $? "SIGTERM: events in the file + lost = every tick each worker fired (last n + 1)"

# 5. flight recorder: overwrite, no drain; recover gives the same window
rm -rf "$shm" "$shm.formats"
$TB record --flight-recorder --shm "$shm" -b 16 -e 'app:*' -o "$tmp/f.dat" -- $P 20000 1 2> "$tmp/err"
$TB report "$tmp/f.dat" > "$tmp/f.txt" 2>&1
ev=$(sed -n 's/^tracebuf record: \([0-9]*\) events.*/\1/p' "$tmp/err")
lost=$(sed -n 's/.*; lost \([0-9]*\) .*/\1/p' "$tmp/err")
[ -n "$ev" ] && [ $((ev + lost)) = 40002 ] && [ "$(grep -c 'tick:\|done:' "$tmp/f.txt")" = "$ev" ]
check $? "flight recorder: window events + lost before = all 40002, the file holds the window"
grep -q 'done: *worker=[01] count=20000' "$tmp/f.txt" && grep -q 'n=19999 worker=[01]' "$tmp/f.txt" &&
	increasing "$tmp/f.txt"
check $? "flight recorder: the newest events are the ones kept, in order"
$TB recover "$shm" -o "$tmp/r.dat" 2> "$tmp/rerr"; rc=$?
$TB report "$tmp/r.dat" > "$tmp/r.txt" 2>&1
[ $rc = 0 ] && cmp -s "$tmp/f.txt" "$tmp/r.txt" && grep -q "$ev events in .* $lost lost before" "$tmp/rerr" &&
	grep -q '^tracebuf recover: 0 writes in flight' "$tmp/rerr"
check $? "recover of the kept file: the same events, the same counts, 0 in flight"

# 6. snapshot while the writers run
rm -rf "$shm" "$shm.formats"
$TB record --flight-recorder --shm "$shm" -b 64 -e 'app:*' -o "$tmp/g.dat" -- $P 4000000000 1 --slow 2>/dev/null &
rpid=$!
# Until the ring holds a tick (the flight recorder keeps them); 30 s at most.
i=0; until [ -n "$($TB hist --session -e app:tick 'keys=worker' "$shm" 2>/dev/null | grep 'hitcount: *[1-9]')" ] ||
	[ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
$TB snapshot "$shm" -o "$tmp/snap.dat" 2> "$tmp/serr"; rc=$?
kill -TERM $rpid; wait $rpid
$TB report "$tmp/snap.dat" > "$tmp/snap.txt" 2>&1; rrc=$?
ev=$(sed -n 's/.*snap.dat: \([0-9]*\) events.*/\1/p' "$tmp/serr")
[ $rc = 0 ] && [ $rrc = 0 ] && [ -n "$ev" ] && [ "$ev" -gt 0 ] && [ "$(grep -c 'tick:' "$tmp/snap.txt")" = "$ev" ]
rc6=$?
check $rc6 "snapshot of a live flight recorder: exit 0, the events it counts are the file's"
[ $rc6 = 0 ] || { echo "# snapshot exit $rc, report exit $rrc, said $ev events, $(grep -c 'tick:' "$tmp/snap.txt") tick lines:"; sed 's/^/# /' "$tmp/serr"; grep -v 'tick:' "$tmp/snap.txt" | head -5 | sed 's/^/# /'; } >&2
increasing "$tmp/snap.txt"; check $? "snapshot: each worker's ticks in order, none repeated or torn"
if [ $have_tcmd = 1 ]; then
	trace-cmd report "$tmp/snap.dat" > /dev/null 2>&1; check $? "trace-cmd report reads the snapshot"
else
	n=$((n+1)); echo "ok $n # skip trace-cmd not installed"
fi

# 7. a process killed by SIGKILL in the middle of its writes (demo --crash), recovered
rm -rf "$shm" "$shm.formats"
$B/examples/demo --crash "$shm" > /dev/null 2>&1; rc=$?
$TB recover "$shm" -o "$tmp/c.dat" 2> "$tmp/cerr"; rrc=$?
$TB report --like-kernel "$tmp/c.dat" > "$tmp/c.txt" 2>&1
ev=$(sed -n 's/.*c.dat: \([0-9]*\) events.*/\1/p' "$tmp/cerr")
[ $rc = 137 ] && [ $rrc = 0 ] && [ -n "$ev" ] && [ "$(grep -c ' request: \| lookup: \|^CPU:[0-9]* \[BLOB: ' "$tmp/c.txt")" = "$ev" ] &&
	grep -q 'LOST [0-9]* EVENTS' "$tmp/c.txt" && grep -q '^tracebuf recover: \(at least \)\?[0-9]* writes\? in flight' "$tmp/cerr"
check $? "demo --crash dies by SIGKILL; recover: its events, the LOST lines, the in-flight count"
ids=$(sed -n 's/.*request: worker=\([0-9]*\) id=\([0-9]*\).*/\1 \2/p' "$tmp/c.txt" |
	awk '($1 in last) && $2 != last[$1] + 1 {bad = 1} {last[$1] = $2} END {print bad + 0}')
[ "$ids" = 0 ]; check $? "demo --crash: each worker's recovered requests in order, none torn or missing inside the window"

# 8. bad input: clear errors naming the file
printf 'not a ring at all, just some bytes that are long enough to be read as a header...%0500d' 0 > "$tmp/junk"
$TB recover "$tmp/junk" -o "$tmp/j.dat" 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "$tmp/junk: offset 0: not a usable tracebuf region: bad magic" "$tmp/err"
check $? "recover of a file that is not a ring: exit 3, names the file, offset and field"
$TB snapshot "$tmp/junk" -o "$tmp/j.dat" 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "$tmp/junk: offset 0: .*bad magic" "$tmp/err"
check $? "snapshot of it: the same"
$TB recover "$tmp/nosuch" -o "$tmp/j.dat" 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "$tmp/nosuch: No such file" "$tmp/err"
check $? "recover of a missing file: exit 3, says why"

# 9. a --shm file shrunk under its reader (a named file cannot be sealed): an error, not SIGBUS
rm -rf "$shm" "$shm.formats"
$TB record --shm "$shm" -e 'app:*' -o "$tmp/shrunk.dat" -- sh -c "$P 1000 0 > /dev/null; truncate -s 4096 $shm; sleep 0.2" \
	2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "^tracebuf record: $shm: the file shrank to 4096 bytes while it was read" "$tmp/err" &&
	[ ! -e "$tmp/shrunk.dat" ]
r=$?; check $r "record: the program truncates the session's file; record's drain says so and exits 3 (its input unreadable, as snapshot of it), no SIGBUS"
[ $r = 0 ] || { echo "# exit $rc; its messages:"; sed 's/^/#   /' "$tmp/err"; }
$TB snapshot "$shm" -o "$tmp/shrunk.dat" 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "$shm: offset 0: not a usable tracebuf region: region larger than the file" "$tmp/err"
check $? "snapshot of the shrunk file: exit 3, names it and why"

echo "1..$n"
exit $fail
