/* SPDX-License-Identifier: MIT */
/*
 * synth.h - capture directories made up by a test: the kernel's header
 * files and the format files it names (linked from tests/data), meta.txt
 * and kallsyms written as given, and one raw file per CPU whose records
 * the test adds in time order (each CPU's sub-buffers built with the page
 * writer, page.h).
 *
 *   struct synth s;  synth_open(&s, 2, "ffffffff81000000 T f\n");
 *   synth_format(&s, "sched", "tests/data/kernel/formats/sched/sched_switch.format");
 *   synth_add(&s, cpu, ts, payload, len);  ...  synth_close(&s);  ... synth_remove(&s);
 */
#ifndef TB_TEST_SYNTH_H
#define TB_TEST_SYNTH_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracebuf/page.h"

#define SYNTH_PAGE 4096
#define SYNTH_MAX_CPUS 8

struct synth {
	char dir[64];
	int ncpus;
	FILE *raw[SYNTH_MAX_CPUS];
	uint8_t page[SYNTH_MAX_CPUS][SYNTH_PAGE];
	struct tb_page_writer w[SYNTH_MAX_CPUS];
	bool open_page[SYNTH_MAX_CPUS];
	uint64_t pages;
};

static inline int synth_write_file(const struct synth *s, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	if (!(f = fopen(path, "w")))
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static inline int synth_link(const struct synth *s, const char *from, const char *name)
{
	char real[PATH_MAX], to[PATH_MAX];

	if (!realpath(from, real))
		return -errno;
	snprintf(to, sizeof(to), "%s/%s", s->dir, name);
	return symlink(real, to) < 0 ? -errno : 0;
}

/* A format file from tests/data, under formats/SYSTEM/ with its own name. */
static inline int synth_format(struct synth *s, const char *system, const char *from)
{
	char d[PATH_MAX], name[PATH_MAX];
	const char *base = strrchr(from, '/');

	snprintf(d, sizeof(d), "%s/formats/%s", s->dir, system);
	mkdir(d, 0755);
	snprintf(name, sizeof(name), "formats/%s/%s", system, base ? base + 1 : from);
	return synth_link(s, from, name);
}

/* A new capture directory under base (/tmp, or /dev/shm for a bench's big one). */
static inline int synth_open_in(struct synth *s, const char *base, int ncpus, const char *kallsyms)
{
	char path[PATH_MAX];

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "%s/tb-synth-XXXXXX", base);
	if (ncpus > SYNTH_MAX_CPUS || !mkdtemp(s->dir))
		return -EINVAL;
	s->ncpus = ncpus;
	snprintf(path, sizeof(path), "%s/formats", s->dir);
	mkdir(path, 0755);
	if (synth_link(s, "tests/data/kernel/header_page", "header_page") < 0 ||
	    synth_link(s, "tests/data/kernel/header_event", "header_event") < 0)
		return -ENOENT;
	char meta[128];
	snprintf(meta, sizeof(meta), "ncpus: %d\ntrace_clock: [local] global\n", ncpus);
	if (synth_write_file(s, "meta.txt", meta) < 0 || (kallsyms && synth_write_file(s, "kallsyms", kallsyms) < 0))
		return -EIO;
	for (int c = 0; c < ncpus; c++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", s->dir, c);
		if (!(s->raw[c] = fopen(path, "w")))
			return -errno;
	}
	return 0;
}

static inline int synth_open(struct synth *s, int ncpus, const char *kallsyms)
{
	return synth_open_in(s, "/tmp", ncpus, kallsyms);
}

static inline void synth_flush(struct synth *s, int cpu)
{
	if (!s->open_page[cpu])
		return;
	tb_page_finish(&s->w[cpu], false, 0);
	fwrite(s->page[cpu], 1, SYNTH_PAGE, s->raw[cpu]);
	s->open_page[cpu] = false;
	s->pages++;
}

/* Add an event on cpu at ts (after the CPU's previous one); a new sub-buffer when full. */
static inline int synth_add(struct synth *s, int cpu, uint64_t ts, const void *data, uint32_t len)
{
	for (int tries = 0; tries < 2; tries++) {
		if (!s->open_page[cpu]) {
			tb_page_writer_init(&s->w[cpu], s->page[cpu], SYNTH_PAGE, ts);
			s->open_page[cpu] = true;
		}
		int rc = tb_page_add(&s->w[cpu], ts, data, len);
		if (rc != -ENOSPC)
			return rc;
		synth_flush(s, cpu);
	}
	return -ENOSPC;
}

/* Write the last sub-buffers and close the raw files. */
static inline int synth_close(struct synth *s)
{
	int rc = 0;

	for (int c = 0; c < s->ncpus; c++) {
		synth_flush(s, c);
		if (fclose(s->raw[c]) != 0)
			rc = -EIO;
		s->raw[c] = NULL;
	}
	return rc;
}

static inline void synth_remove(struct synth *s)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", s->dir);
}

#endif
