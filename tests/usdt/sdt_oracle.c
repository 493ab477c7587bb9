// SPDX-License-Identifier: MIT
/*
 * sdt_oracle.c - the same probes placed by <sys/sdt.h> (systemtap-sdt-dev)
 * and by tracebuf's own notes, for t_usdt.sh to compare what readelf reads
 * from both: constants must come out as the same text, values of each type
 * with the same size and sign.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "tracebuf/tracepoint.h"

__attribute__((section(".probes"))) unsigned short oracle_sdt_semaphore, oracle_sdtc_semaphore;
__attribute__((section(".probes"))) union tb_event_gate oracle_gate;

int main(int argc, char **argv)
{
	long big = argc * 1000L;
	int neg = -argc;
	unsigned char byte = (unsigned char)argc;
	short half = (short)-argc;
	const char *s = argv[0];

	STAP_PROBE5(oracle, sdt, big, neg, s, byte, half);
	TB__USDT(oracle, tb, oracle_gate, 0, big, neg, s, byte, half);
	STAP_PROBE3(oracle, sdtc, 5, -3, 1ul << 40);
	TB__USDT(oracle, tbc, oracle_gate, 0, 5, -3, 1ul << 40);
	return 0;
}
