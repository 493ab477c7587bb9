#!/bin/sh
# Damage is never silent, and what is intact is kept.  Every command that
# reads a trace.dat (report, report --count, hist, dump, stats, list -c,
# convert to JSON) runs over the same damaged files: two real captures
# (tests/data/kernel cap-a as the top buffer, cap-b as the instance
# "other") joined by convert, as version 6 and as version 7 + zstd, then
# cut short (inside the header, inside a CPU's data, at a sub-buffer
# boundary), with bytes changed (a sub-buffer's commit word, a record, a
# compressed chunk) and with hostile sizes (a section of 2^63 bytes, page
# size 0, a CPU's data size of 2^63).  Each must exit 1 ("found damage")
# or, for a file that cannot be read at all, 3 (the exit-code table); name the file and a byte;
# and still output every intact event: what it prints of the buffers and
# CPUs the damage did not touch is what it prints of the undamaged file.
# Then a capture directory with a raw file cut short, through convert,
# report --count and list -c.  (snapshot, recover and hist --session over a
# damaged shared-memory region: tests/test_shm_damage.c.)
B=${TB_BUILD:-build}
T="$B/tracebuf"
K=tests/data/kernel
n=0; fail=0
tmp=$(mktemp -d /tmp/tb-damage-XXXXXX) || exit 1
[ -z "$TB_KEEP" ] && trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# The commands of the table; each is run as: $T CMD FILE > out 2> err.  report --count, hist and the
# JSON read every buffer by default; here --buffer= (the top one) keeps their totals to the part 'main'.
cmds="report|report --count|hist --buffer= -e sched:sched_switch keys=common_cpu|dump|stats|list -c|convert-json"
# run_cmd CMD FILE NAME: out in $tmp/NAME.out, stderr in $tmp/NAME.err, status in $rc
run_cmd() {
	case "$1" in
	convert-json) timeout 60 "$T" convert --buffer= "$2" -o "$tmp/$3.json" > "$tmp/$3.out" 2> "$tmp/$3.err"; rc=$? ;;
	"report --count") timeout 60 "$T" report --count --buffer= "$2" > "$tmp/$3.out" 2> "$tmp/$3.err"; rc=$? ;;
	*) timeout 60 $T $1 "$2" > "$tmp/$3.out" 2> "$tmp/$3.err"; rc=$? ;;
	esac
}
key() { echo "$1" | tr -c 'a-z0-9\n' '_'; }

# report's lines of one buffer (top, other).  trace-cmd's layout prefixes every line of "other"
# but the record after a drop line ("other: CPU:0 [4504 EVENTS DROPPED]"), which has no prefix.
report_lines() { awk -v want="$1" 'NR == 1 { next } follow { follow = 0; if (want == "other") print; next }
	/^other: CPU:[0-9]* \[.*DROPPED\]$/ { follow = 1 } /^other: / { if (want == "other") print; next }
	{ if (want == "top") print }'; }
# What each command prints of the parts a case leaves intact, from its output ($1: base name).
#   top / other / top1: that buffer's lines (top1: the top buffer's CPU 1) of report;
#   main: the top buffer's totals (report --count, hist, the JSON's record count)
intact() {
	case "$2" in
	report:top) report_lines top < "$tmp/$1.out" ;;
	report:other) report_lines other < "$tmp/$1.out" ;;
	report:top1) report_lines top < "$tmp/$1.out" | grep ' \[001\] ' ;;
	dump:top) sed -n '/^buffer "" CPU/,/^buffer "other"/p' "$tmp/$1.out" ;;
	dump:other) sed -n '/^buffer "other" CPU/,$p' "$tmp/$1.out" ;;
	dump:top1) sed -n '/^buffer "" CPU 1:/,/^$/p' "$tmp/$1.out" ;;
	report_--count:main) grep '^events ' "$tmp/$1.out" ;;
	hist_*:main) grep 'Hits:' "$tmp/$1.out" ;;
	convert_json:main) grep -o '[0-9]* records' "$tmp/$1.err" ;;
	esac
}

