#!/bin/sh
# tracebuf size against the kernel's own sizing tables (tests/data/kernel).
B=${TB_BUILD:-build}
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
rows=0; bad=0
while IFS='	' read -r sub kb back cpu0 total data; do
	case "$sub" in subbuf*) continue;; esac
	rows=$((rows+1))
	json=$("$B/tracebuf" size "$kb" --subbuf-kb "$sub" --cpus 2 --json) || { bad=$((bad+1)); continue; }
	got=$(echo "$json" | sed 's/.*"readback_kb": \([0-9]*\).*/\1/')
	tot=$(echo "$json" | sed 's/.*"total_readback_kb": \([0-9]*\).*/\1/')
	dat=$(echo "$json" | sed 's/.*"data_bytes_per_subbuf": \([0-9]*\).*/\1/')
	if [ "$got" != "$back" ] || [ "$tot" != "$total" ] || [ "$dat" != "$data" ]; then
		bad=$((bad+1)); echo "# subbuf $sub kb $kb: got $got/$tot/$dat, kernel $back/$total/$data"
	fi
done < tests/data/kernel/sizing.tsv
check $((bad != 0)) "size --json matches all $rows rows of sizing.tsv"
json=$("$B/tracebuf" size 8 --json)
for key in requested_kb subbuf_bytes subbufs_per_cpu readback_kb allocated_bytes_per_cpu; do
	echo "$json" | grep -q "\"$key\": [0-9]" ; check $? "--json has $key"
done
echo "$json" | grep -q '"subbufs_per_cpu": 3, "readback_kb": 11, "allocated_bytes_per_cpu": 16384'
check $? "8 KiB: 3 sub-buffers, reads back 11, 16384 bytes with the reader page (kernel lost-demo)"
"$B/tracebuf" size 8 --subbuf-kb 513 >/dev/null 2>&1; check $((! $?)) "513 KiB sub-buffers refused like EINVAL"
"$B/tracebuf" size 0 >/dev/null 2>&1; check $((! $?)) "0 KiB refused"
echo "1..$n"
exit $fail
