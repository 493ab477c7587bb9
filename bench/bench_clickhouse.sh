#!/bin/sh
# bench_clickhouse: convert --clickhouse of a recorded trace.dat (a sched
# ping-pong, as bench_sql.sh records it) against its peer, ClickHouse
# ingesting the same rows from RowBinary files made beforehand (the same
# INSERTs, over the same HTTP interface, into the same tables: the load
# without tracebuf's decoding, staging and swap).  Issue 25: the whole load
# within 1.3x of the ingest alone.  A server of its own (scripts/clickhouse.sh).
B=${1:-build}
LOOPS=${TB_BENCH_CH_LOOPS:-300000}
NAME=bench_clickhouse
. "$(dirname "$0")/lib_instance.sh"
bench_instance
command -v clickhouse-server >/dev/null 2>&1 || skip "clickhouse-server not installed"
command -v curl >/dev/null 2>&1 || skip "curl not installed (the peer's HTTP client)"
bench_sched_pipe_tracedat "$LOOPS"

export TB_CLICKHOUSE_DIR="$W/servers"
ports=$(scripts/clickhouse.sh start) || skip "clickhouse-server does not start"
trap 'scripts/clickhouse.sh stop; bench_cleanup' EXIT
HTTP=$(echo "$ports" | awk '$1 == "port" { print $2; exit }')
"$TB" convert "$DAT" --format clickhouse-rowbinary -o "$W/rb" 2> /dev/null || skip "cannot write RowBinary"
"$TB" convert "$DAT" --clickhouse "127.0.0.1:$HTTP" --database peer 2> /dev/null || skip "cannot load"
q() { curl -sf --data-binary "$2" "http://127.0.0.1:$HTTP/?query=$1"; }
enc() { printf %s "$1" | sed 's/ /%20/g; s/`/%60/g; s/,/%2C/g; s/=/%3D/g; s/(/%28/g; s/)/%29/g'; }
events=$(q "$(enc 'SELECT count() FROM peer.events')" '')
now() { date +%s%N; }
best_tb=0 best_pe=0
for i in 1 2 3; do
	t0=$(now)
	"$TB" convert "$DAT" --clickhouse "127.0.0.1:$HTTP" --database tb 2> /dev/null
	t1=$(now)
	# the peer: the prepared rows into peer's tables, emptied first (not timed)
	while IFS="$(printf '\t')" read -r file table kind; do q "$(enc "TRUNCATE TABLE peer.\`$table\`")" '' ; done < "$W/rb/tables.tsv"
	t2=$(now)
	while IFS="$(printf '\t')" read -r file table kind; do
		[ -s "$W/rb/$file" ] && q "$(enc "INSERT INTO peer.\`$table\` FORMAT RowBinary")" "@$W/rb/$file"
	done < "$W/rb/tables.tsv"
	t3=$(now)
	tb=$((t1 - t0)) pe=$((t3 - t2))
	[ $best_tb = 0 ] || [ $tb -lt $best_tb ] && best_tb=$tb
	[ $best_pe = 0 ] || [ $pe -lt $best_pe ] && best_pe=$pe
done
mkdir -p "$B/bench"
got=$(q "$(enc 'SELECT count() FROM tb.events')" '')
awk -v tb=$best_tb -v pe=$best_pe -v n="$events" -v got="$got" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
	-v json="$B/bench/results-clickhouse.json" 'BEGIN {
	printf "bench_clickhouse: %d events, fastest of 3 runs each (load average %s)\n", n, load
	printf "    tracebuf convert --clickhouse (decode, stage, swap) %8.1f ms: %.2f M events/s\n", tb / 1e6, n / tb * 1e3
	printf "    ClickHouse ingest of the prepared RowBinary         %8.1f ms; tracebuf takes %.2fx its time (issue: <= 1.3x)\n", pe / 1e6, tb / pe
	if (got != n)
		printf "  WARNING: tracebuf loaded %s events rows, the peer %d: the comparison is off\n", got, n
	printf "[\n  {\"case\": \"load into ClickHouse (wall clock, per event)\", \"threads\": 1, \"tracebuf_ns\": %.2f, \"peer\": \"ClickHouse ingest of the same RowBinary\", \"peer_ns\": %.2f, \"ratio\": %.2f}\n]\n",
		tb / n, pe / n, pe / tb > json
}'
