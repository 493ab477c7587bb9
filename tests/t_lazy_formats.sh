#!/bin/sh
# Formats parsed when first met (report's lazy_formats): a capture directory
# and a trace.dat holding a kernel's formats parse only those of the events
# their records use.  A broken format of an event that occurs is still
# reported - naming the file, the section and the event, at the right byte -
# and one of an event that never occurs changes nothing; two files claiming
# one ID are still reported.
B=${TB_BUILD:-build}
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
TB="$B/tracebuf"
src=tests/data/kernel/cap-b-overrun
fmt=formats/sched/sched_stat_runtime.format # an event with records in $src

cp -r "$src" "$tmp/clean"
"$TB" report "$tmp/clean" > "$tmp/clean.txt" 2> "$tmp/clean.err"
check $? "the clean capture reports with exit status 0"
grep -q 'sched_stat_runtime: comm=' "$tmp/clean.txt"
check $? "... and prints sched_stat_runtime records (the event broken below)"

# -- a broken format of an event that never occurs: nothing changes
cp -r "$src" "$tmp/unmet"
printf 'name: never_met\nID: 64000\nformat:\n\tfield:garbage\n' > "$tmp/unmet/formats/sched/never_met.format"
"$TB" report "$tmp/unmet" > "$tmp/unmet.txt" 2> "$tmp/unmet.err"
check $? "a broken format of an event without records: exit status 0"
cmp -s "$tmp/clean.txt" "$tmp/unmet.txt"
check $? "... and the same text as the clean capture"

# -- a broken format of an event that occurs: said, naming the file and the byte
cp -r "$src" "$tmp/met"
sed -i 's/^\(\tfield:u64 runtime;\toffset:16;\tsize:\)8;/\1zz;/' "$tmp/met/$fmt"
grep -q 'size:zz;' "$tmp/met/$fmt"; check $? "(the test broke the runtime field's size)"
# where the parser stops: the byte of "zz" in the file, found here independently
at=$(grep -abo 'size:zz' "$tmp/met/$fmt" | cut -d: -f1); at=$((at + 5))
"$TB" report "$tmp/met" > "$tmp/met.txt" 2> "$tmp/met.err"
[ $? = 1 ]; check $? "a broken format of an event with records: exit status 1"
grep -q "^tracebuf: $tmp/met/$fmt: byte $at: size: expected a decimal number" "$tmp/met.err"
check $? "... the format file and byte $at named"
[ "$(grep -c 'UNKNOWN EVENT' "$tmp/met.txt")" = "$(grep -c 'sched_stat_runtime:' "$tmp/clean.txt")" ]
check $? "... and each of its records prints as unknown, the others as before"

# -- the same in a trace.dat: the section and the event named, at the file's byte
"$TB" convert "$tmp/met" -o "$tmp/met.dat" > /dev/null 2>&1
"$TB" convert "$tmp/unmet" -o "$tmp/unmet.dat" > /dev/null 2>&1
"$TB" convert "$tmp/clean" -o "$tmp/clean.dat" > /dev/null 2>&1
text_at=$(grep -abo 'name: sched_stat_runtime' "$tmp/met.dat" | head -1 | cut -d: -f1)
"$TB" report "$tmp/met.dat" > "$tmp/metdat.txt" 2> "$tmp/metdat.err"
[ $? = 1 ]; check $? "trace.dat with a broken format of an event with records: exit status 1"
grep -q "^tracebuf: $tmp/met.dat: sched/sched_stat_runtime format at byte $text_at: byte $at: size: expected a decimal number" "$tmp/metdat.err"
check $? "... the file, the section, the event and the bytes named"
[ $fail = 0 ] || sed 's/^/#   /' "$tmp/metdat.err" | head -3
"$TB" report "$tmp/clean.dat" > "$tmp/cleandat.txt" 2>/dev/null
"$TB" report "$tmp/unmet.dat" > "$tmp/unmetdat.txt" 2> "$tmp/unmetdat.err"
check $? "trace.dat with a broken format of an event without records: exit status 0"
cmp -s "$tmp/cleandat.txt" "$tmp/unmetdat.txt"
check $? "... and the same text as the clean file"
"$TB" report --count "$tmp/clean.dat" > "$tmp/count.txt"
grep -q "^events $(grep -v '^#' "$tmp/clean.txt" | grep -vc '^CPU:') " "$tmp/count.txt"
check $? "--count counts every record the report printed"

