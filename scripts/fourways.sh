#!/bin/sh
# One event, app:request, consumed four ways in one run (examples/fourways.c):
# tracebuf's ring, a hist attached at the source (also read from outside with
# `tracebuf hist --attach`), bpftrace on its USDT probe (skipped, said, without
# bpftrace, root or uprobes), and `tracebuf record`'s trace.dat read by trace-cmd
# (skipped without trace-cmd).  Every way counts the same 10000 requests.
B=${B:-build}
. "$(dirname "$0")/stop_bpftrace.sh"
TB=$B/tracebuf
W=$(mktemp -d /tmp/tracebuf-fourways-XXXXXX) || exit 1
S=/dev/shm/tracebuf-fourways-$$
bp=
trap 'rm -rf "$W" "$S" "$S.formats"; [ -n "$bp" ] && kill $bp 2>/dev/null' EXIT
# A uprobe belongs to the file (its inode), not to one process: two runs of
# this script at once, on one binary, would each count the other's requests,
# and one's bpftrace would open the other's gate.  Each run fires from a copy.
cp "$B/examples/fourways" "$W/fourways" || exit 1
P=$W/fourways
# Waits carry no clock of their own: each lasts as long as the process that
# will end it is alive (a clock would turn a slow machine into a wrong count).
wait_while() { # FILE PID: until FILE has something in it, or PID is gone
	while [ ! -s "$1" ]; do kill -0 "$2" 2> /dev/null || return 1; sleep 0.05; done
}
wait_attached() { # until bpftrace said it attaches (it does so at once after), or exited
	while ! grep -q '^Attaching' "$W/bpf"; do kill -0 "$bp" 2> /dev/null || return 1; sleep 0.05; done
}

usdt=
if ! command -v bpftrace > /dev/null; then
	echo "3. bpftrace: not installed: that way skipped"
elif [ "$(id -u)" != 0 ]; then
	echo "3. bpftrace: needs root: that way skipped"
else
	bpftrace -e "usdt:$P:app:request { @requests[arg0] = count(); @bytes = sum(arg1); }" > "$W/bpf" 2>&1 &
	bp=$!
	if wait_attached; then
		# the program fires once the kernel counts bpftrace in the probe's
		# semaphore, which follows the attach; the limit only bounds a failure
		usdt="--usdt-wait 120"
	else
		echo "3. bpftrace: could not attach: that way skipped; it said:"
		sed 's/^/   /' "$W/bpf"
		bp=
	fi
fi
# 1, 2 and 4: the program under record; it holds once its threads are done
"$TB" record --shm "$S" -e app:request -o "$W/four.dat" -- "$P" 4 2500 $usdt --hold "$W/held" > "$W/prog" 2> "$W/rec" &
rec=$!
if wait_while "$W/held" $rec; then
	"$TB" hist --attach "$S" > "$W/outside"
	cmp -s "$W/outside" "$W/held" && same="the same text" || same="a DIFFERENT text"
	kill $(ls "$S.formats" | grep -x '[0-9]*')
else
	same="not read: the program ended before it held; record said:"
fi
wait $rec
grep '^1\.' "$W/prog"
sed -n '/^2\./,$p' "$W/prog" | grep -v '^#\|^$'
echo "   read from outside while it ran (tracebuf hist --attach $S): $same"
[ -s "$W/held" ] || sed 's/^/   /' "$W/rec"
if [ -n "$bp" ]; then
	stop_bpftrace $bp; bp=
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
