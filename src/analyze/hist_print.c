// SPDX-License-Identifier: MIT
/*
 * hist_print.c - the table as the kernel's `hist` file prints it
 * (hist_show() in kernel/trace/trace_events_hist.c): the header with the
 * trigger info, the entries in sort order, and the Totals footer.
 *
 * The size= limit is applied here: the kernel's tracing_map takes at most
 * 2^bits distinct keys and drops (counts in Dropped, not in Hits) every
 * event of a key that came after it was full.  Since entries are never
 * removed, the kept keys are the 2^bits that appeared first; this table
 * knows every key's first time stamp, so it keeps those and counts the
 * events of the rest as dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hist_internal.h"
#include "print/kvsprintf.h"
#include "print/printfmt.h"
#include "decode/schema_kernel.h"
#include "print/strbuf.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* The kernel compares a number key in its field's own type (tracing_map_cmp_num). */
static int cmp_key_field(const struct hist_field *f, const uint8_t *ka, const uint8_t *kb)
{
	uint64_t a, b;

	if (f->str != HIST_STR_NONE)
		return strcmp((const char *)ka + f->key_offset, (const char *)kb + f->key_offset);
	memcpy(&a, ka + f->key_offset, 8);
	memcpy(&b, kb + f->key_offset, 8);
	if (f->src == HIST_SRC_FIELD && f->size < 8) {
		unsigned shift = 64 - 8 * f->size;
		a = a << shift >> shift; /* the low bytes the kernel's cmp reads */
		b = b << shift >> shift;
		if (f->is_signed) {
			int64_t sa = (int64_t)(a << shift) >> shift, sb = (int64_t)(b << shift) >> shift;
			return sa < sb ? -1 : sa > sb;
		}
	} else if (f->src == HIST_SRC_FIELD && f->is_signed) {
		return (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
	}
	return cmp_u64(a, b);
}

static int cmp_sort_key(const struct tb_hist *h, const struct hist_sort *k, const uint64_t *ea, const uint64_t *eb)
{
	int c;

	if (k->is_key)
		c = cmp_key_field(&h->keys[k->index], hist_entry_key(&h->table, ea), hist_entry_key(&h->table, eb));
	else
		c = cmp_u64(ea[HIST_E_HITCOUNT + k->index], eb[HIST_E_HITCOUNT + k->index]);
	return k->descending ? -c : c;
}

/* The sort keys in order, then (for a stable answer where the kernel's is arbitrary) the keys. */
static int cmp_entries(const void *pa, const void *pb, void *ctx)
{
	const struct tb_hist *h = ctx;
	const uint64_t *ea = hist_table_entry(&h->table, *(const uint32_t *)pa);
	const uint64_t *eb = hist_table_entry(&h->table, *(const uint32_t *)pb);
	int c;

	for (unsigned i = 0; i < h->nsort; i++)
		if ((c = cmp_sort_key(h, &h->sort[i], ea, eb)) != 0)
			return c;
	for (unsigned i = 0; i < h->nkeys; i++)
		if ((c = cmp_key_field(&h->keys[i], hist_entry_key(&h->table, ea), hist_entry_key(&h->table, eb))) != 0)
			return c;
	return 0;
}

static int cmp_first_seen(const void *pa, const void *pb, void *ctx)
{
	const struct tb_hist *h = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = cmp_u64(hist_table_entry(&h->table, a)[HIST_E_FIRST_TS], hist_table_entry(&h->table, b)[HIST_E_FIRST_TS]);

	return c ? c : cmp_u64(a, b);
}

/* The entries the kernel would hold, sorted; *hits and *dropped as its footer counts them. */
static uint32_t *kept_entries(const struct tb_hist *h, size_t *n, uint64_t *hits, uint64_t *dropped)
{
	size_t count = h->table.count, max = (size_t)1 << h->map_bits;
	uint32_t *idx = malloc((count ? count : 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	*hits = 0;
	*dropped = h->dropped;
	for (size_t i = 0; i < count; i++) {
		idx[i] = (uint32_t)i;
		*hits += hist_table_entry(&h->table, i)[HIST_E_HITCOUNT];
	}
	if (count > max) {
		qsort_r(idx, count, sizeof(*idx), cmp_first_seen, (void *)h);
		for (size_t i = max; i < count; i++) {
			uint64_t lost = hist_table_entry(&h->table, idx[i])[HIST_E_HITCOUNT];
			*dropped += lost;
			*hits -= lost;
		}
		count = max;
	}
	qsort_r(idx, count, sizeof(*idx), cmp_entries, (void *)h);
	*n = count;
	return idx;
}

/* A key or value as the trigger info names it: name, .modifier, =buckets. */
static void print_field_spec(FILE *out, const struct hist_field *f)
{
	const char *mod = hist_mod_name(f->mod);

	fputs(f->name, out);
	if (mod)
		fprintf(out, ".%s", mod);
	if (f->mod == HIST_MOD_BUCKETS)
		fprintf(out, "=%" PRIu64, f->buckets);
}

static void print_trigger_info(const struct tb_hist *h, FILE *out)
{
	fputs("# event histogram\n#\n# trigger info: hist:keys=", out);
	for (unsigned i = 0; i < h->nkeys; i++) {
		if (i)
			fputc(',', out);
		print_field_spec(out, &h->keys[i]);
	}
	fputs(":vals=hitcount", out);
	for (unsigned i = 0; i < h->nvals; i++) {
		fputc(',', out);
		print_field_spec(out, &h->vals[i]);
	}
	fputs(":sort=", out);
	for (unsigned i = 0; i < h->nsort; i++) {
		const struct hist_sort *k = &h->sort[i];
		if (i)
			fputc(',', out);
		if (k->is_key)
			print_field_spec(out, &h->keys[k->index]);
		else if (k->index == 0)
			fputs("hitcount", out);
		else
			print_field_spec(out, &h->vals[k->index - 1]);
		if (k->descending)
			fputs(".descending", out);
	}
	fprintf(out, ":size=%u", 1u << h->map_bits);
	if (h->timestamps)
		fprintf(out, ":clock=%s", h->clock);
	if (h->filter_text)
		fprintf(out, " if %s", h->filter_text);
	fputs(" [active]\n#\n\n", out);
}

/* %ps / %pS of the kernel: the symbol (with +0xoff/0xsize) or 0xADDR, padded to width. */
static void print_symbol(const struct tb_hist *h, FILE *out, uint64_t addr, bool with_offset, int width)
{
	struct tb_print_env env = {.ctx = h->schema, .symbol = tb_schema_symbol};
	struct tb_strbuf sb = {0};

	kv_symbol(&sb, addr, with_offset, false, &env);
	fprintf(out, "%-*.*s", width, (int)sb.len, sb.len ? sb.buf : "");
	sb_free(&sb);
}

static void print_key(const struct tb_hist *h, FILE *out, const struct hist_field *f, const uint8_t *key)
{
	uint64_t v;
	const char *name;
	size_t len;

	if (f->str != HIST_STR_NONE) {
		fprintf(out, "%s: %-50s", f->name, (const char *)key + f->key_offset);
		return;
	}
	memcpy(&v, key + f->key_offset, 8);
	fprintf(out, "%s: ", f->name);
	switch (f->mod) {
	case HIST_MOD_HEX:
		fprintf(out, "%" PRIx64, v);
		break;
	case HIST_MOD_SYM:
	case HIST_MOD_SYM_OFFSET:
		fprintf(out, "[%" PRIx64 "] ", v);
		print_symbol(h, out, v, f->mod == HIST_MOD_SYM_OFFSET, f->mod == HIST_MOD_SYM ? 45 : 55);
		break;
	case HIST_MOD_EXECNAME:
		name = tb_schema_comm(h->schema, (int)v, &len);
		fprintf(out, "%-16.*s[%10" PRIu64 "]", (int)len, name, v);
		break;
	case HIST_MOD_SYSCALL:
		name = hist_syscall_name(v);
		fprintf(out, "%-30s[%3" PRIu64 "]", name ? name : "unknown_syscall", v);
		break;
	case HIST_MOD_LOG2:
		fprintf(out, "~ 2^%-2" PRIu64, v);
		break;
	case HIST_MOD_BUCKETS:
		fprintf(out, "~ %" PRIu64 "-%" PRIu64, v, v + f->buckets - 1);
		break;
	default:
		fprintf(out, "%10" PRIu64, v);
	}
}

static void print_entry(const struct tb_hist *h, FILE *out, const uint64_t *e)
{
	const uint8_t *key = hist_entry_key(&h->table, e);

	fputs("{ ", out);
	for (unsigned i = 0; i < h->nkeys; i++) {
		if (i)
			fputs(", ", out);
		print_key(h, out, &h->keys[i], key);
	}
	fprintf(out, " } hitcount: %10" PRIu64, e[HIST_E_HITCOUNT]);
	for (unsigned i = 0; i < h->nvals; i++)
		fprintf(out, h->vals[i].mod == HIST_MOD_HEX ? "  %s: %10" PRIx64 : "  %s: %10" PRIu64,
			h->vals[i].name, e[HIST_E_SUMS + i]);
	fputc('\n', out);
}

int tb_hist_print(struct tb_hist *h, FILE *out)
{
	uint64_t hits, dropped;
	uint32_t *idx;
	size_t n;

	if (!h || !out)
		return -EINVAL;
	idx = kept_entries(h, &n, &hits, &dropped);
	if (!idx)
		return -ENOMEM;
	print_trigger_info(h, out);
	for (size_t i = 0; i < n; i++)
		print_entry(h, out, hist_table_entry(&h->table, idx[i]));
	fprintf(out, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %zu\n    Dropped: %" PRIu64 "\n", hits, n,
		dropped);
	free(idx);
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
