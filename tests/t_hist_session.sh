#!/bin/sh
# tracebuf hist --session: a running `tracebuf record` session's ring as the
# hist's source, read without consuming it.  The program traced is
# examples/recorded (N app:tick per process, n = 0..N-1, worker = process
# number), so the exact counts are known from its contract, and
# `tracebuf snapshot` + `tracebuf report` of the same ring is the second,
# independent count.  No root or tracefs needed.
B=${TB_BUILD:-build}
TB=$B/tracebuf
P=$B/examples/recorded
tmp=$(mktemp -d /tmp/tb-hist-session-XXXXXX)
shm=/dev/shm/tb-t-hist-session-$$
trap '[ -n "$KEEP" ] || rm -rf "$tmp"; rm -rf "$shm" "$shm.formats"' EXIT INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
# "worker hitcount sum" per entry of a keys=worker:vals=n hist ($1), in order; $2: which print (default 1).
entries() { awk -v k="${2:-1}" '/^# event histogram/ { p++ } p == k' "$1" |
	sed -n 's/^{ worker: *\([0-9]*\) } hitcount: *\([0-9]*\) *n: *\([0-9]*\)$/\1 \2 \3/p'; }

# 1. a finished flight recorder: every event still in its ring
$TB record --flight-recorder --shm "$shm" -b 4096 -e 'app:*' -o "$tmp/f.dat" -- $P 3000 2 2> "$tmp/rec.err"
check $? "record --flight-recorder of three processes"
$TB hist --session -e app:tick 'keys=worker:vals=n:sort=worker' "$shm" > "$tmp/h1" 2> "$tmp/h1.err"
check $? "hist --session over the kept ring exits 0"
# n = 0..2999 for each worker: 3000 hits summing to 3000 * 2999 / 2
printf '0 3000 4498500\n1 3000 4498500\n2 3000 4498500\n' > "$tmp/want"
entries "$tmp/h1" | cmp -s - "$tmp/want"; check $? "each worker: 3000 ticks, n summing to 0 + ... + 2999"
$TB snapshot "$shm" -o "$tmp/snap.dat" 2> /dev/null && $TB report "$tmp/snap.dat" > "$tmp/snap.txt" 2>&1
sed -n 's/.*tick: *n=\([0-9]*\) worker=\([0-9]*\).*/\2 \1/p' "$tmp/snap.txt" |
	awk '{ c[$1]++; s[$1] += $2 } END { for (w in c) print w, c[w], s[w] }' | sort -n > "$tmp/snapcount"
[ -s "$tmp/snapcount" ] && entries "$tmp/h1" | cmp -s - "$tmp/snapcount"
check $? "the same counts and sums as the snapshot's report of the ring"
$TB report "$tmp/f.dat" > /dev/null 2>&1 && cmp -s "$tmp/h1" "$(
	$TB hist -e app:tick 'keys=worker:vals=n:sort=worker' "$tmp/f.dat" > "$tmp/hf" 2>/dev/null; echo "$tmp/hf")"
check $? "the same hist as over record's own trace.dat"

# 1b. time values of an x86-tsc recording (record's default clock): the
# trace.dat's TSC2NSEC makes ns of the cycles, as `report` prints them
# (seconds.microseconds: the oracle), and the session's ring gives the same
# ns by its own calibration.  Each (worker, n) is one record: its time is
# the sum of common_timestamp over one hit.
TS='keys=worker,n:vals=common_timestamp:sort=worker,n:size=16384'
$TB hist -e app:tick "$TS" "$tmp/f.dat" > "$tmp/ts" 2>&1
sed -n 's/^{ worker: *\([0-9]*\), n: *\([0-9]*\) } hitcount: *1 *common_timestamp: *\([0-9]*\)$/\1 \2 \3/p' "$tmp/ts" |
	sort > "$tmp/ts.ns"
$TB report "$tmp/f.dat" 2>/dev/null |
	sed -n 's/.* \([0-9]*\)\.\([0-9]\{6\}\): *tick: *n=\([0-9]*\) worker=\([0-9]*\).*/\4 \3 \1\2/p' | sort > "$tmp/ts.us"
# the report's microseconds are the ns / 1000, rounded (as the kernel's text) or cut
awk '{ print $1 "-" $2, $3 }' "$tmp/ts.ns" | sort > "$tmp/ts.ns.k"
awk '{ print $1 "-" $2, $3 }' "$tmp/ts.us" | sort > "$tmp/ts.us.k"
join "$tmp/ts.ns.k" "$tmp/ts.us.k" |
	awk '{ if (int(($2 + 500) / 1000) == $3 + 0) r++; if (int($2 / 1000) == $3 + 0) c++ }
	     END { exit !(NR == 9000 && (r == NR || c == NR)) }'
