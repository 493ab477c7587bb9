// SPDX-License-Identifier: MIT
/*
 * gen_bad.c - build the damaged captures in tests/data/bad/ from the real
 * kernel capture cap-e e1 (149 trace_marker events of 36 bytes in two 4 KiB
 * sub-buffers: 112 + padding in the first, 37 in the second).
 *
 * Every case is a small capture directory: header_page, trace_clock,
 * formats/ and cpu0.raw, each damaged in exactly one way (see README.md).  Run from the
 * repository root:
 *
 *   cc -o /tmp/gen_bad tests/data/bad/gen_bad.c && /tmp/gen_bad
 *
 * The output is deterministic; the files are committed, so this only has to
 * run again if a case changes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SRC "tests/data/kernel/"
#define E1 SRC "cap-e-partial-and-padding/"
#define OUT "tests/data/bad/"
#define PAGE 4096
#define RECORD 36      /* bytes per marker record in e1 */
#define FIRST_DATA 16  /* file offset of page 0's first record */

static void die(const char *what, const char *path)
{
	fprintf(stderr, "gen_bad: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		die("cannot read", path);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("cannot read", path);
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

static void spill(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		die("cannot write", path);
}

static void mkdirs(const char *dir)
{
	char path[512];

	for (size_t i = 1; i <= strlen(dir); i++)
		if (dir[i] == '/' || dir[i] == '\0') {
			memcpy(path, dir, i);
			path[i] = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				die("cannot create", path);
		}
}

/* Copy a file from the real vectors into a case directory. */
static void copy(const char *from, const char *case_dir, const char *name)
{
	char path[512];
	size_t len;
	uint8_t *data = slurp(from, &len);

	snprintf(path, sizeof(path), OUT "%s/%s", case_dir, name);
	spill(path, data, len);
	free(data);
}

/* A case directory with e1's header_page, trace clock and print format. */
static void new_case(const char *name)
{
	char dir[512];

	snprintf(dir, sizeof(dir), OUT "%s/formats/ftrace", name);
	mkdirs(dir);
	copy(E1 "header_page", name, "header_page");
	copy(E1 "trace_clock", name, "trace_clock");
	copy(E1 "formats/ftrace/print.format", name, "formats/ftrace/print.format");
}

/*
 * Copy e1's file name into case_dir with one byte changed: the byte skip
 * bytes into the first occurrence of needle becomes c.
 */
static void copy_patched(const char *name, const char *case_dir, const char *needle, size_t skip, char c)
{
	char from[512], to[512];
	size_t len;
	char *text, *at;

	snprintf(from, sizeof(from), E1 "%s", name);
	snprintf(to, sizeof(to), OUT "%s/%s", case_dir, name);
	text = (char *)slurp(from, &len);
	at = strstr(text, needle);
	if (!at) {
		fprintf(stderr, "gen_bad: %s has no '%s'\n", from, needle);
		exit(1);
	}
	at[skip] = c;
	spill(to, text, len);
	free(text);
}

static void write_raw(const char *name, const uint8_t *raw, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), OUT "%s/cpu0.raw", name);
	spill(path, raw, len);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* File offset of marker record i of page 0. */
static size_t record_at(int i)
{
	return FIRST_DATA + (size_t)i * RECORD;
}

int main(void)
{
	size_t len, n;
	uint8_t *e1 = slurp(E1 "e1.cpu0.raw", &len), *raw;

	if (len != 2 * PAGE) {
		fprintf(stderr, "gen_bad: e1.cpu0.raw is not two sub-buffers\n");
		return 1;
	}
	raw = malloc(len + PAGE);

	/* 1. The raw file ends 1000 bytes into a third sub-buffer. */
	new_case("raw-partial");
	memcpy(raw, e1, len);
	memcpy(raw + len, e1, 1000);
	write_raw("raw-partial", raw, len + 1000);

	/* 2. Page 0's commit says 4100 data bytes; a 4 KiB page has 4080. */
	new_case("commit-beyond");
	memcpy(raw, e1, len);
	put32(raw + 8, 4100);
	write_raw("commit-beyond", raw, len);

	/* 3. Record 111 of page 0 claims 204 bytes; only 48 are committed. */
	new_case("record-crossing");
	memcpy(raw, e1, len);
	put32(raw + record_at(111), 0);       /* type_len 0: length in array[0] */
	put32(raw + record_at(111) + 4, 200); /* 4 + 200 bytes */
	write_raw("record-crossing", raw, len);

	/* 4. Record 50 of page 0 is a long record of length 0 (a naive reader loops). */
	new_case("zero-length");
	memcpy(raw, e1, len);
	put32(raw + record_at(50), 0);
	put32(raw + record_at(50) + 4, 0);
	write_raw("zero-length", raw, len);

	/* 5. Record 10 of page 0 has event id 999, which has no format. */
	new_case("unknown-id");
	memcpy(raw, e1, len);
	raw[record_at(10) + 4] = 999 & 0xff;
	raw[record_at(10) + 5] = 999 >> 8;
	write_raw("unknown-id", raw, len);

	/* 6. print.format: the ip field's offset is not a number. */
	new_case("bad-format");
	write_raw("bad-format", e1, len);
	copy_patched("formats/ftrace/print.format", "bad-format", "offset:8;", 7, 'x'); /* "offset:x;" */

	/* 7. Record 20 of page 0 claims to be sched_switch: 32 bytes, the format needs 64. */
	new_case("record-short");
	mkdirs(OUT "record-short/formats/sched");
	copy(SRC "cap-a-small-noloss/formats/sched/sched_switch.format", "record-short",
	     "formats/sched/sched_switch.format");
	memcpy(raw, e1, len);
	raw[record_at(20) + 4] = 372 & 0xff; /* sched_switch's ID in that format file */
	raw[record_at(20) + 5] = 372 >> 8;
	write_raw("record-short", raw, len);

	/* 8. Record 30 claims to be irq_handler_entry; its name string lies outside it. */
	new_case("dataloc-outside");
	mkdirs(OUT "dataloc-outside/formats/irq");
	copy(SRC "cap-a-small-noloss/formats/irq/irq_handler_entry.format", "dataloc-outside",
	     "formats/irq/irq_handler_entry.format");
	memcpy(raw, e1, len);
	raw[record_at(30) + 4] = 225 & 0xff; /* irq_handler_entry's ID */
	raw[record_at(30) + 5] = 225 >> 8;
	put32(raw + record_at(30) + 4 + 12, (16u << 16) | 28u); /* 16 bytes at 28: past 32 */
	write_raw("dataloc-outside", raw, len);

	/* 9. header_page of a 32-bit kernel: a 4-byte commit word. */
	new_case("header-page-32bit");
	write_raw("header-page-32bit", e1, len);
	copy_patched("header_page", "header-page-32bit", "local_t commit;\toffset:8;\tsize:8;",
		     strlen("local_t commit;\toffset:8;\tsize:"), '4');

	/*
	 * 10. print.format whose print fmt crashes libtraceevent 1.7.1's parser
	 * (an operator after an unknown field; found by fuzz/fuzz_format.c).
	 */
	new_case("tep-crash");
	write_raw("tep-crash", e1, len);
	{
		uint8_t *text = slurp(E1 "formats/ftrace/print.format", &n);
		char *at = strstr((char *)text, "print fmt:");
		FILE *f;
		if (!at) {
			fprintf(stderr, "gen_bad: print.format has no print fmt\n");
			return 1;
		}
		f = fopen(OUT "tep-crash/formats/ftrace/print.format", "wb");
		if (!f || fwrite(text, 1, (size_t)(at - (char *)text), f) != (size_t)(at - (char *)text) ||
		    fputs("print fmt: \"vec=%u [action=%s]\", REC->ip, "
			  "__print_symbolic(REC->ve^, { 0, \"HI\" }, { 1, \"TIMER\" })\n", f) < 0 ||
		    fclose(f))
			die("cannot write", "tep-crash/formats/ftrace/print.format");
		free(text);
	}

	free(raw);
	free(e1);
	return 0;
}
