// SPDX-License-Identifier: MIT
/*
 * pf_type.c - type names in casts, sizeof and is_signed_type:
 * the C base types, the kernel's typedefs (their sizes on x86-64), the
 * environment's struct sizes, pointers and arrays.
 *
 * Part of the print-fmt compiler (pf_cc.h); split from pf_compile.c
 * (issue 22 item 5).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_cc.h"

/* Typedef names the kernel's formats use, with their size and signedness on x86-64. */
static const struct named_type named_types[] = {
	{"u8", 1, false},        {"s8", 1, true},          {"__u8", 1, false},
	{"__s8", 1, true},       {"uint8_t", 1, false},    {"int8_t", 1, true},
	{"bool", 1, false},      {"_Bool", 1, false},      {"blk_status_t", 1, false},
	{"u16", 2, false},       {"s16", 2, true},         {"__u16", 2, false},
	{"__s16", 2, true},      {"uint16_t", 2, false},   {"int16_t", 2, true},
	{"__le16", 2, false},    {"__be16", 2, false},     {"umode_t", 2, false},
	{"u32", 4, false},       {"s32", 4, true},         {"__u32", 4, false},
	{"__s32", 4, true},      {"uint32_t", 4, false},   {"int32_t", 4, true},
	{"__le32", 4, false},    {"__be32", 4, false},     {"uint", 4, false},
	{"pid_t", 4, true},      {"gfp_t", 4, false},      {"dev_t", 4, false},
	{"uid_t", 4, false},     {"gid_t", 4, false},      {"fmode_t", 4, false},
	{"__kernel_rwf_t", 4, true}, {"blk_opf_t", 4, false}, {"xfs_agnumber_t", 4, false},
	{"xfs_agblock_t", 4, false}, {"xfs_extlen_t", 4, false}, {"xfs_nlink_t", 4, false},
	{"u64", 8, false},       {"s64", 8, true},         {"__u64", 8, false},
	{"__s64", 8, true},      {"uint64_t", 8, false},   {"int64_t", 8, true},
	{"__le64", 8, false},    {"__be64", 8, false},     {"size_t", 8, false},
	{"ssize_t", 8, true},    {"loff_t", 8, true},      {"ulong", 8, false},
	{"uintptr_t", 8, false}, {"intptr_t", 8, true},    {"ptrdiff_t", 8, true},
	{"sector_t", 8, false},  {"blkcnt_t", 8, false},   {"dma_addr_t", 8, false},
	{"phys_addr_t", 8, false}, {"resource_size_t", 8, false}, {"ino_t", 8, false},
	{"time64_t", 8, true},   {"ktime_t", 8, true},     {"pgoff_t", 8, false},
	{"xfs_ino_t", 8, false}, {"xfs_off_t", 8, true},   {"xfs_fsize_t", 8, true},
	{"xfs_fileoff_t", 8, false}, {"xfs_fsblock_t", 8, false}, {"xfs_daddr_t", 8, true},
	{"xfs_rfsblock_t", 8, false}, {"xfs_filblks_t", 8, false}, {"xfs_rtblock_t", 8, false},
};

const struct named_type *pfc_find_named_type(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(named_types) / sizeof(named_types[0]); i++)
		if (strlen(named_types[i].name) == n && !memcmp(named_types[i].name, s, n))
			return &named_types[i];
	return NULL;
}

/* Does the token after '(' start a type name? */
bool pfc_starts_type(struct cc *c, const struct token *t)
{
	static const char *const words[] = {"unsigned", "signed", "char", "short", "int", "long",
					    "void", "const", "volatile", "struct", "union", "enum",
					    "float", "double"};
	struct token after;
	size_t n = t->len;
	const char *s = c->src + t->off;
	uint64_t size;

	if (t->kind != TK_IDENT)
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (pfc_tok_is(c, t, words[i]))
			return true;
	for (unsigned i = 0; i < c->nlocals; i++)
		if (c->locals[i].name_len == n && !memcmp(c->locals[i].name, s, n))
			return false;
	if (pfc_find_named_type(s, n))
		return true;
	/* A typedef name: "(name *" or "(name)" followed by what can only start an operand. */
	if (pfc_lex(c, t->off + t->len, &after) < 0)
		return false;
	if (pfc_is_punct(&after, '*'))
		return true;
	if (!pfc_is_punct(&after, ')'))
		return false;
	if (n > 2 && s[n - 2] == '_' && s[n - 1] == 't')
		return true;
	if (c->env && c->env->type_size) {
		char name[TB_NAME_MAX];
		if (n < sizeof(name)) {
			memcpy(name, s, n);
			name[n] = '\0';
			if (c->env->type_size(c->env->ctx, name, &size))
				return true;
		}
	}
	return false;
}

/* sizeof of a kernel type from the environment. */
static bool env_type_size(struct cc *c, const char *s, size_t n, uint64_t *size)
{
	char name[TB_NAME_MAX];

	if (!c->env || !c->env->type_size || n >= sizeof(name))
		return false;
	memcpy(name, s, n);
	name[n] = '\0';
	return c->env->type_size(c->env->ctx, name, size);
}

