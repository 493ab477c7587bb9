// SPDX-License-Identifier: MIT
/*
 * export_tracedat.c - trace-cmd's trace.dat, version 6 or 7 (optionally
 * compressed), from capture directories (tracebuf/tracedat.h,
 * tb_tracedat_write_captures): a whole kind that reads its directories
 * itself, as it copies their metadata files as they are and joins several
 * captures (--add-buffer NAME=DIR) as instances of one file.  Its sub-buffers
 * are checked as report reads them (page_repair.h): damage is said with
 * file and byte and left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exporter.h"
#include "tracebuf/input.h"

/* A problem of the writer: said as tb_problem_print says it, and counted (warnings are not). */
static void count_problem(void *ctx, const struct tb_problem *d)
{
	struct export_run *x = ctx;

	if (!d->warning)
		x->res->problems++;
	tb_problem_print(NULL, d);
}

/* The sub-buffer bytes of a capture directory's raw files (for the share a progress line shows). */
static uint64_t raw_bytes(const char *dir, const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	uint64_t sum = 0;
	unsigned cpu;
	char end;

	while (d && (e = readdir(d)))
		if ((!plen || !strncmp(e->d_name, prefix, plen)) &&
		    sscanf(e->d_name + plen, "cpu%u.ra%c", &cpu, &end) == 2 && end == 'w' &&
		    fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	if (d)
		closedir(d);
	return sum;
}

struct tracedat_progress {
	struct export_run *x;
	uint64_t total;
};

static void tracedat_progress(void *ctx, uint64_t bytes)
{
	struct tracedat_progress *p = ctx;

	export_progress(p->x, bytes, p->total);
}

static int tracedat_whole(struct export_run *x)
{
	const struct tb_export_opts *o = x->o;
	struct tb_tracedat_write_opts wo = {.version = o->tracedat_version ? o->tracedat_version : 6,
					    .compression = o->compression,
					    .diag = count_problem,
					    .diag_ctx = x};
	struct tracedat_progress pg = {.x = x};
	struct tb_tracedat_input *in;
	enum tb_input_kind kind;
	int rc;

	/* A session's ring is copied into a trace.dat by snapshot, streamed, with its blobs and stats. */
	if (tb_input_identify(o->in, NULL, NULL, true, &kind) == 0 && kind == TB_INPUT_SHM_SESSION)
		return export_say(x, -EOPNOTSUPP, o->in, "a shm session: its trace.dat is what "
				  "`tracebuf snapshot %s -o %s` writes", o->in, o->out);
	if (wo.compression && strcmp(wo.compression, "none") && wo.version != 7) {
		fprintf(stderr, "%s: compression needs version 7 (--v7)\n", x->tool);
		return -EINVAL;
	}
	in = calloc(o->nbuffers + 1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in[0] = (struct tb_tracedat_input){.dir = o->in, .prefix = o->prefix, .name = ""};
	for (size_t i = 0; i < o->nbuffers; i++)
		in[i + 1] = o->buffers[i];
	if (o->progress) {
		for (size_t i = 0; i <= o->nbuffers; i++)
			pg.total += raw_bytes(in[i].dir, in[i].prefix);
		wo.progress = tracedat_progress;
		wo.progress_ctx = &pg;
	}
	rc = tb_tracedat_write_captures(in, o->nbuffers + 1, o->out, &wo);
	if (rc < 0)
		fprintf(stderr, "%s: %s -> %s: %s\n", x->tool, o->in, o->out, strerror(-rc));
	free(in);
	return rc;
}

const struct tb_exporter_kind export_tracedat = {
    .name = "tracedat",
    .suffixes = ".dat",
    .help = "trace-cmd's trace.dat, v6 (default) or v7 (--v7, --compress), from capture directories",
    .input = EXPORT_DIRS,
    .whole = tracedat_whole,
};
