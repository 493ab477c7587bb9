/* SPDX-License-Identifier: MIT */
/*
 * perf.h - perf_event_open for the PMU source: the counters it knows, the
 * system call, and the reason for a refusal in words (tracebuf/pmu.h lists
 * the texts).  Internal to libtracebuf.
 */
#ifndef TRACEBUF_PERF_H
#define TRACEBUF_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracebuf/pmu.h"

#define TB_HIDDEN_PERF __attribute__((visibility("hidden")))

/* The attr type and config of a counter. */
struct perf_counter_kind {
	const char *name;
	uint32_t type;
	uint64_t config;
	/*
	 * Counted in kernel mode whatever the task does (a context switch, a
	 * migration): excluding the kernel would count nothing, so it is not.
	 */
	bool kernel_side;
};

TB_HIDDEN_PERF const struct perf_counter_kind *perf_kind(enum tb_pmu_counter c);

/* Fill attr for counter c: user space only unless TB_PMU_KERNEL. */
TB_HIDDEN_PERF void perf_attr(struct perf_event_attr *attr, enum tb_pmu_counter c, unsigned flags);

/* The file descriptor, or -errno. */
TB_HIDDEN_PERF int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);

/* Why counter c could not be opened (err a positive errno), as tracebuf/pmu.h words it. */
TB_HIDDEN_PERF void perf_explain(enum tb_pmu_counter c, int err, unsigned flags, char *buf, size_t size);

#endif
