#!/bin/sh
# tracebuf hist --attach PID|SHMFILE: the hists attached in a running
# program (tb_hist_attach), read from outside through their shared-memory
# regions.  The program is examples/fourways --hold FILE: its threads serve
# their requests, are joined (the writers stopped), then it writes its own
# tb_hist_print_attached text to FILE and waits; the CLI's text must be the
# same, byte for byte, with 1, 2 and 8 threads, with and without a
# `tracebuf record` session.  --live prints N times; errors are said with
# the CLI table's exit codes.  No root or tracefs needed.
B=${TB_BUILD:-build}
TB=$B/tracebuf
P=$B/examples/fourways
[ -x "$P" ] || { echo "1..0 # SKIP $P not built"; exit 0; }
tmp=$(mktemp -d /tmp/tb-hist-attach-XXXXXX)
shm=/dev/shm/tb-t-hist-attach-$$
pids=
trap '[ -n "$pids" ] && kill $pids 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$tmp"; rm -rf "$shm" "$shm.formats"' EXIT
trap 'exit 1' INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
# wait for the program's hold file ($1): its threads are done
held() { for i in $(seq 300); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }

for t in 1 2 8; do
	$P $t 3000 --hold "$tmp/in$t" > "$tmp/out$t" 2>&1 &
	pid=$!; pids="$pids $pid"
	held "$tmp/in$t"; check $? "$t threads: the program holds, its text written"
	$TB hist --attach $pid > "$tmp/cli$t" 2> "$tmp/cli$t.err"
	check $? "$t threads: hist --attach $pid exits 0 $(head -c 200 "$tmp/cli$t.err")"
	cmp -s "$tmp/in$t" "$tmp/cli$t"; check $? "$t threads: the text equals the program's tb_hist_print_attached"
	grep -q "Hits: $((t * 3000))\$" "$tmp/cli$t"; check $? "$t threads: Hits: $((t * 3000))"
	if [ $t = 2 ]; then
		$TB hist --attach $pid --live --refreshes 3 --interval 10ms > "$tmp/live" 2>&1
		check $? "--live --refreshes 3 exits 0"
		[ "$(grep -c '^# event histogram' "$tmp/live")" = 3 ]; check $? "--live prints 3 times"
		$TB hist --attach $pid -e request > "$tmp/e" 2>&1 && cmp -s "$tmp/e" "$tmp/in$t"
		check $? "-e EVENT picks the hist by its name"
		$TB hist --attach $pid -e app:nosuch > "$tmp/e" 2> "$tmp/e.err"; rc=$?
		[ $rc = 3 ] && grep -q "has no hist attached to app:nosuch" "$tmp/e.err"
		check $? "-e an event with no hist: exit 3 ($rc), said: $(cat "$tmp/e.err")"
	fi
	kill $pid; wait $pid; check $? "$t threads: the program ends on SIGTERM"
	grep -q "1. tracebuf's ring: $((t * 3000)) records" "$tmp/out$t"; check $? "$t threads: its ring has them all too"
	pids=
done

# A session: SHMFILE finds the session's processes (their descriptions beside it).
$TB record --shm "$shm" -e app:request -o "$tmp/s.dat" -- $P 2 1000 --hold "$tmp/ins" > "$tmp/rec.out" 2>&1 &
rec=$!; pids=$rec
held "$tmp/ins"; check $? "under record --shm: the program holds"
$TB hist --attach "$shm" > "$tmp/clis" 2> "$tmp/clis.err"
check $? "hist --attach SHMFILE exits 0 $(head -c 200 "$tmp/clis.err")"
cmp -s "$tmp/ins" "$tmp/clis"; check $? "hist --attach SHMFILE: the program's own text"
kill $(ls "$shm.formats" | grep -x '[0-9]*'); wait $rec; check $? "record ends with the program"
$TB hist --attach "$shm" > /dev/null 2> "$tmp/gone.err"; rc=$?
[ $rc = 3 ] && grep -q "no process of the session runs now" "$tmp/gone.err"
check $? "a session whose program ended: exit 3 ($rc): $(cat "$tmp/gone.err")"
pids=

