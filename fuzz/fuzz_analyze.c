// SPDX-License-Identifier: MIT
/*
 * fuzz_analyze.c - libFuzzer target for the analyses of src/analyze: a
 * capture directory (fuzz_archive.h, every name of its table) opened with tb_capture_open() and
 * given to tb_offcpu_run() with its folded output and flame graph,
 * tb_chrome_json_write() and tb_ringsvg_write(), all to /dev/null.
 *
 * Checked beyond "no crash, no leak, no overread, no hang": the off-CPU
 * totals are consistent (blocked + waiting within the time off CPU, no
 * more stacked or woken intervals than intervals, lines sum to the time
 * counted), and the JSON export counts no more events than records.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/capture.h"
#include "tracebuf/chrome.h"
#include "tracebuf/offcpu.h"
#include "tracebuf/ringsvg.h"

#include "fuzz_archive.h"
#include "fuzz_check.h"
#include "fuzz_sink.h"

/* As in fuzz_format.c: libtraceevent's parser leaks on some malformed print fmts. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}


static void quiet(void *ctx, const struct tb_problem *d)
{
	(void)ctx, (void)d;
}

static void check_offcpu(struct tb_capture *c, FILE *null)
{
	struct tb_offcpu_totals t;
	struct tb_offcpu *r;
	struct tb_offcpu_opts blocked = {.blocked_only = true};
	int rc = tb_offcpu_run(c, NULL, &r, &t);

	CHECK(rc == 0 || rc == -ENOENT || rc == -ENOMEM);
	if (rc != 0)
		return;
	CHECK(t.kernel_stacks <= t.intervals && t.user_stacks <= t.intervals && t.woken <= t.intervals);
	CHECK(t.preempted <= t.intervals && t.intervals <= t.switches);
	CHECK(t.blocked_ns <= t.off_ns && t.runq_ns <= t.off_ns - t.blocked_ns);
	size_t n;
	uint64_t sum = 0;
	const struct tb_folded *lines = tb_offcpu_stacks(r, &n);
	for (size_t i = 0; i < n; i++) {
		CHECK(lines[i].stack && !strchr(lines[i].stack, '\n'));
		sum += lines[i].value;
	}
	CHECK(sum == t.off_ns);
	CHECK(tb_offcpu_write_folded(r, null) == 0);
	CHECK(tb_flamegraph_svg(lines, n, NULL, null) == 0);
	tb_offcpu_free(r);
	if (tb_capture_rewind(c) == 0) {
		rc = tb_offcpu_run(c, &blocked, &r, &t);
		CHECK(rc == 0 || rc == -ENOENT || rc == -EINVAL || rc == -ENOMEM);
		tb_offcpu_free(r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	struct tb_capture_opts opts = {.diag = quiet};
	struct tb_chrome_totals ct;
	struct tb_capture *c;
	FILE *null;

	if (!archive_mkdtemp(dir, "analyze"))
		return 0;
	archive_unpack(dir, archive_names, ARCHIVE_NAMES, data, size);
	null = fuzz_sink();
	if (tb_capture_open(dir, &opts, &c) == 0) {
		check_offcpu(c, null);
		if (tb_capture_rewind(c) == 0) {
			int rc = tb_chrome_json_write(c, null, NULL, &ct);
			CHECK(rc == 0 || rc == -ENOMEM);
			CHECK(ct.cpu_slices + ct.calls + ct.instants <= ct.records + ct.cpu_slices);
		}
		if (tb_capture_rewind(c) == 0) {
			int rc = tb_ringsvg_write(c, NULL, null);
			CHECK(rc == 0 || rc == -ENOMEM);
		}
		tb_capture_close(c);
	}
	archive_remove(dir);
	return 0;
}
