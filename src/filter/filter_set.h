/* SPDX-License-Identifier: MIT */
/*
 * filter_set.h - what a filter set (tracebuf/filter.h, `report -F`) needs
 * to know of a record, and who tells it.  The set is the filter language's
 * (which specs name the event, each expression compiled once per event
 * ID); which event a record is and the command name of its pid are the
 * reading side's, found in a schema (decode/filter_schema.c).  Internal.
 */
#ifndef TRACEBUF_FILTER_SET_H
#define TRACEBUF_FILTER_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/filter.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

/* A record's event, as the reading side found it. */
struct filter_set_event {
	uint16_t id;                    /* common_type */
	int32_t pid;                    /* common_pid */
	const struct tb_format *format; /* NULL: no format for id (or the record is too short) */
	const char *system;             /* the format's system */
	/* The command name of pid, asked for only when an expression reads COMM; never NULL. */
	const char *(*comm)(void *ctx, int32_t pid);
	void *ctx;
};

/* No spec added (or no set): every record is kept, nothing need be looked up. */
bool filter_set_empty(const struct tb_filter_set *set);

/* Whether the specs keep ev, a record of event (tb_filter_set_keep's rule). */
bool filter_set_keep_record(struct tb_filter_set *set, const struct filter_set_event *event,
			    const struct tb_render_record *ev);

/* An event of the reading side's schema, by name. */
struct filter_set_name {
	const char *system, *name;
};

/*
 * The first name of the specs' EVENTS (its EVENT part, as given) that
 * matches none of events[0..n), or NULL: tb_filter_set_unmatched's rule,
 * the events listed by the reading side (decode/filter_schema.c).
 */
const char *filter_set_unmatched_of(const struct tb_filter_set *set, const struct filter_set_name *events, size_t n);

#endif
