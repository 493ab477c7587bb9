// SPDX-License-Identifier: MIT
/*
 * text.c - a growing string for the texts the registry writes (formats,
 * printk_formats, kallsyms).  Never on a write path.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "util/grow.h"

static int text_reserve(struct text *t, size_t more)
{
	char *buf;

	if (t->oom)
		return -1;
	buf = tb__grow(t->buf, &t->cap, t->len + more + 1, 1, 256);
	if (!buf) {
		free(t->buf);
		*t = (struct text){.oom = 1};
		return -1;
	}
	t->buf = buf;
	return 0;
}

void text_put(struct text *t, const char *s, size_t n)
{
	if (text_reserve(t, n) < 0)
		return;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

void text_puts(struct text *t, const char *s)
{
	text_put(t, s, strlen(s));
}

void text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || text_reserve(t, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

char *text_take(struct text *t, size_t *len)
{
	char *buf;

	if (t->oom)
		return NULL;
	if (text_reserve(t, 0) < 0) /* an empty text still ends in NUL */
		return NULL;
	buf = t->buf;
	if (len)
		*len = t->len;
	*t = (struct text){0};
	return buf;
}
