#!/bin/sh
# tracebuf record: the recording is whole and record follows the program
# (issue 23 items 4-8, 11, 12).  examples/recorded fires app:tick N times per
# worker (processes, or with --threads threads named tick-worker-N), then
# app:done; every expectation comes from that contract, the kernel's pid
# rules or the program's own pid, never from a run's luck.  The kernel parts
# skip cleanly without tracefs or root.
B=${TB_BUILD:-build}
TB=$B/tracebuf
P=$B/examples/recorded
tmp=$(mktemp -d /tmp/tb-record-whole-XXXXXX)
shm=/dev/shm/tb-t-record-whole-$$
trap 'rm -rf "$tmp" "$shm" "$shm.formats"' EXIT INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
skip() { n=$((n+1)); echo "ok $n # skip $1"; }
have_tcmd=0; command -v trace-cmd >/dev/null 2>&1 && have_tcmd=1
# Until file $1 exists: 30 s at most.
wait_for() { i=0; until [ -e "$1" ] || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done; [ -e "$1" ]; }

# 1. the program's exit status, as time and perf record give it
$TB record -o "$tmp/s0.dat" -- sh -c 'exit 0' 2>/dev/null; a=$?
$TB record -o "$tmp/s3.dat" -- sh -c 'exit 3' 2>/dev/null; b=$?
$TB record -o "$tmp/s9.dat" -- sh -c 'kill -KILL $$' 2>/dev/null; c=$?
[ $a = 0 ] && [ $b = 3 ] && [ $c = 137 ] && [ -s "$tmp/s3.dat" ] && [ -s "$tmp/s9.dat" ]
check $? "exit status: 0, 3, and 128+9 for a program killed by SIGKILL ($a $b $c); the file written each time"
$TB record -o "$tmp/s.dat" -- "$tmp/no-such-program" 2>/dev/null; a=$?
[ $a = 3 ] && [ ! -e "$tmp/s.dat" ]; check $? "a program that cannot run: exit 3 (docs/cli.md), nothing written (got $a)"

# 2. thread names without --kernel: the threads end before most drains (the main thread
# writes first and keeps its slot of the thread table; the two workers' slots name both)
$TB record -o "$tmp/t.dat" -- $P 300 2 --threads > /dev/null 2>&1
$TB report "$tmp/t.dat" > "$tmp/t.txt" 2>&1
for w in 1 2; do
	# every tick of worker w shows its thread's name
	[ "$(grep -c "^ *tick-worker-$w-[0-9]* .* tick: *n=[0-9]* worker=$w$" "$tmp/t.txt")" = 300 ] || echo bad
done > "$tmp/t.bad"
[ ! -s "$tmp/t.bad" ] && ! grep -q '<\.\.\.>' "$tmp/t.txt" && [ "$(grep -c 'tick:' "$tmp/t.txt")" = 900 ]
check $? "names: each worker thread's 300 ticks show its name (tick-worker-N), no <...>"
if [ $have_tcmd = 1 ]; then
	trace-cmd report "$tmp/t.dat" 2>/dev/null | grep -v '^cpus=' > "$tmp/t.tcmd"
	grep -v '^cpus=' "$tmp/t.txt" | cmp -s - "$tmp/t.tcmd"
	check $? "names: trace-cmd report shows the same lines (its saved cmdlines)"
else
	skip "trace-cmd not installed"
fi

# the flight recorder (no drain meets the threads) and recover of its file: names from the table
$TB record --flight-recorder --shm "$shm" -o "$tmp/fr.dat" -- $P 300 2 --threads > /dev/null 2>&1
$TB recover "$shm" -o "$tmp/rc.dat" > /dev/null 2>&1
for f in fr rc; do
	$TB report "$tmp/$f.dat" 2>&1 | awk '/ tick: / {split($1, a, "-"); w = $NF; sub("worker=", "", w)
		if (w != 0 && $1 !~ "^tick-worker-" w "-") bad++; t++} END {exit !(t == 900 && !bad)}' || echo "$f"
done > "$tmp/fr.bad"
[ ! -s "$tmp/fr.bad" ]
check $? "names: the flight recorder's file and recover's name the workers too ($(cat "$tmp/fr.bad"))"

# 3. compact: a quiet program (30 processes of 2 events, 5 ms apart, a drain
# between each) gets full pages, not one page per drain: at most one page per
# CPU beyond what a program of 1 event takes (metadata, its one page)
$TB record -o "$tmp/e.dat" -- $P 0 0 > /dev/null 2>&1
$TB record -o "$tmp/q.dat" -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
	do $P 1 0; sleep 0.005; done" > /dev/null 2> "$tmp/q.err"
