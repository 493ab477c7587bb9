/* SPDX-License-Identifier: MIT */
/*
 * identical.h - `tracebuf report` of a capture against the kernel's own
 * `trace` text of the same events, line by line.
 *
 *   struct identical id;
 *   identical_init(&id, capture_dir);            (formats/, trace_options)
 *   identical_compare(&id, kernel_text, our_text);
 *   identical_print(&id, limit);                 (diag lines: pairs, tables)
 *   ... id.identical, id.total ...
 *   identical_free(&id);
 *
 * Pairing.  Event lines are matched by their context columns, not by their
 * position, so one missing or extra line does not shift every line after it
 * into a difference: both texts are in time order, so lines are taken in
 * groups with the same time stamp, and inside a group the kernel's lines are
 * paired in order with ours of the same CPU.  A line left without a partner
 * counts as a difference (kernel only, or tracebuf only).  "#" lines and
 * "CPU:N [LOST ...]" lines are not event lines (the kernel's `trace` prints
 * no LOST line for an overwritten buffer; our report does).  A line that has
 * no context columns continues the event line before it (a marker with a
 * newline inside).
 *
 * Masking.  Some values cannot be equal by nature; each rule below masks
 * one such value on both sides before comparing, and is kept small:
 *  - "hashed-ptr", only when the capture's trace_options says hash-ptr: the
 *    kernel prints %p as a keyed hash of the address (16 hex digits) that
 *    no reader of the raw pages can compute; every 16-hex-digit word (with
 *    or without 0x) becomes "<ptr>".  Captures made with --no-hash-ptr (all
 *    the harnesses' own) never use it.
 *  - "jiffies-age": writeback_single_inode, writeback_single_inode_start
 *    and writeback_sb_inodes_requeue print "age=" as (jiffies -
 *    dirtied_when) / HZ with the jiffies of the moment `trace` is read,
 *    not of the event, so the value depends on when the text was made.
 *    A capture keeps jiffies as read right after trace.txt (constants) and
 *    just before it (meta.txt "jiffies: AFTER (...; BEFORE before)"); the
 *    kernel printed each line with a value in between.  So, with the
 *    capture's HZ: the kernel's age= must be one that a jiffies in
 *    [BEFORE, AFTER] gives, ours exactly the one AFTER gives (computed here
 *    from the line's dirtied_when); each is then masked.  A capture that
 *    did not keep jiffies (made before it was saved) cannot know it: ours
 *    must print "age=?", the kernel's any number.  Only when the constants
 *    have jiffies but meta.txt no window are both numbers masked as they
 *    are.  Other values derived from jiffies (timer_start's timeout=,
 *    jbd2's jiffies_to_msecs) come from the record and are not masked.
 *
 * Ownership: identical_compare() copies what it keeps; the texts stay the
 * caller's.  Everything is freed by identical_free().
 */
#ifndef TB_TEST_IDENTICAL_H
#define TB_TEST_IDENTICAL_H

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tap.h"

#define IDENTICAL_MAX_GROUPS 512

/* One event line of either text. */
struct ev_line {
	char *text;  /* the line (continuation lines joined with '\n'); owned */
	uint64_t ts; /* the time stamp's digits, the dot dropped */
	int cpu;
	size_t body;  /* offset of what follows "TIMESTAMP: " */
	long partner; /* index of the paired line on the other side, -1 none */
};

struct ev_lines {
	struct ev_line *v;
	size_t n, cap;
};

/* identical/total of one system, or of one kind of event line. */
struct tally {
	char name[128];
	size_t total, identical;
	char *example_kernel, *example_ours; /* first differing pair (borrowed) */
};

/* What a capture says about the jiffies its trace.txt was printed with (jiffies-age). */
struct jiffies_window {
	bool saved;	 /* its constants have a jiffies line: after */
	bool window;	 /* and meta.txt has before, and the constants HZ */
	uint64_t before, after, hz;
};

struct identical {
	bool hash_ptr;		 /* the capture's trace_options has hash-ptr on */
	struct jiffies_window jw;
	char **names, **systems; /* event name -> system, from formats/ */
	size_t nnames;
	struct ev_lines kernel, ours;
	size_t total, identical, kernel_only, ours_only;
	struct tally systems_tally[IDENTICAL_MAX_GROUPS], kinds[IDENTICAL_MAX_GROUPS];
	size_t nsystems, nkinds;
};

