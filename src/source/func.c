// SPDX-License-Identifier: MIT
/*
 * func.c - function entry and exit records from -finstrument-functions
 * hooks (tracebuf/func.h).
 *
 * Each thread keeps a shadow stack of its open calls: the function, when
 * it was entered and at which recorded depth.  The exit hook pops it, so
 * the exit record carries the entry's time, as the kernel's funcgraph_exit
 * carries calltime.  A call that is not recorded (excluded, too deep,
 * beneath an excluded subtree) is still pushed, so that exits keep
 * matching their entries and depths stay those of the recorded calls.
 *
 * The hooks run in any context the program's code does, signal handlers
 * included: they allocate nothing, take no lock and touch only their
 * thread's state and the ring.  A per-thread busy flag, set first and
 * cleared last, makes any hook that arrives while the thread is already in
 * one (a handler that interrupted it, or an instrumented build of
 * the ring itself) return at once: the tracer never records itself.
 *
 * Starting and stopping publish one pointer (the ring); a session key,
 * bumped at each start, tells a thread that its stack belongs to an
 * earlier session and must be forgotten.  Each hook takes the common call
 * on a fast path that one word of the thread's state allows (below).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "func_internal.h"
#include "tracebuf/func.h"
#include "tracebuf/schema.h"

/* ------------------------------------------------------ descriptions */

static const struct tb_evfield entry_fields[] = {
	{"unsigned long", "func", 8, 8, 0},
	{"unsigned int", "depth", 16, 4, 0},
	{"unsigned long", "parent_ip", 24, 8, 0},
};

static const struct tb_evfield exit_fields[] = {
	{"unsigned long", "func", 8, 8, 0},
	{"unsigned int", "depth", 16, 4, 0},
	{"unsigned int", "overrun", 20, 4, 0},
	{"unsigned long long", "calltime", 24, 8, 0},
	{"unsigned long long", "rettime", 32, 8, 0},
};

const struct tb_evdesc tb_func_entry_event = {
	.system = "tracebuf",
	.name = "funcgraph_entry",
	.size = sizeof(struct tb_func_entry),
	.nfields = sizeof(entry_fields) / sizeof(entry_fields[0]),
	.fields = entry_fields,
	.print_fmt = "\"--> %ps (%u) <- %ps\", (void *)REC->func, REC->depth, (void *)REC->parent_ip",
};

const struct tb_evdesc tb_func_exit_event = {
	.system = "tracebuf",
	.name = "funcgraph_exit",
	.size = sizeof(struct tb_func_exit),
	.nfields = sizeof(exit_fields) / sizeof(exit_fields[0]),
	.fields = exit_fields,
	.print_fmt = "\"<-- %ps (%u) (start: %llx  end: %llx) over: %u\", (void *)REC->func, "
		     "REC->depth, REC->calltime, REC->rettime, REC->overrun",
};

_Static_assert(sizeof(struct tb_func_entry) == 32, "funcgraph_entry layout");
_Static_assert(sizeof(struct tb_func_exit) == 40, "funcgraph_exit layout");

/* ------------------------------------------------------------- state */

enum {
	FRAME_RECORDED = 1, /* an entry record was written */
	FRAME_PRUNES = 2,   /* EXCL_CHILDREN: calls beneath it are not recorded */
};

struct frame {
	uint64_t fn;
	uint64_t calltime;
	uint32_t rdepth; /* the depth its records carry */
	uint32_t flags;  /* FRAME_* */
};

/*
 * state: the session's key (g.key) while the next hook may take the fast
 * path, 0 while it may not; STATE_BUSY added while a hook runs.  Folding
 * the busy flag, the session check and the thread's rare conditions (no
 * thread id yet, a pruned subtree open, calls past the stack's capacity)
 * into one word makes them one comparison a hook: a u64 tracepoint does
 * none of this, and each test was instructions beside the record's rdtsc.
 */
#define STATE_BUSY 1u

struct func_thread {
	uint32_t state;    /* see above */
	uint32_t gen;      /* the session this stack belongs to */
	int32_t tid;       /* 0 until first needed */
	uint32_t top;      /* frames on the stack */
	uint32_t rdepth;   /* recorded frames on the stack */
	uint32_t pruning;  /* frames on the stack that prune their subtree */
	uint32_t unpushed; /* calls open past the stack's capacity */
	uint32_t overrun;  /* calls never recorded for lack of room */
	uint64_t entry_word, exit_word; /* the records' common headers: ID, thread id */
	struct tb_func_thread_stats st;
	struct frame stack[TB_FUNC_STACK];
};

