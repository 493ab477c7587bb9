# offcpu_peer.awk - the pairing `tracebuf offcpu` does, over `trace-cmd report -t`
# text: a task's off-CPU time runs from the sched_switch taking it off a CPU to
# the one putting it back; the kernel_stack right after the switch (same CPU,
# same pid) is the stack it blocked in.  Prints folded stacks (comm;root;..;leaf
# MICROSECONDS), as `tracebuf offcpu` does.  For bench_offcpu only.
function ns_of(stamp,   parts, frac) {
	sub(/:$/, "", stamp)
	split(stamp, parts, ".")
	frac = substr(parts[2] "000000000", 1, 9)
	return parts[1] * 1000000000 + frac
}
function pid_of(task,   n, a) { n = split(task, a, ":"); return a[n] }
function comm_of(task) { sub(/:[0-9]+$/, "", task); return task }
function end_stack(   s, i) {
	if (stack_pid != "") {
		s = ""
		for (i = nframes; i >= 1; i--)
			s = s ";" frame[i]
		stk[stack_pid] = s
	}
	stack_pid = ""
	nframes = 0
}
/^=> / {
	if (stack_pid != "")
		frame[++nframes] = $2
	next
}
{
	end_stack()
	cpu = ""
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\[[0-9]+\]$/ && cpu == "") { cpu = $i; ts = ns_of($(i + 1)); ev = $(i + 2); at = i + 3; break }
	if (cpu == "")
		next
	if (ev == "sched_switch:") {
		prev = $at; state = $(at + 2); next_task = $(at + 4)
		pending[cpu] = ""
		p = pid_of(prev)
		if (p != 0 && state !~ /[XZ]/) {
			off[p] = ts; comm[p] = comm_of(prev); stk[p] = ""; pending[cpu] = p
		}
		n = pid_of(next_task)
		if (n in off) {
			sum[comm[n] stk[n]] += ts - off[n]
			delete off[n]
		}
	} else if (ev == "kernel_stack:") {
		common = $1; sub(/^.*-/, "", common)
		if (pending[cpu] == common)
			stack_pid = common
		pending[cpu] = ""
	} else {
		pending[cpu] = ""
	}
}
END {
	end_stack()
	for (k in sum) {
		us = int((sum[k] + 500) / 1000)
		if (us > 0)
			print k, us
	}
}
