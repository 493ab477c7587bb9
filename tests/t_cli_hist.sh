#!/bin/sh
# tracebuf hist against expectations computed apart from it: the kernel's own
# `trace` text of the same captures (trace.txt, rendered by the kernel when
# they were recorded) and trace-cmd's report of a trace.dat, counted with awk
# and laid out with printf in the format of the kernel's hist file
# (hist_show() in kernel/trace/trace_events_hist.c).  Then specs that must be
# refused, with the offset they are refused at.
B=${TB_BUILD:-build}
TB="$B/tracebuf"
A=tests/data/kernel/cap-a-small-noloss
D=tests/data/kernel/cap-d-abs-timestamp
DAT=tests/data/trace-dat/sched-v7-zstd.dat
W=$(mktemp -d /tmp/tb-hist-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# The header the kernel prints for trigger info $1, the entries in $2, the footer from them.
expect() {
	printf '# event histogram\n#\n# trigger info: hist:%s [active]\n#\n\n' "$1"
	cat "$2"
	awk '{ for (i = 1; i < NF; i++) if ($i == "hitcount:") h += $(i + 1) } END { printf "\nTotals:\n    Hits: %d\n    Entries: %d\n    Dropped: 0\n", h, NR }' "$2"
}
# Run tracebuf hist (-e $1, spec $2, source $3) and compare with expect "$4" "$5".
same() {
	"$TB" hist -e "$1" "$2" "$3" > "$W/got" 2> "$W/err"; rc=$?
	expect "$4" "$5" > "$W/want"
	if [ $rc -eq 0 ] && cmp -s "$W/got" "$W/want"; then check 0 "$6"; else
		check 1 "$6 (exit $rc)"; diff "$W/want" "$W/got" | head -20 | sed 's/^/# /'; sed 's/^/# /' "$W/err"; fi
}
# A field of the kernel's text: the value after NAME= on each line of EVENT.
field() { awk -v ev=" $2: " -v f="$3=" 'index($0, ev) { for (i = 1; i <= NF; i++) if (index($i, f) == 1) print substr($i, length(f) + 1) }' "$1"; }

# -- numbers, sums, strings, compound keys: cap-a's sched_switch (221 events)
field $A/trace.txt sched_switch next_pid | sort -n | uniq -c |
	awk '{ printf "{ next_pid: %10d } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_pid:sort=next_pid' $A \
	'keys=next_pid:vals=hitcount:sort=next_pid:size=2048' "$W/e" "a number key, sorted by key"

awk '/ sched_switch: / { for (i = 1; i <= NF; i++) { if ($i ~ /^prev_pid=/) p = substr($i, 10); if ($i ~ /^prev_prio=/) q = substr($i, 11) }
	c[p]++; s[p] += q } END { for (p in c) printf "%d %d %d\n", p, c[p], s[p] }' $A/trace.txt | sort -n |
	awk '{ printf "{ prev_pid: %10d } hitcount: %10d  prev_prio: %10d\n", $1, $2, $3 }' > "$W/e"
same sched:sched_switch 'keys=prev_pid:vals=prev_prio:sort=prev_pid' $A \
	'keys=prev_pid:vals=hitcount,prev_prio:sort=prev_pid:size=2048' "$W/e" "a value summed per key"

awk '/ sched_switch: / { for (i = 1; i <= NF; i++) { if ($i ~ /^prev_pid=/) p = substr($i, 10); if ($i ~ /^prev_prio=/) q = substr($i, 11) }
	c[p]++; s[p] += q } END { for (p in c) printf "%d %d %d\n", p, c[p], s[p] }' $A/trace.txt | sort -n |
	awk '{ printf "{ prev_pid: %x } hitcount: %10d  prev_prio: %10x\n", $1, $2, $3 }' > "$W/e"
same sched:sched_switch 'keys=prev_pid.hex:vals=prev_prio.hex:sort=prev_pid' $A \
	'keys=prev_pid.hex:vals=hitcount,prev_prio.hex:sort=prev_pid.hex:size=2048' "$W/e" ".hex on a key and on a value"

field $A/trace.txt sched_switch next_comm | LC_ALL=C sort | uniq -c |
	awk '{ printf "{ next_comm: %-50s } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_comm:sort=next_comm' $A \
	'keys=next_comm:vals=hitcount:sort=next_comm:size=2048' "$W/e" "a string key (char[16]), sorted by strcmp"

awk '/ sched_switch: / { for (i = 1; i <= NF; i++) { if ($i ~ /^prev_pid=/) p = substr($i, 10); if ($i ~ /^next_pid=/) q = substr($i, 10) } print p, q }' \
	$A/trace.txt | sort -n -k1,1 -k2,2 | uniq -c |
	awk '{ printf "{ prev_pid: %10d, next_pid: %10d } hitcount: %10d\n", $2, $3, $1 }' > "$W/e"
