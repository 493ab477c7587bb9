// SPDX-License-Identifier: MIT
/*
 * tdat_options.c - the options of a trace.dat (v6: after the CPU data's
 * header; v7: the OPTIONS sections): each kept for dump, the ones that
 * shape the reading (clock, buffers, CPU stats, blob stores, v7 section
 * offsets) applied as they are met.
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
#include "util/grow.h"

static int keep_option(struct tb_tracedat *td, uint16_t id, const uint8_t *data, uint32_t size,
		       uint64_t offset)
{
	struct tb_tracedat_option *o;
	uint8_t *copy = malloc((size_t)size + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	copy[size] = '\0'; /* text options read as C strings even if stored without NUL */
	o = tb__grow(td->options, &td->options_cap, td->noptions + 1, sizeof(*o), 32);
	if (!o) {
		free(copy);
		return -ENOMEM;
	}
	td->options = o;
	o = &td->options[td->noptions++];
	o->id = id;
	o->size = size;
	o->offset = offset;
	o->data = copy;
	return 0;
}

/* The bracketed clock of a trace_clock text ("[local] global ..."), or NULL. */
char *tdat_bracketed_clock(const char *text)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;

	if (!open || !close || close == open + 1 || close - open > TDAT_MAX_NAME)
		return NULL;
	return strndup(open + 1, (size_t)(close - open - 1));
}

static int set_string(char **slot, const uint8_t *data, uint32_t size)
{
	free(*slot);
	*slot = strndup((const char *)data, size);
	return *slot ? 0 : -ENOMEM;
}

/* CPUSTAT texts are kept joined, each ending in a newline, as trace-cmd prints them. */
static int add_cpustat(struct tb_tracedat *td, const uint8_t *data, uint32_t size)
{
	char *grown;

	if (size == 0)
		return 0;
	grown = realloc(td->cpustats, td->cpustats_len + size + 1);
	if (!grown)
		return -ENOMEM;
	td->cpustats = grown;
	memcpy(grown + td->cpustats_len, data, size);
	/* Its last byte (the NUL) becomes the newline that separates the texts. */
	grown[td->cpustats_len + size - 1] = '\n';
	td->cpustats_len += size;
	grown[td->cpustats_len] = '\0';
	return 0;
}

/* A number stored as text (DATE, OFFSET): strtoll with base 0, as trace-cmd reads it. */
static bool text_number(const uint8_t *data, uint32_t size, long long *v)
{
	char buf[64], *end;

	if (size == 0 || size >= sizeof(buf))
		return false;
	memcpy(buf, data, size);
	buf[size] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return end != buf && errno == 0;
}

/* v7 BUFFER: offset, name, clock, page size, CPU count, CPUs. */
static int parse_v7_buffer(struct tb_tracedat *td, const uint8_t *d, uint32_t size, uint64_t at, bool text)
{
	const char *end = (const char *)d + size, *name = (const char *)d + 8, *clock = NULL;
	struct tdat_buffer *b;
	uint32_t ncpus;
	const uint8_t *p;

	if (size > 8 && memchr(name, '\0', (size_t)(end - name))) {
		clock = name + strlen(name) + 1;
		if (clock >= end || !memchr(clock, '\0', (size_t)(end - clock)))
			clock = NULL;
	}
	if (!clock) {
		tdat_report(td, at,
			    "BUFFER option of %u bytes does not hold an offset, a name and a "
			    "clock",
			    size);
		return -EINVAL;
	}
	if (!(b = tdat_add_buffer(td, name, tdat_le64(d))))
		return td->nbuffers >= TDAT_MAX_BUFFERS
			   ? (tdat_report(td, at, "more than %d buffers", TDAT_MAX_BUFFERS), -EINVAL)
			   : -ENOMEM;
	b->option_at = at;
	if (clock[0] && !(b->clock = strdup(clock)))
		return -ENOMEM;
	p = (const uint8_t *)clock + strlen(clock) + 1;
	if (text) {
		b->pub.text_offset = b->pub.offset;
		return 0;
	}
	if (end - (const char *)p < 8) {
		tdat_report(td, at, "BUFFER option '%s' ends before its page size and CPU count", name);
		return -EINVAL;
	}
	b->pub.page_size = tdat_le32(p);
	ncpus = tdat_le32(p + 4);
	p += 8;
	if (ncpus > TDAT_MAX_CPUS || (uint64_t)ncpus * 20 > (uint64_t)(end - (const char *)p)) {
		tdat_report(td, at, "BUFFER option '%s' lists %u CPUs but has room for %ld", name, ncpus,
			    (long)((end - (const char *)p) / 20));
		return -EINVAL;
	}
	if (b->pub.page_size != td->info.page_size) {
		tdat_report(td, at,
			    "buffer '%s' has %u-byte sub-buffers where the file has %u-byte "
			    "ones; tracebuf reads one size per file",
			    name, b->pub.page_size, td->info.page_size);
		return -EINVAL;
	}
	b->cpus = calloc(ncpus ? ncpus : 1, sizeof(*b->cpus));
	if (!b->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < ncpus; i++, p += 20) {
		uint32_t cpu = tdat_le32(p);
		if (cpu >= TDAT_MAX_CPUS) {
			tdat_report(td, at, "buffer '%s' names CPU %u; tracebuf reads CPUs below %d", name,
				    cpu, TDAT_MAX_CPUS);
			return -EINVAL;
		}
		for (uint32_t j = 0; j < i; j++)
			if (b->cpus[j].cpu == (int)cpu) {
				tdat_report(td, at, "buffer '%s' lists CPU %u twice", name, cpu);
				return -EINVAL;
			}
		b->cpus[i].cpu = (int)cpu;
		b->cpus[i].offset = tdat_le64(p + 4);
		b->cpus[i].size = tdat_le64(p + 12);
		if ((int)cpu + 1 > b->pub.slots)
			b->pub.slots = (int)cpu + 1;
	}
	b->pub.ncpus = (int)ncpus;
	return 0;
}

