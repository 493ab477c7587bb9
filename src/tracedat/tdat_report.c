// SPDX-License-Identifier: MIT
/*
 * tdat_report.c - a trace as `trace-cmd report` prints it.
 *
 * The framing is trace-cmd's, built here: "cpus=N"; the buffer name of
 * instances right-aligned to the longest one plus ": " (spaces for the top
 * buffer); "CPU:N [X EVENTS DROPPED]" before the first record of a
 * sub-buffer that lost events; then "%16s-%-5d [%03d]" (comm, pid, CPU) or
 * with -l "%8.8s-%-5d %3d" and the latency columns; the time as
 * " %5llu.%06llu:" (microseconds, rounded), " %5llu.%09llu:" (-t) or
 * "%12llu:" for clocks that are not in nanoseconds; " NAME: " padded to 20
 * characters; then the event's text without its trailing newline.
 *
 * Records of every CPU of every buffer are merged by time stamp; a tie
 * goes to the lower position in trace-cmd's merged CPU order (the top
 * buffer's CPUs, then each instance's), and --cpu selects by that position,
 * as trace-cmd does.  The pages are walked by pagework.c (one at a time:
 * libtraceevent prints every record and is not thread-safe), as report.c's are.
 *
 * The event text is libtraceevent's - with its plugins (sched_switch,
 * hrtimer, function's raw_data, ...) unless -N, and with the print fmts as
 * the file holds them - which is exactly what trace-cmd prints.  With
 * kernel_text it is the kernel's text instead, by tracebuf's printer
 * (printers.h), rendered by pagework's workers (the body alone: this
 * thread frames it, dropping the "name: " the kernel starts it with, as
 * trace-cmd's column already names the event).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "decode/blob_store.h"
#include "decode/capture_source.h"
#include "print/gather.h"
#include "print/kvsprintf.h"
#include "print/pagework.h"
#include "print/printers.h"
#include "print/render.h"
#include "decode/schema_internal.h"
#include "print/strbuf.h"
#include "tdat_internal.h"
#include "decode/tsc2nsec.h"
#include "tracebuf/filter.h"
#include "tracebuf/page.h"

#define FLUSH_AT    (256 * 1024)
#define PAYLOAD_PAD 64
#define UNKNOWN	    "[UNKNOWN EVENT]"

/* libtraceevent's latency flags (common_flags bits as its latency column reads them). */
#define LAT_IRQS_OFF	   0x01
#define LAT_IRQS_NOSUPPORT 0x02
#define LAT_NEED_RESCHED   0x04
#define LAT_HARDIRQ	   0x08
#define LAT_SOFTIRQ	   0x10

/* One buffer as trace-cmd sees it: a handle whose CPUs take slots in the merged order. */
struct tc_buffer {
	const char *name;
	struct tb_capture *cap; /* NULL: no data (an absent top buffer) */
	int base, slots;
	bool usecs; /* the clock counts ns: print µs (or ns with -t) */
};

struct tc_stream {
	struct tc_buffer *buf;
	int cpu;   /* the CPU number in its buffer */
	int index; /* its place in the merged order */
	bool done, has_next;
	struct pw_cursor steps;   /* the CPU's pages as walked (pagework.h) */
	struct tb_record next;    /* data, len and ts of the next record */
	const struct pw_step *step; /* its step (valid until the next advance) */
	const char *next_file;    /* where it lies */
	uint64_t next_offset;
	uint64_t ts;	    /* next's time stamp, with the file's offsets applied */
	bool first_of_page; /* next is the page's first record */
	long long missed;   /* the page's loss: 0, -1 (count unknown) or the count */
};

/* A pid's comm-pid column, made once (libtraceevent's comm lookup and a printf per line were a third of a report). */
struct comm_column {
	int32_t pid;
	uint8_t len; /* 0: empty slot */
	char text[48];
};

/* An event's name column, " NAME: " padded to 20, made once per event. */
struct name_column {
	uint8_t len;       /* 0: not made yet */
	uint8_t name_len;  /* strlen(NAME) */
	char text[TB_NAME_MAX + 4];
	const struct tb_format *f; /* the event and its printer, so that a worker prints it without looking them up */
	const char *system;
	const struct event_printer *printer;
	/* its printer written by hand (printers_by_hand()), as the line without the name, */
	/* for records of min_size or more; NULL when it has none */
	raw_syscalls_line_fn *by_hand_line;
	/* else its compiled print fmt (printers_compiled()), or NULL, and whether records need the full check */
	const struct tb_printfmt *prog;
	bool check_record;
	/* the kernel's own printer tried first, or NULL, and its environment (printers_kernel()) */
	tb_kernel_printer_fn *kernel;
	const struct tb_kernel_env *kenv;
	uint32_t min_size; /* f->min_size */
};

#define COMM_SLOTS 1024

/*
 * What a worker's frame_line() reads of the report, copied before the
 * workers start, on cache lines of its own (the alignment makes its size
 * whole lines): the reading thread writes its totals and text next to the
 * fields these come from on every record, and a worker reading those
 * lines had them taken away from its core as often.
 */
/* trace-cmd's clock of a file: TSC to ns when the file says how (mult 0: it does not), then its offset. */
struct file_clock {
	int64_t offset;
	uint32_t mult, shift;
};

/* A record's time stamp as trace-cmd shows it: the one conversion of the merge and of frame_line(). */
static inline uint64_t file_ns(const struct file_clock *c, uint64_t ts)
{
	return tsc2nsec(ts, c->mult, c->shift) + (uint64_t)c->offset;
}

struct frame_ctx {
	_Alignas(64) struct tb_schema *schema;
	const struct id_table *names; /* the report's, allocated before the workers start */
	struct file_clock clock;
	uint32_t run;
	bool latency, nsec, usecs;
};
/* A name column this long or shorter (a name of up to 29 bytes) is copied as this many bytes. */
#define NAME_COL_SHORT 32

struct tc_report {
	FILE *out;
	struct gather g; /* text, then the workers' lines borrowed from their units, written by writev */
	struct comm_column comms[COMM_SLOTS]; /* direct-mapped by pid */
	/*
	 * struct name_column by event ID (id_table.h), allocated on first use:
	 * on the heap, as workers read its block pointers, away from the lines
	 * this thread writes on every record.
	 */
	struct id_table *names;
	struct tb_schema *schema;
	struct tep_handle *tep;
	const struct tb_tcmd_print_opts *o;
	struct tb_strbuf text;
	struct tb_strbuf body; /* kernel_text: a body rendered on this thread */
	struct tep_text info;  /* put_info()'s */
	struct tb_problem body_err; /* its problem, filled only on failure */
	bool kernel_text;      /* o->kernel_text and not -R */
	bool framed;           /* kernel_text, and workers write whole lines (frame_line) */
	uint32_t run;          /* this report's number among the process's (task_col()), never 0 */
	struct frame_ctx frame; /* framed: frame_line()'s context */
	struct printed_tally printed; /* framed records' printers by ID, told at the end */
	uint8_t prepared[65536 / 8]; /* IDs whose printer this thread chose */
	/* ... and which workers may render: set here (release), read by them (pagework.c) */
	_Atomic uint8_t ready[65536 / 8];
	struct tc_buffer *bufs;
	int nbufs;
	int name_width; /* 0: no instances, no prefixes */
	struct tc_stream *streams;
	int nstreams;
	struct pagework *work;
	struct file_clock clock;
	struct tb_report_totals t;
	unsigned long problems;
	int fatal;
	void (*report)(void *ctx, const char *file, uint64_t offset, const char *reason);
	void *report_ctx;
};

