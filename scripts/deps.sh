#!/bin/sh
# Install what building and testing tracebuf needs (Debian 12 package names).
# As root it runs apt-get itself; otherwise it prints the exact command.
# libtraceevent1-plugin: trace-cmd's text (sched_switch, hrtimer, ... as its
# plugins print them) is what `report --like-trace-cmd` and the trace.dat tests
# compare against; without the plugins libtraceevent prints print fmts alone.
# trace-cmd: the peer the tests read our trace.dat files with (they skip the
# comparison without it, so a fresh machine would test less).
# libsqlite3-dev: `tracebuf sql` loads traces into SQLite; sqlite3: the peer its
# bench and tests compare with (.import, and opening the database).
# clickhouse-server, clickhouse-client (18.16): `convert --clickhouse` is tested
# against servers scripts/clickhouse.sh starts itself (the package's system
# service is not started or used); curl: the fleet's loader (scripts/fleet.sh)
# asks a shard which hosts are complete, and bench_clickhouse's peer inserts, over HTTP.
# chromium: t_svg_render.sh draws our SVGs headless and checks the picture.
# bpftrace: t_usdt.sh attaches it to our USDT probes and counts the hits;
# systemtap-sdt-dev: its <sys/sdt.h> is the oracle t_usdt.sh compares our
# notes with (tracebuf writes its notes itself: applications never need it).
set -e
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in gcc make pkg-config libtraceevent-dev libtraceevent1-plugin trace-cmd libzstd-dev zlib1g-dev clang libclang-rt-14-dev spin perl python3 chromium bpftrace systemtap-sdt-dev libsqlite3-dev sqlite3 clickhouse-server clickhouse-client curl; do
	have_pkg "$p" || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing$need"
	export DEBIAN_FRONTEND=noninteractive
	# No service starts at install (clickhouse-server's would take ports 8123/9000):
	# invoke-rc.d asks policy-rc.d, whose 101 says "not now"; ours only if none exists.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && policy=1
	fi
	apt-get update -qq >/dev/null 2>&1 || apt-get update
	apt-get install -y -qq --no-install-recommends $need >/dev/null || apt-get install -y $need
	rc=$?
	[ -n "$policy" ] && rm -f /usr/sbin/policy-rc.d
	exit $rc
else
	echo "deps: missing packages:$need" >&2
	echo "deps: run:  sudo apt-get install -y$need" >&2
	exit 1
fi
