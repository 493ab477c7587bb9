/* SPDX-License-Identifier: MIT */
/*
 * tdat_read.h - what the parts of the trace.dat reader share (internal):
 * tdat_read.c (problems, the byte cursor, metadata texts, buffers, open),
 * tdat_options.c, tdat_kallsyms.c, tdat_v6.c and tdat_v7.c.  The functions
 * keep their names from when they were one file's statics, with tdat_ in
 * front; each checks what it reads as tdat_read.c's heading says.
 */
#ifndef TRACEBUF_TDAT_READ_H
#define TRACEBUF_TDAT_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "decode/diag_defer.h"
#include "tdat_internal.h"

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

/* The section offsets (ids 16-21) a v7 options list gives; 0 if absent. */
struct sections {
	uint64_t at[TB_TDAT_OPT_CMDLINES + 1];
	uint64_t opt_at[TB_TDAT_OPT_CMDLINES + 1];
};

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
	int rc;			 /* what the checks before the start found */
	struct diag_sink before; /* their problems */
	uint64_t from;		 /* where the turn finds kallsyms (v6: its length field) */
	/* What the thread reads: */
	bool compressed;
	uint64_t pos, len; /* plain: the text in the file */
	uint64_t at, clen; /* compressed: the section and its block's size */
	uint32_t ulen;
	/* What it leaves, read after ksyms_job_filled(): */
	uint64_t left;		 /* bytes after the text in its section */
	struct diag_sink during; /* what filling met */
};

typedef int text_loader(struct tb_schema *, const char *, const char *, size_t);

/* tdat_read.c */
struct tdat_buffer *tdat_add_buffer(struct tb_tracedat *td, const char *name, uint64_t offset);
int tdat_add_part(struct tb_tracedat *td, const char *what, int id, unsigned flags, uint64_t offset,
		  uint64_t size, uint64_t usize);
int tdat_check_all_cpu_data(struct tb_tracedat *td);
int tdat_check_cpu_data(struct tb_tracedat *td, struct tdat_buffer *b, int i);
void tdat_empty_buffer(struct tdat_buffer *b);
int tdat_rd_cstr(struct rd *r, char *out, size_t cap, const char *what);
int tdat_rd_fail(struct rd *r, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int tdat_rd_get(struct rd *r, void *buf, size_t n, const char *what);
uint64_t tdat_rd_left(const struct rd *r);
int tdat_rd_skip_text(struct rd *r, uint64_t len, uint64_t limit, const char *what);
int tdat_rd_text_fits(struct rd *r, uint64_t len, uint64_t limit, const char *what);
int tdat_rd_u16(struct rd *r, uint16_t *v, const char *what);
int tdat_rd_u32(struct rd *r, uint32_t *v, const char *what);
int tdat_rd_u64(struct rd *r, uint64_t *v, const char *what);
int tdat_read_cmdlines(struct tb_tracedat *td, struct rd *r);
int tdat_read_event_formats(struct tb_tracedat *td, struct rd *r);
int tdat_read_flyrecord_table(struct tb_tracedat *td, struct rd *r, struct tdat_buffer *b, int cpus);
int tdat_read_ftrace_formats(struct tb_tracedat *td, struct rd *r);
int tdat_read_headers(struct tb_tracedat *td, struct rd *r);
int tdat_read_printk(struct tb_tracedat *td, struct rd *r);
int tdat_read_text(struct tb_tracedat *td, struct rd *r, int len_bytes, const char *what, text_loader *load,
		   size_t *len_out);
int tdat_say_cut(struct tb_tracedat *td);
void tdat_settle_kallsyms_before(struct tb_tracedat *td);
int tdat_skip_kallsyms(struct tb_tracedat *td, struct rd *r);
char *tdat_text_label(struct rd *r, uint64_t at, const char *what);

/* tdat_options.c */
char *tdat_bracketed_clock(const char *text);
int tdat_read_options(struct tb_tracedat *td, struct rd *r, struct sections *sec, uint64_t *next,
		      uint64_t *next_from);

/* tdat_kallsyms.c */
void tdat_drop_kallsyms(struct tb_tracedat *td, struct kallsyms_read *k);
int tdat_kallsyms_turn(struct tb_tracedat *td, struct kallsyms_read *k);
int tdat_read_kallsyms_v6(struct tb_tracedat *td, struct rd *r, struct kallsyms_read *k);
int tdat_settle_kallsyms(struct tb_tracedat *td);
void tdat_start_kallsyms_v6(struct tb_tracedat *td, uint64_t from, struct kallsyms_read *k);
void tdat_start_kallsyms_v7(struct tb_tracedat *td, const struct sections *sec, struct kallsyms_read *k);
uint64_t tdat_v6_kallsyms_at(struct tb_tracedat *td, uint64_t from);

/* tdat_v6.c */
int tdat_read_v6(struct tb_tracedat *td, struct rd *r);

/* tdat_v7.c */
int tdat_check_block_sizes(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen,
			   const char *what);
int tdat_inflate_checked(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen, const char *what,
			 uint8_t *buf);
int tdat_read_v7(struct tb_tracedat *td, struct rd *r);
int tdat_section_head(struct tb_tracedat *td, uint64_t at, uint64_t from, unsigned id, uint16_t *flags,
		      uint64_t *size, uint64_t *clen, uint32_t *ulen);
const char *tdat_section_name(unsigned id);

#endif
