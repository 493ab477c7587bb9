#!/bin/sh
# Declaration mistakes in tracebuf/tracepoint.h are compile errors with a
# readable message: each case below must fail to compile, and the compiler's
# output must contain the expected text.  A correct declaration is compiled
# first, so a broken harness cannot pass for a good one.
CC=${CC:-cc}
export LC_ALL=C
n=0; fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# compile NAME EXPECT: compile $tmp/NAME.c; EXPECT "" means it must compile.
compile() {
	out=$($CC -std=c17 -Wall -Wextra -Werror -Iinclude -c -o "$tmp/$1.o" "$tmp/$1.c" 2>&1)
	rc=$?
	if [ -z "$2" ]; then
		[ $rc = 0 ] || echo "$out" | sed 's/^/#   /' | head -5
		check $rc "$1 compiles"
	elif [ $rc != 0 ] && echo "$out" | grep -qF -- "$2"; then
		check 0 "$1 is refused: $2"
	else
		echo "$out" | sed 's/^/#   /' | head -8
		check 1 "$1 is refused: $2"
	fi
}

case_file() { # NAME, then the body on stdin
	{ echo '#include <stdint.h>'; echo '#include "tracebuf/tracepoint.h"'; cat; } > "$tmp/$1.c"
}

case_file good <<'EOF'
TB_EVENT(tpok, fine, TB_PROTO(int a, const char *s), TB_FIELDS(tb_field(int, a, a), tb_string(s, s)),
	 TB_PRINTK("a=%d s=%s", REC->a, __get_str(s)))
void f(int a);
void f(int a) { tb_trace(tpok, fine, a, "x"); tb_printf("%d %s\n", a, "y"); }
EOF
compile good ""

case_file float_field <<'EOF'
TB_EVENT(tpbad, float_field, TB_PROTO(float x), TB_FIELDS(tb_field(float, x, x)), TB_PRINTK("x"))
EOF
compile float_field "tracebuf: field x of tpbad:float_field must be an integer, bool, enum or pointer of 1, 2, 4 or 8 bytes"

case_file wide_field <<'EOF'
TB_EVENT(tpbad, wide, TB_PROTO(__int128 x), TB_FIELDS(tb_field(__int128, x, x)), TB_PRINTK("x"))
EOF
compile wide_field "tracebuf: field x of tpbad:wide must be an integer, bool, enum or pointer of 1, 2, 4 or 8 bytes"

case_file double_array <<'EOF'
TB_EVENT(tpbad, darr, TB_PROTO(const double *v), TB_FIELDS(tb_array(double, v, 4, v)), TB_PRINTK("v"))
EOF
compile double_array "tracebuf: array v of tpbad:darr must have integers of 1, 2, 4 or 8 bytes"

case_file tiny_chars <<'EOF'
TB_EVENT(tpbad, tiny, TB_PROTO(const char *c), TB_FIELDS(tb_chars(c, 1, c)), TB_PRINTK("c"))
EOF
compile tiny_chars "tracebuf: tb_chars c of tpbad:tiny needs room for a character and its NUL"

case_file too_big <<'EOF'
TB_EVENT(tpbad, big, TB_PROTO(const uint8_t *b), TB_FIELDS(tb_array(uint8_t, b, 5000, b)), TB_PRINTK("b"))
EOF
compile too_big "tracebuf: the fixed fields of tpbad:big exceed TB_EVENT_MAX"

fields=""; proto=""
for i in $(seq 1 33); do fields="$fields${fields:+, }tb_field(int, f$i, a)"; done
case_file many_fields <<EOF
TB_EVENT(tpbad, many, TB_PROTO(int a), TB_FIELDS($fields), TB_PRINTK("many"))
EOF
compile many_fields "tracebuf: more than 32 fields or printf arguments"

case_file printf_double <<'EOF'
void f(double d);
void f(double d) { tb_printf("%d\n", d); }
EOF
compile printf_double "tracebuf: tb_printf cannot record floating-point arguments"

case_file printf_mismatch <<'EOF'
void f(void);
void f(void) { tb_printf("%d\n", "not a number"); }
EOF
compile printf_mismatch "format '%d' expects argument of type 'int'"

case_file printf_nonliteral <<'EOF'
void f(const char *fmt);
void f(const char *fmt) { tb_printf(fmt); }
EOF
compile printf_nonliteral "initializer element is not constant"

echo "1..$n"
exit $fail
