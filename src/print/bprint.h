/* SPDX-License-Identifier: MIT */
/*
 * bprint.h - trace_printk's binary records (the ftrace "bprint" event)
 * turned into text: the format string comes from printk_formats, the
 * arguments are the words vbin_printf() packed at the call.
 *
 * Internal to the reading side.  Nothing is allocated but out's growth.
 */
#ifndef TRACEBUF_BPRINT_H
#define TRACEBUF_BPRINT_H

#include <stdint.h>

#include "printfmt.h"
#include "strbuf.h"

/*
 * Append fmt printed with the packed arguments args[0..len) to out, as the
 * kernel's bstr_printf() does: each number at its size's alignment (8-byte
 * ones at 4), %s strings inline with their NUL, %p of an address as 8
 * bytes, any other %p extension as the text already printed at the call.
 * Returns 0, or -EINVAL when an argument lies past len (out then holds the
 * text printed so far).
 */
int tb_bprint_format(const char *fmt, const uint8_t *args, uint32_t len,
		     const struct tb_print_env *env, struct tb_strbuf *out);

#endif
