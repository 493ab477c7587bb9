#!/bin/sh
# A fleet of hosts' traces in a ClickHouse cluster (issue 25 item 5,
# docs/fleet.md): real recordings replayed as many hosts, each under its
# own host id and clock offset, loaded shard by shard, checked against each
# host's own `tracebuf hist` and `report`, and the worked queries timed.
#
#   scripts/fleet.sh plan HOSTS SHARDS FILE...   the manifest on stdout
#   scripts/fleet.sh load [--all] MANIFEST DB HTTP_PORT...
#   scripts/fleet.sh check MANIFEST DB TCP_PORT
#   scripts/fleet.sh queries MANIFEST DB TCP_PORT OUT_DIR
#
# The manifest has a line per host: HOST \t FILE \t CLOCK_OFFSET_NS \t SHARD.
# plan gives host K (1..HOSTS) the file K/SHARDS of the list (in turn) and
# the shard K%SHARDS+1, so that every file goes to every shard (a
# Distributed table needs its table on each) and the shards get as many
# hosts; host K's clock runs K-1 hours and K-1 ms (plus K-1 ns) ahead.
#
# load runs one loader a shard, side by side (as the machines of a fleet
# would); each loads its hosts one after the other with `tracebuf convert
# --clickhouse 127.0.0.1:PORT --database DB --cluster C --host H
# --clock-offset O`, into the shard's own server (HTTP_PORT K is shard K's).
# A host whose trace is complete on its shard (its row in DB.trace, which
# the loader swaps in last, and no staging database of it left) is skipped:
# a loader killed mid-way is simply run again.  --all loads every host again
# (each load replaces its trace's partitions: nothing doubles).
#
# check compares, through the Distributed tables DB_all.* of the server of
# TCP_PORT, each host's totals with what tracebuf says of its file alone:
# events (report --count), lost events (its LOST lines), sched_switch's
# (prev_pid, hitcount, sum prev_prio) (`hist -e sched_switch`, for files
# that have it), and its first and last time stamps moved by its offset
# (report -t).  A file's own figures are computed once, whichever hosts
# replay it.  Exit 0 when all agree, 1 (the differences said) when not.
#
# queries runs each ```sql block of docs/sql.md on DB_all, or docs/clickhouse.md's
# text for it where that has one, and clickhouse.md's off-CPU query (sql.md's single-trace
# host and comm literals replaced by the fleet's first host and its busiest
# comm), one clickhouse-client each, and prints "ms cpu_ms rows title" per
# query: its time, the CPU time the servers spent on it (scripts/clickhouse.sh's
# pids file; "-" without it), its rows; the rows go to OUT_DIR/qNN.out, and
# sql.md's text of a query run as clickhouse.md's to OUT_DIR/qNN.portable.  Each shard joins its own rows, which is
# right because a trace is on one shard and utid/upid are unique to a trace:
# a JOIN's table name reaches the shards as written, so the cluster's
# connections must use database DB (scripts/clickhouse.sh with
# TB_CLICKHOUSE_CLUSTER_DB=DB), and a joined subquery over a Distributed table
# runs on its local one (distributed_product_mode = local).
#
# Environment: TB (the tracebuf binary, default build/tracebuf), FLEET_CLUSTER
# (default tracebuf, scripts/clickhouse.sh's), FLEET_QUERY_LIMIT_S (default
# 60: a query that runs longer is stopped and said), FLEET_CH_DOC (default
# docs/clickhouse.md: where queries finds ClickHouse's own texts; bench_fleet.sh
# gives bench/fleet_full_tables.md, the texts before the loader's summaries).
set -u
TB=${TB:-build/tracebuf}
CLUSTER=${FLEET_CLUSTER:-tracebuf}
TAB=$(printf '\t')

usage() {
	echo "usage: $0 plan HOSTS SHARDS FILE... | load [--all] MANIFEST DB HTTP_PORT... | check MANIFEST DB TCP_PORT | queries MANIFEST DB TCP_PORT OUT_DIR" >&2
	exit 2
}