/* --------------------------------------------------------------- parsing */

/*
 * The context columns "COMM-PID [CPU] FLAGS TIMESTAMP: ": find " [NNN] ",
 * five flag characters, spaces, the time stamp and ": ".  false if absent.
 */
static inline bool parse_context(const char *s, int *cpu, uint64_t *ts, size_t *body)
{
	for (const char *p = strstr(s, " ["); p; p = strstr(p + 1, " [")) {
		const char *q = p + 2;
		int c = 0, digits = 0;
		uint64_t t = 0;

		for (; isdigit((unsigned char)*q); q++, digits++)
			c = c * 10 + (*q - '0');
		if (!digits || q[0] != ']' || q[1] != ' ')
			continue;
		q += 2;
		for (int i = 0; i < 5; i++, q++)
			if (!*q || *q == ' ')
				goto next;
		if (*q++ != ' ')
			continue;
		while (*q == ' ')
			q++;
		digits = 0;
		for (; isdigit((unsigned char)*q) || *q == '.'; q++)
			if (*q != '.')
				t = t * 10 + (uint64_t)(*q - '0'), digits++;
		if (!digits || q[0] != ':' || (q[1] != ' ' && q[1] != '\0'))
			continue;
		*cpu = c;
		*ts = t;
		*body = (size_t)(q - s) + (q[1] ? 2 : 1);
		return true;
	next:;
	}
	return false;
}

static inline void ev_push(struct ev_lines *l, const char *line, int cpu, uint64_t ts, size_t body)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = (struct ev_line){strdup(line), ts, cpu, body, -1};
}

/* Append a continuation line to the last event line. */
static inline void ev_continue(struct ev_lines *l, const char *line)
{
	struct ev_line *e = &l->v[l->n - 1];
	size_t a = strlen(e->text), b = strlen(line);

	e->text = realloc(e->text, a + b + 2);
	if (!e->text)
		abort();
	e->text[a] = '\n';
	memcpy(e->text + a + 1, line, b + 1);
}

/* The event lines of a `trace` text (text is not changed). */
static inline void ev_parse(struct ev_lines *l, const char *text)
{
	char *copy = strdup(text ? text : ""), *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int cpu;
		uint64_t ts;
		size_t body;

		if (line[0] == '#' || !strncmp(line, "CPU:", 4))
			continue;
		if (parse_context(line, &cpu, &ts, &body))
			ev_push(l, line, cpu, ts, body);
		else if (l->n)
			ev_continue(l, line);
	}
	free(copy);
}

/* --------------------------------------------------------------- masking */

static inline bool is_hex(char c)
{
	return isdigit((unsigned char)c) || (c >= 'a' && c <= 'f');
}

/* hashed-ptr: every word of 16 hex digits (after an optional 0x) becomes "<ptr>". */
static inline void mask_hashed_ptr(char *s)
{
	char *out = s;

	for (char *p = s; *p;) {
		bool word_start = p == s || !isalnum((unsigned char)p[-1]);
		char *h = p + (p[0] == '0' && p[1] == 'x' ? 2 : 0);
		int n = 0;

		while (word_start && n < 17 && is_hex(h[n]))
			n++;
		if (word_start && n == 16 && !isalnum((unsigned char)h[16])) {
			memcpy(out, "<ptr>", 5);
			out += 5;
			p = h + 16;
		} else {
			*out++ = *p++;
		}
	}
	*out = '\0';
}

/* The number after the first " key=" of s, with where its digits are; false if none. */
static inline bool find_number(char *s, const char *key, char **digits, char **end, uint64_t *v)
{
	char pat[64], *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(s, pat);
	if (!p)
		return false;
	*digits = *end = p + strlen(pat);
	for (*v = 0; isdigit((unsigned char)**end); (*end)++)
		*v = *v * 10 + (uint64_t)(**end - '0');
	return *end > *digits;
}

