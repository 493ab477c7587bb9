/* SPDX-License-Identifier: MIT */
/*
 * offcpu_internal.h - what offcpu.c (pairing switches into intervals)
 * hands offcpu_fold.c (intervals summed by stack, turned into text).
 */
#ifndef TRACEBUF_ANALYZE_OFFCPU_INTERNAL_H
#define TRACEBUF_ANALYZE_OFFCPU_INTERNAL_H

#include "intern.h"
#include "tracebuf/offcpu.h"

/* A stack as interned: addresses, leaf first, as the kernel stores them. */
#define STACK_MAX 128

/* The key intervals are summed under. */
struct sum_key {
	uint32_t comm, kstack, ustack; /* interned ids; NO_STACK when none */
};
#define NO_STACK UINT32_MAX

/* A sum: its key and the nanoseconds off CPU under it. */
struct sum_slot {
	struct sum_key key;
	bool used;
	uint64_t ns;
};

struct offcpu_sums {
	struct intern comms;	/* 16-byte comm arrays */
	struct intern stacks;	/* address lists, kernel and user alike */
	struct sum_slot *slots; /* open addressing by key, grown at half full */
	size_t nslots, count;
};

/* Add ns under key; 0 or -ENOMEM. */
int sums_add(struct offcpu_sums *s, struct sum_key key, uint64_t ns);

struct tb_offcpu {
	struct tb_folded *lines;
	size_t n;
};

/* Turn the sums into sorted folded lines with frames named from schema s; 0 or -ENOMEM. */
int offcpu_fold(struct offcpu_sums *sums, struct tb_schema *s, struct tb_offcpu *r);

#endif
