/* SPDX-License-Identifier: MIT */
/*
 * objects_file.h - the objects a tracebuf ring's capture lists (DIR/objects,
 * or the file given), loaded as user-space symbols (tracebuf/usyms.h).
 * The caller frees the result with tb_usyms_free().
 */
#ifndef TRACEBUF_TOOLS_OBJECTS_FILE_H
#define TRACEBUF_TOOLS_OBJECTS_FILE_H

#include "tracebuf/usyms.h"

/* file, or DIR/objects when file is NULL and it exists; NULL when none (a missing file given is said, as cmd's). */
struct tb_usyms *objects_load(const char *cmd, const char *dir, const char *file);

#endif
