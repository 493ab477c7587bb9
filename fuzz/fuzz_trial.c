// SPDX-License-Identifier: MIT
/*
 * fuzz_trial.c - linked into every fuzz target (with -Wl,--wrap=tep_trial
 * and -Wl,--wrap=tep_trial_stop):
 * libtraceevent's trial parse (src/decode/tep_trial.c) asks its helper
 * process once per format that falls back to libtraceevent, once per
 * schema.  A fuzz run builds a new schema per input, so every input asked
 * again.  The library's helper makes each question a socket round trip
 * (it was a fork of the whole sanitized process per format, most of
 * fuzz_tracedat's and fuzz_format's time, until the helper answered
 * format after format); the answer depends only on what it is given (the
 * text, the system, the record's ID and size), so it is still asked once
 * per distinct question per process and remembered here: a mutated input
 * that changes a format asks the helper again, through the library's path.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode/tep_trial.h"

int __real_tep_trial(const char *text, size_t len, const char *system, const struct tb_format *f, int *how);
int __wrap_tep_trial(const char *text, size_t len, const char *system, const struct tb_format *f, int *how);

#define TRIAL_CACHE 4096 /* distinct formats remembered: a direct-mapped table, overwritten on a clash */

struct trial_answer {
	uint64_t key; /* 0: empty */
	int rc, how;
};

static struct trial_answer answers[TRIAL_CACHE];

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t question_key(const char *text, size_t len, const char *system, const struct tb_format *f)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ull, text, len);

	h = fnv1a(h, system ? system : "", system ? strlen(system) + 1 : 1);
	h = fnv1a(h, &f->id, sizeof(f->id));
	h = fnv1a(h, &f->min_size, sizeof(f->min_size));
	return h | 1; /* never 0, the empty entry */
}

int __wrap_tep_trial(const char *text, size_t len, const char *system, const struct tb_format *f, int *how)
{
	uint64_t key = question_key(text, len, system, f);
	struct trial_answer *a = &answers[key % TRIAL_CACHE];

	if (a->key != key) {
		a->how = 0;
		a->rc = __real_tep_trial(text, len, system, f, &a->how);
		a->key = key;
	}
	if (a->rc < 0)
		*how = a->how;
	return a->rc;
}

/*
 * The library ends its helper when a schema is freed (a command's one
 * schema: the frees would copy every page they share).  A fuzz run frees a
 * schema per input and asks again at once: its helper lasts the run.
 */
void __wrap_tep_trial_stop(void);
void __wrap_tep_trial_stop(void)
{
}
