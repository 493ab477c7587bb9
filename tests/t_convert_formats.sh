#!/bin/sh
# tracebuf convert: every format of the export stage's table (as
# `convert --help` lists it) written from real captures and read back by
# its peer - trace-cmd for a trace.dat, `tracebuf report` for a capture
# directory, python's json for Chrome JSON, `tracebuf offcpu` for folded
# stacks and the flame graph, `tracebuf stats --svg` and an XML parser for
# the ring picture; --format overriding the suffix; an unknown format a
# usage error naming the formats; damaged input written without its damage,
# said with file and byte, exit 1; the progress line on a terminal only.
B=${TB_BUILD:-build}
T=$B/tracebuf
K=tests/data/kernel
BAD=tests/data/bad
W=$(mktemp -d /tmp/tb-t-formats-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM HUP
fail=0
n=1
ok() { if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; n=$((n + 1)); }
skip() { echo "ok $n # SKIP $1"; n=$((n + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }
# A well-formed XML document (python's parser), else exit 1.
xml_ok() { python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" 2>/dev/null; }

"$T" convert --help > "$W/help"
formats=$(sed -n '/^Formats/,/^$/p' "$W/help" | awk 'NR > 1 && NF { print $1 }')
[ "$(echo $formats)" = "tracedat capture json folded flamegraph ring-svg sqlite clickhouse-rowbinary" ]
ok $? "convert --help lists the table's formats: $(echo $formats)"

checked=""
for f in $formats; do
	case $f in
	tracedat)
		C=$K/cap-b-overrun
		"$T" convert "$C" -o "$W/o.dat" 2> "$W/err"; rc=$?
		[ $rc = 0 ] && [ ! -s "$W/err" ]; ok $? "tracedat: .dat written, exit 0, nothing said (rc $rc)"
		if have trace-cmd; then
			trace-cmd report "$W/o.dat" > "$W/tc" 2> /dev/null
			"$T" report --like-trace-cmd "$C" | cmp -s - "$W/tc"
			ok $? "tracedat: trace-cmd report of it prints what tracebuf report prints of the capture"
		else
			skip "trace-cmd is not installed"
		fi
		# --format over the suffix: a trace.dat named .json
		"$T" convert --format tracedat "$C" -o "$W/dat.json" 2> /dev/null &&
			cmp -s "$W/o.dat" "$W/dat.json"
		ok $? "tracedat: --format tracedat -o X.json writes the same trace.dat"
		;;
	capture)
		C=$K/cap-b-overrun
		"$T" convert "$C" -o "$W/cap/" 2> "$W/err"; rc=$?
		[ $rc = 0 ] && grep -q "sub-buffers read" "$W/err"; ok $? "capture: -o DIR/ written, exit 0 (rc $rc)"
		"$T" report "$C" > "$W/want" 2>&1
		"$T" report "$W/cap" 2>&1 | cmp -s - "$W/want"
		ok $? "capture: tracebuf report prints the copy as it prints the original"
		"$T" convert --format capture "$K/cap-a-small-noloss" -o "$W/cap2" 2> /dev/null &&
			"$T" report "$K/cap-a-small-noloss" > "$W/want" 2>&1 &&
			"$T" report "$W/cap2" 2>&1 | cmp -s - "$W/want"
		ok $? "capture: --format capture without the trailing slash, report identical"
		"$T" convert "$C" -o "$W/cap/" 2> "$W/err"; rc=$?
		[ $rc = 4 ] && grep -q "cap/: is not empty" "$W/err"
		ok $? "capture: an output that is not empty is refused, exit 4 (output) ($(head -c 70 "$W/err"))"
		"$T" convert "tests/data/trace-dat/sched-v7-zstd.dat" -o "$W/fromdat/" 2> "$W/err"; rc=$?
		[ $rc = 3 ] && grep -q "sched-v7-zstd.dat: not a capture directory" "$W/err"
		ok $? "capture: a trace.dat input is refused as an input of the wrong kind (3), named (rc $rc)"
		;;
	json)
		C=$K/cap-a-small-noloss
		"$T" convert "$C" -o "$W/o.json" 2> "$W/err"; rc=$?
		[ $rc = 0 ] && grep -q "records:" "$W/err"; ok $? "json: written, exit 0, its summary said"
		if have python3; then
			python3 -m json.tool "$W/o.json" > /dev/null 2>&1
			ok $? "json: python3 -m json.tool parses it"
			"$T" report "$C" > "$W/json.txt" 2> /dev/null
			TAP_FROM=$n python3 tests/lib/chrome_check.py sched "$W/o.json" "$W/json.txt" > "$W/check"
			ok $? "json: its slices and instants agree with tracebuf report (chrome_check.py)"
		else
			skip "python3 is not installed"; skip "python3 is not installed"
		fi
		"$T" convert --format json "$C" -o "$W/json.out" 2> /dev/null && cmp -s "$W/o.json" "$W/json.out"
		ok $? "json: --format json -o X.out writes the same JSON"
		;;
	folded)
		C=$K/cap-a-small-noloss
		"$T" convert "$C" -o "$W/o.folded" 2> "$W/err"; rc=$?
		"$T" offcpu "$C" > "$W/offcpu.folded" 2> /dev/null
		[ $rc = 0 ] && [ -s "$W/o.folded" ] && cmp -s "$W/o.folded" "$W/offcpu.folded"
		ok $? "folded: written, exit 0, the lines tracebuf offcpu prints (rc $rc)"
		"$T" convert "$K/cap-g-kernel-printers" -o "$W/none.folded" 2> "$W/err"; rc=$?
		[ $rc = 3 ] && grep -q "has no sched:sched_switch" "$W/err"
		ok $? "folded: an input without sched_switch: nothing written, exit 3 (the input lacks it), said"
		;;
	flamegraph)
		C=$K/cap-a-small-noloss
		"$T" convert "$C" -o "$W/o.flame.svg" 2> /dev/null; rc=$?
		"$T" offcpu --svg "$W/offcpu.svg" "$C" > /dev/null 2>&1
		[ $rc = 0 ] && cmp -s "$W/o.flame.svg" "$W/offcpu.svg"
		ok $? "flamegraph: .flame.svg written, exit 0, the SVG tracebuf offcpu --svg draws (rc $rc)"
		if have python3; then xml_ok "$W/o.flame.svg"; ok $? "flamegraph: well-formed XML"; else skip "no python3"; fi
		;;
	ring-svg)
		C=$K/cap-b-overrun
		"$T" convert "$C" -o "$W/o.svg" 2> /dev/null; rc=$?
		"$T" stats --svg "$W/stats.svg" "$C" 2> /dev/null
		[ $rc = 0 ] && cmp -s "$W/o.svg" "$W/stats.svg" && grep -q "Ring buffer of $C" "$W/o.svg"
		ok $? "ring-svg: .svg written, exit 0, the picture tracebuf stats --svg draws (rc $rc)"
		if have python3; then xml_ok "$W/o.svg"; ok $? "ring-svg: well-formed XML"; else skip "no python3"; fi
		;;
	sqlite)
		C=$K/cap-b-overrun
		"$T" convert "$C" -o "$W/o.db" 2> "$W/err"; rc=$?
		n_report=$("$T" report "$C" 2> /dev/null | grep -v '^#' | grep -vc 'LOST')
		if have sqlite3; then
			[ $rc = 0 ] && [ "$(sqlite3 "$W/o.db" 'SELECT count(*) FROM events')" = "$n_report" ] &&
				[ "$(sqlite3 "$W/o.db" "SELECT count(*) FROM lost")" = 2 ]
			ok $? "sqlite: .db written, exit 0, a row of events per line of report, a row of lost per LOST line (rc $rc)"
		else
			[ $rc = 0 ] && [ -s "$W/o.db" ]; ok $? "sqlite: .db written, exit 0 (no sqlite3 to read it)"
		fi
		;;
	clickhouse-rowbinary)
		# offline: the files; tests/t_clickhouse.sh loads them into a server and checks the rows
		C=$K/cap-b-overrun
		"$T" convert --format clickhouse-rowbinary "$C" -o "$W/rb" 2> "$W/err"; rc=$?
		lost=$(awk -F'\t' '$2 == "lost" { print $1 }' "$W/rb/tables.tsv")
		[ $rc = 0 ] && [ "$(wc -l < "$W/rb/schema.sql")" = "$(wc -l < "$W/rb/tables.tsv")" ] &&
			grep -q '^CREATE TABLE IF NOT EXISTS DB.`events` ' "$W/rb/schema.sql" && [ -s "$W/rb/$lost" ]
		ok $? "clickhouse-rowbinary: a directory of a CREATE and a RowBinary file per table, exit 0 (rc $rc)"
		;;
	*)
		ok 1 "format $f has no check in this test: add one"
		continue
		;;
	esac
	checked="$checked $f"
