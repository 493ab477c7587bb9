#!/bin/sh
# Peers for the benchmarks: LTTng-UST (library + session daemon), trace-cmd;
# GNU time (CPU time of a pipeline, bench_hist.sh).
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need=""
for p in liblttng-ust-dev lttng-tools trace-cmd time; do have_pkg "$p" || need="$need $p"; done
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null ||
		echo "bench-deps: could not install$need; peers will be skipped" >&2
else
	echo "bench-deps: for the peers run: sudo apt-get install -y$need" >&2
fi
exit 0
