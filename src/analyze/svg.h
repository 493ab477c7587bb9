/* SPDX-License-Identifier: MIT */
/* svg.h - what the SVG writers share: text escaped for XML, and a colour from a name. */
#ifndef TRACEBUF_ANALYZE_SVG_H
#define TRACEBUF_ANALYZE_SVG_H

#include <stdint.h>
#include <stdio.h>

/* s (at most len bytes, up to a NUL) with &, <, >, " and ' as entities, control bytes as '?'. */
void svg_escape(FILE *out, const char *s, size_t len);
/* A stable 32-bit hash of a name, to pick colours that stay the same between runs. */
uint32_t svg_name_hash(const char *s);

#endif
