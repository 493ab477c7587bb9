/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/schema.h - what the kernel says about its trace data, and the
 * handle that turns records into text.
 *
 * The kernel describes its data in text files: events/header_page (the
 * sub-buffer header), events/header_event (the record header) and one
 * format file per event (name, ID, field layout, print fmt).  The parsers
 * here read them strictly and report every problem with the byte offset in
 * the file and the reason.  A schema collects the parsed events by ID
 * together with a libtraceevent handle (which does the actual print-fmt
 * rendering) and the lookup tables text output needs: saved_cmdlines,
 * kallsyms, printk_formats and kernel constants.
 *
 * Ownership: tb_schema_new() returns a handle that the caller frees with
 * tb_schema_free(); it owns its libtraceevent handle and everything loaded
 * into it.  The load functions copy what they keep, so the caller's text
 * buffers can be freed right after.  tb_format_parse() fills a struct
 * tb_format whose field array the caller releases with tb_format_free().
 * A schema is not thread-safe: use it from one thread at a time.
 *
 * Misuse: every call takes NULL handles, outputs or texts (with len > 0)
 * as -EINVAL (queries: 0, false or NULL; void calls: nothing); a NULL file
 * name is reported as "".
 *
 * libtraceevent (the fallback printer) is handed a format only when a
 * record of it is printed and our own print-fmt compiler declined a
 * construct in its print fmt without finding it malformed; since
 * libtraceevent 1.7.1 can crash on print fmts, that format is first parsed
 * and printed once by it in a helper process (forked once and kept for
 * format after format, until it crashes on one or is idle 2 s; it holds
 * none of the process's descriptors but 0-2 on /dev/null), and one that
 * kills the helper is refused with a message.  A print fmt nesting brackets more
 * than 256 deep (which would overflow a recursive parser's stack) is
 * refused at load, at the first bracket too deep.  kallsyms and
 * printk_formats are parsed line by line by our own
 * parsers and only the lines they accept reach libtraceevent (whose own
 * parsers read out of bounds on malformed lines).
 */
#ifndef TRACEBUF_SCHEMA_H
#define TRACEBUF_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- text parsers */

#define TB_NAME_MAX 128 /* longest event, system or field name + 1 */

/* Where each part of a sub-buffer lives, from events/header_page. */
struct tb_header_page {
	uint32_t timestamp_offset, timestamp_size;
	uint32_t commit_offset, commit_size;
	uint32_t data_offset, data_size; /* subbuf size = data_offset + data_size */
};

/*
 * Parse header_page.  Only the layout the page codec decodes is accepted
 * (64-bit commit word, data at byte 16, 4 KiB << 0..7 sub-buffers).
 * 0 or -EINVAL with *err filled (err->file is left as it was).
 */
int tb_header_page_parse(const char *text, size_t len, struct tb_header_page *out,
			 struct tb_problem *err);

/*
 * Check header_event: 5-bit type_len, 27-bit time_delta, padding 29, time
 * extend 30, time stamp 31, data up to type_len 28.  0 or -EINVAL.
 */
int tb_header_event_parse(const char *text, size_t len, struct tb_problem *err);

enum tb_schema_field_kind {
	TB_SCHEMA_FIELD_STATIC = 0, /* bytes at offset..offset+size */
	TB_SCHEMA_FIELD_DATA_LOC,   /* u32: offset (low 16 bits) and length of the data */
	TB_SCHEMA_FIELD_REL_LOC,    /* like DATA_LOC, offset counted from the field's end */
};

struct tb_schema_field {
	char name[TB_NAME_MAX];
	char type[TB_NAME_MAX]; /* the declaration's type, "unsigned long", "__data_loc char[]" */
	uint32_t offset;
	uint32_t size; /* 0 for a trailing flexible array: the rest of the record */
	enum tb_schema_field_kind kind;
	bool is_signed;
	bool is_string; /* a char array or a dynamic char[] */
	bool is_array;  /* declared NAME[N] or NAME[] */
};

/* One event's format file. */
struct tb_format {
	char name[TB_NAME_MAX];
	uint32_t id;               /* common_type of its records, 1..65535 */
	size_t id_offset;          /* byte offset of the "ID:" line */
	uint32_t min_size;         /* bytes a record needs to hold every field */
	size_t nfields;            /* common fields included */
	struct tb_schema_field *fields;   /* owned; freed by tb_format_free() */
	size_t print_fmt_offset;   /* byte offset of the "print fmt:" line */
	char *print_fmt;           /* owned: the text after "print fmt: ", from its quote on */
	size_t print_fmt_len;
	size_t print_fmt_text_offset; /* byte offset of print_fmt[0] in the file */
};

/*
 * Parse a format file: name, ID, the field lines and the print fmt line, in
 * the kernel's order.  The common header must have the kernel's layout
 * (common_type u16 @0, common_flags u8 @2, common_preempt_count u8 @3,
 * common_pid s32 @4), fields must not overlap it or exceed a sub-buffer.
 * 0, -EINVAL with *err filled, or -ENOMEM.
 */
int tb_format_parse(const char *text, size_t len, struct tb_format *out, struct tb_problem *err);
void tb_format_free(struct tb_format *f);
/* The field called name, or NULL. */
const struct tb_schema_field *tb_format_field(const struct tb_format *f, const char *name);

/* -------------------------------------------------------------- schema */

struct tb_schema;

/* NULL when out of memory. */
struct tb_schema *tb_schema_new(void);
void tb_schema_free(struct tb_schema *s);

/* Where problems go (default: tb_problem_print to stderr). */
void tb_schema_set_problem_fn(struct tb_schema *s, tb_problem_fn *fn, void *ctx);
/* How many problems the schema has reported so far. */
unsigned long tb_schema_problems(const struct tb_schema *s);

/*
 * Loaders.  file names the input in messages; text need not end in NUL.
 * Each returns 0, -EINVAL (problem reported; for a format file the event
 * is left out) or -ENOMEM.  saved_cmdlines, kallsyms ("ADDR TYPE NAME",
 * optionally "\t[MODULE]") and printk_formats ('0xADDR : "TEXT"') lines that
 * do not parse are reported with their offset and skipped (-EINVAL after
 * the good lines are loaded).
 */
int tb_schema_load_header_page(struct tb_schema *s, const char *file, const char *text,
			       size_t len);
int tb_schema_load_header_event(struct tb_schema *s, const char *file, const char *text,
				size_t len);
int tb_schema_load_format(struct tb_schema *s, const char *file, const char *system,
			  const char *text, size_t len);
int tb_schema_load_cmdlines(struct tb_schema *s, const char *file, const char *text, size_t len);
/* saved_tgids ("PID TGID" lines): the record-tgid option's column. */
int tb_schema_load_tgids(struct tb_schema *s, const char *file, const char *text, size_t len);
int tb_schema_load_kallsyms(struct tb_schema *s, const char *file, const char *text, size_t len);
int tb_schema_load_printk_formats(struct tb_schema *s, const char *file, const char *text,
				  size_t len);
/*
 * A capture's kernel constants file ("NAME VALUE" and "sizeof(TYPE) VALUE"
 * lines: enum constants, kernel variables and type sizes its print fmts
 * use, saved instead of the kernel's BTF).  Bad lines are reported and
 * skipped; a later file adds to the earlier ones.
 */
int tb_schema_load_constants(struct tb_schema *s, const char *file, const char *text, size_t len);
/*
 * Load everything this process's registry of events knows
 * (tracebuf/events.h): header texts for subbuf_size, every event's format
 * (those of unloaded objects included), printk_formats, the call sites'
 * names, and the comm of every thread of the process now (/proc/self/task),
 * so that records of an in-process ring print with names and fields.  0, or
 * the first loader's error (problems go to the schema's problem callback
 * as usual).
 */
int tb_schema_load_events(struct tb_schema *s, size_t subbuf_size);

/* Sub-buffer size from header_page; 0 until one was loaded. */
size_t tb_schema_subbuf_size(const struct tb_schema *s);
/* Number of events loaded. */
size_t tb_schema_event_count(const struct tb_schema *s);
/* Whether kernel symbols were loaded (so %ps and ip labels resolve). */
bool tb_schema_has_symbols(const struct tb_schema *s);

/* The format of event id and its system name, or NULL if not loaded. */
const struct tb_format *tb_schema_event(const struct tb_schema *s, uint32_t id,
					const char **system);

/*
 * Formats can be loaded on demand (a live kernel has thousands of events and
 * a trace uses a few): the loader is called the first time a missing ID is
 * looked up with tb_schema_find_event(), and may call tb_schema_load_format().
 */
typedef void tb_format_loader_fn(void *ctx, struct tb_schema *s, uint32_t id);
void tb_schema_set_loader(struct tb_schema *s, tb_format_loader_fn *fn, void *ctx);
/* tb_schema_event(), asking the loader (once per ID) for a missing ID. */
const struct tb_format *tb_schema_find_event(struct tb_schema *s, uint32_t id,
					     const char **system);

/*
 * Check that a record of event f (len payload bytes) holds every field the
 * format describes: fixed fields inside the record, dynamic fields pointing
 * inside it, dynamic strings NUL-terminated.  0 or -EINVAL with err->offset
 * relative to the payload start.
 */
int tb_schema_check_record(const struct tb_format *f, const void *data, uint32_t len,
			   struct tb_problem *err);

/*
 * The command name of pid from saved_cmdlines and its length: "<idle>" for
 * pid 0 and "<...>" for a pid the table does not know, as the kernel prints
 * them.  Never NULL; owned by the schema.
 */
const char *tb_schema_comm(const struct tb_schema *s, int pid, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
