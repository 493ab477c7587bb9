#!/bin/sh
# The trace.dat commands of the CLI: report (trace-cmd's text for every
# vector and option, the kernel's text with --like-kernel, --like-trace-cmd
# on a capture directory), convert (then the real trace-cmd reads it),
# dump, stats, --help, and the exit statuses of bad input.
B=${TB_BUILD:-build}
TB=$B/tracebuf
V=tests/data/trace-dat
K=tests/data/kernel
tmp=$(mktemp -d /tmp/tb-cli-tdat-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
skip() { n=$((n+1)); echo "ok $n # skip $1"; }

# report: every stored trace-cmd output, byte for byte (options as trace-cmd takes them)
for want in $V/*.report*.txt; do
	base=$(basename "$want" .txt); dat=${base%%.report*}; suffix=${base#"$dat".report}
	case $suffix in
	-N) opt=-N ;; -R) opt=-R ;; -l) opt=-l ;; -t) opt=-t ;; -stat) opt=--stat ;; *) opt= ;;
	esac
	$TB report --like-trace-cmd $opt "$V/$dat.dat" > "$tmp/out" 2> "$tmp/err"; rc=$?
	cmp -s "$tmp/out" "$want" && [ $rc = 0 ] && [ ! -s "$tmp/err" ]
	check $? "report $opt $dat.dat prints $base.txt byte for byte, exit 0, nothing on stderr"
done
$TB report --like-trace-cmd -i $V/sched-v7-zstd.dat | cmp -s - $V/sched-v7-zstd.report.txt
check $? "report -i FILE, as trace-cmd takes its input"
$TB report --cpu 3 $V/sched-marker-v6.dat | grep -c 'dat: .*\[001\]' | grep -qx 199
check $? "report --cpu 3 (trace-cmd's merged numbering: dat's CPU 1) prints its 199 events"
[ "$($TB report --cpu 0,1 $V/sched-marker-v6.dat | wc -l)" = 1 ]
check $? "report --cpu 0,1 selects the empty top buffer: cpus= alone"
$TB report --cpu 2-x $V/sched-marker-v6.dat >/dev/null 2>&1
[ $? = 2 ]; check $? "report --cpu with a bad list: usage, exit 2"

# The default: trace-cmd's framing with the kernel's text.  Against trace-cmd's
# own text (--like-trace-cmd, byte-for-byte trace-cmd's above): every line's
# framing (prefix, comm-pid, CPU, time, event name) the same, and the text the
# same except for the events trace-cmd prints otherwise (docs/trace-dat.md lists why).
differs='sched_switch|sched_wakeup|sched_wakeup_new|hrtimer_start|hrtimer_expire_entry|timer_start|raw_data'
for dat in $V/*.dat; do
	$TB report "$dat" > "$tmp/k" 2>&1; rc=$?
	$TB report --like-trace-cmd "$dat" > "$tmp/t" 2>&1
	paste -d '\n' "$tmp/k" "$tmp/t" | paste - - | awk -F '\t' -v differs="^($differs)$" '
		{ k = $1; t = $2; split(k, kk, /: +/); n = index(k, "] ") }
		k == t { next }
		{ frame = substr(k, 1, n + 20); rest = substr(k, n + 2); sub(/^ *[0-9.]+: /, "", rest); name = rest; sub(/:.*/, "", name) }
		substr(t, 1, length(frame)) != frame || name !~ differs { print "unexpected: " k; bad = 1 }
		END { exit bad }' > "$tmp/why"
	[ $? = 0 ] && [ $rc = 0 ] && [ "$(wc -l < "$tmp/k")" = "$(wc -l < "$tmp/t")" ]
	check $? "report $(basename "$dat"): trace-cmd's lines, the kernel's text where trace-cmd's differs $(head -1 "$tmp/why")"
done
# rendered by worker threads or all on the reading thread: the same text
for dat in $V/top-buffer-v6.dat $V/sched-v7-zstd.dat; do
	TB_REPORT_THREADS=0 $TB report "$dat" > "$tmp/k0" 2>&1
	TB_REPORT_THREADS=3 $TB report "$dat" | cmp -s - "$tmp/k0"
	check $? "report $(basename "$dat"): 3 worker threads print what the reading thread alone prints"
