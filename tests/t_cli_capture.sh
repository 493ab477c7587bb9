#!/bin/sh
# tracebuf capture on the live kernel: the files a capture holds, a report
# of it equal to the kernel's own text, event globs, Ctrl-C, saving an
# instance someone else set up (and reading trace_marker_raw live), and
# --kallsyms used.  Every instance made here is removed, also on failure;
# the top-level buffer is never touched.  Needs root and tracefs.
B=${TB_BUILD:-build}
TB=$B/tracebuf
T=/sys/kernel/tracing
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root to create tracefs instances"; exit 0; fi
if [ ! -d $T/instances ]; then echo "1..0 # SKIP tracefs is not available at $T"; exit 0; fi
W=$(mktemp -d /tmp/tb-cli-capture-XXXXXX) || exit 1
MINE=$T/instances/tb-cli-capture-$$
cleanup() { [ -d $MINE ] && rmdir $MINE; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
instance_of() { sed -n 's/^instance: //p' "$1/meta.txt"; }
gone() { i=$(instance_of "$1"); [ -n "$i" ] && [ ! -e "$T/instances/$i" ]; }

# ------------------------------------------------------------ usage
"$TB" capture -o "$W/x" >/dev/null 2>&1; check $(( $? != 2 )) "no CMD and no INSTANCE: usage error (2)"
"$TB" capture -e sched -o "$W/x" some-instance >/dev/null 2>&1
check $(( $? != 2 )) "-e with an INSTANCE: usage error (2) (it is saved as it is)"
"$TB" capture --help | grep -q -- "--with-trace"; check $? "--help describes the options"
[ ! -e "$W/x" ]; check $? "a usage error creates nothing"

# ------------------------------------------------- a capture, whole
D=$W/basic
"$TB" capture -e sched:sched_switch --with-trace -o "$D" -- sh -c \
	'echo tb-cli marker > $TRACEBUF_INSTANCE/trace_marker;
	 printf "\315\253\0\0RAW1" > $TRACEBUF_INSTANCE/trace_marker_raw; sleep 0.01' 2>"$W/err"
check $? "capture of a command: exit status 0"
grep -q "^tracebuf capture: saved $D: " "$W/err"; check $? "it says what it saved"
missing=
# Every CPU has its stats and a raw file; a CPU that switched no task in those milliseconds has an empty one.
for c in $(seq 0 $(( $(getconf _NPROCESSORS_ONLN) - 1 ))); do
	[ -e "$D/cpu$c.raw" ] || missing="$missing cpu$c.raw"
	[ -s "$D/cpu$c.stats" ] || missing="$missing cpu$c.stats"
done
[ -n "$(find "$D" -name 'cpu*.raw' -size +0)" ] || missing="$missing (every cpuN.raw is empty)"
for f in header_page header_event trace_clock trace_options printk_formats saved_cmdlines kallsyms \
	meta.txt trace.txt set_event formats/sched/sched_switch.format \
	formats/sched/sched_waking.format formats/ftrace/print.format formats/ftrace/bprint.format \
	formats/ftrace/bputs.format formats/ftrace/raw_data.format formats/ftrace/function.format; do
	[ -s "$D/$f" ] || missing="$missing $f"
done
[ -z "$missing" ]; check $? "every file report needs is there (missing:${missing:- none})"
gone "$D"; check $? "its instance $(instance_of "$D") was removed"
grep -q "^command_result: exit status 0$" "$D/meta.txt" && grep -q "^events: sched:sched_switch$" "$D/meta.txt" &&
	grep -q "^trace_clock: .*\[local\]" "$D/meta.txt" && grep -q "^ncpus: $(getconf _NPROCESSORS_ONLN)$" "$D/meta.txt"
check $? "meta.txt: command result, events, clock, CPUs"
sub=$(sed -n 's/^subbuf_bytes: //p' "$D/meta.txt")
ok=0; for r in "$D"/cpu*.raw; do [ $(( $(stat -c %s "$r") % sub )) = 0 ] || ok=1; done
check $ok "every cpuN.raw holds whole $sub-byte sub-buffers"
"$TB" report "$D" > "$W/report" 2>"$W/report.err"; check $? "report of it: exit status 0"
cmp -s "$W/report" "$D/trace.txt"; check $? "report of it equals the kernel's trace.txt byte for byte"
grep -q "tracing_mark_write: tb-cli marker$" "$W/report" && grep -q ": # abcd buf: 52 41 57 31$" "$W/report"
check $? "the marker and the raw marker are in it"

# ------------------------------------------------------ event specs
D=$W/glob
"$TB" capture -e 'sched:sched_wak*' -e irq:irq_handler_entry -o "$D" -- true 2>/dev/null
check $? "capture with a glob and two -e: exit status 0"
want=$( (echo irq:irq_handler_entry; ls $T/events/sched | sed -n 's/^sched_wak/sched:&/p') | sort | tr '\n' ' ')
[ "$(sort "$D/set_event" | tr '\n' ' ')" = "$want" ]
check $? "set_event is what the kernel has for the glob plus the second -e: $want"
# in the background for its pid: its instance is tracebuf-PID (other tests make and remove theirs meanwhile)
"$TB" capture -e sched:no_such_event -o "$W/none" -- true > "$W/none.err" 2>&1 & pid=$!
wait $pid; rc=$?; err=$(cat "$W/none.err")
[ $rc = 2 ] && echo "$err" | grep -q "'sched:no_such_event' matches no event"
check $? "an event that does not exist: exit status 2 (usage, as record), named"
[ ! -e "$T/instances/tracebuf-$pid" ] && [ ! -e "$W/none" ]
check $? "and its instance (tracebuf-$pid) is gone, nothing saved"
"$TB" capture --clock no-such-clock -o "$W/none" -- true 2>&1 | grep -q "no trace clock 'no-such-clock'"
check $? "an unknown --clock is named with the kernel's clocks"

# ----------------------------------------------------------- Ctrl-C
D=$W/int
"$TB" capture -e sched:sched_switch -o "$D" -- sleep 30 2>"$W/err" &
pid=$!
# Until CMD runs (capture forks it once it is set up): a SIGINT before that is
# another test; 30 s at most, and the check below times the stop alone.
i=0; while ! pgrep -x -P $pid sleep > /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
start=$(date +%s)
kill -INT $pid
wait $pid; rc=$?
[ $rc = 0 ] && [ $(( $(date +%s) - start )) -lt 10 ]; check $? "SIGINT: CMD stopped, capture exits 0 at once"
grep -q "^interrupted: yes" "$D/meta.txt" && grep -q "^command_result: killed by signal 2" "$D/meta.txt"
check $? "meta.txt: interrupted, sleep killed by SIGINT"
"$TB" report "$D" >/dev/null 2>&1; check $? "the interrupted capture reports cleanly"
gone "$D"; check $? "and its instance was removed"

# ------------------------------------- someone else's instance, live
mkdir $MINE && echo 1 > $MINE/events/sched/sched_switch/enable
check $? "an instance set up by hand: $MINE"
# The kernel's text and ours are read at two moments, and both name tasks from
# the kernel's comm cache (saved_cmdlines), which every instance shares: a task
# of another test that execs between the two reads is "sh" in one and "sleep"
# in the other.  A difference counts only when the cache stood still across
# both reads.  While it moves, trace again and read both again (20 tries): the
# live report consumes the buffer.
try=0
while :; do
	echo > $MINE/trace && echo 1 > $MINE/tracing_on
	printf '\315\253\0\0RAW2' > $MINE/trace_marker_raw; echo tb-cli by hand > $MINE/trace_marker
	sh -c 'sleep 0.01'
	echo 0 > $MINE/tracing_on
	cache=$(cat $T/saved_cmdlines)
	kernel=$(grep -v '^#' $MINE/trace)
	live=$("$TB" report --no-header $MINE); rc=$?
	try=$((try+1))
	[ $rc != 0 ] || [ "$live" = "$kernel" ] || [ "$(cat $T/saved_cmdlines)" = "$cache" ] || [ $try = 20 ] && break
done
[ $rc = 0 ] && [ "$live" = "$kernel" ] && echo "$live" | grep -q ": # abcd buf: 52 41 57 32$"; rc=$?
check $rc "live report equals the instance's trace, trace_marker_raw included (not [UNKNOWN EVENT])"
[ $rc = 0 ] || { echo "$kernel" > "$W/k.txt"; echo "$live" > "$W/l.txt"; diff "$W/k.txt" "$W/l.txt" | head -20 | sed 's/^/# /' >&2; }
echo 1 > $MINE/tracing_on
echo tb-cli again > $MINE/trace_marker; sh -c 'sleep 0.01'
D=$W/theirs
"$TB" capture --with-trace -o "$D" tb-cli-capture-$$ 2>/dev/null; check $? "capture INSTANCE: exit status 0"
[ -d $MINE ] && [ "$(cat $MINE/tracing_on)" = 1 ]; check $? "the instance is left, tracing on again"
grep -q "^made_by: tracebuf capture (an instance it did not create)" "$D/meta.txt"; check $? "meta.txt says whose instance"
"$TB" report "$D" > "$W/theirs.txt"; cmp -s "$W/theirs.txt" "$D/trace.txt"; rc=$?
check $rc "its report equals the kernel's trace.txt"
[ $rc = 0 ] || diff "$D/trace.txt" "$W/theirs.txt" | head -20 | sed 's/^/# /' >&2
"$TB" capture -o "$W/top" $T 2>&1 | grep -q "top-level buffer"; check $? "the top level is refused"
echo 0 > $MINE/tracing_on; rmdir $MINE

# ------------------------------------------------- --kallsyms used
D=$W/used
"$TB" capture -e kmem:kmalloc,kmem:kfree,timer --kallsyms used -o "$D" -- sh -c 'ls / >/dev/null; sleep 0.02' 2>/dev/null
check $? "capture with --kallsyms used: exit status 0"
lines=$(wc -l < "$D/kallsyms")
[ "$lines" -gt 2 ] && [ "$lines" -lt $(( $(wc -l < /proc/kallsyms) / 20 )) ]
check $? "kallsyms cut to $lines lines (of $(wc -l < /proc/kallsyms))"
grep -q "(.*lines)" "$D/meta.txt"; check $? "meta.txt says so"
mkdir "$W/full" && for f in "$D"/*; do ln -s "$f" "$W/full/"; done && rm "$W/full/kallsyms" && cp /proc/kallsyms "$W/full/"
"$TB" report "$D" > "$W/used.txt" 2>/dev/null; "$TB" report "$W/full" > "$W/full.txt" 2>/dev/null
cmp -s "$W/used.txt" "$W/full.txt" && grep -q "call_site=" "$W/used.txt"
check $? "its report equals the report with the whole /proc/kallsyms (symbols resolved the same)"

echo "1..$n"
exit $fail
