/* SPDX-License-Identifier: MIT */
/*
 * raw_scan.h - what the saved raw pages of a capture refer to: the event
 * IDs that have records (so their format files are saved even when their
 * system was not enabled at the end), and every 8-byte value in a payload
 * that lies in the kernel's symbol range (so kallsyms can be cut down to
 * the symbols a report can need).
 *
 * Ownership: raw_refs_free() releases what the scan collected.
 */
#ifndef TRACEBUF_EXPORT_RAW_SCAN_H
#define TRACEBUF_EXPORT_RAW_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct raw_refs {
	uint8_t ids[65536 / 8]; /* bit set: the event ID has a record */
	uint64_t lo, hi;	/* the address range collected ([lo, hi]; lo > hi: none) */
	uint64_t *addrs;	/* values found in [lo, hi], sorted and unique after raw_refs_finish() */
	size_t naddrs, cap;
	uint64_t pages, records, bad_pages;
};

static inline bool raw_refs_has_id(const struct raw_refs *r, unsigned id)
{
	return id < 65536 && (r->ids[id / 8] >> (id % 8) & 1);
}

/*
 * Scan the sub-buffers of one cpuN.raw file.  0 or -errno; a sub-buffer
 * that does not decode is counted in bad_pages and skipped (the report
 * will name it).
 */
int raw_scan_file(struct raw_refs *r, const char *path, size_t subbuf);
/* Sort and deduplicate the addresses. */
void raw_refs_finish(struct raw_refs *r);
void raw_refs_free(struct raw_refs *r);

#endif