done

# an unknown format: usage, naming the formats
"$T" convert --format nosuch "$K/cap-a-small-noloss" -o "$W/x" 2> "$W/err"; rc=$?
[ $rc = 2 ] && grep -q "nosuch: unknown; the formats are: tracedat capture json" "$W/err" && [ ! -e "$W/x" ]
ok $? "--format nosuch: exit 2, the formats named, nothing written ($(head -c 80 "$W/err"))"

# damage: every format that copies or decodes records says it with file and byte, exits 1, and
# writes only what report reads.  record-crossing: a record crosses the end of cpu0's data at 4012.
crossing="$BAD/record-crossing/cpu0.raw: byte 4012: record crosses the end of data"
for f in tracedat capture json ring-svg sqlite clickhouse-rowbinary; do
	out="$W/bad.$f"
	"$T" convert --format $f "$BAD/record-crossing" -o "$out" 2> "$W/err"; rc=$?
	[ $rc = 1 ] && grep -qF "$crossing" "$W/err"
	ok $? "$f of a damaged capture: exit 1, file and byte said (rc $rc)"
done
"$T" report "$BAD/record-crossing" > "$W/want" 2> /dev/null
"$T" report "$W/bad.capture" > "$W/got" 2> "$W/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$W/err" ] && [ -s "$W/got" ] && cmp -s "$W/want" "$W/got"
ok $? "the capture written from it holds the readable events, and no damage (report rc $rc)"
"$T" convert --format capture "$BAD/commit-beyond" -o "$W/beyond" 2> "$W/err"; rc=$?
[ $rc = 1 ] && grep -qF "$BAD/commit-beyond/cpu0.raw: byte 8: commit length beyond the data area; sub-buffer skipped" "$W/err"
ok $? "capture of a sub-buffer with a bad commit: said with its byte, exit 1 (rc $rc)"
"$T" report "$W/beyond" > /dev/null 2> "$W/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$W/err" ]; ok $? "... and the copy reads clean (report rc $rc)"

