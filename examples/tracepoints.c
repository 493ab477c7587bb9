/*
 * tracepoints - typed events, printf events and markers into a ring, saved
 * as a capture directory that `tracebuf report DIR` prints like the
 * kernel's trace file.
 *
 *   build/examples/tracepoints DIR && tracebuf report DIR
 *   tracebuf formats build/examples/tracepoints     # its format files
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/tracepoint.h"

enum req_kind { REQ_GET = 1, REQ_PUT = 2 };
TB_DEFINE_ENUM(REQ_GET)
TB_DEFINE_ENUM(REQ_PUT)

/* Declared once (this could be in a header): the record, its format and tb_trace_demo_request(). */
TB_EVENT(demo, request,
	 TB_PROTO(int id, enum req_kind kind, const char *path, uint64_t bytes),
	 TB_FIELDS(tb_field(int, id, id), tb_field(enum req_kind, kind, kind), tb_string(path, path),
		   tb_field(uint64_t, bytes, bytes)),
	 TB_PRINTK("id=%d kind=%s path=%s bytes=%llu", REC->id,
		   __print_symbolic(REC->kind, { REQ_GET, "GET" }, { REQ_PUT, "PUT" }), __get_str(path),
		   (unsigned long long)REC->bytes))

TB_EVENT(demo, done, TB_PROTO(int id, int status), TB_FIELDS(tb_field(int, id, id), tb_field(int, status, status)),
	 TB_PRINTK("id=%d status=%d", REC->id, REC->status))

/* Every sub-buffer of every CPU appended to DIR/cpuN.raw, as trace_pipe_raw would give them. */
static int save_pages(struct tb_ring *ring, const char *dir)
{
	size_t size = tb_ring_subbuf_size(ring);
	char *page = malloc(size), path[4096];
	long n;

	for (unsigned cpu = 0; page && cpu < tb_ring_ncpus(ring); cpu++) {
		int fd;
		snprintf(path, sizeof(path), "%s/cpu%u.raw", dir, cpu);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return -1;
		while ((n = tb_read_page(ring, cpu, page, size)) > 0)
			if (write(fd, page, (size_t)n) != n)
				break;
		close(fd);
	}
	free(page);
	return page ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct tb_ring_opts opts;
	struct tb_ring *ring;

	tb_ring_opts_default(&opts);
	opts.clock = TB_CLOCK_MONO; /* nanoseconds: the report prints seconds.microseconds */
	if (tb_ring_new(&ring, &opts) < 0)
		return 1;
	tb_events_attach(ring);
	if (tb_events_enable("demo:*,ftrace:*", NULL, 0) < 0)
		return 1;

	tb_trace(demo, request, 1, REQ_GET, "/index.html", 512);
	tb_printf("cache %s for id %d\n", "miss", 1);
	tb_trace(demo, done, 1, 200);
	tb_trace(demo, request, 2, REQ_PUT, "/upload", 1048576);
	tb_marker_puts("upload started");
	tb_trace(demo, done, 2, 201);

	if (argc > 1) {
		if (tb_events_dump(argv[1], ring) < 0 || save_pages(ring, argv[1]) < 0) {
			perror(argv[1]);
			return 1;
		}
	} else {
		printf("wrote 6 events; run with a directory to save them for tracebuf report\n");
	}
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return 0;
}
