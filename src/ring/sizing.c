// SPDX-License-Identifier: MIT
/*
 * sizing.c - the kernel's buffer_size_kb and buffer_subbuf_size_kb
 * arithmetic (kernel-ring-buffer.md §4), reproduced exactly so a size asked
 * of tracebuf means what it means to the kernel.
 */
#include <errno.h>

#include "tracebuf/page.h"
#include "tracebuf/ring.h"

/* buffer_subbuf_size_kb: KiB -> 4 KiB << order, order 0..7. */
static int subbuf_bytes_for(uint32_t subbuf_kb, uint32_t *bytes)
{
	uint32_t pages, order = 0;

	if (subbuf_kb == 0 || subbuf_kb > 512)
		return -EINVAL;
	pages = (subbuf_kb * 1024 + 4095) / 4096;
	while ((1u << order) < pages)
		order++;
	*bytes = 4096u << order;
	return 0;
}

int tb_sizing_compute(uint64_t size_kb, uint32_t subbuf_kb, struct tb_sizing *out)
{
	uint32_t bytes;
	uint64_t n;

	if (!out || size_kb == 0 || size_kb > (1ull << 40) || subbuf_bytes_for(subbuf_kb, &bytes) < 0)
		return -EINVAL;
	out->requested_kb = size_kb;
	out->subbuf_bytes = bytes;
	out->data_bytes = tb_page_data_size(bytes);
	n = (size_kb * 1024 + out->data_bytes - 1) / out->data_bytes;
	if (n < 2)
		n = 2;
	if (n > 65535) /* page indexes are 16 bits (ring_layout.h) */
		return -E2BIG;
	out->subbufs_per_cpu = (uint32_t)n;
	out->usable_bytes = n * out->data_bytes;
	out->readback_kb = out->usable_bytes / 1024;
	out->allocated_bytes_per_cpu = (n + 1) * bytes;
	return 0;
}
