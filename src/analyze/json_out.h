/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - JSON text built in a strbuf: strings escaped so that any
 * bytes give valid JSON and UTF-8 (quotes, backslashes and control bytes
 * as escapes, bytes above 0x7f as \u00XX), time stamps as exact decimal
 * microseconds.
 */
#ifndef TRACEBUF_ANALYZE_JSON_OUT_H
#define TRACEBUF_ANALYZE_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "print/strbuf.h"

/* "s" with s's first len bytes (up to a NUL) escaped. */
void json_str(struct tb_strbuf *b, const char *s, size_t len);
/* Nanoseconds as microseconds with three decimals: 1234567 -> 1234.567. */
void json_us(struct tb_strbuf *b, uint64_t ns);
void json_u64(struct tb_strbuf *b, uint64_t v);
void json_i64(struct tb_strbuf *b, int64_t v);

#endif
