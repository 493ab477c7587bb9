// SPDX-License-Identifier: MIT
/*
 * tdat_convert.c - a capture directory (what `tracebuf capture` saves) as
 * a trace.dat: its texts become the file's metadata, its cpuN.raw files the
 * top buffer's pages, its cpuN.stats the CPUSTAT options, meta.txt (or
 * trace_clock) the clock and CPU count.
 *
 * The raw files are copied as report reads them (tdat_rawcopy.c): damaged
 * sub-buffers left out or cut, and said; a trailing partial sub-buffer is
 * left out and said.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode/fd_text.h"
#include "tdat_internal.h"
#include "tracebuf/blob.h"

#define MAX_CAPTURE_CPUS TDAT_MAX_CPUS

/* The whole of dir/name (NUL-terminated); NULL with errno (ENOENT: absent). */
static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	char *buf;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	buf = fd_read_text(fd, TDAT_MAX_TEXT, len);
	e = errno;
	close(fd);
	errno = e;
	return buf;
}

/* "KEY: value" of meta.txt, into out; false if absent. */
static bool meta_value(const char *meta, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);

	for (const char *p = meta; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1 + strspn(p + klen + 1, " \t");
			size_t n = strcspn(p, "\n");
			n = n < cap - 1 ? n : cap - 1;
			memcpy(out, p, n);
			out[n] = '\0';
			return true;
		}
	return false;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every formats/SYSTEM/EVENT.format, in name order (ftrace's among them). */
static int write_formats(struct tb_tracedat_writer *w, const char *dir)
{
	char formats[PATH_MAX], sysdir[PATH_MAX + 256];
	struct dirent **systems, **events;
	int nsys, nev, rc = 0;

	snprintf(formats, sizeof(formats), "%s/formats", dir);
	nsys = scandir(formats, &systems, NULL, by_name);
	if (nsys < 0)
		return 0; /* no formats: every event prints as unknown, but the file is valid */
	for (int s = 0; s < nsys; s++) {
		const char *sys = systems[s]->d_name;
		snprintf(sysdir, sizeof(sysdir), "%s/%s", formats, sys);
		nev = sys[0] == '.' ? -1 : scandir(sysdir, &events, NULL, by_name);
		for (int e = 0; e < nev; e++) {
			const char *name = events[e]->d_name;
			size_t n = strlen(name), len;
			char *text;
			if (rc == 0 && n > 7 && !strcmp(name + n - 7, ".format") &&
			    (text = slurp(sysdir, name, &len))) {
				rc = tb_tracedat_write_format(w, sys, text, len);
				free(text);
			}
			free(events[e]);
		}
		if (nev >= 0)
			free(events);
		free(systems[s]);
	}
	free(systems);
	return rc;
}

typedef int text_writer(struct tb_tracedat_writer *, const char *, size_t);

static int write_optional(struct tb_tracedat_writer *w, const char *dir, const char *name,
			  text_writer *write_fn)
{
	size_t len;
	char *text = slurp(dir, name, &len);
	int rc;

	if (!text)
		return 0;
	rc = write_fn(w, text, len);
	free(text);
	return rc;
}

/* The CPUs that have PREFIXcpuN.raw, as a bitmap; the highest + 1. */
static int find_raw_cpus(const char *dir, const char *prefix, bool *has)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name), top = 0;
	size_t plen = strlen(prefix);

	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char *end;
		if (!strncmp(name, prefix, plen) && !strncmp(name + plen, "cpu", 3) &&
		    name[plen + 3] >= '0' && name[plen + 3] <= '9') {
			long cpu = strtol(name + plen + 3, &end, 10);
			if (!strcmp(end, ".raw") && cpu < MAX_CAPTURE_CPUS) {
				has[cpu] = true;
				if (cpu + 1 > top)
					top = (int)cpu + 1;
			}
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return top;
}

static int write_cpus(struct tb_tracedat_writer *w, const char *dir, const char *prefix, const bool *has,
		      int top, uint32_t page_size, const struct tb_tracedat_write_opts *o)
{
	char path[PATH_MAX];
	int rc = 0;

	for (int cpu = 0; rc == 0 && cpu < top; cpu++) {
		if (!has[cpu])
			continue;
		snprintf(path, sizeof(path), "%s/%scpu%d.raw", dir, prefix, cpu);
		rc = tb_tracedat_write_begin_cpu(w, cpu);
		if (rc == 0)
			rc = tdat_copy_raw(w, path, page_size, o);
		if (rc == 0)
			rc = tb_tracedat_write_end_cpu(w);
	}
	return rc;
}