plan() {
	hosts=$1 shards=$2
	shift 2
	[ $# -ge 1 ] || usage
	k=1
	while [ "$k" -le "$hosts" ]; do
		i=$(((k - 1) / shards % $# + 1))
		eval "file=\${$i}"
		printf 'host%03d\t%s\t%d\t%d\n' "$k" "$file" \
			$(((k - 1) * 3600000000000 + (k - 1) * 1000001)) $(((k - 1) % shards + 1))
		k=$((k + 1))
	done
}

# A query over HTTP (the loader's port): its answer on stdout, "" when DB is not there yet.
http_query() { curl -sf --http1.0 --data-binary "$2" "http://127.0.0.1:$1/" 2> /dev/null; }

# "HOST \t PATH" of every trace complete on the shard of port $1: in DB.trace, no staging left.
complete() {
	http_query "$1" "SELECT host, path FROM \`$2\`.trace
		WHERE concat('$2__load_', toString(trace_id)) NOT IN (SELECT name FROM system.databases)
		FORMAT TSV"
}

# Shard $1's hosts, one after the other, into the server of HTTP port $2.
load_shard() {
	shard=$1 port=$2
	if [ "$ALL" = 1 ]; then : > "$SCRATCH/done.$shard"; else complete "$port" "$DB" > "$SCRATCH/done.$shard"; fi
	awk -F '\t' -v k="$shard" '$4 == k' "$MANIFEST" | while IFS="$TAB" read -r host file offset sh; do
		if grep -qxF "$host$TAB$file" "$SCRATCH/done.$shard"; then
			echo "fleet: $host: complete on shard $shard, skipped" >&2
			continue
		fi
		"$TB" convert "$file" --clickhouse "127.0.0.1:$port" --database "$DB" --cluster "$CLUSTER" \
			--host "$host" --clock-offset "$offset" || {
			echo "fleet: $host ($file) did not load into shard $shard" >&2
			exit 1
		}
	done
}

load() {
	ALL=0
	[ "${1:-}" = --all ] && ALL=1 && shift
	[ $# -ge 3 ] || usage
	MANIFEST=$1 DB=$2
	shift 2
	command -v curl > /dev/null || { echo "fleet: curl is needed (the resume's query)" >&2; exit 1; }
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/tb-fleet.XXXXXX") || exit 1
	trap 'rm -rf "$SCRATCH"' EXIT
	shard=0 pids=""
	for port in "$@"; do
		shard=$((shard + 1))
		load_shard "$shard" "$port" &
		pids="$pids $!"
	done
	rc=0
	for p in $pids; do wait "$p" || rc=1; done
	return $rc
}

# A file's own figures, once per file: "events N", "lost N", "first NS", "last NS", "scale S"
# (the time stamps' unit as report prints them) and the hist's "pid,count,sum" lines.
file_facts() { # file out_prefix
	"$TB" report --count "$1" 2> /dev/null | awk '/^events / { print "events", $2 }
		/LOST lines/ { n = $0; sub(/.*LOST lines [0-9]+ \(/, "", n); sub(/ .*/, "", n); print "lost", n }' > "$2.facts"
	"$TB" report -t "$1" 2> /dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
			t = substr($i, 1, length($i) - 1); d = length(t) - index(t, "."); sub(/\./, "", t)
			if (first == "") first = t; last = t; break } }
		END { s = 1; for (i = d; i < 9; i++) s = s "0"; print "first", first; print "last", last; print "scale", s }' >> "$2.facts"
	"$TB" hist -e sched_switch 'keys=prev_pid:vals=prev_prio' "$1" 2> /dev/null | awk '/^\{/ {
		line = $0; sub(/^\{ [a-z_]+: */, "", line); key = line; sub(/ *\}.*/, "", key)
		rest = line; sub(/^[^}]*\}/, "", rest); n = split(rest, v, " "); s = key
		for (i = 2; i <= n; i += 2) s = s "," v[i]; print s }' > "$2.hist"
}

ch() { clickhouse-client --port "$PORT" --database "${DB}_all" --query "$1"; }

