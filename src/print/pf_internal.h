/* SPDX-License-Identifier: MIT */
/*
 * pf_internal.h - the compiled form of a print fmt, shared by the compiler
 * (pf_compile.c) and the interpreter (pf_run.c).
 *
 * A program is a flat array of ops run from first to last with a value
 * stack: literal text, loads from the record, C arithmetic with 64-bit
 * values, forward jumps (?:, &&, ||) and one PRINT per directive of the
 * format string.  Every value on the stack is its C value sign- or
 * zero-extended to 64 bits according to its C type, so the arithmetic ops
 * only need the width and signedness of the type they compute in.
 * Nothing recurses at run time, and jumps only go forward, so a program
 * always ends.
 *
 * The compiler emits the generic ops above; pf_specialise.c then fuses the
 * common shapes (a field printed under a plain directive, a string field,
 * a field through __print_symbolic, literal text) into single ops that
 * do the whole directive with its flags decided at compile time (the
 * OP_F_* codes and the text prefix of the ops that print).  Both forms
 * print the same bytes: the fuzz target and tests/test_printfmt.c compare
 * them.
 */
#ifndef TRACEBUF_PF_INTERNAL_H
#define TRACEBUF_PF_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "kvsprintf.h"
#include "printfmt.h"

#define PF_NEST_MAX 256  /* syntactic nesting the compiler accepts */
#define PF_STACK_MAX 288 /* values on the run-time stack (nesting + a few per level) */
#define PF_LOCALS_MAX 16 /* variables of ({ ... }) blocks, all blocks together */
#define PF_KNOWN_FIELDS 8 /* fields a print fmt of pf_known.c reads */

enum pf_code {
	OP_TEXT,      /* append pool[a .. a+b) */
	OP_CONST,     /* push imm */
	OP_STR,       /* push the literal pool[a .. a+b) (NUL-terminated in the pool) */
	OP_FIELD,     /* push the size-byte field at a (sign-extended if sign) */
	OP_FIELD_MEM, /* push record bytes a .. a+b (b == 0: to the end) */
	OP_DYN_MEM,   /* push the data of the dynamic field at a (mode: PF_DYN_*) */
	OP_DYN_LEN,   /* push the length of the dynamic field at a */
	OP_LOCAL_GET, /* push local a */
	OP_LOCAL_SET, /* pop into local a */
	OP_CONVERT,   /* top to the type (size, sign) */
	OP_BOOL,      /* top = top != 0 */
	OP_NEG,       /* top = -top in (size, sign) */
	OP_NOT,       /* top = ~top in (size, sign) */
	OP_LNOT,      /* top = !top */
	OP_BIN,       /* binary operator mode (PF_B_*), in (size, sign); b = pointer scale */
	OP_INDEX,     /* pop index, pop memory: push element of size bytes */
	OP_JUMP,      /* forward by a ops */
	OP_JZ,        /* pop; forward by a if zero */
	OP_AND_SC,    /* top zero: top = 0, forward by a; else pop */
	OP_OR_SC,     /* top non-zero: top = 1, forward by a; else pop */
	OP_FLAGS,     /* pop value: __print_flags of table a */
	OP_SYMBOLIC,  /* pop value: __print_symbolic of table a */
	OP_HEX,       /* pop length, pop memory: __print_hex (mode 1: __print_hex_str) */
	OP_ARRAY,     /* pop count, pop memory: __print_array with element size a */
	OP_BITMASK,   /* pop memory: its bits as %*pb */
	OP_PRINT,     /* pop argument(s), print with spec a (mode: PF_PRINT_*) */
	OP_NOP,
	OP_END,
	/*
	 * Fused ops (pf_specialise.c).  Each op that prints starts with its
	 * text prefix pool[text .. text+text_len); so do OP_PRINT and OP_END.
	 * "V" is the field at a (size, sign) & imm: what OP_FIELD pushes,
	 * masked by a constant.
	 */
	OP_F_NUM,        /* V as a number: mode PF_NUM_*, fmt b, spec */
	OP_F_DEC,        /* V in decimal (mode 1: signed), zero-padded to b bytes */
	OP_F_HEX,        /* V in lower-case hex, zero-padded to b <= 16 digits */
	OP_F_STR,        /* %s of record bytes a .. a+b (b == 0: to the end), at most imm; spec if padded */
	OP_F_DSTR,       /* %s of the dynamic field at a (size: PF_DYN_*), at most imm; spec if padded */
	OP_F_SYMBOLIC,   /* __print_symbolic of V with table b, under a plain %s */
	OP_F_FLAGS,      /* __print_flags of V with table b, under a plain %s; V zero: the alt text */
	OP_F_SELECT,     /* V non-zero: the lit text, else the alt text */
	OP_F_PRINT,      /* the field at a (size, sign) printed as OP_PRINT mode does with spec */
	OP_SYMBOLIC_OUT, /* pop value: __print_symbolic of table b under a plain %s */
	OP_FLAGS_OUT,    /* pop value: __print_flags of table b under a plain %s */
	OP_SELECT_STR,   /* pop: non-zero prints the lit text, zero the alt text */
	OP_NUM,          /* pop, cut to (size, sign) as the directive reads it, print as OP_F_NUM */
	OP_FIELD_AND,    /* push V (a value already of the operator's type) */
	OP_FIELD_BIN,    /* push field a (size, sign) OP imm: operator mode in (b & 0xff, b >> 8 sign) */
};

