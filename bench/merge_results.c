// SPDX-License-Identifier: MIT
/*
 * merge_results - the benches' results-*.json files as one list, checked.
 *
 *   merge_results -o build/bench/results.json build/bench/results-*.json
 *
 * Each input is a JSON list of objects, one per measured case, with at
 * least the keys
 *	case (string), threads (integer >= 1), tracebuf_ns (number > 0),
 *	peer (string), peer_ns (number > 0), ratio (number = peer_ns / tracebuf_ns)
 * The output is one list of every entry of every input, in the order given,
 * one object a line, the six keys first in that order (any others after, as
 * they were).  A ratio is checked against peer_ns / tracebuf_ns with room
 * for the inputs' rounding (1% and 0.006).  Two entries with the same case,
 * threads and peer are refused: one of them would be a stale or a copied
 * figure.
 *
 * Any problem - a file that is not such a list (bad JSON, NaN, a key given
 * twice), a missing key, a key of the wrong type, a ratio that does not
 * follow - is reported as "FILE: byte OFFSET: reason", and then nothing is
 * written and the exit status is 1.  Usage errors exit with 2.
 *
 * Written in C with libc alone: neither python nor jq can be counted on
 * where `make bench` runs.  Inputs are read whole (16 MiB at most each).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT (16u << 20)
#define MAX_DEPTH 32    /* nesting of values inside an entry */
#define MAX_MEMBERS 32  /* keys of one entry */

enum kind { J_STRING, J_NUMBER, J_OTHER };

struct member {
	size_t key, key_len;     /* the key's text between its quotes */
	size_t value, value_len; /* the value's text as written */
	enum kind kind;
	double number;
};

struct entry {
	size_t at; /* offset of its '{' */
	unsigned n;
	struct member m[MAX_MEMBERS];
};

struct input {
	const char *file;
	char *text;
	size_t len, pos;
	bool failed;
};

static const char *const required[] = {"case", "threads", "tracebuf_ns", "peer", "peer_ns", "ratio"};
#define NREQUIRED (sizeof(required) / sizeof(required[0]))

static int problem(struct input *in, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int problem(struct input *in, size_t at, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "merge_results: %s: byte %zu: ", in->file, at);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	in->failed = true;
	return -1;
}

/* ------------------------------------------------------------ JSON */

static void skip_blanks(struct input *in)
{
	while (in->pos < in->len && strchr(" \t\r\n", in->text[in->pos]) && in->text[in->pos])
		in->pos++;
}

static int peek(struct input *in)
{
	skip_blanks(in);
	return in->pos < in->len ? (unsigned char)in->text[in->pos] : EOF;
}

