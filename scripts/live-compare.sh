#!/bin/sh
# live-compare.sh - see quickly where `tracebuf report` differs from the
# kernel's own `trace` text.
#
#   scripts/live-compare.sh [-n N] [-k DIR]     a fresh live capture (root): the
#                                               many-systems workload of
#                                               tests/test_live_identical.c
#   scripts/live-compare.sh [-n N] CAPTURE_DIR  a capture directory holding the
#                                               kernel's trace.txt (made with
#                                               tracebuf capture --with-trace)
#
# Prints every differing line pair (kernel first, tracebuf second; -n N: the
# first N only), the per-system identical/total table, and the kinds of
# line that differ most, each with an example.  -k DIR keeps the live capture
# in DIR (which must not exist) for a second look.  Builds what it needs.
# Exit status 0 when at least 99.5 % of the lines are identical.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${TB_BUILD:-build}
limit=-1
keep=
while getopts n:k:h opt; do
	case $opt in
	n) limit=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
make --no-print-directory -s -j2 "$B/tracebuf" "$B/tests/test_identical" "$B/tests/test_live_identical" >/dev/null || exit 2
export TB_BUILD="$B"
[ "$limit" -ge 0 ] 2>/dev/null && export TB_DIFF_LIMIT="$limit"
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
if [ $# -ge 1 ]; then
	TB_IDENTICAL_DIR=$1 "$B/tests/test_identical" >"$out"
else
	[ -n "$keep" ] && export TB_KEEP="$keep"
	"$B/tests/test_live_identical" >"$out"
fi
status=$?
sed -n 's/^# \{0,1\}//p; /^not ok/p' "$out"
exit $status
