/* SPDX-License-Identifier: MIT */
/*
 * kernel_events.h - the events the kernel prints with its own C code
 * instead of their format file's print fmt.
 *
 * In the kernel a `trace` line is the context columns followed by what the
 * event's struct trace_event_functions .trace callback writes.  For
 * ordinary events that callback runs the print fmt (after "NAME: "); for
 * the events below it is hand-written code whose text the print fmt does
 * not describe (the format of syscalls:sys_enter_write says "fd: 0x%08lx,
 * ..." but the kernel prints "sys_write(fd: 2, ...)"):
 *
 *   syscalls:sys_enter_*   "sys_NAME(arg: v, ...)"      trace_syscalls.c print_syscall_enter
 *   syscalls:sys_exit_*    "sys_NAME -> 0xRET"          print_syscall_exit
 *   ftrace:print           "SYMBOL: text"               trace_output.c trace_print_print
 *   ftrace:bputs           "SYMBOL: string"             trace_bputs_print
 *   ftrace:bprint          "SYMBOL: formatted text"     trace_bprint_print (the text: a hook)
 *   ftrace:raw_data        "# ID buf: xx xx ..."        trace_raw_data
 *   ftrace:function        "func <-parent"              trace_fn_trace
 *   ftrace:func_repeats    "func <-parent (repeats: N, last_ts: T)"  trace_func_repeats_print
 *   ftrace:kernel_stack    "<stack trace>" and " => func" lines      trace_stack_print
 *   ftrace:user_stack      "<user stack trace>" and " =>  <addr>"    trace_user_stack_print
 *
 * A printer writes everything after the context columns, including the
 * line's end exactly as the kernel ends it: normally one "\n", several
 * lines for stacks, and nothing more than the text itself for print,
 * bputs and bprint, whose text brings its own newline (a trace_marker
 * write holding a NUL byte prints up to that byte and no newline at all,
 * so the next event's line follows on the same line, as in the kernel).
 * The record's TB_TOPT_* bits say which trace options depart from the
 * defaults (print-parent on; sym-offset, sym-addr, verbose, sym-userobj off).
 *
 * Ownership: printers keep nothing; the record, the format and the
 * environment stay the caller's.
 */
#ifndef TRACEBUF_KERNEL_EVENTS_H
#define TRACEBUF_KERNEL_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "printfmt.h"
#include "strbuf.h"
#include "tracebuf/schema.h"

/* One record as a printer sees it. */
struct tb_kernel_record {
	const uint8_t *data; /* the payload, common header first */
	uint32_t len;        /* payload bytes, as the ring buffer stored them */
	uint64_t ts;         /* the event's time (func_repeats prints a time of its own) */
	bool ns_clock;       /* ts counts nanoseconds: times print as seconds.microseconds */
	unsigned topts;      /* TB_TOPT_* bits (tracebuf/capture.h): sym-offset, sym-addr, print-parent */
};

/*
 * The text of a bprint record: fmt is the trace_printk format (found by the
 * record's fmt address), args the binary arguments the record stores
 * (args_len bytes, vbin_printf layout).  Appends the formatted text to out
 * and returns 0, or a negative errno (the line is then printed by the
 * fallback printer).  Supplied by the print-fmt engine (tb_bprint_format).
 */
typedef int tb_bprint_fn(void *ctx, const char *fmt, const uint8_t *args, size_t args_len,
			 struct tb_strbuf *out);

/* What printers may ask about the kernel. */
struct tb_kernel_env {
	/*
	 * symbol: kernel symbols, NULL when the trace has none (then print
	 * records name their writer after trace_marker's, the only writer of
	 * print records in an instance); kernel_string: printk_formats.
	 */
	const struct tb_print_env *print;
	tb_bprint_fn *bprint; /* NULL: bprint records go to the fallback */
	void *bprint_ctx;
	/*
	 * The mapping of ip in process tgid, for sym-userobj (print->ctx as
	 * ctx; tb_schema_user_vma's answers); NULL: none known.
	 */
	int (*user_vma)(void *ctx, uint32_t tgid, uint64_t ip, uint64_t *start, const char **path);
};

/*
 * Print one record, checked only to be at least as long as the common
 * header: a printer checks every byte it reads against r->len itself
 * (kernel_stack records are shorter than their format's caller[8]).
 * Returns 0; -EINVAL when the record lacks what the line needs (err says
 * what, offset from the payload start; out may hold a partial line the
 * caller drops); -ENOTSUP when this record needs what the environment
 * lacks (a bprint hook, a printk_formats string, BTF for func-args): the
 * caller prints it another way.
 */
typedef int tb_kernel_printer_fn(const struct tb_format *f, const struct tb_kernel_record *r,
				 const struct tb_kernel_env *env, struct tb_strbuf *out,
				 struct tb_problem *err);

/* The kernel's own printer for events of system/f, or NULL when the print fmt applies. */
tb_kernel_printer_fn *tb_kernel_printer_find(const char *system, const struct tb_format *f);

/*
 * An environment answering from schema s (schema_kernel.h): its symbols
 * (symbol stays NULL when none were loaded), printk_formats strings,
 * constants and type sizes.  *print is the caller's and must outlive
 * *env; env->bprint is left NULL for the caller to connect.
 */
void tb_kernel_env_for_schema(struct tb_schema *s, struct tb_print_env *print,
			      struct tb_kernel_env *env);

#endif