/* jiffies-age: " age=N" of the writeback events that compute it when printed (see the top). */
static inline void mask_jiffies_age(const struct jiffies_window *jw, char *s, size_t body, bool kernel_side)
{
	static const char *const events[] = {
	    "writeback_single_inode: ", "writeback_single_inode_start: ", "writeback_sb_inodes_requeue: "};
	char *digits, *end, *d_digits, *d_end;
	uint64_t age, dirtied;
	bool applies = false, accept;

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		applies |= !strncmp(s + body, events[i], strlen(events[i]));
	if (!applies)
		return;
	if (!jw->saved && !kernel_side) {
		digits = strstr(s + body, " age=?");
		if (digits) {
			digits += 5;
			*digits = '*';
		}
		return;
	}
	if (!find_number(s + body, "age", &digits, &end, &age))
		return;
	accept = true;
	if (jw->saved && jw->window && find_number(s + body, "dirtied_when", &d_digits, &d_end, &dirtied)) {
		uint64_t lo = (jw->before - dirtied) / jw->hz, hi = (jw->after - dirtied) / jw->hz;
		accept = kernel_side ? age >= lo && age <= hi : age == hi;
	}
	if (accept) {
		*digits = '*';
		memmove(digits + 1, end, strlen(end) + 1);
	}
}

/* The line as compared: a copy with the rules applied. */
static inline char *masked(const struct identical *id, const struct ev_line *e, bool kernel_side)
{
	char *m = strdup(e->text);

	if (id->hash_ptr)
		mask_hashed_ptr(m + e->body);
	mask_jiffies_age(&id->jw, m, e->body, kernel_side);
	return m;
}

/* --------------------------------------------------------------- pairing */

/* Pair lines of one time stamp group: the kernel's in order with ours of the same CPU. */
static inline void pair_group(struct ev_lines *k, size_t k0, size_t k1, struct ev_lines *o, size_t o0,
			      size_t o1)
{
	for (size_t i = k0; i < k1; i++)
		for (size_t j = o0; j < o1; j++)
			if (o->v[j].partner < 0 && o->v[j].cpu == k->v[i].cpu) {
				k->v[i].partner = (long)j;
				o->v[j].partner = (long)i;
				break;
			}
}

static inline void pair_lines(struct ev_lines *k, struct ev_lines *o)
{
	size_t i = 0, j = 0;

	while (i < k->n && j < o->n) {
		uint64_t t = k->v[i].ts < o->v[j].ts ? k->v[i].ts : o->v[j].ts;
		size_t i1 = i, j1 = j;
		while (i1 < k->n && k->v[i1].ts == t)
			i1++;
		while (j1 < o->n && o->v[j1].ts == t)
			j1++;
		pair_group(k, i, i1, o, j, j1);
		i = i1;
		j = j1;
	}
}

/* --------------------------------------------------------------- tallies */

/* The word an event line's text starts with: "sched_switch", "sys_write(", "# 1234 buf:". */
static inline void line_kind(const struct identical *id, const struct ev_line *e, char *kind,
			     size_t kind_size, char *system, size_t system_size)
{
	const char *b = e->text + e->body;
	size_t n = strcspn(b, ":( ");

	snprintf(system, system_size, "?");
	if (!strncmp(b, "# ", 2) && strstr(b, " buf:")) {
		snprintf(kind, kind_size, "raw_data (trace_marker_raw)");
		snprintf(system, system_size, "ftrace");
		return;
	}
	if (!strncmp(b, "sys_", 4) && (b[n] == '(' || !strncmp(b + n, " -> ", 4))) {
		snprintf(kind, kind_size, "syscall %s", b[n] == '(' ? "entry" : "exit");
		snprintf(system, system_size, "syscalls");
		return;
	}
	snprintf(kind, kind_size, "%.*s", (int)(n < 80 ? n : 80), b);
	if (!strcmp(kind, "tracing_mark_write")) {
		snprintf(kind, kind_size, "print (trace_marker)");
		snprintf(system, system_size, "ftrace");
		return;
	}
	for (size_t i = 0; i < id->nnames; i++)
		if (!strcmp(id->names[i], kind)) {
			snprintf(system, system_size, "%s", id->systems[i]);
			return;
		}
}

static inline struct tally *tally_of(struct tally *t, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	if (*n == IDENTICAL_MAX_GROUPS)
		return &t[*n - 1]; /* the last one takes the overflow */
	snprintf(t[*n].name, sizeof(t[*n].name), "%s", name);
	return &t[(*n)++];
}