/*
 * initial-exec: the archive is linked into programs, whose TLS the linker
 * lays out; the default (a dynamic model under -fPIC) made every access a
 * call as far as the compiler knew, with registers saved around it: 1-3 ns
 * of a traced call (bench_func).  A shared library linking the archive must
 * therefore be loaded with the program, not dlopen'd (3.2 KiB of static TLS).
 */
static __thread __attribute__((tls_model("initial-exec"))) struct func_thread self;

static struct {
	_Atomic(struct tb_ring *) ring; /* NULL: not tracing */
	/* The session: bumped by 2 at each start, so it never has STATE_BUSY and is never 0 once started. */
	_Atomic uint32_t key;
	pthread_mutex_t lock; /* start/stop */
	uint16_t entry_id, exit_id;
	unsigned max_depth;
	uint32_t fast_top; /* a call pushed at a lower top is recorded unless excluded: min(stack, max_depth) */
	/* The ring's clock to ns: base_ns + ((raw - base_raw) * mult >> 32); other clocks are ns already. */
	int raw_is_tsc;
	uint64_t base_raw, base_ns;
	int64_t mult;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------ clock */

/*
 * The fast path's: a TSC ring's clock (idle_state lets it run on no other),
 * read and converted without the tests above.
 */
static inline TB_NOTRACE uint64_t tsc_now(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return 0; /* not reached: no fast path without a TSC */
#endif
}

static inline TB_NOTRACE uint64_t tsc_to_ns(uint64_t raw)
{
	/* one signed 64x64 multiply: mult is positive and below 2^63 */
	return g.base_ns + (uint64_t)(((__int128)(int64_t)(raw - g.base_raw) * g.mult) >> 32);
}

/*
 * One read of the ring's clock per record: the record is written with
 * tb_write_at, stamped with the raw value its payload's time (calltime,
 * rettime) is converted from.  Reading the clock again inside the write,
 * as tb_write does, was half of a record's cost (docs/func-pmu.md).
 */
static inline TB_NOTRACE uint64_t now_raw(struct tb_ring *ring)
{
#if defined(__x86_64__)
	if (g.raw_is_tsc)
		return __rdtsc(); /* what tb_ring_clock_now reads for a TSC ring, without the call */
#endif
	return tb_ring_clock_now(ring);
}

static inline TB_NOTRACE uint64_t raw_to_ns(uint64_t raw)
{
	return g.raw_is_tsc ? tsc_to_ns(raw) : raw;
}

/*
 * A multiply instead of tb_ring_to_ns's division, fitted to it: the ns
 * that 2^32 ticks take, so mult is ns per tick in 32.32 fixed point.
 */
static TB_NOTRACE void setup_clock(struct tb_ring *ring)
{
	enum tb_clock clock = tb_ring_clock(ring);

	g.raw_is_tsc = clock == TB_CLOCK_TSC;
	g.base_raw = tb_ring_clock_now(ring);
	g.base_ns = tb_ring_to_ns(ring, g.base_raw);
	g.mult = tb_ring_to_ns(ring, g.base_raw + (1ull << 32)) - g.base_ns;
}

/* ------------------------------------------------------------ hooks */

/*
 * The general path: every case, the fast path's included.  The fast path
 * (the hooks at the end) takes the common case - this session, nothing
 * pruned, the call recorded, an exit matching the top of the stack - with
 * fewer tests; both keep the stack the same way.
 */

static TB_NOTRACE uint64_t common_word(uint16_t id, int32_t tid)
{
	struct tb_common_header h = {.type = id, .pid = tid};
	uint64_t w;

	memcpy(&w, &h, sizeof(w));
	return w;
}

/* A stack from an earlier session is forgotten; the thread id is taken once (again after fork). */
static TB_NOTRACE void identify(struct func_thread *t, uint32_t key)
{
	if (t->gen != key) {
		t->gen = key;
		t->top = t->rdepth = t->pruning = t->unpushed = t->overrun = 0;
	}
	if (!t->tid)
		t->tid = (int32_t)gettid();
	t->entry_word = common_word(g.entry_id, t->tid);
	t->exit_word = common_word(g.exit_id, t->tid);
}

/* What state says when no hook runs: whether the fast path may take the next one. */
static inline TB_NOTRACE uint32_t idle_state(const struct func_thread *t)
{
	return g.raw_is_tsc && t->tid && !t->pruning && !t->unpushed ? t->gen : 0;
}

static TB_NOTRACE void write_entry(struct tb_ring *ring, struct func_thread *t, const struct frame *f,
				   uint64_t parent, uint64_t raw)
{
	struct tb_func_entry rec;

	memcpy(&rec.hdr, &t->entry_word, sizeof(rec.hdr));
	rec.func = f->fn;
	rec.depth = f->rdepth;
	rec.pad = 0;
	rec.parent_ip = parent;
	tb_write_at(ring, &rec, sizeof(rec), raw);
	t->st.entries++;
}

static TB_NOTRACE void write_exit(struct tb_ring *ring, struct func_thread *t, const struct frame *f,
				  uint64_t raw)
{
	struct tb_func_exit rec;

	memcpy(&rec.hdr, &t->exit_word, sizeof(rec.hdr));
	rec.func = f->fn;
	rec.depth = f->rdepth;
	rec.overrun = t->overrun;
	rec.calltime = f->calltime;
	rec.rettime = raw_to_ns(raw);
	tb_write_at(ring, &rec, sizeof(rec), raw);
	t->st.exits++;
}

static TB_NOTRACE void enter(struct tb_ring *ring, struct func_thread *t, uint64_t fn, uint64_t parent)
{
	const struct excl_table *x;
	unsigned excluded;
	struct frame *f;
	uint64_t raw;

	if (t->top == TB_FUNC_STACK) {
		t->unpushed++;
		t->overrun++;
		t->st.overrun++;
		return;
	}
	x = excl_current();
	excluded = x ? excl_lookup(x, fn) : 0;
	f = &t->stack[t->top++];
	f->fn = fn;
	f->flags = (excluded & EXCL_CHILDREN) ? FRAME_PRUNES : 0;
	if (!excluded && !t->pruning && (!g.max_depth || t->rdepth < g.max_depth))
		f->flags |= FRAME_RECORDED;
	t->pruning += (f->flags & FRAME_PRUNES) != 0;
	if (!(f->flags & FRAME_RECORDED))
		return;
	f->rdepth = t->rdepth++;
	raw = now_raw(ring);
	f->calltime = raw_to_ns(raw);
	write_entry(ring, t, f, parent, raw);
}

/* Take the top frame off; raw (the clock at its return) is 0 for a frame abandoned without its exit. */
static TB_NOTRACE void pop(struct tb_ring *ring, struct func_thread *t, uint64_t raw)
{
	struct frame *f = &t->stack[--t->top];

	t->pruning -= (f->flags & FRAME_PRUNES) != 0;
	if (!(f->flags & FRAME_RECORDED))
		return;
	t->rdepth--;
	if (raw)
		write_exit(ring, t, f, raw);
	else
		t->st.abandoned++;
}

static TB_NOTRACE void leave(struct tb_ring *ring, struct func_thread *t, uint64_t fn)
{
	uint32_t i = t->top;

	if (t->unpushed) {
		t->unpushed--;
		return;
	}
	while (i > 0 && t->stack[i - 1].fn != fn)
		i--;
	if (i == 0) {
		t->st.unmatched++;
		return;
	}
	/* Calls above the match were left without their exit (longjmp). */
	while (t->top > i)
		pop(ring, t, 0);
	pop(ring, t, (t->stack[i - 1].flags & FRAME_RECORDED) ? now_raw(ring) : 0);
}

/*
 * Busy set, the thread's state made this session's; 0 when the hook must
 * return (already inside a hook on this thread).  The state's fast key is
 * set again by hook_end.
 */
static TB_NOTRACE int hook_begin(struct func_thread *t)
{
	uint32_t key;

	if (t->state & STATE_BUSY) {
		t->st.reentered++;
		return 0;
	}
	t->state = STATE_BUSY;
	/* a handler's hook that lands after this sees busy, and none of its work moves above it */
	atomic_signal_fence(memory_order_seq_cst);
	key = atomic_load_explicit(&g.key, memory_order_relaxed);
	if (t->gen != key || !t->tid)
		identify(t, key);
	return 1;
}

static inline TB_NOTRACE void hook_end(struct func_thread *t)
{
	/* the hook's work stays before busy is cleared */
	atomic_signal_fence(memory_order_seq_cst);
	t->state = idle_state(t);
}

/* The general path for a hook that holds busy already (the fast path's, turned back). */
static __attribute__((noinline)) TB_NOTRACE void enter_held(struct tb_ring *ring, struct func_thread *t,
							   uint64_t fn, uint64_t parent)
{
	enter(ring, t, fn, parent);
	hook_end(t);
}

static __attribute__((noinline)) TB_NOTRACE void leave_held(struct tb_ring *ring, struct func_thread *t,
							   uint64_t fn)
{
	leave(ring, t, fn);
	hook_end(t);
}

static __attribute__((noinline)) TB_NOTRACE void enter_general(struct tb_ring *ring, struct func_thread *t,
							      uint64_t fn, uint64_t parent)
{
	if (hook_begin(t))
		enter_held(ring, t, fn, parent);
}

static __attribute__((noinline)) TB_NOTRACE void leave_general(struct tb_ring *ring, struct func_thread *t,
							      uint64_t fn)
{
	if (hook_begin(t))
		leave_held(ring, t, fn);
}

/*
 * The fast path.  state equal to the session's key says: not inside a
 * hook, this session's stack, thread id known, nothing pruned, no calls
 * past the stack, a TSC ring.  Then an entry below fast_top that no
 * exclusion names is recorded, and an exit whose function is the recorded
 * top frame (no longjmp) pops just it; anything else is the general path's.
 * Busy here is the key plus STATE_BUSY, so a hook that lands inside this
 * one (a signal handler's) sees a state that is not the key, goes to the
 * general path and finds busy there.  The thread's state is named as self
 * throughout, not through a pointer: each access is then one %fs-relative
 * instruction, with no register kept for it across the write.
 */
TB_NOTRACE void __cyg_profile_func_enter(void *fn, void *call_site);
TB_NOTRACE void __cyg_profile_func_exit(void *fn, void *call_site);

/* Whether the exclusion list names fn (one load and a branch while there is none). */
static inline TB_NOTRACE int is_excluded(uint64_t fn)
{
	const struct excl_table *x = excl_current();

	return x && excl_lookup(x, fn);
}

TB_NOTRACE void __cyg_profile_func_enter(void *fn, void *call_site)
{
	struct tb_ring *ring = atomic_load_explicit(&g.ring, memory_order_acquire);
	struct tb_func_entry rec;
	uint32_t key, top, depth;
	struct frame *f;
	uint64_t raw;

	if (!ring)
		return;
	key = atomic_load_explicit(&g.key, memory_order_relaxed);
	if (self.state != key) {
		enter_general(ring, &self, (uintptr_t)fn, (uintptr_t)call_site);
		return;
	}
	self.state = key | STATE_BUSY;
	atomic_signal_fence(memory_order_seq_cst); /* pairs with the one before clearing busy */
	top = self.top;
	if (top >= g.fast_top || is_excluded((uintptr_t)fn)) {
		enter_held(ring, &self, (uintptr_t)fn, (uintptr_t)call_site);
		return;
	}
	raw = tsc_now();
	depth = self.rdepth;
	self.top = top + 1;
	self.rdepth = depth + 1;
	f = &self.stack[top];
	f->fn = (uintptr_t)fn;
	f->rdepth = depth;
	f->flags = FRAME_RECORDED;
	f->calltime = tsc_to_ns(raw);
	memcpy(&rec.hdr, &self.entry_word, sizeof(rec.hdr));
	rec.func = (uintptr_t)fn;
	rec.depth = depth;
	rec.pad = 0;
	rec.parent_ip = (uintptr_t)call_site;
	tb_write_at(ring, &rec, sizeof(rec), raw);
	self.st.entries++;
	atomic_signal_fence(memory_order_seq_cst);
	self.state = key;
}

TB_NOTRACE void __cyg_profile_func_exit(void *fn, void *call_site)
{
	struct tb_ring *ring = atomic_load_explicit(&g.ring, memory_order_acquire);
	struct tb_func_exit rec;
	const struct frame *f;
	uint32_t key, top;
	uint64_t raw;

	(void)call_site;
	if (!ring)
		return;
	key = atomic_load_explicit(&g.key, memory_order_relaxed);
	if (self.state != key) {
		leave_general(ring, &self, (uintptr_t)fn);
		return;
	}
	self.state = key | STATE_BUSY;
	atomic_signal_fence(memory_order_seq_cst); /* pairs with the one before clearing busy */
	top = self.top;
	f = &self.stack[top ? top - 1 : 0];
	if (!top || f->fn != (uintptr_t)fn || f->flags != FRAME_RECORDED) {
		leave_held(ring, &self, (uintptr_t)fn);
		return;
	}
	raw = tsc_now();
	self.top = top - 1;
	self.rdepth = f->rdepth;
	memcpy(&rec.hdr, &self.exit_word, sizeof(rec.hdr));
	rec.func = (uintptr_t)fn;
	rec.depth = f->rdepth;
	rec.overrun = self.overrun;
	rec.calltime = f->calltime;
	rec.rettime = tsc_to_ns(raw);
	tb_write_at(ring, &rec, sizeof(rec), raw);
	self.st.exits++;
	atomic_signal_fence(memory_order_seq_cst);
	self.state = key;
}

/* ---------------------------------------------------------- control */

/* A forked child has one thread, with a new id. */
static TB_NOTRACE void after_fork_in_child(void)
{
	self.tid = 0;
	self.state = 0; /* the general path takes the next hook and the new id */
}

static TB_NOTRACE void register_fork_handler(void)
{
	pthread_atfork(NULL, NULL, after_fork_in_child);
}

TB_NOTRACE int tb_func_start(struct tb_ring *ring, const struct tb_func_opts *opts)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	struct tb_func_opts o = opts ? *opts : (struct tb_func_opts){0};
	const char *env = getenv("TRACEBUF_FUNC_EXCLUDE");
	int rc = 0;

