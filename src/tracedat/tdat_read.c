// SPDX-License-Identifier: MIT
/*
 * tdat_read.c - parse a trace.dat (versions 6 and 7): everything but the
 * pages, which tdat_pages.c reads when they are asked for.
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
#include "diag_defer.h"
#include "ksyms.h"
#include "pread_full.h"
#include "schema_internal.h"
#include "blob_store.h"
#include "tdat_internal.h"
#include "tracebuf/page.h"

static const uint8_t MAGIC[10] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};

/* ------------------------------------------------------------ problems */

/*
 * A problem is about to be told: if it comes after kallsyms in the file's
 * order and kallsyms is still being parsed, kallsyms's own problems go
 * first, as they did when it was parsed in its turn.
 */
static void settle_kallsyms_before(struct tb_tracedat *td)
{
	int rc;

	if (!td->kallsyms_past || !schema_kallsyms_pending(td->schema))
		return;
	rc = schema_kallsyms_settle(td->schema);
	if (rc == -ENOMEM && !td->kallsyms_rc)
		td->kallsyms_rc = rc;
}

static void tell_diag(void *ctx, const struct tb_diag *d)
{
	struct tb_tracedat *td = ctx;

	/* Met by a worker reading pages: the reading thread tells it (diag_defer.h). */
	if (diag_defer(tell_diag, ctx, d))
		return;
	settle_kallsyms_before(td);
	if (!d->warning)
		td->problems++;
	td->diag(td->diag_ctx, d);
}

static void tell(struct tb_tracedat *td, const char *file, uint64_t offset, bool warning, const char *fmt,
		 va_list ap)
{
	struct tb_diag d = {.file = file, .warning = warning};

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
static void schema_diag(void *ctx, const struct tb_diag *d)
{
	struct tb_tracedat *td = ctx;

	settle_kallsyms_before(td);
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
		ssize_t got;
		if (!td->ra && !(td->ra = malloc(READ_AHEAD)))
			return tdat_pread(td, buf, n, offset, what);
		do
			got = pread(td->fd, td->ra, READ_AHEAD, (off_t)offset);
		while (got < 0 && errno == EINTR);
		td->ra_at = offset;
		td->ra_len = got > 0 ? (size_t)got : 0;
		if (td->ra_len < n)
			return tdat_pread(td, buf, n, offset, what);
	}
	memcpy(buf, td->ra + (offset - td->ra_at), n);
	return 0;
}

/* --------------------------------------------------------------- bytes */

/*
 * A cursor over the file, or over a decompressed section body in memory
 * (then problems are placed at the section and say where in its body).
 */
struct rd {
	struct tb_tracedat *td;
	const uint8_t *mem;
	uint64_t pos, end;
	uint64_t base;	   /* mem: file offset of the section */
	const char *where; /* mem: which section, for messages */
};

