/* SPDX-License-Identifier: MIT */
/*
 * usdt_notes.h - the USDT probes an ELF object declares: its SystemTap SDT
 * notes (.note.stapsdt, owner "stapsdt", type 3), as tracebuf's tracepoints
 * write them (tracepoint.h, docs/usdt.md) and <sys/sdt.h> does.
 *
 * Each note is one probe site: its address, the address of _.stapsdt.base,
 * its semaphore's address (0: none), then provider, name and the argument
 * text, NUL-terminated.  Sites of one provider:name are merged.  Every
 * offset and size is checked against the file before it is used; a
 * problem gives -EINVAL with the byte offset and the reason.
 *
 * Ownership: usdt_notes_free() releases what a successful load filled in.
 */
#ifndef TRACEBUF_DECODE_USDT_NOTES_H
#define TRACEBUF_DECODE_USDT_NOTES_H

#include <stdbool.h>
#include <stddef.h>

#include "tracebuf/problem.h"

struct usdt_probe {
	char *provider, *name;
	unsigned sites;      /* notes of this provider:name */
	bool semaphore;      /* every site has one */
	unsigned nargs;      /* arguments of the first site */
};

struct usdt_notes {
	struct usdt_probe *probes; /* in the order of their first note */
	size_t n;
};

/* The probes of the 64-bit little-endian ELF object at path: 0, -EINVAL (*err filled), -ENOMEM or -errno. */
int usdt_notes_load(const char *path, struct usdt_notes *out, struct tb_problem *err);
void usdt_notes_free(struct usdt_notes *n);
/* provider:name's probe, or NULL. */
const struct usdt_probe *usdt_notes_find(const struct usdt_notes *n, const char *provider, const char *name);

#endif