	if (!ring)
		return -EINVAL;
	pthread_once(&fork_once, register_fork_handler);
	pthread_mutex_lock(&g.lock);
	if (atomic_load(&g.ring)) {
		pthread_mutex_unlock(&g.lock);
		return -EBUSY;
	}
	if (env && env[0])
		rc = excl_from_env(env);
	if (rc == 0) {
		g.entry_id = o.entry_id ? o.entry_id : TB_FUNC_ENTRY_ID;
		g.exit_id = o.exit_id ? o.exit_id : TB_FUNC_EXIT_ID;
		g.max_depth = o.max_depth;
		g.fast_top = o.max_depth && o.max_depth < TB_FUNC_STACK ? o.max_depth : TB_FUNC_STACK;
		setup_clock(ring);
		atomic_fetch_add(&g.key, 2);
		atomic_store_explicit(&g.ring, ring, memory_order_release);
	}
	pthread_mutex_unlock(&g.lock);
	return rc;
}

TB_NOTRACE void tb_func_stop(void)
{
	atomic_store_explicit(&g.ring, NULL, memory_order_release);
}

TB_NOTRACE int tb_func_active(void)
{
	return atomic_load_explicit(&g.ring, memory_order_acquire) != NULL;
}

TB_NOTRACE void tb_func_thread_stats(struct tb_func_thread_stats *st)
{
	*st = self.st;
}

