// SPDX-License-Identifier: MIT
/*
 * render.c - one event record as one line of the kernel's `trace` text.
 *
 * The context columns (comm-pid, CPU, flags, time) are the kernel's fixed
 * layout and come from the common header every record starts with.  The
 * rest is the event's body, which the event's printer writes (printers.c:
 * the kernel's own code for syscalls and ftrace's events, else the print
 * fmt compiled by pf_compile.c, else libtraceevent).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "fields.h"
#include "kvsprintf.h"
#include "printers.h"
#include "render.h"
#include "decode/schema_internal.h"
#include "strbuf.h"
#include "tracebuf/report.h"

#define COMMON_HEADER_SIZE 8

/* common_flags bits (kernel 6.13+, reference §10.1). */
#define F_IRQS_OFF 0x01
#define F_NEED_RESCHED_LAZY 0x02
#define F_NEED_RESCHED 0x04
#define F_HARDIRQ 0x08
#define F_SOFTIRQ 0x10
#define F_PREEMPT_RESCHED 0x20
#define F_NMI 0x40
#define F_BH_OFF 0x80


struct common_header {
	uint16_t type;
	uint8_t flags;
	uint8_t preempt;
	int32_t pid;
};

static struct common_header read_common(const uint8_t *p)
{
	struct common_header h;

	memcpy(&h.type, p, 2);
	h.flags = p[2];
	h.preempt = p[3];
	memcpy(&h.pid, p + 4, 4);
	return h;
}

/* irqs-off/BH-disabled: D (both), d, b or '.'. */
static char irqs_column(uint8_t f)
{
	if ((f & F_IRQS_OFF) && (f & F_BH_OFF))
		return 'D';
	return f & F_IRQS_OFF ? 'd' : f & F_BH_OFF ? 'b' : '.';
}

/* need-resched: which of NEED_RESCHED, _LAZY and PREEMPT_RESCHED are set. */
static char resched_column(uint8_t f)
{
	static const char by_bits[8] = {
		/* bit 0 NEED_RESCHED, bit 1 LAZY, bit 2 PREEMPT_RESCHED */
		'.', 'n', 'l', 'b', 'p', 'N', 'L', 'B',
	};
	unsigned bits = (f & F_NEED_RESCHED ? 1u : 0u) | (f & F_NEED_RESCHED_LAZY ? 2u : 0u) |
			(f & F_PREEMPT_RESCHED ? 4u : 0u);

	return by_bits[bits];
}

/* hardirq/softirq: Z (NMI in hardirq), z (NMI), H (both), h, s or '.'. */
static char irq_context_column(uint8_t f)
{
	bool nmi = f & F_NMI, hard = f & F_HARDIRQ, soft = f & F_SOFTIRQ;

	if (nmi)
		return hard ? 'Z' : 'z';
	if (hard)
		return soft ? 'H' : 'h';
	return soft ? 's' : '.';
}

/* A depth nibble as one hex digit, '.' for zero. */
static char depth_column(unsigned depth)
{
	return depth ? "0123456789abcdef"[depth & 15] : '.';
}

/* The five irq-info columns (trace_print_lat_fmt). */
static char *put_irq_info(char *p, const struct common_header *h)
{
	*p++ = irqs_column(h->flags);
	*p++ = resched_column(h->flags);
	*p++ = irq_context_column(h->flags);
	*p++ = depth_column(h->preempt & 15u);
	*p++ = depth_column(h->preempt >> 4);
	return p;
}

/* Decimal digits of v, right-aligned in a field of width, zero- or space-padded; returns the end. */
static char *put_decimal(char *p, unsigned long long v, int width, char pad)
{
	unsigned n = kv_dec_len(v);

	for (int i = (int)n; i < width; i++)
		*p++ = pad;
	return kv_put_dec(p, v, n);
}

/* As put_decimal, for a signed v: the sign first, then the zeros, as %0*d writes them (or no padding). */
static char *put_signed(char *p, long long v, int width)
{
	if (v >= 0)
		return put_decimal(p, (unsigned long long)v, width, '0');
	*p++ = '-';
	return put_decimal(p, 0ull - (unsigned long long)v, width - 1, '0');
}

