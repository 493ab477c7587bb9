#!/bin/sh
# What a trace does not carry, taken from the running kernel when the trace
# was made on the release running here (issue 27 item 7).  A private
# instance traces writeback and block events of a file written and synced;
# `tracebuf capture` saves it with its constants (enum values from this
# kernel's BTF).  The same capture without its constants file - as a
# trace-cmd file or another tool's capture would be - must print the very
# same text, and say once on stderr where the values came from; its
# trace.dat (convert writes the UNAME option trace-cmd writes) too.  Told
# another release, report must not guess: the names are not resolved and
# nothing is said.  Skipped without root, tracefs or /sys/kernel/btf/vmlinux.
B=${TB_BUILD:-build}
TB="$B/tracebuf"
[ -r /sys/kernel/btf/vmlinux ] || { echo "1..0 # SKIP no /sys/kernel/btf/vmlinux"; exit 0; }
# (the scratch folder on the build's file system: /tmp may be tmpfs)
NAME=tb-running-btf-$$ NEED=events/writeback WDIR=$B
. "$(dirname "$0")/lib/instance.sh"

echo 0 > "$T/options/overwrite"
echo 1 > "$T/events/writeback/enable"
[ -d "$T/events/block" ] && echo 1 > "$T/events/block/enable"
dd if=/dev/zero of="$W/junk" bs=64k count=64 2>/dev/null
sync "$W/junk" 2>/dev/null || sync
echo 0 > "$T/tracing_on"
"$TB" capture -o "$W/full" "$T" > /dev/null 2>&1 || skip "tracebuf capture could not save $T"
"$TB" report "$W/full" > "$W/full.txt" 2> /dev/null
grep -q "I_DIRTY" "$W/full.txt" || skip "no writeback record with I_DIRTY_* state names (nothing to resolve)"

# The capture without its constants: the same text, the source said once.  Only
# writeback's age= may differ: it needs jiffies of the moment the capture was
# saved, a variable of that boot that BTF does not give (age=?, docs/kernel.md).
noage() { sed 's/ age=[^ ]*/ age=/' "$1"; }
cp -r "$W/full" "$W/bare" && rm "$W/bare/constants"
"$TB" report "$W/bare" > "$W/bare.txt" 2> "$W/bare.err"
noage "$W/full.txt" > "$W/full.cmp"; noage "$W/bare.txt" > "$W/bare.cmp"
cmp -s "$W/full.cmp" "$W/bare.cmp"
check $? "a capture without constants prints what it prints with them, age= aside ($(grep -c I_DIRTY "$W/bare.txt") lines name I_DIRTY_*)"
[ "$(grep -c "taken from this kernel's BTF" "$W/bare.err")" = 1 ] &&
	grep -q "release running here, $(uname -r)" "$W/bare.err"
check $? "said once, naming the release ($(head -n 1 "$W/bare.err" | cut -c 1-120))"
"$TB" report "$W/full" 2>&1 > /dev/null | grep -q "taken from this kernel's BTF"
[ $? != 0 ]; check $? "a capture with its constants says nothing of the sort"

# Its trace.dat: convert writes UNAME ("Linux HOST RELEASE MACHINE"), and the reader uses it.
"$TB" convert "$W/full" -o "$W/full.dat" > /dev/null 2>&1 &&
	"$TB" convert "$W/bare" -o "$W/bare.dat" > /dev/null 2>&1
check $? "both converted to trace.dat"
"$TB" report "$W/full.dat" 2> /dev/null | sed 's/ age=[^ ]*/ age=/' > "$W/fulldat.txt"
"$TB" report "$W/bare.dat" 2> "$W/baredat.err" | sed 's/ age=[^ ]*/ age=/' > "$W/baredat.txt"
cmp -s "$W/fulldat.txt" "$W/baredat.txt" && grep -q I_DIRTY "$W/baredat.txt"
check $? "the trace.dat without constants prints what the one with them prints"
[ "$(grep -c "taken from this kernel's BTF" "$W/baredat.err")" = 1 ]
check $? "the trace.dat's report says so once"
if command -v trace-cmd > /dev/null 2>&1; then
	trace-cmd report --uname "$W/bare.dat" 2> /dev/null | grep -q " $(uname -r) "
	check $? "trace-cmd reads the release from the UNAME option"
fi

# Another release: this kernel's BTF is not used (the state names print as they
# did before: libtraceevent's text, not the kernel's), and nothing is said.
sed -i 's/^kernel: .*/kernel: 0.0.0-another-release/' "$W/bare/meta.txt"
"$TB" report "$W/bare" > "$W/other.txt" 2> "$W/other.err"
noage "$W/other.txt" > "$W/other.cmp"
! cmp -s "$W/full.cmp" "$W/other.cmp" && ! grep -q "taken from this kernel's BTF" "$W/other.err" &&
	[ "$(wc -l < "$W/other.txt")" = "$(wc -l < "$W/full.txt")" ]
check $? "told another release: every line printed, this kernel's values not used, nothing said"

echo "1..$n"
exit $fail
