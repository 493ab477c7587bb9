// SPDX-License-Identifier: MIT
/* svg.c - XML text escaping and name hashing for the SVG writers (svg.h). */
#include "svg.h"

void svg_escape(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			/* XML 1.0 forbids most control characters even as references. */
			fputc(c < ' ' || c == 0x7f ? '?' : c, out);
		}
	}
}

uint32_t svg_name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}
