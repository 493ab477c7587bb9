#!/bin/sh
# tracebuf hist against the live kernel as oracle: in a private instance the
# same events go to a hist trigger and into the ring buffer; the kernel's
# `hist` file and `tracebuf hist` over the instance's raw pages must show the
# same trigger info and, for a workload we run (dd making a known number of
# read and write calls), the very same entries.  Other processes' entries are
# not compared: they keep running after the pages are read.  Without
# CONFIG_HIST_TRIGGERS the kernel half is skipped and the workload's known
# counts are the oracle alone.  Skipped without root or tracefs.
B=${TB_BUILD:-build}
TB="$B/tracebuf"
NAME=tb-hist-live-$$ NEED=events/raw_syscalls
. "$(dirname "$0")/lib/instance.sh"
HAVE_HIST=0
grep -q "hist" "$TOP/events/raw_syscalls/sys_enter/trigger" 2>/dev/null && HAVE_HIST=1
ENTER='hist:keys=common_pid,id.syscall:sort=common_pid,id'
# (not .execname: the kernel saves the comm at a key's first event, which for dd's pid
# can come before its exec, while the capture knows the comm after it)
EXIT='hist:keys=common_pid,ret.buckets=100:vals=hitcount:sort=common_pid,ret'
instance_teardown() {
	echo 0 > "$T/tracing_on"
	echo "!$ENTER" >> "$T/events/raw_syscalls/sys_enter/trigger"
	echo "!$EXIT" >> "$T/events/raw_syscalls/sys_exit/trigger"
} 2> /dev/null

echo 0 > "$T/tracing_on"
echo 16384 > "$T/buffer_size_kb"
echo 0 > "$T/options/overwrite"
if [ $HAVE_HIST = 1 ]; then
	echo "$ENTER" > "$T/events/raw_syscalls/sys_enter/trigger"
	echo "$EXIT" > "$T/events/raw_syscalls/sys_exit/trigger"
fi
echo 1 > "$T/events/raw_syscalls/enable"
echo 1 > "$T/tracing_on"
dd if=/dev/zero of=/dev/null bs=1 count=3000 status=none &
pid=$!
wait $pid
echo 0 > "$T/tracing_on"

# The lines of one pid: "common_pid: NNN" (plain) or "common_pid: COMM [NNN]" (execname).
mine() { grep -E "common_pid: +$pid,|common_pid: [^[]*\[ *$pid\]" "$1"; }
compare() { # $1 event  $2 spec  $3 kernel's hist  $4 ours  $5 what
	grep '^# trigger info:' "$3" | sed 's/ \[active\]$//' > "$W/ti.k"
	grep '^# trigger info:' "$4" | sed 's/ \[active\]$//' > "$W/ti.t"
	cmp -s "$W/ti.k" "$W/ti.t"; check $? "$5: the same trigger info line"
	mine "$3" > "$W/k"; mine "$4" > "$W/t"
	[ -s "$W/k" ] && cmp -s "$W/k" "$W/t"; check $? "$5: the same entries for dd (pid $pid), $(wc -l < "$W/k") of them"
	[ -s "$W/k" ] || sed 's/^/# kernel: /' "$3" | head -20
	cmp -s "$W/k" "$W/t" || diff "$W/k" "$W/t" | sed 's/^/# /' | head -20
}
if [ $HAVE_HIST = 1 ]; then
	cat "$T/events/raw_syscalls/sys_enter/hist" > "$W/enter.k"
	cat "$T/events/raw_syscalls/sys_exit/hist" > "$W/exit.k"
fi
for cpu in "$T"/per_cpu/cpu*; do
	o=$(awk '/^overrun:/ { print $2 }' "$cpu/stats")
	[ "${o:-0}" = 0 ] || echo "# $cpu overran $o events: the comparison may fail"