/*
 * A blob store option: u64 offset, u64 length, then (captures joined, one
 * store per buffer) the buffer's name.  One naming bytes outside the file
 * is said, and its blobs print as lost; one cut by the end of a file cut
 * short counts with the cut (tdat_say_cut).
 */
static int add_store(struct tb_tracedat *td, const uint8_t *d, uint32_t size, uint64_t at)
{
	uint64_t off = size >= 16 ? tdat_le64(d) : 0, len = size >= 16 ? tdat_le64(d + 8) : 0;
	const char *name = size > 16 && memchr(d + 16, '\0', size - 16) ? (const char *)d + 16 : NULL;
	struct tdat_store *st;

	if (size >= 16 && off <= td->info.file_size && len > td->info.file_size - off) {
		td->cut.stores++; /* the entries before the end are read; the one it cuts is said when looked up */
		len = td->info.file_size - off;
	}
	if (size < 16 || off > td->info.file_size || (size > 16 && !name) || td->nstores >= TDAT_MAX_BUFFERS) {
		tdat_report(td, at, "the blob store option (%u bytes) names no store inside the file: its blobs "
				    "print as lost", size);
		return 0;
	}
	if (!(st = realloc(td->stores, (size_t)(td->nstores + 1) * sizeof(*st))))
		return -ENOMEM;
	td->stores = st;
	st = &st[td->nstores];
	*st = (struct tdat_store){.at = off, .len = len};
	if (name && !(st->buffer = strdup(name)))
		return -ENOMEM;
	td->nstores++;
	return len ? tdat_add_part(td, name ? "blob store of a buffer (tracebuf's saved blobs)"
				       : "blob store (tracebuf's saved blobs)",
			      -1, 0, off, len, len)
		   : 0;
}

struct tdat_store *tdat_store_of(struct tb_tracedat *td, const char *buffer)
{
	struct tdat_store *every = NULL;

	for (int i = 0; i < td->nstores; i++) {
		if (td->stores[i].buffer && !strcmp(td->stores[i].buffer, buffer))
			return &td->stores[i];
		if (!td->stores[i].buffer && !every)
			every = &td->stores[i];
	}
	return every;
}

/* One option; the ones that matter for reading are applied, all are kept for dumps. */
static int apply_option(struct tb_tracedat *td, uint16_t id, const uint8_t *d, uint32_t size, uint64_t at,
			struct sections *sec)
{
	struct tdat_buffer *b;
	long long v;
	int rc = keep_option(td, id, d, size, at);

