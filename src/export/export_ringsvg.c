// SPDX-License-Identifier: MIT
/*
 * export_ringsvg.c - each CPU's ring as a picture (tracebuf/ringsvg.h): a
 * whole kind, as a row places every sub-buffer of its CPU between the head
 * and the commit page, read to the end before anything is drawn.  The
 * ring's size comes from a capture directory's meta.txt (buffer_size_kb,
 * through the kernel's sizing arithmetic); a trace.dat does not say it, so
 * its rows end after the pages read.  A live instance is refused: drawing
 * it would consume its buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"
#include "tracebuf/ring.h"
#include "tracebuf/ringsvg.h"
#include "tracefs.h"

/* A number after "key: " at the start of a line of text; false when there is none. */
static bool meta_number(const char *text, const char *key, unsigned long long *out)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return sscanf(p + klen + 1, " %llu", out) == 1;
	return false;
}

/* Sub-buffers per CPU from a capture directory's meta.txt; 0 unknown. */
static unsigned ring_subbufs(const char *dir, size_t subbuf_bytes)
{
	unsigned long long kb;
	struct tb_sizing sz;
	size_t len;
	char *meta = tracefs_read(dir, "meta.txt", &len);
	bool known = meta && meta_number(meta, "buffer_size_kb", &kb) &&
		     tb_sizing_compute(kb, (uint32_t)(subbuf_bytes / 1024), &sz) == 0;

	free(meta);
	return known ? sz.subbufs_per_cpu : 0;
}

static int ring_svg_whole(struct export_run *x)
{
	char title[512];
	FILE *f;

	if (tb_capture_is_live(x->capture)) {
		fprintf(stderr,
			"%s: %s is a live instance: drawing it would consume its buffer; save it first "
			"(tracebuf capture -o DIR INSTANCE) and draw DIR\n",
			x->tool, x->o->in);
		return -EINVAL;
	}
	snprintf(title, sizeof(title), "Ring buffer of %s", x->o->in);
	struct tb_ringsvg_opts o = {.title = x->o->title ? x->o->title : title,
				     .subbufs_per_cpu = ring_subbufs(x->o->in, tb_capture_subbuf_size(x->capture))};
	if (!(f = export_fopen(x)))
		return -errno;
	return export_fclose(x, f, tb_ringsvg_write(x->capture, &o, f));
}

const struct tb_exporter_kind export_ring_svg = {
    .name = "ring-svg",
    .suffixes = ".svg",
    .help = "each CPU's ring buffer as an SVG: sub-buffers as cells, head, commit page, losses",
    .input = EXPORT_CAPTURE,
    .whole = ring_svg_whole,
};
