// SPDX-License-Identifier: MIT
/*
 * tdat_write.c - write a trace.dat that trace-cmd (and KernelShark) read.
 *
 * The metadata (header texts, formats, kallsyms, printk formats, cmdlines,
 * stats) is collected in memory until the first buffer begins, then
 * written in the order the version wants; the pages are written straight
 * from the caller's memory (v6, v7 without compression) or in chunks of
 * ten sub-buffers through the compressor, as trace-cmd does.  Offsets not
 * known while writing (CPU tables, chunk counts, section sizes, the first
 * options section) are written as zeros and filled in when known.
 *
 * Version 6:  initial part, header_page, header_event, ftrace formats,
 *   event formats, kallsyms, printk formats, cmdlines, CPU count, options
 *   (TRACECLOCK, UNAME, VERSION, CPUSTAT..., CPUCOUNT, a BUFFER per
 *   instance), the top buffer's flyrecord table and clock record, its
 *   pages; then per instance a flyrecord block and its pages.
 * Version 7:  initial part (compression, first options offset), the
 *   metadata sections (compressed when asked), the first options section
 *   (section offsets, common options), then per buffer an options section
 *   holding its BUFFER option and its "buffer flyrecord" section, then the
 *   strings section.  Every options section lies before the data it
 *   describes, so a file cut short keeps what describes the data it holds.
 *   Sections follow each other without gaps: trace-cmd finds the strings
 *   by walking them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "print/strbuf.h"
#include "tdat_internal.h"
#include "tracebuf/page.h"
#include "util/write_all.h"

#define CHUNK_PAGES	10 /* sub-buffers per compressed chunk, as trace-cmd */
#define WRITER_NAME	"tracebuf 0.1.0"
#define MAX_WRITER_CPUS TDAT_MAX_CPUS

struct stored_text {
	char *system; /* formats only */
	char name[TDAT_MAX_NAME], id[16]; /* formats only: their name and ID lines */
	char *text;
	size_t len;
};

struct w_cpu {
	int cpu;
	uint64_t offset, size;
};

struct w_buffer {
	char *name;
	char *clock;
	uint64_t section_at; /* v7: its section header; v6: its flyrecord block */
	uint64_t table_at;   /* v6: its CPU table */
	struct w_cpu *cpus;
	int ncpus;
	uint32_t string; /* v7: its description in the strings section */
	uint64_t option_at; /* v7: its BUFFER option, written before its data (reserve_buffer_option) */
	int option_cpus;    /* the CPUs that option has room for */
	bool option_late;   /* more CPUs than that: the option goes after the data, the room is padding */
};

struct tb_tracedat_writer {
	int fd;
	int err;
	uint64_t pos;
	int version;
	enum tdat_codec codec;
	struct tdat_zipper *zip;
	uint32_t page_size;
	int cpus;
	char *clock, *trace_clock, *uname;
	uint32_t tsc2nsec_mult, tsc2nsec_shift;
	tb_problem_fn *diag;
	void *diag_ctx;
	void (*progress)(void *ctx, uint64_t bytes);
	void *progress_ctx;
	uint64_t taken; /* sub-buffer bytes given to write_pages / copy_file, for progress */
	char *path;

	/* metadata, until written */
	char *header_page, *header_event;
	size_t hp_len, he_len;
	struct stored_text *formats;
	size_t nformats;
	struct stored_text kallsyms, printk, cmdlines, constants;
	struct tb_strbuf cpustats; /* CPUSTAT payloads: u32 length + text, one after the other */
	bool meta_written;
	/*
	 * The blob stores to copy at close: one for every buffer, or (captures
	 * joined, each its own ring numbering its blobs from 0) one per buffer,
	 * each option then naming its buffer.
	 */
	struct w_store {
		char *path;
		char *buffer;	  /* NULL: every buffer's */
		uint64_t in_body; /* where its TB_BLOBS option's payload lies in the options' body */
		uint64_t at;	  /* and in the file */
	} *stores;
	int nstores;
	char *last_stat_buffer;

	/* buffers */
	struct w_buffer *buffers;
	int nbuffers;
	struct w_buffer *cur;
	struct w_cpu *cur_cpu;
	bool top_done;	  /* v6: the top buffer's table is settled */
	char **instances; /* v6: the instances announced at open */
	int ninstances;
	uint64_t v6_buffer_opts[TDAT_MAX_BUFFERS]; /* v6: where each BUFFER option's offset lies */
	uint64_t options_at_field;		   /* v7: where the first options offset is stored */
	uint64_t options_next_at;		   /* v7: the last options section's DONE payload (next offset) */
	uint64_t section_at[TB_TDAT_OPT_CMDLINES + 1];
	struct tb_strbuf strings;

	/* compression of the current CPU */
	uint8_t *chunk, *zout;
	size_t chunk_len, zout_cap;
	uint32_t chunks;
	uint8_t *zeros;
};

/* -------------------------------------------------------------- output */

static int fail(struct tb_tracedat_writer *w, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct tb_tracedat_writer *w, int rc, const char *fmt, ...)
{
	struct tb_problem d = {.file = w->path, .offset = w->pos};
	va_list ap;

	if (w->err)
		return w->err;
	w->err = rc;
	va_start(ap, fmt);
	vsnprintf(d.reason, sizeof(d.reason), fmt, ap);
	va_end(ap);
	w->diag(w->diag_ctx, &d);
	return rc;
}

static int put(struct tb_tracedat_writer *w, const void *buf, size_t n)
{
	int rc;

	if (w->err)
		return w->err;
	if ((rc = tb__write_all(w->fd, buf, n)) < 0)
		return fail(w, rc, "writing: %s", strerror(-rc));
	w->pos += n;
	return 0;
}

/* Write n bytes at an offset already written (a placeholder). */
static int patch(struct tb_tracedat_writer *w, uint64_t at, const void *buf, size_t n)
{
	if (w->err)
		return w->err;
	if (pwrite(w->fd, buf, n, (off_t)at) != (ssize_t)n)
		return fail(w, -errno ? -errno : -EIO, "writing at byte %llu: %s", (unsigned long long)at,
			    strerror(errno));
	return 0;
}

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int put_u16(struct tb_tracedat_writer *w, uint16_t v)
{
	uint8_t b[2];

	le16(b, v);
	return put(w, b, 2);
}

static int put_u32(struct tb_tracedat_writer *w, uint32_t v)
{
	uint8_t b[4];

	le32(b, v);
	return put(w, b, 4);
}

static int put_u64(struct tb_tracedat_writer *w, uint64_t v)
{
	uint8_t b[8];

	le64(b, v);
	return put(w, b, 8);
}

