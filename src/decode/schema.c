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
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "comms.h"
#include "diag.h"
#include "schema_internal.h"
#include "tracebuf/schema.h"

#define MAX_EVENT_ID 65535u /* common_type is 16 bits */

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
	tb_format_release(&ev->format);
	free(ev->file);
	free(ev->text);
	free(ev);
}

struct tb_schema {
	struct tep_handle *tep;
	struct schema_event **by_id; /* MAX_EVENT_ID + 1 slots */
	size_t nevents;
	struct tb_header_page header_page;
	bool have_header_page;
	bool have_symbols;
	tb_diag_fn *diag;
	void *diag_ctx;
	unsigned long problems;
	tb_format_loader_fn *loader;
	void *loader_ctx;
	uint8_t asked[(MAX_EVENT_ID + 1) / 8]; /* IDs the loader was asked for */
	struct comms comms;
	void *print_state; /* the printer's per-schema state (compiled print fmts) */
	void (*print_state_free)(void *);
	bool tep_verbatim; /* formats go to libtraceevent unfixed, as trace-cmd gives them */
};

void tb_diag_print(void *ctx, const struct tb_diag *d)
{
	FILE *f = ctx ? ctx : stderr;

	fprintf(f, "tracebuf: %s%s: byte %llu: %s\n", d->warning ? "warning: " : "",
		d->file && *d->file ? d->file : "(input)", (unsigned long long)d->offset, d->reason);
}

