// SPDX-License-Identifier: MIT
/*
 * dump.c - the registry's texts written as a capture directory (the layout
 * tracebuf/capture.h reads): header_page, header_event,
 * formats/SYSTEM/NAME.format, printk_formats, kallsyms, saved_cmdlines and
 * trace_clock.  A program that also saves its ring's pages there as
 * cpuN.raw (tb_read_page) has a directory `tracebuf report` prints.
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

#include "registry.h"
#include "tracebuf/events.h"
#include "util/write_all.h"

static int make_dir(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

/*
 * Whole or not at all: a consumer merges these files while the process
 * runs (shm_session.c), and the process writes them again when an object
 * registers and at exit.  Written in place (O_TRUNC), a reader could take
 * a format cut short for the event's description; written under a name
 * of this thread's and renamed over the old one, a reader sees the old
 * file or the new one, each whole.  The temporary name starts with a dot
 * at the top of DIR, where no reader of a capture directory looks.
 */
static int write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX], part[PATH_MAX];
	int fd, rc;

	if (!text)
		return -ENOMEM;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    snprintf(part, sizeof(part), "%s/.partial-%ld", dir, (long)gettid()) >= (int)sizeof(part))
		return -ENAMETOOLONG;
	fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = tb__write_all(fd, text, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(part, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(part);
	return rc;
}

static int write_owned(const char *dir, const char *name, char *text, size_t len)
{
	int rc = write_file(dir, name, text, len);

	free(text);
	return rc;
}

struct dump {
	const char *dir;
	int rc;
};

static int dump_event(void *ctx, const struct tb_events_info *ev)
{
	struct dump *d = ctx;
	char sub[PATH_MAX], name[PATH_MAX];

	if (snprintf(sub, sizeof(sub), "%s/formats/%s", d->dir, ev->system) >= (int)sizeof(sub) ||
	    snprintf(name, sizeof(name), "formats/%s/%s.format", ev->system, ev->name) >= (int)sizeof(name)) {
		d->rc = -ENAMETOOLONG;
		return 1;
	}
	d->rc = make_dir(sub);
	if (d->rc == 0)
		d->rc = write_file(d->dir, name, ev->format, ev->format_len);
	return d->rc != 0;
}

/* "TID COMM" for each thread of the process, as the kernel's saved_cmdlines lists them. */
static char *thread_comms(size_t *len)
{
	DIR *tasks = opendir("/proc/self/task");
	struct text t = {0};
	struct dirent *de;

	while (tasks && (de = readdir(tasks)) != NULL) {
		char path[300], comm[64] = "";
		int fd;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		text_printf(&t, "%s %s\n", de->d_name, comm);
	}
	if (tasks)
		closedir(tasks);
	return text_take(&t, len);
}

int tb_events_dump(const char *dir, const struct tb_ring *ring)
{
	size_t subbuf_size = ring ? tb_ring_subbuf_size(ring) : 4096;
	struct dump d = {dir, 0};
	char formats[PATH_MAX];
	char *text;
	size_t len = 0;
	int rc;

	if (snprintf(formats, sizeof(formats), "%s/formats", dir) >= (int)sizeof(formats))
		return -ENAMETOOLONG;
	if ((rc = make_dir(dir)) < 0 || (rc = make_dir(formats)) < 0)
		return rc;
	text = tb_events_header_page(subbuf_size);
	if (!text)
		return -EINVAL;
	if ((rc = write_owned(dir, "header_page", text, strlen(text))) < 0)
		return rc;
	text = tb_events_header_event();
	if ((rc = write_owned(dir, "header_event", text, text ? strlen(text) : 0)) < 0)
		return rc;
	tb_events_foreach(dump_event, &d);
	if (d.rc < 0)
		return d.rc;
	text = tb_events_printk_formats(&len);
	if ((rc = write_owned(dir, "printk_formats", text, len)) < 0)
		return rc;
	text = tb_events_kallsyms(&len);
	if ((rc = write_owned(dir, "kallsyms", text, len)) < 0)
		return rc;
	text = thread_comms(&len);
	if ((rc = write_owned(dir, "saved_cmdlines", text, len)) < 0)
		return rc;
	if (ring) {
		char clock[64];
		snprintf(clock, sizeof(clock), "[%s]\n", tb_clock_name(tb_ring_clock(ring)));
		rc = write_file(dir, "trace_clock", clock, strlen(clock));
	}
	return rc;
}
