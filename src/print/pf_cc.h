/* SPDX-License-Identifier: MIT */
/*
 * pf_cc.h - the print-fmt compiler's state, shared by its parts (internal):
 * pf_lex.c (tokens), pf_type.c (type names), pf_calls.c (the kernel's
 * print helpers: a table of known calls) and pf_compile.c (output,
 * expressions, directives, the entry points; its heading says how the
 * compiler works).  Functions called across the parts carry a pfc_ prefix.
 */
#ifndef TRACEBUF_PF_CC_H
#define TRACEBUF_PF_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "pf_internal.h"

/* The types of expressions: what the compiler knows of a C type. */
enum { T_INT, T_PTR, T_MEM, T_VOID };

struct ty {
	uint8_t kind;  /* T_* */
	uint8_t size;  /* T_INT: 1, 2, 4 or 8; T_PTR: 8 */
	bool sign;
	bool is_char;  /* T_PTR / T_MEM: the elements are char */
	bool is_bool;  /* T_INT: _Bool, which converts by != 0 */
	bool aggregate; /* T_VOID: a struct or union (sizeof only) */
	bool elsign;
	uint32_t elsize; /* T_PTR / T_MEM: bytes of an element, 0 unknown */
};

static const struct ty ty_int = {.kind = T_INT, .size = 4, .sign = true};

static const struct ty __attribute__((unused)) ty_uint = {.kind = T_INT, .size = 4};
static const struct ty __attribute__((unused)) ty_long = {.kind = T_INT, .size = 8, .sign = true};
static const struct ty __attribute__((unused)) ty_ulong = {.kind = T_INT, .size = 8};

/* A typedef name the kernel's formats use (pf_type.c's table). */
struct named_type {
	const char *name;
	uint8_t size;
	bool sign;
};

enum tok_kind { TK_END, TK_IDENT, TK_NUM, TK_CHAR, TK_STR, TK_PUNCT, TK_BAD };

#define P2(a, b) ((unsigned)(a) << 8 | (unsigned)(b))

struct token {
	uint8_t kind;
	unsigned punct; /* TK_PUNCT: the character(s), P2() for two */
	size_t off, len;
	uint64_t num;   /* TK_NUM, TK_CHAR */
	struct ty numty;
};

struct local {
	const char *name;
	size_t name_len;
	struct ty t;
	bool is_const;
	uint64_t v;
	unsigned slot;
};

struct cc {
	const struct tb_format *f;
	const struct tb_print_env *env;
	struct tb_problem *err;
	int rc;          /* first error, 0 while all is well */
	const char *src; /* the print fmt */
	size_t len;
	struct token tok; /* current token */
	size_t next;      /* where the token after it starts */
	int nest;
	struct tb_printfmt *p;
	size_t ops_cap, pool_cap, specs_cap, syms_cap, tables_cap;
	int depth, max_depth; /* run-time stack, as emitted */
	struct local locals[PF_LOCALS_MAX];
	unsigned nlocals, nslots;
	/*
	 * Uses of jiffies when the environment does not know it: the kernel
	 * reads it when it prints the line, so a trace that did not keep the
	 * value of that moment cannot give it.  The directive whose argument
	 * uses it prints '?' instead of a number made up from a stand-in.
	 */
	unsigned unknown_vars;
	/*
	 * In a directive's arguments: unknown_vars when they began (else
	 * UINT_MAX).  Once one uses an unknown variable the directive prints
	 * '?', so arithmetic in it needs no element size (vmemmap_base + pfn
	 * without the size of struct page).
	 */
	unsigned unknown_vars_at_directive;
};

/*
 * A parsed expression.  A constant has no code (v, or the pool string
 * str/str_len for a literal); anything else has emitted code that leaves
 * its value on the stack, from op index start to the current end.
 */
struct ex {
	struct ty t;
	bool is_const;
	bool is_str; /* constant string literal */
	bool helper; /* may be text a helper put in the output buffer */
	uint64_t v;
	uint32_t str, str_len;
	uint32_t start;
	size_t off; /* where it starts in the text, for messages */
};

/* pf_lex.c: tokens */
int pfc_fail(struct cc *c, int rc, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
unsigned pfc_read_escape(const char *s, size_t len, size_t *i);
int pfc_lex(struct cc *c, size_t i, struct token *t);
int pfc_advance(struct cc *c);
bool pfc_is_punct(const struct token *t, unsigned p);
bool pfc_tok_is(const struct cc *c, const struct token *t, const char *word);
int pfc_expect(struct cc *c, unsigned p, const char *what);

/* pf_type.c: type names */
const struct named_type *pfc_find_named_type(const char *s, size_t n);
bool pfc_starts_type(struct cc *c, const struct token *t);
int pfc_parse_type(struct cc *c, struct ty *t, uint64_t *bytes);

/* pf_compile.c: output and expressions */
bool pfc_grow(void **v, size_t *cap, size_t need, size_t elem);
long pfc_emit(struct cc *c, struct pf_op op, int delta);
uint32_t pfc_pool_add(struct cc *c, const char *s, size_t n);
void pfc_materialize(struct cc *c, struct ex *e);
void pfc_drop_code(struct cc *c, const struct ex *e, int depth_before);
int pfc_need_scalar(struct cc *c, const struct ex *e, const char *what);
void pfc_convert(struct cc *c, struct ex *e, struct ty t);
uint64_t pfc_type_bytes(const struct ty *t);
const struct tb_schema_field *pfc_field_named(struct cc *c, size_t off, size_t n);
void pfc_note_static(struct cc *c, uint32_t end);
int pfc_parse_assign(struct cc *c, struct ex *e);
bool pfc_unknown_name(struct cc *c);

/* pf_calls.c: the known calls */
int pfc_call(struct cc *c, struct ex *e);

#endif
