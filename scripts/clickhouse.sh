#!/bin/sh
# Local ClickHouse servers for tests and a first try, from Debian's package
# (clickhouse-server 18.16): no system service, nothing in /etc or /var.
#
#   scripts/clickhouse.sh start [SHARDS]   # SHARDS servers (default 1) on free loopback ports
#   scripts/clickhouse.sh stop             # stops exactly those and removes their folder
#
# Each server's config, data and log live under $TB_CLICKHOUSE_DIR (default
# build/clickhouse), one folder per shard; the pids are kept there so that
# stop ends only the processes start made.  start waits (bounded) until each
# server answers a query and prints `port N`: the HTTP port of the first one
# (the server where a Distributed table goes; `tracebuf convert --clickhouse
# 127.0.0.1:N` loads through it); then `shard K port HTTP tcp TCP` for each
# (TCP: clickhouse-client --port).  With two
# or more shards every server knows the cluster `tracebuf` of all of them
# (remote_servers), so `ENGINE = Distributed(tracebuf, db, table)` spreads
# rows over them (TB_CLICKHOUSE_CLUSTER_DB=D: the cluster's connections use
# database D, where a shard finds the tables a query JOINs).  Exit 0 when every server answers; 1 (with the server's
# log tail) when one does not; 2 for a usage error.
set -u
DIR=${TB_CLICKHOUSE_DIR:-build/clickhouse}
START_WAIT_S=${TB_CLICKHOUSE_WAIT:-60} # a first start on a busy 2-core VM takes a few seconds

usage() { echo "usage: $0 start [SHARDS] | stop" >&2; exit 2; }

# A TCP port nothing listens on (loopback), from a range of its own; the
# server's bind is the final check: start fails clearly if it lost a race.
free_port() {
	p=$1
	while [ "$p" -lt 65000 ]; do
		hex=$(printf ':%04X ' "$p")
		if ! grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null; then echo "$p"; return; fi
		p=$((p + 1))
	done
	return 1
}

# config.xml of one server: loopback only, its folder for everything.
write_config() { # dir tcp_port http_port cluster_xml
	cat > "$1/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$1/server.log</log>
        <errorlog>$1/server.err.log</errorlog>
        <size>10M</size>
        <count>1</count>
    </logger>
    <tcp_port>$2</tcp_port>
    <http_port>$3</http_port>
    <listen_host>127.0.0.1</listen_host>
    <max_concurrent_queries>32</max_concurrent_queries>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>$1/data/</path>
    <tmp_path>$1/tmp/</tmp_path>
    <user_files_path>$1/user_files/</user_files_path>
    <format_schema_path>$1/format_schemas/</format_schema_path>
    <users_config>$1/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <remote_servers>$4</remote_servers>
</yandex>
EOF
	cat > "$1/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <profiles><default>
        <max_memory_usage>4000000000</max_memory_usage>
        <allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>
    </default></profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default></default></quotas>
</yandex>
EOF
}

answers() { clickhouse-client --host 127.0.0.1 --port "$1" --query 'SELECT 1' >/dev/null 2>&1; }

# Process $1 holds the listening socket of loopback TCP port $2.  Another
# start (a test beside this one) may have taken the port between our scan
# and our server's bind: then our server exits, and a server answers on
# that port all the same -- the other one, with the other test's tables.
# So a server counts as started only once the port's socket is its own.
listens() {
	hex=$(printf '%04X' "$2")
	inode=$(awk -v port=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == port { print $10; exit }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null)
	[ -n "$inode" ] && ls -l "/proc/$1/fd" 2>/dev/null | grep -q "socket:\[$inode\]"
}

start() {
	shards=$1
	command -v clickhouse-server >/dev/null && command -v clickhouse-client >/dev/null || {
		echo "clickhouse: clickhouse-server/clickhouse-client are not installed (scripts/deps.sh installs them)" >&2
		exit 1
	}
	[ -e "$DIR/pids" ] && { echo "clickhouse: $DIR has servers already: $0 stop first" >&2; exit 1; }
	mkdir -p "$DIR" || exit 1
	DIR=$(cd "$DIR" && pwd)
	# A lost race for a port (status 75) is tried again on other ports.
	for try in 1 2 3 4 5 6 7 8; do
		try_start "$shards" "$try"
		rc=$?
		[ $rc = 75 ] || exit $rc
		echo "clickhouse: another process took a port first; trying other ports" >&2
	done
	echo "clickhouse: lost the race for free ports 8 times" >&2
	exit 1
}

