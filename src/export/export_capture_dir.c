// SPDX-License-Identifier: MIT
/*
 * export_capture_dir.c - a capture directory (the layout tracebuf/capture.h
 * reads) written from a capture directory: a pages kind.  The metadata
 * files are copied as they are (header_page, header_event, formats/,
 * kallsyms, printk_formats, saved_cmdlines, constants, meta.txt, blobs.bin,
 * ...); each CPU's sub-buffers are appended to cpuN.raw as report reads
 * them, so a damaged capture comes out whole: the damage said with file and
 * byte, only intact records kept (page_repair.h), --prefix P's PcpuN.raw
 * and PcpuN.stats named cpuN.raw and cpuN.stats.
 *
 * A trace.dat is refused as input: its metadata texts are handed to the
 * schema as they are read and not kept, so they cannot be written back out
 * (convert writes a capture directory as a trace.dat, not the reverse).
 * The output must be new or empty, so no file of another capture mixes in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporter.h"
#include "tracefs.h"

#define MAX_CPUS 4096 /* as capture.c takes cpuN.raw */

struct dir_state {
	int *raw_fd;	  /* [MAX_CPUS]: cpuN.raw once its first sub-buffer came; -1 before */
	uint64_t written; /* sub-buffers written (the damaged ones cut to their intact records) */
};

/* The name of out's file under the input's file name: PcpuN.raw/.stats lose the prefix; NULL: not copied. */
static bool raw_or_stats(const char *name, const char *prefix, unsigned *cpu, char *ext)
{
	size_t plen = strlen(prefix);
	char end;

	if (strncmp(name, prefix, plen))
		return false;
	return sscanf(name + plen, "cpu%u.%5[a-z]%c", cpu, ext, &end) == 2 &&
	       (!strcmp(ext, "raw") || !strcmp(ext, "stats"));
}

/* Every regular file of in/sub (sub "" the top) into out/sub, the raw files excepted; formats/ below. */
static int copy_tree(struct export_run *x, const char *sub, int depth)
{
	const char *prefix = x->o->prefix ? x->o->prefix : "";
	char *from = path_of(x->o->in, sub), *to = path_of(x->o->out, sub);
	DIR *d = from ? opendir(from) : NULL;
	struct dirent *e;
	int rc = !from || !to ? -ENOMEM : !d ? -errno : make_dirs(to);

	while (rc == 0 && (e = readdir(d))) {
		char ext[8], *src = path_of(from, e->d_name), *name = path_of(sub, e->d_name);
		unsigned cpu;
		struct stat st;
		if (!src || !name) {
			rc = -ENOMEM;
		} else if (e->d_name[0] == '.' || stat(src, &st) < 0) {
			/* dot files, and what vanished */
		} else if (S_ISDIR(st.st_mode) && depth < 2 && (depth > 0 || !strcmp(e->d_name, "formats"))) {
			rc = copy_tree(x, name, depth + 1);
		} else if (S_ISREG(st.st_mode) && depth == 0 && raw_or_stats(e->d_name, prefix, &cpu, ext)) {
			char as[32];
			snprintf(as, sizeof(as), "cpu%u.%s", cpu, ext);
			if (!strcmp(ext, "stats")) { /* raw files are written page by page */
				char *dst = path_of(x->o->out, as);
				rc = dst ? copy_file(from, e->d_name, dst) : -ENOMEM;
				free(dst);
			}
		} else if (S_ISREG(st.st_mode)) {
			char *dst = path_of(x->o->out, name);
			rc = dst ? copy_file(from, e->d_name, dst) : -ENOMEM;
			if (rc < 0)
				export_say(x, rc, src, "cannot copy: %s", strerror(-rc));
			free(dst);
		}
		free(src);
		free(name);
	}
	if (rc < 0 && rc != -ENOMEM)
		export_say(x, rc, to ? to : x->o->out, "%s", strerror(-rc));
	if (d)
		closedir(d);
	free(from);
	free(to);
	return rc;
}

/* out new, or an empty directory. */
static int fresh_output(struct export_run *x)
{
	DIR *d;
	struct dirent *e;
	int found = 0;

	if (mkdir(x->o->out, 0755) == 0)
		return 0;
	if (errno != EEXIST || !(d = opendir(x->o->out)))
		return export_say(x, -errno, x->o->out, "cannot create: %s", strerror(errno));
	while ((e = readdir(d)))
		found += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	if (found)
		return export_say(x, -EEXIST, x->o->out,
				  "is not empty: a capture directory must be new or empty, so that no file of "
				  "another capture is mixed into this one");
	return 0;
}

static int dir_begin(struct export_run *x)
{
	struct dir_state *s = x->state;
	int rc;

	if (!is_directory(x->o->in))
		return export_say(x, -EINVAL, x->o->in,
				  "not a capture directory: a capture directory is written from one (a trace.dat's "
				  "metadata is not kept to be written back)");
	if (!(s->raw_fd = malloc(MAX_CPUS * sizeof(*s->raw_fd))))
		return -ENOMEM;
	for (int i = 0; i < MAX_CPUS; i++)
		s->raw_fd[i] = -1;
	rc = fresh_output(x);
	return rc < 0 ? rc : copy_tree(x, "", 0);
}

static int dir_page(struct export_run *x, int cpu, const uint8_t *page, size_t size)
{
	struct dir_state *s = x->state;
	char name[32];
	int rc;

	if (cpu < 0 || cpu >= MAX_CPUS)
		return 0; /* capture.c reads no such CPU */
	snprintf(name, sizeof(name), "cpu%d.raw", cpu);
	if (s->raw_fd[cpu] < 0) {
		char *path = path_of(x->o->out, name);
		s->raw_fd[cpu] = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
		rc = s->raw_fd[cpu] < 0 ? export_say(x, path ? -errno : -ENOMEM, path ? path : x->o->out, "%s",
						      strerror(path ? errno : ENOMEM))
					: 0;
		free(path);
		if (rc < 0)
			return rc;
	}
	rc = write_all(s->raw_fd[cpu], page, size);
	s->written += rc == 0;
	if (rc < 0)
		export_say(x, rc, x->o->out, "%s: %s", name, strerror(-rc));
	return rc;
}

static int dir_finish(struct export_run *x)
{
	struct dir_state *s = x->state;
	int rc = 0;

	for (int i = 0; s->raw_fd && i < MAX_CPUS; i++)
		if (s->raw_fd[i] >= 0 && close(s->raw_fd[i]) < 0 && rc == 0)
			rc = export_say(x, -errno, x->o->out, "cpu%d.raw: %s", i, strerror(errno));
	free(s->raw_fd);
	if (rc == 0 && !x->failed)
		fprintf(stderr, "%s: %s: %llu sub-buffers read, %llu written (%llu following lost events)\n",
			x->tool, x->o->out, (unsigned long long)x->res->pages, (unsigned long long)s->written,
			(unsigned long long)x->res->lost_pages);
	return rc;
}

const struct tb_exporter_kind export_capture_dir = {
    .name = "capture",
    .suffixes = "/",
    .help = "a capture directory (what `tracebuf report` reads), from one: damaged sub-buffers left out",
    .input = EXPORT_CAPTURE,
    .state_size = sizeof(struct dir_state),
    .begin = dir_begin,
    .page = dir_page,
    .finish = dir_finish,
};