static inline void count(struct identical *id, const struct ev_line *e, bool same,
			 const struct ev_line *partner, bool kernel_side)
{
	char kind[128], system[96];
	struct tally *s, *k;

	line_kind(id, e, kind, sizeof(kind), system, sizeof(system));
	s = tally_of(id->systems_tally, &id->nsystems, system);
	k = tally_of(id->kinds, &id->nkinds, kind);
	s->total++, k->total++;
	s->identical += same, k->identical += same;
	if (!same && !k->example_kernel && !k->example_ours) {
		k->example_kernel = kernel_side ? e->text : partner ? partner->text : NULL;
		k->example_ours = kernel_side ? (partner ? partner->text : NULL) : e->text;
	}
}

/* --------------------------------------------------------------- the API */

/* Event names and their systems from dir/formats/SYSTEM/NAME.format. */
static inline void load_event_names(struct identical *id, const char *dir)
{
	char path[PATH_MAX + 300];
	DIR *top, *sys;
	struct dirent *s, *e;

	snprintf(path, sizeof(path), "%s/formats", dir);
	top = opendir(path);
	while (top && (s = readdir(top))) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/formats/%s", dir, s->d_name);
		sys = opendir(path);
		while (sys && (e = readdir(sys))) {
			size_t len = strlen(e->d_name);
			if (len <= 7 || strcmp(e->d_name + len - 7, ".format"))
				continue;
			id->names = realloc(id->names, (id->nnames + 1) * sizeof(*id->names));
			id->systems = realloc(id->systems, (id->nnames + 1) * sizeof(*id->systems));
			id->names[id->nnames] = strndup(e->d_name, len - 7);
			id->systems[id->nnames++] = strdup(s->d_name);
		}
		if (sys)
			closedir(sys);
	}
	if (top)
		closedir(top);
}

/* The number after the first line of text that starts with prefix; false if none. */
static inline bool line_value(const char *text, const char *prefix, uint64_t *v)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, prefix, n) && isdigit((unsigned char)l[n])) {
			*v = strtoull(l + n, NULL, 10);
			return true;
		}
	return false;
}

/* jiffies and HZ from the capture's constants, the window from its meta.txt. */
static inline void load_jiffies_window(struct jiffies_window *jw, const char *dir)
{
	char path[PATH_MAX + 300], *constants, *meta, *p;
	uint64_t meta_after = 0;

	snprintf(path, sizeof(path), "%s/constants", dir);
	constants = tap_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/meta.txt", dir);
	meta = tap_slurp(path, NULL);
	jw->saved = constants && line_value(constants, "jiffies ", &jw->after);
	p = meta ? strstr(meta, "\njiffies: ") : NULL;
	jw->window = jw->saved && line_value(constants, "HZ ", &jw->hz) && jw->hz && p &&
		     line_value(p + 1, "jiffies: ", &meta_after) && meta_after == jw->after &&
		     sscanf(p + 1, "jiffies: %*u (right after trace.txt was read; %" SCNu64 " before)",
			    &jw->before) == 1 &&
		     jw->before <= jw->after;
	free(constants), free(meta);
}

static inline void identical_init(struct identical *id, const char *capture_dir)
{
	char path[PATH_MAX + 300], *options;

	memset(id, 0, sizeof(*id));
	load_event_names(id, capture_dir);
	snprintf(path, sizeof(path), "%s/trace_options", capture_dir);
	options = tap_slurp(path, NULL);
	/* A line "hash-ptr" (on) rather than "nohash-ptr". */
	id->hash_ptr = options && (!strncmp(options, "hash-ptr\n", 9) || strstr(options, "\nhash-ptr\n"));
	free(options);
	load_jiffies_window(&id->jw, capture_dir);
}

static inline void identical_compare(struct identical *id, const char *kernel_text, const char *our_text)
{
	ev_parse(&id->kernel, kernel_text);
	ev_parse(&id->ours, our_text);
	pair_lines(&id->kernel, &id->ours);
	for (size_t i = 0; i < id->kernel.n; i++) {
		struct ev_line *k = &id->kernel.v[i];
		struct ev_line *o = k->partner >= 0 ? &id->ours.v[k->partner] : NULL;
		bool same = false;
		if (o) {
			char *a = masked(id, k, true), *b = masked(id, o, false);
			same = !strcmp(a, b);
			free(a), free(b);
		} else {
			id->kernel_only++;
		}
		id->total++;
		id->identical += same;
		count(id, k, same, o, true);
	}
	for (size_t j = 0; j < id->ours.n; j++)
		if (id->ours.v[j].partner < 0) {
			id->ours_only++;
			id->total++;
			count(id, &id->ours.v[j], false, NULL, false);
		}
}

