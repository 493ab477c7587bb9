#!/bin/sh
# tracebuf report -F / -v (trace-cmd's syntax, the kernel's filter language)
# on a capture directory and on trace.dat files: what it keeps is what awk
# selects from the unfiltered report's fields, line for line.
B=${TB_BUILD:-build}
T="$B/tracebuf"
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
tmp=/tmp/tb-filter-$$; mkdir -p $tmp; trap 'rm -rf $tmp' EXIT

cap=tests/data/kernel/cap-a-small-noloss
"$T" report --no-header "$cap" > $tmp/all
# The kernel's text: "prev_comm=X prev_pid=N ... ==> next_comm=Y next_pid=M ..."
awk '/ sched_switch: / { for (i = 1; i <= NF; i++) { if ($i ~ /^prev_pid=/) p = substr($i, 10); if ($i ~ /^next_pid=/) q = substr($i, 10) }
     if (p + 0 == 0 || q + 0 < 100) print }' $tmp/all > $tmp/want
"$T" report --no-header -F 'sched/sched_switch: prev_pid == 0 || next_pid < 100' "$cap" > $tmp/got
cmp -s $tmp/got $tmp/want; check $? "capture: numeric || ($(wc -l < $tmp/want) lines)"

awk '/ sched_switch: / && /next_comm=k/' $tmp/all > $tmp/want
"$T" report --no-header -F 'sched_switch: next_comm ~ "k*"' "$cap" > $tmp/got
cmp -s $tmp/got $tmp/want; check $? "capture: glob on a char array ($(wc -l < $tmp/want) lines)"

grep -E " (sched_wakeup|sched_wakeup_new|sched_waking): " $tmp/all > $tmp/want
"$T" report --no-header -F 'sched_wak.*' "$cap" > $tmp/got
cmp -s $tmp/got $tmp/want; check $? "capture: events by regex, no expression ($(wc -l < $tmp/want) lines)"

grep -v ' sched_switch: ' $tmp/all > $tmp/want
"$T" report --no-header -v -F 'sched_switch' "$cap" > $tmp/got
cmp -s $tmp/got $tmp/want; check $? "capture: -v drops what it names"

# A missing field: an error for the event named exactly, false through its system.
"$T" report --no-header -F 'sched_switch: bogus == 1' "$cap" > /dev/null 2> $tmp/err; rc=$?
[ $rc = 2 ] && grep -q "parse_error: Field not found" $tmp/err
check $? "a field the named event lacks: exit 2 and the kernel's message"
grep -E ' sched_[a-z_]+: ' $tmp/all | awk '{ split($1, a, "-"); if (a[length(a)] == 0) print }' > $tmp/want
"$T" report --no-header -F 'sched: bogus == 1 || common_pid == 0' "$cap" > $tmp/got
cmp -s $tmp/got $tmp/want; check $? "through a system a missing field is false ($(wc -l < $tmp/want) lines)"

"$T" report -F 'sched_switch: prev_pid = 0' "$cap" > /dev/null 2> $tmp/err
grep -q '^ *\^$' $tmp/err && grep -q "parse_error: Invalid operator" $tmp/err
check $? "a malformed expression: caret and the kernel's message"

# trace.dat, in trace-cmd's layout: its lines are "COMM-PID [CPU] TS: EVENT: ..."
dat=tests/data/trace-dat/sched-marker-v6.dat
"$T" report "$dat" > $tmp/all
awk '/ sched_switch: / && / next_pid=0 /' $tmp/all > $tmp/want
"$T" report -F 'sched_switch: next_pid == 0' "$dat" | grep -v '^cpus=' > $tmp/got
[ -s $tmp/want ] && cmp -s $tmp/got $tmp/want; check $? "trace.dat: next_pid == 0 ($(wc -l < $tmp/want) lines)"
# the same with trace-cmd's text of the events
"$T" report --like-trace-cmd "$dat" > $tmp/all
awk '/ sched_switch: / && / ==> swapper/' $tmp/all > $tmp/want
"$T" report --like-trace-cmd -F 'sched_switch: next_pid == 0' "$dat" | grep -v '^cpus=' > $tmp/got
[ -s $tmp/want ] && cmp -s $tmp/got $tmp/want; check $? "trace.dat --like-trace-cmd: next_pid == 0 ($(wc -l < $tmp/want) lines)"
echo "1..$n"
exit $fail
