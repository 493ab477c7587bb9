// SPDX-License-Identifier: MIT
/*
 * registry.c - the process's events: registration of each object's
 * descriptors, IDs, enabling by pattern, the ring they write to, and the
 * environment variables read at start.
 *
 * An entry exists per system:name and lives for the rest of the process
 * with its ID and format text (so a trace still holds what unloaded code
 * wrote); it lists the live descriptors that declare it, and enabling it
 * stores the attached ring into each of them - the pointer every emitter
 * tests.  printf call sites get a key each (never reused) and mirror
 * ftrace:bprint's state.  All of it is under one mutex; emitters never
 * take it: they read their descriptor's ring pointer, published with a
 * release store (paired with the emitter's acquire load).
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "registry.h"
#include "tracebuf/blob.h"
#include "tracebuf/events.h"
#include "util/grow.h"

#define FIRST_DYNAMIC_ID 1000
#define FIRST_PRINTF_KEY (TB_MARKER_IP_KEY + 1)

struct entry {
	uint16_t id;
	bool enabled;
	char *system, *name, *declared;
	char *format;
	size_t format_len;
	struct tb_event_desc **descs; /* live descriptors of this event */
	size_t ndescs, cap;
	struct tb_event_filter *filter; /* tb_events_set_filter; NULL: none */
	/* filter, copying to the session's ring (publish_desc): made for mirror_of, NULL: none yet */
	struct tb_event_filter *mirror, *mirror_of;
	uint8_t hist; /* tb_hist_attach's gate byte for its descriptors (TB__HIST_GATE_*), 0: none */
};

struct site_entry {
	uint64_t key;
	char *fmt, *func, *declared;
	struct tb_printf_site *site; /* NULL once its object is unloaded */
	bool recordable;
};

struct object {
	struct tb_object_sections s;
	unsigned refs;
};

struct rule {
	char *pattern;
	bool matched;
};

