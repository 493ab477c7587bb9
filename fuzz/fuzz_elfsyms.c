// SPDX-License-Identifier: MIT
/*
 * fuzz_elfsyms.c - libFuzzer target for the readers of user-space symbol
 * sources: the ELF symbol reader (src/util/elfsyms.c) and the objects
 * file parser (tb_usyms_load, src/decode/usyms.c).  Every input goes
 * through both.
 *
 * Checked beyond "no crash, no leak, no overread": a parsed object's
 * symbols are sorted, their names lie inside the string table, every
 * symbol is found again by its own address; a refusal names an offset
 * inside the input and a reason.  Objects files are only parsed: looking
 * an address up would open the files an input names.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/elfsyms.h"
#include "tracebuf/usyms.h"

#include "fuzz_check.h"

static void check_elf(const uint8_t *data, size_t size)
{
	struct elf_syms s;
	struct tb_problem err = {0};
	int rc = elf_syms_parse_mem(data, size, &s, &err);

	if (rc < 0) {
		CHECK(rc == -EINVAL || rc == -ENOMEM);
		CHECK(rc == -ENOMEM || (err.offset <= size && err.reason[0]));
		return;
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct elf_sym *sym = &s.syms[i], *found;
		uint64_t off;

		CHECK(sym->name < s.names_len);
		CHECK(strlen(elf_sym_name(&s, sym)) <= s.names_len - sym->name);
		CHECK(i == 0 || s.syms[i - 1].addr <= sym->addr);
		found = elf_syms_find(&s, sym->addr, &off);
		CHECK(found && found->addr == sym->addr && off == 0);
	}
	CHECK(s.build_id_len <= ELF_BUILD_ID_MAX);
	elf_syms_free(&s);
}

static void quiet(void *ctx, const struct tb_problem *d)
{
	size_t *len = ctx;

	CHECK(d->offset <= *len);
	CHECK(d->reason[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tb_usyms *u;

	check_elf(data, size);
	if (tb_usyms_load(&u, "objects", (const char *)data, size, quiet, &size) == 0) {
		CHECK(tb_usyms_objects(u) <= size / 10 + 1);
		tb_usyms_free(u);
	}
	return 0;
}
