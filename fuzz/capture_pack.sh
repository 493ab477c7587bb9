#!/bin/sh
# capture_pack.sh OUT NAME=FILE... - pack files into one fuzz_capture input.
#
# Each NAME is one of the archive's names (the table in fuzz_capture.c; the
# last two, the stack formats, are fuzz_analyze.c's alone);
# FILE is copied in whole.  Record: name index (1 byte), length (u32, little
# endian), the bytes.
set -eu
names="header_page header_event formats/ftrace/print.format formats/sched/sched_switch.format
formats/sched/sched_wakeup.format cpu0.raw cpu0.stats cpu1.raw cpu1.stats saved_cmdlines
printk_formats kallsyms meta.txt trace_clock formats/ftrace/bputs.format
formats/irq/irq_handler_entry.format formats/ftrace/kernel_stack.format formats/ftrace/user_stack.format"

byte() { printf "\\$(printf %o "$1")"; }

out=$1
shift
: > "$out"
for arg in "$@"; do
	name=${arg%%=*}
	file=${arg#*=}
	i=0
	found=
	for n in $names; do
		[ "$n" = "$name" ] && found=$i && break
		i=$((i + 1))
	done
	[ -n "$found" ] || { echo "capture_pack.sh: unknown name $name" >&2; exit 1; }
	len=$(wc -c < "$file")
	{
		byte "$found"
		byte $((len & 255)); byte $((len >> 8 & 255)); byte $((len >> 16 & 255)); byte $((len >> 24 & 255))
		cat "$file"
	} >> "$out"
done