TB_NOTRACE int tb_func_save(struct tb_ring *ring, const char *dir, const struct tb_save_event *extra,
			    size_t nextra, struct tb_problem *err)
{
	struct tb_save_event *events = calloc(nextra + 2, sizeof(*events));
	struct tb_save_opts o = {.events = events, .nevents = nextra + 2, .tracer = "function_graph"};
	int rc;

	if (!events)
		return -ENOMEM;
	events[0] = (struct tb_save_event){&tb_func_entry_event, g.entry_id ? g.entry_id : TB_FUNC_ENTRY_ID};
	events[1] = (struct tb_save_event){&tb_func_exit_event, g.exit_id ? g.exit_id : TB_FUNC_EXIT_ID};
	for (size_t i = 0; i < nextra; i++)
		events[2 + i] = extra[i];
	rc = tb_save_ring(ring, dir, &o, err);
	free(events);
	return rc;
}

/* ------------------------------------------------ TRACEBUF_FUNC_SAVE */

/*
 * A program linked with this archive traces itself when started with
 * TRACEBUF_FUNC_SAVE=DIR: a ring of TRACEBUF_FUNC_KB KiB per CPU (default
 * the ring's default) from before main, saved to DIR at exit.
 */
static struct tb_ring *auto_ring;
static const char *auto_dir;

static TB_NOTRACE void auto_save(void)
{
	struct tb_problem err = {0};
	int rc;

	tb_func_stop();
	rc = tb_func_save(auto_ring, auto_dir, NULL, 0, &err);
	if (rc < 0)
		fprintf(stderr, "tracebuf: TRACEBUF_FUNC_SAVE: %s\n", err.reason);
}

__attribute__((constructor)) static TB_NOTRACE void auto_start(void)
{
	const char *dir = getenv("TRACEBUF_FUNC_SAVE"), *kb = getenv("TRACEBUF_FUNC_KB");
	struct tb_ring_opts o;
	int rc;

	if (!dir || !dir[0])
		return;
	tb_ring_opts_default(&o);
	if (kb && kb[0])
		o.size_kb = strtoul(kb, NULL, 10);
	rc = tb_ring_new(&auto_ring, &o);
	if (rc == 0 && (rc = tb_func_start(auto_ring, NULL)) == 0) {
		auto_dir = dir;
		atexit(auto_save);
		return;
	}
	fprintf(stderr, "tracebuf: TRACEBUF_FUNC_SAVE: cannot start function tracing: %s\n",
		strerror(-rc));
}