static struct registry {
	pthread_mutex_t lock;
	struct entry **events; /* in ID order */
	size_t nevents, events_cap;
	unsigned next_id;
	struct site_entry *sites;
	size_t nsites, sites_cap;
	uint64_t next_key;
	struct object *objects;
	size_t nobjects, objects_cap;
	struct tb_ring *ring;
	struct tb_ring *session; /* a `tracebuf record` session's ring (session.c), NULL: none */
	struct rule *rules; /* TRACEBUF_EVENTS */
	size_t nrules, rules_cap;
	bool startup_done;
	unsigned long problems;
} reg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.next_id = FIRST_DYNAMIC_ID,
	.next_key = FIRST_PRINTF_KEY,
};

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void problem(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(const char *where, const char *fmt, ...)
{
	va_list ap;

	reg.problems++;
	fprintf(stderr, "tracebuf: %s%s", where ? where : "", where ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool grow(void **array, size_t *cap, size_t need, size_t size)
{
	void *p = tb__grow(*array, cap, need, size, 8);

	if (!p)
		return false;
	*array = p;
	return true;
}

static char *where_of(const char *file, int line)
{
	char *s;

	if (asprintf(&s, "%s:%d", file ? file : "?", line) < 0)
		return NULL;
	return s;
}

/* ------------------------------------------------------------- state */

/* Where e's records go: NULL while it is disabled. */
static struct tb_ring *ring_for(struct entry *e)
{
	return e->enabled ? reg.ring : NULL;
}

/* release: the ring is set up before an emitter can see the pointer (it loads with acquire) */
static void publish_ring(struct tb_ring **slot, struct tb_ring *ring)
{
	__atomic_store_n(slot, ring, __ATOMIC_RELEASE);
}

/*
 * Open or close tracebuf's half of a gate after the ring pointer it
 * guards was stored: an emitter that sees it open goes on to the ring's
 * acquire load, which is what publishes the ring (relaxed here: the byte
 * is only the hint, and a stale one costs one emit a wasted test or one
 * record, as a stale pointer always did).  Only this byte is stored: the
 * kernel owns the semaphore beside it (tracepoint.h, union tb_event_gate).
 */
static void publish_gate(union tb_event_gate *gate, struct tb_ring *ring)
{
	__atomic_store_n(&gate->part.on, (uint8_t)(ring != NULL), __ATOMIC_RELAXED);
}

/* A printf site's ring, then its object's gate (every site of the object mirrors bprint alike). */
static void publish_site(struct tb_printf_site *site, struct tb_ring *ring)
{
	publish_ring(&site->ring, ring);
	publish_gate(site->gate, ring);
}

static struct entry *find_entry(const char *system, const char *name);

/* (Naming the built-in descriptor also links ftrace_events.o into every program that registers events.) */
static struct entry *bprint_entry(void)
{
	return find_entry(tb__bprint_event.system, tb__bprint_event.name);
}

static void sync_sites(void)
{
	struct entry *bprint = bprint_entry();
	struct tb_ring *ring = bprint ? ring_for(bprint) : NULL;

	for (size_t i = 0; i < reg.nsites; i++)
		if (reg.sites[i].site && reg.sites[i].recordable)
			publish_site(reg.sites[i].site, ring);
}

static bool pattern_matches(const char *p, size_t n, const struct entry *e);

/* Whether the session's TRACEBUF_EVENTS rules ask for e. */
static bool session_wants(const struct entry *e)
{
	for (size_t i = 0; i < reg.nrules; i++)
		if (pattern_matches(reg.rules[i].pattern, strlen(reg.rules[i].pattern), e))
			return true;
	return false;
}

/*
 * The filter e's descriptors run: e's own, or - in a session whose program
 * attached a ring of its own - one that also copies each record kept to the
 * session's ring (docs/design.md, "a program's own ring in a session").
 * Out of memory for it, the event writes to the program's ring alone.
 */
static struct tb_event_filter *filter_for(struct entry *e)
{
	if (!reg.session || !reg.ring || reg.ring == reg.session || !e->enabled || !session_wants(e))
		return e->filter;
	if (!e->mirror || e->mirror_of != e->filter) {
		struct tb_event_filter *m;
		if (source_filter_mirror(e->filter, reg.session, &m) < 0)
			return e->filter;
		e->mirror = m; /* a replaced one stays allocated: an emitter may be inside it */
		e->mirror_of = e->filter;
	}
	return e->mirror;
}

/*
 * A descriptor of e gets e's filter, then its ring: an emitter that sees
 * the ring (acquire) sees the filter stored before it, so an event enabled
 * with a filter never writes a record unfiltered.
 */
static void publish_desc(struct tb_event_desc *d, struct entry *e)
{
	/* release: pairs with tb__event_filtered's acquire; the filter was built before */
	__atomic_store_n(&d->filter, filter_for(e), __ATOMIC_RELEASE);
	publish_ring(&d->ring, ring_for(e));
	publish_gate(&d->gate, ring_for(e));
	/* relaxed: only the hint; hist_attach.c publishes its table with a release store before */
	__atomic_store_n(&d->gate.part.hist, e->hist, __ATOMIC_RELAXED);
}

static void sync_entry(struct entry *e)
{
	for (size_t i = 0; i < e->ndescs; i++)
		publish_desc(e->descs[i], e);
	if (e == bprint_entry())
		sync_sites();
}

/* Events need a ring once one is enabled: the default one if none is attached. */
static int ensure_ring(void)
{
	struct tb_ring *ring;
	int rc;

	if (reg.ring)
		return 0;
	rc = tb_ring_new(&ring, NULL);
	if (rc < 0)
		return rc;
	reg.ring = ring;
	return 0;
}

/* ------------------------------------------------------------ patterns */

/* Whether "SYSTEM:NAME" pattern p (the kernel's set_event forms) names e. */
static bool pattern_matches(const char *p, size_t n, const struct entry *e)
{
	char sys[256], name[256];
	const char *colon = memchr(p, ':', n);

	if (!colon) {
		if (n >= sizeof(name))
			return false;
		memcpy(name, p, n);
		name[n] = '\0';
		return fnmatch(name, e->name, 0) == 0;
	}
	if ((size_t)(colon - p) >= sizeof(sys) || n - (size_t)(colon - p) - 1 >= sizeof(name))
		return false;
	memcpy(sys, p, (size_t)(colon - p));
	sys[colon - p] = '\0';
	memcpy(name, colon + 1, n - (size_t)(colon - p) - 1);
	name[n - (size_t)(colon - p) - 1] = '\0';
	if (!name[0])
		strcpy(name, "*");
	return fnmatch(sys, e->system, 0) == 0 && fnmatch(name, e->name, 0) == 0;
}

static void note_unknown(char *unknown, size_t size, const char *p, size_t n)
{
	size_t used;

	if (!unknown || size == 0)
		return;
	used = strlen(unknown);
	if (used && used + 1 < size)
		unknown[used++] = ',';
	while (n-- && used + 1 < size)
		unknown[used++] = *p++;
	unknown[used] = '\0';
}

static const char *trim(const char *p, const char *end, size_t *n)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		end--;
	*n = (size_t)(end - p);
	return p;
}

static int set_enabled(const char *patterns, bool on, char *unknown, size_t size)
{
	const char *p = patterns;
	int matched = 0, rc = 0, err;

	if (unknown && size)
		unknown[0] = '\0';
	if (!patterns)
		return -EINVAL;
	pthread_mutex_lock(&reg.lock);
	for (;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		size_t n;
		const char *pat = trim(p, end, &n);
		int hits = 0;

		if (n == 0) {
			rc = -EINVAL;
		} else {
			for (size_t i = 0; i < reg.nevents; i++) {
				struct entry *e = reg.events[i];
				if (!pattern_matches(pat, n, e))
					continue;
				hits++;
				if (e->enabled == on)
					continue;
				if (on && (err = ensure_ring()) < 0) {
					rc = err;
					break;
				}
				e->enabled = on;
				sync_entry(e);
			}
			if (!hits) {
				note_unknown(unknown, size, pat, n);
				if (rc == 0)
					rc = -ENOENT;
			}
			matched += hits;
		}
		if (!comma || (rc < 0 && rc != -ENOENT && rc != -EINVAL))
			break;
		p = comma + 1;
	}
	pthread_mutex_unlock(&reg.lock);
	return rc < 0 ? rc : matched;
}

int tb_events_enable(const char *patterns, char *unknown, size_t size)
{
	return set_enabled(patterns, true, unknown, size);
}

int tb_events_disable(const char *patterns, char *unknown, size_t size)
{
	return set_enabled(patterns, false, unknown, size);
}

/* "SYSTEM:NAME" split at its colon into system[]/name[]; false when malformed. */
static bool split_event(const char *event, char *system, char *name, size_t size)
{
	const char *colon = strchr(event, ':');
	size_t n = colon ? (size_t)(colon - event) : 0;

	if (!colon || n == 0 || n >= size || !colon[1] || strlen(colon + 1) >= size)
		return false;
	memcpy(system, event, n);
	system[n] = '\0';
	strcpy(name, colon + 1);
	return true;
}

static void registry_init(void);

/*
 * The registry locked, with *e the user event named "system:name": 0, or
 * -EINVAL (not such a name; not locked), -ENOENT (not registered), -EOPNOTSUPP
 * (a built-in event, which writes with the ring's own calls) - locked then.
 */
static int lock_user_event(const char *event, struct entry **e)
{
	char system[128], name[128];

	if (!event || !split_event(event, system, name, sizeof(system)))
		return -EINVAL;
	pthread_once(&reg_once, registry_init);
	pthread_mutex_lock(&reg.lock);
	*e = find_entry(system, name);
	if (!*e || !(*e)->ndescs)
		return -ENOENT;
	return strcmp(system, "ftrace") ? 0 : -EOPNOTSUPP;
}

int tb_events_set_filter(const char *event, const char *expr, struct tb_filter_error *err)
{
	struct tb_event_filter *sf = NULL;
	struct entry *e;
	int rc = lock_user_event(event, &e);

	if (rc == -EINVAL)
		return rc;
	if (rc == 0 && expr && *expr && strcmp(expr, "0"))
		rc = source_filter_new(e->descs[0], expr, err, &sf);
	if (rc == 0) {
		e->filter = sf; /* a replaced filter stays allocated: an emitter may be inside it */
		sync_entry(e);
	}
	pthread_mutex_unlock(&reg.lock);
	return rc;
}

int tb_events_set_hist_gate(const char *event, uint8_t mode, uint16_t *id)
{
	struct entry *e;
	int rc = lock_user_event(event, &e);

	if (rc == -EINVAL)
		return rc;
	if (rc == 0) {
		*id = e->id;
		e->hist = mode;
		sync_entry(e);
	}
	pthread_mutex_unlock(&reg.lock);
	return rc;
}

void tb_events_attach(struct tb_ring *ring)
{
	pthread_mutex_lock(&reg.lock);
	/* in a session, detaching gives the events back to the session's ring */
	reg.ring = ring ? ring : reg.session;
	for (size_t i = 0; i < reg.nevents; i++)
		sync_entry(reg.events[i]);
	pthread_mutex_unlock(&reg.lock);
}

void tb__events_session(struct tb_ring *ring)
{
	pthread_mutex_lock(&reg.lock);
	reg.session = ring;
	pthread_mutex_unlock(&reg.lock);
	tb_events_attach(ring);
}

struct tb_ring *tb_events_ring(void)
{
	struct tb_ring *ring;

	pthread_mutex_lock(&reg.lock);
	ring = reg.ring;
	pthread_mutex_unlock(&reg.lock);
	return ring;
}

/* TRACEBUF_EVENTS rules enable new events as they register. */
static void apply_rules(struct entry *e)
{
	for (size_t i = 0; i < reg.nrules; i++) {
		if (!pattern_matches(reg.rules[i].pattern, strlen(reg.rules[i].pattern), e))
			continue;
		reg.rules[i].matched = true;
		if (!e->enabled && ensure_ring() == 0)
			e->enabled = true;
	}
}

/* ------------------------------------------------------------- events */

static struct entry *find_entry(const char *system, const char *name)
{
	for (size_t i = 0; i < reg.nevents; i++)
		if (!strcmp(reg.events[i]->system, system) && !strcmp(reg.events[i]->name, name))
			return reg.events[i];
	return NULL;
}

static bool id_taken(unsigned id)
{
	/* A blob reference record starts with the magic's low half: no event may have it as its ID. */
	if (id == (TB_BLOB_REF_MAGIC & 0xffffu))
		return true;
	for (size_t i = 0; i < reg.nevents; i++)
		if (reg.events[i]->id == id)
			return true;
	return false;
}

static void free_entry(struct entry *e)
{
	free(e->system);
	free(e->name);
	free(e->declared);
	free(e->format);
	free(e->descs);
	free(e);
}

/*
 * TRACEBUF_FIRST_ID=N: dynamic IDs start at N.  `tracebuf record --kernel`
 * sets it above the kernel's highest event ID, so that the program's events
 * and the kernel's can share one trace.dat (a file's IDs are one space).
 * Read once, under reg.lock, before the first dynamic ID is handed out.
 */
static void first_dynamic_id(void)
{
	static bool read;
	const char *env;
	char *end;

	if (read)
		return;
	read = true;
	env = getenv("TRACEBUF_FIRST_ID");
	if (!env || !*env)
		return;
	unsigned long n = strtoul(env, &end, 10);
	if (*end || n < FIRST_DYNAMIC_ID || n > UINT16_MAX)
		problem("TRACEBUF_FIRST_ID", "'%s' is not an event ID from %u to 65535; IDs start at %u", env,
			FIRST_DYNAMIC_ID, reg.next_id);
	else if (reg.next_id < n)
		reg.next_id = (unsigned)n;
}

/*
 * The ID the session's processes agree on for ev (session_ids.c), 0 outside
 * a session.  Its shape is its format text with ID 0, which is the same in
 * every process that declares the same event.
 */
static unsigned session_id(const struct tb_event_desc *ev, const struct tb_object_sections *s)
{
	size_t len;
	char *shape;
	unsigned id;

	first_dynamic_id();
	if (!getenv("TRACEBUF_SHM_FORMATS"))
		return 0;
	if (!(shape = event_format_text(ev, 0, s->enums, s->enums_end, &len)))
		return 0;
	id = tb__session_event_id(ev->system, ev->name, tb__session_shape(shape, len), reg.next_id, id_taken);
	free(shape);
	return id;
}

/* A new entry for ev, in ID order; NULL (reported) when out of IDs or memory. */
static struct entry *new_entry(struct tb_event_desc *ev, const char *declared,
			       const struct tb_object_sections *s)
{
	unsigned id = ev->id;
	struct entry *e;
	size_t at;

	if (id == 0 && (id = session_id(ev, s)) != 0) {
		if (reg.next_id <= id)
			reg.next_id = id + 1;
	} else if (id == 0) {
		while (reg.next_id <= UINT16_MAX && id_taken(reg.next_id))
			reg.next_id++;
		if (reg.next_id > UINT16_MAX) {
			problem(declared, "%s:%s: no event ID is left (65535 used)", ev->system, ev->name);
			return NULL;
		}
		id = reg.next_id++;
	} else if (id_taken(id)) {
		problem(declared, "%s:%s: its ID %u is taken", ev->system, ev->name, id);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !grow((void **)&reg.events, &reg.events_cap, reg.nevents + 1, sizeof(*reg.events)))
		goto oom;
	e->id = (uint16_t)id;
	e->system = strdup(ev->system);
	e->name = strdup(ev->name);
	e->declared = strdup(declared);
	e->format = event_format_text(ev, e->id, s->enums, s->enums_end, &e->format_len);
	if (!e->system || !e->name || !e->declared || !e->format)
		goto oom;
	for (at = reg.nevents; at > 0 && reg.events[at - 1]->id > e->id; at--)
		reg.events[at] = reg.events[at - 1];
	reg.events[at] = e;
	reg.nevents++;
	apply_rules(e);
	return e;
oom:
	if (e)
		free_entry(e);
	problem(declared, "%s:%s: out of memory registering it", ev->system, ev->name);
	return NULL;
}

static bool has_desc(const struct entry *e, const struct tb_event_desc *ev)
{
	for (size_t i = 0; i < e->ndescs; i++)
		if (e->descs[i] == ev)
			return true;
	return false;
}

static void add_event(struct tb_event_desc *ev, const struct tb_object_sections *s)
{
	char *declared = where_of(ev->file, ev->line);
	const char *why = event_descriptor_problem(ev);
	struct entry *e;

	if (!declared)
		return;
	if (why) {
		/* names are printed only from a descriptor of this layout */
		bool named = ev->abi == TB_EVENT_ABI && ev->system && ev->name;
		problem(declared, "event %s:%s not registered: %s", named ? ev->system : "?", named ? ev->name : "?",
			why);
		goto out;
	}
	e = find_entry(ev->system, ev->name);
	if (e && has_desc(e, ev))
		goto out;
	if (e) {
		size_t len;
		char *text = event_format_text(ev, e->id, s->enums, s->enums_end, &len);
		bool same = text && len == e->format_len && !memcmp(text, e->format, len);
		free(text);
		if (!same) {
			problem(declared, "event %s:%s differs from its declaration at %s; left disabled",
				ev->system, ev->name, e->declared);
			goto out;
		}
	} else if (!(e = new_entry(ev, declared, s))) {
		goto out;
	}
	if (!grow((void **)&e->descs, &e->cap, e->ndescs + 1, sizeof(*e->descs))) {
		problem(declared, "%s:%s: out of memory registering it", ev->system, ev->name);
		goto out;
	}
	e->descs[e->ndescs++] = ev;
	ev->id = e->id;
	publish_desc(ev, e);
out:
	free(declared);
}

static void remove_event(struct tb_event_desc *ev)
{
	struct entry *e = find_entry(ev->system, ev->name);

	publish_gate(&ev->gate, NULL);
	publish_ring(&ev->ring, NULL);
	if (!e)
		return;
	for (size_t i = 0; i < e->ndescs;)
		if (e->descs[i] == ev)
			e->descs[i] = e->descs[--e->ndescs];
		else
			i++;
}

/* --------------------------------------------------------------- sites */

/* fmt for a message: newlines and tabs as \n and \t, cut to fit out. */
static const char *quoted(const char *fmt, char *out, size_t size)
{
	size_t n = 0;

	for (; *fmt && n + 3 < size; fmt++) {
		if (*fmt == '\n' || *fmt == '\t') {
			out[n++] = '\\';
			out[n++] = *fmt == '\n' ? 'n' : 't';
		} else {
			out[n++] = *fmt;
		}
	}
	out[n] = '\0';
	return out;
}

/* Characters of the conversion at spec ("%-08lx", "%pI4"). */
static size_t conversion_length(const char *spec)
{
	size_t n = 1 + strspn(spec + 1, "-+ #0123456789.*hlLzZtjq");

	if (spec[n] == 'p')
		while (isalnum((unsigned char)spec[n + 1]))
			n++;
	return spec[n] ? n + 1 : n;
}

static void add_site(struct tb_printf_site *site)
{
	char fmt[160];
	struct site_entry *se;
	char *declared = where_of(site->file, site->line);
	const char *bad = NULL;
	int nplan;

	if (!declared)
		return;
	for (size_t i = 0; i < reg.nsites; i++)
		if (reg.sites[i].site == site)
			goto out;
	if (site->abi != TB_EVENT_ABI) {
		problem(declared, "tb_printf site built for another version of tracebuf/tracepoint.h");
		goto out;
	}
	if (!grow((void **)&reg.sites, &reg.sites_cap, reg.nsites + 1, sizeof(*reg.sites)))
		goto oom;
	se = &reg.sites[reg.nsites];
	*se = (struct site_entry){.key = reg.next_key, .site = site};
	se->fmt = strdup(site->fmt);
	se->func = strdup(site->func ? site->func : "?");
	se->declared = declared;
	if (!se->fmt || !se->func) {
		free(se->fmt);
		free(se->func);
		goto oom;
	}
	declared = NULL;
	reg.nsites++;
	reg.next_key++;
	site->key = se->key;
	nplan = printf_plan(site->fmt, site->plan, sizeof(site->plan), &bad);
	if (nplan == -EINVAL)
		problem(se->declared, "tb_printf(\"%s\"): the kernel's printf cannot record \"%.*s\"; call left disabled",
			quoted(site->fmt, fmt, sizeof(fmt)), (int)conversion_length(bad), bad);
	else if (nplan < 0)
		problem(se->declared, "tb_printf(\"%s\"): more than %d arguments; call left disabled",
			quoted(site->fmt, fmt, sizeof(fmt)), TB_PRINTF_MAX_ARGS);
	else if (nplan > site->nargs)
		problem(se->declared, "tb_printf(\"%s\"): the format wants %d arguments and gets %d; call left disabled",
			quoted(site->fmt, fmt, sizeof(fmt)), nplan, site->nargs);
	else
		se->recordable = true;
	if (se->recordable) {
		struct entry *bprint = bprint_entry();
		site->fast = (uint8_t)printf_plan_matches(site->plan, nplan, site->cls, site->nargs);
		publish_site(site, bprint ? ring_for(bprint) : NULL);
	}
out:
	free(declared);
	return;
oom:
	problem(declared, "out of memory registering a tb_printf call");
	free(declared);
}

static void remove_site(struct tb_printf_site *site)
{
	publish_ring(&site->ring, NULL);
	for (size_t i = 0; i < reg.nsites; i++)
		if (reg.sites[i].site == site)
			reg.sites[i].site = NULL;
}

/* ------------------------------------------------------------- objects */

/* Declaration order: by file, then line (the linker's order is not the source's). */
static int by_declaration(const char *fa, int la, const char *fb, int lb)
{
	int c = strcmp(fa ? fa : "", fb ? fb : "");

	return c ? c : (la > lb) - (la < lb);
}

static int event_order(const void *a, const void *b)
{
	const struct tb_event_desc *x = *(struct tb_event_desc *const *)a, *y = *(struct tb_event_desc *const *)b;

	return by_declaration(x->file, x->line, y->file, y->line);
}

static int site_order(const void *a, const void *b)
{
	const struct tb_printf_site *x = *(struct tb_printf_site *const *)a, *y = *(struct tb_printf_site *const *)b;

	return by_declaration(x->file, x->line, y->file, y->line);
}

/* A sorted copy of a section's entries without NULLs (NULL if empty or out of memory). */
static void **sorted(void *const *start, void *const *end, int (*cmp)(const void *, const void *), size_t *n)
{
	void **v;

	*n = 0;
	if (start >= end || !(v = malloc((size_t)(end - start) * sizeof(*v))))
		return NULL;
	for (void *const *p = start; p < end; p++)
		if (*p)
			v[(*n)++] = *p;
	qsort(v, *n, sizeof(*v), cmp);
	return v;
}

static void add_events(const struct tb_object_sections *s)
{
	size_t n;
	void **v = sorted((void *const *)s->events, (void *const *)s->events_end, event_order, &n);

	if (!v && s->events < s->events_end)
		problem(NULL, "out of memory registering an object's events");
	for (size_t i = 0; i < n; i++)
		add_event(v[i], s);
	free(v);
}

static void add_sites(const struct tb_object_sections *s)
{
	size_t n;
	void **v = sorted((void *const *)s->sites, (void *const *)s->sites_end, site_order, &n);

	if (!v && s->sites < s->sites_end)
		problem(NULL, "out of memory registering an object's tb_printf calls");
	for (size_t i = 0; i < n; i++)
		add_site(v[i]);
	free(v);
}

static bool same_object(const struct tb_object_sections *a, const struct tb_object_sections *b)
{
	return a->events == b->events && a->sites == b->sites && a->enums == b->enums;
}

static bool is_empty(const struct tb_object_sections *s)
{
	return s->events == s->events_end && s->sites == s->sites_end;
}

struct find_main {
	const void *addr;
	int first;
	bool in_main;
};

static int in_first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_main *f = data;

	(void)size;
	if (f->first++)
		return 1; /* the main program comes first */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (uintptr_t)f->addr - start < ph->p_memsz)
			f->in_main = true;
	}
	return 1;
}