static int write_stats(struct tb_tracedat_writer *w, const char *dir, const char *prefix, const char *buffer,
		       const bool *has, int top)
{
	char name[64];
	int rc = 0;

	for (int cpu = 0; rc == 0 && cpu < top; cpu++) {
		size_t len;
		char *text;
		if (!has[cpu])
			continue;
		snprintf(name, sizeof(name), "%scpu%d.stats", prefix, cpu);
		if ((text = slurp(dir, name, &len))) {
			rc = tb_tracedat_write_cpustat(w, buffer, cpu, text, len);
			free(text);
		}
	}
	return rc;
}

/* The bracketed clock of a trace_clock list ("[local] global"), or the bare word. */
static void clock_name(const char *list, char *out, size_t cap)
{
	const char *open = strchr(list, '['), *close = open ? strchr(open, ']') : NULL;
	size_t n;

	if (open && close) {
		n = (size_t)(close - open - 1);
		list = open + 1;
	} else {
		list += strspn(list, " \t");
		n = strcspn(list, " \t\n");
	}
	n = n < cap - 1 ? n : cap - 1;
	memcpy(out, list, n);
	out[n] = '\0';
}

static void say(const struct tb_tracedat_write_opts *o, const char *file, const char *reason)
{
	struct tb_problem d = {.file = file};

	snprintf(d.reason, sizeof(d.reason), "%s", reason);
	(o->diag ? o->diag : tb_problem_print)(o->diag ? o->diag_ctx : NULL, &d);
}

/* What the writer's options take from the first capture: clock, clock list, CPUs. */
struct capture_facts {
	char clock[TDAT_MAX_NAME], clock_list[1024], *tc;
	int cpus;
	char uname[400]; /* the UNAME option as trace-cmd writes it: "Linux HOST RELEASE MACHINE" */
};

/* The UNAME option of a capture whose meta.txt names its kernel; "" if it does not. */
static void capture_uname(const char *meta, char *out, size_t size)
{
	char release[128] = "", machine[64] = "", host[128] = "";

	out[0] = '\0';
	if (!meta || !meta_value(meta, "kernel", release, sizeof(release)) || !release[0])
		return;
	meta_value(meta, "machine", machine, sizeof(machine));
	meta_value(meta, "host", host, sizeof(host));
	snprintf(out, size, "Linux %s %s %s", host[0] ? host : "unknown", release,
		 machine[0] ? machine : "unknown");
}

static void capture_facts(const char *dir, const char *prefix, struct capture_facts *f)
{
	char ncpus[32] = "";
	bool *has = calloc(MAX_CAPTURE_CPUS, sizeof(*has));
	size_t len;
	char *meta = slurp(dir, "meta.txt", &len);

	memset(f, 0, sizeof(*f));
	if (meta && meta_value(meta, "trace_clock", f->clock_list, sizeof(f->clock_list)))
		f->tc = f->clock_list;
	else if ((f->tc = slurp(dir, "trace_clock", &len)))
		f->tc[strcspn(f->tc, "\n")] = '\0';
	if (f->tc)
		clock_name(f->tc, f->clock, sizeof(f->clock));
	if (meta && meta_value(meta, "ncpus", ncpus, sizeof(ncpus)))
		f->cpus = atoi(ncpus);
	capture_uname(meta, f->uname, sizeof(f->uname));
	if (has) {
		int top = find_raw_cpus(dir, prefix, has);
		f->cpus = f->cpus < top ? top : f->cpus;
	}
	free(has);
	free(meta);
}

static void capture_facts_free(struct capture_facts *f)
{
	if (f->tc != f->clock_list)
		free(f->tc);
}

/* The capture's saved blobs (blobs.bin, tracebuf/blob.h), if it has them, kept for its buffer. */
static int write_blob_store(struct tb_tracedat_writer *w, const char *dir, const char *buffer)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, TB_BLOB_STORE_FILE);
	return access(path, R_OK) == 0 ? tb_tracedat_write_buffer_blobs(w, buffer, path) : 0;
}