same sched:sched_switch 'key=prev_pid,next_pid:sort=prev_pid,next_pid' $A \
	'keys=prev_pid,next_pid:vals=hitcount:sort=prev_pid,next_pid:size=2048' "$W/e" "a compound key, two sort keys"

field $A/trace.txt sched_switch next_pid | sort -n | uniq -c | sort -k1,1nr -k2,2n |
	awk '{ printf "{ next_pid: %10d } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_pid:sort=hitcount.descending' $A \
	'keys=next_pid:vals=hitcount:sort=hitcount.descending:size=2048' "$W/e" \
	"sort=hitcount.descending (ties in key order)"

# .execname: the comm of the task column ("comm-pid") of the kernel's text, pid 0 is <idle>.
awk '/ sched_switch: / { t = $1; k = t; sub(/-[0-9]+$/, "", k); p = substr(t, length(k) + 2); print p, k }' $A/trace.txt |
	sort -n | uniq -c | awk '{ printf "{ common_pid: %-16s[%10d] } hitcount: %10d\n", $3, $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=common_pid.execname:sort=common_pid' $A \
	'keys=common_pid.execname:vals=hitcount:sort=common_pid.execname:size=2048' "$W/e" \
	".execname names the pid as the kernel's text does"

# .log2 and .buckets=N on a number: ceil(log2(v)), v / N * N.
field $A/trace.txt sched_switch next_pid | awk '{ l = 0; while (2 ^ l < $1) l++; print l }' | sort -n | uniq -c |
	awk '{ printf "{ next_pid: ~ 2^%-2d } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_pid.log2:sort=next_pid' $A \
	'keys=next_pid.log2:vals=hitcount:sort=next_pid.log2:size=2048' "$W/e" ".log2 buckets"
field $A/trace.txt sched_switch next_pid | awk '{ print int($1 / 1000) * 1000 }' | sort -n | uniq -c |
	awk '{ printf "{ next_pid: ~ %d-%d } hitcount: %10d\n", $2, $2 + 999, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_pid.buckets=1000:sort=next_pid' $A \
	'keys=next_pid.buckets=1000:vals=hitcount:sort=next_pid.buckets=1000:size=2048' "$W/e" ".buckets=1000"

# if FILTER: only the records the kernel's filter language keeps, the filter printed back.
awk '/ sched_switch: / { for (i = 1; i <= NF; i++) { if ($i ~ /^prev_prio=/) q = substr($i, 11) + 0; if ($i ~ /^next_comm=/) c = substr($i, 11); if ($i ~ /^next_pid=/) p = substr($i, 10) }
	if (q < 120 || c ~ /^ba/) print p }' $A/trace.txt | sort -n | uniq -c |
	awk '{ printf "{ next_pid: %10d } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_pid:sort=next_pid if prev_prio < 120 || next_comm ~ "ba*"' $A \
	'keys=next_pid:vals=hitcount:sort=next_pid:size=2048 if prev_prio < 120 || next_comm ~ "ba*"' "$W/e" \
	"if FILTER keeps what the kernel's filter language keeps"
awk '/ sched_switch: / { t = $1; sub(/-[0-9]+$/, "", t); if (t == "bash") for (i = 1; i <= NF; i++) if ($i ~ /^next_pid=/) print substr($i, 10) }' \
	$A/trace.txt | sort -n | uniq -c | awk '{ printf "{ next_pid: %10d } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched:sched_switch 'keys=next_pid:sort=next_pid if COMM == "bash"' $A \
	'keys=next_pid:vals=hitcount:sort=next_pid:size=2048 if COMM == "bash"' "$W/e" "if COMM == ...: the writer's comm"

# -- syscalls and signed numbers: cap-d's sys_enter / sys_exit (2711 each)
field_nr() { awk '/ sys_enter: NR / { print $7 }' $D/trace.txt; }
field_nr | sort -n | uniq -c | awk 'BEGIN { n[0] = "sys_read"; n[1] = "sys_write"; n[3] = "sys_close"; n[13] = "sys_rt_sigaction";
	n[14] = "sys_rt_sigprocmask"; n[15] = "sys_rt_sigreturn"; n[33] = "sys_dup2"; n[61] = "sys_wait4"; n[62] = "sys_kill";
	n[72] = "sys_fcntl"; n[130] = "sys_rt_sigsuspend"; n[231] = "sys_exit_group"; n[257] = "sys_openat" }
	{ printf "{ id: %-30s[%3d] } hitcount: %10d\n", ($2 in n) ? n[$2] : "unknown_syscall", $2, $1 }' > "$W/e"