/* OP_F_NUM: how the number is printed. */
enum {
	PF_NUM_DEC,   /* decimal; fmt: KV_SIGN | KV_LEFT | KV_ZEROPAD | width << 8 */
	PF_NUM_HEX,   /* hex, lower case; fmt as for PF_NUM_DEC */
	PF_NUM_HEXU,  /* hex, upper case */
	PF_NUM_SPEC,  /* kv_number() under spec */
};
#define PF_FAST_WIDTH 64 /* widest padding the fast number formats do themselves */
/*
 * OP_F_STR / OP_F_DSTR: mode.  PF_STR_WIDE: plain, and the field's bytes
 * rounded up to 16 lie inside static_end, so they are read 16 at a time.
 */
enum { PF_STR_PLAIN, PF_STR_SPEC, PF_STR_WIDE };

/* How OP_BIN finds its operands. */
enum { PF_BOTH, PF_IMM_RIGHT, PF_IMM_LEFT };

enum pf_binop {
	PF_B_ADD, PF_B_SUB, PF_B_MUL, PF_B_DIV, PF_B_MOD, PF_B_SHL, PF_B_SHR,
	PF_B_AND, PF_B_OR, PF_B_XOR, PF_B_EQ, PF_B_NE, PF_B_LT, PF_B_GT, PF_B_LE, PF_B_GE,
	PF_B_PADD,  /* pointer + integer * scale */
	PF_B_PSUB,  /* pointer - integer * scale */
	PF_B_PDIFF, /* (pointer - pointer) / scale */
};

/* OP_DYN_MEM / OP_DYN_LEN: which kind of dynamic field, and its size. */
enum { PF_DYN_LOC4, PF_DYN_LOC2, PF_DYN_REL4 };

/* OP_PRINT: what the argument is and how it is printed. */
enum {
	PF_PRINT_NUM,     /* integer under a number directive */
	PF_PRINT_CHAR,    /* %c */
	PF_PRINT_STR,     /* %s of memory, output text or a kernel address */
	PF_PRINT_PTR_VAL, /* %p-family printing the address */
	PF_PRINT_PTR_MEM, /* %p-family printing the bytes */
};

struct pf_op {
	uint8_t code;  /* enum pf_code */
	uint8_t mode;
	uint8_t size;  /* bytes of the type computed in / loaded */
	uint8_t sign;  /* that type is signed */
	uint32_t a, b;
	uint32_t spec;           /* fused ops: their directive (specs[]) */
	uint32_t text, text_len; /* ops that print: literal text before (pool) */
	uint32_t lit, lit_len;   /* the selects: text for a non-zero value (pool) */
	uint32_t alt, alt_len;   /* the selects, OP_F_FLAGS: text for zero (pool) */
	uint64_t imm;
};

