#!/bin/sh
# bench_sql - `tracebuf sql` loading a real trace.dat of a scheduler
# ping-pong into SQLite, beside `sqlite3 .import` of the very same rows from
# CSV files made beforehand (the import alone is the peer: its CSV is
# already there, tracebuf decodes the trace.dat).
#
# Records sched_switch, sched_waking and sched_wakeup of `perf bench sched
# pipe` in a private tracefs instance (never the top-level buffer), saves the
# pages with `tracebuf capture` and builds a trace.dat of them with
# `trace-cmd restore`.  tracebuf loads it (default tables: events, one per
# event type, thread, process, sched_slice, thread_state, ...); the rows of
# every stored table (the NAME:rows tables under the views, docs/sql.md) are
# then written out as CSV, and sqlite3 imports them into the same (empty)
# tables: the peer stores the very rows tracebuf stores.  Fastest of 3 runs each, alternating; figures:
# events per second, rows per second, peak resident memory of the load.
#
# Usage: bench_sql.sh [BUILD_DIR]   (root, tracefs, trace-cmd, perf, sqlite3; else skipped)
# TB_BENCH_SQL_LOOPS=N sets the ping-pong's round trips (default 300000:
# about 2.4 M events); TB_BENCH_KEEP=1 keeps the files; TB_BENCH_SQL_BEFORE=PROG
# times another tracebuf (an earlier build) in the same rounds, for a
# before/after figure on the same trace.
B=${1:-build}
LOOPS=${TB_BENCH_SQL_LOOPS:-300000}
NAME=bench_sql
. "$(dirname "$0")/lib_instance.sh"
bench_instance
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 not installed (the peer)"
[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) not installed"
bench_sched_pipe_tracedat "$LOOPS"

# -- one load to learn the rows, and the peer's CSV of every table (made beforehand)
"$TB" sql --db "$W/ref.db" "$DAT" 2> "$W/load.err" || skip "tracebuf sql could not load $DAT: $(cat "$W/load.err")"
events=$(sqlite3 "$W/ref.db" "SELECT count(*) FROM events")
rows=0
: > "$W/import.sql"
sqlite3 "$W/ref.db" .schema > "$W/schema.sql"
for t in $(sqlite3 "$W/ref.db" "SELECT name FROM sqlite_master WHERE type = 'table'"); do
	sqlite3 -csv "$W/ref.db" "SELECT * FROM \"$t\"" > "$W/$t.csv"
	rows=$((rows + $(sqlite3 "$W/ref.db" "SELECT count(*) FROM \"$t\"")))
	echo ".import $W/$t.csv $t" >> "$W/import.sql"
done
export TB DAT W
TB_CMD='rm -f "$W/tb.db"; "$TB" sql --db "$W/tb.db" "$DAT"'
# the peer: the same pragmas as tracebuf's load (no journal, no sync), the tables made, then .import
PEER_CMD='rm -f "$W/peer.db"; { echo "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"; cat "$W/schema.sql";
	echo ".mode csv"; echo "BEGIN;"; cat "$W/import.sql"; echo "COMMIT;"; } | sqlite3 "$W/peer.db"'
timed() { /usr/bin/time -f '%e %U %S %M' -o "$W/t" sh -c "$1" > /dev/null 2>&1; awk '{ printf "%.0f %.0f %d\n", $1 * 1e9, ($2 + $3) * 1e9, $4 }' "$W/t"; }
best() { echo "$1 $2" | awk '{ for (i = 1; i <= 3; i++) if ($i == 0 || $(i + 3) < $i) $i = $(i + 3); print $1, $2, $3 }'; }
BEFORE=${TB_BENCH_SQL_BEFORE:-}
export BEFORE
BEFORE_CMD='rm -f "$W/before.db"; "$BEFORE" sql --db "$W/before.db" "$DAT"'
b_tb="0 0 0"
b_pe="0 0 0"
b_bf="0 0 0"
for i in 1 2 3; do
	b_tb=$(best "$b_tb" "$(timed "$TB_CMD")")
	b_pe=$(best "$b_pe" "$(timed "$PEER_CMD")")
	[ -z "$BEFORE" ] || b_bf=$(best "$b_bf" "$(timed "$BEFORE_CMD")")
done
same=$(sqlite3 "$W/peer.db" "SELECT count(*) FROM events")
set -- $b_tb $b_pe
awk -v tb=$1 -v ctb=$2 -v rss=$3 -v pe=$4 -v cpe=$5 -v n="$events" -v rows="$rows" -v same="$same" \
	-v mib="$(du -m "$W/tb.db" | cut -f1)" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
	-v json="$B/bench/results-sql.json" 'BEGIN {
	printf "bench_sql: %d events (%d rows stored in all tables, a %d MiB database), fastest of 3 runs each\n", n, rows, mib
	printf "  wall clock (load average %s):\n", load
	printf "    tracebuf sql (decode + load)   %8.1f ms: %.2f M events/s, %.2f M rows/s\n", tb / 1e6, n / tb * 1e3, rows / tb * 1e3
	printf "    sqlite3 .import of the CSV     %8.1f ms: %.2f M rows/s; tracebuf takes %.2fx its time\n", pe / 1e6, rows / pe * 1e3, tb / pe
	printf "  CPU time: tracebuf %.1f ms (%.2f M events/s), sqlite3 %.1f ms\n", ctb / 1e6, n / ctb * 1e3, cpe / 1e6
	printf "  peak resident memory of tracebuf sql: %.1f MiB\n", rss / 1024
	if (same != n)
		printf "  WARNING: the peer imported %s events rows, tracebuf %d: the comparison is off\n", same, n
	printf "[\n  {\"case\": \"sql load into SQLite (wall clock, per event)\", \"threads\": 2, \"tracebuf_ns\": %.2f, \"peer\": \"sqlite3 .import of the same rows\", \"peer_ns\": %.2f, \"ratio\": %.2f},\n",
		tb / n, pe / n, pe / tb > json
	printf "  {\"case\": \"sql load into SQLite (CPU time, per event)\", \"threads\": 2, \"tracebuf_ns\": %.2f, \"peer\": \"sqlite3 .import of the same rows\", \"peer_ns\": %.2f, \"ratio\": %.2f}\n]\n",
		ctb / n, cpe / n, cpe / ctb > json
}'
if [ -n "$BEFORE" ]; then
	set -- $b_tb $b_bf
	awk -v tb=$1 -v ctb=$2 -v bf=$4 -v cbf=$5 -v n="$events" -v prog="$BEFORE" 'BEGIN {
	printf "  before (%s): %.1f ms wall, %.1f ms CPU: %.2f M events/s of wall, %.2f of CPU;\n",
		prog, bf / 1e6, cbf / 1e6, n / bf * 1e3, n / cbf * 1e3
	printf "    now %.2f M events/s of wall (%.2fx its wall clock), %.2f of CPU (%.2fx its CPU time)\n",
		n / tb * 1e3, tb / bf, n / ctb * 1e3, ctb / cbf }'
fi
