// SPDX-License-Identifier: MIT
/*
 * capture_live.c - a live tracefs instance (or the root buffer), read
 * through per_cpu/cpuN/trace_pipe_raw and consumed as it is read, exactly
 * like `trace_pipe_raw` readers do: pages come out oldest first and carry
 * the kernel's lost flags.  Its formats are indexed and loaded when a
 * record first needs them; saved_cmdlines, printk_formats, kallsyms and
 * BTF come from the running kernel.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_internal.h"
#include "schema_internal.h"
#include "schema_kernel.h"

/* The tracefs root of an instance (…/instances/NAME → …), else dir itself. */
static char *tracefs_root(const char *dir)
{
	char *root = realpath(dir, NULL), *slash;

	if (!root)
		return NULL;
	slash = strrchr(root, '/');
	if (slash && slash > root) {
		*slash = '\0';
		char *parent = strrchr(root, '/');
		if (parent && !strcmp(parent + 1, "instances")) {
			*parent = '\0';
			return root;
		}
		*slash = '/';
	}
	return root;
}

static int load_live_schema(struct tb_capture *c)
{
	char *events = capture_path_join(c->dir, "events");
	char *root_events = capture_path_join(c->root, "events");
	char *hp = NULL, *he = NULL, *cmd = capture_path_join(c->root, "saved_cmdlines");
	char *printk = capture_path_join(c->root, "printk_formats");
	char *tgids = capture_path_join(c->root, "saved_tgids");
	const char *evdir = events && capture_is_dir(events) ? events : root_events;
	int rc = -ENOMEM;

	if (evdir && (hp = capture_path_join(evdir, "header_page")) &&
	    (he = capture_path_join(evdir, "header_event")) &&
	    cmd && printk) {
		rc = capture_load_file(c, hp, true, tb_schema_load_header_page);
		if (rc == 0) {
			capture_load_file(c, he, false, tb_schema_load_header_event);
			rc = capture_load_formats(c, evdir);
		}
		if (rc == 0) {
			capture_load_file(c, cmd, false, tb_schema_load_cmdlines);
			if (tgids)
				capture_load_file(c, tgids, false, tb_schema_load_tgids);
			capture_load_file(c, printk, false, tb_schema_load_printk_formats);
			capture_load_file(c, "/proc/kallsyms", false, tb_schema_load_kallsyms);
			tb_schema_use_running_kernel(c->schema, c->root); /* BTF, kernel variables */
			tb_schema_use_live_proc_maps(c->schema); /* sym-userobj: the processes as they are now */
		}
	}
	free(events), free(root_events), free(hp), free(he), free(cmd), free(printk), free(tgids);
	return rc;
}

/* Live: per_cpu/cpuN/trace_pipe_raw; stats are read now, before consuming. */
static int live_cpu_entry(struct tb_capture *c, const char *per_cpu, const char *name, const char *unused)
{
	int cpu = capture_cpu_number(name, ""), rc;
	char dir[PATH_MAX], *raw;

	(void)unused;
	if (cpu < 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s/%s", per_cpu, name);
	raw = capture_path_join(dir, "trace_pipe_raw");
	rc = raw ? capture_add_cpu(c, cpu, raw) : -ENOMEM;
	strncat(dir, "/stats", sizeof(dir) - strlen(dir) - 1);
	if (rc == 0)
		capture_read_stats(c, &c->cpus[cpu], dir);
	return rc;
}

/*
 * trace_pipe_raw: one read() hands out one sub-buffer; a short read leaves
 * the rest of that sub-buffer for the next read(), so keep reading until
 * the page is whole.  EAGAIN means the buffer is empty.
 */
static int next_live_page(struct tb_capture *c, struct cpu_source *s)
{
	size_t got = 0;
	ssize_t r;

	while (got < c->subbuf) {
		r = read(s->fd, s->page + got, c->subbuf - got);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || errno == EAGAIN || (errno == ENODEV && !got)) {
			if (got)
				tb_capture_problem(c, s->path, s->offset, "sub-buffer cut short after "
						  "%zu of %zu bytes", got, c->subbuf);
			return 0;
		}
		tb_capture_problem(c, s->path, s->offset + got, "read failed: %s", strerror(errno));
		return -errno;
	}
	return 1;
}

/* The tracefs root (for the files an instance shares with it), then the schema. */
static int load_schema(struct tb_capture *c)
{
	if (!(c->root = tracefs_root(c->dir)))
		return -errno;
	return load_live_schema(c);
}

/* Live: every per_cpu/cpuN the instance has. */
static int find_per_cpu(struct tb_capture *c)
{
	char *per_cpu = capture_path_join(c->dir, "per_cpu");
	int rc;

	if (!per_cpu)
		return -ENOMEM;
	rc = capture_each_entry(c, per_cpu, live_cpu_entry, NULL);
	free(per_cpu);
	return rc;
}

static const struct capture_files capture_live_files = {
	.live = true,
	.load_schema = load_schema,
	.find_cpus = find_per_cpu,
	.next_page = next_live_page,
};

int capture_open_live(const char *dir, const struct tb_capture_opts *opts, struct tb_capture **out)
{
	return capture_open_files(dir, &capture_live_files, opts, out);
}
