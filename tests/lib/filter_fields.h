/* SPDX-License-Identifier: MIT */
/*
 * filter_fields.h - the kernel's sched_switch layout (common fields first)
 * as tracebuf/filter.h fields, for tests and the fuzz target to build on:
 *
 *   static const struct tb_filter_field fields[] = {SCHED_SWITCH_FILTER_FIELDS, {...more}};
 */
#ifndef TB_TEST_FILTER_FIELDS_H
#define TB_TEST_FILTER_FIELDS_H

#include "tracebuf/filter.h"

#define SCHED_SWITCH_FILTER_FIELDS                                   \
	{"common_type", 0, 2, TB_FILTER_INT, false},                 \
	{"common_flags", 2, 1, TB_FILTER_INT, false},                \
	{"common_preempt_count", 3, 1, TB_FILTER_INT, false},        \
	{"common_pid", 4, 4, TB_FILTER_INT, true},                   \
	{"prev_comm", 8, 16, TB_FILTER_CHARS, false},                \
	{"prev_pid", 24, 4, TB_FILTER_INT, true},                    \
	{"prev_prio", 28, 4, TB_FILTER_INT, true},                   \
	{"prev_state", 32, 8, TB_FILTER_INT, true},                  \
	{"next_comm", 40, 16, TB_FILTER_CHARS, false},               \
	{"next_pid", 56, 4, TB_FILTER_INT, true},                    \
	{"next_prio", 60, 4, TB_FILTER_INT, true}

#endif