cpus=$(sed -n 's/.*KiB per CPU, \([0-9]*\) CPUs.*/\1/p' "$tmp/q.err")
bound=$(( $(stat -c %s "$tmp/e.dat") + cpus * 4096 + 4096 ))  # + 4096: 30 processes' names, formats
size=$(stat -c %s "$tmp/q.dat")
[ "$(grep -c 'tick:\|done:' "$(
	$TB report "$tmp/q.dat" > "$tmp/q.txt" 2>&1; echo "$tmp/q.txt")")" = 60 ] && [ "$size" -le "$bound" ]
check $? "compact: 60 events of a quiet program in $size bytes (bound $bound), all there"
$TB record -o "$tmp/l.dat" -- $P 3000 1 --slow > /dev/null 2> "$tmp/l.err"
pages=$(sed -n 's/.* events in \([0-9]*\) pages.*/\1/p' "$tmp/l.err")
# 6002 records of 28 bytes (a 4-byte header, the 24-byte struct), 4080 data bytes a page: 41.2
# pages' worth; at most one page per CPU beyond the 42 (each CPU's last one partly filled)
[ -n "$pages" ] && [ "$pages" -le $((42 + cpus)) ] && $TB report "$tmp/l.dat" 2>&1 |
	awk '/tick: *n=/ {split($0, a, "n="); split(a[2], b, " "); w = $NF; sub("worker=", "", w)
		if ((w in last) && b[1] != last[w] + 1) bad = 1; last[w] = b[1]; c++} END {exit bad || c != 6000}'
check $? "compact: 6002 events in $pages pages (at most 42 + one per CPU), each worker's ticks in order"

# A ring of 4 KiB per CPU in overwrite mode under 400000 ticks: whatever was lost, each loss
# stays where it happened with its count (the packer starts a page after it, flagged), so
# the ticks in the file + the LOST counts = every tick fired, and = record's own count
$TB record -b 4 -e app:tick -o "$tmp/o.dat" -- $P 200000 1 > /dev/null 2> "$tmp/o.err"
lost=$(sed -n 's/.*; lost \([0-9]*\) .*/\1/p' "$tmp/o.err")
$TB report --like-kernel "$tmp/o.dat" 2>&1 | awk -v lost="$lost" '/ tick: / {t++}
	match($0, /\[LOST [0-9]+ EVENTS\]/) {l += substr($0, RSTART + 6, RLENGTH - 14)}
	END {exit !(t + l == 400000 && l == lost)}'
check $? "compact with losses: ticks in the file + LOST counts = 400000, the LOST counts = record's ($lost)"

# 4. a program's own ring: its tracepoints reach the session too
$TB record -o "$tmp/d.dat" -- $B/examples/demo "$tmp/demo" > "$tmp/d.out" 2> "$tmp/d.err"; rc=$?
req=$($TB report "$tmp/d.dat" 2>/dev/null | grep -c ' request: ')
[ $rc = 0 ] && [ "$req" -gt 0 ] && ! grep -q 'wrote none' "$tmp/d.err"
check $? "demo attaches a ring of its own: its request events reach the session ($req), its own run still passes"
$TB record -e 'ftrace:print' -o "$tmp/n.dat" -- $P 10 0 > /dev/null 2> "$tmp/n.err"; rc=$?
[ $rc = 0 ] && grep -q 'described its events but wrote none to the session' "$tmp/n.err"
check $? "a recording that got nothing from a program with events says why; the status stays the program's"

# 5. mistakes are errors, with the closest real names
$TB record -e 'app:tik' -o "$tmp/w.dat" -- $P 100000 0 --slow > /dev/null 2> "$tmp/w.err"; rc=$?
[ $rc = 2 ] && grep -q "\-e 'app:tik' matches no event of the program; the closest: app:tick" "$tmp/w.err"
check $? "-e app:tik: exit 2 naming app:tick"
$TB record -e 'tock' -o "$tmp/w.dat" -- sh -c "$P 10 0" > /dev/null 2> "$tmp/w.err"; rc=$?
[ $rc = 2 ] && grep -q "\-e 'tock' matches no event of the program; the closest: app:tick" "$tmp/w.err"
check $? "-e tock under a shell (checked at the end, every process): exit 2 naming app:tick"

# 6. our options: libtracecmd (KernelShark's reader) and trace-cmd say nothing (with
# the kernel: its constants option too).  KernelShark itself under xvfb-run prints
# nothing on stderr either way (its log is in its window), so its reader, libtracecmd's
# tracecmd_open with warnings on, is called directly: it printed "unknown option 29794"
# and "29795" for files written before.
kernel=0
[ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing/instances ] && kernel=1
kopt=; [ $kernel = 1 ] && kopt="--kernel sched:sched_switch"
$TB record $kopt --blob-kb 64 -o "$tmp/o.dat" -- $P 10 0 > /dev/null 2>&1
if command -v python3 > /dev/null 2>&1 && python3 -c 'import ctypes; ctypes.CDLL("libtracecmd.so.1")' 2> /dev/null; then
	python3 -c 'import ctypes, sys
