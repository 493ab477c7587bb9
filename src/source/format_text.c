// SPDX-License-Identifier: MIT
/*
 * format_text.c - an event's descriptor as the kernel's format file, and
 * the kernel's header_page, header_event and printk_formats texts.
 *
 * The layout follows tracefs byte for byte: "name:", "ID:", "format:", the
 * four common fields, an empty line, one "\tfield:TYPE NAME;\toffset:N;
 * \tsize:N;\tsigned:N;" line per field (arrays "TYPE NAME[N]", dynamic ones
 * "__data_loc TYPE[] NAME", trailing ones "TYPE NAME[]" with size 0), an
 * empty line and "print fmt: ...".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "tracebuf/events.h"

#define COMMON_SIZE 8u
#define NAME_MAX_LEN 127 /* the reading side's TB_NAME_MAX - 1 */

static int is_identifier(const char *s)
{
	size_t n = 0;

	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	while (s[n] && (isalnum((unsigned char)s[n]) || s[n] == '_'))
		n++;
	return s[n] == '\0' && n <= NAME_MAX_LEN;
}

/* A type as it may appear between "field:" and the name: printable, no ';' or newline. */
static int is_type_text(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return 0;
	for (; s[n]; n++)
		if (!isprint((unsigned char)s[n]) || s[n] == ';')
			return 0;
	return n <= NAME_MAX_LEN;
}

static const char *field_problem(const struct tb_event_desc *ev, const struct tb_event_field *f)
{
	if (!is_identifier(f->name))
		return "a field name is not a C identifier of at most 127 characters";
	if (!is_type_text(f->type))
		return "a field type is empty, too long or has ';' or control characters";
	if (f->kind > TB_EVF_FLEX)
		return "a field has an unknown kind";
	if (f->offset < COMMON_SIZE)
		return "a field overlaps the common fields";
	if (f->kind == TB_EVF_FLEX)
		return f->offset <= ev->size && f->size == 0 ? NULL : "a trailing array must have size 0 and start inside the record";
	if (f->size == 0 || f->offset + (uint64_t)f->size > ev->size)
		return "a field lies outside the record";
	if ((f->kind == TB_EVF_STRING || f->kind == TB_EVF_DYN_ARRAY) && f->size != 4)
		return "a __data_loc field must be 4 bytes";
	if (f->kind == TB_EVF_ARRAY && (f->array_len == 0 || f->size % f->array_len))
		return "an array's size is not a multiple of its length";
	return NULL;
}

const char *event_descriptor_problem(const struct tb_event_desc *ev)
{
	if (ev->abi != TB_EVENT_ABI)
		return "the descriptor was built for another version of tracebuf/tracepoint.h";
	if (!is_identifier(ev->system) || !is_identifier(ev->name))
		return "the system or event name is not a C identifier of at most 127 characters";
	if (ev->size < COMMON_SIZE || ev->size > TB_EVENT_MAX)
		return "the record size is outside 8..TB_EVENT_MAX";
	if (!ev->print_fmt || strchr(ev->print_fmt, '\n'))
		return "the print fmt is missing or has a newline";
	if (!ev->fields)
		return "the field table is missing";
	for (const struct tb_event_field *f = ev->fields; f->name; f++) {
		const char *why = field_problem(ev, f);
		if (why)
			return why;
		for (const struct tb_event_field *g = ev->fields; g != f; g++)
			if (!strcmp(g->name, f->name))
				return "two fields have the same name";
	}
	return NULL;
}

static void field_line(struct text *t, const struct tb_event_field *f)
{
	switch (f->kind) {
	case TB_EVF_ARRAY:
		text_printf(t, "\tfield:%s %s[%u];", f->type, f->name, f->array_len);
		break;
	case TB_EVF_STRING:
		text_printf(t, "\tfield:__data_loc char[] %s;", f->name);
		break;
	case TB_EVF_DYN_ARRAY:
		text_printf(t, "\tfield:__data_loc %s[] %s;", f->type, f->name);
		break;
	case TB_EVF_FLEX:
		text_printf(t, "\tfield:%s %s[];", f->type, f->name);
		break;
	default:
		text_printf(t, "\tfield:%s %s;", f->type, f->name);
	}
	text_printf(t, "\toffset:%u;\tsize:%u;\tsigned:%d;\n", f->offset, f->size, f->is_signed ? 1 : 0);
}

