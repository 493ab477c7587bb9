/* SPDX-License-Identifier: MIT */
/*
 * tdat_internal.h - the trace.dat reader's handle and its helpers, shared
 * by the files of src/tracedat (reading, page streams, capture view,
 * report, dump).
 *
 * Limits: everything a file declares is checked against these before any
 * allocation or loop depends on it.  They are far above what a real file
 * holds (a kernel's kallsyms is ~6 MiB, a format file ~4 KiB).
 */
#ifndef TRACEBUF_TDAT_INTERNAL_H
#define TRACEBUF_TDAT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "decode/arena.h"
#include "util/id_table.h"
#include "decode/capture_source.h"
#include "tdat_zip.h"
#include "tracebuf/tracedat.h"

#define TDAT_MAX_TEXT	  (64u << 20) /* kallsyms, printk formats, cmdlines, a section */
#define TDAT_MAX_FORMAT	  (1u << 20)  /* one format file */
#define TDAT_MAX_OPTION	  (64u << 20) /* one option's payload */
#define TDAT_MAX_CPUS	  4096	      /* CPU numbers, like capture directories */
#define TDAT_MAX_BUFFERS  1024	      /* buffer instances */
#define TDAT_MAX_SECTIONS 1024	      /* options sections followed in a v7 chain */
#define TDAT_MAX_CHUNK	  (64u << 20) /* one compressed chunk, decompressed */
#define TDAT_MAX_NAME	  256	      /* system, instance, clock names */

/*
 * tracebuf's own options (TB_TDAT_OPT_TB_CONSTANTS, _TB_BLOBS, _TB_PAD) are
 * written inside options of a known id, PROCMAPS: libtracecmd warns
 * "unknown option N" for any id it does not know (KernelShark shows it;
 * trace-cmd report only hides it by its log level), but it loads a
 * PROCMAPS payload only when it ends with a NUL and its first line parses
 * as "PID COUNT NAME", and skips any other silently (trace-input.c,
 * handle_options and trace_pid_map_load, trace-cmd 2.9 to 3.4).  So:
 *   own option: "tracebuf" (8 bytes), the own id (u16), its payload, '\n'
 *               (the last byte is never NUL: libtracecmd skips it)
 *   padding:    zeros only (NUL-terminated but no line: its load fails
 *               silently)
 * tdat_read_options unwraps both, so everything above it sees the own ids.
 * Files that carry the own ids directly (written before) read as before.
 */
#define TDAT_OWN_MAGIC "tracebuf"
#define TDAT_OWN_HEAD  10 /* the magic and the own id */
#define TDAT_OWN_TAIL  1  /* the closing '\n' */

struct tdat_buffer {
	struct tb_tracedat_buffer pub;
	char *name;
	char *clock;
	struct tb_tracedat_cpu *cpus;
	uint64_t option_at; /* v7: where its BUFFER option lies */
	/*
	 * v7 compressed, per entry of cpus[]: the chunks that lie whole in a
	 * file cut short inside that CPU's data (UINT32_MAX: as many as its
	 * count says).  NULL when no CPU of the buffer was cut.
	 */
	uint32_t *chunks_kept;
};

/*
 * A file cut short (tdat_read.c): the CPU data, buffer blocks and sections
 * the end of the file cuts, gathered while the file is opened and said in
 * one message once it is.
 */
struct tdat_cut {
	unsigned cpus;	  /* CPUs whose data runs past the end */
	unsigned buffers; /* buffers whose block (table, section header) lies past it */
	unsigned sections; /* v7 options sections (after the first) past it */
	unsigned stores;   /* blob stores it cuts (their entries before it are read) */
	uint64_t at;	  /* the first byte not read of the first CPU cut partway; 0: none */
	char first[96];	  /* that CPU: "buffer 'kernel' CPU 1" */
	uint64_t kept, total; /* its whole sub-buffers (chunks) read, and those it had */
	bool chunks;	  /* kept and total count compressed chunks */
};

