/* SPDX-License-Identifier: MIT */
/*
 * registry.h - what the sources' files share inside libtracebuf.  Internal.
 *
 * registry.c owns the lists (events by name and ID, printf call sites,
 * loaded objects) under one lock; format_text.c writes the kernel's texts;
 * printf_plan.c reads printf formats with the kernel's rules; marker.c
 * holds the built-in ftrace events.
 */
#ifndef TRACEBUF_SOURCE_REGISTRY_H
#define TRACEBUF_SOURCE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/tracepoint.h"

/* A growing text, for the kernel's formats.  On allocation failure it stays NULL (oom set). */
struct text {
	char *buf;
	size_t len, cap;
	int oom;
};

void text_put(struct text *t, const char *s, size_t n);
void text_puts(struct text *t, const char *s);
void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text, NUL-terminated, handed over (NULL if it ran out of memory). */
char *text_take(struct text *t, size_t *len);

/* ------------------------------------------------------- format_text.c */

/* Why a descriptor cannot be registered, or NULL when it is sound. */
const char *event_descriptor_problem(const struct tb_event_desc *ev);

/*
 * The format file of ev under id, in the kernel's syntax; enum constants of
 * [enums, enums_end) in its print fmt replaced by their values.  NULL when
 * out of memory.
 */
char *event_format_text(const struct tb_event_desc *ev, uint16_t id, const struct tb_enum_value *const *enums,
			const struct tb_enum_value *const *enums_end, size_t *len);

/* One printk_formats line for key and fmt, escaped as the kernel's. */
void printk_format_line(struct text *t, uint64_t key, const char *fmt);

/*
 * The ip a marker record holds: a key the registry's kallsyms names
 * tracing_mark_write, as readers name the kernel's marker writer (0 would
 * print as "0", as the kernel prints a null ip).  printf sites' keys follow.
 */
#define TB_MARKER_IP_KEY 1

/* ------------------------------------------------------- printf_plan.c */

/*
 * How the kernel's vbin_printf stores the arguments fmt consumes: one class
 * per argument into plan[0..max): 'c' one byte, 'h' two, 'i' four (also a
 * '*' width or precision), 'l' eight (long, long long, size_t, ptrdiff_t),
 * 'p' a pointer (eight), 's' a string with its NUL.  Returns the count, or
 * -EINVAL with *bad at the conversion it cannot record (a kernel %p
 * extension that reads memory, %n, an unknown conversion), or -E2BIG.
 */
int printf_plan(const char *fmt, char *plan, size_t max, const char **bad);

/* Whether the inline packing of classes cls[0..n) is the plan's (so the fast path is right). */
int printf_plan_matches(const char *plan, int nplan, const char *cls, int n);

/* ------------------------------------------------------ event_filter.c */

struct tb_filter_error;
/*
 * expr compiled against descriptor d's fields (and the kernel's common
 * ones), in the form the emitters run (tb_event_desc.filter): 0 with *out
 * set, -EINVAL with *err filled, -ENOMEM.  Never freed.
 */
int source_filter_new(const struct tb_event_desc *d, const char *expr, struct tb_filter_error *err,
		      struct tb_event_filter **out);

/*
 * A filter that also writes every record it keeps to mirror (the session's
 * ring, while the program's own ring is attached): base's test (NULL: none),
 * run out of line.  Never freed.  0 with *out set, or -ENOMEM.
 */
int source_filter_mirror(const struct tb_event_filter *base, struct tb_ring *mirror, struct tb_event_filter **out);

/* session.c: events go to the session's ring, and stay copied there whatever ring the program attaches. */
__attribute__((visibility("hidden"))) void tb__events_session(struct tb_ring *ring);

/* ------------------------------------------------------------ marker.c */

/* The built-in events: ftrace print, bprint and raw_data. */
extern TB__HIDDEN struct tb_event_desc tb__print_event, tb__bprint_event, tb__raw_data_event;

/* session.c: the shared-memory session named in the environment (TRACEBUF_SHM). */
__attribute__((visibility("hidden"))) void tb__session_start(void);
/* Describe this process's events for the session's consumer (call without the registry lock). */
__attribute__((visibility("hidden"))) void tb__session_formats(void);

/*
 * session_ids.c: in a session (TRACEBUF_SHM_FORMATS), the ID its processes
 * agree on for the event SYSTEM:NAME whose format text without the ID line
 * hashes to shape (tb__session_shape); a new one is at least floor and not
 * taken(ID) here.  0: no session, or its file could not be used (the caller
 * picks an ID of its own).
 */
#define TB__SESSION_NAME_MAX 255
#define TB__SESSION_NAME_SCAN "255"
__attribute__((visibility("hidden"))) unsigned tb__session_event_id(const char *system, const char *name,
								    uint64_t shape, unsigned floor,
								    bool (*taken)(unsigned));
__attribute__((visibility("hidden"))) uint64_t tb__session_shape(const char *text, size_t len);

/* ------------------------------------------------------ hist_attach.c */

/*
 * Set the gate byte of event "system:name"'s descriptors to mode
 * (TB__HIST_GATE_*, 0: none attached), now and for descriptors loaded later;
 * *id its ID.  0, -EINVAL, -ENOENT (no such event), -EOPNOTSUPP (built-in).
 */
int tb_events_set_hist_gate(const char *event, uint8_t mode, uint16_t *id);
/* fn called once every event of the program's startup is registered (now, if that is past). */
void tb_events_on_startup(void (*fn)(void));
/* The reading side's map update, called by tb_event_hist_hit (registry.c); NULL: none. */
typedef void tb_event_hist_hit_fn(const struct tb_event_desc *ev, const void *rec, uint32_t len);
void tb_events_set_hist_hook(tb_event_hist_hit_fn *fn);

#endif
