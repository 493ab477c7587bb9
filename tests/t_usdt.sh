#!/bin/sh
# USDT probes (issue 26 item 1): every tracepoint, tb_printf() site and marker
# is a SystemTap SDT probe SYSTEM:NAME with a semaphore.  readelf sees the
# notes (and none with TB_NO_USDT); bpftrace attached to a running program
# counts exactly the hits tracebuf's ring recorded, also while tracebuf's own
# switch is off, gets the arguments with their values and signs, and reaches
# the probe of a dlopen'ed library.  The program fires only once the kernel
# counted bpftrace in each probe's semaphore (it reads them itself).
B=${TB_BUILD:-build}
D=$(cd "$B/tests/usdt" 2>/dev/null && pwd) || { echo "1..0 # SKIP $B/tests/usdt not built"; exit 0; }
. "$(dirname "$0")/../scripts/stop_bpftrace.sh"
APP=$D/usdt_app LIB=$D/usdt_lib.so NOSDT=$D/usdt_app_nosdt
W=$(mktemp -d /tmp/tb-t-usdt-XXXXXX) || exit 1
bp=
trap '[ -n "$KEEP" ] || rm -rf "$W"' EXIT
trap '[ -n "$bp" ] && kill "$bp" 2>/dev/null; exit 1' INT TERM HUP
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
skip() { n=$((n+1)); echo "ok $n # SKIP $1"; }

if ! command -v readelf >/dev/null; then
	echo "1..0 # SKIP readelf (binutils) not installed"; exit 0
fi

# ------------------------------------------------------------ the notes
# "PROVIDER:NAME SEMAPHORE ARGUMENTS" per note.
notes() {
	readelf -n "$1" | awk '/Provider:/ {p=$2} /Name:/ {nm=$2}
		/Semaphore:/ {s=$NF} /Arguments:/ {$1=""; print p ":" nm, s, $0}'
}
notes "$APP" > "$W/app"; notes "$LIB" > "$W/lib"; notes "$NOSDT" > "$W/nosdt"
for p in usdt_t:hit ftrace:bprint ftrace:print ftrace:raw_data; do
	grep -q "^$p 0x0*[1-9a-f]" "$W/app"; check $? "$APP has a note for $p with a semaphore"