/* Whether addr lies in the executable (not in a shared library). */
static bool in_main_program(const void *addr)
{
	struct find_main f = {addr, 0, false};

	dl_iterate_phdr(in_first_object, &f);
	return f.in_main;
}

static void startup_complete(void);
static void registry_init(void);

void tb_registry_add_object(const struct tb_object_sections *s)
{
	struct object *o = NULL;

	pthread_once(&reg_once, registry_init);
	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; i < reg.nobjects && !is_empty(s); i++)
		if (same_object(&reg.objects[i].s, s))
			o = &reg.objects[i];
	if (o) {
		o->refs++;
	} else if (!is_empty(s)) {
		if (!grow((void **)&reg.objects, &reg.objects_cap, reg.nobjects + 1, sizeof(*reg.objects))) {
			problem(NULL, "out of memory registering an object's events");
		} else {
			reg.objects[reg.nobjects++] = (struct object){*s, 1};
			add_events(s);
			add_sites(s);
			for (size_t i = 0; i < reg.nevents; i++)
				sync_entry(reg.events[i]); /* rules may have enabled some */
		}
	}
	if (!reg.startup_done && in_main_program(s)) {
		startup_complete();
	} else if (reg.startup_done && o == NULL && !is_empty(s)) {
		pthread_mutex_unlock(&reg.lock); /* the description takes it itself */
		tb__session_formats();
		return;
	}
	pthread_mutex_unlock(&reg.lock);
}

