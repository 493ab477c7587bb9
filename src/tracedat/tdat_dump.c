// SPDX-License-Identifier: MIT
/*
 * tdat_dump.c - a trace.dat taken apart: where each part lies and what it
 * holds, then every sub-buffer with its header and (on request) its
 * records, the way one checks a file by hand against the format.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/blob_store.h"
#include "tdat_internal.h"
#include "tracebuf/blob.h"
#include "tracebuf/page.h"

static int by_offset(const void *a, const void *b)
{
	const struct tb_tracedat_part *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void dump_parts(struct tb_tracedat *td, FILE *out)
{
	const struct tb_tracedat_info *i = &td->info;

	fprintf(out,
		"%s: trace.dat version %d, little endian, %u-byte long, %u-byte pages, "
		"compression %s%s%s, %llu bytes\n",
		td->path, i->version, i->long_size, i->page_size, i->compression,
		i->compression_version[0] ? " " : "", i->compression_version,
		(unsigned long long)i->file_size);
	fprintf(out, "cpus=%d\n\n", i->cpus);
	/* In file order (the reader met them in the order the options point to them). */
	qsort(td->parts, td->nparts, sizeof(*td->parts), by_offset);
	fprintf(out, "parts:\n  %-12s %-10s %-12s %s\n", "offset", "bytes", "decompressed", "what");
	for (size_t n = 0; n < td->nparts; n++) {
		const struct tb_tracedat_part *p = &td->parts[n];
		char sec[32] = "", unz[24] = "";
		if (p->section_id >= 0)
			snprintf(sec, sizeof(sec), "section %d, ", p->section_id);
		if (p->flags & 1)
			snprintf(unz, sizeof(unz), "%llu", (unsigned long long)p->usize);
		fprintf(out, "  0x%010llx %-10llu %-12s %s%s%s\n", (unsigned long long)p->offset,
			(unsigned long long)p->size, unz, sec, p->what, p->flags & 1 ? " (compressed)" : "");
	}
}

/* Text options as text (up to the first newline), others as hex. */
static void dump_option_value(FILE *out, const struct tb_tracedat_option *o)
{
	size_t n = o->size, shown = 0;
	bool text = n > 0;

	for (size_t k = 0; k < n; k++)
		if (!(isprint(o->data[k]) || o->data[k] == '\n' || o->data[k] == '\t' ||
		      (k == n - 1 && o->data[k] == '\0')))
			text = false;
	if (text) {
		fputs(": \"", out);
		for (; shown < n && shown < 70 && o->data[shown]; shown++) {
			if (o->data[shown] == '\n')
				fputs("\\n", out);
			else
				fputc(o->data[shown], out);
		}
		fputs(shown < n && o->data[shown] ? "...\"" : "\"", out);
		return;
	}
	if (o->id == TB_TDAT_OPT_CPUCOUNT && n >= 4) {
		fprintf(out, ": %u", tdat_le32(o->data));
		return;
	}
	if (n == 8 && (o->id == TB_TDAT_OPT_DONE || o->id >= TB_TDAT_OPT_HEADER_INFO)) {
		fprintf(out, ": offset %llu", (unsigned long long)tdat_le64(o->data));
		return;
	}
	fputs(":", out);
	for (; shown < n && shown < 24; shown++)
		fprintf(out, " %02x", o->data[shown]);
	if (shown < n)
		fputs(" ...", out);
}

static void dump_options(struct tb_tracedat *td, FILE *out)
{
	fprintf(out, "\noptions (%zu):\n", td->noptions);
	for (size_t n = 0; n < td->noptions; n++) {
		const struct tb_tracedat_option *o = &td->options[n];
		const char *name = tb_tracedat_option_name(o->id);
		fprintf(out, "  @%-10llu %2u %-14s %6u bytes", (unsigned long long)o->offset, o->id,
			name ? name : "(unknown)", o->size);
		dump_option_value(out, o);
		fputc('\n', out);
	}
}

