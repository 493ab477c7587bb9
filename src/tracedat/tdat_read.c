// SPDX-License-Identifier: MIT
/*
 * tdat_read.c - parse a trace.dat (versions 6 and 7): everything but the
 * pages, which tdat_pages.c reads when they are asked for.  Here: problems,
 * the byte cursor, the metadata texts, buffers, open and the queries; the
 * options, kallsyms and the two versions' layouts are tdat_options.c,
 * tdat_kallsyms.c, tdat_v6.c and tdat_v7.c (tdat_read.h joins them).
 *
 * Every count, size and offset comes from the file, so each is checked
 * against what is left of the file (or of its section) and against the
 * limits in tdat_internal.h before anything is allocated or followed.  The
 * texts (formats, kallsyms, ...) go into a tb_schema, whose own parsers
 * check them; their messages name the text and where it lies in the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "decode/diag_defer.h"
#include "decode/ksyms.h"
#include "util/pread_full.h"
#include "decode/schema_internal.h"
#include "decode/schema_kernel.h"
#include "decode/blob_store.h"
#include "decode/tsc2nsec.h"
#include "tdat_internal.h"
#include "tracebuf/page.h"
#include "tdat_read.h"
#include "util/grow.h"

static const uint8_t MAGIC[10] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
/* ------------------------------------------------------------ problems */

/*
 * A problem is about to be told: if it comes after kallsyms in the file's
 * order and kallsyms is still being parsed, kallsyms's own problems go
 * first, as they did when it was parsed in its turn.
 */
void tdat_settle_kallsyms_before(struct tb_tracedat *td)
{
	int rc;

	if (!td->kallsyms_past || !schema_kallsyms_pending(td->schema))
		return;
	rc = schema_kallsyms_settle(td->schema);
	if (rc == -ENOMEM && !td->kallsyms_rc)
		td->kallsyms_rc = rc;
}

static void tell_diag(void *ctx, const struct tb_problem *d)
{
	struct tb_tracedat *td = ctx;

	/* Met by a worker reading pages: the reading thread tells it (diag_defer.h). */
	if (diag_defer(tell_diag, ctx, d))
		return;
	tdat_settle_kallsyms_before(td);
	if (!d->warning)
		td->problems++;
	td->diag(td->diag_ctx, d);
}

static void tell(struct tb_tracedat *td, const char *file, uint64_t offset, bool warning, const char *fmt,
		 va_list ap)
{
	struct tb_problem d = {.file = file, .warning = warning};

	diag_vset(&d, offset, fmt, ap);
	tell_diag(td, &d);
}

void tdat_report(struct tb_tracedat *td, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tell(td, td->path, offset, false, fmt, ap);
	va_end(ap);
}

void tdat_report_in(struct tb_tracedat *td, const char *file, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tell(td, file, offset, false, fmt, ap);
	va_end(ap);
}

void tdat_warn(struct tb_tracedat *td, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tell(td, td->path, offset, true, fmt, ap);
	va_end(ap);
}

/* The schema's problems: the text they are about is named in d->file. */
static void schema_diag(void *ctx, const struct tb_problem *d)
{
	struct tb_tracedat *td = ctx;

	tdat_settle_kallsyms_before(td);
	if (!d->warning)
		td->problems++;
	td->diag(td->diag_ctx, d);
}

unsigned long tb_tracedat_problems(const struct tb_tracedat *td)
{
	return td->problems;
}

int tdat_pread(struct tb_tracedat *td, void *buf, size_t n, uint64_t offset, const char *what)
{
	int error;
	size_t got = tb__pread_full(td->fd, buf, n, offset, &error);

	if (got == n)
		return 0;
	tdat_report(td, offset + got, "reading %s: %s", what, error ? strerror(error) : "the file ends here");
	return error ? -error : -EIO;
}

#define READ_AHEAD (64u * 1024)

/*
 * tdat_pread through a read-ahead of READ_AHEAD bytes: the metadata is read
 * a few bytes at a time (a kernel's event formats alone are ~4600 reads),
 * and one system call per read cost more than parsing them.  Reads larger
 * than half the window, or that the window cannot hold, go straight to the
 * file, and so does any read that fails (for its message).
 */
static int pread_ahead(struct tb_tracedat *td, void *buf, size_t n, uint64_t offset, const char *what)
{
	if (n > READ_AHEAD / 2)
		return tdat_pread(td, buf, n, offset, what);
	if (!(offset >= td->ra_at && offset + n <= td->ra_at + td->ra_len)) {
		int error; /* a failed read leaves less than n: tdat_pread() below says why */
		if (!td->ra && !(td->ra = malloc(READ_AHEAD)))
			return tdat_pread(td, buf, n, offset, what);
		td->ra_at = offset;
		td->ra_len = tb__pread_full(td->fd, td->ra, READ_AHEAD, offset, &error);
		if (td->ra_len < n)
			return tdat_pread(td, buf, n, offset, what);
	}
	memcpy(buf, td->ra + (offset - td->ra_at), n);
	return 0;
}

/* --------------------------------------------------------------- bytes */