static void problem(struct tc_report *r, const char *file, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void problem(struct tc_report *r, const char *file, uint64_t offset, const char *fmt, ...)
{
	char reason[TB_PROBLEM_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	r->problems++;
	r->report(r->report_ctx, file, offset, reason);
}

/* ------------------------------------------------------------ streams */

/* trace-cmd's time stamp of a record. */
static uint64_t adjusted(const struct tc_report *r, uint64_t ts)
{
	return file_ns(&r->clock, ts);
}

/* A sub-buffer opened: its loss goes with its first record. */
static void open_page(struct tc_stream *s, const struct tb_page_header *h)
{
	s->missed = !h->lost ? 0 : h->lost_stored ? (long long)h->lost_count : -1;
	s->first_of_page = true;
}

struct page_ctx {
	struct tc_report *r;
	struct tc_stream *s;
};

/* What comes before a CPU's next record: pages opened (their loss) and pages skipped. */
static void page_step(void *ctx, const struct pw_unit *u, const struct pw_step *st)
{
	static const struct tb_page_header zeros;
	struct page_ctx *pc = ctx;
	const char *file = u->file[st->page];
	uint64_t at = u->file_offset[st->page] + st->off;

	pc->r->t.pages += st->kind != PW_PAGE_ERROR;
	pc->r->t.bad_pages += st->kind == PW_BAD_PAGE || st->kind == PW_PAGE_ERROR;
	if (st->kind == PW_PAGE)
		open_page(pc->s, &u->hdr[st->page]);
	else if (st->kind == PW_ZERO_PAGE) /* read as trace-cmd reads it: no records, no loss */
		open_page(pc->s, &zeros);
	else if (st->kind == PW_BAD_PAGE)
		problem(pc->r, file, at, "%s; sub-buffer skipped", st->reason);
	else
		problem(pc->r, file, at, "%s; rest of the sub-buffer skipped", st->reason);
}

static void flush_text(struct tc_report *r)
{
	int rc = gather_flush(&r->g);

	if (rc < 0 && !r->fatal)
		r->fatal = rc;
}

static bool cpu_selected(const struct tc_report *r, int index);
static void count_printed(struct tc_report *r, uint16_t id, uint8_t used, uint64_t n);

/*
 * Whether the records a worker rendered in s's unit are counted from the
 * unit's tally (pagework.h) when the unit is left, rather than one at a
 * time: when each of them is printed - framed, no filter, the CPU
 * printed - and the worker could count them all.
 */
static bool tallied(const struct tc_report *r, const struct tc_stream *s)
{
	return r->framed && !r->o->filter && s->steps.unit && s->steps.unit->printed_ok && cpu_selected(r, s->index);
}

static void add_tally(struct tc_report *r, const struct pw_unit *u)
{
	for (size_t i = 0; i < u->nprinted; i++)
		count_printed(r, u->printed[i].id, u->printed[i].used, u->printed[i].n);
}

/* Whether the cursor's next record lies beyond its unit, which it then hands back to be refilled. */
static bool leaves_unit(const struct pw_cursor *c)
{
	if (!c->unit)
		return false;
	for (size_t i = c->step; i < c->unit->nsteps; i++)
		if (c->unit->steps[i].kind == PW_RECORD)
			return false;
	return true;
}

static void advance(struct tc_report *r, struct tc_stream *s)
{
	struct page_ctx pc = {r, s};
	const struct pw_step *st;

	/* The lines borrowed from the unit are written before it is refilled; its tally is told. */
	if (!s->done && leaves_unit(&s->steps)) {
		if (r->g.npieces)
			flush_text(r);
		if (tallied(r, s))
			add_tally(r, s->steps.unit);
	}
	st = s->done ? NULL : pw_cursor_next_record(&s->steps, page_step, &pc);

	s->has_next = st != NULL;
	s->step = st;
	if (st) {
		s->ts = adjusted(r, st->ts); /* its payload and place: locate(), when emit() needs them */
		return;
	}
	if (s->steps.oom && !r->fatal)
		r->fatal = -ENOMEM;
	s->done = true;
}

/* Where the stream's next record lies: its payload (next), its file and offset. */
static void locate(struct tc_stream *s)
{
	pw_record_at(&s->steps, s->step, &s->next, &s->next_file, &s->next_offset);
}

/*
 * The stream whose next record comes first, and in *rival the one whose
 * record comes after it (NULL: no other stream has one).  A tie goes to
 * the lower position in the merged order, as trace-cmd's does: the loop
 * meets positions in order and only a smaller stamp displaces.
 */
static struct tc_stream *earliest(struct tc_report *r, struct tc_stream **rival)
{
	struct tc_stream *best = NULL, *second = NULL;

	for (int i = 0; i < r->nstreams; i++) {
		struct tc_stream *s = &r->streams[i];
		if (!s->has_next)
			continue;
		if (!best || s->ts < best->ts) {
			second = best;
			best = s;
		} else if (!second || s->ts < second->ts) {
			second = s;
		}
	}
	*rival = second;
	return best;
}

/* ------------------------------------------------------------- output */

static void put_fmt(struct tb_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put_fmt(struct tb_strbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void put_prefix(struct tc_report *r, const struct tc_buffer *b)
{
	if (!r->name_width)
		return;
	if (b->name[0])
		put_fmt(&r->text, "%*s: ", r->name_width, b->name);
	else
		put_fmt(&r->text, "%*s  ", r->name_width, "");
}

/* The latency columns as libtraceevent prints them at p (5 bytes): irqs, need-resched, irq context, depth. */
static char *latency_col(char *p, uint8_t flags, uint8_t pc)
{
	p[0] = flags & LAT_IRQS_OFF ? 'd' : flags & LAT_IRQS_NOSUPPORT ? 'X' : '.';
	p[1] = flags & LAT_NEED_RESCHED ? 'N' : '.';
	p[2] = (flags & LAT_HARDIRQ) && (flags & LAT_SOFTIRQ) ? 'H'
	       : flags & LAT_HARDIRQ			      ? 'h'
	       : flags & LAT_SOFTIRQ			      ? 's'
							      : '.';
	p[3] = pc & 0xf ? "0123456789abcdef"[pc & 0xf] : '.';
	p[4] = pc & 0xf0 ? "0123456789abcdef"[pc >> 4] : '.';
	return p + 5;
}

static void put_latency(struct tb_strbuf *b, uint8_t flags, uint8_t pc)
{
	char *p = sb_room(b, 5);

	if (p)
		sb_added(b, (size_t)(latency_col(p, flags, pc) - p));
}

/* v in exactly width digits (even, 2..10), zeros in front: "%0*u" two digits at a time. */
static char *put_zero_padded(char *p, uint32_t v, int width)
{
	for (int i = width - 2; i >= 0; i -= 2, v /= 100)
		memcpy(p + i, kv_digit_pairs + 2 * (v % 100), 2);
	return p + width;
}

/* v right-aligned in width columns, spaces in front ("%*llu"); returns the end. */
static char *put_spaced(char *p, unsigned long long v, unsigned width)
{
	unsigned n = kv_dec_len(v);

	for (; n < width; width--)
		*p++ = ' ';
	return kv_put_dec(p, v, n);
}

/*
 * " %5llu." of the seconds.  They change a few times a second of trace, so
 * each thread keeps the text of the last ones it wrote (the text depends on
 * the number alone: it holds whichever report the thread works for).
 */
static char *put_seconds(char *p, uint64_t secs)
{
	static _Thread_local struct {
		uint64_t secs;
		uint8_t len; /* 0: nothing kept yet */
		char text[32];
	} last;

	if (!last.len || last.secs != secs) {
		char *e = last.text;
		*e++ = ' ';
		e = put_spaced(e, secs, 5);
		*e++ = '.';
		last.secs = secs;
		last.len = (uint8_t)(e - last.text);
	}
	memcpy(p, last.text, sizeof(last.text)); /* fixed size: see put_task(); the room is TIME_COL_MAX */
	return p + last.len;
}

/*
 * " %5llu.%04llu" of the seconds and the first four digits of the
 * microseconds (hundreds: the time in hundreds of microseconds).  A CPU's
 * records a few microseconds apart share them, so each thread keeps the
 * text of the last ones it wrote, as put_seconds() does, with the time
 * stamps that round into them: the 100000 ns from first on, where first is
 * hundreds * 100000 - 500 (mod 2^64, as time_col() rounds).  A stamp ts is
 * among them when ts - first (mod 2^64) is below 100000, and its last two
 * digits of microseconds are then (ts - first) / 1000.  It starts as the
 * text of hundreds 0, so that it always holds a true one.
 */
struct hundreds_text {
	uint64_t first;
	uint8_t len;
	char text[32];
};

static _Thread_local struct hundreds_text last_hundreds = {
    .first = 0 - 500ull, .len = 11, .text = "     0.0000"};

/* Out of line: the common case, the text kept, then saves no registers. */
static __attribute__((noinline)) void make_hundreds(struct hundreds_text *t, uint64_t hundreds)
{
	uint64_t secs = hundreds / 10000;
	char *e = put_seconds(t->text, secs);

	e = put_zero_padded(e, (uint32_t)(hundreds - secs * 10000), 4);
	t->first = hundreds * 100000 - 500;
	t->len = (uint8_t)(e - t->text);
}

/* The hundreds of ts at p, then its last two digits of microseconds; returns the end. */
static inline char *put_microseconds(char *p, uint64_t ts)
{
	struct hundreds_text *t = &last_hundreds;
	uint64_t in = ts - t->first;

	if (in >= 100000) {
		uint64_t hundreds = (ts + 500) / 100000;
		make_hundreds(t, hundreds);
		in = ts - t->first;
	}
	memcpy(p, t->text, sizeof(t->text)); /* fixed size: see put_task(); the room is TIME_COL_MAX */
	p += t->len;
	memcpy(p, kv_digit_pairs + 2 * ((uint32_t)in / 1000), 2);
	return p + 2;
}

/* Room the time column needs at most: " " + 20 digits + "." + 9 digits + ":" (and put_seconds' fixed copy). */
#define TIME_COL_MAX 40

/* time_col() in nanoseconds (-t), or of a clock that does not count them: out of line, as for make_hundreds(). */
static __attribute__((noinline)) char *time_col_other(char *p, uint64_t ts, bool usecs)
{
	if (!usecs) {
		p = put_spaced(p, ts, 12);
	} else {
		uint32_t frac = (uint32_t)(ts % 1000000000ull);
		p = put_seconds(p, ts / 1000000000ull);
		*p++ = (char)('0' + frac / 100000000); /* 9 digits: a leading one, then four pairs */
		p = put_zero_padded(p, frac % 100000000, 8);
	}
	*p++ = ':';
	return p;
}

/*
 * The time column of a time stamp at p: " %5llu.%06llu:" (microseconds,
 * rounded), " %5llu.%09llu:" with -t (nsec), "%12llu:" when the clock does
 * not count nanoseconds (!usecs).  Constant divisors in each branch: the
 * compiler turns them into multiplications (this is on every line).
 */
static inline __attribute__((always_inline)) char *time_col(char *p, uint64_t ts, bool usecs, bool nsec)
{
	if (!usecs || nsec)
		return time_col_other(p, ts, usecs);
	p = put_microseconds(p, ts);
	*p = ':';
	return p + 1;
}

static void put_time(struct tc_report *r, const struct tc_stream *s)
{
	char *p = sb_room(&r->text, TIME_COL_MAX);

	if (p)
		sb_added(&r->text, (size_t)(time_col(p, s->ts, s->buf->usecs, r->o->nsec) - p));
}

/* "%16s-%-5d" (or with -l "%8.8s-%-5d") of comm (len bytes) and pid at p, which has len + 32 bytes of room; returns the end. */
static char *put_comm_pid_at(char *p, const char *comm, size_t len, int32_t pid, bool latency)
{
	uint64_t mag = pid < 0 ? 0 - (uint64_t)pid : (uint64_t)pid;
	char *pid_start;

	if (latency && len > 8)
		len = 8;
	for (size_t i = len; i < (latency ? 8u : 16u); i++)
		*p++ = ' ';
	memcpy(p, comm, len);
	p += len;
	*p++ = '-';
	pid_start = p;
	if (pid < 0)
		*p++ = '-';
	p = kv_put_dec(p, mag, kv_dec_len(mag));
	while (p - pid_start < 5)
		*p++ = ' ';
	return p;
}

/* Room the CPU column needs at most. */
#define CPU_COL_MAX 16

/* " [%03d]" (or with -l " %3d") of the CPU at p; returns the end. */
static char *cpu_col(char *p, int cpu, bool latency)
{
	if (cpu < 0 || cpu > 999) {
		int n = snprintf(p, CPU_COL_MAX, latency ? " %3d" : " [%03d]", cpu);
		return p + (n > 0 && n < CPU_COL_MAX ? n : 0);
	}
	*p++ = ' ';
	if (latency)
		return put_spaced(p, (unsigned)cpu, 3);
	/* "[CCC]" from the digit pairs: CPU / 100 is a single digit here */
	p[0] = '[';
	p[1] = (char)('0' + cpu / 100);
	memcpy(p + 2, kv_digit_pairs + 2 * (cpu % 100), 2);
	p[4] = ']';
	return p + 5;
}

static void put_cpu(struct tb_strbuf *b, int cpu, bool latency)
{
	char *p = sb_room(b, CPU_COL_MAX);

	if (p)
		sb_added(b, (size_t)(cpu_col(p, cpu, latency) - p));
}

/* The comm-pid column from the cache (libtraceevent's comm, made once per pid), then the CPU. */
static void put_task(struct tc_report *r, int32_t pid, int cpu)
{
	struct comm_column *c = &r->comms[(uint32_t)pid % COMM_SLOTS];

	if (!c->len || c->pid != pid) {
		const char *comm = tep_data_comm_from_pid(r->tep, pid);
		size_t len = strlen(comm);
		char *p;
		if (len + 32 > sizeof(c->text)) { /* longer than any kernel comm: not cached */
			if ((p = sb_room(&r->text, len + 32)))
				sb_added(&r->text, (size_t)(put_comm_pid_at(p, comm, len, pid, r->o->latency) - p));
			put_cpu(&r->text, cpu, r->o->latency);
			return;
		}
		c->pid = pid;
		c->len = (uint8_t)(put_comm_pid_at(c->text, comm, len, pid, r->o->latency) - c->text);
	}
	/* A fixed-size copy: a short one of variable length was compiled to a slow rep movs. */
	char *p = sb_room(&r->text, sizeof(c->text));
	if (p) {
		memcpy(p, c->text, sizeof(c->text));
		sb_added(&r->text, c->len);
	}
	put_cpu(&r->text, cpu, r->o->latency);
}

static void put_name(struct tb_strbuf *b, const char *name)
{
	size_t n = strlen(name);

	sb_putc(b, ' ');
	sb_put(b, name, n);
	sb_put(b, ": ", 2);
	for (; n < 20; n++)
		sb_putc(b, ' ');
}

/* The report's name columns, made empty on first use; NULL: no memory. */
static struct id_table *names_table(struct tc_report *r)
{
	if (!r->names && (r->names = malloc(sizeof(*r->names))))
		id_table_init(r->names, sizeof(struct name_column));
	return r->names;
}

/* " NAME: " padded to 20 for event id, from the cache (NULL when it cannot be had: put_name then). */
static const struct name_column *name_column(struct tc_report *r, uint16_t id, const struct tb_format *f,
					     const char *system)
{
	const char *name = f->name;
	struct name_column *c;
	size_t n;

	if (!names_table(r) || !(c = id_table_slot(r->names, id)))
		return NULL;
	if (c->len) /* an ID names one event throughout */
		return c;
	n = strlen(name);
	if (n + 3 > sizeof(c->text) || n + 20 > 255 || !(c->printer = printers_find(r->schema, f, system)))
		return NULL;
	c->by_hand_line = raw_syscalls_line(printers_by_hand(c->printer));
	c->prog = c->by_hand_line ? NULL : printers_compiled(c->printer, &c->check_record);
	c->kernel = printers_kernel(c->printer, &c->kenv);
	c->min_size = f->min_size;
	c->text[0] = ' ';
	memcpy(c->text + 1, name, n);
	memcpy(c->text + 1 + n, ": ", 2);
	size_t len = n + 3;
	c->name_len = (uint8_t)n;
	c->f = f;
	c->system = system;
	for (; n < 20 && len < sizeof(c->text); n++)
		c->text[len++] = ' ';
	c->len = (uint8_t)len;
	return c;
}

/* The event's own text, by libtraceevent (and its plugins), one trailing newline dropped. */
static void put_info(struct tc_report *r, const struct tc_stream *s)
{
	uint8_t stack[4096], *copy = stack;
	struct tep_record rec;
	struct trace_seq *seq;
	size_t n;

	if ((size_t)s->next.len + PAYLOAD_PAD > sizeof(stack) &&
	    !(copy = malloc((size_t)s->next.len + PAYLOAD_PAD))) {
		r->fatal = -ENOMEM;
		return;
	}
	/* libtraceevent may read a little past a field: give it a copy followed by zeros. */
	memcpy(copy, s->next.data, s->next.len);
	memset(copy + s->next.len, 0, PAYLOAD_PAD);
	memset(&rec, 0, sizeof(rec));
	rec.ts = s->ts;
	rec.data = copy;
	rec.size = (int)s->next.len;
	rec.record_size = (int)s->next.len;
	rec.cpu = s->cpu;
	seq = tep_text_empty(&r->info);
	tep_print_event(r->tep, seq, &rec, "%s", r->o->raw ? TEP_PRINT_INFO_RAW : TEP_PRINT_INFO);
	trace_seq_terminate(seq);
	n = seq->len;
	if (n > 0 && seq->buffer[n - 1] == '\n')
		n--;
	sb_put(&r->text, seq->buffer, n);
	if (copy != stack)
		free(copy);
}

/*
 * The kernel writes a stack record with only the frames it has, shorter
 * than its format's caller[8] (the stacktrace trigger, options/stacktrace):
 * the zeros put_info pads its copy with stand for the rest, as for trace-cmd.
 */
static bool short_by_design(const struct tb_format *f, const char *system, uint32_t len)
{
	return !strcmp(system, "ftrace") && (!strcmp(f->name, "kernel_stack") || !strcmp(f->name, "user_stack")) &&
	       (uint64_t)len + PAYLOAD_PAD >= f->min_size;
}

/*
 * Whether workers may render records of the ID: its printer is chosen
 * (here, once per ID) and is not libtraceevent, which only this thread may call.
 */
static void prepare(struct tc_report *r, uint16_t id, const struct tb_format *f, const char *system)
{
	uint8_t bit = (uint8_t)(1u << (id % 8));

	if (r->prepared[id / 8] & bit)
		return;
	r->prepared[id / 8] |= bit;
	/* A worker framing lines (frame_line) takes the ID's name column made here. */
	if (!printers_prepare(r->schema, f, system) && (!r->framed || name_column(r, id, f, system)))
		/* release: the printer chosen and the name column made above are complete before a worker sees the bit (pagework.c acquires) */
		atomic_fetch_or_explicit(&r->ready[id / 8], bit, memory_order_release);
}

/*
 * The kernel's text of the record (the body without "name: " and the
 * newline): a worker's, or rendered here.  rc as render_event_body(); err
 * points at the problem when -EINVAL.
 */
static int kernel_body(struct tc_report *r, const struct tc_stream *s, const struct tb_format *f,
		       size_t name_len, const char **text, size_t *len, const struct tb_problem **err)
{
	const struct pw_unit *u = s->steps.unit;
	const struct pw_step *st = s->step;
	enum printer_kind used;
	int rc;

	if (st->here) {
		struct tb_render_record ev = {s->cpu, st->ts, s->next.data, s->next.len};
		sb_reset(&r->body);
		rc = render_event_body(r->schema, &ev, s->buf->usecs, &r->body, &r->body_err, &used);
		*text = r->body.buf;
		*len = r->body.len;
		*err = &r->body_err;
		if (r->body.oom)
			rc = -ENOMEM;
	} else {
		uint32_t start = st == u->steps ? 0 : st[-1].text_end;
		rc = st->rc;
		used = st->used;
		*text = u->text.buf + start;
		*len = st->text_end - start;
		*err = rc == -EINVAL ? &u->errs[st->err] : NULL;
	}
	if (rc < 0)
		return rc;
	printers_count(r->schema, f->id, used, 1);
	if (*len && (*text)[*len - 1] == '\n')
		--*len;
	if (*len >= name_len + 2 && !memcmp(*text, f->name, name_len) && !memcmp(*text + name_len, ": ", 2)) {
		*text += name_len + 2;
		*len -= name_len + 2;
	}
	return rc;
}

/* Whether a and b start with the same n bytes: 8 at a time inline (a memcmp call per line cost more than the names are long). */
static bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;

	for (; n >= 8; a += 8, b += 8, n -= 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	for (; n; a++, b++, n--)
		if (*a != *b)
			return false;
	return true;
}

/* Room task_col()'s comm-pid column needs: the longest comm table's name (parse_cmdline keeps up to 63 bytes), '-', the pid, padding. */
#define COMM_COL_MAX (64 + 32)

/* Reports run so far: what a thread's cached comm columns are tagged with (task_col()). */
static _Atomic uint32_t report_runs;

/*
 * The comm-pid column of pid at p, then the CPU column, for a worker.  The
 * comm table's column of the kernel's layout ("%16s-%-7d") is trace-cmd's
 * ("%16s-%-5d") and up to two spaces more (pid digits are never spaces);
 * the -l layout is made here.  Each thread keeps the last columns it made,
 * direct-mapped by pid and tagged with the CPU and the report's run
 * (r->run): a column is only reused for the report, hence the comm table
 * and layout, it was made for.  A unit's records are all of one CPU, and a
 * task seldom moves, so one pid's slot holds its CPU's columns.
 */
struct task_col_cached {
	uint32_t run; /* 0: empty */
	int32_t pid;
	int32_t cpu;
	uint8_t len;
	char text[40];
};

static _Thread_local struct task_col_cached task_cols[256];

/*
 * task_col() when its slot holds another column: made, and kept when it
 * fits.  Out of line: the common case then saves no registers.
 */
static __attribute__((noinline)) char *make_task_col(const struct frame_ctx *r, struct task_col_cached *c, char *p,
						     int32_t pid, int cpu)
{
	const char *col;
	size_t len;
	char *start = p;

	if (!r->latency && (col = schema_comm_column(r->schema, pid, &len))) {
		for (int i = 0; i < 2 && len && col[len - 1] == ' '; i++)
			len--;
		memcpy(p, col, len);
		p += len;
	} else {
		col = tb_schema_comm(r->schema, pid, &len);
		p = put_comm_pid_at(p, col, len, pid, r->latency);
	}
	p = cpu_col(p, cpu, r->latency);
	if ((size_t)(p - start) <= sizeof(c->text)) {
		c->run = r->run;
		c->pid = pid;
		c->cpu = cpu;
		c->len = (uint8_t)(p - start);
		memcpy(c->text, start, c->len);
	}
	return p;
}

static inline char *task_col(const struct frame_ctx *r, char *p, int32_t pid, int cpu)
{
	struct task_col_cached *c = &task_cols[(uint32_t)pid % 256];

	if (c->run == r->run && c->pid == pid && c->cpu == cpu) {
		memcpy(p, c->text, sizeof(c->text)); /* fixed size: see put_task() */
		return p + c->len;
	}
	return make_task_col(r, c, p, pid, cpu);
}

/*
 * The body printed from out's byte body on as a line's end: one newline,
 * and without the "NAME: " a kernel printer (kernel) may start it with, as
 * the kernel does (as kernel_body() sees it).
 */
static void end_body(const struct name_column *nc, struct tb_strbuf *out, size_t body, bool kernel)
{
	char *text = out->buf + body;
	size_t len = out->len - body, name_len = nc->name_len;

	if (len && text[len - 1] == '\n')
		len--;
	if (kernel && len >= name_len + 2 && text[name_len] == ':' && text[name_len + 1] == ' ' &&
	    same_bytes(text, nc->text + 1, name_len)) {
		memmove(text, text + name_len + 2, len - name_len - 2);
		len -= name_len + 2;
	}
	text[len] = '\n';
	out->len = body + len + 1;
}

/*
 * frame_line()'s body of a record its columns were just put in front of
 * (out's text from start on), by the event's printer: out of line, as the
 * one record in ten that takes it needs registers the common case does not.
 */
static __attribute__((noinline)) int frame_body(const struct frame_ctx *r, const struct name_column *nc,
						const struct tb_render_record *ev, struct tb_strbuf *out, size_t start,
						struct tb_problem *err, enum printer_kind *used)
{
	size_t body = out->len;
	int rc;

	*used = PRINTER_NONE;
	rc = print_event_text(nc->printer, r->schema, nc->f, nc->system, ev, r->usecs, 0, true, out, err, used);
	if (rc < 0 || out->oom) {
		out->len = start;
		return rc == -ENOENT ? TB_RENDER_UNKNOWN : rc < 0 ? rc : -ENOMEM;
	}
	end_body(nc, out, body, *used == PRINTER_KERNEL);
	return TB_RENDER_OK;
}

/*
 * frame_body() of a record its event's compiled print fmt prints (most
 * events): the program run straight after the columns, as print_compiled()
 * would run it - the calls and checks between them were ~50 instructions
 * a record.  A record that fails (its check, the program, memory) goes
 * frame_body()'s way from the columns on, which says why.
 */
static int frame_compiled(const struct frame_ctx *r, const struct name_column *nc, const struct tb_render_record *ev,
			  struct tb_strbuf *out, size_t start, struct tb_problem *err, enum printer_kind *used)
{
	size_t body = out->len;

	if ((!nc->check_record || tb_schema_check_record(nc->f, ev->data, ev->len, NULL) == 0) &&
	    tb_printfmt_run(nc->prog, ev->data, ev->len, out) == 0) {
		sb_putc(out, '\n');
		if (!out->oom) {
			*used = PRINTER_COMPILED;
			return TB_RENDER_OK;
		}
	}
	out->len = body;
	return frame_body(r, nc, ev, out, start, err, used);
}

/*
 * frame_body() of a record of an event the kernel prints with its own code
 * (a marker, a syscall): that printer called straight after the columns, as
 * print_event_text() calls it - the calls between them were ~50
 * instructions a record.  What it declines or fails goes frame_body()'s
 * way from the columns on, which prints it another way or says why.
 */
static int frame_kernel(const struct frame_ctx *r, const struct name_column *nc, const struct tb_render_record *ev,
			struct tb_strbuf *out, size_t start, struct tb_problem *err, enum printer_kind *used)
{
	struct tb_kernel_record k = {ev->data, ev->len, ev->ts, r->usecs, 0};
	size_t body = out->len;

	if (nc->kernel(nc->f, &k, nc->kenv, out, err) == 0 && !out->oom) {
		*used = PRINTER_KERNEL;
		end_body(nc, out, body, true);
		return TB_RENDER_OK;
	}
	out->len = body;
	return frame_body(r, nc, ev, out, start, err, used);
}

/*
 * A worker's whole line for a record (pagework_set_renderer, ctx the
 * report's frame_ctx): the columns emit() would put in front, then the
 * kernel's text of the record without its "name: " (the printers leave it
 * out; a kernel printer's is dropped here) and with one newline - so that
 * the reading thread only merges and writes.  It reads only what stays put
 * while workers run: the options, the clock conversion, the schema's comm
 * table (the same
 * saved_cmdlines libtraceevent's comms came from; no plugin adds to those in
 * this mode) and the name columns the reading thread made for an ID before
 * marking it ready (prepare(): the release that the worker's acquire of the
 * ID's ready bit pairs with).  Other results than TB_RENDER_OK leave nothing.
 * frame_line_as() is it in the layout latency, usecs and nsec say (the
 * report's, r's own): inlined in each caller, so that those are constants there.
 */
static inline __attribute__((always_inline)) int
frame_line_as(const struct frame_ctx *r, const struct tb_render_record *ev, struct tb_strbuf *out, struct tb_problem *err,
	      enum printer_kind *used, bool latency, bool usecs, bool nsec)
{
	const uint8_t *d = ev->data;
	uint16_t id;
	int32_t pid;
	char *p, *line;

	memcpy(&id, d, sizeof(id)); /* the worker renders records of 8 bytes or more alone */
	memcpy(&pid, d + 4, sizeof(pid));
	const struct name_column *nc = id_table_find(r->names, id);
	if (!nc || !nc->len)
		return -ENOENT; /* cannot be: prepare() made it before it marked the ID ready */
	/* room for the columns, and for a line written by hand after them */
	if (!(p = sb_room(out, COMM_COL_MAX + CPU_COL_MAX + 5 + TIME_COL_MAX + sizeof(nc->text) +
				       RAW_SYSCALLS_LINE_MAX)))
		return -ENOMEM;
	line = p;
	p = task_col(r, p, pid, ev->cpu);
	if (latency)
		p = latency_col(p, d[2], d[3]);
	p = time_col(p, file_ns(&r->clock, ev->ts), usecs, nsec);
	/* fixed size: see put_task(); most names are short, and the whole column is four times the short copy */
	if (nc->len <= NAME_COL_SHORT)
		memcpy(p, nc->text, NAME_COL_SHORT);
	else
		memcpy(p, nc->text, sizeof(nc->text));
	p += nc->len;
	/* render_event_body() without its look-ups, nor the "NAME: " the column above says: -ENOENT is its TB_RENDER_UNKNOWN */
	if (nc->by_hand_line && ev->len >= nc->min_size) {
		/* nine records in ten in a syscall-heavy trace: one line, its newline written, nothing to check */
		sb_added(out, (size_t)(nc->by_hand_line(p, d) - line));
		*used = PRINTER_COMPILED;
		return TB_RENDER_OK;
	}
	sb_added(out, (size_t)(p - line));
	if (nc->kernel)
		return frame_kernel(r, nc, ev, out, (size_t)(line - out->buf), err, used);
	if (nc->prog && ev->len >= nc->min_size)
		return frame_compiled(r, nc, ev, out, (size_t)(line - out->buf), err, used);
	return frame_body(r, nc, ev, out, (size_t)(line - out->buf), err, used);
}

static int frame_line(void *ctx, const struct tb_render_record *ev, struct tb_strbuf *out, struct tb_problem *err,
		      enum printer_kind *used)
{
	const struct frame_ctx *r = ctx;

	return frame_line_as(r, ev, out, err, used, r->latency, r->usecs, r->nsec);
}

/* frame_line() of the default layout: no -l, no -t, a clock that counts nanoseconds (what most reports are). */
static int frame_line_usecs(void *ctx, const struct tb_render_record *ev, struct tb_strbuf *out, struct tb_problem *err,
			    enum printer_kind *used)
{
	return frame_line_as(ctx, ev, out, err, used, false, true, false);
}

/* The frame_line() for r's layout. */
static pw_render_fn *frame_renderer(const struct frame_ctx *r)
{
	return !r->latency && r->usecs && !r->nsec ? frame_line_usecs : frame_line;
}

static bool cpu_selected(const struct tc_report *r, int index)
{
	if (!r->o->cpus)
		return true;
	for (size_t i = 0; i < r->o->ncpus; i++)
		if (r->o->cpus[i] == index)
			return true;
	return false;
}

/* What goes before a printed record: the buffer's prefix, the line of the sub-buffer's loss. */
static void put_lead(struct tc_report *r, const struct tc_stream *s, long long missed)
{
	put_prefix(r, s->buf);
	if (missed) {
		r->t.lost_lines++;
		if (missed > 0) {
			r->t.lost_events += (uint64_t)missed;
			put_fmt(&r->text, "CPU:%d [%lld EVENTS DROPPED]\n", s->cpu, missed);
		} else {
			put_fmt(&r->text, "CPU:%d [EVENTS DROPPED]\n", s->cpu);
		}
	}
	r->t.events++;
}

/* libtraceevent prints each context part of an unknown record this way. */
static void put_unknown(struct tc_report *r)
{
	r->t.unknown_events++;
	sb_puts(&r->text, r->o->latency ? UNKNOWN UNKNOWN UNKNOWN : UNKNOWN UNKNOWN);
	put_name(&r->text, "(NULL)");
	sb_puts(&r->text, UNKNOWN "\n");
}

/* printers_count() of one record, kept until the end of the run (printed_tally). */
static void count_printed(struct tc_report *r, uint16_t id, uint8_t used, uint64_t n)
{
	printed_tally_add(&r->printed, r->schema, id, used < PRINTER_KINDS ? used : PRINTER_NONE, n);
}

/* A record a worker wrote the whole line of (frame_line): checked by its printer there, told here. */
static void emit_framed(struct tc_report *r, struct tc_stream *s, long long missed)
{
	const struct pw_unit *u = s->steps.unit;
	const struct pw_step *st = s->step;
	uint32_t start = st == u->steps ? 0 : st[-1].text_end;

	if (st->rc == -EINVAL) {
		const struct tb_problem *bad = &u->errs[st->err];
		locate(s);
		r->t.bad_records++;
		problem(r, s->next_file, s->next_offset + bad->offset, "%s; record skipped", bad->reason);
		return;
	}
	if (st->rc < 0) {
		if (!r->fatal)
			r->fatal = st->rc;
		return;
	}
	if (!tallied(r, s))
		count_printed(r, st->id, st->used, 1);
	put_lead(r, s, missed);
	if (st->rc != TB_RENDER_OK)
		put_unknown(r);
	else
		gather_borrow(&r->g, u->text.buf + start, st->text_end - start); /* until the unit is left: advance() */
	if (r->text.len >= FLUSH_AT)
		flush_text(r);
}

/*
 * Whether s's next record, and those after it in its unit, can go out as
 * one run (emit_run()): workers framed their lines, nothing goes between
 * the lines (no buffer prefix, no line of loss, no filter), and the CPU
 * is printed.  Otherwise emit() takes them one at a time.
 */
static bool runs_ok(const struct tc_report *r, const struct tc_stream *s)
{
	const struct pw_step *st = s->step;

	return r->framed && !r->o->filter && !r->name_width && pw_step_rendered(st) &&
	       !(s->first_of_page && s->missed) && cpu_selected(r, s->index);
}

/* Whether a record stamped ts comes before rival's next in the merge's order (the stamp, then the position). */
static inline bool before_rival(uint64_t ts, uint64_t bound, bool ties_win)
{
	return ts < bound || (ts == bound && ties_win);
}

/*
 * The last of s's records, from its next one on, that go out as one run:
 * within the span the worker marked (pagework.h: lines rendered, stamps in
 * order), the last still before rival's next, found by bisection - the
 * stamps are in order there, so the ones before rival come first.  A run
 * may end sooner than it could (the span's end, a stamp that goes back):
 * the merge then simply takes the same CPU again.  Without spans, or on a
 * clock whose offset wraps within the span, a record at a time.
 */
static size_t run_last(const struct tc_report *r, const struct tc_stream *s, uint64_t bound, bool ties_win)
{
	const struct pw_unit *u = s->steps.unit;
	size_t i = (size_t)(s->step - u->steps), end = u->nsteps;

	if (u->spans_ok && u->span_end[i] > i) {
		size_t lo = i + 1, hi = u->span_end[i];
		if (hi - lo == 0 || adjusted(r, u->steps[hi - 1].ts) >= s->ts) {
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (before_rival(adjusted(r, u->steps[mid].ts), bound, ties_win))
					lo = mid + 1;
				else
					hi = mid;
			}
			return lo - 1;
		}
	}
	while (i + 1 < end) {
		const struct pw_step *nx = &u->steps[i + 1];
		if (!pw_step_rendered(nx) || !before_rival(adjusted(r, nx->ts), bound, ties_win))
			break;
		i++;
	}
	return i;
}

/*
 * s's next record and every one after it in the same unit that still comes
 * before rival's next (run_last()), written as one borrowed span: the
 * workers wrote their lines one after another in the unit's text.  The run
 * stops at anything emit() must see alone - a page boundary (its loss), a
 * record not framed or not rendered.  On a busy CPU a run is ~20 records:
 * the merge then costs per run, not per record (and reads none of the
 * records between a run's ends when the unit is tallied).  Leaves s->step
 * at the last record written, for advance().
 */
static void emit_run(struct tc_report *r, struct tc_stream *s, const struct tc_stream *rival)
{
	const struct pw_unit *u = s->steps.unit;
	size_t first = (size_t)(s->step - u->steps);
	size_t last = run_last(r, s, rival ? rival->ts : UINT64_MAX, !rival || s->index < rival->index);
	uint32_t start = first == 0 ? 0 : u->steps[first - 1].text_end;

	s->first_of_page = false;
	if (!tallied(r, s))
		for (size_t i = first; i <= last; i++)
			count_printed(r, u->steps[i].id, u->steps[i].used, 1);
	r->t.events += last - first + 1;
	gather_borrow(&r->g, u->text.buf + start, u->steps[last].text_end - start); /* until the unit is left: advance() */
	s->steps.step = last + 1;
	s->step = &u->steps[last];
}

/*
 * A record on its way to a line: emit() chooses it (emit_chosen), finds and
 * checks its event and renders its body (emit_render), then writes the line
 * (emit_line).  Framed reports write most records whole (emit_framed).
 */
struct record_text {
	const struct tb_format *f;
	const char *system;
	struct tep_event *ev;          /* libtraceevent's event, when it prints the body */
	const struct name_column *nc;  /* the padded name, when the kernel text prints it */
	const char *body;              /* the kernel text's body, or NULL: put_info() */
	size_t body_len;
	uint16_t id;
	int32_t pid;
	bool known;
};

/* True when the record goes on to be rendered here; false when it is not selected or already written framed. */
static bool emit_chosen(struct tc_report *r, struct tc_stream *s, long long missed)
{
	if (!cpu_selected(r, s->index))
		return false;
	if (r->framed && !s->step->here && !r->o->filter) {
		emit_framed(r, s, missed);
		return false;
	}
	locate(s);
	if (r->o->filter) {
		struct tb_render_record ref = {s->cpu, s->next.ts, s->next.data, s->next.len};
		if (!tb_filter_set_keep(r->o->filter, r->schema, &ref))
			return false;
	}
	if (r->framed && !s->step->here) {
		emit_framed(r, s, missed);
		return false;
	}
	return true;
}

/* The record's event, checked, and its body rendered: 0, or -1 when the record is skipped (said, or fatal). */
static int emit_render(struct tc_report *r, struct tc_stream *s, struct record_text *t)
{
	const uint8_t *d = s->next.data;
	struct tb_problem err; /* filled only on failure */

	*t = (struct record_text){.system = ""};
	if (s->next.len >= 8) {
		t->id = s->step->id;
		t->pid = s->step->pid;
		t->f = tb_schema_find_event(r->schema, t->id, &t->system);
	}
	/*
	 * A worker's printer checked the record as it rendered it (printers.c:
	 * the same check, its -EINVAL comes back through kernel_body()); the
	 * others are checked here.
	 */
	if (t->f && (s->step->here || !r->kernel_text) && !short_by_design(t->f, t->system, s->next.len) &&
	    tb_schema_check_record(t->f, d, s->next.len, &err) < 0) {
		r->t.bad_records++;
		problem(r, s->next_file, s->next_offset + err.offset, "%s; record skipped", err.reason);
		return -1;
	}
	if (t->f && r->kernel_text) {
		const struct tb_problem *bad;
		int rc;
		prepare(r, t->id, t->f, t->system);
		t->nc = name_column(r, (uint16_t)t->f->id, t->f, t->system);
		rc = kernel_body(r, s, t->f, t->nc ? t->nc->name_len : strlen(t->f->name), &t->body, &t->body_len,
				 &bad);
		if (rc == -EINVAL) {
			r->t.bad_records++;
			problem(r, s->next_file, s->next_offset + bad->offset, "%s; record skipped", bad->reason);
			return -1;
		}
		if (rc < 0) {
			if (!r->fatal)
				r->fatal = rc;
			return -1;
		}
		t->known = rc == TB_RENDER_OK;
	} else {
		if (t->f && printers_tep_ready(r->schema, t->f, t->system))
			t->ev = tep_find_event(r->tep, t->id);
		t->known = t->ev != NULL;
	}
	return 0;
}

/* The line: lead, task, latency, time, name and body (or a blob's line, or the unknown event's). */
static void emit_line(struct tc_report *r, struct tc_stream *s, long long missed, const struct record_text *t)
{
	put_lead(r, s, missed);
	if (s->step && s->step->blob) {
		/* a blob reference: its bytes from the file's blob store, if saved (report.c) */
		char line[BLOB_LINE_MAX];
		enum blob_fate fate;
		size_t n = blob_store_line(capture_blobs(s->buf->cap), s->cpu, s->next.data, line, &fate);
		if (fate != BLOB_FOUND)
			r->t.blobs_lost++;
		sb_put(&r->text, line, n);
		return;
	}
	if (!t->known) {
		put_unknown(r);
		return;
	}
	put_task(r, t->pid, s->cpu);
	if (r->o->latency) {
		if (r->o->raw)
			put_fmt(&r->text, "-0x%x", s->step->flags); /* -R -l: the flags as a number */
		else
			put_latency(&r->text, s->step->flags, s->step->preempt);
	}
	put_time(r, s);
	char *room = t->nc ? sb_room(&r->text, sizeof(t->nc->text)) : NULL;
	if (room) {
		memcpy(room, t->nc->text, sizeof(t->nc->text)); /* fixed size: see put_task() */
		sb_added(&r->text, t->nc->len);
	} else
		put_name(&r->text, t->ev ? t->ev->name : t->f->name);
	if (t->body)
		sb_put(&r->text, t->body, t->body_len);
	else
		put_info(r, s);
	sb_putc(&r->text, '\n');
	if (r->text.len >= FLUSH_AT)
		flush_text(r);
}

static void emit(struct tc_report *r, struct tc_stream *s)
{
	long long missed = s->first_of_page ? s->missed : 0;
	struct record_text t;

	s->first_of_page = false;
	if (emit_chosen(r, s, missed) && emit_render(r, s, &t) == 0)
		emit_line(r, s, missed, &t);
}

/* ---------------------------------------------------------------- run */

/* Worker threads for the kernel's text, by the raw data of every buffer (pagework_threads()). */
static int render_threads(const struct tc_report *r)
{
	uint64_t bytes = 0;

	for (int b = 0; b < r->nbufs; b++)
		if (r->bufs[b].cap)
			bytes += tb_capture_data_bytes(r->bufs[b].cap);
	return pagework_threads(bytes);
}

/* Whether every buffer's time column is made alike (frame_line makes them all as the first one's). */
static bool same_clock_columns(const struct tc_report *r)
{
	for (int b = 1; b < r->nbufs; b++)
		if (r->bufs[b].usecs != r->bufs[0].usecs)
			return false;
	return r->nbufs > 0;
}

/* frame_line()'s context: the report's options, clock and name columns (allocated now, so that their address stays put). */
static int frame_ctx_init(struct tc_report *r)
{
	if (!names_table(r))
		return -ENOMEM;
	r->frame = (struct frame_ctx){
	    .schema = r->schema,
	    .names = r->names,
	    .clock = r->clock,
	    .run = r->run,
	    .latency = r->o->latency,
	    .nsec = r->o->nsec,
	    .usecs = r->bufs[0].usecs,
	};
	return 0;
}

/* Every CPU of every buffer, in trace-cmd's merged order, and their page walks. */
static int make_streams(struct tc_report *r)
{
	struct pw_source *src;
	int n = 0, rc;

	for (int b = 0; b < r->nbufs; b++)
		n += r->bufs[b].slots;
	r->streams = calloc(n ? (size_t)n : 1, sizeof(*r->streams));
	src = calloc(n ? (size_t)n : 1, sizeof(*src));
	if (!r->streams || !src) {
		free(src);
		return -ENOMEM;
	}
	r->nstreams = n;
	for (int b = 0, i = 0; b < r->nbufs; b++)
		for (int c = 0; c < r->bufs[b].slots; c++, i++) {
			struct tb_capture *cap = r->bufs[b].cap;
			r->streams[i] = (struct tc_stream){.buf = &r->bufs[b], .cpu = c, .index = i};
			src[i] = (struct pw_source){cap && tb_capture_has_cpu(cap, c) ? cap : NULL, c};
		}
	/* libtraceevent's text: one thread, as libtraceevent is not thread-safe. */
	if (r->kernel_text) {
		struct tb_render_opts ro = {.ns_clock = n && r->bufs[0].usecs};
		rc = pagework_new(src, n, r->schema, &ro, render_threads(r), PW_RENDER_BODIES, r->ready, &r->work);
		if (rc == -EAGAIN) /* no threads to be had: render here */
			rc = pagework_new(src, n, r->schema, NULL, 0, PW_RENDER_NONE, NULL, &r->work);
		else if (rc == 0 && same_clock_columns(r))
			r->framed = true;
		if (r->framed && (rc = frame_ctx_init(r)) == 0)
			pagework_set_renderer(r->work, frame_renderer(&r->frame), &r->frame);
	} else {
		rc = pagework_new(src, n, r->schema, NULL, 0, PW_RENDER_NONE, NULL, &r->work);
	}
	free(src);
	for (int i = 0; rc == 0 && i < n; i++)
		r->streams[i].steps = (struct pw_cursor){.work = r->work, .stream = i};
	return rc;
}

static int run(struct tc_report *r, int cpus)
{
	struct tep_plugin_list *plugins = NULL;
	struct tc_stream *s, *rival;
	int rc;

	r->tep = schema_tep(r->schema);
	r->kernel_text = r->o->kernel_text && !r->o->raw;
	/* trace-cmd's text: libtraceevent's, with the print fmts as the file has them, and its plugins. */
	schema_set_tep_verbatim(r->schema, !r->kernel_text);
	if (!r->o->no_plugins && !r->kernel_text)
		plugins = tep_load_plugins(r->tep);
	for (int b = 0; b < r->nbufs; b++)
		if (r->bufs[b].name[0] && (int)strlen(r->bufs[b].name) > r->name_width)
			r->name_width = (int)strlen(r->bufs[b].name);
	r->g = (struct gather){.out = r->out, .own = &r->text};
	/* relaxed: only a distinct number is wanted; workers read it after the lock that hands them units */
	while (!(r->run = atomic_fetch_add_explicit(&report_runs, 1, memory_order_relaxed) + 1))
		;
	put_fmt(&r->text, "cpus=%d\n", cpus);
	rc = make_streams(r);
	for (int i = 0; rc == 0 && i < r->nstreams; i++)
		advance(r, &r->streams[i]);
	while (rc == 0 && !r->fatal && (s = earliest(r, &rival))) {
		if (runs_ok(r, s))
			emit_run(r, s, rival);
		else
			emit(r, s);
		advance(r, s);
	}
	flush_text(r);
	printed_tally_tell(&r->printed, r->schema);
	if (plugins)
		tep_unload_plugins(plugins, r->tep);
	pagework_free(r->work);
	free(r->streams);
	gather_free(&r->g);
	sb_free(&r->text);
	sb_free(&r->body);
	tep_text_free(&r->info);
	if (r->names)
		id_table_free(r->names);
	free(r->names);
	return rc < 0 ? rc : r->fatal;
}

static int finish(struct tc_report *r, int rc, unsigned long counted_elsewhere,
		  struct tb_report_totals *totals)
{
	r->t.problems = counted_elsewhere + r->problems;
	if (totals)
		*totals = r->t;
	if (rc == 0 && (fflush(r->out) != 0 || ferror(r->out)))
		rc = -EIO;
	if (rc < 0)
		return rc;
	return r->t.problems ? 1 : 0;
}

/* ------------------------------------------------------------ captures */

static void capture_problem(void *ctx, const char *file, uint64_t offset, const char *reason)
{
	tb_capture_problem(ctx, file, offset, "%s", reason);
}

int tb_tcmd_print_capture(struct tb_capture *c, FILE *out, const struct tb_tcmd_print_opts *opts,
				   struct tb_report_totals *totals)
{
	static const struct tb_tcmd_print_opts none;
	struct tc_buffer buf = {
	    .name = "",
	    .cap = c,
	    .slots = tb_capture_cpu_slots(c),
	};
	struct tc_report r = {
	    .out = out,
	    .schema = tb_capture_schema(c),
	    .o = opts ? opts : &none,
	    .bufs = &buf,
	    .nbufs = 1,
	    .report = capture_problem,
	    .report_ctx = c,
	};
	int rc;

	/* A capture that converts its TSC stamps (a shm session's x86-tsc ring) prints ns, as its trace.dat would. */
	tb_capture_tsc2nsec(c, &r.clock.mult, &r.clock.shift);
	buf.usecs = r.clock.mult || tdat_clock_in_usecs(tb_capture_clock(c));
	rc = run(&r, tb_capture_online_cpus(c));

	/* The capture counted every problem as it was reported, loading included. */
	r.problems = 0;
	return finish(&r, rc, tb_capture_problems(c), totals);
}

/* ------------------------------------------------------------ trace.dat */

static void tracedat_problem(void *ctx, const char *file, uint64_t offset, const char *reason)
{
	struct tb_tracedat *td = ctx;
	struct tb_problem d = {.file = file, .offset = offset};

	snprintf(d.reason, sizeof(d.reason), "%s", reason);
	td->diag(td->diag_ctx, &d);
}

/* The latency text trace-cmd prints as it is. */
static int print_latency(struct tb_tracedat *td, FILE *out)
{
	const struct tb_tracedat_buffer *b = &td->buffers[0].pub;
	uint64_t pos, end;

	for (int i = 0; i < td->nbuffers; i++)
		if (td->buffers[i].pub.text_size) {
			b = &td->buffers[i].pub;
			break;
		}
	pos = b->text_offset;
	end = b->text_offset + b->text_size;
	char buf[65536];
	int rc = 0;

	fprintf(out, "cpus=%d\n", td->info.cpus);
	if (b->text_offset && td->info.version >= 7 && b->compressed) {
		tdat_report(td, b->offset, "compressed latency text is not read by tracebuf");
		return 1;
	}
	while (pos < end && rc == 0) {
		size_t n = end - pos < sizeof(buf) ? (size_t)(end - pos) : sizeof(buf);
		if ((rc = tdat_pread(td, buf, n, pos, "latency text")) == 0 && fwrite(buf, 1, n, out) != n)
			rc = -EIO;
		pos += n;
	}
	fputc('\n', out); /* trace-cmd ends the text with one more newline */
	if (rc == 0 && (fflush(out) || ferror(out)))
		rc = -EIO;
	return rc < 0 && rc != -EIO ? 1 : rc;
}

int tb_tcmd_print_tracedat(struct tb_tracedat *td, FILE *out, const struct tb_tcmd_print_opts *opts,
		       struct tb_report_totals *totals)
{
	static const struct tb_tcmd_print_opts none;
	struct tc_report r = {
	    .out = out,
	    .schema = td->schema,
	    .o = opts ? opts : &none,
	    .clock = {td->info.ts_offset, td->info.tsc2nsec_mult, td->info.tsc2nsec_shift},
	    .report = tracedat_problem,
	    .report_ctx = td,
	};
	bool has_top = td->nbuffers && !td->buffers[0].name[0];
	int rc = 0, n = 0;

	if (td->info.latency)
		return print_latency(td, out);
	/* trace-cmd always has the top handle, with or without a top buffer in the file. */
	r.bufs = calloc((size_t)td->nbuffers + 1, sizeof(*r.bufs));
	if (!r.bufs)
		return -ENOMEM;
	if (!has_top)
		r.bufs[n++] = (struct tc_buffer){.name = "", .slots = td->info.cpus, .usecs = true};
	for (int i = 0; rc == 0 && i < td->nbuffers; i++, n++) {
		struct tc_buffer *b = &r.bufs[n];
		b->name = td->buffers[i].name;
		b->slots = td->buffers[i].pub.slots;
		b->usecs = r.clock.mult || tdat_clock_in_usecs(td->buffers[i].clock);
		/* The capture's own clock rule is not used here: trace-cmd's above is. */
		rc = tb_tracedat_capture(td, i, &(struct tb_capture_opts){.clock = "local"}, &b->cap);
	}
	r.nbufs = n;
	for (int i = 1; i < n; i++)
		r.bufs[i].base = r.bufs[i - 1].base + r.bufs[i - 1].slots;
	if (rc == 0)
		rc = run(&r, td->info.cpus);
	for (int i = 0; i < n; i++)
		tb_capture_close(r.bufs[i].cap);
	free(r.bufs);
	/* The file's own problems (opening included) and the ones met while printing. */
	return finish(&r, rc, td->problems, totals);
}

/* ---------------------------------------------------------------- --stat */

int tb_tracedat_print_stat(struct tb_tracedat *td, FILE *out)
{
	fprintf(out, "cpus=%d\n", td->info.cpus);
	fputs("\nKernel buffer statistics:\n"
	      "  Note: \"entries\" are the entries left in the kernel ring buffer and are not\n"
	      "        recorded in the trace data. They should all be zero.\n\n",
	      out);
	if (td->cpustats)
		fprintf(out, "%s\n", td->cpustats);
	else
		fputs(" No stats in this file\n", out);
	/* The top buffer's own data, as trace-cmd shows it. */
	if (td->nbuffers && !td->buffers[0].name[0]) {
		const struct tdat_buffer *b = &td->buffers[0];
		for (int i = 0; i < b->pub.ncpus; i++)
			fprintf(out, "CPU%d data recorded at offset=0x%llx\n    %lld bytes in size\n",
				b->cpus[i].cpu, (unsigned long long)b->cpus[i].offset,
				(long long)b->cpus[i].size);
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}
