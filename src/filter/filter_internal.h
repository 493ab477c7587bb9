/* SPDX-License-Identifier: MIT */
/*
 * filter_internal.h - the compiled form of a tracebuf/filter.h expression,
 * shared by filter_parse.c (which builds it) and filter_eval.c (which runs
 * it).  Internal.
 *
 * A filter is a program of predicates in the order they appear in the
 * expression.  Each predicate names the predicate to run next when it is
 * true and when it is false, or one of the two verdicts; targets always lie
 * ahead, so a run visits each predicate at most once and ends.
 */
#ifndef TRACEBUF_FILTER_INTERNAL_H
#define TRACEBUF_FILTER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebuf/filter.h"

/* Branch targets past the program's end. */
#define FILTER_ACCEPT (-1)
#define FILTER_REJECT (-2)

/* Operators, in the order the parser tries them ("<=" before "<"). */
enum filter_op { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND, OP_COUNT };

enum pred_kind {
	PRED_INT,  /* a record integer against val */
	PRED_CPU,  /* env->cpu against val */
	PRED_STR,  /* a record string (or env->comm) against pattern */
	PRED_FALSE, /* a field the event lacks, under TB_FILTER_MISSING_FALSE */
};

/* Where a string predicate's text is. */
enum str_source { SRC_CHARS, SRC_DATA_LOC, SRC_REL_LOC, SRC_COMM };

/* How a string predicate matches: the kernel's five kinds. */
enum str_match { MATCH_FULL, MATCH_FRONT, MATCH_MIDDLE, MATCH_END, MATCH_GLOB };

struct filter_pred;
typedef bool filter_pred_fn(const struct filter_pred *p, const uint8_t *rec, uint32_t len,
			    const struct tb_filter_env *env);

struct filter_pred {
	filter_pred_fn *fn; /* the test of a non-integer predicate (filter_bind) */
	uint8_t kind;   /* enum pred_kind */
	uint8_t op;     /* enum filter_op */
	uint8_t size;   /* PRED_INT: 1, 2, 4 or 8 */
	bool is_signed; /* PRED_INT, PRED_CPU: compare as signed */
	bool invert;    /* != and a '!' glob: the result is flipped */
	uint8_t source; /* PRED_STR: enum str_source */
	uint8_t match;  /* PRED_STR: enum str_match */
	uint32_t offset;     /* of the field in the record */
	uint32_t field_size; /* SRC_CHARS: the array's size */
	uint64_t val;        /* PRED_INT/CPU: the value, cut to size and extended as the field is */
	const char *pattern; /* PRED_STR: NUL-terminated, inside the filter's string pool */
	uint32_t pat_len;
	int32_t on_true, on_false; /* next predicate, or FILTER_ACCEPT / FILTER_REJECT */
	/* PRED_INT, from filter_bind: true when (field ^ flip) - lo <= span, != invert (& apart) */
	uint64_t flip; /* the sign bit for signed fields, so unsigned order is theirs */
	uint64_t lo, span;
};

struct tb_filter {
	uint32_t npreds;
	uint32_t min_len; /* a shorter record cannot hold every field read */
	unsigned uses;    /* TB_FILTER_USES_* */
	struct filter_pred *preds;
	char *pool; /* the patterns */
	bool table;     /* run every predicate and look the verdict up in truth */
	uint64_t truth; /* bit b: the verdict when predicate k answered bit k of b */
};

#define MAX_TABLE_PREDS 6 /* 2^6 verdicts in truth */

/* Fill table and truth once the program is wired. */
void filter_tabulate(struct tb_filter *f);

/* Choose how p runs, from the rest of p (which the parser filled). */
void filter_bind(struct filter_pred *p);

/* The kernel's glob (lib/glob.c rules: * ? [a-z] [!a-z] and \ escapes) over str[0..len). */
bool filter_glob(const char *pat, const char *str, uint32_t len);

#endif