static int rd_fail(struct rd *r, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int rd_fail(struct rd *r, uint64_t at, const char *fmt, ...)
{
	char reason[TB_DIAG_REASON_MAX];
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

static uint64_t rd_left(const struct rd *r)
{
	return r->pos < r->end ? r->end - r->pos : 0;
}

static int rd_need(struct rd *r, uint64_t n, const char *what)
{
	if (rd_left(r) >= n)
		return 0;
	return rd_fail(r, r->pos, "%s needs %llu bytes but only %llu are left %s", what,
		       (unsigned long long)n, (unsigned long long)rd_left(r),
		       r->mem ? "in the section" : "in the file");
}

static int rd_get(struct rd *r, void *buf, size_t n, const char *what)
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

static int rd_u16(struct rd *r, uint16_t *v, const char *what)
{
	uint8_t b[2];
	int rc = rd_get(r, b, 2, what);

	*v = rc == 0 ? tdat_le16(b) : 0;
	return rc;
}

static int rd_u32(struct rd *r, uint32_t *v, const char *what)
{
	uint8_t b[4];
	int rc = rd_get(r, b, 4, what);

	*v = rc == 0 ? tdat_le32(b) : 0;
	return rc;
}

static int rd_u64(struct rd *r, uint64_t *v, const char *what)
{
	uint8_t b[8];
	int rc = rd_get(r, b, 8, what);

	*v = rc == 0 ? tdat_le64(b) : 0;
	return rc;
}

/* A NUL-terminated string of at most cap - 1 bytes. */
static int rd_cstr(struct rd *r, char *out, size_t cap, const char *what)
{
	uint64_t at = r->pos;
	size_t n = rd_left(r) < cap ? (size_t)rd_left(r) : cap;
	char *nul;

	if (r->mem)
		memcpy(out, r->mem + r->pos, n);
	else if (n && pread_ahead(r->td, out, n, r->pos, what) < 0)
		return -EIO;
	nul = memchr(out, '\0', n);
	if (!nul)
		return rd_fail(r, at, "%s is not a string of under %zu bytes ending in a NUL", what, cap);
	r->pos += (uint64_t)(nul - out) + 1;
	return 0;
}

/* A text's length: within limit and what is left. */
static int rd_text_fits(struct rd *r, uint64_t len, uint64_t limit, const char *what)
{
	if (len > limit)
		return rd_fail(r, r->pos, "%s claims %llu bytes, more than the %llu tracebuf accepts", what,
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
	if ((rc = rd_text_fits(r, len, limit, what)) < 0)
		return rc;
	buf = arena ? arena_take(arena, len + 1) : malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if ((rc = rd_get(r, buf, len, what)) < 0) {
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
static int rd_skip_text(struct rd *r, uint64_t len, uint64_t limit, const char *what)
{
	int rc = rd_text_fits(r, len, limit, what);

	if (rc == 0)
		r->pos += len;
	return rc;
}

/* A fixed tag such as "header_page\0". */
static int rd_tag(struct rd *r, const char *tag, size_t len)
{
	char buf[16];
	uint64_t at = r->pos;
	int rc = rd_get(r, buf, len, tag);

	if (rc == 0 && memcmp(buf, tag, len))
		return rd_fail(r, at, "expected the tag '%s' here", tag);
	return rc;
}

/* ------------------------------------------------------------ records */

static int add_part(struct tb_tracedat *td, const char *what, int id, unsigned flags, uint64_t offset,
		    uint64_t size, uint64_t usize)
{
	struct tb_tracedat_part *p;

	if (td->nparts == td->parts_cap) {
		size_t cap = td->parts_cap ? 2 * td->parts_cap : 32;
		p = realloc(td->parts, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		td->parts = p;
		td->parts_cap = cap;
	}
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

static char *text_label(struct rd *r, uint64_t at, const char *what)
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

	if (td->nformats == td->formats_cap) {
		size_t cap = td->formats_cap ? 2 * td->formats_cap : 64;
		f = realloc(td->formats, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		td->formats = f;
		td->formats_cap = cap;
	}
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
static int read_headers(struct tb_tracedat *td, struct rd *r)
{
	uint64_t len, at;
	char *label;
	int rc;

	if ((rc = rd_tag(r, "header_page", 12)) < 0 || (rc = rd_u64(r, &len, "header_page size")) < 0)
		return rc;
	at = r->pos;
	if ((rc = rd_text(r, len, TDAT_MAX_FORMAT, "header_page", &td->header_page)) < 0)
		return rc;
	td->info.header_page_len = len;
	if (!(label = text_label(r, at, "header_page")))
		return -ENOMEM;
	rc = tb_schema_load_header_page(td->schema, label, td->header_page, len);
	free(label);
	if (rc < 0)
		return rc; /* the pages cannot be read without it */
	if ((rc = rd_tag(r, "header_event", 13)) < 0 || (rc = rd_u64(r, &len, "header_event size")) < 0)
		return rc;
	at = r->pos;
	if ((rc = rd_text(r, len, TDAT_MAX_FORMAT, "header_event", &td->header_event)) < 0)
		return rc;
	td->info.header_event_len = len;
	/* trace-cmd ignores header_event (it may even be empty); say what is odd, go on. */
	if (len && (label = text_label(r, at, "header_event"))) {
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
	if ((rc = rd_u64(r, &len, "format file size")) < 0)
		return rc;
	at = r->pos;
	/* A pending text is kept until close: it is taken from td->strings, not malloc'd. */
	if ((rc = rd_text_in(r, len, TDAT_MAX_FORMAT, what, td->lazy_formats ? &td->strings : NULL, &text)) < 0)
		return rc;
	rc = add_format(td, system, text, len, r->mem ? r->base : at);
	/* Parsed when first met: named then, after the event too (load_pending). */
	if (td->lazy_formats)
		return rc < 0 ? rc : defer_format(td, i, r, at, text, len);
	if (rc == 0 && !(label = text_label(r, at, what)))
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
static int read_ftrace_formats(struct tb_tracedat *td, struct rd *r)
{
	uint32_t n;
	int rc = rd_u32(r, &n, "ftrace format count");

	/* Each format takes at least its 8-byte size: a count beyond that is a lie. */
	if (rc == 0 && n > rd_left(r) / 8)
		return rd_fail(r, r->pos - 4, "%u ftrace formats cannot fit in the %llu bytes left", n,
			       (unsigned long long)rd_left(r));
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = read_one_format(td, r, "ftrace");
	td->info.nftrace_formats = rc == 0 ? n : 0;
	return rc;
}

/* u32 systems, each: name, u32 count, formats. */
static int read_event_formats(struct tb_tracedat *td, struct rd *r)
{
	char system[TDAT_MAX_NAME];
	uint32_t nsys, n;
	int rc = rd_u32(r, &nsys, "event system count");

	if (rc == 0 && nsys > rd_left(r) / 5)
		return rd_fail(r, r->pos - 4, "%u event systems cannot fit in the %llu bytes left", nsys,
			       (unsigned long long)rd_left(r));
	for (uint32_t s = 0; rc == 0 && s < nsys; s++) {
		if ((rc = rd_cstr(r, system, sizeof(system), "event system name")) < 0 ||
		    (rc = rd_u32(r, &n, "event count")) < 0)
			break;
		if (n > rd_left(r) / 8)
			return rd_fail(r, r->pos - 4, "%u %s formats cannot fit in the %llu bytes left", n,
				       system, (unsigned long long)rd_left(r));
		for (uint32_t i = 0; rc == 0 && i < n; i++) {
			rc = read_one_format(td, r, system);
			td->info.nevent_formats += rc == 0;
		}
	}
	td->info.nsystems = rc == 0 ? nsys : 0;
	return rc;
}

typedef int text_loader(struct tb_schema *, const char *, const char *, size_t);
static text_loader ignore_text;

/* A length (u32 or u64) and a text for the schema; problems in it are not fatal. */
static int read_text(struct tb_tracedat *td, struct rd *r, int len_bytes, const char *what, text_loader *load,
		     size_t *len_out)
{
	uint64_t len = 0, at;
	uint32_t len32;
	char *text, *label;
	int rc = len_bytes == 4 ? rd_u32(r, &len32, what) : rd_u64(r, &len, what);

	if (rc < 0)
		return rc;
	if (len_bytes == 4)
		len = len32;
	at = r->pos;
	if (load == ignore_text) { /* kallsyms a count does not want: megabytes not read */
		if ((rc = rd_skip_text(r, len, TDAT_MAX_TEXT, what)) == 0)
			*len_out = len;
		return rc;
	}
	if ((rc = rd_text(r, len, TDAT_MAX_TEXT, what, &text)) < 0)
		return rc;
	*len_out = len;
	if (len && !(label = text_label(r, at, what)))
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
static int skip_kallsyms(struct tb_tracedat *td, struct rd *r)
{
	return read_text(td, r, 4, "kallsyms", ignore_text, &td->info.kallsyms_len);
}

static int read_printk(struct tb_tracedat *td, struct rd *r)
{
	return read_text(td, r, 4, "printk formats", tb_schema_load_printk_formats, &td->info.printk_len);
}

static int read_cmdlines(struct tb_tracedat *td, struct rd *r)
{
	return read_text(td, r, 8, "saved cmdlines", tb_schema_load_cmdlines, &td->info.cmdlines_len);
}

/* -------------------------------------------------------------- buffers */

static struct tdat_buffer *add_buffer(struct tb_tracedat *td, const char *name, uint64_t offset)
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

/* Noted for the one message that says the cut (say_cut): the CPU the end of the file cuts partway. */
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
 * lost, said once for the whole file by say_cut().  cpus[i].size is cut to
 * what is read; a compressed CPU also keeps its count of whole chunks.
 */
static int check_cpu_data(struct tb_tracedat *td, struct tdat_buffer *b, int i)
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
static int check_all_cpu_data(struct tb_tracedat *td)
{
	int rc;

	for (int i = 0; i < td->nbuffers; i++)
		for (int c = 0; c < td->buffers[i].pub.ncpus; c++)
			if ((rc = check_cpu_data(td, &td->buffers[i], c)) < 0)
				return rc;
	return 0;
}

/* A buffer none of whose data can be read: its CPUs stay listed (trace-cmd's numbering), empty. */
static void empty_buffer(struct tdat_buffer *b)
{
	for (int i = 0; i < b->pub.ncpus; i++)
		b->cpus[i].size = 0;
}

/*
 * Everything the end of a file cut short took, in one message: where the
 * first CPU it cuts partway stops being read, how much of that CPU is read,
 * and how many CPUs, buffers and sections are lost whole.
 */
static int say_cut(struct tb_tracedat *td)
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
static int read_flyrecord_table(struct tb_tracedat *td, struct rd *r, struct tdat_buffer *b, int cpus)
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
		if ((rc = rd_u64(r, &c->offset, "CPU data offset")) < 0 ||
		    (rc = rd_u64(r, &c->size, "CPU data size")) < 0)
			return rc;
	}
	b->pub.ncpus = b->pub.slots = cpus;
	add_part(td, b->name[0] ? "flyrecord table (instance)" : "flyrecord table", -1, 0, at, r->pos - at,
		 r->pos - at);
	/* trace-cmd reads the clock record only when a TRACECLOCK option announced it. */
	if (!td->has_traceclock)
		return 0;
	at = r->pos;
	if ((rc = rd_u64(r, &len, "trace clock record size")) < 0 ||
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

/* ------------------------------------------------------------- options */

static int keep_option(struct tb_tracedat *td, uint16_t id, const uint8_t *data, uint32_t size,
		       uint64_t offset)
{
	struct tb_tracedat_option *o;
	uint8_t *copy = malloc((size_t)size + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	copy[size] = '\0'; /* text options read as C strings even if stored without NUL */
	if (td->noptions == td->options_cap) {
		size_t cap = td->options_cap ? 2 * td->options_cap : 32;
		o = realloc(td->options, cap * sizeof(*o));
		if (!o) {
			free(copy);
			return -ENOMEM;
		}
		td->options = o;
		td->options_cap = cap;
	}
	o = &td->options[td->noptions++];
	o->id = id;
	o->size = size;
	o->offset = offset;
	o->data = copy;
	return 0;
}

/* The bracketed clock of a trace_clock text ("[local] global ..."), or NULL. */
static char *bracketed_clock(const char *text)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;

	if (!open || !close || close == open + 1 || close - open > TDAT_MAX_NAME)
		return NULL;
	return strndup(open + 1, (size_t)(close - open - 1));
}

static int set_string(char **slot, const uint8_t *data, uint32_t size)
{
	free(*slot);
	*slot = strndup((const char *)data, size);
	return *slot ? 0 : -ENOMEM;
}

/* CPUSTAT texts are kept joined, each ending in a newline, as trace-cmd prints them. */
static int add_cpustat(struct tb_tracedat *td, const uint8_t *data, uint32_t size)
{
	char *grown;

	if (size == 0)
		return 0;
	grown = realloc(td->cpustats, td->cpustats_len + size + 1);
	if (!grown)
		return -ENOMEM;
	td->cpustats = grown;
	memcpy(grown + td->cpustats_len, data, size);
	/* Its last byte (the NUL) becomes the newline that separates the texts. */
	grown[td->cpustats_len + size - 1] = '\n';
	td->cpustats_len += size;
	grown[td->cpustats_len] = '\0';
	return 0;
}

/* A number stored as text (DATE, OFFSET): strtoll with base 0, as trace-cmd reads it. */
static bool text_number(const uint8_t *data, uint32_t size, long long *v)
{
	char buf[64], *end;

	if (size == 0 || size >= sizeof(buf))
		return false;
	memcpy(buf, data, size);
	buf[size] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return end != buf && errno == 0;
}

/* The section offsets (ids 16-21) a v7 options list gives; 0 if absent. */
struct sections {
	uint64_t at[TB_TDAT_OPT_CMDLINES + 1];
	uint64_t opt_at[TB_TDAT_OPT_CMDLINES + 1];
};

/* v7 BUFFER: offset, name, clock, page size, CPU count, CPUs. */
static int parse_v7_buffer(struct tb_tracedat *td, const uint8_t *d, uint32_t size, uint64_t at, bool text)
{
	const char *end = (const char *)d + size, *name = (const char *)d + 8, *clock = NULL;
	struct tdat_buffer *b;
	uint32_t ncpus;
	const uint8_t *p;

	if (size > 8 && memchr(name, '\0', (size_t)(end - name))) {
		clock = name + strlen(name) + 1;
		if (clock >= end || !memchr(clock, '\0', (size_t)(end - clock)))
			clock = NULL;
	}
	if (!clock) {
		tdat_report(td, at,
			    "BUFFER option of %u bytes does not hold an offset, a name and a "
			    "clock",
			    size);
		return -EINVAL;
	}
	if (!(b = add_buffer(td, name, tdat_le64(d))))
		return td->nbuffers >= TDAT_MAX_BUFFERS
			   ? (tdat_report(td, at, "more than %d buffers", TDAT_MAX_BUFFERS), -EINVAL)
			   : -ENOMEM;
	b->option_at = at;
	if (clock[0] && !(b->clock = strdup(clock)))
		return -ENOMEM;
	p = (const uint8_t *)clock + strlen(clock) + 1;
	if (text) {
		b->pub.text_offset = b->pub.offset;
		return 0;
	}
	if (end - (const char *)p < 8) {
		tdat_report(td, at, "BUFFER option '%s' ends before its page size and CPU count", name);
		return -EINVAL;
	}
	b->pub.page_size = tdat_le32(p);
	ncpus = tdat_le32(p + 4);
	p += 8;
	if (ncpus > TDAT_MAX_CPUS || (uint64_t)ncpus * 20 > (uint64_t)(end - (const char *)p)) {
		tdat_report(td, at, "BUFFER option '%s' lists %u CPUs but has room for %ld", name, ncpus,
			    (long)((end - (const char *)p) / 20));
		return -EINVAL;
	}
	if (b->pub.page_size != td->info.page_size) {
		tdat_report(td, at,
			    "buffer '%s' has %u-byte sub-buffers where the file has %u-byte "
			    "ones; tracebuf reads one size per file",
			    name, b->pub.page_size, td->info.page_size);
		return -EINVAL;
	}
	b->cpus = calloc(ncpus ? ncpus : 1, sizeof(*b->cpus));
	if (!b->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < ncpus; i++, p += 20) {
		uint32_t cpu = tdat_le32(p);
		if (cpu >= TDAT_MAX_CPUS) {
			tdat_report(td, at, "buffer '%s' names CPU %u; tracebuf reads CPUs below %d", name,
				    cpu, TDAT_MAX_CPUS);
			return -EINVAL;
		}
		for (uint32_t j = 0; j < i; j++)
			if (b->cpus[j].cpu == (int)cpu) {
				tdat_report(td, at, "buffer '%s' lists CPU %u twice", name, cpu);
				return -EINVAL;
			}
		b->cpus[i].cpu = (int)cpu;
		b->cpus[i].offset = tdat_le64(p + 4);
		b->cpus[i].size = tdat_le64(p + 12);
		if ((int)cpu + 1 > b->pub.slots)
			b->pub.slots = (int)cpu + 1;
	}
	b->pub.ncpus = (int)ncpus;
	return 0;
}

/*
 * A blob store option: u64 offset, u64 length, then (captures joined, one
 * store per buffer) the buffer's name.  One naming bytes outside the file
 * is said, and its blobs print as lost; one cut by the end of a file cut
 * short counts with the cut (say_cut).
 */
static int add_store(struct tb_tracedat *td, const uint8_t *d, uint32_t size, uint64_t at)
{
	uint64_t off = size >= 16 ? tdat_le64(d) : 0, len = size >= 16 ? tdat_le64(d + 8) : 0;
	const char *name = size > 16 && memchr(d + 16, '\0', size - 16) ? (const char *)d + 16 : NULL;
	struct tdat_store *st;

	if (size >= 16 && off <= td->info.file_size && len > td->info.file_size - off) {
		td->cut.stores++; /* the entries before the end are read; the one it cuts is said when looked up */
		len = td->info.file_size - off;
	}
	if (size < 16 || off > td->info.file_size || (size > 16 && !name) || td->nstores >= TDAT_MAX_BUFFERS) {
		tdat_report(td, at, "the blob store option (%u bytes) names no store inside the file: its blobs "
				    "print as lost", size);
		return 0;
	}
	if (!(st = realloc(td->stores, (size_t)(td->nstores + 1) * sizeof(*st))))
		return -ENOMEM;
	td->stores = st;
	st = &st[td->nstores];
	*st = (struct tdat_store){.at = off, .len = len};
	if (name && !(st->buffer = strdup(name)))
		return -ENOMEM;
	td->nstores++;
	return len ? add_part(td, name ? "blob store of a buffer (tracebuf's saved blobs)"
				       : "blob store (tracebuf's saved blobs)",
			      -1, 0, off, len, len)
		   : 0;
}

struct tdat_store *tdat_store_of(struct tb_tracedat *td, const char *buffer)
{
	struct tdat_store *every = NULL;

	for (int i = 0; i < td->nstores; i++) {
		if (td->stores[i].buffer && !strcmp(td->stores[i].buffer, buffer))
			return &td->stores[i];
		if (!td->stores[i].buffer && !every)
			every = &td->stores[i];
	}
	return every;
}

/* One option; the ones that matter for reading are applied, all are kept for dumps. */
static int apply_option(struct tb_tracedat *td, uint16_t id, const uint8_t *d, uint32_t size, uint64_t at,
			struct sections *sec)
{
	struct tdat_buffer *b;
	long long v;
	int rc = keep_option(td, id, d, size, at);

	if (rc < 0)
		return rc;
	switch (id) {
	case TB_TDAT_OPT_TB_CONSTANTS:
		rc = tb_schema_load_constants(td->schema, td->path, (const char *)d, size);
		return rc == -ENOMEM ? rc : 0; /* bad lines were reported with their offsets */
	case TB_TDAT_OPT_TB_BLOBS:
		/* where the saved blobs lie; read when a reference is printed (blob_store.c) */
		td->has_blobs = true;
		return add_store(td, d, size, at);
	case TB_TDAT_OPT_DATE:
		if (text_number(d, size, &v)) {
			td->info.ts_offset += v * 1000; /* microseconds */
			td->info.has_date = true;
		}
		return 0;
	case TB_TDAT_OPT_OFFSET:
		if (text_number(d, size, &v))
			td->info.ts_offset += v;
		return 0;
	case TB_TDAT_OPT_CPUSTAT:
		return add_cpustat(td, d, size);
	case TB_TDAT_OPT_BUFFER:
	case TB_TDAT_OPT_BUFFER_TEXT:
		if (td->info.version >= 7)
			return parse_v7_buffer(td, d, size, at, id == TB_TDAT_OPT_BUFFER_TEXT);
		if (size < 9 || !memchr(d + 8, '\0', size - 8)) {
			tdat_report(td, at,
				    "BUFFER option of %u bytes does not hold an offset and a "
				    "name",
				    size);
			return -EINVAL;
		}
		if (!(b = add_buffer(td, (const char *)d + 8, tdat_le64(d))))
			return -ENOMEM;
		b->option_at = at;
		return 0;
	case TB_TDAT_OPT_TRACECLOCK:
		td->has_traceclock = true;
		return set_string(&td->trace_clock, d, size);
	case TB_TDAT_OPT_UNAME:
		return set_string(&td->uname, d, size);
	case TB_TDAT_OPT_VERSION:
		return set_string(&td->version_string, d, size);
	case TB_TDAT_OPT_CPUCOUNT:
		if (size < 4 || tdat_le32(d) == 0 || tdat_le32(d) > TDAT_MAX_CPUS) {
			tdat_report(td, at, "CPUCOUNT option holds %u CPUs; tracebuf reads 1 to %d",
				    size < 4 ? 0 : tdat_le32(d), TDAT_MAX_CPUS);
			return -EINVAL;
		}
		td->cpucount = (int)tdat_le32(d);
		return 0;
	case TB_TDAT_OPT_TSC2NSEC:
		if (size >= 16) {
			td->info.tsc2nsec_mult = tdat_le32(d);
			td->info.tsc2nsec_shift = tdat_le32(d + 4);
			td->info.tsc2nsec_offset = tdat_le64(d + 8);
			if (td->info.tsc2nsec_shift > 63) {
				tdat_report(td, at, "TSC2NSEC shift %u is above 63", td->info.tsc2nsec_shift);
				return -EINVAL;
			}
		}
		return 0;
	case TB_TDAT_OPT_HEADER_INFO:
	case TB_TDAT_OPT_FTRACE_EVENTS:
	case TB_TDAT_OPT_EVENT_FORMATS:
	case TB_TDAT_OPT_KALLSYMS:
	case TB_TDAT_OPT_PRINTK:
	case TB_TDAT_OPT_CMDLINES:
		if (sec && size >= 8) {
			sec->at[id] = tdat_le64(d);
			sec->opt_at[id] = at;
		}
		return 0;
	default:
		return 0; /* unknown ids are skipped, as trace-cmd does */
	}
}

/*
 * An options list: {u16 id, u32 size, payload}...  v6 ends it with a lone id
 * 0; v7 with id 0 whose 8-byte payload is the next options section's offset
 * (*next; 0 for none).
 */
static int read_options(struct tb_tracedat *td, struct rd *r, struct sections *sec, uint64_t *next,
			uint64_t *next_from)
{
	uint8_t *data;
	uint16_t id;
	uint32_t size;
	int rc;

	*next = 0;
	for (;;) {
		uint64_t at = r->pos;
		if ((rc = rd_u16(r, &id, "option id")) < 0)
			return rc;
		if (id == TB_TDAT_OPT_DONE && td->info.version < 7)
			return 0;
		if ((rc = rd_u32(r, &size, "option size")) < 0)
			return rc;
		if (size > TDAT_MAX_OPTION || size > rd_left(r))
			return rd_fail(r, at, "option %u claims %u bytes; %llu are left", id, size,
				       (unsigned long long)rd_left(r));
		if (!(data = malloc(size ? size : 1)))
			return -ENOMEM;
		if ((rc = rd_get(r, data, size, "option payload")) == 0) {
			uint64_t where = r->mem ? r->base : at + 6;
			if (id == TB_TDAT_OPT_DONE) {
				*next_from = where;
				if (size < 8)
					rc = rd_fail(r, at,
						     "the last option holds %u bytes, not the 8 of "
						     "the next options section's offset",
						     size);
				else
					*next = tdat_le64(data);
				rc = rc < 0 ? rc : keep_option(td, id, data, size, where);
				free(data);
				return rc;
			}
			rc = apply_option(td, id, data, size, where, sec);
		}
		free(data);
		if (rc < 0)
			return rc;
	}
}

/* ------------------------------------------------------------- version 6 */

/*
 * An instance's block that cannot be read (rc: what went wrong, said, or
 * -ENODATA: past the end of a file cut short) costs that buffer's data
 * only: its CPUs are listed empty, as many as the top buffer's, so the
 * other buffers keep trace-cmd's numbering.  0, or -ENOMEM.
 */
static int keep_buffer_empty(struct tdat_buffer *b, int cpus, int rc)
{
	if (rc == -ENOMEM)
		return rc;
	free(b->cpus);
	if (!(b->cpus = calloc((size_t)cpus, sizeof(*b->cpus))))
		return -ENOMEM;
	for (int i = 0; i < cpus; i++)
		b->cpus[i].cpu = i;
	b->pub.ncpus = b->pub.slots = cpus;
	return 0;
}

static int read_v6_buffer(struct tb_tracedat *td, struct tdat_buffer *b, int cpus)
{
	struct rd r = {.td = td, .pos = b->pub.offset, .end = td->info.file_size};
	char tag[10];
	uint64_t at = r.pos, next;
	int rc;

	if (b->pub.offset > td->info.file_size || td->info.file_size - b->pub.offset < 10 + 16 * (uint64_t)cpus) {
		td->cut.buffers++; /* its block, or the end of its table, lies past the end: said by say_cut() */
		return -ENODATA;
	}
	if ((rc = rd_get(&r, tag, 10, "buffer block tag")) < 0)
		return rc;
	if (!memcmp(tag, "options  ", 10)) {
		/* Options inside an instance block add nothing trace-cmd uses: skip them. */
		size_t kept = td->noptions;
		rc = read_options(td, &r, NULL, &next, &next);
		for (size_t i = kept; i < td->noptions; i++)
			free((void *)td->options[i].data);
		td->noptions = kept;
		if (rc < 0 || (rc = rd_get(&r, tag, 10, "buffer block tag")) < 0)
			return rc;
	}
	if (memcmp(tag, "flyrecord", 10))
		return rd_fail(&r, at, "buffer '%s' does not start with a flyrecord block", b->name);
	b->clock = td->buffers[0].clock ? strdup(td->buffers[0].clock) : NULL;
	if (td->buffers[0].clock && !b->clock)
		return -ENOMEM;
	/* The instance's clock record is not read by trace-cmd: the file's clock counts. */
	bool had = td->has_traceclock;
	td->has_traceclock = false;
	rc = read_flyrecord_table(td, &r, b, cpus);
	td->has_traceclock = had;
	return rc;
}

/* ------------------------------------------------------------- kallsyms */

static const char *section_name(unsigned id);
static int section_head(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned id, uint16_t *flags,
			uint64_t *size, uint64_t *clen, uint32_t *ulen);
static int check_block_sizes(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen,
			     const char *what);
static int inflate_checked(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen, const char *what,
			   uint8_t *buf);

/*
 * kallsyms is read (decompressed) and parsed on a thread of its own
 * (ksyms_job.h) while the reading thread reads on.  It starts as early as
 * the file says where kallsyms is - v7 names its section, in v6 it follows
 * the formats, whose sizes are walked first - but everything that may
 * refuse the file still counts in kallsyms's turn: what is found wrong
 * before the start (here) and while filling the text (there) is kept
 * (diag_defer.h) and told in the turn, then the parse's own problems, then
 * any later one.  When the reading stops before the turn none of it is
 * told, as kallsyms was never reached then.
 */
struct kallsyms_read {
	struct tb_tracedat *td;
	bool started;
	int rc;                  /* what the checks before the start found */
	struct diag_sink before; /* their problems */
	uint64_t from;           /* where the turn finds kallsyms (v6: its length field) */
	/* What the thread reads: */
	bool compressed;
	uint64_t pos, len;       /* plain: the text in the file */
	uint64_t at, clen;       /* compressed: the section and its block's size */
	uint32_t ulen;
	/* What it leaves, read after ksyms_job_filled(): */
	uint64_t left;           /* bytes after the text in its section */
	struct diag_sink during; /* what filling met */
};

/* The text into the table's buffer, straight from the file. */
static int pread_kallsyms(struct kallsyms_read *k, char **buf, size_t *len)
{
	int rc;

	if (!(*buf = tb_ksyms_text_buffer(k->len)))
		return -ENOMEM;
	if ((rc = tdat_pread(k->td, *buf, k->len, k->pos, "kallsyms")) < 0) {
		free(*buf);
		*buf = NULL;
		return rc;
	}
	*len = k->len;
	return 0;
}

/*
 * The section decompressed straight into the table's buffer, then its u32
 * length and text checked there as read_text() checks them: the text is
 * parsed where it lies, 4 bytes in.
 */
static int inflate_kallsyms(struct kallsyms_read *k, char **buf, size_t *skip, size_t *len)
{
	const char *what = section_name(TB_TDAT_OPT_KALLSYMS);
	struct rd r = {.td = k->td, .end = k->ulen, .base = k->at, .where = what};
	uint32_t n;
	int rc;

	if ((rc = check_block_sizes(k->td, k->at + 24, k->clen, k->ulen, what)) < 0)
		return rc;
	if (!(*buf = tb_ksyms_text_buffer(k->ulen)))
		return -ENOMEM;
	r.mem = (const uint8_t *)*buf;
	if ((rc = inflate_checked(k->td, k->at + 24, k->clen, k->ulen, what, (uint8_t *)*buf)) == 0 &&
	    (rc = rd_u32(&r, &n, "kallsyms")) == 0 && (rc = rd_text_fits(&r, n, TDAT_MAX_TEXT, "kallsyms")) == 0) {
		*skip = r.pos;
		*len = n;
		r.pos += n;
		k->left = rd_left(&r);
		return 0;
	}
	free(*buf);
	*buf = NULL;
	return rc;
}

/* ksyms_fill_fn, on the job's thread: the problems it meets are kept for the turn. */
static int fill_kallsyms(void *ctx, char **buf, size_t *skip, size_t *len)
{
	struct kallsyms_read *k = ctx;
	int rc;

	diag_sink_install(&k->during);
	rc = k->compressed ? inflate_kallsyms(k, buf, skip, len) : pread_kallsyms(k, buf, len);
	diag_sink_install(NULL);
	return rc;
}

/* The u32 length and where the text lies, at r's position in the file (problems kept in k->before). */
static int plain_kallsyms(struct rd *r, struct kallsyms_read *k)
{
	uint32_t len;
	int rc;

	if ((rc = rd_u32(r, &len, "kallsyms")) < 0 || (rc = rd_text_fits(r, len, TDAT_MAX_TEXT, "kallsyms")) < 0)
		return rc;
	k->pos = r->pos;
	k->len = len;
	k->left = r->end - r->pos - len;
	return 0;
}

/* The thread started on what k says; where its problems will be placed is known now. */
static int start_kallsyms(struct tb_tracedat *td, struct kallsyms_read *k)
{
	/* Named as read_text() names a text: in the file, or in the decompressed section after its length. */
	struct rd in_file = {.td = td};
	struct rd in_section = {.td = td, .mem = (const uint8_t *)"", .base = k->at, .where = "kallsyms"};
	char *label = k->compressed ? text_label(&in_section, 4, "kallsyms") : text_label(&in_file, k->pos, "kallsyms");
	int rc = label ? schema_kallsyms_start(td->schema, label, fill_kallsyms, k) : -ENOMEM;

	free(label);
	k->started = rc == 0;
	return rc;
}

/* v7: the kallsyms section (none: nothing to start). */
static void start_kallsyms_v7(struct tb_tracedat *td, const struct sections *sec, struct kallsyms_read *k)
{
	uint64_t at = sec->at[TB_TDAT_OPT_KALLSYMS], size;
	uint16_t flags;

	k->td = td;
	if (!at)
		return;
	diag_sink_install(&k->before);
	k->rc = section_head(td, at, sec->opt_at[TB_TDAT_OPT_KALLSYMS], TB_TDAT_OPT_KALLSYMS, &flags, &size,
			     &k->clen, &k->ulen);
	k->at = at;
	k->compressed = flags & 1;
	if (k->rc == 0 && !k->compressed) {
		struct rd r = {.td = td, .pos = at + 16, .end = at + 16 + size};
		k->rc = plain_kallsyms(&r, k);
	}
	diag_sink_install(NULL);
	if (k->rc == 0)
		k->rc = start_kallsyms(td, k);
}

/* v6: kallsyms at byte from, its length field (the text runs on to the end of the file at most). */
static void start_kallsyms_v6(struct tb_tracedat *td, uint64_t from, struct kallsyms_read *k)
{
	struct rd r = {.td = td, .pos = from, .end = td->info.file_size};

	k->td = td;
	k->from = from;
	diag_sink_install(&k->before);
	k->rc = plain_kallsyms(&r, k);
	k->left = 0; /* v6 has no sections: nothing is left over */
	diag_sink_install(NULL);
	if (k->rc == 0)
		k->rc = start_kallsyms(td, k);
}

/*
 * v6: where kallsyms's length field is, found by walking the formats'
 * sizes from byte from (after the headers) without reading the formats;
 * 0 when the walk meets anything odd (the reading in turn says what).
 */
static uint64_t v6_kallsyms_at(struct tb_tracedat *td, uint64_t from)
{
	struct diag_sink unheard = {0};
	struct rd r = {.td = td, .pos = from, .end = td->info.file_size};
	char system[TDAT_MAX_NAME];
	uint32_t n, nsys = 0;
	uint64_t len;
	int rc;

	diag_sink_install(&unheard);
	/* The counts are checked as the reading in turn checks them: a lie is not walked. */
	rc = rd_u32(&r, &n, "ftrace format count");
	if (rc == 0 && n > rd_left(&r) / 8)
		rc = -EINVAL;
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		if ((rc = rd_u64(&r, &len, "format file size")) == 0)
			rc = rd_skip_text(&r, len, TDAT_MAX_FORMAT, "format");
	if (rc == 0)
		rc = rd_u32(&r, &nsys, "event system count");
	if (rc == 0 && nsys > rd_left(&r) / 5)
		rc = -EINVAL;
	for (uint32_t s = 0; rc == 0 && s < nsys; s++) {
		if ((rc = rd_cstr(&r, system, sizeof(system), "event system name")) < 0 ||
		    (rc = rd_u32(&r, &n, "event count")) < 0)
			break;
		if (n > rd_left(&r) / 8)
			rc = -EINVAL;
		for (uint32_t i = 0; rc == 0 && i < n; i++)
			if ((rc = rd_u64(&r, &len, "format file size")) == 0)
				rc = rd_skip_text(&r, len, TDAT_MAX_FORMAT, "format");
	}
	diag_sink_install(NULL);
	diag_sink_free(&unheard);
	return rc == 0 ? r.pos : 0;
}

/* The reading stops before kallsyms's turn: the thread is let finish, unheard. */
static void drop_kallsyms(struct tb_tracedat *td, struct kallsyms_read *k)
{
	size_t len;

	if (k->started) {
		schema_kallsyms_filled(td->schema, &len); /* k is the thread's until then */
		schema_kallsyms_drop(td->schema);
	}
	k->started = false;
	diag_sink_free(&k->before);
	diag_sink_free(&k->during);
}

/* kallsyms's turn: what was found so far told, and its failure the reading's. */
static int kallsyms_turn(struct tb_tracedat *td, struct kallsyms_read *k)
{
	size_t len = 0;
	int rc = k->rc;

	if (k->started) {
		int filled = schema_kallsyms_filled(td->schema, &len);
		rc = rc < 0 ? rc : filled;
	}
	diag_sink_tell(&k->before);
	diag_sink_tell(&k->during);
	diag_sink_free(&k->before);
	diag_sink_free(&k->during);
	if (rc < 0)
		return rc;
	td->info.kallsyms_len = len;
	td->kallsyms_past = true; /* from here a problem waits for the parse's, told first */
	if (k->left)
		tdat_warn(td, k->at, "%llu bytes left over at the end of the %s section",
			  (unsigned long long)k->left, section_name(TB_TDAT_OPT_KALLSYMS));
	return 0;
}

/*
 * The end of the reading: kallsyms's table and problems, told now if the
 * reading got past its turn.  0 or -ENOMEM.
 */
static int settle_kallsyms(struct tb_tracedat *td)
{
	if (!td->kallsyms_past)
		return 0; /* tb_schema_free() drops what is pending */
	settle_kallsyms_before(td);
	return td->kallsyms_rc;
}

/* v6 kallsyms's turn, at r's position: started there unless it was where the walk said. */
static int read_kallsyms_v6(struct tb_tracedat *td, struct rd *r, struct kallsyms_read *k)
{
	int rc;

	if (td->no_symbols)
		return skip_kallsyms(td, r);
	if (!k->started || k->from != r->pos) {
		drop_kallsyms(td, k);
		*k = (struct kallsyms_read){0};
		start_kallsyms_v6(td, r->pos, k);
	}
	if ((rc = kallsyms_turn(td, k)) == 0)
		r->pos = k->pos + k->len;
	return rc;
}

/* ------------------------------------------------------------- version 6 */

static int read_v6(struct tb_tracedat *td, struct rd *r)
{
	struct kallsyms_read k = {0};
	uint64_t at, next, kallsyms_at;
	uint32_t cpus;
	char tag[10];
	int rc, ninstances;
	struct tdat_buffer *top;

	add_part(td, "initial format", -1, 0, 0, r->pos, r->pos);
	at = r->pos;
	if ((rc = read_headers(td, r)) < 0)
		return rc;
	add_part(td, "header_page and header_event", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if (!td->no_symbols && (kallsyms_at = v6_kallsyms_at(td, r->pos))) /* parsed while the formats are read */
		start_kallsyms_v6(td, kallsyms_at, &k);
	if ((rc = read_ftrace_formats(td, r)) < 0) {
		drop_kallsyms(td, &k);
		return rc;
	}
	add_part(td, "ftrace formats", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = read_event_formats(td, r)) < 0) {
		drop_kallsyms(td, &k);
		return rc;
	}
	add_part(td, "event formats", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = read_kallsyms_v6(td, r, &k)) < 0)
		return rc;
	add_part(td, "kallsyms", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = read_printk(td, r)) < 0)
		return rc;
	add_part(td, "printk formats", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = read_cmdlines(td, r)) < 0)
		return rc;
	add_part(td, "saved cmdlines", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = rd_u32(r, &cpus, "CPU count")) < 0)
		return rc;
	if (cpus == 0 || cpus > TDAT_MAX_CPUS)
		return rd_fail(r, at, "the file says %u CPUs; tracebuf reads 1 to %d", cpus, TDAT_MAX_CPUS);
	td->file_cpus = (int)cpus;
	if ((rc = rd_get(r, tag, 10, "options or flyrecord tag")) < 0)
		return rc;
	/* The top buffer is buffer 0; BUFFER options append the instances. */
	if (!(top = add_buffer(td, "", 0)))
		return -ENOMEM;
	if (!memcmp(tag, "options  ", 10)) {
		at = r->pos;
		if ((rc = read_options(td, r, NULL, &next, &next)) < 0)
			return rc;
		add_part(td, "options", -1, 0, at - 10, r->pos - at + 10, r->pos - at + 10);
		if ((rc = rd_get(r, tag, 10, "flyrecord tag")) < 0)
			return rc;
	}
	if (!memcmp(tag, "latency  ", 10)) {
		td->v6_latency = td->info.latency = true;
		td->latency_offset = r->pos;
		td->buffers[0].pub.text_offset = r->pos;
		td->buffers[0].pub.text_size = r->end - r->pos;
		add_part(td, "latency text", -1, 0, r->pos, r->end - r->pos, r->end - r->pos);
		return 0;
	}
	if (memcmp(tag, "flyrecord", 10))
		return rd_fail(r, r->pos - 10, "expected 'flyrecord' or 'latency' here");
	if (td->cpucount)
		cpus = (uint32_t)td->cpucount;
	td->buffers[0].pub.offset = r->pos - 10;
	if ((rc = read_flyrecord_table(td, r, &td->buffers[0], (int)cpus)) < 0)
		return rc;
	ninstances = td->nbuffers;
	for (int i = 1; i < ninstances; i++)
		if ((rc = read_v6_buffer(td, &td->buffers[i], (int)cpus)) < 0 &&
		    (rc = keep_buffer_empty(&td->buffers[i], (int)cpus, rc)) < 0)
			return rc;
	return check_all_cpu_data(td);
}

/* ------------------------------------------------------------- version 7 */

static const char *section_name(unsigned id)
{
	switch (id) {
	case TB_TDAT_OPT_DONE:
		return "options";
	case TB_TDAT_OPT_BUFFER:
		return "buffer flyrecord";
	case TB_TDAT_OPT_STRINGS:
		return "strings";
	case TB_TDAT_OPT_HEADER_INFO:
		return "headers";
	case TB_TDAT_OPT_FTRACE_EVENTS:
		return "ftrace events";
	case TB_TDAT_OPT_EVENT_FORMATS:
		return "events format";
	case TB_TDAT_OPT_KALLSYMS:
		return "kallsyms";
	case TB_TDAT_OPT_PRINTK:
		return "printk";
	case TB_TDAT_OPT_CMDLINES:
		return "command lines";
	case TB_TDAT_OPT_BUFFER_TEXT:
		return "buffer text";
	default:
		return "unknown";
	}
}

/*
 * A section header (16 bytes) at at, which the file said at from: id,
 * flags, size.  A pointer out of the file is reported where it is stored.
 */
static int read_section_header(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned want,
			       uint16_t *flags, uint64_t *size, bool *cut)
{
	uint8_t h[16];
	int rc;

	if (cut && (at > td->info.file_size || td->info.file_size - at < 16))
		return -ENODATA; /* the caller notes the cut */
	if (at > td->info.file_size || td->info.file_size - at < 16) {
		tdat_report(td, from,
			    "the %s section is said to start at byte %llu, past the end of "
			    "the %llu-byte file",
			    section_name(want), (unsigned long long)at,
			    (unsigned long long)td->info.file_size);
		return -EINVAL;
	}
	if ((rc = tdat_pread(td, h, sizeof(h), at, "section header")) < 0)
		return rc;
	if (tdat_le16(h) != want) {
		tdat_report(td, at, "expected a %s section (id %u) here, found id %u", section_name(want),
			    want, tdat_le16(h));
		return -EINVAL;
	}
	*flags = tdat_le16(h + 2);
	*size = tdat_le64(h + 8);
	if (cut && *size > td->info.file_size - at - 16) {
		*cut = true; /* the caller reads what lies in the file */
		*size = td->info.file_size - at - 16;
	}
	if (*size > td->info.file_size - at - 16) {
		tdat_report(td, at,
			    "the %s section claims %llu bytes; the file has %llu after its "
			    "header",
			    section_name(want), (unsigned long long)*size,
			    (unsigned long long)(td->info.file_size - at - 16));
		return -EINVAL;
	}
	if ((*flags & 1) && td->codec == TDAT_CODEC_NONE) {
		tdat_report(td, at,
			    "the %s section is marked compressed in a file without "
			    "compression",
			    section_name(want));
		return -EINVAL;
	}
	return 0;
}

/* A block's sizes, before anything is allocated for them: a bomb (or damage) is refused. */
static int check_block_sizes(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen,
			     const char *what)
{
	if (ulen > TDAT_MAX_TEXT || (uint64_t)ulen > clen * TDAT_MAX_RATIO + 4096) {
		tdat_report(td, at,
			    "%s: %llu compressed bytes claim to hold %u: refused (a "
			    "decompression bomb, or damage)",
			    what, (unsigned long long)clen, ulen);
		return -EINVAL;
	}
	return 0;
}

/*
 * A zstd block decompressed in one call straight into buf (no window to
 * copy out of, nor its pages to fault in: kallsyms's 5.4 MB in 6.0 ms
 * where streaming took 6.5 ms): 1 when it made exactly the ulen bytes declared, 0 when it must
 * be streamed - another codec, or something the one call refuses, which
 * streaming then finds and says - or a negative errno.
 */
static int inflate_whole(struct tdat_unzip *u, const uint8_t *in, uint64_t clen, uint32_t ulen, uint8_t *buf)
{
	size_t used;
	int rc = tdat_unzip_whole(u, in, clen, buf, ulen, &used);

	if (rc == 0)
		return 1;
	if (rc == -EINVAL)
		return tdat_unzip_reset(u); /* streamed again from the start */
	return rc == -ENOTSUP ? 0 : rc;
}

/* Decompress a block whose sizes passed check_block_sizes() into buf (ulen bytes). */
static int inflate_checked(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen, const char *what,
			   uint8_t *buf)
{
	struct tdat_unzip *u = NULL;
	uint8_t *in = malloc(clen ? clen : 1);
	size_t in_pos = 0, out_pos = 0;
	const char *why = "";
	int rc = in ? tdat_unzip_new(td->codec, &u) : -ENOMEM;
	if (rc == 0)
		rc = tdat_pread(td, in, clen, at, what);
	if (rc == 0 && (rc = inflate_whole(u, in, clen, ulen, buf)) == 1)
		rc = 0;
	else if (rc == 0) {
		rc = tdat_unzip_step(u, in, clen, &in_pos, buf, ulen, &out_pos, &why);
		if (rc == 0 && out_pos == ulen) {
			/* Room is full and the block did not end: it holds more than it says. */
			uint8_t probe;
			size_t probe_pos = 0;
			rc = tdat_unzip_step(u, in, clen, &in_pos, &probe, 1, &probe_pos, &why);
			if (rc >= 0 && probe_pos) {
				why = "it decompresses to more bytes than it declares";
				rc = -EINVAL;
			}
		}
		if (rc == 0) {
			why = "it ends before its declared size";
			rc = -EINVAL;
		}
		if (rc == 1 && out_pos != ulen) {
			why = "it decompresses to fewer bytes than it declares";
			rc = -EINVAL;
		}
		if (rc == -EINVAL)
			tdat_report(td, at, "%s (%s, %llu bytes declaring %u): %s", what,
				    tdat_codec_name(td->codec), (unsigned long long)clen, ulen, why);
	}
	tdat_unzip_free(u);
	free(in);
	if (rc < 0)
		return rc == -EINVAL || rc == -ENOMEM ? rc : -EIO;
	return 0;
}

int tdat_inflate_block(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen, const char *what,
		       uint8_t **out)
{
	uint8_t *buf;
	int rc;

	*out = NULL;
	if ((rc = check_block_sizes(td, at, clen, ulen, what)) < 0)
		return rc;
	if (!(buf = malloc(ulen ? ulen : 1)))
		return -ENOMEM;
	if ((rc = inflate_checked(td, at, clen, ulen, what, buf)) < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	return 0;
}


/*
 * A section's header and, compressed, its block's sizes, checked and
 * listed among the parts: *clen and *ulen are the block's sizes (0, and
 * the size, when it is stored plainly).
 */
static int section_head(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned id, uint16_t *flags,
			uint64_t *size, uint64_t *clen, uint32_t *ulen)
{
	uint8_t h[8];
	int rc = read_section_header(td, at, from, id, flags, size, NULL);

	*clen = 0;
	*ulen = 0;
	if (rc < 0)
		return rc;
	if (!(*flags & 1))
		return add_part(td, section_name(id), (int)id, *flags, at, *size + 16, *size);
	if (*size < 8) {
		tdat_report(td, at, "the compressed %s section is too short for its sizes", section_name(id));
		return -EINVAL;
	}
	if ((rc = tdat_pread(td, h, 8, at + 16, "compressed section sizes")) < 0)
		return rc;
	if (tdat_le32(h) > *size - 8) {
		tdat_report(td, at + 16, "the %s section's %u compressed bytes do not fit in its %llu",
			    section_name(id), tdat_le32(h), (unsigned long long)*size);
		return -EINVAL;
	}
	*clen = tdat_le32(h);
	*ulen = tdat_le32(h + 4);
	return add_part(td, section_name(id), (int)id, *flags, at, *size + 16, *ulen);
}

/* A cursor on the decompressed block of section id at at; the caller frees *mem. */
static int inflate_section(struct tb_tracedat *td, uint64_t at, unsigned id, uint64_t clen, uint32_t ulen,
			   struct rd *r, uint8_t **mem)
{
	int rc = tdat_inflate_block(td, at + 24, clen, ulen, section_name(id), mem);

	if (rc < 0)
		return rc;
	*r = (struct rd){.td = td, .mem = *mem, .end = ulen, .base = at, .where = section_name(id)};
	return 0;
}

/*
 * A section's body as a cursor: the file itself, or (compressed) a buffer
 * the caller frees (*mem).
 */
static int open_section(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned id, struct rd *r,
			uint8_t **mem)
{
	uint16_t flags;
	uint64_t size, clen;
	uint32_t ulen;
	int rc = section_head(td, at, from, id, &flags, &size, &clen, &ulen);

	*mem = NULL;
	memset(r, 0, sizeof(*r));
	r->td = td;
	if (rc < 0)
		return rc;
	if (!(flags & 1)) {
		r->pos = at + 16;
		r->end = at + 16 + size;
		return 0;
	}
	return inflate_section(td, at, id, clen, ulen, r, mem);
}

typedef int section_reader(struct tb_tracedat *td, struct rd *r);

static int read_section(struct tb_tracedat *td, const struct sections *sec, unsigned id, section_reader *read,
			bool required)
{
	struct rd r;
	uint8_t *mem;
	int rc;

	if (!sec->at[id]) {
		if (!required)
			return 0;
		tdat_report(td, 0, "the file has no %s section (no option %u points to one)",
			    section_name(id), id);
		return -EINVAL;
	}
	if ((rc = open_section(td, sec->at[id], sec->opt_at[id], id, &r, &mem)) < 0)
		return rc;
	rc = read(td, &r);
	if (rc == 0 && rd_left(&r))
		tdat_warn(td, sec->at[id], "%llu bytes left over at the end of the %s section",
			  (unsigned long long)rd_left(&r), section_name(id));
	free(mem);
	return rc;
}

/*
 * An options section after the first that the end of a file cut short
 * takes, whole or in part: noted for say_cut(), and the chain stops there
 * (trace-cmd writes the later ones after the data they describe: what came
 * before them is read).  The first holds what the file needs to be read at
 * all: its loss is said where it is pointed to.
 */
static bool options_cut(struct tb_tracedat *td, uint64_t at, uint64_t from)
{
	uint16_t flags;
	uint64_t size;
	bool cut = false;
	int rc = read_section_header(td, at, from, TB_TDAT_OPT_DONE, &flags, &size, &cut);

	if (rc == -ENODATA || (rc == 0 && cut)) {
		td->cut.sections++;
		return true;
	}
	return false; /* whole, or damaged: open_section() says how */
}

/* Options sections chained by their DONE options; each read once. */
static int read_v7_options(struct tb_tracedat *td, uint64_t at, uint64_t from, struct sections *sec)
{
	uint64_t *seen = calloc(TDAT_MAX_SECTIONS, sizeof(*seen));
	struct rd r;
	uint8_t *mem;
	int rc = seen ? 0 : -ENOMEM, n = 0;

	while (rc == 0 && at) {
		for (int i = 0; i < n; i++)
			if (seen[i] == at) {
				tdat_report(td, at, "the options section here is chained to twice: a loop");
				rc = -EINVAL;
			}
		if (rc == 0 && n == TDAT_MAX_SECTIONS) {
			tdat_report(td, at, "more than %d options sections chained", TDAT_MAX_SECTIONS);
			rc = -EINVAL;
		}
		if (rc < 0 || (n && options_cut(td, at, from)))
			break;
		seen[n++] = at;
		if ((rc = open_section(td, at, from, TB_TDAT_OPT_DONE, &r, &mem)) < 0)
			break;
		rc = read_options(td, &r, sec, &at, &from);
		free(mem);
	}
	free(seen);
	return rc;
}

/*
 * The buffers' sections: headers checked, compression noted, CPU data
 * inside the file.  A buffer section that lies past the end of a file cut
 * short, or whose header is damaged, costs that buffer's data only (said
 * by say_cut(), or where the header is); one the end cuts is read up to
 * it, CPU by CPU (check_cpu_data).
 */
static int check_v7_buffers(struct tb_tracedat *td)
{
	for (int i = 0; i < td->nbuffers; i++) {
		struct tdat_buffer *b = &td->buffers[i];
		bool text = b->pub.text_offset != 0, cut = false;
		unsigned id = text ? TB_TDAT_OPT_BUFFER_TEXT : TB_TDAT_OPT_BUFFER;
		uint16_t flags;
		uint64_t size;
		char what[TDAT_MAX_NAME + 32];
		int rc = read_section_header(td, b->pub.offset, b->option_at, id, &flags, &size, text ? NULL : &cut);

		if (rc == -ENODATA)
			td->cut.buffers++;
		if (rc < 0 && !text && rc != -ENOMEM) {
			empty_buffer(b);
			continue;
		}
		if (rc < 0)
			return rc;
		b->pub.compressed = flags & 1;
		snprintf(what, sizeof(what), "buffer %s", b->name[0] ? b->name : "(top)");
		add_part(td, what, (int)id, flags, b->pub.offset, size + 16, size);
		if (id == TB_TDAT_OPT_BUFFER_TEXT) {
			b->pub.text_offset = b->pub.offset + 16;
			b->pub.text_size = size;
			td->info.latency = true;
			continue;
		}
	}
	return check_all_cpu_data(td);
}

/* The top-level buffer first, as trace-cmd lists them. */
static void top_buffer_first(struct tb_tracedat *td)
{
	for (int i = 1; i < td->nbuffers; i++)
		if (!td->buffers[i].name[0]) {
			struct tdat_buffer top = td->buffers[i];
			memmove(&td->buffers[1], &td->buffers[0], (size_t)i * sizeof(top));
			td->buffers[0] = top;
			return;
		}
}

/*
 * Where tracebuf's blob stores begin, when they lie one after the other at
 * the end of the file (tdat_write.c appends them there); else the file's end.
 */
static uint64_t stores_start(const struct tb_tracedat *td)
{
	uint64_t start = td->info.file_size;

	for (bool moved = true; moved;) {
		moved = false;
		for (int i = 0; i < td->nstores; i++)
			if (td->stores[i].len && td->stores[i].at + td->stores[i].len == start) {
				start = td->stores[i].at;
				moved = true;
			}
	}
	return start;
}

/*
 * The sections follow each other from the initial part to the end of the
 * file (trace-cmd finds the strings section by walking them): a walk that
 * does not end exactly at the end of the file means the file was cut or
 * damaged, even where no part the report needs was hit.
 */
static void walk_sections(struct tb_tracedat *td, uint64_t at)
{
	/* tracebuf's blob store, when there is one, follows the last section (tdat_write.c) */
	uint64_t end = stores_start(td);
	uint8_t h[16];

	/* The end of a file cut short inside the data: said once, by say_cut(). */
	if (td->cut.cpus || td->cut.buffers || td->cut.sections || td->cut.stores)
		return;
	for (int n = 0; at < end && n < 65536; n++) {
		uint64_t size, left = end - at;
		if (left < 16 || tdat_pread(td, h, 16, at, "a section header") < 0) {
			tdat_report(td, at,
				    "the file ends %llu bytes into a section header: it was cut "
				    "short",
				    (unsigned long long)left);
			return;
		}
		size = tdat_le64(h + 8);
		if (size > left - 16) {
			tdat_report(td, at,
				    "the %s section here (%llu bytes) runs past the end of the "
				    "file: it was cut short",
				    section_name(tdat_le16(h)), (unsigned long long)size);
			return;
		}
		if (tdat_le16(h) == TB_TDAT_OPT_STRINGS)
			add_part(td, "strings", TB_TDAT_OPT_STRINGS, tdat_le16(h + 2), at, size + 16, size);
		at += 16 + size;
	}
}

static int read_v7(struct tb_tracedat *td, struct rd *r)
{
	struct kallsyms_read k = {0};
	struct sections sec;
	uint64_t options_at;
	int rc;

	memset(&sec, 0, sizeof(sec));
	if ((rc = rd_cstr(r, td->compression, sizeof(td->compression), "compression name")) < 0 ||
	    (rc = rd_cstr(r, td->compression_version, sizeof(td->compression_version),
			  "compression version")) < 0 ||
	    (rc = rd_u64(r, &options_at, "first options section offset")) < 0)
		return rc;
	rc = tdat_codec_by_name(td->compression);
	if (rc < 0)
		return rd_fail(
		    r, r->pos - 8 - strlen(td->compression_version) - 1 - strlen(td->compression) - 1,
		    "compression '%s' is not one tracebuf reads (none, zlib, zstd)", td->compression);
	td->codec = (enum tdat_codec)rc;
	add_part(td, "initial format", -1, 0, 0, r->pos, r->pos);
	if ((rc = read_v7_options(td, options_at, r->pos - 8, &sec)) < 0)
		return rc;
	if (!td->no_symbols) /* read and parsed while the formats are */
		start_kallsyms_v7(td, &sec, &k);
	if ((rc = read_section(td, &sec, TB_TDAT_OPT_HEADER_INFO, read_headers, true)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_FTRACE_EVENTS, read_ftrace_formats, false)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_EVENT_FORMATS, read_event_formats, false)) < 0) {
		drop_kallsyms(td, &k);
		return rc;
	}
	if ((rc = td->no_symbols ? read_section(td, &sec, TB_TDAT_OPT_KALLSYMS, skip_kallsyms, false)
				 : kallsyms_turn(td, &k)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_PRINTK, read_printk, false)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_CMDLINES, read_cmdlines, false)) < 0)
		return rc;
	top_buffer_first(td);
	if ((rc = check_v7_buffers(td)) < 0)
		return rc;
	walk_sections(td, r->pos);
	return 0;
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
	if ((rc = rd_cstr(r, version, sizeof(version), "version")) < 0)
		return rc;
	v = version[0] && strspn(version, "0123456789") == strlen(version) ? strtol(version, NULL, 10) : -1;
	if (v != 6 && v != 7)
		return rd_fail(r, 10, "trace.dat version '%s': tracebuf reads versions 6 and 7", version);
	td->info.version = (int)v;
	if ((rc = rd_get(r, b, 6, "endianness, long size and page size")) < 0)
		return rc;
	if (b[0] != 0)
		return rd_fail(r, r->pos - 6,
			       "the file is big endian (byte %u): tracebuf reads "
			       "little-endian traces only",
			       b[0]);
	td->info.long_size = b[1];
	td->info.page_size = tdat_le32(b + 2);
	if (b[1] != 4 && b[1] != 8)
		return rd_fail(r, r->pos - 5, "long size %u: must be 4 or 8", b[1]);
	if (!tb_page_size_valid(td->info.page_size))
		return rd_fail(r, r->pos - 4, "page size %u is not a sub-buffer size (4 KiB << 0..7)",
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
		td->buffers[0].clock = bracketed_clock(td->trace_clock);
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
			b->clock = bracketed_clock(td->trace_clock);
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
	td->diag = opts && opts->diag ? opts->diag : tb_diag_print;
	td->diag_ctx = opts && opts->diag ? opts->diag_ctx : NULL;
	td->no_symbols = opts && opts->no_symbols;
	td->lazy_formats = opts && opts->lazy_formats;
	td->path = strdup(path);
	td->schema = tb_schema_new();
	if (!td->path || !td->schema) {
		tb_tracedat_close(td);
		return -ENOMEM;
	}
	tb_schema_set_diag(td->schema, schema_diag, td);
	if (td->lazy_formats)
		tb_schema_set_loader(td->schema, load_by_id, td);
	td->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (td->fd < 0 || fstat(td->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = td->fd < 0 || !S_ISREG(st.st_mode) ? (td->fd < 0 ? -errno : -EINVAL) : -errno;
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
		rc = td->info.version >= 7 ? read_v7(td, &r) : read_v6(td, &r);
	if (rc != -ENOMEM && settle_kallsyms(td) == -ENOMEM)
		rc = -ENOMEM;
	if (rc == 0)
		rc = check_page_size(td);
	if (rc == 0)
		rc = say_cut(td);
	if (rc < 0) {
		tb_tracedat_close(td);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	fill_info(td);
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
			return rc == 0 ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}
