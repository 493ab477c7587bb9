#!/bin/sh
# The command-line layer (tools/cli_opts.h), as a person meets it: every
# subcommand run with no arguments, a bad flag, a missing file, a directory
# where a file is wanted and a file that cannot be opened, each checked
# against the exit-code table (0 ok, 1 findings, 2 usage, 3 input, 4 output,
# 5 system) and the message's shape ("tracebuf CMD: " and what it names).
# Then: strict numbers name the flag and the value; --help says what the
# generated man page says; the bash completion lists exactly the declared
# options; the progress line shows on a terminal and never in a pipe.
B=${TB_BUILD:-build}
T="$B/tracebuf"
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
run() { timeout 20 "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?; }

mkdir "$tmp/dir" && echo plain > "$tmp/plain"
missing=$tmp/no-such-file
# a path open() refuses even to root: a component that is a file (ENOTDIR)
unreadable=$tmp/plain/inside

# CMD | what it takes before the input | after | exit with no arguments | a directory is not its input
table='report|||2|y
hist|-e sched:sched_switch keys=common_pid||2|y
convert||-o TMP/x.dat|2|y
dump|||2|y
stats|||2|y
offcpu|||2|y
list|||-|y
snapshot||-o TMP/x.dat|2|y
recover||-o TMP/x.dat|2|y
size|||2|n
demo|||-|n
formats|||2|n
capture|||2|n
record|||2|n
sql|||2|y'
echo "$table" | while IFS='|' read -r c pre post none dirbad; do
	post=$(echo "$post" | sed "s|TMP|$tmp|")
	if [ "$none" != - ]; then
		run "$T" "$c"
		[ $rc = "$none" ] && grep -q "^tracebuf $c: " "$tmp/err" && grep -q "^usage: tracebuf $c" "$tmp/err"
		check $? "$c with no arguments: exit $none, said and the usage line (got $rc)"
	fi
	run "$T" "$c" --no-such-flag
	[ $rc = 2 ] && grep -q "^tracebuf $c: unknown option --no-such-flag" "$tmp/err"
	check $? "$c --no-such-flag: exit 2, the flag named (got $rc)"
	[ "$dirbad" = y ] || continue
	for what in missing unreadable dir; do
		eval "f=\$$what"; [ $what = dir ] && f=$tmp/dir
		# stats reads a directory (tracefs, instance, capture): an empty one holds no stats, a finding (1)
		[ $c = stats ] && [ $what = dir ] && continue
		run "$T" "$c" $pre "$f" $post
		[ $rc = 3 ] && grep -q "$f" "$tmp/err" && grep -q "^tracebuf" "$tmp/err"
		check $? "$c on a $what input: exit 3, the path named (got $rc: $(head -n 1 "$tmp/err" | cut -c 1-100))"
		# the reason is said once (the library says it, the command adds what to do)
		[ "$(grep -ci 'no such file\|not a directory' "$tmp/err")" -le 1 ]
		check $? "$c on a $what input: the reason said once ($(grep -ci 'no such file\|not a directory' "$tmp/err") times)"
	done
done > "$tmp/tap"
cat "$tmp/tap"; n=$(grep -c '^ok\|^not ok' "$tmp/tap"); grep -q '^not ok' "$tmp/tap" && fail=1

# Numbers are strict, and the error names the flag and the value.
for args in "record -b -1 -- true|-b '-1'" "hist --refreshes abc -e x k s|--refreshes 'abc'" \
	"convert --file-version x a -o b|--file-version 'x'" "demo -n 1x|-n '1x'" "size 8 --cpus 0|--cpus '0'" \
	"hist --interval 3parsecs -e x k s|--interval '3parsecs'" "capture --kallsyms some -o d x|--kallsyms 'some'"; do
	a=${args%|*}; want=${args#*|}
	run "$T" $a
	[ $rc = 2 ] && grep -qF -- "$want" "$tmp/err"
	check $? "$a: exit 2, says $want (got $rc)"
done
# Old spellings: taken, with a note naming the new one.
run "$T" demo --events 10 --kb 8
[ $rc = 0 ] && grep -q "note: --events is now --writes" "$tmp/err"; check $? "demo --events: still taken, with a note (got $rc)"

# One letter, one meaning: every short letter stands for the same long option in every
# subcommand, and docs/cli.md's table names it.
cmds=$("$T" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
for c in $cmds; do "$T" "$c" --help > "$tmp/help-$c"; done
for c in $cmds; do
	grep -o '^  -[a-zA-Z], --[a-z0-9-]*' "$tmp/help-$c" | sed 's/^  //; s/,//'
done | sort -u > "$tmp/letters"
[ -s "$tmp/letters" ] && [ "$(cut -d' ' -f1 "$tmp/letters" | uniq -d)" = "" ]
check $? "each letter means one long option in every subcommand ($(cut -d' ' -f1 "$tmp/letters" | tr '\n' ' '))"
missing=$(cut -d' ' -f2 "$tmp/letters" | while read -r l; do grep -q -- "\`$l\`" docs/cli.md || echo "$l"; done)
[ -z "$missing" ]; check $? "docs/cli.md's letter table names every lettered option (missing: $missing)"

# --help of every command says what its man page says: the same options, the same text.
unroff() { sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\&//g'; }
for c in $cmds; do
	sed -n '/^Options:/,/^$/p' "$tmp/help-$c" | sed 1d | tr '\n' ' ' | tr -s ' ' | sed 's/^ //; s/ $//' > "$tmp/h"
	unroff < "$B/man/tracebuf-$c.1" | sed -n '/^\.SH OPTIONS/,/^\.SH/p' | sed '/^\.PP/,$d' | grep -v '^\.SH\|^\.TP' |
		sed 's/^\.B //' | tr '\n' ' ' | tr -s ' ' | sed 's/^ //; s/ $//' > "$tmp/m"
	[ -s "$tmp/h" ] && cmp -s "$tmp/h" "$tmp/m"
	check $? "$c --help's options are its man page's (both from the table)"
done

# The completion script: bash -n, and a completion call lists exactly the declared options.
bash -n "$B/completion/tracebuf"; check $? "the completion script passes bash -n"
for c in report record; do
	sed -n '/^Options:/,/^$/p' "$tmp/help-$c" | grep -o '^  \(    \|-[a-zA-Z], \)--[a-z0-9-]*' |
		sed 's/^ *//; s/, / /' | tr ' ' '\n' | sort > "$tmp/declared"
	bash -c ". '$B/completion/tracebuf'; COMP_WORDS=(tracebuf $c -); COMP_CWORD=2; _tracebuf;
		printf '%s\n' \"\${COMPREPLY[@]}\"" | sort > "$tmp/completed"
	[ -s "$tmp/declared" ] && cmp -s "$tmp/declared" "$tmp/completed"
	check $? "completing 'tracebuf $c -' lists exactly its $(wc -l < "$tmp/declared") declared options"
done

# Progress: under a pseudo-terminal a line on stderr; in a pipe none; --quiet and --progress force either.
cap=tests/data/kernel/cap-b-overrun
if command -v script > /dev/null; then
	script -qc "$T convert $cap -o $tmp/p.dat" /dev/null > "$tmp/pty" 2>&1
	grep -q "tracebuf convert: $tmp/p.dat: *[0-9]*%" "$tmp/pty"; check $? "convert on a terminal: a progress line"
	script -qc "$T convert --quiet $cap -o $tmp/p.dat" /dev/null > "$tmp/pty" 2>&1
	! grep -q "%" "$tmp/pty"; check $? "convert --quiet on a terminal: none"
else
	n=$((n+1)); echo "ok $n # skip script(1) is not installed"
	n=$((n+1)); echo "ok $n # skip script(1) is not installed"
fi
"$T" convert $cap -o "$tmp/p.dat" 2>&1 | cat > "$tmp/pipe"
[ ! -s "$tmp/pipe" ]; check $? "convert into a pipe: no progress line"
"$T" convert --progress $cap -o "$tmp/p.dat" 2>&1 | cat > "$tmp/pipe"
grep -q "%" "$tmp/pipe"; check $? "convert --progress into a pipe: the line"

# record's live line: events and each CPU's losses, on a terminal only; recover's, of the bytes written.
pool=$B/examples/pool
if command -v script > /dev/null && [ -x "$pool" ]; then
	script -qc "$T record --shm $tmp/shm -o $tmp/r.dat -- $pool 2000 0" /dev/null > "$tmp/pty" 2>&1
	grep -aq "tracebuf record: $tmp/r.dat: ([0-9]* events.*) lost: cpu0 [0-9]*" "$tmp/pty"
	check $? "record on a terminal: a live line with events and lost per CPU"
	"$T" record -o "$tmp/r.dat" -- "$pool" 2000 0 2>&1 > /dev/null | grep -q "lost: cpu"; [ $? = 1 ]
	check $? "record into a pipe: no live line"
	"$T" recover --progress "$tmp/shm" -o "$tmp/rec.dat" 2>&1 | grep -aq "tracebuf recover: $tmp/rec.dat: ("
	check $? "recover --progress: a line of the bytes written"
else
	for i in 1 2 3; do n=$((n+1)); echo "ok $n # skip script(1) or the pool example is missing"; done
fi

# Colour: only where asked or on a terminal, and NO_COLOR honoured.
"$T" report --help | grep -q "$(printf '\033')"; [ $? = 1 ]; check $? "help into a pipe: no colour"
"$T" report --help --color=always | grep -q "$(printf '\033')"; check $? "--color=always: colour"
if command -v script > /dev/null; then
	NO_COLOR=1 script -qc "$T report --help" /dev/null | grep -q "$(printf '\033')"; [ $? = 1 ]
	check $? "NO_COLOR on a terminal: no colour"
fi
echo "1..$n"
exit $fail
