// SPDX-License-Identifier: MIT
/*
 * filter_set.c - `tracebuf report -F`: trace-cmd's "EVENTS: EXPR" specs,
 * each compiled per event ID the first time a record of that ID is met
 * (a live kernel has thousands of events; a trace uses a few).  The
 * language alone: which event a record is, and a pid's command name, are
 * the reading side's to find (decode/filter_schema.c, through
 * filter_set.h).
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "filter_set.h"
#include "tracebuf/filter.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

/* One name of EVENTS: SYSTEM/EVENT, or one name that may be either. */
struct name_pat {
	char *sys, *event; /* the texts; sys NULL for a single name */
	regex_t sys_re, event_re;
};

struct spec {
	char *text;   /* the whole spec, for messages */
	char *names_buf; /* a copy of EVENTS, cut up: the names point into it */
	char *expr;   /* inside text, NULL when the spec has none */
	bool exclude; /* -v */
	struct name_pat *names;
	size_t nnames;
};

/* What the specs make of one event ID. */
struct per_spec {
	bool applies;      /* the spec names the event */
	bool broken;       /* its expression did not compile for it */
	struct tb_filter *f; /* NULL: no expression, every record passes */
};

struct tb_filter_set {
	struct spec *specs;
	size_t nspecs, npositive;
	struct per_spec *ids[65536]; /* per ID, nspecs entries; NULL until met */
	unsigned failures;
	FILE *errors;
};

struct tb_filter_set *tb_filter_set_new(void)
{
	return calloc(1, sizeof(struct tb_filter_set));
}

static void free_ids(struct tb_filter_set *set)
{
	for (size_t id = 0; id < 65536; id++) {
		if (!set->ids[id])
			continue;
		for (size_t i = 0; i < set->nspecs; i++)
			tb_filter_free(set->ids[id][i].f);
		free(set->ids[id]);
		set->ids[id] = NULL;
	}
}

static void free_spec(struct spec *sp)
{
	for (size_t k = 0; k < sp->nnames; k++) {
		if (sp->names[k].sys)
			regfree(&sp->names[k].sys_re);
		regfree(&sp->names[k].event_re);
	}
	free(sp->names);
	free(sp->names_buf);
	free(sp->text);
}

void tb_filter_set_free(struct tb_filter_set *set)
{
	if (!set)
		return;
	free_ids(set);
	for (size_t i = 0; i < set->nspecs; i++)
		free_spec(&set->specs[i]);
	free(set->specs);
	free(set);
}

void tb_filter_set_errors_to(struct tb_filter_set *set, FILE *errors)
{
	if (set)
		set->errors = errors;
}

unsigned tb_filter_set_failures(const struct tb_filter_set *set)
{
	return set ? set->failures : 0;
}