l = ctypes.CDLL("libtracecmd.so.1"); l.tracecmd_open.restype = ctypes.c_void_p
sys.exit(0 if l.tracecmd_open(sys.argv[1].encode(), 0) else 1)' "$tmp/o.dat" > /dev/null 2> "$tmp/o.lib"; rc=$?
	[ $rc = 0 ] && [ ! -s "$tmp/o.lib" ] && trace-cmd report "$tmp/o.dat" > /dev/null 2> "$tmp/o.tcmd" && [ ! -s "$tmp/o.tcmd" ]
	r=$?; check $r "KernelShark's reader (libtracecmd tracecmd_open, warnings on) and trace-cmd report: no complaint"
	[ $r = 0 ] || sed 's/^/#   /' "$tmp/o.lib" "$tmp/o.tcmd"
else
	skip "libtracecmd or python3 not installed"
fi

# 7. the kernel: follow the program, or every task with -a
if [ $kernel = 0 ]; then
	for i in 1 2 3 4 5; do skip "no tracefs or not root"; done
	echo "1..$n"; exit $fail
fi
# in the background for its pid: its instance would be tracebuf-kernel-PID (other tests' come and go)
$TB record --kernel sched:sched_swich -o "$tmp/k.dat" -- sh -c "touch $tmp/ran" > /dev/null 2> "$tmp/k.err" & pid=$!
wait $pid; rc=$?
[ $rc = 2 ] && grep -q "'sched:sched_swich' matches no event of this kernel; the closest: sched:sched_switch" "$tmp/k.err" &&
	[ ! -e "$tmp/ran" ] && ! grep -q 'instances/' "$tmp/k.err" && [ ! -e "$tmp/k.dat" ] &&
	[ ! -e /sys/kernel/tracing/instances/tracebuf-kernel-$pid ]
check $? "--kernel sched:sched_swich: exit 2 naming sched:sched_switch, the program never ran, no instance named or left"

# CMD waits for go; meanwhile a process outside it is born and ends while the kernel records
ev=sched:sched_switch,sched:sched_process_fork,sched:sched_process_exit
follow() { # NAME RECORD-OPTIONS...: a recording where an outsider ran
	name=$1; shift
	rm -f "$tmp/started" "$tmp/go"
	$TB record "$@" --kernel $ev -o "$tmp/$name.dat" -- sh -c "echo \$\$ > $tmp/started.tmp; mv $tmp/started.tmp $tmp/started
		while [ ! -e $tmp/go ]; do sleep 0.01; done; $P 100 1" > /dev/null 2> "$tmp/$name.err" &
	rpid=$!
	wait_for "$tmp/started"
	sh -c "echo \$\$ > $tmp/$name.outsider"
	touch "$tmp/go"; wait $rpid
	$TB report "$tmp/$name.dat" > "$tmp/$name.txt" 2>&1
}
follow f
cmd=$(cat "$tmp/started"); out=$(cat "$tmp/f.outsider")
# CMD and every child it forked (each fork of a followed task is recorded: its parent runs it)
{ echo "$cmd"; sed -n 's/.*sched_process_fork:.* child_pid=\([0-9]*\).*/\1/p' "$tmp/f.txt"; } | sort -u > "$tmp/set"
awk -v set="$tmp/set" 'BEGIN {while ((getline p < set) > 0) in_set[p] = 1}
	/sched_switch:/ {match($0, /prev_pid=[0-9]+/); p = substr($0, RSTART + 9, RLENGTH - 9)
		match($0, /next_pid=[0-9]+/); q = substr($0, RSTART + 9, RLENGTH - 9)
		sw++; if (!(p in in_set) && !(q in in_set)) bad++}
	/sched_process_(fork|exit):/ {match($0, / pid=[0-9]+/); p = substr($0, RSTART + 5, RLENGTH - 5)
		if (!(p in in_set)) bad++}
	END {exit !(sw > 0 && bad == 0)}' "$tmp/f.txt" && [ "$(wc -l < "$tmp/set")" -ge 3 ]
check $? "follow (default): every sched_switch has the program or a child on one side, every fork/exit is theirs"
! grep -q "sched_process_exit:.* pid=$out " "$tmp/f.txt" && grep -q "sched_process_exit:.* pid=$cmd " "$tmp/f.txt"
check $? "follow: the outsider's exit is left out, the program's is there"
grep -q 'app:\| tick: ' "$tmp/f.txt" && [ "$(grep -c ' tick: ' "$tmp/f.txt")" = 200 ]
check $? "follow: the program's 200 ticks beside its kernel events"
follow a -a
out=$(cat "$tmp/a.outsider")
grep -q "sched_process_exit:.* pid=$out " "$tmp/a.txt"
check $? "-a: every task, the outsider's exit included"

echo "1..$n"
exit $fail
