#!/bin/sh
# tracebuf stats on the kernel's own stats files: the kernel's lines come back
# unchanged, and the derived lines follow from them.
B=${TB_BUILD:-build}
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
for cap in tests/data/kernel/cap-*; do
	[ -f "$cap/cpu0.stats" ] || continue
	out=$("$B/tracebuf" stats "$cap"); check $? "$cap: runs"
	for f in "$cap"/cpu*.stats; do
		cpu=$(basename "$f" .stats)
		block=$(echo "$out" | sed -n "/^== $cpu (/,/^window/p")
		echo "$block" | sed -n '2,9p' | diff -q - "$f" >/dev/null
		check $? "$cap $cpu: the kernel's 8 lines reproduced byte for byte"
		want=$(awk -F': ' '/^entries/{e=$2} /^overrun/{o=$2} /^read events/{r=$2} END{print e+o+r}' "$f")
		echo "$block" | grep -q "^written: $want (entries + overrun + read)"
		check $? "$cap $cpu: written = $want"
		lost=$(awk -F': ' '/^overrun/{o=$2} /^commit overrun/{c=$2} /^dropped/{d=$2} END{print o+c+d}' "$f")
		echo "$block" | grep -q "^lost: $lost ("
		check $? "$cap $cpu: lost = overrun + commit overrun + dropped = $lost"
	done
done
# producer/consumer: drops count as lost, and W = entries + overrun + read excludes them
out=$("$B/tracebuf" stats tests/data/kernel/cap-e-partial-and-padding 2>&1)
check $((! $?)) "a directory without cpuN.stats is an error, not silence"
echo garbage > /tmp/tb-stats-$$.stats; mkdir -p /tmp/tb-stats-$$; mv /tmp/tb-stats-$$.stats /tmp/tb-stats-$$/cpu0.stats
err=$("$B/tracebuf" stats /tmp/tb-stats-$$ 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && echo "$err" | grep -q "cpu0.stats: offset 0: not a kernel stats file: no .entries:. line"
check $? "a malformed stats file is named in the error"
rm -rf /tmp/tb-stats-$$
echo "1..$n"
exit $fail
