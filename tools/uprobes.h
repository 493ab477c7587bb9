/* SPDX-License-Identifier: MIT */
/*
 * uprobes.h - the kernel's dynamic probes on a program's functions
 * (`tracebuf record --uprobe FUNC`), defined through tracefs's
 * uprobe_events and removed afterwards.
 *
 * A spec is FUNC (a function of the traced program), FILE:FUNC (of another
 * ELF object, a path) or either with "%return" (a return probe).  FUNC is
 * looked up in the object's symbol table (src/util/elfsyms.c) and turned
 * into the file offset uprobe_events wants through the program header that
 * loads it.  The probes are events of their own group, tb_PID, named after
 * the function ("main", "main__return"), so they never collide with probes
 * someone else defined; only they are removed.
 *
 * uprobe_events is shared by every instance: it is only ever appended to
 * (a truncating open would delete everyone's probes).  Messages go into
 * the caller's err buffer; only a probe that cannot be removed is said on
 * stderr.
 */
#ifndef TRACEBUF_TOOLS_UPROBES_H
#define TRACEBUF_TOOLS_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uprobe {
	char name[64];	 /* the event name in group tb_PID */
	char *path;	 /* the object's absolute path */
	uint64_t offset; /* of the function in the file */
	bool ret;	 /* a return probe */
	bool defined;	 /* in uprobe_events now */
};

struct uprobe_set {
	char group[32]; /* tb_PID */
	struct uprobe *v;
	size_t n;
};

/*
 * Resolve spec for the command program (argv[0]; searched in PATH when it
 * has no '/') and add it to set.  0, or -errno with the reason in err.
 */
int uprobe_add(struct uprobe_set *set, const char *spec, const char *program, char *err, size_t err_size);

/* Define every probe of set in root/uprobe_events; 0, or -errno with err (those defined stay so). */
int uprobes_define(const char *root, struct uprobe_set *set, char *err, size_t err_size);

/* Remove the probes defined (their events must be disabled everywhere first); frees set. */
void uprobes_remove(const char *root, struct uprobe_set *set);

/* The event spec of the set for enable_events (event_select.h): "tb_PID"; "" if empty. */
const char *uprobes_system(const struct uprobe_set *set);

#endif