void tb_registry_remove_object(const struct tb_object_sections *s)
{
	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; i < reg.nobjects; i++) {
		struct object *o = &reg.objects[i];
		if (!same_object(&o->s, s) || --o->refs > 0)
			continue;
		for (struct tb_event_desc *const *ev = s->events; ev < s->events_end; ev++)
			if (*ev)
				remove_event(*ev);
		for (struct tb_printf_site *const *site = s->sites; site < s->sites_end; site++)
			if (*site)
				remove_site(*site);
		*o = reg.objects[--reg.nobjects];
		break;
	}
	pthread_mutex_unlock(&reg.lock);
}

/* ------------------------------------------------------------- queries */

int tb_events_foreach(tb_events_info_fn *fn, void *ctx)
{
	int rc = 0;

	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; i < reg.nevents && rc == 0; i++) {
		const struct entry *e = reg.events[i];
		struct tb_events_info info = {e->system, e->name, e->id, e->enabled, e->ndescs > 0,
					     e->format, e->format_len, e->declared};
		rc = fn(ctx, &info);
	}
	pthread_mutex_unlock(&reg.lock);
	return rc;
}

int tb_events_foreach_printf(tb_events_printf_info_fn *fn, void *ctx)
{
	int rc = 0;

	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; i < reg.nsites && rc == 0; i++) {
		const struct site_entry *se = &reg.sites[i];
		struct tb_events_printf_info info = {se->key, se->fmt, se->func, se->declared, se->site != NULL,
					      se->recordable};
		rc = fn(ctx, &info);
	}
	pthread_mutex_unlock(&reg.lock);
	return rc;
}