static int patch_u32(struct tb_tracedat_writer *w, uint64_t at, uint32_t v)
{
	uint8_t b[4];

	le32(b, v);
	return patch(w, at, b, 4);
}

static int patch_u64(struct tb_tracedat_writer *w, uint64_t at, uint64_t v)
{
	uint8_t b[8];

	le64(b, v);
	return patch(w, at, b, 8);
}

/* Zeros up to the next page boundary (CPU data starts page-aligned). */
static int pad_to_page(struct tb_tracedat_writer *w)
{
	uint64_t n = (w->page_size - w->pos % w->page_size) % w->page_size;

	return n ? put(w, w->zeros, (size_t)n) : 0;
}

/* Byte-buffer helpers for bodies built in memory. */
static void sb_u16(struct tb_strbuf *b, uint16_t v)
{
	uint8_t x[2];

	le16(x, v);
	sb_put(b, x, 2);
}

static void sb_u32(struct tb_strbuf *b, uint32_t v)
{
	uint8_t x[4];

	le32(x, v);
	sb_put(b, x, 4);
}

static void sb_u64(struct tb_strbuf *b, uint64_t v)
{
	uint8_t x[8];

	le64(x, v);
	sb_put(b, x, 8);
}

static void sb_cstr(struct tb_strbuf *b, const char *s)
{
	sb_put(b, s, strlen(s) + 1);
}

/* The head of one of tracebuf's own options of len payload bytes, in its PROCMAPS wrapping (tdat_internal.h). */
static void sb_own_option(struct tb_strbuf *b, uint16_t own_id, size_t len)
{
	sb_u16(b, TB_TDAT_OPT_PROCMAPS);
	sb_u32(b, (uint32_t)(TDAT_OWN_HEAD + len + TDAT_OWN_TAIL));
	sb_put(b, TDAT_OWN_MAGIC, 8);
	sb_u16(b, own_id);
}

/* Its end: a last byte that is not NUL, so libtracecmd leaves the option alone. */
static void sb_own_option_end(struct tb_strbuf *b)
{
	sb_putc(b, '\n');
}

/* Padding of len bytes in all: a PROCMAPS option of zeros (tdat_internal.h); len >= 6. */
static void sb_padding(struct tb_strbuf *b, size_t len)
{
	size_t end = b->len + len;

	sb_u16(b, TB_TDAT_OPT_PROCMAPS);
	sb_u32(b, (uint32_t)(len - 6));
	while (b->len < end)
		sb_putc(b, '\0');
}

/* ---------------------------------------------------------------- open */

static char *dup_or_null(const char *s, int *rc)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*rc = -ENOMEM;
	return d;
}

static void writer_free(struct tb_tracedat_writer *w)
{
	free(w->path);
	free(w->clock);
	free(w->trace_clock);
	free(w->uname);
	free(w->header_page);
	free(w->header_event);
	for (size_t i = 0; i < w->nformats; i++) {
		free(w->formats[i].system);
		free(w->formats[i].text);
	}
	free(w->formats);
	free(w->kallsyms.text);
	free(w->printk.text);
	free(w->cmdlines.text);
	free(w->constants.text);
	for (int i = 0; i < w->nstores; i++) {
		free(w->stores[i].path);
		free(w->stores[i].buffer);
	}
	free(w->stores);
	sb_free(&w->cpustats);
	sb_free(&w->strings);
	free(w->last_stat_buffer);
	for (int i = 0; i < w->nbuffers; i++) {
		free(w->buffers[i].name);
		free(w->buffers[i].clock);
		free(w->buffers[i].cpus);
	}
	free(w->buffers);
	for (int i = 0; i < w->ninstances; i++)
		free(w->instances[i]);
	free(w->instances);
	free(w->chunk);
	free(w->zout);
	free(w->zeros);
	tdat_zipper_free(w->zip);
	free(w);
}

