// SPDX-License-Identifier: MIT
/*
 * fuzz_format.c - libFuzzer target for the parsers of the kernel's text
 * descriptions (src/decode/format.c) and the schema that loads them into
 * libtraceevent (src/decode/schema.c).
 *
 * Every input goes through every parser, so the seeds are real files as the
 * kernel wrote them (format files, header_page, header_event, a piece of
 * saved_cmdlines) and any of them can mutate into any other:
 *
 *   tb_header_page_parse / tb_schema_load_header_page
 *   tb_header_event_parse
 *   tb_format_parse, then tb_schema_load_format (our checks) and one record
 *     printed (our print-fmt compiler, or libtraceevent's parser and printer
 *     for what the compiler parsed but declined)
 *   tb_schema_load_cmdlines
 *   tb_stats_parse_kernel (a per_cpu/cpuN/stats file)
 *
 * Checked beyond "no crash, no leak, no overread": what each parser promises
 * about what it accepts (see include/tracebuf/schema.h), and that a refusal
 * names an offset inside the input and a reason.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/page.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"

#include "fuzz_check.h"
#include "fuzz_sink.h"

/*
 * libtraceevent 1.7.1's parser leaks a few bytes on some malformed print
 * fmts (tokens it drops on error paths).  That is its bug, not ours, and
 * harmless to a reader; crashes in it are still caught, and so is every
 * leak whose allocation did not happen inside libtraceevent.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static void quiet(void *ctx, const struct tb_problem *d)
{
	size_t *len = ctx;

	CHECK(d->offset <= *len);
	CHECK(memchr(d->reason, '\0', sizeof(d->reason)) && d->reason[0]);
}

static void check_refusal(int rc, const struct tb_problem *err, size_t len)
{
	CHECK(rc == -EINVAL);
	CHECK(err->offset <= len);
	CHECK(memchr(err->reason, '\0', sizeof(err->reason)) && err->reason[0]);
}

static void check_header_page(const char *text, size_t len)
{
	struct tb_header_page hp;
	struct tb_problem err = {0};
	int rc = tb_header_page_parse(text, len, &hp, &err);

	if (rc < 0) {
		check_refusal(rc, &err, len);
		return;
	}
	CHECK(hp.commit_size == 8 && hp.commit_offset == 8 && hp.timestamp_size == 8);
	CHECK(hp.data_offset == TB_PAGE_HDR_SIZE);
	CHECK(tb_page_size_valid((size_t)hp.data_offset + hp.data_size));
}

static void check_header_event(const char *text, size_t len)
{
	struct tb_problem err = {0};
	int rc = tb_header_event_parse(text, len, &err);

	if (rc < 0)
		check_refusal(rc, &err, len);
}

/* What tb_format_parse promises about a format it accepts. */
static void check_accepted_format(const struct tb_format *f, const char *text, size_t len)
{
	uint32_t need = 0;

	CHECK(f->id >= 1 && f->id <= 65535);
	CHECK(f->nfields >= 4 && f->fields);
	CHECK(f->print_fmt_offset + 10 <= len && !memcmp(text + f->print_fmt_offset, "print fmt:", 10));
	CHECK(f->name[0] && memchr(f->name, '\0', sizeof(f->name)));
	for (size_t i = 0; i < f->nfields; i++) {
		const struct tb_schema_field *a = &f->fields[i];
		CHECK(a->name[0] && memchr(a->name, '\0', sizeof(a->name)));
		CHECK((uint64_t)a->offset + a->size <= TB_PAGE_MAX_SIZE);
		CHECK(a->kind == TB_SCHEMA_FIELD_STATIC || a->size == 4 || a->size == 2);
		CHECK(tb_format_field(f, a->name) == a); /* names are unique */
		if (a->offset + a->size > need)
			need = a->offset + a->size;
	}
	CHECK(f->min_size == need && need >= 8);
}

/* A record of zeros of the right size passes the record check; one byte less does not. */
static void check_records(const struct tb_format *f)
{
	uint8_t *rec = calloc(1, f->min_size + 1);
	struct tb_problem err = {0};

	CHECK(rec);
	CHECK(tb_schema_check_record(f, rec, f->min_size, &err) == 0);
	CHECK(tb_schema_check_record(f, rec, f->min_size - 1, &err) == -EINVAL);
	free(rec);
}

