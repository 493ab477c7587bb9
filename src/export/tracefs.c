// SPDX-License-Identifier: MIT
/*
 * tracefs.c - reading and writing tracefs files and capture files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode/fd_text.h"
#include "tracefs.h"
#include "util/write_all.h"

#define MAX_TEXT (64u << 20) /* kallsyms is ~5 MiB; far more is not a tracefs text */

const char *tracefs_mount(void)
{
	static const char *const places[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		char probe[64];
		snprintf(probe, sizeof(probe), "%s/instances", places[i]);
		if (is_directory(probe))
			return places[i];
	}
	return NULL;
}

char *path_of(const char *dir, const char *name)
{
	char *p = NULL;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

char *tracefs_read(const char *dir, const char *name, size_t *len)
{
	char *path = path_of(dir, name), *text;
	int fd, e;

	if (!path)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return NULL;
	text = fd_read_text(fd, MAX_TEXT, len);
	e = errno;
	close(fd);
	errno = e;
	return text;
}

char *tracefs_read_line(const char *dir, const char *name)
{
	char *text = tracefs_read(dir, name, NULL);

	if (text)
		text[strcspn(text, "\n")] = '\0';
	return text;
}

static int write_value(const char *dir, const char *name, const char *value, int how)
{
	char *path = path_of(dir, name);
	size_t len = strlen(value);
	ssize_t w;
	int fd, e;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | how | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -errno;
	do
		w = write(fd, value, len);
	while (w < 0 && errno == EINTR);
	e = w < 0 ? errno : (size_t)w != len ? EIO : 0;
	close(fd);
	return -e;
}

int tracefs_write(const char *dir, const char *name, const char *value)
{
	return write_value(dir, name, value, O_TRUNC);
}

int tracefs_append(const char *dir, const char *name, const char *value)
{
	return write_value(dir, name, value, O_APPEND);
}

int write_all(int fd, const void *data, size_t len)
{
	return tb__write_all(fd, data, len);
}

/* Streamed, not slurped: a trace text of big buffers runs to hundreds of MiB. */
int copy_file(const char *dir, const char *name, const char *path)
{
	char *from = path_of(dir, name), buf[65536];
	int in = from ? open(from, O_RDONLY | O_CLOEXEC) : -1, out = -1;
	int rc = !from ? -ENOMEM : in < 0 ? -errno : 0;
	ssize_t r;

	free(from);
	if (rc < 0)
		return rc;
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while (rc == 0 && (r = read(in, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		rc = r < 0 ? -errno : write_all(out, buf, (size_t)r);
	}
	close(in);
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

size_t tracefs_subbuf_size(const char *inst)
{
	char *kb = tracefs_read_line(inst, "buffer_subbuf_size_kb");
	size_t size = kb ? strtoul(kb, NULL, 10) * 1024 : (size_t)sysconf(_SC_PAGESIZE);

	free(kb);
	return size;
}