int tb_tracedat_writer_open(const char *path, const struct tb_tracedat_write_opts *opts,
			    struct tb_tracedat_writer **out)
{
	struct tb_tracedat_writer *w = calloc(1, sizeof(*w));
	int rc = 0, codec;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->diag = opts->diag ? opts->diag : tb_problem_print;
	w->diag_ctx = opts->diag ? opts->diag_ctx : NULL;
	w->progress = opts->progress;
	w->progress_ctx = opts->progress_ctx;
	w->version = opts->version ? opts->version : 6;
	w->page_size = opts->page_size;
	w->cpus = opts->cpus;
	w->path = dup_or_null(path, &rc);
	w->clock = dup_or_null(opts->clock, &rc);
	w->trace_clock = dup_or_null(opts->trace_clock, &rc);
	w->uname = dup_or_null(opts->uname, &rc);
	w->tsc2nsec_mult = opts->tsc2nsec_mult;
	w->tsc2nsec_shift = opts->tsc2nsec_shift;
	if (w->tsc2nsec_shift > 63)
		rc = -EINVAL;
	for (const char *const *n = opts->instances; rc == 0 && n && *n; n++) {
		char **grown = realloc(w->instances, (size_t)(w->ninstances + 1) * sizeof(*grown));
		if (!grown || w->ninstances >= TDAT_MAX_BUFFERS - 1 || !**n || strlen(*n) >= TDAT_MAX_NAME) {
			free(grown == w->instances ? NULL : grown);
			rc = grown ? -EINVAL : -ENOMEM;
			break;
		}
		w->instances = grown;
		if (!(w->instances[w->ninstances] = strdup(*n)))
			rc = -ENOMEM;
		else
			w->ninstances++;
	}
	codec = tdat_codec_by_name(opts->compression ? opts->compression : "none");
	if (rc == 0 &&
	    (w->version < 6 || w->version > 7 || codec < 0 || (w->version == 6 && codec != TDAT_CODEC_NONE) ||
	     w->cpus <= 0 || w->cpus > MAX_WRITER_CPUS))
		rc = -EINVAL;
	if (rc == 0) {
		w->codec = (enum tdat_codec)codec;
		if (w->codec != TDAT_CODEC_NONE)
			rc = tdat_zipper_new(w->codec, &w->zip);
	}
	if (rc == 0 && (w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		rc = -errno;
	if (rc < 0) {
		if (rc == -EINVAL) {
			struct tb_problem d = {.file = path};
			snprintf(d.reason, sizeof(d.reason),
				 "cannot write version %d with compression "
				 "'%s' for %d CPUs (v6: none; v7: none, zlib or zstd; 1 to %d CPUs)",
				 w->version, opts->compression ? opts->compression : "none", w->cpus,
				 MAX_WRITER_CPUS);
			w->diag(w->diag_ctx, &d);
		}
		if (w->fd >= 0)
			close(w->fd);
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

uint64_t tb_tracedat_writer_bytes(const struct tb_tracedat_writer *w)
{
	return w->pos;
}

bool tdat_writer_has_headers(const struct tb_tracedat_writer *w)
{
	return w->header_page != NULL;
}

uint32_t tdat_writer_page_size(const struct tb_tracedat_writer *w)
{
	return w->meta_written ? w->page_size : 0;
}

/* ----------------------------------------------------------- metadata */

static int too_late(struct tb_tracedat_writer *w, const char *what)
{
	return fail(w, -EINVAL, "%s given after the first buffer began", what);
}

static int keep_text(struct stored_text *t, const char *text, size_t len)
{
	free(t->text);
	t->text = malloc(len ? len : 1);
	if (!t->text)
		return -ENOMEM;
	memcpy(t->text, text, len);
	t->len = len;
	return 0;
}

int tb_tracedat_write_headers(struct tb_tracedat_writer *w, const char *header_page, size_t hp_len,
			      const char *header_event, size_t he_len)
{
	if (w->meta_written)
		return too_late(w, "header_page");
	free(w->header_page);
	free(w->header_event);
	w->header_page = malloc(hp_len + 1);
	w->header_event = malloc(he_len + 1);
	if (!w->header_page || !w->header_event)
		return fail(w, -ENOMEM, "out of memory");
	memcpy(w->header_page, header_page, hp_len);
	memcpy(w->header_event, header_event, he_len);
	w->hp_len = hp_len;
	w->he_len = he_len;
	return 0;
}

/* The value of a format text's "KEY: " line ("name", "ID"), at most cap-1 bytes; "" if none. */
static void format_line(const char *text, size_t len, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key), at = 0;

	out[0] = '\0';
	while (at < len) {
		const char *line = text + at, *nl = memchr(line, '\n', len - at);
		size_t n = nl ? (size_t)(nl - line) : len - at;
		if (n > klen + 1 && !memcmp(line, key, klen) && line[klen] == ':') {
			line += klen + 1, n -= klen + 1;
			while (n && (*line == ' ' || *line == '\t'))
				line++, n--;
			n = n < cap - 1 ? n : cap - 1;
			memcpy(out, line, n);
			out[n] = '\0';
			return;
		}
		at += n + 1;
	}
}

/*
 * Formats of several captures go into one file (a program's buffer beside
 * the kernel's): an event both describe is stored once, the first text
 * kept, and two different events may not share an ID - a reader could not
 * tell their records apart.  1 when text is a duplicate to skip, 0 when it
 * is new, or the writer's error.
 */
static int format_seen(struct tb_tracedat_writer *w, const char *system, const char *name, const char *id)
{
	for (size_t i = 0; i < w->nformats; i++) {
		const struct stored_text *f = &w->formats[i];
		bool same_event = !strcmp(f->system, system) && !strcmp(f->name, name);
		if (same_event && !strcmp(f->id, id))
			return 1;
		if (same_event)
			return fail(w, -EINVAL, "%s:%s is given with ID %s and with ID %s", system, name, f->id, id);
		if (id[0] && !strcmp(f->id, id))
			return fail(w, -EINVAL, "%s:%s and %s:%s both have ID %s", f->system, f->name, system, name,
				    id);
	}
	return 0;
}

int tb_tracedat_write_format(struct tb_tracedat_writer *w, const char *system, const char *text, size_t len)
{
	char name[TDAT_MAX_NAME], id[16];
	struct stored_text *f;
	int seen;

	if (w->meta_written)
		return too_late(w, "a format");
	if (!system[0] || strlen(system) >= TDAT_MAX_NAME)
		return fail(w, -EINVAL, "bad system name '%.40s'", system);
	format_line(text, len, "name", name, sizeof(name));
	format_line(text, len, "ID", id, sizeof(id));
	if ((seen = format_seen(w, system, name, id)) != 0)
		return seen > 0 ? 0 : seen;
	f = realloc(w->formats, (w->nformats + 1) * sizeof(*f));
	if (!f)
		return fail(w, -ENOMEM, "out of memory");
	w->formats = f;
	f = &w->formats[w->nformats];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, name);
	strcpy(f->id, id);
	if (!(f->system = strdup(system)) || keep_text(f, text, len) < 0) {
		free(f->system);
		return fail(w, -ENOMEM, "out of memory");
	}
	w->nformats++;
	return 0;
}

/*
 * A text given again is joined to the one before (line-based texts of
 * several captures: the program's symbols and the kernel's, their comms).
 */
static int join_text(struct stored_text *t, const char *text, size_t len)
{
	bool newline = t->len && t->text[t->len - 1] != '\n';
	char *grown = realloc(t->text, t->len + newline + len + 1);

	if (!grown)
		return -ENOMEM;
	if (newline)
		grown[t->len++] = '\n';
	memcpy(grown + t->len, text, len);
	t->text = grown;
	t->len += len;
	return 0;
}

static int write_text(struct tb_tracedat_writer *w, struct stored_text *t, const char *what, const char *text,
		      size_t len)
{
	if (w->meta_written)
		return too_late(w, what);
	if (len > TDAT_MAX_TEXT || t->len + len + 1 > TDAT_MAX_TEXT)
		return fail(w, -EFBIG, "%s of %zu bytes is above the %u trace.dat readers accept", what,
			    t->len + len, TDAT_MAX_TEXT);
	if (t->text)
		return len && join_text(t, text, len) < 0 ? fail(w, -ENOMEM, "out of memory") : 0;
	return keep_text(t, text, len) < 0 ? fail(w, -ENOMEM, "out of memory") : 0;
}

int tb_tracedat_write_kallsyms(struct tb_tracedat_writer *w, const char *text, size_t len)
{
	return write_text(w, &w->kallsyms, "kallsyms", text, len);
}

int tb_tracedat_write_printk(struct tb_tracedat_writer *w, const char *text, size_t len)
{
	return write_text(w, &w->printk, "printk formats", text, len);
}

int tb_tracedat_write_constants(struct tb_tracedat_writer *w, const char *text, size_t len)
{
	return write_text(w, &w->constants, "constants", text, len);
}

int tb_tracedat_write_cmdlines(struct tb_tracedat_writer *w, const char *text, size_t len)
{
	return write_text(w, &w->cmdlines, "cmdlines", text, len);
}

int tb_tracedat_write_buffer_blobs(struct tb_tracedat_writer *w, const char *buffer, const char *path)
{
	struct w_store *st;

	if (!w || !path)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->meta_written)
		return too_late(w, "a blob store");
	for (int i = 0; i < w->nstores; i++)
		if (!w->stores[i].buffer || (buffer && !strcmp(w->stores[i].buffer, buffer)))
			return 0; /* that buffer's blobs have a store */
	if (w->nstores >= TDAT_MAX_BUFFERS || !(st = realloc(w->stores, (size_t)(w->nstores + 1) * sizeof(*st))))
		return fail(w, -ENOMEM, "too many blob stores, or out of memory");
	w->stores = st;
	st = &st[w->nstores];
	*st = (struct w_store){.path = strdup(path), .buffer = buffer ? strdup(buffer) : NULL};
	if (!st->path || (buffer && !st->buffer)) {
		free(st->path);
		free(st->buffer);
		return fail(w, -ENOMEM, "out of memory");
	}
	w->nstores++;
	return 0;
}

int tb_tracedat_write_blobs(struct tb_tracedat_writer *w, const char *path)
{
	return tb_tracedat_write_buffer_blobs(w, NULL, path);
}

/* One CPUSTAT option payload (a C string), kept as u32 length + bytes. */
static void stat_payload(struct tb_tracedat_writer *w, const char *a, size_t alen, const char *b, size_t blen)
{
	sb_u32(&w->cpustats, (uint32_t)(alen + blen + 1));
	sb_put(&w->cpustats, a, alen);
	sb_put(&w->cpustats, b, blen);
	sb_putc(&w->cpustats, '\0');
}

int tb_tracedat_write_cpustat(struct tb_tracedat_writer *w, const char *buffer, int cpu, const char *text,
			      size_t len)
{
	char head[TDAT_MAX_NAME + 16];
	int n;

	if (w->meta_written && w->version < 7)
		return too_late(w, "a CPU's stats");
	if (len > (1u << 20))
		return fail(w, -EINVAL, "a stats text of %zu bytes", len);
	/* trace-cmd introduces an instance's stats with a "Buffer: NAME" entry. */
	if (buffer[0] && (!w->last_stat_buffer || strcmp(w->last_stat_buffer, buffer))) {
		n = snprintf(head, sizeof(head), "\nBuffer: %s\n\n", buffer);
		stat_payload(w, head, (size_t)n, "", 0);
		free(w->last_stat_buffer);
		w->last_stat_buffer = strdup(buffer);
	}
	n = snprintf(head, sizeof(head), "CPU: %d\n", cpu);
	stat_payload(w, head, (size_t)n, text, len);
	return w->cpustats.oom ? fail(w, -ENOMEM, "out of memory") : 0;
}

/* The formats of one kind: ftrace's (u32 count + formats) or the others (systems). */
static void body_formats(struct tb_tracedat_writer *w, struct tb_strbuf *b, bool ftrace)
{
	uint32_t n = 0, nsys = 0;

	if (ftrace) {
		for (size_t i = 0; i < w->nformats; i++)
			n += !strcmp(w->formats[i].system, "ftrace");
		sb_u32(b, n);
		for (size_t i = 0; i < w->nformats; i++)
			if (!strcmp(w->formats[i].system, "ftrace")) {
				sb_u64(b, w->formats[i].len);
				sb_put(b, w->formats[i].text, w->formats[i].len);
			}
		return;
	}
	/* Systems in the order they first appear, each with all its formats. */
	for (size_t i = 0; i < w->nformats; i++) {
		bool first = strcmp(w->formats[i].system, "ftrace") != 0;
		for (size_t j = 0; first && j < i; j++)
			first = strcmp(w->formats[j].system, w->formats[i].system) != 0;
		nsys += first;
	}
	sb_u32(b, nsys);
	for (size_t i = 0; i < w->nformats; i++) {
		const char *sys = w->formats[i].system;
		bool first = strcmp(sys, "ftrace") != 0;
		for (size_t j = 0; first && j < i; j++)
			first = strcmp(w->formats[j].system, sys) != 0;
		if (!first)
			continue;
		n = 0;
		for (size_t j = i; j < w->nformats; j++)
			n += !strcmp(w->formats[j].system, sys);
		sb_cstr(b, sys);
		sb_u32(b, n);
		for (size_t j = i; j < w->nformats; j++)
			if (!strcmp(w->formats[j].system, sys)) {
				sb_u64(b, w->formats[j].len);
				sb_put(b, w->formats[j].text, w->formats[j].len);
			}
	}
}

static void body_headers(struct tb_tracedat_writer *w, struct tb_strbuf *b)
{
	sb_put(b, "header_page", 12);
	sb_u64(b, w->hp_len);
	sb_put(b, w->header_page, w->hp_len);
	sb_put(b, "header_event", 13);
	sb_u64(b, w->he_len);
	sb_put(b, w->header_event, w->he_len);
}

static void body_text(struct tb_strbuf *b, const struct stored_text *t, int len_bytes)
{
	if (len_bytes == 4)
		sb_u32(b, (uint32_t)t->len);
	else
		sb_u64(b, t->len);
	sb_put(b, t->text, t->len);
}

/* The TRACECLOCK text: the caller's trace_clock file, or "[clock]" alone. */
static const char *clock_text(struct tb_tracedat_writer *w, char *buf, size_t cap)
{
	if (w->trace_clock)
		return w->trace_clock;
	snprintf(buf, cap, "[%s]", w->clock);
	return buf;
}

/* Options both versions write: TRACECLOCK, UNAME, VERSION, CPUSTATs, CPUCOUNT. */
static void body_common_options(struct tb_tracedat_writer *w, struct tb_strbuf *b)
{
	char buf[TDAT_MAX_NAME + 4];
	const char *clock = w->clock ? clock_text(w, buf, sizeof(buf)) : NULL;

	if (clock) {
		sb_u16(b, TB_TDAT_OPT_TRACECLOCK);
		sb_u32(b, (uint32_t)strlen(clock) + 1);
		sb_cstr(b, clock);
	}
	if (w->uname) {
		sb_u16(b, TB_TDAT_OPT_UNAME);
		sb_u32(b, (uint32_t)strlen(w->uname) + 1);
		sb_cstr(b, w->uname);
	}
	if (w->tsc2nsec_mult) {
		sb_u16(b, TB_TDAT_OPT_TSC2NSEC);
		sb_u32(b, 16);
		sb_u32(b, w->tsc2nsec_mult);
		sb_u32(b, w->tsc2nsec_shift);
		sb_u64(b, 0); /* no offset: time counts from the TSC's zero, for every buffer alike */
	}
	sb_u16(b, TB_TDAT_OPT_VERSION);
	sb_u32(b, sizeof(WRITER_NAME));
	sb_cstr(b, WRITER_NAME);
	for (size_t at = 0; at + 4 <= w->cpustats.len;) {
		uint32_t n = tdat_le32((const uint8_t *)w->cpustats.buf + at);
		sb_u16(b, TB_TDAT_OPT_CPUSTAT);
		sb_put(b, w->cpustats.buf + at, 4 + n);
		at += 4 + n;
	}
	sb_u16(b, TB_TDAT_OPT_CPUCOUNT);
	sb_u32(b, 4);
	sb_u32(b, (uint32_t)w->cpus);
	if (w->constants.text) {
		sb_own_option(b, TB_TDAT_OPT_TB_CONSTANTS, w->constants.len);
		sb_put(b, w->constants.text, w->constants.len);
		sb_own_option_end(b);
	}
	for (int i = 0; i < w->nstores; i++) {
		const char *name = w->stores[i].buffer;
		sb_own_option(b, TB_TDAT_OPT_TB_BLOBS, 16 + (name ? strlen(name) + 1 : 0));
		w->stores[i].in_body = b->len;
		sb_u64(b, 0); /* offset and length, patched at close */
		sb_u64(b, 0);
		if (name)
			sb_cstr(b, name);
		sb_own_option_end(b);
	}
}

/* The options' body (body_common_options) is written at file offset at: where each store's option lies. */
static void place_store_options(struct tb_tracedat_writer *w, uint64_t at)
{
	for (int i = 0; i < w->nstores; i++)
		w->stores[i].at = at + w->stores[i].in_body;
}

static int check_metadata(struct tb_tracedat_writer *w)
{
	struct tb_header_page hp;
	struct tb_problem d = {0};

	if (!w->header_page)
		return fail(w, -EINVAL, "no header_page given: trace-cmd cannot read pages without it");
	if (tb_header_page_parse(w->header_page, w->hp_len, &hp, &d) < 0)
		return fail(w, -EINVAL, "the header_page text is not usable: %s", d.reason);
	if (!w->page_size)
		w->page_size = hp.data_offset + hp.data_size;
	if (w->page_size != hp.data_offset + hp.data_size || !tb_page_size_valid(w->page_size))
		return fail(w, -EINVAL, "page size %u does not match header_page's %u-byte sub-buffers",
			    w->page_size, hp.data_offset + hp.data_size);
	if (!(w->zeros = calloc(1, w->page_size)))
		return fail(w, -ENOMEM, "out of memory");
	return 0;
}

static int put_initial(struct tb_tracedat_writer *w)
{
	static const uint8_t magic[10] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	uint8_t b[6] = {0, 8};

	put(w, magic, sizeof(magic));
	put(w, w->version == 7 ? "7" : "6", 2);
	le32(b + 2, w->page_size);
	return put(w, b, sizeof(b));
}

/*
 * v6: a buffer's CPU table (offset and size of each CPU's data, zeros
 * patched when the CPUs are written) and then its clock record.
 */
static void put_v6_cpu_table(struct tb_tracedat_writer *w, struct w_buffer *b)
{
	char buf[TDAT_MAX_NAME + 4];

	b->table_at = w->pos;
	for (int i = 0; i < w->cpus; i++) {
		put_u64(w, 0);
		put_u64(w, 0);
	}
	if (w->clock) {
		snprintf(buf, sizeof(buf), "[%s]", w->clock);
		put_u64(w, strlen(buf));
		put(w, buf, strlen(buf));
	}
}

/* v6: everything up to the top buffer's flyrecord table, which is left to patch. */
static int write_v6_metadata(struct tb_tracedat_writer *w)
{
	struct tb_strbuf b = {0};
	int rc;

	put_initial(w);
	body_headers(w, &b);
	body_formats(w, &b, true);
	body_formats(w, &b, false);
	body_text(&b, &w->kallsyms, 4);
	body_text(&b, &w->printk, 4);
	body_text(&b, &w->cmdlines, 8);
	sb_u32(&b, (uint32_t)w->cpus);
	sb_put(&b, "options  ", 10);
	body_common_options(w, &b);
	/* A BUFFER option per instance, its offset filled in when the instance is written. */
	for (int i = 0; i < w->ninstances; i++) {
		sb_u16(&b, TB_TDAT_OPT_BUFFER);
		sb_u32(&b, (uint32_t)(8 + strlen(w->instances[i]) + 1));
		w->v6_buffer_opts[i + 1] = w->pos + b.len;
		sb_u64(&b, 0);
		sb_cstr(&b, w->instances[i]);
	}
	sb_u16(&b, TB_TDAT_OPT_DONE);
	sb_put(&b, "flyrecord", 10);
	if (b.oom) {
		sb_free(&b);
		return fail(w, -ENOMEM, "out of memory");
	}
	place_store_options(w, w->pos);
	rc = put(w, b.buf, b.len);
	sb_free(&b);
	if (rc < 0)
		return rc;
	/* The top buffer's CPU table, then its clock record (read when TRACECLOCK is there). */
	if (!(w->buffers = calloc(1, sizeof(*w->buffers))) || !(w->buffers[0].name = strdup("")))
		return fail(w, -ENOMEM, "out of memory");
	w->nbuffers = 1;
	put_v6_cpu_table(w, &w->buffers[0]);
	return w->err;
}

/* v7: a section's description, kept for the strings section; its offset there. */
static uint32_t add_string(struct tb_tracedat_writer *w, const char *desc)
{
	uint32_t at = (uint32_t)w->strings.len;

	sb_cstr(&w->strings, desc);
	return at;
}

/* v7: a section header; a buffer's size is patched when its data is done. */
static int put_section_header(struct tb_tracedat_writer *w, unsigned id, unsigned flags, uint32_t desc,
			      uint64_t size)
{
	put_u16(w, (uint16_t)id);
	put_u16(w, (uint16_t)flags);
	put_u32(w, desc);
	return put_u64(w, size);
}

/* v7: a metadata section, compressed when the file is. */
static int put_section(struct tb_tracedat_writer *w, unsigned id, uint32_t desc, const struct tb_strbuf *body)
{
	size_t cap;
	uint8_t *z;
	long n;

	if (body->oom)
		return fail(w, -ENOMEM, "out of memory");
	if (id <= TB_TDAT_OPT_CMDLINES)
		w->section_at[id] = w->pos;
	if (!w->zip) {
		put_section_header(w, id, 0, desc, body->len);
		return put(w, body->buf, body->len);
	}
	cap = tdat_zip_bound(w->zip, body->len);
	if (!(z = malloc(cap ? cap : 1)))
		return fail(w, -ENOMEM, "out of memory");
	n = tdat_zip(w->zip, body->buf ? body->buf : "", body->len, z, cap);
	if (n < 0) {
		free(z);
		return fail(w, (int)n, "compressing section %u failed", id);
	}
	put_section_header(w, id, 1, desc, (uint64_t)n + 8);
	put_u32(w, (uint32_t)n);
	put_u32(w, (uint32_t)body->len);
	put(w, z, (size_t)n);
	free(z);
	return w->err;
}

/*
 * v7: an options section whose body is b plus a DONE option, chained from
 * the one before (or from the initial part): each is written where what it
 * describes is known, and its DONE's next offset is filled in when the
 * next one is written.  body_at: where b lies in the file.
 */
static int put_options_section(struct tb_tracedat_writer *w, struct tb_strbuf *b, uint64_t *body_at)
{
	uint64_t at = w->pos;
	int rc;

	sb_u16(b, TB_TDAT_OPT_DONE);
	sb_u32(b, 8);
	sb_u64(b, 0); /* the next options section: none yet */
	if (b->oom)
		return fail(w, -ENOMEM, "out of memory");
	put_section_header(w, TB_TDAT_OPT_DONE, 0, add_string(w, "options"), b->len);
	*body_at = w->pos;
	if ((rc = put(w, b->buf, b->len)) < 0)
		return rc;
	rc = patch_u64(w, w->options_next_at ? w->options_next_at : w->options_at_field, at);
	w->options_next_at = *body_at + b->len - 8;
	return rc;
}

/*
 * v7: the first options section, right after the metadata: where each
 * metadata section is and the common options.  Before any data, as each
 * buffer's own BUFFER option is: a file cut short keeps what describes
 * the data it still holds.
 */
static int write_v7_first_options(struct tb_tracedat_writer *w)
{
	struct tb_strbuf b = {0};
	uint64_t body_at;
	int rc;

	for (unsigned id = TB_TDAT_OPT_HEADER_INFO; id <= TB_TDAT_OPT_CMDLINES; id++) {
		sb_u16(&b, (uint16_t)id);
		sb_u32(&b, 8);
		sb_u64(&b, w->section_at[id]);
	}
	body_common_options(w, &b);
	rc = put_options_section(w, &b, &body_at);
	if (rc == 0)
		place_store_options(w, body_at);
	sb_free(&b);
	return rc;
}

static int write_v7_metadata(struct tb_tracedat_writer *w)
{
	static const struct {
		unsigned id;
		const char *desc;
	} sections[] = {
	    {TB_TDAT_OPT_HEADER_INFO, "headers"},
	    {TB_TDAT_OPT_FTRACE_EVENTS, "ftrace events"},
	    {TB_TDAT_OPT_EVENT_FORMATS, "events format"},
	    {TB_TDAT_OPT_KALLSYMS, "kallsyms"},
	    {TB_TDAT_OPT_PRINTK, "printk"},
	    {TB_TDAT_OPT_CMDLINES, "command lines"},
	};
	const char *name = tdat_codec_name(w->codec), *version = tdat_codec_version(w->codec);

	put_initial(w);
	put(w, name, strlen(name) + 1);
	put(w, version, strlen(version) + 1);
	w->options_at_field = w->pos;
	put_u64(w, 0);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]) && !w->err; i++) {
		struct tb_strbuf b = {0};
		switch (sections[i].id) {
		case TB_TDAT_OPT_HEADER_INFO:
			body_headers(w, &b);
			break;
		case TB_TDAT_OPT_FTRACE_EVENTS:
			body_formats(w, &b, true);
			break;
		case TB_TDAT_OPT_EVENT_FORMATS:
			body_formats(w, &b, false);
			break;
		case TB_TDAT_OPT_KALLSYMS:
			body_text(&b, &w->kallsyms, 4);
			break;
		case TB_TDAT_OPT_PRINTK:
			body_text(&b, &w->printk, 4);
			break;
		default:
			body_text(&b, &w->cmdlines, 8);
			break;
		}
		put_section(w, sections[i].id, add_string(w, sections[i].desc), &b);
		sb_free(&b);
	}
	return write_v7_first_options(w);
}

