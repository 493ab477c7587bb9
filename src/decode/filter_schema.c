// SPDX-License-Identifier: MIT
/*
 * filter_schema.c - a filter set's records looked up in a schema: which
 * event a record is (its common_type) and its pid's command name (from
 * saved_cmdlines), for the filter language's decision
 * (filter/filter_set.c).
 */
#include <stdlib.h>
#include <string.h>

#include "filter/filter_set.h"
#include "util/grow.h"
#include "tracebuf/filter.h"
#include "tracebuf/schema.h"

static const char *schema_comm_of(void *ctx, int32_t pid)
{
	size_t len;

	return tb_schema_comm(ctx, pid, &len);
}

bool tb_filter_set_keep(struct tb_filter_set *set, struct tb_schema *s, const struct tb_render_record *ev)
{
	struct filter_set_event event = {.system = "", .comm = schema_comm_of, .ctx = s};

	if (filter_set_empty(set))
		return true;
	if (ev && ev->len >= 8) {
		memcpy(&event.id, ev->data, 2);
		memcpy(&event.pid, (const uint8_t *)ev->data + 4, 4);
		event.format = tb_schema_find_event(s, event.id, &event.system);
	}
	return filter_set_keep_record(set, &event, ev);
}

/*
 * The schema's events listed once (loading their formats as needed), then
 * each spec's names held against them.  Out of memory: NULL, as if every
 * name matched - an error must not be made up.
 */
const char *tb_filter_set_unmatched(struct tb_filter_set *set, struct tb_schema *s)
{
	struct filter_set_name *events = NULL, *grown;
	size_t n = 0, cap = 0;
	const char *missing = NULL;

	if (filter_set_empty(set))
		return NULL;
	for (uint32_t id = 1; id <= 65535; id++) {
		const char *system = "";
		const struct tb_format *f = tb_schema_find_event(s, id, &system);

		if (!f)
			continue;
		if (!(grown = tb__grow(events, &cap, n + 1, sizeof(*events), 256)))
			goto out;
		events = grown;
		events[n++] = (struct filter_set_name){system ? system : "", f->name};
	}
	missing = filter_set_unmatched_of(set, events, n);
out:
	free(events);
	return missing;
}
