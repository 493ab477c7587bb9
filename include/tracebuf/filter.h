/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/filter.h - event filters in the kernel's syntax, the language of
 * an event's `filter` file:
 *
 *	prev_pid == 0 && (next_comm ~ "bash*" || !(prev_state & 2))
 *
 * Predicates FIELD OP VALUE joined by && (binding tighter) and ||, grouped
 * by parentheses and negated by '!'.  Operators: == != < <= > >= and &
 * (true when the field and the value share a bit) on integer fields, with
 * a decimal, 0x hex or 0 octal value, negative where the field is signed;
 * == != and ~ (a glob: "*x", "x*", "*x*" or any pattern with '?', '[..]',
 * '\' or an inner '*'; a leading '!' inverts it) on strings, in single or
 * double quotes.  The kernel's rules are kept: a value is cut to the
 * field's size and compared with its signedness; a char array compares
 * within its size; fields named CPU, cpu, common_cpu (the CPU the record
 * was written on) and COMM, comm (the writer's task name) exist in every
 * event where it has none of that name; a trailing && or || is ignored.
 *
 * A filter is compiled once against an event's field list into a short
 * program of predicates with branch targets; tb_filter_match() runs it over
 * one record without allocating.  Parse errors are reported the kernel's
 * way: a byte position in the expression and the kernel's message
 * ("Field not found", "Illegal operation for field type", ...) with what
 * exactly was wrong.
 *
 * libc only: libtracebuf itself filters at the source with it.  The
 * reading side's tb_filter_compile_format() (in libtracebuf-read) takes a
 * struct tb_format from tracebuf/schema.h instead of a field list.
 *
 * Ownership: tb_filter_compile() returns a filter the caller frees with
 * tb_filter_free(); it copies what it keeps (field names and expression
 * need not outlive the call).  A compiled filter is read-only: any number
 * of threads may run tb_filter_match() on it at once.
 *
 * Misuse: NULL expression, output or (with n > 0) field list is -EINVAL;
 * tb_filter_match() of a NULL filter is true (no filter keeps everything).
 */
#ifndef TRACEBUF_FILTER_H
#define TRACEBUF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tb_filter_field_kind {
	TB_FILTER_INT = 0,   /* an integer of 1, 2, 4 or 8 bytes at offset */
	TB_FILTER_CHARS,     /* a char array of size bytes (the kernel's static string) */
	TB_FILTER_DATA_LOC,  /* u32 at offset: data offset (low 16 bits) | length << 16 */
	TB_FILTER_REL_LOC,   /* the same, the offset counted from the end of the u32 */
	TB_FILTER_OTHER,     /* anything else (arrays of numbers, char pointers): no operator fits */
};

struct tb_filter_field {
	const char *name;
	uint32_t offset; /* from the record's start (common_type at 0) */
	uint32_t size;
	enum tb_filter_field_kind kind;
	bool is_signed;
};

/* Where and why an expression was refused. */
struct tb_filter_error {
	size_t pos;        /* byte offset in the expression */
	char reason[160];  /* the kernel's message, then the detail: no newline */
};

struct tb_filter;

/*
 * Compile expr against fields[0..n).  0 with *out set, -EINVAL with *err
 * filled (err may be NULL), or -ENOMEM.
 */
int tb_filter_compile(const char *expr, const struct tb_filter_field *fields, size_t n,
		      struct tb_filter **out, struct tb_filter_error *err);
void tb_filter_free(struct tb_filter *f);

/*
 * With flags: TB_FILTER_MISSING_FALSE makes a predicate on a field the
 * event lacks false instead of an error (trace-cmd's rule for a filter
 * given to many events at once); its value is then only checked for form.
 */
enum { TB_FILTER_MISSING_FALSE = 1 };
int tb_filter_compile_flags(const char *expr, const struct tb_filter_field *fields, size_t n,
			    unsigned flags, struct tb_filter **out, struct tb_filter_error *err);

/* What a record's bytes do not say: the CPU it was written on and its writer's name. */
struct tb_filter_env {
	int cpu;
	const char *comm; /* NUL-terminated; NULL is "" */
};

enum {
	TB_FILTER_USES_CPU = 1,  /* tb_filter_match() reads env->cpu */
	TB_FILTER_USES_COMM = 2, /* ... and env->comm */
};
/* Which of env's members the filter reads (0: env may be NULL). */
unsigned tb_filter_uses(const struct tb_filter *f);

/*
 * Whether the record rec[0..len) passes.  A record too short for a field
 * the filter reads, or a dynamic field pointing outside it, fails that
 * predicate.  env may be NULL when tb_filter_uses() is 0 (else cpu reads as
 * -1 and comm as "").
 */
bool tb_filter_match(const struct tb_filter *f, const void *rec, uint32_t len,
		     const struct tb_filter_env *env);

/*
 * The error as the kernel shows it in the filter file: the expression, a
 * line with '^' under err->pos, then "parse_error: REASON".  Written to
 * buf (NUL-terminated, cut at size); returns the length it needed.
 */
size_t tb_filter_error_text(const char *expr, const struct tb_filter_error *err, char *buf,
			    size_t size);

/*
 * Reading side (libtracebuf-read): compile expr against an event's format
 * file (struct tb_format, tracebuf/schema.h), with tb_filter_compile_flags()'s
 * flags.  Same returns.
 */
struct tb_format;
int tb_filter_compile_format(const char *expr, const struct tb_format *fmt, unsigned flags,
			     struct tb_filter **out, struct tb_filter_error *err);

/*
 * Reading side: the filters of `tracebuf report -F` (trace-cmd's syntax),
 * compiled per event ID the first time a record of it is met.
 *
 *	EVENTS [':' EXPR]	EVENTS = SYSTEM/EVENT | SYSTEM | EVENT, ','-separated;
 *				each a regcomp(3) extended regex matched whole
 *
 * A name alone matches an event or a whole system.  When positive filters
 * exist, a record is kept when one of them names its event and its EXPR
 * (if any) is true; a record any exclude filter (-v) names and passes is
 * dropped.  EXPR is the kernel's language above; a field an event lacks is
 * an error where the filter names that one event exactly, and false where
 * it names it through a system or a pattern (as trace-cmd has it).
 *
 * Ownership: the set copies the specs; the caller frees it with
 * tb_filter_set_free().  Not thread-safe (it compiles as it goes).
 */
struct tb_filter_set;
struct tb_schema;
struct tb_render_record;

/* NULL when out of memory. */
struct tb_filter_set *tb_filter_set_new(void);
void tb_filter_set_free(struct tb_filter_set *set);
/*
 * Add one -F spec.  0, -EINVAL (a bad event pattern or an empty EVENTS;
 * err->pos in spec) or -ENOMEM.  Expressions are checked when compiled
 * against an event, when its first record is met.
 */
int tb_filter_set_add(struct tb_filter_set *set, const char *spec, bool exclude,
		      struct tb_filter_error *err);
/*
 * Whether the record is kept.  A spec whose expression does not compile for
 * the record's event is reported once to errors (NULL: stderr) as the
 * kernel shows it, and keeps no record of that event.
 */
bool tb_filter_set_keep(struct tb_filter_set *set, struct tb_schema *s, const struct tb_render_record *ev);
/*
 * The first name of the specs' EVENTS that names no event of s (its EVENT
 * part, as given), loading formats as needed; NULL when each names some
 * event.  A mistyped name would otherwise keep nothing, silently.
 */
const char *tb_filter_set_unmatched(struct tb_filter_set *set, struct tb_schema *s);
/* How many expressions failed to compile so far. */
unsigned tb_filter_set_failures(const struct tb_filter_set *set);
void tb_filter_set_errors_to(struct tb_filter_set *set, FILE *errors);

#ifdef __cplusplus
}
#endif
#endif
