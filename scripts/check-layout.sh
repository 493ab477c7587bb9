#!/bin/sh
# check-layout.sh [OBJDIR] - run from the top of the tree: no call runs from a lower stage of the library
# to a higher one (issue 22): a folder may call into the folders below it,
# never into one above, so no file-level circle can form between folders.
#
# The stages, lowest first, as the code has them (measured with nm on the
# objects: each calls only into the ones before it):
#
#   util      helpers every stage uses: growable arrays, pread_full,
#             write_all, sorted search, id tables, ELF symbols   (libc only)
#   ring      the lockless buffer, the page format, shm regions    (libc only)
#   filter    the filter language: parser, evaluator, compact form, report's
#             -F specs (libc only; filter_format.c and filter_set.c take
#             schemas' formats as data, looked up by decode)
#   source    what writes into rings: events, printf, perf, pmu, func,
#             per-event filters                                    (libc only)
#   decode    reading pages back: schemas, formats, symbols, the capture
#             (capture directory, live instance, capture_source)
#   print     text: the printers, report, funcgraph
#   tracedat  trace.dat files: reading, writing, the trace-cmd layouts
#   input     the input kinds: which reader a path goes to (src/input)
#   analyze   consumers: hist, offcpu, merge, SVGs, Chrome JSON
#   export    the exporter kinds and their driver, capture saving (src/export)
#   (tools    the CLI, above everything: not in the nm check, but its
#             includes are: public headers (tracebuf/...), its own, and the
#             library's internals only through tools/lib_internal.h)
#
# For each object under OBJDIR (default build/obj), every undefined symbol
# that another folder's object defines must come from a stage at or below
# its own.  A call upward fails the check, naming both source files and the
# symbol, unless the allow-list below holds it.  A folder not listed in
# STAGES fails too: a new folder must be given its place.
set -eu
objdir=${1:-build/obj}
STAGES="util ring filter source decode print tracedat input analyze export"

# Calls upward that are known debt: "FROM_OBJECT SYMBOL", one a line (none left).
ALLOWED=''

[ -d "$objdir" ] || { echo "check-layout: no $objdir: build first" >&2; exit 2; }
src=$(pwd)/src
cd "$objdir"
# the objects of sources that exist (a removed source's object may linger in the build)
set --
for o in */*.o; do
	[ -f "$src/${o%.o}.c" ] || [ -f "$src/${o%.o}.S" ] && set -- "$@" "$o"
done
[ $# -gt 0 ] || { echo "check-layout: no objects in $objdir" >&2; exit 2; }
# "D OBJECT SYMBOL" for what each object defines, "U OBJECT SYMBOL" for what it uses;
# nm -A prefixes each line with "OBJECT:".
{
	nm -A --defined-only -g "$@" | awk '{sub(/:.*/, "", $1); if (NF == 3) print "D", $1, $3}'
	nm -A -u "$@" | awk '{sub(/:.*/, "", $1); print "U", $1, $NF}'
} | awk -v stages="$STAGES" -v allowed="$ALLOWED" '
	BEGIN {
		n = split(stages, s, " ")
		for (i = 1; i <= n; i++) rank[s[i]] = i
		m = split(allowed, a, "\n")
		for (i = 1; i <= m; i++) if (a[i] != "") ok[a[i]] = 1
	}
	function folder(o) { return substr(o, 1, index(o, "/") - 1) }
	$1 == "D" { definer[$3] = $2; next }
	{ user[++nu] = $2; sym[nu] = $3 }
	END {
		for (i = 1; i <= nu; i++) {
			f = folder(user[i])
			if (!(f in rank) && !(f in told)) {
				printf "check-layout: src/%s/ has no stage: add it to STAGES in scripts/check-layout.sh\n", f
				told[f] = bad = 1
			}
			if (!(sym[i] in definer)) continue
			t = folder(definer[sym[i]])
			if (t == f) continue
			calls++
			if (rank[f] >= rank[t] || (user[i] " " sym[i]) in ok) continue
			u = user[i]; d = definer[sym[i]]; sub(/\.o$/, ".c", u); sub(/\.o$/, ".c", d)
			printf "check-layout: src/%s (%s) calls %s of src/%s (%s, a higher stage)\n", u, f, sym[i], d, t
			bad = 1
		}
		if (bad) {
			printf "check-layout: FAILED: calls only run down the stages: %s\n", stages
			exit 1
		}
		printf "check-layout: %d calls between folders, all down the stages (%s)\n", calls, stages
	}'

# The CLI: public headers, its own, and internals only through lib_internal.h.
cd "$src/.."
bad_inc=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/' tools/*.c tools/*.h |
	grep -vE '"tracebuf/' | grep -v '^tools/lib_internal.h:' || true)
if [ -n "$bad_inc" ]; then
	echo "$bad_inc" | sed 's/^/check-layout: the CLI includes a library internal (add it to tools\/lib_internal.h with its reason): /'
	exit 1
fi
echo "check-layout: the CLI includes public headers, its own, and tools/lib_internal.h"
