/* SPDX-License-Identifier: MIT */
/*
 * usermaps.h - the memory maps of user processes, for the sym-userobj
 * trace option: the kernel prints a user stack's address as the file
 * mapped there and the offset into that mapping ("/usr/lib/libc.so.6
 * [+0xd2350]"), looked up in the process's mm while `trace` is read.
 *
 * A capture holds the maps as they were when it was saved (its proc_maps
 * file, one line "TGID START-END[ PATH]" per mapping, PATH as
 * /proc/TGID/maps shows it); a live source reads /proc/TGID/maps itself,
 * when a process is first asked about, as the kernel looks at the live mm.
 *
 * Ownership: the table owns its copies of the paths; a path handed out
 * lives as long as the table.
 */
#ifndef TRACEBUF_USERMAPS_H
#define TRACEBUF_USERMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tb_usermaps;

/* An empty table; live: processes not in it are read from /proc. NULL: no memory. */
struct tb_usermaps *tb_usermaps_new(bool live);
void tb_usermaps_free(struct tb_usermaps *m);

/*
 * Add the lines of a proc_maps file.  Returns 0, -ENOMEM, or -EINVAL at
 * the first line that is not "TGID START-END[ PATH]" (*bad: its offset in
 * text; the lines before it are kept).
 */
int tb_usermaps_load(struct tb_usermaps *m, const char *text, size_t len, size_t *bad);

/*
 * What the kernel's find_vma() gives for ip in process tgid: the first
 * mapping that ends above ip (it may start above it too, as in the
 * kernel).  Returns 1 with *start and *path (NULL for a mapping of no
 * file: anonymous memory, [heap], [stack], [vdso]); 0 when the process has
 * no mapping above ip; -ESRCH when no such process is known (the kernel:
 * the task is gone, or has no mm).
 */
int tb_usermaps_find(struct tb_usermaps *m, uint32_t tgid, uint64_t ip, uint64_t *start, const char **path);

/* Every process's maps from /proc, as proc_maps lines, to write(2)-like out. Returns 0 or -errno. */
int tb_usermaps_save_proc(int fd);

#endif
