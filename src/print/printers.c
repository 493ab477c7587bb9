// SPDX-License-Identifier: MIT
/*
 * printers.c - the body of each event's line, by the printer chosen for
 * the event when its first record is printed.
 *
 * Order of preference, as in the kernel: the event's own output code
 * (kernel_events.c) where the kernel has one; the print fmt, compiled once
 * (pf_compile.c) and run per record; libtraceevent when the compiler says
 * the print fmt uses something it does not do (the reason is kept and
 * listed by `report --stat`).  A kernel printer may decline a single
 * record (-ENOTSUP: a bprint whose format string is not in printk_formats);
 * that record then goes down the same list.
 *
 * A print fmt that is malformed is reported once with its byte offset in
 * the format file; the event then prints as unknown unless the kernel's
 * own printer, which does not need the print fmt, can print it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "bprint.h"
#include "kernel_events.h"
#include "util/id_table.h"
#include "printers.h"
#include "printfmt.h"
#include "raw_syscalls.h"
#include "decode/schema_internal.h"

/* Zero bytes after the copy libtraceevent gets, so a string read past a field still ends. */
#define PAYLOAD_PAD 64

static const char *const kind_names[PRINTER_KINDS] = {
	"kernel's own", "compiled print fmt", "libtraceevent", "none",
};

struct event_printer {
	tb_kernel_printer_fn *kernel; /* the kernel's own code for this event, or NULL */
	const struct tb_kernel_env *kenv; /* what it may ask (the schema's struct printers) */
	struct tb_printfmt *prog;     /* the compiled print fmt, or NULL */
	raw_syscalls_fn *by_hand;     /* the same print fmt written by hand, or NULL */
	enum printer_kind fallback;   /* for what the kernel printer declines */
	bool dynamic;                 /* the format has fields whose place each record gives */
	char why[TB_PROBLEM_REASON_MAX]; /* why the print fmt is not compiled */
	uint64_t printed[PRINTER_KINDS];
};

struct printers {
	struct tb_print_env env; /* must outlive kenv and the programs, hence heap */
	struct tb_kernel_env kenv;
	struct id_table by_id; /* struct event_printer * by ID, in blocks of the IDs printed (id_table.h) */
	struct tep_text tep_text; /* print_with_tep()'s, on the one thread that may call libtraceevent */
};

/* id's printer, or NULL when none was made yet. */
static inline struct event_printer *printer_by_id(const struct printers *p, uint32_t id)
{
	struct event_printer **slot = id_table_find(&p->by_id, id);

	return slot ? *slot : NULL;
}

/* -------------------------------------------------------------- state */

static void printers_free(void *state)
{
	struct printers *p = state;
	struct event_printer **ep;

	for (uint32_t id = 0; (ep = id_table_next(&p->by_id, &id)); id++)
		if (*ep) {
			tb_printfmt_free((*ep)->prog);
			free(*ep);
		}
	id_table_free(&p->by_id);
	tep_text_free(&p->tep_text);
	free(p);
}

static int bprint_hook(void *ctx, const char *fmt, const uint8_t *args, size_t args_len,
		       struct tb_strbuf *out)
{
	return tb_bprint_format(fmt, args, (uint32_t)args_len, ctx, out);
}

static struct printers *printers_of(struct tb_schema *s)
{
	struct printers *p = schema_print_state(s);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	id_table_init(&p->by_id, sizeof(struct event_printer *));
	tb_kernel_env_for_schema(s, &p->env, &p->kenv);
	p->kenv.print = &p->env;
	p->kenv.bprint = bprint_hook;
	p->kenv.bprint_ctx = &p->env;
	schema_set_print_state(s, p, printers_free);
	return p;
}

/* Compile f's print fmt; a malformed one is reported with its place in the file. */
static int compile(struct tb_schema *s, struct printers *p, const struct tb_format *f,
		   struct event_printer *ep)
{
	struct tb_problem err = {0};
	int rc = tb_printfmt_compile(f, &p->env, &ep->prog, &err);

	if (rc == -ENOTSUP) {
		snprintf(ep->why, sizeof(ep->why), "%s", err.reason);
		ep->fallback = PRINTER_TEP;
	} else if (rc == -EINVAL) {
		schema_report_format(s, f->id, f->print_fmt_text_offset + err.offset, err.reason);
		ep->fallback = PRINTER_NONE;
	} else if (rc == 0) {
		ep->fallback = PRINTER_COMPILED;
	}
	return rc == -ENOMEM ? rc : 0;
}

