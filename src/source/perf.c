// SPDX-License-Identifier: MIT
/*
 * perf.c - perf_event_open and its refusals in words (tracebuf/pmu.h).
 *
 * A refusal is explained from what decides it: the errno, the counter's
 * kind (a hardware counter needs a PMU), perf_event_paranoid, and whether
 * the process has CAP_PERFMON or CAP_SYS_ADMIN (which override it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

static const struct perf_counter_kind kinds[TB_PMU_NCOUNTERS] = {
	[TB_PMU_TASK_CLOCK] = {"task_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
	[TB_PMU_CONTEXT_SWITCHES] = {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true},
	[TB_PMU_CPU_MIGRATIONS] = {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true},
	[TB_PMU_PAGE_FAULTS] = {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false},
	[TB_PMU_MINOR_FAULTS] = {"minor_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
	[TB_PMU_MAJOR_FAULTS] = {"major_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false},
	[TB_PMU_CPU_CLOCK] = {"cpu_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false},
	[TB_PMU_CYCLES] = {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false},
	[TB_PMU_INSTRUCTIONS] = {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false},
	[TB_PMU_CACHE_REFERENCES] = {"cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false},
	[TB_PMU_CACHE_MISSES] = {"cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false},
	[TB_PMU_BRANCHES] = {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false},
	[TB_PMU_BRANCH_MISSES] = {"branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false},
};

const struct perf_counter_kind *perf_kind(enum tb_pmu_counter c)
{
	return (unsigned)c < TB_PMU_NCOUNTERS ? &kinds[c] : NULL;
}

const char *tb_pmu_counter_name(enum tb_pmu_counter c)
{
	return (unsigned)c < TB_PMU_NCOUNTERS ? kinds[c].name : NULL;
}

int tb_pmu_counter_is_hardware(enum tb_pmu_counter c)
{
	return (unsigned)c < TB_PMU_NCOUNTERS && kinds[c].type == PERF_TYPE_HARDWARE;
}

void perf_attr(struct perf_event_attr *attr, enum tb_pmu_counter c, unsigned flags)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = kinds[c].type;
	attr->config = kinds[c].config;
	attr->exclude_kernel = !(flags & TB_PMU_KERNEL) && !kinds[c].kernel_side;
	attr->exclude_hv = 1;
}

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

/* /proc/sys/kernel/perf_event_paranoid, or -100 when it cannot be read. */
static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = -100;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = -100;
		fclose(f);
	}
	return level;
}

/* CAP_PERFMON or CAP_SYS_ADMIN in the effective set (/proc/self/status CapEff). */
static bool privileged(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long caps = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (f)
		fclose(f);
	return caps & (1ull << CAP_PERFMON_BIT | 1ull << CAP_SYS_ADMIN_BIT);
}

static const char *errno_name(int err)
{
	switch (err) {
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODEV: return "ENODEV";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	default: return "error";
	}
}

static void explain_denied(enum tb_pmu_counter c, int err, unsigned flags, char *buf, size_t size)
{
	const char *name = kinds[c].name;
	int level = paranoid_level();

	if (privileged() || level <= 1)
		snprintf(buf, size,
			 "%s: refused by the kernel (perf_event_open: %s): perf_event_paranoid is %d "
			 "and yet: a seccomp filter or a security module forbids perf_event_open",
			 name, errno_name(err), level);
	else if (level >= 3)
		snprintf(buf, size,
			 "%s: refused by the kernel (perf_event_open: %s): perf_event_paranoid is %d "
			 "and this process lacks CAP_PERFMON; %d >= 3 forbids perf_event_open to "
			 "unprivileged processes",
			 name, errno_name(err), level, level);
	else if (kinds[c].kernel_side && !(flags & TB_PMU_KERNEL))
		snprintf(buf, size,
			 "%s: refused by the kernel (perf_event_open: %s): perf_event_paranoid is %d "
			 "and this process lacks CAP_PERFMON; %d = 2 allows user-space counting only, "
			 "and %s happen in the kernel: lower it to 1",
			 name, errno_name(err), level, level, name);
	else
		snprintf(buf, size,
			 "%s: refused by the kernel (perf_event_open: %s): perf_event_paranoid is %d "
			 "and this process lacks CAP_PERFMON; %d = 2 allows user-space counting only: "
			 "leave out TB_PMU_KERNEL or lower it to 1%s",
			 name, errno_name(err), level, level,
			 flags & TB_PMU_KERNEL ? "" : " (this request counted user space only: a "
						      "seccomp filter may forbid it too)");
}

void perf_explain(enum tb_pmu_counter c, int err, unsigned flags, char *buf, size_t size)
{
	const char *name = tb_pmu_counter_name(c) ? tb_pmu_counter_name(c) : "?";

	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (tb_pmu_counter_is_hardware(c)) {
			snprintf(buf, size,
				 "%s: not counted: this machine has no hardware PMU the kernel can use "
				 "(perf_event_open: %s); virtual machines often have none",
				 name, errno_name(err));
			return;
		}
		break;
	case EACCES:
	case EPERM:
		explain_denied(c, err, flags, buf, size);
		return;
	case ENOSYS:
		snprintf(buf, size,
			 "%s: not counted: perf_event_open does not exist here (ENOSYS): a kernel "
			 "without CONFIG_PERF_EVENTS, or a filter that hides it",
			 name);
		return;
	case EMFILE:
	case ENFILE:
		snprintf(buf, size, "%s: not counted: out of file descriptors (%s)", name, errno_name(err));
		return;
	case EINVAL:
		snprintf(buf, size, "%s: not counted: the kernel rejected the counter's attributes (EINVAL)",
			 name);
		return;
	}
	snprintf(buf, size, "%s: not counted: perf_event_open: %s (%s)", name, errno_name(err),
		 strerror(err));
}