check $? "common_timestamp of an x86-tsc trace.dat: ns by its TSC2NSEC, the report's times for all 9000 ticks"
$TB hist --session -e app:tick "$TS" "$shm" 2>/dev/null | cmp -s - "$tmp/ts"
check $? "the same ns over the session's ring, by the ring's calibration"
$TB hist -e app:tick 'keys=common_timestamp.usecs:sort=common_timestamp:size=16384' "$tmp/f.dat" 2>/dev/null |
	sed -n 's/^{ common_timestamp: *\([0-9]*\) } hitcount: *\([0-9]*\)$/\1 \2/p' > "$tmp/us.got"
awk '{ printf "%.0f\n", int(($3 + 500) / 1000) }' "$tmp/ts.ns" | sort -n | uniq -c | awk '{ print $2, $1 }' > "$tmp/us.want"
[ -s "$tmp/us.want" ] && cmp -s "$tmp/us.got" "$tmp/us.want"
check $? ".usecs keys: the ns rounded to microseconds, hits per microsecond as those ns say"

# 2. live: a program still writing (about 4 s: a 1 ms pause every 100 ticks),
# the hist printed three times a second apart; the ring holds every tick
rm -rf "$shm" "$shm.formats"
$TB record --flight-recorder --shm "$shm" -b 32768 -e 'app:*' -o "$tmp/g.dat" -- $P 400000 0 --slow 2> "$tmp/g.err" &
rpid=$!
# Until the ring holds a tick (the flight recorder keeps them): the first print has some; 30 s at most.
i=0; until [ -n "$($TB hist --session -e app:tick 'keys=worker' "$shm" 2>/dev/null | grep 'hitcount: *[1-9]')" ] ||
	[ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done
$TB hist --session --live --refreshes 3 -e app:tick 'keys=worker:vals=n' "$shm" > "$tmp/live" 2> "$tmp/live.err"
check $? "hist --session --live --refreshes 3 exits 0"
wait $rpid
[ "$(grep -c '^# event histogram' "$tmp/live")" = 3 ]; check $? "three prints"
set -- $(entries "$tmp/live" 1) x $(entries "$tmp/live" 2) x $(entries "$tmp/live" 3)
h1=$2 s1=$3 h2=$6 s2=$7 h3=${10} s3=${11}
echo "# hits per print: $h1 $h2 $h3"
[ "${h1:-0}" -gt 0 ] && [ "${h2:-0}" -gt "$h1" ] && [ "${h3:-0}" -gt "$h2" ]
check $? "the counts grow from print to print ($h1, $h2, $h3)"
# Every print counts ticks 0..h-1 each once: h hits summing to h(h-1)/2 (none twice, none skipped).
ok=0
for p in "$h1 $s1" "$h2 $s2" "$h3 $s3"; do
	set -- $p
	[ -n "$2" ] && [ "$(awk -v h="$1" 'BEGIN { printf "%.0f", h * (h - 1) / 2 }')" = "$2" ] || ok=1
done
[ $ok = 0 ] || echo "# hits and sums per print: $h1 $s1, $h2 $s2, $h3 $s3 (errors: $(head -c 300 "$tmp/live.err"))" >&2
check $ok "each print holds ticks n = 0..hits-1, each once (the sums are hits(hits-1)/2)"
$TB hist --session -e app:tick 'keys=worker:vals=n' "$shm" > "$tmp/end" 2>/dev/null
[ "$(entries "$tmp/end")" = "0 400000 79999800000" ]
check $? "after the program ended: all 400000 ticks ($(entries "$tmp/end"))"

# 3. what is said when it cannot be read
$TB hist --session -e app:tick 'keys=worker' "$tmp/none" 2> "$tmp/err" > /dev/null; rc=$?
[ $rc = 3 ] && grep -q "cannot read the session $tmp/none" "$tmp/err"; check $? "no such session: exit 3, said"
$TB hist --session -e app:nosuch 'keys=worker' "$shm" 2> "$tmp/err" > /dev/null; rc=$?
[ $rc = 1 ] && grep -q "has no event app:nosuch" "$tmp/err"; check $? "an event the session has not described: exit 1, said"
# live, an event no process has described (yet): each refresh looks again, said once; at the end, exit 1
$TB hist --session --live --refreshes 3 --interval 0.1 -e app:nosuch 'keys=worker' "$shm" 2> "$tmp/err" > "$tmp/out"; rc=$?
[ $rc = 1 ] && [ "$(grep -c 'no process has described app:nosuch yet; each refresh looks again' "$tmp/err")" = 1 ] &&
	grep -q "has no event app:nosuch" "$tmp/err" && ! grep -q 'event histogram' "$tmp/out"
check $? "live, an event not described: waits through the refreshes (said once), then exit 1, said, no hist"
[ $fail = 0 ] || sed 's/^/# /' "$tmp/h1.err" "$tmp/live.err"
echo "1..$n"
exit $fail
