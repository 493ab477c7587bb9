/* SPDX-License-Identifier: MIT */
/*
 * page_repair.h - a raw sub-buffer as `tracebuf report` reads it, for the
 * writers that copy sub-buffers (the trace.dat of tdat_rawcopy.c, the
 * capture directory of export/export_capture_dir.c), so what they write
 * holds exactly the events report prints of the input and no reader meets
 * the damage again:
 *   - all zeros (a short read of trace_pipe_raw leaves them): left out;
 *   - a header no reader can trust (commit past the data area, a stored
 *     lost count that does not fit): left out;
 *   - a record that goes wrong part-way: the records before it are kept
 *     (page_cut), the rest zeroed.
 * Each is said through say with the file, its byte and the reason in
 * report's words.
 */
#ifndef TRACEBUF_TRACEDAT_PAGE_REPAIR_H
#define TRACEBUF_TRACEDAT_PAGE_REPAIR_H

#include <stdint.h>

#include "tracebuf/schema.h"

enum page_verdict {
	PAGE_CLEAN,    /* copied as it is */
	PAGE_LEFT_OUT, /* zeros, or a header no reader can trust */
	PAGE_CUT,      /* its records up to the damage kept */
};

/* The sub-buffer read at byte at of file; said unless clean; PAGE_CUT: *cut data bytes kept. */
enum page_verdict page_verdict(const uint8_t *page, uint32_t page_size, const char *file, uint64_t at,
			       tb_problem_fn *say, void *ctx, uint32_t *cut);
/* page (checked by page_verdict) with its data cut to len bytes: flags and a stored lost count kept. */
void page_cut(uint8_t *page, uint32_t page_size, uint32_t len);

#endif