static void report(struct tb_schema *s, const char *file, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(struct tb_schema *s, const char *file, uint64_t offset, const char *fmt, ...)
{
	struct tb_diag d = {.file = file};
	va_list ap;

	va_start(ap, fmt);
	diag_vset(&d, offset, fmt, ap);
	va_end(ap);
	s->problems++;
	s->diag(s->diag_ctx, &d);
}

/* A problem a parser described in *d, now attributed to file. */
static int report_diag(struct tb_schema *s, const char *file, const struct tb_diag *d)
{
	report(s, file, d->offset, "%s", d->reason);
	return -EINVAL;
}

struct tb_schema *tb_schema_new(void)
{
	struct tb_schema *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->by_id = calloc(MAX_EVENT_ID + 1, sizeof(*s->by_id));
	s->tep = tep_alloc();
	if (!s->by_id || !s->tep) {
		tb_schema_free(s);
		return NULL;
	}
	/* The page codec reads 64-bit little-endian kernels; tell libtraceevent so. */
	tep_set_long_size(s->tep, 8);
	tep_set_file_bigendian(s->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(s->tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	s->diag = tb_diag_print;
	return s;
}

void tb_schema_free(struct tb_schema *s)
{
	if (!s)
		return;
	schema_set_print_state(s, NULL, NULL); /* compiled programs point into the formats */
	comms_free(&s->comms);
	if (s->by_id)
		for (size_t id = 0; id <= MAX_EVENT_ID; id++)
			if (s->by_id[id])
				free_event(s->by_id[id]);
	free(s->by_id);
	if (s->tep)
		tep_free(s->tep);
	free(s);
}

void tb_schema_set_diag(struct tb_schema *s, tb_diag_fn *fn, void *ctx)
{
	s->diag = fn ? fn : tb_diag_print;
	s->diag_ctx = fn ? ctx : NULL;
}

unsigned long tb_schema_problems(const struct tb_schema *s)
{
	return s->problems;
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
	struct tb_diag d = {0};
	char *copy;
	int rc = 0;

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
	struct tb_diag d = {0};

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

static int check_system_name(struct tb_schema *s, const char *file, const char *system)
{
	size_t n = system ? strlen(system) : 0;

	if (n == 0 || n >= TB_NAME_MAX || strpbrk(system, "/ \t\n")) {
		report(s, file, 0, "bad system name '%.40s'", system ? system : "");
		return -EINVAL;
	}
	return 0;
}

/*
 * libtraceevent 1.7.1 crashes on some malformed print fmts (NULL
 * dereferences in its parser: fuzz/fuzz_format.c found "REC->x^, ...") and
 * divides by fields that can be zero when printing.  Format files are
 * input, so each one is first parsed - and printed once with an all-zero
 * record - by a short-lived child process, and only a format the child
 * survives is parsed here.
 */
#define TRIAL_PARSED 42  /* child exit: libtraceevent parsed and printed it */
#define TRIAL_REFUSED 43 /* child exit: libtraceevent refused it cleanly */
#define TRIAL_CRASHED 44 /* child exit: it crashed */
#define TRIAL_SECONDS 5  /* a parser that hangs counts as a crash */

static void trial_crashed(int sig)
{
	(void)sig;
	_exit(TRIAL_CRASHED);
}

/*
 * In the child, a crash ends the child and nothing else: whatever crash
 * handlers the process had (a sanitizer's, a fuzzer's that saves the input)
 * belong to the parent.
 */
static void trial_signals(void)
{
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = trial_crashed;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	signal(SIGALRM, SIG_DFL);
}

static int trial_parse(const char *text, size_t len, const char *system, const struct tb_format *f)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_record rec = {.size = (int)f->min_size};
	struct trace_seq seq;

	if (!tep || tep_parse_event(tep, text, len, system) != 0 || !tep_find_event(tep, (int)f->id))
		return TRIAL_REFUSED;
	rec.data = calloc(1, (size_t)f->min_size + 64);
	if (!rec.data)
		return TRIAL_REFUSED;
	memcpy(rec.data, &(uint16_t){(uint16_t)f->id}, 2);
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	return TRIAL_PARSED; /* _exit() follows: nothing to free */
}

/* 0 if libtraceevent survives the format, -EFAULT if it crashed or hung. */
static int trial_in_child(const char *text, size_t len, const char *system,
			  const struct tb_format *f, int *how)
{
	int status = 0, null;
	pid_t pid = fork();

	if (pid < 0)
		return 0; /* cannot isolate: take the risk rather than lose the event */
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO); /* a sanitizer's crash report is noise here */
		trial_signals();
		alarm(TRIAL_SECONDS);
		_exit(trial_parse(text, len, system, f));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	if (WIFEXITED(status) &&
	    (WEXITSTATUS(status) == TRIAL_PARSED || WEXITSTATUS(status) == TRIAL_REFUSED))
		return 0;
	*how = WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
	return -EFAULT;
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
	if (trial_in_child(fixed, fixed_len, system, f, &how) < 0) {
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

int tb_schema_load_format(struct tb_schema *s, const char *file, const char *system,
			  const char *text, size_t len)
{
	struct schema_event *ev;
	struct tb_diag d = {0};
	int rc;

	if (check_system_name(s, file, system) < 0)
		return -EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	rc = tb_format_parse(text, len, &ev->format, &d);
	if (rc == -EINVAL)
		report_diag(s, file, &d);
	else if (rc == 0 && s->by_id[ev->format.id]) {
		const struct schema_event *old = s->by_id[ev->format.id];
		report(s, file, ev->format.id_offset, "ID %u is already used by %s/%s", ev->format.id,
		       old->system, old->format.name);
		rc = -EINVAL;
	}
	if (rc == 0 && (!(ev->file = strdup(file ? file : "")) || !(ev->text = malloc(len ? len : 1))))
		rc = -ENOMEM;
	if (rc < 0) {
		free_event(ev);
		return rc;
	}
	memcpy(ev->text, text, len);
	ev->text_len = len;
	strcpy(ev->system, system);
	s->by_id[ev->format.id] = ev;
	s->nevents++;
	return 0;
}

/* Make sure libtraceevent knows ev (once); false if it refused it. */
static bool tep_knows(struct tb_schema *s, struct schema_event *ev)
{
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

int tb_schema_load_cmdlines(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	size_t pos = 0, bad;
	char comm[64];
	int pid, rc = 0;

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

/*
 * Without privileges (kptr_restrict) every address in kallsyms reads 0 and
 * there is nothing to resolve with.  Real files start with a few per-CPU
 * symbols at 0 too, so look for any line whose address is not 0.
 */
static bool addresses_hidden(const char *text, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		for (size_t i = 0; i < n && isxdigit((unsigned char)text[pos + i]); i++)
			if (text[pos + i] != '0')
				return false;
		pos += n + 1;
	}
	return true;
}

/*
 * Hand a NUL-terminated copy of a text file to a libtraceevent parser that
 * wants a C string; a refusal is reported against the file as "what".
 */
static int parse_text_file(struct tb_schema *s, const char *file, const char *text, size_t len,
			   int (*parse)(struct tep_handle *, const char *), const char *what)
{
	char *copy = terminated_copy(text, len);
	int rc;

	if (!copy)
		return -ENOMEM;
	rc = parse(s->tep, copy);
	free(copy);
	if (rc < 0) {
		report(s, file, 0, "%s", what);
		return -EINVAL;
	}
	return 0;
}

int tb_schema_load_kallsyms(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	int rc;

	if (addresses_hidden(text, len))
		return 0;
	rc = parse_text_file(s, file, text, len, tep_parse_kallsyms,
			     "libtraceevent could not read this kallsyms file");
	if (rc == 0)
		s->have_symbols = true;
	return rc;
}

/*
 * A printk_formats line libtraceevent 1.7.1 can take: "ADDR : FMT" with
 * FMT (its opening quote aside) at least 3 bytes.  Its parser reads past
 * the line when the ':' is missing or last, and before the string when the
 * format is shorter (fuzz/fuzz_tracedat found it); the kernel writes
 * "0xffffffff8281a98f : \"fmt\"", so only damaged lines fail this.
 */
static bool printk_line_ok(const char *line, size_t n)
{
	size_t i = 0, fmt;

	if (n > 1 && line[0] == '0' && (line[1] == 'x' || line[1] == 'X'))
		i = 2;
	while (i < n && isxdigit((unsigned char)line[i]))
		i++;
	if (i == 0 || n - i < 3 || memcmp(line + i, " : ", 3))
		return false;
	fmt = i + 3 + (i + 3 < n && line[i + 3] == '"');
	return n - fmt >= 3 && !memchr(line, '\0', n);
}

int tb_schema_load_printk_formats(struct tb_schema *s, const char *file, const char *text,
				  size_t len)
{
	char *kept = malloc(len + 1);
	size_t pos = 0, out = 0;
	int rc;

	if (!kept)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		if (n && printk_line_ok(text + pos, n)) {
			memcpy(kept + out, text + pos, n);
			out += n;
			kept[out++] = '\n';
		} else if (n) {
			report(s, file, pos, "printk_formats line is not 'ADDRESS : \"format\"'; left out");
		}
		pos += n + 1;
	}
	rc = parse_text_file(s, file, kept, out, tep_parse_printk_formats,
			     "libtraceevent could not read this printk_formats file");
	free(kept);
	return rc;
}

/* ------------------------------------------------------------- queries */

size_t tb_schema_subbuf_size(const struct tb_schema *s)
{
	return s->have_header_page ? (size_t)s->header_page.data_offset + s->header_page.data_size
				   : 0;
}

size_t tb_schema_event_count(const struct tb_schema *s)
{
	return s->nevents;
}

bool tb_schema_has_symbols(const struct tb_schema *s)
{
	return s->have_symbols;
}

const struct tb_format *tb_schema_event(const struct tb_schema *s, uint32_t id,
					const char **system)
{
	const struct schema_event *ev = id <= MAX_EVENT_ID ? s->by_id[id] : NULL;

	if (ev && system)
		*system = ev->system;
	return ev ? &ev->format : NULL;
}

void tb_schema_set_loader(struct tb_schema *s, tb_format_loader_fn *fn, void *ctx)
{
	s->loader = fn;
	s->loader_ctx = ctx;
}

const struct tb_format *tb_schema_find_event(struct tb_schema *s, uint32_t id,
					     const char **system)
{
	struct schema_event *ev = id <= MAX_EVENT_ID ? s->by_id[id] : NULL;
	uint8_t bit = (uint8_t)(1u << (id % 8));

	if (!ev && s->loader && id <= MAX_EVENT_ID && !(s->asked[id / 8] & bit)) {
		s->asked[id / 8] |= bit;
		s->loader(s->loader_ctx, s, id);
		ev = s->by_id[id];
	}
	if (!ev || (ev->tep != TEP_KNOWN && !tep_knows(s, ev)))
		return NULL;
	if (system)
		*system = ev->system;
	return &ev->format;
}

const char *tb_schema_comm(const struct tb_schema *s, int pid, size_t *len)
{
	return comms_lookup(&s->comms, pid, len);
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

struct tep_handle *tb_schema_tep(struct tb_schema *s)
{
	return s->tep;
}

/* ------------------------------------------------------ record checks */


/* A __data_loc / __rel_loc field must point inside the record. */
static int check_dynamic_field(const struct tb_field *f, const uint8_t *data, uint32_t len,
			       struct tb_diag *err)
{
	uint32_t word = 0, start, size;

	memcpy(&word, data + f->offset, f->size); /* little endian, like the data */
	start = word & 0xffff;
	size = f->size == 2 ? (start <= len ? len - start : 0) : word >> 16;
	if (f->kind == TB_FIELD_REL_LOC)
		start += f->offset + f->size;
	if ((uint64_t)start + size > len)
		return diag_fail(err, f->offset, "field %s points to bytes %u..%u of a %u-byte "
				   "record", f->name, start, start + size, len);
	if (f->is_string && size > 0 && !memchr(data + start, '\0', size))
		return diag_fail(err, start, "string field %s is not NUL-terminated", f->name);
	return 0;
}

int tb_schema_check_record(const struct tb_format *f, const void *data, uint32_t len,
			   struct tb_diag *err)
{
	if (len < f->min_size)
		return diag_fail(err, len, "record of %u bytes is shorter than the %u bytes "
				   "event %s needs", len, f->min_size, f->name);
	for (size_t i = 0; i < f->nfields; i++)
		if (f->fields[i].kind != TB_FIELD_STATIC &&
		    check_dynamic_field(&f->fields[i], data, len, err) < 0)
			return -EINVAL;
	return 0;
}
