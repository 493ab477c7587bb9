// SPDX-License-Identifier: MIT
/*
 * offcpu.c - sched_switch pairs into off-CPU intervals (tracebuf/offcpu.h).
 *
 * One pass over the merged records.  Per task: when it went off CPU, the
 * comm and stacks it went with, and when it was woken.  Per CPU: which
 * task the last sched_switch there took off, so the stack records the
 * trigger writes right after it (same CPU, same common_pid, nothing else
 * between) attach to that task.  A switch-in closes the task's interval
 * and adds it to the sum of its (comm, kernel stack, user stack).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "merge.h"
#include "offcpu_internal.h"
#include "tracebuf/offcpu.h"

#define COMM_LEN 16
/* The kernel's end-of-stack marker in kernel_stack records (ULONG_MAX). */
#define STACK_END UINT64_MAX

enum kind { K_OTHER = 0, K_SWITCH, K_WAKEUP, K_KSTACK, K_USTACK };

struct task {
	bool off;	/* switched out, not yet back */
	bool has_comm;	/* comm is set (kept between intervals: comms rarely change) */
	bool woken;	/* a wakeup came since */
	bool preempted; /* went off in state R */
	uint64_t off_ts, wake_ts;
	uint32_t comm, kstack, ustack;
};

/* A stack interned lately: its id and length (an id of its table, valid while the pairing runs). */
#define RECENT_STACKS 256
struct recent_stack {
	uint32_t id, n; /* n 0: empty */
};

struct cpu_state {
	int64_t pending; /* task index whose stacks may follow, -1 none */
	int32_t pending_pid;
};

struct pairing {
	struct tb_capture *capture;
	const struct tb_offcpu_opts *o;
	struct tb_offcpu_totals *t;
	struct offcpu_sums sums;
	struct pidmap pids; /* pid -> index into tasks */
	struct task *tasks;
	size_t tasks_cap;
	struct cpu_state *cpus;
	int ncpus;
	uint8_t kind[65536];
	/* sched_switch */
	struct field_at prev_comm, prev_pid, prev_state, next_pid;
	/* sched_wakeup / sched_waking */
	struct field_at wake_pid;
	/* kernel_stack / user_stack */
	struct field_at common_pid, kcaller, ksize, ucaller;
	int fatal;
	/* Stacks met lately, direct-mapped by a few of their words: their ids without hashing them whole. */
	struct recent_stack recent[RECENT_STACKS];
};

/* ------------------------------------------------------------ set-up */

static int find_events(struct pairing *p)
{
	struct tb_schema *s = tb_capture_schema(p->capture);
	const struct tb_format *sw = schema_find_by_name(s, "sched", "sched_switch");
	const struct tb_format *wk = schema_find_by_name(s, "sched", "sched_wakeup");
	const struct tb_format *ks = schema_find_by_name(s, "ftrace", "kernel_stack");
	const struct tb_format *us = schema_find_by_name(s, "ftrace", "user_stack");

	if (!wk)
		wk = schema_find_by_name(s, "sched", "sched_waking");
	if (!sw || !field_at_find(sw, "prev_comm", &p->prev_comm) ||
	    !field_at_find(sw, "prev_pid", &p->prev_pid) || !field_at_find(sw, "prev_state", &p->prev_state) ||
	    !field_at_find(sw, "next_pid", &p->next_pid))
		return -ENOENT;
	p->kind[sw->id] = K_SWITCH;
	field_at_find(sw, "common_pid", &p->common_pid);
	if (wk && field_at_find(wk, "pid", &p->wake_pid)) {
		p->kind[wk->id] = K_WAKEUP;
		p->t->have_wakeup = true;
	}
	if (ks && field_at_find(ks, "caller", &p->kcaller)) {
		field_at_find(ks, "size", &p->ksize);
		p->kind[ks->id] = K_KSTACK;
		p->t->have_kernel_stack = true;
	}
	if (us && field_at_find(us, "caller", &p->ucaller)) {
		p->kind[us->id] = K_USTACK;
		p->t->have_user_stack = true;
	}
	return 0;
}

/* The task record of pid, made on first sight; NULL when out of memory. */
static struct task *task_of(struct pairing *p, int32_t pid, int64_t *index)
{
	bool added;
	int64_t i = pidmap_known(&p->pids, pid);

	if (i >= 0) { /* seen before: its task record is there */
		if (index)
			*index = i;
		return &p->tasks[i];
	}
	if ((i = pidmap_add(&p->pids, pid, &added)) < 0)
		return NULL;
	if ((size_t)i >= p->tasks_cap) {
		struct task *tasks = intern_room(p->tasks, &p->tasks_cap, (size_t)i, sizeof(*tasks));
		if (!tasks)
			return NULL;
		p->tasks = tasks;
	}
	if (added)
		memset(&p->tasks[i], 0, sizeof(p->tasks[i]));
	if (index)
		*index = i;
	return &p->tasks[i];
}