static struct event_printer *printer_for(struct tb_schema *s, struct printers *p,
					 const struct tb_format *f, const char *system)
{
	struct event_printer *ep = p ? printer_by_id(p, f->id) : NULL, **slot;

	if (!p)
		return NULL;
	if (ep)
		return ep;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return NULL;
	ep->kernel = tb_kernel_printer_find(system, f);
	ep->kenv = &p->kenv;
	ep->by_hand = raw_syscalls_printer(system, f);
	for (size_t i = 0; i < f->nfields; i++)
		ep->dynamic |= f->fields[i].kind != TB_SCHEMA_FIELD_STATIC;
	if (compile(s, p, f, ep) < 0 || !(slot = id_table_slot(&p->by_id, f->id))) {
		tb_printfmt_free(ep->prog);
		free(ep);
		return NULL;
	}
	*slot = ep;
	return ep;
}

/* ------------------------------------------------------- libtraceevent */

/*
 * The print fmt as libtraceevent renders it.  ftrace's own events print
 * without "NAME: " and keep their text's own newline, as in the kernel.
 * libtraceevent may read a little past a field (a string without its
 * NUL), so it gets a copy followed by zeros rather than the page itself.
 */
static int print_with_tep(struct tb_schema *s, const struct tb_format *f, const char *system,
			  const struct tb_render_record *ev, bool unnamed, struct tb_strbuf *out)
{
	bool ftrace_own = !strcmp(system, "ftrace");
	uint8_t stack[4096], *copy;
	struct tep_record rec = {.ts = ev->ts, .size = (int)ev->len, .record_size = (int)ev->len,
				 .cpu = ev->cpu};
	struct printers *p = printers_of(s);
	struct trace_seq *seq;
	size_t n;

	if (!p)
		return -ENOMEM;
	copy = (size_t)ev->len + PAYLOAD_PAD <= sizeof(stack) ? stack : malloc((size_t)ev->len + PAYLOAD_PAD);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, ev->data, ev->len);
	memset(copy + ev->len, 0, PAYLOAD_PAD);
	rec.data = copy;
	if (!ftrace_own && !unnamed) {
		sb_puts(out, f->name);
		sb_put(out, ": ", 2);
	}
	seq = tep_text_empty(&p->tep_text);
	tep_print_event(schema_tep(s), seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(seq);
	n = seq->len;
	if (ftrace_own && n > 0 && seq->buffer[n - 1] == '\n')
		n--;
	sb_put(out, seq->buffer, n);
	sb_putc(out, '\n');
	if (copy != stack)
		free(copy);
	return 0;
}

/* ---------------------------------------------------------------- body */

static int print_compiled(const struct event_printer *ep, const struct tb_format *f,
			  const struct tb_render_record *ev, bool unnamed, struct tb_strbuf *out, struct tb_problem *err)
{
	if (!unnamed) {
		sb_puts(out, f->name);
		sb_put(out, ": ", 2);
	}
	if (tb_printfmt_run(ep->prog, ev->data, ev->len, out) < 0) {
		err->offset = 0;
		snprintf(err->reason, sizeof(err->reason),
			 "%s: a value its print fmt needs lies outside the record", f->name);
		return -EINVAL;
	}
	sb_putc(out, '\n');
	return 0;
}

/* The body by the print fmt: compiled, or by libtraceevent. */
static int print_by_fmt(struct tb_schema *s, const struct event_printer *ep, const struct tb_format *f,
			const char *system, const struct tb_render_record *ev, bool unnamed, struct tb_strbuf *out,
			struct tb_problem *err, enum printer_kind *used)
{
	int rc;

	*used = ep->fallback;
	if (ep->fallback == PRINTER_NONE)
		return -ENOENT;
	/* Without dynamic fields only the size can be wrong: the full check then just says so. */
	if ((ep->dynamic || ev->len < f->min_size) && tb_schema_check_record(f, ev->data, ev->len, err) < 0)
		return -EINVAL;
	if (ep->fallback == PRINTER_COMPILED && ep->by_hand) {
		ep->by_hand(ev->data, !unnamed, out);
		rc = 0;
	} else if (ep->fallback == PRINTER_COMPILED) {
		rc = print_compiled(ep, f, ev, unnamed, out, err);
	} else {
		if (!schema_tep_ready(s, f->id)) { /* tried once, remembered by the schema */
			*used = PRINTER_NONE;
			return -ENOENT;
		}
		rc = print_with_tep(s, f, system, ev, unnamed, out);
	}
	return rc;
}

int print_event_body(struct tb_schema *s, const struct tb_format *f, const char *system,
		     const struct tb_render_record *ev, bool ns_clock, unsigned topts, struct tb_strbuf *out,
		     struct tb_problem *err, enum printer_kind *used)
{
	const struct event_printer *ep = printers_find(s, f, system);

