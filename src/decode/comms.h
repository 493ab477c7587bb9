/* SPDX-License-Identifier: MIT */
/*
 * comms.h - the pid -> command name table the `trace` text's first column
 * comes from (the kernel's saved_cmdlines), looked up once per printed line.
 *
 * Open addressing on the pid with a power-of-two table, so a lookup is a
 * multiply, a mask and usually one compare.  The first name given for a pid
 * wins, as it does in the kernel's and libtraceevent's tables.  pid 0 is
 * always "<idle>" and an unknown pid "<...>", as the kernel prints them.
 * The table does not change while a report runs, so threads may read it.
 *
 * Ownership: comms_free() releases the table and every name in it.
 */
#ifndef TRACEBUF_COMMS_H
#define TRACEBUF_COMMS_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

struct comm_entry {
	int32_t pid;    /* 0 marks an empty slot (pid 0 is never stored) */
	uint16_t len;
	uint16_t column_len;
	char *name;     /* the name, its NUL, then its column (comms_column()) */
};

struct comms {
	struct comm_entry *slots;
	size_t mask; /* slots - 1; 0 while empty */
	size_t used;
	struct arena names; /* thousands to a malloc */
};

/* 0, or -ENOMEM.  A pid already known keeps its first name (returns 0). */
int comms_add(struct comms *t, int32_t pid, const char *name, size_t len);

/* Room for n more pids without growing (a saved_cmdlines' line count): 0, or -ENOMEM. */
int comms_reserve(struct comms *t, size_t n);

/* The name of pid and its length; never NULL. */
const char *comms_lookup(const struct comms *t, int32_t pid, size_t *len);

/*
 * The first column of the pid's `trace` lines, "%16s-%-7d" as the kernel
 * prints it ("            bash-23861  "), made once when the pid was
 * added: it is on every line.  NULL for a pid the table does not hold
 * (its name is "<...>": the caller formats that rare column itself).
 */
const char *comms_column(const struct comms *t, int32_t pid, size_t *len);

void comms_free(struct comms *t);

#endif
