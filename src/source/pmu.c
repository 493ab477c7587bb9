// SPDX-License-Identifier: MIT
/*
 * pmu.c - counter sets (tracebuf/pmu.h): open what the kernel allows, say
 * why it refuses the rest, read them cheaply.
 *
 * Software and hardware counters go in two groups, each read with one
 * read(2) (PERF_FORMAT_GROUP): a hardware counter the PMU cannot schedule
 * must not stop the software ones, which a shared group would do.  The
 * hardware group is read with rdpmc instead when every one of its
 * counters' mmap pages allows it and the reader is the counted thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf.h"
#include "tracebuf/pmu.h"

#define PROBLEM_MAX 320

enum { GROUP_SW, GROUP_HW, NGROUPS };

struct counter {
	enum tb_pmu_counter which;
	int fd;      /* -1: not counted */
	int group;   /* GROUP_SW / GROUP_HW */
	int slot;    /* its index in its group's read */
	struct perf_event_mmap_page *page; /* hardware counters with rdpmc, else NULL */
	char problem[PROBLEM_MAX];
};

struct group {
	int leader;  /* fd, -1 if empty */
	int members;
};

struct tb_pmu {
	unsigned n;
	unsigned rdpmc; /* counters readable with rdpmc */
	pid_t tid;      /* the counted thread */
	struct counter c[TB_PMU_NCOUNTERS];
	struct group g[NGROUPS];
	struct tb_evfield fields[TB_PMU_NCOUNTERS];
	char print_fmt[64 + TB_PMU_NCOUNTERS * 48];
	struct tb_evdesc desc;
};

/* ------------------------------------------------------------- opening */

static int open_counter(struct tb_pmu *p, struct counter *c, unsigned flags)
{
	struct perf_event_attr attr;
	struct group *g = &p->g[c->group];
	int fd;

	perf_attr(&attr, c->which, flags);
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = perf_open(&attr, 0, -1, g->leader);
	if (fd < 0) {
		perf_explain(c->which, -fd, flags, c->problem, sizeof(c->problem));
		return fd;
	}
	c->fd = fd;
	c->slot = g->members++;
	if (g->leader < 0)
		g->leader = fd;
	return 0;
}

/*
 * rdpmc for the hardware counters when every page allows it; the pages
 * stay mapped only then.
 */
static void map_for_rdpmc(struct tb_pmu *p)
{
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned usable = 0, hw = 0;

	for (unsigned i = 0; i < p->n; i++) {
		struct counter *c = &p->c[i];
		if (c->group != GROUP_HW || c->fd < 0)
			continue;
		hw++;
		c->page = mmap(NULL, (size_t)page_size, PROT_READ, MAP_SHARED, c->fd, 0);
		if (c->page == MAP_FAILED)
			c->page = NULL;
		else if (c->page->cap_user_rdpmc)
			usable++;
	}
	if (hw && usable == hw) {
		p->rdpmc = hw;
		return;
	}
	for (unsigned i = 0; i < p->n; i++)
		if (p->c[i].page) {
			munmap(p->c[i].page, (size_t)page_size);
			p->c[i].page = NULL;
		}
}

static void describe(struct tb_pmu *p)
{
	size_t used;

	tb_pmu_fields(p, 8, p->fields, TB_PMU_NCOUNTERS);
	used = (size_t)snprintf(p->print_fmt, sizeof(p->print_fmt), "\"");
	for (unsigned i = 0; i < p->n; i++)
		used += (size_t)snprintf(p->print_fmt + used, sizeof(p->print_fmt) - used, "%s%s=%%llu",
					 i ? " " : "", tb_pmu_counter_name(p->c[i].which));
	used += (size_t)snprintf(p->print_fmt + used, sizeof(p->print_fmt) - used, "\"");
	for (unsigned i = 0; i < p->n; i++)
		used += (size_t)snprintf(p->print_fmt + used, sizeof(p->print_fmt) - used, ", REC->%s",
					 tb_pmu_counter_name(p->c[i].which));
	p->desc = (struct tb_evdesc){
		.system = "tracebuf",
		.name = "pmu_counters",
		.size = (uint16_t)(8 + 8 * p->n),
		.nfields = p->n,
		.fields = p->fields,
		.print_fmt = p->print_fmt,
	};
}

int tb_pmu_open(struct tb_pmu **out, const enum tb_pmu_counter *list, unsigned n, unsigned flags)
{
	struct tb_pmu *p;
	unsigned missing = 0, seen = 0;

	*out = NULL;
	if (!list || n == 0 || n > TB_PMU_NCOUNTERS)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if ((unsigned)list[i] >= TB_PMU_NCOUNTERS || (seen & 1u << list[i]))
			return -EINVAL;
		seen |= 1u << list[i];
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->n = n;
	p->tid = gettid();
	for (int g = 0; g < NGROUPS; g++)
		p->g[g].leader = -1;
	for (unsigned i = 0; i < n; i++) {
		struct counter *c = &p->c[i];
		c->which = list[i];
		c->fd = -1;
		c->group = tb_pmu_counter_is_hardware(list[i]) ? GROUP_HW : GROUP_SW;
		missing += open_counter(p, c, flags) < 0;
	}
	map_for_rdpmc(p);
	describe(p);
	*out = p;
	return (int)missing;
}