static const struct tb_enum_value *find_enum(const char *name, size_t n, const struct tb_enum_value *const *enums,
					     const struct tb_enum_value *const *end)
{
	for (; enums && enums < end; enums++)
		if (*enums && strlen((*enums)->name) == n && !memcmp((*enums)->name, name, n))
			return *enums;
	return NULL;
}

/*
 * The print fmt with each enum constant named by TB_DEFINE_ENUM replaced by
 * its value, as the kernel's eval maps do: whole identifiers outside string
 * and character literals, not field names (after "->" or ".").
 */
static void put_print_fmt(struct text *t, const char *p, const struct tb_enum_value *const *enums,
			  const struct tb_enum_value *const *end)
{
	char quote = 0;

	while (*p) {
		if (quote) {
			if (*p == '\\' && p[1]) {
				text_put(t, p, 2);
				p += 2;
				continue;
			}
			if (*p == quote)
				quote = 0;
			text_put(t, p++, 1);
		} else if (*p == '"' || *p == '\'') {
			quote = *p;
			text_put(t, p++, 1);
		} else if (isalpha((unsigned char)*p) || *p == '_') {
			const char *start = p;
			const struct tb_enum_value *e;
			int member = 0;

			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			if (t->len >= 1 && t->buf[t->len - 1] == '.')
				member = 1;
			if (t->len >= 2 && t->buf[t->len - 2] == '-' && t->buf[t->len - 1] == '>')
				member = 1;
			e = member ? NULL : find_enum(start, (size_t)(p - start), enums, end);
			if (e)
				text_printf(t, "%lld", e->value);
			else
				text_put(t, start, (size_t)(p - start));
		} else if (isdigit((unsigned char)*p)) {
			/* a number, suffixes and hex digits included: never an identifier */
			const char *start = p;
			while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
				p++;
			text_put(t, start, (size_t)(p - start));
		} else {
			text_put(t, p++, 1);
		}
	}
}

char *event_format_text(const struct tb_event_desc *ev, uint16_t id, const struct tb_enum_value *const *enums,
			const struct tb_enum_value *const *enums_end, size_t *len)
{
	struct text t = {0};

	text_printf(&t, "name: %s\nID: %u\nformat:\n", ev->name, id);
	text_puts(&t, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	for (const struct tb_event_field *f = ev->fields; f->name; f++)
		field_line(&t, f);
	text_puts(&t, "\nprint fmt: ");
	put_print_fmt(&t, ev->print_fmt, enums, enums_end);
	text_puts(&t, "\n");
	return text_take(&t, len);
}

/* ----------------------------------------------------------- headers */

char *tb_events_header_page(size_t subbuf_size)
{
	struct text t = {0};

	if (subbuf_size < 4096 || subbuf_size > (512u << 10) || (subbuf_size & (subbuf_size - 1)))
		return NULL;
	text_printf(&t,
		    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		    "\tfield: char data;\toffset:16;\tsize:%zu;\tsigned:0;\n",
		    subbuf_size - 16);
	return text_take(&t, NULL);
}

char *tb_events_header_event(void)
{
	static const char text[] = "# compressed entry header\n"
				   "\ttype_len    :    5 bits\n"
				   "\ttime_delta  :   27 bits\n"
				   "\tarray       :   32 bits\n"
				   "\n"
				   "\tpadding     : type == 29\n"
				   "\ttime_extend : type == 30\n"
				   "\ttime_stamp : type == 31\n"
				   "\tdata max type_len  == 28\n";

	return strdup(text);
}

/* The kernel's printk_formats escapes newlines, tabs and quotes, and leaves backslashes alone. */
void printk_format_line(struct text *t, uint64_t key, const char *fmt)
{
	text_printf(t, "0x%llx : \"", (unsigned long long)key);
	for (const char *p = fmt; *p; p++) {
		switch (*p) {
		case '\n':
			text_puts(t, "\\n");
			break;
		case '\t':
			text_puts(t, "\\t");
			break;
		case '"':
			text_puts(t, "\\\"");
			break;
		default:
			text_put(t, p, 1);
		}
	}
	text_puts(t, "\"\n");
}
