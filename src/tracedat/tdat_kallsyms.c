// SPDX-License-Identifier: MIT
/*
 * tdat_kallsyms.c - a trace.dat's kallsyms text (v6: after the printk
 * formats' place in the file; v7: its own section, perhaps compressed),
 * read and parsed on a thread of its own while the reading thread reads
 * on, its problems told in kallsyms's turn in the file's order.
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
 * length and text checked there as tdat_read_text() checks them: the text is
 * parsed where it lies, 4 bytes in.
 */
static int inflate_kallsyms(struct kallsyms_read *k, char **buf, size_t *skip, size_t *len)
{
	const char *what = tdat_section_name(TB_TDAT_OPT_KALLSYMS);
	struct rd r = {.td = k->td, .end = k->ulen, .base = k->at, .where = what};
	uint32_t n;
	int rc;

	if ((rc = tdat_check_block_sizes(k->td, k->at + 24, k->clen, k->ulen, what)) < 0)
		return rc;
	if (!(*buf = tb_ksyms_text_buffer(k->ulen)))
		return -ENOMEM;
	r.mem = (const uint8_t *)*buf;
	if ((rc = tdat_inflate_checked(k->td, k->at + 24, k->clen, k->ulen, what, (uint8_t *)*buf)) == 0 &&
	    (rc = tdat_rd_u32(&r, &n, "kallsyms")) == 0 && (rc = tdat_rd_text_fits(&r, n, TDAT_MAX_TEXT, "kallsyms")) == 0) {
		*skip = r.pos;
		*len = n;
		r.pos += n;
		k->left = tdat_rd_left(&r);
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

	if ((rc = tdat_rd_u32(r, &len, "kallsyms")) < 0 || (rc = tdat_rd_text_fits(r, len, TDAT_MAX_TEXT, "kallsyms")) < 0)
		return rc;
	k->pos = r->pos;
	k->len = len;
	k->left = r->end - r->pos - len;
	return 0;
}

/* The thread started on what k says; where its problems will be placed is known now. */
static int start_kallsyms(struct tb_tracedat *td, struct kallsyms_read *k)
{
	/* Named as tdat_read_text() names a text: in the file, or in the decompressed section after its length. */
	struct rd in_file = {.td = td};
	struct rd in_section = {.td = td, .mem = (const uint8_t *)"", .base = k->at, .where = "kallsyms"};
	char *label = k->compressed ? tdat_text_label(&in_section, 4, "kallsyms")
				    : tdat_text_label(&in_file, k->pos, "kallsyms");
	int rc = label ? schema_kallsyms_start(td->schema, label, fill_kallsyms, k) : -ENOMEM;

	free(label);
	k->started = rc == 0;
	return rc;
}

/* v7: the kallsyms section (none: nothing to start). */
void tdat_start_kallsyms_v7(struct tb_tracedat *td, const struct sections *sec, struct kallsyms_read *k)
{
	uint64_t at = sec->at[TB_TDAT_OPT_KALLSYMS], size;
	uint16_t flags;

	k->td = td;
	if (!at)
		return;
	diag_sink_install(&k->before);
	k->rc = tdat_section_head(td, at, sec->opt_at[TB_TDAT_OPT_KALLSYMS], TB_TDAT_OPT_KALLSYMS, &flags, &size,
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
void tdat_start_kallsyms_v6(struct tb_tracedat *td, uint64_t from, struct kallsyms_read *k)
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
uint64_t tdat_v6_kallsyms_at(struct tb_tracedat *td, uint64_t from)
{
	struct diag_sink unheard = {0};
	struct rd r = {.td = td, .pos = from, .end = td->info.file_size};
	char system[TDAT_MAX_NAME];
	uint32_t n, nsys = 0;
	uint64_t len;
	int rc;

	diag_sink_install(&unheard);
	/* The counts are checked as the reading in turn checks them: a lie is not walked. */
	rc = tdat_rd_u32(&r, &n, "ftrace format count");
	if (rc == 0 && n > tdat_rd_left(&r) / 8)
		rc = -EINVAL;
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		if ((rc = tdat_rd_u64(&r, &len, "format file size")) == 0)
			rc = tdat_rd_skip_text(&r, len, TDAT_MAX_FORMAT, "format");
	if (rc == 0)
		rc = tdat_rd_u32(&r, &nsys, "event system count");
	if (rc == 0 && nsys > tdat_rd_left(&r) / 5)
		rc = -EINVAL;
	for (uint32_t s = 0; rc == 0 && s < nsys; s++) {
		if ((rc = tdat_rd_cstr(&r, system, sizeof(system), "event system name")) < 0 ||
		    (rc = tdat_rd_u32(&r, &n, "event count")) < 0)
			break;
		if (n > tdat_rd_left(&r) / 8)
			rc = -EINVAL;
		for (uint32_t i = 0; rc == 0 && i < n; i++)
			if ((rc = tdat_rd_u64(&r, &len, "format file size")) == 0)
				rc = tdat_rd_skip_text(&r, len, TDAT_MAX_FORMAT, "format");
	}
	diag_sink_install(NULL);
	diag_sink_free(&unheard);
	return rc == 0 ? r.pos : 0;
}

/* The reading stops before kallsyms's turn: the thread is let finish, unheard. */
void tdat_drop_kallsyms(struct tb_tracedat *td, struct kallsyms_read *k)
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
int tdat_kallsyms_turn(struct tb_tracedat *td, struct kallsyms_read *k)
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
			  (unsigned long long)k->left, tdat_section_name(TB_TDAT_OPT_KALLSYMS));
	return 0;
}

/*
 * The end of the reading: kallsyms's table and problems, told now if the
 * reading got past its turn.  0 or -ENOMEM.
 */
int tdat_settle_kallsyms(struct tb_tracedat *td)
{
	if (!td->kallsyms_past)
		return 0; /* tb_schema_free() drops what is pending */
	tdat_settle_kallsyms_before(td);
	return td->kallsyms_rc;
}

/* v6 kallsyms's turn, at r's position: started there unless it was where the walk said. */
int tdat_read_kallsyms_v6(struct tb_tracedat *td, struct rd *r, struct kallsyms_read *k)
{
	int rc;

	if (td->no_symbols)
		return tdat_skip_kallsyms(td, r);
	if (!k->started || k->from != r->pos) {
		tdat_drop_kallsyms(td, k);
		*k = (struct kallsyms_read){0};
		tdat_start_kallsyms_v6(td, r->pos, k);
	}
	if ((rc = tdat_kallsyms_turn(td, k)) == 0)
		r->pos = k->pos + k->len;
	return rc;
}