done
# One pass over the raw pages serves both events: save them as a capture first.
"$TB" capture -o "$W/cap" "$T" > /dev/null 2> "$W/err"
check $? "the instance's pages saved as a capture"
"$TB" hist -e raw_syscalls:sys_enter "${ENTER#hist:}" "$W/cap" > "$W/enter.t" 2>> "$W/err"
check $? "tracebuf hist over the live instance's pages"
"$TB" hist -e raw_syscalls:sys_exit "${EXIT#hist:}" "$W/cap" > "$W/exit.t" 2>> "$W/err"
# The workload's own counts: status=none, so dd writes exactly its 3000 bytes
# one by one, and reads them the same way (the loader's few reads come on top).
w=$(mine "$W/enter.t" | sed -n 's/.*id: sys_write *\[  1\] } hitcount: *//p')
[ "$w" = 3000 ]; check $? "dd's 3000 one-byte writes are counted exactly (got ${w:-none})"
r=$(mine "$W/enter.t" | sed -n 's/.*id: sys_read *\[  0\] } hitcount: *//p')
[ "${r:-0}" -ge 3000 ] && [ "${r:-0}" -le 3010 ]; check $? "dd's 3000 one-byte reads are counted (got ${r:-none})"
b=$(mine "$W/exit.t" | sed -n 's/.*ret: ~ 0-99 } hitcount: *//p')
[ "${b:-0}" -ge 6000 ]; check $? "its 6000 calls returning 1 fall in the bucket 0-99 (got ${b:-none})"
if [ $HAVE_HIST = 1 ]; then
	compare sys_enter "$ENTER" "$W/enter.k" "$W/enter.t" "keys=common_pid,id.syscall"
	compare sys_exit "$EXIT" "$W/exit.k" "$W/exit.t" "keys=common_pid,ret.buckets=100"
else
	echo "# the kernel half skipped: no hist triggers in this kernel (CONFIG_HIST_TRIGGERS)"
fi

# --live: printed again every second, the events since added.  The live
# reader's own system calls are filtered out (an instance that traced its
# reads would never run dry), and the buffer starts empty.  Each workload
# runs after a print has come out (each print is flushed), so which print
# must hold which dd is known: the first neither, the second the 500 writes
# of the first dd, the third those and the 700 of the second.  Only writes
# are counted, in a table big enough for every other process's too (the
# machine is shared: past size= a new key is dropped, as the kernel does).
prints() { n_=$(grep -c "^Totals:" "$W/live" 2>/dev/null); echo "${n_:-0}"; }
wait_prints() { # $1 prints to wait for (10 s at most)
	i=0; while [ "$(prints)" -lt "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
}
echo > "$T/trace"
echo 1 > "$T/tracing_on"
: > "$W/live"
"$TB" hist -e raw_syscalls:sys_enter --live --refreshes 3 'keys=common_pid,id.syscall:size=131072 if id == 1' "$T" > "$W/live" 2>> "$W/err" &
live=$!
echo "common_pid != $live" > "$T/events/raw_syscalls/sys_enter/filter"
echo "common_pid != $live" > "$T/events/raw_syscalls/sys_exit/filter"
wait_prints 1
dd if=/dev/zero of=/dev/null bs=1 count=500 status=none &
pid1=$!
wait $pid1
wait_prints 2
dd if=/dev/zero of=/dev/null bs=1 count=700 status=none &
pid2=$!
wait $pid2
wait $live
echo 0 > "$T/tracing_on"
[ "$(grep -c "^# event histogram" "$W/live")" = 3 ]; check $? "--live --refreshes 3 prints the hist three times, a second apart"
writes() { # $1 print number, $2 pid: its sys_write hitcount in that print
	awk -v k="$1" '/^# event histogram/ { n++ } n == k' "$W/live" |
		grep -E "common_pid: +$2," | sed -n 's/.*id: sys_write *\[  1\] } hitcount: *//p'
}
w11=$(writes 1 $pid1) w21=$(writes 2 $pid1) w22=$(writes 2 $pid2) w31=$(writes 3 $pid1) w32=$(writes 3 $pid2)
[ -z "$w11" ] && [ -z "$w22" ]; check $? "the first print holds neither dd, the second not the later one (got ${w11:-none}, ${w22:-none})"
[ "$w21" = 500 ]; check $? "the second print holds the 500 writes of the dd started after the first (got ${w21:-none})"
[ "$w31" = 500 ] && [ "$w32" = 700 ]; check $? "the third holds them still and the 700 of the dd started after the second (got ${w31:-none}, ${w32:-none})"
[ "$w21" = 500 ] && [ "$w32" = 700 ] || sed 's/^/# /' "$W/live" | tail -30

# An event named without its system is found in the live instance; one the kernel lacks is said.
"$TB" hist -e sys_enter 'keys=common_pid' "$T" 2>> "$W/err" | grep -q '^# trigger info: hist:keys=common_pid:'
check $? "-e sys_enter (no system) on a live instance"
"$TB" hist -e no_such_event 'keys=common_pid' "$T" > /dev/null 2> "$W/nse"; rc=$?
[ $rc = 2 ] && grep -q "no event no_such_event, in $T nor in the running kernel" "$W/nse"
check $? "an event the kernel lacks is named as such, a usage error (exit 2)"
[ $fail = 0 ] || sed 's/^/# /' "$W/err"
echo "1..$n"
exit $fail
