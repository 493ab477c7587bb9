#!/bin/sh
# The fleet check of issue 25 item 5 at a small size (bench/bench_fleet.sh
# is the full one, 50 M events): scripts/fleet.sh plans 8 hosts replaying 4
# real recordings and captures (tests/data) under their own host ids and
# clock offsets, loads them into a 2-shard cluster (scripts/clickhouse.sh,
# two servers on loopback, stopped by the trap), and checks that the
# cluster's per-host totals through the Distributed tables equal each host's
# own `tracebuf hist` and `report --count`, its time stamps moved by its
# offset.  Then the loader is killed mid-way (by a condition: the relay
# tests/lib/ch_hold_proxy.py holds an INSERT of shard 1's loader) and run
# again: the totals are the same (nothing lost, nothing doubled), and so
# after a reload of every host.  The worked queries of docs/sql.md run on
# the fleet's Distributed tables.  Skips when clickhouse-server cannot run.
B=${TB_BUILD:-build}
export TB="$B/tracebuf"
W=$(mktemp -d /tmp/tb-fleet-test.XXXXXX)
export TB_CLICKHOUSE_DIR="$W/servers" TB_CLICKHOUSE_CLUSTER_DB=fleet
PROXY_PID= LOADER=
cleanup() {
	[ -n "$LOADER" ] && kill -KILL "-$LOADER" 2> /dev/null
	[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2> /dev/null
	scripts/clickhouse.sh stop
	rm -rf "$W"
}
trap cleanup EXIT
. tests/lib/clickhouse.sh
ch_start 2 curl setsid
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
ch() { clickhouse-client --port "$TCP1" --query "$1"; }
# every table's rows of database fleet on both shards, as "shard table rows" lines
counts() {
	for p in "$TCP1" "$TCP2"; do
		clickhouse-client --port "$p" --query "SELECT '$p', table, sum(rows) FROM system.parts
			WHERE database = 'fleet' AND active GROUP BY table ORDER BY table"
	done
}
M="$W/manifest"
# sched-marker has every sched event and softirqs, cap-b-overrun lost 9115 events, lost-events-v6
# lost 75 (a trace.dat's LOST lines), sched-v7-zstd is a zstd-compressed version 7 file
scripts/fleet.sh plan 8 2 tests/data/trace-dat/sched-marker-v6.dat tests/data/kernel/cap-b-overrun \
	tests/data/trace-dat/lost-events-v6.dat tests/data/trace-dat/sched-v7-zstd.dat > "$M"
[ "$(wc -l < "$M")" = 8 ] && [ "$(cut -f4 "$M" | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" = "4 4 " ] &&
	[ "$(cut -f2,4 "$M" | sort -u | wc -l)" = 8 ] && [ "$(cut -f3 "$M" | sort -u | wc -l)" = 8 ]
check $? "the plan: 8 hosts, 4 a shard, every file on both shards, each host its own clock offset"

# -- a loader killed mid-way: shard 1's loader through a relay that holds the third INSERT of
# its second host (the first host's tables are in; the second's partly staged, not swapped).
# The first host's inserts: one a table with rows, as --format clickhouse-rowbinary writes them,
# then one a per-trace summary the loader derives from them (sched-marker has the sources of all 5).
"$TB" convert "$(head -1 "$M" | cut -f2)" --format clickhouse-rowbinary -o "$W/rb" 2> /dev/null
hold=$(($(find "$W/rb" -name '*.bin' -size +0 | wc -l) + 5 + 3))
python3 tests/lib/ch_hold_proxy.py "$W/proxy.port" "$HTTP1" $hold "$W/held" & PROXY_PID=$!
i=0; while [ ! -s "$W/proxy.port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
# in $W: the scratch folders of the loader and its converts, which the kill leaves
TMPDIR="$W" setsid scripts/fleet.sh load "$M" fleet "$(cat "$W/proxy.port")" "$HTTP2" 2> "$W/load1.err" & LOADER=$!
i=0; while [ ! -e "$W/held" ] && [ $i -lt 1200 ] && kill -0 $LOADER 2> /dev/null; do sleep 0.1; i=$((i+1)); done
[ -e "$W/held" ]; check $? "the relay held insert $hold of shard 1's loader"
kill -KILL "-$LOADER" 2> /dev/null; wait $LOADER 2> /dev/null; LOADER=
kill "$PROXY_PID" 2> /dev/null; PROXY_PID=
staged=$(ch "SELECT sum(rows) FROM system.parts WHERE database LIKE 'fleet\\_\\_load\\_%' AND active")
hosts1=$(ch "SELECT count() FROM fleet.trace")
[ "${staged:-0}" -gt 0 ] && [ "$hosts1" -ge 1 ] && [ "$hosts1" -lt 4 ]
check $? "killed mid-way: $staged rows staged on shard 1, $hosts1 of its 4 hosts complete"
scripts/fleet.sh check "$M" fleet "$TCP1" 2> "$W/check0.err"
[ $? = 1 ]; check $? "the fleet check sees the missing host(s) ($(grep -c DIFFERENT "$W/check0.err") totals differ)"

# -- run again: the complete hosts skipped, the rest loaded; the totals each host's own
scripts/fleet.sh load "$M" fleet "$HTTP1" "$HTTP2" 2> "$W/load2.err"
check $? "the loader, run again, finishes ($(grep -v skipped "$W/load2.err" | head -c 200))"
skipped=$(grep -c 'complete on shard .*, skipped' "$W/load2.err")
[ "$skipped" -ge "$hosts1" ] && [ "$skipped" -ge 1 ]; check $? "it skips the hosts complete before the kill ($skipped)"
scripts/fleet.sh check "$M" fleet "$TCP1" 2> "$W/check1.err"
check $? "through shard 1's Distributed tables, each host's totals = its own hist and report"
sed 's/^/# /' "$W/check1.err"
scripts/fleet.sh check "$M" fleet "$TCP2" 2> "$W/check2.err"
check $? "and through shard 2's"
left=$(ch "SELECT count() FROM system.databases WHERE name LIKE 'fleet\\_\\_load\\_%'")
[ "$left" = 0 ]; check $? "no staging database left on shard 1 ($left)"
counts > "$W/counts1"

# -- every host loaded again: replaced, not doubled
scripts/fleet.sh load --all "$M" fleet "$HTTP1" "$HTTP2" 2> "$W/load3.err"
check $? "every host loaded again (--all) ($(head -c 300 "$W/load3.err"))"
counts > "$W/counts2"
[ -s "$W/counts1" ] && cmp -s "$W/counts1" "$W/counts2"
check $? "every table of both shards has the same rows ($(wc -l < "$W/counts1") tables)"
scripts/fleet.sh check "$M" fleet "$TCP1" 2> "$W/check3.err"
check $? "the totals are still each host's own"

# -- the worked queries on the fleet's Distributed tables
scripts/fleet.sh queries "$M" fleet "$TCP1" "$W/q" > "$W/queries"
sed 's/^/# /' "$W/queries"
nq=$(wc -l < "$W/queries")
[ "$nq" -ge 10 ] && ! grep -q '^failed' "$W/queries"; check $? "docs/sql.md's $nq worked queries run on the fleet"
[ "$(cat "$W/q/q01.out" | wc -l)" = 8 ]; check $? "the first lists the 8 traces, one a host"
# where clickhouse.md has a text of its own for a query (the wakeup percentiles with sorted
# arrays, the top events with LIMIT BY), that one runs; sql.md's (checked against SQLite by
# t_clickhouse.sh) gives the same rows here
grep -q arraySort "$(grep -l '^-- Wakeup latency' "$W"/q/q*.sql)" && grep -q 'LIMIT 3 BY' "$(grep -l '^-- Top events' "$W"/q/q*.sql)"
check $? "the fleet runs clickhouse.md's texts of the wakeup percentiles and the top events"
for p in "$W"/q/q*.portable; do
	clickhouse-client --port "$TCP1" --database fleet_all --distributed_product_mode=local --format TSV --multiquery \
		< "$p" > "${p%.portable}.pout"
	[ -s "${p%.portable}.pout" ] && cmp -s "${p%.portable}.pout" "${p%.portable}.out"
	check $? "$(head -1 "$p" | cut -c4-50): clickhouse.md's text gives sql.md's $(wc -l < "${p%.portable}.pout") rows"
	diff "${p%.portable}.pout" "${p%.portable}.out" | head -5 | sed 's/^/# /'
done

# -- --clock-offset's bad uses
DAT=tests/data/trace-dat/sched-marker-v6.dat
"$TB" convert $DAT --format clickhouse-rowbinary --clock-offset -1000000000000 -o "$W/neg" 2> "$W/err"; rc=$?
[ $rc != 0 ] && grep -q 'plus --clock-offset -1000000000000 is below 0' "$W/err"
check $? "an offset that takes a time stamp below 0 is refused, said ($(head -c 150 "$W/err"))"
"$TB" convert $DAT --clock-offset 5 -o "$W/x.dat" 2> "$W/err"; rc=$?
[ $rc = 2 ] && grep -q -- '--clock-offset is for ClickHouse' "$W/err"; check $? "--clock-offset without ClickHouse: a usage error"

echo "1..$n"
exit $fail
