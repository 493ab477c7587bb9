// SPDX-License-Identifier: MIT
/*
 * test_filter - tracebuf/filter.h without a kernel: generated records of a
 * sched_switch-like event run through compiled expressions, each verdict
 * checked against the same condition written as C in this file; the
 * kernel's quirks (values cut to the field's size, a '*x' suffix on a char
 * array, a leading digit making '~' literal, a trailing &&) spelled out;
 * bounds on short records and __data_loc strings; and the error messages.
 * The live kernel's own verdicts are test_filter_oracle's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/tap.h"
#include "tracebuf/filter.h"
#include "lib/filter_fields.h"

struct rec {
	uint16_t type;
	uint8_t flags, preempt;
	int32_t pid;
	char prev_comm[16];
	int32_t prev_pid, prev_prio;
	int64_t prev_state;
	char next_comm[16];
	int32_t next_pid, next_prio;
	uint32_t name_loc; /* __data_loc char[] name */
	uint8_t small;     /* u8 */
	int8_t tiny;       /* s8 */
	char text[32];     /* name's bytes */
};

static const struct tb_filter_field fields[] = {
    SCHED_SWITCH_FILTER_FIELDS,
    {"name", 64, 4, TB_FILTER_DATA_LOC, false},
    {"small", 68, 1, TB_FILTER_INT, false},
    {"tiny", 69, 1, TB_FILTER_INT, true},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const char *const comms[] = {"bash", "sleepy", "tbf-worker", "x", "kworker/0:1", "abcdefghijklmno"};

static void make(struct rec *r, unsigned i)
{
	memset(r, 0, sizeof(*r));
	r->pid = (int32_t)(i * 7 % 50) - 5;
	strcpy(r->prev_comm, comms[i % 6]);
	strcpy(r->next_comm, comms[(i / 6) % 6]);
	r->prev_pid = (int32_t)(i % 9) - 2;
	r->prev_prio = (int32_t)(i % 140) - 10;
	r->prev_state = (int64_t)(i % 5) - 1;
	r->next_pid = (int32_t)(i * 13 % 300);
	r->next_prio = (int32_t)(i % 3);
	r->small = (uint8_t)(i * 37);
	r->tiny = (int8_t)(i * 37);
	strcpy(r->text, comms[(i / 3) % 6]);
	r->name_loc = (uint32_t)offsetof(struct rec, text) | (uint32_t)(strlen(r->text) + 1) << 16;
}

static bool suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

struct case_ {
	const char *expr;
	bool (*want)(const struct rec *r);
};

static bool w1(const struct rec *r) { return r->prev_pid == 0 && !strncmp(r->next_comm, "bash", 4); }
static bool w2(const struct rec *r) { return !(r->prev_state & 2) || r->next_pid > 0x100; }
static bool w3(const struct rec *r) { return r->prev_prio < -1 || (r->pid >= 10 && r->pid <= 20); }
static bool w4(const struct rec *r) { return !strcmp(r->prev_comm, "sleepy") != !strcmp(r->next_comm, "x"); }
static bool w5(const struct rec *r) { return strstr(r->text, "ee") || suffix(r->text, "er"); }
static bool w6(const struct rec *r) { return r->small > 200 && r->tiny < -50; }
static bool w7(const struct rec *r) { return !(r->prev_pid == 1 || r->prev_pid == 2) && r->next_prio != 0; }
static bool w8(const struct rec *r) { return strchr("bs", r->next_comm[0]) && r->next_comm[1] && strcmp(r->next_comm, "x"); }
static bool w9(const struct rec *r) { return r->prev_pid == 0; }

static const struct case_ cases[] = {
    {"prev_pid == 0 && next_comm ~ \"bash*\"", w1},
    {"!(prev_state & 2) || next_pid > 0x100", w2},
    {"prev_prio < -1 || (common_pid >= 10 && common_pid <= 012 + 0)", NULL}, /* refused: '+' */
    {"prev_prio < -1 || (common_pid >= 10 && common_pid <= 024)", w3},
    {"(prev_comm == \"sleepy\" && next_comm != \"x\") || (prev_comm != 'sleepy' && next_comm == 'x')", w4},
    {"name ~ \"*ee*\" || name ~ \"*er\"", w5},
    {"small > 200 && tiny < -50", w6},
    {"!(prev_pid == 1 || prev_pid == 2) && next_prio != 0", w7},
    {"next_comm ~ \"[bs]?*\" && next_comm ~ \"!x\"", w8},
    {"prev_pid == 4294967296", w9}, /* cut to 32 bits: 0 */
    {"prev_pid == 0 &&", w9},       /* a final && is ignored */
};

static void verdicts(void)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct tb_filter *f = NULL;
		struct tb_filter_error e = {0};
		int rc = tb_filter_compile(cases[c].expr, fields, NFIELDS, &f, &e);
		unsigned wrong = 0, kept = 0;
		if (!cases[c].want) {
			ok(rc == -EINVAL, "'%s' refused: %s at %zu", cases[c].expr, e.reason, e.pos);
			continue;
		}
		if (!ok(rc == 0, "'%s' compiles", cases[c].expr)) {
			diag("%s at %zu", e.reason, e.pos);
			continue;
		}
		for (unsigned i = 0; i < 2000; i++) {
			struct rec r;
			make(&r, i);
			bool got = tb_filter_match(f, &r, sizeof(r), NULL);
			wrong += got != cases[c].want(&r);
			kept += got;
		}
		ok(wrong == 0 && kept > 0 && kept < 2000, "'%s': %u of 2000 kept, %u verdicts wrong", cases[c].expr,
		   kept, wrong);
		tb_filter_free(f);
	}
}

