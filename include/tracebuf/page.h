/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/page.h - the kernel's ftrace sub-buffer ("page") format.
 *
 * A page is a 16-byte header (u64 time stamp, u64 commit word) followed by
 * records, each starting with a 32-bit word {type_len:5, time_delta:27}.
 * This header encodes and decodes that format (64-bit kernel layout, little
 * endian, 4-byte record alignment), exactly as the kernel writes it and as
 * per_cpu/cpuN/trace_pipe_raw hands it out.
 *
 * Ownership: nothing here allocates. A cursor or writer borrows the page
 * memory the caller passes and must not outlive it.
 *
 * Misuse: a NULL page, cursor, writer, record or header is -EINVAL (the
 * writer's counters read 0); a writer whose init failed refuses every call.
 */
#ifndef TRACEBUF_PAGE_H
#define TRACEBUF_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_PAGE_HDR_SIZE 16u          /* u64 time_stamp + u64 commit */
#define TB_PAGE_MIN_SIZE 4096u        /* 4 KiB << 0 */
#define TB_PAGE_MAX_SIZE (512u << 10) /* 4 KiB << 7 */

/* Commit-word flags on pages handed to readers (kernel RB_MISSED_*). */
#define TB_PAGE_COMMIT_LOST (1u << 31)        /* events lost before this page */
#define TB_PAGE_COMMIT_LOST_STORED (1u << 30) /* count stored as u64 after data */
#define TB_PAGE_COMMIT_LEN_MASK ((1u << 27) - 1)

/* type_len values of the record header. */
#define TB_TYPE_DATA_MAX 28u
#define TB_TYPE_PADDING 29u
#define TB_TYPE_TIME_EXTEND 30u
#define TB_TYPE_TIME_STAMP 31u

#define TB_DELTA_BITS 27u
#define TB_DELTA_MAX ((1u << TB_DELTA_BITS) - 1)

enum tb_rec_kind {
	TB_REC_DATA = 0,    /* an event: payload in data/len */
	TB_REC_PADDING,     /* discarded record or end-of-page filler */
	TB_REC_TIME_EXTEND, /* adds to the running time */
	TB_REC_TIME_STAMP,  /* sets the running time (absolute, 59 bits) */
};

/* One record as decoded from a page. data points into the page. */
struct tb_record {
	enum tb_rec_kind kind;
	uint64_t ts;         /* absolute time after this record */
	const void *data;    /* payload (DATA) or NULL */
	uint32_t len;        /* payload bytes (multiple of 4) */
	uint32_t offset;     /* byte offset of the record inside the page */
	uint32_t size;       /* bytes the record occupies, header included */
	uint32_t type_len;   /* raw header field */
	uint32_t time_delta; /* raw header field */
};

/* The page header, decoded. */
struct tb_page_header {
	uint64_t timestamp;
	uint64_t commit_raw; /* the whole 8-byte word as stored */
	uint32_t data_len;   /* commit & TB_PAGE_COMMIT_LEN_MASK */
	bool lost;           /* bit 31 */
	bool lost_stored;    /* bit 30: lost_count is valid */
	uint64_t lost_count; /* u64 after the data when lost_stored */
};

/* Where and why decoding failed: offset is relative to the page start. */
struct tb_page_error {
	size_t offset;
	const char *reason; /* static string */
};

/*
 * Sub-buffer geometry.  Sizes are 4 KiB << order, order 0..7.
 * tb_page_data_size(): bytes available for records (size - 16).
 * tb_page_max_payload(): the largest payload one record can carry (D - 8).
 */
int tb_page_size_valid(size_t page_size);
uint32_t tb_page_data_size(size_t page_size);
uint32_t tb_page_max_payload(size_t page_size);
/* Size a record of payload len takes, with ts_bytes (0 or 8) for an extend. */
uint32_t tb_record_size(uint32_t len, uint32_t ts_bytes);

/*
 * Read the header.  Fails with -EINVAL (err filled) when the commit length
 * exceeds the data area or a stored lost count would not fit.
 */
int tb_page_read_header(const void *page, size_t page_size,
			struct tb_page_header *hdr, struct tb_page_error *err);

/* Decoding cursor: walk the records of one page in order. */
struct tb_page_cursor {
	/* private */
	const uint8_t *page;
	size_t page_size;
	uint32_t end;  /* data offset where records end */
	uint32_t pos;  /* next record, data-relative */
	uint64_t time; /* running time */
	int failed;
	struct tb_page_header hdr;
	struct tb_page_error err;
};

/* 0 on success, -EINVAL (with cursor->err) on a bad header. */
int tb_page_cursor_init(struct tb_page_cursor *c, const void *page, size_t page_size);

/*
 * Walk only the records in data offsets [pos, end) of a page whose running
 * time at pos is time (a reader resuming inside a page, or a page still
 * being written whose committed end is known).  end is checked against the
 * page size, never trusted.
 */
int tb_page_cursor_init_range(struct tb_page_cursor *c, const void *page, size_t page_size,
			      uint32_t pos, uint32_t end, uint64_t time);

/*
 * Next record of any kind.  Returns 1 with *rec filled, 0 at the end of the
 * page, -EINVAL on corruption (c->err says where; the cursor then stays at
 * the end).  Every offset and length is checked against the page first.
 */
int tb_page_next(struct tb_page_cursor *c, struct tb_record *rec);

/* Like tb_page_next() but only returns data records. */
int tb_page_next_data(struct tb_page_cursor *c, struct tb_record *rec);

/*
 * A page's first end data bytes walked as a cursor walks them, without
 * decoding the records (to check a page before it is copied): the data
 * records a reader gets and where it stops.  0 when the walk reaches end
 * (or null padding), -EINVAL at a record that goes wrong (offset, reason
 * set), -EINVAL with reason NULL for bad arguments.  The header is not
 * read: end is the caller's (tb_page_read_header's data_len, or less).
 */
struct tb_page_check {
	uint64_t events;    /* data records before the one that goes wrong (all when none) */
	uint32_t len;       /* data bytes they span: where the bad record starts, else end */
	size_t offset;      /* the bad record's byte in the page (header included) */
	const char *reason; /* static string; NULL when the walk reached the end */
};
int tb_page_check(const void *page, size_t page_size, uint32_t end, struct tb_page_check *out);

/*
 * Encoder.  Records are appended in time order; the writer picks a delta,
 * a time extend or (on request) an absolute stamp, like the kernel.
 */
struct tb_page_writer {
	/* private */
	uint8_t *page;
	size_t page_size;
	uint32_t pos;
	uint64_t last_ts;
	uint32_t entries;
};

/* Start an empty page whose header stamp is ts. The page is zeroed. */
int tb_page_writer_init(struct tb_page_writer *w, void *page, size_t page_size, uint64_t ts);
/* Append an event; -ENOSPC if it does not fit, -EINVAL if ts goes back. */
int tb_page_add(struct tb_page_writer *w, uint64_t ts, const void *data, uint32_t len);
/* Append an event preceded by an absolute TIME_STAMP record. */
int tb_page_add_abs(struct tb_page_writer *w, uint64_t ts, const void *data, uint32_t len);
/*
 * Append a padding record of size bytes (>= 8, a multiple of 4) whose
 * time_delta is delta (1 for filler; a discarded event keeps its own).
 */
int tb_page_add_padding(struct tb_page_writer *w, uint32_t delta, uint32_t size);
/* Bytes used so far and events written. */
uint32_t tb_page_writer_used(const struct tb_page_writer *w);
uint32_t tb_page_writer_entries(const struct tb_page_writer *w);
/*
 * Close the page: with fill, end-of-page padding covers the rest of the data
 * area and commit includes it (a page copied record by record); without,
 * commit ends at the last record (a page swapped out whole).  lost != 0 sets
 * bit 31; lost > 0 also stores the count when 8 bytes are left (bit 30).
 * lost < 0 means "lost, count unknown".
 */
int tb_page_finish(struct tb_page_writer *w, bool fill, int64_t lost);

/* Encode one 32-bit header word (little-endian layout). */
static inline uint32_t tb_rec_header(uint32_t type_len, uint32_t delta)
{
	return (type_len & 31u) | (delta << 5);
}

#ifdef __cplusplus
}
#endif
#endif