/* The six digits of a microsecond part, 0..999999, as three pairs. */
static char *put_micros(char *p, uint32_t us)
{
	memcpy(p, kv_digit_pairs + 2 * (us / 10000), 2);
	memcpy(p + 2, kv_digit_pairs + 2 * (us / 100 % 100), 2);
	memcpy(p + 4, kv_digit_pairs + 2 * (us % 100), 2);
	return p + 6;
}

/*
 * Longest context prefix apart from the comm: "-PID" (11) " (TGID) " (14)
 * "[CPU] " (16) flags (6) time (26) ": ".
 */
#define CONTEXT_MAX_BEYOND_COMM 80

/* "-%-7d": the pid after a comm, left-aligned in seven columns. */
static char *put_pid(char *p, int32_t pid)
{
	char *pid_start;

	*p++ = '-';
	pid_start = p;
	p = put_signed(p, pid, 0);
	while (p - pid_start < 7)
		*p++ = ' ';
	return p;
}

/* "%16s-%-7d" of a pid the comm table has no name for ("<...>"); returns the end. */
static char *put_comm_pid(char *p, const char *comm, size_t comm_len, int32_t pid)
{
	/* A comm longer than a kernel comm is printed whole, as %16s would. */
	for (size_t i = comm_len; i < 16; i++)
		*p++ = ' ';
	memcpy(p, comm, comm_len);
	p += comm_len;
	return put_pid(p, pid);
}

/* "%5llu" of the seconds: five spaces written, then the digits over their tail. */
static char *put_seconds(char *p, unsigned long long secs)
{
	unsigned n = kv_dec_len(secs);

	memcpy(p, "     ", 5);
	if (n < 5)
		p += 5 - n;
	return kv_put_dec(p, secs, n);
}

/* "(%7d) " of the pid's thread group, "(-------) " when saved_tgids has none (trace_print_context). */
static char *put_tgid(char *p, int32_t tgid)
{
	*p++ = '(';
	if (tgid > 0) {
		p = put_decimal(p, (unsigned long long)tgid, 7, ' ');
	} else {
		memcpy(p, "-------", 7);
		p += 7;
	}
	*p++ = ')';
	*p++ = ' ';
	return p;
}

/*
 * "      bash-23861   [000] d..2.  1721.124010: ", the kernel's printf
 * layout ("%16s-%-7d [%03d] %c%c%c%c%c %5llu.%06llu: ") built by hand:
 * it is on every line, and printf's format parsing was a tenth of a report.
 * The comm-pid column of a named pid comes ready-made from the comm table.
 */
static void print_context(const struct tb_schema *s, const struct common_header *h,
			  const struct tb_render_record *ev, bool ns_clock, unsigned topts,
			  struct tb_strbuf *out)
{
	size_t comm_len, column_len;
	const char *column = schema_comm_column(s, h->pid, &column_len);
	const char *comm = column ? NULL : tb_schema_comm(s, h->pid, &comm_len);
	char *line = sb_room(out, (column ? column_len : comm_len + 16) + CONTEXT_MAX_BEYOND_COMM), *p = line;

	if (!line)
		return;
	if (column) {
		memcpy(p, column, column_len);
		p += column_len;
	} else {
		p = put_comm_pid(p, comm, comm_len, h->pid);
	}
	*p++ = ' ';
	if (topts & TB_TOPT_RECORD_TGID)
		p = put_tgid(p, schema_tgid(s, h->pid));
	*p++ = '[';
	if (ev->cpu >= 0 && ev->cpu < 1000) {
		p[0] = (char)('0' + ev->cpu / 100);
		p[1] = (char)('0' + ev->cpu / 10 % 10);
		p[2] = (char)('0' + ev->cpu % 10);
		p += 3;
	} else {
		p = put_signed(p, ev->cpu, 3);
	}
	*p++ = ']';
	*p++ = ' ';
	if (!(topts & TB_TOPT_NO_IRQ_INFO))
		p = put_irq_info(p, h);
	*p++ = ' ';
	if (ns_clock) {
		unsigned long long us = ((unsigned long long)ev->ts + 500) / 1000;
		p = put_seconds(p, us / 1000000);
		*p++ = '.';
		p = put_micros(p, (uint32_t)(us % 1000000));
	} else {
		p = put_decimal(p, (unsigned long long)ev->ts, 12, ' ');
	}
	*p++ = ':';
	*p++ = ' ';
	sb_added(out, (size_t)(p - line));
}

