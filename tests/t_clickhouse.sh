#!/bin/sh
# convert --clickhouse against a ClickHouse server of its own
# (scripts/clickhouse.sh, started once, stopped by the trap): each field's
# column type from the format files (awk over them, by docs/sql.md's rule),
# hist and offcpu totals equal ClickHouse's answers on the same input, the
# loader's per-trace summaries add up to their tables' totals, the
# same trace loaded twice keeps its counts, a loader killed in the middle
# of its load (by a condition: the relay tests/lib/ch_hold_proxy.py holds
# its Nth INSERT) leaves nothing counted and a re-run gives one load's
# totals, and a port with nothing says which address.  Skips when
# clickhouse-server cannot run here.
B=${TB_BUILD:-build}
TB="$B/tracebuf"
DAT=tests/data/trace-dat/sched-marker-v6.dat
F=tests/data/kernel/cap-g-kernel-printers
W=$(mktemp -d /tmp/tb-ch-test.XXXXXX)
export TB_CLICKHOUSE_DIR="$W/servers"
PROXY_PID=
cleanup() {
	[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
	scripts/clickhouse.sh stop
	rm -rf "$W"
}
trap cleanup EXIT
. tests/lib/clickhouse.sh
ch_start 2
HTTP=$HTTP1 TCP=$TCP1
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
same_sorted() {
	LC_ALL=C sort "$1" > "$W/s1"; LC_ALL=C sort "$2" > "$W/s2"
	if [ -s "$W/s1" ] && cmp -s "$W/s1" "$W/s2"; then check 0 "$3 ($(wc -l < "$W/s1") rows)"; else
		check 1 "$3"; diff "$W/s1" "$W/s2" | head -10 | sed 's/^/# /'; fi
}
ch() { clickhouse-client --port "$TCP" --database "$1" --query "$2"; }
load() { "$TB" convert "$1" --clickhouse "127.0.0.1:$2" --database "$3" 2> "$W/err"; }
# Rows of every table of database $1 (its parts: the tables' own counts), as "table rows" lines.
counts() { ch system "SELECT table, sum(rows) FROM parts WHERE database = '$1' AND active GROUP BY table ORDER BY table"; }

# -- types: each field of each event table, from its format file
load $F "$HTTP" types; check $? "a capture of the kernel printers (arrays among its fields) loads ($(cat "$W/err" | head -c 200))"
find $F/formats -name '*.format' | xargs awk 'function typ(decl, size, sgn) {
		if (decl ~ /__data_loc|__rel_loc/ || decl ~ /\[[0-9]*\]/ || size == 0)
			return decl ~ /char/ ? "Nullable(String)" : "Array(UInt8)"
		if (size == 1 || size == 2 || size == 4 || size == 8)
			return "Nullable(" (sgn ? "" : "U") "Int" size * 8 ")"
		return "Array(UInt8)"
	}
	FNR == 1 { sys = FILENAME; sub(/\/[^\/]*$/, "", sys); sub(/.*\//, "", sys) }
	/^name: / { name = $2 }
	/^\tfield:/ {
		decl = $0; sub(/^\tfield:/, "", decl); sub(/;.*/, "", decl)
		size = $0; sub(/.*size:/, "", size); sub(/;.*/, "", size)
		sgn = $0; sub(/.*signed:/, "", sgn); sub(/;.*/, "", sgn)
		f = decl; sub(/\[[^]]*\]$/, "", f); sub(/.* /, "", f); sub(/^\*/, "", f)
		if (f == "common_type" || f == "common_pid") next
		if (f ~ /^(ts|cpu|pid|tid|comm|host|trace_id)$/) f = "field_" f
		print sys "/" name "," f "," typ(decl, size + 0, sgn + 0)
	}' > "$W/types.all"
# every event table's columns but the common ones, in one query (a client costs 0.4 s to start)
ch types "SELECT system, event FROM event_table FORMAT CSV" | tr -d '"' | tr ',' '/' > "$W/events"
ch system "SELECT concat(e.system, '/', e.event), c.name, c.type FROM columns AS c
	ANY INNER JOIN (SELECT name AS table, system, event FROM types.event_table) AS e USING table
	WHERE database = 'types' AND c.name NOT IN ('ts', 'cpu', 'pid', 'tid', 'comm', 'host', 'trace_id')
	FORMAT CSV" | tr -d '"' > "$W/types.got"
awk -F, 'NR == FNR { t[$1] = 1; next } ($1 in t)' "$W/events" "$W/types.all" > "$W/types.want"
same_sorted "$W/types.want" "$W/types.got" "each field's ClickHouse type: ints by size and sign, char arrays String, other arrays Array(UInt8)"
grep -q ',Nullable(String)$' "$W/types.got" && grep -q ',Array(UInt8)$' "$W/types.got" &&
	grep -q ',Nullable(Int32)$' "$W/types.got" && grep -q ',Nullable(UInt64)$' "$W/types.got"
check $? "the kinds are there: strings, arrays, signed and unsigned integers"
# -- hist and offcpu equal ClickHouse's answers on the same input
load $DAT "$HTTP" dat; check $? "a trace.dat loads"
ch dat "DESCRIBE TABLE sched_switch" | head -7 | cut -f1,2 | tr '\t' ' ' | tr '\n' ';' > "$W/common"
[ "$(cat "$W/common")" = "ts UInt64;cpu Nullable(Int64);pid Nullable(Int64);tid Nullable(Int64);comm Nullable(String);host LowCardinality(String);trace_id Int64;" ]
check $? "the common columns: ts UInt64, host LowCardinality ($(cat "$W/common"))"

hist_rows() { "$TB" hist -e sched_switch "$1" $DAT | awk '/^\{/ { line = $0; sub(/^\{ [a-z_]+: */, "", line)
	key = line; sub(/ *\}.*/, "", key); rest = line; sub(/^[^}]*\}/, "", rest); n = split(rest, v, " ")
	s = key; for (i = 2; i <= n; i += 2) s = s "," v[i]; print s }'; }
