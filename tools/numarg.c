// SPDX-License-Identifier: MIT
/* Numbers given on the command line, read strictly (numarg.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "numarg.h"

int parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *end || errno == ERANGE ? -1 : 0;
}
