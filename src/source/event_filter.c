// SPDX-License-Identifier: MIT
/*
 * event_filter.c - filters at the source: an event with a filter writes
 * through a gate (tb__ring_gate_new) that runs the compiled filter over
 * the record the emitter built on its stack, before anything is reserved
 * in the ring; what it rejects is counted as filtered.  Events without a
 * filter keep the ring's own handle, so their path does not change.
 *
 * Lifetime: emitters read their descriptor's ring pointer without a lock,
 * so a gate, and the filter it reads, may be in use by another thread at
 * any moment after it was published.  Nothing here is ever freed: a
 * replaced filter or a gate for a ring no longer attached stays allocated
 * for the rest of the process (a few hundred bytes each).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "filter_internal.h"
#include "registry.h"
#include "ring_internal.h"

struct source_filter {
	struct tb_filter *filter;
	struct tb_ring *target; /* the ring the gate writes to */
	struct tb_ring *gate;
	struct tb_ring **old_gates; /* gates of rings attached before: kept, see above */
	size_t nold;
	struct source_filter *next; /* every filter ever made, also kept */
};

/* Every filter made (under the registry's lock): all of it stays reachable. */
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

/* The gate's test: the filter over the record, with the CPU and thread name if it reads them. */
static bool pass(const void *ctx, const void *data, uint32_t len)
{
	const struct tb_filter *f = ctx;
	char comm[17] = "";
	struct tb_filter_env env = {-1, comm};

	if (!f->uses)
		return tb_filter_match(f, data, len, NULL);
	if (f->uses & TB_FILTER_USES_CPU)
		env.cpu = sched_getcpu();
	if (f->uses & TB_FILTER_USES_COMM)
		prctl(PR_GET_NAME, comm, 0, 0, 0);
	return tb_filter_match(f, data, len, &env);
}

int source_filter_new(const struct tb_event_desc *d, const char *expr, struct tb_filter_error *err,
		      struct source_filter **out)
{
	size_t n = 0;
	struct tb_filter_field *fields = fields_of(d, &n);
	struct source_filter *sf;
	int rc;

	if (!fields)
		return -ENOMEM;
	sf = calloc(1, sizeof(*sf));
	rc = sf ? tb_filter_compile(expr, fields, n, &sf->filter, err) : -ENOMEM;
	free(fields);
	if (rc < 0) {
		free(sf);
		return rc;
	}
	sf->next = all_filters;
	all_filters = sf;
	*out = sf;
	return 0;
}

struct tb_ring *source_filter_ring(struct source_filter *sf, struct tb_ring *ring)
{
	if (sf->target != ring) {
		struct tb_ring **old = sf->gate ? realloc(sf->old_gates, (sf->nold + 1) * sizeof(*old)) : NULL;
		struct tb_ring *gate = sf->gate && !old ? NULL : tb__ring_gate_new(ring, pass, sf->filter);
		if (old)
			sf->old_gates = old;
		if (!gate)
			return NULL;
		if (sf->gate) /* the old gate stays allocated: an emitter may be inside it */
			sf->old_gates[sf->nold++] = sf->gate;
		sf->gate = gate;
		sf->target = ring;
	}
	return sf->gate;
}
