/* SPDX-License-Identifier: MIT */
/*
 * raw_syscalls.h - raw_syscalls:sys_enter and sys_exit printed by
 * hand-written code: the print fmt's text, without the program.
 *
 * In a syscall-heavy trace nine lines in ten are these two events, and the
 * kernel prints them through their print fmts
 *   sys_enter: "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", REC->id, REC->args[0..5]
 *   sys_exit:  "NR %ld = %ld", REC->id, REC->ret
 * which the compiled program runs one op at a time.  Written directly they
 * cost a third as much.  Only a format whose print fmt is exactly the one
 * above and whose fields are 8-byte longs where x86_64 puts them gets this
 * printer; any other goes to the compiled print fmt, which prints the same
 * text (tests/test_raw_syscalls.c holds the two against each other).
 *
 * Ownership: nothing is kept; the record and the buffer are the caller's.
 */
#ifndef TRACEBUF_RAW_SYSCALLS_H
#define TRACEBUF_RAW_SYSCALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"
#include "tracebuf/schema.h"

/*
 * Append "NAME: <the print fmt's text>\n" of rec (without "NAME: " unless
 * named), which holds at least the format's min_size bytes.
 */
typedef void raw_syscalls_fn(const uint8_t *rec, bool named, struct tb_strbuf *out);

/*
 * The same line without the name, written at p, which has
 * RAW_SYSCALLS_LINE_MAX bytes of room (some past the line's end may be
 * written over); returns the line's end.  For a caller that asks room once
 * for what it puts in front and the line.
 */
#define RAW_SYSCALLS_LINE_MAX 160
typedef char *raw_syscalls_line_fn(char *p, const uint8_t *rec);

/* printer's line writer (printer from raw_syscalls_printer()), or NULL for any other. */
raw_syscalls_line_fn *raw_syscalls_line(raw_syscalls_fn *printer);

/* The hand-written printer for f of system, or NULL when f is not one it prints exactly. */
raw_syscalls_fn *raw_syscalls_printer(const char *system, const struct tb_format *f);

#endif