done
# ... and that text is the kernel's own: a capture's trace.txt, as the kernel printed it, is the oracle.
for cap in cap-a-small-noloss cap-c-subbuf8k; do
	$TB convert $K/$cap -o "$tmp/c.dat" 2>/dev/null
	$TB report "$tmp/c.dat" 2>/dev/null | awk '/^cpus=/ || /EVENTS DROPPED/ { next }
		{ r = substr($0, index($0, "]") + 1); sub(/^ +/, "", r); ts = r; sub(/:.*/, "", ts)
		  r = substr(r, length(ts) + 3); name = r; sub(/:.*/, "", name)
		  t = substr(r, length(name) + 3); sub(/^ +/, "", t)
		  # the kernel names an ftrace event by its text alone; every other event by "name: "
		  print ts " " (name ~ /^(print|bprint|bputs|function|raw_data)$/ ? "" : name ": ") t }' | sort -s -k1,1 > "$tmp/ours"
	grep -v -e '^#' -e 'LOST' $K/$cap/trace.txt | awk '{ r = substr($0, index($0, "]") + 1); sub(/^ +[^ ]+ +/, "", r); print r }' |
		sed 's/: / /' | sort -s -k1,1 > "$tmp/kern"
	[ -s "$tmp/ours" ] && cmp -s "$tmp/ours" "$tmp/kern"
	check $? "report of $cap as a trace.dat: every event's text is the kernel's own (its trace.txt)"
done

# the kernel's text of a trace.dat, and trace-cmd's text of a capture directory
$TB report --like-kernel $V/sched-marker-v6.dat > "$tmp/k" 2>&1
head -1 "$tmp/k" | grep -q '^# tracer: nop' && [ "$(grep -vc '^#' "$tmp/k")" = 1044 ]
check $? "report --like-kernel prints the kernel's header and the 1044 events of dat"
$TB report --like-kernel --buffer nosuch $V/sched-marker-v6.dat >/dev/null 2>&1
[ $? = 2 ]; check $? "report --like-kernel --buffer with an unknown name: exit 2"
if command -v trace-cmd >/dev/null 2>&1; then
	for cap in cap-a-small-noloss cap-b-overrun cap-f-many-systems; do
		$TB convert $K/$cap -o "$tmp/c.dat" 2>/dev/null
		trace-cmd report "$tmp/c.dat" > "$tmp/tc" 2>/dev/null
		$TB report --like-trace-cmd $K/$cap | cmp -s - "$tmp/tc"
		check $? "report --like-trace-cmd $cap prints what trace-cmd prints for it as a trace.dat"
	done
else
	skip "trace-cmd is not installed"; skip "trace-cmd is not installed"; skip "trace-cmd is not installed"
fi

# convert: v6 by default, --v7, --compress; trace-cmd's own spellings too
for args in "" "--v7" "--v7 --compress zstd" "--file-version 7 --compression zstd" "--v7 --compress zlib"; do
	# shellcheck disable=SC2086
	$TB convert $args $K/cap-b-overrun -o "$tmp/b.dat" 2> "$tmp/err"; rc=$?
	$TB report --like-trace-cmd "$tmp/b.dat" > "$tmp/ours" 2>> "$tmp/err"
	[ $rc = 0 ] && [ ! -s "$tmp/err" ] && [ "$(wc -l < "$tmp/ours")" = 527 ]
	check $? "convert $args cap-b-overrun: exit 0, and its 526 events read back"
	case "$args" in *zlib*) continue ;; esac
	if command -v trace-cmd >/dev/null 2>&1; then
		trace-cmd report "$tmp/b.dat" 2>/dev/null | cmp -s - "$tmp/ours"
		check $? "convert $args: trace-cmd report prints what tracebuf report prints"
	else
		skip "trace-cmd is not installed"
	fi
done
$TB convert --compress zstd $K/cap-b-overrun -o "$tmp/x.dat" 2>/dev/null
[ $? = 2 ]; check $? "convert --compress without --v7: exit 2"
$TB convert $tmp/nothing -o "$tmp/x.dat" 2> "$tmp/err"
[ $? = 3 ] && grep -q 'header_page' "$tmp/err"
check $? "convert of a directory without header_page: exit 3 (input), said"