# The inputs, undamaged, and every command's output of them.
for v in v6 v7; do
	opt=; [ $v = v7 ] && opt="--v7 --compress zstd"
	"$T" convert $opt $K/cap-a-small-noloss --buffer other=$K/cap-b-overrun -o "$tmp/$v.dat" 2> /dev/null
	check $? "$v: two captures joined into a trace.dat"
	echo "$cmds" | tr '|' '\n' > "$tmp/cmds"
	while read -r c; do
		run_cmd "$c" "$tmp/$v.dat" "$v-good-$(key "$c")"
		[ $rc = 0 ] && { [ ! -s "$tmp/$v-good-$(key "$c").err" ] || [ "$c" = convert-json ]; }
		check $? "$v undamaged: $c exits 0 and says nothing (got $rc)"
	done < "$tmp/cmds"
done

# Where things lie: "BUFFER CPU OFFSET SIZE" per CPU, from dump.
layout() { "$T" dump "$1" | awk '/^  "/ { b = $1; sub(/:$/, "", b); gsub(/"/, "", b) }
	/^    CPU [0-9]*: [0-9]* bytes at byte/ { sub(/:/, "", $2); print (b == "" ? "top" : b), $2, $7, $3 }'; }
at_of() { layout "$1" | awk -v b="$2" -v c="$3" '$1 == b && $2 == c { print $3 }'; }
# Events of a sub-buffer in the undamaged dump: buffer (""/other), CPU, page number.
events_of() { sed -n "/^buffer \"$2\" CPU $3:/,/^\$/p" "$tmp/$1-good-dump.out" |
	sed -n "s/^    page $4 at .*; \([0-9]*\) events.*/\1/p"; }
# poke FILE OFFSET HEXBYTES: overwrite bytes in place.
poke() { for b in $(echo "$3" | sed 's/../& /g'); do printf "\\$(printf %03o "0x$b")"; done |
	dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null; }

# run_case NAME SOURCE-VERSION STATUS INTACT-PARTS SAYS [pages]: the damaged file is $tmp/NAME.dat.
#   STATUS: what every command must exit with; INTACT-PARTS: which parts' output must be unchanged;
#   SAYS: a regular expression a problem must match (after "FILE: byte N: "); pages: the damage is
#   inside sub-buffers only, which stats (the stored per-CPU stats, no page read) does not read.
run_case() {
	name=$1 v=$2 want=$3 parts=$4 says=$5
	while read -r c; do
		k=$(key "$c")
		[ "$6" = pages ] && [ "$c" = stats ] && continue
		run_cmd "$c" "$tmp/$name.dat" "$name-$k"
		[ "$rc" = "$want" ]
		check $? "$name: $c exits $want (got $rc)"
		grep -qE "$tmp/$name.dat: byte [0-9]+: .*$says" "$tmp/$name-$k.err"
		check $? "$name: $c names the file, a byte and the damage"
		[ "$want" = 3 ] && continue
		case "$c" in report) cp=report ;; dump) cp=dump ;; "report --count") cp=report_--count ;;
			hist*) cp=hist_x ;; convert-json) cp=convert_json ;; *) continue ;; esac
		for p in $parts; do
			good=$(intact "$v-good-$k" "$cp:$p")
			[ -z "$good" ] && continue
			[ "$(intact "$name-$k" "$cp:$p")" = "$good" ]
			check $? "$name: $c still outputs every event of the intact part '$p'"
		done
	done < "$tmp/cmds"
}

for v in v6 v7; do
	src="$tmp/$v.dat"
	size=$(stat -c %s "$src")
	o0=$(at_of "$src" other 0); o1=$(at_of "$src" other 1); t0=$(at_of "$src" top 0)

	# cut inside the header: nothing can be read
	head -c 100 "$src" > "$tmp/$v-cut-header.dat"
	run_case $v-cut-header $v 3 "" "needs|ends|cut"

	# cut inside the instance's CPU 0 data, 1000 bytes into it (v7: inside its first chunk)
	head -c $((o0 + 1000)) "$src" > "$tmp/$v-cut-data.dat"
	run_case $v-cut-data $v 1 "top main" "cut short"

	# cut between the instance's two CPUs' data (v6: at a sub-buffer boundary, 3 of 3 kept)
	head -c "$o1" "$src" > "$tmp/$v-cut-boundary.dat"
	run_case $v-cut-boundary $v 1 "top main" "cut short"
	[ "$(sed -n '/^buffer "other" CPU 0:/,/^$/p' "$tmp/$v-cut-boundary-dump.out")" = \
	  "$(sed -n '/^buffer "other" CPU 0:/,/^$/p' "$tmp/$v-good-dump.out")" ]
	check $? "$v-cut-boundary: the instance's CPU 0, whole before the cut, is dumped whole"

	# hostile: a section (v6: header_page) of 2^63 bytes; page size 0
	cp "$src" "$tmp/$v-huge-section.dat"
	if [ $v = v6 ]; then poke "$tmp/$v-huge-section.dat" 30 0000000000000080
	else poke "$tmp/$v-huge-section.dat" $((0x25 + 8)) 0000000000000080; fi
	run_case $v-huge-section $v 3 "" "claims|bytes"
	cp "$src" "$tmp/$v-page0.dat"; poke "$tmp/$v-page0.dat" 14 00000000
	run_case $v-page0 $v 3 "" "page size 0"