/*
 * A value: an integer (where == PF_INT), bytes of the record or of a
 * literal (PF_MEM: p, n), or text a helper appended to the output buffer
 * from offset u on (PF_OUT).
 */
enum { PF_INT, PF_MEM, PF_OUT };
struct pf_val {
	uint64_t u;
	const uint8_t *p;
	uint32_t n;
	uint8_t where;
};

/* One {value, "name"} entry of __print_flags / __print_symbolic. */
struct pf_sym {
	uint64_t value;
	uint32_t name, name_len; /* in the pool */
};

struct pf_table {
	uint32_t first, count; /* entries in syms[] */
	uint32_t delim, delim_len; /* __print_flags only */
	/*
	 * __print_symbolic with small values: direct[direct_first + v] is
	 * 1 + the entry the kernel's scan would stop at for value v (0: none),
	 * for v < direct_len.  direct_len 0: scan.
	 */
	uint32_t direct_first, direct_len;
	/*
	 * An entry's value is a name the trace does not give (an enum of a
	 * trace.dat read without BTF): the entry's value is all ones and the
	 * table prints as libtraceevent prints it, which is what this event
	 * printed by libtraceevent shows (pf_run.c: tep_flags()).
	 */
	bool tep_like;
};

/* Symbolic tables whose values all lie below this are looked up by index. */
#define PF_DIRECT_MAX 256

struct tb_printfmt {
	const struct tb_format *f;
	const struct tb_print_env *env;
	struct pf_op *ops;
	uint32_t nops;
	char *pool;
	uint32_t pool_len;
	struct kv_spec *specs;
	uint32_t nspecs;
	struct pf_sym *syms;
	uint32_t nsyms;
	struct pf_table *tables;
	uint32_t ntables;
	uint16_t *direct; /* index arrays of the symbolic tables (pf_table.direct_*) */
	uint32_t ndirect;
	uint32_t static_end; /* every fixed-offset load ends by here */
	/*
	 * A print fmt written out in C (pf_known.c), run instead of the ops
	 * (NULL: none), and the offsets of the fields it reads.
	 */
	void (*known)(const struct tb_printfmt *p, const uint8_t *rec, struct tb_strbuf *out);
	uint32_t known_at[PF_KNOWN_FIELDS];
};

/*
 * The pool ends with this many zero bytes past pool_len, so text can be
 * copied in 16-byte pieces; the output buffer gets as much spare room.
 */
#define PF_POOL_PAD 16

/* value of v, of a type of size bytes, as that type (sign- or zero-extended). */
static inline uint64_t pf_norm(uint64_t v, unsigned size, bool sign)
{
	unsigned shift;

	if (size >= 8)
		return v;
	shift = 64 - 8 * size;
	return sign ? (uint64_t)((int64_t)(v << shift) >> shift) : (v << shift) >> shift;
}

/*
 * tb_printfmt_compile(), with or without the fused ops (specialise false:
 * the generic program, which the tests hold the fused one against).
 */
int pf_compile(const struct tb_format *f, const struct tb_print_env *env, bool specialise,
	       struct tb_printfmt **out, struct tb_problem *err);

/* Rewrite p's generic program with fused ops (pf_specialise.c); 0 or -ENOMEM. */
int pf_specialise(struct tb_printfmt *p);

/*
 * Give p (its fused program made) the C version of its print fmt if its
 * text and fields are those of one pf_known.c knows (pf_known.c).
 */
void pf_known_attach(struct tb_printfmt *p);

/* One binary operator in (size, sign); false on division by zero. */
bool pf_binop(unsigned op, uint64_t a, uint64_t b, unsigned size, bool sign, uint64_t scale,
	      uint64_t *r);

#endif
