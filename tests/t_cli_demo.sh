#!/bin/sh
# tracebuf demo: every read path reports the loss, and the numbers agree.
B=${TB_BUILD:-build}
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
out=$("$B/tracebuf" demo 2>&1); check $? "demo runs"
overrun=$(echo "$out" | sed -n '/after writing/,/read events/s/^overrun: //p')
entries=$(echo "$out" | sed -n '/after writing/,/read events/s/^entries: //p')
[ -n "$overrun" ] && [ "$overrun" -gt 0 ]; check $? "stats show overrun ($overrun)"
[ $((overrun + entries)) = 5000 ]; check $? "entries + overrun = 5000 written"
echo "$out" | grep -q "^written: 5000 (entries + overrun + read)"; check $? "derived: written 5000"
iter_lost=$(echo "$out" | sed -n '/non-consuming iterator/,/^iterator:/p' | grep -c "^CPU:0 \[LOST $overrun EVENTS\]")
[ "$iter_lost" = 1 ]; check $? "the iterator prints CPU:0 [LOST $overrun EVENTS]"
cons=$(echo "$out" | sed -n '/consuming read/,/^consume:/p' | head -2 | grep -c "^CPU:0 \[LOST $overrun EVENTS\]")
[ "$cons" = 1 ]; check $? "the consuming read starts with CPU:0 [LOST $overrun EVENTS]"
echo "$out" | grep -q "^consume: $entries events read, $overrun reported lost"; check $? "consume reads every held event"
echo "$out" | grep -q "lost flag + stored count"; check $? "a raw page carries the lost flag and stored count"
echo "1..$n"
exit $fail
