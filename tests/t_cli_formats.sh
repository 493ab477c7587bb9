#!/bin/sh
# tracebuf formats: a program's format files, got by running it with
# TRACEBUF_FORMATS; and the whole path from tracepoints to text: the
# example program saves its ring as a capture directory, tracebuf report
# prints it like the kernel's trace file.
B=${TB_BUILD:-build}
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
ex=$B/examples/tracepoints

"$B/tracebuf" formats --list "$ex" > "$tmp/list"
check $? "formats --list runs"
printf '5 ftrace:print\n6 ftrace:bprint\n19 ftrace:raw_data\n1000 demo:request\n1001 demo:done\n' > "$tmp/want_list"
cmp -s "$tmp/list" "$tmp/want_list"; rc=$?
check $rc "the built-in ftrace events with the kernel's IDs, then the program's own in declaration order"
[ $rc = 0 ] || sed 's/^/#   /' "$tmp/list"

"$B/tracebuf" formats --dir "$tmp/dir" "$ex" > "$tmp/all"
check $? "formats --dir runs"
for f in header_page header_event printk_formats kallsyms saved_cmdlines formats/demo/request.format; do
	[ -s "$tmp/dir/$f" ]; check $? "--dir keeps $f"
done
for f in print bprint raw_data; do
	cmp -s "$tmp/dir/formats/ftrace/$f.format" "tests/data/kernel/formats/ftrace/$f.format"
	check $? "ftrace/$f.format is the kernel's file"
done
grep -q '^print fmt: "id=%d kind=%s path=%s bytes=%llu", REC->id, __print_symbolic(REC->kind, { 1, "GET" }, { 2, "PUT" }), __get_str(path), (unsigned long long)REC->bytes$' "$tmp/all"
check $? "the printed formats have demo:request's print fmt, enum constants as numbers"
grep -q '^	field:__data_loc char\[\] path;	offset:16;	size:4;	signed:0;$' "$tmp/all"
check $? "... and its __data_loc field"
[ "$(grep -c '^name: ' "$tmp/all")" = 5 ]; check $? "all five formats printed"

"$B/tracebuf" formats /bin/true > /dev/null 2> "$tmp/err"
rc=$?
[ $rc = 3 ] && grep -q "wrote no formats" "$tmp/err"
check $? "a program without libtracebuf is reported, exit status 3 (input not of a kind tracebuf reads)"
"$B/tracebuf" formats > /dev/null 2>&1
[ $? = 2 ]; check $? "no program is a usage error"

# End to end: the example's records, saved and printed.
"$ex" "$tmp/cap" && "$B/tracebuf" report "$tmp/cap" > "$tmp/report"
check $? "the example saves a capture directory that tracebuf report reads"
sed -n 's/^ *tracepoints-[0-9]* *\[[0-9]*\] \.\.\.\.\. *[0-9]*\.[0-9]*: //p' "$tmp/report" > "$tmp/bodies"
cat > "$tmp/want_bodies" <<'EOF'
request: id=1 kind=GET path=/index.html bytes=512
main: cache miss for id 1
done: id=1 status=200
request: id=2 kind=PUT path=/upload bytes=1048576
tracing_mark_write: upload started
done: id=2 status=201
EOF
cmp -s "$tmp/bodies" "$tmp/want_bodies"; rc=$?
check $rc "every event printed in order, with the program's comm and pid, like the kernel's trace lines"
[ $rc = 0 ] || sed 's/^/#   /' "$tmp/report"
grep -q "entries-in-buffer/entries-written: 6/6" "$tmp/report"
check $? "the header counts the six events"

echo "1..$n"
exit $fail