static int write_metadata(struct tb_tracedat_writer *w)
{
	int rc = check_metadata(w);

	w->meta_written = true;
	if (rc < 0)
		return rc;
	return w->version == 7 ? write_v7_metadata(w) : write_v6_metadata(w);
}

/* -------------------------------------------------------------- buffers */

static int end_buffer(struct tb_tracedat_writer *w);

/* v6: the top buffer's table stays all zeros but for offsets pointing where data would be. */
static int settle_v6_top(struct tb_tracedat_writer *w)
{
	struct w_buffer *top = &w->buffers[0];

	if (w->top_done)
		return 0;
	w->top_done = true;
	pad_to_page(w);
	for (int c = 0; c < w->cpus; c++) {
		uint64_t off = w->pos, size = 0;
		for (int i = 0; i < top->ncpus; i++)
			if (top->cpus[i].cpu == c) {
				off = top->cpus[i].offset;
				size = top->cpus[i].size;
			}
		patch_u64(w, top->table_at + 16 * (uint64_t)c, off);
		patch_u64(w, top->table_at + 16 * (uint64_t)c + 8, size);
	}
	return w->err;
}

static struct w_buffer *new_buffer(struct tb_tracedat_writer *w, const char *name, const char *clock)
{
	struct w_buffer *b = realloc(w->buffers, (size_t)(w->nbuffers + 1) * sizeof(*b));