hist_rows 'keys=prev_pid:vals=prev_prio' > "$W/h1.want"
ch dat "SELECT prev_pid, count(), sum(prev_prio) FROM sched_switch GROUP BY prev_pid FORMAT CSV" > "$W/h1.got"
same_sorted "$W/h1.want" "$W/h1.got" "hist keys=prev_pid:vals=prev_prio = ClickHouse's GROUP BY prev_pid"
hist_rows 'keys=next_comm' > "$W/h2.want"
ch dat "SELECT next_comm, count() FROM sched_switch GROUP BY next_comm FORMAT CSV" | tr -d '"' > "$W/h2.got"
same_sorted "$W/h2.want" "$W/h2.got" "hist keys=next_comm (a string key) = ClickHouse's GROUP BY next_comm"
"$TB" offcpu -q $DAT 2> /dev/null | tr ' ' '\t' > "$W/off.want"
awk '/^```sql clickhouse-offcpu$/ { on = 1; next } on && /^```/ { exit } on' docs/clickhouse.md > "$W/off.sql"
clickhouse-client --port "$TCP" --database dat --multiquery < "$W/off.sql" > "$W/off.got"
same_sorted "$W/off.want" "$W/off.got" "offcpu's totals per comm = docs/clickhouse.md's off-CPU query"
# -- the loader's per-trace summaries add up to their tables' totals; cap-a-small-noloss ends with a
# runnable span after a wakeup still open (dur NULL), which is no latency
SUMS="SELECT (SELECT count() FROM events), (SELECT sum(n) FROM event_count),
	(SELECT count() FROM sched_slice WHERE dur IS NOT NULL), (SELECT sum(n) FROM sched_slice_by_thread),
	(SELECT sum(dur) FROM sched_slice), (SELECT sum(dur_sum) FROM sched_slice_by_thread),
	(SELECT count() FROM thread_state), (SELECT sum(n) FROM thread_state_by_thread),
	(SELECT count(dur) FROM thread_state), (SELECT sum(n_ended) FROM thread_state_by_thread),
	(SELECT sum(dur) FROM thread_state), (SELECT sum(dur_sum) FROM thread_state_by_thread),
	(SELECT count() FROM thread_state WHERE state = 'R' AND waker_utid IS NOT NULL AND dur IS NOT NULL),
	(SELECT sum(n) FROM wakeup_latency) FORMAT TSV"