/*
 * latency-format's context (lat_print_generic, lat_print_timestamp):
 * "%8.8s-%-7d %3d", the irq-info columns, then the time since the buffer's
 * time_start as " %4lldus%c: " (" %4lld: " for a clock of counts).  An
 * instance's time_start is 0 unless its buffer was cleared, so the time is
 * the time stamp.  The mark after "us" says how long until the next record
 * of any CPU; it is written ' ' (the last record's) and set by the report
 * once that record is known (report.c, set_latency_mark).
 */
static void print_lat_context(const struct tb_schema *s, const struct common_header *h,
			      const struct tb_render_record *ev, bool ns_clock, struct tb_strbuf *out)
{
	size_t comm_len;
	const char *comm = tb_schema_comm(s, h->pid, &comm_len);
	char *line = sb_room(out, 8 + CONTEXT_MAX_BEYOND_COMM), *p = line;
	unsigned long long t = ns_clock ? ((unsigned long long)ev->ts + 500) / 1000 : (unsigned long long)ev->ts;

	if (!line)
		return;
	comm_len = comm_len < 8 ? comm_len : 8;
	for (size_t i = comm_len; i < 8; i++)
		*p++ = ' ';
	memcpy(p, comm, comm_len);
	p += comm_len;
	p = put_pid(p, h->pid);
	*p++ = ' ';
	p = ev->cpu >= 0 ? put_decimal(p, (unsigned long long)ev->cpu, 3, ' ') : put_signed(p, ev->cpu, 3);
	p = put_irq_info(p, h);
	*p++ = ' ';
	p = put_decimal(p, t, 4, ' ');
	if (ns_clock) {
		memcpy(p, "us ", 3);
		p += 3;
	}
	*p++ = ':';
	*p++ = ' ';
	sb_added(out, (size_t)(p - line));
}

/*
 * latency-format's context under verbose (trace_print_lat_context,
 * lat_print_timestamp): "%16s %7d %3d %d %08x %08lx " of comm, pid, CPU,
 * the flags byte in decimal, the preempt depth and the record's index,
 * then "[%08llx] %ld.%03ldms (+%ld.%03ldms): " of the time in microseconds
 * (hex, then as milliseconds) and the time to the next record of any CPU
 * ("[%016llx] %lld (+%lld): " for a clock of counts).  The index and the
 * time to the next record are known only in the merged order: they are
 * written TB_VERBOSE_INDEX and TB_VERBOSE_NEXT, which the report replaces
 * (report.c, set_verbose_fields).
 */
