/* SPDX-License-Identifier: MIT */
/*
 * blob.h - the blob area's protocol, as the rest of the ring uses it: the
 * readers resolve references with it, creation and reset set it up.
 * Internal; the writer's side is tracebuf/blob.h, the protocol
 * docs/design.md §9.
 */
#ifndef TRACEBUF_BLOB_INTERNAL_H
#define TRACEBUF_BLOB_INTERNAL_H

#include <stdint.h>

#include "ring_internal.h"
#include "tracebuf/blob.h"
#include "tracebuf/reader.h"

/* Every chunk free, the cursor at the first lap's first number (creation, reset). */
void blob_area_init(struct tb_region *r, struct tb_cpu_ctl *c);

/* 1 with *ref filled when a data record (its raw type_len and payload) is a blob reference. */
int blob_ref_parse(uint32_t type_len, const void *data, uint32_t len, struct tb_blob_ref *ref);

/*
 * Copy the blob into buf, grown to fit: 1 intact, 0 overwritten (or no
 * blob of this region), -ENOMEM.  Consumes nothing.
 */
int blob_fetch(struct tb_region *r, const struct tb_blob_ref *ref, struct blob_copy *buf);

/*
 * A consuming reader of cpu takes the reference: copy the blob (into the
 * ring's buffer for cpu), let writers reuse its chunks, count it read or
 * lost, and make *ev the TB_READ_BLOB or TB_READ_BLOB_LOST.  0, or
 * -ENOMEM with nothing done.  Under cpu's reader lock.
 */
int blob_consume(struct tb_ring *ring, unsigned cpu, const struct tb_blob_ref *ref, struct tb_read_event *ev);

/* A reference was handed over in a raw page: its chunks may be reused. */
void blob_release(struct tb_region *r, const struct tb_blob_ref *ref);

#endif
