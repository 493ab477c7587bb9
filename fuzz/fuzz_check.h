/* SPDX-License-Identifier: MIT */
/*
 * fuzz_check.h - the check every fuzz target makes of what the library
 * returned: a false claim aborts, so libFuzzer keeps the input as a crash.
 */
#ifndef TB_FUZZ_CHECK_H
#define TB_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s: check failed at line %d: %s\n", __FILE__, __LINE__, \
				#cond);                                                    \
			abort();                                                           \
		}                                                                          \
	} while (0)

#endif
