// SPDX-License-Identifier: MIT
/*
 * event_filter.c - filters at the source (tb_events_set_filter), in the
 * form the emitters run.  The registry stores a filter in each of its
 * event's descriptors; the emit function (tracebuf/tracepoint.h) builds
 * the record on its stack as always and, when its descriptor has a filter,
 * tests it before anything is reserved in the ring: a record it rejects is
 * never reserved (so no reader sees it and it leaves no hole) and is
 * counted as filtered, never as lost.
 *
 * Two forms.  A filter of at most TB_EVENT_FILTER_FAST_MAX integer predicates
 * (the common case: "v > 10 && common_pid != 0") gets the compact form of
 * tracepoint.h, which the emitter runs inline: a flat array of (offset,
 * width, sign shift, range) tests, all run in a straight line, and the
 * verdict looked up in the truth table filter_tabulate() built from the
 * program (filter_compact(), src/filter/filter_compact.c) - no branch program to walk, no call unless the record is
 * dropped, no allocation, no lock.  Anything else (strings, CPU, COMM,
 * more predicates) runs the reference program, tb_filter_match(), out of
 * line (tb_event_filter_keep), with the CPU and thread name when it reads
 * them.
 *
 * Lifetime: emitters read their descriptor's filter pointer without a
 * lock, so a filter may be in use by another thread at any moment after it
 * was published.  Nothing here is ever freed: a replaced filter stays
 * allocated for the rest of the process (a few hundred bytes each).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "filter/filter_compact.h"
#include "registry.h"
#include "tracebuf/filter.h"
#include "ring/ring_internal.h"

/* A filter at the source: its compact form (what descriptors point to) and its program. */
struct source_filter {
	struct tb_event_filter fast; /* first: descriptors hold &fast */
	struct tb_filter *program;   /* the reference form, run when the compact one cannot be; NULL: none */
	struct tb_ring *mirror;      /* a session's ring: a record kept is written there too (NULL: none) */
	struct source_filter *next;  /* every filter ever made: kept reachable */
};

/* Every filter made (under the registry's lock). */
static struct source_filter *all_filters;

/* The kernel's common fields, then the descriptor's, as tracebuf/filter.h fields. */
static struct tb_filter_field *fields_of(const struct tb_event_desc *d, size_t *n)
{
	static const struct tb_filter_field common[] = {
	    {"common_type", 0, 2, TB_FILTER_INT, false},
	    {"common_flags", 2, 1, TB_FILTER_INT, false},
	    {"common_preempt_count", 3, 1, TB_FILTER_INT, false},
	    {"common_pid", 4, 4, TB_FILTER_INT, true},
	};
	size_t count = 0, k = 4;
	struct tb_filter_field *f;

	while (d->fields[count].name)
		count++;
	f = calloc(count + 4, sizeof(*f));
	if (!f)
		return NULL;
	memcpy(f, common, sizeof(common));
	for (size_t i = 0; i < count; i++, k++) {
		const struct tb_event_field *ef = &d->fields[i];
		enum tb_filter_field_kind kind = TB_FILTER_OTHER;
		if (ef->kind == TB_EVF_SCALAR)
			kind = TB_FILTER_INT;
		else if (ef->kind == TB_EVF_ARRAY && ef->type && strstr(ef->type, "char"))
			kind = TB_FILTER_CHARS;
		else if (ef->kind == TB_EVF_STRING)
			kind = TB_FILTER_DATA_LOC;
		f[k] = (struct tb_filter_field){ef->name, ef->offset, ef->size, kind, ef->is_signed != 0};
	}
	*n = k;
	return f;
}

/* The reference program, with the CPU and the thread's name if it reads them. */
static bool run_program(const struct tb_filter *program, const void *rec, uint32_t len)
{
	unsigned uses = tb_filter_uses(program);
	char comm[17] = "";
	struct tb_filter_env env = {-1, comm};

	if (!uses)
		return tb_filter_match(program, rec, len, NULL);
	if (uses & TB_FILTER_USES_CPU)
		env.cpu = sched_getcpu();
	if (uses & TB_FILTER_USES_COMM)
		prctl(PR_GET_NAME, comm, 0, 0, 0);
	return tb_filter_match(program, rec, len, &env);
}

_Static_assert(TB_EVENT_FILTER_FAST_MAX == FILTER_COMPACT_MAX, "the emitters' form holds every compact program");

/* The program's compact form (filter_compact), where the emitters read it. */
static void to_event_filter(struct tb_event_filter *f, const struct tb_filter *program)
{
	struct filter_compact c;

	filter_compact(program, &c);
	for (uint32_t k = 0; k < c.ntests; k++)
		f->tests[k] = (struct tb_event_filter_test){
		    .offset = c.tests[k].offset,
		    .width = c.tests[k].width,
		    .is_signed = c.tests[k].is_signed,
		    .band = c.tests[k].band,
		    .lo = c.tests[k].lo,
		    .span = c.tests[k].span,
		};
	f->truth = c.truth;
	f->ntests = c.ntests;
	f->min_len = c.min_len;
}

int source_filter_new(const struct tb_event_desc *d, const char *expr, struct tb_filter_error *err,
		      struct tb_event_filter **out)
{
	size_t n = 0;
	struct tb_filter_field *fields = fields_of(d, &n);
	struct source_filter *sf;
	int rc;

	if (!fields)
		return -ENOMEM;
	sf = calloc(1, sizeof(*sf));
	rc = sf ? tb_filter_compile(expr, fields, n, &sf->program, err) : -ENOMEM;
	free(fields);
	if (rc < 0) {
		free(sf);
		return rc;
	}
	to_event_filter(&sf->fast, sf->program);
	sf->next = all_filters;
	all_filters = sf;
	*out = &sf->fast;
	return 0;
}

int source_filter_mirror(const struct tb_event_filter *base, struct tb_ring *mirror, struct tb_event_filter **out)
{
	const struct source_filter *b = (const struct source_filter *)(const void *)base; /* fast is first */
	struct source_filter *sf = calloc(1, sizeof(*sf));

	if (!sf)
		return -ENOMEM;
	/* no compact form (ntests 0): every record reaches tb_event_filter_keep, which copies it */
	sf->program = b ? b->program : NULL;
	sf->mirror = mirror;
	sf->next = all_filters;
	all_filters = sf;
	*out = &sf->fast;
	return 0;
}

bool tb_event_filter_keep(struct tb_ring *ring, const struct tb_event_filter *f, const void *rec,
			  uint32_t len)
{
	const struct source_filter *sf = (const struct source_filter *)(const void *)f; /* fast is first */

	if (sf->program && !run_program(sf->program, rec, len)) {
		tb__ring_filtered(ring, len);
		return false;
	}
	/*
	 * The copy first: both rings then hold the record, each with its own
	 * commit time.  Not when the emitter's ring is the session's already:
	 * an emitter that loaded its ring before an attach and this filter
	 * after it would otherwise put the record there twice.
	 */
	if (sf->mirror && sf->mirror != ring)
		tb_write(sf->mirror, rec, len);
	return true;
}

void tb_event_filter_drop(struct tb_ring *ring, uint32_t len)
{
	tb__ring_filtered(ring, len);
}
