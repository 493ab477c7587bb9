/* SPDX-License-Identifier: MIT */
/*
 * cpu.h - where the calling thread runs, for tests that put writers and
 * readers on chosen CPUs.
 *
 *   pin_cpu(n)   run on CPU n only; 1, or 0 if the system refused
 *   unpin_cpu()  run anywhere again
 */
#ifndef TB_TEST_CPU_H
#define TB_TEST_CPU_H

#include <sched.h>

static inline int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

static inline void unpin_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

#endif