try_start() {
	shards=$1
	# each start scans from a place of its own (by pid and try), so that tests starting
	# servers side by side seldom pick the same free ports before either binds them
	mkdir -p "$DIR" || exit 1
	ports="" p=$((19100 + ($$ + $2 * 131) % 500 * 20))
	# TB_CLICKHOUSE_PORT_BASE: the first try's scan starts there (two starts given the same
	# base race for the same ports: how the lost race is tested)
	[ "$2" = 1 ] && [ -n "${TB_CLICKHOUSE_PORT_BASE:-}" ] && p=$TB_CLICKHOUSE_PORT_BASE
	for k in $(seq 1 "$shards"); do
		p=$(free_port "$p") && h=$(free_port $((p + 1))) || { echo "clickhouse: no free port" >&2; exit 1; }
		ports="$ports $p:$h"
		p=$((h + 1))
	done
	# A JOIN's table name reaches each shard as written: with TB_CLICKHOUSE_CLUSTER_DB=D the
	# cluster's connections use database D, so that it names the shard's own table there.
	default_db=${TB_CLICKHOUSE_CLUSTER_DB:+<default_database>$TB_CLICKHOUSE_CLUSTER_DB</default_database>}
	cluster="<tracebuf>"
	for ph in $ports; do
		cluster="$cluster<shard><replica><host>127.0.0.1</host><port>${ph%:*}</port>$default_db</replica></shard>"
	done
	cluster="$cluster</tracebuf>"
	: > "$DIR/pids"
	k=0
	for ph in $ports; do
		k=$((k + 1))
		d="$DIR/shard$k"
		mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
		write_config "$d" "${ph%:*}" "${ph#*:}" "$cluster"
		clickhouse-server --config-file="$d/config.xml" > "$d/stdout.log" 2>&1 &
		echo "$! ${ph%:*} ${ph#*:}" >> "$DIR/pids"
	done
	# Wait for each to answer; a server that exited is not waited for.
	while read -r pid p h; do
		waited=0
		until listens "$pid" "$p" && answers "$p"; do
			if ! kill -0 "$pid" 2>/dev/null && grep -qs "Address already in use" "$DIR"/shard*/*.log; then
				stop_servers
				return 75
			fi
			if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge $((START_WAIT_S * 5)) ]; then
				echo "clickhouse: the server on port $p did not answer (log: $DIR):" >&2
				tail -5 "$DIR"/shard*/server.err.log "$DIR"/shard*/stdout.log 2>/dev/null >&2
				stop
				exit 1
			fi
			sleep 0.2
			waited=$((waited + 1))
		done
	done < "$DIR/pids"
	first=1 k=0
	while read -r pid p h; do
		k=$((k + 1))
		[ "$first" = 1 ] && echo "port $h"
		first=0
		echo "shard $k port $h tcp $p"
	done < "$DIR/pids"
}

# TERM, wait (bounded) for each to exit, KILL what is left; then the folder.
stop() {
	[ -e "$DIR/pids" ] || { rm -rf "$DIR"; return 0; }
	stop_servers
}

stop_servers() {
	while read -r pid p h; do kill "$pid" 2>/dev/null; done < "$DIR/pids"
	while read -r pid p h; do
		waited=0
		while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 150 ]; do
			sleep 0.2
			waited=$((waited + 1))
		done
		kill -KILL "$pid" 2>/dev/null
	done < "$DIR/pids"
	rm -rf "$DIR"
}

case "${1:-}" in
start)
	shards=${2:-1}
	case "$shards" in '' | *[!0-9]* | 0) usage ;; esac
	start "$shards"
	;;
stop) stop ;;
*) usage ;;
esac
