// SPDX-License-Identifier: MIT
/*
 * render.c - one event record as one line of the kernel's `trace` text.
 *
 * The context columns (comm-pid, CPU, flags, time) are the kernel's fixed
 * layout and come from the common header every record starts with.  The
 * rest is the event's print fmt, which libtraceevent renders - except for
 * the ftrace internal events print, bprint, bputs and raw_data, which the
 * kernel does not print through their format file either: their lines
 * start with the symbol of the writer's ip (print, bprint, bputs) or with
 * "# ID buf:" (raw_data), not with the event name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "diag.h"
#include "render.h"
#include "strbuf.h"
#include "tracebuf/report.h"

/* Zero bytes after the copied payload, so a string read past it still ends. */
#define PAYLOAD_PAD 64
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

/*
 * Without kernel symbols the ip of a print record cannot be named.  In an
 * instance only trace_marker writes print records (trace_printk goes to the
 * top level unless the instance is its trace_printk_dest), and the kernel
 * names those after the function that wrote them.
 */
#define MARKER_WRITER "tracing_mark_write"

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

/* Decimal digits of v, right-aligned in a field of width, zero- or space-padded; returns the end. */
static char *put_decimal(char *p, unsigned long long v, int width, char pad)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (int i = n; i < width; i++)
		*p++ = pad;
	while (n)
		*p++ = digits[--n];
	return p;
}

/* As put_decimal, for a signed v: the sign first, then the zeros, as %0*d writes them (or no padding). */
static char *put_signed(char *p, long long v, int width)
{
	if (v >= 0)
		return put_decimal(p, (unsigned long long)v, width, '0');
	*p++ = '-';
	return put_decimal(p, 0ull - (unsigned long long)v, width - 1, '0');
}

/* Longest context prefix apart from the comm: "-PID" (11) " [CPU] " (16) flags (6) time (26) ": ". */
#define CONTEXT_MAX_BEYOND_COMM 64

/*
 * "      bash-23861   [000] d..2.  1721.124010: ", the kernel's printf
 * layout ("%16s-%-7d [%03d] %c%c%c%c%c %5llu.%06llu: ") built by hand:
 * it is on every line, and printf's format parsing was a tenth of a report.
 */
static void print_context(const struct tb_schema *s, const struct common_header *h,
			  const struct tb_event_ref *ev, bool ns_clock, struct tb_strbuf *out)
{
	size_t comm_len;
	const char *comm = tb_schema_comm(s, h->pid, &comm_len);
	char *line = sb_room(out, comm_len + 16 + CONTEXT_MAX_BEYOND_COMM), *p = line, *pid_start;

	if (!line)
		return;
	/* A comm longer than a kernel comm is printed whole, as %16s would. */
	for (size_t i = comm_len; i < 16; i++)
		*p++ = ' ';
	memcpy(p, comm, comm_len);
	p += comm_len;
	*p++ = '-';
	pid_start = p;
	p = put_signed(p, h->pid, 0);
	while (p - pid_start < 7)
		*p++ = ' ';
	*p++ = ' ';
	*p++ = '[';
	p = put_signed(p, ev->cpu, 3);
	*p++ = ']';
	*p++ = ' ';
	*p++ = irqs_column(h->flags);
	*p++ = resched_column(h->flags);
	*p++ = irq_context_column(h->flags);
	*p++ = depth_column(h->preempt & 15u);
	*p++ = depth_column(h->preempt >> 4);
	*p++ = ' ';
	if (ns_clock) {
		unsigned long long us = ((unsigned long long)ev->ts + 500) / 1000;
		p = put_decimal(p, us / 1000000, 5, ' ');
		*p++ = '.';
		p = put_decimal(p, us % 1000000, 6, '0');
	} else {
		p = put_decimal(p, (unsigned long long)ev->ts, 12, ' ');
	}
	*p++ = ':';
	*p++ = ' ';
	sb_added(out, (size_t)(p - line));
}

/* ------------------------------------------------------- ftrace events */

enum ftrace_kind { FTRACE_NONE, FTRACE_PRINT, FTRACE_BPRINT, FTRACE_BPUTS, FTRACE_RAW_DATA };

