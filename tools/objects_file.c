// SPDX-License-Identifier: MIT
/* objects_file.c - a capture's objects file (user-space symbols) for the commands that name functions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects_file.h"

/* The objects file given, or DIR/objects if there is one; NULL when none. */
struct tb_usyms *objects_load(const char *cmd, const char *dir, const char *file)
{
	char path[4096];
	struct tb_usyms *u = NULL;
	size_t len = 0, cap = 0;
	char *text = NULL;
	FILE *f;

	if (!file) {
		snprintf(path, sizeof(path), "%s/objects", dir);
		file = path;
	}
	f = fopen(file, "r");
	if (!f) {
		if (file != path)
			fprintf(stderr, "tracebuf %s: %s: %s\n", cmd, file, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len + 4096 > cap) {
			char *grown = realloc(text, cap = cap ? 2 * cap : 65536);
			if (!grown)
				break;
			text = grown;
		}
		size_t n = fread(text + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	if (text && tb_usyms_load(&u, file, text, len, NULL, NULL) < 0)
		u = NULL;
	free(text);
	return u;
}