	if (!ep)
		return -ENOMEM;
	return print_event_text(ep, s, f, system, ev, ns_clock, topts, false, out, err, used);
}

int print_event_text(const struct event_printer *ep, struct tb_schema *s, const struct tb_format *f,
		     const char *system, const struct tb_render_record *ev, bool ns_clock, unsigned topts,
		     bool unnamed, struct tb_strbuf *out, struct tb_problem *err, enum printer_kind *used)
{
	size_t start = out->len;
	int rc;

	if (ep->kernel) {
		/* It checks the record itself: some are shorter than their format says. */
		struct tb_kernel_record r = {ev->data, ev->len, ev->ts, ns_clock, topts};
		rc = ep->kernel(f, &r, ep->kenv, out, err);
		if (rc != -ENOTSUP) {
			*used = PRINTER_KERNEL;
			return rc == 0 && out->oom ? -ENOMEM : rc;
		}
		out->len = start;
	}
	return print_by_fmt(s, ep, f, system, ev, unnamed, out, err, used);
}

raw_syscalls_fn *printers_by_hand(const struct event_printer *ep)
{
	/* print_by_fmt()'s choice, made once: no kernel printer, and no check but of the size */
	if (ep->kernel || ep->fallback != PRINTER_COMPILED || ep->dynamic)
		return NULL;
	return ep->by_hand;
}

const struct tb_printfmt *printers_compiled(const struct event_printer *ep, bool *check_record)
{
	/* print_by_fmt()'s choice, as printers_by_hand()'s */
	*check_record = ep->dynamic;
	if (ep->kernel || ep->fallback != PRINTER_COMPILED || ep->by_hand)
		return NULL;
	return ep->prog;
}

tb_kernel_printer_fn *printers_kernel(const struct event_printer *ep, const struct tb_kernel_env **env)
{
	*env = ep->kenv;
	return ep->kernel;
}

const struct event_printer *printers_find(struct tb_schema *s, const struct tb_format *f, const char *system)
{
	return printer_for(s, printers_of(s), f, system);
}

void printers_count(struct tb_schema *s, uint32_t id, enum printer_kind used, uint64_t n)
{
	struct printers *p = schema_print_state(s);
	struct event_printer *ep = p ? printer_by_id(p, id) : NULL;

	if (ep && used < PRINTER_KINDS)
		ep->printed[used] += n;
}

void printed_tally_tell(struct printed_tally *t, struct tb_schema *s)
{
	uint64_t *by_kind;

	for (uint32_t id = 0; t->by_id.slot_size && (by_kind = id_table_next(&t->by_id, &id)); id++)
		for (int k = 0; k < PRINTER_KINDS; k++)
			if (by_kind[k])
				printers_count(s, id, (enum printer_kind)k, by_kind[k]);
	id_table_free(&t->by_id);
}

bool printers_prepare(struct tb_schema *s, const struct tb_format *f, const char *system)
{
	struct printers *p = printers_of(s);
	struct event_printer *ep = printer_for(s, p, f, system);

	return !ep || ep->fallback == PRINTER_TEP;
}

bool printers_tep_ready(struct tb_schema *s, const struct tb_format *f, const char *system)
{
	struct printers *p = printers_of(s);
	struct event_printer *ep = printer_for(s, p, f, system);

	return ep && ep->fallback != PRINTER_NONE && schema_tep_ready(s, f->id);
}

/* ---------------------------------------------------------------- stat */

void printers_write_stat(struct tb_schema *s, FILE *out)
{
	struct printers *p = schema_print_state(s);
	struct event_printer **slot;

	fprintf(out, "%-40s %10s  %s\n", "event", "records", "printer");
	for (uint32_t id = 0; p && (slot = id_table_next(&p->by_id, &id)); id++) {
		const struct event_printer *ep = *slot;
		const char *system = "";
		const struct tb_format *f = ep ? tb_schema_event(s, id, &system) : NULL;
		char name[2 * TB_NAME_MAX + 2];

		if (!f)
			continue;
		snprintf(name, sizeof(name), "%s:%s", system, f->name);
		for (int k = 0; k < PRINTER_KINDS; k++) {
			if (!ep->printed[k])
				continue;
			fprintf(out, "%-40s %10llu  %s", name, (unsigned long long)ep->printed[k], kind_names[k]);
			if (k == PRINTER_TEP || k == PRINTER_NONE)
				fprintf(out, " (print fmt not compiled: %s)",
					ep->why[0] ? ep->why : k == PRINTER_NONE ? "malformed, or refused by libtraceevent" : "?");
			fputc('\n', out);
		}
	}
}
