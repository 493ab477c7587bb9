/* SPDX-License-Identifier: MIT */
/*
 * diag.h - filling a struct tb_problem (schema.h): where in its input a
 * problem is and why.  Internal to the reading side.
 */
#ifndef TRACEBUF_DIAG_H
#define TRACEBUF_DIAG_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebuf/schema.h"

/* Set d's offset and its reason from a printf format. */
static inline void diag_vset(struct tb_problem *d, uint64_t offset, const char *fmt, va_list ap)
{
	d->offset = offset;
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
}

static inline int diag_fail(struct tb_problem *err, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Describe a failure in *err (when there is one) and return -EINVAL, for a parser's return. */
static inline int diag_fail(struct tb_problem *err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		diag_vset(err, offset, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

#endif