check() {
	[ $# = 3 ] || usage
	MANIFEST=$1 DB=$2 PORT=$3
	S=$(mktemp -d "${TMPDIR:-/tmp}/tb-fleet-check.XXXXXX") || exit 1
	trap 'rm -rf "$S"' EXIT
	cut -f2 "$MANIFEST" | sort -u > "$S/files"
	n=0
	while read -r f; do
		n=$((n + 1))
		file_facts "$f" "$S/f$n"
		printf '%s\t%s\n' "$f" "$S/f$n" >> "$S/index"
	done < "$S/files"
	# what each host should have: its file's figures, its time stamps moved by its offset
	: > "$S/want.totals"
	: > "$S/want.hist"
	while IFS="$TAB" read -r host file offset shard; do
		p=$(awk -F '\t' -v f="$file" '$1 == f { print $2 }' "$S/index")
		awk -v h="$host" '$1 == "events" { e = $2 } $1 == "lost" { l = $2 } END { print h "," e "," (l == "" ? 0 : l) }' \
			"$p.facts" >> "$S/want.totals"
		sed "s/^/$host,/" "$p.hist" >> "$S/want.hist"
		awk -v h="$host" -v o="$offset" '{ v[$1] = $2 } END { print h, v["first"], v["last"], v["scale"], o }' \
			"$p.facts" >> "$S/want.time"
	done < "$MANIFEST"
	ch "SELECT host, count() FROM events GROUP BY host FORMAT CSV" | tr -d '"' | sort > "$S/ev"
	ch "SELECT host, sum(count) FROM lost WHERE reason = 'lost events' GROUP BY host FORMAT CSV" | tr -d '"' | sort > "$S/lo"
	awk -F, 'NR == FNR { l[$1] = $2; next } { print $1 "," $2 "," ($1 in l ? l[$1] : 0) }' "$S/lo" "$S/ev" > "$S/got.totals"
	ch "SELECT host, prev_pid, count(), sum(prev_prio) FROM sched_switch GROUP BY host, prev_pid FORMAT CSV" |
		tr -d '"' > "$S/got.hist"
	ch "SELECT host, min(ts), max(ts) FROM events GROUP BY host FORMAT TSV" > "$S/got.time"
	rc=0
	same "$S/want.totals" "$S/got.totals" "each host's events and lost events = tracebuf report --count of its file" || rc=1
	same "$S/want.hist" "$S/got.hist" "each host's sched_switch (prev_pid, hitcount, sum prev_prio) = tracebuf hist of its file" || rc=1
	# min(ts) - offset is the file's first time stamp (report -t's: exact in ns; where it prints
	# microseconds, within one of them), max(ts) - offset its last.  awk's numbers are doubles:
	# exact up to 2^53 ns (104 days of a clock plus its offset), which plan's offsets keep to.
	awk 'function near(x, p, s) { d = x - p * s; return s == 1 ? d == 0 : d > -s && d < s }
		NR == FNR { min[$1] = $2; max[$1] = $3; next }
		{ n++
		  if ($1 in min && near(min[$1] - $5, $2, $4) && near(max[$1] - $5, $3, $4)) ok++
		  else printf "fleet: %s: first/last ts %s %s, offset %s; its file says %s %s (x %s ns)\n", $1, min[$1], max[$1], $5, $2, $3, $4 }
		END { printf "fleet: %d of %d hosts: first and last ts = the file'"'"'s moved by the host'"'"'s clock offset\n", ok, n; exit ok != n }' \
		"$S/got.time" "$S/want.time" >&2 || rc=1
	return $rc
}

same() { # want got what
	LC_ALL=C sort "$1" > "$1.s"
	LC_ALL=C sort "$2" > "$2.s"
	if [ -s "$1.s" ] && cmp -s "$1.s" "$2.s"; then
		echo "fleet: $3 ($(wc -l < "$1.s") rows)" >&2
		return 0
	fi
	echo "fleet: DIFFERENT: $3 (< file, > cluster):" >&2
	diff "$1.s" "$2.s" | head -10 >&2
	return 1
}

queries() {
	[ $# = 4 ] || usage
	MANIFEST=$1 DB=$2 PORT=$3 OUT=$4
	mkdir -p "$OUT" || exit 1
	host=$(awk -F '\t' 'NR == 1 { print $1 }' "$MANIFEST")
	comm=$(ch "SELECT name FROM thread WHERE trace_id = (SELECT trace_id FROM trace WHERE host = '$host')
		AND tid != 0 GROUP BY name ORDER BY count() DESC, name LIMIT 1")
	# sql.md's portable blocks; where clickhouse.md has a text of its own for one (a ```sql
	# clickhouse-NAME block with the same first line), that one; then its others (off-CPU)
	awk -v dir="$OUT" 'FNR == 1 { doc++ }
		doc == 1 && /^```sql clickhouse-/ { on = 1; n = 0; next }
		doc == 1 && on && /^```/ { on = 0; own[title] = text; order[++nown] = title; next }
		doc == 1 && on { if (!n++) { title = $0; text = "" } text = text $0 "\n"; next }
		doc == 2 && /^```sql$/ { on = 1; n = 0; skip = 0; k++; f = sprintf("%s/q%02d.sql", dir, k)
			g = sprintf("%s/q%02d.portable", dir, k); next }
		doc == 2 && on && /^```/ { on = 0; close(f); if (skip) close(g); next }
		doc == 2 && on && !n++ && ($0 in own) { printf "%s", own[$0] > f; used[$0] = 1; skip = 1 }
		doc == 2 && on { print > (skip ? g : f) }
		END { for (i = 1; i <= nown; i++) if (!used[order[i]]) {
			f = sprintf("%s/q%02d.sql", dir, ++k); printf "%s", own[order[i]] > f; close(f) } }' \
		"${FLEET_CH_DOC:-docs/clickhouse.md}" docs/sql.md
	for f in "$OUT"/q*.sql "$OUT"/q*.portable; do
		[ -e "$f" ] && sed -i "s/'sched-marker-v6.dat'/'$host'/g; s/'work.sh'/'$comm'/g" "$f"
	done
	for f in "$OUT"/q*.sql; do
		title=$(head -1 "$f" | cut -c4-80)
		c0=$(server_cpu_ms)
		run_query "$f" > "${f%.sql}.out" 2> "${f%.sql}.err"
		rc=$?
		c1=$(server_cpu_ms)
		cpu=$([ -n "$c0" ] && echo $((c1 - c0)) || echo -)
		if [ $rc = 0 ]; then
			ms=$(awk '/^[0-9.]+$/ { printf "%d", $1 * 1000 }' "${f%.sql}.err")
			echo "$ms $cpu $(wc -l < "${f%.sql}.out") $title"
		else
			echo "failed $cpu 0 $title: $(grep -m1 -o 'Code: [0-9]*, e.displayText() = [^,]*' "${f%.sql}.err" | cut -c1-150)"
		fi
	done
}

run_query() {
	clickhouse-client --port "$PORT" --database "${DB}_all" --time --format TSV \
		--distributed_product_mode=local --max_execution_time="${FLEET_QUERY_LIMIT_S:-60}" \
		--multiquery < "$1"
}

# CPU time (ms) the servers of scripts/clickhouse.sh have used so far: what a query cost them,
# whatever else runs on the machine; "" when their pids are not known.
server_cpu_ms() {
	pids=${TB_CLICKHOUSE_DIR:-build/clickhouse}/pids
	[ -r "$pids" ] || return 0
	tick=$(getconf CLK_TCK)
	while read -r pid p h; do cat "/proc/$pid/stat"; done < "$pids" 2> /dev/null |
		awk -v t="$tick" '{ s += $14 + $15 } END { printf "%d\n", s * 1000 / t }'
}

case "${1:-}" in
plan) shift; [ $# -ge 3 ] || usage; plan "$@" ;;
load) shift; load "$@" ;;
check) shift; check "$@" ;;
queries) shift; queries "$@" ;;
*) usage ;;
esac
