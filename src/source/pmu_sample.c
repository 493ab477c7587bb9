// SPDX-License-Identifier: MIT
/*
 * pmu_sample.c - counter overflow samples as tracebuf events
 * (tracebuf/pmu.h).
 *
 * One sampling counter per CPU on the starting thread, inherited by the
 * threads it creates later, each with its perf ring buffer mapped (a
 * per-task counter that is inherited cannot be mapped without a CPU: all
 * children would write one buffer).  A reader thread, created before the
 * counters so that it is not sampled, waits in poll() on all of them and
 * drains each: PERF_RECORD_SAMPLE becomes a pmu_sample event,
 * PERF_RECORD_LOST a pmu_lost event.  The perf buffer protocol: load
 * data_head with acquire, read the records up to it, store data_tail with
 * release; a record may wrap around the buffer's end and is copied out
 * whole first.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"
#include "tracebuf/pmu.h"

/* What each sample holds, in the kernel's order for these bits. */
#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct sample_body {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t period;
};

struct lost_body {
	uint64_t id;
	uint64_t lost;
};

/* ------------------------------------------------------ descriptions */

static const struct tb_evfield sample_fields[] = {
	{"unsigned long", "ip", 8, 8, 0},
	{"u64", "time", 16, 8, 0},
	{"u64", "period", 24, 8, 0},
	{"int", "tgid", 32, 4, 1},
	{"int", "tid", 36, 4, 1},
	{"unsigned int", "cpu", 40, 4, 0},
	{"unsigned int", "counter", 44, 4, 0},
};

static const struct tb_evfield lost_fields[] = {
	{"u64", "lost", 8, 8, 0},
	{"unsigned int", "cpu", 16, 4, 0},
};

const struct tb_evdesc tb_pmu_sample_event = {
	.system = "tracebuf",
	.name = "pmu_sample",
	.size = sizeof(struct tb_pmu_sample),
	.nfields = sizeof(sample_fields) / sizeof(sample_fields[0]),
	.fields = sample_fields,
	.print_fmt = "\"ip=%ps tid=%d cpu=%u time=%llu period=%llu\", (void *)REC->ip, REC->tid, "
		     "REC->cpu, REC->time, REC->period",
};

const struct tb_evdesc tb_pmu_lost_event = {
	.system = "tracebuf",
	.name = "pmu_lost",
	.size = sizeof(struct tb_pmu_lost),
	.nfields = sizeof(lost_fields) / sizeof(lost_fields[0]),
	.fields = lost_fields,
	.print_fmt = "\"lost=%llu cpu=%u\", REC->lost, REC->cpu",
};

_Static_assert(sizeof(struct tb_pmu_sample) == 48, "pmu_sample layout");
_Static_assert(sizeof(struct tb_pmu_lost) == 24, "pmu_lost layout");

/* ------------------------------------------------------------- state */

struct cpu_buf {
	int fd;   /* -1: this CPU is not sampled (offline) */
	int cpu;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
};

struct tb_pmu_sampler {
	struct tb_ring *ring;
	struct tb_pmu_sampler_opts o;
	struct cpu_buf *cpus;
	int ncpus;
	size_t data_size, map_size;
	int wake[2];    /* the reader waits on [0]; start writes 1 to go, 0 to give up; stop closes [1] */
	pthread_t reader;
	/* The ring's clock from CLOCK_MONOTONIC/BOOTTIME ns. */
	enum tb_clock clock;
	double ticks_per_ns;
	struct tb_pmu_sampler_stats st;
	uint8_t scratch[65536]; /* one record copied out of the buffer when it wraps */
};

/* -------------------------------------------------------------- time */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC rate the ring uses when it converts to ns, as ticks per ns. */
static double ring_ticks_per_ns(struct tb_ring *ring)
{
	uint64_t base = tb_ring_clock_now(ring), span = 1ull << 32;
	uint64_t ns = tb_ring_to_ns(ring, base + span) - tb_ring_to_ns(ring, base);

	return ns ? (double)span / (double)ns : 1.0;
}

/* A (ring clock, CLOCK_MONOTONIC) pair read together: the TSC read on both sides. */
struct anchor {
	uint64_t raw, ns;
};

static struct anchor take_anchor(struct tb_pmu_sampler *s)
{
	uint64_t before = tb_ring_clock_now(s->ring), ns = mono_ns(), after = tb_ring_clock_now(s->ring);

	return (struct anchor){before + (after - before) / 2, ns};
}

/* A sample's perf time (ns of the perf clock) on the ring's clock. */
static uint64_t ring_time(const struct tb_pmu_sampler *s, const struct anchor *a, uint64_t t)
{
	if (s->clock != TB_CLOCK_TSC)
		return t; /* perf already used the ring's clock */
	return a->raw - (uint64_t)(int64_t)((double)(int64_t)(a->ns - t) * s->ticks_per_ns);
}

/* ------------------------------------------------------------ reader */