static inline double percent(size_t part, size_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 100.0;
}

static inline int by_total(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	size_t dx = x->total - x->identical, dy = y->total - y->identical;

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static inline int by_name(const void *a, const void *b)
{
	return strcmp(((const struct tally *)a)->name, ((const struct tally *)b)->name);
}

/*
 * Print every differing pair (kernel first, tracebuf second; at most limit
 * of them when limit >= 0), then the per-system table and the kinds of
 * line that differ most, each with its first example.
 */
static inline void identical_print(struct identical *id, long limit)
{
	long shown = 0;

	for (size_t i = 0; i < id->kernel.n; i++) {
		struct ev_line *k = &id->kernel.v[i];
		struct ev_line *o = k->partner >= 0 ? &id->ours.v[k->partner] : NULL;
		char *a = masked(id, k, true), *b = o ? masked(id, o, false) : NULL;
		if ((!b || strcmp(a, b)) && (limit < 0 || shown < limit)) {
			diag("kernel:   %s", k->text);
			diag("tracebuf: %s", o ? o->text : "(no such line)");
			shown++;
		}
		free(a), free(b);
	}
	for (size_t j = 0; j < id->ours.n; j++)
		if (id->ours.v[j].partner < 0 && (limit < 0 || shown < limit)) {
			diag("kernel:   (no such line)");
			diag("tracebuf: %s", id->ours.v[j].text);
			shown++;
		}
	if (limit >= 0 && (size_t)shown < id->total - id->identical)
		diag("(%zu more differing lines not shown)", id->total - id->identical - (size_t)shown);

	qsort(id->systems_tally, id->nsystems, sizeof(id->systems_tally[0]), by_name);
	diag("%-24s %9s %9s %8s", "system", "identical", "total", "share");
	for (size_t i = 0; i < id->nsystems; i++) {
		const struct tally *t = &id->systems_tally[i];
		diag("%-24s %9zu %9zu %7.1f%%", t->name, t->identical, t->total,
		     percent(t->identical, t->total));
	}
	diag("%-24s %9zu %9zu %7.1f%%  (kernel only %zu, tracebuf only %zu)", "all", id->identical, id->total,
	     percent(id->identical, id->total), id->kernel_only, id->ours_only);

	qsort(id->kinds, id->nkinds, sizeof(id->kinds[0]), by_total);
	diag("kinds of line that differ, most first (differing/total), with the first example:");
	for (size_t i = 0; i < id->nkinds && i < 40; i++) {
		const struct tally *t = &id->kinds[i];
		if (t->total == t->identical)
			break;
		diag("%6zu/%-6zu %s", t->total - t->identical, t->total, t->name);
		diag("        kernel:   %s", t->example_kernel ? t->example_kernel : "(no such line)");
		diag("        tracebuf: %s", t->example_ours ? t->example_ours : "(no such line)");
	}
}

static inline void identical_free(struct identical *id)
{
	for (size_t i = 0; i < id->kernel.n; i++)
		free(id->kernel.v[i].text);
	for (size_t i = 0; i < id->ours.n; i++)
		free(id->ours.v[i].text);
	free(id->kernel.v);
	free(id->ours.v);
	for (size_t i = 0; i < id->nnames; i++)
		free(id->names[i]), free(id->systems[i]);
	free(id->names);
	free(id->systems);
	memset(id, 0, sizeof(*id));
}

/* ----------------------------------------------------- the whole check */

/* The "# entries-in-buffer/entries-written: E/W   #P:N" line of a trace text. */
static inline char *header_counts_line(const char *text)
{
	const char *p = text ? strstr(text, "# entries-in-buffer/") : NULL;

	return p ? strndup(p, strcspn(p, "\n")) : NULL;
}

/*
 * The checks both harnesses make on a capture directory that holds the
 * kernel's trace.txt: `tracebuf report DIR` exits 0, its header's counts
 * equal the kernel's, it has as many event lines, and at least min_percent
 * of all lines are identical.  Every differing pair and the tables are
 * printed as diagnostics (TB_DIFF_LIMIT=N shows only the first N pairs).
 * id is left filled for the caller's own checks; it frees it.
 */
static inline void identical_check_capture(const char *dir, double min_percent, struct identical *id)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	const char *limit = getenv("TB_DIFF_LIMIT");
	char cmd[PATH_MAX + 300], path[PATH_MAX + 300], *kernel, *ours, *kh, *oh;
	int status = -1;

	identical_init(id, dir);
	snprintf(path, sizeof(path), "%s/trace.txt", dir);
	kernel = tap_slurp(path, NULL);
	ok(kernel != NULL, "%s: the kernel's trace.txt is there", dir);
	snprintf(cmd, sizeof(cmd), "%s/tracebuf report '%s'", b, dir);
	ours = tap_command_output(cmd, &status);
	ok(ours && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "tracebuf report %s: exit status 0 (status %d)", dir, status);
	kh = header_counts_line(kernel);
	oh = header_counts_line(ours);
	is_str(oh, kh, "the header's entries-in-buffer/entries-written and #P equal the kernel's");
	identical_compare(id, kernel, ours);
	identical_print(id, limit ? atol(limit) : -1);
	is_int(id->ours.n, id->kernel.n, "as many event lines as the kernel's trace (%zu)", id->kernel.n);
	ok(id->total > 0 && percent(id->identical, id->total) >= min_percent,
	   "%zu of %zu lines identical to the kernel's: %.2f%%, at least %.1f%% wanted", id->identical,
	   id->total, percent(id->identical, id->total), min_percent);
	free(kh), free(oh), free(kernel), free(ours);
}

