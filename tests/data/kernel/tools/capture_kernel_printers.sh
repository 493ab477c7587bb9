#!/bin/bash
# Capture the events the kernel prints with its own code (syscalls, trace_marker
# text, trace_marker_raw, kernel and user stacks) from a private tracefs instance,
# in the layout of the other cap-* directories.
#
# Usage: capture_kernel_printers.sh OUTDIR
# Requires root, tracefs at /sys/kernel/tracing, python3, taskset.  Creates and
# removes instances/tb-kprint-cap-PID; reads (never writes) the top level's
# saved_cmdlines, header_page/header_event and format files; reads /proc/kallsyms.
#
# What is recorded (only the workload's processes: set_event_pid + event-fork):
#  - every syscalls:sys_enter_* / sys_exit_* event of a short python3 workload
#    (startup, a failing open, writes of 5 and 300 bytes, getppid, a sleep);
#  - a kernel stack (ftrace:kernel_stack) after each sys_enter_getppid (event
#    trigger "stacktrace"), and user stacks (option userstacktrace) while the
#    workload's getppid calls run;
#  - trace_marker writes: with a newline, without one (the kernel adds it), and
#    one holding a NUL byte ("abc\0def": printed up to the NUL and with no
#    newline, so the next line follows on the same line);
#  - two trace_marker_raw writes.
# The function tracer cannot be used in an instance on the capture machine
# (current_tracer and set_ftrace_filter answer EPERM), so there are no
# ftrace:function events.
set -eu
OUT=$(realpath -m "$1")
TOP=/sys/kernel/tracing
T=$TOP/instances/tb-kprint-cap-$$
NCPU=$(nproc)
# The interpreter itself, not a wrapper script (a pyenv shim forks shells).
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
mkdir -p "$OUT"
mkdir "$T"
trap 'echo 0 > $T/tracing_on 2>/dev/null; echo "!stacktrace" > $T/events/syscalls/sys_enter_getppid/trigger 2>/dev/null; rmdir $T 2>/dev/null' EXIT

echo 0 > $T/tracing_on
echo local > $T/trace_clock
echo 1024 > $T/buffer_size_kb
echo > $T/trace

# The workload runs in a child that waits (one blocking read of a fifo) until
# the filter names it and tracing is on, and stops tracing itself before it
# exits: an exiting pid leaves set_event_pid, and an empty filter would let
# every process of the machine into the buffer.
FIFO=$(mktemp -u /tmp/tb-kprint-cap-XXXXXX)
WORK=$FIFO.py
mkfifo "$FIFO"
cat > "$WORK" <<'PY'
import os, struct, sys, time
t = sys.argv[1]
os.read(3, 1)                                               # "go": filtered and tracing
os.sched_setaffinity(0, {0})
try:
    os.open("/nonexistent/tb-kprint", os.O_RDONLY)          # sys_openat -> -ENOENT
except OSError:
    pass
null = os.open("/dev/null", os.O_WRONLY)
os.write(null, b"hello")                                    # count 5: decimal
os.write(null, b"x" * 300)                                  # count 0x12c: hex
os.close(null)
opt = os.open(t + "/options/userstacktrace", os.O_WRONLY)
os.write(opt, b"1")
os.getppid()                                                # + kernel stack (trigger) + user stack
os.getppid()
os.write(opt, b"0")
os.close(opt)
m = os.open(t + "/trace_marker", os.O_WRONLY)
os.write(m, b"tb-kprint marker with newline\n")
os.write(m, b"tb-kprint marker without newline")
os.write(m, b"abc\0def")                                    # NUL: printed up to it, no newline
os.write(m, b"tb-kprint marker after the NUL one")
os.close(m)
r = os.open(t + "/trace_marker_raw", os.O_WRONLY)
os.write(r, struct.pack("<I", 0xbeef) + b"RAW!")
os.write(r, struct.pack("<I", 0x10) + bytes(range(23)))
os.close(r)
on = os.open(t + "/tracing_on", os.O_WRONLY)
os.write(on, b"0")
PY
"$PYTHON" -S "$WORK" "$T" 3<"$FIFO" &
CHILD=$!
echo 1 > $T/events/syscalls/enable
echo 1 > $T/options/event-fork
echo stacktrace > $T/events/syscalls/sys_enter_getppid/trigger
echo $CHILD > $T/set_event_pid
echo 1 > $T/tracing_on
echo go > "$FIFO"
wait $CHILD
echo 0 > $T/tracing_on
rm -f "$FIFO" "$WORK"

