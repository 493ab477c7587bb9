// SPDX-License-Identifier: MIT
/*
 * fields.c - an event's body under the `fields` trace option: the event's
 * print fmt is left aside and every field of its own (not the common_*
 * header) is printed as " NAME=VALUE", in the format file's order.
 *
 * How each value is written follows the kernel's print_fields()
 * (kernel/trace/trace_output.c, 6.x), with the field's kind decided from
 * its declared type as the kernel's filter_assign_type() decides it:
 *  - a char array, "comm" or a static string: up to size bytes or a NUL;
 *  - a __data_loc / __rel_loc char string: its bytes up to its length or a NUL;
 *  - a "char *": "(0x<hex>)", unpadded as 6.18 prints it (a user
 *    address: sys_enter_write's buf); the kernel adds ":string" when it
 *    can read a string there, which a capture does not hold;
 *  - anything else by size: 1 byte "'c'(N)" ('c' only when printable),
 *    2 bytes "0x%x (%d)" unsigned, 4 bytes "0x%x (%d)" (a __data_loc or
 *    __rel_loc array: its bytes as "%02x" joined by ','), 8 bytes "%pS
 *    (%lld)" - the symbol and offset when the value is a kernel address a
 *    symbol holds, else 0x and the hex - and "<INVALID-SIZE>" for others;
 *  - a __data_loc cpumask: "<INVALID-TYPE>" (print_fields has no case);
 *  - ftrace's function events' ip and parent_ip (__field_fn): "%pS" alone.
 * A field past the record's end is "<OVERFLOW>".  ftrace's own events
 * print "UNKNOWN TYPE N" instead (fields_print says why).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "kvsprintf.h"
#include "printfmt.h"
#include "decode/schema_kernel.h"

enum field_kind { FK_STRING, FK_DYN_STRING, FK_REL_STRING, FK_PTR_STRING, FK_CPUMASK, FK_TRACE_FN, FK_OTHER };

/* filter_assign_type() of the declared type, and __field_fn of ftrace's function events. */
static enum field_kind field_kind(const struct tb_schema_field *fd, const char *system, const struct tb_format *f)
{
	const char *t = fd->type;
	bool has_char = strstr(t, "char") != NULL;

	if (strstr(t, "__data_loc") && (has_char || strstr(t, "cpumask_t")))
		return has_char ? FK_DYN_STRING : FK_CPUMASK;
	if (strstr(t, "__rel_loc") && (has_char || strstr(t, "cpumask_t")))
		return has_char ? FK_REL_STRING : FK_CPUMASK;
	/* the format's "char comm[16]": the "[16]" is kept with the array flag, not the type */
	if ((fd->is_array || strchr(t, '[')) && has_char)
		return FK_STRING;
	if (!strcmp(t, "char *") || !strcmp(t, "const char *"))
		return FK_PTR_STRING;
	if (!strcmp(system, "ftrace") && (!strcmp(f->name, "function") || !strcmp(f->name, "func_repeats")) &&
	    (!strcmp(fd->name, "ip") || !strcmp(fd->name, "parent_ip")))
		return FK_TRACE_FN;
	return FK_OTHER;
}

static uint64_t load(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;

	/* The trace is the machine's own byte order: little-endian x86_64 and arm64. */
	memcpy(&v, p, size);
	return v;
}

/* The text of at most max bytes at p, up to a NUL ("%.*s"). */
static void put_bounded(struct tb_strbuf *out, const uint8_t *p, size_t max)
{
	sb_put(out, p, strnlen((const char *)p, max));
}

/* print_array(): the bytes of a dynamic array as "%02x" joined by ','. */
static void put_array(struct tb_strbuf *out, const uint8_t *p, uint32_t len)
{
	char *d = sb_room(out, (size_t)len * 3);

	if (!d)
		return;
	for (uint32_t i = 0; i < len; i++) {
		if (i)
			*d++ = ',';
		memcpy(d, kv_hex_pairs_lower + 2 * p[i], 2);
		d += 2;
	}
	sb_added(out, len ? (size_t)len * 3 - 1 : 0);
}

/* Where a __data_loc / __rel_loc field's data lies; false when it passes the record's end. */
static bool dynamic_span(const struct tb_schema_field *fd, const struct tb_render_record *ev, bool rel,
			 uint32_t *off, uint32_t *len)
{
	uint32_t word = (uint32_t)load(ev->data + fd->offset, 4);

	*off = (word & 0xffff) + (rel ? fd->offset + 4 : 0);
	*len = word >> 16;
	return (uint64_t)*off + *len <= ev->len;
}

/* The kernel's isprint() (its _ctype): ASCII's printables and Latin-1's 0xa0..0xff. */
static bool kernel_isprint(uint8_t c)
{
	return (c >= 0x20 && c < 0x7f) || c >= 0xa0;
}