done
# The semaphore is in .probes: where the kernel (ref_ctr_offset) and perf find it.
sema=$(awk '$1 == "usdt_t:hit" {print $2; exit}' "$W/app")
set -- $(readelf -SW "$APP" | awk '{for (i = 1; i < NF; i++) if ($i == ".probes") print $(i+2), $(i+4)}')
[ $# = 2 ] && [ $((sema)) -ge $((0x$1)) ] && [ $((sema)) -lt $((0x$1 + 0x$2)) ]
check $? "usdt_t:hit's semaphore $sema lies in the .probes section"
# 7 fields: the SDT sizes say int (-4), int, int, string pointer (8), u64 (8), bool (1), char array pointer (8).
awk '$1 == "usdt_t:hit" {for (i = 3; i <= NF; i++) printf "%s ", substr($i, 1, index($i, "@") - 1); print ""}' "$W/app" |
	sort -u > "$W/sizes"
[ "$(cat "$W/sizes")" = "-4 -4 -4 8 8 1 8 " ]; check $? "usdt_t:hit's arguments have the fields' sizes and signs ($(cat "$W/sizes"))"
grep -q "^usdt_lib:fire 0x0*[1-9a-f].* -4@.* 8@" "$W/lib"; check $? "the library's probe usdt_lib:fire is in the library, with its semaphore"
! grep -q "^usdt_t:hit\|^ftrace:bprint" "$W/nosdt"; check $? "built with -DTB_NO_USDT: no note for the program's own events"

# tracebuf list -U: each event's probe as bpftrace names it, "-" without one.
TB=$B/tracebuf
"$TB" list -U "$APP" > "$W/list" 2> "$W/list.err"; check $? "tracebuf list -U runs on the program"
grep -qxF "usdt_t:hit	usdt:$APP:usdt_t:hit" "$W/list" && grep -qxF "ftrace:print	usdt:$APP:ftrace:print" "$W/list"
check $? "list -U names usdt_t:hit's and ftrace:print's probes ($(grep usdt_t "$W/list"))"
"$TB" list -U "$NOSDT" | grep -qxF "usdt_t:hit	-"; check $? "list -U: no probe for usdt_t:hit built with -DTB_NO_USDT"
# A note whose size runs past its section: said with the file and the byte, exit 1, the events still listed.
cp "$APP" "$W/damaged"
set -- $(readelf -SW "$W/damaged" | awk '{for (i = 1; i < NF; i++) if ($i == ".note.stapsdt") print $(i+3)}')
printf '\377\377' | dd of="$W/damaged" bs=1 seek=$((0x$1 + 4)) conv=notrunc 2> /dev/null
"$TB" list -U "$W/damaged" > "$W/dlist" 2> "$W/dlist.err"; rc=$?
[ $rc = 1 ] && grep -q "damaged: byte $((0x$1)): a note .*runs past its section's end" "$W/dlist.err" &&
	grep -qxF "usdt_t:hit	-" "$W/dlist"
check $? "a damaged note: exit 1 ($rc), the file and byte named ($(head -1 "$W/dlist.err"))"

# <sys/sdt.h>'s notes for the same values, as the oracle of the format: the same argument text.
if echo '#include <sys/sdt.h>' | ${CC:-cc} -E -x c - > /dev/null 2>&1; then
	src=$(dirname "$0")
	${CC:-cc} -O2 -I"$src/../include" -c -o "$W/oracle.o" "$src/usdt/sdt_oracle.c" 2> "$W/cc.err"
	check $? "sdt_oracle.c compiles with <sys/sdt.h> and tracepoint.h ($(head -1 "$W/cc.err"))"
	notes "$W/oracle.o" > "$W/oracle"
	args_of() { awk -v k="oracle:$1" '$1 == k {$1 = $2 = ""; sub(/^ +/, ""); print}' "$W/oracle"; }
	for pair in "sdt tb" "sdtc tbc"; do
		set -- $pair
		a=$(args_of "$1"); b=$(args_of "$2")
		[ -n "$a" ] && [ "$a" = "$b" ]; check $? "the arguments' text is <sys/sdt.h>'s ($a | $b)"
	done
else
	skip "no <sys/sdt.h> to compare the notes with (systemtap-sdt-dev; scripts/deps.sh installs it)"
fi

# ------------------------------------------------------------- bpftrace
N=1000
if ! command -v bpftrace >/dev/null; then
	skip "bpftrace not installed (scripts/deps.sh installs it)"
elif ! timeout 30 bpftrace -e 'BEGIN { exit(); }' > "$W/probe.out" 2>&1; then
	skip "bpftrace cannot load a BPF program here: $(grep -m1 ERROR "$W/probe.out" | grep -v RLIMIT)"
else
	cat > "$W/s.bt" <<BT
usdt:$APP:usdt_t:hit { @hits[arg0] = count();
	if (arg1 < 3) { printf("got hit phase=%d i=%d neg=%d s=%s big=%lu b=%d\n", arg0, arg1, arg2, str(arg3), arg4, arg5); } }
usdt:$APP:ftrace:bprint { printf("got bprint %s %d %s\n", str(arg0), arg1, str(arg2)); }
usdt:$APP:ftrace:print { printf("got print %s %d\n", str(arg0), arg1); }
usdt:$LIB:usdt_lib:fire { @lib = count(); printf("got lib n=%d who=%s\n", arg0, str(arg1)); }
BT
	bpftrace "$W/s.bt" > "$W/bt.out" 2> "$W/bt.err" &
	bp=$!
	# The program waits (60 s at most) for the kernel's count of bpftrace in its semaphores;
	# should bpftrace end first, that cannot come: stop waiting then.
	"$APP" run "$LIB" "$N" > "$W/app.out" 2> "$W/app.err" &
	app=$!
	while kill -0 "$app" 2> /dev/null && kill -0 "$bp" 2> /dev/null; do sleep 0.05; done
	kill -0 "$bp" 2> /dev/null || kill "$app" 2> /dev/null
	wait "$app"
	check $? "the program ran once bpftrace was attached to its probes (exit 0; $(head -1 "$W/app.err"))"
	stop_bpftrace "$bp"; bp=
	grep '^Attaching' "$W/bt.out" > /dev/null; check $? "bpftrace attached ($(grep -v RLIMIT "$W/bt.err" | head -2))"
	ring1=$(sed -n 's/^ring phase=1 records=//p' "$W/app.out")
	ring2=$(sed -n 's/^ring phase=2 records=//p' "$W/app.out")
	hits1=$(sed -n 's/^@hits\[1\]: //p' "$W/bt.out")
	hits2=$(sed -n 's/^@hits\[2\]: //p' "$W/bt.out")
	[ "$ring1" = "$N" ] && [ "$hits1" = "$ring1" ]
	check $? "tracebuf on: bpftrace counted the hits tracebuf's ring recorded ($hits1 and $ring1 of $N)"
	[ "$ring2" = 0 ] && [ "$hits2" = "$N" ]
	check $? "tracebuf off: bpftrace still counted every hit ($hits2 of $N), the ring none ($ring2)"
	sed -n 's/^want //p' "$W/app.out" | sort > "$W/want"
	sed -n 's/^got //p' "$W/bt.out" | sort > "$W/got"
	grep '^hit' "$W/want" > "$W/want.hit"; grep '^hit' "$W/got" > "$W/got.hit"
	[ -s "$W/want.hit" ] && cmp -s "$W/want.hit" "$W/got.hit"
	check $? "arguments: ints, negative ints, strings, a u64, a bool arrive as fired ($(diff "$W/want.hit" "$W/got.hit" | head -3 | tr '\n' ' '))"
	grep -v '^hit' "$W/want" > "$W/want.other"; grep -v '^hit' "$W/got" > "$W/got.other"
	for k in bprint print lib; do
		grep "^$k " "$W/want.other" > "$W/w"; grep "^$k " "$W/got.other" > "$W/g"
		[ -s "$W/w" ] && cmp -s "$W/w" "$W/g"; check $? "the $k probe's arguments ($(head -1 "$W/g"))"
	done
	[ "$(sed -n 's/^@lib: //p' "$W/bt.out")" = 5 ]; check $? "the dlopen'ed library's probe counted its 5 hits"
fi
echo "1..$n"
exit $fail
