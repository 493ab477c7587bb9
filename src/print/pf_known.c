// SPDX-License-Identifier: MIT
/*
 * pf_known.c - the print fmts of the scheduler's busiest events written
 * out in C, each run in place of its compiled program only when a
 * format's print fmt is byte for byte the kernel text below and its fields
 * have the sizes and signedness that text's C version reads.  Any other
 * text, however close, keeps its compiled program: nothing is guessed.
 *
 * Why: sched_switch and the wake-ups are most of the records of a
 * scheduler trace, and their fused programs (pf_specialise.c) spend more
 * on being a program than on their output - per directive a dispatch, a
 * room check, a load through the field's size and sign, a text prefix
 * copied from the pool: 790 instructions a sched_switch record, 430 a
 * wake-up.  Here the room is checked once, the text is constants and the
 * loads have their types.  The bytes come from the helpers the fused ops
 * print with (pf_out.h), and test_printfmt holds these functions against
 * the generic program on every captured record and on random ones.
 *
 * The texts are those of the kernels in tests/data/kernel (6.x; sched_switch
 * has had this text since TASK_REPORT_MAX became numbers in the format, the
 * wake-ups since 4.x).  A kernel with another text is a new entry here.
 */
#include <string.h>

#include "pf_out.h"
#include "ring/pagefmt.h"

/* A field a known text reads: its name, size in bytes, signedness. */
struct known_field {
	const char *name;
	uint32_t size;
	bool sign;
};

struct known {
	const char *text; /* the print fmt, from its opening quote on */
	void (*run)(const struct tb_printfmt *p, const uint8_t *rec, struct tb_strbuf *out);
	struct known_field fields[PF_KNOWN_FIELDS + 1]; /* ends with a NULL name */
	uint32_t max_len; /* the longest text run() writes */
};

/* Literal text: a fixed-size copy the compiler makes a store or two. */
#define PUT(w, s) (memcpy((w), (s), sizeof(s) - 1), (w) + sizeof(s) - 1)

/* %s of a char[16] comm: to its NUL or all 16 bytes (room: 16). */
static inline char *put_comm(char *w, const uint8_t *comm)
{
	size_t n = pf_strnlen_wide((const char *)comm, 16);

	memcpy(w, comm, 16);
	return w + n;
}

/* An int under %d (width 0) or %0Nd (zeros up to width bytes). */
static inline char *put_int(char *w, const uint8_t *field, unsigned width)
{
	return pf_put_dec_width(w, (uint64_t)(int64_t)(int32_t)tbf_get32(field), true, width);
}

/*
 * sched_switch's prev_state: (state & 0xff) ? __print_flags(state & 0xff,
 * "|", {1, "S"}, {2, "D"}, ... {0x80, "I"}) : "R", then "+" for bit 0x100.
 * Every bit of the mask has its entry, in order, so no hex remainder is
 * ever left for trace_print_flags_seq() to print.
 */
static inline char *put_prev_state(char *w, int64_t state)
{
	static const char letter[8] = {'S', 'D', 'T', 't', 'X', 'Z', 'P', 'I'};
	unsigned bits = (unsigned)state & 0xff;

	if (!bits) {
		*w++ = 'R';
	} else {
		for (unsigned i = 0; bits; i++, bits >>= 1) {
			if (!(bits & 1))
				continue;
			*w++ = letter[i];
			if (bits > 1)
				*w++ = '|';
		}
		/* the '|' after the last letter is not written: bits > 1 was false there */
	}
	if (state & 0x100)
		*w++ = '+';
	return w;
}

static void run_sched_switch(const struct tb_printfmt *p, const uint8_t *rec, struct tb_strbuf *out);
static void run_wakeup(const struct tb_printfmt *p, const uint8_t *rec, struct tb_strbuf *out);

static const struct known known[] = {
	{
		"\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", "
		"REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | "
		"0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? "
		"__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
		"0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
		"\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
		"{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | "
		"0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : "
		"\"\", REC->next_comm, REC->next_pid, REC->next_prio",
		run_sched_switch,
		{{"prev_comm", 16, false}, {"prev_pid", 4, true}, {"prev_prio", 4, true}, {"prev_state", 8, true},
		 {"next_comm", 16, false}, {"next_pid", 4, true}, {"next_prio", 4, true}, {NULL, 0, false}},
		/* text 79, two comms 32, four ints of at most 11 bytes, "S|D|T|t|X|Z|P|I+" 16 */
		79 + 32 + 44 + 16,
	},
	{
		"\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu",
		run_wakeup,
		{{"comm", 16, false}, {"pid", 4, true}, {"prio", 4, true}, {"target_cpu", 4, true}, {NULL, 0, false}},
		/* text 28, a comm 16, three ints of at most 11 bytes */
		28 + 16 + 33,
	},
};