load tests/data/kernel/cap-a-small-noloss "$HTTP" sums
ch sums "$SUMS" | awk -F '\t' '{ print NF, ($1 == $2 && $3 == $4 && $5 == $6 && $7 == $8 && $9 == $10 && $11 == $12 && $13 == $14) ? "same" : "different", $0 }' > "$W/sums"
[ "$(cut -d' ' -f1-2 "$W/sums")" = "14 same" ] &&
	[ "$(ch sums "SELECT count() FROM thread_state WHERE state = 'R' AND waker_utid IS NOT NULL AND dur IS NULL")" -ge 1 ]
check $? "the summaries add up to their tables: events, slices, states, latencies ($(cat "$W/sums"))"

# -- idempotent: the same trace twice keeps every table's count
counts dat > "$W/once"
load $DAT "$HTTP" dat; check $? "the same trace loads again"
counts dat > "$W/twice"
[ -s "$W/once" ] && cmp -s "$W/once" "$W/twice"; check $? "loaded twice, every table has one load's rows ($(wc -l < "$W/once") tables)"
[ "$(ch dat 'SELECT count() FROM events')" = "$(ch dat 'SELECT sum(records) FROM trace')" ]
check $? "events has each record once: trace.records"

# -- atomic: a loader killed with its 3rd INSERT held leaves nothing counted
python3 tests/lib/ch_hold_proxy.py "$W/proxy.port" "$HTTP" 3 "$W/held" & PROXY_PID=$!
i=0; while [ ! -s "$W/proxy.port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
TMPDIR="$W" "$TB" convert $DAT --clickhouse "127.0.0.1:$(cat "$W/proxy.port")" --database cut 2> /dev/null & LOADER=$! # its scratch folder, left by the kill, in $W
i=0; while [ ! -e "$W/held" ] && [ $i -lt 600 ] && kill -0 $LOADER 2> /dev/null; do sleep 0.1; i=$((i+1)); done
[ -e "$W/held" ]; check $? "the relay held the loader's 3rd insert"
ls -d "$W"/tracebuf-ch.* > /dev/null 2>&1; check $? "the loader spools into \$TMPDIR (here the test's folder)"
kill -KILL $LOADER 2> /dev/null; wait $LOADER 2> /dev/null
staged=$(ch system "SELECT sum(rows) FROM parts WHERE database LIKE 'cut\\_\\_load\\_%' AND active")
visible=$(ch system "SELECT count() FROM parts WHERE database = 'cut' AND active AND table != 'event_table'")
[ "${staged:-0}" -gt 0 ] && [ "$visible" = 0 ]
check $? "killed mid-way: $staged rows staged, no part of the trace in its tables"
load $DAT "$HTTP" cut; check $? "the killed load is run again"
counts cut > "$W/rerun"
cmp -s "$W/once" "$W/rerun"; check $? "after the re-run every table has one clean load's rows"
kill "$PROXY_PID" 2> /dev/null; PROXY_PID=

# -- a fleet at a small size: the trace replayed as two hosts, one per shard, each loader with
# --cluster making the Distributed tables (fleet_all.T over fleet.T of every shard) on its server;
# queried on either server, each host's totals = its own `tracebuf hist`
"$TB" convert $DAT --clickhouse "127.0.0.1:$HTTP" --database fleet --cluster tracebuf --host h1 2> "$W/err" &&
	"$TB" convert $DAT --clickhouse "127.0.0.1:$HTTP2" --database fleet --cluster tracebuf --host h2 2> "$W/err"
check $? "two hosts loaded with --cluster, one on each shard ($(head -c 200 "$W/err"))"
ch system "SELECT engine FROM tables WHERE database = 'fleet_all' AND name = 'sched_switch'" > "$W/engine"
[ "$(cat "$W/engine")" = Distributed ]; check $? "--cluster made fleet_all.sched_switch, a Distributed table ($(cat "$W/engine"))"
sed 's/^/h1,/' "$W/h1.want" > "$W/fleet.want"; sed 's/^/h2,/' "$W/h1.want" >> "$W/fleet.want"
for port in "$TCP" "$TCP2"; do
	clickhouse-client --port "$port" --database fleet_all --query "SELECT host, prev_pid, count(), sum(prev_prio)
		FROM sched_switch GROUP BY host, prev_pid FORMAT CSV" | tr -d '"' > "$W/fleet.got"
	same_sorted "$W/fleet.want" "$W/fleet.got" "through the server of tcp port $port, the cluster's totals per host = each host's hist"
done
"$TB" convert $DAT --cluster tracebuf -o "$W/x.dat" 2> "$W/err"; rc=$?
[ $rc = 2 ] && grep -q -- '--cluster tracebuf is for a load' "$W/err"; check $? "--cluster without --clickhouse: a usage error"

# -- every portable worked query of docs/sql.md (a plain ```sql block: all but the off-CPU one,
# whose ClickHouse text is docs/clickhouse.md's) runs unchanged here and gives SQLite's rows
OVERRUN=tests/data/kernel/cap-b-overrun
load $OVERRUN "$HTTP" dat; check $? "docs/sql.md's second input loads beside the first"
"$TB" sql --db "$W/docs.db" $DAT $OVERRUN 2> /dev/null
awk '/^```sql$/ { on = 1; n++; f = sprintf("%s/q%02d.sql", dir, n); next } on && /^```/ { on = 0; close(f); next }
	on { print > f }' dir="$W" docs/sql.md
# all of them in one clickhouse-client (0.3 s to start each, on this VM; a query that fails does
# not stop the others), each after a marker row naming it; the output split back per query
for f in "$W"/q*.sql; do echo "SELECT 'query $(basename "$f" .sql)';"; cat "$f"; done > "$W/all.sql"
clickhouse-client --port "$TCP" --database dat --multiquery --ignore-error --format CSV < "$W/all.sql" 2> "$W/all.err" |
	awk -v dir="$W" '/^"query q[0-9]+"$/ { close(f); f = dir "/" substr($0, 8, length($0) - 8) ".ch"; next }
		f { print > f }'
sed 's/^/# /' "$W/all.err" | head -5
nq=0
for f in "$W"/q*.sql; do
	nq=$((nq + 1))
	"$TB" sql --db "$W/docs.db" --query-file "$f" --format csv 2>&1 | tail -n +2 > "$W/q.sqlite"
	# CSV quoting differs (ClickHouse quotes every string, SQLite only where needed): compare unquoted
	cat "${f%.sql}.ch" 2> /dev/null | tr -d '"' > "$W/q.ch.bare"; tr -d '"' < "$W/q.sqlite" > "$W/q.sqlite.bare"
	[ -s "$W/q.ch.bare" ] && cmp -s "$W/q.ch.bare" "$W/q.sqlite.bare"
	check $? "docs/sql.md's query on ClickHouse gives SQLite's $(wc -l < "$W/q.sqlite") rows: $(head -1 "$f" | cut -c4-70)"
	cmp -s "$W/q.ch.bare" "$W/q.sqlite.bare" || diff "$W/q.sqlite.bare" "$W/q.ch.bare" | head -6 | sed 's/^/# /'
done
[ $nq -ge 10 ]; check $? "at least ten of docs/sql.md's worked queries are portable ($nq)"

# -- damage: what is intact loads, the damage is a row of lost, exit 1
BAD=tests/data/bad/record-short
"$TB" convert $BAD --clickhouse "127.0.0.1:$HTTP" --database bad 2> "$W/err"; rc=$?
ch bad "SELECT path, offset, reason FROM lost FORMAT CSV" > "$W/out"
[ $rc = 1 ] && grep -q "$BAD/cpu0.raw\",772," "$W/out" && grep -q 'record-short/cpu0.raw: byte 772: ' "$W/err"
check $? "a short record: said with file and byte, a row of lost, exit 1"
[ "$("$TB" report $BAD 2> /dev/null | grep -vc '^#')" = "$(ch bad 'SELECT count() FROM events')" ]
check $? "every intact record of it loads"

# -- bad input: a port with nothing says which address
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TB" convert $DAT --clickhouse "127.0.0.1:$port" 2> "$W/err"; rc=$?
[ $rc = 4 ] && grep -q "127.0.0.1:$port: cannot connect" "$W/err"; check $? "an unreachable server: exit 4 (output), its address said ($(head -1 "$W/err"))"
"$TB" convert $DAT --clickhouse "nocolon" 2> "$W/err"; rc=$?
[ $rc = 2 ] && grep -q "nocolon: not HOST:PORT" "$W/err"; check $? "an address without a port is refused"

echo "1..$n"
exit $fail
