#!/bin/sh
# Two tests starting ClickHouse servers at the same moment (make test runs
# t_clickhouse and t_fleet side by side) may both find the same ports free.
# The one that loses the race must not take the other's server for its own
# (the first symptom: every query of a test answered from the other test's
# tables) nor fail: scripts/clickhouse.sh counts a server started only once
# the port's listening socket is that server's, and tries other ports after
# a lost race.  Here two starts are given the same first ports on purpose
# (TB_CLICKHOUSE_PORT_BASE): both come up, on ports of their own, and a
# table made through one is not seen through the other.  Skips when
# clickhouse-server cannot run.
W=$(mktemp -d /tmp/tb-ch-ports.XXXXXX)
cleanup() {
	TB_CLICKHOUSE_DIR="$W/a" scripts/clickhouse.sh stop
	TB_CLICKHOUSE_DIR="$W/b" scripts/clickhouse.sh stop
	rm -rf "$W"
}
trap cleanup EXIT
for c in clickhouse-server clickhouse-client; do
	command -v "$c" > /dev/null || { echo "1..0 # SKIP $c not installed (scripts/deps.sh)"; exit 0; }
done
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
base=$((40000 + $$ % 1000 * 20))
TB_CLICKHOUSE_PORT_BASE=$base TB_CLICKHOUSE_DIR="$W/a" scripts/clickhouse.sh start 2 > "$W/a.out" 2> "$W/a.err" &
a=$!
TB_CLICKHOUSE_PORT_BASE=$base TB_CLICKHOUSE_DIR="$W/b" scripts/clickhouse.sh start 2 > "$W/b.out" 2> "$W/b.err" &
b=$!
wait $a; ra=$?
wait $b; rb=$?
if [ $ra != 0 ] && [ $rb != 0 ] && ! grep -q "another process took a port" "$W/a.err" "$W/b.err"; then
	echo "1..0 # SKIP clickhouse-server does not start here: $(head -c 200 "$W/a.err" | tr '\n' ' ')"
	exit 0
fi
[ $ra = 0 ] && [ $rb = 0 ]
check $? "two starts racing for the same ports both start (exit $ra and $rb)"
tcp() { awk -v k="$2" '$1 == "shard" && $2 == k { print $6 }' "$W/$1.out"; }
ports=$(for s in a b; do for k in 1 2; do tcp $s $k; done; done | sort -u | wc -l)
[ "$ports" = 4 ]
check $? "four servers on four ports ($(cat "$W/a.out" "$W/b.out" | grep '^shard' | tr '\n' ' '))"
# whether a race was lost at all is the scheduler's: one start may bind before the other scans
grep -q "another process took a port first" "$W/a.err" "$W/b.err" && echo "# the race was lost, and tried again"
ok=0
for k in 1 2; do
	clickhouse-client --port "$(tcp a $k)" --query "CREATE TABLE mine_a$k (x UInt8) ENGINE = Memory" || ok=1
	[ "$(clickhouse-client --port "$(tcp b $k)" --query "EXISTS TABLE mine_a$k")" = 0 ] || ok=1
	[ "$(clickhouse-client --port "$(tcp a $k)" --query "EXISTS TABLE mine_a$k")" = 1 ] || ok=1
done
check $ok "a table made through each of one start's servers is seen there and not through the other's"
[ $fail = 0 ] || sed 's/^/# /' "$W/a.err" "$W/b.err" >&2
echo "1..$n"
exit $fail