/* One verdict on one record. */
static int verdict(const char *expr, const void *rec, uint32_t len, const struct tb_filter_env *env)
{
	struct tb_filter *f = NULL;
	int rc = tb_filter_compile(expr, fields, NFIELDS, &f, NULL);
	bool v;

	if (rc < 0)
		return rc;
	v = tb_filter_match(f, rec, len, env);
	tb_filter_free(f);
	return v;
}

static void quirks(void)
{
	struct rec r;
	struct tb_filter_env env = {.cpu = 3, .comm = "worker"};

	make(&r, 0);
	strcpy(r.next_comm, "bash");
	/* A suffix on a char array is looked for at the array's end (its 15th byte back), as the kernel does. */
	is_int(verdict("next_comm ~ \"*sh\"", &r, sizeof(r), NULL), 0, "'*sh' does not find the end of a char[16] holding bash");
	strcpy(r.next_comm, "aaaaaaaaaaabash"); /* 15 characters and the NUL */
	is_int(verdict("next_comm ~ \"*sh\"", &r, sizeof(r), NULL), 1, "... it does when the text fills the array");
	strcpy(r.next_comm, "1*");
	is_int(verdict("next_comm ~ \"1*\"", &r, sizeof(r), NULL), 1, "a pattern starting with a digit is matched whole");
	is_int(verdict("next_comm == \"1\"", &r, sizeof(r), NULL), 0, "== compares the whole text");
	is_int(verdict("cpu == 3 && CPU & 1", &r, sizeof(r), &env), 0, "& on the CPU is always false");
	is_int(verdict("common_cpu >= 3 && comm ~ \"w*\"", &r, sizeof(r), &env), 1, "CPU and COMM come from env");
	is_int(verdict("COMM == \"worker\"", &r, sizeof(r), NULL), 0, "no env: COMM is empty");
	r.small = 0xff;
	is_int(verdict("small == 511", &r, sizeof(r), NULL), 1, "a value is cut to the field's size (511 -> 0xff)");
	r.tiny = -1;
	is_int(verdict("tiny == 255", &r, sizeof(r), NULL), 1, "... and extended as the field is (s8 255 == -1)");
	/* Bounds: short record, __data_loc outside it. */
	is_int(verdict("prev_pid == 0 || next_prio == 0", &r, 40, NULL), 0, "a record without the fields read fails");
	r.name_loc = 60 | 100u << 16;
	is_int(verdict("name ~ \"*\"", &r, sizeof(r), NULL), 0, "a __data_loc reaching past the record fails");
	is_int(tb_filter_match(NULL, &r, 0, NULL), 1, "no filter keeps everything");
}

static void errors(void)
{
	static const struct {
		const char *expr;
		size_t pos;
		const char *msg;
	} bad[] = {
	    {"", 0, "No filter found"},
	    {"prev_pid", 8, "Invalid operator"},
	    {"prev_pid == 1 || bogus == 2", 17, "Field not found"},
	    {"name < \"x\"", 7, "Illegal operation for field type"},
	    {"(((prev_pid == 1)) && (next_pid == 2)", 0, "Too many '('"},
	    {"prev_pid == 1 && && next_pid == 2", 17, "Field not found"},
	    {"prev_pid == +1", 12, "Invalid value (did you forget quotes)?"},
	    {"prev_pid == 0x1234567890123456789012", 12, "Operand too long"},
	};
	char text[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tb_filter *f = NULL;
		struct tb_filter_error e = {0};
		int rc = tb_filter_compile(bad[i].expr, fields, NFIELDS, &f, &e);
		ok(rc == -EINVAL && e.pos == bad[i].pos && !strncmp(e.reason, bad[i].msg, strlen(bad[i].msg)) && !f,
		   "'%s': %s at %zu", bad[i].expr, e.reason, e.pos);
	}
	struct tb_filter_error e = {.pos = 3, .reason = "Field not found"};
	tb_filter_error_text("ab cd", &e, text, sizeof(text));
	is_str(text, "ab cd\n   ^\nparse_error: Field not found\n", "the error as the kernel shows it");
	ok(tb_filter_compile(NULL, fields, NFIELDS, &(struct tb_filter *){0}, NULL) == -EINVAL, "NULL expression: -EINVAL");
}

int main(void)
{
	verdicts();
	quirks();
	errors();
	return done_testing();
}
