/* SPDX-License-Identifier: MIT */
/*
 * kstrings.h - strings of the kernel by address, from the printk_formats
 * file: the formats of trace_printk() (bprint records hold the address of
 * their format) and the strings tracepoint_string() marks (bputs records
 * and some events hold such addresses).
 *
 * Each line is  0xADDR : "TEXT"  where the kernel wrote TEXT with newline,
 * tab and double quote escaped as \n, \t and \" (a backslash itself is
 * written as is); the strings kept here are unescaped back.  A line that
 * is not of that form is reported with its byte offset and skipped.  An
 * address listed twice keeps its first string.
 *
 * Ownership: tb_kstrings_parse() returns a table freed with
 * tb_kstrings_free(); returned strings live as long as the table.
 */
#ifndef TRACEBUF_KSTRINGS_H
#define TRACEBUF_KSTRINGS_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/schema.h"

struct tb_kstrings;

/* 0, -EINVAL (some lines bad, the rest kept), -ENOMEM; *out is set unless -ENOMEM. */
int tb_kstrings_parse(const char *file, const char *text, size_t len, tb_problem_fn *diag,
		      void *diag_ctx, struct tb_kstrings **out);
void tb_kstrings_free(struct tb_kstrings *k);

/* The string at addr, or NULL. */
const char *tb_kstrings_find(const struct tb_kstrings *k, uint64_t addr);
size_t tb_kstrings_count(const struct tb_kstrings *k);
/* String i (0 <= i < count) and its address: for handing the table on. */
const char *tb_kstrings_at(const struct tb_kstrings *k, size_t i, uint64_t *addr);

#endif