char *tb_events_printk_formats(size_t *len)
{
	struct text t = {0};

	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; i < reg.nsites; i++)
		printk_format_line(&t, reg.sites[i].key, reg.sites[i].fmt);
	pthread_mutex_unlock(&reg.lock);
	return text_take(&t, len);
}

/*
 * Keys, not addresses, named like kernel symbols: a marker's ip key is
 * tracing_mark_write, as the kernel names its markers' writer, and each
 * printf site's key is the function it is in.  _stext and _etext bound the
 * keys the way they bound the kernel image, so a reader resolves every key
 * (the last one included) and nothing past them.
 */
char *tb_events_kallsyms(size_t *len)
{
	struct text t = {0};
	uint64_t end = TB_MARKER_IP_KEY + 1;

	text_printf(&t, "%016llx t tracing_mark_write\n%016llx T _stext\n",
		    (unsigned long long)TB_MARKER_IP_KEY, (unsigned long long)TB_MARKER_IP_KEY);
	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; i < reg.nsites; i++) {
		text_printf(&t, "%016llx t %s\n", (unsigned long long)reg.sites[i].key, reg.sites[i].func);
		if (reg.sites[i].key >= end)
			end = reg.sites[i].key + 1;
	}
	pthread_mutex_unlock(&reg.lock);
	text_printf(&t, "%016llx T _etext\n", (unsigned long long)end);
	return text_take(&t, len);
}

