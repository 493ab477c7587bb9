// SPDX-License-Identifier: MIT
/*
 * tdat_v7.c - the layout of a version 7 trace.dat: sections, each with a
 * header (id, flags, size) and a body that may be compressed as one block;
 * the options sections chain, and say where the others lie.
 *
 * Split from tdat_read.c (issue 22 item 5): tdat_read.h holds what the
 * parts share.
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
#include "decode/blob_store.h"
#include "tdat_internal.h"
#include "tracebuf/page.h"
#include "tdat_read.h"

const char *tdat_section_name(unsigned id)
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
			    tdat_section_name(want), (unsigned long long)at,
			    (unsigned long long)td->info.file_size);
		return -EINVAL;
	}
	if ((rc = tdat_pread(td, h, sizeof(h), at, "section header")) < 0)
		return rc;
	if (tdat_le16(h) != want) {
		tdat_report(td, at, "expected a %s section (id %u) here, found id %u", tdat_section_name(want),
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
			    tdat_section_name(want), (unsigned long long)*size,
			    (unsigned long long)(td->info.file_size - at - 16));
		return -EINVAL;
	}
	if ((*flags & 1) && td->codec == TDAT_CODEC_NONE) {
		tdat_report(td, at,
			    "the %s section is marked compressed in a file without "
			    "compression",
			    tdat_section_name(want));
		return -EINVAL;
	}
	return 0;
}

/* A block's sizes, before anything is allocated for them: a bomb (or damage) is refused. */
int tdat_check_block_sizes(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen,
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

/* Decompress a block whose sizes passed tdat_check_block_sizes() into buf (ulen bytes). */
int tdat_inflate_checked(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen, const char *what,
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
	if ((rc = tdat_check_block_sizes(td, at, clen, ulen, what)) < 0)
		return rc;
	if (!(buf = malloc(ulen ? ulen : 1)))
		return -ENOMEM;
	if ((rc = tdat_inflate_checked(td, at, clen, ulen, what, buf)) < 0) {
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
int tdat_section_head(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned id, uint16_t *flags,
			uint64_t *size, uint64_t *clen, uint32_t *ulen)
{
	uint8_t h[8];
	int rc = read_section_header(td, at, from, id, flags, size, NULL);

	*clen = 0;
	*ulen = 0;
	if (rc < 0)
		return rc;
	if (!(*flags & 1))
		return tdat_add_part(td, tdat_section_name(id), (int)id, *flags, at, *size + 16, *size);
	if (*size < 8) {
		tdat_report(td, at, "the compressed %s section is too short for its sizes", tdat_section_name(id));
		return -EINVAL;
	}
	if ((rc = tdat_pread(td, h, 8, at + 16, "compressed section sizes")) < 0)
		return rc;
	if (tdat_le32(h) > *size - 8) {
		tdat_report(td, at + 16, "the %s section's %u compressed bytes do not fit in its %llu",
			    tdat_section_name(id), tdat_le32(h), (unsigned long long)*size);
		return -EINVAL;
	}
	*clen = tdat_le32(h);
	*ulen = tdat_le32(h + 4);
	return tdat_add_part(td, tdat_section_name(id), (int)id, *flags, at, *size + 16, *ulen);
}

/* A cursor on the decompressed block of section id at at; the caller frees *mem. */
static int inflate_section(struct tb_tracedat *td, uint64_t at, unsigned id, uint64_t clen, uint32_t ulen,
			   struct rd *r, uint8_t **mem)
{
	int rc = tdat_inflate_block(td, at + 24, clen, ulen, tdat_section_name(id), mem);

	if (rc < 0)
		return rc;
	*r = (struct rd){.td = td, .mem = *mem, .end = ulen, .base = at, .where = tdat_section_name(id)};
	return 0;
}

/*
 * A section's body as a cursor: the file itself, or (compressed) a buffer
 * the caller frees (*mem).  1, no cursor: a compressed kallsyms section
 * for a reader that wants no symbols (no_symbols), its sizes checked and
 * its block left compressed - a kernel's is megabytes (5.4 MB, 55 M
 * instructions of zstd on the opening's one thread, a twelfth of a count
 * of 3.26 M events) of a text nobody reads, as a v6 file's is not read.
 */
static int open_section(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned id, struct rd *r,
			uint8_t **mem)
{
	uint16_t flags;
	uint64_t size, clen;
	uint32_t ulen;
	int rc = tdat_section_head(td, at, from, id, &flags, &size, &clen, &ulen);

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
	if (id == TB_TDAT_OPT_KALLSYMS && td->no_symbols)
		return (rc = tdat_check_block_sizes(td, at + 24, clen, ulen, tdat_section_name(id))) < 0 ? rc : 1;
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
			    tdat_section_name(id), id);
		return -EINVAL;
	}
	if ((rc = open_section(td, sec->at[id], sec->opt_at[id], id, &r, &mem)) != 0)
		return rc < 0 ? rc : 0;
	rc = read(td, &r);
	if (rc == 0 && tdat_rd_left(&r))
		tdat_warn(td, sec->at[id], "%llu bytes left over at the end of the %s section",
			  (unsigned long long)tdat_rd_left(&r), tdat_section_name(id));
	free(mem);
	return rc;
}

/*
 * An options section after the first that the end of a file cut short
 * takes, whole or in part: noted for tdat_say_cut(), and the chain stops there
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
		rc = tdat_read_options(td, &r, sec, &at, &from);
		free(mem);
	}
	free(seen);
	return rc;
}

/*
 * The buffers' sections: headers checked, compression noted, CPU data
 * inside the file.  A buffer section that lies past the end of a file cut
 * short, or whose header is damaged, costs that buffer's data only (said
 * by tdat_say_cut(), or where the header is); one the end cuts is read up to
 * it, CPU by CPU (tdat_check_cpu_data).
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
			tdat_empty_buffer(b);
			continue;
		}
		if (rc < 0)
			return rc;
		b->pub.compressed = flags & 1;
		snprintf(what, sizeof(what), "buffer %s", b->name[0] ? b->name : "(top)");
		tdat_add_part(td, what, (int)id, flags, b->pub.offset, size + 16, size);
		if (id == TB_TDAT_OPT_BUFFER_TEXT) {
			b->pub.text_offset = b->pub.offset + 16;
			b->pub.text_size = size;
			td->info.latency = true;
			continue;
		}
	}
	return tdat_check_all_cpu_data(td);
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

	/* The end of a file cut short inside the data: said once, by tdat_say_cut(). */
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
				    tdat_section_name(tdat_le16(h)), (unsigned long long)size);
			return;
		}
		if (tdat_le16(h) == TB_TDAT_OPT_STRINGS)
			tdat_add_part(td, "strings", TB_TDAT_OPT_STRINGS, tdat_le16(h + 2), at, size + 16, size);
		at += 16 + size;
	}
}