/* How many of the kernel's lines belong to system (see the tallies). */
static inline size_t identical_system_lines(const struct identical *id, const char *system)
{
	for (size_t i = 0; i < id->nsystems; i++)
		if (!strcmp(id->systems_tally[i].name, system))
			return id->systems_tally[i].total;
	return 0;
}

/* How many lines of system are identical (after the masking rules). */
static inline size_t identical_system_same(const struct identical *id, const char *system)
{
	for (size_t i = 0; i < id->nsystems; i++)
		if (!strcmp(id->systems_tally[i].name, system))
			return id->systems_tally[i].identical;
	return 0;
}

/*
 * For a failed check, on stderr where prove shows it: the jiffies window
 * and the first differing pairs whose kernel line names an event starting
 * with prefix.
 */
static inline void identical_show_system(const struct identical *id, const char *prefix, int limit)
{
	int shown = 0;

	fail_diag("jiffies window %" PRIu64 "..%" PRIu64 " (HZ %" PRIu64 ", saved %d, window %d)", id->jw.before,
		  id->jw.after, id->jw.hz, id->jw.saved, id->jw.window);
	for (size_t i = 0; i < id->kernel.n && shown < limit; i++) {
		const struct ev_line *k = &id->kernel.v[i];
		const struct ev_line *o = k->partner >= 0 ? &id->ours.v[k->partner] : NULL;
		char *a = masked(id, k, true), *b = o ? masked(id, o, false) : NULL;
		if (strstr(k->text + k->body, prefix) && (!b || strcmp(a, b))) {
			fail_diag("kernel:   %s", k->text);
			fail_diag("tracebuf: %s", o ? o->text : "(no such line)");
			shown++;
		}
		free(a), free(b);
	}
}

/*
 * The writeback lines of a capture all identical, with jiffies-age applied
 * as the capture allows: the window when it kept jiffies (want_window), the
 * '?' of a capture that did not otherwise.
 */
static inline void identical_check_writeback(const struct identical *id, bool want_window)
{
	size_t n = identical_system_lines(id, "writeback");

	if (want_window)
		ok(id->jw.window, "the capture kept jiffies around its trace.txt: %" PRIu64 "..%" PRIu64
		   " (HZ %" PRIu64 ")", id->jw.before, id->jw.after, id->jw.hz);
	else
		ok(!id->jw.saved, "the capture did not keep jiffies: our age= must be ?");
	if (!ok(n > 0 && identical_system_same(id, "writeback") == n,
		"writeback: %zu of %zu lines identical (state= names, age= by the jiffies-age rule)",
		identical_system_same(id, "writeback"), n))
		identical_show_system(id, "writeback_", 20);
}

#endif
