/* SPDX-License-Identifier: MIT */
/*
 * printers.h - which code prints an event's body, chosen once per event.
 *
 * The kernel prints most events through their print fmt and a few with
 * code of its own; tracebuf follows it: the kernel's own printers
 * (kernel_events.c) first, then the print fmt compiled by our compiler
 * (pf_compile.c), and libtraceevent only for a print fmt our compiler does
 * not handle.  The choice is made when the first record of an event is
 * printed and kept in the schema with the compiled program; every record
 * is counted against the printer that printed it, for `report --stat`.
 */
#ifndef TRACEBUF_PRINTERS_H
#define TRACEBUF_PRINTERS_H

#include <stdbool.h>
#include <stdio.h>

#include <traceevent/trace-seq.h>

#include "util/id_table.h"
#include "kernel_events.h"
#include "raw_syscalls.h"
#include "strbuf.h"
#include "tracebuf/report.h"

/* Which printer printed a record (or none did). */
enum printer_kind { PRINTER_KERNEL, PRINTER_COMPILED, PRINTER_TEP, PRINTER_NONE, PRINTER_KINDS };

/*
 * Append the body of ev (everything after the context columns, the line's
 * end included) to out.  0; -ENOENT when the event has no printer at all
 * (its format could not be used: reported once) and the caller prints it as
 * unknown; -EINVAL when the record does not hold what its format says (err
 * filled, offset from the payload start); -ENOMEM.
 */
int print_event_body(struct tb_schema *s, const struct tb_format *f, const char *system,
		     const struct tb_render_record *ev, bool ns_clock, unsigned topts, struct tb_strbuf *out,
		     struct tb_problem *err, enum printer_kind *used);

/* An event's printer, chosen when it is first asked for (opaque). */
struct event_printer;

/*
 * f's printer, chosen (and its print fmt compiled) now if it was not yet;
 * NULL when memory ran out.  It lives as long as the schema, and using it
 * changes nothing, as printers_prepare() says.
 */
const struct event_printer *printers_find(struct tb_schema *s, const struct tb_format *f, const char *system);

/*
 * print_event_body() by f's printer ep (printers_find()), without its
 * look-up.  unnamed: the print fmt's printers leave out the "NAME: " they
 * put in front, for a caller that names the event in a column of its own;
 * a kernel printer's text (*used PRINTER_KERNEL) is the kernel's whatever
 * unnamed says, and may start with the name.
 */
int print_event_text(const struct event_printer *ep, struct tb_schema *s, const struct tb_format *f,
		     const char *system, const struct tb_render_record *ev, bool ns_clock, unsigned topts,
		     bool unnamed, struct tb_strbuf *out, struct tb_problem *err, enum printer_kind *used);

/*
 * The hand-written printer (raw_syscalls.h) that print_event_text() runs,
 * *used PRINTER_COMPILED, for every record of ep's event at least its
 * format's min_size long; NULL when there is none, or records need more
 * checks.  For a caller that checks the size and calls it itself.
 */
raw_syscalls_fn *printers_by_hand(const struct event_printer *ep);

/*
 * The compiled print fmt that print_event_text() runs, *used
 * PRINTER_COMPILED, for every record of ep's event at least its format's
 * min_size long (and *check_record: that passes tb_schema_check_record());
 * NULL when a kernel printer or a hand-written one prints it instead, or the
 * print fmt is not compiled.  For a caller that checks and runs it itself.
 */
const struct tb_printfmt *printers_compiled(const struct event_printer *ep, bool *check_record);

/*
 * The kernel's own printer that print_event_text() tries first for ep's
 * event, with the environment it is given (*env); NULL when it has none.
 * What it declines (-ENOTSUP) print_event_text() prints another way.
 */
tb_kernel_printer_fn *printers_kernel(const struct event_printer *ep, const struct tb_kernel_env **env);

/* Count n records of event id against the printer that printed them (for the stat). */
void printers_count(struct tb_schema *s, uint32_t id, enum printer_kind used, uint64_t n);

/*
 * A report's printers_count()s, kept by ID until its end (a call per record
 * was a tenth of a reading thread's time): blocks of the IDs met
 * (id_table.h), not a table for every ID, which a small file paid megabytes
 * for.  Zero-initialised; used by one thread.
 */
struct printed_tally {
	struct id_table by_id; /* uint64_t[PRINTER_KINDS] by ID; slot_size 0: not set up yet */
};

/* n records of id printed by used (< PRINTER_KINDS), counted straight away if memory ran out. */
static inline void printed_tally_add(struct printed_tally *t, struct tb_schema *s, uint16_t id,
				     enum printer_kind used, uint64_t n)
{
	uint64_t *by_kind;

	if (!t->by_id.slot_size)
		id_table_init(&t->by_id, PRINTER_KINDS * sizeof(uint64_t));
	by_kind = id_table_slot(&t->by_id, id);
	if (by_kind)
		by_kind[used] += n;
	else
		printers_count(s, id, used, n);
}

/* Tell the schema's printers every count kept, and free the tally. */
void printed_tally_tell(struct printed_tally *t, struct tb_schema *s);

/*
 * libtraceevent's text of record after record in one trace_seq, emptied
 * between them: trace_seq_init() is a 4 KiB malloc, and one per record was
 * a good part of a report through libtraceevent.  Zero-initialised.
 */
struct tep_text {
	struct trace_seq seq;
	bool made;
};

/* t's trace_seq, empty. */
static inline struct trace_seq *tep_text_empty(struct tep_text *t)
{
	if (t->made)
		trace_seq_reset(&t->seq);
	else
		trace_seq_init(&t->seq);
	t->made = true;
	return &t->seq;
}

static inline void tep_text_free(struct tep_text *t)
{
	if (t->made)
		trace_seq_destroy(&t->seq);
	t->made = false;
}

/*
 * Choose f's printer now (compiling its print fmt), so that other threads
 * may then render its records without changing anything.  True when its
 * records may still need libtraceevent, which only this thread may call:
 * the caller renders those itself.
 */
bool printers_prepare(struct tb_schema *s, const struct tb_format *f, const char *system);

/*
 * Hand f to libtraceevent (once) for a printer that is libtraceevent's by
 * design (trace-cmd's layout): false when our compiler found its print fmt
 * malformed (reported; libtraceevent is never given one) or libtraceevent
 * refused it.
 */
bool printers_tep_ready(struct tb_schema *s, const struct tb_format *f, const char *system);

/* One line per event printed so far: records, printer, and why a fallback was needed. */
void printers_write_stat(struct tb_schema *s, FILE *out);

#endif
