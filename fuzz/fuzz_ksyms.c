// SPDX-License-Identifier: MIT
/*
 * fuzz_ksyms.c - libFuzzer target for the line parsers of kernel lookup
 * files: kallsyms (src/decode/ksyms.c), printk_formats
 * (src/decode/kstrings.c), the constants file (src/decode/constants.c) and
 * a capture's proc_maps (src/decode/usermaps.c).
 *
 * Every input goes through all three parsers, so any seed can mutate into
 * any of the files.  Checked beyond "no crash, no leak, no overread": every
 * problem is reported with an offset inside the input and a reason; a
 * kallsyms table answers lookups at and between its symbols with a symbol
 * whose start is not above the address and, when its size is known, whose
 * end is above it; printk strings are found at the addresses listed.
 *
 * Seeds (corpus/ksyms/): the kallsyms subset of cap-g-kernel-printers, a
 * piece of a real printk_formats and a constants file written for
 * hrtimer_start and mm_page_alloc, and proc_maps lines of two processes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/constants.h"
#include "decode/ksyms.h"
#include "decode/kstrings.h"
#include "decode/usermaps.h"

#include "fuzz_check.h"

static void check_diag(void *ctx, const struct tb_problem *d)
{
	size_t *len = ctx;

	CHECK(d->offset <= *len);
	CHECK(memchr(d->reason, '\0', sizeof(d->reason)) && d->reason[0]);
}

/* Hex numbers of the input (addresses it lists), to look up. */
static size_t addresses(const uint8_t *data, size_t len, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < max;) {
		uint64_t v = 0;
		int digits = 0;
		while (i < len && digits < 16) {
			uint8_t c = data[i];
			int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
			if (d < 0)
				break;
			v = v << 4 | (uint64_t)d;
			digits++, i++;
		}
		if (digits >= 4)
			out[n++] = v;
		i += digits == 0;
	}
	return n;
}

static void kallsyms(const uint8_t *data, size_t len, const uint64_t *addr, size_t n)
{
	struct tb_ksyms *k = NULL;
	int rc = tb_ksyms_parse("k", (const char *)data, len, check_diag, &len, &k);

	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOENT || rc == -ENOMEM);
	CHECK((k != NULL) == (rc == 0 || rc == -EINVAL));
	for (size_t i = 0; k && i < n; i++) {
		for (uint64_t d = 0; d < 3; d++) {
			struct tb_ksym s;
			uint64_t a = addr[i] + d * 0x10 - 1;
			if (!tb_ksyms_lookup(k, a, &s))
				continue;
			CHECK(s.name && s.name[0] && s.start <= a);
			CHECK(s.size == 0 || a - s.start < s.size);
		}
	}
	tb_ksyms_free(k);
}

static void printk_formats(const uint8_t *data, size_t len, const uint64_t *addr, size_t n)
{
	struct tb_kstrings *k = NULL;
	int rc = tb_kstrings_parse("p", (const char *)data, len, check_diag, &len, &k);

	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	for (size_t i = 0; k && i < n; i++) {
		const char *s = tb_kstrings_find(k, addr[i]);
		CHECK(!s || strlen(s) <= len);
	}
	tb_kstrings_free(k);
}

static void constants(const uint8_t *data, size_t len)
{
	struct tb_constants *c = tb_constants_new();
	int64_t v;
	uint64_t size;

	if (!c)
		return;
	CHECK(tb_constants_parse(c, "c", (const char *)data, len, check_diag, &len) != -ERANGE);
	tb_constants_value(c, "HRTIMER_MODE_ABS", &v);
	tb_constants_type_size(c, "struct page", &size);
	tb_constants_free(c);
}

/*
 * proc_maps: a failure names a line start inside the input; every lookup
 * answers 1 (a mapping, its path a string), 0 or -ESRCH, for the tgids the
 * input's numbers name and for addresses around the ones it lists.
 */
static void proc_maps(const uint8_t *data, size_t len, const uint64_t *addr, size_t n)
{
	struct tb_usermaps *m = tb_usermaps_new(false);
	size_t bad = 0;
	int rc;

	if (!m)
		return;
	rc = tb_usermaps_load(m, (const char *)data, len, &bad);
	CHECK(rc == 0 || rc == -ENOMEM || (rc == -EINVAL && bad < len));
	for (size_t i = 0; i < n; i++) {
		for (uint32_t tgid = 0; tgid < 3; tgid++) {
			const char *path = NULL;
			uint64_t start;
			int found = tb_usermaps_find(m, (uint32_t)addr[i] + tgid, addr[i] - 1, &start, &path);
			CHECK(found == 1 || found == 0 || found == -ESRCH);
			CHECK(found != 1 || !path || strlen(path) <= len);
		}
	}
	tb_usermaps_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint64_t addr[64];
	size_t n = addresses(data, len, addr, 64);

	kallsyms(data, len, addr, n);
	printk_formats(data, len, addr, n);
	constants(data, len);
	proc_maps(data, len, addr, n);
	return 0;
}
