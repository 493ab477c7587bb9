// SPDX-License-Identifier: MIT
/*
 * sources_func.c - bench_sources' function entry/exit case.  Built with
 * -finstrument-functions (the Makefile), so the one function measured gets
 * its hooks from libtracebuf-func.a as a traced program's would; the rest
 * here is no_instrument_function.
 */
#include <stdint.h>

#include "tracebuf/func.h"

#define NOTRACE __attribute__((no_instrument_function))

void bs_func_records(long n);

static volatile uint64_t sink;

/* Instrumented, kept out of line and unchanged: an entry and an exit record a call. */
__attribute__((noipa)) void bs_traced_call(uint64_t x);
__attribute__((noipa)) void bs_traced_call(uint64_t x)
{
	sink = x;
}

/* n records: n / 2 traced calls, so the time a record includes half a call's own cost. */
NOTRACE void bs_func_records(long n)
{
	for (long i = 0; i < n / 2; i++)
		bs_traced_call((uint64_t)i);
}