static int expect(struct input *in, char c, const char *where)
{
	if (peek(in) != c)
		return problem(in, in->pos, "expected '%c' %s", c, where);
	in->pos++;
	return 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string at pos (its opening quote); start and len: the text between the quotes. */
static int parse_string(struct input *in, size_t *start, size_t *len)
{
	size_t at = in->pos++;

	*start = in->pos;
	while (in->pos < in->len && in->text[in->pos] != '"') {
		unsigned char c = (unsigned char)in->text[in->pos];
		if (c < 0x20)
			return problem(in, in->pos, "a control character inside a string");
		if (c == '\\') {
			char e = in->pos + 1 < in->len ? in->text[in->pos + 1] : 0;
			if (e == 'u') {
				for (int i = 2; i < 6; i++)
					if (in->pos + i >= in->len || !is_hex(in->text[in->pos + i]))
						return problem(in, in->pos, "a \\u escape without four hex digits");
				in->pos += 6;
				continue;
			}
			if (!e || !strchr("\"\\/bfnrt", e))
				return problem(in, in->pos, "an unknown escape in a string");
			in->pos++;
		}
		in->pos++;
	}
	if (in->pos >= in->len)
		return problem(in, at, "a string that does not end");
	*len = in->pos - *start;
	in->pos++;
	return 0;
}

static bool is_digit(struct input *in, size_t i)
{
	return i < in->len && in->text[i] >= '0' && in->text[i] <= '9';
}

/* JSON's number grammar exactly: no NaN, no Infinity, no leading '+' or zeros. */
static int parse_number(struct input *in, double *value)
{
	size_t at = in->pos, i = in->pos;
	char buf[64];

	if (i < in->len && in->text[i] == '-')
		i++;
	if (!is_digit(in, i))
		return problem(in, at, "not a JSON value (a number, string, list, object, true, false or null)");
	if (in->text[i] == '0' && is_digit(in, i + 1))
		return problem(in, at, "a number with a leading zero");
	while (is_digit(in, i))
		i++;
	if (i < in->len && in->text[i] == '.') {
		if (!is_digit(in, ++i))
			return problem(in, at, "a number with no digit after its point");
		while (is_digit(in, i))
			i++;
	}
	if (i < in->len && (in->text[i] == 'e' || in->text[i] == 'E')) {
		if (++i < in->len && (in->text[i] == '+' || in->text[i] == '-'))
			i++;
		if (!is_digit(in, i))
			return problem(in, at, "a number with no digit in its exponent");
		while (is_digit(in, i))
			i++;
	}
	if (i - at >= sizeof(buf))
		return problem(in, at, "a number of more than %zu characters", sizeof(buf) - 1);
	memcpy(buf, in->text + at, i - at);
	buf[i - at] = '\0';
	*value = strtod(buf, NULL);
	in->pos = i;
	return 0;
}

static int parse_value(struct input *in, int depth, enum kind *kind, double *number);

/* A list or an object inside an entry: checked, not kept. */
static int parse_nested(struct input *in, int depth, char open)
{
	char close = open == '[' ? ']' : '}';
	enum kind k;
	double d;

	if (depth > MAX_DEPTH)
		return problem(in, in->pos, "values nested more than %d deep", MAX_DEPTH);
	in->pos++;
	if (peek(in) == close) {
		in->pos++;
		return 0;
	}
	for (;;) {
		if (open == '{') {
			size_t ks, kl;
			if (peek(in) != '"')
				return problem(in, in->pos, "expected a key (a string)");
			if (parse_string(in, &ks, &kl) < 0 || expect(in, ':', "after a key") < 0)
				return -1;
		}
		if (parse_value(in, depth + 1, &k, &d) < 0)
			return -1;
		if (peek(in) == close) {
			in->pos++;
			return 0;
		}
		if (expect(in, ',', open == '[' ? "or ']' in a list" : "or '}' in an object") < 0)
			return -1;
	}
}

static int parse_word(struct input *in, const char *word)
{
	size_t n = strlen(word);

	if (in->len - in->pos < n || memcmp(in->text + in->pos, word, n))
		return problem(in, in->pos, "not a JSON value (a number, string, list, object, true, false or null)");
	in->pos += n;
	return 0;
}

static int parse_value(struct input *in, int depth, enum kind *kind, double *number)
{
	size_t s, l;
	int c = peek(in);

	*kind = J_OTHER;
	if (c == '"') {
		*kind = J_STRING;
		return parse_string(in, &s, &l);
	}
	if (c == '[' || c == '{')
		return parse_nested(in, depth, (char)c);
	if (c == 't')
		return parse_word(in, "true");
	if (c == 'f')
		return parse_word(in, "false");
	if (c == 'n')
		return parse_word(in, "null");
	if (c == EOF)
		return problem(in, in->pos, "the text ends where a value should be");
	*kind = J_NUMBER;
	return parse_number(in, number);
}

static bool key_is(const struct input *in, const struct member *m, const char *key)
{
	return m->key_len == strlen(key) && !memcmp(in->text + m->key, key, m->key_len);
}

/* One entry of the top-level list: an object whose members are kept. */
static int parse_entry(struct input *in, struct entry *e)
{
	e->at = in->pos;
	e->n = 0;
	if (peek(in) != '{')
		return problem(in, in->pos, "an entry of the list is not an object");
	in->pos++;
	if (peek(in) == '}') {
		in->pos++;
		return 0;
	}
	for (;;) {
		struct member *m = &e->m[e->n];
		if (e->n == MAX_MEMBERS)
			return problem(in, in->pos, "an entry with more than %d keys", MAX_MEMBERS);
		if (peek(in) != '"')
			return problem(in, in->pos, "expected a key (a string)");
		size_t key_at = in->pos;
		if (parse_string(in, &m->key, &m->key_len) < 0 || expect(in, ':', "after a key") < 0)
			return -1;
		for (unsigned i = 0; i < e->n; i++)
			if (e->m[i].key_len == m->key_len && !memcmp(in->text + e->m[i].key, in->text + m->key, m->key_len))
				return problem(in, key_at, "the key \"%.*s\" twice in one entry", (int)m->key_len,
					       in->text + m->key);
		skip_blanks(in);
		m->value = in->pos;
		if (parse_value(in, 1, &m->kind, &m->number) < 0)
			return -1;
		m->value_len = in->pos - m->value;
		e->n++;
		if (peek(in) == '}') {
			in->pos++;
			return 0;
		}
		if (expect(in, ',', "or '}' after a key's value") < 0)
			return -1;
	}
}

/* ------------------------------------------------------------ checks */

static const struct member *find(const struct input *in, const struct entry *e, const char *key)
{
	for (unsigned i = 0; i < e->n; i++)
		if (key_is(in, &e->m[i], key))
			return &e->m[i];
	return NULL;
}

static int check_entry(struct input *in, const struct entry *e)
{
	const struct member *m[NREQUIRED];

	for (unsigned i = 0; i < NREQUIRED; i++) {
		m[i] = find(in, e, required[i]);
		if (!m[i])
			return problem(in, e->at, "an entry without \"%s\"", required[i]);
		bool want_string = i == 0 || i == 3;
		if (m[i]->kind != (want_string ? J_STRING : J_NUMBER))
			return problem(in, m[i]->value, "\"%s\" is not a %s", required[i],
				       want_string ? "string" : "number");
	}
	if (m[0]->value_len <= 2)
		return problem(in, m[0]->value, "\"case\" is empty");
	double threads = m[1]->number, tb = m[2]->number, peer = m[4]->number, ratio = m[5]->number;
	if (threads < 1 || threads != floor(threads))
		return problem(in, m[1]->value, "\"threads\" is not a whole number of at least 1");
	if (!(tb > 0))
		return problem(in, m[2]->value, "\"tracebuf_ns\" is not above 0");
	if (!(peer > 0))
		return problem(in, m[4]->value, "\"peer_ns\" is not above 0");
	if (fabs(ratio - peer / tb) > 0.01 * (peer / tb) + 0.006)
		return problem(in, m[5]->value, "\"ratio\" %g is not peer_ns / tracebuf_ns = %g", ratio, peer / tb);
	return 0;
}

/* ------------------------------------------------------------ output */

struct out {
	char *text;
	size_t len;
	FILE *f;
	unsigned entries;
};

struct seen {
	char **keys; /* "case\tthreads\tpeer" of every entry so far */
	unsigned n;
};

/* Refuse a second entry with the case, threads and peer of an earlier one. */
static int check_unique(struct input *in, const struct entry *e, struct seen *seen)
{
	const struct member *c = find(in, e, "case"), *t = find(in, e, "threads"), *p = find(in, e, "peer");
	char *key, **grown;

	if (asprintf(&key, "%.*s\t%g\t%.*s", (int)c->value_len, in->text + c->value, t->number,
		     (int)p->value_len, in->text + p->value) < 0)
		return problem(in, e->at, "out of memory");
	for (unsigned i = 0; i < seen->n; i++)
		if (!strcmp(seen->keys[i], key)) {
			free(key);
			return problem(in, e->at, "a second entry for case %.*s, %g thread(s), peer %.*s",
				       (int)c->value_len, in->text + c->value, t->number, (int)p->value_len,
				       in->text + p->value);
		}
	grown = realloc(seen->keys, (seen->n + 1) * sizeof(*grown));
	if (!grown) {
		free(key);
		return problem(in, e->at, "out of memory");
	}
	seen->keys = grown;
	seen->keys[seen->n++] = key;
	return 0;
}

static void emit(struct out *o, const struct input *in, const struct entry *e)
{
	fprintf(o->f, "%s  {", o->entries++ ? ",\n" : "");
	for (unsigned i = 0; i < NREQUIRED; i++) {
		const struct member *m = find(in, e, required[i]);
		fprintf(o->f, "%s\"%s\": %.*s", i ? ", " : "", required[i], (int)m->value_len, in->text + m->value);
	}
	for (unsigned i = 0; i < e->n; i++) {
		bool known = false;
		for (unsigned k = 0; k < NREQUIRED; k++)
			known |= key_is(in, &e->m[i], required[k]);
		if (!known)
			fprintf(o->f, ", \"%.*s\": %.*s", (int)e->m[i].key_len, in->text + e->m[i].key,
				(int)e->m[i].value_len, in->text + e->m[i].value);
	}
	fputc('}', o->f);
}

/* ------------------------------------------------------------ files */

static int read_input(struct input *in)
{
	FILE *f = fopen(in->file, "rb");
	size_t cap = 65536;

	if (!f)
		return problem(in, 0, "cannot open: %s", strerror(errno));
	in->text = malloc(cap);
	in->len = 0;
	while (in->text) {
		size_t n = fread(in->text + in->len, 1, cap - in->len, f);
		in->len += n;
		if (n == 0)
			break;
		if (in->len == cap) {
			char *grown = cap < MAX_INPUT ? realloc(in->text, cap *= 2) : NULL;
			if (!grown) {
				fclose(f);
				return problem(in, in->len, "larger than %u bytes, or out of memory", MAX_INPUT);
			}
			in->text = grown;
		}
	}
	if (!in->text || ferror(f)) {
		fclose(f);
		return problem(in, in->len, "cannot read: %s", in->text ? strerror(errno) : "out of memory");
	}
	fclose(f);
	return 0;
}

static int merge_file(struct input *in, struct out *o, struct seen *seen)
{
	struct entry *e = malloc(sizeof(*e));
	unsigned entries = 0;
	size_t list_at = 0;
	int rc = -1;

	if (!e)
		return problem(in, 0, "out of memory");
	if (read_input(in) < 0 || expect(in, '[', "at the start (a list of entries)") < 0)
		goto out;
	list_at = in->pos - 1;
	if (peek(in) == ']')
		in->pos++;
	else
		for (;;) {
			if (parse_entry(in, e) < 0 || check_entry(in, e) < 0 || check_unique(in, e, seen) < 0)
				goto out;
			emit(o, in, e);
			entries++;
			if (peek(in) == ']') {
				in->pos++;
				break;
			}
			if (expect(in, ',', "or ']' after an entry") < 0)
				goto out;
		}
	if (peek(in) != EOF) {
		problem(in, in->pos, "text after the list");
		goto out;
	}
	if (entries == 0) {
		problem(in, list_at, "no entry: a bench that measured nothing");
		goto out;
	}
	rc = 0;
out:
	free(e);
	return rc;
}

static int write_output(const char *path, const struct out *o)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		fprintf(stderr, "merge_results: %s: the path is too long\n", path);
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f || fwrite(o->text, 1, o->len, f) != o->len || fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "merge_results: %s: %s\n", path, strerror(errno));
		if (f)
			remove(tmp);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct out o = {0};
	struct seen seen = {0};
	const char *path = NULL;
	bool failed = false;
	int first = 1;

	if (argc > 2 && !strcmp(argv[1], "-o")) {
		path = argv[2];
		first = 3;
	}
	if (!path || first >= argc) {
		fprintf(stderr, "usage: merge_results -o OUT.json RESULTS.json...\n");
		return 2;
	}
	o.f = open_memstream(&o.text, &o.len);
	if (!o.f) {
		perror("merge_results");
		return 1;
	}
	fputs("[\n", o.f);
	for (int i = first; i < argc; i++) {
		struct input in = {.file = argv[i]};
		failed |= merge_file(&in, &o, &seen) < 0;
		free(in.text);
	}
	fputs("\n]\n", o.f);
	fclose(o.f);
	for (unsigned i = 0; i < seen.n; i++)
		free(seen.keys[i]);
	free(seen.keys);
	if (!failed && write_output(path, &o) == 0)
		printf("merge_results: %s: %u entries from %d file(s), every one with case, threads, tracebuf_ns, "
		       "peer, peer_ns and a ratio that follows\n", path, o.entries, argc - first);
	else
		failed = true;
	free(o.text);
	return failed ? 1 : 0;
}
