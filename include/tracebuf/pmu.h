/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/pmu.h - the kernel's performance counters (perf_event_open) as
 * a source: counter values read cheaply and attached to events, and a
 * sampler that turns counter overflows into events on the ring's timeline.
 *
 * Counters.  Software counters (task-clock, context switches, page faults,
 * migrations) exist on every Linux kernel; hardware ones (cycles,
 * instructions, cache and branch events) only where the machine has a PMU
 * the kernel drives - often not in a virtual machine.  tb_pmu_open() opens
 * what it can and says, per counter, why the others are missing; the
 * counters that opened work whatever happened to the rest.  A set counts
 * the thread that opened it.  tb_pmu_read() reads the software counters
 * with one read(2) of their group and the hardware ones with rdpmc from
 * the counters' mmap pages when the kernel allows it (cap_user_rdpmc, and
 * the reading thread is the counted one), else with one read(2) of their
 * group, scaled when the kernel multiplexed them.
 *
 * Attaching counters to an event: make the counter values fields of it,
 * at some offset of its record,
 *
 *     struct my_event { struct tb_common_header hdr; uint32_t req, pad;
 *                       uint64_t counters[3]; };
 *     tb_pmu_fields(pmu, offsetof(struct my_event, counters), fields + 1, 3);
 *     ...
 *     tb_pmu_read(pmu, ev.counters);
 *     tb_write(ring, &ev, sizeof(ev));
 *
 * or write them as an event of their own with tb_pmu_write()
 * (tracebuf:pmu_counters, described by tb_pmu_event()).
 *
 * Sampling.  tb_pmu_sampler_open() opens one sampling counter per CPU on
 * the calling thread, inherited by the threads it creates afterwards, and a
 * reader thread (created first, so it is not sampled itself) that drains
 * the perf ring buffers and writes each sample as a tracebuf:pmu_sample
 * event: instruction pointer, thread, CPU, period, and the sample's time
 * converted to the ring's clock.  perf stamps samples with CLOCK_MONOTONIC
 * (use_clockid) for rings on the TSC or mono clock and CLOCK_BOOTTIME for
 * boot rings; for the TSC a fresh (TSC, CLOCK_MONOTONIC) pair read at each
 * drain anchors the conversion, so its error is the TSC rate's error over
 * the few milliseconds a sample waits, not over the run.  The record's own
 * time stamp is when it was written; the time field is when the sample
 * was taken.  Samples the kernel dropped (its buffer was full) come as
 * tracebuf:pmu_lost events with their count.
 *
 * Refusals.  Every failure of perf_event_open becomes a message that names
 * the counter and the reason (ERR is the errno's name, P the value of
 * /proc/sys/kernel/perf_event_paranoid):
 *
 *   "NAME: not counted: this machine has no hardware PMU the kernel can use
 *    (perf_event_open: ERR); virtual machines often have none"
 *   "NAME: refused by the kernel (perf_event_open: ERR): perf_event_paranoid
 *    is P and this process lacks CAP_PERFMON; " followed by
 *      P >= 3: "P >= 3 forbids perf_event_open to unprivileged processes"
 *      P = 2:  "2 = 2 allows user-space counting only: leave out
 *               TB_PMU_KERNEL or lower it to 1", or for the counters that
 *               exist only in kernel mode (context switches, migrations)
 *              "2 = 2 allows user-space counting only, and NAME happen in
 *               the kernel: lower it to 1"
 *   "NAME: refused by the kernel (perf_event_open: ERR): perf_event_paranoid
 *    is P and yet: a seccomp filter or a security module forbids
 *    perf_event_open" (a privileged process, or P <= 1)
 *   "NAME: not counted: perf_event_open does not exist here (ENOSYS): a
 *    kernel without CONFIG_PERF_EVENTS, or a filter that hides it"
 *   "NAME: not counted: out of file descriptors (ERR)"
 *   "NAME: not counted: the kernel rejected the counter's attributes (EINVAL)"
 *   "NAME: not counted: perf_event_open: ERR (strerror text)" otherwise.
 *
 * Ownership: tb_pmu_close() / tb_pmu_sampler_close() free their handles;
 * the strings and descriptions they lend live as long as the handle.
 * libc only.  Errors are negative errno values.
 */
#ifndef TRACEBUF_PMU_H
#define TRACEBUF_PMU_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/describe.h"
#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tb_pmu_counter {
	/* software: every kernel */
	TB_PMU_TASK_CLOCK = 0,   /* ns the thread ran */
	TB_PMU_CONTEXT_SWITCHES,
	TB_PMU_CPU_MIGRATIONS,
	TB_PMU_PAGE_FAULTS,
	TB_PMU_MINOR_FAULTS,
	TB_PMU_MAJOR_FAULTS,
	TB_PMU_CPU_CLOCK,        /* ns, per CPU clock (a sampling clock) */
	/* hardware: where the machine has a PMU */
	TB_PMU_CYCLES,
	TB_PMU_INSTRUCTIONS,
	TB_PMU_CACHE_REFERENCES,
	TB_PMU_CACHE_MISSES,
	TB_PMU_BRANCHES,
	TB_PMU_BRANCH_MISSES,
	TB_PMU_NCOUNTERS
};

