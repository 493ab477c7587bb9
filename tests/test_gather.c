/*
 * gather.h: the writer's own text and spans borrowed from other memory come
 * out in the order they were added - lengthened spans, more pieces than one
 * writev() takes (the batch written in between, also when it fills up with
 * own text still to add), own text left at a flush -
 * to a file (writev on its descriptor), a pipe read by another thread, and a
 * stream without a descriptor (fwrite).  The expected text is built apart,
 * by appending every piece to a plain buffer as it is added.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "print/gather.h"
#include "lib/tap.h"

#define LINES 6000

/* Two "units" of lines, as two workers would have written them. */
struct source {
	char text[LINES * 24];
	size_t start[LINES + 1];
};

static void make_source(struct source *s, char tag)
{
	size_t n = 0;

	for (int i = 0; i < LINES; i++) {
		s->start[i] = n;
		n += (size_t)sprintf(s->text + n, "%c line %d%.*s\n", tag, i, i % 7, "-------");
	}
	s->start[LINES] = n;
}

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A fixed mix of own text and lines of both sources into g, the same text appended to want. */
static void feed(struct gather *g, struct tb_strbuf *want, const struct source *a, const struct source *b,
		 bool flush_midway)
{
	uint64_t x = 88172645463325252ull;
	int next[2] = {0, 0};

	for (int op = 0; op < 2 * LINES; op++) {
		unsigned r = (unsigned)(next_random(&x) % 10);
		const struct source *s = r < 5 ? a : b;
		int *k = &next[r < 5 ? 0 : 1];
		if (r == 9) {
			char own[32];
			int n = snprintf(own, sizeof(own), "own %d\n", op);
			sb_put(g->own, own, (size_t)n);
			sb_put(want, own, (size_t)n);
		} else if (*k < LINES) {
			size_t len = s->start[*k + 1] - s->start[*k];
			gather_borrow(g, s->text + s->start[*k], len);
			sb_put(want, s->text + s->start[*k], len);
			++*k;
		}
		if (flush_midway && op % 1500 == 1499)
			gather_flush(g);
	}
	sb_put(g->own, "the end\n", 8); /* own text after the last span, written by the flush */
	sb_put(want, "the end\n", 8);
}

static void to_file(const struct source *a, const struct source *b, bool flush_midway)
{
	struct tb_strbuf own = {0}, want = {0};
	FILE *f = tmpfile();
	struct gather g = {.out = f, .own = &own};
	size_t len = 0;
	char *got;

	fputs("before\n", f); /* buffered in the stream: must come first */
	sb_puts(&want, "before\n");
	feed(&g, &want, a, b, flush_midway);
	is_int(gather_flush(&g), 0, "file%s: flushed", flush_midway ? ", flushed midway" : "");
	fflush(f);
	rewind(f);
	got = malloc(want.len + 2);
	len = fread(got, 1, want.len + 1, f);
	ok(len == want.len && !memcmp(got, want.buf, len), "file%s: %zu bytes in order (want %zu)",
	   flush_midway ? ", flushed midway" : "", len, want.len);
	free(got);
	fclose(f);
	gather_free(&g);
	sb_free(&own);
	sb_free(&want);
}

struct drain {
	int fd;
	struct tb_strbuf got;
};

static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	char buf[1000]; /* small reads: the writer's writev() waits on the pipe */
	ssize_t n;

	while ((n = read(d->fd, buf, sizeof(buf))) > 0)
		sb_put(&d->got, buf, (size_t)n);
	return NULL;
}

static void to_pipe(const struct source *a, const struct source *b)
{
	struct tb_strbuf own = {0}, want = {0};
	struct drain d = {0};
	pthread_t reader;
	int fds[2];

	if (pipe(fds) < 0) {
		ok(0, "pipe");
		return;
	}
	d.fd = fds[0];
	pthread_create(&reader, NULL, drain_pipe, &d);
	FILE *w = fdopen(fds[1], "w");
	struct gather g = {.out = w, .own = &own};
	feed(&g, &want, a, b, false);
	is_int(gather_flush(&g), 0, "pipe: flushed");
	fclose(w);
	pthread_join(reader, NULL);
	close(fds[0]);
	ok(d.got.len == want.len && !memcmp(d.got.buf, want.buf, want.len), "pipe: %zu bytes in order (want %zu)",
	   d.got.len, want.len);
	gather_free(&g);
	sb_free(&d.got);
	sb_free(&own);
	sb_free(&want);
}

static void to_memstream(const struct source *a, const struct source *b)
{
	struct tb_strbuf own = {0}, want = {0};
	char *got = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&got, &len);
	struct gather g = {.out = m, .own = &own};

	feed(&g, &want, a, b, true);
	is_int(gather_flush(&g), 0, "memstream: flushed");
	fclose(m);
	ok(len == want.len && !memcmp(got, want.buf, len), "memstream (no descriptor): %zu bytes in order (want %zu)",
	   len, want.len);
	free(got);
	gather_free(&g);
	sb_free(&own);
	sb_free(&want);
}

/* Own text before every span: two pieces a line, so a batch fills up exactly with own text left to close. */
static void full_batches(const struct source *a)
{
	struct tb_strbuf own = {0}, want = {0};
	char *got = NULL;
	size_t len = 0;
	FILE *f = tmpfile();
	struct gather g = {.out = f, .own = &own};

	for (int i = 0; i < 3 * GATHER_PIECES; i++) {
		size_t n = a->start[i + 1] - a->start[i];
		sb_put(&own, "> ", 2);
		sb_put(&want, "> ", 2);
		gather_borrow(&g, a->text + a->start[i], n);
		sb_put(&want, a->text + a->start[i], n);
	}
	sb_put(&own, "end\n", 4);
	sb_put(&want, "end\n", 4);
	is_int(gather_flush(&g), 0, "full batches: flushed");
	fflush(f);
	rewind(f);
	got = malloc(want.len + 2);
	len = fread(got, 1, want.len + 1, f);
	ok(len == want.len && !memcmp(got, want.buf, len), "full batches: %zu bytes in order (want %zu)", len, want.len);
	free(got);
	fclose(f);
	gather_free(&g);
	sb_free(&own);
	sb_free(&want);
}

static void own_alone(void)
{
	struct tb_strbuf own = {0};
	char *got = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&got, &len);
	struct gather g = {.out = m, .own = &own};

	sb_puts(&own, "cpus=2\n");
	is_int(gather_flush(&g), 0, "own text alone: flushed");
	is_int((int)own.len, 0, "own text alone: own emptied");
	fclose(m);
	is_str(got, "cpus=2\n", "own text alone: written");
	free(got);
	gather_free(&g);
	sb_free(&own);
}

int main(void)
{
	static struct source a, b;

	make_source(&a, 'a');
	make_source(&b, 'b');
	to_file(&a, &b, false);
	to_file(&a, &b, true);
	to_pipe(&a, &b);
	to_memstream(&a, &b);
	full_batches(&a);
	own_alone();
	return done_testing();
}