static void write_sample(struct tb_pmu_sampler *s, const struct anchor *a, const struct sample_body *b)
{
	struct tb_pmu_sample rec = {
		.hdr = {.type = s->o.sample_id, .pid = (int32_t)b->tid},
		.ip = b->ip,
		.time = ring_time(s, a, b->time),
		.period = b->period,
		.tgid = (int32_t)b->pid,
		.tid = (int32_t)b->tid,
		.cpu = b->cpu,
		.counter = (uint32_t)s->o.counter,
	};

	s->st.samples++;
	if (tb_write(s->ring, &rec, sizeof(rec)) == 0)
		s->st.written++;
}

static void write_lost(struct tb_pmu_sampler *s, int cpu, uint64_t lost)
{
	struct tb_pmu_lost rec = {
		.hdr = {.type = s->o.lost_id, .pid = 0},
		.lost = lost,
		.cpu = (uint32_t)cpu,
	};

	s->st.lost += lost;
	tb_write(s->ring, &rec, sizeof(rec));
}

static void handle(struct tb_pmu_sampler *s, struct cpu_buf *c, const struct anchor *a,
		   const struct perf_event_header *h)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t len = h->size - sizeof(*h);

	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct sample_body b;
		if (len != sizeof(b)) {
			s->st.malformed++;
			return;
		}
		memcpy(&b, body, sizeof(b));
		write_sample(s, a, &b);
		return;
	}
	case PERF_RECORD_LOST: {
		struct lost_body b;
		if (len < sizeof(b)) {
			s->st.malformed++;
			return;
		}
		memcpy(&b, body, sizeof(b));
		write_lost(s, c->cpu, b.lost);
		return;
	}
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		return;
	}
}