/*
 * A type name: specifiers, then '*'s.  Leaves the token after it current.
 * *bytes gets sizeof the type when known (0 if not).
 */
int pfc_parse_type(struct cc *c, struct ty *t, uint64_t *bytes)
{
	int longs = 0, shorts = 0, chars = 0, voids = 0, bools = 0, n = 0;
	bool is_unsigned = false, is_enum = false, aggregate = false, env_sized = false;
	bool env_int = false; /* a typedef the environment sizes like an integer */
	const struct named_type *named = NULL;
	uint64_t agg_size = 0;
	struct token after;

	memset(t, 0, sizeof(*t));
	*bytes = 0;
	for (;; n++) {
		const struct token *k = &c->tok;
		if (k->kind != TK_IDENT)
			break;
		if (pfc_tok_is(c, k, "const") || pfc_tok_is(c, k, "volatile") || pfc_tok_is(c, k, "signed") ||
		    pfc_tok_is(c, k, "int")) {
		} else if (pfc_tok_is(c, k, "unsigned")) {
			is_unsigned = true;
		} else if (pfc_tok_is(c, k, "long")) {
			longs++;
		} else if (pfc_tok_is(c, k, "short")) {
			shorts++;
		} else if (pfc_tok_is(c, k, "char")) {
			chars++;
		} else if (pfc_tok_is(c, k, "void")) {
			voids++;
		} else if (pfc_tok_is(c, k, "_Bool") || pfc_tok_is(c, k, "bool")) {
			bools++;
		} else if (pfc_tok_is(c, k, "float") || pfc_tok_is(c, k, "double")) {
			return pfc_fail(c, -EINVAL, k->off, "floating point type");
		} else if (pfc_tok_is(c, k, "struct") || pfc_tok_is(c, k, "union") || pfc_tok_is(c, k, "enum")) {
			size_t tag = k->off;
			is_enum = pfc_tok_is(c, k, "enum");
			if (pfc_advance(c) < 0)
				return c->rc;
			if (c->tok.kind != TK_IDENT)
				return pfc_fail(c, -EINVAL, c->tok.off, "expected a tag name");
			if (!is_enum) {
				aggregate = true;
				env_sized = env_type_size(c, c->src + tag, c->tok.off + c->tok.len - tag, &agg_size);
			}
		} else if (n == 0 && (named = pfc_find_named_type(c->src + k->off, k->len)) != NULL) {
		} else if (n == 0) {
			/* Another typedef: sized by the environment, or opaque behind a pointer. */
			env_sized = env_type_size(c, c->src + k->off, k->len, &agg_size);
			if (pfc_lex(c, k->off + k->len, &after) < 0)
				return c->rc;
			if (!env_sized && !pfc_is_punct(&after, '*'))
				return pfc_fail(c, -ENOTSUP, k->off, "unknown type %.*s", (int)k->len, c->src + k->off);
			aggregate = !env_sized || (agg_size != 1 && agg_size != 2 && agg_size != 4 && agg_size != 8);
			env_int = !aggregate; /* sized like an integer: taken as an unsigned one */
		} else {
			break;
		}
		if (pfc_advance(c) < 0)
			return c->rc;
	}
	if (!n)
		return pfc_fail(c, -EINVAL, c->tok.off, "expected a type");
	if (named) {
		*t = (struct ty){.kind = T_INT, .size = named->size, .sign = named->sign,
				 .is_bool = !strcmp(named->name, "bool") || !strcmp(named->name, "_Bool")};
	} else if (env_int) {
		*t = (struct ty){.kind = T_INT, .size = (uint8_t)agg_size};
	} else if (aggregate || voids) {
		t->kind = T_VOID;
		t->aggregate = aggregate;
	} else if (bools) {
		*t = (struct ty){.kind = T_INT, .size = 1, .is_bool = true};
	} else if (is_enum) {
		*t = ty_uint;
	} else {
		t->kind = T_INT;
		t->size = chars ? 1 : shorts ? 2 : longs ? 8 : 4;
		t->sign = !is_unsigned;
	}
	if (t->kind == T_INT)
		*bytes = t->size;
	else if (aggregate && env_sized)
		*bytes = agg_size;
	if (pfc_is_punct(&c->tok, '*')) {
		struct ty base = *t;
		t->kind = T_PTR;
		t->size = 8;
		t->sign = false;
		t->is_bool = false;
		t->aggregate = false;
		t->is_char = base.kind == T_INT && chars && !named;
		t->elsign = base.sign;
		t->elsize = base.kind == T_INT ? base.size : !aggregate ? 1 /* void *: bytes, as GNU C */
				: env_sized ? (uint32_t)agg_size : 0;
		*bytes = 8;
		while (pfc_is_punct(&c->tok, '*')) {
			if (pfc_advance(c) < 0)
				return c->rc;
			if (pfc_is_punct(&c->tok, '*')) {
				t->elsize = 8;
				t->is_char = false;
			}
		}
	}
	return 0;
}
