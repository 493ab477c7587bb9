#!/bin/sh
# Run the benchmarks with their peers set up: an LTTng overwrite-mode
# snapshot session (nothing goes to disk, like a tracebuf ring).  Each bench
# writes its results-NAME.json; they end up merged, checked, in results.json.
B=${1:-build}
session=tbbench$$
# Only this run's figures go into results.json.
rm -f "$B"/bench/results*.json
lttng_up=0
if command -v lttng >/dev/null 2>&1 && [ -x "$B/bench/bench_write" ]; then
	pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize >/dev/null 2>&1
	if lttng create "$session" --snapshot >/dev/null 2>&1 &&
	   lttng enable-channel -u chan --overwrite --subbuf-size 1M --num-subbuf 4 -s "$session" >/dev/null 2>&1 &&
	   lttng enable-event -u -c chan 'tb_bench:*,tb_src:*,lttng_ust_tracef:*' -s "$session" >/dev/null 2>&1 &&
	   lttng start "$session" >/dev/null 2>&1; then
		lttng_up=1
		export TB_BENCH_LTTNG_SESSION=$session
	else
		echo "bench: could not start an LTTng session; its figures will measure a disabled tracepoint" >&2
	fi
fi
for b in "$B"/bench/bench_*; do
	[ -x "$b" ] && "$b"
done
for s in "$(dirname "$0")"/../bench/bench_*.sh; do
	[ -f "$s" ] && sh "$s" "$B"
done
if [ $lttng_up = 1 ]; then
	lttng stop "$session" >/dev/null 2>&1
	lttng destroy "$session" >/dev/null 2>&1
fi
# One list of every bench's entries, each checked for its keys (bench/merge_results.c).
"$B/bench/merge_results" -o "$B/bench/results.json" "$B"/bench/results-*.json || exit 1