	if (!b)
		return NULL;
	w->buffers = b;
	b = &w->buffers[w->nbuffers];
	memset(b, 0, sizeof(*b));
	b->name = strdup(name);
	b->clock = clock ? strdup(clock) : w->clock ? strdup(w->clock) : NULL;
	if (!b->name || ((clock || w->clock) && !b->clock)) {
		free(b->name);
		free(b->clock);
		return NULL;
	}
	w->nbuffers++;
	return b;
}

/* v6: where the instance's BUFFER option was written (announced in opts.instances). */
static int v6_instance_slot(struct tb_tracedat_writer *w, const char *name)
{
	for (int i = 0; i < w->ninstances; i++)
		if (!strcmp(w->instances[i], name))
			return i + 1;
	return -1;
}

/* v7: the payload of b's BUFFER option (offset, name, clock, page size, its CPUs) and its header. */
static void buffer_option(struct tb_tracedat_writer *w, struct tb_strbuf *sb, const struct w_buffer *b)
{
	const char *clock = b->clock ? b->clock : "local";

	sb_u16(sb, TB_TDAT_OPT_BUFFER);
	sb_u32(sb, (uint32_t)(8 + strlen(b->name) + 1 + strlen(clock) + 1 + 8 + 20 * b->ncpus));
	sb_u64(sb, b->section_at);
	sb_cstr(sb, b->name);
	sb_cstr(sb, clock);
	sb_u32(sb, w->page_size);
	sb_u32(sb, (uint32_t)b->ncpus);
	for (int c = 0; c < b->ncpus; c++) {
		sb_u32(sb, (uint32_t)b->cpus[c].cpu);
		sb_u64(sb, b->cpus[c].offset);
		sb_u64(sb, b->cpus[c].size);
	}
}