psize=$(( $(cat $T/buffer_subbuf_size_kb) * 1024 ))
{
    echo "kernel: $(uname -r)"; echo "machine: $(uname -m)"; echo "ncpus: $NCPU"
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "trace_clock: $(cat $T/trace_clock)"; echo "timestamp_mode: $(cat $T/timestamp_mode)"
    echo "buffer_size_kb: $(cat $T/buffer_size_kb)"; echo "buffer_subbuf_size_kb: $(cat $T/buffer_subbuf_size_kb)"
    echo "subbuf_bytes: $psize"; echo "overwrite: $(cat $T/options/overwrite)"
    echo "set_event_pid: $(cat $T/set_event_pid | tr '\n' ' ')"; echo "event-fork: $(cat $T/options/event-fork)"
} > "$OUT/meta.txt"
cat $T/trace_options > "$OUT/trace_options"
cat $T/events/header_page > "$OUT/header_page"
cat $T/events/header_event > "$OUT/header_event"
cat $T/trace > "$OUT/trace.txt"
for c in $(seq 0 $((NCPU-1))); do cat $T/per_cpu/cpu$c/stats > "$OUT/cpu$c.stats"; done
cat $TOP/saved_cmdlines > "$OUT/saved_cmdlines"

# Formats: the syscall events the text shows, and ftrace's own events.
rm -rf "$OUT/formats"; mkdir -p "$OUT/formats/syscalls" "$OUT/formats/ftrace"
for e in print raw_data bprint bputs function kernel_stack user_stack func_repeats; do
    cat $T/events/ftrace/$e/format > "$OUT/formats/ftrace/$e.format"
done
for s in $(grep -oE ': sys_[a-z0-9_]+(\(| ->)' "$OUT/trace.txt" | sed -E 's/^: sys_//; s/(\(| ->)$//' | sort -u); do
    for d in enter exit; do
        cat $T/events/syscalls/sys_${d}_$s/format > "$OUT/formats/syscalls/sys_${d}_$s.format"
    done
done

# The raw pages (consumes the instance's buffer), one sub-buffer per read().
for c in $(seq 0 $((NCPU-1))); do
    n=$(python3 - $T/per_cpu/cpu$c/trace_pipe_raw "$OUT/cpu$c.raw" $psize <<'PY'
import errno, os, sys
path, out, psize = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
n = 0
with open(out, "wb") as f:
    while True:
        try:
            b = os.read(fd, psize)
        except OSError as e:
            if e.errno == errno.EAGAIN:
                break
            raise
        if not b:
            break
        f.write(b)
        n += 1
os.close(fd)
print(n)
PY
)
    echo "cpu${c}_subbufs_read: $n" >> "$OUT/meta.txt"
    [ -s "$OUT/cpu$c.raw" ] || rm -f "$OUT/cpu$c.raw"   # a CPU without events has no raw file
done

# A kallsyms subset: the symbols the text names, every alias at their
# addresses, the next higher address after each (the end of the symbol), and
# the bounds of the ranges the kernel resolves.
names=$( { grep -oE '^ => [A-Za-z0-9_.]+$' "$OUT/trace.txt" | sed 's/^ => //';
           grep -oE ' tracing_mark_write: ' "$OUT/trace.txt" | tr -d ' :';
           echo _stext; echo _etext; echo _sinittext; echo _einittext; } | sort -u)
python3 - "$OUT/kallsyms" $names <<'PY'
import sys
out, names = sys.argv[1], set(sys.argv[2:])
lines = open("/proc/kallsyms").read().splitlines()
core = [l for l in lines if "\t[" not in l]
addrs = sorted({int(l.split()[0], 16) for l in core})
want = {int(l.split()[0], 16) for l in core if l.split()[2] in names}
nxt = set()
for a in want:
    i = addrs.index(a)
    if i + 1 < len(addrs):
        nxt.add(addrs[i + 1])
keep = want | nxt
with open(out, "w") as f:
    for l in core:
        if int(l.split()[0], 16) in keep:
            f.write(l + "\n")
PY
echo "kallsyms_subset: $(wc -l < "$OUT/kallsyms") lines of /proc/kallsyms" >> "$OUT/meta.txt"
