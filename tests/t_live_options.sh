#!/bin/sh
# report under trace_options, against the live kernel's own `trace` text.
# A private instance traces sched, irq, timer, raw_syscalls, kmem, signal and
# write syscall events, trace_marker writes, a kernel stack after each fork and
# a user stack after each event (userstacktrace), with noirq-info and record-tgid set; with tracing stopped, the instance's `trace` is read once
# under each further set of options written to trace_options, then the
# options are put back and `tracebuf capture` saves the instance.  `report`
# of the capture must print the saved options' text (read from the capture's
# trace_options), and `report --options WORDS` each other text: at least 99 %
# of the lines identical and as many lines (under latency-format the header's
# preemption model, which a capture does not hold, is the one line allowed to
# differ).  bin is refused with a reason, a word report does not know is a
# usage error.  Skipped without root or tracefs.
B=${TB_BUILD:-build}
TB="$B/tracebuf"
NAME=tb-live-options-$$ NEED=saved_tgids # (saved_tgids: a kernel with record-tgid)
. "$(dirname "$0")/lib/instance.sh"
instance_teardown() { echo '!stacktrace' > "$T/events/sched/sched_process_fork/trigger"; } 2> /dev/null

# The options as tracebuf capture leaves them, then the saved set under test.
# Only this shell's workload (event-fork: its children too), in a buffer it
# cannot overrun: how the kernel and report mark lost events is not tested here.  A user
# stack after each event triples the data, and the sched events of this shell's tasks grow
# with what else the machine runs (4 MiB a CPU overran beside another test's captures).
echo 0 > "$T/tracing_on"
echo 16384 > "$T/buffer_size_kb"
echo 1 > "$T/options/event-fork"
echo $$ > "$T/set_event_pid"
echo 0 > "$T/options/hash-ptr"
echo 0 > "$T/options/irq-info"
echo 1 > "$T/options/record-tgid"
echo 1 > "$T/options/userstacktrace" # a user stack after each event: sym-userobj's lines
for e in sched irq timer raw_syscalls kmem signal syscalls/sys_enter_write syscalls/sys_exit_write; do
	echo 1 > "$T/events/$e/enable"
done
# A kernel stack after each fork: stack lines under sym-offset and sym-addr.
echo stacktrace > "$T/events/sched/sched_process_fork/trigger"
echo 1 > "$T/tracing_on"
i=0; while [ $i -lt 20 ]; do
	sh -c 'cat /proc/self/stat > /dev/null'
	echo "tb-live-options marker $i" > "$T/trace_marker"
	i=$((i+1))
done
echo 0 > "$T/tracing_on"

# "a,nob" -> writes "a" then "nob"; undo writes the opposite of each word, last first.
set_words() { for w in $(echo "$1" | tr , ' '); do echo "$w" > "$T/trace_options" || return 1; done; }
undo_words() {
	for w in $(echo "$1" | tr , '\n' | tac); do
		case $w in no*) echo "${w#no}" ;; *) echo "no$w" ;; esac > "$T/trace_options"
	done
}
SETS="irq-info nocontext-info norecord-tgid raw hex raw,nocontext-info hex,nocontext-info irq-info,norecord-tgid
	latency-format latency-format,nocontext-info fields fields,nocontext-info fields,latency-format,irq-info
	sym-offset sym-addr sym-offset,sym-addr verbose latency-format,verbose latency-format,verbose,fields
	printk-msg-only printk-msg-only,fields,raw sym-userobj sym-userobj,sym-addr sym-userobj,sym-offset"
for s in $SETS; do
	set_words "$s" && cat "$T/trace" > "$W/kernel.$s"
	undo_words "$s"
done
"$TB" capture --with-trace -o "$W/cap" "$NAME" > /dev/null 2> "$W/capture.err"
check $? "capture of the instance (saved options noirq-info,record-tgid)"
grep -qx noirq-info "$W/cap/trace_options" && grep -qx record-tgid "$W/cap/trace_options"
check $? "the capture saved its trace_options"

