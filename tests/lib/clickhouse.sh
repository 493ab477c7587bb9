# clickhouse.sh - the ClickHouse tests' servers (sourced): scripts/clickhouse.sh's
# servers in $TB_CLICKHOUSE_DIR, or the test skipped (TAP "1..0 # SKIP", exit 0)
# with why when the package or a command it needs is missing or the servers do
# not start.  The caller's EXIT trap stops them (scripts/clickhouse.sh stop).
#
#   W=scratch; . tests/lib/clickhouse.sh; ch_start SHARDS [COMMAND...]
#
# sets HTTP1, TCP1 (shard 1's HTTP and native ports), HTTP2, TCP2 (shard 2's, if any).
ch_start() {
	shards=$1
	shift
	for c in clickhouse-server clickhouse-client "$@"; do
		command -v "$c" > /dev/null || { echo "1..0 # SKIP $c not installed (scripts/deps.sh)"; exit 0; }
	done
	if ! scripts/clickhouse.sh start "$shards" > "$W/ports" 2> "$W/start.err"; then
		echo "1..0 # SKIP clickhouse-server does not start here: $(head -c 200 "$W/start.err" | tr '\n' ' ')"
		exit 0
	fi
	HTTP1=$(awk '$1 == "shard" && $2 == 1 { print $4 }' "$W/ports")
	TCP1=$(awk '$1 == "shard" && $2 == 1 { print $6 }' "$W/ports")
	HTTP2=$(awk '$1 == "shard" && $2 == 2 { print $4 }' "$W/ports")
	TCP2=$(awk '$1 == "shard" && $2 == 2 { print $6 }' "$W/ports")
}
