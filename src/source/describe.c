// SPDX-License-Identifier: MIT
/*
 * describe.c - an event description as the kernel's format file.
 *
 * The layout is the one every events/SYSTEM/NAME/format file of the
 * running kernel has: name and ID lines, "format:", the four common fields,
 * a blank line, one tab-indented line per field, a blank line and the
 * print fmt.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tracebuf/describe.h"

/* snprintf into what is left of the buffer, always adding to the total. */
struct text {
	char *buf;
	size_t size;
	int len;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
	size_t used = t->len >= 0 && (size_t)t->len < t->size ? (size_t)t->len : t->size;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->buf ? t->buf + used : NULL, t->size - used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += n;
}

static void add_field(struct text *t, const char *type, const char *name, unsigned offset,
		      unsigned size, unsigned is_signed)
{
	add(t, "\tfield:%s %s;\toffset:%u;\tsize:%u;\tsigned:%u;\n", type, name, offset, size,
	    is_signed);
}

int tb_evdesc_format(const struct tb_evdesc *d, uint16_t id, char *buf, size_t size)
{
	struct text t = {buf, size, 0};

	if (buf && size)
		buf[0] = '\0';
	add(&t, "name: %s\nID: %u\nformat:\n", d->name, id);
	add_field(&t, "unsigned short", "common_type", 0, 2, 0);
	add_field(&t, "unsigned char", "common_flags", 2, 1, 0);
	add_field(&t, "unsigned char", "common_preempt_count", 3, 1, 0);
	add_field(&t, "int", "common_pid", 4, 4, 1);
	add(&t, "\n");
	for (unsigned i = 0; i < d->nfields; i++)
		add_field(&t, d->fields[i].type, d->fields[i].name, d->fields[i].offset,
			  d->fields[i].size, d->fields[i].is_signed);
	add(&t, "\nprint fmt: %s\n", d->print_fmt);
	return t.len;
}
