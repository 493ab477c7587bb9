// SPDX-License-Identifier: MIT
/* Numbers given on the command line, read strictly. */
#ifndef TRACEBUF_TOOLS_NUMARG_H
#define TRACEBUF_TOOLS_NUMARG_H

/*
 * s as a decimal count into *v: 0, or -1 when s is empty, signed, has
 * anything after the digits or does not fit 64 bits (strtoull would take
 * "-1" as 2^64 - 1 and saturate on overflow).
 */
int parse_u64(const char *s, unsigned long long *v);

#endif
