// SPDX-License-Identifier: MIT
/*
 * kernel_events.c - the text of the events the kernel prints with its own
 * code (see kernel_events.h for the list and where each comes from).
 *
 * Each printer reads its fields where the format file says they are and
 * checks each against the record's length, since it runs before (and
 * instead of) the generic record check.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "kernel_events.h"
#include "kvsprintf.h"
#include "tracebuf/capture.h"
#include "decode/schema_kernel.h"

#define SYSCALL_ENTER_PREFIX "sys_enter_"
#define SYSCALL_EXIT_PREFIX "sys_exit_"
#define SYSCALL_ARG_SIZE 8          /* every argument is stored as an unsigned long */
#define FTRACE_REGS_MAX_ARGS 6      /* function records longer than this carry arguments */
#define USER_STACK_ENTRIES 8        /* FTRACE_STACK_ENTRIES */
#define STACK_END UINT64_MAX        /* ULONG_MAX ends a kernel stack early */
#define TRAMPOLINE_MARKER 0x7fffffffull /* FTRACE_TRAMPOLINE_MARKER: an ftrace trampoline */
#define KRETPROBE_TRAMPOLINE "__kretprobe_trampoline"

/*
 * Without kernel symbols the ip of a print record cannot be named.  In an
 * instance only trace_marker writes print records (trace_printk goes to the
 * top level unless the instance is its trace_printk_dest), and the kernel
 * names those after the function that wrote them.
 */
#define MARKER_WRITER "tracing_mark_write"

/* ------------------------------------------------------------- helpers */