static char *trim(char *s)
{
	char *end = s + strlen(s);

	while (isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* "^(pattern)$" compiled; false when regcomp refuses it. */
static bool compile_whole(regex_t *re, const char *pattern)
{
	size_t n = strlen(pattern) + 5;
	char *anchored = malloc(n);
	bool ok;

	if (!anchored)
		return false;
	snprintf(anchored, n, "^(%s)$", pattern);
	ok = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB) == 0;
	free(anchored);
	return ok;
}

static int spec_fail(struct tb_filter_error *err, size_t pos, const char *why, const char *name)
{
	if (err) {
		err->pos = pos;
		snprintf(err->reason, sizeof(err->reason), "%s '%s'", why, name);
	}
	return -EINVAL;
}

/* EVENTS, ','-separated, into sp->names; positions for messages count from base. */
static int parse_names(struct spec *sp, char *events, size_t base, struct tb_filter_error *err)
{
	char *save = NULL;

	for (char *tok = strtok_r(events, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *name = trim(tok), *slash = strchr(name, '/');
		struct name_pat *np, *grown = realloc(sp->names, (sp->nnames + 1) * sizeof(*grown));
		size_t pos = base + (size_t)(name - events);
		if (!grown)
			return -ENOMEM;
		sp->names = grown;
		np = &sp->names[sp->nnames];
		memset(np, 0, sizeof(*np));
		if (!*name)
			return spec_fail(err, pos, "an empty event name in", sp->text);
		if (slash) {
			*slash = '\0';
			np->sys = trim(name);
			np->event = trim(slash + 1);
			if (!compile_whole(&np->sys_re, np->sys))
				return spec_fail(err, pos, "not a regular expression:", np->sys);
			if (!compile_whole(&np->event_re, np->event)) {
				regfree(&np->sys_re);
				return spec_fail(err, pos, "not a regular expression:", np->event);
			}
		} else {
			np->event = name;
			if (!compile_whole(&np->event_re, np->event))
				return spec_fail(err, pos, "not a regular expression:", np->event);
		}
		sp->nnames++;
	}
	return sp->nnames ? 0 : spec_fail(err, base, "no event named in", sp->text);
}

int tb_filter_set_add(struct tb_filter_set *set, const char *spec, bool exclude,
		      struct tb_filter_error *err)
{
	struct spec sp = {.exclude = exclude};
	struct spec *grown;
	char *colon;
	int rc;

	if (!set || !spec)
		return -EINVAL;
	sp.text = strdup(spec);
	sp.names_buf = sp.text ? strdup(spec) : NULL;
	if (!sp.names_buf) {
		free(sp.text);
		return -ENOMEM;
	}
	colon = strchr(sp.names_buf, ':');
	if (colon) {
		*colon = '\0';
		sp.expr = trim(sp.text + (colon - sp.names_buf) + 1);
		if (!*sp.expr)
			sp.expr = NULL; /* "EVENT:" is the event, unfiltered */
	}
	rc = parse_names(&sp, sp.names_buf, 0, err);
	grown = rc == 0 ? realloc(set->specs, (set->nspecs + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free_spec(&sp);
		return rc ? rc : -ENOMEM;
	}
	free_ids(set); /* a spec more: what was worked out per ID is stale */
	set->specs = grown;
	set->specs[set->nspecs++] = sp;
	set->npositive += !exclude;
	return 0;
}

static bool name_matches(const struct name_pat *np, const char *system, const char *event)
{
	if (np->sys)
		return !regexec(&np->sys_re, system, 0, NULL, 0) && !regexec(&np->event_re, event, 0, NULL, 0);
	return !regexec(&np->event_re, event, 0, NULL, 0) || !regexec(&np->event_re, system, 0, NULL, 0);
}

/* Whether the spec names this event literally (not through its system or a pattern). */
static bool names_exactly(const struct spec *sp, const char *system, const char *event)
{
	for (size_t k = 0; k < sp->nnames; k++)
		if (!strcmp(sp->names[k].event, event) && (!sp->names[k].sys || !strcmp(sp->names[k].sys, system)))
			return true;
	return false;
}

static void report_failure(struct tb_filter_set *set, const struct spec *sp, const char *system,
			   const char *event, const struct tb_filter_error *e)
{
	FILE *out = set->errors ? set->errors : stderr;
	char text[1024];

	set->failures++;
	tb_filter_error_text(sp->expr, e, text, sizeof(text));
	fprintf(out, "tracebuf: -F '%s': the filter does not fit %s/%s, whose records are left out:\n%s",
		sp->text, system, event, text);
}

/* What each spec makes of event f (system sys): the ID's entries, or NULL when out of memory. */
static struct per_spec *work_out(struct tb_filter_set *set, const struct tb_format *f, const char *sys)
{
	struct per_spec *ps = calloc(set->nspecs ? set->nspecs : 1, sizeof(*ps));

	for (size_t i = 0; ps && i < set->nspecs; i++) {
		const struct spec *sp = &set->specs[i];
		struct tb_filter_error e;
		for (size_t k = 0; k < sp->nnames && !ps[i].applies; k++)
			ps[i].applies = name_matches(&sp->names[k], sys, f->name);
		if (!ps[i].applies || !sp->expr)
			continue;
		unsigned flags = names_exactly(sp, sys, f->name) ? 0 : TB_FILTER_MISSING_FALSE;
		int rc = tb_filter_compile_format(sp->expr, f, flags, &ps[i].f, &e);
		if (rc == -EINVAL)
			report_failure(set, sp, sys, f->name, &e);
		ps[i].broken = rc < 0;
	}
	return ps;
}

bool filter_set_empty(const struct tb_filter_set *set)
{
	return !set || !set->nspecs;
}

bool filter_set_keep_record(struct tb_filter_set *set, const struct filter_set_event *event,
			    const struct tb_render_record *ev)
{
	const struct tb_format *f = event->format;
	struct tb_filter_env env;
	bool kept = false;

	if (filter_set_empty(set))
		return true;
	if (!f)
		return set->npositive == 0; /* no event to name: only a filter naming none keeps it */
	if (!set->ids[event->id] && !(set->ids[event->id] = work_out(set, f, event->system)))
		return true; /* out of memory: print rather than lose */
	env.cpu = ev->cpu;
	env.comm = NULL;
	for (size_t i = 0; i < set->nspecs; i++) {
		const struct per_spec *ps = &set->ids[event->id][i];
		if (!ps->applies)
			continue;
		/* The kernel's COMM is the writer's name: the reading side finds it for the pid. */
		if (!env.comm && (tb_filter_uses(ps->f) & TB_FILTER_USES_COMM))
			env.comm = event->comm(event->ctx, event->pid);
		bool pass = !ps->broken && tb_filter_match(ps->f, ev->data, ev->len, &env);
		if (pass && set->specs[i].exclude)
			return false;
		kept |= pass;
	}
	return set->npositive == 0 || kept;
}

const char *filter_set_unmatched_of(const struct tb_filter_set *set, const struct filter_set_name *events, size_t n)
{
	for (size_t i = 0; set && i < set->nspecs; i++)
		for (size_t k = 0; k < set->specs[i].nnames; k++) {
			const struct name_pat *np = &set->specs[i].names[k];
			bool met = false;
			for (size_t e = 0; e < n && !met; e++)
				met = name_matches(np, events[e].system, events[e].name);
			if (!met)
				return np->event;
		}
	return NULL;
}
