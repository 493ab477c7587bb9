// SPDX-License-Identifier: MIT
/*
 * fuzz_btf.c - libFuzzer target for the BTF reader (src/decode/btf.c).
 *
 * The input is a BTF blob.  A blob that parses is asked for enum values
 * and type sizes by every identifier-like word of the input (so the names
 * its string section holds are looked up), as "struct", "union" and "enum"
 * names and as typedef and base type names, which walks typedef chains,
 * qualifiers and arrays however the input links them.
 *
 * Checked beyond "no crash, no leak, no overread, no hang": a refusal
 * names an offset inside the input and a reason; a blob that parses once
 * parses again to the same counts (the parser keeps no state).
 *
 * Seeds (corpus/btf/, made by gen_btf_seeds.py from the running kernel's
 * BTF): the kernel's first 200 types with their names, that blob cut in
 * half, and a type section that ends inside a record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/btf.h"

#include "fuzz_check.h"

#define MAX_WORDS 64

static bool is_word_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Each word of the input asked every way a print fmt could use it. */
static void ask_words(const struct tb_btf *b, const uint8_t *data, size_t len)
{
	static const char *const prefixes[] = {"", "struct ", "union ", "enum ", "const ", ""};
	size_t words = 0;

	for (size_t i = 0; i < len && words < MAX_WORDS;) {
		char name[80], type[96];
		size_t n = 0;
		int64_t value;
		uint64_t size;

		while (i < len && !is_word_byte(data[i]))
			i++;
		while (i < len && is_word_byte(data[i]) && n + 1 < sizeof(name))
			name[n++] = (char)data[i++];
		while (i < len && is_word_byte(data[i]))
			i++;
		if (n == 0)
			continue;
		name[n] = '\0';
		words++;
		tb_btf_enum_value(b, name, &value);
		for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
			snprintf(type, sizeof(type), "%s%s%s", prefixes[p], name,
				 p == sizeof(prefixes) / sizeof(prefixes[0]) - 1 ? " *" : "");
			if (tb_btf_type_size(b, type, &size))
				CHECK(tb_btf_has_type(b, type));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tb_btf *b = NULL, *again = NULL;
	struct tb_problem err = {0};
	int rc = tb_btf_parse(data, len, &b, &err);
	uint64_t size;

	if (rc < 0) {
		CHECK(rc == -EINVAL || rc == -ENOMEM);
		CHECK(b == NULL);
		if (rc == -EINVAL)
			CHECK(err.offset <= len && err.reason[0]);
		return 0;
	}
	CHECK(b != NULL);
	CHECK(tb_btf_parse(data, len, &again, &err) == 0);
	CHECK(tb_btf_type_count(again) == tb_btf_type_count(b));
	CHECK(tb_btf_enum_count(again) == tb_btf_enum_count(b));
	ask_words(b, data, len);
	CHECK(tb_btf_type_size(b, "void *", &size) && size == 8);
	tb_btf_free(again);
	tb_btf_free(b);
	return 0;
}
