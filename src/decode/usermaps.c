// SPDX-License-Identifier: MIT
/*
 * usermaps.c - user processes' memory maps for sym-userobj (usermaps.h).
 *
 * A table of processes sorted by tgid, each with its mappings sorted by
 * start address.  Mappings of one process never overlap, so "the first
 * that ends above ip" is a binary search on the end addresses as well.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fd_text.h"
#include "usermaps.h"
#include "util/grow.h"
#include "util/sorted_find.h"

/* One process's /proc/TGID/maps: a few KiB, a few MiB for the largest processes. */
#define MAX_MAPS_TEXT (256u << 20)

struct vma {
	uint64_t start, end;
	char *path; /* NULL: no file */
};

struct process {
	uint64_t tgid; /* a uint32_t; as wide as sorted_find.h's keys */
	bool gone; /* live: /proc had no such process (asked once) */
	struct vma *vmas;
	size_t nvmas, cap;
	bool sorted;
};

struct tb_usermaps {
	bool live;
	struct process *procs; /* sorted by tgid */
	size_t nprocs, cap;
};

struct tb_usermaps *tb_usermaps_new(bool live)
{
	struct tb_usermaps *m = calloc(1, sizeof(*m));

	if (m)
		m->live = live;
	return m;
}

void tb_usermaps_free(struct tb_usermaps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nprocs; i++) {
		for (size_t j = 0; j < m->procs[i].nvmas; j++)
			free(m->procs[i].vmas[j].path);
		free(m->procs[i].vmas);
	}
	free(m->procs);
	free(m);
}

/* Where the process is in the table, or would go; *found says which. */
static size_t process_index(const struct tb_usermaps *m, uint32_t tgid, bool *found)
{
	size_t i = TB_SORTED_COUNT_BELOW(m->procs, m->nprocs, tgid, tgid);

	*found = i < m->nprocs && m->procs[i].tgid == tgid;
	return i;
}

/* The process's slot: found, or inserted in tgid order (NULL: no memory). */
static struct process *process_slot(struct tb_usermaps *m, uint32_t tgid, bool *found)
{
	size_t lo = process_index(m, tgid, found);
	struct process *grown;

	if (*found)
		return &m->procs[lo];
	if (!(grown = tb__grow(m->procs, &m->cap, m->nprocs + 1, sizeof(*grown), 16)))
		return NULL;
	m->procs = grown;
	memmove(&m->procs[lo + 1], &m->procs[lo], (m->nprocs - lo) * sizeof(*m->procs));
	m->nprocs++;
	m->procs[lo] = (struct process){.tgid = tgid, .sorted = true};
	return &m->procs[lo];
}

/*
 * The kernel names a mapping by its file; /proc's "[heap]", "[stack]",
 * "[vdso]", "[vvar]" and "[anon:NAME]" are mappings of no file (their
 * addresses print as "<addr>"), and an empty name is anonymous memory.
 */
static bool names_a_file(const char *path, size_t len)
{
	return len > 0 && path[0] != '[';
}

static int add_vma(struct process *p, uint64_t start, uint64_t end, const char *path, size_t len)
{
	struct vma v = {start, end, NULL}, *grown;

	if (names_a_file(path, len) && !(v.path = strndup(path, len)))
		return -ENOMEM;
	if (!(grown = tb__grow(p->vmas, &p->cap, p->nvmas + 1, sizeof(*grown), 16))) {
		free(v.path);
		return -ENOMEM;
	}
	p->vmas = grown;
	if (p->nvmas && p->vmas[p->nvmas - 1].start > start)
		p->sorted = false;
	p->vmas[p->nvmas++] = v;
	return 0;
}

/*
 * A number in base 10 or 16 at p, read no further than end (the text is
 * not NUL-terminated); the position after it, NULL if there is no digit or
 * it does not fit in 64 bits.
 */
static const char *parse_number(const char *p, const char *end, int base, uint64_t *v)
{
	const char *start = p;

	for (*v = 0; p < end; p++) {
		int c = (unsigned char)*p, d = isdigit(c) ? c - '0' : base == 16 && isxdigit(c) ? (c | 0x20) - 'a' + 10 : -1;

		if (d < 0)
			break;
		if (*v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return NULL;
		*v = *v * (uint64_t)base + (uint64_t)d;
	}
	return p > start ? p : NULL;
}

/* "START-END": two hex numbers, END not below START; the position after them, NULL if malformed. */
static const char *parse_range(const char *p, const char *end, uint64_t *start, uint64_t *stop)
{
	p = parse_number(p, end, 16, start);
	if (!p || p == end || *p != '-')
		return NULL;
	p = parse_number(p + 1, end, 16, stop);
	return p && *stop >= *start ? p : NULL;
}

/* One proc_maps line "TGID START-END[ PATH]" (no newline). */
static int load_line(struct tb_usermaps *m, const char *p, size_t len)
{
	const char *end = p + len, *q;
	uint64_t tgid, start, stop;
	struct process *proc;
	bool found;

	q = parse_number(p, end, 10, &tgid);
	if (!q || tgid > UINT32_MAX || q == end || *q != ' ')
		return -EINVAL;
	q = parse_range(q + 1, end, &start, &stop);
	if (!q || (q < end && *q != ' '))
		return -EINVAL;
	if (q < end)
		q++;
	proc = process_slot(m, (uint32_t)tgid, &found);
	return proc ? add_vma(proc, start, stop, q, (size_t)(end - q)) : -ENOMEM;
}

int tb_usermaps_load(struct tb_usermaps *m, const char *text, size_t len, size_t *bad)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int rc = n ? load_line(m, text + pos, n) : 0;

		if (rc < 0) {
			if (bad)
				*bad = pos;
			return rc;
		}
		pos += n + 1;
	}
	return 0;
}

