/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/tracepoint.h - typed tracepoints, printf events and markers: the
 * sources that write self-describing records into a tracebuf ring.
 *
 * A TYPED TRACEPOINT is declared once, in the shape of the kernel's
 * TRACE_EVENT (prototype, record fields with how each is assigned, print
 * format), in one macro invocation:
 *
 *	TB_EVENT(app, request,
 *		 TB_PROTO(int id, const char *path, uint64_t bytes),
 *		 TB_FIELDS(tb_field(int, id, id),
 *			   tb_string(path, path),
 *			   tb_field(uint64_t, bytes, bytes)),
 *		 TB_PRINTK("id=%d path=%s bytes=%llu", REC->id, __get_str(path),
 *			   (unsigned long long)REC->bytes))
 *
 * and fired with tb_trace(app, request, 7, "/index", 512).  The
 * declaration may sit in a header included by any number of files (this is
 * in place of the kernel's multiple-inclusion scheme: nothing needs to be
 * "created" in one file), and it defines
 *  - struct tb_record_app_request, the record: the kernel's common fields
 *    (common_type u16, common_flags u8, common_preempt_count u8, common_pid
 *    s32 = the thread id, cached per thread) and then the fields, laid out
 *    as a C struct (the kernel's TP_STRUCT__entry layout);
 *  - tb_event_app_request, its descriptor, one per executable or shared
 *    library (a weak hidden definition: the copies of all files of that
 *    object merge), listed in the object's "tb_events" ELF section;
 *  - the emitters: tb_trace_app_request(...), out of line, and
 *    tb_trace_inline_app_request(...); tb_trace() tests whether the event
 *    is enabled and calls the inline one for events of fixed size, the
 *    other for events with dynamic data; tb_trace_app_request_enabled().
 *
 * Field kinds (TB_FIELDS takes up to 32; the first argument is the type,
 * then the field name, then where the value comes from - the prototype's
 * arguments or any expression over them):
 *	tb_field(type, name, value)	 an integer of 1, 2, 4 or 8 bytes,
 *		bool, an enum or a pointer (use a typedef for anything whose
 *		declarator is not "type name").  Enums and flag words are printed
 *		with __print_symbolic(REC->f, { 1, "A" }, ...) and
 *		__print_flags(REC->f, "|", { 1, "A" }, ...) in TB_PRINTK; an enum
 *		constant named there is replaced by its value if the program
 *		declares it with TB_DEFINE_ENUM(NAME) (the kernel's
 *		TRACE_DEFINE_ENUM), since readers cannot evaluate C names;
 *	tb_array(type, name, n, src)	 a fixed array of n elements copied from
 *		src (the kernel's __array);
 *	tb_chars(name, n, str)		 char name[n] holding a string, cut to
 *		n - 1 characters and NUL-padded (like a task's comm);
 *	tb_string(name, str)		 a string of any length stored after the
 *		fixed fields, the field a __data_loc word (offset | length << 16),
 *		read with __get_str(name) (the kernel's __string / __assign_str);
 *		NULL is stored as "(null)";
 *	tb_dyn_array(type, name, src, count)  count elements stored after the
 *		fixed fields behind a __data_loc word (__dynamic_array; read with
 *		__get_dynamic_array(name)).
 * TB_PRINTK(fmt, args...) is the kernel's TP_printk: a format string literal
 * and C expressions over REC->field, kept as text (macros expanded, like the
 * kernel's stringification) for readers such as libtraceevent.
 *
 * Mistakes the compiler can see are compile errors naming the event or the
 * field ("tracebuf: field x of app:request must be ..."): floating-point fields,
 * integers that are not 1, 2, 4 or 8 bytes, records bigger than
 * TB_EVENT_MAX, more than 32 fields.
 *
 * COST.  Disabled, a tracepoint is one load of its descriptor's gate word
 * and a branch predicted not taken; its arguments are not evaluated.
 * Enabled, it builds the record on the stack and hands it to tb_write()
 * (measured faster than tb_reserve()/tb_commit() for these sizes:
 * bench/bench_sources.c) - nothing else: no lock, no system call (the
 * thread id is cached per thread; fork() clears the cache; a thread made
 * by calling clone() directly, not pthread_create(), inherits its
 * creator's cached id).  An event with a filter at the source
 * (tb_events_set_filter) tests the built record before writing it: one
 * more load and a branch not taken for events without one; up to six
 * integer comparisons run inline, in a straight line (about +4 ns for
 * two); other filters out of line.  A record over
 * TB_EVENT_MAX bytes (the kernel's per-event limit with 4 KiB sub-buffers,
 * which it keeps with bigger ones too) or over what the ring's sub-buffers
 * hold is refused and counted in the ring's too_big counter.
 *
 * PRINTF EVENTS.  tb_printf("x=%d name=%s\n", x, name) records the kernel's
 * bprint event (ftrace:bprint): the call site's key and the arguments in
 * binary, packed the way the kernel's vbin_printf() packs them (each
 * integer at its size's alignment, 8-byte ones at 4; %c one byte; %s the
 * string with its NUL; %p and %ps/%pS/%px... 8 bytes).  Formatting happens
 * when the trace is read, with the format string taken from the registry's
 * printk_formats table (tracebuf/events.h), keyed like the kernel's by the
 * number in the record's fmt field.  The format is checked at compile time
 * like printf's; it is interpreted by readers with the kernel's rules, so
 * use only what both agree on (no %f: a floating-point argument is a
 * compile error; no %n; of the kernel's %p extensions only the ones that
 * print the pointer itself: %ps %pS %pf %pF %px %pK).  Arguments are
 * evaluated only when the event is enabled.
 *
 * MARKERS.  tb_marker_write() records ftrace:print, the event the kernel's
 * trace_marker writes (text, a newline added if missing, cut to fit one
 * event like the kernel's); tb_marker_raw_write() records ftrace:raw_data,
 * what trace_marker_raw writes (a 32-bit id and bytes).  Readers that know
 * the kernel's events print both natively.
 *
 * USDT PROBES.  Every emitter, tb_printf() call and marker is also a
 * SystemTap SDT probe SYSTEM:NAME (ftrace:bprint, ftrace:print,
 * ftrace:raw_data for the built-in ones) with the fields as its arguments
 * (the first TB_USDT_MAX_ARGS; strings and arrays as pointers), in the
 * object that fires it, so bpftrace, perf and SystemTap attach to a running
 * program by name.  Its semaphore is half of the gate word the disabled test
 * loads: the kernel counts attached consumers there, tracebuf keeps its own
 * switch beside it, so either turns the emit on and neither disturbs the
 * other (tb_usdt_attached() tells whether a consumer is attached).
 * -DTB_NO_USDT leaves the probes out.  Mapping and limits: docs/usdt.md.
 *
 * WHERE RECORDS GO, ON/OFF, SELF-DESCRIPTION: tracebuf/events.h.  Every
 * event starts disabled; an enabled event writes to the ring attached with
 * tb_events_attach() (or to a default ring created when the first event is
 * enabled).  A ring may be freed only once no thread can still be
 * inside an emit that loaded it (detach, then wait, as for any writer).
 *
 * REGISTRATION.  Each object (executable or shared library, also one
 * loaded with dlopen) lists its descriptors in ELF sections; a constructor
 * this header puts in every file that includes it hands the object's
 * sections to the registry in libtracebuf (once per object), a destructor
 * takes them back at exit or dlclose.  The registry gives every
 * system:name one event ID for the whole process (equal declarations in
 * several objects share it; an unloaded object's events keep theirs and
 * their formats, so what they wrote stays readable; IDs are never reused).
 *
 * C only (the macros use _Generic and GNU extensions of GCC and Clang).
 *
 * Ownership: the macros define static or object-local data only; the
 * registry copies what it keeps.  Everything here but the descriptors'
 * ring pointers is constant after registration.
 */
#ifndef TRACEBUF_TRACEPOINT_H
#define TRACEBUF_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebuf/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ constants */

/* Largest record an event may have (the kernel's, 4 KiB sub-buffers). */
#define TB_EVENT_MAX 4072u
#define TB_EVENT_MAX_FIELDS 32
#define TB_PRINTF_MAX_ARGS 32

/* The kernel's IDs of the ftrace events the built-in sources write. */
#define TB_PRINT_ID 5
#define TB_BPRINT_ID 6
#define TB_RAW_DATA_ID 19

/*
 * Version of the descriptor layouts below (macros and registry must agree;
 * the registry refuses, with a message, a descriptor of another version).
 * 2: tb_event_desc.filter.  3: the gate (USDT semaphore + tracebuf's switch).
 */
#define TB_EVENT_ABI 3

/* ------------------------------------------- descriptors (registry ABI) */

/* The kernel's struct trace_entry: the first 8 bytes of every record. */
struct tb_event_common {
	uint16_t common_type;
	uint8_t common_flags;
	uint8_t common_preempt_count;
	int32_t common_pid;
};

enum tb_event_field_kind {
	TB_EVF_SCALAR = 0, /* TYPE NAME */
	TB_EVF_ARRAY,      /* TYPE NAME[N] */
	TB_EVF_STRING,     /* __data_loc char[] NAME */
	TB_EVF_DYN_ARRAY,  /* __data_loc TYPE[] NAME */
	TB_EVF_FLEX,       /* TYPE NAME[]: the rest of the record (built-in events) */
};

struct tb_event_field {
	const char *type;   /* as declared: "int", "uint64_t", "char" (element type for arrays) */
	const char *name;
	uint32_t offset;
	uint32_t size;      /* bytes in the record: the whole array, 4 for a __data_loc word */
	uint32_t array_len; /* N of a fixed array */
	uint8_t is_signed;
	uint8_t kind;       /* enum tb_event_field_kind */
};

/*
 * What every emit tests first, in one 4-byte load: nonzero when anyone
 * wants the event.  usdt is the SDT semaphore of the event's USDT probe:
 * its ELF note names this address, and the kernel itself adds 1 to it for
 * every uprobe a consumer (bpftrace, perf) attaches with a reference
 * counter (ref_ctr_offset, Linux 4.20) and takes it back at detach - so it
 * must sit in file-backed writable data, the ".probes" section tools look
 * for.  on is tracebuf's own switch, a copy of "ring != NULL" that the
 * registry keeps (the ring pointer's acquire load is what publishes the
 * ring; on is only the hint that sends the emit there).  The two writers
 * own distinct bytes, so neither store disturbs the other's.
 */
union tb_event_gate {
	uint32_t word;
	struct {
		uint16_t usdt; /* written by the kernel: attached USDT consumers */
		uint8_t on;    /* written by the registry: 1 while the event is enabled */
		uint8_t hist;  /* written by the registry: TB__HIST_GATE_* while a hist is attached (tracebuf/hist.h) */
	} part;
};

struct tb_event_desc {
	/* Read by every enabled emit: where records go, NULL while disabled. */
	struct tb_ring *ring;
	uint16_t id; /* common_type, given at registration */
	uint16_t abi;
	uint32_t size; /* of the fixed record */
	/* Read by every emit, first: whether anyone wants the event (above). */
	union tb_event_gate gate;
	const char *system, *name;
	const struct tb_event_field *fields; /* ends with a NULL name */
	const char *print_fmt;               /* the text after "print fmt: " */
	const char *file;                    /* where it was declared */
	int line;
	/* Read by every enabled emit: the filter at the source, NULL for none (registry). */
	const struct tb_event_filter *filter;
};

/* One tb_printf() call site. */
struct tb_printf_site {
	struct tb_ring *ring; /* as tb_event_desc.ring, mirrors ftrace:bprint; read when the gate is open */
	uint64_t key;         /* its printk_formats key, given at registration */
	uint8_t fast;         /* the inline packing matches the format (registry) */
	uint8_t nargs;
	uint16_t abi;
	char cls[TB_PRINTF_MAX_ARGS + 1]; /* per argument: i (4 bytes), l (8), p (pointer), s (string) */
	char plan[TB_PRINTF_MAX_ARGS]; /* per argument, as the format wants it (registry) */
	const char *fmt, *func, *file;
	int line;
	/* its object's ftrace:bprint gate, shared by all its sites (the USDT semaphore is per name) */
	union tb_event_gate *gate;
};

struct tb_enum_value {
	const char *name;
	long long value;
};

/* What one object hands the registry: its sections, and how to reach its thread-id cache. */
struct tb_object_sections {
	struct tb_event_desc *const *events, *const *events_end;
	struct tb_printf_site *const *sites, *const *sites_end;
	const struct tb_enum_value *const *enums, *const *enums_end;
	void (*forget_tid)(void); /* clears this object's cached thread id (after fork) */
};

/*
 * tb_hist_attach (tracebuf/hist.h) sets the gate's hist byte.  ONLY: a
 * hit updates the attached map and writes no record; RECORD (":record"):
 * the record goes to the ring too, when the event is enabled.
 */
#define TB__HIST_GATE_ONLY 1
#define TB__HIST_GATE_RECORD 2
/* Add the record rec[0..len) of ev to its attached hist (async-signal-safe, never blocks). */
void tb_event_hist_hit(const struct tb_event_desc *ev, const void *rec, uint32_t len);

/* Called by the constructor and destructor below; not for direct use. */
void tb_registry_add_object(const struct tb_object_sections *s);
void tb_registry_remove_object(const struct tb_object_sections *s);
/* The calling thread's id (a system call: cached by the emitters). */
int32_t tb_thread_id(void);
/* Count a refused oversize event in ring's too_big counter. */
void tb_event_refuse_too_big(struct tb_ring *ring);

/*
 * A filter at the source (tracebuf/events.h), built by the registry.  Its
 * compact form, which the emitters run inline: up to TB_EVENT_FILTER_FAST_MAX
 * integer tests, all run, and the verdict looked up in truth (bit b: the
 * verdict when test k answered bit k of b).  Filters of any other kind
 * (strings, CPU, COMM, more tests) have ntests 0 and run out of line.
 * The tests are shaped for a short dependency chain (the ring's write
 * waits for the instructions before its clock read): one load, then a
 * subtraction and a comparison.
 */
#define TB_EVENT_FILTER_FAST_MAX 6
struct tb_event_filter_test {
	uint32_t offset;   /* of an integer field in the record */
	uint8_t width;     /* its bytes: 1, 2, 4 or 8 */
	uint8_t is_signed; /* extended to 64 bits as signed */
	uint8_t band;      /* true when (field & lo) != 0; */
	uint64_t lo, span; /* else true when field - lo <= span (64-bit, wrapping) */
};
struct tb_event_filter {
	uint32_t ntests; /* 0: not of the compact form */
	uint32_t min_len; /* a shorter record is tested out of line */
	uint64_t truth;
	struct tb_event_filter_test tests[TB_EVENT_FILTER_FAST_MAX];
};
/* Whether rec[0..len) passes f, any form; a record it rejects is counted as filtered in ring. */
bool tb_event_filter_keep(struct tb_ring *ring, const struct tb_event_filter *f, const void *rec,
			  uint32_t len);
/* Count a record of len bytes the compact form rejected in ring's filtered counter. */
void tb_event_filter_drop(struct tb_ring *ring, uint32_t len);

/* ------------------------------------------------- per-object machinery */

#define TB__HIDDEN __attribute__((visibility("hidden")))
#define TB__UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * The thread id cache: one per object, at a fixed offset from the thread
 * pointer where the object allows it (initial-exec), so reading it is one
 * load.  libtracebuf itself keeps the general model: a library whose TLS
 * is initial-exec may not be dlopen'ed once its TLS is large.
 */
#ifdef TB_BUILDING_LIBTRACEBUF
#define TB__TID_TLS
#else
#define TB__TID_TLS __attribute__((tls_model("initial-exec")))
#endif
__attribute__((weak)) TB__HIDDEN TB__TID_TLS __thread int32_t tb__tid;

/*
 * Descriptors and gates live where the kernel can count USDT consumers in
 * them: file-backed writable data, in the section tools translate a
 * semaphore's address with (".probes", as <sys/sdt.h> uses).
 */
#ifdef TB_NO_USDT
#define TB__PROBES_SECTION
#else
#define TB__PROBES_SECTION __attribute__((section(".probes")))
#endif

/* This object's ftrace:bprint gate: every tb_printf() site in it tests it first. */
__attribute__((weak, aligned(4))) TB__HIDDEN TB__PROBES_SECTION union tb_event_gate tb__printf_gate;

static inline int32_t tb__thread_id(void)
{
	int32_t tid = tb__tid;

	if (TB__UNLIKELY(tid == 0))
		tb__tid = tid = tb_thread_id();
	return tid;
}

/* The first 8 bytes of a record of event id, as one word. */
static inline uint64_t tb__common_word(uint16_t id)
{
	return (uint64_t)id | (uint64_t)(uint32_t)tb__thread_id() << 32;
}

/*
 * A field the emitter has just stored, with a load of exactly its size (a
 * wider one, over two stores, would wait for them to reach the cache),
 * extended to 64 bits as its type is.
 */
static inline uint64_t tb__filter_field(const struct tb_event_filter_test *t, const unsigned char *rec)
{
	const unsigned char *at = rec + t->offset;
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;

	if (t->width == 8)
		return (memcpy(&v8, at, 8), v8);
	if (t->width == 4)
		return (memcpy(&v4, at, 4), t->is_signed ? (uint64_t)(int64_t)(int32_t)v4 : v4);
	if (t->width == 2)
		return (memcpy(&v2, at, 2), t->is_signed ? (uint64_t)(int64_t)(int16_t)v2 : v2);
	return t->is_signed ? (uint64_t)(int64_t)(int8_t)*at : *at;
}

/* The compact form: every test runs (independent: the CPU overlaps them), the table decides. */
static inline bool tb__filter_pass(const struct tb_event_filter *f, const void *rec)
{
	unsigned bits = 0;

	for (uint32_t k = 0; k < f->ntests; k++) {
		const struct tb_event_filter_test *t = &f->tests[k];
		uint64_t v = tb__filter_field(t, (const unsigned char *)rec);
		bool r = t->band ? (v & t->lo) != 0 : v - t->lo <= t->span;
		bits |= (unsigned)r << k;
	}
	return (f->truth >> bits) & 1;
}

/*
 * Whether an emitter drops the record rec[0..len) it has built because its
 * event's filter rejects it (then counted as filtered): with no filter, one
 * load and a branch not taken; with a compact one, no call unless it drops.
 */
static inline bool tb__event_filtered(struct tb_event_desc *ev, struct tb_ring *ring, const void *rec,
				      uint32_t len)
{
	/* acquire: pairs with the registry's release store of a filter it built before */
	const struct tb_event_filter *f = __atomic_load_n(&ev->filter, __ATOMIC_ACQUIRE);

	if (__builtin_expect(f == NULL, 1))
		return false;
	if (f->ntests == 0 || len < f->min_len)
		return !tb_event_filter_keep(ring, f, rec, len);
	if (tb__filter_pass(f, rec))
		return false;
	tb_event_filter_drop(ring, len);
	return true;
}

/*
 * An attached hist sees every hit (its own "if" filters them); true when
 * no record is to be written after it (hist only, or the event disabled).
 */
static inline bool tb__hist_only(const struct tb_event_desc *ev, const struct tb_ring *ring, uint8_t hist,
				 const void *rec, uint32_t len)
{
	tb_event_hist_hit(ev, rec, len);
	return hist != TB__HIST_GATE_RECORD || ring == NULL;
}

extern struct tb_event_desc *const __start_tb_events[] __attribute__((weak)) TB__HIDDEN;
extern struct tb_event_desc *const __stop_tb_events[] __attribute__((weak)) TB__HIDDEN;
extern struct tb_printf_site *const __start_tb_printf[] __attribute__((weak)) TB__HIDDEN;
extern struct tb_printf_site *const __stop_tb_printf[] __attribute__((weak)) TB__HIDDEN;
extern const struct tb_enum_value *const __start_tb_enums[] __attribute__((weak)) TB__HIDDEN;
extern const struct tb_enum_value *const __stop_tb_enums[] __attribute__((weak)) TB__HIDDEN;

static void tb__forget_tid(void)
{
	tb__tid = 0;
}

static const struct tb_object_sections tb__object_sections = {
	__start_tb_events, __stop_tb_events, __start_tb_printf, __stop_tb_printf,
	__start_tb_enums,  __stop_tb_enums,  tb__forget_tid,
};

__attribute__((constructor)) static void tb__register_object(void)
{
	tb_registry_add_object(&tb__object_sections);
}

__attribute__((destructor)) static void tb__unregister_object(void)
{
	tb_registry_remove_object(&tb__object_sections);
}

/* ------------------------------------------------ preprocessor helpers */

#define TB__CAT(a, b) TB__CAT_(a, b)
#define TB__CAT_(a, b) a##b
#define TB__STR(...) #__VA_ARGS__
#define TB__XSTR(...) TB__STR(__VA_ARGS__)
#define TB__UNPAREN(...) __VA_ARGS__

/*
 * Number of arguments after the first, 0..32 ("overflow" beyond).  Callers
 * pass a first argument of their own and forward with ", ##__VA_ARGS__",
 * which drops the comma before omitted arguments in every language mode.
 */
#define TB__NARGS1(...)                                                                      \
	TB__NARGS_(__VA_ARGS__, overflow, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, \
		   18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TB__NARGS_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15,    \
		   _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, \
		   _31, _32, _33, n, ...)                                                     \
	n

/*
 * TB__EACH(M, c, a, b, ...) is M(c, 1, a) M(c, 11, b) ...: in order, each
 * with a distinct number (for names of temporaries).  At most 32 items.
 * TB__EACH_LIST(M, c, (a, b, ...)) does the same over a parenthesized
 * list; an empty list is one empty item, which every M ignores.
 */
#define TB__EACH(M, c, ...) TB__CAT(TB__EACH_, TB__NARGS1(c, ##__VA_ARGS__))(M, c, 1, ##__VA_ARGS__)
#define TB__EACH_LIST(M, c, list) TB__EACH_LIST_(M, c, TB__UNPAREN list)
#define TB__EACH_LIST_(M, c, ...) TB__EACH(M, c, __VA_ARGS__)
#define TB__EACH_0(M, c, i)
#define TB__EACH_1(M, c, i, a) M(c, i, a)
#define TB__EACH_2(M, c, i, a, ...) M(c, i, a) TB__EACH_1(M, c, i##1, __VA_ARGS__)
#define TB__EACH_3(M, c, i, a, ...) M(c, i, a) TB__EACH_2(M, c, i##1, __VA_ARGS__)
#define TB__EACH_4(M, c, i, a, ...) M(c, i, a) TB__EACH_3(M, c, i##1, __VA_ARGS__)
#define TB__EACH_5(M, c, i, a, ...) M(c, i, a) TB__EACH_4(M, c, i##1, __VA_ARGS__)
#define TB__EACH_6(M, c, i, a, ...) M(c, i, a) TB__EACH_5(M, c, i##1, __VA_ARGS__)
#define TB__EACH_7(M, c, i, a, ...) M(c, i, a) TB__EACH_6(M, c, i##1, __VA_ARGS__)
#define TB__EACH_8(M, c, i, a, ...) M(c, i, a) TB__EACH_7(M, c, i##1, __VA_ARGS__)
#define TB__EACH_9(M, c, i, a, ...) M(c, i, a) TB__EACH_8(M, c, i##1, __VA_ARGS__)
#define TB__EACH_10(M, c, i, a, ...) M(c, i, a) TB__EACH_9(M, c, i##1, __VA_ARGS__)
#define TB__EACH_11(M, c, i, a, ...) M(c, i, a) TB__EACH_10(M, c, i##1, __VA_ARGS__)
#define TB__EACH_12(M, c, i, a, ...) M(c, i, a) TB__EACH_11(M, c, i##1, __VA_ARGS__)
#define TB__EACH_13(M, c, i, a, ...) M(c, i, a) TB__EACH_12(M, c, i##1, __VA_ARGS__)
#define TB__EACH_14(M, c, i, a, ...) M(c, i, a) TB__EACH_13(M, c, i##1, __VA_ARGS__)
#define TB__EACH_15(M, c, i, a, ...) M(c, i, a) TB__EACH_14(M, c, i##1, __VA_ARGS__)
#define TB__EACH_16(M, c, i, a, ...) M(c, i, a) TB__EACH_15(M, c, i##1, __VA_ARGS__)
#define TB__EACH_17(M, c, i, a, ...) M(c, i, a) TB__EACH_16(M, c, i##1, __VA_ARGS__)
#define TB__EACH_18(M, c, i, a, ...) M(c, i, a) TB__EACH_17(M, c, i##1, __VA_ARGS__)
#define TB__EACH_19(M, c, i, a, ...) M(c, i, a) TB__EACH_18(M, c, i##1, __VA_ARGS__)
#define TB__EACH_20(M, c, i, a, ...) M(c, i, a) TB__EACH_19(M, c, i##1, __VA_ARGS__)
#define TB__EACH_21(M, c, i, a, ...) M(c, i, a) TB__EACH_20(M, c, i##1, __VA_ARGS__)
#define TB__EACH_22(M, c, i, a, ...) M(c, i, a) TB__EACH_21(M, c, i##1, __VA_ARGS__)
#define TB__EACH_23(M, c, i, a, ...) M(c, i, a) TB__EACH_22(M, c, i##1, __VA_ARGS__)
#define TB__EACH_24(M, c, i, a, ...) M(c, i, a) TB__EACH_23(M, c, i##1, __VA_ARGS__)
#define TB__EACH_25(M, c, i, a, ...) M(c, i, a) TB__EACH_24(M, c, i##1, __VA_ARGS__)
#define TB__EACH_26(M, c, i, a, ...) M(c, i, a) TB__EACH_25(M, c, i##1, __VA_ARGS__)
#define TB__EACH_27(M, c, i, a, ...) M(c, i, a) TB__EACH_26(M, c, i##1, __VA_ARGS__)
#define TB__EACH_28(M, c, i, a, ...) M(c, i, a) TB__EACH_27(M, c, i##1, __VA_ARGS__)
#define TB__EACH_29(M, c, i, a, ...) M(c, i, a) TB__EACH_28(M, c, i##1, __VA_ARGS__)
#define TB__EACH_30(M, c, i, a, ...) M(c, i, a) TB__EACH_29(M, c, i##1, __VA_ARGS__)
#define TB__EACH_31(M, c, i, a, ...) M(c, i, a) TB__EACH_30(M, c, i##1, __VA_ARGS__)
#define TB__EACH_32(M, c, i, a, ...) M(c, i, a) TB__EACH_31(M, c, i##1, __VA_ARGS__)
#define TB__EACH_overflow(M, c, i, ...) \
	_Static_assert(0, "tracebuf: more than 32 fields or printf arguments");

/* ------------------------------------------------------- USDT probes */

/*
 * TB__USDT(provider, name, sema, offset, values...) places a SystemTap SDT
 * probe here (docs/usdt.md): a nop, and an ELF note in .note.stapsdt
 * (type 3, owner "stapsdt") holding the nop's address, the address of
 * _.stapsdt.base (tools compare it with where that section really is, to
 * undo prelinking), the semaphore's address (sema + offset: a 16-bit count
 * the kernel raises per attached uprobe), provider and name, and the
 * arguments as SIZE@OPERAND in the assembler's syntax: -4@%eax is a signed
 * 4-byte value in eax, 8@-24(%rbp) an unsigned 8-byte one in memory, -4@$5
 * a constant.  The compiler chooses each operand ("nor": a constant, memory
 * or a register, whatever the value already is in, so an idle probe costs
 * no moves) and prints it into the note; "%n" prints a constant negated, so
 * the size operand is +size for signed values and -size for unsigned ones.
 * At most TB_USDT_MAX_ARGS values are passed (the SDT limit), the rest are
 * left out.  Only the caller's gate test decides whether this code runs: a
 * consumer's uprobe replaces the nop and sees the operands as they are.
 */
#define TB_USDT_MAX_ARGS 12

#ifdef TB_NO_USDT
#define TB__USDT(...) ((void)0)
#else
/* (values may come from a macro expanded in the argument list: split them after it) */
#define TB__USDT(...) TB__USDT_SPLIT(__VA_ARGS__)
#endif
#define TB__USDT_SPLIT(prov, name, sema, offset, ...) \
	TB__USDT_(prov, name, sema, offset TB__USDT_FIRST(_, ##__VA_ARGS__))
#define TB__USDT_(...) TB__USDT_ASM(__VA_ARGS__)
#define TB__USDT_ASM(prov, name, sema, offset, ...)                                           \
	__asm__ __volatile__("990:\tnop\n"                                                    \
			     "\t.pushsection .note.stapsdt,\"?\",\"note\"\n"                  \
			     "\t.balign 4\n"                                                  \
			     "\t.4byte 992f-991f, 994f-993f, 3\n"                             \
			     "991:\t.asciz \"stapsdt\"\n"                                     \
			     "992:\t.balign 4\n"                                              \
			     "993:\t.8byte 990b, _.stapsdt.base, " #sema "+%c[tb__sema_off]\n" \
			     "\t.asciz \"" #prov "\", \"" #name "\"\n"                        \
			     TB__EACH(TB__USDT_ARG_TEXT, _, ##__VA_ARGS__)                    \
			     "\t.byte 0\n"                                                    \
			     "994:\t.balign 4\n"                                              \
			     "\t.popsection\n"                                                \
			     ".ifndef _.stapsdt.base\n"                                       \
			     "\t.pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
			     "\t.weak _.stapsdt.base\n"                                       \
			     "\t.hidden _.stapsdt.base\n"                                     \
			     "_.stapsdt.base:\n"                                              \
			     "\t.space 1\n"                                                   \
			     "\t.size _.stapsdt.base, 1\n"                                    \
			     "\t.popsection\n"                                                \
			     ".endif\n"                                                       \
			     :                                                                \
			     : TB__EACH(TB__USDT_OPERANDS, _, ##__VA_ARGS__)                  \
			       [tb__sema_off] "n"(offset))

/* One argument's text: a space before all but the first (the assembler compares the index). */
#define TB__USDT_ARG_TEXT(c, i, v)                          \
	".ifnc " #i ",1\n\t.ascii \" \"\n.endif\n"          \
	"\t.ascii \"%n[tb__size" #i "]@%[tb__arg" #i "]\"\n"
#define TB__USDT_OPERANDS(c, i, v) [tb__size##i] "n"(TB__USDT_SIZE(v)), [tb__arg##i] "nor"(v),
/* +size for signed integers, -size for unsigned ones and pointers (printed negated). */
#define TB__USDT_SIZE(v) (TB__USDT_SIGNED(v) ? (int)sizeof(v) : -(int)sizeof(v))
#define TB__USDT_SIGNED(v) \
	__builtin_choose_expr(__builtin_classify_type(v) == 5, 0, (__typeof__(v))-1 < (__typeof__(v))1)

/* ", v1, v2 ...": the first TB_USDT_MAX_ARGS of the values (none: nothing, not an empty one). */
#define TB__USDT_FIRST(c, ...) TB__CAT(TB__USDT_TAKE_, TB__USDT_COUNT(c, ##__VA_ARGS__))(__VA_ARGS__)
#define TB__USDT_COUNT(...)                                                                  \
	TB__NARGS_(__VA_ARGS__, overflow, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, \
		   12, 12, 12, 12, 12, 12, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TB__USDT_TAKE_0(...)
#define TB__USDT_TAKE_1(a, ...) , a
#define TB__USDT_TAKE_2(a, b, ...) , a, b
#define TB__USDT_TAKE_3(a, b, c, ...) , a, b, c
#define TB__USDT_TAKE_4(a, b, c, d, ...) , a, b, c, d
#define TB__USDT_TAKE_5(a, b, c, d, e, ...) , a, b, c, d, e
#define TB__USDT_TAKE_6(a, b, c, d, e, f, ...) , a, b, c, d, e, f
#define TB__USDT_TAKE_7(a, b, c, d, e, f, g, ...) , a, b, c, d, e, f, g
#define TB__USDT_TAKE_8(a, b, c, d, e, f, g, h, ...) , a, b, c, d, e, f, g, h
#define TB__USDT_TAKE_9(a, b, c, d, e, f, g, h, i, ...) , a, b, c, d, e, f, g, h, i
#define TB__USDT_TAKE_10(a, b, c, d, e, f, g, h, i, j, ...) , a, b, c, d, e, f, g, h, i, j
#define TB__USDT_TAKE_11(a, b, c, d, e, f, g, h, i, j, k, ...) , a, b, c, d, e, f, g, h, i, j, k
#define TB__USDT_TAKE_12(a, b, c, d, e, f, g, h, i, j, k, l, ...) , a, b, c, d, e, f, g, h, i, j, k, l
#define TB__USDT_TAKE_overflow(...) _Static_assert(0, "tracebuf: more than 32 fields or printf arguments")

/*
 * Whether a USDT consumer is attached to an event's probe (the kernel's
 * count in its semaphore): tb_usdt_attached(app, request).  Always false
 * when built with TB_NO_USDT.
 */
#define tb_usdt_attached(sys, name) \
	(__atomic_load_n(&tb_event_##sys##_##name.gate.part.usdt, __ATOMIC_RELAXED) != 0)

/* ------------------------------------------------------- field tuples */

/*
 * Each field becomes a tuple (KIND, type, name, ...) whose type and name
 * are also kept as written ("bool", not what the macro bool expands to).
 * TB__FIELD(OP, rec, i, tuple) runs TB__<OP>_<KIND>(rec, i, ...).
 */
#define tb_field(type, name, value) (tb__scalar, type, name, #type, #name, value)
#define tb_array(type, name, n, src) (tb__array, type, name, #type, #name, n, src)
#define tb_chars(name, n, str) (tb__chars, char, name, "char", #name, n, str)
#define tb_string(name, str) (tb__string, char, name, "char", #name, str)
#define tb_dyn_array(type, name, src, count) (tb__dynarray, type, name, #type, #name, src, count)

#define TB__FIELD(op, rec, i, t) TB__FIELD_(op, rec, i, TB__UNPAREN t)
#define TB__FIELD_(op, rec, i, ...) TB__FIELD__(op, rec, i, __VA_ARGS__)
#define TB__FIELD__(op, rec, i, kind, ...) TB__##op##_##kind(rec, i, __VA_ARGS__)
#define TB__DECL(rec, i, t) TB__FIELD(DECL, rec, i, t)
#define TB__DESC(rec, i, t) TB__FIELD(DESC, rec, i, t)
#define TB__CHECK(rec, i, t) TB__FIELD(CHECK, rec, i, t)
#define TB__PREP(rec, i, t) TB__FIELD(PREP, rec, i, t)
#define TB__STORE(rec, i, t) TB__FIELD(STORE, rec, i, t)
#define TB__DYN(rec, i, t) TB__FIELD(DYN, rec, i, t)
#define TB__TAIL(rec, i, t) TB__FIELD(TAIL, rec, i, t)
#define TB__UVAL(rec, i, t) TB__FIELD(UVAL, rec, i, t)
#define TB__UVAL_TB__UNPAREN(...)
/* The empty item of an empty TB_FIELDS(): nothing. */
#define TB__TAIL_TB__UNPAREN(...)
#define TB__DECL_TB__UNPAREN(...)
#define TB__DESC_TB__UNPAREN(...)
#define TB__CHECK_TB__UNPAREN(...)
#define TB__PREP_TB__UNPAREN(...)
#define TB__STORE_TB__UNPAREN(...)
#define TB__DYN_TB__UNPAREN(...)

/* The record's members. */
#define TB__DECL_tb__scalar(rec, i, type, name, ...) type name;
#define TB__DECL_tb__array(rec, i, type, name, ts, ns, n, src) type name[n];
#define TB__DECL_tb__chars(rec, i, type, name, ts, ns, n, src) char name[n];
#define TB__DECL_tb__string(rec, i, type, name, ...) uint32_t name;
#define TB__DECL_tb__dynarray(rec, i, type, name, ...) uint32_t name;

/* Plain char is unsigned in the kernel's formats (it builds with -funsigned-char). */
#define TB__IS_POINTER(type) (__builtin_classify_type((type)0) == 5)
#define TB__IS_SIGNED(type)                             \
	_Generic((type)0, char: 0,                      \
		 default: __builtin_choose_expr(TB__IS_POINTER(type), 0, ((type)-1 < (type)1)))
#define TB__MEMBER_SIZE(rec, name) sizeof(((struct rec *)0)->name)

/* The descriptor's field table. */
#define TB__DESC_tb__scalar(rec, i, type, name, ts, ns, value) \
	{ts, ns, offsetof(struct rec, name), TB__MEMBER_SIZE(rec, name), 0, TB__IS_SIGNED(type), TB_EVF_SCALAR},
#define TB__DESC_tb__array(rec, i, type, name, ts, ns, n, src)                                    \
	{ts, ns, offsetof(struct rec, name), TB__MEMBER_SIZE(rec, name), n, TB__IS_SIGNED(type), \
	 TB_EVF_ARRAY},
#define TB__DESC_tb__chars(rec, i, type, name, ts, ns, n, src) \
	{ts, ns, offsetof(struct rec, name), n, n, 0, TB_EVF_ARRAY},
#define TB__DESC_tb__string(rec, i, type, name, ts, ns, str) \
	{ts, ns, offsetof(struct rec, name), 4, 0, 0, TB_EVF_STRING},
#define TB__DESC_tb__dynarray(rec, i, type, name, ts, ns, src, count) \
	{ts, ns, offsetof(struct rec, name), 4, 0, TB__IS_SIGNED(type), TB_EVF_DYN_ARRAY},

/* Declaration mistakes the compiler can catch. */
#define TB__INTEGRAL(type) _Generic((type)0, float: 0, double: 0, long double: 0, default: 1)
#define TB__SIZE_OK(n) ((n) == 1 || (n) == 2 || (n) == 4 || (n) == 8)
#define TB__CHECK_tb__scalar(rec, i, type, name, ts, ns, value)                                   \
	_Static_assert(TB__INTEGRAL(type) && TB__SIZE_OK(sizeof(type)),                           \
		       "tracebuf: field " ns " of " #rec " must be an integer, bool, enum or pointer " \
		       "of 1, 2, 4 or 8 bytes");
#define TB__CHECK_tb__array(rec, i, type, name, ts, ns, n, src)                                   \
	_Static_assert(TB__INTEGRAL(type) && TB__SIZE_OK(sizeof(type)) && (n) > 0,                \
		       "tracebuf: array " ns " of " #rec " must have integers of 1, 2, 4 or 8 bytes " \
		       "and at least one element");
#define TB__CHECK_tb__chars(rec, i, type, name, ts, ns, n, src) \
	_Static_assert((n) > 1, "tracebuf: tb_chars " ns " of " #rec " needs room for a character and its NUL");
#define TB__CHECK_tb__string(rec, i, ...)
#define TB__CHECK_tb__dynarray(rec, i, type, name, ts, ns, src, count)                      \
	_Static_assert(TB__INTEGRAL(type) && TB__SIZE_OK(sizeof(type)),                     \
		       "tracebuf: dynamic array " ns " of " #rec " must have integers of 1, 2, 4 " \
		       "or 8 bytes");

/* Whether a field stores data after the fixed part (summed: "0 + 1 + 0"). */
#define TB__DYN_tb__scalar(rec, i, ...) +0
#define TB__DYN_tb__array(rec, i, ...) +0
#define TB__DYN_tb__chars(rec, i, ...) +0
#define TB__DYN_tb__string(rec, i, ...) +1
#define TB__DYN_tb__dynarray(rec, i, ...) +1

/* Before the record is sized: each dynamic source evaluated once, and its length. */
#define TB__PREP_tb__scalar(rec, i, ...)
#define TB__PREP_tb__array(rec, i, ...)
#define TB__PREP_tb__chars(rec, i, ...)
#define TB__PREP_tb__string(rec, i, type, name, ts, ns, str)  \
	const char *tb__src##i = tb__string_or_null(str);      \
	size_t tb__len##i = tb__capped(strlen(tb__src##i) + 1); \
	tb__dyn += tb__len##i;
#define TB__PREP_tb__dynarray(rec, i, type, name, ts, ns, src, count)              \
	const type *tb__src##i = (src);                                          \
	size_t tb__len##i = tb__capped(tb__capped((size_t)(count)) * sizeof(type)); \
	tb__dyn += tb__len##i;

/* Filling the record: tb__e the fixed part, tb__off where dynamic data goes next. */
#define TB__STORE_tb__scalar(rec, i, type, name, ts, ns, value) tb__e->name = (value);
#define TB__STORE_tb__array(rec, i, type, name, ts, ns, n, src) \
	memcpy(tb__e->name, (src), sizeof(tb__e->name));
#define TB__STORE_tb__chars(rec, i, type, name, ts, ns, n, str) \
	tb__copy_chars(tb__e->name, (str), sizeof(tb__e->name));
#define TB__STORE_tb__string(rec, i, type, name, ts, ns, str) \
	tb__off = tb__put_dynamic(tb__buf, tb__off, &tb__e->name, tb__src##i, tb__len##i);
#define TB__STORE_tb__dynarray(rec, i, type, name, ts, ns, src, count) \
	tb__off = tb__put_dynamic(tb__buf, tb__off, &tb__e->name, tb__src##i, tb__len##i);

/* A fixed record's last 8 bytes from its fields (tb__tail_known: no array reaches them). */
#define TB__TAIL_FIELD(rec, name)                                                                  \
	tb__tail |= tb__tail_part(tb__bits(&tb__e->name, sizeof(tb__e->name)), offsetof(struct rec, name), \
				  sizeof(tb__e->name), sizeof(struct rec));
#define TB__TAIL_tb__scalar(rec, i, type, name, ...) TB__TAIL_FIELD(rec, name)
#define TB__TAIL_tb__string(rec, i, type, name, ...) TB__TAIL_FIELD(rec, name)
#define TB__TAIL_tb__dynarray(rec, i, type, name, ...) TB__TAIL_FIELD(rec, name)
#define TB__TAIL_tb__array(rec, i, type, name, ...) \
	tb__tail_known &= tb__before_tail(offsetof(struct rec, name), sizeof(tb__e->name), sizeof(struct rec));
#define TB__TAIL_tb__chars TB__TAIL_tb__array

/*
 * A field as a USDT probe argument (", value"): integers as their declared
 * type, strings and arrays as a pointer to what the record copies.
 */
#define TB__UVAL_tb__scalar(rec, i, type, name, ts, ns, value) , (type)(value)
#define TB__UVAL_tb__array(rec, i, type, name, ts, ns, n, src) , (const type *)(src)
#define TB__UVAL_tb__chars(rec, i, type, name, ts, ns, n, str) , tb__string_or_null(str)
#define TB__UVAL_tb__string(rec, i, type, name, ts, ns, str) , tb__string_or_null(str)
#define TB__UVAL_tb__dynarray(rec, i, type, name, ts, ns, src, count) , (const type *)(src)

static inline const char *tb__string_or_null(const char *s)
{
	return s ? s : "(null)";
}

/* Lengths above the event limit all mean "too big"; capping keeps sums from wrapping. */
static inline size_t tb__capped(size_t n)
{
	return n < TB_EVENT_MAX ? n : TB_EVENT_MAX;
}

static inline void tb__copy_chars(char *dst, const char *src, size_t n)
{
	size_t len = 0;

	src = tb__string_or_null(src);
	while (len < n - 1 && src[len])
		len++;
	memcpy(dst, src, len);
	memset(dst + len, 0, n - len);
}

/* memcpy out of line: where the compiler would copy with "rep movs", slow to start. */
void tb_copy(void *dst, const void *src, size_t n);

/*
 * Copy n bytes, the short runs typical of strings in a few moves of 4, 8
 * or 16 bytes that overlap, longer ones out of line.
 */
static inline void tb__copy(unsigned char *d, const unsigned char *s, size_t n)
{
	if (n >= 16 && n <= 32) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8 && n < 16) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		tb_copy(d, s, n);
	}
}

/* Store len bytes at off (a string's NUL included) and the __data_loc word. */
static inline uint32_t tb__put_dynamic(unsigned char *buf, uint32_t off, uint32_t *loc,
				       const void *src, size_t len)
{
	uint32_t word = off | (uint32_t)len << 16;

	memcpy(loc, &word, sizeof(word));
	tb__copy(buf + off, (const unsigned char *)src, len);
	return off + (uint32_t)len;
}

/*
 * tb_write() reads a record's first and last 8 bytes before anything else,
 * and a load that spans two of the caller's stores cannot be forwarded from
 * them: the processor waits for the stores to reach the cache (a dozen
 * cycles, measured).  So the emitters rewrite the last 8 bytes of a record
 * of fixed size with one 8-byte store, computed from the values written
 * there (all known to the compiler: it becomes a few shifts).
 */
static inline uint64_t tb__bits(const void *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n < 8 ? n : 8);
	return v;
}

/* The part of the last 8 bytes of a size-byte record that the n-byte value v at off holds. */
static inline uint64_t tb__tail_part(uint64_t v, size_t off, size_t n, size_t size)
{
	size_t lo = size - 8;

	if (off + n <= lo)
		return 0;
	return off >= lo ? v << 8 * (off - lo) : v >> 8 * (lo - off);
}

/* Whether bytes [off, off + n) stay out of the last 8 bytes of the record. */
static inline bool tb__before_tail(size_t off, size_t n, size_t size)
{
	return off + n <= size - 8;
}

/* ---------------------------------------------------------- TB_EVENT */

#define TB_PROTO(...) (__VA_ARGS__)
#define TB_FIELDS(...) (__VA_ARGS__)
#define TB_PRINTK(...) TB__XSTR(__VA_ARGS__)

#define TB_EVENT(sys, name, proto, fields, printk)                                            \
	TB__EVENT_DEFINE(sys, name, tb_record_##sys##_##name, tb_event_##sys##_##name, fields, \
			 printk)                                                               \
	TB__EVENT_EMIT(sys, name, tb_record_##sys##_##name, tb_event_##sys##_##name, proto, fields)

#define TB__EVENT_DEFINE(sys, name, rec, ev, fields, printk)                                     \
	struct rec {                                                                             \
		struct tb_event_common common;                                                  \
		TB__EACH_LIST(TB__DECL, rec, fields)                                             \
	};                                                                                       \
	TB__EACH_LIST(TB__CHECK, sys:name, fields)                                               \
	_Static_assert(sizeof(struct rec) <= TB_EVENT_MAX,                                       \
		       "tracebuf: the fixed fields of " #sys ":" #name " exceed TB_EVENT_MAX");  \
	static const struct tb_event_field tb__fields_##rec[] = {                                \
		TB__EACH_LIST(TB__DESC, rec, fields){0, 0, 0, 0, 0, 0, 0}};                     \
	__attribute__((weak, aligned(32))) TB__HIDDEN TB__PROBES_SECTION struct tb_event_desc ev = { \
		0, 0, TB_EVENT_ABI, sizeof(struct rec), {0}, #sys, #name, tb__fields_##rec,          \
		printk, __FILE__, __LINE__, 0};                                                     \
	__attribute__((section("tb_events"), used)) static struct tb_event_desc *const tb__entry_##rec = &ev;

/*
 * The emitters.  Events with fixed fields only build a struct on the stack,
 * in the caller (the inline emitter: the record's stores are the caller's
 * own); the others size their dynamic data first, then build the record in
 * a stack array, out of line (a call costs less than the stack adjustments
 * a variable-size record would add to every caller's path).  tb_trace()
 * keeps the enabled test in the caller and picks the emitter.
 */
/* Records with dynamic data up to this size are built in a fixed, cache-line aligned buffer. */
#define TB__SMALL_RECORD 128u

#define TB__EVENT_EMIT(sys, name, rec, ev, proto, fields)                                       \
	enum { tb_dynamic_##sys##_##name = 0 TB__EACH_LIST(TB__DYN, rec, fields) };             \
	static inline bool tb_trace_##sys##_##name##_enabled(void)                              \
	{                                                                                       \
		return __atomic_load_n(&ev.gate.word, __ATOMIC_RELAXED) != 0;                    \
	}                                                                                       \
	__attribute__((always_inline, unused)) static inline void tb_trace_inline_##sys##_##name proto \
	{                                                                                       \
		TB__EVENT_BODY(sys, name, rec, ev, fields)                                      \
	}                                                                                       \
	__attribute__((noinline, unused)) static void tb_trace_##sys##_##name proto             \
	{                                                                                       \
		TB__EVENT_BODY(sys, name, rec, ev, fields)                                      \
	}

#define TB__EVENT_BODY(sys, name, rec, ev, fields)                                              \
	/* relaxed: the kernel's count publishes nothing; the probe reads only the arguments */  \
	if (TB__UNLIKELY(__atomic_load_n(&ev.gate.part.usdt, __ATOMIC_RELAXED)))                  \
		TB__USDT(sys, name, ev, offsetof(struct tb_event_desc, gate)                     \
			 TB__EACH_LIST(TB__UVAL, rec, fields));                                 \
	/* acquire: the ring was set up before the pointer was published */                    \
	struct tb_ring *tb__r = __atomic_load_n(&ev.ring, __ATOMIC_ACQUIRE);                     \
	/* relaxed: a hint; tb_event_hist_hit's acquire load of the table is what publishes it */      \
	uint8_t tb__hist = __atomic_load_n(&ev.gate.part.hist, __ATOMIC_RELAXED);                 \
	size_t tb__dyn = 0;                                                                     \
	if (TB__UNLIKELY(tb__r == NULL) && TB__UNLIKELY(tb__hist == 0))                          \
		return;                                                                         \
	TB__EACH_LIST(TB__PREP, rec, fields)                                                    \
	if (!tb_dynamic_##sys##_##name) {                                                       \
		struct rec tb__rec;                                                             \
		TB__EVENT_FILL(rec, ev, fields, &tb__rec)                                       \
		TB__EVENT_TAIL(rec, fields, &tb__rec)                                           \
		tb_write(tb__r, &tb__rec, sizeof(tb__rec));                                     \
	} else if (sizeof(struct rec) + tb__dyn <= TB__SMALL_RECORD) {                           \
		unsigned char tb__small[TB__SMALL_RECORD] __attribute__((aligned(64)));          \
		TB__EVENT_FILL(rec, ev, fields, tb__small)                                      \
		tb_write(tb__r, tb__small, (uint32_t)(sizeof(struct rec) + tb__dyn));            \
	} else if (TB__UNLIKELY(sizeof(struct rec) + tb__dyn > TB_EVENT_MAX)) {                 \
		if (tb__r) /* NULL: only a hist is attached, and it sees no record either */     \
			tb_event_refuse_too_big(tb__r);                                         \
	} else {                                                                                \
		unsigned char tb__vla[sizeof(struct rec) + tb__dyn] __attribute__((aligned(8)));  \
		TB__EVENT_FILL(rec, ev, fields, tb__vla)                                        \
		tb_write(tb__r, tb__vla, (uint32_t)sizeof(tb__vla));                            \
	}

#define TB__EVENT_TAIL(rec, fields, at)                                                        \
	{                                                                                      \
		struct rec *tb__e = (at);                                                      \
		uint64_t tb__tail = tb__tail_part(tb__bits(&tb__e->common, 8), 0, 8, sizeof(struct rec)); \
		bool tb__tail_known = true;                                                    \
		TB__EACH_LIST(TB__TAIL, rec, fields)                                           \
		if (tb__tail_known)                                                            \
			memcpy((unsigned char *)tb__e + sizeof(struct rec) - 8, &tb__tail, 8);  \
	}

#define TB__EVENT_FILL(rec, ev, fields, at)                                 \
	{                                                                   \
		unsigned char *tb__buf = (unsigned char *)(void *)(at);     \
		struct rec *tb__e = (struct rec *)(void *)tb__buf;          \
		uint32_t tb__off = (uint32_t)sizeof(struct rec);            \
		uint64_t tb__common = tb__common_word(ev.id);               \
		memcpy(&tb__e->common, &tb__common, sizeof(tb__common));    \
		TB__EACH_LIST(TB__STORE, rec, fields)                       \
		if (TB__UNLIKELY(tb__hist != 0) &&                          \
		    tb__hist_only(&ev, tb__r, tb__hist, tb__buf, tb__off))  \
			return;                                             \
		if (tb__event_filtered(&ev, tb__r, tb__buf, tb__off))       \
			return;                                             \
	}

/*
 * Fire an event: tb_trace(app, request, 7, "/index", 512).  Disabled, this
 * is one load and a branch, and the arguments are not evaluated.
 */
#define tb_trace(sys, name, ...)                                                               \
	(__builtin_expect(__atomic_load_n(&tb_event_##sys##_##name.gate.word, __ATOMIC_RELAXED) != 0, \
			  0)                                                                   \
		 ? (tb_dynamic_##sys##_##name ? tb_trace_##sys##_##name(__VA_ARGS__)           \
					      : tb_trace_inline_##sys##_##name(__VA_ARGS__))   \
		 : (void)0)

/*
 * TB_DEFINE_ENUM(NAME): replace NAME by its value in the print fmts of this
 * object's events (at registration), like the kernel's TRACE_DEFINE_ENUM.
 */
#define TB_DEFINE_ENUM(e)                                                             \
	static const struct tb_enum_value tb__enum_##e = {#e, (long long)(e)};         \
	__attribute__((section("tb_enums"), used)) static const struct tb_enum_value \
		*const tb__enum_entry_##e = &tb__enum_##e;

/* ---------------------------------------------------------- tb_printf */

/* How the inline packing treats each argument (after the usual promotions). */
#define TB__ARG_CLASS(x)                                                                      \
	_Generic((x) + 0, char *: 's', const char *: 's', float: 'f', double: 'f',            \
		 long double: 'f', int: 'i', unsigned int: 'i', long: 'l', unsigned long: 'l', \
		 long long: 'l', unsigned long long: 'l', default: 'p')
#define TB__PF_CLASS(c, i, x) TB__ARG_CLASS(x),
#define TB__PF_CHECK(c, i, x)                                                                 \
	_Static_assert(TB__ARG_CLASS(x) != 'f', "tracebuf: tb_printf cannot record floating-point " \
		       "arguments (the kernel's printf has no %f)");
#define TB__PF_TEMP(c, i, x)                         \
	__typeof__((x) + 0) tb__arg##i = (x);         \
	const char *tb__str##i = tb__pf_string(TB__ARG_CLASS(x), &tb__arg##i); \
	size_t tb__len##i = tb__str##i ? tb__capped(strlen(tb__str##i) + 1) : 0;
#define TB__PF_SIZE(c, i, x) tb__n = tb__pf_size(tb__n, TB__ARG_CLASS(x), sizeof(tb__arg##i), tb__len##i);
#define TB__PF_PUT(c, i, x) \
	tb__at = tb__pf_put(tb__buf, tb__at, TB__ARG_CLASS(x), &tb__arg##i, sizeof(tb__arg##i), tb__str##i, tb__len##i);
#define TB__PF_VALUE(c, i, x) (uint64_t)tb__arg##i,
#define TB__PF_UVAL(c, i, x) , tb__arg##i
#define TB__PF_IS_STRING(c, i, x) +(TB__ARG_CLASS(x) == 's')
/* Bytes a number or pointer takes (all 4 or 8, so never a gap between them). */
#define TB__PF_FIXED(c, i, x) +(TB__ARG_CLASS(x) == 's' ? 0 : (int)sizeof((x) + 0))

/* bprint's fixed part: common fields, ip, fmt (both the site's key here). */
#define TB__BPRINT_HEAD 24u

/*
 * Pack the arguments the way the site's format wants them (when the inline
 * packing does not match it, e.g. %c or %hd) and write the record.  Each
 * value is the argument converted to 64 bits (a pointer for strings).
 */
void tb_printf_slow(struct tb_ring *ring, const struct tb_printf_site *site, const uint64_t *values);

/* %s arguments: NULL and other pointers into the first page, as the kernel records them. */
static inline const char *tb__pf_string(char cls, const void *arg)
{
	const char *s;

	if (cls != 's')
		return NULL;
	memcpy(&s, arg, sizeof(s));
	if (!s)
		return "(null)";
	return (uintptr_t)s < 4096 ? "(efault)" : s;
}

static inline uint32_t tb__pf_size(uint32_t n, char cls, size_t size, size_t len)
{
	if (cls == 's')
		return n + (uint32_t)len;
	return ((n + 3) & ~3u) + (uint32_t)size;
}

/* Store one argument at n (numbers 4-aligned, the gap zeroed); returns the end. */
static inline uint32_t tb__pf_put(unsigned char *buf, uint32_t n, char cls, const void *arg,
				  size_t size, const char *str, size_t len)
{
	uint32_t at;

	if (cls == 's') {
		tb__copy(buf + n, (const unsigned char *)str, len - 1);
		buf[n + len - 1] = 0;
		return n + (uint32_t)len;
	}
	at = (n + 3) & ~3u;
	while (n < at)
		buf[n++] = 0;
	memcpy(buf + at, arg, size);
	return at + (uint32_t)size;
}

static inline __attribute__((format(printf, 1, 2))) void tb__printf_check(const char *fmt, ...)
{
	(void)fmt;
}

#define tb_printf(fmt, ...) TB__PRINTF(fmt, ##__VA_ARGS__)
#define TB__PRINTF(fmt, ...)                                                                       \
	do {                                                                                       \
		static struct tb_printf_site tb__site = {                                          \
			0, 0, 0, TB__NARGS1(_, ##__VA_ARGS__), TB_EVENT_ABI,                       \
			{TB__EACH(TB__PF_CLASS, _, ##__VA_ARGS__) 0}, {0}, fmt, __func__, __FILE__, \
			__LINE__, &tb__printf_gate};                                               \
		__attribute__((section("tb_printf"), used)) static struct tb_printf_site          \
			*const tb__site_entry = &tb__site;                                         \
		TB__EACH(TB__PF_CHECK, _, ##__VA_ARGS__)                                           \
		if (0)                                                                             \
			tb__printf_check(fmt, ##__VA_ARGS__);                                      \
		/* relaxed: the kernel's count publishes nothing, the ring's own load does */     \
		union tb_event_gate tb__gate = {__atomic_load_n(&tb__printf_gate.word, __ATOMIC_RELAXED)}; \
		if (__builtin_expect(tb__gate.word != 0, 0)) {                                     \
			TB__EACH(TB__PF_TEMP, _, ##__VA_ARGS__)                                    \
			if (TB__UNLIKELY(tb__gate.part.usdt != 0))                                  \
				TB__USDT(ftrace, bprint, tb__printf_gate, 0,                       \
					 (const char *)(fmt) TB__EACH(TB__PF_UVAL, _, ##__VA_ARGS__));    \
			/* acquire: pairs with the registry's release store of the ring */        \
			struct tb_ring *tb__r = __atomic_load_n(&tb__site.ring, __ATOMIC_ACQUIRE); \
			if (tb__r != NULL) {                                                       \
				TB__PRINTF_EMIT(fmt, ##__VA_ARGS__)                                \
			}                                                                          \
		}                                                                                  \
	} while (0)

/*
 * A format whose arguments are all numbers has a record size the compiler
 * knows; with strings it is counted first.
 */
#define TB__PRINTF_EMIT(fmt, ...)                                                                     \
	enum {                                                                                     \
		tb__strings = 0 TB__EACH(TB__PF_IS_STRING, _, ##__VA_ARGS__),                      \
		tb__fixed = TB__BPRINT_HEAD TB__EACH(TB__PF_FIXED, _, ##__VA_ARGS__)               \
	};                                                                                         \
	if (TB__UNLIKELY(!tb__site.fast)) {                                                        \
		const uint64_t tb__values[] = {TB__EACH(TB__PF_VALUE, _, ##__VA_ARGS__) 0};        \
		tb_printf_slow(tb__r, &tb__site, tb__values);                                      \
	} else if (!tb__strings) {                                                                 \
		unsigned char tb__buf[tb__fixed] __attribute__((aligned(8)));                      \
		TB__PRINTF_FILL(tb__fixed, ##__VA_ARGS__)                                          \
		TB__PRINTF_TAIL(tb__fixed, ##__VA_ARGS__)                                          \
		tb_write(tb__r, tb__buf, tb__fixed);                                               \
	} else {                                                                                   \
		uint32_t tb__n = TB__BPRINT_HEAD;                                                  \
		TB__EACH(TB__PF_SIZE, _, ##__VA_ARGS__)                                            \
		uint32_t tb__size = (tb__n + 3) & ~3u;                                             \
		if (TB__UNLIKELY(tb__size > TB_EVENT_MAX)) {                                       \
			tb_event_refuse_too_big(tb__r);                                            \
		} else {                                                                           \
			unsigned char tb__buf[tb__size] __attribute__((aligned(8)));               \
			TB__PRINTF_FILL(tb__size, ##__VA_ARGS__)                                   \
			tb_write(tb__r, tb__buf, tb__size);                                        \
		}                                                                                  \
	}

/* The fixed record's last 8 bytes, from the head words and the arguments (all 4 or 8 bytes). */
#define TB__PF_TAIL(c, i, x)                                                                   \
	tb__tail |= tb__tail_part(tb__bits(&tb__arg##i, sizeof(tb__arg##i)), tb__at, sizeof(tb__arg##i), \
				  tb__fixed);                                                        \
	tb__at += (uint32_t)sizeof(tb__arg##i);
#define TB__PRINTF_TAIL(size, ...)                                                                \
	{                                                                                         \
		uint32_t tb__at = TB__BPRINT_HEAD;                                                \
		uint64_t tb__tail = tb__tail_part(tb__common_word(TB_BPRINT_ID), 0, 8, size) |    \
				    tb__tail_part(tb__site.key, 8, 8, size) |                     \
				    tb__tail_part(tb__site.key, 16, 8, size);                     \
		TB__EACH(TB__PF_TAIL, _, ##__VA_ARGS__)                                           \
		(void)tb__at;                                                                     \
		memcpy(tb__buf + (size) - 8, &tb__tail, 8);                                       \
	}

#define TB__PRINTF_FILL(size, ...)                                                      \
	{                                                                               \
		uint64_t tb__head[3] = {tb__common_word(TB_BPRINT_ID), tb__site.key,    \
					tb__site.key};                                  \
		uint32_t tb__at = TB__BPRINT_HEAD;                                      \
		memcpy(tb__buf, tb__head, sizeof(tb__head));                            \
		TB__EACH(TB__PF_PUT, _, ##__VA_ARGS__)                                  \
		while (tb__at < (size))                                                 \
			tb__buf[tb__at++] = 0;                                          \
	}

/* ------------------------------------------------------------ markers */

/*
 * ftrace:print, as the kernel's trace_marker writes it: text[0..len), a
 * newline added unless it ends with one, cut to fit one event.  Returns the
 * bytes of text recorded, -EAGAIN when the event is disabled or the ring is
 * not recording, or the ring's refusal (-ENOSPC, -EBUSY).
 */
int tb_marker_write(const char *text, size_t len);
/* tb_marker_write(text, strlen(text)). */
int tb_marker_puts(const char *text);

/*
 * ftrace:raw_data, as trace_marker_raw writes it: id, then data[0..len).
 * 0, -EAGAIN (disabled, not recording), -E2BIG (too big: refused and
 * counted in too_big, like the kernel's EINVAL), or the ring's refusal.
 */
int tb_marker_raw_write(uint32_t id, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