# Line by line, the lines that differ, leaving out those where either side names the task
# "<...>": the kernel's comm cache (saved_cmdlines) is shared with the whole machine, and a
# busy one evicts names between the reads of `trace` and the capture (712 lines of one
# task, once in 20 runs beside two busy loops).  Under sym-userobj the kernel names a user
# address by the maps of the process *when `trace` is read*, the capture by the maps it
# saved: this shell's entries must agree, those of its children (gone by then, their pids
# free to be taken by other processes meanwhile: pid_max can be 32768) may not.
differing() {
	awk -v ours="$2" -v shell=$$ '{ k = $0; if ((getline o < ours) <= 0) o = "<missing>"
		if (k ~ /<user stack trace>$/) { owner = ""
			if (match(k, /-[0-9]+ +[\(\[]/)) owner = substr(k, RSTART + 1, RLENGTH - 1)
			sub(/ .*/, "", owner); user = 1 }
		else if (k !~ /^ => /) user = 0
		if (k != o && user && k ~ /^ => / && owner != shell) next
		if (k != o && k !~ /^# latency: / && k !~ /<\.\.\.>/ && o !~ /<\.\.\.>/) print NR": "k" | "o }' "$1"
}
# $1 kernel text  $2 ours  $3 what: as many lines, and >= 99 % of them identical.
same_text() {
	k=$(wc -l < "$1"); o=$(wc -l < "$2")
	d=$(differing "$1" "$2" | wc -l)
	echo "# $3: $k kernel lines, $o ours, $d differ"
	[ "$k" -gt 50 ] && [ "$k" = "$o" ] && [ $((d * 100)) -le "$k" ]
	check $? "$3: the kernel's text, >= 99 % of $k lines identical"
}
"$TB" report "$W/cap" > "$W/ours.saved"
check $? "report of the capture exits 0"
! grep -q 'LOST [0-9]* EVENTS' "$W/ours.saved"
check $? "the workload fit the buffer: no LOST line (else the comparisons below test losses)"
same_text "$W/cap/trace.txt" "$W/ours.saved" "saved noirq-info,record-tgid"
grep -q '^#           TASK-PID       TGID    CPU#     TIMESTAMP  FUNCTION$' "$W/ours.saved"
check $? "the header without irq columns, with the TGID column"
grep -Eq '^ +[^ ].*-[0-9]+ +\( *[0-9]+\) \[[0-9]{3}\]  +[0-9]+\.[0-9]{6}: ' "$W/ours.saved"
check $? "event lines carry a numeric TGID and no irq columns"
for s in $SETS; do
	"$TB" report --options "$s" "$W/cap" > "$W/ours.$s"
	same_text "$W/kernel.$s" "$W/ours.$s" "--options $s"
done
# Each option's text is its own, not the default's: fields' NAME=0xHEX (DEC)
# and %pS values, the marker's writer with an offset and an address.
grep -Eq ' sched_switch: prev_comm=[^ ]* prev_pid=0x[0-9a-f]+ \([0-9]+\) ' "$W/ours.fields" &&
	grep -Eq ' call_site=[a-z_0-9.]+\+0x[0-9a-f]+/0x[0-9a-f]+ \(-[0-9]+\) ' "$W/ours.fields"
check $? "fields: every field as NAME=0xHEX (DEC), kernel addresses as symbol+offset"
grep -Eq ' sys_enter_write: __syscall_nr=0x1 \(1\) fd=0x1 \(1\) buf=\(0x[0-9a-f]+\) count=0x' "$W/ours.fields"
check $? "fields: a char * field (write's buf) as (0xADDR)"
grep -Eq ': tracing_mark_write\+0x[0-9a-f]+/0x[0-9a-f]+ <[0-9a-f]{16}>: tb-live-options marker ' "$W/ours.sym-offset,sym-addr"
check $? "sym-offset,sym-addr: the marker's writer as symbol+offset/size <address>"
grep -Eq '^ => [a-z_0-9.]+\+0x[0-9a-f]+/0x[0-9a-f]+ <[0-9a-f]{16}>$' "$W/ours.sym-offset,sym-addr"
check $? "sym-offset,sym-addr: kernel stack entries as symbol+offset/size <address>"
grep -Eq '^ => /[^ ]+\[\+0x[0-9a-f]+\]$' "$W/ours.sym-userobj" &&
	grep -Eq '^ => /[^ ]+\[\+0x[0-9a-f]+\] <[0-9a-f]{16}>$' "$W/ours.sym-userobj,sym-addr"
check $? "sym-userobj: user stack entries as FILE[+0xOFFSET] of their mapping, with sym-addr then <address>"
grep -Eq ': sys_write\(unsigned int fd: 1, const char \* buf: 0x[0-9a-f]+, size_t count: ' "$W/ours.verbose"
check $? "verbose: syscall arguments with their types"
[ "$(grep -c '^tb-live-options marker [0-9]*$' "$W/ours.printk-msg-only")" = 20 ]
check $? "printk-msg-only: each of the 20 marker writes as its text alone"
grep -v '^#' "$W/kernel.latency-format" | grep -v '^ => ' |
	grep -Ev '^.{8}-[0-9]+ +[0-9]+[.dDbnlNLBpPhHsZz0-9a-f]{5} +[0-9]+us[ +!#*@$]: ' > "$W/unmatched"
[ ! -s "$W/unmatched" ] && grep -q '^# nop latency trace v1.1.5 on ' "$W/ours.latency-format"
check $? "latency-format: the header, and every kernel event line (not a stack entry) has the latency columns and a delay mark"
# (lines naming the task "<...>" left out, as above)
differing "$W/kernel.latency-format" "$W/ours.latency-format" > "$W/lat.diff"
[ ! -s "$W/lat.diff" ]
check $? "latency-format: only the header's preemption model line differs ($(wc -l < "$W/lat.diff") other lines)"

"$TB" report --options bin "$W/cap" > /dev/null 2> "$W/bin.err"
rc=$?
[ $rc != 0 ] && [ $rc != 1 ] && grep -q 'bin is on' "$W/bin.err"
check $? "bin is refused with a reason (exit $rc)"
"$TB" report --options noirq-infoo "$W/cap" > /dev/null 2> "$W/typo.err"
rc=$?
[ $rc = 2 ] && grep -q "'noirq-infoo'" "$W/typo.err"
check $? "an unknown --options word is a usage error naming it (exit $rc)"
echo "1..$n"
exit $fail
