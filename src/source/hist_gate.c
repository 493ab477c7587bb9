// SPDX-License-Identifier: MIT
/*
 * hist_gate.c - where an emitter whose gate has the hist byte set sends
 * its record (tracepoint.h, tb__hist_hit).  The maps and the hist parser
 * belong to the reading side (src/analyze/hist_attach.c, libtracebuf-read),
 * which an application links only when it attaches a hist; the core keeps
 * its libc-only promise by calling it through this one pointer.
 */
#include <stddef.h>

#include "registry.h"

static tb__hist_hit_fn *_Atomic hit_fn;

void tb__hist_set_hit(tb__hist_hit_fn *fn)
{
	/* release: pairs with the acquire below; the maps fn reads were set up before */
	__atomic_store_n(&hit_fn, fn, __ATOMIC_RELEASE);
}

void tb__hist_hit(const struct tb_event_desc *ev, const void *rec, uint32_t len)
{
	tb__hist_hit_fn *fn = __atomic_load_n(&hit_fn, __ATOMIC_ACQUIRE);

	if (fn)
		fn(ev, rec, len);
}
