/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/problem.h - a problem in an input: which file, where in it, and
 * what is wrong.  Every reader of the library (schemas, captures,
 * trace.dat files, symbol tables, stats files) reports what it finds
 * damaged as a struct tb_problem, handed to a tb_problem_fn; the library's
 * count of problems decides the commands' exit status 1 ("found damage").
 *
 * Ownership: a struct tb_problem handed to a callback is the library's and
 * valid during the call only (copy what you keep); one passed as an output
 * (an "err" argument) is the caller's, and file then points to the
 * caller's string or to one that lives as long as the object that filled
 * it.  Nothing here allocates.
 */
#ifndef TRACEBUF_PROBLEM_H
#define TRACEBUF_PROBLEM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_PROBLEM_REASON_MAX 200

/*
 * One problem in the input: which file, where in it, and what is wrong.  A
 * warning is a problem in input the output turned out not to need (a format
 * file of an event no record uses): it is said, but not counted.
 */
struct tb_problem {
	const char *file;                 /* path of the input, "" if none */
	uint64_t offset;                  /* byte offset inside that input */
	char reason[TB_PROBLEM_REASON_MAX]; /* human-readable, no newline */
	bool warning;                     /* not counted as a problem */
};

/* Receives each problem as it is found; d is only valid during the call. */
typedef void tb_problem_fn(void *ctx, const struct tb_problem *d);

/*
 * A tb_problem_fn that prints "tracebuf: FILE: byte OFFSET: REASON" (after
 * "tracebuf: warning: " for a warning) to the FILE * passed as ctx (stderr
 * when ctx is NULL).
 */
void tb_problem_print(void *ctx, const struct tb_problem *d);

#ifdef __cplusplus
}
#endif
#endif
