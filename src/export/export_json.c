// SPDX-License-Identifier: MIT
/*
 * export_json.c - the Chrome / Perfetto trace-event JSON exporter
 * (tracebuf/chrome.h says what it writes): an events kind, a record at a
 * time through analyze/chrome_stream.h, so memory stays the writer's
 * per-task state whatever the trace's size.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analyze/chrome_stream.h"
#include "exporter.h"

struct json_state {
	FILE *f;
	struct chrome *writer;
	struct tb_chrome_opts opts;
	struct tb_chrome_totals totals;
};

static int json_begin(struct export_run *x)
{
	struct json_state *s = x->state;

	s->opts.usyms = x->o->usyms;
	if (s->opts.usyms)
		tb_usyms_register(s->opts.usyms, tb_capture_schema(x->capture));
	if (!(s->f = export_fopen(x)))
		return -errno;
	s->writer = chrome_begin(x->capture, s->f, &s->opts, &s->totals, x->merge->mult, x->merge->shift);
	return s->writer ? 0 : -ENOMEM;
}

static int json_event(struct export_run *x, const struct merged_record *r)
{
	struct json_state *s = x->state;

	return chrome_feed(s->writer, r);
}

static int json_finish(struct export_run *x)
{
	struct json_state *s = x->state;
	const struct tb_chrome_totals *t = &s->totals;
	int rc = s->writer ? chrome_end(s->writer, x->merge) : -ENOMEM;

	chrome_free(s->writer);
	if (!s->f)
		return rc;
	/* the writer's first error (a failed write, memory, a merge cut short) is said here, once */
	rc = export_fclose(x, s->f, rc);
	if (rc == 0)
		fprintf(stderr,
			"%s: %s: %llu records: %llu CPU slices, %llu calls, %llu counter values, "
			"%llu instants, %llu tasks\n",
			x->tool, x->o->out, (unsigned long long)t->records, (unsigned long long)t->cpu_slices,
			(unsigned long long)t->calls, (unsigned long long)t->counters,
			(unsigned long long)t->instants, (unsigned long long)t->tracks);
	return rc;
}

const struct tb_exporter_kind export_chrome_json = {
    .name = "json",
    .suffixes = ".json",
    .help = "Chrome/Perfetto trace-event JSON (ui.perfetto.dev, chrome://tracing)",
    .input = EXPORT_CAPTURE,
    .state_size = sizeof(struct json_state),
    .begin = json_begin,
    .event = json_event,
    .blob = json_event, /* a blob reference names its blob's instant */
    .finish = json_finish,
};
