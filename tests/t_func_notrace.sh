#!/bin/sh
# The function tracer's own code makes no hook calls even when built with
# -finstrument-functions: every function in func.c, func_exclude.c and
# elfsyms.c is no_instrument_function.  Read back from the instrumented
# objects test_func_self is linked from (obj-instr/, see the Makefile).
B=${TB_BUILD:-build}

if ! objdump --version 2>/dev/null | grep -q 'GNU objdump'; then
	echo "1..0 # skip GNU objdump (binutils) missing"
	exit 0
fi
set -- source/func.o source/func_exclude.o util/elfsyms.o
echo "1..$(($# + 1))"
n=0
for o in "$@"; do
	n=$((n + 1))
	f="$B/obj-instr/$o"
	if [ ! -f "$f" ]; then
		echo "not ok $n - $f exists (make tests builds it)"
		continue
	fi
	# A call to a hook is a relocation against it (the object is not linked yet).
	calls=$(objdump -dr "$f" | grep -cE 'R_X86_64_[A-Z0-9]+[[:space:]]+__cyg_profile_func_(enter|exit)')
	if [ "$calls" -eq 0 ]; then
		echo "ok $n - $o: no hook call in the instrumented build"
	else
		echo "not ok $n - $o: $calls hook calls in the instrumented build"
		objdump -dr "$f" | grep -E 'R_X86_64_[A-Z0-9]+[[:space:]]+__cyg_profile_func_(enter|exit)' |
			head -5 | sed 's/^/# /'
	fi
done
# And the check can fail: the ring's files, built the same way, do call the hooks.
n=$((n + 1))
calls=$(objdump -dr "$B/obj-instr/ring/ring.o" 2>/dev/null |
	grep -cE 'R_X86_64_[A-Z0-9]+[[:space:]]+__cyg_profile_func_enter')
if [ "${calls:-0}" -gt 0 ]; then
	echo "ok $n - ring/ring.o, not marked, calls the hooks $calls times in the same build"
else
	echo "not ok $n - ring/ring.o should call the hooks when instrumented"
fi
