// SPDX-License-Identifier: MIT
/*
 * btf.c - a strict reader of the kernel's BTF, for enum constants and
 * type sizes.
 *
 * Layout (include/uapi/linux/btf.h): a header (magic 0xeB9F, version 1,
 * flags, hdr_len, then type_off/type_len and str_off/str_len counted from
 * the header's end), a type section of variable-length records and a
 * string section of NUL-terminated names that names index by byte offset.
 * Type IDs count records from 1 in section order; 0 is void.  Each record
 * is { name_off, info (kind bits 24-28, vlen bits 0-15, kind_flag bit 31),
 * size or type }, followed by kind-specific data whose length depends on
 * kind and vlen.
 *
 * The whole type section is walked and checked once; afterwards two hash
 * tables answer the lookups: enum constant names and named types.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btf.h"
#include "diag.h"

#define BTF_MAGIC 0xeB9F
#define BTF_HEADER_SIZE 24
#define BTF_MAX_TYPE 0xfffffu /* type IDs are 20 bits in the kernel */
#define TYPE_RECORD_SIZE 12
#define MAX_TYPE_DEPTH 32  /* typedef/const/array chains; a cycle is hostile input */
#define POINTER_SIZE 8     /* the reading side decodes 64-bit kernels only */

enum btf_kind {
	KIND_INT = 1, KIND_PTR, KIND_ARRAY, KIND_STRUCT, KIND_UNION, KIND_ENUM, KIND_FWD,
	KIND_TYPEDEF, KIND_VOLATILE, KIND_CONST, KIND_RESTRICT, KIND_FUNC, KIND_FUNC_PROTO,
	KIND_VAR, KIND_DATASEC, KIND_FLOAT, KIND_DECL_TAG, KIND_TYPE_TAG, KIND_ENUM64,
	KIND_LAST = KIND_ENUM64,
};

/* Name spaces of named types: "struct x" and a typedef x are different names. */
enum type_class { CLASS_BASE = 1, CLASS_STRUCT, CLASS_UNION, CLASS_ENUM, CLASS_TYPEDEF };

/* One hash table slot: an enum constant, or a named type. */
struct slot {
	const char *name; /* NULL: empty */
	int64_t value;    /* enum value, or type ID */
	unsigned class;   /* type_class, 0 for enum constants */
	bool duplicate;   /* enum: another value seen; type: another ID of that name seen */
};

struct table {
	struct slot *v;
	size_t mask, used;
};