# progress: redrawn on a terminal's stderr, never in a file
"$T" convert "$K/cap-f-many-systems" -o "$W/p1.json" 2> "$W/err"
! grep -q "%" "$W/err"; ok $? "no progress line when stderr is a file"
if have script; then
	script -qec "$T convert $K/cap-f-many-systems -o $W/p2.json" /dev/null > "$W/tty" 2>&1
	grep -q "p2.json: 100% (" "$W/tty" && cmp -s "$W/p1.json" "$W/p2.json"
	ok $? "on a terminal: a progress line reaching 100%, the same JSON written"
	"$T" convert "$K/cap-b-overrun" -o "$W/p1.dat" 2> /dev/null
	script -qec "$T convert $K/cap-b-overrun -o $W/p2.dat" /dev/null > "$W/tty" 2>&1
	grep -q "p2.dat: 100% (0.0 MiB)" "$W/tty" && cmp -s "$W/p1.dat" "$W/p2.dat"
	ok $? "on a terminal: the trace.dat's progress in bytes reaching 100%, the same file written"
else
	skip "script(1) is not installed"; skip "script(1) is not installed"
fi

[ "$checked" = " $(echo $formats)" ]; ok $? "every listed format was written and checked:$checked"
echo "1..$((n - 1))"
exit $fail