# dump and stats
$TB dump $V/sched-v7-zstd.dat > "$tmp/d"; rc=$?
[ $rc = 0 ] && grep -q 'section 19, kallsyms (compressed)' "$tmp/d" &&
	grep -q '1012410 *5414753' "$tmp/d" && grep -q 'CPU 0: 1819 bytes at byte 1024000' "$tmp/d"
check $? "dump lists the sections, kallsyms 1012410 -> 5414753 bytes, dat's CPU 0 at 1024000"
[ "$($TB dump --records --buffer dat --cpu 1 $V/sched-v7-zstd.dat | grep -c ': id .* pid ')" = 236 ]
check $? "dump --records: CPU 1's 236 events, one line each"
$TB stats $V/sched-marker-v6.dat > "$tmp/s"
grep -q '^== cpu0 (.*buffer dat)' "$tmp/s" && grep -q '^written: 845 (entries + overrun + read)' "$tmp/s" &&
	grep -q '^written: 199 ' "$tmp/s"
check $? "stats FILE.dat: dat's stored stats with the derived written lines (845, 199)"
$TB stats $V/lost-events-v6.dat | grep -q '^lost: 165 ('
check $? "stats FILE.dat: lost-events' CPU 1 lost 165 (its overrun)"

# help
for cmd in report convert dump stats; do
	$TB $cmd --help > "$tmp/h" 2>&1 && grep -q "usage: tracebuf $cmd" "$tmp/h"
	check $? "$cmd --help prints its usage, exit 0"
done

# bad input: a clear message with the file and an offset, exit 2
printf 'not a trace file at all' > "$tmp/bad.dat"
$TB report "$tmp/bad.dat" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "bad.dat: byte 0: not a trace.dat file" "$tmp/err"
check $? "report of a non-trace.dat file: exit 3, the file and byte 0 named"
head -c 3000 $V/minimal-handmade-v6.dat > "$tmp/cut.dat"
$TB report "$tmp/cut.dat" > "$tmp/out" 2> "$tmp/err"; rc=$?
# cut before its one CPU's data: read to the cut (the metadata, no event), the cut said, exit 1
[ $rc = 1 ] && grep -q "cut.dat: byte 3000: the file is cut short here; the data of 1 CPU is lost" "$tmp/err" &&
	[ "$(cat "$tmp/out")" = "cpus=1" ]
check $? "report of a file cut before its data: exit 1, the cut's byte named (got $rc)"
head -c 20000 $V/sched-marker-v7-zstd.dat > "$tmp/cut7.dat"
$TB dump "$tmp/cut7.dat" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc != 0 ] && grep -q "cut7.dat: byte [0-9]*: " "$tmp/err"
check $? "dump of a cut v7 file: non-zero exit, file and offset named"

# trace_options for a trace.dat: trace-cmd saves none (its options hold no
# trace_options), so --like-kernel lays the text out by the defaults and
# --options words apply over them as for a capture.
SM=$V/sched-marker-v6.dat
"$TB" report --like-kernel "$SM" > "$tmp/td.default"
"$TB" report --like-kernel --options fields "$SM" > "$tmp/td.fields"
check $? "report --like-kernel --options fields of a trace.dat exits 0"
[ "$(wc -l < "$tmp/td.fields")" = "$(wc -l < "$tmp/td.default")" ] &&
	grep -q ' sched_switch: prev_comm=python3 prev_pid=0x36ed (14061) prev_prio=0x78 (120) prev_state=0x0 (0) next_comm=' "$tmp/td.fields" &&
	[ "$(grep -c ': UNKNOWN TYPE 5$' "$tmp/td.fields")" = "$(grep -c ': tracing_mark_write: ' "$tmp/td.default")" ]
check $? "trace.dat under fields: NAME=0xHEX (DEC) per field, trace_marker's records as the kernel's UNKNOWN TYPE 5"
"$TB" report --like-kernel --options sym-offset,sym-addr "$SM" |
	grep -q ': tracing_mark_write+0x91/0x170 <ffffffff814aa001>: marker 1 start$'
check $? "trace.dat under sym-offset,sym-addr: the marker's writer as symbol+offset/size <address>"

echo "1..$n"
exit $fail
