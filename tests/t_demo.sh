#!/bin/sh
# examples/demo (make run): every kind of event reaches the report of the
# saved capture, the LOST counts and the events printed add up to what the
# stats say was written, the blob comes back byte for byte, the call graph
# shows the nesting the code has, and the CLI prints the same text.
B=${TB_BUILD:-build}
W=$(mktemp -d /tmp/tb-t-demo-XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM HUP
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
D=$W/cap
out=$W/out

"$B/examples/demo" "$D" > "$out" 2> "$W/err"; check $? "the demo runs (exit status 0)"
[ ! -s "$W/err" ]; check $? "nothing on standard error (no problem reported)"
R=$D/report.txt
G=$D/graph.txt

# ---------------------------------------------------------- every kind
count() { grep -c -- "$1" "$R"; }
for kind in ": request: worker=" ": signal: worker=" ": lookup: cache miss: " \
	    ": tracing_mark_write: " ": funcgraph_entry: --> " ": funcgraph_exit: <-- " \
	    ": pmu_counters: task_clock=" "BLOB: 12000 bytes, crc32 "; do
	c=$(count "$kind"); [ "$c" -gt 0 ]; check $? "the report has '$kind' lines ($c)"
done
# The blob, saved with the capture: its CRC-32 from the bytes the demo wrote ("blob line NNNN\n" x 800;
# gzip's trailer holds the CRC-32 of its input), and the head of its text.
crc=$(i=0; while [ $i -lt 800 ]; do printf 'blob line %04d\n' $i; i=$((i+1)); done | gzip -c | tail -c8 |
	od -An -tx4 -N4 | tr -d ' ')
grep -qF "[BLOB: 12000 bytes, crc32 $crc] \"blob line 0000\\nblob line 0001\\n" "$R"
check $? "the blob is in the report: its length, the CRC-32 of what was written, its head"
if grep -q "PMU sampler: not started" "$out"; then
	check 0 "# the PMU sampler was refused here: $(sed -n 's/.*PMU sampler: not started: //p' "$out")"
else
	c=$(count ": pmu_sample: ip="); [ "$c" -gt 0 ]; check $? "the report has pmu_sample lines ($c)"
	c=$(count ": pmu_sample: ip=crunch "); [ "$c" -gt 0 ]; check $? "samples of the main thread's crunch() are named ($c)"
fi
# The printf and the marker name the function that wrote them (the registry's kallsyms
# beside the program's own symbols).
grep -q "demo-[0-9]* *\[000\] .*: lookup: cache miss: worker 0 id 1000 path /index.html$" "$R"
check $? "the main thread's printf event, named after lookup()"
grep -q ": tracing_mark_write: demo: all work done$" "$R"; check $? "the main thread's marker"
workers=$(sed -n 's/.*: request: worker=\([1-9]\) .*/\1/p' "$R" | sort -u | wc -l)
cpus=$(getconf _NPROCESSORS_ONLN); want=$(( cpus < 2 ? 1 : 2 ))
[ "$workers" -ge $want ]; check $? "request events of $workers worker threads (the last one on each CPU at least)"
grep -q "demo-w[1-4]-[0-9]* *\[" "$R"; check $? "worker threads are named in the task column (saved_cmdlines)"
handled=$(sed -n 's/^signals: .* handled: \(.*\) (pending.*/\1/p' "$out")
for h in $handled; do [ "${h#+}" -ge 1 ] || handled=bad; done
[ "$handled" != bad ] && [ -n "$handled" ]; check $? "every worker handled signals while it wrote ($handled)"

# ---------------------------------------------------------- losses add up
lost_lines=$(grep -c '^CPU:[0-9]* \[LOST [0-9]* EVENTS\]$' "$R")
[ "$lost_lines" -gt 0 ]; check $? "LOST lines in the report ($lost_lines)"
lost=$(sed -n 's/^CPU:[0-9]* \[LOST \([0-9]*\) EVENTS\]$/\1/p' "$R" | awk '{s += $1} END {print s + 0}')
events=$(grep -v -c -e '^#' -e '^CPU:[0-9]* \[LOST' "$R")
written=$(sed -n 's/^written: \([0-9]*\) (entries + overrun + read)$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
[ "$written" -gt 0 ] && [ $((events + lost)) = "$written" ]
check $? "event lines $events + LOST $lost = $written written (the stats of every CPU)"
[ "$lost" -gt $((10 * events)) ]; check $? "the ring was overrun many times over ($lost lost, $events kept)"
grep -q "^# entries-in-buffer/entries-written: $events/$written " "$R"; check $? "the report header says $events/$written"
iter=$(sed -n 's/^iterator: \([0-9]*\) events, \([0-9]*\) reported lost$/\1 \2/p' "$out")
[ "$iter" = "$events $lost" ]; check $? "the iterator saw the same before the save ($iter)"
c=$(grep -c -e '^lost: [0-9]* ([0-9.]*% of [0-9]* attempted)$' -e '^window: [0-9.]* s held' "$out")
[ "$c" = $((2 * cpus)) ]; check $? "each CPU's stats have the derived lost and window lines"
grep -q "^blobs: written 1, " "$out"; check $? "a CPU's stats count the blob"

# ---------------------------------------------------------- the blob
grep -q "^blob: read back by the iterator on CPU [0-9]*: intact, every byte as written" "$out"
check $? "the demo reads the blob back intact"
awk 'BEGIN { for (i = 0; i < 800; i++) printf "blob line %04d\n", i }' > "$W/blob.expected"
cmp -s "$W/blob.expected" "$D/blob.out"; check $? "blob.out is the 12000 bytes written (800 numbered lines)"

# ---------------------------------------------------------- the call graph
# From the main thread's last request on: the nesting app.c has, comments at the
# kernel's depth (a comment after a return to depth 0 is not indented).
start=$(grep -n 'handle_request() {' "$G" | tail -n 1 | cut -d: -f1)
sed -n "${start:-1},\$p" "$G" | grep '|' | sed -e 's/^[^|]*|//' -e 's/hash=[0-9a-f]*/hash=H/' \
	-e 's/first=[0-9]* area=[0-9]*/first=F area=A/' -e '/pmu_counters/s/=[0-9]*/=N/g' > "$W/nesting"
cat > "$W/nesting.expected" <<'EOF'
  handle_request() {
    parse_path();
    lookup() {
      hash_path();
      on_signal() {
        /* signal: worker=0 signo=10 nth=1 */
      }
      /* cache miss: worker 0 id 1000 path /index.html */
    }
  /* request: worker=0 id=1000 path=/index.html hash=H */
  }
  send_blob() {
    on_signal() {
      /* signal: worker=0 signo=10 nth=2 */
    }
  /* blob_ref: len=12000 first=F area=A */
  }
  /* pmu_counters: task_clock=N context_switches=N page_faults=N */
  /* demo: all work done */
EOF
diff "$W/nesting.expected" "$W/nesting" > "$W/nesting.diff"; check $? "the graph's newest end has the known nesting"
[ $? = 0 ] || sed 's/^/# /' "$W/nesting.diff"
# crunch() is a leaf, or opens and closes around samples the sampler wrote meanwhile.
# Its close is found by name (the kernel's funcgraph-tail option: "} /* crunch */"),
# not as the next "}" at its depth: the lines of every CPU are interleaved in time,
# and another thread's close on another CPU can come first (seen beside two CPU hogs).
"$B/tracebuf" report --graph --graph-opt tail "$D" > "$W/graph-tail" 2>&1
closes=$(grep -c -E '\|  (crunch\(\);|\} /\* crunch \*/)$' "$W/graph-tail")
marked=$(grep -c -E '\) [#*@$] [0-9.]+ us +\|  (crunch\(\);|\} /\* crunch \*/)$' "$W/graph-tail")
[ "$closes" = 1 ] && [ "$marked" = 1 ]; rc=$?
check $rc "crunch() and its 8 ms of CPU: its one close has a mark of 1 ms or more (# * @ \$)"
[ $rc = 0 ] || grep -E 'crunch\(|crunch \*/' "$W/graph-tail" | head -n 5 | sed 's/^/# /' >&2

# ---------------------------------------------------------- the CLI agrees
"$B/tracebuf" report --no-graph "$D" > "$W/cli-report" 2>&1
cmp -s "$W/cli-report" "$R"; check $? "tracebuf report --no-graph DIR prints report.txt"
"$B/tracebuf" report "$D" > "$W/cli-graph" 2>&1
cmp -s "$W/cli-graph" "$G"; check $? "tracebuf report DIR (tracer function_graph) prints graph.txt"
"$B/tracebuf" report --graph "$D" 2>&1 | cmp -s - "$G"; check $? "and so does --graph"
echo "1..$n"
exit $fail