done

# v6 only (its pages are stored as they are): a page header, a record, a CPU size of 2^63.
v=v6; src="$tmp/v6.dat"; t0=$(at_of "$src" top 0)
lost1=$(events_of v6 "" 0 1)
all=$(grep "^events " "$tmp/v6-good-report___count.out" | cut -d" " -f2)
# top CPU 0's sub-buffer 1: commit word beyond the data area
cp "$src" "$tmp/v6-commit.dat"; poke "$tmp/v6-commit.dat" $((t0 + 4096 + 8)) ffffff0f
run_case v6-commit v6 1 "other top1" "commit" pages
[ "$(cut -d' ' -f2 "$tmp/v6-commit-report___count.out")" = $((all - lost1)) ]
check $? "v6-commit: report --count counts every event but sub-buffer 1's $lost1 ($((all - lost1)))"
# its first record: a long record of 2 GiB
cp "$src" "$tmp/v6-record.dat"; poke "$tmp/v6-record.dat" $((t0 + 4096 + 16)) 00000000f0ffff7f
run_case v6-record v6 1 "other top1" "record" pages
[ "$(cut -d' ' -f2 "$tmp/v6-record-report___count.out")" = $((all - lost1)) ]
check $? "v6-record: report --count counts every event but those of the damaged sub-buffer"
# the top buffer's CPU 0 data size in its table: 2^63 (read up to the next CPU's data: all of it)
table=$((0x$("$T" dump "$src" | sed -n 's/^  0x\([0-9a-f]*\) .*flyrecord table$/\1/p')))
cp "$src" "$tmp/v6-cpu-size.dat"; poke "$tmp/v6-cpu-size.dat" $((table + 8)) 0000000000000080
run_case v6-cpu-size v6 1 "top other main" "cut short"

# v7 only: bytes of the top buffer's CPU 0's first compressed chunk changed
cp "$tmp/v7.dat" "$tmp/v7-chunk.dat"; poke "$tmp/v7-chunk.dat" $(( $(at_of "$tmp/v7.dat" top 0) + 4 + 8 + 40 )) 1122334455667788
run_case v7-chunk v7 1 "other top1" "zstd|chunk" pages

# A capture directory whose cpu0.raw is cut 1000 bytes into its fourth sub-buffer.
mkdir "$tmp/cap" && cp -r $K/cap-a-small-noloss/* "$tmp/cap/" && head -c $((3 * 4096 + 1000)) \
	$K/cap-a-small-noloss/cpu0.raw > "$tmp/cap/cpu0.raw"
for c in "convert" "report --count" "list -c"; do
	if [ "$c" = convert ]; then timeout 60 "$T" convert "$tmp/cap" -o "$tmp/cap.dat" > /dev/null 2> "$tmp/cap.err"
	else timeout 60 $T $c "$tmp/cap" > "$tmp/cap.out" 2> "$tmp/cap.err"; fi
	rc=$?
	[ $rc = 1 ] && grep -qE "$tmp/cap/cpu0.raw: byte 12288: (file )?ends 1000 bytes into a" "$tmp/cap.err"
	check $? "capture cut short: $c exits 1 and names cpu0.raw at byte 12288 (got $rc)"
	[ "$c" = "report --count" ] && cp "$tmp/cap.out" "$tmp/cap.count"
done
"$T" report --count "$tmp/cap.dat" > "$tmp/capdat.count" 2> "$tmp/capdat.err"; rc=$?
[ $rc = 0 ] && [ "$(grep -o '^events [0-9]*' "$tmp/capdat.count")" = "$(grep -o '^events [0-9]*' "$tmp/cap.count")" ] &&
	[ "$(grep -o '^events [0-9]*' "$tmp/cap.count")" != "events 0" ]
check $? "and the trace.dat convert wrote holds every event the damaged capture's report counts (got $rc)"

echo "1..$n"
exit $fail