/* ---------------------------------------------------------- intervals */

/* A sum's slot: the key's three ids mixed (murmur3's finalizer), no call. */
static size_t sum_slot_of(const struct offcpu_sums *s, struct sum_key k)
{
	uint64_t h = ((uint64_t)k.comm << 32 | k.kstack) ^ (uint64_t)k.ustack * 0x9e3779b97f4a7c15ull;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (size_t)h & (s->nslots - 1);
}

static bool same_sum_key(struct sum_key a, struct sum_key b)
{
	return a.comm == b.comm && a.kstack == b.kstack && a.ustack == b.ustack;
}

static int sums_grow(struct offcpu_sums *s)
{
	struct offcpu_sums bigger = {.nslots = s->nslots ? 2 * s->nslots : 1024};

	bigger.slots = calloc(bigger.nslots, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->nslots; i++) {
		if (!s->slots[i].used)
			continue;
		size_t j = sum_slot_of(&bigger, s->slots[i].key);
		while (bigger.slots[j].used)
			j = (j + 1) & (bigger.nslots - 1);
		bigger.slots[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = bigger.slots;
	s->nslots = bigger.nslots;
	return 0;
}

int sums_add(struct offcpu_sums *s, struct sum_key key, uint64_t ns)
{
	size_t i;

	if ((s->count + 1) * 2 > s->nslots && sums_grow(s) < 0)
		return -ENOMEM;
	for (i = sum_slot_of(s, key); s->slots[i].used; i = (i + 1) & (s->nslots - 1))
		if (same_sum_key(s->slots[i].key, key)) {
			s->slots[i].ns += ns;
			return 0;
		}
	s->slots[i] = (struct sum_slot){.key = key, .used = true, .ns = ns};
	s->count++;
	return 0;
}

static int add_sum(struct pairing *p, const struct task *tk, uint64_t ns)
{
	return sums_add(&p->sums, (struct sum_key){tk->comm, tk->kstack, tk->ustack}, ns);
}

/* The task is back on a CPU at ts: its interval is counted. */
static int close_interval(struct pairing *p, struct task *tk, uint64_t ts)
{
	uint64_t off = ts - tk->off_ts, counted = off;
	bool woke = tk->woken && tk->wake_ts >= tk->off_ts && tk->wake_ts <= ts;

	tk->off = false;
	if (ts < tk->off_ts) { /* no length: counted, its wrapped one would have broken every sum */
		p->t->backwards++;
		return 0;
	}
	if (p->o->no_preempted && tk->preempted)
		return 0;
	if (p->o->blocked_only) {
		if (tk->preempted)
			return 0;
		if (woke)
			counted = tk->wake_ts - tk->off_ts;
	}
	p->t->intervals++;
	p->t->kernel_stacks += tk->kstack != NO_STACK;
	p->t->user_stacks += tk->ustack != NO_STACK;
	p->t->preempted += tk->preempted;
	p->t->off_ns += off;
	if (woke) {
		p->t->woken++;
		p->t->blocked_ns += tk->wake_ts - tk->off_ts;
		p->t->runq_ns += ts - tk->wake_ts;
	}
	return add_sum(p, tk, counted);
}

/*
 * A task switched out while it was off CPU: the switch that put it back on
 * is not in the trace (some kernels leave out the idle task's switches on
 * a CPU).  It ran at the latest now; woken, it was off until about its
 * wakeup, which ends the interval (the wait for a CPU unknown); never
 * woken, its interval has no known end and is dropped.  Both are counted.
 */
static int missed_switch_in(struct pairing *p, struct task *tk)
{
	if (!tk->off)
		return 0;
	if (tk->woken && tk->wake_ts >= tk->off_ts) {
		p->t->inferred++;
		return close_interval(p, tk, tk->wake_ts);
	}
	p->t->dropped++;
	tk->off = false;
	return 0;
}

/* prev_state bits of a task that has exited: EXIT_DEAD (X) and EXIT_ZOMBIE (Z). */
#define TASK_GONE 0x30

/* prev_state without the preemption bit (TASK_REPORT_MAX) and above: 0 is R, running. */
static bool state_is_running(int64_t state)
{
	return (state & 0xff) == 0;
}

/* Whether two 16-byte comm arrays are the same: two loads each, no call. */
static bool same_comm(const void *a, const void *b)
{
	uint64_t x[2], y[2];

	memcpy(x, a, COMM_LEN);
	memcpy(y, b, COMM_LEN);
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* The comm's id: the task's last one when unchanged (no hashing), else interned. */
static int64_t comm_id(struct pairing *p, const struct task *tk, const char *comm)
{
	uint32_t len;
	bool added;

	if (tk->has_comm && same_comm(intern_key(&p->sums.comms, tk->comm, &len), comm))
		return tk->comm;
	return intern_add(&p->sums.comms, comm, COMM_LEN, &added);
}

/*
 * prev_comm's 16 bytes: in the record itself when the field has the
 * kernel's size, else copied into buf, zero-padded.  Bytes after the NUL
 * may differ between records of one comm: the sums then keep two ids, and
 * their lines, named up to the NUL, are merged by text (offcpu_fold.c).
 */
static const char *comm_bytes(const struct pairing *p, const struct merged_record *r, char buf[COMM_LEN])
{
	const struct field_at *f = &p->prev_comm;
	char tmp[COMM_LEN + 1];

	if (f->size == COMM_LEN && f->offset <= r->len && r->len - f->offset >= COMM_LEN)
		return (const char *)r->data + f->offset;
	memset(buf, 0, COMM_LEN);
	if (field_str(f, r->data, r->len, tmp, sizeof(tmp)) < 0)
		return NULL;
	memcpy(buf, tmp, strlen(tmp));
	return buf;
}

/* The task taken off the CPU: its interval begins (the idle task and exiting tasks excepted). */
static int switch_out(struct pairing *p, const struct merged_record *r, int32_t prev, int64_t state,
		      const char *comm)
{
	struct cpu_state *cs = &p->cpus[r->cpu];
	struct task *tk;
	int64_t idx, c;
	int rc;

	if (!(tk = task_of(p, prev, &idx)))
		return -ENOMEM;
	if ((rc = missed_switch_in(p, tk)) < 0)
		return rc;
	/* A task leaving dead (X) or a zombie (Z) is gone, not off CPU. */
	if ((state & TASK_GONE) || (p->o->comm && strncmp(comm, p->o->comm, COMM_LEN - 1)))
		return 0;
	if ((c = comm_id(p, tk, comm)) < 0)
		return -ENOMEM;
	*tk = (struct task){.off = true, .has_comm = true, .off_ts = r->ts, .comm = (uint32_t)c,
			    .preempted = state_is_running(state), .kstack = NO_STACK, .ustack = NO_STACK};
	cs->pending = idx;
	cs->pending_pid = prev;
	return 0;
}

static int on_switch(struct pairing *p, const struct merged_record *r)
{
	int64_t prev, next, state;
	char buf[COMM_LEN];
	const char *comm;
	struct task *tk;
	int rc;

	p->cpus[r->cpu].pending = -1;
	p->t->switches++;
	if (!field_int(&p->prev_pid, r->data, r->len, &prev) || !field_int(&p->next_pid, r->data, r->len, &next) ||
	    !field_int(&p->prev_state, r->data, r->len, &state) || !(comm = comm_bytes(p, r, buf)))
		return 0; /* a short record: nothing to pair */
	if (prev != 0 && (rc = switch_out(p, r, (int32_t)prev, state, comm)) < 0)
		return rc;
	if (next != 0) {
		if (!(tk = task_of(p, (int32_t)next, NULL)))
			return -ENOMEM;
		if (tk->off)
			return close_interval(p, tk, r->ts);
	}
	return 0;
}

static int on_wakeup(struct pairing *p, const struct merged_record *r)
{
	int64_t pid;
	struct task *tk;

	p->cpus[r->cpu].pending = -1;
	if (!field_int(&p->wake_pid, r->data, r->len, &pid) || pid == 0)
		return 0;
	if (!(tk = task_of(p, (int32_t)pid, NULL)))
		return -ENOMEM;
	if (tk->off && !tk->woken) {
		tk->woken = true;
		tk->wake_ts = r->ts;
	}
	return 0;
}

/*
 * The id of the stack of n addresses at at (as the record holds them:
 * little endian, as offcpu_fold.c reads them back); -1 out of memory.
 * A blocked task's stack is mostly one met before: a recent one whose
 * length and leaf, middle and root words match is compared whole, and
 * only a stack not among them is hashed whole and interned.
 */
static int64_t stack_id(struct pairing *p, const uint8_t *at, uint32_t n)
{
	uint64_t leaf, mid, root, h;
	struct recent_stack *rs;
	uint32_t len;
	bool added;

	memcpy(&leaf, at, 8);
	memcpy(&mid, at + 8 * (n / 2), 8);
	memcpy(&root, at + 8 * (n - 1), 8);
	h = (leaf ^ (mid * 0x9e3779b97f4a7c15ull) ^ (root * 0xff51afd7ed558ccdull)) + n;
	rs = &p->recent[(h ^ h >> 29 ^ h >> 47) % RECENT_STACKS];
	if (rs->n == n && !memcmp(intern_key(&p->sums.stacks, rs->id, &len), at, 8 * (size_t)n))
		return rs->id;
	int64_t id = intern_add(&p->sums.stacks, at, n * 8, &added);
	if (id >= 0)
		*rs = (struct recent_stack){(uint32_t)id, n};
	return id;
}

/*
 * A stack record right after the switch that took its task off this CPU
 * (same pid, nothing else between): the stack that task blocked in.
 * Kernel stacks end at ULONG_MAX or the record's end, user stacks at 0.
 */
static int on_stack(struct pairing *p, const struct merged_record *r, bool kernel)
{
	struct cpu_state *cs = &p->cpus[r->cpu];
	const struct field_at *caller = kernel ? &p->kcaller : &p->ucaller;
	int64_t pid, size, limit = STACK_MAX;
	uint32_t n = 0;
	struct task *tk;

	if (cs->pending < 0 || !field_int(&p->common_pid, r->data, r->len, &pid) || pid != cs->pending_pid)
		return cs->pending = -1, 0;
	tk = &p->tasks[cs->pending];
	/* kernel_stack's size: the number of entries the kernel stored. */
	if (kernel && field_int(&p->ksize, r->data, r->len, &size) && size > 0 && size < STACK_MAX)
		limit = size;
	uint64_t end = kernel ? STACK_END : 0, room = caller->offset <= r->len ? (r->len - caller->offset) / 8 : 0;
	const uint8_t *at = r->data + caller->offset;
	if (room < (uint64_t)limit)
		limit = (int64_t)room;
	for (; n < limit; n++) {
		uint64_t a;
		memcpy(&a, at + 8 * n, 8);
		if (a == end)
			break;
	}
	if (n == 0)
		return 0;
	int64_t id = stack_id(p, at, n);
	if (id < 0)
		return -ENOMEM;
	if (kernel && tk->kstack == NO_STACK)
		tk->kstack = (uint32_t)id;
	else if (!kernel && tk->ustack == NO_STACK)
		tk->ustack = (uint32_t)id;
	return 0;
}

static int feed(struct pairing *p, const struct merged_record *r)
{
	switch (p->kind[r->id]) {
	case K_SWITCH:
		return on_switch(p, r);
	case K_WAKEUP:
		return on_wakeup(p, r);
	case K_KSTACK:
		return on_stack(p, r, true);
	case K_USTACK:
		return on_stack(p, r, false);
	default:
		p->cpus[r->cpu].pending = -1;
		return 0;
	}
}

/* ------------------------------------------------------------- run */

static int pair_all(struct pairing *p)
{
	struct merge m;
	struct merged_record r;
	int rc = merge_open(&m, p->capture);

	if (rc < 0)
		return rc;
	while (rc == 0 && merge_next(&m, &r) == 1)
		rc = feed(p, &r);
	if (rc == 0)
		rc = m.fatal;
	p->t->records = m.records;
	p->t->lost_pages = m.lost_pages;
	p->t->bad_pages = m.bad_pages;
	merge_close(&m);
	for (size_t i = 0; i < p->pids.count; i++)
		p->t->open_at_end += p->tasks[i].off;
	return rc;
}

static void pairing_free(struct pairing *p)
{
	intern_free(&p->sums.comms);
	intern_free(&p->sums.stacks);
	free(p->sums.slots);
	pidmap_free(&p->pids);
	free(p->tasks);
	free(p->cpus);
	free(p);
}

int tb_offcpu_run(struct tb_capture *c, const struct tb_offcpu_opts *opts, struct tb_offcpu **out,
		  struct tb_offcpu_totals *totals)
{
	static const struct tb_offcpu_opts defaults;
	struct tb_offcpu_totals scratch;
	struct pairing *p;
	struct tb_offcpu *r;
	int rc;

	if (!c || !out)
		return -EINVAL;
	*out = NULL;
	if (!totals)
		totals = &scratch;
	memset(totals, 0, sizeof(*totals));
	p = calloc(1, sizeof(*p));
	r = calloc(1, sizeof(*r));
	int ncpus = tb_capture_cpu_slots(c);
	if (p)
		p->cpus = calloc(ncpus > 0 ? (size_t)ncpus : 1, sizeof(*p->cpus));
	if (!p || !r || !p->cpus) {
		if (p)
			pairing_free(p);
		free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < ncpus; i++)
		p->cpus[i].pending = -1;
	p->capture = c;
	p->o = opts ? opts : &defaults;
	p->t = totals;
	rc = find_events(p);
	if (rc == 0 && p->o->blocked_only && !totals->have_wakeup)
		rc = -EINVAL;
	if (rc == 0)
		rc = pair_all(p);
	if (rc == 0)
		rc = offcpu_fold(&p->sums, tb_capture_schema(c), r);
	pairing_free(p);
	if (rc < 0) {
		tb_offcpu_free(r);
		return rc;
	}
	*out = r;
	return 0;
}
