#!/bin/sh
# bench/merge_results (make bench's results.json): the benches' lists merged
# in order, the six keys first; every malformed or inconsistent input refused
# with its file and byte offset, and then nothing written.
B=${TB_BUILD:-build}
M=$B/bench/merge_results
W=$(mktemp -d /tmp/tb-t-merge-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM HUP
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# Two inputs in the shapes the benches write (bench_report.sh's, bench_sources.c's).
cat > "$W/a.json" <<'EOF'
[
  {"case": "report", "threads": 1, "tracebuf_ns": 1074.3, "peer": "trace-cmd report -l", "peer_ns": 2848.5, "ratio": 2.65},
  {"case": "report start-up", "threads": 1, "tracebuf_ns": 28226626, "peer": "trace-cmd report -l start-up", "peer_ns": 169783478, "ratio": 6.02}
]
EOF
printf '[\n  {"ratio": 0.8264, "peer_ns": 15.680, "peer": "rdtsc", "tracebuf_ns": 18.975, "threads": 1, "case": "tb_write 8 bytes", "note": {"cpus": [0, 1], "rseq": true}},\n  {"case": "u64 tracepoint, 2 threads", "threads": 2, "tracebuf_ns": 9.5, "peer": "u64 tracepoint, 1 thread", "peer_ns": 19.0, "ratio": 2.0}]' > "$W/b.json"
cat > "$W/ab.expected" <<'EOF'
[
  {"case": "report", "threads": 1, "tracebuf_ns": 1074.3, "peer": "trace-cmd report -l", "peer_ns": 2848.5, "ratio": 2.65},
  {"case": "report start-up", "threads": 1, "tracebuf_ns": 28226626, "peer": "trace-cmd report -l start-up", "peer_ns": 169783478, "ratio": 6.02},
  {"case": "tb_write 8 bytes", "threads": 1, "tracebuf_ns": 18.975, "peer": "rdtsc", "peer_ns": 15.680, "ratio": 0.8264, "note": {"cpus": [0, 1], "rseq": true}},
  {"case": "u64 tracepoint, 2 threads", "threads": 2, "tracebuf_ns": 9.5, "peer": "u64 tracepoint, 1 thread", "peer_ns": 19.0, "ratio": 2.0}
]
EOF
"$M" -o "$W/out.json" "$W/a.json" "$W/b.json" > "$W/msg" 2>&1; check $? "two good inputs: exit status 0"
cmp -s "$W/ab.expected" "$W/out.json"; check $? "one list, in order, one entry a line, the six keys first, others kept"
grep -q "4 entries from 2 file(s)" "$W/msg"; check $? "it says how many entries it merged"

# Refusals: exit 1, FILE: byte OFFSET: reason, the old output left as it was.  The
# offsets are those of the token at fault (the entry's '{' for a missing key, the
# list's '[' for an empty list), counted by hand.
refused() { # NAME TEXT EXPECTED-MESSAGE
	printf '%s' "$2" > "$W/$1.json"
	"$M" -o "$W/out.json" "$W/a.json" "$W/$1.json" > "$W/msg" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q -F -- "merge_results: $W/$1.json: $3" "$W/msg" && cmp -s "$W/ab.expected" "$W/out.json"
	check $? "$1: refused with '$3' (status $rc), nothing written"
	[ $rc = 1 ] || sed 's/^/# /' "$W/msg"
}
refused missing-key '[
  {"case": "a", "threads": 1}
]' 'byte 4: an entry without "tracebuf_ns"'
refused inverted-ratio '[{"case": "a", "threads": 1, "tracebuf_ns": 20, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 85: "ratio" 2 is not peer_ns / tracebuf_ns = 0.5'
refused nan '[{"case": "a", "threads": 1, "tracebuf_ns": NaN, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 44: not a JSON value'
refused string-number '[{"case": "a", "threads": 1, "tracebuf_ns": "5", "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 44: "tracebuf_ns" is not a number'
refused number-case '[{"case": 7, "threads": 1, "tracebuf_ns": 5, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 10: "case" is not a string'
refused half-thread '[{"case": "a", "threads": 1.5, "tracebuf_ns": 5, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 26: "threads" is not a whole number of at least 1'
refused zero-ns '[{"case": "a", "threads": 1, "tracebuf_ns": 0, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 44: "tracebuf_ns" is not above 0'
refused twice '[{"case": "a", "case": "b", "threads": 1, "tracebuf_ns": 5, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 15: the key "case" twice in one entry'
refused again '[{"case": "report", "threads": 1, "tracebuf_ns": 5, "peer": "trace-cmd report -l", "peer_ns": 10, "ratio": 2}]' \
	'byte 1: a second entry for case "report", 1 thread(s), peer "trace-cmd report -l"'
refused empty '[ ]' 'byte 0: no entry: a bench that measured nothing'
refused trailing '[{"case": "a", "threads": 1, "tracebuf_ns": 5, "peer": "p", "peer_ns": 10, "ratio": 2}] x' \
	'byte 88: text after the list'
refused not-a-list '{"case": "a"}' "byte 0: expected '[' at the start (a list of entries)"
refused unterminated '[{"case": "a' 'byte 10: a string that does not end'
refused leading-zero '[{"case": "a", "threads": 01, "tracebuf_ns": 5, "peer": "p", "peer_ns": 10, "ratio": 2}]' \
	'byte 26: a number with a leading zero'
refused deep '[{"case": "a", "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]' \
	'byte 52: values nested more than 32 deep'
"$M" -o "$W/out.json" "$W/nowhere.json" > "$W/msg" 2>&1
[ $? = 1 ] && grep -q "nowhere.json: byte 0: cannot open" "$W/msg"; check $? "a missing input is named"
"$M" "$W/a.json" > /dev/null 2>&1; check $(( $? != 2 )) "no -o OUT: usage error (2)"
echo "1..$n"
exit $fail