/* "task_clock", "context_switches", ...: the field names; NULL if out of range. */
const char *tb_pmu_counter_name(enum tb_pmu_counter c);
/* Whether it is a hardware counter. */
int tb_pmu_counter_is_hardware(enum tb_pmu_counter c);

#define TB_PMU_KERNEL 1u /* count kernel mode too (perf_event_paranoid <= 1 or CAP_PERFMON) */

/* ------------------------------------------------------------ counters */

struct tb_pmu;

/*
 * Open n counters (at most TB_PMU_NCOUNTERS, no repeats) on the calling
 * thread.  Returns how many could NOT be opened (0: all; see
 * tb_pmu_problem()), or -EINVAL (bad list) / -ENOMEM with *out NULL.  The
 * set is usable even when some or all counters are missing: they read 0.
 */
int tb_pmu_open(struct tb_pmu **out, const enum tb_pmu_counter *list, unsigned n, unsigned flags);
void tb_pmu_close(struct tb_pmu *p);

unsigned tb_pmu_count(const struct tb_pmu *p);
enum tb_pmu_counter tb_pmu_counter_at(const struct tb_pmu *p, unsigned i);
/* Why counter i is not counted (the texts above), or NULL when it is. */
const char *tb_pmu_problem(const struct tb_pmu *p, unsigned i);
/* How many of the set's counters tb_pmu_read() reads with rdpmc (0 where not allowed). */
unsigned tb_pmu_rdpmc_count(const struct tb_pmu *p);

/* Read all n counters into values[0..n-1], in the set's order.  0 or -errno. */
int tb_pmu_read(struct tb_pmu *p, uint64_t *values);

/*
 * Field descriptions of the set's values as n consecutive u64 starting at
 * offset, named after the counters, into fields[0..room-1].  Returns n (the
 * fields needed), as many as fit are filled.
 */
unsigned tb_pmu_fields(const struct tb_pmu *p, uint16_t offset, struct tb_evfield *fields, unsigned room);

/* tracebuf:pmu_counters: the common header, then the set's values.  Owned by p. */
const struct tb_evdesc *tb_pmu_event(const struct tb_pmu *p);
#define TB_PMU_COUNTERS_ID 65296
/* Read the set and write it as a pmu_counters event with that ID (0: the default).  As tb_write. */
int tb_pmu_write(struct tb_ring *ring, struct tb_pmu *p, uint16_t id);

/* ------------------------------------------------------------ sampling */

struct tb_pmu_sample {
	struct tb_common_header hdr; /* pid: the sampled thread */
	uint64_t ip;                 /* instruction pointer at the overflow */
	uint64_t time;               /* when, on the ring's clock (raw) */
	uint64_t period;             /* events since the previous sample */
	int32_t tgid;                /* process */
	int32_t tid;                 /* thread */
	uint32_t cpu;                /* CPU it ran on */
	uint32_t counter;            /* enum tb_pmu_counter */
};

struct tb_pmu_lost {
	struct tb_common_header hdr;
	uint64_t lost;               /* samples the kernel could not store */
	uint32_t cpu;                /* whose perf buffer it was */
	uint32_t pad;
};

#define TB_PMU_SAMPLE_ID 65297
#define TB_PMU_LOST_ID 65298
extern const struct tb_evdesc tb_pmu_sample_event; /* tracebuf:pmu_sample */
extern const struct tb_evdesc tb_pmu_lost_event;   /* tracebuf:pmu_lost */

struct tb_pmu_sampler_opts {
	enum tb_pmu_counter counter; /* what overflows (TB_PMU_TASK_CLOCK is 0, the default) */
	uint64_t period;             /* counter events per sample (ns for the clocks); 0: use freq */
	unsigned freq;               /* samples per second when period is 0 (0: 1000) */
	unsigned flags;              /* TB_PMU_KERNEL: sample kernel code too */
	uint16_t sample_id, lost_id; /* 0: TB_PMU_SAMPLE_ID, TB_PMU_LOST_ID */
	unsigned pages;              /* perf buffer data pages per CPU, a power of two (0: 16) */
	unsigned drain_ms;           /* how often the reader drains at the latest (0: 50) */
};

struct tb_pmu_sampler_stats {
	uint64_t samples;   /* samples read */
	uint64_t written;   /* of which written to the ring (the rest it refused) */
	uint64_t lost;      /* samples the kernel reported lost */
	uint64_t throttled; /* times the kernel throttled the counter */
	uint64_t malformed; /* perf records of a size that was not expected (skipped) */
	unsigned cpus;      /* CPUs sampled */
};

struct tb_pmu_sampler;

/*
 * Start sampling the calling thread and the threads it creates from now
 * on.  0, or -errno with why (if not NULL) holding the reason: the
 * refusal texts above, or one about the ring (its clock is a counter, not
 * a time) or the options.
 */
int tb_pmu_sampler_open(struct tb_pmu_sampler **out, struct tb_ring *ring,
			 const struct tb_pmu_sampler_opts *opts, char *why, size_t why_size);
/* Stop, write what is left, join the reader, free.  st may be NULL. */
void tb_pmu_sampler_close(struct tb_pmu_sampler *s, struct tb_pmu_sampler_stats *st);

#ifdef __cplusplus
}
#endif
#endif
