#!/usr/bin/env python3
"""Check a tracebuf Chrome/Perfetto JSON export against the same capture's
`tracebuf report` text (kernel layout) and function graph, parsed here on
their own: the counts and durations must agree.

usage: chrome_check.py sched  FILE.json REPORT.txt
       chrome_check.py demo   FILE.json REPORT.txt GRAPH.txt
Prints TAP lines (numbering from $TAP_FROM, default 1) and the next number
on the last line as '# next N'."""
import collections
import json
import re
import sys

CPU_PID = 10000000
n = int(__import__("os").environ.get("TAP_FROM", "1"))
failed = False


def check(cond, what):
    global n, failed
    print(("ok" if cond else "not ok") + " %d - %s" % (n, what))
    n += 1
    failed |= not cond


# TASK-PID [CPU] FLAGS SECONDS.MICROS: TEXT; the event's name is TEXT up to ": " (syscall exits have none).
EVENT = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\] \S+\s+(\d+)\.(\d+): (.*)$")


def report_events(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = EVENT.match(line)
            if m:
                us = int(m.group(4)) * 1000000 + int(m.group(5).ljust(6, "0")[:6])
                name, _, rest = m.group(6).partition(": ")
                out.append((int(m.group(3)), us, name, rest))
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)  # raises on invalid JSON: the test fails
    return d["traceEvents"]


def sched(js, report):
    ev = load(js)
    check(True, "the JSON parses (%d events)" % len(ev))
    rep = report_events(report)
    switch = re.compile(r"prev_comm=.* prev_pid=(\d+) .* ==> next_comm=.* next_pid=(\d+) ")
    by_cpu = collections.defaultdict(list)
    for cpu, us, name, rest in rep:
        if name == "sched_switch":
            m = switch.search(rest + " ")
            by_cpu[cpu].append((us, int(m.group(1)), int(m.group(2))))
    want = collections.defaultdict(list)
    for cpu, sw in by_cpu.items():
        for a, b in zip(sw, sw[1:]):
            if a[2] == b[1] and a[2] != 0:
                want[cpu].append((a[0], b[0] - a[0]))
    got = collections.defaultdict(list)
    for e in ev:
        if e["ph"] == "X" and e["pid"] == CPU_PID:
            got[e["tid"]].append((e["ts"], e["dur"]))
    total_want = sum(len(v) for v in want.values())
    total_got = sum(len(v) for v in got.values())
    check(total_want > 0 and total_got == total_want,
          "CPU slices: %d in the JSON, %d from the report's switches" % (total_got, total_want))
    worst = 0.0
    for cpu in want:
        g = sorted(got[cpu])
        for (wts, wdur), (gts, gdur) in zip(want[cpu], g):
            worst = max(worst, abs(gdur - wdur), abs(gts - wts))
    check(worst < 1.0, "each slice's start and length within 1 us of the report's (worst %.3f us)" % worst)
    running = [e for e in ev if e["ph"] == "X" and e["name"] == "running"]
    check(len(running) == total_want, "a 'running' slice on the task's track for each (%d)" % len(running))
    others = sum(1 for r in rep if r[2] != "sched_switch")
    inst = sum(1 for e in ev if e["ph"] == "i")
    check(inst == others, "instants: %d, the report's other events: %d" % (inst, others))
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tracks = {e["pid"] for e in ev if e["ph"] in "Xi" and e["pid"] != CPU_PID}
    check(tracks <= set(names), "every task track is named by metadata (%d tracks)" % len(tracks))


def demo(js, report, graph):
    ev = load(js)
    check(True, "the JSON parses (%d events)" % len(ev))
    rep = report_events(report)
    kinds = collections.Counter(r[2] for r in rep)
    durs = []
    names = set()
    with open(graph, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"\)\s+[+!#*@$]?\s*(\d+\.\d+) us\s+\|", line)
            if m:
                durs.append(m.group(1))
            m = re.search(r"\|\s+(\w+)\(\)", line)
            if m:
                names.add(m.group(1))
    calls = [e for e in ev if e["ph"] == "X" and e.get("cat") == "func"]
    check(len(calls) == kinds["funcgraph_exit"] and len(calls) > 0,
          "calls: %d X events, %d funcgraph_exit records" % (len(calls), kinds["funcgraph_exit"]))
    # The graph keeps 7 digits: 44271.75 us for a long call, so compare to within its last digit.
    # (a duration cut to the digits it shows is within one unit of its last digit of the exact one).
    got = sorted(e["dur"] for e in calls)
    want = sorted((float(d), 10.0 ** -len(d.partition(".")[2])) for d in durs)
    bad = [(a, b) for a, (b, unit) in zip(got, want) if abs(a - b) > unit + 1e-9]
    check(len(want) == len(got) and not bad,
          "call durations are the function graph's (%d durations; off: %s)" % (len(want), bad[:3]))
    check({e["name"] for e in calls} == names, "call names are the graph's: %s" % ", ".join(sorted(names)))
    counters = [e for e in ev if e["ph"] == "C" and e["name"] == "pmu_counters"]
    check(len(counters) == kinds["pmu_counters"] and len(counters) > 0,
          "pmu_counters: %d C events, %d records" % (len(counters), kinds["pmu_counters"]))
    vals = sorted(int(re.search(r"task_clock=(\d+)", r[3]).group(1)) for r in rep if r[2] == "pmu_counters")
    check(sorted(e["args"]["task_clock"] for e in counters) == vals, "their task_clock values are the report's")
    samples = sum(1 for e in ev if e["ph"] == "C" and e["name"] == "pmu_sample periods")
    check(samples == kinds["pmu_sample"], "a periods counter per pmu_sample (%d)" % samples)
    skip = {"funcgraph_entry", "funcgraph_exit", "pmu_counters"}
    want_i = sum(c for k, c in kinds.items() if k not in skip)
    # a blob reference is a "CPU:N [BLOB: ...]" line in the report and a "blob" instant here
    with open(report, encoding="utf-8", errors="replace") as f:
        blobs = sum(1 for line in f if re.match(r"CPU:\d+ \[BLOB( LOST)?: ", line))
    want_i += blobs
    inst = sum(1 for e in ev if e["ph"] == "i")
    check(sum(1 for e in ev if e["ph"] == "i" and e["name"] == "blob") == blobs,
          "a blob instant per blob line in the report (%d)" % blobs)
    check(inst == want_i, "instants: %d, other records in the report: %d" % (inst, want_i))


if sys.argv[1] == "sched":
    sched(sys.argv[2], sys.argv[3])
else:
    demo(sys.argv[2], sys.argv[3], sys.argv[4])
print("# next %d" % n)
sys.exit(1 if failed else 0)