unsigned long tb_events_problems(void)
{
	unsigned long n;

	pthread_mutex_lock(&reg.lock);
	n = reg.problems;
	pthread_mutex_unlock(&reg.lock);
	return n;
}

/* ---------------------------------------------------- threads and fork */

int32_t tb_thread_id(void)
{
	return (int32_t)syscall(SYS_gettid);
}

static void before_fork(void)
{
	pthread_mutex_lock(&reg.lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&reg.lock);
}

/* The child's only thread has a new id: every object forgets the cached one. */
static void after_fork_child(void)
{
	for (size_t i = 0; i < reg.nobjects; i++)
		if (reg.objects[i].s.forget_tid)
			reg.objects[i].s.forget_tid();
	pthread_mutex_unlock(&reg.lock);
	tb__session_formats(); /* a traced child: its pid gets its name in the session */
}

/* ---------------------------------------------------------- environment */

static void read_rules(const char *list)
{
	const char *p = list;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		size_t n;
		const char *pat = trim(p, end, &n);

		if (n && grow((void **)&reg.rules, &reg.rules_cap, reg.nrules + 1, sizeof(*reg.rules))) {
			char *copy = strndup(pat, n);
			if (copy)
				reg.rules[reg.nrules++] = (struct rule){copy, false};
		}
		p = comma ? comma + 1 : NULL;
	}
}