static enum ftrace_kind ftrace_kind(const char *system, const struct tb_format *f)
{
	if (strcmp(system, "ftrace"))
		return FTRACE_NONE;
	if (!strcmp(f->name, "print"))
		return FTRACE_PRINT;
	if (!strcmp(f->name, "bprint"))
		return FTRACE_BPRINT;
	if (!strcmp(f->name, "bputs"))
		return FTRACE_BPUTS;
	return strcmp(f->name, "raw_data") ? FTRACE_NONE : FTRACE_RAW_DATA;
}

/* A fixed unsigned field of 1..8 bytes, if the format has it. */
static bool unsigned_field(const struct tb_format *f, const char *name, const uint8_t *data,
			   uint64_t *value)
{
	const struct tb_field *fl = tb_format_field(f, name);

	if (!fl || fl->kind != TB_FIELD_STATIC || fl->size == 0 || fl->size > 8)
		return false;
	*value = 0;
	memcpy(value, data + fl->offset, fl->size); /* little endian, like the host */
	return true;
}

/* trace_marker text: "SYMBOL: text", the text keeping its own newline. */
static bool print_marker(struct tep_handle *tep, const struct tb_format *f, const uint8_t *data,
			 uint32_t len, struct tb_strbuf *out)
{
	const struct tb_field *buf = tb_format_field(f, "buf");
	const char *label, *text;
	uint64_t ip;
	size_t n;

	if (!buf || buf->kind != TB_FIELD_STATIC || !unsigned_field(f, "ip", data, &ip))
		return false;
	label = tep_find_function(tep, ip);
	text = (const char *)data + buf->offset;
	n = strnlen(text, len - buf->offset);
	sb_puts(out, label ? label : MARKER_WRITER);
	sb_put(out, ": ", 2);
	sb_put(out, text, n);
	if (n == 0 || text[n - 1] != '\n')
		sb_putc(out, '\n');
	return true;
}

/* trace_marker_raw: "# ID buf: xx xx ..." over the whole (4-byte rounded) payload. */
static bool print_raw_data(const struct tb_format *f, const uint8_t *data, uint32_t len,
			   struct tb_strbuf *out)
{
	static const char hex[] = "0123456789abcdef";
	const struct tb_field *buf = tb_format_field(f, "buf");
	char *p;
	uint64_t id;

	if (!buf || buf->kind != TB_FIELD_STATIC || !unsigned_field(f, "id", data, &id))
		return false;
	p = sb_room(out, 32 + 3 * (size_t)len);
	if (!p)
		return true;
	p += sprintf(p, "# %llx buf:", (unsigned long long)id);
	for (uint32_t i = buf->offset; i < len; i++) {
		*p++ = ' ';
		*p++ = hex[data[i] >> 4];
		*p++ = hex[data[i] & 15];
	}
	*p++ = '\n';
	sb_added(out, (size_t)(p - (out->buf + out->len)));
	return true;
}

/* ------------------------------------------------------- libtraceevent */

/* The print fmt rendering of the record, as libtraceevent does it. */
static void print_info(struct tep_handle *tep, const struct tb_event_ref *ev, uint8_t *copy,
		       bool strip_newline, struct tb_strbuf *out)
{
	struct tep_record rec = {
		.ts = ev->ts,
		.data = copy,
		.size = (int)ev->len,
		.record_size = (int)ev->len,
		.cpu = ev->cpu,
	};
	struct trace_seq seq;
	size_t n;

	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	n = seq.len;
	/* trace_printk text brings its own newline, as it does in the kernel. */
	if (strip_newline && n > 0 && seq.buffer[n - 1] == '\n')
		n--;
	sb_put(out, seq.buffer, n);
	sb_putc(out, '\n');
	trace_seq_destroy(&seq);
}

/*
 * libtraceevent may read a little past a field (a string without its NUL):
 * give it a copy followed by zeros rather than the page itself.
 */
static uint8_t *padded_copy(const void *data, uint32_t len, uint8_t *stack, size_t stack_size)
{
	uint8_t *copy = (size_t)len + PAYLOAD_PAD <= stack_size ? stack : malloc((size_t)len + PAYLOAD_PAD);

	if (copy) {
		memcpy(copy, data, len);
		memset(copy + len, 0, PAYLOAD_PAD);
	}
	return copy;
}