static void dump_buffers(struct tb_tracedat *td, FILE *out)
{
	fprintf(out, "\nbuffers (%d):\n", td->nbuffers);
	for (int n = 0; n < td->nbuffers; n++) {
		const struct tdat_buffer *b = &td->buffers[n];
		fprintf(out,
			"  \"%s\"%s: clock %s, %u-byte pages%s, at byte %llu, %d CPU entries, "
			"CPUs %d..%d in trace-cmd's merged order\n",
			b->name, b->name[0] ? "" : " (top)", b->clock ? b->clock : "(none: local)",
			b->pub.page_size, b->pub.compressed ? ", compressed" : "",
			(unsigned long long)b->pub.offset, b->pub.ncpus, 0, b->pub.slots - 1);
		if (b->pub.text_size)
			fprintf(out, "    latency text: %llu bytes at byte %llu\n",
				(unsigned long long)b->pub.text_size, (unsigned long long)b->pub.text_offset);
		for (int c = 0; c < b->pub.ncpus; c++)
			fprintf(out, "    CPU %d: %llu bytes at byte %llu%s\n", b->cpus[c].cpu,
				(unsigned long long)b->cpus[c].size, (unsigned long long)b->cpus[c].offset,
				b->pub.compressed ? " (chunk count, then chunks)" : "");
	}
}

static void dump_formats(struct tb_tracedat *td, FILE *out)
{
	fprintf(out,
		"\nformats: %zu ftrace, %zu in %zu systems; kallsyms %zu bytes, printk "
		"formats %zu, cmdlines %zu; header_page %zu, header_event %zu\n",
		td->info.nftrace_formats, td->info.nevent_formats, td->info.nsystems, td->info.kallsyms_len,
		td->info.printk_len, td->info.cmdlines_len, td->info.header_page_len,
		td->info.header_event_len);
	for (size_t n = 0; n < td->nformats; n++) {
		const struct tb_tracedat_format *f = &td->formats[n];
		fprintf(out, "  %s/%s id %u (%zu bytes at byte %llu)%s\n", f->system, f->name, f->id, f->len,
			(unsigned long long)f->offset,
			tb_schema_event(td->schema, f->id, NULL) ? "" : " (not loaded)");
	}
}

static const char *kind_name(enum tb_rec_kind k)
{
	switch (k) {
	case TB_REC_DATA:
		return "data";
	case TB_REC_PADDING:
		return "padding";
	case TB_REC_TIME_EXTEND:
		return "time extend";
	default:
		return "time stamp";
	}
}

static void dump_record(struct tb_tracedat *td, FILE *out, const char *buffer, const struct tb_record *r)
{
	struct tb_blob_ref ref;

	fprintf(out, "      +0x%04x %-11s type_len %2u delta %9u ts %llu size %u", r->offset,
		kind_name(r->kind), r->type_len, r->time_delta, (unsigned long long)r->ts, r->size);
	if (tb_blob_ref_decode(r, &ref)) {
		/* its bytes were in the ring's blob area; the saver copied them into the file's store */
		static const char *const fates[] = {
		    [BLOB_NO_STORE] = "blob lost, not in the file",
		    [BLOB_NOT_SAVED] = "blob lost, overwritten before it was saved",
		    [BLOB_DAMAGED] = "blob lost, its saved copy is damaged",
		};
		uint8_t *bytes;
		uint32_t crc = 0;
		enum blob_fate fate = blob_store_get(tdat_blobs(td, buffer), r->data, &bytes, &crc);

		fprintf(out, ": blob reference, %u bytes (area %u, chunk %llu): ", ref.len, ref.area,
			(unsigned long long)ref.first);
		if (fate == BLOB_FOUND)
			fprintf(out, "saved, crc32 %08x", crc);
		else
			fputs(fates[fate], out);
		free(bytes);
	} else if (r->kind == TB_REC_DATA && r->len >= 8) {
		const uint8_t *d = r->data;
		const char *system = "";
		uint16_t id = tdat_le16(d);
		const struct tb_format *f = tb_schema_event(td->schema, id, &system);
		fprintf(out, ": id %u %s%s%s pid %d, %u bytes", id, f ? system : "", f ? "/" : "",
			f ? f->name : "(unknown)", (int32_t)tdat_le32(d + 4), r->len);
	}
	fputc('\n', out);
}