/* Everything the kernel has put in one CPU's buffer so far. */
static void drain(struct tb_pmu_sampler *s, struct cpu_buf *c)
{
	uint64_t head = __atomic_load_n(&c->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = c->meta->data_tail;
	struct anchor a = take_anchor(s);

	while (tail < head) {
		size_t at = (size_t)(tail % s->data_size);
		struct perf_event_header h;
		const struct perf_event_header *rec;

		/* The header itself may wrap: copy its 8 bytes piecewise. */
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = c->data[(at + i) % s->data_size];
		if (h.size < sizeof(h) || h.size > head - tail) {
			s->st.malformed++;
			tail = head; /* the buffer cannot be walked further */
			break;
		}
		if (at + h.size <= s->data_size) {
			rec = (const struct perf_event_header *)(c->data + at);
		} else {
			size_t first = s->data_size - at;
			memcpy(s->scratch, c->data + at, first);
			memcpy(s->scratch + first, c->data, h.size - first);
			rec = (const struct perf_event_header *)s->scratch;
		}
		handle(s, c, &a, rec);
		tail += h.size;
	}
	__atomic_store_n(&c->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct tb_pmu_sampler *s)
{
	for (int i = 0; i < s->ncpus; i++)
		if (s->cpus[i].fd >= 0)
			drain(s, &s->cpus[i]);
}

static void *reader_main(void *arg)
{
	struct tb_pmu_sampler *s = arg;
	struct pollfd *pfd = calloc((size_t)s->ncpus + 1, sizeof(*pfd));
	char go = 0;
	int n = 0;

	/* Wait for the counters (or for the start to give up). */
	while (read(s->wake[0], &go, 1) < 0 && errno == EINTR)
		;
	if (go != 1 || !pfd) {
		free(pfd);
		return NULL;
	}
	pfd[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
	for (int i = 0; i < s->ncpus; i++)
		if (s->cpus[i].fd >= 0)
			pfd[n++] = (struct pollfd){.fd = s->cpus[i].fd, .events = POLLIN};
	for (;;) {
		int rc = poll(pfd, (nfds_t)n, (int)s->o.drain_ms);
		drain_all(s);
		/* stop closed the other end: drained one last time above, after the counters stopped */
		if (rc > 0 && (pfd[0].revents & (POLLIN | POLLHUP)))
			break;
	}
	free(pfd);
	return NULL;
}

/* ------------------------------------------------------------ control */

static int open_cpu(struct tb_pmu_sampler *s, struct cpu_buf *c, pid_t tid, char *why, size_t why_size)
{
	struct perf_event_attr attr;
	int fd;

	perf_attr(&attr, s->o.counter, s->o.flags);
	attr.sample_type = SAMPLE_TYPE;
	if (s->o.period) {
		attr.sample_period = s->o.period;
	} else {
		attr.freq = 1;
		attr.sample_freq = s->o.freq;
	}
	attr.disabled = 1;
	attr.inherit = 1;
	attr.use_clockid = 1;
	attr.clockid = s->clock == TB_CLOCK_BOOT ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
	attr.wakeup_watermark = (uint32_t)(s->data_size / 2);
	attr.watermark = 1;
	fd = perf_open(&attr, tid, c->cpu, -1);
	if (fd == -ENODEV)
		return 0; /* an offline CPU */
	if (fd < 0) {
		if (why)
			perf_explain(s->o.counter, -fd, s->o.flags, why, why_size);
		return fd;
	}
	c->meta = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->meta == MAP_FAILED) {
		int err = errno;
		if (why)
			snprintf(why, why_size, "%s: cannot map the perf buffer of CPU %d (%zu bytes): %s",
				 tb_pmu_counter_name(s->o.counter), c->cpu, s->map_size, strerror(err));
		c->meta = NULL;
		close(fd);
		return -err;
	}
	c->data = (uint8_t *)c->meta + c->meta->data_offset;
	c->fd = fd;
	s->st.cpus++;
	return 0;
}

static void release(struct tb_pmu_sampler *s)
{
	for (int i = 0; s->cpus && i < s->ncpus; i++) {
		if (s->cpus[i].meta)
			munmap(s->cpus[i].meta, s->map_size);
		if (s->cpus[i].fd >= 0)
			close(s->cpus[i].fd);
	}
	free(s->cpus);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	free(s);
}

static int check_opts(struct tb_pmu_sampler *s, struct tb_ring *ring, char *why, size_t why_size)
{
	struct tb_pmu_sampler_opts *o = &s->o;
	long page = sysconf(_SC_PAGESIZE);

	s->clock = tb_ring_clock(ring);
	if (s->clock == TB_CLOCK_COUNTER) {
		snprintf(why, why_size, "the ring's clock is a counter, not a time: samples cannot be "
					"placed on its timeline");
		return -EINVAL;
	}
	if ((unsigned)o->counter >= TB_PMU_NCOUNTERS) {
		snprintf(why, why_size, "counter %d is not one of enum tb_pmu_counter", (int)o->counter);
		return -EINVAL;
	}
	o->freq = o->freq ? o->freq : 1000;
	o->pages = o->pages ? o->pages : 16;
	o->drain_ms = o->drain_ms ? o->drain_ms : 50;
	o->sample_id = o->sample_id ? o->sample_id : TB_PMU_SAMPLE_ID;
	o->lost_id = o->lost_id ? o->lost_id : TB_PMU_LOST_ID;
	if (o->pages & (o->pages - 1) || o->pages > 4096) {
		snprintf(why, why_size, "%u perf buffer pages: a power of two up to 4096, please", o->pages);
		return -EINVAL;
	}
	s->data_size = (size_t)o->pages * (size_t)page;
	s->map_size = s->data_size + (size_t)page;
	s->ticks_per_ns = s->clock == TB_CLOCK_TSC ? ring_ticks_per_ns(ring) : 1.0;
	return 0;
}

int tb_pmu_sampler_open(struct tb_pmu_sampler **out, struct tb_ring *ring,
			 const struct tb_pmu_sampler_opts *opts, char *why, size_t why_size)
{
	struct tb_pmu_sampler *s = calloc(1, sizeof(*s));
	char none[8];
	pid_t tid = gettid();
	int rc = 0, ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);

	*out = NULL;
	if (!why || !why_size) {
		why = none;
		why_size = sizeof(none);
	}
	why[0] = '\0';
	if (!s || !ring)
		return s ? (free(s), -EINVAL) : -ENOMEM;
	s->ring = ring;
	s->o = opts ? *opts : (struct tb_pmu_sampler_opts){0};
	s->wake[0] = s->wake[1] = -1;
	rc = check_opts(s, ring, why, why_size);
	if (rc == 0 && pipe2(s->wake, O_CLOEXEC) < 0)
		rc = -errno;
	s->ncpus = ncpus > 0 ? ncpus : 1;
	s->cpus = rc ? NULL : calloc((size_t)s->ncpus, sizeof(*s->cpus));
	if (rc == 0 && !s->cpus)
		rc = -ENOMEM;
	for (int i = 0; s->cpus && i < s->ncpus; i++)
		s->cpus[i] = (struct cpu_buf){.fd = -1, .cpu = i};
	/* The reader first: a thread created after the counters would inherit them. */
	if (rc == 0 && (rc = -pthread_create(&s->reader, NULL, reader_main, s)) != 0) {
		release(s);
		return rc;
	}
	for (int i = 0; rc == 0 && i < s->ncpus; i++)
		rc = open_cpu(s, &s->cpus[i], tid, why, why_size);
	if (rc == 0 && s->st.cpus == 0) {
		snprintf(why, why_size, "no CPU could be sampled");
		rc = -ENODEV;
	}
	for (int i = 0; rc == 0 && i < s->ncpus; i++)
		if (s->cpus[i].fd >= 0 && ioctl(s->cpus[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			rc = -errno;
	if (s->cpus) {
		char go = rc == 0;
		if (write(s->wake[1], &go, 1) != 1 && rc == 0)
			rc = -EIO;
		if (rc < 0) {
			pthread_join(s->reader, NULL);
			release(s);
			return rc;
		}
	} else {
		release(s);
		return rc;
	}
	*out = s;
	return 0;
}

void tb_pmu_sampler_close(struct tb_pmu_sampler *s, struct tb_pmu_sampler_stats *st)
{
	if (!s)
		return;
	for (int i = 0; i < s->ncpus; i++)
		if (s->cpus[i].fd >= 0)
			ioctl(s->cpus[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	/* The reader sees the hang-up, drains once more, and ends. */
	close(s->wake[1]);
	s->wake[1] = -1;
	pthread_join(s->reader, NULL);
	if (st)
		*st = s->st;
	release(s);
}
