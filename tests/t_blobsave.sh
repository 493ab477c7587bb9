#!/bin/sh
# Blobs saved with the pages: a program writes blobs of known content from
# several threads (examples/blobs.c: sizes from just above a sub-buffer's
# payload to 256 KiB, a copy of each in DIR/T-K.bin), recorded through
# `record` (drained; --shm), the flight recorder with a blob area too small
# to keep them, `snapshot` while it runs and `recover` after SIGKILL.  The
# report must show each blob with its length and the CRC-32 this script
# computes from the copies (gzip's trailer holds the CRC-32 of its input),
# overwritten ones as BLOB LOST, counted as the saver says; trace-cmd
# report prints the same event lines with nothing on stderr.
B=${TB_BUILD:-build}
TB=$B/tracebuf
P=$B/examples/blobs
tmp=$(mktemp -d /tmp/tb-blobsave-XXXXXX)
shm=/dev/shm/tb-t-blobsave-$$
trap 'rm -rf "$tmp" "$shm" "$shm.formats"' EXIT INT TERM
[ -n "$TB_KEEP" ] && trap - EXIT
n=0; fail=0
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
have_tcmd=0; command -v trace-cmd >/dev/null 2>&1 && have_tcmd=1

# "SIZE CRC" of every copy the program kept, sorted.
written() { for f in "$1"/*.bin; do
	printf '%s %s\n' "$(stat -c %s "$f")" "$(gzip -c < "$f" | tail -c8 | od -An -tx4 -N4 | tr -d ' ')"
done | sort; }
# "SIZE CRC" of every blob a report shows, sorted.
shown() { sed -n 's/^CPU:[0-9]* \[BLOB: \([0-9]*\) bytes, crc32 \([0-9a-f]*\)\] ".*/\1 \2/p' "$1" | sort; }
# Whether every blob shown is one written (never another blob's bytes, never torn ones).
all_written() { shown "$1" > "$tmp/shown"; written "$2" > "$tmp/written"; [ -s "$tmp/shown" ] &&
	[ -z "$(comm -23 "$tmp/shown" "$tmp/written")" ]; }

# 1. drained: 4 threads x 8 blobs, every one in the report, byte for byte
mkdir "$tmp/d"
$TB record --blob-kb 8192 -o "$tmp/d.dat" -- $P "$tmp/d" 4 8 > /dev/null 2> "$tmp/d.err"; rc=$?
[ $rc = 0 ] && grep -q '^tracebuf record: blobs: 32 saved ([0-9]* bytes), 0 overwritten' "$tmp/d.err"
check $? "record --blob-kb: exit 0, 32 blobs saved"
$TB report "$tmp/d.dat" > "$tmp/d.txt" 2> "$tmp/d.rerr"
written "$tmp/d" > "$tmp/w"; shown "$tmp/d.txt" > "$tmp/shw"
cmp -s "$tmp/w" "$tmp/shw" && [ "$(wc -l < "$tmp/shw")" = 32 ] && [ ! -s "$tmp/d.rerr" ]
check $? "report: each of the 32 blobs once, its size and the CRC-32 of the bytes written"
grep -q '^CPU:[0-9]* \[BLOB: 262144 bytes, crc32 [0-9a-f]*\] "blob t=0 k=0\\n' "$tmp/d.txt" &&
	! grep -q 'BLOB LOST' "$tmp/d.txt"
check $? "the 256 KiB one is there with its escaped head; none lost"
$TB convert "$tmp/d.dat" -o "$tmp/d.json" > /dev/null 2>&1 &&
	grep -o '"name":"blob",[^{]*{"len":[0-9]*,"crc32":"[0-9a-f]*"' "$tmp/d.json" |
	sed 's/.*"len":\([0-9]*\),"crc32":"\([0-9a-f]*\)"/\1 \2/' | sort | cmp -s - "$tmp/w"
check $? "the JSON export: a blob instant per blob, with its length and CRC-32"
if [ $have_tcmd = 1 ]; then
	trace-cmd report "$tmp/d.dat" > "$tmp/d.tcmd" 2> "$tmp/d.terr"; rc=$?
	[ $rc = 0 ] && [ ! -s "$tmp/d.terr" ] && [ "$(grep -c 'UNKNOWN EVENT' "$tmp/d.tcmd")" = 32 ]
	check $? "trace-cmd report reads it: one line per reference, nothing on stderr"
else
	n=$((n+1)); echo "ok $n # skip trace-cmd not installed"
fi

# 2. a named --shm file, the same
mkdir "$tmp/n"
$TB record --shm "$shm" --blob-kb 8192 -o "$tmp/n.dat" -- $P "$tmp/n" 3 5 > /dev/null 2> "$tmp/n.err" &&
	$TB report "$tmp/n.dat" > "$tmp/n.txt" 2>&1 && written "$tmp/n" > "$tmp/w" && shown "$tmp/n.txt" > "$tmp/shw" &&
	cmp -s "$tmp/w" "$tmp/shw" && [ "$(wc -l < "$tmp/shw")" = 15 ]
check $? "record --shm PATH: the 15 blobs, byte for byte"
rm -f "$shm"; rm -rf "$shm.formats"

# 3. flight recorder, blob area of 512 KiB per CPU: most are overwritten; lost ones said and counted
mkdir "$tmp/f"
$TB record --flight-recorder --blob-kb 512 -o "$tmp/f.dat" -- $P "$tmp/f" 4 8 > /dev/null 2> "$tmp/f.err"
$TB report "$tmp/f.dat" > "$tmp/f.txt" 2>&1
lost=$(grep -c '^CPU:[0-9]* \[BLOB LOST: [0-9]* bytes, overwritten before it was saved\]$' "$tmp/f.txt")
said=$(sed -n 's/^tracebuf record: blobs: [0-9]* saved ([0-9]* bytes), \([0-9]*\) overwritten.*/\1/p' "$tmp/f.err")
# (writers filling 4 big blobs at once may find the small area all taken: refused, said by the program)
refused=$(grep -c '^blobs: thread [0-9]* blob [0-9]* ([0-9]* bytes): ' "$tmp/f.err")
[ "$lost" -gt 0 ] && [ "$lost" = "$said" ] && all_written "$tmp/f.txt" "$tmp/f" &&
	[ $((lost + $(shown "$tmp/f.txt" | wc -l) + refused)) = 32 ]
check $? "flight recorder, small blob area: $lost lost (record said ${said:-?}), the rest byte for byte; with $refused refused, 32 in all"
[ "$fail" = 0 ] || { echo "# shown $(shown "$tmp/f.txt" | wc -l); other lines:"; grep -v '^CPU:[0-9]* \[BLOB: \|overwritten before' "$tmp/f.txt" "$tmp/f.err" | sed 's/^/# /' | head -20; }

# 4. recover after SIGKILL (the writers dead): every blob from the kept file
mkdir "$tmp/k"
$TB record --flight-recorder --shm "$shm" --blob-kb 8192 -o "$tmp/k0.dat" -- $P "$tmp/k" 4 4 --kill \
	> /dev/null 2> "$tmp/k0.err"
grep -q 'killed by signal 9' "$tmp/k0.err" && $TB recover "$shm" -o "$tmp/k.dat" 2> "$tmp/k.err" &&
	$TB report "$tmp/k.dat" > "$tmp/k.txt" 2>&1 && written "$tmp/k" > "$tmp/w" && shown "$tmp/k.txt" > "$tmp/shw" &&
	cmp -s "$tmp/w" "$tmp/shw" && [ "$(wc -l < "$tmp/shw")" = 16 ] && grep -q '^tracebuf recover: blobs: 16 saved' "$tmp/k.err"
check $? "recover after SIGKILL: the 16 blobs, byte for byte"
if [ $have_tcmd = 1 ]; then
	trace-cmd report "$tmp/k.dat" > /dev/null 2> "$tmp/k.terr" && [ ! -s "$tmp/k.terr" ]
	check $? "trace-cmd report reads the recovered file, nothing on stderr"
else
	n=$((n+1)); echo "ok $n # skip trace-cmd not installed"
fi
rm -f "$shm"; rm -rf "$shm.formats"

# 5. snapshot while two threads write (20 ms apart)
mkdir "$tmp/sn"
$TB record --flight-recorder --shm "$shm" --blob-kb 8192 -o "$tmp/s0.dat" -- $P "$tmp/sn" 2 50 --slow \
	> /dev/null 2> "$tmp/s0.err" &
rpid=$!
# Until a thread keeps its second blob's copy: it has written its first to the ring
# (examples/blobs.c keeps each copy before tb_blob_write); 30 s at most.
i=0; while [ ! -f "$tmp/sn/0-1.bin" ] && [ ! -f "$tmp/sn/1-1.bin" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
$TB snapshot "$shm" -o "$tmp/snap.dat" 2> "$tmp/snap.err"; rc=$?
kill -TERM $rpid 2>/dev/null; wait $rpid
$TB report "$tmp/snap.dat" > "$tmp/snap.txt" 2>&1
[ $rc = 0 ] && all_written "$tmp/snap.txt" "$tmp/sn" && grep -q '^tracebuf snapshot: blobs: [1-9][0-9]* saved' "$tmp/snap.err"
check $? "snapshot of running writers: $(shown "$tmp/snap.txt" | wc -l) blobs, each one written, byte for byte"

rm -f "$shm"; rm -rf "$shm.formats"

# 6. the demo's crash (make run): a blob written just before SIGKILL, recovered with its bytes
$B/examples/demo --crash "$shm" > /dev/null 2>&1
crc=$(i=0; while [ $i -lt 600 ]; do printf 'crash blob line %04d\n' $i; i=$((i+1)); done | gzip -c | tail -c8 |
	od -An -tx4 -N4 | tr -d ' ')
$TB recover "$shm" -o "$tmp/c.dat" 2> "$tmp/c.err" && $TB report "$tmp/c.dat" > "$tmp/c.txt" 2>&1 &&
	grep -qF "[BLOB: 12600 bytes, crc32 $crc] \"crash blob line 0000\\ncrash blob line 0001\\n" "$tmp/c.txt"
check $? "demo --crash: recover saves the blob written just before SIGKILL, byte for byte"

echo "1..$n"
exit $fail