/* FILTER_OTHER by size. */
static void put_other(struct tb_strbuf *out, const struct tb_schema_field *fd, const struct tb_render_record *ev,
		      const struct tb_print_env *env)
{
	const uint8_t *p = ev->data + fd->offset;
	uint32_t off, len;
	uint64_t v;

	switch (fd->size) {
	case 1:
		if (kernel_isprint(p[0])) {
			sb_putc(out, '\'');
			sb_putc(out, (char)p[0]);
			sb_putc(out, '\'');
		}
		sb_putc(out, '(');
		kv_decimal(out, p[0], false);
		sb_putc(out, ')');
		return;
	case 2:
	case 4:
		if (fd->size == 4 && fd->kind != TB_SCHEMA_FIELD_STATIC) {
			if (!dynamic_span(fd, ev, fd->kind == TB_SCHEMA_FIELD_REL_LOC, &off, &len))
				sb_puts(out, "<OVERFLOW>");
			else
				put_array(out, ev->data + off, len);
			return;
		}
		v = load(p, fd->size);
		sb_puts(out, "0x");
		kv_hex(out, v, false);
		sb_puts(out, " (");
		/* "%d" of an unsigned short is its value; of an unsigned int, the int it reads as */
		kv_decimal(out, fd->size == 4 ? (uint64_t)(int64_t)(int32_t)v : v, true);
		sb_putc(out, ')');
		return;
	case 8:
		v = load(p, 8);
		kv_symbol(out, v, true, false, env);
		sb_puts(out, " (");
		kv_decimal(out, v, true);
		sb_putc(out, ')');
		return;
	default:
		sb_puts(out, "<INVALID-SIZE>");
	}
}

static void put_field(struct tb_strbuf *out, const struct tb_schema_field *fd, enum field_kind kind,
		      const struct tb_render_record *ev, const struct tb_print_env *env)
{
	const uint8_t *p = ev->data + fd->offset;
	uint32_t off, len;

	switch (kind) {
	case FK_STRING:
		put_bounded(out, p, fd->size);
		return;
	case FK_DYN_STRING:
	case FK_REL_STRING:
		if (!dynamic_span(fd, ev, kind == FK_REL_STRING, &off, &len))
			sb_puts(out, "<OVERFLOW>");
		else
			put_bounded(out, ev->data + off, len);
		return;
	case FK_PTR_STRING:
		sb_puts(out, "(0x");
		kv_hex(out, load(p, fd->size < 8 ? fd->size : 8), false);
		sb_putc(out, ')');
		return;
	case FK_TRACE_FN:
		kv_symbol(out, load(p, fd->size < 8 ? fd->size : 8), true, false, env);
		return;
	case FK_CPUMASK:
		sb_puts(out, "<INVALID-TYPE>");
		return;
	case FK_OTHER:
		put_other(out, fd, ev, env);
		return;
	}
}

/*
 * The symbol of addr for a field's %pS: the schema's, except the last
 * symbol of a module (its size unknown, 0), which holds only addresses
 * within UNSIZED_SYMBOL_SPAN of its start.  The kernel bounds a module's
 * symbols by the module's memory (and an ftrace trampoline or a BPF
 * program by its own size), which kallsyms does not show; without a bound
 * every value above the highest module, -2 or a sector of -65536, printed
 * as "ftrace_trampoline+0x3fdfeffe [__builtin__ftrace]".
 */
#define UNSIZED_SYMBOL_SPAN 4096

static const char *field_symbol(void *schema, uint64_t addr, uint64_t *start, uint64_t *size, const char **module)
{
	uint64_t st = 0, sz = 0;
	const char *mod = NULL;
	const char *name = tb_schema_symbol(schema, addr, &st, &sz, &mod);

	if (!name || (mod && !sz && addr - st >= UNSIZED_SYMBOL_SPAN))
		return NULL;
	*start = st;
	*size = sz;
	*module = mod;
	return name;
}

int fields_print(struct tb_schema *s, const struct tb_format *f, const char *system,
		 const struct tb_render_record *ev, struct tb_strbuf *out)
{
	struct tb_print_env env = {.ctx = s, .symbol = tb_schema_has_symbols(s) ? field_symbol : NULL};
	bool any = false;

	if (!strcmp(system, "ftrace")) {
		/*
		 * print_event_fields() looks ftrace's own events (print,
		 * function, ...) up in the list of event calls from its head
		 * and stops at the first call that is not one of them; the
		 * list grows at its head, so after boot it finds none, and
		 * the kernel writes this (6.18, read from the live `trace`).
		 */
		char text[32];

		sb_put(out, text, (size_t)snprintf(text, sizeof(text), "UNKNOWN TYPE %u\n", f->id));
		return out->oom ? -ENOMEM : 0;
	}
	sb_puts(out, f->name);
	sb_putc(out, ':');
	for (size_t i = 0; i < f->nfields; i++) {
		const struct tb_schema_field *fd = &f->fields[i];

		if (!strncmp(fd->name, "common_", 7))
			continue;
		any = true;
		sb_putc(out, ' ');
		sb_puts(out, fd->name);
		sb_putc(out, '=');
		if ((uint64_t)fd->offset + fd->size > ev->len)
			sb_puts(out, "<OVERFLOW>");
		else
			put_field(out, fd, field_kind(fd, system, f), ev, &env);
	}
	sb_puts(out, any ? "\n" : "No fields found\n");
	return out->oom ? -ENOMEM : 0;
}
