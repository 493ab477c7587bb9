// SPDX-License-Identifier: MIT
/*
 * fuzz_hist_region.c - libFuzzer target for the region of a hist attached at
 * the source (src/analyze/hist_region.c), as `tracebuf hist --attach` reads
 * it from another process: the input is the region's bytes (header, event,
 * spec and format texts, table headers, slots), copied to an allocation of
 * its own so an overread is caught, then checked and printed with
 * tb_hist_print_region.  Checked beyond "no crash, no leak, no overread, no
 * hang": it is printed (0), or refused (-EINVAL) with a message naming the
 * byte, or -ENOMEM/-E2BIG never arise for a region this small.
 *
 * Seeds (corpus/hist_region/): regions of one table (ntables 1: a real one
 * has 64, too big for the fuzzer's inputs), written by gen_hist_region.py
 * in the layout of hist_region.h, with numeric and compound keys.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/hist.h"

#include "fuzz_check.h"
#include "fuzz_sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	rc = tb_hist_print_region(copy, size, fuzz_sink());
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc == -EINVAL)
		CHECK(strstr(tb_hist_region_error(), "byte ") || strstr(tb_hist_region_error(), "bytes"));
	free(copy);
	return 0;
}
