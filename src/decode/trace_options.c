// SPDX-License-Identifier: MIT
/*
 * trace_options.c - the `trace_options` words that change the `trace`
 * text, read as the kernel reads a write to that file: "WORD" sets the
 * option, "noWORD" clears it, the last word about an option wins.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "tracebuf/capture.h"

/*
 * Each option, and whether its TB_TOPT_* bit is set when the option is on
 * (irq-info and context-info are on by default: their bits say "off").
 */
static const struct {
	const char *name;
	unsigned bit;
	bool bit_means_off;
} known[] = {
	{"irq-info", TB_TOPT_NO_IRQ_INFO, true},
	{"context-info", TB_TOPT_NO_CONTEXT_INFO, true},
	{"record-tgid", TB_TOPT_RECORD_TGID, false},
	{"raw", TB_TOPT_RAW, false},
	{"hex", TB_TOPT_HEX, false},
	{"bin", TB_TOPT_BIN, false},
	{"latency-format", TB_TOPT_LATENCY_FORMAT, false},
	{"fields", TB_TOPT_FIELDS, false},
	{"verbose", TB_TOPT_VERBOSE, false},
	{"sym-offset", TB_TOPT_SYM_OFFSET, false},
	{"sym-addr", TB_TOPT_SYM_ADDR, false},
	{"print-parent", TB_TOPT_NO_PRINT_PARENT, true},
	{"annotate", TB_TOPT_NO_ANNOTATE, true},
	{"printk-msg-only", TB_TOPT_PRINTK_MSG_ONLY, false},
	{"trace_printk", TB_TOPT_NO_TRACE_PRINTK, true},
	{"sym-userobj", TB_TOPT_SYM_USEROBJ, false},
};

#define NKNOWN (sizeof(known) / sizeof(known[0]))

static const char word_separators[] = " \t\r\n,";

/* The entry of the option the word of len bytes names, NULL if none. */
static int find_option(const char *word, size_t len)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (strlen(known[i].name) == len && !memcmp(known[i].name, word, len))
			return (int)i;
	return -1;
}

/* Apply one word; false when it names no option of the table. */
static bool apply_word(const char *word, size_t len, unsigned *bits)
{
	bool on = !(len > 2 && !memcmp(word, "no", 2));
	int i = find_option(on ? word : word + 2, on ? len : len - 2);

	if (i < 0)
		return false;
	if (on != known[i].bit_means_off)
		*bits |= known[i].bit;
	else
		*bits &= ~known[i].bit;
	return true;
}

int tb_topt_apply(const char *words, bool strict, unsigned *bits, const char **bad, size_t *bad_len)
{
	const char *p = words;

	if (!words || !bits)
		return -EINVAL;
	for (p += strspn(p, word_separators); *p; p += strspn(p, word_separators)) {
		size_t len = strcspn(p, word_separators);

		if (!apply_word(p, len, bits) && strict) {
			if (bad)
				*bad = p;
			if (bad_len)
				*bad_len = len;
			return -EINVAL;
		}
		p += len;
	}
	return 0;
}

const char *tb_topt_name(unsigned bit)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (known[i].bit == bit)
			return known[i].name;
	return NULL;
}
