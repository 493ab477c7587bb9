/* SPDX-License-Identifier: MIT */
/*
 * render.h - one record as one line of `trace` text, into the printer's
 * output buffer (the public tb_render_event() is this plus a fwrite).
 */
#ifndef TRACEBUF_RENDER_H
#define TRACEBUF_RENDER_H

#include "printers.h"
#include "strbuf.h"
#include "tracebuf/report.h"

/*
 * latency-format with verbose: the bytes a line's context holds where the
 * record's index and the time to the next record go, for the report to
 * replace once the merged order is known.
 */
#define TB_VERBOSE_INDEX '\x01'
#define TB_VERBOSE_NEXT '\x02'

/*
 * Append ev's line, newline included, to out.  Returns as
 * tb_render_event(); -EINVAL leaves nothing worth keeping after the length
 * out had on entry (the caller truncates), -ENOMEM when out could not grow.
 * *used says which printer printed the body (PRINTER_NONE: none could).
 * Changes nothing shared once the event's printer is prepared
 * (printers_prepare) and it is not libtraceevent: then several threads may
 * render records of the same schema at once.
 */
int render_event(struct tb_schema *s, const struct tb_render_record *ev,
		 const struct tb_render_opts *opts, struct tb_strbuf *out, struct tb_problem *err,
		 enum printer_kind *used);

/*
 * Append the body alone: what follows the context columns ("name: fields"
 * or an ftrace print's text), newline included, without counting it
 * against its printer (*used says which; the caller counts).  Returns as
 * render_event(); thread-safe as it is.
 */
int render_event_body(struct tb_schema *s, const struct tb_render_record *ev, bool ns_clock,
		      struct tb_strbuf *out, struct tb_problem *err, enum printer_kind *used);

/*
 * Append only what follows the context columns on ev's line ("name:
 * fields", or the text of an ftrace print), newline included.  Returns as
 * render_event().
 */
int render_event_info(struct tb_schema *s, const struct tb_render_record *ev, struct tb_strbuf *out,
		      struct tb_problem *err);

#endif