# A damaged region, and one not sealed: a process (python) holding a memfd of the region's name.
fake() { # $1: seal or not, $2: what to write; prints the pid, holds until killed
	python3 -c '
import fcntl, os, sys, time
fd = os.memfd_create("tracebuf-hist:app:request", os.MFD_ALLOW_SEALING)
os.write(fd, bytes.fromhex(sys.argv[2]) + bytes(4096))
if sys.argv[1] == "seal":
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
print(os.getpid(), flush=True)
time.sleep(60)' "$1" "$2" > "$tmp/fake.pid" &
	held "$tmp/fake.pid"; cat "$tmp/fake.pid"; rm -f "$tmp/fake.pid"
}
if command -v python3 > /dev/null && python3 -c 'import fcntl; fcntl.F_ADD_SEALS' 2> /dev/null; then
	fp=$(fake seal 5442484953545200020000006000); pids="$fp"
	$TB hist --attach "$fp" > /dev/null 2> "$tmp/err"; rc=$?
	[ $rc = 3 ] && grep -q "/proc/$fp/fd/[0-9]* (memfd:tracebuf-hist:app:request.*): byte 8: version 2" "$tmp/err"
	check $? "a damaged region: exit 3 ($rc), the file and byte named: $(cat "$tmp/err")"
	kill $fp
	fp=$(fake open 5442484953545200); pids="$fp"
	$TB hist --attach "$fp" > /dev/null 2> "$tmp/err"; rc=$?
	[ $rc = 3 ] && grep -q "not sealed against shrinking" "$tmp/err"
	check $? "a region not sealed (it could shrink under the reader): exit 3 ($rc): $(cat "$tmp/err")"
	kill $fp; pids=
else
	n=$((n+2)); echo "ok $((n-1)) # SKIP python3 with fcntl.F_ADD_SEALS"; echo "ok $n # SKIP the same"
fi

# Errors: the CLI table's codes (docs/cli.md), each said.
$TB hist --attach $$ > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "process $$ has no hist attached" "$tmp/err"
check $? "a process without hists: exit 3 ($rc): $(cat "$tmp/err")"
sh -c 'exit 0' & gone=$!; wait $gone
$TB hist --attach $gone > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "no such process" "$tmp/err"; check $? "a process that is gone: exit 3 ($rc)"
$TB hist --attach "$tmp/nothing" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "neither a PID nor a session" "$tmp/err"; check $? "a path that does not exist: exit 3 ($rc)"
: > "$tmp/plain"
$TB hist --attach "$tmp/plain" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "not a session" "$tmp/err"; check $? "a file that is no session: exit 3 ($rc)"
$TB hist --attach 1 keys=x > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "takes no SPEC" "$tmp/err"; check $? "--attach with a SPEC: usage, exit 2 ($rc)"

# The demo of one event four ways (scripts/fourways.sh, in `make run`): every way counts 10000.
B="$B" sh scripts/fourways.sh > "$tmp/four" 2>&1
check $? "scripts/fourways.sh runs"
grep -q "^1. tracebuf's ring: 10000 records; route 0..4: 2000 2000 2000 2000 2000" "$tmp/four" &&
	grep -q "Hits: 10000" "$tmp/four" && grep -q "hist --attach .*: the same text" "$tmp/four"
check $? "fourways: the ring and the attached hist count 10000, read from outside the same"
if grep -q "^3. bpftrace on" "$tmp/four"; then
	grep -q "^3. bpftrace on .*route 0..4: 2000 2000 2000 2000 2000; bytes 3000000" "$tmp/four"
	check $? "fourways: bpftrace on the USDT probe counts the same"
else
	n=$((n+1)); echo "ok $n # SKIP bpftrace: $(grep '^3\.' "$tmp/four")"
fi
if grep -q "^4. trace-cmd report" "$tmp/four"; then
	grep -q "^4. trace-cmd report .*: 10000 records; route 0..4: 2000 2000 2000 2000 2000" "$tmp/four"
	check $? "fourways: trace-cmd reads the 10000 in record's trace.dat"
else
	n=$((n+1)); echo "ok $n # SKIP trace-cmd not installed"
fi
[ $fail = 0 ] || sed 's/^/# /' "$tmp/four"

echo "1..$n"
exit $fail