/*
 * The cursor at out's end with room for max_len bytes; false on oom (the
 * buffer says so).  Inlined: called, it cost 26 instructions a record,
 * the cursor passed through memory.
 */
static inline __attribute__((always_inline)) bool begin(struct tb_strbuf *out, struct pf_cur *c, uint32_t max_len)
{
	if (!pf_cur_start(out))
		return false;
	*c = pf_cur_load(out);
	return pf_room(out, c, max_len + PF_POOL_PAD);
}

static void run_sched_switch(const struct tb_printfmt *p, const uint8_t *rec, struct tb_strbuf *out)
{
	const uint32_t *at = p->known_at;
	struct pf_cur c;

	if (!begin(out, &c, known[0].max_len))
		return;
	c.w = PUT(c.w, "prev_comm=");
	c.w = put_comm(c.w, rec + at[0]);
	c.w = PUT(c.w, " prev_pid=");
	c.w = put_int(c.w, rec + at[1], 0);
	c.w = PUT(c.w, " prev_prio=");
	c.w = put_int(c.w, rec + at[2], 0);
	c.w = PUT(c.w, " prev_state=");
	c.w = put_prev_state(c.w, (int64_t)tbf_get64(rec + at[3]));
	c.w = PUT(c.w, " ==> next_comm=");
	c.w = put_comm(c.w, rec + at[4]);
	c.w = PUT(c.w, " next_pid=");
	c.w = put_int(c.w, rec + at[5], 0);
	c.w = PUT(c.w, " next_prio=");
	c.w = put_int(c.w, rec + at[6], 0);
	pf_cur_sync(out, c);
}

/* sched_waking, sched_wakeup, sched_wakeup_new. */
static void run_wakeup(const struct tb_printfmt *p, const uint8_t *rec, struct tb_strbuf *out)
{
	const uint32_t *at = p->known_at;
	struct pf_cur c;

	if (!begin(out, &c, known[1].max_len))
		return;
	c.w = PUT(c.w, "comm=");
	c.w = put_comm(c.w, rec + at[0]);
	c.w = PUT(c.w, " pid=");
	c.w = put_int(c.w, rec + at[1], 0);
	c.w = PUT(c.w, " prio=");
	c.w = put_int(c.w, rec + at[2], 0);
	c.w = PUT(c.w, " target_cpu=");
	c.w = put_int(c.w, rec + at[3], 3);
	pf_cur_sync(out, c);
}

/*
 * The offset of k's field in f if f has it as k reads it: static, of k's
 * size and signedness (a comm: a char array), inside what the compiled
 * program already requires the record to hold (static_end).
 */
static bool field_at(const struct tb_printfmt *p, const struct known_field *k, uint32_t *at)
{
	const struct tb_format *f = p->f;

	for (size_t i = 0; i < f->nfields; i++) {
		const struct tb_schema_field *s = &f->fields[i];
		if (strcmp(s->name, k->name) != 0)
			continue;
		if (s->kind != TB_SCHEMA_FIELD_STATIC || s->size != k->size ||
		    (k->sign ? !s->is_signed : !(s->is_string && s->is_array)) ||
		    (uint64_t)s->offset + s->size > p->static_end)
			return false;
		*at = s->offset;
		return true;
	}
	return false;
}

void pf_known_attach(struct tb_printfmt *p)
{
	const struct tb_format *f = p->f;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct known *k = &known[i];
		uint32_t at[PF_KNOWN_FIELDS];
		size_t j;
		if (f->print_fmt_len != strlen(k->text) || memcmp(f->print_fmt, k->text, f->print_fmt_len) != 0)
			continue;
		for (j = 0; k->fields[j].name && field_at(p, &k->fields[j], &at[j]); j++)
			;
		if (k->fields[j].name)
			return; /* the text, but not the fields it was written for */
		memcpy(p->known_at, at, sizeof(at[0]) * j);
		p->known = k->run;
		return;
	}
}