/*
 * One line of /proc/PID/maps, "START-END PERMS OFFSET DEV INODE[ PATH]",
 * as its range and its path (the rest of the line after the inode and the
 * blanks that pad it).  false if malformed.
 */
static bool proc_line(const char *p, const char *end, uint64_t *start, uint64_t *stop,
		      const char **path, size_t *plen)
{
	const char *q = parse_range(p, end, start, stop);

	for (int field = 0; q && field < 4; field++) { /* perms, offset, dev, inode */
		while (q < end && *q == ' ')
			q++;
		while (q < end && *q != ' ')
			q++;
	}
	if (!q)
		return false;
	while (q < end && *q == ' ')
		q++;
	*path = q, *plen = (size_t)(end - q);
	return true;
}

/* Calls each(ctx, start, end, path, plen) for every mapping of /proc/TGID/maps. -ESRCH: no process. */
static int walk_proc_maps(uint32_t tgid, int (*each)(void *, uint64_t, uint64_t, const char *, size_t),
			  void *ctx)
{
	char name[64];
	size_t len;
	char *text = NULL;
	int fd, rc = 0, e = ENOENT;

	snprintf(name, sizeof(name), "/proc/%u/maps", tgid);
	if ((fd = open(name, O_RDONLY | O_CLOEXEC)) >= 0) {
		text = fd_read_text(fd, MAX_MAPS_TEXT, &len);
		e = errno;
		close(fd);
	}
	if (!text)
		return e == ENOMEM ? -ENOMEM : -ESRCH;
	for (size_t pos = 0; rc == 0 && pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos), *path;
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos, plen;
		uint64_t start, stop;

		if (proc_line(text + pos, text + pos + n, &start, &stop, &path, &plen) &&
		    strncmp(path, "[vsyscall]", plen)) /* not one of the mm's vmas: find_vma never sees it */
			rc = each(ctx, start, stop, path, plen);
		pos += n + 1;
	}
	free(text);
	return rc;
}

static int add_live_vma(void *ctx, uint64_t start, uint64_t end, const char *path, size_t plen)
{
	return add_vma(ctx, start, end, path, plen);
}

static int vma_by_start(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The process's maps, read from /proc the first time a live table is asked about it. */
static struct process *find_process(struct tb_usermaps *m, uint32_t tgid)
{
	bool found;
	struct process *p;

	if (!m->live) {
		size_t i = process_index(m, tgid, &found);
		return found ? &m->procs[i] : NULL;
	}
	if (!(p = process_slot(m, tgid, &found)) || found)
		return p;
	p->gone = walk_proc_maps(tgid, add_live_vma, p) < 0;
	return p;
}

int tb_usermaps_find(struct tb_usermaps *m, uint32_t tgid, uint64_t ip, uint64_t *start, const char **path)
{
	struct process *p = m ? find_process(m, tgid) : NULL;
	size_t lo;

	if (!p || p->gone || !p->nvmas)
		return -ESRCH;
	if (!p->sorted) {
		qsort(p->vmas, p->nvmas, sizeof(*p->vmas), vma_by_start);
		p->sorted = true;
	}
	lo = TB_SORTED_COUNT_AT_OR_BELOW(p->vmas, p->nvmas, end, ip); /* those ending at or below ip */
	if (lo == p->nvmas)
		return 0;
	*start = p->vmas[lo].start;
	*path = p->vmas[lo].path;
	return 1;
}

struct save_ctx {
	FILE *out;
	unsigned tgid;
};

static int save_vma(void *ctx, uint64_t start, uint64_t end, const char *path, size_t plen)
{
	struct save_ctx *s = ctx;

	fprintf(s->out, "%u %llx-%llx%s%.*s\n", s->tgid, (unsigned long long)start, (unsigned long long)end,
		plen ? " " : "", (int)plen, path);
	return 0;
}

int tb_usermaps_save_proc(int fd)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct save_ctx s = {.out = NULL};
	int rc = 0;

	if (!d)
		return -errno;
	if ((fd = dup(fd)) < 0 || !(s.out = fdopen(fd, "w"))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		closedir(d);
		return rc;
	}
	while (rc == 0 && (e = readdir(d))) {
		char *end;
		unsigned long tgid = strtoul(e->d_name, &end, 10);

		if (!isdigit((unsigned char)e->d_name[0]) || *end || tgid > UINT32_MAX)
			continue;
		s.tgid = (unsigned)tgid;
		rc = walk_proc_maps(s.tgid, save_vma, &s);
		rc = rc == -ESRCH ? 0 : rc; /* it ended meanwhile */
	}
	closedir(d);
	if (fclose(s.out) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
