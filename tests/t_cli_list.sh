#!/bin/sh
# tracebuf list: the events of a capture directory, a trace.dat and a
# program, each against an oracle that does not use tracebuf's reader:
# the capture's format files on disk, trace-cmd's own view of the
# trace.dat (its --events dump, and its report's lines counted by event),
# and the events declared in the program's source.
B=${TB_BUILD:-build}
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
show() { sed 's/^/#   /' "$@" | head -20; }
cap=tests/data/kernel/cap-f-many-systems
dat=tests/data/trace-dat/sched-marker-v6.dat
ex=$B/examples/tracepoints

# A capture directory: every formats/SYSTEM/NAME.format, as SYSTEM:NAME.
"$B/tracebuf" list "$cap" > "$tmp/cap"
check $? "list CAPTURE_DIR runs"
(cd "$cap/formats" && for f in */*.format; do echo "$f"; done) | sed 's|/|:|; s|\.format$||' | LC_ALL=C sort > "$tmp/cap_want"
LC_ALL=C sort "$tmp/cap" | cmp -s - "$tmp/cap_want"; rc=$?
check $rc "list CAPTURE_DIR: the $(wc -l < "$tmp/cap_want") format files of the directory"
[ $rc = 0 ] || diff "$tmp/cap" "$tmp/cap_want" | show

# A trace.dat: the events trace-cmd finds in it.
"$B/tracebuf" list "$dat" > "$tmp/dat"
check $? "list FILE.dat runs"
if command -v trace-cmd > /dev/null; then
	{ trace-cmd dump --ftrace-events "$dat" 2>/dev/null | sed -n 's/^name: /ftrace:/p'
	  trace-cmd report --events "$dat" 2>/dev/null | awk '/^system: /{s=$2} /^name: /{print s ":" $2}'
	} | LC_ALL=C sort -u > "$tmp/dat_want"
	LC_ALL=C sort "$tmp/dat" | cmp -s - "$tmp/dat_want"; rc=$?
	check $rc "list FILE.dat: the $(wc -l < "$tmp/dat_want") events trace-cmd finds (dump --ftrace-events, report --events)"
	[ $rc = 0 ] || diff "$tmp/dat" "$tmp/dat_want" | show

	# -c: records per event, against trace-cmd report's lines counted by event name.
	"$B/tracebuf" list -c "$dat" | sed 's/ [^:]*:/ /' | LC_ALL=C sort -k2 > "$tmp/counts"
	trace-cmd report "$dat" 2>/dev/null |
		awk '{for (i = 1; i < NF; i++) if ($i ~ /^(\[[0-9]+\])?[0-9]+(\.[0-9]+)?:$/) {e = $(i+1); sub(/:$/, "", e); c[e]++; break}}
		     END {for (e in c) print c[e], e}' | LC_ALL=C sort -k2 > "$tmp/counts_want"
	cmp -s "$tmp/counts" "$tmp/counts_want"; rc=$?
	check $rc "list -c FILE.dat: each event's records, as many as trace-cmd report prints lines of it"
	[ $rc = 0 ] || diff "$tmp/counts" "$tmp/counts_want" | show
else
	echo "ok $((n+1)) # skip trace-cmd is not installed"; echo "ok $((n+2)) # skip trace-cmd is not installed"; n=$((n+2))
fi
"$B/tracebuf" list --ids "$dat" | grep -qx '[0-9][0-9]* sched:sched_switch'
check $? "list --ids: the ID in front"
"$B/tracebuf" list --fields "$dat" | sed -n '/^sched:sched_switch$/,/^[a-z]/p' | grep -q '^	char prev_comm\[\];	offset:8;	size:16;$'
check $? "list --fields: the event's fields below it (sched_switch's prev_comm, as its format has it)"
if command -v trace-cmd > /dev/null; then
	trace-cmd report --events "$dat" 2>/dev/null | grep -q '	field:char prev_comm\[16\];	offset:8;	size:16;'
	check $? "list --fields: (trace-cmd reads the same offset and size)"
else
	n=$((n+1)); echo "ok $n # skip trace-cmd is not installed"
fi
"$B/tracebuf" list --fields "$dat" | grep -q 'common_'
[ $? = 1 ]; check $? "list --fields: no common_* fields"

# A program: the events its source declares, and the kernel's built-in ftrace ones.
"$B/tracebuf" list -- "$ex" > "$tmp/prog"
check $? "list -- PROGRAM runs"
{ sed -n 's/^TB_EVENT(\([a-z_]*\), \([a-z_]*\),.*/\1:\2/p' examples/tracepoints.c
  printf 'ftrace:print\nftrace:bprint\nftrace:raw_data\n'; } | LC_ALL=C sort > "$tmp/prog_want"
LC_ALL=C sort "$tmp/prog" | cmp -s - "$tmp/prog_want"; rc=$?
check $rc "list -- PROGRAM: the $(wc -l < "$tmp/prog_want") events of its source and libtracebuf's"
[ $rc = 0 ] || diff "$tmp/prog" "$tmp/prog_want" | show
"$B/tracebuf" list "$ex" | cmp -s - "$tmp/prog"
check $? "list PROGRAM (no --): the same"

# The running kernel: every event of available_events, and ftrace's own (they have formats, no enable).
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/tracing/available_events ]; then
	"$B/tracebuf" list > "$tmp/live"
	check $? "list (the running kernel) runs"
	LC_ALL=C sort /sys/kernel/tracing/available_events > "$tmp/live_want"
	grep -v '^ftrace:' "$tmp/live" | LC_ALL=C sort | cmp -s - "$tmp/live_want"; rc=$?
	check $rc "list: the $(wc -l < "$tmp/live_want") events of the kernel's available_events, with ftrace's besides"
	[ $rc = 0 ] || grep -v '^ftrace:' "$tmp/live" | LC_ALL=C sort | diff - "$tmp/live_want" | show
else
	n=$((n+1)); echo "ok $n # skip not root or no tracefs"
	n=$((n+1)); echo "ok $n # skip not root or no tracefs"
fi

# Misuse.
"$B/tracebuf" list /bin/true > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q 'linked with libtracebuf' "$tmp/err"
check $? "a program without libtracebuf: exit 3 (not an input tracebuf reads), said why"
"$B/tracebuf" list -c -- "$ex" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'counts the records of a file' "$tmp/err"
check $? "-c on a program: exit 2, said why"
head -c 300 "$dat" > "$tmp/cut.dat"
"$B/tracebuf" list "$tmp/cut.dat" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "cut.dat" "$tmp/err"
check $? "a truncated trace.dat: exit 3, the file named"
[ $rc = 3 ] || show "$tmp/err"
echo "1..$n"
exit $fail