	if (rc < 0)
		return rc;
	switch (id) {
	case TB_TDAT_OPT_TB_CONSTANTS:
		rc = tb_schema_load_constants(td->schema, td->path, (const char *)d, size);
		return rc == -ENOMEM ? rc : 0; /* bad lines were reported with their offsets */
	case TB_TDAT_OPT_TB_BLOBS:
		/* where the saved blobs lie; read when a reference is printed (blob_store.c) */
		td->has_blobs = true;
		return add_store(td, d, size, at);
	case TB_TDAT_OPT_DATE:
		if (text_number(d, size, &v)) {
			td->info.ts_offset += v * 1000; /* microseconds */
			td->info.has_date = true;
		}
		return 0;
	case TB_TDAT_OPT_OFFSET:
		if (text_number(d, size, &v))
			td->info.ts_offset += v;
		return 0;
	case TB_TDAT_OPT_CPUSTAT:
		return add_cpustat(td, d, size);
	case TB_TDAT_OPT_BUFFER:
	case TB_TDAT_OPT_BUFFER_TEXT:
		if (td->info.version >= 7)
			return parse_v7_buffer(td, d, size, at, id == TB_TDAT_OPT_BUFFER_TEXT);
		if (size < 9 || !memchr(d + 8, '\0', size - 8)) {
			tdat_report(td, at,
				    "BUFFER option of %u bytes does not hold an offset and a "
				    "name",
				    size);
			return -EINVAL;
		}
		if (!(b = tdat_add_buffer(td, (const char *)d + 8, tdat_le64(d))))
			return -ENOMEM;
		b->option_at = at;
		return 0;
	case TB_TDAT_OPT_TRACECLOCK:
		td->has_traceclock = true;
		return set_string(&td->trace_clock, d, size);
	case TB_TDAT_OPT_UNAME:
		return set_string(&td->uname, d, size);
	case TB_TDAT_OPT_VERSION:
		return set_string(&td->version_string, d, size);
	case TB_TDAT_OPT_CPUCOUNT:
		if (size < 4 || tdat_le32(d) == 0 || tdat_le32(d) > TDAT_MAX_CPUS) {
			tdat_report(td, at, "CPUCOUNT option holds %u CPUs; tracebuf reads 1 to %d",
				    size < 4 ? 0 : tdat_le32(d), TDAT_MAX_CPUS);
			return -EINVAL;
		}
		td->cpucount = (int)tdat_le32(d);
		return 0;
	case TB_TDAT_OPT_TSC2NSEC:
		if (size >= 16) {
			td->info.tsc2nsec_mult = tdat_le32(d);
			td->info.tsc2nsec_shift = tdat_le32(d + 4);
			td->info.tsc2nsec_offset = tdat_le64(d + 8);
			if (td->info.tsc2nsec_shift > 63) {
				tdat_report(td, at, "TSC2NSEC shift %u is above 63", td->info.tsc2nsec_shift);
				return -EINVAL;
			}
		}
		return 0;
	case TB_TDAT_OPT_HEADER_INFO:
	case TB_TDAT_OPT_FTRACE_EVENTS:
	case TB_TDAT_OPT_EVENT_FORMATS:
	case TB_TDAT_OPT_KALLSYMS:
	case TB_TDAT_OPT_PRINTK:
	case TB_TDAT_OPT_CMDLINES:
		if (sec && size >= 8) {
			sec->at[id] = tdat_le64(d);
			sec->opt_at[id] = at;
		}
		return 0;
	default:
		return 0; /* unknown ids are skipped, as trace-cmd does */
	}
}

/*
 * An options list: {u16 id, u32 size, payload}...  v6 ends it with a lone id
 * 0; v7 with id 0 whose 8-byte payload is the next options section's offset
 * (*next; 0 for none).
 */
/*
 * One of tracebuf's own options in its PROCMAPS wrapping, or padding
 * (tdat_internal.h): *id, *d, *size and *where made the own option's.  A
 * real PROCMAPS option is left as it is.
 */
static void unwrap_own_option(uint16_t *id, const uint8_t **d, uint32_t *size, uint64_t *where)
{
	if (*id != TB_TDAT_OPT_PROCMAPS || *size == 0)
		return;
	if ((*d)[0] == '\0') {
		*id = TB_TDAT_OPT_TB_PAD;
		return;
	}
	if (*size < TDAT_OWN_HEAD + TDAT_OWN_TAIL || memcmp(*d, TDAT_OWN_MAGIC, 8) != 0)
		return;
	*id = tdat_le16(*d + 8);
	*d += TDAT_OWN_HEAD;
	*size -= TDAT_OWN_HEAD + TDAT_OWN_TAIL;
	*where += TDAT_OWN_HEAD;
}

int tdat_read_options(struct tb_tracedat *td, struct rd *r, struct sections *sec, uint64_t *next,
			uint64_t *next_from)
{
	uint8_t *data;
	uint16_t id;
	uint32_t size;
	int rc;

	*next = 0;
	for (;;) {
		uint64_t at = r->pos;
		if ((rc = tdat_rd_u16(r, &id, "option id")) < 0)
			return rc;
		if (id == TB_TDAT_OPT_DONE && td->info.version < 7)
			return 0;
		if ((rc = tdat_rd_u32(r, &size, "option size")) < 0)
			return rc;
		if (size > TDAT_MAX_OPTION || size > tdat_rd_left(r))
			return tdat_rd_fail(r, at, "option %u claims %u bytes; %llu are left", id, size,
				       (unsigned long long)tdat_rd_left(r));
		if (!(data = malloc(size ? size : 1)))
			return -ENOMEM;
		if ((rc = tdat_rd_get(r, data, size, "option payload")) == 0) {
			uint64_t where = r->mem ? r->base : at + 6;
			if (id == TB_TDAT_OPT_DONE) {
				*next_from = where;
				if (size < 8)
					rc = tdat_rd_fail(r, at,
						     "the last option holds %u bytes, not the 8 of "
						     "the next options section's offset",
						     size);
				else
					*next = tdat_le64(data);
				rc = rc < 0 ? rc : keep_option(td, id, data, size, where);
				free(data);
				return rc;
			}
			const uint8_t *payload = data;
			unwrap_own_option(&id, &payload, &size, &where);
			rc = apply_option(td, id, payload, size, where, sec);
		}
		free(data);
		if (rc < 0)
			return rc;
	}
}