static int print_body(struct tb_schema *s, const struct tb_event_ref *ev, const char *system,
		      const struct tb_format *f, struct tb_strbuf *out)
{
	struct tep_handle *tep = tb_schema_tep(s);
	enum ftrace_kind kind = ftrace_kind(system, f);
	uint8_t stack[4096], *copy;

	if (kind == FTRACE_PRINT && print_marker(tep, f, ev->data, ev->len, out))
		return 0;
	if (kind == FTRACE_RAW_DATA && print_raw_data(f, ev->data, ev->len, out))
		return 0;
	copy = padded_copy(ev->data, ev->len, stack, sizeof(stack));
	if (!copy)
		return -ENOMEM;
	if (kind == FTRACE_NONE) {
		sb_puts(out, f->name);
		sb_put(out, ": ", 2);
	}
	print_info(tep, ev, copy, kind != FTRACE_NONE, out);
	if (copy != stack)
		free(copy);
	return 0;
}

int render_event(struct tb_schema *s, const struct tb_event_ref *ev,
		 const struct tb_render_opts *opts, struct tb_strbuf *out, struct tb_diag *err)
{
	const struct tb_format *f;
	const char *system = "";
	struct common_header h;
	char unknown[48];
	int rc;

	if (ev->len < COMMON_HEADER_SIZE)
		return diag_fail(err, 0, "record of %u bytes is shorter than the %u-byte common event header",
				 ev->len, COMMON_HEADER_SIZE);
	h = read_common(ev->data);
	f = tb_schema_find_event(s, h.type, &system);
	if (f && tb_schema_check_record(f, ev->data, ev->len, err) < 0)
		return -EINVAL;
	print_context(s, &h, ev, opts && opts->ns_clock, out);
	if (!f) {
		sb_put(out, unknown, (size_t)snprintf(unknown, sizeof(unknown), "[UNKNOWN EVENT id=%u]\n", h.type));
		return out->oom ? -ENOMEM : TB_RENDER_UNKNOWN;
	}
	rc = print_body(s, ev, system, f, out);
	if (rc == 0 && out->oom)
		rc = -ENOMEM;
	return rc < 0 ? rc : TB_RENDER_OK;
}

int tb_render_event(struct tb_schema *s, const struct tb_event_ref *ev,
		    const struct tb_render_opts *opts, FILE *out, struct tb_diag *err)
{
	struct tb_strbuf line = {0};
	int rc = render_event(s, ev, opts, &line, err);

	if (rc >= 0 && fwrite(line.buf, 1, line.len, out) != line.len)
		rc = -EIO;
	sb_free(&line);
	return rc;
}

void tb_render_header(FILE *out, const char *tracer, uint64_t entries, uint64_t written,
		      int cpus)
{
	fprintf(out, "# tracer: %s\n#\n", tracer);
	fprintf(out, "# entries-in-buffer/entries-written: %llu/%llu   #P:%d\n#\n",
		(unsigned long long)entries, (unsigned long long)written, cpus);
	fputs("#                                _-----=> irqs-off/BH-disabled\n"
	      "#                               / _----=> need-resched\n"
	      "#                              | / _---=> hardirq/softirq\n"
	      "#                              || / _--=> preempt-depth\n"
	      "#                              ||| / _-=> migrate-disable\n"
	      "#                              |||| /     delay\n"
	      "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
	      "#              | |         |   |||||     |         |\n",
	      out);
}

/*
 * The event's text without the context columns - what the kernel's
 * function_graph tracer puts inside a comment - for the call-graph printer.
 */
int render_event_info(struct tb_schema *s, const struct tb_event_ref *ev, struct tb_strbuf *out,
		      struct tb_diag *err)
{
	const struct tb_format *f;
	const char *system = "";
	char unknown[48];
	int rc;

	if (ev->len < COMMON_HEADER_SIZE)
		return diag_fail(err, 0, "record of %u bytes is shorter than the %u-byte common event header",
				 ev->len, COMMON_HEADER_SIZE);
	f = tb_schema_find_event(s, read_common(ev->data).type, &system);
	if (!f) {
		sb_put(out, unknown, (size_t)snprintf(unknown, sizeof(unknown), "[UNKNOWN EVENT id=%u]\n",
						      read_common(ev->data).type));
		return out->oom ? -ENOMEM : TB_RENDER_UNKNOWN;
	}
	if (tb_schema_check_record(f, ev->data, ev->len, err) < 0)
		return -EINVAL;
	rc = print_body(s, ev, system, f, out);
	if (rc == 0 && out->oom)
		rc = -ENOMEM;
	return rc < 0 ? rc : TB_RENDER_OK;
}