same raw_syscalls:sys_enter 'keys=id.syscall:sort=id' $D \
	'keys=id.syscall:vals=hitcount:sort=id.syscall:size=2048' "$W/e" ".syscall names x86_64 system calls"

# ret is a signed long: sign-extended, printed as u64, sorted as signed.
: > "$W/e"
awk '/ sys_exit: NR / { print $NF }' $D/trace.txt | sort -n | uniq -c | while read -r c v; do
	printf '{ ret: %10s } hitcount: %10d\n' "$(printf '%u' "$v")" "$c" >> "$W/e"
done
same raw_syscalls:sys_exit 'keys=ret:sort=ret' $D 'keys=ret:vals=hitcount:sort=ret:size=2048' "$W/e" \
	"a negative signed key: sign-extended, sorted as signed"

# -- size=: the first 128 distinct keys by time are kept, the later ones' events dropped.
# common_timestamp.usecs is the kernel's ns2usecs(), the very number its text prints.
awk '/ sched_switch: / { t = $(NF - 0); for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { split($i, a, /[.:]/); print a[1] a[2] } }' \
	$A/trace.txt | sort -n | uniq -c > "$W/ts"
head -128 "$W/ts" | awk '{ printf "{ common_timestamp: %10d } hitcount: %10d\n", $2, $1 }' > "$W/e"
drop=$(tail -n +129 "$W/ts" | awk '{ d += $1 } END { print d + 0 }')
"$TB" hist -e sched:sched_switch 'keys=common_timestamp.usecs:size=100:sort=common_timestamp' $A > "$W/got" 2>&1
expect 'keys=common_timestamp.usecs:vals=hitcount:sort=common_timestamp.usecs:size=128:clock=global' "$W/e" |
	sed "s/Dropped: 0/Dropped: $drop/" > "$W/want"
cmp -s "$W/got" "$W/want"; check $? "size=100 holds 128 entries; the $drop later events are Dropped, not Hits"

# .sym-offset and .sym: the kernel's own %pS of the same addresses in its text (cap-f has kallsyms).
F=tests/data/kernel/cap-f-many-systems
awk '/ kmalloc: / { for (i = 1; i <= NF; i++) { if ($i ~ /^call_site=/) c = substr($i, 11); if ($i ~ /^bytes_req=/) b = substr($i, 11) }
	n[c]++; s[c] += b } END { for (c in n) printf "%-55s } hitcount: %10d  bytes_req: %10d\n", c, n[c], s[c] }' $F/trace.txt |
	LC_ALL=C sort > "$W/e"
"$TB" hist -e kmem:kmalloc 'keys=call_site.sym-offset:vals=bytes_req' $F | sed -n 's/^{ call_site: \[[0-9a-f]*\] //p' | LC_ALL=C sort > "$W/got"
[ -s "$W/e" ] && cmp -s "$W/e" "$W/got"; check $? ".sym-offset prints each call site as the kernel's text does"
sed 's/+0x[0-9a-f]*\/0x[0-9a-f]* */ /' "$W/e" | awk '{ printf "%-45s } hitcount: %10d\n", $1, $4 }' | LC_ALL=C sort > "$W/e2"
"$TB" hist -e kmem:kmalloc 'keys=call_site.sym' $F | sed -n 's/^{ call_site: \[[0-9a-f]*\] //p' | LC_ALL=C sort > "$W/got"
[ -s "$W/e2" ] && cmp -s "$W/e2" "$W/got"; check $? ".sym prints the symbol alone, one entry per address"

# -- a trace.dat, against trace-cmd's own report of it
awk '/ sched_switch: / { for (i = 1; i <= NF; i++) if ($i == "==>") { s = $(i + 1); sub(/.*:/, "", s); print s } }' \
	tests/data/trace-dat/sched-v7-zstd.report.txt | sort -n | uniq -c |
	awk '{ printf "{ next_pid: %10d } hitcount: %10d\n", $2, $1 }' > "$W/e"
same sched_switch 'keys=next_pid:sort=next_pid' $DAT 'keys=next_pid:vals=hitcount:sort=next_pid:size=2048' "$W/e" \
	"a zstd trace.dat, counted from trace-cmd's report"

