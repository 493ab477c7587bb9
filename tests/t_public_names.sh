#!/bin/sh
# The public names follow the rules of docs/design.md §0 ("Where a public
# name lives"): scripts/public-names.pl finds every name the public headers
# declare and checks that each prefix lives in one header (its own when
# there is a header of that name), that no header names a libtraceevent
# type, that handles are made and ended by open/close or new/free, and that
# every header says who owns what.  The checker is also run on copies of the
# headers with one rule broken each, and must refuse every one, naming the
# rule.  Last, every public header compiles alone.
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
CC=${CC:-cc}

perl scripts/public-names.pl include/tracebuf/*.h > "$tmp/out" 2>&1
rc=$?; sed 's/^/# /' "$tmp/out"
check $rc "the public headers follow the naming rules"
nh=$(ls include/tracebuf/*.h | wc -l)
grep -q "in $nh headers" "$tmp/out"
check $? "every one of the $nh public headers was read"

# broken HEADER RULE TEXT: a copy of the headers with TEXT added to HEADER
# (before its last #endif) must be refused for RULE.
broken() {
	rm -rf "$tmp/h"; mkdir "$tmp/h"; cp include/tracebuf/*.h "$tmp/h/"
	awk -v add="$3" '{ line[NR] = $0 } /^#endif/ { last = NR }
		END { for (i = 1; i <= NR; i++) { if (i == last) print add; print line[i] } }' \
		"include/tracebuf/$1" > "$tmp/h/$1"
	perl scripts/public-names.pl "$tmp"/h/*.h > "$tmp/out" 2>&1; rc=$?
	[ $rc = 1 ] && grep -q "^$2: " "$tmp/out"
	check $? "refused: $1 with '$3' ($2 rule, exit $rc)"
}
broken stats.h prefix 'int tb_ring_extra(void);'
broken capture.h prefix 'struct tb_stats_extra { int x; };'
broken tracepoint.h prefix '#define TB_PAGE_EXTRA 1'
broken schema.h tep 'struct tep_handle *tb_schema_handle(struct tb_schema *s);'
broken hist.h verbs 'struct tb_hist *tb_hist_create(void);'
broken hist.h verbs 'void tb_hist_release(struct tb_hist *h);'
broken usyms.h verbs 'int tb_usyms_open(struct tb_usyms **out);'
# a header without its ownership paragraph
rm -rf "$tmp/h"; mkdir "$tmp/h"; cp include/tracebuf/*.h "$tmp/h/"
sed 's/Ownership:/Who:/' include/tracebuf/blob.h > "$tmp/h/blob.h"
perl scripts/public-names.pl "$tmp"/h/*.h > "$tmp/out" 2>&1
[ $? = 1 ] && grep -q '^owner: .*blob.h' "$tmp/out"
check $? "refused: blob.h without an Ownership paragraph"

for h in include/tracebuf/*.h; do
	echo "#include \"tracebuf/${h##*/}\"" > "$tmp/one.c"
	$CC -std=c17 -Wall -Wextra -Werror -Iinclude -fsyntax-only "$tmp/one.c" 2> "$tmp/err"
	rc=$?; sed 's/^/# /' "$tmp/err"
	check $rc "${h##*/} compiles alone"
done

echo "1..$n"
exit $fail