struct tb_btf {
	uint8_t *blob;
	size_t len;
	const uint8_t *types; /* the type section */
	uint32_t types_len;
	const char *strs;     /* the string section, NUL-terminated at its end */
	uint32_t strs_len;
	uint32_t *type_at;    /* offset in types of type ID i (index 0 unused) */
	uint32_t ntypes;
	struct table enums, named;
	size_t nenums;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---------------------------------------------------------- hash tables */

static uint64_t hash_name(const char *s, unsigned class)
{
	uint64_t h = 0xcbf29ce484222325ull ^ class;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int table_init(struct table *t, size_t expected)
{
	size_t n = 64;

	while (n < 2 * expected + 1)
		n *= 2;
	t->v = calloc(n, sizeof(*t->v));
	t->mask = n - 1;
	return t->v ? 0 : -ENOMEM;
}

/* The slot of (name, class): the one holding it, or the empty one where it goes. */
static struct slot *table_find(const struct table *t, const char *name, unsigned class)
{
	size_t i = (size_t)hash_name(name, class) & t->mask;

	while (t->v[i].name && (t->v[i].class != class || strcmp(t->v[i].name, name)))
		i = (i + 1) & t->mask;
	return &t->v[i];
}

/* ------------------------------------------------------------- parsing */

struct walk {
	const uint8_t *base; /* the blob, for offsets in messages */
	struct tb_problem *err;
};

static int fail_at(const struct walk *w, const void *where, const char *fmt, uint32_t a)
{
	return diag_fail(w->err, (uint64_t)((const uint8_t *)where - w->base), fmt, a);
}

/* Bytes of kind-specific data after a type record; -1 for an unknown kind. */
static int64_t extra_size(unsigned kind, uint32_t vlen)
{
	switch (kind) {
	case KIND_INT: case KIND_VAR: case KIND_DECL_TAG:
		return 4;
	case KIND_ARRAY:
		return 12;
	case KIND_STRUCT: case KIND_UNION: case KIND_DATASEC: case KIND_ENUM64:
		return 12 * (int64_t)vlen;
	case KIND_ENUM: case KIND_FUNC_PROTO:
		return 8 * (int64_t)vlen;
	case KIND_PTR: case KIND_FWD: case KIND_TYPEDEF: case KIND_VOLATILE: case KIND_CONST:
	case KIND_RESTRICT: case KIND_FUNC: case KIND_FLOAT: case KIND_TYPE_TAG:
		return 0;
	default:
		return -1;
	}
}

/* Members, enumerators and parameters name strings too: check those offsets. */
static int check_member_names(const struct tb_btf *b, const struct walk *w, const uint8_t *rec,
			      unsigned kind, uint32_t vlen)
{
	size_t stride = kind == KIND_ENUM || kind == KIND_FUNC_PROTO ? 8 : 12;

	if (kind != KIND_STRUCT && kind != KIND_UNION && kind != KIND_ENUM &&
	    kind != KIND_ENUM64 && kind != KIND_FUNC_PROTO)
		return 0;
	for (uint32_t i = 0; i < vlen; i++) {
		const uint8_t *m = rec + TYPE_RECORD_SIZE + i * stride;
		if (le32(m) >= b->strs_len)
			return fail_at(w, m, "BTF member name offset %u is outside the string section",
				       le32(m));
	}
	return 0;
}

/* Check every type record and note where each type ID starts. */
static int walk_types(struct tb_btf *b, const struct walk *w)
{
	uint32_t off = 0, cap = b->types_len / TYPE_RECORD_SIZE + 1;

	b->type_at = malloc(((size_t)cap + 1) * sizeof(*b->type_at));
	if (!b->type_at)
		return -ENOMEM;
	while (off < b->types_len) {
		const uint8_t *rec = b->types + off;
		uint32_t info, vlen;
		unsigned kind;
		int64_t extra;

		if (b->types_len - off < TYPE_RECORD_SIZE)
			return fail_at(w, rec, "BTF type record cut short (%u bytes left)",
				       b->types_len - off);
		if (b->ntypes == BTF_MAX_TYPE)
			return fail_at(w, rec, "more than %u BTF types", BTF_MAX_TYPE);
		info = le32(rec + 4);
		kind = (info >> 24) & 0x1f;
		vlen = info & 0xffff;
		extra = extra_size(kind, vlen);
		if (extra < 0)
			return fail_at(w, rec + 4, "unknown BTF kind %u", kind);
		if (le32(rec) >= b->strs_len)
			return fail_at(w, rec, "BTF name offset %u is outside the string section",
				       le32(rec));
		if ((uint64_t)extra > b->types_len - off - TYPE_RECORD_SIZE)
			return fail_at(w, rec, "BTF type record of kind %u runs past the type section",
				       kind);
		if (check_member_names(b, w, rec, kind, vlen) < 0)
			return -EINVAL;
		b->type_at[++b->ntypes] = off;
		off += TYPE_RECORD_SIZE + (uint32_t)extra;
	}
	return 0;
}

static int check_header(struct tb_btf *b, const struct walk *w)
{
	const uint8_t *h = b->blob;
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
	uint64_t data_len;

	if (b->len < BTF_HEADER_SIZE)
		return diag_fail(w->err, 0, "BTF blob of %zu bytes is shorter than its header",
				 b->len);
	if (h[0] == 0xeB && h[1] == 0x9F)
		return diag_fail(w->err, 0, "big-endian BTF is not supported");
	if ((h[0] | h[1] << 8) != BTF_MAGIC)
		return diag_fail(w->err, 0, "not BTF (magic 0x%02x%02x, want 0xeb9f)", h[1], h[0]);
	if (h[2] != 1)
		return diag_fail(w->err, 2, "BTF version %u, only version 1 is known", h[2]);
	hdr_len = le32(h + 4);
	type_off = le32(h + 8);
	type_len = le32(h + 12);
	str_off = le32(h + 16);
	str_len = le32(h + 20);
	if (hdr_len < BTF_HEADER_SIZE || hdr_len > b->len)
		return diag_fail(w->err, 4, "BTF header length %u outside 24..%zu", hdr_len, b->len);
	data_len = b->len - hdr_len;
	if (type_off % 4 || (uint64_t)type_off + type_len > data_len)
		return diag_fail(w->err, 8, "BTF type section %u+%u does not fit the %llu data bytes "
				 "(or is not 4-byte aligned)", type_off, type_len,
				 (unsigned long long)data_len);
	if ((uint64_t)str_off + str_len > data_len)
		return diag_fail(w->err, 16, "BTF string section %u+%u does not fit the %llu data bytes",
				 str_off, str_len, (unsigned long long)data_len);
	if (str_len == 0 || b->blob[hdr_len + str_off] != '\0' ||
	    b->blob[hdr_len + str_off + str_len - 1] != '\0')
		return diag_fail(w->err, hdr_len + str_off, "BTF string section must start and end "
				 "with a NUL byte");
	b->types = b->blob + hdr_len + type_off;
	b->types_len = type_len;
	b->strs = (const char *)b->blob + hdr_len + str_off;
	b->strs_len = str_len;
	return 0;
}

/* ------------------------------------------------------------ indexing */

static void add_enum(struct tb_btf *b, const char *name, int64_t value)
{
	struct slot *s = table_find(&b->enums, name, 0);

	if (!s->name) {
		s->name = name;
		s->value = value;
		b->nenums++;
	} else if (s->value != value) {
		s->duplicate = true;
	}
}

static void index_enum(struct tb_btf *b, const uint8_t *rec, unsigned kind, uint32_t vlen,
		       bool is_signed)
{
	size_t stride = kind == KIND_ENUM ? 8 : 12;

	for (uint32_t i = 0; i < vlen; i++) {
		const uint8_t *e = rec + TYPE_RECORD_SIZE + i * stride;
		const char *name = b->strs + le32(e);
		int64_t v;

		if (kind == KIND_ENUM)
			v = is_signed ? (int64_t)(int32_t)le32(e + 4) : (int64_t)le32(e + 4);
		else
			v = (int64_t)((uint64_t)le32(e + 8) << 32 | le32(e + 4));
		if (*name)
			add_enum(b, name, v);
	}
}

static unsigned class_of(unsigned kind)
{
	switch (kind) {
	case KIND_INT: case KIND_FLOAT:
		return CLASS_BASE;
	case KIND_STRUCT:
		return CLASS_STRUCT;
	case KIND_UNION:
		return CLASS_UNION;
	case KIND_ENUM: case KIND_ENUM64:
		return CLASS_ENUM;
	case KIND_TYPEDEF:
		return CLASS_TYPEDEF;
	default:
		return 0;
	}
}

static void index_type(struct tb_btf *b, uint32_t id, const char *name, unsigned class)
{
	struct slot *s = table_find(&b->named, name, class);

	if (!s->name) {
		s->name = name;
		s->value = id;
		s->class = class;
		b->named.used++;
	} else {
		s->duplicate = true; /* sizes compared when asked */
	}
}

static int build_index(struct tb_btf *b)
{
	size_t named = 0, enumerators = 0;

	for (uint32_t id = 1; id <= b->ntypes; id++) {
		const uint8_t *rec = b->types + b->type_at[id];
		unsigned kind = (le32(rec + 4) >> 24) & 0x1f;
		named += class_of(kind) != 0;
		if (kind == KIND_ENUM || kind == KIND_ENUM64)
			enumerators += le32(rec + 4) & 0xffff;
	}
	if (table_init(&b->enums, enumerators) < 0 || table_init(&b->named, named) < 0)
		return -ENOMEM;
	for (uint32_t id = 1; id <= b->ntypes; id++) {
		const uint8_t *rec = b->types + b->type_at[id];
		uint32_t info = le32(rec + 4);
		unsigned kind = (info >> 24) & 0x1f, class = class_of(kind);
		const char *name = b->strs + le32(rec);

		if (kind == KIND_ENUM || kind == KIND_ENUM64)
			index_enum(b, rec, kind, info & 0xffff, info >> 31);
		if (class && *name)
			index_type(b, id, name, class);
	}
	return 0;
}

/* Parse blob, which the handle takes over (freed on failure too). */
static int parse_owned(uint8_t *blob, size_t len, struct tb_btf **out, struct tb_problem *err)
{
	struct tb_btf *b = calloc(1, sizeof(*b));
	struct walk w = {.base = blob, .err = err};
	int rc;

	*out = NULL;
	if (!b) {
		free(blob);
		return -ENOMEM;
	}
	b->blob = blob;
	b->len = len;
	rc = check_header(b, &w);
	if (rc == 0)
		rc = walk_types(b, &w);
	if (rc == 0)
		rc = build_index(b);
	if (rc < 0) {
		tb_btf_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int tb_btf_parse(const void *data, size_t len, struct tb_btf **out, struct tb_problem *err)
{
	uint8_t *copy = malloc(len ? len : 1);

	*out = NULL;
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	return parse_owned(copy, len, out, err);
}

int tb_btf_load(const char *path, struct tb_btf **out, struct tb_problem *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	size_t len = 0, cap = 8u << 20;
	uint8_t *buf = NULL;
	ssize_t n;

	*out = NULL;
	if (err)
		err->file = path;
	if (fd < 0) {
		rc = -errno;
		diag_fail(err, 0, "cannot open: %s", strerror(-rc));
		return rc;
	}
	/* sysfs reports no useful size: read until EOF, growing as needed. */
	for (;;) {
		if (!buf || len == cap) {
			uint8_t *p = realloc(buf, buf ? (cap *= 2) : cap);
			if (!p) {
				rc = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			diag_fail(err, len, "read failed: %s", strerror(-rc));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return parse_owned(buf, len, out, err);
out:
	free(buf);
	close(fd);
	return rc;
}

void tb_btf_free(struct tb_btf *b)
{
	if (!b)
		return;
	free(b->enums.v);
	free(b->named.v);
	free(b->type_at);
	free(b->blob);
	free(b);
}

size_t tb_btf_type_count(const struct tb_btf *b)
{
	return b->ntypes;
}

size_t tb_btf_enum_count(const struct tb_btf *b)
{
	return b->nenums;
}

/* ------------------------------------------------------------- lookups */

bool tb_btf_enum_value(const struct tb_btf *b, const char *name, int64_t *value)
{
	const struct slot *s = table_find(&b->enums, name, 0);

	if (!s->name || s->duplicate)
		return false;
	*value = s->value;
	return true;
}

/* sizeof type id, following typedefs, qualifiers and arrays; false if it has none. */
static bool size_of_id(const struct tb_btf *b, uint32_t id, int depth, uint64_t *size)
{
	const uint8_t *rec;
	uint32_t info;
	uint64_t elem;

	if (id == 0 || id > b->ntypes || depth > MAX_TYPE_DEPTH)
		return false;
	rec = b->types + b->type_at[id];
	info = le32(rec + 4);
	switch ((info >> 24) & 0x1f) {
	case KIND_INT: case KIND_STRUCT: case KIND_UNION: case KIND_ENUM: case KIND_ENUM64:
	case KIND_FLOAT:
		*size = le32(rec + 8);
		return true;
	case KIND_PTR:
		*size = POINTER_SIZE;
		return true;
	case KIND_TYPEDEF: case KIND_VOLATILE: case KIND_CONST: case KIND_RESTRICT:
	case KIND_TYPE_TAG:
		return size_of_id(b, le32(rec + 8), depth + 1, size);
	case KIND_ARRAY:
		if (!size_of_id(b, le32(rec + 12), depth + 1, &elem))
			return false;
		*size = elem * le32(rec + 20); /* both below 2^32: no overflow */
		return true;
	default:
		return false;
	}
}

/*
 * The size of the type called name in class; when several types share the
 * name they must agree (a scan, done only for such names).
 */
static bool named_size(const struct tb_btf *b, const char *name, unsigned class, uint64_t *size)
{
	const struct slot *s = table_find(&b->named, name, class);
	uint64_t other;

	if (!s->name || !size_of_id(b, (uint32_t)s->value, 0, size))
		return false;
	if (!s->duplicate)
		return true;
	for (uint32_t id = 1; id <= b->ntypes; id++) {
		const uint8_t *rec = b->types + b->type_at[id];
		unsigned kind = (le32(rec + 4) >> 24) & 0x1f;
		if (class_of(kind) == class && !strcmp(b->strs + le32(rec), name) &&
		    (!size_of_id(b, id, 0, &other) || other != *size))
			return false;
	}
	return true;
}

/* The words of a type name, without qualifiers; false if it has too many. */
struct type_words {
	char w[8][64];
	int n;
	bool pointer;
};

static bool split_type(const char *type, struct type_words *t)
{
	const char *p = type;

	memset(t, 0, sizeof(*t));
	while (*p) {
		size_t n;
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (*p == '*') {
			t->pointer = true;
			p++;
			continue;
		}
		n = strcspn(p, " \t*");
		if (t->n == 8 || n >= sizeof(t->w[0]))
			return false;
		if (!(n == 5 && !memcmp(p, "const", 5)) && !(n == 8 && !memcmp(p, "volatile", 8))) {
			memcpy(t->w[t->n], p, n);
			t->n++;
		}
		p += n;
	}
	return t->n > 0 || t->pointer;
}

/*
 * The name BTF (from the compiler's DWARF) gives a C base type spelled
 * with any word order: "unsigned long" and "long unsigned" are "long
 * unsigned int".  NULL if the words are not a base type.
 */
static const char *base_type_name(const struct type_words *t)
{
	int is_unsigned = 0, is_signed = 0, shorts = 0, longs = 0, chars = 0, ints = 0, bools = 0;

	for (int i = 0; i < t->n; i++) {
		const char *w = t->w[i];
		is_unsigned += !strcmp(w, "unsigned");
		is_signed += !strcmp(w, "signed");
		shorts += !strcmp(w, "short");
		longs += !strcmp(w, "long");
		chars += !strcmp(w, "char");
		ints += !strcmp(w, "int");
		bools += !strcmp(w, "_Bool");
	}
	if (is_unsigned + is_signed + shorts + longs + chars + ints + bools != t->n ||
	    is_unsigned + is_signed > 1 || ints > 1 || shorts > 1 || longs > 2 || chars > 1)
		return NULL;
	if (bools)
		return t->n == 1 ? "_Bool" : NULL;
	if (chars)
		return shorts || longs || ints ? NULL
		       : is_unsigned ? "unsigned char" : is_signed ? "signed char" : "char";
	if (shorts)
		return longs ? NULL : is_unsigned ? "short unsigned int" : "short int";
	if (longs == 2)
		return is_unsigned ? "long long unsigned int" : "long long int";
	if (longs == 1)
		return is_unsigned ? "long unsigned int" : "long int";
	return is_unsigned ? "unsigned int" : "int";
}

bool tb_btf_type_size(const struct tb_btf *b, const char *type, uint64_t *size)
{
	struct type_words t;
	const char *base;

	if (!split_type(type, &t))
		return false;
	if (t.pointer) {
		*size = POINTER_SIZE;
		return true;
	}
	if (t.n == 2 && !strcmp(t.w[0], "struct"))
		return named_size(b, t.w[1], CLASS_STRUCT, size);
	if (t.n == 2 && !strcmp(t.w[0], "union"))
		return named_size(b, t.w[1], CLASS_UNION, size);
	if (t.n == 2 && !strcmp(t.w[0], "enum"))
		return named_size(b, t.w[1], CLASS_ENUM, size);
	base = base_type_name(&t);
	if (base)
		return named_size(b, base, CLASS_BASE, size);
	return t.n == 1 && named_size(b, t.w[0], CLASS_TYPEDEF, size);
}

bool tb_btf_has_type(const struct tb_btf *b, const char *type)
{
	uint64_t size;

	return tb_btf_type_size(b, type, &size);
}
