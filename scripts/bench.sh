#!/bin/sh
# Run the benchmarks with their peers set up: an LTTng overwrite-mode
# snapshot session (nothing goes to disk, like a tracebuf ring).
B=${1:-build}
session=tbbench$$
lttng_up=0
if command -v lttng >/dev/null 2>&1 && [ -x "$B/bench/bench_write" ]; then
	pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize >/dev/null 2>&1
	if lttng create "$session" --snapshot >/dev/null 2>&1 &&
	   lttng enable-channel -u chan --overwrite --subbuf-size 1M --num-subbuf 4 -s "$session" >/dev/null 2>&1 &&
	   lttng enable-event -u -c chan 'tb_bench:*,tb_src:*,lttng_ust_tracef:*' -s "$session" >/dev/null 2>&1 &&
	   lttng start "$session" >/dev/null 2>&1; then
		lttng_up=1
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
