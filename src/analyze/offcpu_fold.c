// SPDX-License-Identifier: MIT
/*
 * offcpu_fold.c - off-CPU sums as folded stack lines (tracebuf/offcpu.h).
 *
 * Each (comm, kernel stack, user stack) sum becomes `comm;user...;kernel...`
 * with frames root first.  Different return addresses inside one function
 * name the same frame, so lines are sorted by text and equal texts summed
 * after naming.  Addresses are named once each (a cache beside the sums).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offcpu_internal.h"
#include "decode/schema_kernel.h"
#include "print/strbuf.h"

/* Frames of the tracing machinery itself, found at the leaf of a trigger's stack. */
static const char *const tracing_frames[] = {"trace_event_raw_event_", "__traceiter_", "perf_trace_",
					      "__bpf_trace_", "trace_event_buffer_"};

struct namer {
	struct tb_schema *schema;
	struct intern addrs; /* kernel address -> index into names */
	char **names;
	size_t cap;
};

static bool is_tracing_frame(const char *name)
{
	for (size_t i = 0; i < sizeof(tracing_frames) / sizeof(tracing_frames[0]); i++)
		if (!strncmp(name, tracing_frames[i], strlen(tracing_frames[i])))
			return true;
	return false;
}

/* The kernel function containing addr ("0x..." when unknown); NULL when out of memory. */
static const char *kernel_name(struct namer *nm, uint64_t addr)
{
	bool added;
	int64_t i = intern_add(&nm->addrs, &addr, sizeof(addr), &added);

	if (i < 0)
		return NULL;
	if (!added)
		return nm->names[i];
	char **names = intern_room(nm->names, &nm->cap, (size_t)i, sizeof(*names));
	if (!names)
		return NULL;
	nm->names = names;
	uint64_t start, size;
	const char *module;
	const char *sym = tb_schema_symbol(nm->schema, addr, &start, &size, &module);
	char hex[24];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
	nm->names[i] = strdup(sym ? sym : hex);
	return nm->names[i];
}

/* A frame's text with the folded format's separators (';', and line ends) made harmless. */
static void put_frame(struct tb_strbuf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++) {
		char c = s[i];
		sb_putc(b, c == ';' ? ':' : (unsigned char)c < ' ' ? '?' : c);
	}
}

static void put_user_stack(struct offcpu_sums *sums, uint32_t id, struct tb_strbuf *b)
{
	uint32_t len;
	const uint8_t *key = intern_key(&sums->stacks, id, &len);

	for (uint32_t i = len / 8; i-- > 0;) {
		uint64_t a;
		char hex[24];
		memcpy(&a, key + i * 8, 8);
		snprintf(hex, sizeof(hex), ";0x%" PRIx64, a);
		sb_puts(b, hex);
	}
}

static int put_kernel_stack(struct offcpu_sums *sums, uint32_t id, struct namer *nm, struct tb_strbuf *b)
{
	uint32_t len, leaf = 0, n;
	const uint8_t *key = intern_key(&sums->stacks, id, &len);
	const char *name;

	n = len / 8;
	/* Drop the trigger's own frames at the leaf end. */
	for (; leaf < n; leaf++) {
		uint64_t a;
		memcpy(&a, key + leaf * 8, 8);
		if (!(name = kernel_name(nm, a)))
			return -ENOMEM;
		if (!is_tracing_frame(name))
			break;
	}
	for (uint32_t i = n; i-- > leaf;) {
		uint64_t a;
		memcpy(&a, key + i * 8, 8);
		if (!(name = kernel_name(nm, a)))
			return -ENOMEM;
		sb_putc(b, ';');
		put_frame(b, name, strlen(name));
	}
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(((const struct tb_folded *)a)->stack, ((const struct tb_folded *)b)->stack);
}

/* Sort and sum equal texts in place. */
static void merge_equal(struct tb_offcpu *r)
{
	size_t w = 0;

	qsort(r->lines, r->n, sizeof(*r->lines), cmp_lines);
	for (size_t i = 0; i < r->n; i++) {
		if (w && !strcmp(r->lines[w - 1].stack, r->lines[i].stack)) {
			r->lines[w - 1].value += r->lines[i].value;
			free(r->lines[i].stack);
			continue;
		}
		r->lines[w++] = r->lines[i];
	}
	r->n = w;
}

static int fold_one(struct offcpu_sums *sums, const struct sum_slot *slot, struct namer *nm, struct tb_strbuf *b,
		    struct tb_folded *line)
{
	uint32_t len;
	const struct sum_key *k = &slot->key;
	const char *comm = intern_key(&sums->comms, k->comm, &len);

	sb_reset(b);
	put_frame(b, comm, len);
	if (k->ustack != NO_STACK)
		put_user_stack(sums, k->ustack, b);
	if (k->kstack != NO_STACK && put_kernel_stack(sums, k->kstack, nm, b) < 0)
		return -ENOMEM;
	sb_putc(b, '\0');
	if (b->oom || !(line->stack = strdup(b->buf)))
		return -ENOMEM;
	line->value = slot->ns;
	return 0;
}

int offcpu_fold(struct offcpu_sums *sums, struct tb_schema *s, struct tb_offcpu *r)
{
	struct namer nm = {.schema = s};
	struct tb_strbuf b = {0};
	int rc = 0;

	r->lines = calloc(sums->count ? sums->count : 1, sizeof(*r->lines));
	if (!r->lines)
		return -ENOMEM;
	for (size_t i = 0; rc == 0 && i < sums->nslots; i++) {
		if (!sums->slots[i].used)
			continue;
		rc = fold_one(sums, &sums->slots[i], &nm, &b, &r->lines[r->n]);
		r->n += rc == 0;
	}
	for (size_t i = 0; i < nm.addrs.count; i++)
		free(nm.names[i]);
	free(nm.names);
	intern_free(&nm.addrs);
	sb_free(&b);
	if (rc == 0)
		merge_equal(r);
	return rc;
}

const struct tb_folded *tb_offcpu_stacks(const struct tb_offcpu *r, size_t *n)
{
	*n = r ? r->n : 0;
	return r ? r->lines : NULL;
}

int tb_offcpu_write_folded(const struct tb_offcpu *r, FILE *out)
{
	for (size_t i = 0; r && i < r->n; i++) {
		uint64_t us = (r->lines[i].value + 500) / 1000;
		if (us && fprintf(out, "%s %" PRIu64 "\n", r->lines[i].stack, us) < 0)
			return -EIO;
	}
	return fflush(out) == 0 ? 0 : -EIO;
}

void tb_offcpu_free(struct tb_offcpu *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->lines[i].stack);
	free(r->lines);
	free(r);
}

int tb_offcpu_flamegraph(const struct tb_offcpu *r, const struct tb_offcpu_totals *t,
			 const struct tb_offcpu_opts *o, const char *input, const char *title, FILE *out)
{
	char sub[256];
	size_t n;

	if (!r || !t || !input || !out)
		return -EINVAL;
	const struct tb_folded *lines = tb_offcpu_stacks(r, &n);
	snprintf(sub, sizeof(sub), "%s: %llu intervals, %.3f s off CPU%s", input,
		 (unsigned long long)t->intervals, (double)t->off_ns / 1e9,
		 o && o->blocked_only ? " (blocked time only)" : "");
	struct tb_flame_opts fo = {.title = title ? title : "Off-CPU Time Flame Graph",
				   .subtitle = sub, .unit = "us", .scale = 1e-3, .cold = true};
	return tb_flamegraph_svg(lines, n, &fo, out);
}