static void put_fmt(struct tb_strbuf *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_fmt(struct tb_strbuf *out, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sb_put(out, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* A little-endian unsigned value of size bytes at off, if the record holds it. */
static inline bool read_at(const struct tb_kernel_record *r, uint32_t off, uint32_t size, uint64_t *v)
{
	if (size == 0 || size > 8 || off > r->len || size > r->len - off)
		return false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (size == 8) { /* an ip, an address: most reads, one load */
		memcpy(v, r->data + off, 8);
		return true;
	}
#endif
	*v = 0;
	for (uint32_t i = size; i-- > 0;)
		*v = *v << 8 | r->data[off + i];
	return true;
}

#define FIELD_MEMO_BITS 6

/*
 * Where this thread last found a field called name (a literal of the
 * printers: its pointer is the key) in format f: direct-mapped by both
 * pointers, so that the few fields (ip, buf, ...) of each format a report
 * prints are each one probe away - a search of every slot cost ~50
 * instructions a look-up, two look-ups a marker record.
 */
static _Thread_local struct field_memo {
	const struct tb_format *f;
	const char *name;
	size_t index;
} field_memo[1u << FIELD_MEMO_BITS];

static inline struct field_memo *field_memo_slot(const struct tb_format *f, const char *name)
{
	uint64_t key = ((uintptr_t)f >> 4) ^ (uintptr_t)name;

	return &field_memo[(key * 0x9e3779b97f4a7c15ull) >> (64 - FIELD_MEMO_BITS)];
}

/* field_named() when its slot holds another field: found by name, and kept. */
static __attribute__((noinline)) const struct tb_schema_field *field_found(const struct tb_format *f,
									   const char *name, struct field_memo *m)
{
	const struct tb_schema_field *fl = tb_format_field(f, name);

	if (fl)
		*m = (struct field_memo){f, name, (size_t)(fl - f->fields)};
	return fl;
}

/*
 * tb_format_field(f, name), from the memo when it holds the answer.  The
 * kept index is checked against f's own field of that index by name, so a
 * slot left by a format since freed (another at its address) is only a
 * miss.  Inlined with its callers, name is a literal there: the check is a
 * compare of its few bytes, the NUL included, and the slot's place a constant
 * but for f (a byte loop and the calls around it were ~70 instructions).
 */
static inline __attribute__((always_inline)) const struct tb_schema_field *field_named(const struct tb_format *f,
										      const char *name)
{
	struct field_memo *m = field_memo_slot(f, name);
	size_t i = m->index;

	if (m->f == f && m->name == name && i < f->nfields && !memcmp(f->fields[i].name, name, strlen(name) + 1))
		return &f->fields[i];
	return field_found(f, name, m);
}

/* field_value()'s reasons, out of line: the fast path then saves no registers. */
static __attribute__((noinline)) void field_value_fails(const struct tb_format *f, const struct tb_kernel_record *r,
						       const char *name, const struct tb_schema_field *fl,
						       struct tb_problem *err)
{
	if (!fl || fl->kind != TB_SCHEMA_FIELD_STATIC || fl->size == 0 || fl->size > 8)
		diag_fail(err, 0, "event %s has no fixed field %s of 1..8 bytes", f->name, name);
	else
		diag_fail(err, fl->offset, "field %s (bytes %u..%u) lies outside the %u-byte record", name,
			  fl->offset, fl->offset + fl->size, r->len);
}

/* The fixed field called name: its value, or a reason in err. */
static inline __attribute__((always_inline)) int field_value(const struct tb_format *f,
							     const struct tb_kernel_record *r, const char *name,
							     uint64_t *v, struct tb_problem *err)
{
	const struct tb_schema_field *fl = field_named(f, name);

	if (!fl || fl->kind != TB_SCHEMA_FIELD_STATIC || fl->size == 0 || fl->size > 8 ||
	    !read_at(r, fl->offset, fl->size, v)) {
		field_value_fails(f, r, name, fl, err);
		return -EINVAL;
	}
	return 0;
}

/* tail_offset()'s reasons, out of line as field_value_fails(). */
static __attribute__((noinline)) void tail_offset_fails(const struct tb_format *f, const struct tb_kernel_record *r,
						       const char *name, const struct tb_schema_field *fl,
						       struct tb_problem *err)
{
	if (!fl || fl->kind != TB_SCHEMA_FIELD_STATIC)
		diag_fail(err, 0, "event %s has no field %s", f->name, name);
	else
		diag_fail(err, fl->offset, "field %s starts after the end of the %u-byte record", name, r->len);
}

/* The offset of a field that runs to the end of the record (char buf[], u32 buf[]). */
static inline __attribute__((always_inline)) int tail_offset(const struct tb_format *f,
							     const struct tb_kernel_record *r, const char *name,
							     uint32_t *off, struct tb_problem *err)
{
	const struct tb_schema_field *fl = field_named(f, name);

	if (!fl || fl->kind != TB_SCHEMA_FIELD_STATIC || fl->offset > r->len) {
		tail_offset_fails(f, r, name, fl, err);
		return -EINVAL;
	}
	*off = fl->offset;
	return 0;
}

/*
 * An address as the kernel's seq_print_ip_sym() writes it: "0" for 0; the
 * symbol's name alone (no module), or with sym-offset sprint_symbol()'s
 * "name+0xoff/0xsize [module]"; "0x%08lx" when no symbol contains it
 * ("0x%lx" with sym-offset, sprint_symbol's own); with sym-addr then
 * " <%016lx>" of the address.
 */
static void put_ip(struct tb_strbuf *out, const struct tb_kernel_env *env, uint64_t ip, unsigned topts)
{
	const struct tb_print_env *pe = env ? env->print : NULL;
	uint64_t start = 0;
	const char *name;

	if (ip == 0) {
		sb_putc(out, '0');
		return;
	}
	name = pe && pe->symbol ? kv_symbol_at(pe, ip, &start, NULL, NULL) : NULL;
	if (name && start == ip && !strcmp(name, KRETPROBE_TRAMPOLINE))
		sb_puts(out, "[unknown/kretprobe'd]");
	else if (topts & TB_TOPT_SYM_OFFSET)
		kv_symbol(out, ip, true, false, pe);
	else if (name && *name)
		sb_puts(out, name);
	else
		put_fmt(out, "0x%08llx", (unsigned long long)ip);
	if (topts & TB_TOPT_SYM_ADDR)
		put_fmt(out, " <%016llx>", (unsigned long long)ip);
}

/* "SYMBOL: " before a printk's text, nothing under printk-msg-only (the *_msg_only printers). */
static void put_writer(struct tb_strbuf *out, const struct tb_kernel_env *env, uint64_t ip, unsigned topts)
{
	if (topts & TB_TOPT_PRINTK_MSG_ONLY)
		return;
	put_ip(out, env, ip, topts);
	sb_puts(out, ": ");
}

/* prefix, then v in decimal (hex false) or as "0x" and lower-case hex digits: printf's %llu / 0x%llx without stdio. */
static void put_number(struct tb_strbuf *out, const char *prefix, size_t prefix_len, uint64_t v, bool hex)
{
	char *p = sb_room(out, prefix_len + 2 + 20);

	if (!p)
		return;
	memcpy(p, prefix, prefix_len);
	p += prefix_len;
	if (hex) {
		*p++ = '0';
		*p++ = 'x';
		p = kv_put_hex(p, v, kv_hex_len(v), false);
	} else {
		p = kv_put_dec(p, v, kv_dec_len(v));
	}
	sb_added(out, (size_t)(p - (out->buf + out->len)));
}

/* -ENOTSUP with the reason in err: the caller prints the record another way. */
static int not_supported(struct tb_problem *err, const char *reason, uint64_t addr)
{
	diag_fail(err, 0, reason, (unsigned long long)addr);
	return -ENOTSUP;
}

static bool have_symbols(const struct tb_kernel_env *env)
{
	return env && env->print && env->print->symbol;
}

/* ------------------------------------------------------------ syscalls */

/* "sys_" and the syscall's name, from the event name after prefix. */
static void put_syscall_name(struct tb_strbuf *out, const struct tb_format *f, const char *prefix)
{
	sb_puts(out, "sys_");
	sb_puts(out, f->name + strlen(prefix));
}

/* Index of the first argument field (the one after __syscall_nr); -1 if none. */
static ptrdiff_t first_syscall_arg(const struct tb_format *f)
{
	const struct tb_schema_field *nr = field_named(f, "__syscall_nr");

	return nr ? nr - f->fields + 1 : -1;
}

/*
 * Since 6.19 the kernel may copy the user memory one argument points to
 * into the record: a __data_loc field "__ARG_val" after the arguments,
 * printed after the argument's value as a quoted string, or (write,
 * pwrite64, mq_timedsend: the print fmt uses __print_dynamic_array) as
 * bytes in hex, with ", ..." when fewer were copied than the next
 * argument (the count) asked for.
 */
static int put_user_data(struct tb_strbuf *out, const struct tb_format *f,
			 const struct tb_kernel_record *r, const struct tb_schema_field *arg,
			 uint64_t next_arg, bool has_next, struct tb_problem *err)
{
	char name[TB_NAME_MAX + 8], array_call[TB_NAME_MAX + 40];
	const struct tb_schema_field *fl;
	uint64_t word;
	uint32_t start, len;

	snprintf(name, sizeof(name), "__%s_val", arg->name);
	fl = tb_format_field(f, name);
	if (!fl || fl->kind != TB_SCHEMA_FIELD_DATA_LOC)
		return 0;
	if (!read_at(r, fl->offset, 4, &word))
		return diag_fail(err, fl->offset, "field %s lies outside the record", name);
	start = (uint32_t)(word & 0xffff);
	len = (uint32_t)(word >> 16);
	if (start > r->len || len > r->len - start)
		return diag_fail(err, fl->offset, "field %s points to bytes %u..%u of a %u-byte "
				 "record", name, start, start + len, r->len);
	snprintf(array_call, sizeof(array_call), "__print_dynamic_array(%s", name);
	if (!strstr(f->print_fmt ? f->print_fmt : "", array_call)) {
		const char *s = (const char *)r->data + start;
		sb_puts(out, " \"");
		sb_put(out, s, strnlen(s, len));
		sb_putc(out, '"');
		return 0;
	}
	sb_puts(out, " (");
	for (uint32_t i = 0; i < len; i++)
		put_fmt(out, i ? ":%02x" : "%02x", r->data[start + i]);
	if (has_next && len < next_arg)
		sb_puts(out, ", ...");
	sb_putc(out, ')');
	return 0;
}

/*
 * print_syscall_enter: "sys_NAME(arg: v, ...)"; values below 10 in decimal,
 * others in hex; under verbose each argument's type before its name.
 */
static int print_syscall_enter(const struct tb_format *f, const struct tb_kernel_record *r,
			       const struct tb_kernel_env *env, struct tb_strbuf *out,
			       struct tb_problem *err)
{
	ptrdiff_t first = first_syscall_arg(f);
	size_t nargs = 0;
	uint64_t v[16];
	/* the user data fields come after the arguments: without a __data_loc last, none to look for */
	bool user_data = f->nfields && f->fields[f->nfields - 1].kind == TB_SCHEMA_FIELD_DATA_LOC;

	(void)env;
	if (first < 0)
		return diag_fail(err, 0, "syscall event %s has no __syscall_nr field", f->name);
	for (size_t i = (size_t)first; i < f->nfields && f->fields[i].kind == TB_SCHEMA_FIELD_STATIC; i++) {
		const struct tb_schema_field *a = &f->fields[i];
		if (a->size != SYSCALL_ARG_SIZE || nargs == 16)
			return diag_fail(err, a->offset, "syscall argument %s is not %d bytes", a->name,
					 SYSCALL_ARG_SIZE);
		if (!read_at(r, a->offset, a->size, &v[nargs++]))
			return diag_fail(err, a->offset, "syscall argument %s lies outside the %u-byte "
					 "record", a->name, r->len);
	}
	put_syscall_name(out, f, SYSCALL_ENTER_PREFIX);
	sb_putc(out, '(');
	for (size_t i = 0; i < nargs; i++) {
		const struct tb_schema_field *a = &f->fields[(size_t)first + i];
		if (i)
			sb_puts(out, ", ");
		if (r->topts & TB_TOPT_VERBOSE) { /* "%s " of the argument's type */
			sb_puts(out, a->type);
			sb_putc(out, ' ');
		}
		sb_puts(out, a->name);
		put_number(out, ": ", 2, v[i], v[i] >= 10);
		if (user_data && put_user_data(out, f, r, a, i + 1 < nargs ? v[i + 1] : 0, i + 1 < nargs, err) < 0)
			return -EINVAL;
	}
	sb_puts(out, ")\n");
	return 0;
}

/* print_syscall_exit: "sys_NAME -> 0xRET", the return value's 64 bits in hex. */
static int print_syscall_exit(const struct tb_format *f, const struct tb_kernel_record *r,
			      const struct tb_kernel_env *env, struct tb_strbuf *out,
			      struct tb_problem *err)
{
	uint64_t ret;

	(void)env;
	if (field_value(f, r, "ret", &ret, err) < 0)
		return -EINVAL;
	put_syscall_name(out, f, SYSCALL_EXIT_PREFIX);
	put_number(out, " -> ", 4, ret, true);
	sb_putc(out, '\n');
	return 0;
}

/* ------------------------------------------------------- ftrace events */

/*
 * trace_marker text: "SYMBOL: text", printed with %s: up to the first NUL
 * (the record holds the written bytes, then the newline the kernel added
 * if the text had none, then a NUL), and no newline of its own.
 */
static int print_marker(const struct tb_format *f, const struct tb_kernel_record *r,
			const struct tb_kernel_env *env, struct tb_strbuf *out, struct tb_problem *err)
{
	uint64_t ip;
	uint32_t buf;
	const char *text;

	if (field_value(f, r, "ip", &ip, err) < 0 || tail_offset(f, r, "buf", &buf, err) < 0)
		return -EINVAL;
	if (r->topts & TB_TOPT_PRINTK_MSG_ONLY)
		; /* trace_print_printk_msg_only: the text alone */
	else if (have_symbols(env))
		put_ip(out, env, ip, r->topts);
	else
		sb_puts(out, MARKER_WRITER);
	if (!(r->topts & TB_TOPT_PRINTK_MSG_ONLY))
		sb_puts(out, ": ");
	text = (const char *)r->data + buf;
	sb_put(out, text, strnlen(text, r->len - buf));
	return 0;
}

/* trace_puts(): "SYMBOL: string", the string a kernel address the record holds. */
static int print_bputs(const struct tb_format *f, const struct tb_kernel_record *r,
		       const struct tb_kernel_env *env, struct tb_strbuf *out, struct tb_problem *err)
{
	const struct tb_print_env *pe = env ? env->print : NULL;
	const char *text;
	uint64_t ip, str;

	if (field_value(f, r, "ip", &ip, err) < 0 || field_value(f, r, "str", &str, err) < 0)
		return -EINVAL;
	text = pe && pe->kernel_string ? pe->kernel_string(pe->ctx, str) : NULL;
	if (!text)
		return not_supported(err, "bputs string at 0x%llx is not in printk_formats", str);
	put_writer(out, env, ip, r->topts);
	sb_puts(out, text);
	return 0;
}

/* trace_printk(): "SYMBOL: " and the format applied to the stored arguments (the hook's). */
static int print_bprint(const struct tb_format *f, const struct tb_kernel_record *r,
			const struct tb_kernel_env *env, struct tb_strbuf *out, struct tb_problem *err)
{
	const struct tb_print_env *pe = env ? env->print : NULL;
	const char *fmt;
	uint64_t ip, fmt_addr;
	uint32_t args;

	if (field_value(f, r, "ip", &ip, err) < 0 || field_value(f, r, "fmt", &fmt_addr, err) < 0 ||
	    tail_offset(f, r, "buf", &args, err) < 0)
		return -EINVAL;
	if (!env || !env->bprint)
		return not_supported(err, "no trace_printk formatter (bprint at 0x%llx)", ip);
	fmt = pe && pe->kernel_string ? pe->kernel_string(pe->ctx, fmt_addr) : NULL;
	if (!fmt)
		return not_supported(err, "bprint format at 0x%llx is not in printk_formats", fmt_addr);
	put_writer(out, env, ip, r->topts);
	return env->bprint(env->bprint_ctx, fmt, r->data + args, r->len - args, out);
}

/* trace_marker_raw: "# ID buf:" and every payload byte after the id in hex. */
static int print_raw_data(const struct tb_format *f, const struct tb_kernel_record *r,
			  const struct tb_kernel_env *env, struct tb_strbuf *out,
			  struct tb_problem *err)
{
	static const char hex[] = "0123456789abcdef";
	uint64_t id;
	uint32_t buf;
	char *p;

	(void)env;
	if (field_value(f, r, "id", &id, err) < 0 || tail_offset(f, r, "buf", &buf, err) < 0)
		return -EINVAL;
	put_fmt(out, "# %llx buf:", (unsigned long long)id);
	p = sb_room(out, 3 * (size_t)(r->len - buf) + 1);
	if (!p)
		return 0; /* out of memory: the owner sees out->oom */
	for (uint32_t i = buf; i < r->len; i++) {
		*p++ = ' ';
		*p++ = hex[r->data[i] >> 4];
		*p++ = hex[r->data[i] & 15];
	}
	*p = '\n';
	sb_added(out, 3 * (size_t)(r->len - buf) + 1);
	return 0;
}

/* "func <-parent" of print_fn_trace (no parent when it is 0 or print-parent is off). */
static void put_function(struct tb_strbuf *out, const struct tb_kernel_env *env, uint64_t ip,
			 uint64_t parent, unsigned topts)
{
	put_ip(out, env, ip, topts);
	if (parent && !(topts & TB_TOPT_NO_PRINT_PARENT)) {
		sb_puts(out, " <-");
		put_ip(out, env, parent, topts);
	}
}

/* The function tracer's event. */
static int print_function(const struct tb_format *f, const struct tb_kernel_record *r,
			  const struct tb_kernel_env *env, struct tb_strbuf *out,
			  struct tb_problem *err)
{
	uint64_t ip, parent;
	uint32_t args;

	if (field_value(f, r, "ip", &ip, err) < 0 || field_value(f, r, "parent_ip", &parent, err) < 0)
		return -EINVAL;
	if (tail_offset(f, r, "args", &args, err) == 0 &&
	    r->len - args >= FTRACE_REGS_MAX_ARGS * SYSCALL_ARG_SIZE)
		return not_supported(err, "function arguments (func-args, at 0x%llx) need BTF "
				     "function prototypes, which this printer does not read", ip);
	put_function(out, env, ip, parent, r->topts);
	sb_putc(out, '\n');
	return 0;
}

/* A time as trace_print_time() writes it: " %5lu.%06lu" (microseconds, rounded) or " %12llu". */
static void put_time(struct tb_strbuf *out, uint64_t ts, bool ns_clock)
{
	uint64_t us = (ts + 500) / 1000;

	if (ns_clock)
		put_fmt(out, " %5llu.%06llu", (unsigned long long)(us / 1000000),
			(unsigned long long)(us % 1000000));
	else
		put_fmt(out, " %12llu", (unsigned long long)ts);
}

/* The function tracer's "this call repeated" event (option func-no-repeats). */
static int print_func_repeats(const struct tb_format *f, const struct tb_kernel_record *r,
			      const struct tb_kernel_env *env, struct tb_strbuf *out,
			      struct tb_problem *err)
{
	uint64_t ip, parent, count, top, bottom;

	if (field_value(f, r, "ip", &ip, err) < 0 || field_value(f, r, "parent_ip", &parent, err) < 0 ||
	    field_value(f, r, "count", &count, err) < 0 ||
	    field_value(f, r, "top_delta_ts", &top, err) < 0 ||
	    field_value(f, r, "bottom_delta_ts", &bottom, err) < 0)
		return -EINVAL;
	put_function(out, env, ip, parent, r->topts);
	put_fmt(out, " (repeats: %llu, last_ts:", (unsigned long long)count);
	put_time(out, r->ts - (top << 32 | bottom), r->ns_clock);
	sb_puts(out, ")\n");
	return 0;
}

/* options/stacktrace: "<stack trace>", then " => func" per caller up to ULONG_MAX or the record's end. */
static int print_kernel_stack(const struct tb_format *f, const struct tb_kernel_record *r,
			      const struct tb_kernel_env *env, struct tb_strbuf *out,
			      struct tb_problem *err)
{
	uint32_t off;
	uint64_t ip;

	if (tail_offset(f, r, "caller", &off, err) < 0)
		return -EINVAL;
	sb_puts(out, "<stack trace>\n");
	for (; read_at(r, off, 8, &ip) && ip != STACK_END; off += 8) {
		sb_puts(out, " => ");
		if (ip == TRAMPOLINE_MARKER) {
			sb_puts(out, "[FTRACE TRAMPOLINE]\n");
			continue;
		}
		put_ip(out, env, ip, r->topts);
		sb_putc(out, '\n');
	}
	return 0;
}

/*
 * One user address as seq_print_user_ip() writes it after " => ": with
 * sym-userobj and the process known, the file mapped at ip (the kernel's
 * find_vma(): the first mapping ending above it) and the offset into the
 * mapping; then " <%016lx>" of the address under sym-addr, or when no file
 * was named (so by default only the address, after a blank).
 */
static void put_user_ip(struct tb_strbuf *out, const struct tb_kernel_env *env, uint32_t tgid,
			uint64_t ip, unsigned topts)
{
	const char *path = NULL;
	uint64_t start = 0;

	if (topts & TB_TOPT_SYM_USEROBJ && env && env->user_vma &&
	    env->user_vma(env->print ? env->print->ctx : NULL, tgid, ip, &start, &path) == 1 && path)
		put_fmt(out, "%s[+0x%llx]", path, (unsigned long long)(ip - start));
	if (topts & TB_TOPT_SYM_ADDR || !path)
		put_fmt(out, " <%016llx>", (unsigned long long)ip);
}

/* options/userstacktrace: "<user stack trace>", then " => " and an address per caller up to the first 0. */
static int print_user_stack(const struct tb_format *f, const struct tb_kernel_record *r,
			    const struct tb_kernel_env *env, struct tb_strbuf *out,
			    struct tb_problem *err)
{
	struct tb_problem no_tgid; /* a format without tgid: no process to look in, as for a gone one */
	uint32_t off, tgid_off;
	uint64_t ip, tgid = 0;

	if (tail_offset(f, r, "caller", &off, err) < 0)
		return -EINVAL;
	if (r->topts & TB_TOPT_SYM_USEROBJ && tail_offset(f, r, "tgid", &tgid_off, &no_tgid) == 0)
		read_at(r, tgid_off, 4, &tgid);
	sb_puts(out, "<user stack trace>\n");
	for (int i = 0; i < USER_STACK_ENTRIES && read_at(r, off, 8, &ip) && ip; i++, off += 8) {
		sb_puts(out, " => ");
		put_user_ip(out, env, (uint32_t)tgid, ip, r->topts);
		sb_putc(out, '\n');
	}
	return 0;
}

/* ---------------------------------------------------------------- lookup */

/* ftrace's own events, by name. */
static const struct ftrace_printer {
	const char *name;
	tb_kernel_printer_fn *fn;
} ftrace_printers[] = {
	{"print", print_marker},
	{"bputs", print_bputs},
	{"bprint", print_bprint},
	{"raw_data", print_raw_data},
	{"function", print_function},
	{"func_repeats", print_func_repeats},
	{"kernel_stack", print_kernel_stack},
	{"user_stack", print_user_stack},
};

tb_kernel_printer_fn *tb_kernel_printer_find(const char *system, const struct tb_format *f)
{
	if (!strcmp(system, "syscalls")) {
		if (!strncmp(f->name, SYSCALL_ENTER_PREFIX, strlen(SYSCALL_ENTER_PREFIX)))
			return print_syscall_enter;
		if (!strncmp(f->name, SYSCALL_EXIT_PREFIX, strlen(SYSCALL_EXIT_PREFIX)))
			return print_syscall_exit;
		return NULL;
	}
	if (strcmp(system, "ftrace"))
		return NULL;
	for (size_t i = 0; i < sizeof(ftrace_printers) / sizeof(ftrace_printers[0]); i++)
		if (!strcmp(f->name, ftrace_printers[i].name))
			return ftrace_printers[i].fn;
	return NULL;
}

void tb_kernel_env_for_schema(struct tb_schema *s, struct tb_print_env *print,
			      struct tb_kernel_env *env)
{
	*print = (struct tb_print_env){
		.ctx = s,
		.symbol = tb_schema_has_symbols(s) ? tb_schema_symbol : NULL,
		.kernel_string = tb_schema_kernel_string,
		.constant = tb_schema_constant,
		.type_size = tb_schema_type_size,
		.memo_id = tb_print_env_number(),
		.symbols_version = tb_schema_symbols_version(s),
	};
	*env = (struct tb_kernel_env){.print = print, .user_vma = tb_schema_user_vma};
}
