// SPDX-License-Identifier: MIT
/*
 * fuzz_capture.c - libFuzzer target for the whole reading side: a capture
 * directory opened with tb_capture_open() (src/decode/capture.c, schema.c,
 * format.c) and printed with tb_report_write() (src/print/report.c,
 * render.c) to /dev/null.
 *
 * An input is a small archive of files (fuzz_archive.h) named by the first
 * ARCHIVE_CAPTURE_NAMES entries of its table; capture_pack.sh builds seeds
 * from real capture directories.
 *
 * Checked beyond "no crash, no leak, no overread, no hang": every problem
 * reported names a file inside the capture (or the capture itself) and an
 * offset no larger than that file, with a reason.
 */
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracebuf/capture.h"
#include "tracebuf/report.h"

#include "fuzz_archive.h"
#include "fuzz_check.h"
#include "fuzz_sink.h"

/* As in fuzz_format.c: libtraceevent's parser leaks on some malformed print fmts. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}


static char dir[64];

static void check_diag(void *ctx, const struct tb_problem *d)
{
	size_t n = strlen(dir);
	struct stat st;

	(void)ctx;
	CHECK(d->file && !strncmp(d->file, dir, n) && (d->file[n] == '\0' || d->file[n] == '/'));
	CHECK(memchr(d->reason, '\0', sizeof(d->reason)) && d->reason[0]);
	if (stat(d->file, &st) == 0 && S_ISREG(st.st_mode))
		CHECK(d->offset <= (uint64_t)st.st_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * report --count (its own walk and merge, pagecount.c) on the same pages:
 * every record the text printed or skipped, and the same sub-buffers and losses.
 */
static void check_count(struct tb_capture *c, FILE *null, const struct tb_report_totals *text)
{
	struct tb_report_opts count = {.count_only = true};
	struct tb_report_totals n;
	int rc = tb_report_write(c, null, &count, &n);

	CHECK(rc == 0 || rc == 1 || rc == -ENOMEM);
	if (rc >= 0)
		CHECK(n.events == text->events + text->bad_records && n.pages == text->pages &&
		      n.bad_pages == text->bad_pages && n.lost_lines == text->lost_lines &&
		      n.lost_events == text->lost_events);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tb_capture_opts opts = {.diag = check_diag};
	struct tb_report_totals t;
	struct tb_capture *c;
	FILE *null;
	int rc;

	if (!archive_mkdtemp(dir, "capture"))
		return 0;
	archive_unpack(dir, archive_names, ARCHIVE_CAPTURE_NAMES, data, size);
	rc = tb_capture_open(dir, &opts, &c);
	CHECK(rc == 0 || rc == -ENOENT || rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
	if (rc == 0) {
		null = fuzz_sink();
		rc = tb_report_write(c, null, NULL, &t);
		CHECK(rc == 0 || rc == 1 || rc == -ENOMEM);
		CHECK(t.unknown_events <= t.events && t.bad_pages <= t.pages);
		if (rc >= 0 && tb_capture_rewind(c) == 0)
			check_count(c, null, &t);
		tb_capture_close(c);
	}
	archive_remove(dir);
	return 0;
}
