/* SPDX-License-Identifier: MIT */
/*
 * fields.h - an event's body as the `fields` trace option prints it
 * (fields.c): "NAME: f1=v1 f2=v2...", newline included.
 */
#ifndef TRACEBUF_FIELDS_H
#define TRACEBUF_FIELDS_H

#include "strbuf.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

/*
 * Append f's fields of record ev (system: f's system) to out.  ev is at
 * least a common header long; a field past its end prints "<OVERFLOW>".
 * 0 or -ENOMEM.  Reads the schema's symbols only: thread-safe.
 */
int fields_print(struct tb_schema *s, const struct tb_format *f, const char *system,
		 const struct tb_render_record *ev, struct tb_strbuf *out);

#endif