/* One page: its header, its record counts, and with records every record. */
static int dump_page(struct tb_tracedat *td, FILE *out, const char *buffer, const struct tb_capture_page *p, unsigned n,
		     bool records)
{
	struct tb_page_cursor c;
	struct tb_record r;
	unsigned counts[4] = {0};
	int rc;

	fprintf(out, "    page %u at %s byte %llu: ", n, p->file == td->path ? "file" : "chunk",
		(unsigned long long)p->file_offset);
	if (tb_page_cursor_init(&c, p->data, p->size) < 0) {
		fprintf(out, "bad header: %s\n", c.err.reason);
		tdat_report_in(td, p->file, p->file_offset + c.err.offset, "%s", c.err.reason);
		return 1;
	}
	fprintf(out, "ts %llu, commit %u bytes%s", (unsigned long long)c.hdr.timestamp, c.hdr.data_len,
		c.hdr.lost ? ", events lost before it" : "");
	if (c.hdr.lost_stored)
		fprintf(out, " (%llu)", (unsigned long long)c.hdr.lost_count);
	if (records)
		fputc('\n', out);
	while ((rc = tb_page_next(&c, &r)) == 1) {
		counts[r.kind]++;
		if (records)
			dump_record(td, out, buffer, &r);
	}
	fprintf(out, "%s%u events, %u padding, %u time extends, %u time stamps%s\n",
		records ? "      = " : "; ", counts[TB_REC_DATA], counts[TB_REC_PADDING],
		counts[TB_REC_TIME_EXTEND], counts[TB_REC_TIME_STAMP], rc < 0 ? ", then damage" : "");
	if (rc < 0) {
		fprintf(out, "      damage at +0x%zx: %s\n", c.err.offset, c.err.reason);
		tdat_report_in(td, p->file, p->file_offset + c.err.offset, "%s", c.err.reason);
		return 1;
	}
	return 0;
}

static int dump_pages(struct tb_tracedat *td, FILE *out, const struct tb_tracedat_dump_opts *o)
{
	int bad = 0;

	for (int b = 0; b < td->nbuffers; b++) {
		const struct tdat_buffer *buf = &td->buffers[b];
		if (o && o->buffer && strcmp(o->buffer, buf->name))
			continue;
		for (int c = 0; c < buf->pub.ncpus; c++) {
			struct tdat_stream s;
			struct tb_capture_page p;
			unsigned n = 0;
			int rc;
			if (o && o->cpu >= 0 && buf->cpus[c].cpu != o->cpu)
				continue;
			fprintf(out, "\nbuffer \"%s\" CPU %d:\n", buf->name, buf->cpus[c].cpu);
			tdat_stream_init(&s, td, buf, &buf->cpus[c]);
			while ((rc = tdat_stream_next(&s, &p)) == 1)
				bad |= dump_page(td, out, buf->name, &p, n++, o && o->records);
			if (rc < 0)
				bad = 1;
			tdat_stream_free(&s);
		}
	}
	return bad;
}

int tb_tracedat_dump(struct tb_tracedat *td, FILE *out, const struct tb_tracedat_dump_opts *opts)
{
	int bad = 0;

	dump_parts(td, out);
	dump_options(td, out);
	dump_buffers(td, out);
	dump_formats(td, out);
	if (!(opts && opts->no_pages))
		bad = dump_pages(td, out, opts);
	if (fflush(out) || ferror(out))
		return -EIO;
	return bad;
}
