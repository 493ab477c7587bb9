// SPDX-License-Identifier: MIT
/*
 * input.c - the table of input kinds, and the two ways through it:
 * tb_input_identify() says which kind a path is, tb_capture_open() opens
 * it as a capture (input.h says how a kind is written and added).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "decode/capture_kinds.h"
#include "diag.h"
#include "input.h"

/* Sniffed in this order; on equal confidence the earlier row wins. */
static const struct input_kind *const input_kinds[] = {
    &input_live_instance,
    &input_capture_dir,
    &input_tracedat,
    &input_shm_session,
};
#define N_KINDS (sizeof(input_kinds) / sizeof(input_kinds[0]))

/* Where problems of one identification go. */
struct input_say {
	tb_problem_fn *diag;
	void *diag_ctx;
	bool quiet;
};

static void say(const struct input_say *to, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(const struct input_say *to, const char *path, const char *fmt, ...)
{
	struct tb_problem d = {.file = path};
	va_list ap;

	if (to->quiet)
		return;
	va_start(ap, fmt);
	diag_vset(&d, 0, fmt, ap);
	va_end(ap);
	(to->diag ? to->diag : tb_problem_print)(to->diag ? to->diag_ctx : NULL, &d);
}

/* "capture directory, live tracefs instance, ...": every kind, for the refusal. */
static void kinds_tried(char *out, size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < N_KINDS && at < size; i++)
		at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ", " : "", input_kinds[i]->name);
}

/*
 * The path's stat and, for a regular file, its first bytes.  0 or a
 * negative errno (said).  O_NONBLOCK: a FIFO swapped in after the stat
 * must not make the open wait for a writer.
 */
static int probe_path(struct input_probe *p, const char *path, const struct input_say *to)
{
	ssize_t n;
	int fd;

	memset(p, 0, sizeof(*p));
	p->path = path;
	if (stat(path, &p->st) < 0) {
		int e = errno;
		if (e == ENOENT || e == ENOTDIR) {
			p->missing = e;
			return 0;
		}
		say(to, path, "cannot read: %s", strerror(e));
		return -e;
	}
	if (!S_ISREG(p->st.st_mode))
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		int e = errno;
		say(to, path, "cannot open: %s", strerror(e));
		return -e;
	}
	do
		n = pread(fd, p->head, sizeof(p->head), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;
		close(fd);
		say(to, path, "cannot read: %s", strerror(e));
		return -e;
	}
	close(fd);
	p->head_len = (size_t)n;
	return 0;
}

/*
 * The kind the table's sniffs are surest of, or NULL (said, naming the
 * kinds tried).  A regular file is refused at byte 0 as "not a trace.dat
 * file" first: that is what most unknown files were meant to be.
 */
static const struct input_kind *pick_kind(const struct input_probe *p, const struct input_say *to)
{
	const struct input_kind *best = NULL;
	enum input_confidence best_conf = INPUT_NO;
	char tried[256];

	for (size_t i = 0; i < N_KINDS; i++) {
		enum input_confidence conf = input_kinds[i]->sniff(p);
		if (conf > best_conf) {
			best = input_kinds[i];
			best_conf = conf;
		}
	}
	if (best)
		return best;
	kinds_tried(tried, sizeof(tried));
	if (S_ISREG(p->st.st_mode))
		say(to, p->path,
		    "not a trace.dat file (no trace-cmd magic at its start), nor any other "
		    "input tracebuf reads (tried: %s)",
		    tried);
	else
		say(to, p->path, "this is %s, not an input tracebuf reads (tried: %s)",
		    capture_file_kind(p->st.st_mode), tried);
	return NULL;
}

/*
 * The kind of path, or NULL with a negative errno (said).  A missing path
 * is -ENOENT (or -ENOTDIR), said as such first: the user mistyped a name,
 * and what some kind's reader would lack inside it (a capture directory's
 * header_page) only hides that.
 */
static int identify(const char *path, const struct input_say *to, const struct input_kind **kind)
{
	struct input_probe p;
	int rc;

	*kind = NULL;
	if ((rc = probe_path(&p, path, to)) < 0)
		return rc;
	if (p.missing) {
		say(to, path, "%s", p.missing == ENOENT ? "no such file" : strerror(p.missing));
		return -p.missing;
	}
	*kind = pick_kind(&p, to);
	return *kind ? 0 : -EINVAL;
}

int tb_input_identify(const char *path, tb_problem_fn *diag, void *diag_ctx, bool quiet,
		      enum tb_input_kind *kind)
{
	const struct input_say to = {diag, diag_ctx, quiet};
	const struct input_kind *k;
	int rc;

	if (kind)
		*kind = TB_INPUT_UNKNOWN;
	if (!path || !*path || !kind)
		return -EINVAL;
	if ((rc = identify(path, &to, &k)) == 0)
		*kind = k->id;
	return rc;
}

const char *tb_input_kind_name(enum tb_input_kind kind)
{
	for (size_t i = 0; i < N_KINDS; i++)
		if (input_kinds[i]->id == kind)
			return input_kinds[i]->name;
	return "unknown input";
}

int tb_capture_open(const char *path, const struct tb_capture_opts *opts, struct tb_capture **out)
{
	const struct input_say to = {opts ? opts->diag : NULL, opts ? opts->diag_ctx : NULL, false};
	const struct input_kind *kind;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!path || !*path)
		return -EINVAL;
	if ((rc = identify(path, &to, &kind)) < 0)
		return rc;
	if (!kind->open) {
		say(&to, path, "a %s, not a capture: %s", kind->name, kind->says_instead);
		return -EOPNOTSUPP;
	}
	/* Only a trace.dat has buffers of its own; every other kind is the one buffer "". */
	if (opts && opts->buffer && opts->buffer[0] && kind->id != TB_INPUT_TRACEDAT) {
		say(&to, path, "no buffer '%s': a %s has one buffer, the top one (\"\")", opts->buffer,
		    kind->name);
		return -ENOENT;
	}
	return kind->open(path, opts, out);
}
