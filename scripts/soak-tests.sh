#!/bin/sh
# scripts/soak-tests.sh N: the test suites N times beside two busy-loop hogs.
#
# Each run is `make test-normal`, `make test-asan` and `make test-tsan`
# (each suite goes on after another fails, so one run shows every failure).
# Two `while :; do :; done` shells keep both CPUs of a 2-core machine busy
# the whole time: no test may depend on the machine's speed or load, and a
# test that does fails here first.  The hogs are killed when the script
# ends, however it ends (Ctrl-C too).
#
# Every failing test is logged as "run K SUITE: TEST (failed: CHECKS)" in
# $SOAK_DIR/failures (and said at once); each suite's whole output is in
# $SOAK_DIR/runK-SUITE.log.  The last line is the summary; the exit status
# is 0 when every suite of every run passed, 1 otherwise, 2 on bad usage.
#
#   SOAK_DIR        where the logs go (default build/soak)
#   SOAK_HOG_NICE   the hogs' nice level (default 10: see tests/README.md)
#   SOAK_SUITES     which suites (default "normal asan tsan")
#   SOAK_HOGS       how many hogs (default 2)
#   SOAK_HOG_CMD    what each hog runs instead of the busy loop: a shell
#                   command, given the hog's number (1, 2, ...) as $1; any
#                   CPU-bound work (long fuzzing runs, say) loads the CPUs as
#                   well.  Each hog is a process group of its own, and the
#                   whole group is killed at the end.
#   SOAK_SHOW       1: each suite's output on the terminal too (default: 1 when N is 1)
#
# `make test` runs it with N=1.
set -u
usage() { echo "usage: $0 N  (N >= 1 runs of the suites beside two CPU hogs)" >&2; exit 2; }
[ $# = 1 ] || usage
case $1 in '' | *[!0-9]* | 0) usage ;; esac
runs=$1
cd "$(dirname "$0")/.."
dir=${SOAK_DIR:-build/soak}
nice_level=${SOAK_HOG_NICE:-10}
suites=${SOAK_SUITES:-normal asan tsan}
nhogs=${SOAK_HOGS:-2}
show=${SOAK_SHOW:-$([ "$runs" = 1 ] && echo 1 || echo 0)}
mkdir -p "$dir" || exit 2
: > "$dir/failures"

hog_cmd=${SOAK_HOG_CMD:-while :; do :; done}
hogs=""
stop_hogs() {
	# Only the hogs this script started: each is the leader of its own
	# process group (setsid), so what a hog command started goes too.
	for h in $hogs; do kill -- "-$h" 2> /dev/null; done
	hogs=""
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; echo "soak: interrupted" >&2; exit 130' INT TERM HUP
i=0
while [ $i -lt "$nhogs" ]; do
	i=$((i + 1))
	# setsid execs in this child (not a group leader), so $! is the new group's id
	setsid nice -n "$nice_level" sh -c "$hog_cmd" soak-hog $i < /dev/null &
	hogs="$hogs $!"
done

# prove's summary names each failed program and its failed checks
# ("PROG (Wstat: ... Failed: n)" then "  Failed tests:  a, b"; a program
# that died or planned wrongly has a "Parse errors:" or "Non-zero" line).
failed_tests() {
	awk '/^Test Summary Report/ { s = 1; next }
	     s && /^[^ ]+ +\(Wstat:/ { if (prog) print prog " (" why ")"; prog = $1; why = "" ; next }
	     s && prog && /^ +(Failed tests?|Parse errors|Non-zero exit status|Non-zero wait status):/ {
		sub(/^ +/, ""); why = why (why ? "; " : "") $0 }
	     END { if (prog) print prog " (" why ")" }' "$1"
}

start=$(date +%s)
bad_runs=0
fails=0
run=1
while [ $run -le "$runs" ]; do
	run_bad=0
	for suite in $suites; do
		log=$dir/run$run-$suite.log
		t0=$(date +%s)
		if [ "$show" = 1 ]; then
			# shown as it runs too (make test): the status through a file, past tee
			{ make --no-print-directory "test-$suite" 2>&1; echo $? > "$log.rc"; } | tee "$log"
			rc=$(cat "$log.rc"); rm -f "$log.rc"
		else
			make --no-print-directory "test-$suite" > "$log" 2>&1
			rc=$?
		fi
		t1=$(date +%s)
		if [ $rc = 0 ]; then
			echo "soak: run $run/$runs $suite: passed ($((t1 - t0)) s)"
			continue
		fi
		run_bad=1
		found=$(failed_tests "$log")
		[ -n "$found" ] || found="make test-$suite exited $rc before prove's summary (see $log)"
		echo "$found" | while IFS= read -r t; do
			echo "run $run $suite: $t" >> "$dir/failures"
			echo "soak: FAILED run $run/$runs $suite: $t" >&2
		done
		fails=$((fails + $(echo "$found" | wc -l)))
		echo "soak: run $run/$runs $suite: FAILED ($((t1 - t0)) s; output in $log)"
	done
	bad_runs=$((bad_runs + run_bad))
	run=$((run + 1))
done
stop_hogs
elapsed=$(($(date +%s) - start))
echo "soak: $runs run(s) of [$suites] beside $nhogs CPU hogs (nice $nice_level) in ${elapsed} s:" \
	"$((runs - bad_runs)) passed, $bad_runs failed, $fails failing test(s)$([ $fails = 0 ] || echo "; see $dir/failures")"
[ $bad_runs = 0 ]
