// SPDX-License-Identifier: MIT
/*
 * tdat_v6.c - the layout of a version 6 trace.dat: the metadata texts in
 * a fixed order, then per buffer (the top one, then each instance's block)
 * the options and the flyrecord table of its CPUs' data.
 *
 * Split from tdat_read.c (issue 22 item 5): tdat_read.h holds what the
 * parts share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "decode/diag_defer.h"
#include "decode/ksyms.h"
#include "util/pread_full.h"
#include "decode/schema_internal.h"
#include "decode/blob_store.h"
#include "tdat_internal.h"
#include "tracebuf/page.h"
#include "tdat_read.h"

/*
 * An instance's block that cannot be read (rc: what went wrong, said, or
 * -ENODATA: past the end of a file cut short) costs that buffer's data
 * only: its CPUs are listed empty, as many as the top buffer's, so the
 * other buffers keep trace-cmd's numbering.  0, or -ENOMEM.
 */
static int keep_buffer_empty(struct tdat_buffer *b, int cpus, int rc)
{
	if (rc == -ENOMEM)
		return rc;
	free(b->cpus);
	if (!(b->cpus = calloc((size_t)cpus, sizeof(*b->cpus))))
		return -ENOMEM;
	for (int i = 0; i < cpus; i++)
		b->cpus[i].cpu = i;
	b->pub.ncpus = b->pub.slots = cpus;
	return 0;
}

static int read_v6_buffer(struct tb_tracedat *td, struct tdat_buffer *b, int cpus)
{
	struct rd r = {.td = td, .pos = b->pub.offset, .end = td->info.file_size};
	char tag[10];
	uint64_t at = r.pos, next;
	int rc;

	if (b->pub.offset > td->info.file_size || td->info.file_size - b->pub.offset < 10 + 16 * (uint64_t)cpus) {
		td->cut.buffers++; /* its block, or the end of its table, lies past the end: said by tdat_say_cut() */
		return -ENODATA;
	}
	if ((rc = tdat_rd_get(&r, tag, 10, "buffer block tag")) < 0)
		return rc;
	if (!memcmp(tag, "options  ", 10)) {
		/* Options inside an instance block add nothing trace-cmd uses: skip them. */
		size_t kept = td->noptions;
		rc = tdat_read_options(td, &r, NULL, &next, &next);
		for (size_t i = kept; i < td->noptions; i++)
			free((void *)td->options[i].data);
		td->noptions = kept;
		if (rc < 0 || (rc = tdat_rd_get(&r, tag, 10, "buffer block tag")) < 0)
			return rc;
	}
	if (memcmp(tag, "flyrecord", 10))
		return tdat_rd_fail(&r, at, "buffer '%s' does not start with a flyrecord block", b->name);
	b->clock = td->buffers[0].clock ? strdup(td->buffers[0].clock) : NULL;
	if (td->buffers[0].clock && !b->clock)
		return -ENOMEM;
	/* The instance's clock record is not read by trace-cmd: the file's clock counts. */
	bool had = td->has_traceclock;
	td->has_traceclock = false;
	rc = tdat_read_flyrecord_table(td, &r, b, cpus);
	td->has_traceclock = had;
	return rc;
}

int tdat_read_v6(struct tb_tracedat *td, struct rd *r)
{
	struct kallsyms_read k = {0};
	uint64_t at, next, kallsyms_at;
	uint32_t cpus;
	char tag[10];
	int rc, ninstances;
	struct tdat_buffer *top;

	tdat_add_part(td, "initial format", -1, 0, 0, r->pos, r->pos);
	at = r->pos;
	if ((rc = tdat_read_headers(td, r)) < 0)
		return rc;
	tdat_add_part(td, "header_page and header_event", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if (!td->no_symbols && (kallsyms_at = tdat_v6_kallsyms_at(td, r->pos))) /* parsed while the formats are read */
		tdat_start_kallsyms_v6(td, kallsyms_at, &k);
	if ((rc = tdat_read_ftrace_formats(td, r)) < 0) {
		tdat_drop_kallsyms(td, &k);
		return rc;
	}
	tdat_add_part(td, "ftrace formats", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = tdat_read_event_formats(td, r)) < 0) {
		tdat_drop_kallsyms(td, &k);
		return rc;
	}
	tdat_add_part(td, "event formats", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = tdat_read_kallsyms_v6(td, r, &k)) < 0)
		return rc;
	tdat_add_part(td, "kallsyms", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = tdat_read_printk(td, r)) < 0)
		return rc;
	tdat_add_part(td, "printk formats", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = tdat_read_cmdlines(td, r)) < 0)
		return rc;
	tdat_add_part(td, "saved cmdlines", -1, 0, at, r->pos - at, r->pos - at);
	at = r->pos;
	if ((rc = tdat_rd_u32(r, &cpus, "CPU count")) < 0)
		return rc;
	if (cpus == 0 || cpus > TDAT_MAX_CPUS)
		return tdat_rd_fail(r, at, "the file says %u CPUs; tracebuf reads 1 to %d", cpus, TDAT_MAX_CPUS);
	td->file_cpus = (int)cpus;
	if ((rc = tdat_rd_get(r, tag, 10, "options or flyrecord tag")) < 0)
		return rc;
	/* The top buffer is buffer 0; BUFFER options append the instances. */
	if (!(top = tdat_add_buffer(td, "", 0)))
		return -ENOMEM;
	if (!memcmp(tag, "options  ", 10)) {
		at = r->pos;
		if ((rc = tdat_read_options(td, r, NULL, &next, &next)) < 0)
			return rc;
		tdat_add_part(td, "options", -1, 0, at - 10, r->pos - at + 10, r->pos - at + 10);
		if ((rc = tdat_rd_get(r, tag, 10, "flyrecord tag")) < 0)
			return rc;
	}
	if (!memcmp(tag, "latency  ", 10)) {
		td->v6_latency = td->info.latency = true;
		td->latency_offset = r->pos;
		td->buffers[0].pub.text_offset = r->pos;
		td->buffers[0].pub.text_size = r->end - r->pos;
		tdat_add_part(td, "latency text", -1, 0, r->pos, r->end - r->pos, r->end - r->pos);
		return 0;
	}
	if (memcmp(tag, "flyrecord", 10))
		return tdat_rd_fail(r, r->pos - 10, "expected 'flyrecord' or 'latency' here");
	if (td->cpucount)
		cpus = (uint32_t)td->cpucount;
	td->buffers[0].pub.offset = r->pos - 10;
	if ((rc = tdat_read_flyrecord_table(td, r, &td->buffers[0], (int)cpus)) < 0)
		return rc;
	ninstances = td->nbuffers;
	for (int i = 1; i < ninstances; i++)
		if ((rc = read_v6_buffer(td, &td->buffers[i], (int)cpus)) < 0 &&
		    (rc = keep_buffer_empty(&td->buffers[i], (int)cpus, rc)) < 0)
			return rc;
	return tdat_check_all_cpu_data(td);
}
