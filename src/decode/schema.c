// SPDX-License-Identifier: MIT
/*
 * schema.c - the events of one trace, by ID, and the libtraceevent handle
 * that prints them.
 *
 * Every format file goes through our own strict parser (format.c) first, so
 * that we know each event's field layout for certain and can refuse a file
 * with a precise message; only then is it handed to libtraceevent, which
 * owns the print-fmt rendering.  Records are later checked against the
 * layout before libtraceevent reads them (tb_schema_check_record), because
 * libtraceevent trusts the record it is given.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "comms.h"
#include "diag.h"
#include "util/id_table.h"
#include "schema_internal.h"
#include "usermaps.h"
#include "btf.h"
#include "constants.h"
#include "ksyms.h"
#include "ksyms_job.h"
#include "kstrings.h"
#include "kvars.h"
#include "schema_kernel.h"
#include "tep_trial.h"
#include "tracebuf/schema.h"

#define MAX_EVENT_ID 65535u /* common_type is 16 bits */
#define KSYM_NAME_MAX 512   /* the kernel's symbol names are shorter */

/*
 * libtraceevent learns an event only when a record of it is first printed:
 * handing it every format of a kernel (thousands, each tried in a child
 * first) would cost seconds at start-up for a trace that uses a few.
 */
enum tep_state { TEP_UNTRIED, TEP_KNOWN, TEP_REFUSED };

struct schema_event {
	struct tb_format format;
	char system[TB_NAME_MAX];
	char *file;   /* where the format came from, for messages */
	char *text;   /* the format file, kept until libtraceevent has seen it */
	size_t text_len;
	enum tep_state tep;
};

static void free_event(struct schema_event *ev)
{
	tb_format_free(&ev->format);
	free(ev->file);
	free(ev->text);
	free(ev);
}

struct tb_schema {
	struct tep_handle *tep;
	struct id_table by_id; /* struct schema_event * by ID, in blocks of the IDs loaded (id_table.h) */
	size_t nevents;
	struct tb_header_page header_page;
	bool have_header_page;
	bool have_symbols;
	uint64_t symbols_version; /* counts the tables adopted: tb_schema_symbols_version() */
	tb_problem_fn *diag;
	void *diag_ctx;
	unsigned long problems;
	tb_format_loader_fn *loader;
	void *loader_ctx;
	uint8_t asked[(MAX_EVENT_ID + 1) / 8]; /* IDs the loader was asked for */
	struct comms comms;
	struct tgid_pair *tgids; /* saved_tgids, sorted by pid */
	struct tb_usermaps *usermaps; /* proc_maps, or /proc when live; NULL: none (usermaps.h) */
	size_t ntgids;
	bool tep_has_tables; /* ksyms and kstrings handed to libtraceevent */
	void *print_state; /* the printer's per-schema state (compiled print fmts) */
	void (*print_state_free)(void *);
	/* What print fmts need beyond the format files (schema_kernel.h). */
	struct tb_ksyms *ksyms;
	struct ksyms_job *ksyms_job; /* kallsyms being parsed; ksyms is set when it is settled */
	/*
	 * User-space symbols (tb_schema_load_user_symbols), apart from the
	 * kernel's: each table keeps its own rule for which addresses resolve,
	 * and a kernel table's [_stext, _etext) would shut user addresses out
	 * of a merged one.
	 */
	struct tb_ksyms *user_ksyms;
	struct tb_kstrings *kstrings;
	struct tb_constants *constants;
	char *tracefs;       /* the running kernel's tracefs; NULL when reading a capture */
	struct tb_btf *btf;  /* the running kernel's, loaded on first need */
	bool btf_tried;
	/* a trace of the running release: its BTF fills gaps (tb_schema_trust_running_btf) */
	char same_release[65];
	bool btf_use_said;
	struct tb_kvars kvars;
	bool tep_verbatim; /* formats go to libtraceevent unfixed, as trace-cmd gives them */
};

/* The event loaded under id, or NULL. */
static inline struct schema_event *event_by_id(const struct tb_schema *s, uint32_t id)
{
	struct schema_event **slot = id_table_find(&s->by_id, id);

	return slot ? *slot : NULL;
}

void tb_problem_print(void *ctx, const struct tb_problem *d)
{
	FILE *f = ctx ? ctx : stderr;

	if (!d)
		return;
	fprintf(f, "tracebuf: %s%s: byte %llu: %s\n", d->warning ? "warning: " : "",
		d->file && *d->file ? d->file : "(input)", (unsigned long long)d->offset, d->reason);
}

