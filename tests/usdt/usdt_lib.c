// SPDX-License-Identifier: MIT
/*
 * usdt_lib.c - a library usdt_app dlopens: its event's USDT probe and
 * semaphore live in this object, not the program.
 */
#include "usdt/usdt_events.h"

bool usdt_lib_attached(void);
void usdt_lib_fire(int n);

bool usdt_lib_attached(void)
{
	return tb_usdt_attached(usdt_lib, fire);
}

void usdt_lib_fire(int n)
{
	for (int k = 0; k < n; k++)
		tb_trace(usdt_lib, fire, k, "lib");
}