int tdat_read_v7(struct tb_tracedat *td, struct rd *r)
{
	struct kallsyms_read k = {0};
	struct sections sec;
	uint64_t options_at;
	int rc;

	memset(&sec, 0, sizeof(sec));
	if ((rc = tdat_rd_cstr(r, td->compression, sizeof(td->compression), "compression name")) < 0 ||
	    (rc = tdat_rd_cstr(r, td->compression_version, sizeof(td->compression_version),
			  "compression version")) < 0 ||
	    (rc = tdat_rd_u64(r, &options_at, "first options section offset")) < 0)
		return rc;
	rc = tdat_codec_by_name(td->compression);
	if (rc < 0)
		return tdat_rd_fail(
		    r, r->pos - 8 - strlen(td->compression_version) - 1 - strlen(td->compression) - 1,
		    "compression '%s' is not one tracebuf reads (none, zlib, zstd)", td->compression);
	td->codec = (enum tdat_codec)rc;
	tdat_add_part(td, "initial format", -1, 0, 0, r->pos, r->pos);
	if ((rc = read_v7_options(td, options_at, r->pos - 8, &sec)) < 0)
		return rc;
	if (!td->no_symbols) /* read and parsed while the formats are */
		tdat_start_kallsyms_v7(td, &sec, &k);
	if ((rc = read_section(td, &sec, TB_TDAT_OPT_HEADER_INFO, tdat_read_headers, true)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_FTRACE_EVENTS, tdat_read_ftrace_formats, false)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_EVENT_FORMATS, tdat_read_event_formats, false)) < 0) {
		tdat_drop_kallsyms(td, &k);
		return rc;
	}
	if ((rc = td->no_symbols ? read_section(td, &sec, TB_TDAT_OPT_KALLSYMS, tdat_skip_kallsyms, false)
				 : tdat_kallsyms_turn(td, &k)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_PRINTK, tdat_read_printk, false)) < 0 ||
	    (rc = read_section(td, &sec, TB_TDAT_OPT_CMDLINES, tdat_read_cmdlines, false)) < 0)
		return rc;
	top_buffer_first(td);
	if ((rc = check_v7_buffers(td)) < 0)
		return rc;
	walk_sections(td, r->pos);
	return 0;
}