# -- refused specs: the reason and the offset in the spec
refused() {
	"$TB" hist -e "$1" "$2" $A > /dev/null 2> "$W/err"; rc=$?
	if [ $rc -eq 2 ] && grep -q "at offset $3: $4" "$W/err"; then check 0 "refused: $2"; else
		check 1 "refused: $2 (exit $rc)"; sed 's/^/# /' "$W/err"; fi
}
refused sched:sched_switch 'keys=next_pidd' 5 "Couldn't find field 'next_pidd' in sched:sched_switch (its fields: common_type"
refused sched:sched_switch 'hist:keys=next_pid:vals=prev_prio,nope' 34 "Couldn't find field 'nope'"
refused sched:sched_switch 'keys=next_comm.log2' 15 "the modifier .log2 needs a number, and 'next_comm' is a string"
refused sched:sched_switch 'keys=next_pid.execname' 14 ".execname applies to common_pid only"
refused sched:sched_switch 'keys=next_pid.usecs' 14 ".usecs applies to common_timestamp only"
refused sched:sched_switch 'keys=next_pid.bogus' 14 "invalid field modifier 'bogus'"
refused sched:sched_switch 'keys=next_pid.buckets=0' 22 "buckets= needs a positive number"
refused sched:sched_switch 'keys=next_pid:vals=next_comm' 19 "vals= sums numbers, and 'next_comm' is a string"
refused sched:sched_switch 'keys=next_pid:sort=prev_pid' 19 "Sort field must be a key or a val"
refused sched:sched_switch 'keys=next_pid:sort=next_pid.up' 28 "Invalid sort modifier 'up'"
refused sched:sched_switch 'keys=next_pid:size=64' 19 "size=64 is out of range"
refused sched:sched_switch 'keys=next_pid:vals=' 14 "Empty assignment"
refused sched:sched_switch 'keys=a,b,c,d' 5 "Couldn't find field 'a'"
refused sched:sched_switch 'keys=prev_pid,next_pid,prev_prio,next_prio' 33 "too many keys (3 at most)"
refused sched:sched_switch 'vals=prev_prio' 0 "no keys="
refused sched:sched_switch 'keys=next_pid+1' 13 "expressions and variables are not supported"
refused sched:sched_switch 'keys=next_pid if next_pidd > 0' 17 "in the filter: Field not found"
refused sched:sched_switch 'keys=next_pid if next_pid >' 27 "in the filter: Invalid value"
refused raw_syscalls:sys_enter 'keys=args' 5 "'args' (unsigned long) is an array"

# -- a trace without the event: what to record, and how
"$TB" hist -e kmem:kmalloc 'keys=common_pid' $A > /dev/null 2> "$W/err"; rc=$?
[ $rc -eq 1 ] && grep -q "tracebuf capture -e kmem:kmalloc -o DIR -- CMD ARGS" "$W/err"
check $? "an event the trace has no format for: exit 1 and the capture command to record it"
"$TB" hist -e raw_syscalls:sys_enter 'keys=id' $A > /dev/null 2> "$W/err"; rc=$?
[ $rc -eq 1 ] && grep -q "holds no raw_syscalls:sys_enter records" "$W/err" && grep -q "tracebuf capture -e raw_syscalls:sys_enter" "$W/err"
check $? "an event with a format but no records: exit 1 and how to record it"

# -- damaged pages: reported with the file and offset, the rest counted
mkdir "$W/bad" && cp -r $A/. "$W/bad/"
printf '\377\377\377\377\377\377\377\377' | dd of="$W/bad/cpu0.raw" bs=1 seek=8200 conv=notrunc 2>/dev/null
"$TB" hist -e sched:sched_switch 'keys=next_pid' "$W/bad" > "$W/got" 2> "$W/err"; rc=$?
[ $rc -eq 1 ] && grep -q "cpu0.raw: byte 8" "$W/err" && grep -q "^Totals:" "$W/got"
check $? "a damaged sub-buffer: named with its file and offset, exit 1, the hist of the rest printed"

# Records too short for the fields the hist reads (a format that puts next_prio past their end):
# the first ten named with file and offset, all counted, exit 1.
mkdir "$W/short" && cp -r $A/. "$W/short/"
sed -i 's/next_prio;\toffset:[0-9]*;/next_prio;\toffset:200;/' "$W/short/formats/sched/sched_switch.format"
"$TB" hist -e sched:sched_switch 'keys=next_prio' "$W/short" > "$W/got" 2> "$W/err"; rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'cpu[01].raw: byte [0-9]*: sched:sched_switch record of [0-9]* bytes does not hold' "$W/err")" = 10 ] &&
	grep -q "^tracebuf hist: 221 damaged sched:sched_switch records left out" "$W/err" && grep -q "Hits: 0" "$W/got"
check $? "records too short for the hist's fields: 10 named, 221 counted, exit 1"

echo "1..$n"
exit $fail