static void print_verbose_lat_context(const struct tb_schema *s, const struct common_header *h,
				      const struct tb_render_record *ev, bool ns_clock, struct tb_strbuf *out)
{
	size_t comm_len;
	const char *comm = tb_schema_comm(s, h->pid, &comm_len);
	unsigned long long us = ((unsigned long long)ev->ts + 500) / 1000;
	char text[128];
	int n;

	n = snprintf(text, sizeof(text), "%16.*s %7d %3d %d %08x %c ", (int)comm_len, comm, h->pid, ev->cpu,
		     h->flags, h->preempt & 15u, TB_VERBOSE_INDEX);
	if (ns_clock)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "[%08llx] %llu.%03llums (+%c): ", us, us / 1000,
			      us % 1000, TB_VERBOSE_NEXT);
	else
		n += snprintf(text + n, sizeof(text) - (size_t)n, "[%016llx] %llu (+%c): ",
			      (unsigned long long)ev->ts, (unsigned long long)ev->ts, TB_VERBOSE_NEXT);
	sb_put(out, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/*
 * The body after the context columns; ev is at least a common header long.
 * fields: every field by the kernel's print_fields() (fields.c), the print
 * fmt left aside, for every event the schema has a format of; the other
 * TB_TOPT_* bits go to the kernel's own printers (sym-offset, ...).
 */
static int render_body(struct tb_schema *s, const struct tb_render_record *ev, bool ns_clock, unsigned topts,
		       struct tb_strbuf *out, struct tb_problem *err, enum printer_kind *used)
{
	uint16_t id = read_common(ev->data).type;
	const char *system = "";
	const struct tb_format *f = tb_schema_find_event(s, id, &system);
	char unknown[48];
	int rc;

	if (f && topts & TB_TOPT_FIELDS) {
		*used = PRINTER_KERNEL;
		rc = fields_print(s, f, system, ev, out);
	} else {
		rc = f ? print_event_body(s, f, system, ev, ns_clock, topts, out, err, used) : -ENOENT;
	}

	if (rc == -ENOENT) {
		sb_put(out, unknown, (size_t)snprintf(unknown, sizeof(unknown), "[UNKNOWN EVENT id=%u]\n", id));
		rc = TB_RENDER_UNKNOWN;
	}
	if (rc == 0 && out->oom)
		rc = -ENOMEM;
	return rc;
}

/*
 * trace_marker's print record under raw (trace_print_raw): "# %lx %s", the
 * writer's address and the text up to its NUL or the record's end.
 */
static int raw_marker(const struct tb_format *f, const struct tb_render_record *ev, struct tb_strbuf *out)
{
	const struct tb_schema_field *ip = tb_format_field(f, "ip"), *buf = tb_format_field(f, "buf");
	uint64_t addr = 0;
	char text[24];

	if (!ip || !buf || ip->size != 8 || (uint64_t)ip->offset + 8 > ev->len || buf->offset > ev->len)
		return -ENOTSUP;
	memcpy(&addr, ev->data + ip->offset, 8);
	sb_put(out, text, (size_t)snprintf(text, sizeof(text), "# %llx ", (unsigned long long)addr));
	sb_put(out, ev->data + buf->offset, strnlen((const char *)ev->data + buf->offset, ev->len - buf->offset));
	return out->oom ? -ENOMEM : TB_RENDER_OK;
}

/*
 * The raw and hex layouts (print_raw_fmt, print_hex_fmt in the kernel's
 * trace.c).  Every event defined by TRACE_EVENT - all but ftrace's own -
 * has no raw or hex printer there, so the kernel prints its type
 * ("type: 372"), after the context as "pid cpu ts " (raw) or as the bytes
 * of those three in hex, most significant first (hex, which also ends the
 * line with one more newline).  ftrace's kernel and user stacks have
 * neither printer either, its print a raw one (raw_marker) and no hex one;
 * the others of ftrace's own events (bprint, function, ...) have raw
 * printers, and function a hex one, that tracebuf does not print: -ENOTSUP.
 */
static int render_raw_or_hex(struct tb_schema *s, const struct common_header *h,
			     const struct tb_render_record *ev, unsigned topts, struct tb_strbuf *out)
{
	const char *system = "";
	const struct tb_format *f = tb_schema_find_event(s, h->type, &system);
	bool hex = topts & TB_TOPT_HEX;
	char text[96];
	int n = 0;

	bool ftrace = f && !strcmp(system, "ftrace");
	bool marker = ftrace && !strcmp(f->name, "print");
	/* the stacks have neither printer; print (trace_marker) has a raw one; function has both */
	bool stack = ftrace && (!strcmp(f->name, "kernel_stack") || !strcmp(f->name, "user_stack"));

	if (ftrace && !stack && !(marker && !hex) && !(hex && strcmp(f->name, "function")))
		return -ENOTSUP;
	if (!(topts & TB_TOPT_NO_CONTEXT_INFO))
		n = hex ? snprintf(text, sizeof(text), "%08x %08x %016llx ", (unsigned)h->pid, (unsigned)ev->cpu,
				   (unsigned long long)ev->ts)
			: snprintf(text, sizeof(text), "%d %d %llu ", h->pid, ev->cpu, (unsigned long long)ev->ts);
	if (marker && !hex) {
		sb_put(out, text, (size_t)n);
		return raw_marker(f, ev, out);
	}
	n += snprintf(text + n, sizeof(text) - (size_t)n, "type: %u\n%s", h->type, hex ? "\n" : "");
	sb_put(out, text, (size_t)n);
	return out->oom ? -ENOMEM : f ? TB_RENDER_OK : TB_RENDER_UNKNOWN;
}

/* ftrace's print, bprint or bputs: what printk-msg-only prints as its text alone. */
static bool is_printk(struct tb_schema *s, uint16_t type)
{
	const char *system = "";
	const struct tb_format *f = tb_schema_find_event(s, type, &system);

	return f && !strcmp(system, "ftrace") &&
	       (!strcmp(f->name, "print") || !strcmp(f->name, "bprint") || !strcmp(f->name, "bputs"));
}

int render_event(struct tb_schema *s, const struct tb_render_record *ev,
		 const struct tb_render_opts *opts, struct tb_strbuf *out, struct tb_problem *err,
		 enum printer_kind *used)
{
	size_t start = out->len;
	unsigned topts = opts ? opts->trace_options : 0;
	struct common_header h;
	int rc;

	*used = PRINTER_NONE;
	if (ev->len < COMMON_HEADER_SIZE)
		return diag_fail(err, 0, "record of %u bytes is shorter than the %u-byte common event header",
				 ev->len, COMMON_HEADER_SIZE);
	h = read_common(ev->data);
	if ((topts & (TB_TOPT_PRINTK_MSG_ONLY | TB_TOPT_NO_TRACE_PRINTK)) == TB_TOPT_PRINTK_MSG_ONLY &&
	    is_printk(s, h.type)) {
		/* print_trace_line: before raw, hex and fields, the text alone (the *_msg_only printers) */
		rc = render_body(s, ev, opts && opts->ns_clock, topts & ~TB_TOPT_FIELDS, out, err, used);
		if (rc < 0)
			out->len = start;
		return rc < 0 ? rc : TB_RENDER_OK;
	}
	if (topts & (TB_TOPT_RAW | TB_TOPT_HEX)) {
		rc = render_raw_or_hex(s, &h, ev, topts, out);
		if (rc == -ENOTSUP)
			return diag_fail(err, 0, "ftrace's own event type %u has a %s layout tracebuf does not print",
					 h.type, topts & TB_TOPT_HEX ? "hex" : "raw");
		return rc;
	}
	if ((topts & (TB_TOPT_LATENCY_FORMAT | TB_TOPT_VERBOSE | TB_TOPT_NO_CONTEXT_INFO)) ==
	    (TB_TOPT_LATENCY_FORMAT | TB_TOPT_VERBOSE))
		print_verbose_lat_context(s, &h, ev, opts && opts->ns_clock, out);
	else if (topts & TB_TOPT_LATENCY_FORMAT && !(topts & TB_TOPT_NO_CONTEXT_INFO))
		print_lat_context(s, &h, ev, opts && opts->ns_clock, out);
	else if (!(topts & TB_TOPT_NO_CONTEXT_INFO))
		print_context(s, &h, ev, opts && opts->ns_clock, topts, out);
	rc = render_body(s, ev, opts && opts->ns_clock, topts, out, err, used);
	if (rc < 0)
		out->len = start;
	return rc < 0 ? rc : rc == TB_RENDER_UNKNOWN ? TB_RENDER_UNKNOWN : TB_RENDER_OK;
}

int render_event_body(struct tb_schema *s, const struct tb_render_record *ev, bool ns_clock,
		      struct tb_strbuf *out, struct tb_problem *err, enum printer_kind *used)
{
	size_t start = out->len;
	int rc;

	*used = PRINTER_NONE;
	if (ev->len < COMMON_HEADER_SIZE)
		return diag_fail(err, 0, "record of %u bytes is shorter than the %u-byte common event header",
				 ev->len, COMMON_HEADER_SIZE);
	rc = render_body(s, ev, ns_clock, 0, out, err, used);
	if (rc < 0)
		out->len = start;
	return rc < 0 ? rc : rc == TB_RENDER_UNKNOWN ? TB_RENDER_UNKNOWN : TB_RENDER_OK;
}

/*
 * The event's text without the context columns - what the kernel's
 * function_graph tracer puts inside a comment - for the call-graph printer.
 */
int render_event_info(struct tb_schema *s, const struct tb_render_record *ev, struct tb_strbuf *out,
		      struct tb_problem *err)
{
	enum printer_kind used;
	int rc = render_event_body(s, ev, true, out, err, &used);

	if (rc >= 0)
		printers_count(s, read_common(ev->data).type, used, 1);
	return rc;
}

int tb_render_event(struct tb_schema *s, const struct tb_render_record *ev,
		    const struct tb_render_opts *opts, FILE *out, struct tb_problem *err)
{
	struct tb_strbuf line = {0};
	struct tb_problem ignored;
	enum printer_kind used;
	int rc;

	if (!s || !ev || !out || (!ev->data && ev->len))
		return diag_fail(err, 0, "no schema, event or output");
	if (!err)
		err = &ignored;
	rc = render_event(s, ev, opts, &line, err, &used);
	if (rc >= 0)
		printers_count(s, read_common(ev->data).type, used, 1);
	if (rc >= 0 && fwrite(line.buf, 1, line.len, out) != line.len)
		rc = -EIO;
	sb_free(&line);
	return rc;
}

/*
 * The column legend of print_func_help_header_irq (irq-info) or
 * print_func_help_header in the kernel's trace.c; record-tgid widens the
 * gap before the CPU column by ten for "   TGID   ".
 */
static void print_column_legend(FILE *out, unsigned topts)
{
	bool tgid = topts & TB_TOPT_RECORD_TGID;
	int gap = tgid ? 12 : 2;
	const char *space = "            ";

	if (topts & TB_TOPT_NO_IRQ_INFO) {
		fprintf(out, "#           TASK-PID    %s CPU#     TIMESTAMP  FUNCTION\n", tgid ? "   TGID   " : "");
		fprintf(out, "#              | |      %s   |         |         |\n", tgid ? "     |    " : "");
		return;
	}
	fprintf(out, "#                            %.*s  _-----=> irqs-off/BH-disabled\n", gap, space);
	fprintf(out, "#                            %.*s / _----=> need-resched\n", gap, space);
	fprintf(out, "#                            %.*s| / _---=> hardirq/softirq\n", gap, space);
	fprintf(out, "#                            %.*s|| / _--=> preempt-depth\n", gap, space);
	fprintf(out, "#                            %.*s||| / _-=> migrate-disable\n", gap, space);
	fprintf(out, "#                            %.*s|||| /     delay\n", gap, space);
	fprintf(out, "#           TASK-PID  %.*s CPU#  |||||  TIMESTAMP  FUNCTION\n", gap, "     TGID   ");
	fprintf(out, "#              | |    %.*s   |   |||||     |         |\n", gap, "       |    ");
}

void tb_render_header_opts(FILE *out, const char *tracer, uint64_t entries, uint64_t written,
			   int cpus, unsigned trace_options)
{
	if (!out)
		return;
	fprintf(out, "# tracer: %s\n#\n", tracer ? tracer : "nop");
	/* trace_default_header: without context-info, or with verbose, nothing more. */
	if (trace_options & (TB_TOPT_NO_CONTEXT_INFO | TB_TOPT_VERBOSE))
		return;
	fprintf(out, "# entries-in-buffer/entries-written: %llu/%llu   #P:%d\n#\n",
		(unsigned long long)entries, (unsigned long long)written, cpus);
	print_column_legend(out, trace_options);
}

void tb_render_header(FILE *out, const char *tracer, uint64_t entries, uint64_t written,
		      int cpus)
{
	tb_render_header_opts(out, tracer, entries, written, cpus, 0);
}
