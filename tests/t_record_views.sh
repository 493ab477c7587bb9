#!/bin/sh
# One recording, every view (issue 23): examples/pool (two worker threads,
# pool:request and a printf event, its own count of each printed at exit)
# recorded with `tracebuf record` without and with --kernel and --offcpu,
# then read by report, hist, offcpu, convert (json, folded, flamegraph),
# list, stats and dump.  The program's events are held to the program's own
# counts exactly, in every view; the kernel's (whatever the system did) to
# being there and to every view agreeing with report's count of them.
# Then a trace.dat of two real captures joined as two buffers: every view
# reads both, --buffer NAME one.  The kernel parts skip without root or
# tracefs.
B=${TB_BUILD:-build}
TB=$B/tracebuf
P=$B/examples/pool
K=tests/data/kernel
tmp=$(mktemp -d /tmp/tb-record-views-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
skip() { n=$((n+1)); echo "ok $n # skip $1"; }

# The program's own counts, from its exit line "pool: emitted pool:request=N printf=M".
emitted() { sed -n "s/^pool: emitted .*$1=\([0-9]*\).*/\1/p" "$2"; }
# Lines of report naming an event (its column is "NAME:" padded).
report_count() { grep -c " $1: " "$2"; }
# A hist's total hits.
hits() { sed -n 's/^ *Hits: *\([0-9]*\)$/\1/p' "$1"; }
# list -c's count of an event (0 when it is not listed).
listed() { awk -v e="$1" '$2 == e { c = $1 } END { print c + 0 }' "$2"; }
# dump's records of a buffer: the "E events" of each of its pages, summed.
dumped() { awk -v b="buffer \"$1\" CPU" 'index($0, b) == 1 { on = 1; next } /^buffer / { on = 0 }
	on && /^    page / { for (i = 1; i <= NF; i++) if ($(i + 1) == "events,") s += $i } END { print s + 0 }' "$2"; }
# stats' written events of a buffer ("" the top one), summed over its CPUs.
stats_written() { awk -v b="$1" '/^== cpu/ { on = (b == "" ? $0 !~ /, buffer / : index($0, ", buffer " b ")") > 0) }
	on && /^written: / { s += $2 } END { print s + 0 }' "$2"; }
# The JSON's events as "ph cat name tid" lines, with args.text's event for printf text.
json_events() { python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for e in (d["traceEvents"] if isinstance(d, dict) else d):
    a = e.get("args", {})
    print(e["ph"], e.get("cat", "-"), a.get("event", e["name"]) if "text" in a else e["name"].replace(" ", "_"),
          e.get("pid"), e.get("tid"), "%.3f" % e["ts"] if "ts" in e else "-")' "$1"; }
have_py=0; command -v python3 > /dev/null 2>&1 && have_py=1

[ -x "$P" ] || { echo "1..0 # SKIP $P not built (make tests builds the examples)"; exit 0; }

# The program's events in every view of a recording F (the program's emitted counts in E).
program_views() {
	f=$1 e=$2 what=$3
	req=$(emitted pool:request "$e") pf=$(emitted printf "$e")
	[ -n "$req" ] && [ "$req" -gt 0 ] && [ "$pf" = "$req" ] && grep -q 'lost 0 ' "$e"
	check $? "$what: the program emitted $req pool:request and $pf printf events; record lost none"
	$TB report "$f" > "$tmp/r.txt" 2> "$tmp/r.err"
	[ $? = 0 ] && [ "$(report_count request "$tmp/r.txt")" = "$req" ] && [ "$(report_count bprint "$tmp/r.txt")" = "$pf" ]
	check $? "$what: report shows every request and every printf line"
	# (a kernel_stack record prints its frames on lines of their own, " => ADDR")
	[ "$($TB report --count "$f" | sed -n 's/^events \([0-9]*\) .*/\1/p')" = "$(grep -vc -e '^cpus=' -e '^ *=> ' "$tmp/r.txt")" ]
	check $? "$what: report --count counts every record report prints, of every buffer"
	$TB hist -e pool:request keys=worker "$f" > "$tmp/h.txt" 2> "$tmp/h.err"
	[ $? = 0 ] && [ "$(hits "$tmp/h.txt")" = "$req" ] &&
		[ "$(grep -c "^{ worker: *[12] } hitcount: *$((req / 2))$" "$tmp/h.txt")" = 2 ]
	check $? "$what: hist -e pool:request counts $req hits, $((req / 2)) per worker ($(hits "$tmp/h.txt"))"
	$TB list -c "$f" > "$tmp/l.txt" 2> "$tmp/l.err"
	[ $? = 0 ] && [ "$(listed pool:request "$tmp/l.txt")" = "$req" ] && [ "$(listed ftrace:bprint "$tmp/l.txt")" = "$pf" ]
	check $? "$what: list -c counts them"
	$TB dump "$f" > "$tmp/d.txt" 2> "$tmp/d.err"
	[ $? = 0 ] && [ "$(dumped "" "$tmp/d.txt")" = $((req + pf)) ]
	check $? "$what: dump's pages of the program's buffer hold $((req + pf)) records ($(dumped "" "$tmp/d.txt"))"
	$TB stats "$f" > "$tmp/s.txt" 2> "$tmp/s.err"
	[ $? = 0 ] && [ "$(stats_written "" "$tmp/s.txt")" = $((req + pf)) ]
	check $? "$what: stats of the program's buffer: $((req + pf)) written ($(stats_written "" "$tmp/s.txt"))"
	$TB convert "$f" -o "$tmp/v.json" 2> "$tmp/j.err"
	rc=$?
	if [ $have_py = 1 ]; then
		json_events "$tmp/v.json" > "$tmp/j.txt"
		[ $rc = 0 ] && [ "$(grep -c '^i pool request ' "$tmp/j.txt")" = "$req" ] &&
			[ "$(grep -c '^i ftrace bprint ' "$tmp/j.txt")" = "$pf" ]
		check $? "$what: the JSON has every request, and every printf as an instant with its text"
		# The same record at the same time in both: report -t's ns are the JSON's us to the ns.
		$TB report -t "$f" | sed -n 's/.* \([0-9]*\)\.\([0-9]*\): request: *worker=\([12]\) id=\([0-9]*\) .*/\3 \4 \1\2/p' |
			awk '{ printf "%s %s %.3f\n", $1, $2, $3 / 1000 }' | sort > "$tmp/ts.report"
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for e in (d["traceEvents"] if isinstance(d, dict) else d):
    if e.get("cat") == "pool" and e["name"] == "request":
        print(e["args"]["worker"], e["args"]["id"], "%.3f" % e["ts"])' "$tmp/v.json" | sort > "$tmp/ts.json"
		[ "$(wc -l < "$tmp/ts.report")" = "$req" ] && cmp -s "$tmp/ts.report" "$tmp/ts.json"
		check $? "$what: each request's JSON ts is report's time of it, to the nanosecond"
		# and SQL's: the request table's ts (ns) is report -t's time of the same record
		$TB report -t "$f" | sed -n 's/.* \([0-9]*\)\.\([0-9]*\): request: *worker=\([12]\) id=\([0-9]*\) .*/\3 \4 \1\2/p' |
			sed 's/ 0*\([0-9]\)/ \1/g' | sort > "$tmp/ts.report.ns"
		$TB sql "$f" -Q "SELECT worker, id, ts FROM request" --format csv 2> "$tmp/q.err" | tail -n +2 | tr ',' ' ' |
			sort > "$tmp/ts.sql"
		[ "$(wc -l < "$tmp/ts.sql")" = "$req" ] && cmp -s "$tmp/ts.report.ns" "$tmp/ts.sql"
		check $? "$what: each request's SQL ts is report's time of it, in ns ($(wc -l < "$tmp/ts.sql") rows)"
		grep "serve: worker 1 served request 0$" "$tmp/r.txt" > /dev/null &&
			grep -q '"name":"serve: worker 1 served request 0"' "$tmp/v.json"
		check $? "$what: a printf's JSON text is the text report prints"
	else
		skip "python3 not installed"; skip "python3 not installed"; skip "python3 not installed"; skip "python3 not installed"
	fi
}

# 1. Without --kernel: one buffer, the program's.
$TB record -o "$tmp/plain.dat" -- $P 150 > /dev/null 2> "$tmp/plain.err"
check $? "record -- pool: exit 0"
program_views "$tmp/plain.dat" "$tmp/plain.err" "without --kernel"
$TB offcpu "$tmp/plain.dat" > /dev/null 2> "$tmp/o.err"; rc=$?
[ $rc = 1 ] && grep -q "has no sched:sched_switch" "$tmp/o.err" &&
	grep -q "tracebuf record --offcpu -o FILE.dat" "$tmp/o.err"
check $? "offcpu of a recording without the kernel: exit 1 (nothing measured), names record --offcpu ($rc)"
$TB hist -e sched:sched_switch keys=prev_comm "$tmp/plain.dat" > /dev/null 2> "$tmp/h.err"; rc=$?
[ $rc = 1 ] && grep -q "tracebuf record --kernel sched:sched_switch -o FILE.dat" "$tmp/h.err"
check $? "hist of a kernel event not recorded: exit 1, names record --kernel ($rc)"
$TB hist -e pool:requst keys=worker "$tmp/plain.dat" > /dev/null 2> "$tmp/h.err"; rc=$?
[ $rc = 2 ] && grep -q "no event pool:requst.*the closest: pool:request" "$tmp/h.err"
check $? "hist of an event that is nowhere: exit 2, the closest real name ($(head -c 120 "$tmp/h.err"))"
$TB report -F requst "$tmp/plain.dat" > "$tmp/r.txt" 2> "$tmp/r.err"; rc=$?
[ $rc = 2 ] && grep -q "no event 'requst'.*the closest: pool:request" "$tmp/r.err"
check $? "report -F with a mistyped event: exit 2, the closest real name ($rc)"
for c in report hist stats list offcpu dump; do
	case $c in hist) a="-e pool:request keys=worker" ;; *) a= ;; esac
	$TB $c $a "$tmp/nope.dat" > /dev/null 2> "$tmp/m.err"; rc=$?
	[ $rc = 3 ] && head -n 1 "$tmp/m.err" | grep -q "$tmp/nope.dat: .*no such file"
	check $? "$c of a missing file: exit 3, 'no such file' first ($(head -n 1 "$tmp/m.err"))"
done
$TB hist keys=worker "$tmp/plain.dat" > /dev/null 2> "$tmp/u.err"; rc=$?
[ $rc = 2 ] && head -n 1 "$tmp/u.err" | grep -q "the event is missing: -e"
check $? "hist without -e: names the missing -e before the usage"
$TB convert "$tmp/plain.dat" > /dev/null 2> "$tmp/u.err"; rc=$?
[ $rc = 2 ] && head -n 1 "$tmp/u.err" | grep -q "the output is missing: -o FILE"
check $? "convert without -o: names the missing -o before the usage"

# 2. With the kernel: the program's buffer and "kernel", and every view reads both.
kernel_ok=1
[ "$(id -u)" = 0 ] || kernel_ok=0
TOP=/sys/kernel/tracing
[ $kernel_ok = 1 ] && { [ -d "$TOP/instances" ] || mount -t tracefs nodev "$TOP" 2> /dev/null; }
[ -d "$TOP/instances" ] || kernel_ok=0
if [ $kernel_ok = 1 ]; then
	$TB record --kernel sched:sched_switch -o "$tmp/k.dat" -- $P 150 > /dev/null 2> "$tmp/k.err"
	check $? "record --kernel sched:sched_switch -- pool: exit 0"
	program_views "$tmp/k.dat" "$tmp/k.err" "with --kernel"
	$TB report "$tmp/k.dat" > "$tmp/kr.txt"
	sw=$(report_count sched_switch "$tmp/kr.txt") kall=$(grep -c '^kernel: ' "$tmp/kr.txt")
	[ "$sw" -gt 0 ] && [ "$sw" = "$kall" ]
	check $? "report shows $sw sched_switch records, all of buffer kernel"
	$TB hist -e sched:sched_switch keys=prev_comm "$tmp/k.dat" > "$tmp/h.txt" 2> /dev/null
	[ $? = 0 ] && [ "$(hits "$tmp/h.txt")" = "$sw" ]
	check $? "hist -e sched:sched_switch counts report's $sw ($(hits "$tmp/h.txt"))"
	$TB hist --buffer kernel -e sched:sched_switch keys=prev_comm "$tmp/k.dat" > "$tmp/h.txt" 2> /dev/null
	[ $? = 0 ] && [ "$(hits "$tmp/h.txt")" = "$sw" ]
	check $? "hist --buffer kernel: the same $sw"
	$TB hist --buffer "" -e pool:request keys=worker "$tmp/k.dat" > "$tmp/h.txt" 2> /dev/null
	[ $? = 0 ] && [ "$(hits "$tmp/h.txt")" = "$(emitted pool:request "$tmp/k.err")" ]
	check $? "hist --buffer \"\": the program's requests alone"
	$TB hist --buffer nosuch -e pool:request keys=worker "$tmp/k.dat" > /dev/null 2> "$tmp/h.err"; rc=$?
	[ $rc = 2 ] && grep -q "no buffer 'nosuch' (the buffers are: \"\" (top), \"kernel\")" "$tmp/h.err"
	check $? "hist --buffer with a name the file lacks: exit 2, the buffers named"
	$TB list -c "$tmp/k.dat" > "$tmp/l.txt" && [ "$(listed sched:sched_switch "$tmp/l.txt")" = "$sw" ]
	check $? "list -c counts the $sw sched_switch"
	$TB dump "$tmp/k.dat" > "$tmp/d.txt" && [ "$(dumped kernel "$tmp/d.txt")" = "$kall" ]
	check $? "dump's pages of buffer kernel hold report's $kall ($(dumped kernel "$tmp/d.txt"))"
	$TB stats "$tmp/k.dat" > "$tmp/s.txt" && [ "$(stats_written kernel "$tmp/s.txt")" = "$kall" ]
	check $? "stats of buffer kernel: report's $kall written ($(stats_written kernel "$tmp/s.txt"))"
	# Time agrees: each buffer's latest "now ts" lies just after report's last record of that buffer.
	for b in "" kernel; do
		case $b in "") sel='^ ' ;; *) sel="^$b: " ;; esac
		last=$(grep "$sel" "$tmp/kr.txt" | tail -n 1 | sed -n 's/.* \([0-9]*\.[0-9]*\): .*/\1/p')
		now=$(awk -v b="$b" '/^== cpu/ { on = (b == "" ? $0 !~ /, buffer / : index($0, ", buffer " b ")") > 0) }
			on && /^now ts: / && $3 > m { m = $3 } END { printf "%.6f", m }' "$tmp/s.txt")
		awk -v last="$last" -v now="$now" 'BEGIN { exit !(last > 0 && now >= last && now < last + 60) }'
		check $? "stats' now ts of buffer \"$b\" is report's clock: $now, just after its last record at $last"
	done
	if [ $have_py = 1 ]; then
		$TB convert "$tmp/k.dat" -o "$tmp/k.json" 2> /dev/null
		json_events "$tmp/k.json" > "$tmp/j.txt"
		# A slice is a task's run on a CPU: from a switch to it, to the switch away from it on that CPU
		# (the idle task, pid 0, is no slice), counted from report's lines.
		runs=$(sed -n 's/^kernel: .* \[\([0-9]*\)\] .* sched_switch: .* prev_pid=\([0-9]*\) .* next_pid=\([0-9]*\) .*/\1 \2 \3/p' \
			"$tmp/kr.txt" | awk '($1 in next_of) && next_of[$1] == $2 && $2 != 0 { n++ } { next_of[$1] = $3 } END { print n + 0 }')
		slices=$(awk '$1 == "X" && $4 == 10000000' "$tmp/j.txt" | wc -l)
		[ "$runs" -gt 0 ] && [ "$slices" = "$runs" ] &&
			[ "$(grep -c '^i pool request ' "$tmp/j.txt")" = "$(emitted pool:request "$tmp/k.err")" ]
		check $? "the JSON: a CPU slice per task run between report's switches ($slices, report: $runs of $sw switches) beside the program's events"
		awk '$1 == "X" && $4 == 10000000 && $5 >= '"$(nproc)"' { bad = 1 } END { exit bad }' "$tmp/j.txt"
		check $? "the JSON's CPU tracks are real CPUs (below $(nproc)), not buffer slots"
	else
		skip "python3 not installed"; skip "python3 not installed"
	fi

	# 3. --offcpu: offcpu finds the kernel buffer's switches and stacks.
	$TB record --offcpu -o "$tmp/o.dat" -- $P 150 > /dev/null 2> "$tmp/o.err"
	check $? "record --offcpu -- pool: exit 0"
	program_views "$tmp/o.dat" "$tmp/o.err" "with --offcpu"
	$TB report "$tmp/o.dat" > "$tmp/or.txt"
	sw=$(report_count sched_switch "$tmp/or.txt") st=$(report_count kernel_stack "$tmp/or.txt")
	$TB offcpu --svg "$tmp/o.svg" "$tmp/o.dat" > "$tmp/o.folded" 2> "$tmp/o.sum"; rc=$?
	[ $rc = 0 ] && grep -q ": [0-9]* records, $sw sched_switch, [1-9][0-9]* off-CPU intervals" "$tmp/o.sum" &&
		[ -s "$tmp/o.folded" ] && ! grep -q 'no samples' "$tmp/o.svg"
	check $? "offcpu: report's $sw sched_switch paired into intervals, folded stacks and a flame graph ($(head -n 1 "$tmp/o.sum"))"
	[ "$st" -gt 0 ] && grep -q "[1-9][0-9]* with a kernel stack" "$tmp/o.sum"
	check $? "offcpu: the $st kernel_stack records give the intervals their stacks"
	$TB convert "$tmp/o.dat" -o "$tmp/c.folded" 2> /dev/null && cmp -s "$tmp/c.folded" "$tmp/o.folded"
	check $? "convert -o .folded writes what offcpu prints"
	$TB convert "$tmp/o.dat" -o "$tmp/c.flame.svg" 2> /dev/null && ! grep -q 'no samples' "$tmp/c.flame.svg"
	check $? "convert -o .flame.svg draws the samples"
	$TB offcpu --buffer "" "$tmp/o.dat" > /dev/null 2> "$tmp/o.err2"; rc=$?
	[ $rc = 1 ] && grep -q "has no sched:sched_switch records in the buffer asked for" "$tmp/o.err2"
	check $? "offcpu --buffer \"\": the program's buffer has no switch, said, exit 1 ($rc)"
	$TB hist -e sched:sched_switch keys=prev_comm "$tmp/o.dat" > "$tmp/h.txt" 2> /dev/null
	[ "$(hits "$tmp/h.txt")" = "$sw" ]
	check $? "hist -e sched:sched_switch on the --offcpu file: report's $sw"
else
	echo "# the kernel parts skipped: not root, or no tracefs"
fi

# 4. Real captures as two buffers of one trace.dat (cap-a the top one, cap-b instance "other").
$TB convert $K/cap-a-small-noloss --add-buffer other=$K/cap-b-overrun -o "$tmp/two.dat" 2> /dev/null
check $? "convert --add-buffer joins two captures"
$TB convert $K/cap-a-small-noloss --buffer other=$K/cap-b-overrun -o "$tmp/two-old.dat" 2> /dev/null &&
	cmp -s "$tmp/two.dat" "$tmp/two-old.dat"
check $? "--buffer NAME=DIR, the old spelling, still joins (the same file)"
$TB report "$tmp/two.dat" > "$tmp/tr.txt" 2> /dev/null
for b in top other; do
	case $b in top) sel='^ ' ;; other) sel='^other: ' ;; esac
	eval "sw_$b=\$(grep \"\$sel\" \"\$tmp/tr.txt\" | grep -c ' sched_switch: ')"