int tdat_rd_fail(struct rd *r, uint64_t at, const char *fmt, ...)
{
	char reason[TB_PROBLEM_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (r->mem)
		tdat_report(r->td, r->base, "%s (byte %llu of the decompressed %s)", reason,
			    (unsigned long long)at, r->where);
	else
		tdat_report(r->td, at, "%s", reason);
	return -EINVAL;
}

uint64_t tdat_rd_left(const struct rd *r)
{
	return r->pos < r->end ? r->end - r->pos : 0;
}

static int rd_need(struct rd *r, uint64_t n, const char *what)
{
	if (tdat_rd_left(r) >= n)
		return 0;
	return tdat_rd_fail(r, r->pos, "%s needs %llu bytes but only %llu are left %s", what,
		       (unsigned long long)n, (unsigned long long)tdat_rd_left(r),
		       r->mem ? "in the section" : "in the file");
}

int tdat_rd_get(struct rd *r, void *buf, size_t n, const char *what)
{
	int rc = rd_need(r, n, what);

	if (rc < 0)
		return rc;
	if (r->mem)
		memcpy(buf, r->mem + r->pos, n);
	else if ((rc = pread_ahead(r->td, buf, n, r->pos, what)) < 0)
		return rc;
	r->pos += n;
	return 0;
}

int tdat_rd_u16(struct rd *r, uint16_t *v, const char *what)
{
	uint8_t b[2];
	int rc = tdat_rd_get(r, b, 2, what);

	*v = rc == 0 ? tdat_le16(b) : 0;
	return rc;
}

int tdat_rd_u32(struct rd *r, uint32_t *v, const char *what)
{
	uint8_t b[4];
	int rc = tdat_rd_get(r, b, 4, what);

	*v = rc == 0 ? tdat_le32(b) : 0;
	return rc;
}

int tdat_rd_u64(struct rd *r, uint64_t *v, const char *what)
{
	uint8_t b[8];
	int rc = tdat_rd_get(r, b, 8, what);

	*v = rc == 0 ? tdat_le64(b) : 0;
	return rc;
}

/* A NUL-terminated string of at most cap - 1 bytes. */
int tdat_rd_cstr(struct rd *r, char *out, size_t cap, const char *what)
{
	uint64_t at = r->pos;
	size_t n = tdat_rd_left(r) < cap ? (size_t)tdat_rd_left(r) : cap;
	char *nul;

	if (r->mem)
		memcpy(out, r->mem + r->pos, n);
	else if (n && pread_ahead(r->td, out, n, r->pos, what) < 0)
		return -EIO;
	nul = memchr(out, '\0', n);
	if (!nul)
		return tdat_rd_fail(r, at, "%s is not a string of under %zu bytes ending in a NUL", what, cap);
	r->pos += (uint64_t)(nul - out) + 1;
	return 0;
}

/* A text's length: within limit and what is left. */
int tdat_rd_text_fits(struct rd *r, uint64_t len, uint64_t limit, const char *what)
{
	if (len > limit)
		return tdat_rd_fail(r, r->pos, "%s claims %llu bytes, more than the %llu tracebuf accepts", what,
			       (unsigned long long)len, (unsigned long long)limit);
	return rd_need(r, len, what);
}

/*
 * len bytes of text, NUL-terminated, into a new buffer (taken from arena,
 * when there is one, else malloc'd); len is checked first.
 */
static int rd_text_in(struct rd *r, uint64_t len, uint64_t limit, const char *what, struct arena *arena,
		      char **out)
{
	char *buf;
	int rc;

	*out = NULL;
	if ((rc = tdat_rd_text_fits(r, len, limit, what)) < 0)
		return rc;
	buf = arena ? arena_take(arena, len + 1) : malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if ((rc = tdat_rd_get(r, buf, len, what)) < 0) {
		if (!arena)
			free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int rd_text(struct rd *r, uint64_t len, uint64_t limit, const char *what, char **out)
{
	return rd_text_in(r, len, limit, what, NULL, out);
}

/* rd_text() for a text not wanted: its length checked as rd_text() checks it, its bytes skipped. */
int tdat_rd_skip_text(struct rd *r, uint64_t len, uint64_t limit, const char *what)
{
	int rc = tdat_rd_text_fits(r, len, limit, what);

	if (rc == 0)
		r->pos += len;
	return rc;
}

/* A fixed tag such as "header_page\0". */
static int rd_tag(struct rd *r, const char *tag, size_t len)
{
	char buf[16];
	uint64_t at = r->pos;
	int rc = tdat_rd_get(r, buf, len, tag);

	if (rc == 0 && memcmp(buf, tag, len))
		return tdat_rd_fail(r, at, "expected the tag '%s' here", tag);
	return rc;
}

/* ------------------------------------------------------------ records */

int tdat_add_part(struct tb_tracedat *td, const char *what, int id, unsigned flags, uint64_t offset,
		    uint64_t size, uint64_t usize)
{
	struct tb_tracedat_part *p;

	p = tb__grow(td->parts, &td->parts_cap, td->nparts + 1, sizeof(*p), 32);
	if (!p)
		return -ENOMEM;
	td->parts = p;
	p = &td->parts[td->nparts];
	p->what = strdup(what);
	if (!p->what)
		return -ENOMEM;
	p->section_id = id;
	p->flags = flags;
	p->offset = offset;
	p->size = size;
	p->usize = usize;
	td->nparts++;
	return 0;
}

/*
 * Where a text came from, for messages: "FILE: sched format at byte N", or
 * in a decompressed section (where, at byte base of the file) "... at byte
 * N of the decompressed events format at byte M".
 */
static char *place_label(const struct tb_tracedat *td, const char *where, uint64_t base, uint64_t at,
			 const char *what)
{
	char *label = NULL;
	int n;

	if (where)
		n = asprintf(&label, "%s: %s at byte %llu of the decompressed %s at byte %llu", td->path, what,
			     (unsigned long long)at, where, (unsigned long long)base);
	else
		n = asprintf(&label, "%s: %s at byte %llu", td->path, what, (unsigned long long)at);
	return n < 0 ? NULL : label;
}

char *tdat_text_label(struct rd *r, uint64_t at, const char *what)
{
	return place_label(r->td, r->mem ? r->where : NULL, r->base, at, what);
}

/* The value after "key:" on one of text's lines, copied to out ("" if none). */
static void line_value(const char *text, size_t len, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);

	out[0] = '\0';
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (end - pos > klen && !memcmp(text + pos, key, klen)) {
			size_t v = pos + klen;
			while (v < end && (text[v] == ' ' || text[v] == '\t'))
				v++;
			size_t n = end - v < cap - 1 ? end - v : cap - 1;
			memcpy(out, text + v, n);
			out[n] = '\0';
			return;
		}
		pos = end + 1;
	}
}

static int add_format(struct tb_tracedat *td, const char *system, const char *text, size_t len,
		      uint64_t offset)
{
	struct tb_tracedat_format *f;
	char name[TB_NAME_MAX], id[32];

	f = tb__grow(td->formats, &td->formats_cap, td->nformats + 1, sizeof(*f), 64);
	if (!f)
		return -ENOMEM;
	td->formats = f;
	line_value(text, len, "name:", name, sizeof(name));
	line_value(text, len, "ID:", id, sizeof(id));
	f = &td->formats[td->nformats];
	/* A system's formats follow each other: they share its name. */
	f->system = td->nformats && !strcmp(f[-1].system, system) ? f[-1].system : arena_strdup(&td->strings, system);
	f->name = arena_strdup(&td->strings, name);
	if (!f->system || !f->name)
		return -ENOMEM;
	f->id = (uint32_t)strtoul(id, NULL, 10);
	f->offset = offset;
	f->len = len;
	td->nformats++;
	return 0;
}

/* ------------------------------------------------------ metadata texts */

/* "header_page\0" u64 text "header_event\0" u64 text (v6 items 7-12, v7 section 16). */
int tdat_read_headers(struct tb_tracedat *td, struct rd *r)
{
	uint64_t len, at;
	char *label;
	int rc;

	if ((rc = rd_tag(r, "header_page", 12)) < 0 || (rc = tdat_rd_u64(r, &len, "header_page size")) < 0)
		return rc;
	at = r->pos;
	if ((rc = rd_text(r, len, TDAT_MAX_FORMAT, "header_page", &td->header_page)) < 0)
		return rc;
	td->info.header_page_len = len;
	if (!(label = tdat_text_label(r, at, "header_page")))
		return -ENOMEM;
	rc = tb_schema_load_header_page(td->schema, label, td->header_page, len);
	free(label);
	if (rc < 0)
		return rc; /* the pages cannot be read without it */
	if ((rc = rd_tag(r, "header_event", 13)) < 0 || (rc = tdat_rd_u64(r, &len, "header_event size")) < 0)
		return rc;
	at = r->pos;
	if ((rc = rd_text(r, len, TDAT_MAX_FORMAT, "header_event", &td->header_event)) < 0)
		return rc;
	td->info.header_event_len = len;
	/* trace-cmd ignores header_event (it may even be empty); say what is odd, go on. */
	if (len && (label = tdat_text_label(r, at, "header_event"))) {
		tb_schema_load_header_event(td->schema, label, td->header_event, len);
		free(label);
	}
	return 0;
}

/* "SYSTEM/NAME format" (cut to fit out, which holds at least 1 byte). */
static void format_what(char *out, size_t cap, const char *system, const char *name)
{
	size_t n = 0;

	for (const char *parts[] = {system, name ? "/" : "", name ? name : "", " format"}, **p = parts;
	     p < parts + 4; p++) {
		size_t len = strlen(*p);
		if (len > cap - 1 - n)
			len = cap - 1 - n;
		memcpy(out + n, *p, len);
		n += len;
	}
	out[n] = '\0';
}

/*
 * Hand pending format i to the schema (once): its problems are reported
 * now, named after where it lies, which is put in words only now.
 */
static int load_pending(struct tb_tracedat *td, size_t i)
{
	struct tdat_pending *p = &td->pending[i];
	const struct tb_tracedat_format *f = &td->formats[i];
	char what[TDAT_MAX_NAME + TB_NAME_MAX + 16], *label;
	int rc;

	if (!p->text)
		return 0;
	format_what(what, sizeof(what), f->system, f->name);
	if (!(label = place_label(td, p->where, p->base, p->at, what)))
		return -ENOMEM;
	rc = tb_schema_load_format(td->schema, label, f->system, p->text, p->len);
	free(label);
	p->text = NULL; /* in td->strings: freed at close */
	return rc == -ENOMEM ? rc : 0; /* a format that does not parse leaves its event unknown */
}

/* tb_format_loader_fn: the first record of an ID met. */
static void load_by_id(void *ctx, struct tb_schema *s, uint32_t id)
{
	struct tb_tracedat *td = ctx;
	const uint32_t *pending = id_table_find(&td->pending_by_id, id); /* NULL: no format has an ID near it */

	(void)s;
	if (pending && *pending)
		load_pending(td, *pending - 1);
}

/*
 * Keep format i, just read at at by r, for later (lazy_formats); text
 * (in td->strings) becomes the pending entry's.  It is
 * loaded now when its ID cannot be known without parsing it (no number:
 * the parser says why) or another format claims the same ID (the schema
 * says which two).
 */
static int defer_format(struct tb_tracedat *td, size_t i, const struct rd *r, uint64_t at, char *text,
			size_t len)
{
	struct tdat_pending *p;
	uint32_t id = format_text_id(text, len), *by_id;

	if (td->formats_cap > td->pending_cap) { /* parallel to formats */
		p = realloc(td->pending, td->formats_cap * sizeof(*p));
		if (!p)
			goto oom;
		td->pending = p;
		td->pending_cap = td->formats_cap;
	}
	p = &td->pending[i];
	*p = (struct tdat_pending){
	    .text = text, .len = len, .at = at, .base = r->base, .where = r->mem ? r->where : NULL};
	td->npending = i + 1;
	if (id == 0)
		return load_pending(td, i);
	if (!td->pending_by_id.slot_size)
		id_table_init(&td->pending_by_id, sizeof(uint32_t));
	if (!(by_id = id_table_slot(&td->pending_by_id, id))) /* id <= 65535 (format_text_id) */
		goto oom;
	if (*by_id) {
		int rc = load_pending(td, *by_id - 1);
		return rc < 0 ? rc : load_pending(td, i);
	}
	*by_id = (uint32_t)i + 1;
	return 0;
oom:
	return -ENOMEM;
}

/* One format file: u64 length, then the text. */
static int read_one_format(struct tb_tracedat *td, struct rd *r, const char *system)
{
	uint64_t len, at;
	char *text, *label = NULL, what[TDAT_MAX_NAME + TB_NAME_MAX + 16];
	size_t i = td->nformats;
	int rc;

	format_what(what, sizeof(what), system, NULL);
	if ((rc = tdat_rd_u64(r, &len, "format file size")) < 0)
		return rc;
	at = r->pos;
	/* A pending text is kept until close: it is taken from td->strings, not malloc'd. */
	if ((rc = rd_text_in(r, len, TDAT_MAX_FORMAT, what, td->lazy_formats ? &td->strings : NULL, &text)) < 0)
		return rc;
	rc = add_format(td, system, text, len, r->mem ? r->base : at);
	/* Parsed when first met: named then, after the event too (load_pending). */
	if (td->lazy_formats)
		return rc < 0 ? rc : defer_format(td, i, r, at, text, len);
	if (rc == 0 && !(label = tdat_text_label(r, at, what)))
		rc = -ENOMEM;
	if (rc == 0) {
		/* A format that does not parse leaves its event unknown; the rest reads on. */
		rc = tb_schema_load_format(td->schema, label, system, text, len);
		rc = rc == -ENOMEM ? rc : 0;
	}
	free(label);
	free(text);
	return rc;
}

/* u32 count, then that many ftrace format files. */
int tdat_read_ftrace_formats(struct tb_tracedat *td, struct rd *r)
{
	uint32_t n;
	int rc = tdat_rd_u32(r, &n, "ftrace format count");

	/* Each format takes at least its 8-byte size: a count beyond that is a lie. */
	if (rc == 0 && n > tdat_rd_left(r) / 8)
		return tdat_rd_fail(r, r->pos - 4, "%u ftrace formats cannot fit in the %llu bytes left", n,
			       (unsigned long long)tdat_rd_left(r));
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = read_one_format(td, r, "ftrace");
	td->info.nftrace_formats = rc == 0 ? n : 0;
	return rc;
}

/* u32 systems, each: name, u32 count, formats. */
int tdat_read_event_formats(struct tb_tracedat *td, struct rd *r)
{
	char system[TDAT_MAX_NAME];
	uint32_t nsys, n;
	int rc = tdat_rd_u32(r, &nsys, "event system count");

	if (rc == 0 && nsys > tdat_rd_left(r) / 5)
		return tdat_rd_fail(r, r->pos - 4, "%u event systems cannot fit in the %llu bytes left", nsys,
			       (unsigned long long)tdat_rd_left(r));
	for (uint32_t s = 0; rc == 0 && s < nsys; s++) {
		if ((rc = tdat_rd_cstr(r, system, sizeof(system), "event system name")) < 0 ||
		    (rc = tdat_rd_u32(r, &n, "event count")) < 0)
			break;
		if (n > tdat_rd_left(r) / 8)
			return tdat_rd_fail(r, r->pos - 4, "%u %s formats cannot fit in the %llu bytes left", n,
				       system, (unsigned long long)tdat_rd_left(r));
		for (uint32_t i = 0; rc == 0 && i < n; i++) {
			rc = read_one_format(td, r, system);
			td->info.nevent_formats += rc == 0;
		}
	}
	td->info.nsystems = rc == 0 ? nsys : 0;
	return rc;
}

static text_loader ignore_text;

/* A length (u32 or u64) and a text for the schema; problems in it are not fatal. */
int tdat_read_text(struct tb_tracedat *td, struct rd *r, int len_bytes, const char *what, text_loader *load,
		     size_t *len_out)
{
	uint64_t len = 0, at;
	uint32_t len32;
	char *text, *label;
	int rc = len_bytes == 4 ? tdat_rd_u32(r, &len32, what) : tdat_rd_u64(r, &len, what);

	if (rc < 0)
		return rc;
	if (len_bytes == 4)
		len = len32;
	at = r->pos;
	if (load == ignore_text) { /* kallsyms a count does not want: megabytes not read */
		if ((rc = tdat_rd_skip_text(r, len, TDAT_MAX_TEXT, what)) == 0)
			*len_out = len;
		return rc;
	}
	if ((rc = rd_text(r, len, TDAT_MAX_TEXT, what, &text)) < 0)
		return rc;
	*len_out = len;
	if (len && !(label = tdat_text_label(r, at, what)))
		rc = -ENOMEM;
	else if (len) {
		rc = load(td->schema, label, text, len);
		rc = rc == -ENOMEM ? rc : 0;
		free(label);
	}
	free(text);
	return rc;
}

/* The text read and checked, its symbols not wanted (tb_tracedat_opts.no_symbols). */
static int ignore_text(struct tb_schema *s, const char *file, const char *text, size_t len)
{
	(void)s, (void)file, (void)text, (void)len;
	return 0;
}

/* kallsyms a count does not want: its length checked, megabytes not read. */
int tdat_skip_kallsyms(struct tb_tracedat *td, struct rd *r)
{
	return tdat_read_text(td, r, 4, "kallsyms", ignore_text, &td->info.kallsyms_len);
}

int tdat_read_printk(struct tb_tracedat *td, struct rd *r)
{
	return tdat_read_text(td, r, 4, "printk formats", tb_schema_load_printk_formats, &td->info.printk_len);
}

int tdat_read_cmdlines(struct tb_tracedat *td, struct rd *r)
{
	return tdat_read_text(td, r, 8, "saved cmdlines", tb_schema_load_cmdlines, &td->info.cmdlines_len);
}

/* -------------------------------------------------------------- buffers */

struct tdat_buffer *tdat_add_buffer(struct tb_tracedat *td, const char *name, uint64_t offset)
{
	struct tdat_buffer *b;

	if (td->nbuffers >= TDAT_MAX_BUFFERS)
		return NULL;
	b = realloc(td->buffers, (size_t)(td->nbuffers + 1) * sizeof(*b));
	if (!b)
		return NULL;
	td->buffers = b;
	b = &td->buffers[td->nbuffers];
	memset(b, 0, sizeof(*b));
	if (!(b->name = strdup(name)))
		return NULL;
	b->pub.offset = offset;
	b->pub.page_size = td->info.page_size;
	td->nbuffers++;
	return b;
}

/* "buffer 'kernel' CPU 1", or "CPU 1" in the top buffer: a CPU's data, for messages. */
static void cpu_label(char *out, size_t cap, const struct tdat_buffer *b, int cpu)
{
	if (b->name[0])
		snprintf(out, cap, "buffer '%s' CPU %d", b->name, cpu);
	else
		snprintf(out, cap, "CPU %d", cpu);
}

/*
 * Compressed CPU data at offset (its chunk count first) in a file that
 * ends inside it: the chunks that lie whole before end (*kept of the
 * *total the count says) and the bytes they take after the count.  Only
 * headers are read, through the read-ahead; each chunk takes 8 bytes at
 * least, so the walk is bounded by the file.
 */
static int whole_chunks(struct tb_tracedat *td, uint64_t offset, uint64_t end, uint32_t *kept, uint32_t *total,
			uint64_t *bytes)
{
	uint64_t at = offset + 4;
	uint8_t h[8];
	int rc;

	*kept = *total = 0;
	*bytes = 0;
	if (offset > end || end - offset < 4)
		return 0;
	if ((rc = pread_ahead(td, h, 4, offset, "the chunk count")) < 0)
		return rc;
	*total = tdat_le32(h);
	while (*kept < *total && end - at >= 8) {
		if ((rc = pread_ahead(td, h, 8, at, "a chunk header")) < 0)
			return rc;
		if (tdat_le32(h) > end - at - 8)
			break;
		at += 8 + (uint64_t)tdat_le32(h);
		(*kept)++;
	}
	*bytes = at - offset - 4;
	return 0;
}

/* Noted for the one message that says the cut (tdat_say_cut): the CPU the end of the file cuts partway. */
static void note_cut_cpu(struct tb_tracedat *td, const struct tdat_buffer *b, const struct tb_tracedat_cpu *c,
			 uint64_t kept, uint64_t total, uint64_t stop_at)
{
	td->cut.cpus++;
	if (td->cut.at || c->offset >= td->info.file_size)
		return; /* lost whole, or not the first cut partway: counted */
	td->cut.at = stop_at;
	td->cut.kept = kept;
	td->cut.total = total;
	td->cut.chunks = b->pub.compressed;
	cpu_label(td->cut.first, sizeof(td->cut.first), b, c->cpu);
}

/*
 * A CPU's data must lie inside the file.  Data that runs past its end is a
 * file cut short (head -c of a recording, a copy stopped early), or a size
 * nobody can trust: either way what lies whole in the file is read - the
 * sub-buffers before the end (v7 compressed: the chunks) - and the rest is
 * lost, said once for the whole file by tdat_say_cut().  cpus[i].size is cut to
 * what is read; a compressed CPU also keeps its count of whole chunks.
 */
int tdat_check_cpu_data(struct tb_tracedat *td, struct tdat_buffer *b, int i)
{
	struct tb_tracedat_cpu *c = &b->cpus[i];
	uint64_t end = td->info.file_size, extra = b->pub.compressed && c->size ? 4 : 0;
	uint64_t left = c->offset < end ? end - c->offset : 0, page = b->pub.page_size, bytes;
	uint32_t kept, total;
	int rc;

	if (!c->size || (c->offset <= end && c->size + extra <= end - c->offset))
		return 0;
	/* A size nobody can trust stops where another CPU's data begins: never read as this CPU's. */
	for (int j = 0; j < td->nbuffers; j++)
		for (int k = 0; k < td->buffers[j].pub.ncpus; k++) {
			const struct tb_tracedat_cpu *o = &td->buffers[j].cpus[k];
			if (o->size && o->offset > c->offset && o->offset - c->offset < left)
				left = o->offset - c->offset;
		}
	if (!b->pub.compressed) {
		note_cut_cpu(td, b, c, left / page, c->size / page + (c->size % page != 0),
			     c->offset + left / page * page);
		c->size = left / page * page;
		return 0;
	}
	if ((rc = whole_chunks(td, c->offset, c->offset + left, &kept, &total, &bytes)) < 0)
		return rc;
	if (!b->chunks_kept) {
		if (!(b->chunks_kept = malloc((size_t)b->pub.ncpus * sizeof(*b->chunks_kept))))
			return -ENOMEM;
		for (int j = 0; j < b->pub.ncpus; j++)
			b->chunks_kept[j] = UINT32_MAX;
	}
	b->chunks_kept[i] = kept;
	note_cut_cpu(td, b, c, kept, total, c->offset + 4 + bytes);
	c->size = kept ? bytes : 0;
	return 0;
}

/* Every CPU's data, once every buffer's table is read (a size past the end stops at another's data). */
int tdat_check_all_cpu_data(struct tb_tracedat *td)
{
	int rc;

	for (int i = 0; i < td->nbuffers; i++)
		for (int c = 0; c < td->buffers[i].pub.ncpus; c++)
			if ((rc = tdat_check_cpu_data(td, &td->buffers[i], c)) < 0)
				return rc;
	return 0;
}

/* A buffer none of whose data can be read: its CPUs stay listed (trace-cmd's numbering), empty. */
void tdat_empty_buffer(struct tdat_buffer *b)
{
	for (int i = 0; i < b->pub.ncpus; i++)
		b->cpus[i].size = 0;
}

/*
 * Everything the end of a file cut short took, in one message: where the
 * first CPU it cuts partway stops being read, how much of that CPU is read,
 * and how many CPUs, buffers and sections are lost whole.
 */
int tdat_say_cut(struct tb_tracedat *td)
{
	const struct tdat_cut *c = &td->cut;
	char lost[128] = "";
	unsigned more_cpus = c->cpus - (c->at ? 1 : 0);
	size_t n = 0;

	if (!c->cpus && !c->buffers && !c->sections && !c->stores)
		return 0;
	if (!td->nbuffers) {
		/* trace-cmd writes its BUFFER options after the data they describe */
		tdat_report(td, td->info.file_size,
			    "the file is cut short here: %u options section%s lost, and with them the "
			    "description of every buffer: no event can be read",
			    c->sections, c->sections > 1 ? "s" : "");
		return -EINVAL;
	}
	if (more_cpus)
		n += (size_t)snprintf(lost + n, sizeof(lost) - n, "; the data of %u%s CPU%s is lost", more_cpus,
				      c->at ? " more" : "", more_cpus > 1 ? "s" : "");
	if (c->buffers && n < sizeof(lost))
		n += (size_t)snprintf(lost + n, sizeof(lost) - n, "; %u buffer%s lost whole", c->buffers,
				      c->buffers > 1 ? "s" : "");
	if (c->sections && n < sizeof(lost))
		n += (size_t)snprintf(lost + n, sizeof(lost) - n, "; %u options section%s lost", c->sections,
				      c->sections > 1 ? "s" : "");
	if (c->stores && n < sizeof(lost))
		snprintf(lost + n, sizeof(lost) - n, "; %u blob store%s cut", c->stores, c->stores > 1 ? "s" : "");
	if (c->at)
		tdat_report(td, c->at,
			    "the file is cut short at byte %llu: %s is read up to here (%llu of its %llu %s)%s",
			    (unsigned long long)td->info.file_size, c->first, (unsigned long long)c->kept,
			    (unsigned long long)c->total, c->chunks ? "compressed chunks" : "sub-buffers", lost);
	else
		tdat_report(td, td->info.file_size, "the file is cut short here%s", lost);
	return 0;
}

/* v6: CPU count × {u64 offset, u64 size} of a flyrecord block, then its clock record. */
int tdat_read_flyrecord_table(struct tb_tracedat *td, struct rd *r, struct tdat_buffer *b, int cpus)
{
	uint64_t at = r->pos, len;
	char *clock;
	int rc;

	if ((rc = rd_need(r, (uint64_t)cpus * 16, "the flyrecord CPU table")) < 0)
		return rc;
	b->cpus = calloc(cpus > 0 ? (size_t)cpus : 1, sizeof(*b->cpus));
	if (!b->cpus)
		return -ENOMEM;
	for (int i = 0; i < cpus; i++) {
		struct tb_tracedat_cpu *c = &b->cpus[i];
		c->cpu = i;
		if ((rc = tdat_rd_u64(r, &c->offset, "CPU data offset")) < 0 ||
		    (rc = tdat_rd_u64(r, &c->size, "CPU data size")) < 0)
			return rc;
	}
	b->pub.ncpus = b->pub.slots = cpus;
	tdat_add_part(td, b->name[0] ? "flyrecord table (instance)" : "flyrecord table", -1, 0, at, r->pos - at,
		 r->pos - at);
	/* trace-cmd reads the clock record only when a TRACECLOCK option announced it. */
	if (!td->has_traceclock)
		return 0;
	at = r->pos;
	if ((rc = tdat_rd_u64(r, &len, "trace clock record size")) < 0 ||
	    (rc = rd_text(r, len, 4096, "trace clock record", &clock)) < 0)
		return rc;
	free(b->clock);
	b->clock = NULL;
	char name[64] = "";
	const char *open = strchr(clock, '['), *close = open ? strchr(open, ']') : NULL;
	if (open && close && close - open - 1 > 0 && (size_t)(close - open - 1) < sizeof(name)) {
		memcpy(name, open + 1, (size_t)(close - open - 1));
		name[close - open - 1] = '\0';
		b->clock = strdup(name);
	} else {
		tdat_warn(td, at + 8,
			  "the trace clock record names no clock in brackets; "
			  "reading the times as the local clock's, as trace-cmd does");
		b->clock = strdup("local");
	}
	free(clock);
	return b->clock ? 0 : -ENOMEM;
}

/* --------------------------------------------------------------- open */

static int read_initial(struct tb_tracedat *td, struct rd *r)
{
	uint8_t magic[10], b[6];
	char version[16];
	long v;
	int rc;

	if (td->info.file_size < sizeof(magic) ||
	    (rc = tdat_pread(td, magic, sizeof(magic), 0, "magic")) < 0 ||
	    memcmp(magic, MAGIC, sizeof(magic))) {
		tdat_report(td, 0,
			    "not a trace.dat file: it does not start with trace-cmd's magic "
			    "bytes 17 08 44 'tracing'");
		return -EINVAL;
	}
	r->pos = sizeof(magic);
	if ((rc = tdat_rd_cstr(r, version, sizeof(version), "version")) < 0)
		return rc;
	v = version[0] && strspn(version, "0123456789") == strlen(version) ? strtol(version, NULL, 10) : -1;
	if (v != 6 && v != 7)
		return tdat_rd_fail(r, 10, "trace.dat version '%s': tracebuf reads versions 6 and 7", version);
	td->info.version = (int)v;
	if ((rc = tdat_rd_get(r, b, 6, "endianness, long size and page size")) < 0)
		return rc;
	if (b[0] != 0)
		return tdat_rd_fail(r, r->pos - 6,
			       "the file is big endian (byte %u): tracebuf reads "
			       "little-endian traces only",
			       b[0]);
	td->info.long_size = b[1];
	td->info.page_size = tdat_le32(b + 2);
	if (b[1] != 4 && b[1] != 8)
		return tdat_rd_fail(r, r->pos - 5, "long size %u: must be 4 or 8", b[1]);
	if (!tb_page_size_valid(td->info.page_size))
		return tdat_rd_fail(r, r->pos - 4, "page size %u is not a sub-buffer size (4 KiB << 0..7)",
			       td->info.page_size);
	return 0;
}

/* After the metadata: the header_page must describe the pages the file says it has. */
static int check_page_size(struct tb_tracedat *td)
{
	size_t subbuf = tb_schema_subbuf_size(td->schema);

	if (subbuf == td->info.page_size)
		return 0;
	tdat_report(td, 14,
		    "the file's page size is %u bytes but its header_page describes "
		    "%zu-byte sub-buffers",
		    td->info.page_size, subbuf);
	return -EINVAL;
}

/*
 * The kernel release of the UNAME option ("Linux HOST RELEASE ARCH"): when
 * it runs here, the running kernel's BTF gives what the file lacks.
 */
static void trust_same_release(struct tb_tracedat *td)
{
	char release[65];

	if (td->uname && sscanf(td->uname, "%*s %*s %64s", release) == 1)
		tb_schema_trust_running_btf(td->schema, release);
}

static void fill_info(struct tb_tracedat *td)
{
	int top_slots = td->file_cpus > td->cpucount ? td->file_cpus : td->cpucount;

	td->info.path = td->path;
	td->info.compression = td->info.version >= 7 ? td->compression : "none";
	td->info.compression_version = td->info.version >= 7 ? td->compression_version : "";
	td->info.trace_clock = td->trace_clock;
	td->info.uname = td->uname;
	td->info.version_string = td->version_string;
	td->info.cpustats = td->cpustats;
	if (td->info.version < 7 && td->nbuffers && !td->buffers[0].clock && td->has_traceclock) {
		/* v6 with a TRACECLOCK option but no clock record: trace-cmd takes the option's. */
		td->buffers[0].clock = tdat_bracketed_clock(td->trace_clock);
	}
	for (int i = 0; i < td->nbuffers; i++) {
		struct tdat_buffer *b = &td->buffers[i];
		if (!b->name[0] && b->pub.slots > top_slots)
			top_slots = b->pub.slots;
	}
	td->info.cpus = top_slots;
	for (int i = 0; i < td->nbuffers; i++) {
		struct tdat_buffer *b = &td->buffers[i];
		if (!b->clock && td->trace_clock)
			b->clock = tdat_bracketed_clock(td->trace_clock);
		b->pub.name = b->name;
		b->pub.clock = b->clock;
		b->pub.cpus = b->cpus;
		/* trace-cmd's instance handles start from the top handle's CPU count. */
		if (b->name[0] && b->pub.slots < top_slots)
			b->pub.slots = top_slots;
		if (!b->name[0])
			b->pub.slots = top_slots;
	}
}

int tb_tracedat_open(const char *path, const struct tb_tracedat_opts *opts, struct tb_tracedat **out)
{
	struct tb_tracedat *td = calloc(1, sizeof(*td));
	struct rd r;
	struct stat st;
	int rc;

	*out = NULL;
	if (!td)
		return -ENOMEM;
	td->fd = -1;
	td->diag = opts && opts->diag ? opts->diag : tb_problem_print;
	td->diag_ctx = opts && opts->diag ? opts->diag_ctx : NULL;
	td->no_symbols = opts && opts->no_symbols;
	td->lazy_formats = opts && opts->lazy_formats;
	td->path = strdup(path);
	td->schema = tb_schema_new();
	if (!td->path || !td->schema) {
		tb_tracedat_close(td);
		return -ENOMEM;
	}
	tb_schema_set_problem_fn(td->schema, schema_diag, td);
	if (td->lazy_formats)
		tb_schema_set_loader(td->schema, load_by_id, td);
	td->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (td->fd < 0 || fstat(td->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = td->fd < 0 || !S_ISREG(st.st_mode) ? (td->fd < 0 ? -errno : -EINVAL) : -errno;
		/* a mistyped name is said as every input is (input.c): "no such file", first */
		if (rc == -ENOENT)
			tdat_report(td, 0, "no such file");
		else
			tdat_report(td, 0, "cannot open: %s",
				    td->fd >= 0 && rc == -EINVAL ? "not a regular file" : strerror(-rc));
		tb_tracedat_close(td);
		return rc;
	}
	td->info.file_size = (uint64_t)st.st_size;
	memset(&r, 0, sizeof(r));
	r.td = td;
	r.end = td->info.file_size;
	rc = read_initial(td, &r);
	if (rc == 0)
		rc = td->info.version >= 7 ? tdat_read_v7(td, &r) : tdat_read_v6(td, &r);
	if (rc != -ENOMEM && tdat_settle_kallsyms(td) == -ENOMEM)
		rc = -ENOMEM;
	if (rc == 0)
		rc = check_page_size(td);
	if (rc == 0)
		rc = tdat_say_cut(td);
	if (rc < 0) {
		tb_tracedat_close(td);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	fill_info(td);
	trust_same_release(td);
	*out = td;
	return 0;
}

static void blob_problem(void *ctx, const char *file, uint64_t offset, const char *reason)
{
	tdat_report_in(ctx, file, offset, "%s", reason);
}

struct blob_store *tdat_blobs(struct tb_tracedat *td, const char *buffer)
{
	struct tdat_store *st = tdat_store_of(td, buffer);

	if (st && !st->blobs && (st->blobs = blob_store_new(td->fd, false, td->path, st->at, st->len)))
		blob_store_set_problem(st->blobs, blob_problem, td);
	return st ? st->blobs : NULL;
}

void tb_tracedat_close(struct tb_tracedat *td)
{
	if (!td)
		return;
	for (int i = 0; i < td->nstores; i++) {
		blob_store_free(td->stores[i].blobs);
		free(td->stores[i].buffer);
	}
	free(td->stores);
	if (td->fd >= 0)
		close(td->fd);
	for (int i = 0; i < td->nbuffers; i++) {
		free(td->buffers[i].name);
		free(td->buffers[i].clock);
		free(td->buffers[i].cpus);
		free(td->buffers[i].chunks_kept);
	}
	free(td->buffers);
	for (size_t i = 0; i < td->noptions; i++)
		free((void *)td->options[i].data);
	free(td->options);
	for (size_t i = 0; i < td->nparts; i++)
		free((char *)td->parts[i].what);
	free(td->parts);
	free(td->pending);
	id_table_free(&td->pending_by_id);
	free(td->ra);
	free(td->formats); /* their names are in td->strings */
	tb_schema_free(td->schema);
	arena_free(&td->strings); /* after the schema, whose loader may still have held a pending text */
	free(td->header_page);
	free(td->header_event);
	free(td->trace_clock);
	free(td->uname);
	free(td->version_string);
	free(td->cpustats);
	free(td->path);
	free(td);
}

/* ------------------------------------------------------------- queries */

const struct tb_tracedat_info *tb_tracedat_info(const struct tb_tracedat *td)
{
	return &td->info;
}

int tb_tracedat_buffer_count(const struct tb_tracedat *td)
{
	return td->nbuffers;
}

const struct tb_tracedat_buffer *tb_tracedat_buffer(const struct tb_tracedat *td, int i)
{
	return i >= 0 && i < td->nbuffers ? &td->buffers[i].pub : NULL;
}

int tb_tracedat_main_buffer(const struct tb_tracedat *td)
{
	for (int i = 0; i < td->nbuffers; i++)
		for (int c = 0; c < td->buffers[i].pub.ncpus; c++)
			if (td->buffers[i].cpus[c].size)
				return i;
	return 0;
}

int tb_tracedat_buffer_find(const struct tb_tracedat *td, const char *name)
{
	for (int i = 0; i < td->nbuffers; i++)
		if (!strcmp(td->buffers[i].pub.name, name))
			return i;
	return -ENOENT;
}

size_t tb_tracedat_option_count(const struct tb_tracedat *td)
{
	return td->noptions;
}

const struct tb_tracedat_option *tb_tracedat_option(const struct tb_tracedat *td, size_t i)
{
	return i < td->noptions ? &td->options[i] : NULL;
}

size_t tb_tracedat_part_count(const struct tb_tracedat *td)
{
	return td->nparts;
}

const struct tb_tracedat_part *tb_tracedat_part(const struct tb_tracedat *td, size_t i)
{
	return i < td->nparts ? &td->parts[i] : NULL;
}

size_t tb_tracedat_format_count(const struct tb_tracedat *td)
{
	return td->nformats;
}

const struct tb_tracedat_format *tb_tracedat_format(const struct tb_tracedat *td, size_t i)
{
	return i < td->nformats ? &td->formats[i] : NULL;
}

struct tb_schema *tb_tracedat_schema(struct tb_tracedat *td)
{
	return td->schema;
}

const char *tb_tracedat_header_page(const struct tb_tracedat *td, size_t *len)
{
	if (len)
		*len = td->info.header_page_len;
	return td->header_page;
}

const char *tb_tracedat_header_event(const struct tb_tracedat *td, size_t *len)
{
	if (len)
		*len = td->info.header_event_len;
	return td->header_event;
}

bool tdat_clock_in_usecs(const char *clock)
{
	if (!clock)
		return true; /* no clock named: trace-cmd prints microseconds */
	return !strcmp(clock, "local") || !strcmp(clock, "global") || !strcmp(clock, "uptime") ||
	       !strcmp(clock, "perf") || !strncmp(clock, "mono", 4) || !strcmp(clock, "tsc2nsec") ||
	       !strcmp(clock, "tai");
}

const char *tb_tracedat_option_name(unsigned id)
{
	static const char *const names[] = {
	    "DONE",	     "DATE",	 "CPUSTAT",  "BUFFER",	 "TRACECLOCK", "UNAME",
	    "HOOK",	     "OFFSET",	 "CPUCOUNT", "VERSION",	 "PROCMAPS",   "TRACEID",
	    "TIME_SHIFT",    "GUEST",	 "TSC2NSEC", "STRINGS",	 "HEADERS",    "FTRACE EVENTS",
	    "EVENT FORMATS", "KALLSYMS", "PRINTK",   "CMDLINES", "BUFFER_LAT",
	};

	return id < sizeof(names) / sizeof(names[0]) ? names[id] : NULL;
}

int tb_tracedat_cpu_stats(const struct tb_tracedat *td, const char *buffer, int cpu, struct tb_cpu_stats *out)
{
	const char *p = td->cpustats, *cur = "";
	char key[32];
	size_t curlen = 0;

	if (!p)
		return -ENOENT;
	snprintf(key, sizeof(key), "CPU: %d\n", cpu);
	/* "Buffer: NAME" lines switch the instance the following CPU blocks belong to. */
	for (; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] ? 1 : 0)) {
		if (!strncmp(p, "Buffer: ", 8)) {
			cur = p + 8;
			curlen = strcspn(cur, "\n");
		} else if (!strncmp(p, key, strlen(key)) && curlen == strlen(buffer) &&
			   !strncmp(cur, buffer, curlen)) {
			/* The block ends where the next CPU's or buffer's begins. */
			const char *body = p + strlen(key), *next = body;
			char *block;
			int rc;
			while (*next && strncmp(next, "CPU: ", 5) && strncmp(next, "Buffer: ", 8))
				next += strcspn(next, "\n") + (next[strcspn(next, "\n")] ? 1 : 0);
			if (!(block = strndup(body, (size_t)(next - body))))
				return -ENOMEM;
			rc = tb_stats_parse_kernel(block, out, NULL);
			free(block);
			if (rc < 0)
				return -ENOENT;
			/*
			 * The stamps in the time report shows: a TSC file's stats count
			 * cycles (read as if nanoseconds), its records are shown in ns.
			 */
			out->oldest_ts = tsc2nsec(out->oldest_ts, td->info.tsc2nsec_mult, td->info.tsc2nsec_shift);
			out->now_ts = tsc2nsec(out->now_ts, td->info.tsc2nsec_mult, td->info.tsc2nsec_shift);
			return 0;
		}
	}
	return -ENOENT;
}