static void report_unmatched_rules(void)
{
	for (size_t i = 0; i < reg.nrules; i++)
		if (!reg.rules[i].matched)
			problem(NULL, "TRACEBUF_EVENTS: no event matches '%s'", reg.rules[i].pattern);
}

static int dump_formats(void)
{
	const char *dir = getenv("TRACEBUF_FORMATS");
	struct tb_ring *ring = reg.ring;
	int rc;

	if (!dir || !*dir)
		return 0;
	pthread_mutex_unlock(&reg.lock); /* the dump takes it itself */
	rc = tb_events_dump(dir, ring);
	pthread_mutex_lock(&reg.lock);
	if (rc < 0)
		problem(NULL, "TRACEBUF_FORMATS: cannot write %s: %s", dir, strerror(-rc));
	return rc < 0 ? 1 : 2;
}

/*
 * The program's own events are in (its constructor runs after those of the
 * libraries it was linked with): unmatched TRACEBUF_EVENTS patterns are
 * now known, and a TRACEBUF_FORMATS dump is complete.
 */
static void (*on_startup)(void); /* tb_events_on_startup's, under the lock */

void tb_events_on_startup(void (*fn)(void))
{
	bool now;

	pthread_once(&reg_once, registry_init);
	pthread_mutex_lock(&reg.lock);
	now = reg.startup_done;
	if (!now)
		on_startup = fn;
	pthread_mutex_unlock(&reg.lock);
	if (now)
		fn();
}