int tb_tracedat_write_capture_meta(struct tb_tracedat_writer *w, const char *dir, const char *prefix,
				   const char *buffer)
{
	bool *has = calloc(MAX_CAPTURE_CPUS, sizeof(*has));
	size_t hp_len, he_len = 0;
	char *hp, *he;
	int rc = 0, top;

	if (!has)
		return -ENOMEM;
	prefix = prefix ? prefix : "";
	if (!tdat_writer_has_headers(w)) {
		if (!(hp = slurp(dir, "header_page", &hp_len))) {
			free(has);
			return -EINVAL;
		}
		he = slurp(dir, "header_event", &he_len);
		rc = tb_tracedat_write_headers(w, hp, hp_len, he ? he : "", he ? he_len : 0);
		free(hp);
		free(he);
	}
	top = find_raw_cpus(dir, prefix, has);
	if (rc == 0)
		rc = write_formats(w, dir);
	if (rc == 0)
		rc = write_optional(w, dir, "kallsyms", tb_tracedat_write_kallsyms);
	if (rc == 0)
		rc = write_optional(w, dir, "printk_formats", tb_tracedat_write_printk);
	if (rc == 0)
		rc = write_optional(w, dir, "saved_cmdlines", tb_tracedat_write_cmdlines);
	if (rc == 0)
		rc = write_optional(w, dir, "constants", tb_tracedat_write_constants);
	if (rc == 0)
		rc = write_stats(w, dir, prefix, buffer ? buffer : "", has, top);
	if (rc == 0)
		rc = write_blob_store(w, dir, buffer ? buffer : "");
	free(has);
	return rc;
}

int tb_tracedat_write_capture_pages(struct tb_tracedat_writer *w, const char *dir, const char *prefix,
				    const char *buffer, const char *clock, const struct tb_tracedat_write_opts *opts)
{
	bool *has = calloc(MAX_CAPTURE_CPUS, sizeof(*has));
	struct tb_tracedat_write_opts none = {0};
	int rc, top;

	if (!has)
		return -ENOMEM;
	prefix = prefix ? prefix : "";
	top = find_raw_cpus(dir, prefix, has);
	rc = tb_tracedat_write_begin_buffer(w, buffer, clock);
	if (rc == 0)
		rc = write_cpus(w, dir, prefix, has, top, tdat_writer_page_size(w), opts ? opts : &none);
	free(has);
	return rc;
}

int tb_tracedat_write_captures(const struct tb_tracedat_input *in, size_t n, const char *path,
			       const struct tb_tracedat_write_opts *opts)
{
	/* NULL: every option 0, each filled from the first directory (as the header says) */
	struct tb_tracedat_write_opts o = opts ? *opts : (struct tb_tracedat_write_opts){0};
	const char *names[TDAT_MAX_BUFFERS + 1];
	struct capture_facts first;
	struct tb_tracedat_writer *w;
	size_t nnames = 0;
	int rc;

	if (n == 0 || n > TDAT_MAX_BUFFERS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char *hp = slurp(in[i].dir, "header_page", NULL);
		if (!hp) {
			rc = -errno;
			say(&o, in[i].dir, "no readable header_page: not a capture directory");
			return rc;
		}
		free(hp);
		if (in[i].name && in[i].name[0])
			names[nnames++] = in[i].name;
		else if (i)
			return say(&o, in[i].dir, "only the first capture may be the top buffer"), -EINVAL;
	}
	names[nnames] = NULL;
	capture_facts(in[0].dir, in[0].prefix ? in[0].prefix : "", &first);
	if (!o.clock && first.clock[0])
		o.clock = first.clock;
	if (!o.trace_clock && first.tc && !(opts && opts->clock))
		o.trace_clock = first.tc;
	if (o.cpus < first.cpus)
		o.cpus = first.cpus;
	if (!o.uname && first.uname[0])
		o.uname = first.uname; /* a reader on the same release may use its BTF (tb_schema_trust_running_btf) */
	for (size_t i = 1; i < n; i++) {
		struct capture_facts f;
		capture_facts(in[i].dir, in[i].prefix ? in[i].prefix : "", &f);
		o.cpus = o.cpus < f.cpus ? f.cpus : o.cpus;
		capture_facts_free(&f);
	}
	if (!o.instances && nnames)
		o.instances = names;
	rc = tb_tracedat_writer_open(path, &o, &w);
	if (rc == 0) {
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = tb_tracedat_write_capture_meta(w, in[i].dir, in[i].prefix, in[i].name);
		for (size_t i = 0; i < n && rc == 0; i++) {
			struct capture_facts f;
			capture_facts(in[i].dir, in[i].prefix ? in[i].prefix : "", &f);
			rc = tb_tracedat_write_capture_pages(w, in[i].dir, in[i].prefix, in[i].name,
							     f.clock[0] ? f.clock : NULL, &o);
			capture_facts_free(&f);
		}
		int closed = tb_tracedat_writer_close(w);
		rc = rc ? rc : closed;
	}
	capture_facts_free(&first);
	return rc;
}

int tb_tracedat_write_capture(const char *dir, const char *prefix, const char *path,
			      const struct tb_tracedat_write_opts *opts)
{
	struct tb_tracedat_input in = {.dir = dir, .prefix = prefix, .name = ""};

	return tb_tracedat_write_captures(&in, 1, path, opts);
}