done
[ "$sw_top" -gt 0 ] && [ "$sw_other" -gt 0 ]
check $? "report: sched_switch in both buffers ($sw_top top, $sw_other other)"
$TB hist -e sched:sched_switch keys=common_cpu "$tmp/two.dat" > "$tmp/h.txt" 2> /dev/null
all=$(hits "$tmp/h.txt")
$TB hist --buffer= -e sched:sched_switch keys=common_cpu "$tmp/two.dat" > "$tmp/h.txt" 2> /dev/null
top=$(hits "$tmp/h.txt")
$TB hist --buffer other -e sched:sched_switch keys=common_cpu "$tmp/two.dat" > "$tmp/h.txt" 2> /dev/null
other=$(hits "$tmp/h.txt")
[ "$all" = $((sw_top + sw_other)) ] && [ "$top" = "$sw_top" ] && [ "$other" = "$sw_other" ]
check $? "hist: both buffers by default ($all), each with --buffer ($top + $other), as report counts them"
$TB list -c "$tmp/two.dat" > "$tmp/l.txt" 2> /dev/null
$TB list -c --buffer other "$tmp/two.dat" > "$tmp/l2.txt" 2> /dev/null
[ "$(listed sched:sched_switch "$tmp/l.txt")" = "$all" ] && [ "$(listed sched:sched_switch "$tmp/l2.txt")" = "$sw_other" ]
check $? "list -c: every buffer, --buffer other that one"
$TB convert "$tmp/two.dat" -o "$tmp/two.json" 2> "$tmp/j.err"
recs=$(sed -n 's/.*json: \([0-9]*\) records.*/\1/p' "$tmp/j.err")
[ "$recs" = "$(grep -vc '^cpus=\|EVENTS DROPPED' "$tmp/tr.txt")" ]
check $? "convert to JSON: every record of both buffers ($recs)"
$TB offcpu "$tmp/two.dat" > /dev/null 2> "$tmp/o.sum"
grep -q ": [0-9]* records, $all sched_switch" "$tmp/o.sum"
check $? "offcpu pairs the switches of both buffers ($all)"

echo "1..$n"
exit $fail
