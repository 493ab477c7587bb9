// SPDX-License-Identifier: MIT
/*
 * fuzz_tracedat.c - libFuzzer target for the trace.dat reader
 * (src/tracedat): the input is a whole trace.dat file.
 *
 * Each input is opened (tb_tracedat_open: initial part, v6 blocks or v7
 * sections and options, decompression of metadata, the schema's texts),
 * then read one of the ways the tools read it: trace-cmd's report (plain,
 * raw with latency columns, and the kernel's text in trace-cmd's framing
 * with and without them), the dump with every record, or the main buffer
 * as a capture through the kernel-text report and report --count.  The
 * input's size picks the way (size % WAYS), so every way is fuzzed and an
 * input costs one reading, not six; the last way is all of them on one
 * handle, with worker threads rendering (TB_REPORT_THREADS=2: a small
 * file's report has none by itself).  Compressed chunks are decompressed
 * page by page on the way.
 *
 * Checked beyond "no crash, no leak, no overread, no hang": every problem
 * about the file itself names an offset inside the file and a reason, and
 * a file that opens has a page size, a version and CPUs that make sense.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracebuf/capture.h"
#include "tracebuf/page.h"
#include "tracebuf/report.h"
#include "tracebuf/tracedat.h"

#include "fuzz_check.h"
#include "fuzz_sink.h"

/* libtraceevent's own leaks on malformed print fmts (see fuzz_format.c). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static char path[64];
static size_t file_size;

static void check_diag(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	CHECK(d->reason[0] && memchr(d->reason, '\0', sizeof(d->reason)));
	/* Messages about the file itself point inside it (texts name themselves). */
	if (d->file && !strcmp(d->file, path))
		CHECK(d->offset <= file_size);
}

enum way { WAY_PLAIN, WAY_RAW, WAY_KERNEL, WAY_KERNEL_LATENCY, WAY_DUMP, WAY_CAPTURE, WAY_ALL, WAYS };

/* The trace.dat reports and the dump, on one handle. */
static void read_tracedat(struct tb_tracedat *td, enum way way)
{
	/*
	 * No libtraceevent plugins: loading them is a dlopen and dlclose of a
	 * dozen shared objects per report, and what they print is theirs.
	 */
	static const struct tb_tcmd_print_opts print[] = {
		[WAY_PLAIN] = {.no_plugins = true},
		[WAY_RAW] = {.raw = true, .latency = true, .nsec = true, .no_plugins = true},
		/* the kernel's text in trace-cmd's framing: lines written by the workers (frame_line) */
		[WAY_KERNEL] = {.kernel_text = true},
		[WAY_KERNEL_LATENCY] = {.kernel_text = true, .latency = true},
	};
	struct tb_tracedat_dump_opts dump = {.records = true, .cpu = -1};
	FILE *null = fuzz_sink();

	for (enum way w = WAY_PLAIN; w <= WAY_KERNEL_LATENCY; w++)
		if (way == w || way == WAY_ALL)
			tb_tcmd_print_tracedat(td, null, &print[w], NULL);
	if (way == WAY_DUMP || way == WAY_ALL)
		tb_tracedat_dump(td, null, &dump);
}

/* The main buffer as a capture: the kernel-text report, then report --count's own walk and merge. */
static void read_as_capture(void)
{
	/* The capture view parses formats as records meet them (what report does); the handle above at open. */
	struct tb_capture_opts co = {.diag = check_diag, .lazy_formats = true};
	struct tb_report_opts count = {.count_only = true};
	struct tb_capture *c;

	if (tb_capture_open(path, &co, &c) == 0) {
		tb_report_write(c, fuzz_sink(), NULL, NULL);
		if (tb_capture_rewind(c) == 0)
			tb_report_write(c, fuzz_sink(), &count, NULL);
		tb_capture_close(c);
	}
}

static void read_one_way(enum way way)
{
	struct tb_tracedat_opts o = {.diag = check_diag};
	struct tb_tracedat *td;
	const struct tb_tracedat_info *info;

	if (tb_tracedat_open(path, &o, &td) != 0)
		return;
	info = tb_tracedat_info(td);
	CHECK(info->version == 6 || info->version == 7);
	CHECK(tb_page_size_valid(info->page_size));
	CHECK(info->cpus >= 0 && info->cpus <= 4096);
	for (int i = 0; i < tb_tracedat_buffer_count(td); i++)
		for (int k = 0; k < tb_tracedat_buffer(td, i)->ncpus; k++) {
			const struct tb_tracedat_cpu *cpu = &tb_tracedat_buffer(td, i)->cpus[k];
			CHECK(!cpu->size || cpu->offset + cpu->size <= file_size);
		}
	read_tracedat(td, way);
	tb_tracedat_close(td);
	if (way == WAY_CAPTURE || way == WAY_ALL)
		read_as_capture();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz_tracedat", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	file_size = size;
	if (size % WAYS == WAY_ALL) {
		setenv("TB_REPORT_THREADS", "2", 1);
		read_one_way(WAY_ALL);
		unsetenv("TB_REPORT_THREADS");
	} else {
		read_one_way((enum way)(size % WAYS));
	}
	return 0;
}