static void startup_complete(void)
{
	void (*fn)(void) = on_startup;
	int dumped;

	reg.startup_done = true;
	on_startup = NULL;
	report_unmatched_rules();
	dumped = dump_formats();
	pthread_mutex_unlock(&reg.lock); /* the description takes it itself */
	tb__session_formats();
	if (fn)
		fn(); /* takes the lock itself (tb_hist_attach) */
	pthread_mutex_lock(&reg.lock);
	if (dumped) {
		fflush(NULL);
		_exit(dumped == 2 ? 0 : 1);
	}
}

/* For a program that does not include tracepoint.h: the same, at exit. */
static void at_exit(void)
{
	pthread_mutex_lock(&reg.lock);
	if (!reg.startup_done) {
		reg.startup_done = true;
		report_unmatched_rules();
		if (dump_formats() == 1)
			reg.problems++;
	}
	pthread_mutex_unlock(&reg.lock);
	tb__session_formats(); /* at exit too: the threads' names, objects loaded since */
}

static void registry_init(void)
{
	tb__session_start(); /* before the rules: enabled events then write to the session */
	read_rules(getenv("TRACEBUF_EVENTS"));
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	atexit(at_exit);
}

/* Also before any object registers, so a program without events gets the at-exit checks. */
__attribute__((constructor)) static void registry_start(void)
{
	pthread_once(&reg_once, registry_init);
}

/*
 * Where an emitter whose gate has the hist byte set sends its record
 * (tracepoint.h, tb_event_hist_hit).  The maps and the hist parser belong to
 * the reading side (src/analyze/hist_attach.c, libtracebuf-read), which an
 * application links only when it attaches a hist; the core keeps its
 * libc-only promise by calling it through this one pointer.  Here, in the
 * object every program with events links, so that a library dlopen'ed
 * later finds tb_event_hist_hit in any program.
 */
static tb_event_hist_hit_fn *hist_hit_fn; /* through __atomic_* only */

void tb_events_set_hist_hook(tb_event_hist_hit_fn *fn)
{
	/* release: pairs with the acquire below; the maps fn reads were set up before */
	__atomic_store_n(&hist_hit_fn, fn, __ATOMIC_RELEASE);
}

void tb_event_hist_hit(const struct tb_event_desc *ev, const void *rec, uint32_t len)
{
	tb_event_hist_hit_fn *fn = __atomic_load_n(&hist_hit_fn, __ATOMIC_ACQUIRE);

	if (fn)
		fn(ev, rec, len);
}