# -- two files claiming one ID: still said, though they are not parsed otherwise
cp -r "$src" "$tmp/twice"
cp "$tmp/twice/$fmt" "$tmp/twice/formats/sched/copy_of_runtime.format"
sed -i 's/^name: sched_stat_runtime$/name: copy_of_runtime/' "$tmp/twice/formats/sched/copy_of_runtime.format"
"$TB" report "$tmp/twice" > /dev/null 2> "$tmp/twice.err"
grep -q "copy_of_runtime.format: .*ID 363 is already used by sched/sched_stat_runtime" "$tmp/twice.err" ||
	grep -q "sched_stat_runtime.format: .*ID 363 is already used by sched/copy_of_runtime" "$tmp/twice.err"
check $? "two format files with one ID: the clash is reported"

# -- many systems, formats read on two threads: every broken format of an event without
# records warned once, in the order of their IDs (here the walk's: systems, then files,
# by name), whichever thread read it; the text as without them
many=tests/data/kernel/cap-f-many-systems
cp -r "$many" "$tmp/many"
"$TB" report "$tmp/many" > "$tmp/many.txt" 2> "$tmp/many.err"
check $? "a capture of $(find "$many/formats" -name '*.format' | wc -l) formats in many systems: exit status 0"
i=0
for s in block ext4 kmem sched syscalls writeback; do
	i=$((i + 1))
	printf 'name: broken_%d\nID: %d\nformat:\n\tfield:garbage\n' $i $((64000 + 2 * i)) > "$tmp/many/formats/$s/zz_broken.format"
	printf 'name: also_%d\nID: %d\nformat:\n\tfield:int x;\toffset:8;\tsize:y;\n' $i $((63999 + 2 * i)) > "$tmp/many/formats/$s/aa_broken.format"
done
"$TB" report "$tmp/many" > "$tmp/manybad.txt" 2> "$tmp/manybad.err"
check $? "... with 12 broken formats of events without records: exit status 0"
cmp -s "$tmp/many.txt" "$tmp/manybad.txt"
check $? "... and the same text"
want=""
for s in block ext4 kmem sched syscalls writeback; do
	want="$want$tmp/many/formats/$s/aa_broken.format $tmp/many/formats/$s/zz_broken.format "
done
got=$(sed -n 's/^tracebuf: warning: \([^:]*\): byte [0-9]*: .*(no record of this event was printed.*/\1/p' "$tmp/manybad.err" | tr '\n' ' ')
[ "$got" = "$want" ] && [ "$(wc -l < "$tmp/manybad.err")" = 12 ]
check $? "... each warned once, in the order of their IDs"
[ $fail = 0 ] || sed 's/^/#   /' "$tmp/manybad.err" | head -14

# -- kallsyms is parsed on a thread of its own: its problems still come before those of
# the files read after it (constants), each once, and count
cp -r "$many" "$tmp/ksyms"
sed -i '$s/^[0-9a-f]* /zzzz /' "$tmp/ksyms/kallsyms"
printf 'not a constant\n' >> "$tmp/ksyms/constants"
"$TB" report "$tmp/ksyms" > "$tmp/ksyms.txt" 2> "$tmp/ksyms.err"
[ $? = 1 ]; check $? "a bad kallsyms line and a bad constants line: exit status 1"
grep -q "^tracebuf: $tmp/ksyms/kallsyms: byte [0-9]*: kallsyms line: " "$tmp/ksyms.err" &&
	grep -q "^tracebuf: $tmp/ksyms/constants: byte [0-9]*: constants line: " "$tmp/ksyms.err" &&
	[ "$(sed -n 1p "$tmp/ksyms.err" | grep -c '/kallsyms: ')" = 1 ] && [ "$(wc -l < "$tmp/ksyms.err")" = 2 ]
check $? "... kallsyms's problem said first, each once"
[ $fail = 0 ] || sed 's/^/#   /' "$tmp/ksyms.err" | head -4
[ "$(wc -l < "$tmp/ksyms.txt")" = "$(wc -l < "$tmp/many.txt")" ] && grep -q 'call_site=__put_task_struct+0x10c/0x1a0' "$tmp/ksyms.txt"
check $? "... and every line, the other symbols resolved"

echo "1..$n"
exit $fail
