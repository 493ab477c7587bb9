#!/bin/sh
# The fast paths' rseq sections, read back from the object file (one
# descriptor each: tb_write's and tb_write_at's): the kernel only protects
# [start, start + post_commit_offset) of a descriptor, so for every one
#   - every branch inside it lands inside it, or where its abort lands (.Lout);
#   - its last instruction is the commit, the store of the new tail word.
# A block moved past the end would run unprotected and fail only under
# preemption, rarely; this finds it at once.
B=${TB_BUILD:-build}
obj="$B/obj/ring/write_x86_64.o"

case "$(${CC:-cc} -dumpmachine 2>/dev/null)" in
x86_64-*) ;;
*)
	echo "1..0 # skip the compiler does not target x86-64: no hand-written fast path"
	exit 0
	;;
esac
if ! objdump --version 2>/dev/null | grep -q 'GNU objdump'; then
	echo "1..0 # skip GNU objdump (binutils) missing"
	exit 0
fi
if [ ! -f "$obj" ]; then
	echo "1..1"
	echo "not ok 1 - $obj exists (build the library first, or set TB_BUILD)"
	exit 1
fi

hex() { printf '%d' "0x$1"; }
# Each 32-byte descriptor: start_ip (a relocation .text+S at offset 8), post_commit_offset
# (bytes 16..23, little-endian), abort_ip (a relocation __rseq_failure+F at offset 24).
# (the only relocations into .text there are the start_ips)
starts=$(objdump -r -j __rseq_cs "$obj" | awk '$3 ~ /^\.text\+/ { v = $3; sub(/^\.text\+0x/, "", v); print $1, v }')
aborts=$(objdump -r -j __rseq_cs "$obj" | awk '$3 ~ /^__rseq_failure\+/ { v = $3; sub(/^__rseq_failure\+0x/, "", v); print v }')
lens=$(objdump -s -j __rseq_cs "$obj" | awk 'NF >= 3 && $1 ~ /^[0-9a-f]+$/ && $1 ~ /[13579bdf]0$/ {
	h = $2 $3; v = ""; for (i = 15; i >= 1; i -= 2) v = v substr(h, i, 2); print v }')
# where each abort handler goes: its jump's relocation (PC32 or PLT32, .text+target-4), by the handler's address
jumps=$(objdump -dr -j __rseq_failure "$obj" | awk '
	/^ +[0-9a-f]+:\t/ { split($0, f, "\t"); a = f[1]; gsub(/[ :]/, "", a); if (f[3] ~ /^jmp/) at = a }
	/R_X86_64_(PC32|PLT32)/ && $3 ~ /^\.text\+/ { t = $3; sub(/^\.text\+0x/, "", t); print at, t }')

ndesc=$(echo "$starts" | grep -c .)
echo "1..$((3 * ndesc))"
if [ "$ndesc" = 0 ]; then
	echo "not ok 1 - a descriptor is found in $obj"
	exit 1
fi
fail=0
n=0
i=0
for start in $(echo "$starts" | awk '{ print $2 }'); do
	i=$((i + 1))
	len=$(echo "$lens" | sed -n "${i}p")
	handler=$(echo "$aborts" | sed -n "${i}p")
	abort=$(echo "$jumps" | awk -v h="$handler" '{ a = $1; sub(/^0+/, "", a); b = h; sub(/^0+/, "", b) } a == b { print $2 }')
	n=$((n + 1))
	if [ -z "$len" ] || [ -z "$abort" ]; then
		echo "not ok $n - descriptor $i: its length and its abort handler's jump are found"
		fail=1; n=$((n + 2)); continue
	fi
	echo "ok $n - descriptor $i: start 0x$start, length 0x$len; its abort goes to 0x$abort + 4"
	objdump -d --no-show-raw-insn -j .text "$obj" | awk -v s="$start" -v l="$len" -v a="$abort" -v n="$n" -v i="$i" '
	function hex(x,   k, c, v) {
		x = tolower(x); gsub(/[ :]/, "", x); sub(/^0x/, "", x); v = 0
		for (k = 1; k <= length(x); k++) { c = index("0123456789abcdef", substr(x, k, 1)) - 1; v = v * 16 + c }
		return v
	}
	BEGIN { start = hex(s); end = start + hex(l); out = hex(a) + 4; bad = 0; last = "" }
	/^ *[0-9a-f]+:\t/ {
		split($0, f, "\t"); addr = hex(f[1]); insn = f[2]
		if (addr >= start && addr < end) last = insn
		if (addr < start || addr >= end || insn !~ /^j/) next
		split(insn, w, " +"); target = hex(w[2])
		if ((target < start || target >= end) && target != out) {
			printf "# 0x%x: %s leaves the section\n", addr, insn; bad++
		}
	}
	END {
		printf "%sok %d - descriptor %d: every branch in the section stays in it or goes where its abort goes\n", bad ? "not " : "", n + 1, i
		c = (last ~ /^mov +%r11,(0x0)?\(%r10\)/)
		printf "%sok %d - descriptor %d: the last instruction of the section is the commit (%s)\n", c ? "" : "not ", n + 2, i, last
		exit (bad || !c)
	}' || fail=1
	n=$((n + 2))
done
exit $fail
