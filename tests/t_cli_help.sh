#!/bin/sh
# Every subcommand answers -h and --help (usage on stdout, exit 0) and a
# misuse with its usage on stderr and exit 2; every subcommand has its
# generated man page tracebuf-CMD(1) with a synopsis line, listed in
# tracebuf(1), which lists no subcommand that does not exist.  The list of subcommands is the one
# the dispatcher prints, checked against those tools/cmds.h declares.
B=${TB_BUILD:-build}
man=$B/man/tracebuf.1
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

"$B/tracebuf" --help > "$tmp/top"
check $? "tracebuf --help exits 0"
sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' "$tmp/top" | LC_ALL=C sort > "$tmp/cmds"
sed -n 's/^extern const struct cli_command cli_\([a-z]*\);.*/\1/p' tools/cmds.h | LC_ALL=C sort > "$tmp/declared"
cmp -s "$tmp/cmds" "$tmp/declared"
check $? "the dispatcher lists every subcommand tools/cmds.h declares ($(wc -l < "$tmp/cmds"))"
[ -s "$tmp/cmds" ]; check $? "there are subcommands"

for c in $(cat "$tmp/cmds"); do
	for h in --help -h; do
		"$B/tracebuf" "$c" $h > "$tmp/out" 2> "$tmp/err"; rc=$?
		[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^usage: tracebuf $c" && [ ! -s "$tmp/err" ]
		check $? "$c $h: usage on stdout, nothing on stderr, exit 0 (got $rc)"
	done
	"$B/tracebuf" "$c" --no-such-option > "$tmp/out" 2> "$tmp/err"; rc=$?
	[ $rc = 2 ] && grep -q "usage: tracebuf $c" "$tmp/err" && [ ! -s "$tmp/out" ]
	check $? "$c --no-such-option: usage on stderr, exit 2 (got $rc)"
	grep -q "^\.BR tracebuf\\\\-$c (1)\$" "$man"
	check $? "$c is listed in tracebuf(1)"
	grep -q "^\.B tracebuf $c\$" "$B/man/tracebuf-$c.1"
	check $? "$c has a synopsis line in tracebuf-$c(1)"
done
for s in $(sed -n 's/^\.BR tracebuf\\-\([a-z][a-z]*\) (1)$/\1/p' "$man" | sort -u); do
	grep -qx "$s" "$tmp/cmds"
	check $? "the man page's section $s is a subcommand"
done
echo "1..$n"
exit $fail