void tb_pmu_close(struct tb_pmu *p)
{
	long page_size = sysconf(_SC_PAGESIZE);

	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++) {
		if (p->c[i].page)
			munmap(p->c[i].page, (size_t)page_size);
		if (p->c[i].fd >= 0)
			close(p->c[i].fd);
	}
	free(p);
}

unsigned tb_pmu_count(const struct tb_pmu *p)
{
	return p->n;
}

enum tb_pmu_counter tb_pmu_counter_at(const struct tb_pmu *p, unsigned i)
{
	return i < p->n ? p->c[i].which : TB_PMU_NCOUNTERS;
}

const char *tb_pmu_problem(const struct tb_pmu *p, unsigned i)
{
	return i < p->n && p->c[i].fd < 0 ? p->c[i].problem : NULL;
}

unsigned tb_pmu_rdpmc_count(const struct tb_pmu *p)
{
	return p->rdpmc;
}

/* -------------------------------------------------------------- reading */

/* One read(2) of a group: nr, time enabled, time running, then nr values. */
static int read_group(const struct group *g, uint64_t *values, unsigned room)
{
	uint64_t buf[3 + TB_PMU_NCOUNTERS];
	ssize_t got = read(g->leader, buf, sizeof(buf));

	if (got < 0)
		return -errno;
	if (got < (ssize_t)(3 * sizeof(uint64_t)) || buf[0] > room ||
	    (size_t)got < (3 + buf[0]) * sizeof(uint64_t))
		return -EIO;
	for (uint64_t i = 0; i < buf[0]; i++) {
		uint64_t v = buf[3 + i];
		/* Multiplexed: the kernel counted only part of the time; scale it up. */
		if (buf[2] && buf[2] < buf[1])
			v = (uint64_t)((unsigned __int128)v * buf[1] / buf[2]);
		values[i] = v;
	}
	return (int)buf[0];
}

#if defined(__x86_64__)
static uint64_t rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

/*
 * The count of a running hardware counter from its mmap page, under the
 * page's sequence lock (perf_event_mmap_page): offset plus the PMC, whose
 * width says how far to sign-extend it.  false when the counter is not on
 * the PMU now (index 0): then read(2) must do.
 */
static bool read_rdpmc(const struct perf_event_mmap_page *pc, uint64_t *value)
{
	uint32_t seq, index;
	uint64_t count;

	do {
		seq = pc->lock;
		atomic_signal_fence(memory_order_seq_cst);
		index = pc->index;
		count = (uint64_t)pc->offset;
		if (!index || !pc->cap_user_rdpmc)
			return false;
		uint64_t pmc = rdpmc(index - 1);
		unsigned shift = 64 - pc->pmc_width;
		count += (uint64_t)((int64_t)(pmc << shift) >> shift);
		atomic_signal_fence(memory_order_seq_cst);
	} while (pc->lock != seq);
	*value = count;
	return true;
}
#else
static bool read_rdpmc(const struct perf_event_mmap_page *pc, uint64_t *value)
{
	(void)pc;
	(void)value;
	return false;
}
#endif

static bool read_hw_rdpmc(struct tb_pmu *p, uint64_t *values)
{
	uint64_t v[TB_PMU_NCOUNTERS];

	if (!p->rdpmc || gettid() != p->tid)
		return false;
	for (unsigned i = 0; i < p->n; i++)
		if (p->c[i].page && !read_rdpmc(p->c[i].page, &v[i]))
			return false;
	for (unsigned i = 0; i < p->n; i++)
		if (p->c[i].page)
			values[i] = v[i];
	return true;
}

int tb_pmu_read(struct tb_pmu *p, uint64_t *values)
{
	uint64_t got[NGROUPS][TB_PMU_NCOUNTERS];
	bool hw_done;

	memset(values, 0, p->n * sizeof(*values));
	hw_done = read_hw_rdpmc(p, values);
	for (int g = 0; g < NGROUPS; g++) {
		if (p->g[g].leader < 0 || (g == GROUP_HW && hw_done))
			continue;
		int rc = read_group(&p->g[g], got[g], TB_PMU_NCOUNTERS);
		if (rc < 0)
			return rc;
		for (unsigned i = 0; i < p->n; i++)
			if (p->c[i].fd >= 0 && p->c[i].group == g && p->c[i].slot < rc)
				values[i] = got[g][p->c[i].slot];
	}
	return 0;
}

/* ---------------------------------------------------------- as events */

unsigned tb_pmu_fields(const struct tb_pmu *p, uint16_t offset, struct tb_evfield *fields, unsigned room)
{
	for (unsigned i = 0; i < p->n && i < room; i++)
		fields[i] = (struct tb_evfield){"u64", tb_pmu_counter_name(p->c[i].which),
						(uint16_t)(offset + 8 * i), 8, 0};
	return p->n;
}

const struct tb_evdesc *tb_pmu_event(const struct tb_pmu *p)
{
	return &p->desc;
}

int tb_pmu_write(struct tb_ring *ring, struct tb_pmu *p, uint16_t id)
{
	struct {
		struct tb_common_header hdr;
		uint64_t v[TB_PMU_NCOUNTERS];
	} rec = {.hdr = {.type = id ? id : TB_PMU_COUNTERS_ID, .pid = p->tid}};
	int rc = tb_pmu_read(p, rec.v);

	if (rc < 0)
		return rc;
	return tb_write(ring, &rec, (uint32_t)(sizeof(rec.hdr) + 8 * p->n));
}
