#!/bin/sh
# The fast path's rseq section, read back from the object file: the kernel
# only protects [start, start + post_commit_offset) of the descriptor, so
#   - every branch inside it lands inside it, or where an abort lands (.Lout);
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

# start_ip: the relocation at offset 8 of the (one) descriptor, .text+start
start=$(objdump -r -j __rseq_cs "$obj" | awk '$1 ~ /^0+8$/ && $3 ~ /^\.text\+/ {sub(/^\.text\+/, "", $3); print $3}')
# post_commit_offset: bytes 16..23, little-endian
len=$(objdump -s -j __rseq_cs "$obj" | awk '$1 == "0010" {
	h = $2 $3; v = ""; for (i = 15; i >= 1; i -= 2) v = v substr(h, i, 2); print v}')
# where an abort goes: the abort handler's jump (a PC32 or PLT32 relocation, .text+target-4)
abort=$(objdump -dr -j __rseq_failure "$obj" |
	awk '/R_X86_64_(PC32|PLT32)/ && $3 ~ /^\.text\+/ {sub(/^\.text\+0x/, "", $3); print $3}')

echo "1..3"
if [ -z "$start" ] || [ -z "$len" ] || [ -z "$abort" ]; then
	echo "not ok 1 - the descriptor and the abort handler are found in $obj"
	echo "not ok 2 # skip no descriptor"
	echo "not ok 3 # skip no descriptor"
	exit 1
fi
echo "ok 1 - descriptor: start $start, length 0x$len; aborts go to 0x$abort + 4"

objdump -d --no-show-raw-insn -j .text "$obj" | awk -v s="$start" -v l="$len" -v a="$abort" '
function hex(x,   i, c, v) {
	x = tolower(x); gsub(/[ :]/, "", x); sub(/^0x/, "", x); v = 0
	for (i = 1; i <= length(x); i++) { c = index("0123456789abcdef", substr(x, i, 1)) - 1; v = v * 16 + c }
	return v
}
BEGIN { start = hex(s); end = start + hex(l); out = hex(a) + 4; bad = 0; last = "" }
/^ *[0-9a-f]+:\t/ {
	split($0, f, "\t"); addr = hex(f[1]); insn = f[2]
	if (addr < end) last = insn
	if (addr < start || addr >= end || insn !~ /^j/) next
	split(insn, w, " +"); target = hex(w[2])
	if ((target < start || target >= end) && target != out) {
		printf "# 0x%x: %s leaves the section\n", addr, insn; bad++
	}
}
END {
	printf "%sok 2 - every branch in the section stays in it or goes where an abort goes\n", bad ? "not " : ""
	c = (last ~ /^mov +%r11,(0x0)?\(%r10\)/)
	printf "%sok 3 - the last instruction of the section is the commit (%s)\n", c ? "" : "not ", last
	exit (bad || !c)
}'
