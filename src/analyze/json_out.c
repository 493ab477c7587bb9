// SPDX-License-Identifier: MIT
/* json_out.c - escaped JSON strings and exact numbers (json_out.h). */
#include <inttypes.h>
#include <stdio.h>

#include "json_out.h"

static const char hex[] = "0123456789abcdef";

void json_str(struct tb_strbuf *b, const char *s, size_t len)
{
	sb_putc(b, '"');
	for (size_t i = 0; i < len && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			sb_putc(b, '\\');
			sb_putc(b, (char)c);
		} else if (c < 0x20 || c >= 0x7f) {
			/* Control bytes must be escaped; other bytes may not be UTF-8: each as its code point. */
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			sb_put(b, e, sizeof(e));
		} else {
			sb_putc(b, (char)c);
		}
	}
	sb_putc(b, '"');
}

void json_u64(struct tb_strbuf *b, uint64_t v)
{
	char *p = sb_room(b, 24);

	if (p)
		sb_added(b, (size_t)snprintf(p, 24, "%" PRIu64, v));
}

void json_i64(struct tb_strbuf *b, int64_t v)
{
	char *p = sb_room(b, 24);

	if (p)
		sb_added(b, (size_t)snprintf(p, 24, "%" PRId64, v));
}

void json_us(struct tb_strbuf *b, uint64_t ns)
{
	char *p = sb_room(b, 32);

	if (p)
		sb_added(b, (size_t)snprintf(p, 32, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000)));
}
