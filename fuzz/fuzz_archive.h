/* SPDX-License-Identifier: MIT */
/*
 * fuzz_archive.h - a fuzz input as a small archive of capture files,
 * unpacked into a fresh temporary directory for each run:
 *
 *   record  := name:u8  length:u32 (little endian)  bytes[length]
 *
 * name indexes the target's table (modulo its size); a length past the end
 * of the input takes what is left; a name given twice keeps the last.  The
 * names are fixed so that mutations change contents, not paths.
 * capture_pack.sh builds seeds from real capture directories.
 */
#ifndef TB_FUZZ_ARCHIVE_H
#define TB_FUZZ_ARCHIVE_H

#include <ftw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The archive's file names, by index (capture_pack.sh has the same table). */
static const char *const archive_names[] = {
	"header_page",
	"header_event",
	"formats/ftrace/print.format",
	"formats/sched/sched_switch.format",
	"formats/sched/sched_wakeup.format",
	"cpu0.raw",
	"cpu0.stats",
	"cpu1.raw",
	"cpu1.stats",
	"saved_cmdlines",
	"printk_formats",
	"kallsyms",
	"meta.txt",
	"trace_clock",
	"formats/ftrace/bputs.format",
	"formats/irq/irq_handler_entry.format",
	/* fuzz_capture's inputs use the names above (index modulo 16); fuzz_analyze's these too */
	"formats/ftrace/kernel_stack.format",
	"formats/ftrace/user_stack.format",
};
#define ARCHIVE_NAMES (sizeof(archive_names) / sizeof(archive_names[0]))
#define ARCHIVE_CAPTURE_NAMES 16

/*
 * A fresh directory dir (64 bytes) for one input's files, named after the
 * target: on tmpfs (/dev/shm) when there is one, as on ext4 every file
 * written and removed cost a journal entry (a fifth of fuzz_analyze's run).
 */
static inline bool archive_mkdtemp(char *dir, const char *target)
{
	snprintf(dir, 64, "%s/tb-fuzz-%s-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", target);
	return mkdtemp(dir) != NULL;
}

/* dir/name with data, its directories made. */
static inline void archive_write_file(const char *dir, const char *name, const uint8_t *data, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return;
	if (len)
		fwrite(data, 1, len, f);
	fclose(f);
}

static inline void archive_unpack(const char *dir, const char *const *names, size_t nnames, const uint8_t *data,
				  size_t size)
{
	while (size >= 5) {
		const char *name = names[data[0] % nnames];
		uint32_t len = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
			       (uint32_t)data[4] << 24;
		data += 5, size -= 5;
		if (len > size)
			len = (uint32_t)size;
		archive_write_file(dir, name, data, len);
		data += len, size -= len;
	}
}

static inline int archive_remove_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)type, (void)f;
	return remove(path);
}

/* Remove the unpacked directory and everything in it. */
static inline void archive_remove(const char *dir)
{
	nftw(dir, archive_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#endif