static void report(struct tb_schema *s, const char *file, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(struct tb_schema *s, const char *file, uint64_t offset, const char *fmt, ...)
{
	struct tb_problem d = {.file = file};
	va_list ap;

	va_start(ap, fmt);
	diag_vset(&d, offset, fmt, ap);
	va_end(ap);
	s->problems++;
	s->diag(s->diag_ctx, &d);
}

/* A problem a parser described in *d, now attributed to file. */
static int report_diag(struct tb_schema *s, const char *file, const struct tb_problem *d)
{
	report(s, file, d->offset, "%s", d->reason);
	return -EINVAL;
}

/* A tb_problem_fn for the parsers that report each problem themselves. */
static void forward_diag(void *ctx, const struct tb_problem *d)
{
	struct tb_schema *s = ctx;

	s->problems++;
	s->diag(s->diag_ctx, d);
}

struct tb_schema *tb_schema_new(void)
{
	struct tb_schema *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	id_table_init(&s->by_id, sizeof(struct schema_event *));
	s->tep = tep_alloc();
	if (!s->tep) {
		tb_schema_free(s);
		return NULL;
	}
	/* The page codec reads 64-bit little-endian kernels; tell libtraceevent so. */
	tep_set_long_size(s->tep, 8);
	tep_set_file_bigendian(s->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(s->tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	s->diag = tb_problem_print;
	return s;
}

void tb_schema_free(struct tb_schema *s)
{
	struct schema_event **ev;

	if (!s)
		return;
	tep_trial_stop(); /* before the frees write to pages it shares (tep_trial.h) */
	schema_set_print_state(s, NULL, NULL); /* compiled programs point into the formats */
	schema_kallsyms_drop(s); /* never settled: its problems go unsaid */
	comms_free(&s->comms);
	free(s->tgids);
	tb_usermaps_free(s->usermaps);
	for (uint32_t id = 0; (ev = id_table_next(&s->by_id, &id)); id++)
		if (*ev)
			free_event(*ev);
	id_table_free(&s->by_id);
	if (s->tep)
		tep_free(s->tep);
	tb_ksyms_free(s->ksyms);
	tb_ksyms_free(s->user_ksyms);
	tb_kstrings_free(s->kstrings);
	tb_constants_free(s->constants);
	tb_btf_free(s->btf);
	free(s->tracefs);
	free(s);
}

void tb_schema_set_problem_fn(struct tb_schema *s, tb_problem_fn *fn, void *ctx)
{
	if (!s)
		return;
	s->diag = fn ? fn : tb_problem_print;
	s->diag_ctx = fn ? ctx : NULL;
}

unsigned long tb_schema_problems(const struct tb_schema *s)
{
	return s ? s->problems : 0;
}

/*
 * What every loader checks first: a schema, and text unless it is empty.
 * A NULL file name is reported as "".
 */
static int bad_load_args(const struct tb_schema *s, const char **file, const char *text, size_t len)
{
	if (!*file)
		*file = "";
	return !s || (!text && len) ? -EINVAL : 0;
}

/* A NUL-terminated copy for the libtraceevent calls that want C strings. */
static char *terminated_copy(const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (copy) {
		memcpy(copy, text, len);
		copy[len] = '\0';
	}
	return copy;
}

int tb_schema_load_header_page(struct tb_schema *s, const char *file, const char *text,
			       size_t len)
{
	struct tb_problem d = {0};
	char *copy;
	int rc = 0;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	if (tb_header_page_parse(text, len, &s->header_page, &d) < 0)
		return report_diag(s, file, &d);
	copy = terminated_copy(text, len);
	if (!copy)
		return -ENOMEM;
	if (tep_parse_header_page(s->tep, copy, len, 8) < 0) {
		report(s, file, 0, "libtraceevent refused this header_page");
		rc = -EINVAL;
	}
	free(copy);
	s->have_header_page = rc == 0;
	return rc;
}

int tb_schema_load_header_event(struct tb_schema *s, const char *file, const char *text,
				size_t len)
{
	struct tb_problem d = {0};

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	return tb_header_event_parse(text, len, &d) < 0 ? report_diag(s, file, &d) : 0;
}

/* ------------------------------------------ libtraceevent workaround */

/*
 * libtraceevent 1.7.1 drops the parentheses around the right operand of a
 * binary operator when the operator inside binds less tightly: it turns
 * "REC->flags & (0x40000 | 0x80000)" into "(REC->flags & 0x40000) | 0x80000"
 * (so timer_start prints flags=D|P|I where the kernel prints I).  Kernel
 * print fmts are full of such OR-ed mask constants, so before handing a
 * format over we replace every parenthesised OR of integer literals by the
 * single literal it equals.  Nothing else in the print fmt is touched.
 */
static size_t skip_spaces(const char *p, size_t i, size_t end)
{
	while (i < end && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return i;
}

/* An integer literal, or one in parentheses, at p[*i]; false if none. */
static bool literal_at(const char *p, size_t *i, size_t end, unsigned long long *v)
{
	size_t j = *i, start;
	int base = 10;

	if (j < end && p[j] == '(') {
		j = skip_spaces(p, j + 1, end);
		if (!literal_at(p, &j, end, v))
			return false;
		j = skip_spaces(p, j, end);
		if (j >= end || p[j] != ')')
			return false;
		*i = j + 1;
		return true;
	}
	if (end - j > 2 && p[j] == '0' && (p[j + 1] == 'x' || p[j + 1] == 'X'))
		j += 2, base = 16;
	else if (end - j > 1 && p[j] == '0' && isdigit((unsigned char)p[j + 1]))
		return false; /* octal: leave it to libtraceevent */
	start = j;
	*v = 0;
	for (; j < end && isxdigit((unsigned char)p[j]); j++) {
		unsigned d = isdigit((unsigned char)p[j]) ? (unsigned)(p[j] - '0')
							   : (unsigned)((p[j] | 0x20) - 'a' + 10);
		if (d >= (unsigned)base || *v > (~0ull - d) / (unsigned)base)
			return false;
		*v = *v * (unsigned)base + d;
	}
	if (j == start || (j < end && (isalnum((unsigned char)p[j]) || p[j] == '_')))
		return false;
	*i = j;
	return true;
}

/* "(LIT | LIT ...)" at p[open]: its value and the index after ')'. */
static bool or_group_at(const char *p, size_t open, size_t end, unsigned long long *value,
			size_t *after)
{
	size_t i = skip_spaces(p, open + 1, end);
	unsigned long long v;
	int terms = 0;

	*value = 0;
	for (;;) {
		if (!literal_at(p, &i, end, &v))
			return false;
		*value |= v;
		terms++;
		i = skip_spaces(p, i, end);
		if (i < end && p[i] == ')' && terms > 1) {
			*after = i + 1;
			return true;
		}
		if (i >= end || p[i] != '|' || (i + 1 < end && p[i + 1] == '|'))
			return false;
		i = skip_spaces(p, i + 1, end);
	}
}

/* Copy text[from..end) to out, folding OR groups outside string literals. */
static size_t fold_or_groups(const char *text, size_t from, size_t end, char *out)
{
	size_t o = 0, after;
	unsigned long long v;
	bool in_string = false;

	for (size_t i = from; i < end;) {
		char c = text[i];
		if (in_string) {
			out[o++] = text[i++];
			if (c == '\\' && i < end)
				out[o++] = text[i++];
			else if (c == '"')
				in_string = false;
		} else if (c == '(' && or_group_at(text, i, end, &v, &after)) {
			/* The folded literal is never longer than the group it replaces. */
			o += (size_t)sprintf(out + o, "(0x%llx)", v);
			i = after;
		} else {
			in_string = c == '"';
			out[o++] = text[i++];
		}
	}
	return o;
}

/* The format text with OR groups folded in its print fmt line; caller frees. */
static char *format_for_libtraceevent(const char *text, size_t len, size_t print_fmt_at,
				      size_t *out_len)
{
	char *out = malloc(len + 1);

	if (!out)
		return NULL;
	memcpy(out, text, print_fmt_at);
	*out_len = print_fmt_at + fold_or_groups(text, print_fmt_at, len, out + print_fmt_at);
	out[*out_len] = '\0';
	return out;
}

/* -------------------------------------------------------- format files */

static bool system_name_ok(const char *system)
{
	size_t n = system ? strlen(system) : 0;

	return n > 0 && n < TB_NAME_MAX && !strpbrk(system, "/ \t\n");
}

static int check_system_name(struct tb_schema *s, const char *file, const char *system)
{
	if (!system_name_ok(system)) {
		report(s, file, 0, "bad system name '%.40s'", system ? system : "");
		return -EINVAL;
	}
	return 0;
}

/*
 * libtraceevent 1.7.1 crashes on some malformed print fmts (NULL
 * dereferences in its parser: fuzz/fuzz_format.c found "REC->x^, ...").
 * It is only ever handed a format whose print fmt our own compiler did not
 * find malformed (printers.c), and that format is tried in a child process
 * first (tep_trial.c): the compiler stops at the first construct it
 * declines, so what follows that is not checked by it.
 */
/*
 * libtraceevent parses a print fmt by recursion, one level per bracket, so a
 * print fmt nested 200,000 deep overflows its stack (and our own OR-group
 * folding would take quadratic time first).  Kernel print fmts nest a few
 * levels; refuse anything deeper than MAX_PRINT_FMT_DEPTH before either
 * sees it, in one pass.  Brackets inside string and character literals do
 * not count.  0, or -EINVAL with *at the index of the first bracket too deep.
 */
#define MAX_PRINT_FMT_DEPTH 256

static int check_nesting(const char *p, size_t len, size_t *at)
{
	size_t depth = 0;
	char quote = 0;

	/*
	 * p is the format's copy of its print fmt, a NUL at p[len]: strcspn()
	 * steps over the bytes that change nothing (most of them) at once.  A
	 * NUL before len stops it there; it is such a byte too.
	 */
	for (size_t i = 0; i < len; i++) {
		i += strcspn(p + i, quote == '"' ? "\"\\" : quote ? "'\\" : "\"'([{)]}");
		if (i >= len)
			break;
		char c = p[i];
		if (quote) {
			if (c == '\\')
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '(' || c == '[' || c == '{') {
			if (++depth > MAX_PRINT_FMT_DEPTH) {
				*at = i;
				return -EINVAL;
			}
		} else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

/* Hand the format to libtraceevent; 0 if it now knows the event. */
static int register_with_tep(struct tb_schema *s, const char *file, const char *system,
			     const char *text, size_t len, const struct tb_format *f)
{
	struct tep_event *ev;
	size_t fixed_len = 0;
	char *fixed = s->tep_verbatim ? strndup(text, len)
				      : format_for_libtraceevent(text, len, f->print_fmt_offset, &fixed_len);
	char msg[128];
	enum tep_errno rc;
	int how = 0;

	if (!fixed)
		return -ENOMEM;
	if (s->tep_verbatim)
		fixed_len = strlen(fixed);
	if (tep_trial(fixed, fixed_len, system, f, &how) < 0) {
		free(fixed);
		report(s, file, f->print_fmt_offset, "libtraceevent crashes on this print fmt (%s %d in "
		       "a trial run); event %s left out", how > 0 ? "signal" : "exit status",
		       how > 0 ? how : -how, f->name);
		return -EINVAL;
	}
	rc = tep_parse_event(s->tep, fixed, fixed_len, system);
	free(fixed);
	ev = tep_find_event(s->tep, (int)f->id);
	if (rc != 0 || !ev) {
		tep_strerror(s->tep, rc, msg, sizeof(msg));
		report(s, file, f->print_fmt_offset, "libtraceevent refused the format: %s", msg);
		return -EINVAL;
	}
	if (ev->flags & TEP_EVENT_FL_FAILED)
		report(s, file, f->print_fmt_offset,
		       "libtraceevent cannot parse this print fmt; records of %s print as raw fields",
		       f->name);
	return 0;
}

/*
 * Everything a format must pass to be kept, each failure reported: *f
 * filled on 0, nothing to free otherwise (-EINVAL, -ENOMEM).
 */
static int check_format(struct tb_schema *s, const char *file, const char *text, size_t len,
			struct tb_format *f)
{
	struct tb_problem d = {0};
	size_t at = 0;
	int rc = tb_format_parse(text, len, f, &d);

	if (rc == -EINVAL)
		report_diag(s, file, &d);
	else if (rc == 0 && event_by_id(s, f->id)) {
		const struct schema_event *old = event_by_id(s, f->id);
		report(s, file, f->id_offset, "ID %u is already used by %s/%s", f->id, old->system, old->format.name);
		rc = -EINVAL;
	}
	if (rc == 0 && check_nesting(f->print_fmt, f->print_fmt_len, &at) < 0) {
		report(s, file, f->print_fmt_text_offset + at, "print fmt nests brackets "
		       "deeper than %d; event %s left out", MAX_PRINT_FMT_DEPTH, f->name);
		rc = -EINVAL;
	}
	if (rc < 0)
		tb_format_free(f);
	return rc;
}

int tb_schema_load_format(struct tb_schema *s, const char *file, const char *system,
			  const char *text, size_t len)
{
	struct schema_event *ev, **slot = NULL;
	int rc;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	if (check_system_name(s, file, system) < 0)
		return -EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	rc = check_format(s, file, text, len, &ev->format);
	if (rc == 0 && (!(ev->file = strdup(file ? file : "")) || !(ev->text = malloc(len ? len : 1)) ||
			!(slot = id_table_slot(&s->by_id, ev->format.id))))
		rc = -ENOMEM;
	if (rc < 0) {
		free_event(ev);
		return rc;
	}
	memcpy(ev->text, text, len);
	ev->text_len = len;
	strcpy(ev->system, system);
	*slot = ev;
	s->nevents++;
	return 0;
}

bool schema_format_clean(const struct tb_schema *s, const char *system, const char *text, size_t len)
{
	struct tb_problem unsaid;
	struct tb_format f;
	size_t at;
	bool clean;

	if (!text || !system_name_ok(system) || tb_format_parse(text, len, &f, &unsaid) < 0)
		return false;
	clean = !event_by_id(s, f.id) && check_nesting(f.print_fmt, f.print_fmt_len, &at) == 0;
	tb_format_free(&f);
	return clean;
}

int schema_check_format(struct tb_schema *s, const char *file, const char *system, const char *text, size_t len)
{
	struct tb_format f;
	int rc;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	if (check_system_name(s, file, system) < 0)
		return -EINVAL;
	rc = check_format(s, file, text, len, &f);
	if (rc == 0)
		tb_format_free(&f);
	return rc;
}

/* Make sure libtraceevent knows ev (once); false if it refused it. */
static int tep_learn_tables(struct tb_schema *s);

/*
 * Whether libtraceevent may look a kernel symbol or printk string up to
 * print ev: a %p directive (%pS, %ps, ...) or one of ftrace's own events
 * (bprint, bputs, function, stacks).  Handing it the tables costs a call
 * and an allocation per symbol (150,000 of them), so only for those.
 */
static bool tep_needs_tables(const struct schema_event *ev)
{
	return !strcmp(ev->system, "ftrace") || !ev->format.print_fmt || strstr(ev->format.print_fmt, "%p");
}

static bool tep_knows(struct tb_schema *s, struct schema_event *ev)
{
	if (!s->tep_has_tables && tep_needs_tables(ev)) {
		s->tep_has_tables = true;
		if (tep_learn_tables(s) < 0)
			report(s, "", 0, "out of memory handing symbols to libtraceevent");
	}
	if (ev->tep == TEP_UNTRIED) {
		int rc = register_with_tep(s, ev->file, ev->system, ev->text, ev->text_len, &ev->format);
		ev->tep = rc == 0 ? TEP_KNOWN : TEP_REFUSED;
		free(ev->text);
		ev->text = NULL;
	}
	return ev->tep == TEP_KNOWN;
}

/* ------------------------------------------------------ lookup tables */

/* One "PID COMM" line of saved_cmdlines; 0 or -EINVAL with the bad offset. */
static int parse_cmdline(const char *p, size_t len, int *pid, char *comm, size_t comm_size,
			 size_t *bad)
{
	size_t i = 0;
	long v = 0;

	while (i < len && p[i] >= '0' && p[i] <= '9' && v <= 4194304)
		v = v * 10 + (p[i++] - '0');
	if (i == 0 || v > 4194304 || i == len || (p[i] != ' ' && p[i] != '\t')) {
		*bad = i;
		return -EINVAL;
	}
	while (i < len && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (i == len || len - i >= comm_size || memchr(p + i, '\0', len - i)) {
		*bad = i;
		return -EINVAL;
	}
	memcpy(comm, p + i, len - i);
	comm[len - i] = '\0';
	*pid = (int)v;
	return 0;
}

/* Lines in text: newlines, and one more if the last does not end in one. */
static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0;

	for (const char *p = text, *end = text + len; p < end; n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	return n;
}

int tb_schema_load_cmdlines(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	size_t pos = 0, bad;
	char comm[64];
	int pid, rc = 0;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	if (comms_reserve(&s->comms, count_lines(text, len)) < 0)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		if (n > 0 && parse_cmdline(text + pos, n, &pid, comm, sizeof(comm), &bad) < 0) {
			report(s, file, pos + bad, "saved_cmdlines line is not 'PID COMM'");
			rc = -EINVAL;
		} else if (n > 0) {
			if (comms_add(&s->comms, pid, comm, strlen(comm)) < 0)
				return -ENOMEM;
			errno = 0; /* a pid listed twice fails with EEXIST: first one wins */
			if (tep_register_comm(s->tep, comm, pid) < 0 && errno == ENOMEM)
				return -ENOMEM;
		}
		pos += n + 1;
	}
	return rc;
}

/* A pid's thread group, from saved_tgids (the record-tgid option's column). */
struct tgid_pair {
	int32_t pid, tgid;
};

static int by_pid(const void *a, const void *b)
{
	const struct tgid_pair *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* A saved_tgids line "PID TGID": the cmdline parser's, with a number for the name. */
static int parse_tgid_line(const char *p, size_t len, struct tgid_pair *pair, size_t *bad)
{
	char tgid[16], *end;
	int pid;
	long v;

	if (parse_cmdline(p, len, &pid, tgid, sizeof(tgid), bad) < 0)
		return -EINVAL;
	errno = 0;
	v = strtol(tgid, &end, 10);
	if (*end || errno || v < 0 || v > INT32_MAX) {
		*bad = (size_t)(strchr(p, ' ') ? strchr(p, ' ') - p + 1 : 0);
		return -EINVAL;
	}
	*pair = (struct tgid_pair){pid, (int32_t)v};
	return 0;
}

int tb_schema_load_tgids(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	size_t pos = 0, bad, cap;
	int rc = 0;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	cap = s->ntgids + count_lines(text, len);
	struct tgid_pair *grown = realloc(s->tgids, (cap ? cap : 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	s->tgids = grown;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		if (n > 0 && parse_tgid_line(text + pos, n, &s->tgids[s->ntgids], &bad) < 0) {
			report(s, file, pos + bad, "saved_tgids line is not 'PID TGID'");
			rc = -EINVAL;
		} else if (n > 0) {
			s->ntgids++;
		}
		pos += n + 1;
	}
	qsort(s->tgids, s->ntgids, sizeof(*s->tgids), by_pid);
	return rc;
}

int32_t schema_tgid(const struct tb_schema *s, int32_t pid)
{
	struct tgid_pair key = {pid, 0};
	const struct tgid_pair *hit = s->ntgids ? bsearch(&key, s->tgids, s->ntgids, sizeof(key), by_pid) : NULL;

	return hit ? hit->tgid : 0;
}

/* The schema's user maps, made on first need; NULL: no memory. */
static struct tb_usermaps *usermaps_of(struct tb_schema *s, bool live)
{
	if (!s->usermaps)
		s->usermaps = tb_usermaps_new(live);
	return s->usermaps;
}

int tb_schema_load_proc_maps(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	struct tb_usermaps *m;
	size_t bad = 0;
	int rc;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	if (!(m = usermaps_of(s, false)))
		return -ENOMEM;
	rc = tb_usermaps_load(m, text, len, &bad);
	if (rc == -EINVAL)
		report(s, file, bad, "proc_maps line is not 'TGID START-END[ PATH]'; the lines after it "
				     "left out");
	return rc;
}

void tb_schema_use_live_proc_maps(struct tb_schema *s)
{
	if (s && !s->usermaps)
		usermaps_of(s, true);
}

int tb_schema_user_vma(void *schema, uint32_t tgid, uint64_t ip, uint64_t *start, const char **path)
{
	struct tb_schema *s = schema;

	return s ? tb_usermaps_find(s->usermaps, tgid, ip, start, path) : -ESRCH;
}

/*
 * Our own tables answer every lookup (ksyms.c, kstrings.c).  libtraceevent,
 * now only the fallback printer, gets their entries - what our strict
 * parsers accepted, never the raw text, which its parsers trust (a short
 * printk_formats line is read out of bounds) - when it is first needed.
 * Without privileges (kptr_restrict) every kallsyms address reads 0 and
 * there is nothing to resolve with: not an error.
 */
/* A parse's table (rc and k as tb_ksyms_parse() sets them) becomes *table. */
static int adopt_symbols(struct tb_schema *s, struct tb_ksyms **table, int rc, struct tb_ksyms *k)
{
	if (rc == -ENOENT)
		return 0;
	if (!k)
		return rc;
	tb_ksyms_free(*table);
	*table = k;
	s->have_symbols = true;
	s->symbols_version++;
	return rc;
}

static int load_symbols(struct tb_schema *s, struct tb_ksyms **table, const char *file,
			const char *text, size_t len)
{
	struct tb_ksyms *k;
	int rc;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	rc = tb_ksyms_parse(file, text, len, forward_diag, s, &k);
	return adopt_symbols(s, table, rc, k);
}

int schema_kallsyms_start(struct tb_schema *s, const char *file, ksyms_fill_fn *fill, void *ctx)
{
	/* A second kallsyms replaces the first, as a load does. */
	if (schema_kallsyms_settle(s) == -ENOMEM)
		return -ENOMEM;
	return ksyms_job_start(file, fill, ctx, &s->ksyms_job);
}

int schema_kallsyms_filled(struct tb_schema *s, size_t *len)
{
	*len = 0;
	return s->ksyms_job ? ksyms_job_filled(s->ksyms_job, len) : 0;
}

void schema_kallsyms_drop(struct tb_schema *s)
{
	struct tb_ksyms *k;

	if (!s->ksyms_job)
		return;
	ksyms_job_finish(s->ksyms_job, NULL, NULL, &k);
	s->ksyms_job = NULL;
	tb_ksyms_free(k);
}

bool schema_kallsyms_pending(const struct tb_schema *s)
{
	return s->ksyms_job != NULL;
}

int schema_kallsyms_settle(struct tb_schema *s)
{
	struct ksyms_job *j = s->ksyms_job;
	struct tb_ksyms *k;
	int rc;

	if (!j)
		return 0;
	s->ksyms_job = NULL; /* before its problems are told: telling one may ask to settle */
	rc = ksyms_job_finish(j, forward_diag, s, &k);
	return adopt_symbols(s, &s->ksyms, rc, k);
}

int tb_schema_load_kallsyms(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	return load_symbols(s, s ? &s->ksyms : NULL, file, text, len);
}

int tb_schema_load_user_symbols(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	return load_symbols(s, s ? &s->user_ksyms : NULL, file, text, len);
}

int tb_schema_load_printk_formats(struct tb_schema *s, const char *file, const char *text,
				  size_t len)
{
	struct tb_kstrings *k;
	int rc;

	if (bad_load_args(s, &file, text, len))
		return -EINVAL;
	rc = tb_kstrings_parse(file, text, len, forward_diag, s, &k);
	if (!k)
		return rc;
	tb_kstrings_free(s->kstrings);
	s->kstrings = k;
	return rc;
}

/*
 * The tables, for libtraceevent.  It keeps a printk string without one
 * trailing newline and wants it quoted as the file has it; it gets the
 * string with every newline, tab and quote escaped back and a newline
 * added where there was none, which its register call strips again.
 */
static int tep_learn_tables(struct tb_schema *s)
{
	struct tb_ksym sym;
	uint64_t addr;
	int rc = 0;

	for (size_t i = 0; i < tb_ksyms_count(s->ksyms) && rc == 0; i++) {
		tb_ksyms_at(s->ksyms, i, &sym);
		if (tep_register_function(s->tep, (char *)sym.name, sym.start, (char *)sym.module) < 0)
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < tb_ksyms_count(s->user_ksyms) && rc == 0; i++) {
		tb_ksyms_at(s->user_ksyms, i, &sym);
		if (tep_register_function(s->tep, (char *)sym.name, sym.start, (char *)sym.module) < 0)
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < tb_kstrings_count(s->kstrings) && rc == 0; i++) {
		const char *text = tb_kstrings_at(s->kstrings, i, &addr);
		size_t n = strlen(text);
		char *quoted = malloc(2 * n + 5), *q = quoted;
		if (!quoted)
			return -ENOMEM;
		*q++ = '"';
		for (size_t j = 0; j < n; j++) {
			char c = text[j];
			if (c == '\n' || c == '\t' || c == '"')
				*q++ = '\\', c = c == '\n' ? 'n' : c == '\t' ? 't' : '"';
			*q++ = c;
		}
		if (n == 0 || text[n - 1] != '\n')
			*q++ = '\\', *q++ = 'n';
		*q++ = '"';
		*q = '\0';
		if (tep_register_print_string(s->tep, quoted, addr) < 0)
			rc = -ENOMEM;
		free(quoted);
	}
	return rc;
}

int tb_schema_load_constants(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	if (!s->constants && !(s->constants = tb_constants_new()))
		return -ENOMEM;
	return tb_constants_parse(s->constants, file, text, len, forward_diag, s);
}

/* ----------------------------------------------- the kernel beyond formats */

const struct tb_ksyms *tb_schema_ksyms(const struct tb_schema *s)
{
	return s->ksyms;
}

void tb_schema_use_running_kernel(struct tb_schema *s, const char *tracefs)
{
	free(s->tracefs);
	s->tracefs = tracefs ? strdup(tracefs) : NULL;
}

const char *tb_schema_symbol(void *schema, uint64_t addr, uint64_t *start, uint64_t *size,
			     const char **module)
{
	struct tb_schema *s = schema;
	struct tb_ksym k;

	if (!tb_ksyms_lookup(s->ksyms, addr, &k) && !tb_ksyms_lookup(s->user_ksyms, addr, &k))
		return NULL;
	if (start)
		*start = k.start;
	if (size)
		*size = k.size;
	if (module)
		*module = k.module;
	return k.name;
}

const char *tb_schema_kernel_string(void *schema, uint64_t addr)
{
	struct tb_schema *s = schema;

	return tb_kstrings_find(s->kstrings, addr);
}

/* The running kernel's BTF, read the first time it is asked for; NULL for captures. */
static const struct tb_btf *running_btf(struct tb_schema *s)
{
	struct tb_problem d = {0};
	int rc;

	if (s->btf || (!s->tracefs && !s->same_release[0]) || s->btf_tried)
		return s->btf;
	s->btf_tried = true;
	rc = tb_btf_load(TB_BTF_VMLINUX, &s->btf, &d);
	if (rc < 0 && rc != -ENOENT)
		report(s, TB_BTF_VMLINUX, d.offset, "%s; kernel constants will not resolve", d.reason);
	return s->btf;
}

/*
 * A kernel variable: pinned by tb_schema_set_kernel_var, else probed on
 * the running kernel the first time it is asked for (jiffies is then the
 * value of that moment).
 */
static bool kernel_var(struct tb_schema *s, const char *name, uint64_t *value)
{
	if (tb_kvars_get(&s->kvars, name, value))
		return true;
	if (!s->tracefs)
		return false;
	return tb_kvars_probe(name, s->tracefs, running_btf(s), s->ksyms, &s->kvars, NULL, NULL) == 0 &&
	       tb_kvars_get(&s->kvars, name, value);
}

int tb_schema_set_kernel_var(struct tb_schema *s, const char *name, uint64_t value)
{
	return tb_kvars_set(&s->kvars, name, value);
}

void tb_schema_trust_running_btf(struct tb_schema *s, const char *release)
{
	struct utsname uts;

	if (s && release && *release && uname(&uts) == 0 && !strcmp(uts.release, release))
		snprintf(s->same_release, sizeof(s->same_release), "%s", release);
}

/* A value the trace lacks was just taken from the running kernel's BTF: said the first time. */
static void say_btf_used(struct tb_schema *s, const char *name)
{
	struct tb_problem d = {.file = TB_BTF_VMLINUX, .warning = true};

	if (s->tracefs || s->btf_use_said)
		return;
	s->btf_use_said = true;
	/* a reason cut short is still a reason: the release is the last thing said */
	if (snprintf(d.reason, sizeof(d.reason),
		     "values the trace does not carry (%.40s, ...) are taken from this kernel's BTF: "
		     "the trace was made on the release running here, %s",
		     name, s->same_release) < 0)
		d.reason[0] = '\0';
	s->diag(s->diag_ctx, &d); /* a warning: not counted as a problem */
}

bool tb_schema_constant(void *schema, const char *name, int64_t *value)
{
	struct tb_schema *s = schema;
	const struct tb_btf *btf;
	uint64_t u;

	if (tb_constants_value(s->constants, name, value))
		return true;
	btf = running_btf(s);
	if (btf && tb_btf_enum_value(btf, name, value)) {
		say_btf_used(s, name);
		return true;
	}
	if (tb_kvars_known(name) && kernel_var(s, name, &u)) {
		*value = (int64_t)u;
		return true;
	}
	return tb_constants_builtin(name, value);
}

bool tb_schema_type_size(void *schema, const char *type, uint64_t *size)
{
	struct tb_schema *s = schema;
	const struct tb_btf *btf;

	if (tb_constants_type_size(s->constants, type, size))
		return true;
	btf = running_btf(s);
	if (!btf || !tb_btf_type_size(btf, type, size))
		return false;
	say_btf_used(s, type);
	return true;
}

int tb_schema_write_constants(struct tb_schema *s, const struct tb_format *const *formats,
			      size_t n, FILE *out)
{
	struct tb_constants_source src = {s, tb_schema_constant, tb_schema_type_size};
	const struct tb_format **all = NULL;
	struct schema_event **ev;
	int rc;

	if (!formats) {
		all = malloc((s->nevents + 1) * sizeof(*all));
		if (!all)
			return -ENOMEM;
		n = 0;
		for (uint32_t id = 0; (ev = id_table_next(&s->by_id, &id)); id++)
			if (*ev)
				all[n++] = &(*ev)->format;
		formats = all;
	}
	rc = tb_constants_write(out, formats, n, &src);
	free(all);
	return rc;
}

/* ------------------------------------------------------------- queries */

size_t tb_schema_subbuf_size(const struct tb_schema *s)
{
	return s && s->have_header_page ? (size_t)s->header_page.data_offset + s->header_page.data_size
				   : 0;
}

size_t tb_schema_event_count(const struct tb_schema *s)
{
	return s ? s->nevents : 0;
}

bool tb_schema_has_symbols(const struct tb_schema *s)
{
	return s && s->have_symbols;
}

const uint64_t *tb_schema_symbols_version(const struct tb_schema *s)
{
	return &s->symbols_version;
}

const struct tb_format *tb_schema_event(const struct tb_schema *s, uint32_t id,
					const char **system)
{
	const struct schema_event *ev = s ? event_by_id(s, id) : NULL;

	if (ev && system)
		*system = ev->system;
	return ev ? &ev->format : NULL;
}

const struct tb_format *schema_next_event(const struct tb_schema *s, uint32_t *id, const char **system)
{
	struct schema_event **slot;

	for (uint32_t i = *id; s && (slot = id_table_next(&s->by_id, &i)); i++)
		if (*slot) {
			*id = i;
			if (system)
				*system = (*slot)->system;
			return &(*slot)->format;
		}
	return NULL;
}

void tb_schema_set_loader(struct tb_schema *s, tb_format_loader_fn *fn, void *ctx)
{
	if (!s)
		return;
	s->loader = fn;
	s->loader_ctx = ctx;
}

const struct tb_format *tb_schema_find_event(struct tb_schema *s, uint32_t id,
					     const char **system)
{
	struct schema_event *ev = s ? event_by_id(s, id) : NULL;
	uint8_t bit = (uint8_t)(1u << (id % 8));

	if (!ev && s && s->loader && id <= MAX_EVENT_ID && !(s->asked[id / 8] & bit)) {
		s->asked[id / 8] |= bit;
		s->loader(s->loader_ctx, s, id);
		ev = event_by_id(s, id);
	}
	if (!ev)
		return NULL;
	if (system)
		*system = ev->system;
	return &ev->format;
}

bool schema_tep_ready(struct tb_schema *s, uint32_t id)
{
	struct schema_event *ev = event_by_id(s, id);

	return ev && tep_knows(s, ev);
}

void schema_report_format(struct tb_schema *s, uint32_t id, uint64_t offset, const char *reason)
{
	struct schema_event *ev = event_by_id(s, id);

	report(s, ev ? ev->file : "", offset, "%s", reason);
}

const char *tb_schema_comm(const struct tb_schema *s, int pid, size_t *len)
{
	return comms_lookup(&s->comms, pid, len);
}

const char *schema_comm_column(const struct tb_schema *s, int pid, size_t *len)
{
	return comms_column(&s->comms, pid, len);
}

void schema_set_print_state(struct tb_schema *s, void *state, void (*free_fn)(void *))
{
	if (s->print_state_free)
		s->print_state_free(s->print_state);
	s->print_state = state;
	s->print_state_free = free_fn;
}

void *schema_print_state(const struct tb_schema *s)
{
	return s->print_state;
}

void schema_set_tep_verbatim(struct tb_schema *s, bool verbatim)
{
	s->tep_verbatim = verbatim;
}

struct tep_handle *schema_tep(struct tb_schema *s)
{
	return s ? s->tep : NULL;
}

/* ------------------------------------------------------ record checks */


/* A __data_loc / __rel_loc field must point inside the record. */
static int check_dynamic_field(const struct tb_schema_field *f, const uint8_t *data, uint32_t len,
			       struct tb_problem *err)
{
	uint32_t word = 0, start, size;

	memcpy(&word, data + f->offset, f->size); /* little endian, like the data */
	start = word & 0xffff;
	size = f->size == 2 ? (start <= len ? len - start : 0) : word >> 16;
	if (f->kind == TB_SCHEMA_FIELD_REL_LOC)
		start += f->offset + f->size;
	if ((uint64_t)start + size > len)
		return diag_fail(err, f->offset, "field %s points to bytes %u..%u of a %u-byte "
				   "record", f->name, start, start + size, len);
	if (f->is_string && size > 0 && !memchr(data + start, '\0', size))
		return diag_fail(err, start, "string field %s is not NUL-terminated", f->name);
	return 0;
}

int tb_schema_check_record(const struct tb_format *f, const void *data, uint32_t len,
			   struct tb_problem *err)
{
	if (!f || (!data && len))
		return diag_fail(err, 0, "no format or no record");
	if (len < f->min_size)
		return diag_fail(err, len, "record of %u bytes is shorter than the %u bytes "
				   "event %s needs", len, f->min_size, f->name);
	for (size_t i = 0; i < f->nfields; i++)
		if (f->fields[i].kind != TB_SCHEMA_FIELD_STATIC &&
		    check_dynamic_field(&f->fields[i], data, len, err) < 0)
			return -EINVAL;
	return 0;
}
