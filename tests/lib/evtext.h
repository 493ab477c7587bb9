/* SPDX-License-Identifier: MIT */
/*
 * evtext.h - the text of in-process records two ways, for the sources'
 * tests: libtraceevent on its own (a tep handle fed the registry's texts
 * directly, tep_print_event with TEP_PRINT_INFO) and tracebuf's renderer
 * (tb_render_event with a schema from tb_schema_load_events), reduced to
 * the event body - what follows "NAME: " - since the context columns are
 * the renderer's own business.
 */
#ifndef TB_TEST_EVTEXT_H
#define TB_TEST_EVTEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/report.h"
#include "tracebuf/schema.h"

/* A TAP check expected to fail for a known reason ("# TODO"): reported, never failing the run. */
#define todo_is_str(got, want, reason, ...)                                                     \
	do {                                                                                    \
		const char *g_ = (got), *w_ = (want);                                           \
		int pass_ = g_ && w_ && strcmp(g_, w_) == 0;                                    \
		printf("%sok %d - ", pass_ ? "" : "not ", ++tap_run);                            \
		printf(__VA_ARGS__);                                                            \
		printf(" # TODO %s\n", reason);                                                 \
		if (!pass_)                                                                     \
			printf("#   got  '%s'\n#   want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

static int evtext_parse_one(void *ctx, const struct tb_events_info *ev)
{
	struct tep_handle *tep = ctx;

	if (tep_parse_event(tep, ev->format, ev->format_len, ev->system) != 0) {
		printf("# libtraceevent refused %s:%s\n", ev->system, ev->name);
		return 0;
	}
	return 0;
}

/* A libtraceevent handle that knows every registered event, printf format and call site. */
static inline struct tep_handle *evtext_tep(void)
{
	struct tep_handle *tep = tep_alloc();
	size_t len;
	char *text;

	if (!tep)
		return NULL;
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	tb_events_foreach(evtext_parse_one, tep);
	text = tb_events_printk_formats(&len);
	if (text && len)
		tep_parse_printk_formats(tep, text);
	free(text);
	text = tb_events_kallsyms(&len);
	if (text && len)
		tep_parse_kallsyms(tep, text);
	free(text);
	return tep;
}

/* libtraceevent's text of one record (malloc'ed, no trailing newline). */
static inline char *evtext_tep_body(struct tep_handle *tep, const void *data, uint32_t len)
{
	unsigned char *copy = calloc(1, (size_t)len + 64); /* zeros after it, as render.c gives */
	struct tep_record rec = {.size = (int)len, .record_size = (int)len};
	struct trace_seq seq;
	char *out;

	if (!copy)
		return NULL;
	memcpy(copy, data, len);
	rec.data = copy;
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	out = strdup(seq.buffer);
	trace_seq_destroy(&seq);
	free(copy);
	if (out) {
		size_t n = strlen(out);
		if (n && out[n - 1] == '\n')
			out[n - 1] = '\0';
	}
	return out;
}

/* tracebuf's line for a record (malloc'ed, newline included), or NULL. */
static inline char *evtext_render_line(struct tb_schema *s, const struct tb_read_event *ev)
{
	struct tb_render_record ref = {(int)ev->cpu, ev->ns, ev->data, ev->len};
	struct tb_render_opts opts = {.ns_clock = true};
	struct tb_problem err = {0};
	char *line = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&line, &size);
	int rc;

	if (!f)
		return NULL;
	rc = tb_render_event(s, &ref, &opts, f, &err);
	fclose(f);
	if (rc < 0) {
		printf("# tb_render_event: %s\n", err.reason);
		free(line);
		return NULL;
	}
	return line;
}

/* A rendered line without its context columns: what follows "TIMESTAMP: ", no newline.  Points into line. */
static inline char *evtext_after_context(char *line)
{
	char *p = line ? strstr(line, "]") : NULL;

	if (!p || !(p = strstr(p, ": ")))
		return NULL;
	p += 2;
	p[strcspn(p, "\n")] = '\0';
	return p;
}

/*
 * The body of a rendered line: after "TIMESTAMP: NAME: " (or, for the
 * ftrace events printed the kernel's way, after "TIMESTAMP: "), without
 * the newline.  Points into line.
 */
static inline char *evtext_body(char *line, const char *name)
{
	char key[160], *p;

	if (!line)
		return NULL;
	snprintf(key, sizeof(key), ": %s: ", name);
	p = strstr(line, key);
	if (p)
		p += strlen(key);
	else if ((p = strstr(line, "]")) && (p = strstr(p, ": ")))
		p += 2;
	else
		return NULL;
	p[strcspn(p, "\n")] = '\0';
	return p;
}

#endif