struct tb_tracedat {
	struct tb_tracedat_info info;
	char *path;
	int fd;
	enum tdat_codec codec;
	char compression[32];
	char compression_version[64];
	tb_problem_fn *diag;
	void *diag_ctx;
	bool no_symbols; /* tb_tracedat_opts.no_symbols */
	bool lazy_formats; /* tb_tracedat_opts.lazy_formats */
	/* lazy_formats: each format's text kept until a record of its ID needs it (tdat_read.c) */
	struct tdat_pending *pending; /* [npending], parallel to formats */
	size_t npending, pending_cap;
	struct id_table pending_by_id; /* uint32_t by ID: index in pending + 1, 0 for none (id_table.h) */
	/*
	 * kallsyms is parsed on a thread while the rest is read (tdat_read.c):
	 * once the reading has passed where the file holds it, its problems are
	 * told before any later one (kallsyms_past), and kallsyms_rc keeps a
	 * failure met while telling them.
	 */
	bool kallsyms_past;
	int kallsyms_rc;
	/* The formats' names and systems, and the texts of pending formats: freed together at close. */
	struct arena strings;
	/* A read-ahead of the file for the many small reads of the metadata. */
	uint8_t *ra;
	uint64_t ra_at;
	size_t ra_len;
	unsigned long problems;
	struct tdat_cut cut;
	struct tb_schema *schema;

	char *header_page, *header_event;
	char *trace_clock, *uname, *version_string;
	char *cpustats;
	size_t cpustats_len;

	struct tdat_buffer *buffers;
	int nbuffers;
	struct tb_tracedat_option *options;
	size_t noptions, options_cap;
	struct tb_tracedat_part *parts;
	size_t nparts, parts_cap;
	struct tb_tracedat_format *formats;
	size_t nformats, formats_cap;

	/*
	 * TB_TDAT_OPT_TB_BLOBS: the saved blobs' stores (tracebuf/blob.h), in
	 * the file: one for every buffer (a 16-byte option), or one per buffer
	 * of captures joined (the option names its buffer), since two rings
	 * number their blobs alike.  has_blobs: an option was seen, even one
	 * naming bytes outside the file (its blobs then print as lost).
	 */
	bool has_blobs;
	struct tdat_store {
		uint64_t at, len;
		char *buffer;		  /* NULL: every buffer's */
		struct blob_store *blobs; /* for the dump: made on first use (tdat_blobs) */
	} *stores;
	int nstores;

	int file_cpus; /* the CPU count in the header (v6 item 23) */
	int cpucount;  /* CPUCOUNT option, 0 if none */
	bool has_traceclock;
	bool v6_latency; /* v6: the data is latency text */
	uint64_t latency_offset;

	/* Where the text being loaded lies, to place the schema's messages in the file. */
	uint64_t text_base;
	const char *text_where; /* NULL: the text lies in the file as is, at text_base */
};

