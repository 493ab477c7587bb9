// SPDX-License-Identifier: MIT
/*
 * hist_feed.c - records into the hist: the compiled keys and values are
 * read straight from each record (no text, no name lookups), the compound
 * key is built the way the kernel's event_hist_trigger() builds it
 * (numbers as sign-extended u64 slots, strings copied into zeroed slots
 * and cut one byte short of the slot), and the entry's hitcount and sums
 * are updated.  tb_hist_add_capture() walks every CPU's sub-buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist_internal.h"
#include "load_int.h"
#include "tracebuf/filter.h"
#include "tracebuf/page.h"

#define BAD_RECORDS_TOLD 10 /* damaged records reported one by one, then only counted (totals) */

int tb_hist_new(const char *spec, const struct tb_format *fmt, const char *system, struct tb_schema *schema,
		struct tb_hist **out, struct tb_hist_error *err)
{
	struct tb_hist *h;
	int rc;

	if (!spec || !fmt || !system || !out || !err)
		return -EINVAL;
	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->system, sizeof(h->system), "%s", system);
	snprintf(h->event, sizeof(h->event), "%s", fmt->name);
	h->id = fmt->id;
	h->schema = schema;
	h->ns_clock = true;
	rc = hist_parse(h, spec, fmt, err);
	if (rc == 0)
		rc = hist_table_init(&h->table, h->key_size, h->nvals);
	if (rc == 0 && !(h->key_buf = calloc(1, h->key_size)))
		rc = -ENOMEM;
	if (rc < 0) {
		tb_hist_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void tb_hist_free(struct tb_hist *h)
{
	if (!h)
		return;
	hist_table_free(&h->table);
	tb_filter_free(h->filter);
	free(h->filter_text);
	free(h->key_buf);
	free(h);
}

void tb_hist_set_ns_clock(struct tb_hist *h, int ns_clock)
{
	if (h)
		h->ns_clock = ns_clock != 0;
}

/* ilog2(roundup_pow_of_two(v)) as the kernel computes it on x86_64: 0 for 0, 1 and above 2^63. */
static inline uint64_t kernel_log2(uint64_t v)
{
	unsigned bits;

	if (v <= 1)
		return 0;
	bits = 64u - (unsigned)__builtin_clzll(v - 1);
	return bits == 64 ? 0 : bits;
}

static inline uint64_t field_number(const struct tb_hist *h, const struct hist_field *f, const uint8_t *rec,
				    uint64_t ts, int cpu)
{
	uint64_t v;

	switch (f->src) {
	case HIST_SRC_TIMESTAMP:
		/* ns2usecs() rounds to the nearest microsecond; only for a nanosecond clock. */
		v = h->ts_usecs && h->ns_clock ? (ts + 500) / 1000 : ts;
		break;
	case HIST_SRC_CPU:
		v = (uint64_t)cpu;
		break;
	default:
		v = load_int(rec + f->offset, f->size, f->is_signed);
	}
	if (f->mod == HIST_MOD_LOG2)
		v = kernel_log2(v);
	else if (f->mod == HIST_MOD_BUCKETS)
		v = v / f->buckets * f->buckets;
	return v;
}

/* The string key f into its slot (zeroed first); false when the record's locator points outside it. */
static inline bool put_string(const struct hist_field *f, uint8_t *slot, const uint8_t *rec, uint32_t len)
{
	uint32_t start = f->offset, n = f->size;

	if (f->str != HIST_STR_STATIC) {
		uint32_t loc;
		memcpy(&loc, rec + f->offset, 4);
		start = (loc & 0xffff) + (f->str == HIST_STR_REL ? f->offset + 4 : 0);
		n = loc >> 16;
		if (start > len || n > len - start)
			return false;
	}
	memset(slot, 0, f->key_size);
	if (n > f->key_size - 1)
		n = f->key_size - 1; /* always NUL-terminated, as the kernel keeps it */
	for (uint32_t i = 0; i < n && rec[start + i]; i++)
		slot[i] = rec[start + i];
	return true;
}

/* Whether the filter keeps the record; the comm it may ask for is the writer's, from saved_cmdlines. */
static bool filter_keeps(const struct tb_hist *h, const uint8_t *rec, uint32_t len, int cpu)
{
	struct tb_filter_env env = {.cpu = cpu, .comm = NULL};
	char comm[TB_NAME_MAX];

	if (h->filter_uses & TB_FILTER_USES_COMM) {
		int32_t pid = 0;
		size_t n;
		const char *name;
		if (len >= 8)
			memcpy(&pid, rec + 4, 4);
		name = tb_schema_comm(h->schema, pid, &n);
		snprintf(comm, sizeof(comm), "%.*s", (int)n, name);
		env.comm = comm;
	}
	return tb_filter_match(h->filter, rec, len, &env);
}

int tb_hist_add_record(struct tb_hist *h, const void *data, uint32_t len, uint64_t ts, int cpu)
{
	const uint8_t *rec = data;
	uint8_t *key;
	uint64_t *e;

	if (!h || !data)
		return -EINVAL;
	if (len < h->min_size)
		return -EINVAL;
	if (h->filter && !filter_keeps(h, rec, len, cpu)) {
		h->filtered++;
		return 0;
	}
	key = h->key_buf;
	for (unsigned i = 0; i < h->nkeys; i++) {
		const struct hist_field *f = &h->keys[i];
		if (f->str == HIST_STR_NONE) {
			uint64_t v = field_number(h, f, rec, ts, cpu);
			memcpy(key + f->key_offset, &v, 8);
		} else if (!put_string(f, key + f->key_offset, rec, len)) {
			return -EINVAL;
		}
	}
	e = hist_table_get(&h->table, key, ts);
	if (!e)
		return -ENOMEM;
	e[HIST_E_HITCOUNT]++;
	for (unsigned i = 0; i < h->nvals; i++)
		e[HIST_E_SUMS + i] += field_number(h, &h->vals[i], rec, ts, cpu);
	return 0;
}

/* One sub-buffer: every record of the hist's event added. */
static int add_page(struct tb_hist *h, struct tb_capture *c, int cpu, const struct tb_raw_page *pg,
		    struct tb_hist_totals *t)
{
	struct tb_page_cursor cur;
	struct tb_record rec;
	int rc;

	if (tb_page_cursor_init(&cur, pg->data, pg->size) < 0) {
		tb_capture_report(c, pg->file, pg->file_offset + cur.err.offset, "bad sub-buffer: %s",
				  cur.err.reason);
		t->bad_pages++;
		return 0;
	}
	t->lost_pages += cur.hdr.lost;
	while ((rc = tb_page_next_data(&cur, &rec)) > 0) {
		uint16_t type;

		t->records++;
		if (rec.len < 2)
			continue;
		memcpy(&type, rec.data, 2);
		if (type != h->id)
			continue;
		t->matched++;
		/* common_timestamp in nanoseconds where a trace.dat's TSC2NSEC says how (capture.h). */
		rc = tb_hist_add_record(h, rec.data, rec.len, tb_capture_ts_ns(c, rec.ts), cpu);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0 && t->bad_records++ < BAD_RECORDS_TOLD)
			tb_capture_report(c, pg->file, pg->file_offset + rec.offset,
					  "%s:%s record of %u bytes does not hold the fields the hist reads "
					  "(needs %u, or a string points outside it); left out",
					  h->system, h->event, rec.len, h->min_size);
	}
	if (rc < 0) {
		tb_capture_report(c, pg->file, pg->file_offset + cur.err.offset, "bad record: %s; rest of the sub-buffer skipped",
				  cur.err.reason);
		t->bad_pages++;
	}
	return 0;
}

int tb_hist_add_capture(struct tb_hist *h, struct tb_capture *c, struct tb_hist_totals *totals)
{
	struct tb_hist_totals local = {0}, *t = totals ? totals : &local;
	uint64_t bad_before = t->bad_records;

	if (!h || !c)
		return -EINVAL;
	for (int cpu = 0; cpu < tb_capture_cpu_slots(c); cpu++) {
		struct tb_raw_page pg;
		int rc;

		if (!tb_capture_has_cpu(c, cpu))
			continue;
		while ((rc = tb_capture_next_page(c, cpu, &pg)) > 0)
			if ((rc = add_page(h, c, cpu, &pg, t)) < 0)
				return rc;
	}
	h->bad_records += t->bad_records - bad_before;
	return 0;
}
