#!/bin/sh
# One event, app:request, consumed four ways in one run (examples/fourways.c):
# tracebuf's ring, a hist attached at the source (also read from outside with
# `tracebuf hist --attach`), bpftrace on its USDT probe (skipped, said, without
# bpftrace, root or uprobes), and `tracebuf record`'s trace.dat read by trace-cmd
# (skipped without trace-cmd).  Every way counts the same 10000 requests.
B=${B:-build}
TB=$B/tracebuf
P=$(cd "$B/examples" && pwd)/fourways
W=$(mktemp -d /tmp/tracebuf-fourways-XXXXXX) || exit 1
S=/dev/shm/tracebuf-fourways-$$
bp=
trap 'rm -rf "$W" "$S" "$S.formats"; [ -n "$bp" ] && kill $bp 2>/dev/null' EXIT
wait_for() { for i in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }

usdt=
if ! command -v bpftrace > /dev/null; then
	echo "3. bpftrace: not installed: that way skipped"
elif [ "$(id -u)" != 0 ]; then
	echo "3. bpftrace: needs root: that way skipped"
else
	bpftrace -e "usdt:$P:app:request { @requests[arg0] = count(); @bytes = sum(arg1); }" > "$W/bpf" 2>&1 &
	bp=$!
	usdt="--usdt-wait 10" # the program fires once bpftrace is counted in the probe's semaphore
fi
# 1, 2 and 4: the program under record; it holds once its threads are done
"$TB" record --shm "$S" -e app:request -o "$W/four.dat" -- "$P" 4 2500 $usdt --hold "$W/held" > "$W/prog" 2> "$W/rec" &
rec=$!
if wait_for "$W/held"; then
	"$TB" hist --attach "$S" > "$W/outside"
	cmp -s "$W/outside" "$W/held" && same="the same text" || same="a DIFFERENT text"
	kill $(ls "$S.formats" | grep -x '[0-9]*')
fi
wait $rec
grep '^1\.' "$W/prog"
sed -n '/^2\./,$p' "$W/prog" | grep -v '^#\|^$'
echo "   read from outside while it ran (tracebuf hist --attach $S): $same"
if [ -n "$bp" ]; then
	kill -INT $bp; wait $bp; bp=
	printf '3. bpftrace on usdt:%s:app:request: route 0..4:' "$P"
	for r in 0 1 2 3 4; do printf ' %s' "$(sed -n "s/^@requests\[$r\]: //p" "$W/bpf")"; done
	echo "; bytes $(sed -n 's/^@bytes: //p' "$W/bpf")"
	grep -q '^@requests\[0\]' "$W/bpf" || sed 's/^/   /' "$W/bpf"
fi
if command -v trace-cmd > /dev/null; then
	trace-cmd report "$W/four.dat" 2> /dev/null | grep -o 'request: *route=[0-9]*' | sed 's/.*=//' | sort | uniq -c |
		awk '{ n += $1; c = c " " $1 } END { printf "4. trace-cmd report of record'"'"'s trace.dat: %d records; route 0..4:%s\n", n, c }'
else
	echo "4. trace-cmd: not installed: that way skipped (tracebuf report $W/four.dat reads it)"
fi