/* Report a problem at a file offset (counted). */
void tdat_report(struct tb_tracedat *td, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A problem in a page that names its own place (a decompressed chunk's label). */
void tdat_report_in(struct tb_tracedat *td, const char *file, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same as a warning (not counted). */
void tdat_warn(struct tb_tracedat *td, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A format file not parsed yet (lazy_formats): its text and where it lies, for messages. */
struct tdat_pending {
	char *text; /* NULL once handed to the schema */
	size_t len;
	uint64_t at;       /* where the text starts: in the file, or in the decompressed section */
	const char *where; /* that section's name (static), NULL for the file itself */
	uint64_t base;     /* where: the section's offset in the file */
};

/* The blob store (blob_store.h) of buffer's blobs, problems told through td; NULL when it saved none. */
struct blob_store *tdat_blobs(struct tb_tracedat *td, const char *buffer);
/* Where buffer's blob store lies: its entry in td->stores, or NULL (none saved, or out of the file). */
struct tdat_store *tdat_store_of(struct tb_tracedat *td, const char *buffer);

/* pread exactly n bytes at offset; 0, or -EIO/-errno (reported with what). */
int tdat_pread(struct tb_tracedat *td, void *buf, size_t n, uint64_t offset, const char *what);

/* Little-endian loads (the only byte order tracebuf reads). */
static inline uint16_t tdat_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t tdat_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tdat_le64(const uint8_t *p)
{
	return (uint64_t)tdat_le32(p) | (uint64_t)tdat_le32(p + 4) << 32;
}

/* trace-cmd's rule: is a buffer's clock printed in microseconds (else raw)? */
bool tdat_clock_in_usecs(const char *clock);

/* ------------------------------------------------------- page streams */

/* One CPU's sub-buffers in a buffer, read (and decompressed) one at a time. */
struct tdat_stream {
	struct tb_tracedat *td;
	const struct tb_tracedat_cpu *cpu;
	uint32_t page_size;
	bool compressed;
	uint64_t pos, end; /* file bytes left: [pos, end) */
	bool done;
	uint8_t *page;
	const uint8_t *data; /* plain: the sub-buffer handed out, in the read-ahead (in) */
	/* compressed */
	uint32_t chunks_left;
	uint32_t chunks_kept;	 /* the chunks before a cut of the file (UINT32_MAX: no cut) */
	uint64_t chunk_at;	 /* file offset of the current chunk's header */
	uint64_t chunk_in_left;	 /* compressed bytes of the chunk not yet read */
	uint32_t chunk_out_left; /* decompressed bytes of the chunk not yet produced */
	uint32_t chunk_clen, chunk_ulen; /* the chunk's sizes, as its header declares them */
	bool chunk_ended;	 /* the decompressor saw the end of the block */
	uint8_t *in;		 /* plain: read-ahead of whole sub-buffers; in_len, in_pos in it */
	const uint8_t *zin;	 /* compressed: the decompressor's input, in ra; in_len, in_pos in it */
	size_t in_len, in_pos;
	uint8_t *ra;		 /* compressed: a read-ahead of the CPU's file bytes [ra_at, ra_at + ra_len) */
	uint64_t ra_at;
	size_t ra_len;
	size_t ahead;		 /* bytes read ahead at a time (64 KiB; a test may set less) */
	/*
	 * A chunk decompressed whole that the caller's buffer could not hold:
	 * its sub-buffers [spill_pos, spill_len) not handed out yet, which are
	 * then always the chunk's last chunk_out_left bytes.
	 */
	uint8_t *spill;
	size_t spill_cap, spill_pos, spill_len;
	struct tdat_unzip *unzip;
	char *label;	      /* names the chunk a decompressed page came from */
	uint64_t label_chunk; /* the chunk label names */
	uint64_t chunk_pos;   /* byte of the next page in its decompressed chunk */
};

void tdat_stream_init(struct tdat_stream *s, struct tb_tracedat *td, const struct tdat_buffer *b,
		      const struct tb_tracedat_cpu *cpu);
/* 1 with *page filled, 0 at the end, negative errno (reported; the stream ends). */
int tdat_stream_next(struct tdat_stream *s, struct tb_capture_page *page);
/*
 * As capture_read_pages() (capture_source.h): the stream's next sub-buffers
 * written straight into buf (plain: read; compressed: decompressed there),
 * at most max_pages and room bytes of them, each handed to got(ctx, page).
 */
int tdat_stream_read(struct tdat_stream *s, uint8_t *buf, size_t room, size_t max_pages, capture_page_fn *got,
		     void *ctx);
void tdat_stream_rewind(struct tdat_stream *s);
void tdat_stream_free(struct tdat_stream *s);

/*
 * Decompress a whole block of clen bytes at file offset at into a buffer of
 * exactly ulen bytes (caller frees).  0, -EINVAL (reported), -ENOMEM.
 */
int tdat_inflate_block(struct tb_tracedat *td, uint64_t at, uint64_t clen, uint32_t ulen, const char *what,
		       uint8_t **out);

/*
 * Uncompressed writers: len bytes of whole sub-buffers from fd's current
 * offset, copied file to file by the kernel (copy_file_range).  0, -ENOTSUP
 * when this writer or this pair of files cannot (nothing was copied: copy
 * through memory instead), or the writer's error.
 */
int tdat_writer_copy_file(struct tb_tracedat_writer *w, int fd, uint64_t len);
/*
 * The whole sub-buffers of the raw file at path into the CPU begun in w, as
 * `tracebuf report` reads them (tdat_rawcopy.c): damaged ones left out or cut
 * at the damage, each said through o's diag as a problem; a trailing partial
 * sub-buffer said as a warning.  0 or -errno.
 */
int tdat_copy_raw(struct tb_tracedat_writer *w, const char *path, uint32_t page_size,
		  const struct tb_tracedat_write_opts *o);
/* The writer's sub-buffer size, once its first buffer began (0 before). */
uint32_t tdat_writer_page_size(const struct tb_tracedat_writer *w);
/* Whether header_page and header_event were given yet. */
bool tdat_writer_has_headers(const struct tb_tracedat_writer *w);

#endif
