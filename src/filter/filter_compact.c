// SPDX-License-Identifier: MIT
/*
 * filter_compact.c - a compiled filter as a compact program
 * (filter_compact.h): its integer predicates as flat tests and its truth
 * table (filter_tabulate) turned into the verdict per answers.  The
 * registry's glue (src/source/event_filter.c) makes the program from an
 * event's descriptor and stores the compact form where its emitters read it.
 */
#include <string.h>

#include "filter_compact.h"
#include "filter_internal.h"

_Static_assert(FILTER_COMPACT_MAX == MAX_TABLE_PREDS, "the compact form holds what filter_tabulate tabulates");

/*
 * The compact form of program, when it has one (its table: filter_tabulate);
 * else ntests is 0.  A predicate is true when ((field ^ flip) - lo <=
 * span) != invert, flip 0 or the sign bit; x ^ (1 << 63) is x + (1 << 63)
 * modulo 2^64, so that is (field - (lo ^ flip) <= span) != invert, and the
 * inversion moves into the table: one subtraction and one comparison are
 * left for the emitter.
 */
void filter_compact(const struct tb_filter *program, struct filter_compact *f)
{
	uint64_t inverted = 0;

	memset(f, 0, sizeof(*f));
	if (!program->table || program->npreds == 0)
		return;
	for (uint32_t k = 0; k < program->npreds; k++) {
		const struct filter_pred *p = &program->preds[k];
		bool band = p->op == OP_BAND;
		f->tests[k] = (struct filter_compact_test){
		    .offset = p->offset,
		    .width = p->size,
		    .is_signed = p->is_signed,
		    .band = band,
		    .lo = band ? p->val : p->lo ^ p->flip,
		    .span = p->span,
		};
		if (!band && p->invert)
			inverted |= 1u << k;
	}
	/* the verdict for answers b is the program's for the answers before inversion */
	for (uint64_t b = 0; b < (UINT64_C(1) << program->npreds); b++)
		f->truth |= ((program->truth >> (b ^ inverted)) & 1) << b;
	f->ntests = program->npreds;
	f->min_len = program->min_len;
}
