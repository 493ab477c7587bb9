#!/bin/sh
# compare-inputs.sh TRACEBUF OUTDIR - run report, hist, stats and list of
# TRACEBUF on every input under tests/data (capture directories, trace.dat
# files, the bad captures, and a few files that are no input at all), one
# file per run holding its stdout, its stderr and its exit status.  Two
# binaries' OUTDIRs compared with `diff -r` show any change of behaviour
# (issue 22: outputs byte for byte before and after a refactoring).
# Run from the top of the tree; prints how many runs it made.
set -u
tb=$1 out=$2
mkdir -p "$out"
inputs="$(ls -d tests/data/kernel/cap-* tests/data/bad/*/ tests/data/trace-dat/*.dat \
	tests/data/trace-dat/README.md tests/data/kernel/header_page tests/data/kernel) tests/data/nonexistent /dev/null"
n=0
run() { # NAME ARGS...: one run into $out/NAME
	name=$1; shift
	"$tb" "$@" > "$out/$name" 2> "$out/$name.err"
	echo "exit $?" >> "$out/$name"
	# stderr names the input as given: the same in both runs
	cat "$out/$name.err" >> "$out/$name" && rm -f "$out/$name.err"
	n=$((n + 1))
}
for in in $inputs; do
	key=$(echo "$in" | tr '/' '_')
	run "$key.report" report "$in"
	run "$key.report-count" report --count "$in"
	run "$key.stats" stats "$in"
	run "$key.list" list "$in"
	run "$key.list-c" list -c "$in"
	run "$key.hist" hist -e sched_switch 'key=next_comm' "$in"
done
echo "compare-inputs: $n runs over $(echo "$inputs" | wc -w) inputs into $out"