/*
 * v7: room for b's BUFFER option in an options section of its own, before
 * its data, with room for the file's CPU count: an unknown option of
 * zeros now, filled in by fill_buffer_option() when the buffer ends.
 */
static int reserve_buffer_option(struct tb_tracedat_writer *w, struct w_buffer *b)
{
	const char *clock = b->clock ? b->clock : "local";
	size_t room = 8 + strlen(b->name) + 1 + strlen(clock) + 1 + 8 + 20 * (size_t)w->cpus;
	struct tb_strbuf sb = {0};
	uint64_t body_at;
	int rc;

	sb_padding(&sb, 6 + room);
	rc = put_options_section(w, &sb, &body_at);
	sb_free(&sb);
	b->option_at = body_at;
	b->option_cpus = w->cpus;
	return rc;
}

/*
 * v7: b's BUFFER option into its room; what the option leaves of it is one
 * padding option (an unknown id: trace-cmd skips it).  A buffer with more
 * CPUs than the room holds leaves it all padding, and its option is written
 * with the last options section, after the data (option_late).
 */
static int fill_buffer_option(struct tb_tracedat_writer *w, struct w_buffer *b)
{
	size_t room = 6 + 8 + strlen(b->name) + 1 + strlen(b->clock ? b->clock : "local") + 1 + 8 +
		      20 * (size_t)b->option_cpus;
	struct tb_strbuf sb = {0};
	int rc;

	b->option_late = b->ncpus > b->option_cpus;
	if (!b->option_late)
		buffer_option(w, &sb, b);
	if (sb.len < room) /* 20 bytes at least: room for 6 of header */
		sb_padding(&sb, room - sb.len);
	if (sb.oom || sb.len != room)
		rc = fail(w, -ENOMEM, "out of memory");
	else
		rc = patch(w, b->option_at, sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}

static int begin_buffer(struct tb_tracedat_writer *w, const char *name, const char *clock)
{
	int rc = 0, slot;

	if (w->err)
		return w->err;
	if (strlen(name) >= TDAT_MAX_NAME)
		return fail(w, -EINVAL, "buffer name too long");
	if (!w->meta_written && (rc = write_metadata(w)) < 0)
		return rc;
	if (w->cur && (rc = end_buffer(w)) < 0)
		return rc;
	if (w->version == 7) {
		char desc[TDAT_MAX_NAME + 24];
		if (w->nbuffers >= TDAT_MAX_BUFFERS || !(w->cur = new_buffer(w, name, clock)))
			return fail(w, -ENOMEM, "too many buffers, or out of memory");
		snprintf(desc, sizeof(desc), "buffer flyrecord %s", name);
		if ((rc = reserve_buffer_option(w, w->cur)) < 0)
			return rc;
		w->cur->section_at = w->pos;
		put_section_header(w, TB_TDAT_OPT_BUFFER, w->zip ? 1 : 0, add_string(w, desc), 0);
		return w->err;
	}
	if (!name[0]) {
		if (w->top_done || w->buffers[0].ncpus)
			return fail(w, -EINVAL, "the top buffer was already written");
		w->cur = &w->buffers[0];
		return pad_to_page(w);
	}
	if ((rc = settle_v6_top(w)) < 0)
		return rc;
	slot = v6_instance_slot(w, name);
	if (slot < 0)
		return fail(w, -EINVAL,
			    "version 6 instance '%s' was not announced in the write "
			    "options (instances)",
			    name);
	if (!(w->cur = new_buffer(w, name, clock)))
		return fail(w, -ENOMEM, "out of memory");
	w->cur->section_at = w->pos;
	patch_u64(w, w->v6_buffer_opts[slot], w->pos);
	put(w, "flyrecord", 10);
	put_v6_cpu_table(w, w->cur);
	return pad_to_page(w);
}

int tb_tracedat_write_begin_buffer(struct tb_tracedat_writer *w, const char *name, const char *clock)
{
	return begin_buffer(w, name ? name : "", clock);
}

int tb_tracedat_write_begin_cpu(struct tb_tracedat_writer *w, int cpu)
{
	struct w_cpu *c;

	if (w->err)
		return w->err;
	if (!w->cur)
		return fail(w, -EINVAL, "a CPU begun outside a buffer");
	if (w->cur_cpu)
		return fail(w, -EINVAL, "CPU %d begun before CPU %d ended", cpu, w->cur_cpu->cpu);
	if (cpu < 0 || cpu >= (w->version == 7 ? MAX_WRITER_CPUS : w->cpus))
		return fail(w, -EINVAL, "CPU %d is out of range (the file has %d)", cpu, w->cpus);
	for (int i = 0; i < w->cur->ncpus; i++)
		if (w->cur->cpus[i].cpu == cpu)
			return fail(w, -EINVAL, "CPU %d written twice in one buffer", cpu);
	c = realloc(w->cur->cpus, (size_t)(w->cur->ncpus + 1) * sizeof(*c));
	if (!c)
		return fail(w, -ENOMEM, "out of memory");
	w->cur->cpus = c;
	c = &c[w->cur->ncpus++];
	pad_to_page(w);
	c->cpu = cpu;
	c->offset = w->pos;
	c->size = 0;
	w->cur_cpu = c;
	w->chunks = 0;
	w->chunk_len = 0;
	if (w->zip)
		put_u32(w, 0); /* the chunk count, patched at the end */
	return w->err;
}

static int flush_chunk(struct tb_tracedat_writer *w)
{
	long n;

	if (!w->chunk_len)
		return 0;
	n = tdat_zip(w->zip, w->chunk, w->chunk_len, w->zout, w->zout_cap);
	if (n < 0)
		return fail(w, (int)n, "compressing CPU %d's data failed", w->cur_cpu->cpu);
	put_u32(w, (uint32_t)n);
	put_u32(w, (uint32_t)w->chunk_len);
	put(w, w->zout, (size_t)n);
	w->chunks++;
	w->chunk_len = 0;
	return w->err;
}

/* n more sub-buffer bytes taken: told to the caller's progress line. */
static void took(struct tb_tracedat_writer *w, uint64_t n)
{
	w->taken += n;
	if (w->progress)
		w->progress(w->progress_ctx, w->taken);
}

int tb_tracedat_write_pages(struct tb_tracedat_writer *w, const void *pages, size_t n)
{
	const uint8_t *p = pages;
	size_t cap = (size_t)CHUNK_PAGES * w->page_size;

	if (w->err)
		return w->err;
	if (!w->cur_cpu)
		return fail(w, -EINVAL, "pages written outside a CPU");
	if (n % w->page_size)
		return fail(w, -EINVAL, "%zu bytes are not whole %u-byte sub-buffers", n, w->page_size);
	took(w, n);
	if (!w->zip)
		return put(w, pages, n);
	if (!w->chunk) {
		w->zout_cap = tdat_zip_bound(w->zip, cap);
		w->chunk = malloc(cap);
		w->zout = malloc(w->zout_cap);
		if (!w->chunk || !w->zout)
			return fail(w, -ENOMEM, "out of memory");
	}
	while (n) {
		size_t take = cap - w->chunk_len < n ? cap - w->chunk_len : n;
		memcpy(w->chunk + w->chunk_len, p, take);
		w->chunk_len += take;
		p += take;
		n -= take;
		if (w->chunk_len == cap && flush_chunk(w) < 0)
			return w->err;
	}
	return 0;
}

int tdat_writer_copy_file(struct tb_tracedat_writer *w, int fd, uint64_t len)
{
	bool started = false;

	if (w->err)
		return w->err;
	if (w->zip || !w->cur_cpu || len % w->page_size)
		return -ENOTSUP;
	while (len) {
		ssize_t n = copy_file_range(fd, NULL, w->fd, NULL, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !started &&
		    (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
			return -ENOTSUP; /* this pair of files cannot: copy through memory */
		if (n <= 0)
			return fail(w, n < 0 ? -errno : -EIO, "copying sub-buffers: %s",
				    n < 0 ? strerror(errno) : "the input ended early");
		started = true;
		len -= (uint64_t)n;
		w->pos += (uint64_t)n;
		took(w, (uint64_t)n);
	}
	return 0;
}

int tb_tracedat_write_end_cpu(struct tb_tracedat_writer *w)
{
	struct w_cpu *c = w->cur_cpu;

	if (w->err)
		return w->err;
	if (!c)
		return fail(w, -EINVAL, "no CPU to end");
	if (w->zip) {
		flush_chunk(w);
		patch_u32(w, c->offset, w->chunks);
		/* As trace-cmd records it: the size leaves out the 4-byte chunk count. */
		c->size = w->pos - c->offset - 4;
	} else {
		c->size = w->pos - c->offset;
	}
	w->cur_cpu = NULL;
	return w->err;
}

static int end_buffer(struct tb_tracedat_writer *w)
{
	struct w_buffer *b = w->cur;

	if (w->cur_cpu && tb_tracedat_write_end_cpu(w) < 0)
		return w->err;
	w->cur = NULL;
	if (w->version == 7) {
		patch_u64(w, b->section_at + 8, w->pos - b->section_at - 16);
		return fill_buffer_option(w, b);
	}
	if (b == &w->buffers[0])
		return settle_v6_top(w);
	for (int i = 0; i < b->ncpus; i++) {
		patch_u64(w, b->table_at + 16 * (uint64_t)b->cpus[i].cpu, b->cpus[i].offset);
		patch_u64(w, b->table_at + 16 * (uint64_t)b->cpus[i].cpu + 8, b->cpus[i].size);
	}
	/* CPUs without data point where data would start, as trace-cmd's do. */
	for (int c = 0; c < w->cpus; c++) {
		bool have = false;
		for (int i = 0; i < b->ncpus; i++)
			have |= b->cpus[i].cpu == c;
		if (!have)
			patch_u64(w, b->table_at + 16 * (uint64_t)c, w->pos);
	}
	return w->err;
}

/* --------------------------------------------------------------- close */

/* v7: the BUFFER options that did not fit their room (fill_buffer_option), after the data. */
static int write_v7_late_options(struct tb_tracedat_writer *w)
{
	struct tb_strbuf b = {0};
	uint64_t body_at;
	int rc;

	for (int i = 0; i < w->nbuffers; i++)
		if (w->buffers[i].option_late)
			buffer_option(w, &b, &w->buffers[i]);
	rc = b.len ? put_options_section(w, &b, &body_at) : 0;
	sb_free(&b);
	return rc;
}

/*
 * A blob store after everything trace-cmd reads (it follows offsets, and
 * v7's sections end with the strings), then its place in its TB_BLOBS
 * option.  Copied a block at a time: a store may hold many MiB.
 */
static int append_blobs(struct tb_tracedat_writer *w, const struct w_store *st)
{
	enum { BLOCK = 1 << 20 };
	uint64_t start = w->pos;
	uint8_t *buf = malloc(BLOCK);
	int fd = open(st->path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n = 0;

	if (fd < 0 || !buf) {
		rc = fail(w, fd < 0 ? -errno : -ENOMEM, "the blob store %s: %s", st->path,
			  fd < 0 ? strerror(errno) : "out of memory");
		goto out;
	}
	while (rc == 0 && (n = read(fd, buf, BLOCK)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fail(w, -errno, "reading the blob store %s: %s", st->path, strerror(errno));
			break;
		}
		rc = put(w, buf, (size_t)n);
	}
	if (rc == 0)
		rc = patch_u64(w, st->at, start);
	if (rc == 0)
		rc = patch_u64(w, st->at + 8, w->pos - start);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* v7: the section descriptions, last (trace-cmd walks the sections to find it). */
static int write_v7_strings(struct tb_tracedat_writer *w)
{
	uint32_t desc = add_string(w, "strings");

	return put_section(w, TB_TDAT_OPT_STRINGS, desc, &w->strings);
}

int tb_tracedat_writer_close(struct tb_tracedat_writer *w)
{
	int rc;

	if (!w)
		return -EINVAL;
	if (!w->meta_written)
		write_metadata(w);
	if (w->cur)
		end_buffer(w);
	if (w->version == 6 && w->nbuffers && !w->err)
		settle_v6_top(w);
	if (w->version == 7 && !w->err) {
		write_v7_late_options(w);
		write_v7_strings(w);
	}
	for (int i = 0; i < w->nstores && w->meta_written && !w->err; i++)
		append_blobs(w, &w->stores[i]);
	if (!w->err && ftruncate(w->fd, (off_t)w->pos) < 0)
		fail(w, -errno, "truncating: %s", strerror(errno));
	if (close(w->fd) < 0 && !w->err)
		fail(w, -errno, "closing: %s", strerror(errno));
	rc = w->err;
	writer_free(w);
	return rc;
}