/*
 * One all-zero record printed: the print fmt compiled and run, or - when
 * our compiler declines a construct - handed to libtraceevent, which must
 * survive whatever our compiler parsed whole.
 */
static void print_one(struct tb_schema *s, const struct tb_format *f)
{
	uint8_t *rec = calloc(1, (size_t)f->min_size + 8);
	struct tb_render_record ev = {0, 1000, rec, f->min_size};
	struct tb_problem err;
	FILE *sink = fuzz_sink();

	CHECK(rec);
	memcpy(rec, &(uint16_t){(uint16_t)f->id}, 2);
	tb_render_event(s, &ev, NULL, sink, &err);
	free(rec);
}

static void check_format(const char *text, size_t len)
{
	struct tb_format f;
	struct tb_problem err = {0};
	struct tb_schema *s;
	int rc = tb_format_parse(text, len, &f, &err);
	size_t problems_len = len;

	if (rc < 0) {
		check_refusal(rc, &err, len);
		CHECK(f.fields == NULL && f.nfields == 0);
	} else {
		check_accepted_format(&f, text, len);
		check_records(&f);
	}
	s = tb_schema_new();
	CHECK(s);
	tb_schema_set_problem_fn(s, quiet, &problems_len);
	if (tb_schema_load_format(s, "fuzz", "fuzz", text, len) == 0) {
		/* Loaded only what our parser accepted, under its ID. */
		CHECK(rc == 0);
		CHECK(tb_schema_event(s, f.id, NULL) != NULL && tb_schema_event_count(s) == 1);
		print_one(s, &f);
	} else {
		CHECK(tb_schema_event_count(s) == 0);
	}
	if (rc == 0)
		tb_format_free(&f);
	tb_schema_free(s);
}

static void check_schema_files(const char *text, size_t len)
{
	struct tb_schema *s = tb_schema_new();
	size_t problems_len = len;

	CHECK(s);
	tb_schema_set_problem_fn(s, quiet, &problems_len);
	if (tb_schema_load_header_page(s, "fuzz", text, len) == 0)
		CHECK(tb_page_size_valid(tb_schema_subbuf_size(s)));
	else
		CHECK(tb_schema_subbuf_size(s) == 0);
	tb_schema_load_cmdlines(s, "fuzz", text, len);
	tb_schema_free(s);
}

/* Is the value on the line starting "key:" written as sec.usec (a clock in ns)? */
static bool time_in_ns(const char *z, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = z; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ':') {
			const char *dot = strchr(p + n, '.'), *nl = strchr(p + n, '\n');
			return dot && (!nl || dot < nl);
		}
	return false;
}

/*
 * A stats file: refused with an offset inside it, or parsed, printed and
 * parsed again to the same counts (and times, when both are in the same form).
 */
static void check_stats(const char *text, size_t len)
{
	char *z = malloc(len + 1); /* the parser takes a string */
	struct tb_cpu_stats st;
	struct tb_problem err = {0};
	int rc;

	CHECK(z);
	memcpy(z, text, len);
	z[len] = '\0';
	rc = tb_stats_parse_kernel(z, &st, &err);
	if (rc < 0)
		check_refusal(rc, &err, len);
	else {
		/* What we print of it (the kernel's lines, then ours) parses back to the same counts. */
		struct tb_cpu_stats again;
		char *out = NULL;
		size_t out_len = 0;
		FILE *f = open_memstream(&out, &out_len);

		bool ns = time_in_ns(z, "oldest event ts"), same_form = ns == time_in_ns(z, "now ts");

		CHECK(f);
		tb_stats_print(f, NULL, &st, ns);
		fclose(f);
		CHECK(tb_stats_parse_kernel(out, &again, NULL) == 0);
		CHECK(again.entries == st.entries && again.overrun == st.overrun && again.bytes == st.bytes &&
		      again.commit_overrun == st.commit_overrun && again.dropped == st.dropped &&
		      again.read == st.read);
		CHECK(!same_form || (again.oldest_ts == st.oldest_ts && again.now_ts == st.now_ts));
		free(out);
	}
	free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, not NUL-terminated: any read past it is caught. */
	char *text = malloc(size ? size : 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	check_header_page(text, size);
	check_header_event(text, size);
	check_format(text, size);
	check_schema_files(text, size);
	check_stats(text, size);
	free(text);
	return 0;
}
